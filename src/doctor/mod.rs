//! `cudawatch doctor`: is this machine able to run CUDA programs and the
//! tools, and what in its environment changes what they see. MachineFacts are
//! gathered by running `nvidia-smi`, the tools' `--version`, the Python on
//! PATH and (unless `--quick`) a tiny probe under compute-sanitizer and
//! ncu; `checks` turns them into ok / warning / problem lines with fixes.
//! `cudawatch run` embeds a quick doctor, and the last probes from the
//! cache when the driver and tools are the same.

pub mod cache;
pub mod checks;
pub mod env_vars;
pub mod global_race_tool;
pub mod probe;
pub mod pypi_sanitizer;
pub mod smi;
pub mod versions;

use std::path::PathBuf;
use std::time::Duration;

use cudawatch_model::{EnvCheck, EnvStatus, Environment};

use crate::supervisor::bounded;
use crate::tools::ToolPaths;

/// A quick command's limit (nvidia-smi, --version).
const QUICK: Duration = Duration::from_secs(20);
/// Importing PyTorch can take a while on a cold file cache.
const PYTHON: Duration = Duration::from_secs(90);

/// What doctor runs.
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// Run the probes (compute-sanitizer and ncu on a tiny program).
    pub probe: bool,
    /// The Python to ask about PyTorch; `None`: `python3` on PATH; and
    /// not asked at all when `ask_python` is false.
    pub python: Option<PathBuf>,
    /// Ask Python about PyTorch (seconds; `run` does not).
    pub ask_python: bool,
    /// Where the tools are.
    pub tools: ToolPaths,
}

/// Everything doctor learned, before judging it.
#[derive(Debug, Clone)]
pub struct MachineFacts {
    /// nvidia-smi's answers, or why there are none.
    pub smi: Result<Smi, String>,
    /// nvcc's release, if nvcc is found.
    pub nvcc: Option<(PathBuf, Option<(u32, u32)>)>,
    /// compute-sanitizer's path and version, or why not.
    pub sanitizer: Result<(PathBuf, Option<String>), String>,
    /// ncu's path and version, or why not.
    pub ncu: Result<(PathBuf, Option<String>), String>,
    /// The cuda-gdb that reads GPU core dumps, and its version; `None`
    /// when none was found.
    pub cuda_gdb: Option<(PathBuf, Option<String>)>,
    /// PyTorch's build, or why it is not known (`None`: not asked).
    pub torch: Option<Result<versions::Torch, String>>,
    /// The compute-sanitizer pip installed in that Python that racecheck
    /// and synccheck would run under, and its release (`pypi_sanitizer`);
    /// `None`: not asked.
    pub pypi_sanitizer: Option<Option<(PathBuf, String)>>,
    /// Whether the global-race stage's tool is built, or can be here.
    pub global_race: global_race_tool::Located,
    /// The probes' results, when run.
    pub probes: Vec<EnvCheck>,
    /// The environment's variables that matter, as checks.
    pub env: Vec<EnvCheck>,
    /// Whether a process id is alive, dead, or a zombie here.
    pub processes: Vec<(u32, ProcessState)>,
    /// The MPS control daemon's pipe folder programs started here would
    /// connect to, when the GPU is shared through MPS.
    pub mps_pipe: Option<PathBuf>,
}

/// What nvidia-smi says.
#[derive(Debug, Clone, Default)]
pub struct Smi {
    /// Driver version.
    pub driver: Option<String>,
    /// The newest CUDA the driver supports.
    pub cuda: Option<(u32, u32)>,
    /// The GPUs.
    pub gpus: Vec<smi::Gpu>,
    /// Processes holding memory.
    pub apps: Vec<smi::App>,
}

/// A process holding GPU memory, as this machine sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessState {
    /// Running.
    Alive,
    /// Exited, not reaped by its parent: its memory is not freed until it is.
    Zombie,
    /// Not visible here (another container's, or gone).
    NotHere,
}

/// Runs doctor.
pub fn diagnose(options: &DoctorOptions) -> Environment {
    let facts = gather(options);
    let mut environment = Environment {
        checks: checks::judge(&facts),
        probed: options.probe,
        probed_at: None,
    };
    if options.probe {
        cache::store(&facts, &environment);
        environment.probed_at = Some(jiff::Timestamp::now().to_string());
    }
    environment
}

/// The quick doctor `cudawatch run` embeds: no probes, no Python; the
/// last probes' results from the cache when they were made with this
/// driver and these tools; and compute-sanitizer's version, which the
/// run's plan needs (`ToolPaths::sanitizer_version`).
pub fn for_run(tools: &ToolPaths) -> (Environment, Option<String>) {
    let options = DoctorOptions {
        probe: false,
        python: None,
        ask_python: false,
        tools: tools.clone(),
    };
    let facts = gather(&options);
    let mut environment = Environment {
        checks: checks::judge(&facts),
        probed: false,
        probed_at: None,
    };
    // A missing dump reader matters only to a run that wrote a dump, and
    // the coredump stage's reason says it there; the global-race tool only
    // to a run of its stage, which finds or builds it and says why not in
    // its reason. In every other run's report they would be noise.
    environment.checks.retain(|c| {
        !(c.id == checks::DUMP_READER && c.status != EnvStatus::Ok)
            && c.id != checks::GLOBAL_RACE_TOOL
    });
    if let Some((at, probes)) = cache::load(&facts) {
        environment
            .checks
            .retain(|c| !c.id.starts_with("tool_version_"));
        environment.checks.extend(probes);
        environment.probed = true;
        environment.probed_at = Some(at);
    }
    let sanitizer_version = facts.sanitizer.ok().and_then(|(_, version)| version);
    (environment, sanitizer_version)
}

/// An NVIDIA tool's version (`2026.4.0.0`) from its `--version`, quickly.
pub fn tool_version(path: &std::path::Path) -> Option<String> {
    bounded::capture(path, &["--version"], &[], bounded::limit(QUICK))
        .and_then(|r| versions::tool_version(&r.output))
}

/// Gathers the facts.
pub fn gather(options: &DoctorOptions) -> MachineFacts {
    let smi = read_smi();
    let processes = match &smi {
        Ok(s) => s
            .apps
            .iter()
            .map(|a| (a.pid, process_state(a.pid)))
            .collect(),
        Err(_) => Vec::new(),
    };
    let version_of = |path: &PathBuf| tool_version(path);
    let tool = |path: &PathBuf, missing: &Option<String>| match missing {
        Some(why) => Err(why.clone()),
        None => Ok((path.clone(), version_of(path))),
    };
    let missing = |path: &PathBuf| options.tools.missing(path).map(str::to_string);
    let sanitizer = tool(
        &options.tools.compute_sanitizer,
        &missing(&options.tools.compute_sanitizer),
    );
    let ncu = tool(&options.tools.ncu, &missing(&options.tools.ncu));
    let cuda_gdb = options.tools.cuda_gdb.clone().map(|path| {
        let version = bounded::capture(&path, &["--version"], &[], bounded::limit(QUICK))
            .and_then(|r| versions::cuda_gdb_version(&r.output));
        (path, version)
    });
    let nvcc = find_nvcc(&options.tools).map(|path| {
        let release = bounded::capture(&path, &["--version"], &[], bounded::limit(QUICK))
            .and_then(|r| versions::nvcc_release(&r.output));
        (path, release)
    });
    let torch = options
        .ask_python
        .then(|| ask_torch(options.python.clone()));
    let pypi_sanitizer = options.ask_python.then(|| {
        let python = options.python.clone().unwrap_or_else(|| "python3".into());
        let toolkit = sanitizer.as_ref().ok().and_then(|(_, v)| v.as_deref());
        pypi_sanitizer::for_library_filter(&python, toolkit)
    });
    let python = options
        .ask_python
        .then(|| options.python.clone().unwrap_or_else(|| "python3".into()));
    let global_race = global_race_tool::locate(&options.tools, python.as_deref());
    let mps_pipe = crate::tools::ncu::mps::control_pipe(|k| std::env::var(k).ok());
    let mut facts = MachineFacts {
        smi,
        nvcc,
        sanitizer,
        ncu,
        cuda_gdb,
        torch,
        pypi_sanitizer,
        global_race,
        probes: Vec::new(),
        env: env_vars::checks(|k| std::env::var(k).ok())
            .into_iter()
            .chain(env_vars::mps(mps_pipe.as_deref()))
            .collect(),
        processes,
        mps_pipe,
    };
    if options.probe {
        facts.probes = probe::probe_tools(&facts);
    }
    facts
}

fn read_smi() -> Result<Smi, String> {
    let Some(path) = crate::executables::on_path("nvidia-smi") else {
        return Err("nvidia-smi is not on PATH: no NVIDIA driver here".into());
    };
    let table = bounded::capture(&path, &[] as &[&str], &[], bounded::limit(QUICK))
        .ok_or("nvidia-smi could not be started")?;
    if table.code != Some(0) {
        let first = table
            .output
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output")
            .trim()
            .to_string();
        return Err(if table.timed_out {
            format!(
                "nvidia-smi did not answer within {} s and was stopped: the driver or a GPU is in a bad state",
                bounded::limit(QUICK).as_secs_f64()
            )
        } else {
            format!("nvidia-smi failed: {first}")
        });
    }
    let (driver, cuda) = smi::header(&table.output);
    let query = |q: &str| {
        bounded::capture(
            &path,
            &[q, "--format=csv,noheader"],
            &[],
            bounded::limit(QUICK),
        )
        .filter(|r| r.code == Some(0))
        .map(|r| r.output)
        .unwrap_or_default()
    };
    Ok(Smi {
        driver,
        cuda,
        gpus: smi::gpus(&query(smi::GPU_QUERY), &query(smi::UUID_QUERY)),
        apps: smi::apps(&query(smi::APPS_QUERY)),
    })
}

/// nvcc: beside compute-sanitizer, on PATH, in `$CUDA_HOME/bin`, or in
/// `/usr/local/cuda/bin`.
pub fn find_nvcc(tools: &ToolPaths) -> Option<PathBuf> {
    // Beside compute-sanitizer first: the toolkit it came with.
    let beside = tools
        .compute_sanitizer
        .parent()
        .map(|d| d.join("nvcc"))
        .filter(|p| p.is_file());
    beside
        .or_else(|| crate::executables::on_path("nvcc"))
        .or_else(|| {
            std::env::var_os("CUDA_HOME")
                .map(|h| PathBuf::from(h).join("bin/nvcc"))
                .filter(|p| p.is_file())
        })
        .or_else(|| Some(PathBuf::from("/usr/local/cuda/bin/nvcc")).filter(|p| p.is_file()))
}

fn ask_torch(python: Option<PathBuf>) -> Result<versions::Torch, String> {
    let python = match python {
        Some(p) => p,
        None => crate::executables::on_path("python3").ok_or("no python3 on PATH")?,
    };
    let ran = bounded::capture(&python, &["-c", versions::TORCH_SCRIPT], &[], PYTHON)
        .ok_or_else(|| format!("{} could not be started", python.display()))?;
    if ran.timed_out {
        return Err(format!(
            "{} -c 'import torch' did not finish in 90 s",
            python.display()
        ));
    }
    if ran.code != Some(0) {
        return Err(if ran.output.contains("No module named 'torch'") {
            format!("PyTorch is not installed for {}", python.display())
        } else {
            let last = bounded::last_line(&ran.output);
            format!("{} could not import torch: {last}", python.display())
        });
    }
    versions::torch(&ran.output)
        .ok_or_else(|| "could not read PyTorch's build from its output".into())
}

/// Whether `pid` runs here, is a zombie, or is not visible.
fn process_state(pid: u32) -> ProcessState {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => match stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
        {
            Some("Z") => ProcessState::Zombie,
            _ => ProcessState::Alive,
        },
        Err(_) => ProcessState::NotHere,
    }
}

/// A check.
pub fn check(
    id: &str,
    title: &str,
    status: EnvStatus,
    detail: String,
    fix: Option<&str>,
) -> EnvCheck {
    EnvCheck {
        id: id.to_string(),
        title: title.to_string(),
        status,
        detail,
        fix: fix.map(str::to_string),
        breaks: Vec::new(),
    }
}
