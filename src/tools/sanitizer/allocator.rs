//! PyTorch's caching allocator turned off under the sanitizers: it hands
//! out pieces of large blocks, so an out-of-bounds access inside a block is
//! invisible to memcheck.

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

/// The variable that turns the allocator off.
pub const OFF: &str = "PYTORCH_NO_CUDA_MEMORY_CACHING";

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
