//! Inductor's CUDA graphs (`torch.compile(mode="reduce-overhead")`) fail
//! under two of the stages' own settings, where the plain run does not:
//!
//! - PyTorch's caching allocator turned off, as the sanitizers run Python
//!   programs: the graphs record into the allocator's private pools;
//! - host call stacks, compute-sanitizer's default and ncu's Python stacks:
//!   the Python frames the tool holds keep a tensor of the graphs' pool
//!   alive, and the graph trees' check of that pool fails. With device
//!   stacks only (sanitizers) or no Python stacks (ncu) the same runs end
//!   as the plain run does.
//!
//! Measured on the H100 with torch 2.11 (docs/tool-surprises.md, "CUDA
//! graphs and several processes"; `sample-reports/beyond/cudagraph_stacks/`).
//! A stage whose program failed so runs again without both
//! (`supervisor::stage`), and says what that leaves unseen.

use std::path::Path;

use cudawatch_model::{ProcessEnd, Tool};

use super::{StageCommand, ncu, sanitizer, starved};

/// What a program prints when its graphs failed under a stage's settings,
/// and whether the tool's host call stacks are to blame too:
/// - Inductor's graph trees (`cudagraph_trees.py`): "These storage data
///   ptrs are not allocated in pool (0, 1) but should be" without the
///   allocator, "Detected 1 tensor(s) in the cudagraph pool not tracked as
///   outputs" under Python call stacks; the trees fail under both, so both
///   go at once (a third run would cost a whole stage more);
/// - any capture (`torch.cuda.graph`): without the allocator each tensor is
///   a `cudaMalloc` while the stream captures, which CUDA refuses with
///   "operation not permitted when stream is capturing"
///   (`sample-reports/beyond/manual_graphs/`); host stacks do not fail it.
const SIGNS: [(&str, bool); 3] = [
    ("not allocated in pool", true),
    ("in the cudagraph pool", true),
    ("operation not permitted when stream is capturing", false),
];

/// A stage's second try, for its program's CUDA graphs.
#[derive(Debug)]
pub struct GraphsRerun {
    /// What the program printed when its graphs failed.
    pub sign: &'static str,
    /// The stage's command without the settings that fail the graphs.
    pub command: StageCommand,
    /// The tool whose settings changed.
    tool: Tool,
    /// PyTorch's caching allocator is on again.
    allocator_on: bool,
    /// The tool collects no host (Python) call stacks any more.
    stacks_off: bool,
}

/// The second try of a `tool` stage whose `command` ended with `end` and
/// whose output in `stage_dir` says its program's CUDA graphs failed, when
/// one of the settings that fail them can be changed.
pub fn rerun(
    tool: Tool,
    command: &StageCommand,
    end: ProcessEnd,
    stage_dir: &Path,
) -> Option<GraphsRerun> {
    let sanitizer = Tool::SANITIZERS.contains(&tool);
    let failed = matches!(end, ProcessEnd::Exited(code) if code != 0);
    if !failed || !(sanitizer || tool == Tool::Ncu) {
        return None;
    }
    let (sign, stacks_too) = SIGNS
        .into_iter()
        .find(|(sign, _)| starved::printed(stage_dir, &[*sign]).is_some())?;
    let mut again = command.clone();
    let before = again.env.len();
    again
        .env
        .retain(|(key, value)| !(key == sanitizer::ALLOCATOR_OFF_VARIABLE && value == "1"));
    let allocator_on = again.env.len() != before;
    let stacks_off = stacks_too
        && if sanitizer {
            sanitizer::without_host_stacks(&mut again.argv)
        } else {
            ncu::without_python_stacks(&mut again.argv)
        };
    (allocator_on || stacks_off).then_some(GraphsRerun {
        sign,
        command: again,
        tool,
        allocator_on,
        stacks_off,
    })
}

impl GraphsRerun {
    /// What the second try changed, for the progress line: "with PyTorch's
    /// caching allocator on and without host call stacks".
    pub fn changes(&self) -> String {
        self.said(
            "with PyTorch's caching allocator on",
            ["without host call stacks", "without Python call stacks"],
        )
        .join(" and ")
    }

    /// The stage's note: why it ran twice, and what its second try did not
    /// see. The same words for every stage changed alike, so the report can
    /// say them once for all (`Warning::grouped`).
    pub fn note(&self) -> String {
        let under = if self.allocator_on {
            "without PyTorch's caching allocator, which the sanitizer stages turn off"
        } else if self.tool == Tool::Ncu {
            "under ncu's Python call stacks"
        } else {
            "under the tool's host call stacks"
        };
        let again = self.said(
            "with the allocator on",
            [
                "without host call stacks, whose Python frames keep tensors of the graphs' pool \
                 alive",
                "without Python call stacks, whose frames keep tensors of the graphs' pool alive",
            ],
        );
        let unseen = self.said(
            "an access past a tensor but inside the allocator's block was not seen",
            [
                "records name no launching line",
                "launches name no launching line",
            ],
        );
        format!(
            "the program's CUDA graphs failed {under} (it printed \"{}\"): run again {}; {}",
            self.sign,
            again.join(" and "),
            unseen.join(", and "),
        )
    }

    /// Of what can be said of each change, what is true of this one: the
    /// allocator's words when it is on again, then the stacks' words (a
    /// sanitizer's, ncu's) when they are off.
    fn said(&self, allocator: &'static str, stacks: [&'static str; 2]) -> Vec<&'static str> {
        let stacks = stacks[usize::from(self.tool == Tool::Ncu)];
        [(self.allocator_on, allocator), (self.stacks_off, stacks)]
            .into_iter()
            .filter_map(|(true_of_it, words)| true_of_it.then_some(words))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn command(argv: &str, allocator_off: bool) -> StageCommand {
        StageCommand {
            argv: argv.split(' ').map(OsString::from).collect(),
            env: if allocator_off {
                vec![(sanitizer::ALLOCATOR_OFF_VARIABLE.into(), "1".into())]
            } else {
                Vec::new()
            },
            ..StageCommand::default()
        }
    }

    fn words(command: &StageCommand) -> Vec<&str> {
        command.argv.iter().map(|a| a.to_str().unwrap()).collect()
    }

    fn printed(text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stderr"), text).unwrap();
        dir
    }

    const NOT_IN_POOL: &str = "RuntimeError: These storage data ptrs are not allocated in pool (0, 1) but should be {139}";
    const NOT_TRACKED: &str =
        "RuntimeError: Detected 1 tensor(s) in the cudagraph pool not tracked as outputs.";

    #[test]
    fn memcheck_runs_again_with_the_allocator_on_and_device_stacks_only() {
        let dir = printed(NOT_IN_POOL);
        let first = command("cs --tool memcheck --xml python3 t.py", true);
        let again = rerun(Tool::Memcheck, &first, ProcessEnd::Exited(1), dir.path()).unwrap();
        assert!(again.command.env.is_empty());
        let argv = words(&again.command);
        assert_eq!(
            argv[..5],
            ["cs", "--show-backtrace", "device", "--tool", "memcheck"]
        );
        let note = again.note();
        assert!(note.contains("not allocated in pool"), "{note}");
        assert!(note.contains("run again with the allocator on and without host call stacks"));
        assert!(note.contains("inside the allocator's block"), "{note}");
        assert!(note.contains("no launching line"), "{note}");
    }

    #[test]
    fn initcheck_already_without_host_stacks_only_turns_the_allocator_on() {
        let dir = printed(NOT_IN_POOL);
        let first = command(
            "cs --tool initcheck --show-backtrace device python3 t.py",
            true,
        );
        let again = rerun(Tool::Initcheck, &first, ProcessEnd::Exited(1), dir.path()).unwrap();
        assert_eq!(again.command.argv, first.argv);
        assert!(!again.note().contains("launching line"));
    }

    #[test]
    fn ncu_runs_again_without_python_call_stacks() {
        let dir = printed(NOT_TRACKED);
        let first = command(
            "ncu --call-stack --call-stack-type python -o r python3 t.py",
            false,
        );
        let again = rerun(Tool::Ncu, &first, ProcessEnd::Exited(1), dir.path()).unwrap();
        let argv = words(&again.command);
        assert_eq!(argv, ["ncu", "-o", "r", "python3", "t.py"]);
        assert!(
            again
                .note()
                .starts_with("the program's CUDA graphs failed under ncu's Python call stacks")
        );
    }

    #[test]
    fn a_capture_refused_without_the_allocator_runs_again_with_it_and_keeps_host_stacks() {
        let refused = printed(
            "========= Program hit cudaErrorStreamCaptureUnsupported (error 900) due to \
             \"operation not permitted when stream is capturing\" on CUDA API call to cudaMalloc.",
        );
        let first = command("cs --tool memcheck python3 t.py", true);
        let again = rerun(
            Tool::Memcheck,
            &first,
            ProcessEnd::Exited(86),
            refused.path(),
        )
        .unwrap();
        assert!(again.command.env.is_empty());
        assert_eq!(again.command.argv, first.argv);
        assert!(!again.note().contains("launching line"));
        // With the allocator on already, the refusal is the program's own
        // (a synchronisation inside its capture).
        let on = command("cs --tool memcheck python3 t.py", false);
        assert!(rerun(Tool::Memcheck, &on, ProcessEnd::Exited(86), refused.path()).is_none());
        assert!(rerun(Tool::Ncu, &on, ProcessEnd::Exited(1), refused.path()).is_none());
    }

    #[test]
    fn no_second_try_when_nothing_can_change_or_the_graphs_did_not_fail() {
        // Already without the settings: the failure is the program's own.
        let dir = printed(NOT_TRACKED);
        let bare = command("cs --show-backtrace no --tool memcheck python3 t.py", false);
        assert!(rerun(Tool::Memcheck, &bare, ProcessEnd::Exited(1), dir.path()).is_none());
        let native = command("ncu --call-stack-type native python3 t.py", false);
        assert!(rerun(Tool::Ncu, &native, ProcessEnd::Exited(1), dir.path()).is_none());
        // Another failure, or none, or a stage that is no tool's.
        let stacks = command("cs --tool memcheck python3 t.py", true);
        let other = printed("RuntimeError: CUDA error: an illegal memory access");
        assert!(rerun(Tool::Memcheck, &stacks, ProcessEnd::Exited(1), other.path()).is_none());
        assert!(rerun(Tool::Memcheck, &stacks, ProcessEnd::Exited(0), dir.path()).is_none());
        assert!(rerun(Tool::Plain, &stacks, ProcessEnd::Exited(1), dir.path()).is_none());
    }
}
