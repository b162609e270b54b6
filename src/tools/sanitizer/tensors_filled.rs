//! Whether an ATen kernel's uninitialised read at the user's line is the
//! user's tensor or the kernel's own scratch memory. Both look the same
//! to initcheck: ATen's `reduce_kernel` at the PC of its input read or of
//! its staging read, launched from `X.mean(0)`. ATen's reduction over many
//! rows into a number of outputs that is not a multiple of its vector
//! width reads the unused lanes of its staging buffer from the block that
//! finishes last, in a correct program (a tabular script's `X.mean(0)`,
//! `X.std(0)`: tests/gpu/real/train_tabular.py; a GNN's bias gradients;
//! tests/gpu/probes/reduce_staging.py, H200). So when the stage holds
//! such a read, the program runs once more under initcheck with every
//! tensor PyTorch allocates filled (`torch.use_deterministic_algorithms`,
//! whose `fill_uninitialized_memory` writes each new tensor, set by the
//! hook): a read of a tensor the program left unwritten is gone from that
//! run, a read of memory no tensor holds is still there
//! (`Site::read_with_tensors_filled`, which `judge::owner` gives to the
//! framework).

use std::ffi::OsString;
use std::path::Path;

use cudawatch_model::{FindingKind, Report, Site, Tool};
use cudawatch_parsers::builder::ReportBuilder;

use super::host_stacks;
use crate::judge::owner::filled_by_pytorch;
use crate::tools::hook::{FILL_TENSORS, writing_to};
use crate::tools::{FollowUp, FollowUpContext, StageFiles};

/// The follow-up's name, and its folder in the stage's.
pub const NAME: &str = "tensors-filled";

/// The rerun with every tensor filled, when `report` (the stage's,
/// `host_stacks::stage_report`) holds a read in a PyTorch kernel that
/// counts as the user's call (one without a host stack does:
/// `judge::owner`), beside the rerun with host stacks. Not after a flood
/// (`host_stacks::FLOOD_RECORDS`: a run as long again), nor in a program
/// that never imported torch (nothing would be filled).
pub fn follow_up(stage: &FollowUpContext<'_>, report: &Report) -> Option<FollowUp> {
    let files = StageFiles::new(stage.stage_dir, stage.tool);
    if stage.tool != Tool::Initcheck
        || super::per_rank::ran_per_rank(&files)
        || !hook_fact(&files.path("hook.json"), "torch_imported")
        || host_stacks::flooded(report)
        || !report.findings.iter().any(users_aten_read)
    {
        return None;
    }
    let dir = stage.stage_dir.join(NAME);
    let argv = saving_to(&stage.command.argv, &dir.join(XML))?;
    let mut env = writing_to(&stage.command.env, &dir);
    env.retain(|(key, _)| key != FILL_TENSORS);
    env.push((FILL_TENSORS.into(), "1".into()));
    Some(FollowUp {
        name: NAME.into(),
        argv,
        env,
        env_remove: stage.command.env_remove.clone(),
        stdout: dir.join("stdout"),
        stderr: dir.join("stderr"),
        timeout: None,
    })
}

/// Marks the stage's reads that the rerun read uninitialised too; how
/// many. None when the rerun's hook did not say it filled the tensors
/// (an old torch, a program that turned the fill off): then a read still
/// there says nothing.
pub fn mark(builder: &mut ReportBuilder, files: &StageFiles, tool: Tool) -> usize {
    if tool != Tool::Initcheck
        || !files.path(NAME).join(XML).exists()
        || !hook_fact(&files.path(NAME).join("hook.json"), "tensors_filled")
    {
        return 0;
    }
    let mut rerun = ReportBuilder::new(env!("CARGO_PKG_VERSION"));
    super::read_output(
        &mut rerun,
        files,
        tool,
        &format!("{NAME}/{XML}"),
        &format!("{NAME}/stdout"),
    );
    builder.read_with_tensors_filled(tool, &rerun.finish())
}

/// The stage reason's words for [`mark`]'s count.
pub fn reason(marked: usize) -> Option<String> {
    (marked > 0).then(|| {
        format!(
            "{} read uninitialised again with every tensor PyTorch allocates filled \
             ({NAME}/{XML}): memory no tensor holds, the kernel's own",
            crate::words::plural(marked as u64, "site")
        )
    })
}

const XML: &str = "initcheck.xml";

/// A read in one of PyTorch's kernels that counts as the user's call.
fn users_aten_read(site: &Site) -> bool {
    site.kind == FindingKind::UninitializedRead
        && site
            .owner
            .as_ref()
            .is_some_and(|o| o.user_call && filled_by_pytorch(o.owner, &o.component))
}

/// Whether the hook's facts file says `fact` is true.
fn hook_fact(path: &Path, fact: &str) -> bool {
    crate::safe_files::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .is_some_and(|facts| facts[fact] == true)
}

/// The stage's argv saving its XML to `xml` instead; `None` without a
/// `--save`.
fn saving_to(argv: &[OsString], xml: &Path) -> Option<Vec<OsString>> {
    let at = argv.iter().position(|a| a == "--save")?;
    let mut out = argv.to_vec();
    *out.get_mut(at + 1)? = xml.into();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::sanitizer::argv_of as words;

    #[test]
    fn the_rerun_is_the_stage_saving_elsewhere() {
        let stage = words(
            "cs --tool initcheck --xml --save /r/initcheck/initcheck.xml --print-limit 0 \
             --show-backtrace no python3 train.py --save model.pt",
        );
        assert_eq!(
            saving_to(
                &stage,
                Path::new("/r/initcheck/tensors-filled/initcheck.xml")
            ),
            Some(words(
                "cs --tool initcheck --xml --save /r/initcheck/tensors-filled/initcheck.xml \
                 --print-limit 0 --show-backtrace no python3 train.py --save model.pt"
            ))
        );
        assert_eq!(
            saving_to(&words("cs --tool initcheck p"), Path::new("x")),
            None
        );
    }

    /// What the follow-up is for the initcheck stage captured in
    /// sample-reports/outside/`case`/run/initcheck (its command and
    /// variables from its stage.json).
    fn planned(case: &str) -> Option<FollowUp> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("sample-reports/outside")
            .join(case)
            .join("run/initcheck");
        let stage: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("stage.json")).unwrap()).unwrap();
        let strings = |key: &str| -> Vec<String> {
            stage[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        };
        let command = crate::tools::StageCommand {
            argv: strings("command").into_iter().map(OsString::from).collect(),
            env: strings("env")
                .iter()
                .filter_map(|e| e.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        };
        let tools = crate::tools::ToolPaths::resolve(None, None);
        let stage = FollowUpContext {
            tool: Tool::Initcheck,
            stage_dir: &dir,
            command: &command,
            tools: &tools,
            keep_dumps: false,
        };
        follow_up(&stage, &host_stacks::stage_report(&stage))
    }

    #[test]
    fn the_captured_stages_ask_for_the_rerun_where_atens_reads_are_the_users_call() {
        // A tabular script's `X.mean(0)` (H200): ATen's reads, one
        // launch's records dropped, no flood.
        let rerun = planned("tabular_standardise").expect("a rerun with tensors filled");
        let filled = |rerun: &FollowUp, key: &str| {
            rerun
                .env
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(filled(&rerun, FILL_TENSORS).as_deref(), Some("1"));
        let hook_out = filled(&rerun, "CUDAWATCH_HOOK_OUT").unwrap();
        assert!(hook_out.ends_with("initcheck/tensors-filled"), "{hook_out}");
        let save = rerun.argv.iter().position(|a| a == "--save").unwrap();
        assert!(
            Path::new(&rerun.argv[save + 1]).ends_with("tensors-filled/initcheck.xml"),
            "{:?}",
            rerun.argv
        );
        // A GNN's reads on autograd's thread, without a stack: the user's
        // call until shown otherwise, so asked too.
        assert!(planned("gnn_backward_reduce").is_some());
        // A column nobody wrote: 300,980 records, a flood, no rerun.
        assert!(planned("tabular_missing_feature").is_none());
    }

    #[test]
    fn only_a_pytorch_kernels_read_at_the_users_line_asks_for_it() {
        use cudawatch_model::Owner;
        let read = |component: &str, owner: Owner, user_call: bool| {
            let mut site = cudawatch_parsers::site::new_site(
                Tool::Initcheck,
                FindingKind::UninitializedRead,
                cudawatch_model::Severity::Error,
                "read".into(),
            );
            site.owner = Some(cudawatch_model::Ownership {
                owner,
                component: component.into(),
                because: String::new(),
                user_call,
            });
            site
        };
        assert!(users_aten_read(&read(
            "PyTorch ATen",
            Owner::Framework,
            true
        )));
        // Not ATen's at the user's line: autograd's thread, CuPy's kernel
        // (the fill is PyTorch's), a library's, the user's own kernel.
        assert!(!users_aten_read(&read(
            "PyTorch ATen",
            Owner::Framework,
            false
        )));
        assert!(!users_aten_read(&read("CuPy", Owner::Framework, true)));
        assert!(!users_aten_read(&read("cuDNN", Owner::Library, true)));
        assert!(!users_aten_read(&read("user", Owner::User, true)));
    }
}
