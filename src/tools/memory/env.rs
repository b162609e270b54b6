//! The memory stage's environment beyond the hook's (`hook::stage_command`):
//! the oom-recovery stage's cap, and the rerun with expandable segments.

use std::path::Path;

use super::expandable_dir;

/// The oom-recovery stage's cap: the hook reads the peak the memory stage
/// measured (its `hook.json`) and caps the program to `share` of it.
pub fn cap_env(run_dir: &Path, share: f64) -> Vec<(String, String)> {
    vec![
        (
            "CUDAWATCH_CAP_FROM".into(),
            run_dir
                .join("memory")
                .join("hook.json")
                .display()
                .to_string(),
        ),
        ("CUDAWATCH_CAP_SHARE".into(), share.to_string()),
    ]
}

/// The stage's environment changed for the rerun: expandable segments on
/// (added to the user's own allocator settings), the hook writing into
/// `expandable/`.
pub fn expandable_env(stage_env: &[(String, String)], stage_dir: &Path) -> Vec<(String, String)> {
    let user = stage_env
        .iter()
        .find(|(k, _)| k == "PYTORCH_CUDA_ALLOC_CONF")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PYTORCH_CUDA_ALLOC_CONF").ok())
        .filter(|v| !v.is_empty());
    let conf = match user {
        Some(old) => format!("{old},expandable_segments:True"),
        None => "expandable_segments:True".into(),
    };
    let mut env = crate::tools::hook::writing_to(stage_env, &expandable_dir(stage_dir));
    env.retain(|(k, _)| k != "PYTORCH_CUDA_ALLOC_CONF");
    env.push(("PYTORCH_CUDA_ALLOC_CONF".into(), conf));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rerun_adds_expandable_segments_to_the_users_settings() {
        let mut stage = crate::tools::hook::env(Path::new("/r"), Path::new("/r/memory"), None);
        stage.push((
            "PYTORCH_CUDA_ALLOC_CONF".into(),
            "max_split_size_mb:128".into(),
        ));
        let env = expandable_env(&stage, Path::new("/r/memory"));
        assert!(env.contains(&(
            "PYTORCH_CUDA_ALLOC_CONF".into(),
            "max_split_size_mb:128,expandable_segments:True".into()
        )));
        assert!(env.contains(&("CUDAWATCH_HOOK_OUT".into(), "/r/memory/expandable".into())));
    }
}
