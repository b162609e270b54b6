//! Peak GPU memory during the plain run, sampled with `nvidia-smi` twice a
//! second. Without nvidia-smi (no GPU, no driver) there is simply no figure.

use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const INTERVAL: Duration = Duration::from_millis(500);

/// A running sampler.
pub struct Sampler {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Option<(u64, u64)>>,
}

impl Sampler {
    /// Starts sampling.
    pub fn start() -> Sampler {
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let mut peak: Option<(u64, u64)> = None;
            loop {
                match sample().await {
                    Some((used, total)) => {
                        let best = peak.map_or(used, |(p, _)| p.max(used));
                        peak = Some((best, total));
                    }
                    None if peak.is_none() => return None,
                    None => {}
                }
                tokio::select! {
                    _ = &mut stopped => return peak,
                    _ = tokio::time::sleep(INTERVAL) => {}
                }
            }
        });
        Sampler { stop, task }
    }

    /// Stops and returns (peak used, total) in MiB, summed over GPUs.
    pub async fn stop(self) -> Option<(u64, u64)> {
        let _ = self.stop.send(());
        self.task.await.ok().flatten()
    }
}

async fn sample() -> Option<(u64, u64)> {
    let output = tokio::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=memory.used,memory.total",
            "--format=csv,noheader,nounits",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .ok()?;
    if !output.status.success() {
        return None;
    }
    parse_sample(&String::from_utf8_lossy(&output.stdout))
}

/// `1520, 81559` per GPU line; summed.
pub fn parse_sample(text: &str) -> Option<(u64, u64)> {
    let mut used = 0;
    let mut total = 0;
    let mut any = false;
    for line in text.lines() {
        let (u, t) = line.split_once(',')?;
        used += u.trim().parse::<u64>().ok()?;
        total += t.trim().parse::<u64>().ok()?;
        any = true;
    }
    any.then_some((used, total))
}
