//! Every kind's stage rules, one row each: what the stage left behind, and the
//! outcome and words a user gets.

use cudawatch_model::{Outcome, ProcessEnd};

use super::StageRecord;
use crate::tools::ncu::rule as ncu;
use crate::tools::plain::rule as plain;
use crate::tools::sanitizer::{output_complete, rule as sanitizer};
use cudawatch_model::Tool;
use cudawatch_model::ToolSummary;
use cudawatch_parsers::builder::{NcuEvidence, SanitizerEvidence};
use cudawatch_parsers::error::{ParseError, ParseErrorKind};

fn record(tool: Tool, end: ProcessEnd) -> StageRecord {
    StageRecord {
        tool,
        command: Vec::new(),
        env: Vec::new(),
        end,
        seconds: 2.0,
        timeout_seconds: 120.0,
        timed_out: false,
        interrupted: false,
        killed: false,
        left_behind: false,
        spawn_error: None,
        unfinished: false,
        not_applicable: None,
        gpu_memory_mib: None,
        gpu_leader_only: None,
        imports: Vec::new(),
        notes: Vec::new(),
        gpu_others: Vec::new(),
        gpu_processes: Vec::new(),
        earlier_tries: Vec::new(),
        out_of_memory_at: None,
        collective_timeout_at: None,
        device_exception: None,
    }
}

fn summary(errors: Option<u64>) -> ToolSummary {
    ToolSummary {
        errors,
        ..ToolSummary::default()
    }
}

fn evidence(summary: ToolSummary, xml_records: Option<u64>, folded: u64) -> SanitizerEvidence {
    SanitizerEvidence {
        summary,
        xml_records,
        folded,
        ..SanitizerEvidence::default()
    }
}

#[test]
fn a_clean_racecheck_names_the_library_kernels_it_left_out_and_the_names_it_kept_checked() {
    let filtered = |filter: &str| {
        let record = StageRecord {
            command: [
                "compute-sanitizer",
                "--tool",
                "racecheck",
                "--kernel-name-exclude",
                filter,
                "./app",
            ]
            .map(String::from)
            .to_vec(),
            ..record(Tool::Racecheck, ProcessEnd::Exited(0))
        };
        sanitizer(
            &record,
            &evidence(summary(Some(0)), Some(0), 0),
            false,
            false,
        )
        .1
    };
    let every = format!(
        "regex={}",
        crate::tools::library_kernels::library_filter(&[]).unwrap()
    );
    let reason = filtered(&every);
    assert!(
        reason.ends_with(
            "(library kernels (cuDNN, cuBLAS, CUTLASS, NCCL) and PyTorch's (ATen) left out: a race \
             inside one is their own code and never gates (--gate-scope all checks them))"
        ),
        "{reason}"
    );
    // The program's own CUTLASS-built kernel kept the name checked.
    let reason = filtered(&every.replace("cutlass|", ""));
    assert!(
        reason.contains(
            "left out but for names the program's own kernels carry, still checked (cutlass)"
        ),
        "{reason}"
    );
    // A filter of the user's own is named as theirs.
    let reason = filtered("regex=(mykernel)");
    assert!(
        reason.ends_with("(only the launches selected by --kernel-name-exclude regex=(mykernel))"),
        "{reason}"
    );
}

// Over 100 lines on purpose: a table of cases, one per rule.
#[test]
fn sanitizer_stage_rules() {
    let ok = record(Tool::Memcheck, ProcessEnd::Exited(0));
    let failing = |line: &str| ToolSummary {
        failures: vec![line.to_string()],
        ..summary(Some(0))
    };
    let truncated = SanitizerEvidence {
        xml_broken: Some(ParseError {
            kind: ParseErrorKind::Truncated,
            offset: 4096,
            path: "ComputeSanitizerOutput/record[3]".into(),
        }),
        ..evidence(summary(Some(3)), Some(2), 2)
    };
    let timed_out = StageRecord {
        timed_out: true,
        ..ok.clone()
    };
    let spawn = StageRecord {
        spawn_error: Some("cannot run compute-sanitizer: No such file or directory".into()),
        end: ProcessEnd::NotStarted,
        ..ok.clone()
    };
    let rows: Vec<(&str, StageRecord, SanitizerEvidence, bool, Outcome, &str)> = vec![
        (
            "clean",
            ok.clone(),
            evidence(summary(Some(0)), Some(0), 0),
            false,
            Outcome::Clean,
            "ran to the end",
        ),
        (
            "records",
            ok.clone(),
            evidence(summary(Some(26)), Some(26), 26),
            false,
            Outcome::Findings,
            "26 errors",
        ),
        (
            "usage printed",
            ok.clone(),
            evidence(summary(None), None, 0),
            true,
            Outcome::ToolFailed,
            "printed its usage",
        ),
        (
            "summary without records",
            ok.clone(),
            evidence(summary(Some(5)), Some(0), 0),
            false,
            Outcome::Inconclusive,
            "no record could be read",
        ),
        (
            "exit 255 after a summary",
            record(Tool::Memcheck, ProcessEnd::Exited(255)),
            evidence(summary(Some(0)), Some(0), 0),
            false,
            Outcome::Inconclusive,
            "exited 255",
        ),
        (
            "no XML",
            ok.clone(),
            evidence(summary(Some(0)), None, 0),
            false,
            Outcome::Inconclusive,
            "no XML report",
        ),
        (
            "no summary line",
            record(Tool::Memcheck, ProcessEnd::Signaled(11)),
            evidence(summary(None), Some(0), 0),
            false,
            Outcome::Inconclusive,
            "printed no summary line",
        ),
        (
            "XML cut off",
            ok.clone(),
            truncated,
            false,
            Outcome::Inconclusive,
            "XML is cut off",
        ),
        (
            "never initialised CUDA",
            ok.clone(),
            evidence(
                failing("Target application terminated before first instrumented API call"),
                None,
                0,
            ),
            false,
            Outcome::Inconclusive,
            "never initialised CUDA",
        ),
        (
            "crashed under the tool",
            ok.clone(),
            evidence(
                failing("Error: process didn't terminate successfully"),
                Some(1),
                1,
            ),
            false,
            Outcome::Inconclusive,
            "crashed under the tool",
        ),
        (
            "timed out",
            timed_out.clone(),
            evidence(summary(None), None, 0),
            false,
            Outcome::Inconclusive,
            "incomplete: stopped by its timeout after 120s; nothing found",
        ),
        (
            "timed out with records",
            timed_out,
            evidence(summary(None), None, 3),
            false,
            Outcome::Inconclusive,
            "3 records found before the stop kept",
        ),
        (
            "tool missing",
            spawn,
            evidence(summary(None), None, 0),
            false,
            Outcome::Inconclusive,
            "install the CUDA toolkit",
        ),
    ];
    for (name, record, evidence, usage, outcome, words) in rows {
        let (got, reason) = sanitizer(&record, &evidence, usage, false);
        assert_eq!(got, outcome, "{name}: {reason}");
        assert!(reason.contains(words), "{name}: {reason:?} lacks {words:?}");
    }
}

#[test]
fn a_summary_of_no_errors_is_clean_only_when_the_exit_agrees() {
    let zero = || evidence(summary(Some(0)), Some(0), 0);
    let target_failed = SanitizerEvidence {
        summary: ToolSummary {
            target_failed: true,
            ..summary(Some(0))
        },
        ..zero()
    };
    let rows: Vec<(&str, ProcessEnd, SanitizerEvidence, Outcome, &str)> = vec![
        (
            "exit 0",
            ProcessEnd::Exited(0),
            zero(),
            Outcome::Clean,
            "found nothing",
        ),
        (
            "killed by SIGSEGV after the summary",
            ProcessEnd::Signaled(11),
            zero(),
            Outcome::Inconclusive,
            "killed by signal 11",
        ),
        (
            "the errors-found code with no error",
            ProcessEnd::Exited(86),
            zero(),
            Outcome::Inconclusive,
            "exited 86",
        ),
        (
            "exit 1 without the program failing",
            ProcessEnd::Exited(1),
            zero(),
            Outcome::Inconclusive,
            "disagree",
        ),
        (
            // Checked up to the failure only; the judge calls it blocked
            // when that failure is a finding (issue 21, class 13).
            "the program's own failure, announced",
            ProcessEnd::Exited(1),
            target_failed,
            Outcome::Inconclusive,
            "checked only up to its failure",
        ),
        (
            "errors found, code 86",
            ProcessEnd::Exited(86),
            evidence(summary(Some(2)), Some(2), 2),
            Outcome::Findings,
            "2 errors",
        ),
        (
            "errors found, then killed",
            ProcessEnd::Signaled(9),
            evidence(summary(Some(2)), Some(2), 2),
            Outcome::Inconclusive,
            "the 2 errors it reported first are kept",
        ),
    ];
    for (name, end, evidence, outcome, words) in rows {
        let (got, reason) = sanitizer(&record(Tool::Memcheck, end), &evidence, false, false);
        assert_eq!(got, outcome, "{name}: {reason}");
        assert!(reason.contains(words), "{name}: {reason:?} lacks {words:?}");
    }
}

#[test]
fn a_crash_after_the_last_line_never_vouches_for_a_clean_stage() {
    // Before: "checked the program to its end; then crashed at
    // teardown", clean, although a crash in late work that prints
    // nothing looks exactly the same.
    let ok = record(Tool::Memcheck, ProcessEnd::Exited(7));
    let crashed = evidence(
        ToolSummary {
            failures: vec!["Error: process didn't terminate successfully".into()],
            ..summary(Some(0))
        },
        Some(0),
        0,
    );
    let (outcome, reason) = sanitizer(&ok, &crashed, false, true);
    assert_eq!(outcome, Outcome::Inconclusive, "{reason}");
    assert!(reason.contains("cannot be told"), "{reason}");
    let found = evidence(crashed.summary.clone(), Some(2), 2);
    let (outcome, reason) = sanitizer(&ok, &found, false, true);
    assert_eq!(outcome, Outcome::Findings, "{reason}");
    assert!(reason.contains("2 errors reported"), "{reason}");
    let (outcome, reason) = sanitizer(&ok, &crashed, false, false);
    assert_eq!(outcome, Outcome::Inconclusive, "{reason}");
    assert!(reason.contains("checked only up to the crash"), "{reason}");
    let cut = SanitizerEvidence {
        xml_records: None,
        ..crashed
    };
    assert_eq!(sanitizer(&ok, &cut, false, true).0, Outcome::Inconclusive);
}

#[test]
fn the_output_is_complete_when_every_plain_line_is_there() {
    let tool =
        b"========= COMPUTE-SANITIZER\nloss 2.2979\nstep 2\n========= ERROR SUMMARY: 0 errors\n";
    assert!(output_complete(b"loss 2.2979\nstep 2\n", tool));
    assert!(!output_complete(b"loss 2.2979\nstep 2\nstep 3\n", tool));
    assert!(
        !output_complete(b"", tool),
        "nothing to compare: not proven"
    );
}

#[test]
fn a_clean_stage_that_checked_only_some_launches_says_so() {
    let narrowed = StageRecord {
        command: [
            "compute-sanitizer",
            "--tool",
            "memcheck",
            "--launch-count",
            "5",
            "--kernel-name",
            "kns=gemm",
            "./app",
        ]
        .map(String::from)
        .to_vec(),
        ..record(Tool::Memcheck, ProcessEnd::Exited(0))
    };
    let (outcome, reason) = sanitizer(
        &narrowed,
        &evidence(summary(Some(0)), Some(0), 0),
        false,
        false,
    );
    assert_eq!(outcome, Outcome::Clean);
    assert!(
        reason.ends_with("(only the launches selected by --launch-count 5 --kernel-name kns=gemm)"),
        "{reason}"
    );
}

// Over 100 lines on purpose: a table of cases, one per rule.
#[test]
fn ncu_stage_rules() {
    let ok = record(Tool::Ncu, ProcessEnd::Exited(0));
    let with = |summary: ToolSummary, kernels: usize| NcuEvidence {
        summary,
        kernels,
        measured: kernels,
        errors: Vec::new(),
        unreadable: Vec::new(),
    };
    let failing = |line: &str| ToolSummary {
        failures: vec![line.to_string()],
        ..ToolSummary::default()
    };
    let unreadable = NcuEvidence {
        errors: vec![(
            "ncu/raw.csv".into(),
            ParseError {
                kind: ParseErrorKind::Csv("bad row".into()),
                offset: 10,
                path: "row 2".into(),
            },
        )],
        ..with(ToolSummary::default(), 0)
    };
    let no_kernels = ToolSummary {
        no_kernels_profiled: true,
        ..ToolSummary::default()
    };
    let rows: Vec<(&str, NcuEvidence, usize, bool, Outcome, &str)> = vec![
        (
            "coalesced",
            with(ToolSummary::default(), 3),
            0,
            true,
            Outcome::Clean,
            "3 launches profiled",
        ),
        (
            "uncoalesced",
            with(ToolSummary::default(), 3),
            1,
            true,
            Outcome::Findings,
            "1 of 3",
        ),
        (
            "one launch's figures unreadable, the rest coalesced",
            NcuEvidence {
                unreadable: vec!["row 3 (launch 1, k): \"4.194.304\" is not a figure".into()],
                ..with(ToolSummary::default(), 2)
            },
            0,
            true,
            Outcome::Inconclusive,
            "1 of 3 launches profiled could not be read from ncu's raw page (first: row 3",
        ),
        (
            "no kernels profiled",
            with(no_kernels, 0),
            0,
            true,
            Outcome::Inconclusive,
            "profiled no kernels",
        ),
        (
            "wrote no report",
            with(ToolSummary::default(), 0),
            0,
            false,
            Outcome::Inconclusive,
            "wrote no report",
        ),
        (
            "no launches in the profile",
            with(ToolSummary::default(), 0),
            0,
            true,
            Outcome::Inconclusive,
            "no kernel launches",
        ),
        (
            "unreadable page",
            unreadable,
            0,
            true,
            Outcome::ToolFailed,
            "could not read ncu/raw.csv",
        ),
        (
            "counters need permission",
            with(
                failing("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission"),
                0,
            ),
            0,
            false,
            Outcome::Inconclusive,
            "need admin rights",
        ),
        (
            "launch failed",
            with(failing("==ERROR== LaunchFailed"), 0),
            0,
            true,
            Outcome::Inconclusive,
            "fix the memory errors first",
        ),
        (
            // sample-reports/beyond/ncu_counters_beside/ncu/stdout
            "the counters failed",
            with(
                cudawatch_parsers::ncu::log::parse(include_bytes!(
                    "../../sample-reports/beyond/ncu_counters_beside/ncu/stdout"
                )),
                0,
            ),
            0,
            true,
            Outcome::Inconclusive,
            "ncu said: An error was reported by the counter measurement library: LaunchFailed \
             (a kernel that faults, or another profiler on this GPU: check the program alone)",
        ),
        (
            "no coalescing metric in the raw page",
            NcuEvidence {
                measured: 0,
                ..with(ToolSummary::default(), 3)
            },
            0,
            true,
            Outcome::Inconclusive,
            "none of the 3 profiled launches has a coalescing figure",
        ),
    ];
    for (name, evidence, uncoalesced, profile, outcome, words) in rows {
        let (got, reason) = ncu(&ok, &evidence, uncoalesced, profile);
        assert_eq!(got, outcome, "{name}: {reason}");
        assert!(reason.contains(words), "{name}: {reason:?} lacks {words:?}");
    }
}

#[test]
fn with_pytorchs_kernels_left_out_no_profile_is_clean_only_for_a_program_that_ran_through() {
    // sample-reports/beyond/ncu_framework_filter/ncu-empty_then_reduce.stdout:
    // every kernel ATen's, "No kernels were profiled", both listed.
    let summary = cudawatch_parsers::ncu::log::parse(include_bytes!(
        "../../sample-reports/beyond/ncu_framework_filter/ncu-empty_then_reduce.stdout"
    ));
    let evidence = NcuEvidence {
        summary,
        kernels: 0,
        measured: 0,
        errors: Vec::new(),
        unreadable: Vec::new(),
    };
    let filtered = |end: ProcessEnd| StageRecord {
        command: std::iter::once("ncu".to_string())
            .chain(
                crate::tools::ncu::profile_argv(
                    std::path::Path::new("ncu"),
                    &crate::tools::ncu::NcuOptions {
                        launch_cap: 1,
                        all_launches: false,
                        kernel: None,
                        vendor_kernels: false,
                    },
                    &[],
                    std::path::Path::new("/s"),
                    std::path::Path::new("/p"),
                    &["python3".into(), "p.py".into()],
                    true,
                )
                .iter()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned()),
            )
            .collect(),
        ..record(Tool::Ncu, end)
    };
    let (outcome, reason) = ncu(&filtered(ProcessEnd::Exited(0)), &evidence, 0, false);
    assert_eq!(outcome, Outcome::Clean, "{reason}");
    // A program that stopped under ncu may have stopped before a kernel of
    // its own: no vouching for it.
    let (outcome, reason) = ncu(&filtered(ProcessEnd::Exited(1)), &evidence, 0, false);
    assert_eq!(outcome, Outcome::Inconclusive, "{reason}");
    assert!(reason.contains("did not run to its end"), "{reason}");
    assert!(
        !reason.contains("  "),
        "one line, no run of spaces: {reason}"
    );
}

#[test]
fn a_program_that_failed_under_ncu_was_profiled_only_up_to_its_failure() {
    // Inductor's CUDA graphs under ncu on the H100: 10 launches profiled,
    // all coalesced, then "Detected 3 tensor(s) in the cudagraph pool not
    // tracked as outputs" and exit 1 (sample-reports/beyond/many_processes).
    let failed = record(Tool::Ncu, ProcessEnd::Exited(1));
    let evidence = NcuEvidence {
        summary: ToolSummary {
            target_failed: true,
            ..ToolSummary::default()
        },
        kernels: 10,
        measured: 10,
        errors: Vec::new(),
        unreadable: Vec::new(),
    };
    let (outcome, reason) = ncu(&failed, &evidence, 0, true);
    assert_eq!(outcome, Outcome::Inconclusive, "{reason}");
    assert!(
        reason.contains("(exited 1) after 10 launches profiled: profiled only up to its failure"),
        "{reason}"
    );
    // What it measured before the failure is still a finding.
    let (outcome, _) = ncu(&failed, &evidence, 2, true);
    assert_eq!(outcome, Outcome::Findings);
}

#[test]
fn an_ncu_import_that_failed_leaves_the_stage_untrusted() {
    let failed = StageRecord {
        imports: vec![
            ("raw.csv".into(), ProcessEnd::Exited(0)),
            ("details.csv".into(), ProcessEnd::Exited(1)),
        ],
        ..record(Tool::Ncu, ProcessEnd::Exited(0))
    };
    let evidence = NcuEvidence {
        summary: ToolSummary::default(),
        kernels: 2,
        measured: 2,
        errors: Vec::new(),
        unreadable: Vec::new(),
    };
    let (outcome, reason) = ncu(&failed, &evidence, 0, true);
    assert_eq!(outcome, Outcome::ToolFailed);
    assert!(reason.contains("details.csv exited 1"), "{reason}");
}

#[test]
fn plain_run_rules() {
    let ok = record(Tool::Plain, ProcessEnd::Exited(0));
    assert_eq!(plain(&ok, 0).0, Outcome::Clean);
    assert_eq!(plain(&ok, 2).0, Outcome::Findings);
    let crashed = record(Tool::Plain, ProcessEnd::Signaled(11));
    let (outcome, reason) = plain(&crashed, 0);
    assert_eq!(outcome, Outcome::TargetFailed);
    assert!(reason.contains("killed by signal 11"), "{reason}");
    let slow = StageRecord {
        timed_out: true,
        ..ok
    };
    let (outcome, reason) = plain(&slow, 0);
    assert_eq!(outcome, Outcome::Inconclusive);
    assert!(reason.contains("raise --plain-timeout"), "{reason}");
}

#[test]
fn a_python_stage_that_timed_out_suggests_checking_fewer_steps() {
    use crate::tools::outcome::process_problem;
    let slow = |env: &[&str]| StageRecord {
        timed_out: true,
        env: env.iter().map(|e| e.to_string()).collect(),
        ..record(Tool::Racecheck, ProcessEnd::Signaled(15))
    };
    let hook = "CUDAWATCH_HOOK_OUT=/r/racecheck";
    let reason = |r: &StageRecord| process_problem(r, "racecheck", "").unwrap().1;
    // A Python program's stage (the hook in it) without --steps.
    let python = reason(&slow(&[hook]));
    assert!(python.contains("--steps 3"), "{python}");
    assert!(python.starts_with("timed out after 120s"), "{python}");
    // Already limited to its first steps, or not Python: only the limit.
    let limited = reason(&slow(&[hook, "CUDAWATCH_STOP_AFTER_STEPS=3"]));
    assert!(!limited.contains("--steps"), "{limited}");
    let native = reason(&slow(&["PYTORCH_NO_CUDA_MEMORY_CACHING=1"]));
    assert!(native.ends_with("raise --timeout"), "{native}");
}

#[test]
fn coredump_stage_rules() {
    use crate::tools::coredump::rule as coredump;
    use cudawatch_model::{FindingKind, Severity};
    let mut fault = cudawatch_parsers::site::new_site(
        Tool::Coredump,
        FindingKind::InvalidAccess,
        Severity::Error,
        "GPU core dump: Warp Illegal Address in gather".into(),
    );
    fault.kernel = Some("gather".into());
    fault.location = Some(cudawatch_model::SourceLocation {
        file: "/w/train.py".into(),
        line: 15,
    });
    let aborted = record(Tool::Coredump, ProcessEnd::Signaled(6));
    let rows: Vec<(StageRecord, Vec<_>, usize, Outcome, &str)> = vec![
        (
            aborted.clone(),
            vec![fault.clone()],
            0,
            Outcome::Findings,
            "1 core dump read: Warp Illegal Address in gather at train.py:15",
        ),
        (
            // No reader ran: the driver's progress lines are all there is.
            aborted.clone(),
            vec![fault],
            1,
            Outcome::Findings,
            "1 dump not read (no cuda-gdb was found on PATH",
        ),
        (
            record(Tool::Coredump, ProcessEnd::Exited(0)),
            Vec::new(),
            0,
            Outcome::Clean,
            "the program met no device exception this time",
        ),
        (
            record(Tool::Coredump, ProcessEnd::Exited(1)),
            Vec::new(),
            0,
            Outcome::Inconclusive,
            "the program exited 1 without writing a core dump",
        ),
    ];
    for (record, sites, unread, outcome, words) in rows {
        let (got, reason) = coredump(&record, &sites, unread);
        assert_eq!(got, outcome, "{reason}");
        assert!(reason.contains(words), "{reason}");
    }
}

/// The global-race tool's lines for a row: `launches` launch lines, each
/// as given, after the tool's own line.
fn global_race_lines(launches: &[&str]) -> cudawatch_parsers::global_race::Output {
    let mut text =
        String::from("{\"tool\": \"cudawatch-global-race\", \"version\": 1, \"pid\": 7}\n");
    for launch in launches {
        text.push_str(launch);
        text.push('\n');
    }
    cudawatch_parsers::global_race::parse(&text)
}

const WHOLE_LAUNCH: &str = "{\"launch\": 0, \"kernel\": \"k\", \"module\": 0, \"checked\": true, \
     \"words\": 10, \"words_dropped\": 0, \"pairs_dropped\": 0, \"blocks_ordered\": true, \
     \"sync_dropped\": 0, \"races\": []}";

#[test]
fn global_race_is_clean_only_for_launches_it_checked_whole_in_a_program_that_ended() {
    use crate::tools::global_race::rule;
    let exited = |code| record(Tool::GlobalRace, ProcessEnd::Exited(code));
    let own = |_: &cudawatch_parsers::global_race::Launch| true;
    let library = |_: &cudawatch_parsers::global_race::Launch| false;
    let (outcome, reason) = rule(&exited(0), &global_race_lines(&[WHOLE_LAUNCH]), 0, &own);
    assert_eq!(outcome, Outcome::Clean, "{reason}");
    // No kernel of the program's own among them: nothing of the user's.
    let (outcome, reason) = rule(&exited(0), &global_race_lines(&[WHOLE_LAUNCH]), 0, &library);
    assert_eq!(outcome, Outcome::Skipped, "{reason}");
    let (outcome, reason) = rule(&exited(0), &global_race_lines(&[WHOLE_LAUNCH]), 2, &own);
    assert_eq!(
        (outcome, reason.as_str()),
        (
            Outcome::Findings,
            "2 race sites in global memory, in 1 launch checked"
        )
    );
    // A launch with more words than the table held: checked in part.
    let partial = WHOLE_LAUNCH.replace("\"words_dropped\": 0", "\"words_dropped\": 5");
    let (outcome, reason) = rule(
        &exited(0),
        &global_race_lines(&[WHOLE_LAUNCH, &partial]),
        0,
        &own,
    );
    assert_eq!(outcome, Outcome::Inconclusive);
    assert!(
        reason.starts_with("1 launch of the program's own kernels, of 2 in all, checked in part"),
        "{reason}"
    );
    // A library's launch checked in part: said, and nothing of the
    // user's left unchecked.
    let (outcome, reason) = rule(
        &exited(0),
        &global_race_lines(&[WHOLE_LAUNCH, &partial]),
        0,
        &|l: &cudawatch_parsers::global_race::Launch| l.words_dropped == 0,
    );
    assert_eq!(outcome, Outcome::Clean, "{reason}");
    assert!(
        reason.ends_with(
            "; 1 launch of libraries' or frameworks' kernels checked in part (more threads, \
             words or blocks than the tool's tables hold; their races do not gate)"
        ),
        "{reason}"
    );
    let (outcome, reason) = rule(&exited(0), &global_race_lines(&[&partial]), 0, &library);
    assert_eq!(outcome, Outcome::Skipped, "{reason}");
    assert!(reason.contains("checked in part"), "{reason}");
    // Blocks not ordered (a grid of more blocks than its clocks hold).
    let unordered = WHOLE_LAUNCH.replace("\"blocks_ordered\": true", "\"blocks_ordered\": false");
    assert_eq!(
        rule(&exited(0), &global_race_lines(&[&unordered]), 0, &own).0,
        Outcome::Inconclusive
    );
    // The tool's own error, a line cut short, no launch, a failed program.
    let error = "{\"error\": \"allocating the shadow memory: out of memory\"}";
    let (outcome, reason) = rule(
        &exited(0),
        &global_race_lines(&[error, WHOLE_LAUNCH]),
        0,
        &own,
    );
    assert_eq!(outcome, Outcome::Inconclusive);
    assert!(reason.contains("out of memory"), "{reason}");
    let cut = "{\"launch\": 1, \"kernel\": \"k\", \"che";
    assert_eq!(
        rule(
            &exited(0),
            &global_race_lines(&[WHOLE_LAUNCH, cut]),
            0,
            &own
        )
        .0,
        Outcome::Inconclusive
    );
    let (outcome, reason) = rule(&exited(0), &global_race_lines(&[]), 0, &own);
    assert_eq!(outcome, Outcome::Inconclusive);
    assert!(reason.contains("no launch"), "{reason}");
    let (outcome, reason) = rule(&exited(1), &global_race_lines(&[WHOLE_LAUNCH]), 0, &own);
    assert_eq!(outcome, Outcome::Inconclusive);
    assert!(reason.contains("exited 1"), "{reason}");
    // Nothing of the tool's at all.
    let nothing = cudawatch_parsers::global_race::parse("");
    let (outcome, reason) = rule(&exited(0), &nothing, 0, &own);
    assert_eq!(outcome, Outcome::Inconclusive);
    assert!(reason.contains("never loaded"), "{reason}");
}
