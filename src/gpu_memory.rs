//! Peak GPU memory of the program during the plain run: the memory of every
//! process in its process group, summed over GPUs, sampled twice a second,
//! against the total of the GPUs it used. NVML first (nvml-wrapper loads
//! libnvidia-ml.so at run time), `nvidia-smi` when NVML cannot be loaded;
//! without either there is simply no figure.
//!
//! Sampling runs on its own thread: NVML and nvidia-smi calls block, and the
//! supervisor's loop must never wait on them.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

const INTERVAL: Duration = Duration::from_millis(500);

/// A running sampler.
pub struct Sampler {
    pgid: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Option<(u64, u64)>>,
}

/// One reading: MiB used per process id, and the total of each GPU a
/// listed process used.
struct Reading {
    used_by_pid: Vec<(u32, u64)>,
    total_by_gpu: HashMap<u32, u64>,
}

impl Sampler {
    /// Starts sampling; nothing is counted until [`Sampler::watch`] names the group.
    pub fn start() -> Sampler {
        let pgid = Arc::new(AtomicU32::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (pgid.clone(), stop.clone());
        let thread = std::thread::spawn(move || sample_until(&p, &s));
        Sampler { pgid, stop, thread }
    }

    /// Counts the processes of this process group from now on.
    pub fn watch(&self, pgid: u32) {
        self.pgid.store(pgid, Ordering::Relaxed);
    }

    /// Stops and returns (peak MiB used by the group, MiB total of its GPUs).
    pub fn stop(self) -> Option<(u64, u64)> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().ok().flatten()
    }
}

fn sample_until(pgid: &AtomicU32, stop: &AtomicBool) -> Option<(u64, u64)> {
    let source = Source::open();
    let mut peak: Option<(u64, u64)> = None;
    while !stop.load(Ordering::Relaxed) {
        let group = pgid.load(Ordering::Relaxed);
        if group != 0 {
            let reading = source.read()?;
            let mine: Vec<&(u32, u64)> = reading
                .used_by_pid
                .iter()
                .filter(|(pid, _)| in_group(*pid, group))
                .collect();
            let used: u64 = mine.iter().map(|(_, mib)| mib).sum();
            let total: u64 = reading.total_by_gpu.values().sum();
            if !mine.is_empty() || peak.is_none() {
                peak = Some((
                    peak.map_or(used, |(p, _)| p.max(used)),
                    total.max(peak.map_or(0, |(_, t)| t)),
                ));
            }
        }
        std::thread::sleep(INTERVAL);
    }
    peak
}

fn in_group(pid: u32, pgid: u32) -> bool {
    rustix::process::Pid::from_raw(pid as i32)
        .and_then(|p| rustix::process::getpgid(Some(p)).ok())
        .is_some_and(|g| g.as_raw_nonzero().get() as u32 == pgid)
}

enum Source {
    #[cfg(feature = "nvml")]
    Nvml(Box<nvml_wrapper::Nvml>),
    NvidiaSmi,
}

impl Source {
    fn open() -> Source {
        #[cfg(feature = "nvml")]
        if let Ok(nvml) = nvml_wrapper::Nvml::init() {
            return Source::Nvml(Box::new(nvml));
        }
        Source::NvidiaSmi
    }

    fn read(&self) -> Option<Reading> {
        match self {
            #[cfg(feature = "nvml")]
            Source::Nvml(nvml) => read_nvml(nvml),
            Source::NvidiaSmi => read_nvidia_smi(),
        }
    }
}

#[cfg(feature = "nvml")]
fn read_nvml(nvml: &nvml_wrapper::Nvml) -> Option<Reading> {
    use nvml_wrapper::enums::device::UsedGpuMemory;
    let mut reading = Reading {
        used_by_pid: Vec::new(),
        total_by_gpu: HashMap::new(),
    };
    for index in 0..nvml.device_count().ok()? {
        let device = nvml.device_by_index(index).ok()?;
        let total = device.memory_info().ok()?.total / (1024 * 1024);
        for process in device.running_compute_processes().unwrap_or_default() {
            if let UsedGpuMemory::Used(bytes) = process.used_gpu_memory {
                reading
                    .used_by_pid
                    .push((process.pid, bytes / (1024 * 1024)));
                reading.total_by_gpu.insert(index, total);
            }
        }
        reading.total_by_gpu.entry(index).or_insert(total);
    }
    Some(reading)
}

fn read_nvidia_smi() -> Option<Reading> {
    let run = |args: &[&str]| -> Option<String> {
        let out = Command::new("nvidia-smi")
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let totals = run(&[
        "--query-gpu=index,memory.total",
        "--format=csv,noheader,nounits",
    ])?;
    let apps = run(&[
        "--query-compute-apps=pid,used_memory",
        "--format=csv,noheader,nounits",
    ])?;
    Some(parse_nvidia_smi(&totals, &apps))
}

/// `0, 81559` per GPU and `1234, 520` per process.
fn parse_nvidia_smi(totals: &str, apps: &str) -> Reading {
    let pairs = |text: &str| -> Vec<(u64, u64)> {
        text.lines()
            .filter_map(|l| {
                let (a, b) = l.split_once(',')?;
                Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
            })
            .collect()
    };
    Reading {
        used_by_pid: pairs(apps)
            .into_iter()
            .map(|(pid, mib)| (pid as u32, mib))
            .collect(),
        total_by_gpu: pairs(totals)
            .into_iter()
            .map(|(i, t)| (i as u32, t))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_smi_lines_are_read_per_process_and_per_gpu() {
        let r = parse_nvidia_smi("0, 81559\n1, 81559\n", "1234, 520\n99, 14\n[N/A], 3\n");
        assert_eq!(r.used_by_pid, vec![(1234, 520), (99, 14)]);
        assert_eq!(r.total_by_gpu.values().sum::<u64>(), 2 * 81559);
    }

    #[test]
    fn a_process_is_in_its_own_group_only() {
        let me = std::process::id();
        let group = rustix::process::getpgid(None)
            .unwrap()
            .as_raw_nonzero()
            .get() as u32;
        assert!(in_group(me, group));
        assert!(!in_group(me, group.wrapping_add(1)));
    }
}
