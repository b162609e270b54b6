//! What the supervisor saw of one stage (`stage.json`): the facts each
//! kind's outcome rules start from, with what the stage left in its folder.

use cudawatch_model::{ProcessEnd, Tool};
use serde::{Deserialize, Serialize};

/// The value a stage's recorded environment (`NAME=value`, as
/// [`StageRecord::env`] and the report's stages keep it) gave `name`.
pub fn env_value<'a>(env: &'a [String], name: &str) -> Option<&'a str> {
    env.iter()
        .find_map(|e| e.strip_prefix(name)?.strip_prefix('='))
}

/// A stage's nonce, for the files the program's processes write on its
/// behalf (the hook's lines, a rank's exit status): set in the stage's
/// environment, so its record ([`env_value`]) says which one to expect.
/// 16 hex digits no earlier run could have written: from the kernel's
/// random source, else from the clock and the pid.
pub fn nonce() -> String {
    use std::io::Read as _;
    let mut bytes = [0u8; 8];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    let value = if random {
        u64::from_le_bytes(bytes)
    } else {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        nanos ^ (u64::from(std::process::id()) << 32)
    };
    format!("{value:016x}")
}

/// What the supervisor saw of one stage.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRecord {
    /// The stage's tool.
    pub tool: Tool,
    /// Command line.
    pub command: Vec<String>,
    /// Environment cudawatch set (`NAME=value`, `-NAME` for removed).
    pub env: Vec<String>,
    /// How the main process ended.
    pub end: ProcessEnd,
    /// Wall time.
    pub seconds: f64,
    /// The timeout it ran under.
    pub timeout_seconds: f64,
    /// Stopped at the deadline.
    #[serde(default)]
    pub timed_out: bool,
    /// Stopped by the user.
    #[serde(default)]
    pub interrupted: bool,
    /// Needed SIGKILL.
    #[serde(default)]
    pub killed: bool,
    /// Something of its process group outlived it.
    #[serde(default)]
    pub left_behind: bool,
    /// Could not be started.
    #[serde(default)]
    pub spawn_error: Option<String>,
    /// No `stage.json` was ever written: cudawatch itself was stopped
    /// (SIGKILL, the OOM killer, a lost machine) while the stage ran. Never
    /// written by the supervisor; made up when a run directory is read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unfinished: bool,
    /// Why the stage was not run on purpose: it does not apply to this
    /// program (csan for a C++ program), or the plain run's failure blocks
    /// it (`tools::plain::blocked_by_plain_failure`). Skipped, never clean,
    /// never inconclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
    /// Peak and total GPU memory in MiB (plain stage).
    #[serde(default)]
    pub gpu_memory_mib: Option<(u64, u64)>,
    /// Whether the only process of the stage seen on a GPU was the one it
    /// started (the plain run's says whether ncu must follow children).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_leader_only: Option<bool>,
    /// ncu's imports of its report as CSV pages: (file written, how it ended).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<(String, ProcessEnd)>,
    /// What went wrong beside the stage and is worth a warning in the
    /// report (a hung nvidia-smi while measuring GPU memory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Other processes that used the GPU while the stage ran, with their
    /// peak memory: named when a tool ran out of GPU memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_others: Vec<OtherProcess>,
    /// The stage's own processes seen on a GPU (the program's tree: a
    /// launcher's workers too), each with its GPU, peak and rank.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_processes: Vec<GpuProcess>,
    /// The tries before this one, each kept in a folder of the run
    /// directory, in the order they ran: the stage's attempts as data.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_tries: Vec<EarlierTry>,
    /// The plain run ended in an out-of-memory error at this place
    /// (`file.py:15`): the sanitizers and ncu would only meet it again, so
    /// they are not run (`tools::plain::blocked_by_plain_failure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_memory_at: Option<String>,
    /// The plain run ended in a collective's timeout (one rank waited, a
    /// rank never came) at this place: every tool stage would only hang in
    /// the same collective until its own, longer limit, so none is run
    /// (`tools::plain::blocked_by_plain_failure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective_timeout_at: Option<String>,
    /// The plain run met a device exception (`cudaErrorIllegalAddress at
    /// train.py:14`): the core dump stage runs to place it in its kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_exception: Option<String>,
}

/// A try of a stage that was run again, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EarlierTry {
    /// Why it was run again ("compute-sanitizer died of SIGSEGV before its
    /// summary").
    pub reason: String,
    /// Where it is kept, relative to the run directory (`crashed/memcheck`);
    /// empty when it could not be kept.
    pub folder: String,
    /// Whether its findings stand: records a tool printed before it died
    /// or was stopped for flooding are the program's; a try that failed
    /// under cudawatch's own settings (CUDA graphs without the caching
    /// allocator) or crowded beside other stages is not.
    pub judged: bool,
}

/// A process of the stage's own tree seen using a GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuProcess {
    /// Its process id.
    pub pid: u32,
    /// The GPU, as NVML indexes it (or its UUID, from nvidia-smi).
    pub gpu: String,
    /// The most memory it held there, MiB.
    pub mib: u64,
    /// Its executable's name (`python3`).
    #[serde(default)]
    pub executable: String,
    /// Its rank, from the environment its launcher gave it.
    #[serde(default)]
    pub ranks: Ranks,
}

/// What a launcher (torchrun, accelerate, deepspeed, Slurm's srun with
/// PyTorch's variables) tells a worker about its place.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ranks {
    /// `RANK`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// `LOCAL_RANK`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_rank: Option<u32>,
    /// `WORLD_SIZE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_size: Option<u32>,
}

impl Ranks {
    /// The ranks a process's environment names.
    pub fn of_environ(environ: &[(String, String)]) -> Ranks {
        let get = |name: &str| {
            environ
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.trim().parse().ok())
        };
        Ranks {
            rank: get("RANK"),
            local_rank: get("LOCAL_RANK"),
            world_size: get("WORLD_SIZE"),
        }
    }
}

impl GpuProcess {
    /// How the report names it.
    pub fn reference(&self) -> cudawatch_model::ProcessRef {
        cudawatch_model::ProcessRef {
            rank: self.ranks.rank,
            local_rank: self.ranks.local_rank,
            pid: Some(self.pid),
            gpu: Some(self.gpu.clone()),
        }
    }
}

impl StageRecord {
    /// How many GPUs the stage's own processes used (0: none seen).
    pub fn gpus_used(&self) -> usize {
        let gpus: std::collections::BTreeSet<&str> =
            self.gpu_processes.iter().map(|p| p.gpu.as_str()).collect();
        gpus.len()
    }
}

/// A process outside the stage seen using GPU memory while it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherProcess {
    /// Its process id.
    pub pid: u32,
    /// Its executable's name, when it could be read; never its arguments
    /// (another user's command line may hold a secret).
    pub command: String,
    /// The most GPU memory it held, MiB.
    pub mib: u64,
    /// The user id that owns it, when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<u32>,
    /// A process of another stage of this same cudawatch run (stages run
    /// at once), not a stranger.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ours: bool,
}

impl StageRecord {
    /// The record of a stage whose folder exists but which never recorded
    /// how it ended: what it wrote is read, and it cannot be clean.
    pub fn unfinished(tool: Tool) -> StageRecord {
        StageRecord {
            tool,
            command: Vec::new(),
            env: Vec::new(),
            end: ProcessEnd::NotStarted,
            seconds: 0.0,
            timeout_seconds: 0.0,
            timed_out: false,
            interrupted: false,
            killed: false,
            left_behind: false,
            spawn_error: None,
            unfinished: true,
            not_applicable: None,
            gpu_memory_mib: None,
            gpu_leader_only: None,
            imports: Vec::new(),
            notes: Vec::new(),
            gpu_others: Vec::new(),
            gpu_processes: Vec::new(),
            earlier_tries: Vec::new(),
            out_of_memory_at: None,
            collective_timeout_at: None,
            device_exception: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::env_value;

    #[test]
    fn a_recorded_setting_is_found_by_its_whole_name_only() {
        let env = ["PYTHON_EXEC_X=/a".to_string(), "PYTHON_EXEC=/r/x.sh".into()];
        assert_eq!(env_value(&env, "PYTHON_EXEC"), Some("/r/x.sh"));
        assert_eq!(env_value(&env, "PYTHON"), None);
        // A removed variable is recorded as `-NAME`: not set.
        assert_eq!(env_value(&["-PYTHON_EXEC".into()], "PYTHON_EXEC"), None);
    }
}
