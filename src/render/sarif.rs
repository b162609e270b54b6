//! SARIF 2.1.0, as GitHub code scanning reads it: one run per tool, a rule
//! per finding kind, one result per site (never per thread: GitHub caps a
//! run at 25,000 results), repository-relative paths, and the site id as a
//! partial fingerprint so alerts follow a bug across commits.

use std::collections::BTreeMap;

use cudawatch_model::{
    FindingKind, Judgement, Outcome, ProcessEnd, Report, Severity, Site, StageReport, Tool,
};
use serde_json::{Value, json};

use super::{Exporter, Judged, relative_to_cwd};

/// `--report sarif`.
pub struct SarifExporter;

impl Exporter<Judged<'_>> for SarifExporter {
    fn render(&self, doc: &Judged<'_>) -> Vec<u8> {
        let (report, judgement) = (doc.report, doc.judgement);
        let mut by_tool: BTreeMap<Tool, Vec<&Site>> = BTreeMap::new();
        for site in &report.findings {
            by_tool.entry(site.tool).or_default().push(site);
        }
        // A stage that ran clean still gets a run, so code scanning closes
        // the alerts it fixed.
        for stage in &report.stages {
            by_tool.entry(stage.tool).or_default();
        }
        let runs: Vec<Value> = by_tool
            .iter()
            .map(|(tool, sites)| run(report, judgement, *tool, sites))
            .collect();
        let mut log = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": runs,
        });
        // SARIF has no place for a checklist; the log's property bag keeps
        // it with the results, the same items every other format shows.
        if !judgement.checklist.is_empty() {
            let items: Vec<Value> = judgement
                .checklist
                .iter()
                .map(|i| json!({ "id": i.id, "title": i.title, "status": i.status.name(), "evidence": i.evidence }))
                .collect();
            log["properties"] = json!({ "checklist": items });
        }
        drop_nulls(&mut log);
        let mut bytes = serde_json::to_vec_pretty(&log).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

fn run(report: &Report, judgement: &Judgement, tool: Tool, sites: &[&Site]) -> Value {
    let mut kinds: Vec<&FindingKind> = sites.iter().map(|s| &s.kind).collect();
    kinds.sort();
    kinds.dedup();
    let rules: Vec<Value> = kinds
        .iter()
        .map(|k| {
            json!({
                "id": k.id(),
                // SARIF wants `name` readable and different from the opaque
                // `id` (the official validator warns otherwise, SARIF1001).
                // (`leak` vs `Leak` still counts as identical), hence the tool.
                "name": format!("{}{}", pascal_case(tool.name()), pascal_case(k.id())),
                "shortDescription": { "text": description(k) },
                "helpUri": super::describe::topic_link(k.id()),
                "defaultConfiguration": { "level": if **k == FindingKind::UncoalescedAccess { "warning" } else { "error" } },
            })
        })
        .collect();
    let results: Vec<Value> = sites.iter().map(|s| result(s, judgement)).collect();
    let mut run = json!({
        "tool": { "driver": {
            "name": format!("cudawatch-{}", tool.name()),
            "version": report.cudawatch_version,
            "informationUri": super::describe::docs_base(),
            "rules": rules,
        }},
        "automationDetails": { "id": format!("cudawatch/{}/", tool.name()) },
        // Left for the consumer to resolve (code scanning: the checkout),
        // rather than pinned to this machine's directory.
        "originalUriBaseIds": { "%SRCROOT%": {
            "description": { "text": "The directory cudawatch ran in: the repository root in CI" }
        }},
        "results": results,
    });
    if let Some(stage) = report.stages.iter().find(|s| s.tool == tool) {
        run["invocations"] = json!([invocation(stage)]);
    }
    run
}

/// How the stage ended: a stage that could not really check the program
/// is not a successful execution, and says why where code scanning shows
/// tool status.
fn invocation(stage: &StageReport) -> Value {
    let checked = !matches!(stage.outcome, Outcome::Inconclusive | Outcome::ToolFailed);
    let mut invocation = json!({
        "executionSuccessful": checked,
        "properties": { "outcome": stage.shown_outcome(), "reason": stage.shown_reason() },
    });
    if let Some(ProcessEnd::Exited(code)) = stage.end {
        invocation["exitCode"] = json!(code);
    }
    if !checked {
        invocation["toolExecutionNotifications"] = json!([{
            "level": "error",
            "message": { "text": format!("{} {}: {}", stage.tool.name(), stage.shown_outcome(), stage.shown_reason()) },
        }]);
    }
    invocation
}

fn result(site: &Site, judgement: &Judgement) -> Value {
    // What does not gate (library internals outside the gate's scope, and
    // what follows a root cause) is a note, so code scanning does not
    // raise an alert for cuDNN's internals or for every 719 after a fault.
    let gating_scope = site.consequence_of.is_none() && !judgement.out_of_scope.contains(&site.id);
    let level = match site.severity {
        _ if !gating_scope => "note",
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    };
    let mut text = site.message.clone();
    if let Some(kernel) = &site.kernel {
        text.push_str(&format!(" in kernel {kernel}"));
    }
    text.push_str(&format!(
        " ({} occurrence{})",
        site.count_text(),
        if site.count == 1 { "" } else { "s" }
    ));
    if let Some(frame) = site.python_frame.as_ref().or(site.launch_frame.as_ref()) {
        text.push_str(&format!(
            "; launched from {frame}{}",
            super::describe::seen_by_note(site)
        ));
    }
    // A reviewer reading the alert sees why it may not be a bug.
    if let Some(doubt) = &site.doubt {
        text.push_str(&format!("; doubt: {doubt}"));
    }
    let mut result = json!({
        "ruleId": site.kind.id(),
        "level": level,
        "message": { "text": text },
        "partialFingerprints": { "cudawatchSite/v1": site.id },
        "properties": {
            "count": site.count,
            "tool": site.tool.name(),
            "owner": site.owner.as_ref().map(|o| o.owner.name()),
            "component": site.owner.as_ref().map(|o| &o.component),
            "consequenceOf": site.consequence_of,
            "explain": super::describe::explanation(site).1,
        },
    });
    // A multi-process program's ranks, pids and GPUs, where known.
    if !site.processes.is_empty() {
        result["properties"]["processes"] = json!(site.processes);
    }
    // Prefer the user's own Python line when the kernel's line is in a library.
    let location = site
        .location
        .as_ref()
        .map(|l| (l.file.clone(), l.line))
        .or_else(|| {
            site.python_frame
                .as_ref()
                .and_then(|f| Some((f.file.clone()?, f.line?)))
        });
    if let Some((file, line)) = location {
        let (uri, relative) = relative_to_cwd(&file);
        let mut artifact = json!({ "uri": uri });
        if relative {
            artifact["uriBaseId"] = json!("%SRCROOT%");
        } else {
            artifact["uri"] = json!(format!("file://{uri}"));
        }
        result["locations"] = json!([{
            "physicalLocation": { "artifactLocation": artifact, "region": { "startLine": line.max(1) } }
        }]);
    }
    if site.in_baseline {
        result["baselineState"] = json!("unchanged");
    }
    if let Some(reason) = &site.suppressed {
        result["suppressions"] = json!([{ "kind": "external", "justification": reason }]);
    }
    result
}

fn description(kind: &FindingKind) -> &'static str {
    match kind {
        FindingKind::InvalidAccess => "A kernel read or wrote memory it does not own",
        FindingKind::DeviceException => {
            "A hardware exception in a kernel, such as a failed device assert"
        }
        FindingKind::ApiError => "A CUDA API call returned an error",
        FindingKind::Leak => "Device memory allocated and never freed",
        FindingKind::UninitializedRead => "A kernel read device memory that nothing wrote",
        FindingKind::UninitializedCopy => {
            "A CUDA API call (a copy or a set) read device memory that nothing wrote"
        }
        FindingKind::StackOverflow => "A thread ran out of its call stack",
        FindingKind::HardwareStackError => "The GPU's call-return stack overflowed",
        FindingKind::IllegalInstruction => "A kernel ran an instruction the GPU cannot execute",
        FindingKind::InvalidPc => "A kernel jumped to an address that holds no code",
        FindingKind::InvalidAddressSpace => {
            "An instruction used an address of a memory space it cannot access"
        }
        FindingKind::Trap => "A kernel executed a trap or breakpoint instruction",
        FindingKind::DeviceHeapError => {
            "malloc or free in a kernel misused (double free, bad pointer)"
        }
        FindingKind::UnusedMemory => "An allocation that was never used",
        FindingKind::BarrierError => "A barrier misused, e.g. __syncthreads() in divergent code",
        FindingKind::Race => "A shared-memory race between two accesses",
        FindingKind::GlobalRace => {
            "Two threads touched one word of global memory, one writing, nothing ordering them"
        }
        FindingKind::StreamRace => {
            "Two streams touch one tensor with nothing ordering them (PyTorch CSAN)"
        }
        FindingKind::MemoryGrowth => {
            "GPU memory still allocated after each optimizer step grows step over step"
        }
        FindingKind::OomNotRecovered => {
            "Under a memory cap below its peak, the program ran out of memory and did not recover"
        }
        FindingKind::Hazard => "A shared-memory hazard between two threads",
        FindingKind::CudaError => "The program reported a CUDA error",
        FindingKind::DeviceAssert => "A device-side assert failed",
        FindingKind::OutOfMemory => "The program ran out of GPU memory",
        FindingKind::LibraryError => "A CUDA library returned an error status",
        FindingKind::NoKernelImage => "The program has no kernel image for this GPU",
        FindingKind::DriverVersion => "The CUDA driver is too old for the runtime",
        FindingKind::PythonException => "The program raised a Python exception",
        FindingKind::UncoalescedAccess => "Global memory accesses waste sectors",
        FindingKind::CollectiveTimeout => {
            "A rank waited in a collective another rank never entered, until the timeout"
        }
        FindingKind::Unrecognised => "A tool record cudawatch does not know",
    }
}

/// `invalid_access` → `InvalidAccess`.
fn pascal_case(id: &str) -> String {
    id.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Removes every `null` member: SARIF has no null values (an absent
/// `helpUri` is left out, never `null`), and its validators reject them.
pub fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.retain(|_, v| !v.is_null());
            members.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}
