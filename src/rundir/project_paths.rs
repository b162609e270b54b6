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
    let roots = [given_root.as_path(), real_root.as_path()];
    report.for_each_path_mut(|path| {
        if let Some(rel) = below(&roots, path) {
            *path = rel;
        }
    });
    // The stages' environment names the run folder's hook and output
    // folders absolutely (a program may change its directory); the report
    // names them as it names the rest. `PYTHONPATH` is a list.
    for stage in &mut report.stages {
        for setting in &mut stage.env {
            if let Some((name, value)) = setting.split_once('=') {
                let value: Vec<String> = value
                    .split(':')
                    .map(|part| below(&roots, part).unwrap_or_else(|| part.to_string()))
                    .collect();
                *setting = format!("{name}={}", value.join(":"));
            }
        }
    }
}

/// Takes every path under `from` (where a run was made) for the same path
/// under `to` (the project here): a run directory copied from a CI runner
/// or another clone names the files of this project, whose snippets are
/// then read here, under the same rules as any (`snippets`). Nothing is
/// read to decide it; a `from` that is `/` or `to` itself changes nothing.
pub fn moved(report: &mut Report, from: &Path, to: &Path) {
    if !from.is_absolute() || from.parent().is_none() || super::snippets::refused_root(to).is_some()
    {
        return;
    }
    let Ok(to) = to.canonicalize() else {
        return;
    };
    if from == to {
        return;
    }
    report.for_each_path_mut(|path| {
        let Ok(rel) = Path::new(path.as_str()).strip_prefix(from) else {
            return;
        };
        if !rel.as_os_str().is_empty() {
            *path = to.join(rel).display().to_string();
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
    (!rel.is_empty()).then(|| cudawatch_model::project_file(rel))
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

    #[test]
    fn every_path_of_a_real_report_under_the_root_is_named_from_it() {
        // The H100's reports, made in the project on the GPU host, as if
        // their paths were still the host's: each comes back the same.
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples");
        let absolute = format!("{}/", root.display());
        for case in [
            "torch_oom",
            "coalescing",
            "torch_index_oob",
            "triton_hidden_oob",
        ] {
            let text = std::fs::read_to_string(examples.join(format!("{case}.report.json")));
            let text = text.unwrap();
            let as_made = text
                .replace("\"./", &format!("\"{absolute}"))
                .replace("=./", &format!("={absolute}"))
                .replace(":./", &format!(":{absolute}"));
            assert_ne!(as_made, text, "{case} names files of the project");
            let mut report: Report = serde_json::from_str(&as_made).unwrap();
            relative_to_root(&mut report, &root);
            let back = serde_json::to_value(&report).unwrap();
            let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, expected, "{case}");
        }
    }
}
