//! The probes: does compute-sanitizer really instrument a CUDA program on
//! this GPU and driver, and may ncu read the performance counters? A
//! tool can be found, print its version, and still fail every run: a
//! compute-sanitizer newer than the driver supports exits 255 with
//! "Target application terminated before first instrumented API call"
//! (seen with 2026.3 on driver 580); ncu without permission prints
//! ERR_NVGPUCTRPERM. The probe program is a one-kernel CUDA program built
//! with nvcc, or, without nvcc, one PyTorch operation.

use std::path::Path;
use std::time::Duration;

use cudawatch_model::{EnvCheck, EnvStatus, Tool};

use super::{MachineFacts, check};
use crate::supervisor::bounded;

/// A probe's limit: instrumentation of one tiny program.
const PROBE: Duration = Duration::from_secs(180);

/// The probe program; `scripts/capture-doctor-probes.sh` builds the same
/// file for the captures the tests' fakes replay.
const PROBE_SOURCE: &str = include_str!("probe.cu");

const SANITIZER_TOOLS: [Tool; 4] = Tool::SANITIZERS;

/// Runs both probes; one check each.
pub fn probe_tools(facts: &MachineFacts) -> Vec<EnvCheck> {
    let program = match facts
        .smi
        .as_ref()
        .map_err(|_| "no GPU to probe on".to_string())
        .and_then(|_| probe_program(facts))
    {
        Ok(p) => p,
        Err(why) => {
            return vec![
                check(
                    "probe_sanitizer",
                    "compute-sanitizer instruments a CUDA program here",
                    EnvStatus::Skipped,
                    why.clone(),
                    Some(
                        "install nvcc (the CUDA toolkit) or PyTorch so that doctor can build a probe",
                    ),
                ),
                check(
                    "probe_ncu",
                    "ncu may read the performance counters",
                    EnvStatus::Skipped,
                    why,
                    None,
                ),
            ];
        }
    };
    vec![sanitizer(facts, &program), ncu(facts, &program)]
}

fn sanitizer(facts: &MachineFacts, program: &[String]) -> EnvCheck {
    let title = "compute-sanitizer instruments a CUDA program here";
    let (ran, version) = match start(
        "probe_sanitizer",
        title,
        &facts.sanitizer,
        |exe| crate::tools::sanitizer::probe_argv(exe, program),
        &SANITIZER_TOOLS,
        &[],
    ) {
        Ok(r) => r,
        Err(c) => return *c,
    };
    if ran.code == Some(0) && ran.output.contains("ERROR SUMMARY: 0 errors") {
        return check(
            "probe_sanitizer",
            title,
            EnvStatus::Ok,
            format!("compute-sanitizer {version} checked the probe: 0 errors"),
            None,
        );
    }
    let mut c = if ran.output.contains("first instrumented API call") {
        check(
            "probe_sanitizer",
            title,
            EnvStatus::Problem,
            format!(
                "compute-sanitizer {version} exits {} before instrumenting anything (\"Target application terminated before first instrumented API call\"): it does not work with this driver{}",
                ran.code.map_or("by a signal".into(), |c| c.to_string()),
                driver_words(facts)
            ),
            Some(
                "use the compute-sanitizer of a CUDA toolkit this driver supports (--compute-sanitizer PATH), or update the driver",
            ),
        )
    } else {
        let last = bounded::last_line(&ran.output);
        check(
            "probe_sanitizer",
            title,
            EnvStatus::Problem,
            format!(
                "compute-sanitizer {version} failed on the probe (exit {}): {last}",
                ran.code.map_or("none".into(), |c| c.to_string())
            ),
            Some("run the probe by hand: compute-sanitizer --tool memcheck <a CUDA program>"),
        )
    };
    c.breaks = SANITIZER_TOOLS.to_vec();
    c
}

fn ncu(facts: &MachineFacts, program: &[String]) -> EnvCheck {
    let title = "ncu may read the performance counters";
    let outside_mps = facts
        .mps_pipe
        .as_ref()
        .map(|_| crate::tools::ncu::mps::outside(&super::cache::dir()));
    let outside_mps: Vec<(&str, &str)> = outside_mps
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (ran, version) = match start(
        "probe_ncu",
        title,
        &facts.ncu,
        |exe| crate::tools::ncu::probe_argv(exe, program),
        &[Tool::Ncu],
        // On a GPU shared through MPS, as the ncu stage does: outside it.
        &outside_mps,
    ) {
        Ok(r) => r,
        Err(c) => return *c,
    };
    let mut c = if ran.output.contains("ERR_NVGPUCTRPERM") {
        check(
            "probe_ncu",
            title,
            EnvStatus::Problem,
            format!(
                "ncu {version}: ERR_NVGPUCTRPERM, this user may not read the GPU's performance counters"
            ),
            Some(
                "as root: echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' > /etc/modprobe.d/nvidia-profiling.conf and reload the driver (or reboot); or run as root; in a container: --cap-add SYS_ADMIN",
            ),
        )
    } else if ran.output.contains("No kernels were profiled") {
        check(
            "probe_ncu",
            title,
            EnvStatus::Problem,
            format!("ncu {version} profiled nothing on the probe (\"No kernels were profiled\")"),
            Some("run the probe by hand: ncu --metrics gpu__time_duration.sum <a CUDA program>"),
        )
    } else if ran.code == Some(0) && ran.output.contains("gpu__time_duration") {
        return check(
            "probe_ncu",
            title,
            EnvStatus::Ok,
            format!("ncu {version} measured the probe's kernel"),
            None,
        );
    } else {
        let last = bounded::last_line(&ran.output);
        check(
            "probe_ncu",
            title,
            EnvStatus::Problem,
            format!("ncu {version} failed on the probe: {last}"),
            None,
        )
    };
    c.breaks = vec![Tool::Ncu];
    c
}

/// Runs a found tool on the probe; a check instead when it cannot be.
fn start(
    id: &str,
    title: &str,
    tool: &Result<(std::path::PathBuf, Option<String>), String>,
    argv: impl FnOnce(&Path) -> Vec<std::ffi::OsString>,
    tools: &[Tool],
    env: &[(&str, &str)],
) -> Result<(bounded::Ran, String), Box<EnvCheck>> {
    let Ok((path, version)) = tool else {
        return Err(Box::new(check(
            id,
            title,
            EnvStatus::Skipped,
            "not found".into(),
            None,
        )));
    };
    let argv = argv(path);
    let args = &argv[1..];
    let limit = bounded::limit(PROBE);
    let ran = bounded::capture(path, args, env, limit).ok_or_else(|| {
        Box::new(check(
            id,
            title,
            EnvStatus::Problem,
            format!("{} could not be started", path.display()),
            None,
        ))
    })?;
    if ran.timed_out {
        let mut c = check(
            id,
            title,
            EnvStatus::Problem,
            format!(
                "{} did not finish the probe within {} s and was stopped (last words: {})",
                path.display(),
                limit.as_secs_f64(),
                bounded::last_line(&ran.output)
            ),
            Some(
                "a GPU in a bad state or a tool waiting on something: run the probe by hand, or check nvidia-smi",
            ),
        );
        c.breaks = tools.to_vec();
        return Err(Box::new(c));
    }
    Ok((ran, version.clone().unwrap_or_else(|| "?".into())))
}

fn driver_words(facts: &MachineFacts) -> String {
    match &facts.smi {
        Ok(s) => format!(
            " {}{}",
            s.driver.as_deref().unwrap_or("?"),
            s.cuda
                .map(|(a, b)| format!(" (CUDA {a}.{b})"))
                .unwrap_or_default()
        ),
        Err(_) => String::new(),
    }
}

/// The probe's argv: a program built with nvcc into doctor's cache, or a
/// PyTorch one-liner.
fn probe_program(facts: &MachineFacts) -> Result<Vec<String>, String> {
    if let Some((nvcc, release)) = &facts.nvcc {
        let dir = super::cache::dir().join(format!(
            "probe-{}",
            release.map_or("x".into(), |(a, b)| format!("{a}.{b}"))
        ));
        let binary = dir.join("probe");
        if binary.is_file() || build(nvcc, &dir, &binary) {
            return Ok(vec![binary.display().to_string()]);
        }
    }
    if let Some(Ok(torch)) = &facts.torch
        && torch.available
    {
        let python = crate::executables::on_path("python3").ok_or("no python3 on PATH")?;
        return Ok(vec![
            python.display().to_string(),
            "-c".into(),
            "import torch; x = torch.ones(32, device='cuda'); print((x * 2).sum().item())".into(),
        ]);
    }
    Err("no probe program: nvcc could not build one and PyTorch with CUDA is not available".into())
}

fn build(nvcc: &Path, dir: &Path, binary: &Path) -> bool {
    if std::fs::create_dir_all(dir).is_err()
        || std::fs::write(dir.join("probe.cu"), PROBE_SOURCE).is_err()
    {
        return false;
    }
    let source = dir.join("probe.cu").display().to_string();
    let out = binary.display().to_string();
    bounded::capture(nvcc, &["-arch=native", "-o", &out, &source], &[], PROBE)
        .is_some_and(|r| r.code == Some(0))
        || bounded::capture(nvcc, &["-o", &out, &source], &[], PROBE)
            .is_some_and(|r| r.code == Some(0))
}
