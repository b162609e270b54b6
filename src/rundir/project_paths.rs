//! The report names the user's files from the project's root
//! (`./tests/gpu/oob_write.cu`), not from the machine's: a report made on a
//! CI runner or a GPU host and read on a laptop, committed as an example
//! or compared in a sweep, says where in the project a finding is without
//! carrying the host's folders. Files outside the root (the framework's,
//! CUDA's, a temporary file) keep their absolute paths.
//!
//! The leading `./` says "relative to the project": a bare `conv.py` is a
//! base name from a tool's text output, which proves nothing about whose
//! file it is (`judge::owner`), while `./train.py` is the user's.

use std::path::Path;

use cudawatch_model::Report;

/// Rewrites every path under `root` (as given or with its links resolved)
/// to `./` and the path below it. A root that is `/` or the home directory
/// holds more than a project (the snippets refuse it too): paths stay whole.
pub fn relative_to_root(report: &mut Report, root: &Path) {
    if super::snippets::refused_root(root).is_some() {
        return;
    }
    let Ok(real_root) = root.canonicalize() else {
        return;
    };
    let given_root = std::path::absolute(root).unwrap_or_else(|_| real_root.clone());
    report.for_each_path_mut(|path| {
        if let Some(rel) = below(&[&given_root, &real_root], path) {
            *path = rel;
        }
    });
}

/// `./rel` when `path` is absolute and lies strictly under one of `roots`.
fn below(roots: &[&Path], path: &str) -> Option<String> {
    let named = Path::new(path);
    if !named.is_absolute() {
        return None;
    }
    let rel = roots.iter().find_map(|r| named.strip_prefix(r).ok())?;
    let rel = rel.to_str()?;
    (!rel.is_empty()).then(|| format!("./{rel}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_strictly_under_the_root_become_relative() {
        let root = Path::new("/home/me/proj");
        let at = |p: &str| below(&[root], p);
        assert_eq!(
            at("/home/me/proj/tests/oob.cu").as_deref(),
            Some("./tests/oob.cu")
        );
        assert_eq!(at("/home/me/proj"), None, "the root itself is no file");
        assert_eq!(
            at("/home/me/project2/x.cu"),
            None,
            "a sibling sharing the prefix"
        );
        assert_eq!(at("/usr/lib/python3/site-packages/torch/nn/conv.py"), None);
        assert_eq!(at("conv.py"), None, "a base name stays as the tool gave it");
    }
}
