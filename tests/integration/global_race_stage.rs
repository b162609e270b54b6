//! The global-race stage (`--stages ...,global-race`), with the tool's real
//! lines and SASS from an H200 (sample-reports/global_race/first-run/)
//! replayed: a stand-in program writes what the LD_PRELOADed tool wrote
//! there, and a fake nvdisasm prints the module's captured SASS.

use std::path::{Path, PathBuf};

use crate::helpers::{cudawatch, json, root, run};
use crate::run::stage;

/// The first version's captures of a corpus case.
fn first_run(file: &str) -> PathBuf {
    root()
        .join("sample-reports/global_race/first-run")
        .join(file)
}

/// A program that does what the tool did under it: its lines (the tool's
/// own, without the program's output the capture appended) and a module.
fn stand_in(dir: &Path) -> PathBuf {
    let program = dir.join("program");
    std::fs::write(
        &program,
        "#!/bin/sh\n\
         if [ -n \"$CUDAWATCH_GLOBAL_RACE_OUT\" ] && [ -n \"$FAKE_GR_LINES\" ]; then\n\
           mkdir -p \"$CUDAWATCH_GLOBAL_RACE_OUT/modules\"\n\
           grep '^{' \"$FAKE_GR_LINES\" > \"$CUDAWATCH_GLOBAL_RACE_OUT/global-race.jsonl\"\n\
           : > \"$CUDAWATCH_GLOBAL_RACE_OUT/modules/0.cubin\"\n\
         fi\n\
         echo done\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    program
}

/// `cudawatch run --stages plain,global-race` of the stand-in replaying
/// `case`'s lines (or writing none), the tool's library at `library`.
fn global_race_run(
    case: Option<&str>,
    library: &Path,
) -> (crate::helpers::Output, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let program = stand_in(tmp.path());
    let (bin, path) = crate::helpers::fake_smi_path(tmp.path());
    std::os::unix::fs::symlink(root().join("tests/fakes/nvdisasm"), bin.join("nvdisasm")).unwrap();
    let mut cmd = cudawatch();
    cmd.current_dir(tmp.path())
        .env("PATH", path)
        .env("CUDAWATCH_GLOBAL_RACE_LIB", library)
        .args(["run", "--stages", "plain,global-race", "--format", "json"])
        .arg("--out-dir")
        .arg(tmp.path().join("run"))
        .arg("--")
        .arg(&program);
    if let Some(case) = case {
        cmd.env("FAKE_GR_LINES", first_run(&format!("{case}.jsonl")))
            .env("FAKE_SASS", first_run(&format!("{case}.0.sass")));
    }
    let out = run(&mut cmd);
    let report = json(&out);
    (out, report)
}

/// A file the loader is given as the library: not a real one (it says so
/// and carries on), enough for the stage to start.
fn some_library(dir: &Path) -> PathBuf {
    let library = dir.join("libglobal-race.so");
    std::fs::write(&library, b"").unwrap();
    library
}

#[test]
fn a_race_the_tool_found_gates_at_its_line_with_both_accesses() {
    let lib = tempfile::tempdir().unwrap();
    let (out, report) = global_race_run(Some("counter_block"), &some_library(lib.path()));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let staged = stage(&report, "global-race");
    assert_eq!(staged["outcome"], "findings", "{staged}");
    let site = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "global_race")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(site["location"]["line"], 10, "{site}");
    assert_eq!(site["other"]["location"]["line"], 10, "{site}");
    assert_eq!(site["other"]["access"], "Read", "{site}");
    assert_eq!(site["count"], 32 + 223, "{site}");
    assert_eq!(site["kernel"], "count_hits", "{site}");
    // The corpus lies outside this run's source root: named by base name.
    assert!(
        out.stderr
            .contains("FINDINGS: first: global-race global_race at counter_block.cu:10"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_race_free_twin_is_clean_and_says_what_the_tool_cannot_see() {
    let lib = tempfile::tempdir().unwrap();
    let (out, report) = global_race_run(Some("counter_block_atomic"), &some_library(lib.path()));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let staged = stage(&report, "global-race");
    assert_eq!(staged["outcome"], "clean", "{staged}");
    let reason = staged["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("1 launch checked, no race in global memory")
            && reason.contains("CUDA graphs are not checked"),
        "{reason}"
    );
}

#[test]
fn a_tool_that_never_loaded_or_was_never_built_checks_nothing() {
    // The program ran, the tool wrote nothing: never clean.
    let lib = tempfile::tempdir().unwrap();
    let (out, report) = global_race_run(None, &some_library(lib.path()));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let staged = stage(&report, "global-race");
    assert_eq!(staged["outcome"], "inconclusive", "{staged}");
    assert!(
        staged["reason"].as_str().unwrap().contains("never loaded"),
        "{staged}"
    );
    // No library where the variable points: the stage says so, and how
    // to build one.
    let (out, report) = global_race_run(Some("counter_block"), Path::new("/nonexistent/lib.so"));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let reason = stage(&report, "global-race")["reason"].to_string();
    assert!(
        reason.contains("CUDAWATCH_GLOBAL_RACE_LIB names /nonexistent/lib.so, which is not a file")
            && reason.contains("native/global-race/build.sh"),
        "{reason}"
    );
}
