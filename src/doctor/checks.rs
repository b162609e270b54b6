//! From facts to verdicts: each check ok, warning or problem, with what
//! was seen and the fix in one line. Pure, so every check is tested with
//! made-up facts.

use cudawatch_model::{EnvCheck, EnvStatus};

use super::versions::{self, Fit};
use super::{MachineFacts, ProcessState, check};

/// compute-sanitizer and ncu releases seen working, with the newest CUDA
/// they came with: a newer tool on a driver of that CUDA or older is
/// suspect until the probe says otherwise (2026.3 on driver 580, CUDA
/// 13.0, exits 255 before instrumenting).
const NEWEST_KNOWN_TOOL: (&str, (u32, u32)) = ("2025.3", (13, 0));

/// Every check, in order: GPUs, memory, driver and toolkit, PyTorch,
/// tools, probes, environment.
pub fn judge(facts: &MachineFacts) -> Vec<EnvCheck> {
    let mut out = Vec::new();
    gpus(facts, &mut out);
    toolkit(facts, &mut out);
    torch(facts, &mut out);
    tools(facts, &mut out);
    library_filter_sanitizer(facts, &mut out);
    dump_reader(facts, &mut out);
    global_race_tool(facts, &mut out);
    out.extend(facts.probes.iter().cloned());
    out.extend(facts.env.iter().cloned());
    out
}

fn gpus(facts: &MachineFacts, out: &mut Vec<EnvCheck>) {
    let smi = match &facts.smi {
        Ok(smi) => smi,
        Err(why) => {
            out.push(check(
                "gpus",
                "GPUs visible",
                EnvStatus::Problem,
                format!("no GPU: {why}. Without one, cudawatch still reads captures (cudawatch parse) and saved runs (cudawatch report)"),
                Some("run cudawatch where the GPU and its NVIDIA driver are"),
            ));
            return;
        }
    };
    if smi.gpus.is_empty() {
        out.push(check(
            "gpus",
            "GPUs visible",
            EnvStatus::Problem,
            "nvidia-smi lists no GPU".into(),
            Some("check that the GPU is attached (lspci | grep -i nvidia) and the driver loaded"),
        ));
        return;
    }
    for g in &smi.gpus {
        let memory = g
            .memory
            .map(|(used, total)| format!(", {used} / {total} MiB in use"))
            .unwrap_or_default();
        let cc = g
            .capability
            .map(|(a, b)| format!(", compute capability {a}.{b}"))
            .unwrap_or_default();
        out.push(check(
            &format!("gpu_{}", g.index),
            &format!("GPU {}", g.index),
            EnvStatus::Ok,
            format!("{}{cc}{memory}", g.name),
            None,
        ));
    }
    memory(facts, smi, out);
    let mig: Vec<&str> = smi
        .gpus
        .iter()
        .filter(|g| g.mig.eq_ignore_ascii_case("Enabled"))
        .map(|g| g.index.as_str())
        .collect();
    out.push(if mig.is_empty() {
        check("mig", "MIG mode", EnvStatus::Ok, "off".into(), None)
    } else {
        check(
            "mig",
            "MIG mode",
            EnvStatus::Warning,
            format!("on for GPU {}: programs and tools see only the MIG instance they are given, and ncu may not read its counters", mig.join(", ")),
            Some("use a GPU without MIG for ncu, or give the run one MIG instance in CUDA_VISIBLE_DEVICES"),
        )
    });
    let off: Vec<&str> = smi
        .gpus
        .iter()
        .filter(|g| g.persistence.eq_ignore_ascii_case("Disabled"))
        .map(|g| g.index.as_str())
        .collect();
    out.push(if off.is_empty() {
        check(
            "persistence",
            "Persistence mode",
            EnvStatus::Ok,
            "on".into(),
            None,
        )
    } else {
        check(
            "persistence",
            "Persistence mode",
            EnvStatus::Warning,
            format!(
                "off for GPU {}: every program (and every stage) pays the driver's start-up again",
                off.join(", ")
            ),
            Some("sudo nvidia-smi -pm 1"),
        )
    });
    out.push(check(
        "driver",
        "Driver",
        EnvStatus::Ok,
        format!(
            "{}, supports CUDA up to {}",
            smi.driver.as_deref().unwrap_or("version unknown"),
            smi.cuda.map_or("?".into(), |(a, b)| format!("{a}.{b}"))
        ),
        None,
    ));
}

/// The process name of MPS's server (CUDA's Multi-Process Service).
const MPS_SERVER: &str = "nvidia-cuda-mps-server";

fn memory(facts: &MachineFacts, smi: &super::Smi, out: &mut Vec<EnvCheck>) {
    if smi.apps.is_empty() {
        let used: u64 = smi.gpus.iter().filter_map(|g| g.memory.map(|m| m.0)).sum();
        out.push(if used > 512 {
            check(
                "gpu_memory",
                "GPU memory held by other processes",
                EnvStatus::Warning,
                format!(
                    "{used} MiB in use by processes this machine cannot list (another container's?)"
                ),
                Some("nvidia-smi on the host shows who"),
            )
        } else {
            check(
                "gpu_memory",
                "GPU memory held by other processes",
                EnvStatus::Ok,
                "none".into(),
                None,
            )
        });
        return;
    }
    for app in &smi.apps {
        let gpu = smi
            .gpus
            .iter()
            .find(|g| g.uuid.as_deref() == Some(app.gpu_uuid.as_str()))
            .map_or(app.gpu_uuid.clone(), |g| format!("GPU {}", g.index));
        let held = app
            .mib
            .map(|m| format!("{m} MiB"))
            .unwrap_or_else(|| "memory".into());
        let state = facts
            .processes
            .iter()
            .find(|(p, _)| *p == app.pid)
            .map_or(ProcessState::NotHere, |(_, s)| *s);
        out.push(match state {
            // Not another program: MPS's own server, whose memory is the
            // clients' shared context (doctor's MPS line says what MPS
            // changes). Killing it would end every client's work.
            _ if state != ProcessState::Zombie && app.name.ends_with(MPS_SERVER) => check(
                "gpu_memory",
                "GPU memory held by other processes",
                EnvStatus::Ok,
                format!("{held} on {gpu} held by pid {} ({}), the MPS server: it runs its clients' work, programs started here included, and holds their shared context", app.pid, app.name),
                None,
            ),
            ProcessState::Zombie => check(
                "gpu_memory",
                "GPU memory held by other processes",
                EnvStatus::Problem,
                format!("{held} on {gpu} held by pid {} ({}), a zombie: it exited but its memory is not freed until its parent reaps it", app.pid, app.name),
                Some("kill or restart its parent process (ps -o ppid= -p PID); if none is left, reset the GPU: nvidia-smi --gpu-reset"),
            ),
            ProcessState::Alive => check(
                "gpu_memory",
                "GPU memory held by other processes",
                EnvStatus::Warning,
                format!("{held} on {gpu} held by pid {} ({}): less memory for the program, and the sanitizers' own overhead", app.pid, app.name),
                Some("stop it if it is a stray earlier run (kill PID)"),
            ),
            ProcessState::NotHere => check(
                "gpu_memory",
                "GPU memory held by other processes",
                EnvStatus::Warning,
                format!("{held} on {gpu} held by pid {} ({}), which this machine cannot see (another container, or gone)", app.pid, app.name),
                Some("look on the host: nvidia-smi; a process gone but still listed needs nvidia-smi --gpu-reset"),
            ),
        });
    }
}

fn driver_cuda(facts: &MachineFacts) -> Option<(u32, u32)> {
    facts.smi.as_ref().ok().and_then(|s| s.cuda)
}

fn toolkit(facts: &MachineFacts, out: &mut Vec<EnvCheck>) {
    let title = "CUDA toolkit (nvcc) against the driver";
    let Some((path, release)) = &facts.nvcc else {
        out.push(check(
            "toolkit",
            title,
            EnvStatus::Skipped,
            "nvcc not found (needed only to build CUDA programs)".into(),
            None,
        ));
        return;
    };
    let Some(release) = release else {
        out.push(check(
            "toolkit",
            title,
            EnvStatus::Warning,
            format!("{} did not say its release", path.display()),
            None,
        ));
        return;
    };
    let shown = format!("nvcc {}.{} ({})", release.0, release.1, path.display());
    out.push(match driver_cuda(facts).map(|d| (d, versions::fit(*release, d))) {
        None => check("toolkit", title, EnvStatus::Ok, shown, None),
        Some((_, Fit::Supported)) => check("toolkit", title, EnvStatus::Ok, format!("{shown}: the driver supports it"), None),
        Some(((a, b), Fit::MinorNewer)) => check("toolkit", title, EnvStatus::Warning, format!("{shown} is newer than the driver's CUDA {a}.{b}: programs run through minor-version compatibility, but not PTX the driver must compile"), Some("update the driver, or build with -arch=sm_XY (no PTX JIT)")),
        Some(((a, b), Fit::TooNew)) => check("toolkit", title, EnvStatus::Problem, format!("{shown} needs a newer driver: this one supports CUDA {a}.{b}; programs fail with cudaErrorInsufficientDriver (35)"), Some("update the NVIDIA driver, or use a toolkit of the driver's CUDA major version")),
    });
}

fn torch(facts: &MachineFacts, out: &mut Vec<EnvCheck>) {
    let title = "PyTorch against the driver and the GPU";
    let torch = match &facts.torch {
        None => return,
        Some(Err(why)) => {
            out.push(check("torch", title, EnvStatus::Skipped, why.clone(), None));
            return;
        }
        Some(Ok(t)) => t,
    };
    let Some(built) = torch.cuda else {
        out.push(check(
            "torch",
            title,
            EnvStatus::Warning,
            format!(
                "PyTorch {} is a CPU-only build: torch.cuda is not available",
                torch.version
            ),
            Some("install a CUDA build: https://pytorch.org/get-started/locally/"),
        ));
        return;
    };
    let shown = format!(
        "PyTorch {} built with CUDA {}.{}",
        torch.version, built.0, built.1
    );
    match driver_cuda(facts).map(|d| (d, versions::fit(built, d))) {
        Some(((a, b), Fit::TooNew)) => out.push(check(
            "torch",
            title,
            EnvStatus::Problem,
            format!("{shown} needs a driver for CUDA {}.x; this one supports {a}.{b}: \"CUDA driver version is insufficient for CUDA runtime version\"", built.0),
            Some("update the NVIDIA driver, or install a PyTorch wheel built for the driver's CUDA (pip install torch --index-url https://download.pytorch.org/whl/cuXY)"),
        )),
        _ if !torch.available => out.push(check(
            "torch",
            title,
            EnvStatus::Problem,
            format!("{shown}, but torch.cuda.is_available() is False"),
            Some("check CUDA_VISIBLE_DEVICES and that this Python sees the driver (cudawatch doctor's first lines)"),
        )),
        Some(((a, b), Fit::MinorNewer)) => out.push(check("torch", title, EnvStatus::Ok, format!("{shown}; the driver's CUDA {a}.{b} runs it through minor-version compatibility"), None)),
        _ => out.push(check("torch", title, EnvStatus::Ok, format!("{shown}; the driver supports it"), None)),
    }
    if let Ok(smi) = &facts.smi {
        for g in &smi.gpus {
            let Some(cc) = g.capability else { continue };
            let arch = format!("sm_{}{}", cc.0, cc.1);
            out.push(if versions::arch_covers(&torch.arch_list, cc) {
                check(&format!("torch_arch_{}", g.index), &format!("PyTorch has kernels for GPU {}", g.index), EnvStatus::Ok, format!("{arch} is covered by {}", torch.arch_list.join(" ")), None)
            } else {
                check(
                    &format!("torch_arch_{}", g.index),
                    &format!("PyTorch has kernels for GPU {}", g.index),
                    EnvStatus::Problem,
                    format!("GPU {} is {arch}, but PyTorch {} was built for {}: \"no kernel image is available for execution on the device\"", g.index, torch.version, torch.arch_list.join(" ")),
                    Some("install a PyTorch build that includes this architecture (older GPUs need older wheels), or build from source with TORCH_CUDA_ARCH_LIST"),
                )
            });
        }
    }
}

fn tools(facts: &MachineFacts, out: &mut Vec<EnvCheck>) {
    for (id, name, tool, fix) in [
        (
            "tool_compute_sanitizer",
            "compute-sanitizer",
            &facts.sanitizer,
            "install the CUDA toolkit, or give its path: --compute-sanitizer PATH (CUDAWATCH_COMPUTE_SANITIZER)",
        ),
        (
            "tool_ncu",
            "ncu",
            &facts.ncu,
            "install Nsight Compute (it comes with the CUDA toolkit), or give its path: --ncu PATH (CUDAWATCH_NCU)",
        ),
    ] {
        match tool {
            Err(why) => {
                let mut c = check(
                    id,
                    &format!("{name} found"),
                    EnvStatus::Problem,
                    why.clone(),
                    Some(fix),
                );
                c.breaks = if name == "ncu" {
                    vec![cudawatch_model::Tool::Ncu]
                } else {
                    cudawatch_model::Tool::SANITIZERS.to_vec()
                };
                out.push(c);
            }
            Ok((path, version)) => {
                let v = version.as_deref().unwrap_or("version unknown");
                out.push(check(
                    id,
                    &format!("{name} found"),
                    EnvStatus::Ok,
                    format!("{name} {v} ({})", path.display()),
                    None,
                ));
                // Newer than any release known to work with this driver's
                // CUDA: said until a probe settles it.
                if facts.probes.is_empty()
                    && let (Some(version), Some(driver)) = (version, driver_cuda(facts))
                    && newer_release(version, NEWEST_KNOWN_TOOL.0)
                    && driver <= NEWEST_KNOWN_TOOL.1
                {
                    out.push(check(
                        &format!("tool_version_{}", name.replace('-', "_")),
                        &format!("{name} against the driver"),
                        EnvStatus::Warning,
                        format!("{name} {version} is newer than any release known to work with a driver for CUDA {}.{} ({name} 2026.3 on driver 580 exits 255 before instrumenting)", driver.0, driver.1),
                        Some("cudawatch doctor (without --quick) runs it on a probe and says for sure"),
                    ));
                }
            }
        }
    }
}

/// Whether racecheck, synccheck and initcheck leave library kernels out
/// (compute-sanitizer 2026.4 or newer: the toolkit's, or one pip installed
/// in the Python doctor asked), which a PyTorch training step needs to be
/// checked in seconds.
fn library_filter_sanitizer(facts: &MachineFacts, out: &mut Vec<EnvCheck>) {
    let (Some(found), Ok((_, Some(toolkit)))) = (&facts.pypi_sanitizer, &facts.sanitizer) else {
        return;
    };
    let title = "racecheck, synccheck and initcheck leave library kernels out";
    let since = crate::tools::sanitizer::LIBRARY_FILTER_SINCE;
    if crate::tools::lookup::release(toolkit).is_some_and(|r| r >= since) {
        out.push(check(
            "racecheck_sanitizer",
            title,
            EnvStatus::Ok,
            format!(
                "compute-sanitizer {toolkit} leaves cuDNN's and cuBLAS's kernels out of racecheck, \
                 synccheck and initcheck"
            ),
            None,
        ));
    } else if let Some((path, version)) = found {
        out.push(check(
            "racecheck_sanitizer",
            title,
            EnvStatus::Ok,
            format!(
                "racecheck, synccheck and initcheck run under compute-sanitizer {version} from PyPI ({}), \
                 which leaves cuDNN's and cuBLAS's kernels out; the other stages under {toolkit}",
                path.display()
            ),
            None,
        ));
    } else if matches!(facts.torch, Some(Ok(_))) {
        out.push(check(
            "racecheck_sanitizer",
            title,
            EnvStatus::Warning,
            format!(
                "compute-sanitizer {toolkit} analyses cuDNN's and cuBLAS's kernels in racecheck, \
                 synccheck and initcheck (what they find there never gates): minutes a training \
                 step (ResNet-18's racecheck: 117 s, against 16 s under 2026.4, on an H200)"
            ),
            Some("pip install nvidia-cuda-sanitizer-api, in the Python your program runs under: racecheck, synccheck and initcheck then take it"),
        ));
    }
}

/// The id of the check that says whether GPU core dumps can be read.
pub const DUMP_READER: &str = "tool_cuda_gdb";

/// Whether GPU core dumps can be read here: the coredump stage reads each
/// dump with cuda-gdb; without one it has only the driver's progress lines
/// (the exception and the kernel's mangled name, no line).
fn dump_reader(facts: &MachineFacts, out: &mut Vec<EnvCheck>) {
    out.push(match &facts.cuda_gdb {
        Some((path, version)) => check(
            DUMP_READER,
            "GPU core dumps can be read",
            EnvStatus::Ok,
            format!(
                "cuda-gdb {} ({}) reads the coredump stage's dumps",
                version.as_deref().unwrap_or("version unknown"),
                path.display()
            ),
            None,
        ),
        None => check(
            DUMP_READER,
            "GPU core dumps can be read",
            EnvStatus::Warning,
            "no cuda-gdb-minimal or cuda-gdb on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin: \
             the coredump stage names the faulting kernel without its line"
                .into(),
            Some("install the CUDA toolkit's cuda-gdb (it brings cuda-gdb-minimal)"),
        ),
    });
}

/// The id of the check that says whether the global-race stage has its tool.
pub const GLOBAL_RACE_TOOL: &str = "global_race_tool";

/// Whether the global-race stage (`--stages ...,global-race`) has its
/// tool: built, or buildable on the stage's first use.
fn global_race_tool(facts: &MachineFacts, out: &mut Vec<EnvCheck>) {
    use super::global_race_tool::Located;
    let title = "global-race stage";
    out.push(match &facts.global_race {
        Located::Built(library) => check(
            GLOBAL_RACE_TOOL,
            title,
            EnvStatus::Ok,
            format!("its tool is built: {}", library.display()),
            None,
        ),
        Located::Buildable(recipe) => check(
            GLOBAL_RACE_TOOL,
            title,
            EnvStatus::Ok,
            format!(
                "its tool is built on the stage's first use, from cudawatch's own sources, with \
                 {} and the Sanitizer API in {} (seconds, once; kept in {})",
                recipe.nvcc.display(),
                recipe.api.display(),
                recipe.dir.display()
            ),
            None,
        ),
        Located::Unavailable { what, fix } => check(
            GLOBAL_RACE_TOOL,
            title,
            EnvStatus::Warning,
            what.clone(),
            Some(fix),
        ),
    });
}

/// `2026.1.0.0` newer than `2025.3`, by year and release.
fn newer_release(version: &str, than: &str) -> bool {
    use crate::tools::lookup::release;
    matches!((release(version), release(than)), (Some(a), Some(b)) if a > b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::{
        Smi,
        smi::{App, Gpu},
        versions::Torch,
    };
    use std::path::PathBuf;

    fn h100() -> MachineFacts {
        MachineFacts {
            smi: Ok(Smi {
                driver: Some("580.159.04".into()),
                cuda: Some((13, 0)),
                gpus: vec![Gpu {
                    index: "0".into(),
                    name: "NVIDIA H100 80GB HBM3".into(),
                    capability: Some((9, 0)),
                    memory: Some((0, 81559)),
                    mig: "Disabled".into(),
                    persistence: "Enabled".into(),
                    uuid: Some("GPU-b0".into()),
                }],
                apps: Vec::new(),
            }),
            nvcc: Some((PathBuf::from("/usr/local/cuda/bin/nvcc"), Some((13, 0)))),
            sanitizer: Ok((
                PathBuf::from("/usr/local/cuda/bin/compute-sanitizer"),
                Some("2025.3.1.0".into()),
            )),
            ncu: Ok((
                PathBuf::from("/usr/local/cuda/bin/ncu"),
                Some("2025.3.1.0".into()),
            )),
            cuda_gdb: Some((
                PathBuf::from("/usr/local/cuda/bin/cuda-gdb-minimal"),
                Some("13.0".into()),
            )),
            global_race: crate::doctor::global_race_tool::Located::Built(PathBuf::from(
                "/opt/cudawatch/global-race/libglobal-race.so",
            )),
            torch: Some(Ok(Torch {
                version: "2.11.0+cu130".into(),
                cuda: Some((13, 0)),
                arch_list: vec!["sm_80".into(), "sm_90".into()],
                available: true,
            })),
            pypi_sanitizer: Some(None),
            probes: Vec::new(),
            env: Vec::new(),
            processes: Vec::new(),
            mps_pipe: None,
        }
    }

    #[test]
    fn a_pytorch_machine_is_told_how_racecheck_gets_fast() {
        // 2025.3.1 alone, PyTorch present: a warning with the pip command.
        let checks = judge(&h100());
        assert_eq!(status(&checks, "racecheck_sanitizer"), EnvStatus::Warning);
        let fix = checks
            .iter()
            .find(|c| c.id == "racecheck_sanitizer")
            .unwrap()
            .fix
            .clone();
        assert!(
            fix.unwrap()
                .starts_with("pip install nvidia-cuda-sanitizer-api")
        );
        // PyPI's 2026.4 found in that Python: fine, and says where.
        let mut facts = h100();
        facts.pypi_sanitizer = Some(Some((
            PathBuf::from(
                "/venv/lib/python3.12/site-packages/nvidia/cu13/compute-sanitizer/compute-sanitizer",
            ),
            "2026.4.0.0".into(),
        )));
        let checks = judge(&facts);
        assert_eq!(status(&checks, "racecheck_sanitizer"), EnvStatus::Ok);
        // A toolkit of 2026.4: fine on its own.
        let mut facts = h100();
        facts.sanitizer = Ok((PathBuf::from("/cs"), Some("2026.4.0.0".into())));
        assert_eq!(status(&judge(&facts), "racecheck_sanitizer"), EnvStatus::Ok);
        // Not asked (doctor --quick, a run's quick look): nothing said.
        let mut facts = h100();
        facts.pypi_sanitizer = None;
        assert!(judge(&facts).iter().all(|c| c.id != "racecheck_sanitizer"));
    }

    fn status(checks: &[EnvCheck], id: &str) -> EnvStatus {
        checks
            .iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("{id} in {checks:?}"))
            .status
    }

    #[test]
    fn the_h100_as_captured_has_no_problem() {
        // All fine but the hint that racecheck would be faster under a
        // newer compute-sanitizer (a_pytorch_machine_is_told_...).
        let checks = judge(&h100());
        assert!(
            checks
                .iter()
                .all(|c| c.status == EnvStatus::Ok || c.id == "racecheck_sanitizer"),
            "{checks:#?}"
        );
    }

    #[test]
    fn a_driver_older_than_pytorch_and_the_toolkit_is_a_problem_with_the_fix() {
        let mut f = h100();
        if let Ok(s) = &mut f.smi {
            s.cuda = Some((12, 4));
        }
        let checks = judge(&f);
        assert_eq!(status(&checks, "torch"), EnvStatus::Problem);
        assert_eq!(status(&checks, "toolkit"), EnvStatus::Problem);
        let torch = checks.iter().find(|c| c.id == "torch").unwrap();
        assert!(
            torch.detail.contains("insufficient")
                && torch
                    .fix
                    .as_deref()
                    .unwrap()
                    .contains("update the NVIDIA driver")
        );
    }

    #[test]
    fn a_gpu_pytorch_has_no_kernels_for_is_the_cause_of_no_kernel_image() {
        let mut f = h100();
        if let Ok(s) = &mut f.smi {
            s.gpus[0].capability = Some((6, 1));
        }
        let c = judge(&f)
            .into_iter()
            .find(|c| c.id == "torch_arch_0")
            .unwrap();
        assert_eq!(c.status, EnvStatus::Problem);
        assert!(c.detail.contains("sm_61") && c.detail.contains("no kernel image"));
    }

    #[test]
    fn memory_held_by_a_zombie_mig_and_persistence_are_said() {
        let mut f = h100();
        if let Ok(s) = &mut f.smi {
            s.apps = vec![App {
                gpu_uuid: "GPU-b0".into(),
                pid: 4242,
                name: "python3".into(),
                mib: Some(30000),
            }];
            s.gpus[0].mig = "Enabled".into();
            s.gpus[0].persistence = "Disabled".into();
        }
        f.processes = vec![(4242, ProcessState::Zombie)];
        let checks = judge(&f);
        let memory = checks.iter().find(|c| c.id == "gpu_memory").unwrap();
        assert_eq!(memory.status, EnvStatus::Problem);
        assert!(
            memory
                .detail
                .contains("30000 MiB on GPU 0 held by pid 4242 (python3), a zombie"),
            "{}",
            memory.detail
        );
        assert_eq!(status(&checks, "mig"), EnvStatus::Warning);
        assert_eq!(status(&checks, "persistence"), EnvStatus::Warning);
    }

    #[test]
    fn no_gpu_is_said_clearly_and_what_still_works() {
        let mut f = h100();
        f.smi = Err("nvidia-smi is not on PATH: no NVIDIA driver here".into());
        let c = &judge(&f)[0];
        assert_eq!(c.status, EnvStatus::Problem);
        assert!(
            c.detail.starts_with("no GPU: nvidia-smi is not on PATH")
                && c.detail.contains("cudawatch parse")
        );
    }

    #[test]
    fn a_sanitizer_newer_than_known_is_a_warning_until_probed() {
        let mut f = h100();
        f.sanitizer = Ok((
            PathBuf::from("/opt/cuda-13.2/bin/compute-sanitizer"),
            Some("2026.3.0.0".into()),
        ));
        assert_eq!(
            status(&judge(&f), "tool_version_compute_sanitizer"),
            EnvStatus::Warning
        );
        f.probes = vec![check(
            "probe_sanitizer",
            "x",
            EnvStatus::Problem,
            "exits 255".into(),
            None,
        )];
        assert!(
            judge(&f)
                .iter()
                .all(|c| c.id != "tool_version_compute_sanitizer")
        );
        let mut missing = h100();
        missing.ncu = Err("ncu not found on PATH".into());
        let c = judge(&missing)
            .into_iter()
            .find(|c| c.id == "tool_ncu")
            .unwrap();
        assert_eq!(c.breaks, vec![cudawatch_model::Tool::Ncu]);
    }
}
