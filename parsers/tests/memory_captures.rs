//! The memory stage's reader on what cudawatch's hook wrote on the H100
//! (sample-reports/pytorch_instruments/*/memory/, made by
//! scripts/capture-pytorch-instruments.sh).

use std::path::PathBuf;

use cudawatch_model::{FindingKind, MemoryReport};
use cudawatch_parsers::builder::ReportBuilder;
use cudawatch_parsers::memory;

fn case(name: &str, run: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-reports/pytorch_instruments")
        .join(name)
        .join(run)
}

fn read(name: &str, run: &str) -> (MemoryReport, Vec<String>) {
    let dir = case(name, run);
    let hook = memory::hook_facts(&std::fs::read(dir.join("hook.json")).unwrap()).unwrap();
    let ooms: Vec<Vec<u8>> = (1..=5)
        .map(|n| dir.join(format!("oom-{n}.json")))
        .take_while(|p| p.exists())
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let steps = std::fs::read(dir.join("steps.jsonl")).unwrap_or_default();
    let stderr = std::fs::read_to_string(case(name, &format!("{run}.stderr"))).unwrap();
    memory::read(&hook, &ooms, &steps, &stderr)
}

fn line_of(held: &cudawatch_model::HeldLine) -> Option<u32> {
    held.location.as_ref().map(|l| l.line)
}

#[test]
fn the_batch_too_large_oom_names_the_users_lines_that_held_the_memory() {
    let (m, problems) = read("oom_batch", "memory");
    assert!(problems.is_empty(), "{problems:?}");
    let oom = &m.ooms[0];
    assert_eq!(
        oom.request,
        392 << 20,
        "PyTorch's 'Tried to allocate 392.00 MiB'"
    );
    // The request came from max_pool2d inside torchvision, called at line 12.
    assert!(oom.location.is_none() || line_of_loc(oom) == Some(12));
    // What held it: the forward pass at line 12 (activations), the batch
    // at line 10, the model's parameters at line 7, largest first.
    let lines: Vec<Option<u32>> = oom.held.iter().map(line_of).collect();
    assert_eq!(&lines[..3], [Some(12), Some(10), Some(7)]);
    assert!(
        oom.held[0].via.is_some(),
        "the framework call below the user's line is named"
    );
    let total: u64 = oom.held.iter().map(|h| h.bytes).sum();
    let ratio = total as f64 / oom.allocated as f64;
    assert!(
        (0.97..=1.03).contains(&ratio),
        "held sums to allocated: {ratio}"
    );
    assert!(
        !oom.fragmentation,
        "317 MiB free in segments is less than 392 MiB"
    );
    assert_eq!(oom.allowed.map(|a| a >> 20), Some(4055), "3.96 GiB allowed");
}

fn line_of_loc(oom: &cudawatch_model::OomState) -> Option<u32> {
    oom.location.as_ref().map(|l| l.line)
}

#[test]
fn a_loss_kept_with_its_graph_is_growth_at_the_line_whose_memory_survives() {
    let (m, problems) = read("loss_growth", "memory");
    assert!(problems.is_empty(), "{problems:?}");
    let growth = m.growth.as_ref().expect("growth found");
    assert_eq!(
        growth.bytes_per_step >> 20,
        20,
        "+20 MiB a step, as the program printed"
    );
    assert_eq!((growth.from_step, growth.to_step), (3, 70));
    assert_eq!(
        line_of(&growth.lines[0]),
        Some(14),
        "out = model(x): kept by losses.append(out)"
    );
    let site = memory::growth_site(growth);
    assert_eq!(site.kind, FindingKind::MemoryGrowth);
    assert_eq!(site.location.unwrap().line, 14);
    // The OOM at step 70 came from line 15 (the loss) and is held by line 14.
    let oom = &m.ooms[0];
    assert_eq!(line_of_loc(oom), Some(15));
    assert_eq!(line_of(&oom.held[0]), Some(14));
    assert_eq!(oom.step, 70);
}

#[test]
fn fragmentation_is_told_from_a_plain_shortage() {
    let (m, _) = read("fragmentation", "memory");
    let oom = &m.ooms[0];
    assert!(
        oom.fragmentation,
        "816 MiB free in segments, no hole of 400 MiB"
    );
    assert_eq!(oom.largest_free_block >> 20, 96);
    assert_eq!(line_of_loc(oom), Some(19));
    assert!(memory::fragmented(
        &std::fs::read(case("fragmentation", "memory/oom-1.json")).unwrap()
    ));
    assert!(!memory::fragmented(
        &std::fs::read(case("oom_batch", "memory/oom-1.json")).unwrap()
    ));
    // The remedy, as the capture tried it: the program then finished.
    let exit = std::fs::read_to_string(case("fragmentation", "expandable.exit")).unwrap();
    assert_eq!(exit.trim(), "0");
}

#[test]
fn memory_held_by_another_process_is_named_by_pid() {
    let (m, _) = read("other_process", "memory");
    let oom = &m.ooms[0];
    assert_eq!(oom.other_processes.len(), 1);
    assert_eq!(oom.other_processes[0].pid, 1248);
    assert!(oom.other_processes[0].bytes > 70 << 30);
    assert!(oom.device_free < 64 << 20, "the GPU itself was full");
    // The request came from autograd's backward thread: no Python stack.
    assert!(oom.location.is_none() && oom.origin.contains("backward"));
}

#[test]
fn a_correct_training_loop_has_a_peak_and_no_growth() {
    let (m, problems) = read("fixed_batch", "memory");
    assert!(problems.is_empty(), "{problems:?}");
    assert!(m.ooms.is_empty() && m.growth.is_none());
    let peak = m.peak.unwrap();
    assert_eq!(peak.allocated >> 20, 2884);
    assert!(!m.at_peak.is_empty());
    // Backward's allocations have no Python stack: one line says so.
    assert!(m.at_peak.iter().any(|h| h.origin.contains("backward")));
    assert!(m.at_peak.iter().any(|h| line_of(h) == Some(14)));
}

#[test]
fn cut_and_foreign_records_are_problems_not_panics() {
    let hook = memory::hook_facts(b"{\"torch_imported\": true}").unwrap();
    let (m, problems) = memory::read(
        &hook,
        &[b"{\"request\": 1".to_vec()],
        b"{\"step\":1,\"allocated\":5,\"reserved\":6}\n{\"step\":2,\"alloc",
        "",
    );
    assert_eq!(m.steps.len(), 1);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(memory::hook_facts(b"\x1b[31m").is_err());
    let mut builder = ReportBuilder::new("0");
    let got = builder.memory(
        "memory/hook.json",
        memory::Artifacts {
            hook,
            ooms: &[],
            steps: b"",
            peaks: b"{\"pid\":7,\"max_al",
            program_output: "",
            commands: &[],
        },
        None,
    );
    assert!(got.growth.is_none());
    // A cut peaks line is said, not a panic.
    assert!(
        builder
            .finish()
            .warnings
            .iter()
            .any(|w| w.message.contains("peaks.jsonl line 1")),
    );
}

#[test]
fn another_process_is_named_by_its_command_when_the_run_saw_it() {
    let dir = case("other_process", "memory");
    let hook = memory::hook_facts(&std::fs::read(dir.join("hook.json")).unwrap()).unwrap();
    let oom = std::fs::read(dir.join("oom-1.json")).unwrap();
    let stderr = std::fs::read_to_string(case("other_process", "memory.stderr")).unwrap();
    let commands = memory::process_commands(b"[[1248, \"python3 hold_memory.py\"]]");
    let (m, _) = memory::read_with_commands(&hook, &[oom], b"", &stderr, &commands);
    let other = &m.ooms[0].other_processes[0];
    assert_eq!(other.command.as_deref(), Some("python3 hold_memory.py"));
    assert!(memory::process_commands(b"not json").is_empty());
}

/// Two DDP ranks on the H100 (tests/gpu/beyond/two_ranks.py,
/// sample-reports/beyond/two_ranks_leak*/): both append to one steps.jsonl,
/// rank 0 flat at 381 MiB, rank 1 (LEAK=1) keeping each step's graph.
fn two_ranks(case: &str) -> (MemoryReport, Vec<cudawatch_model::ProcessPeak>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-reports/beyond")
        .join(case);
    let hook = memory::hook_facts(&std::fs::read(dir.join("memory.hook.json")).unwrap()).unwrap();
    let steps = std::fs::read(dir.join("steps.jsonl")).unwrap();
    let (m, problems) = memory::read(&hook, &[], &steps, "");
    assert!(problems.is_empty(), "{problems:?}");
    let (peaks, problems) = memory::process_peaks(&std::fs::read(dir.join("peaks.jsonl")).unwrap());
    assert!(problems.is_empty(), "{problems:?}");
    (m, peaks)
}

#[test]
fn a_leak_in_one_rank_is_found_in_that_ranks_steps() {
    let (m, peaks) = two_ranks("two_ranks_leak1");
    // The ranks' lines are mixed in the file, as they stepped.
    let ranks: Vec<Option<u32>> = m.steps.iter().take(4).map(|s| s.process.rank).collect();
    assert!(
        ranks.contains(&Some(0)) && ranks.contains(&Some(1)),
        "{ranks:?}"
    );
    let growth = m.growth.expect("rank 1 grows");
    assert_eq!(growth.process.unwrap().rank, Some(1));
    assert_eq!(growth.bytes_per_step >> 20, 10, "10 MiB a step");
    assert_eq!(growth.lines[0].location.as_ref().unwrap().line, 27);
    let ranks: Vec<Option<u32>> = peaks.iter().map(|p| p.process.rank).collect();
    assert_eq!(ranks.len(), 2);
    assert!(ranks.contains(&Some(0)) && ranks.contains(&Some(1)));
    // Without the leak, neither rank grows.
    let (m, peaks) = two_ranks("two_ranks_leak0");
    assert!(m.growth.is_none());
    assert_eq!(peaks.len(), 2);
}
