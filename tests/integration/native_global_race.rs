//! The global-race tool's rules (native/global-race/patches.cu), run on the
//! host: simulate.cpp plays each pattern of tests/gpu/global_race/ as a
//! sequence of accesses and barriers through the same code the GPU runs,
//! built with the host's C++ compiler (as `cc` builds C for crates). What
//! this cannot show, the GPU machine must: that the driver loads the tool
//! and the patches see what the program does.

use crate::helpers::root;

#[test]
fn the_global_race_rules_find_each_planted_pattern_and_none_of_their_twins() {
    let dir = root().join("native/global-race");
    let tmp = tempfile::tempdir().unwrap();
    let binary = tmp.path().join("simulate");
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let built = std::process::Command::new(&compiler)
        .args([
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-DGLOBAL_RACE_SIMULATION",
        ])
        .arg(dir.join("simulate.cpp"))
        .arg("-o")
        .arg(&binary)
        .output()
        .unwrap_or_else(|e| {
            panic!("{compiler}: {e} (a C++ compiler is needed, as for crates that build C)")
        });
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = std::process::Command::new(&binary).output().unwrap();
    let said = String::from_utf8_lossy(&ran.stdout);
    assert!(ran.status.success(), "{said}");
    // Every case ran, and races were found where planted.
    assert_eq!(
        said.lines().filter(|l| l.starts_with("ok ")).count(),
        24,
        "{said}"
    );
    assert!(
        said.contains("ok   counter_grid: across blocks: 2 pairs of lines"),
        "{said}"
    );
    // Blocks ordered through their atomics: the twins with a flag and a grid
    // sync are clean, a flag read too early is not.
    for case in [
        "ok   fence_flag: a flag set and read with atomics: 0 pairs",
        "ok   grid_sync: block 1 first, then block 0: 0 pairs",
        "ok   flag read before the write it guards: 1 pair",
        // The last block's atomic patched before another's that the
        // hardware ran first: its reads after the barrier are ordered.
        "ok   last_block_reduction: the last block's atomic patched before another's: 0 pairs",
        "ok   a partial read with no count of its block: a race: 1 pair",
    ] {
        assert!(said.contains(case), "{said}");
    }
}
