//! Peak GPU memory of the program during the plain run: the memory of every
//! process in its process group, summed over GPUs, sampled every 100 ms
//! (NVML) or 500 ms (nvidia-smi, a process per sample), against the total
//! of the GPUs it used. A program never seen on a GPU has no figure: "0 MiB"
//! would pass a headroom check that nothing measured. NVML first (nvml-wrapper loads
//! libnvidia-ml.so at run time), `nvidia-smi` when NVML cannot be loaded;
//! without either there is simply no figure. The same samples say whether
//! only the program's own process used a GPU (whom ncu must follow). A
//! child that used a GPU for less than a sampling interval can be missed,
//! and ncu then profiles none of its launches: when they were the only
//! ones, ncu's "No kernels were profiled" keeps the stage inconclusive.
//!
//! Sampling runs on its own thread: NVML and nvidia-smi calls block, and the
//! supervisor's loop must never wait on them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// NVML answers in about a millisecond; nvidia-smi is a process start.
const NVML_INTERVAL: Duration = Duration::from_millis(100);
const NVIDIA_SMI_INTERVAL: Duration = Duration::from_millis(500);
/// A sample that takes longer than this is a hung nvidia-smi: it is
/// stopped, and the run goes on without a memory figure.
const NVIDIA_SMI_LIMIT: Duration = Duration::from_secs(5);

/// A running sampler.
pub struct Sampler {
    pgid: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Sampled>,
}

/// What sampling gave.
#[derive(Debug, Default)]
pub struct Sampled {
    /// The peak: MiB used by the group, MiB total of its GPUs.
    pub peak: Option<(u64, u64)>,
    /// Why sampling stopped early (a hung nvidia-smi), if it did.
    pub note: Option<String>,
    /// Whether every process of the group seen on a GPU was the group's
    /// leader, the program itself (`None`: none was seen). ncu need not
    /// follow the program's children when none of them used the GPU.
    pub leader_only: Option<bool>,
    /// The other processes seen on the GPUs meanwhile: pid, executable
    /// name (read from /proc when first seen, never their arguments) and
    /// their peak MiB. What held the memory when a tool ran out of it.
    pub others: Vec<crate::tools::OtherProcess>,
    /// Each process of the stage's own tree seen on a GPU: which GPU, its
    /// peak, and its rank when its environment names one. How many GPUs
    /// the program really used, and which process is which rank.
    pub tree: Vec<crate::tools::GpuProcess>,
}

/// One process on one GPU: (GPU, pid, MiB used).
type Used = (String, u32, u64);

/// One reading: MiB used per (GPU, process id), and each GPU's total MiB.
struct Reading {
    used: Vec<(String, u32, u64)>,
    total_by_gpu: HashMap<String, u64>,
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

    /// Stops and returns what was sampled.
    pub fn stop(self) -> Sampled {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

fn sample_until(pgid: &AtomicU32, stop: &AtomicBool) -> Sampled {
    let Some(source) = Source::open() else {
        return Sampled::default();
    };
    let mut sampled = Sampled::default();
    while !stop.load(Ordering::Relaxed) {
        let group = pgid.load(Ordering::Relaxed);
        if group != 0 {
            let reading = match source.read() {
                Ok(reading) => reading,
                Err(why) => {
                    sampled.note = Some(format!("GPU memory not measured: {why}"));
                    return sampled;
                }
            };
            let root = group;
            let (mine, theirs): (Vec<&Used>, Vec<&Used>) = reading
                .used
                .iter()
                .partition(|(_, pid, _)| in_tree(*pid, root));
            for (gpu, pid, mib) in &mine {
                note_tree_process(&mut sampled.tree, gpu, *pid, *mib);
            }
            for (_, pid, mib) in theirs {
                match sampled.others.iter_mut().find(|o| o.pid == *pid) {
                    Some(other) => other.mib = other.mib.max(*mib),
                    None => sampled.others.push(other_process(*pid, *mib)),
                }
            }
            if !mine.is_empty() {
                let leader = mine.iter().all(|(_, pid, _)| *pid == group);
                sampled.leader_only = Some(sampled.leader_only.unwrap_or(true) && leader);
                let used: u64 = mine.iter().map(|(_, _, mib)| mib).sum();
                let gpus: std::collections::HashSet<&String> =
                    mine.iter().map(|(gpu, _, _)| gpu).collect();
                let total: u64 = gpus
                    .iter()
                    .filter_map(|gpu| reading.total_by_gpu.get(*gpu))
                    .sum();
                sampled.peak = Some(match sampled.peak {
                    Some((p, t)) => (p.max(used), t.max(total)),
                    None => (used, total),
                });
            }
        }
        std::thread::sleep(source.interval());
    }
    sampled
}

/// Each of `gpus`' free memory now, MiB, in their order (`None`: not
/// readable): what the tool stages may share. A GPU is named by index or
/// UUID, as `CUDA_VISIBLE_DEVICES` names it.
pub fn free_mib(gpus: &[String]) -> Vec<Option<u64>> {
    let free = Source::open()
        .and_then(|s| s.free().ok())
        .unwrap_or_default();
    gpus.iter()
        .map(|gpu| {
            free.iter()
                .find(|(index, uuid, _)| index == gpu || uuid == gpu)
                .map(|(_, _, mib)| *mib)
        })
        .collect()
}

/// A process of the stage's tree seen on `gpu`: its peak there, and (when
/// first seen) its rank from its own environment.
fn note_tree_process(tree: &mut Vec<crate::tools::GpuProcess>, gpu: &str, pid: u32, mib: u64) {
    match tree.iter_mut().find(|p| p.pid == pid && p.gpu == gpu) {
        Some(known) => {
            known.mib = known.mib.max(mib);
            // A launcher that execs its program (`sh -c 'exec python3
            // ...'`, `uv run`) changes its name after it was first seen.
            if !known.executable.starts_with("python") {
                let now = crate::tools::procs::executable_of(pid);
                if !now.is_empty() {
                    known.executable = now;
                }
            }
        }
        None => {
            let ranks = crate::tools::Ranks::of_environ(&crate::tools::procs::read_environ(pid));
            tree.push(crate::tools::GpuProcess {
                pid,
                gpu: gpu.to_string(),
                mib,
                executable: crate::tools::procs::executable_of(pid),
                ranks,
            });
        }
    }
}

/// Another process on the GPU: named by its executable, its owner and its
/// memory, never its arguments (another user's `--token=...` must not reach
/// a report); a process of another stage of this same cudawatch run is said
/// to be one.
fn other_process(pid: u32, mib: u64) -> crate::tools::OtherProcess {
    crate::tools::OtherProcess {
        pid,
        command: crate::tools::procs::executable_of(pid),
        mib,
        owner: crate::tools::procs::owner_of(pid),
        ours: crate::tools::procs::descends_from(pid, std::process::id()),
    }
}

/// Whether `pid` is of the stage's tree: in the process group of the
/// stage's child (`root`, its leader), or a descendant of it. Launchers
/// put their workers in sessions of their own (torchrun's elastic agent
/// starts each with a new session and group: seen on the H100), so the
/// group alone misses them.
fn in_tree(pid: u32, root: u32) -> bool {
    in_group(pid, root) || crate::tools::procs::descends_from(pid, root)
}

fn in_group(pid: u32, pgid: u32) -> bool {
    rustix::process::Pid::from_raw(pid as i32)
        .and_then(|p| rustix::process::getpgid(Some(p)).ok())
        .is_some_and(|g| g.as_raw_nonzero().get() as u32 == pgid)
}

enum Source {
    #[cfg(feature = "nvml")]
    Nvml(Box<nvml_wrapper::Nvml>),
    NvidiaSmi(PathBuf),
}

impl Source {
    /// NVML, else nvidia-smi on PATH, else nothing to sample with.
    fn open() -> Option<Source> {
        #[cfg(feature = "nvml")]
        if let Ok(nvml) = nvml_wrapper::Nvml::init() {
            return Some(Source::Nvml(Box::new(nvml)));
        }
        crate::executables::on_path("nvidia-smi").map(Source::NvidiaSmi)
    }

    fn interval(&self) -> Duration {
        match self {
            #[cfg(feature = "nvml")]
            Source::Nvml(_) => NVML_INTERVAL,
            Source::NvidiaSmi(_) => NVIDIA_SMI_INTERVAL,
        }
    }

    /// (index, UUID, free MiB) of every GPU.
    fn free(&self) -> Result<Vec<(String, String, u64)>, String> {
        match self {
            #[cfg(feature = "nvml")]
            Source::Nvml(nvml) => free_nvml(nvml).ok_or_else(|| "NVML stopped answering".into()),
            Source::NvidiaSmi(smi) => {
                let text = run_nvidia_smi(
                    smi,
                    &[
                        "--query-gpu=index,uuid,memory.free",
                        "--format=csv,noheader,nounits",
                    ],
                )?;
                Ok(parse_free(&text))
            }
        }
    }

    fn read(&self) -> Result<Reading, String> {
        match self {
            #[cfg(feature = "nvml")]
            Source::Nvml(nvml) => read_nvml(nvml).ok_or_else(|| "NVML stopped answering".into()),
            Source::NvidiaSmi(smi) => read_nvidia_smi(smi),
        }
    }
}

#[cfg(feature = "nvml")]
fn read_nvml(nvml: &nvml_wrapper::Nvml) -> Option<Reading> {
    use nvml_wrapper::enums::device::UsedGpuMemory;
    let mut reading = Reading {
        used: Vec::new(),
        total_by_gpu: HashMap::new(),
    };
    for index in 0..nvml.device_count().ok()? {
        let device = nvml.device_by_index(index).ok()?;
        let gpu = index.to_string();
        let total = device.memory_info().ok()?.total / (1024 * 1024);
        for process in device.running_compute_processes().unwrap_or_default() {
            if let UsedGpuMemory::Used(bytes) = process.used_gpu_memory {
                reading
                    .used
                    .push((gpu.clone(), process.pid, bytes / (1024 * 1024)));
            }
        }
        reading.total_by_gpu.insert(gpu, total);
    }
    Some(reading)
}

#[cfg(feature = "nvml")]
fn free_nvml(nvml: &nvml_wrapper::Nvml) -> Option<Vec<(String, String, u64)>> {
    let mut free = Vec::new();
    for index in 0..nvml.device_count().ok()? {
        let device = nvml.device_by_index(index).ok()?;
        let uuid = device.uuid().unwrap_or_default();
        free.push((
            index.to_string(),
            uuid,
            device.memory_info().ok()?.free / (1024 * 1024),
        ));
    }
    Some(free)
}

fn run_nvidia_smi(smi: &Path, args: &[&str]) -> Result<String, String> {
    let ran = super::bounded::capture(smi, args, &[], super::bounded::limit(NVIDIA_SMI_LIMIT))
        .ok_or("nvidia-smi could not be started")?;
    if ran.timed_out {
        return Err(format!(
            "nvidia-smi did not answer within {} s and was stopped",
            super::bounded::limit(NVIDIA_SMI_LIMIT).as_secs_f64()
        ));
    }
    if !ran.succeeded() {
        return Err(format!(
            "nvidia-smi failed: {}",
            super::bounded::last_line(&ran.output)
        ));
    }
    Ok(ran.stdout)
}

/// `0, GPU-8f3c…, 80123` per GPU.
fn parse_free(text: &str) -> Vec<(String, String, u64)> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            match f.as_slice() {
                [index, uuid, mib] => {
                    Some((index.to_string(), uuid.to_string(), mib.parse().ok()?))
                }
                _ => None,
            }
        })
        .collect()
}

fn read_nvidia_smi(smi: &Path) -> Result<Reading, String> {
    let run = |args: &[&str]| run_nvidia_smi(smi, args);
    let totals = run(&[
        "--query-gpu=uuid,memory.total",
        "--format=csv,noheader,nounits",
    ])?;
    let apps = run(&[
        "--query-compute-apps=gpu_uuid,pid,used_memory",
        "--format=csv,noheader,nounits",
    ])?;
    Ok(parse_nvidia_smi(&totals, &apps))
}

/// `GPU-8f3c…, 81559` per GPU and `GPU-8f3c…, 1234, 520` per process.
fn parse_nvidia_smi(totals: &str, apps: &str) -> Reading {
    let fields =
        |line: &str| -> Vec<String> { line.split(',').map(|f| f.trim().to_string()).collect() };
    Reading {
        used: apps
            .lines()
            .filter_map(|l| match fields(l).as_slice() {
                [gpu, pid, mib] => Some((gpu.clone(), pid.parse().ok()?, mib.parse().ok()?)),
                _ => None,
            })
            .collect(),
        total_by_gpu: totals
            .lines()
            .filter_map(|l| match fields(l).as_slice() {
                [gpu, total] => Some((gpu.clone(), total.parse().ok()?)),
                _ => None,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_smi_lines_are_read_per_process_and_per_gpu() {
        let r = parse_nvidia_smi(
            "GPU-a, 81559\nGPU-b, 143771\n",
            "GPU-a, 1234, 520\nGPU-b, 99, 14\nGPU-a, [N/A], 3\n",
        );
        assert_eq!(
            r.used,
            vec![("GPU-a".into(), 1234, 520), ("GPU-b".into(), 99, 14)]
        );
        assert_eq!(r.total_by_gpu["GPU-b"], 143771);
    }

    #[test]
    fn free_memory_is_read_per_gpu_by_index_and_uuid() {
        let free = parse_free("0, GPU-a, 80123\n1, GPU-b, [N/A]\n");
        assert_eq!(free, vec![("0".into(), "GPU-a".into(), 80123)]);
    }

    #[test]
    fn a_child_is_of_its_parents_tree_and_not_the_other_way() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id();
        assert!(crate::tools::procs::descends_from(child.id(), me));
        assert!(in_tree(child.id(), me));
        assert!(!crate::tools::procs::descends_from(me, child.id()));
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn another_process_is_named_by_its_executable_never_its_arguments() {
        let mut child = std::process::Command::new("sleep")
            .arg("--hf-token=secret")
            .arg("5")
            .spawn();
        // `sleep` refuses the flag at once on some systems: read it while it lives.
        if let Ok(child) = child.as_mut() {
            let other = other_process(child.id(), 10);
            assert!(!other.command.contains("secret"), "{other:?}");
            assert!(other.ours);
            let _ = child.kill();
            let _ = child.wait();
        }
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
