//! Settings in the environment that change what the tools see. Pure:
//! takes a lookup, so tests give it any environment.

use cudawatch_model::{EnvCheck, EnvStatus};

use super::check;

/// One check per variable that is set (and one that says none is).
pub fn checks(var: impl Fn(&str) -> Option<String>) -> Vec<EnvCheck> {
    let mut out = Vec::new();
    if let Some(conf) = var("PYTORCH_CUDA_ALLOC_CONF") {
        let expandable = conf
            .replace(' ', "")
            .to_ascii_lowercase()
            .contains("expandable_segments:true");
        out.push(if expandable {
            check(
                "env_alloc_conf",
                "PYTORCH_CUDA_ALLOC_CONF",
                EnvStatus::Warning,
                format!("PYTORCH_CUDA_ALLOC_CONF={conf}: expandable segments make memcheck report false out-of-bounds writes across segment boundaries (pytorch/pytorch#196209)"),
                Some("unset it for cudawatch runs, or drop expandable_segments:True from it"),
            )
        } else {
            check("env_alloc_conf", "PYTORCH_CUDA_ALLOC_CONF", EnvStatus::Ok, format!("PYTORCH_CUDA_ALLOC_CONF={conf}"), None)
        });
    }
    if let Some(v) = var("PYTORCH_NO_CUDA_MEMORY_CACHING") {
        out.push(check(
            "env_no_caching",
            "PYTORCH_NO_CUDA_MEMORY_CACHING",
            EnvStatus::Warning,
            format!("PYTORCH_NO_CUDA_MEMORY_CACHING={v} for every program: cudawatch already sets it for the sanitizer stages, and set globally it slows the plain run and ncu's measurements"),
            Some("unset it; cudawatch turns the caching allocator off where it hides bugs"),
        ));
    }
    if let Some(v) = var("CUDA_LAUNCH_BLOCKING").filter(|v| v.trim() == "1") {
        out.push(check(
            "env_launch_blocking",
            "CUDA_LAUNCH_BLOCKING",
            EnvStatus::Warning,
            format!("CUDA_LAUNCH_BLOCKING={v} for every program: cudawatch sets it for the plain run; set globally it serialises every launch under the sanitizers and ncu too"),
            Some("unset it"),
        ));
    }
    if let Some(v) = var("CUDA_VISIBLE_DEVICES") {
        let hidden = crate::supervisor::gpus::parse_list(&v).is_empty();
        out.push(if hidden {
            check(
                "env_visible_devices",
                "CUDA_VISIBLE_DEVICES",
                EnvStatus::Problem,
                format!("CUDA_VISIBLE_DEVICES={v:?} hides every GPU: programs see no CUDA device"),
                Some("unset it, or name the GPUs to use, e.g. CUDA_VISIBLE_DEVICES=0"),
            )
        } else {
            check(
                "env_visible_devices",
                "CUDA_VISIBLE_DEVICES",
                EnvStatus::Ok,
                format!("CUDA_VISIBLE_DEVICES={v}: programs see only these GPUs"),
                None,
            )
        });
    }
    if let Some(v) = var("CUDA_MODULE_LOADING") {
        let eager = v.trim().eq_ignore_ascii_case("EAGER");
        out.push(check(
            "env_module_loading",
            "CUDA_MODULE_LOADING",
            if eager { EnvStatus::Warning } else { EnvStatus::Ok },
            if eager {
                format!("CUDA_MODULE_LOADING={v}: every kernel of every library is loaded at start, which costs seconds and memory under each tool")
            } else {
                format!("CUDA_MODULE_LOADING={v}")
            },
            eager.then_some("unset it (lazy loading is the default since CUDA 12.2)"),
        ));
    }
    if let Some(v) = var(INDIRECT_BARRIERS).filter(|v| v.trim() == "0") {
        // NVIDIA's manual offers it for speed; measured, it bought none and
        // made a correct kernel racy (sample-reports/beyond/indirect_barriers/).
        out.push(check(
            "env_racecheck_indirect",
            INDIRECT_BARRIERS,
            EnvStatus::Warning,
            format!("{INDIRECT_BARRIERS}={v}: racecheck then reports races between accesses that cuda::barrier waits order through another thread, in correct kernels"),
            Some("unset it; it did not make racecheck faster on the programs measured (docs/tool-surprises.md)"),
        ));
    }
    if out.is_empty() {
        out.push(check(
            "env",
            "Settings that change what the tools see",
            EnvStatus::Ok,
            "none of PYTORCH_CUDA_ALLOC_CONF, PYTORCH_NO_CUDA_MEMORY_CACHING, CUDA_LAUNCH_BLOCKING, CUDA_VISIBLE_DEVICES, CUDA_MODULE_LOADING, NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING=0 is set".into(),
            None,
        ));
    }
    out
}

/// racecheck's switch for its tracking of orderings made through another
/// barrier (on by default since compute-sanitizer 2024.4).
const INDIRECT_BARRIERS: &str = "NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING";

/// A GPU shared through MPS (its control daemon's pipe folder is where the
/// CUDA driver looks): what that changes for the stages.
pub fn mps(pipe: Option<&std::path::Path>) -> Option<EnvCheck> {
    pipe.map(|dir| {
        check(
            "mps",
            "MPS (Multi-Process Service)",
            EnvStatus::Ok,
            format!(
                "a control daemon at {}: programs run as MPS clients, the sanitizers too; ncu \
                 cannot profile an MPS client, so the ncu stage runs its program outside MPS \
                 (refused where the GPU admits MPS clients only)",
                dir.display()
            ),
            None,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pairs: &[(&str, &str)]) -> Vec<EnvCheck> {
        checks(|k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn expandable_segments_and_hidden_gpus_are_flagged() {
        let c = run(&[(
            "PYTORCH_CUDA_ALLOC_CONF",
            "max_split_size_mb:128,expandable_segments:True",
        )]);
        assert_eq!(c[0].status, EnvStatus::Warning);
        assert!(c[0].detail.contains("false out-of-bounds"));
        assert_eq!(
            run(&[("CUDA_VISIBLE_DEVICES", "")])[0].status,
            EnvStatus::Problem
        );
        assert_eq!(
            run(&[("CUDA_VISIBLE_DEVICES", "-1")])[0].status,
            EnvStatus::Problem
        );
        assert_eq!(
            run(&[("CUDA_VISIBLE_DEVICES", "1")])[0].status,
            EnvStatus::Ok
        );
        assert_eq!(
            run(&[("CUDA_MODULE_LOADING", "EAGER")])[0].status,
            EnvStatus::Warning
        );
        assert_eq!(
            run(&[("CUDA_LAUNCH_BLOCKING", "1")])[0].status,
            EnvStatus::Warning
        );
        assert_eq!(run(&[]).len(), 1);
    }

    #[test]
    fn racecheck_without_indirect_barrier_tracking_is_flagged() {
        let c = run(&[(INDIRECT_BARRIERS, "0")]);
        assert_eq!(c[0].status, EnvStatus::Warning);
        assert!(c[0].detail.contains("correct kernels"));
        // on, as by default: nothing to say about it
        assert_eq!(run(&[(INDIRECT_BARRIERS, "1")])[0].id, "env");
    }
}
