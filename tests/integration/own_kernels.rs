//! The user's kernels named as NVIDIA's libraries name theirs: a kernel
//! built on CUTLASS's wrapper (`cutlass::Kernel<TileSum>`) and a tiled GEMM
//! (`tiled_gemm`), each with a shared-memory race
//! (sample-reports/beyond/library_named/, captured on an H200). Before,
//! racecheck's library filter left the first out and the judge took the
//! second's race for cuBLAS's: both came out CLEAN. The program's binary
//! holds each kernel's mangled name; here a script stands in for it that
//! holds the names the real binary held (`strings.stdout` of the capture)
//! and replays the real program's output.

use std::path::Path;

use crate::helpers::{Output, cudawatch, json, judged, root, run, sample};
use crate::run::stage;

const CUTLASS_KERNEL: &str = "_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE";

/// `cudawatch run --stages plain,racecheck` of `./build/prog` in a project
/// folder, under compute-sanitizer 2026.4 (the fake, replaying `case`),
/// the program's binary holding `names`; and its run folder judged again
/// by `cudawatch report`.
fn run_program(case: &Path, names: &str) -> (serde_json::Value, Output, serde_json::Value) {
    run_program_beside(case, names, 0)
}

/// [`run_program`] in a project that also holds `filler` empty files.
fn run_program_beside(
    case: &Path,
    names: &str,
    filler: usize,
) -> (serde_json::Value, Output, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let build = tmp.path().join("build");
    std::fs::create_dir_all(&build).unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    for i in 0..filler {
        std::fs::write(data.join(format!("sample-{i}.bin")), b"").unwrap();
    }
    let program = build.join("prog");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\n: <<'NAMES'\n{names}\nNAMES\ncat '{0}/plain.stdout'; \
             cat '{0}/plain.stderr' >&2; exit $(cat '{0}/plain.exit')\n",
            case.display()
        ),
    )
    .unwrap();
    let sanitizer = tmp.path().join("compute-sanitizer");
    std::fs::write(
        &sanitizer,
        format!(
            "#!/bin/sh\nFAKE_VERSION=2026.4.0.0 exec {} \"$@\"\n",
            root().join("tests/fakes/compute-sanitizer").display()
        ),
    )
    .unwrap();
    for file in [&program, &sanitizer] {
        std::fs::set_permissions(file, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let out = run(cudawatch()
        .current_dir(tmp.path())
        .env("FAKE_CASE", case)
        .env("FAKE_KERNEL", CUTLASS_KERNEL)
        .args(["run", "--stages", "plain,racecheck", "--format", "json"])
        .arg("--compute-sanitizer")
        .arg(&sanitizer)
        .args(["--out-dir", "run", "--", "./build/prog"]));
    let again = judged(&tmp.path().join("run"));
    (json(&out), out, again)
}

fn strings_of(case: &Path) -> String {
    std::fs::read_to_string(case.join("strings.stdout")).unwrap()
}

#[test]
fn a_users_kernel_built_on_cutlass_stays_in_racecheck_and_its_race_gates_at_its_line() {
    let case = sample("beyond/library_named/cutlass_style_race");
    let (report, out, again) = run_program(&case, &strings_of(&case));
    assert_eq!(out.code, 1, "{}", out.stderr);
    // The run folder keeps what the binary said: judged again, the same.
    assert_eq!(again["exit_code"], 1, "{again}");
    let command = stage(&report, "racecheck")["command"].to_string();
    assert!(
        command.contains("--kernel-name-exclude") && !command.contains("cutlass"),
        "{command}"
    );
    assert!(
        out.stderr.contains(
            "program's own carry such names (first _ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE, \
             in ./build/prog)"
        ),
        "{}",
        out.stderr
    );
    let race = &report["findings"][0];
    assert_eq!(race["kind"], "race");
    assert_eq!(race["location"]["line"], 36);
    assert_eq!(race["owner"]["owner"], "user", "{race}");
    assert_eq!(report["own_kernels"][0], CUTLASS_KERNEL);
    // The same program whose binary said nothing: the filter leaves the
    // kernel out by its name, as it did before, and the clean stage says
    // which kernels it did not check.
    let (report, out, _) = run_program(&case, "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let racecheck = stage(&report, "racecheck");
    assert!(racecheck["command"].to_string().contains("cutlass"));
    assert!(
        racecheck["reason"].as_str().unwrap().contains(
            "library kernels (cuDNN, cuBLAS, CUTLASS, NCCL) and PyTorch's (ATen) left out: a race"
        ),
        "{racecheck}"
    );
}

#[test]
fn a_project_past_the_search_limits_still_has_its_executable_read_and_the_report_says_the_rest_was_not()
 {
    // A dataset of 20,001 files beside the build: the search stops there,
    // but the program's own executable is read first, and its kernel
    // stays checked; the run's report keeps the warning, judged again too.
    let case = sample("beyond/library_named/cutlass_style_race");
    let (report, out, again) = run_program_beside(&case, &strings_of(&case), 20_001);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let said = "the search of the program's binaries for its own kernels stopped at its limits \
                (20000 entries below each folder, 4 GiB read)";
    assert!(out.stderr.contains(said), "{}", out.stderr);
    for report in [&report, &again] {
        let warned = report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["message"].as_str().unwrap().contains(said));
        assert!(warned, "{}", report["warnings"]);
    }
    assert_eq!(report["findings"][0]["owner"]["owner"], "user");
    // Within the limits, no such warning.
    let (report, _, _) = run_program(&case, &strings_of(&case));
    assert!(
        !report["warnings"]
            .to_string()
            .contains("stopped at its limits")
    );
}

#[test]
fn a_kernel_named_like_a_library_without_line_information_is_the_users_when_its_binary_defines_it()
{
    // tiled_gemm_race.cu built without -lineinfo: racecheck names the
    // kernel and no line (its run directory's racecheck output).
    let captured = sample("beyond/library_named/tiled_gemm_race");
    let case = tempfile::tempdir().unwrap();
    let copy = |from: &Path, to: &str| std::fs::copy(from, case.path().join(to)).unwrap();
    for run in [
        "plain.stdout",
        "plain.stderr",
        "plain.exit",
        "racecheck.exit",
    ] {
        copy(&captured.join(run), run);
    }
    let racecheck = captured.join("run-nolineinfo/racecheck");
    copy(&racecheck.join("racecheck.xml"), "racecheck.xml");
    copy(&racecheck.join("stdout"), "racecheck.stdout");
    std::fs::write(case.path().join("racecheck.stderr"), "").unwrap();
    let (report, out, again) = run_program(case.path(), &strings_of(&captured));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(again["findings"][0]["owner"]["owner"], "user", "{again}");
    let race = &report["findings"][0];
    assert_eq!(race["kernel"], "tiled_gemm");
    assert!(race["location"].is_null(), "{race}");
    assert_eq!(race["owner"]["owner"], "user", "{race}");
    assert!(
        race["owner"]["because"]
            .as_str()
            .unwrap()
            .contains("the program's own binary defines it (_Z10tiled_gemmPKfS0_Pfi)"),
        "{race}"
    );
    // Without its binary's word, the name alone says cuBLAS, whose races
    // are its own and never gate.
    let (report, out, _) = run_program(case.path(), "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(report["findings"][0]["owner"]["component"], "cuBLAS");
}
