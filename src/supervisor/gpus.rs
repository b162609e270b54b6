//! Which GPUs this machine lets cudawatch use, for spreading targets and
//! stages over them. One grammar for `run --gpus` and `sweep --gpus`:
//! `all` (the default) is `CUDA_VISIBLE_DEVICES` when set (a Slurm job or a
//! CI runner sets it to the GPUs it was given), else the GPUs nvidia-smi
//! lists; `none` pins nothing; anything else is a list (`0,1`, UUIDs).
//! No GPU (a CI machine with the fake tools) gives an empty list: one
//! thing at a time, with no GPU pinned.

use std::time::Duration;

/// nvidia-smi answers a GPU list in well under a second; one that has not
/// answered in this long is hung (a GPU in a bad state).
pub const NVIDIA_SMI_LIMIT: Duration = Duration::from_secs(10);

/// The GPUs chosen, and what went wrong finding them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choice {
    /// `CUDA_VISIBLE_DEVICES` entries.
    pub gpus: Vec<String>,
    /// One line when the list could not be had (nvidia-smi hung or failed):
    /// the work goes on one at a time, unpinned.
    pub warning: Option<String>,
}

/// The GPUs `spec` (`all`, `none`, a list; `None` = `all`) names.
pub fn choose(spec: Option<&str>) -> Choice {
    match spec.map(str::trim) {
        None | Some("all") => visible(),
        Some("none") => Choice::default(),
        Some(list) => Choice {
            gpus: parse_list(list),
            warning: None,
        },
    }
}

/// Every GPU this process may use.
pub fn visible() -> Choice {
    if let Some(list) = std::env::var_os("CUDA_VISIBLE_DEVICES") {
        return Choice {
            gpus: parse_list(&list.to_string_lossy()),
            warning: None,
        };
    }
    listed_by_driver()
}

/// `0,1`, `GPU-3f2a...`, `MIG-...`: the non-empty entries, in order. A
/// `-1` (CUDA's "no device") hides every entry after it.
pub fn parse_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .take_while(|e| *e != "-1")
        .filter(|e| !e.is_empty())
        .map(String::from)
        .collect()
}

fn listed_by_driver() -> Choice {
    // No driver, no GPU: not a problem worth a line.
    let Some(smi) = crate::executables::on_path("nvidia-smi") else {
        return Choice::default();
    };
    let Some(ran) = super::bounded::capture(
        &smi,
        &["--query-gpu=index", "--format=csv,noheader"],
        &[],
        super::bounded::limit(NVIDIA_SMI_LIMIT),
    ) else {
        return Choice::default();
    };
    if ran.timed_out {
        return Choice {
            gpus: Vec::new(),
            warning: Some(format!(
                "nvidia-smi did not answer within {} s and was stopped: no GPU list, so nothing is \
                 spread over GPUs (name them with --gpus 0,1 or CUDA_VISIBLE_DEVICES)",
                super::bounded::limit(NVIDIA_SMI_LIMIT).as_secs_f64()
            )),
        };
    }
    if !ran.succeeded() {
        return Choice::default();
    }
    Choice {
        gpus: ran
            .stdout
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
            .map(String::from)
            .collect(),
        warning: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_devices_lists_are_read_as_cuda_reads_them() {
        assert_eq!(parse_list("0,1"), ["0", "1"]);
        assert_eq!(parse_list(" 2 , 3 ,"), ["2", "3"]);
        assert_eq!(parse_list("1,-1,2"), ["1"]);
        assert!(parse_list("").is_empty());
    }

    #[test]
    fn one_grammar_for_every_command() {
        assert_eq!(choose(Some("none")), Choice::default());
        assert_eq!(choose(Some("0, 2")).gpus, ["0", "2"]);
    }
}
