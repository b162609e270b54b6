//! Which GPUs this machine lets cudawatch use, for spreading targets and
//! stages over them. `CUDA_VISIBLE_DEVICES` wins (a Slurm job or a CI
//! runner sets it to the GPUs it was given); else the GPUs the driver
//! lists. No GPU (a CI machine with the fake tools) gives an empty list:
//! one thing at a time, with no GPU pinned.

use std::process::{Command, Stdio};

/// The GPUs to use, as `CUDA_VISIBLE_DEVICES` entries.
pub fn visible() -> Vec<String> {
    if let Some(list) = std::env::var_os("CUDA_VISIBLE_DEVICES") {
        return parse_list(&list.to_string_lossy());
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

fn listed_by_driver() -> Vec<String> {
    let Ok(output) = Command::new("nvidia-smi")
        .args(["--query-gpu=index", "--format=csv,noheader"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    if !output.status.success() {
        return Vec::new();
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
        .map(String::from)
        .collect()
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
}
