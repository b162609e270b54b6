//! PyTorch's caching allocator turned off under the sanitizers: it hands
//! out pieces of large blocks, so an out-of-bounds access inside a block is
//! invisible to memcheck.

use std::path::Path;

use cudawatch_model::{ProcessEnd, Tool};

/// The variables to set and remove so that PyTorch allocates each tensor
/// with its own cudaMalloc, given the user's `PYTORCH_CUDA_ALLOC_CONF`.
/// Expandable segments cause false out-of-bounds reports (pytorch#196209),
/// so only that option is dropped from the user's configuration.
pub fn allocator_off(alloc_conf: Option<String>) -> (Vec<(String, String)>, Vec<String>) {
    let mut set = vec![(OFF.to_string(), "1".to_string())];
    let mut remove = Vec::new();
    if let Some(conf) = alloc_conf.filter(|c| c.contains("expandable_segments")) {
        let kept: Vec<&str> = conf
            .split(',')
            .filter(|o| !o.trim().starts_with("expandable_segments"))
            .collect();
        if kept.is_empty() {
            remove.push("PYTORCH_CUDA_ALLOC_CONF".to_string());
        } else {
            set.push(("PYTORCH_CUDA_ALLOC_CONF".to_string(), kept.join(",")));
        }
    }
    (set, remove)
}

/// What PyTorch prints when Inductor's CUDA graphs (`torch.compile(mode=
/// "reduce-overhead")`) run without the caching allocator, whose private
/// pools they record into: "These storage data ptrs are not allocated in
/// pool (0, 1) but should be", from `cudagraph_trees.py` (H100, torch 2.11,
/// `sample-reports/beyond/many_processes/`: the same program with
/// `PYTORCH_NO_CUDA_MEMORY_CACHING=1` and no sanitizer fails alike).
const GRAPHS_NEED_IT: [&str; 2] = ["not allocated in pool", "in the cudagraph pool"];

/// The variable that turns the allocator off.
pub const OFF: &str = "PYTORCH_NO_CUDA_MEMORY_CACHING";

/// What the program printed when it failed because the stage turned the
/// allocator off under its CUDA graphs, if it did: such a stage is run
/// again with the allocator on (`supervisor::stage`).
pub fn graphs_failed_without_it(
    tool: Tool,
    env: &[(String, String)],
    end: ProcessEnd,
    stage_dir: &Path,
) -> Option<&'static str> {
    let off = env.iter().any(|(k, v)| k == OFF && v == "1");
    let failed = matches!(end, ProcessEnd::Exited(code) if code != 0);
    if !Tool::SANITIZERS.contains(&tool) || !off || !failed {
        return None;
    }
    crate::tools::starved::printed(stage_dir, &GRAPHS_NEED_IT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_expandable_segments_is_dropped_from_the_allocator_config() {
        let (set, remove) =
            allocator_off(Some("expandable_segments:True,max_split_size_mb:64".into()));
        assert!(remove.is_empty());
        assert!(set.contains(&(
            "PYTORCH_CUDA_ALLOC_CONF".into(),
            "max_split_size_mb:64".into()
        )));
        let (_, remove) = allocator_off(Some("expandable_segments:True".into()));
        assert_eq!(remove, ["PYTORCH_CUDA_ALLOC_CONF"]);
    }
}
