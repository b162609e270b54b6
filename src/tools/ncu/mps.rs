//! ncu on a GPU shared through MPS (CUDA's Multi-Process Service). ncu
//! does not profile an MPS client: it prints "Profiling is not supported
//! with Multi-Process Server (MPS) enabled on device 0", lets the program
//! run to its end unprofiled and exits 1 (`sample-reports/beyond/mps/`);
//! its own `--mps` modes coordinate every client of the server, which a
//! check of one program cannot ask of the others. compute-sanitizer has no
//! such limit: its tools ran as MPS clients with the same findings.
//!
//! A process becomes an MPS client when the CUDA driver finds the control
//! daemon's pipe in `CUDA_MPS_PIPE_DIRECTORY` (default `/tmp/nvidia-mps`);
//! otherwise it runs as a context of its own, beside the MPS server, on a
//! GPU in the default compute mode. So when that pipe is there, the ncu
//! stage names a folder with no daemon in it: its program runs outside
//! MPS and is profiled. A GPU in exclusive-process mode admits the MPS
//! server alone, and then the stage says that ncu cannot profile there.

use std::path::{Path, PathBuf};

use crate::tools::StageRecord;

/// Where the CUDA driver looks for the MPS control daemon.
const PIPE_VARIABLE: &str = "CUDA_MPS_PIPE_DIRECTORY";
/// ... when the variable is not set.
const DEFAULT_PIPE: &str = "/tmp/nvidia-mps";
/// The folder in the ncu stage's own that stands in for the pipe folder:
/// never created, so no daemon can answer there.
const OUTSIDE: &str = "outside-mps";

/// The MPS control daemon's pipe folder that programs started from this
/// environment would connect to, when a daemon has made it (its `control`
/// pipe is there).
pub fn control_pipe(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let dir = var(PIPE_VARIABLE)
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_PIPE), PathBuf::from);
    dir.join("control").exists().then_some(dir)
}

/// The variable that keeps the ncu stage's program outside MPS.
pub fn outside(stage_dir: &Path) -> (String, String) {
    (
        PIPE_VARIABLE.to_string(),
        stage_dir.join(OUTSIDE).display().to_string(),
    )
}

/// Whether the stage's program was kept outside MPS.
pub fn ran_outside(record: &StageRecord) -> bool {
    record.env.iter().any(|e| {
        e.strip_prefix(PIPE_VARIABLE)
            .and_then(|rest| rest.strip_prefix('='))
            .is_some_and(|dir| Path::new(dir).ends_with(OUTSIDE))
    })
}

/// What the stage's reason adds when its program ran outside MPS:
/// `checked` when ncu then profiled it.
pub fn reason(checked: bool) -> &'static str {
    if checked {
        "; its program ran outside MPS, which shares this GPU (ncu cannot profile an MPS client)"
    } else {
        "; its program ran outside MPS, which shares this GPU (ncu cannot profile an MPS \
         client): where the GPU admits MPS clients only (exclusive-process mode), ncu \
         cannot profile here; profile on a GPU without MPS, or leave ncu out (--stages)"
    }
}

/// The hint after ncu's own refusal, for a client the stage did not keep
/// outside MPS (a pipe folder cudawatch did not see).
pub const REFUSED: &str = ": the program ran as a client of MPS, which ncu profiles only when it \
     coordinates every client itself; set CUDA_MPS_PIPE_DIRECTORY to the MPS daemon's pipe \
     folder so that cudawatch runs ncu's program outside MPS, or leave ncu out (--stages)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemons_pipe_is_found_where_the_driver_would_look() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().display().to_string();
        let var = |value: &str| {
            let value = value.to_string();
            move |k: &str| (k == PIPE_VARIABLE).then(|| value.clone())
        };
        // No daemon there yet: no control pipe.
        assert_eq!(control_pipe(var(&pipe)), None);
        std::fs::write(dir.path().join("control"), "").unwrap();
        assert_eq!(control_pipe(var(&pipe)), Some(dir.path().to_path_buf()));
    }

    #[test]
    fn only_the_stages_own_stand_in_counts_as_outside() {
        let mut record = StageRecord::unfinished(cudawatch_model::Tool::Ncu);
        record.env = vec!["CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps".into()];
        assert!(!ran_outside(&record));
        let (k, v) = outside(Path::new("/runs/r/ncu"));
        record.env = vec![format!("{k}={v}")];
        assert!(ran_outside(&record));
    }
}
