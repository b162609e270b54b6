//! Folding every tool's output into one [`Report`].
//!
//! The builder is fed one tool at a time (a sanitizer's XML and text
//! together, ncu's pages together, a program's output) and returns, for each,
//! the evidence a caller needs to judge whether the tool really checked
//! anything. Judging is the caller's job; the builder only reads and folds.

use std::collections::HashMap;
use std::io::BufRead;

use crate::error::ParseError;
use crate::model::{
    FindingKind, Input, InputKind, KernelCoalescing, NearestAllocation, Report, Severity, Site,
    SourceLocation, Tool, ToolSummary, Warning,
};
use crate::sanitizer::{self, Record};
use crate::site::{Folder, new_site, simple_kernel_name, site_id};
use crate::{ncu, program};

/// A named input held in memory.
pub type Named<'a> = (&'a str, &'a [u8]);

/// What one compute-sanitizer run's outputs showed.
#[derive(Debug, Clone, Default)]
pub struct SanitizerEvidence {
    /// The text's summary lines.
    pub summary: ToolSummary,
    /// Records in the XML, if there was one that opened.
    pub xml_records: Option<u64>,
    /// Records in the text.
    pub text_records: u64,
    /// The XML broke off or went bad after it started.
    pub xml_broken: Option<ParseError>,
    /// Records folded into the report from this run.
    pub folded: u64,
    /// The tool's own failures among its records ("Internal Sanitizer
    /// Error: ... didn't track the launch"), each message with how many
    /// records said it: what it did not check, never a finding.
    pub tool_errors: Vec<(String, u64)>,
    /// Launches whose records the tool dropped when its error buffer
    /// overflowed (it kept each one's first 256): the counts of this
    /// run's sites are lower bounds, and `summary.skipped` the rest.
    pub overflowed_launches: u64,
}

/// What one ncu run's outputs showed.
#[derive(Debug, Clone, Default)]
pub struct NcuEvidence {
    /// ncu's console summary, if its log was given.
    pub summary: ToolSummary,
    /// Kernel launches in the raw page.
    pub kernels: usize,
    /// Launches with at least one coalescing figure (sectors of loads or
    /// stores, or SourceCounters' sector totals).
    pub measured: usize,
    /// Pages that could not be read.
    pub errors: Vec<(String, ParseError)>,
    /// Launches of the raw page that could not be read, each named with
    /// why (`ncu::raw::RawPage::unreadable`): not judged, so the stage
    /// cannot vouch for them.
    pub unreadable: Vec<String>,
}

/// Builds a [`Report`] from tool outputs.
#[derive(Clone)]
pub struct ReportBuilder {
    report: Report,
    folder: Folder,
}

impl ReportBuilder {
    /// A builder for a report of this cudawatch version.
    pub fn new(cudawatch_version: &str) -> ReportBuilder {
        ReportBuilder {
            report: Report::new(cudawatch_version),
            folder: Folder::default(),
        }
    }

    /// Records a warning.
    pub fn warn(&mut self, source: &str, message: String) {
        self.report.warnings.push(Warning {
            source: source.to_string(),
            message,
        });
    }

    /// Records a file that was given but could not be read as `kind`: it
    /// stands among the inputs with no records, beside the reason, so a
    /// report of the other files is never taken for the whole story.
    pub fn unreadable(&mut self, path: &str, kind: InputKind, tool: Tool, message: String) {
        self.input(path, kind, tool, 0);
        self.warn(path, message);
    }

    fn input(&mut self, path: &str, kind: InputKind, tool: Tool, records: u64) {
        self.report.inputs.push(Input {
            path: path.to_string(),
            kind,
            tool,
            records,
            summary: None,
        });
    }

    /// Folds one compute-sanitizer run: its XML (streamed) and its text.
    ///
    /// The XML is preferred (full paths and stacks); the text supplies the
    /// summary lines and the nearest-allocation distances, and its records
    /// stand in when the XML is missing or broke off early.
    pub fn sanitizer<R: BufRead>(
        &mut self,
        tool: Tool,
        xml: Option<(&str, R)>,
        text: Option<Named<'_>>,
    ) -> SanitizerEvidence {
        self.sanitizer_of(tool, xml, text, None)
    }

    /// [`Self::sanitizer`] for the output of one process's own
    /// compute-sanitizer (a rank of a launcher, run under a frontend of its
    /// own): every site it holds names `process`.
    pub fn sanitizer_of<R: BufRead>(
        &mut self,
        tool: Tool,
        xml: Option<(&str, R)>,
        text: Option<Named<'_>>,
        process: Option<&crate::model::ProcessRef>,
    ) -> SanitizerEvidence {
        let mut evidence = SanitizerEvidence::default();
        let mut text_records: Vec<Record> = Vec::new();
        if let Some((name, bytes)) = text {
            evidence.summary = sanitizer::text::parse(bytes, |r| text_records.push(r));
            evidence.text_records = text_records.len() as u64;
            self.input(name, InputKind::SanitizerText, tool, evidence.text_records);
        }
        let hints: HashMap<u64, NearestAllocation> = text_records
            .iter()
            .filter_map(|r| Some((r.address?, r.nearest_allocation.clone()?)))
            .collect();
        // The text names kernels by full signature, the XML by bare name:
        // the signature keeps the namespace that says whose kernel it is.
        let signatures = crate::site::signatures_by_bare_name(
            text_records.iter().filter_map(|r| r.func.as_deref()),
        );
        let mut xml_folder = Folder::default();
        let mut xml_name = None;
        if let Some((name, reader)) = xml {
            xml_name = Some(name.to_string());
            xml_folder = self.sanitizer_xml(tool, name, reader, &mut evidence);
        }
        let use_xml = match evidence.xml_records {
            Some(n) => evidence.xml_broken.is_none() || n >= evidence.text_records,
            None => false,
        };
        let mut stage = if use_xml {
            xml_folder
        } else {
            if xml_name.is_some() && evidence.text_records > 0 {
                let name = xml_name.as_deref().unwrap_or_default();
                self.warn(
                    name,
                    format!(
                        "used the {} records of the text log instead",
                        evidence.text_records
                    ),
                );
            }
            let mut folder = Folder::default();
            for record in text_records {
                sanitizer::fold::add_record(&mut folder, tool, record);
            }
            folder
        };
        stage.enrich_allocations(&hints);
        stage.enrich_signatures(&signatures);
        evidence.folded = stage.record_count();
        evidence.tool_errors = stage.tool_errors().to_vec();
        evidence.overflowed_launches = stage.overflows();
        if evidence.overflowed_launches > 0 || evidence.summary.skipped.is_some_and(|n| n > 0) {
            stage.counts_at_least();
        }
        for (message, _) in &evidence.tool_errors {
            if !evidence.summary.failures.iter().any(|f| f == message) {
                evidence.summary.failures.push(message.clone());
            }
        }
        let source =
            xml_name.unwrap_or_else(|| text.map(|(n, _)| n.to_string()).unwrap_or_default());
        // The log's own totals go beside its records in the report.
        if let Some((name, _)) = text
            && let Some(input) = self.report.inputs.iter_mut().rev().find(|i| i.path == name)
            && evidence.summary != ToolSummary::default()
        {
            input.summary = Some(evidence.summary.clone());
        }
        self.sanitizer_summary(tool, &source, &evidence, &mut stage);
        for mut site in stage.finish() {
            if let Some(process) = process {
                site.processes = vec![process.clone()];
            }
            self.folder.add_site(site);
        }
        evidence
    }

    /// One compute-sanitizer XML, streamed into a folder of its own; how
    /// many records it held and where it broke off go into `evidence`.
    fn sanitizer_xml<R: BufRead>(
        &mut self,
        tool: Tool,
        name: &str,
        reader: R,
        evidence: &mut SanitizerEvidence,
    ) -> Folder {
        let mut xml_folder = Folder::default();
        // Large files are common (one record per faulting thread), and
        // their blocks parse independently: use every core.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        let parsed = sanitizer::xml::parse_parallel(
            reader,
            threads,
            Folder::default,
            |folder, raw| sanitizer::fold::add_raw(folder, tool, raw),
            |folder| xml_folder.absorb(folder),
        );
        match parsed {
            Ok(read) => {
                evidence.xml_records = Some(read.records);
                self.input(name, InputKind::SanitizerXml, tool, read.records);
                if let Some(broken) = &read.broken {
                    self.warn(
                        name,
                        format!(
                            "{broken}; kept the {} complete records before it",
                            read.records
                        ),
                    );
                }
                evidence.xml_broken = read.broken;
            }
            Err(e) => {
                let message = format!("not compute-sanitizer XML: {e}");
                self.unreadable(name, InputKind::SanitizerXml, tool, message);
            }
        }
        xml_folder
    }

    /// What a sanitizer's summary lines say beyond its records: its own
    /// failures, a leak whose records a print limit cut, and records it
    /// counted but did not print; warnings on `source`, the leak a site.
    fn sanitizer_summary(
        &mut self,
        tool: Tool,
        source: &str,
        evidence: &SanitizerEvidence,
        stage: &mut Folder,
    ) {
        // What the tool said about itself: it did not really check (never
        // attached, crashed, rejected its options). Never a clean log.
        for line in &evidence.summary.failures {
            self.warn(source, format!("compute-sanitizer: {line}"));
        }
        // A LEAK SUMMARY whose records were cut by a print limit is still a
        // leak, with its bytes and allocations.
        if let Some((bytes, allocations)) = evidence.summary.leaked
            && bytes > 0
            && !stage.sites().iter().any(|s| s.kind == FindingKind::Leak)
        {
            let mut site = new_site(
                tool_of(tool, Tool::Memcheck),
                FindingKind::Leak,
                Severity::Error,
                format!(
                    "{bytes} bytes leaked in {allocations} allocation{} (the LEAK SUMMARY; its records were not printed)",
                    if allocations == 1 { "" } else { "s" }
                ),
            );
            site.bytes = Some(bytes);
            site.count = allocations.max(1);
            site.id = site_id(&site, "leak-summary");
            stage.add_site(site);
        }
        if let Some(n) = evidence.summary.not_printed {
            self.warn(
                source,
                format!("the log says {n} errors were not printed: rerun with --print-limit 0 to see them all"),
            );
        }
        if let (Some(errors), Some(records)) = (evidence.summary.errors, evidence.xml_records)
            && errors > records
            && evidence.summary.not_printed.is_none()
        {
            self.warn(
                source,
                format!("ERROR SUMMARY says {errors} errors but the XML holds {records} records"),
            );
        }
    }

    /// Reads ncu's call stacks (the details page as text, `--call-stack`)
    /// into the launches already read from its raw page, in the report's
    /// order: each launch gets the frame that launched it, and each ncu
    /// site of that kernel its frames (so its owner and the user's line
    /// come from the call stack, not the kernel's name). Returns how many
    /// launches got a frame.
    pub fn ncu_stacks(&mut self, name: &str, text: &[u8]) -> usize {
        let launches = ncu::stacks::parse(&String::from_utf8_lossy(text));
        self.input(name, InputKind::NcuStacks, Tool::Ncu, launches.len() as u64);
        let mut next = 0;
        let mut placed = 0;
        let rows = &mut self.report.coalescing;
        for row in rows.iter_mut() {
            // In order; a launch of another shape is skipped, never paired.
            let Some(at) = launches[next.min(launches.len())..]
                .iter()
                .position(|l| {
                    // The text and the CSV spell long signatures apart at
                    // times; the simple name and the shape must agree.
                    l.grid == row.grid
                        && l.block == row.block
                        && crate::site::simple_kernel_name(&l.kernel)
                            == crate::site::simple_kernel_name(&row.kernel)
                })
                .map(|i| i + next)
            else {
                continue;
            };
            next = at + 1;
            let frames = host_frames(&launches[at]);
            let launched = launching_frame(&frames, &row.kernel);
            placed += usize::from(launched.is_some());
            for site in self.folder.sites_mut().filter(|s| {
                s.tool == Tool::Ncu
                    && s.host_frames.is_empty()
                    && s.kernel.as_deref() == Some(row.kernel.as_str())
            }) {
                site.python_frame = launched.clone().filter(|f| f.is_python());
                site.launch_frame = launched.clone().filter(|f| !f.is_python());
                site.host_frames = frames.clone();
            }
            row.launched_from = launched;
        }
        placed
    }

    /// Folds one ncu run: raw page (coalescing per kernel), details page
    /// (rule results), source pages (per-line waste) and ncu's console log.
    pub fn ncu(
        &mut self,
        raw: Option<Named<'_>>,
        details: Option<Named<'_>>,
        sources: &[Named<'_>],
        log: Option<Named<'_>>,
    ) -> NcuEvidence {
        let mut evidence = NcuEvidence::default();
        if let Some((name, bytes)) = log {
            evidence.summary = ncu::log::parse(bytes);
            let profiled = evidence.summary.kernels_profiled.unwrap_or(0);
            self.input(name, InputKind::NcuLog, Tool::Ncu, profiled);
        }
        let kernels = self.ncu_launches(raw, details, &mut evidence);
        let mut lines = self.ncu_source_lines(sources, &mut evidence);
        let worst_line = |kernel: &str| {
            lines
                .iter()
                .find(|l| simple_kernel_name(&l.kernel) == simple_kernel_name(kernel))
                .map(|l| l.location.clone())
        };
        // The launches ncu's own rule judged: the rest are judged here.
        let mut ruled: Vec<u64> = Vec::new();
        if let Some((name, bytes)) = details {
            match ncu::details::parse(bytes) {
                Ok(rules) => {
                    self.input(name, InputKind::NcuDetails, Tool::Ncu, rules.len() as u64);
                    for rule in rules.iter().filter(|r| r.rule == UNCOALESCED_RULE) {
                        ruled.push(rule.launch_id);
                        let launch = kernels.iter().find(|k| k.launch_id == rule.launch_id);
                        if launch.is_some_and(negligible_waste) {
                            continue;
                        }
                        let worst = worst_line(&rule.kernel);
                        self.folder.add_site(uncoalesced_site(rule, worst));
                    }
                }
                Err(e) => {
                    let message = format!("could not read ncu details page: {e}");
                    self.unreadable(name, InputKind::NcuDetails, Tool::Ncu, message);
                    evidence.errors.push((name.to_string(), e));
                }
            }
        }
        // ncu runs its UncoalescedGlobalAccess rule only with NVIDIA's
        // SourceCounters section; profiled with cudawatch's leaner one, the
        // same judgement comes from the same totals on the raw page.
        if raw.is_some_and(|(_, bytes)| ncu::raw::has_source_totals(bytes)) {
            for kernel in kernels.iter().filter(|k| !ruled.contains(&k.launch_id)) {
                if let Some(rule) = rule_from_totals(kernel) {
                    let worst = worst_line(&rule.kernel);
                    self.folder.add_site(uncoalesced_site(&rule, worst));
                }
            }
        }
        lines.sort_by(|a, b| b.excessive_sectors.total_cmp(&a.excessive_sectors));
        self.report.coalescing.extend(kernels);
        self.report.wasteful_lines.extend(lines);
        evidence
    }

    /// The launches of ncu's raw page (or, without one, of the details
    /// page's metric rows); a page read whose launches have no sector
    /// figure is said, so that it never passes as clean.
    fn ncu_launches(
        &mut self,
        raw: Option<Named<'_>>,
        details: Option<Named<'_>>,
        evidence: &mut NcuEvidence,
    ) -> Vec<KernelCoalescing> {
        let mut kernels: Vec<KernelCoalescing> = Vec::new();
        // `ncu --csv --metrics ...` prints the details page by default: its
        // metric rows are the measurement when there is no raw page.
        if raw.is_none()
            && let Some((_, bytes)) = details
        {
            kernels = ncu::details::coalescing(bytes).unwrap_or_default();
        }
        if let Some((name, bytes)) = raw {
            match ncu::raw::read(bytes) {
                Ok(page) => {
                    let read = page.launches.len() as u64;
                    self.input(name, InputKind::NcuRaw, Tool::Ncu, read);
                    if let Some(first) = page.unreadable.first() {
                        self.warn(
                            name,
                            format!(
                                "{} of its launches could not be read and were not judged; \
                                 first: {first}",
                                page.unreadable.len()
                            ),
                        );
                    }
                    evidence.unreadable = page.unreadable;
                    kernels = page.launches;
                }
                Err(e) => {
                    let message = format!("could not read ncu raw page: {e}");
                    self.unreadable(name, InputKind::NcuRaw, Tool::Ncu, message);
                    evidence.errors.push((name.to_string(), e));
                }
            }
        }
        evidence.kernels = kernels.len();
        // A launch with any sector count says something of coalescing.
        let measured = |k: &&KernelCoalescing| {
            k.load.sectors.is_some() || k.store.sectors.is_some() || k.total_sectors.is_some()
        };
        evidence.measured = kernels.iter().filter(measured).count();
        if let Some((name, bytes)) = raw
            && evidence.measured < evidence.kernels
        {
            // Read, but not about coalescing. Saying so keeps it from
            // passing as clean, with the remedy that fits: the page was
            // made without the sector metrics, or ncu measured nothing of
            // a launch (every metric `nan`: it faulted while profiled).
            let unmeasured = evidence.kernels - evidence.measured;
            let message = if !ncu::raw::has_sector_columns(bytes) {
                format!(
                    "none of its {} launches has a coalescing figure: profile with the l1tex sector metrics or the SourceCounters section",
                    evidence.kernels
                )
            } else {
                let first = kernels
                    .iter()
                    .find(|k| !measured(k))
                    .map_or("", |k| k.kernel.as_str());
                format!(
                    "ncu measured nothing of {} of its {} launches (every metric \"nan\": a launch that faults while profiled cannot be measured; fix the fault first), first: {first}",
                    unmeasured, evidence.kernels
                )
            };
            self.warn(name, message);
        }
        kernels
    }

    /// The per-line figures of ncu's source pages, each page an input.
    fn ncu_source_lines(
        &mut self,
        sources: &[Named<'_>],
        evidence: &mut NcuEvidence,
    ) -> Vec<crate::model::LineSectors> {
        let mut lines = Vec::new();
        for (name, bytes) in sources {
            match ncu::source::parse(bytes) {
                Ok(page) => {
                    self.input(
                        name,
                        InputKind::NcuSource,
                        Tool::Ncu,
                        page.lines.len() as u64,
                    );
                    if !page.skipped.is_empty() {
                        let message = match page.skipped.len() {
                            1 => "a row of ncu's source page could not be read and was skipped, the rest counted".to_string(),
                            n => format!("{n} rows of ncu's source page could not be read and were skipped, the rest counted"),
                        } + ": " + &page.skipped.join("; ");
                        self.warn(name, message);
                    }
                    lines.extend(page.lines);
                }
                Err(e) => {
                    let message = format!("could not read ncu source page: {e}");
                    self.unreadable(name, InputKind::NcuSource, Tool::Ncu, message);
                    evidence.errors.push((name.to_string(), e));
                }
            }
        }
        lines
    }

    /// Folds the race reports of PyTorch's CSAN from the output of a
    /// program run with `TORCH_CUDA_SANITIZER=1`; nothing else of that
    /// output (the plain run judges the program's own failures). Returns
    /// how many race sites it held.
    pub fn csan(&mut self, name: &str, bytes: &[u8]) -> usize {
        self.csan_sites(name, crate::csan::parse_output(bytes))
    }

    /// CSAN's race sites, parsed by [`crate::csan::parse_output`] and
    /// completed by the caller (the ranks its processes had); returns how
    /// many.
    pub fn csan_sites(&mut self, name: &str, sites: Vec<Site>) -> usize {
        self.program_sites(name, Tool::Csan, sites)
    }

    /// Folds a program's own output (the plain run's stderr and stdout).
    /// Returns how many findings it held.
    pub fn program_output(&mut self, name: &str, bytes: &[u8]) -> usize {
        self.program_sites(name, Tool::Plain, program::parse(bytes))
    }

    /// The sites of an earlier try of a stage (a tool that died after
    /// printing them, a flood stopped), read by the stage's own kind into a
    /// report of their own: those the report has not seen are added as they
    /// are, each marked with `only_in` (the try's folder and why it ran
    /// again); returns how many. A site the reported try saw too is not
    /// counted twice.
    pub fn earlier_try_sites(&mut self, sites: Vec<Site>, only_in: &str) -> u64 {
        let mut added = 0;
        for mut site in sites {
            if self.folder.knows_id(&site.id) {
                continue;
            }
            site.only_in_try = Some(only_in.to_string());
            self.folder.add_site(site);
            added += 1;
        }
        added
    }

    /// The plain run's sites, parsed by [`program::parse`] and completed by
    /// the caller (ranks, pids and GPUs it saw itself); returns how many.
    pub fn plain_sites(&mut self, name: &str, sites: Vec<Site>) -> usize {
        self.program_sites(name, Tool::Plain, sites)
    }

    fn program_sites(&mut self, name: &str, tool: Tool, sites: Vec<Site>) -> usize {
        self.input(name, InputKind::ProgramOutput, tool, sites.len() as u64);
        let n = sites.len();
        for site in sites {
            self.folder.add_site(site);
        }
        n
    }

    /// The global-race tool's lines (`crate::global_race`), its races
    /// placed on lines through `tables` (each module's SASS by its index);
    /// returns how many race sites.
    pub fn global_race(
        &mut self,
        name: &str,
        output: &crate::global_race::Output,
        tables: &std::collections::HashMap<u32, crate::global_race::LineTable>,
    ) -> usize {
        let sites = crate::global_race::sites(output, tables);
        self.input(
            name,
            InputKind::GlobalRace,
            Tool::GlobalRace,
            output.launches.len() as u64,
        );
        let n = sites.len();
        for site in sites {
            self.folder.add_site(site);
        }
        n
    }

    /// The core dump stage's sites, one per dump read
    /// ([`crate::coredump`]); returns how many.
    pub fn coredump_sites(&mut self, name: &str, sites: Vec<Site>) -> usize {
        self.program_sites(name, Tool::Coredump, sites)
    }

    /// Reads the memory stage's artifacts (`crate::memory`) into the
    /// report's memory account, adds the growth finding when memory grows,
    /// and returns the account. `expandable` is how the rerun with
    /// expandable segments went, when there was one.
    pub fn memory(
        &mut self,
        name: &str,
        artifacts: crate::memory::Artifacts<'_>,
        expandable: Option<bool>,
    ) -> crate::model::MemoryReport {
        let (mut memory, problems) = crate::memory::read_with_commands(
            &artifacts.hook,
            artifacts.ooms,
            artifacts.steps,
            artifacts.program_output,
            artifacts.commands,
        );
        let (processes, peak_problems) = crate::memory::process_peaks(artifacts.peaks);
        memory.processes = processes;
        let problems = problems.into_iter().chain(peak_problems);
        for oom in memory.ooms.iter_mut().filter(|o| o.fragmentation) {
            oom.expandable_helped = expandable;
        }
        let mut sites: Vec<Site> = memory
            .growth
            .iter()
            .map(crate::memory::growth_site)
            .collect();
        // The OOM is a finding of this stage only when no earlier stage
        // (the plain run) reported it: one failure, one site.
        let reported = self
            .sites()
            .iter()
            .any(|s| s.kind == crate::model::FindingKind::OutOfMemory);
        if !reported {
            sites.extend(memory.ooms.first().map(crate::memory::oom_site));
        }
        self.program_sites(name, Tool::Memory, sites);
        for problem in problems {
            self.report.warnings.push(crate::model::Warning {
                source: name.to_string(),
                message: format!("part of the memory stage's record could not be read: {problem}"),
            });
        }
        self.report.memory = Some(memory.clone());
        memory
    }

    /// Reads the oom-recovery stage's artifacts: the OOMs its hook saw under
    /// the cap (`ooms`), and, when `ended_by_oom`, the finding that the
    /// program did not recover. Returns how many OOMs were seen.
    pub fn oom_recovery(
        &mut self,
        name: &str,
        hook: &crate::memory::HookFacts,
        ooms: &[Vec<u8>],
        program_output: &str,
        ended_by_oom: bool,
    ) -> usize {
        let (memory, _) = crate::memory::read(hook, ooms, b"", program_output);
        let sites: Vec<Site> = memory
            .ooms
            .last()
            .filter(|_| ended_by_oom)
            .map(|oom| crate::memory::not_recovered_site(oom, hook.cap.as_ref()))
            .into_iter()
            .collect();
        self.program_sites(name, Tool::OomRecovery, sites);
        memory.ooms.len().max(hook.ooms as usize)
    }

    /// The sites folded so far.
    pub fn sites(&self) -> &[Site] {
        self.folder.sites()
    }

    /// Access to the report under construction (target, stages).
    pub fn report_mut(&mut self) -> &mut Report {
        &mut self.report
    }

    /// Gives `tool`'s sites that have no launching frames (a run without
    /// host call stacks) those of the site with the same id in `other`, a
    /// report of the same program's run with them; returns how many got
    /// them. Only frames move: counts, samples and severity stay this
    /// run's.
    pub fn launch_frames_from(&mut self, tool: Tool, other: &Report) -> usize {
        let placed: Vec<&crate::model::Site> = other
            .findings
            .iter()
            .filter(|s| s.tool == tool && !(s.python_frame.is_none() && s.launch_frame.is_none()))
            .collect();
        let mut by_id: HashMap<String, &crate::model::Site> =
            placed.iter().map(|s| (s.id.clone(), *s)).collect();
        // A host copy's site is one per calling line (`sanitizer::fold`),
        // so a stackless run's copies are one site whose id has no line:
        // it takes the line of the run with stacks where that run found
        // one copying line, not where it found several (which made which
        // of its records is unknown).
        let copies: Vec<&crate::model::Site> = placed
            .iter()
            .copied()
            .filter(|s| s.kind == FindingKind::UninitializedCopy)
            .collect();
        if let [only] = copies.as_slice() {
            by_id.entry(site_id(only, "")).or_insert(only);
        }
        // The other run's sites it kept no host stack for at all.
        let stackless: std::collections::HashSet<&str> = other
            .findings
            .iter()
            .filter(|s| s.tool == tool && s.host_frames.is_empty())
            .map(|s| s.id.as_str())
            .collect();
        let mut filled = 0;
        for site in self.folder.sites_mut() {
            if site.tool != tool || site.python_frame.is_some() || site.launch_frame.is_some() {
                continue;
            }
            if let Some(from) = by_id.get(&site.id) {
                site.python_frame = from.python_frame.clone();
                site.launch_frame = from.launch_frame.clone();
                site.host_frames = from.host_frames.clone();
                filled += 1;
            } else {
                site.stackless_with_stacks = stackless.contains(site.id.as_str());
            }
        }
        filled
    }

    /// Marks `tool`'s uninitialised reads that `other`, the same program's
    /// run with every tensor PyTorch allocates filled, read uninitialised
    /// too (`Site::read_with_tensors_filled`); returns how many.
    pub fn read_with_tensors_filled(&mut self, tool: Tool, other: &Report) -> usize {
        let again: std::collections::HashSet<&str> = other
            .findings
            .iter()
            .filter(|s| s.tool == tool && s.kind == FindingKind::UninitializedRead)
            .map(|s| s.id.as_str())
            .collect();
        let mut marked = 0;
        for site in self.folder.sites_mut() {
            if site.tool == tool
                && site.kind == FindingKind::UninitializedRead
                && again.contains(site.id.as_str())
            {
                site.read_with_tensors_filled = true;
                marked += 1;
            }
        }
        marked
    }

    /// The finished report, findings worst first.
    pub fn finish(mut self) -> Report {
        self.report.findings = self.folder.finish();
        crate::borrowed_frames::from_ncu_launches(&mut self.report);
        self.report
    }
}

/// The tool a record belongs to when the file did not say which sanitizer.
fn tool_of(tool: Tool, default: Tool) -> Tool {
    if tool == Tool::Sanitizer {
        default
    } else {
        tool
    }
}

/// Below this share of a launch's sectors, waste is no finding: ncu's rule
/// fires on any excessive sector (24 of 16,497 in ATen's Welford reduction,
/// "0% of the total", a warning on a correct test suite), and its own
/// speedup estimate for such a launch is under the share itself. The
/// coalescing table still shows the launch's figures.
const NEGLIGIBLE_WASTE_PCT: f64 = 1.0;

fn negligible_waste(kernel: &KernelCoalescing) -> bool {
    kernel
        .excessive_pct()
        .is_some_and(|pct| pct < NEGLIGIBLE_WASTE_PCT)
}

/// ncu's rule for launches whose global accesses move more sectors than
/// coalesced ones would.
const UNCOALESCED_RULE: &str = "UncoalescedGlobalAccess";

/// What ncu's UncoalescedGlobalAccess rule says of a launch, from the
/// totals it reads (any sector above the ideal), in its own words; no
/// speedup estimate, which only the rule computes.
fn rule_from_totals(kernel: &KernelCoalescing) -> Option<ncu::details::RuleResult> {
    let excessive = kernel.excessive_sectors.filter(|e| *e > 0.0)?;
    let total = kernel.total_sectors.filter(|t| *t > 0.0)?;
    if negligible_waste(kernel) {
        return None;
    }
    Some(ncu::details::RuleResult {
        launch_id: kernel.launch_id,
        kernel: kernel.kernel.clone(),
        rule: UNCOALESCED_RULE.to_string(),
        rule_type: "WRN".to_string(),
        description: format!(
            "This kernel has uncoalesced global accesses resulting in a total of {excessive:.0} \
             excessive sectors ({:.0}% of the total {total:.0} sectors).",
            100.0 * excessive / total
        ),
        speedup_pct: None,
    })
}

fn uncoalesced_site(rule: &ncu::details::RuleResult, location: Option<SourceLocation>) -> Site {
    let numbers: Vec<&str> = rule.description.split_whitespace().collect();
    let summary = numbers
        .windows(2)
        .find(|w| w[1] == "excessive")
        .map(|w| {
            let share = rule
                .description
                .split_once(" excessive sectors (")
                .and_then(|(_, r)| r.split_once(')'))
                .map(|(s, _)| s)
                .unwrap_or("");
            format!(
                "uncoalesced global accesses: {} excessive sectors ({share})",
                w[0]
            )
        })
        .unwrap_or_else(|| "uncoalesced global accesses".to_string());
    let speedup = rule
        .speedup_pct
        .map(|s| format!("; est. speedup {s:.0}%"))
        .unwrap_or_default();
    let mut site = new_site(
        Tool::Ncu,
        FindingKind::UncoalescedAccess,
        Severity::Warning,
        format!("{summary}{speedup}"),
    );
    site.kernel = Some(rule.kernel.clone());
    site.location = location;
    site.id = site_id(&site, &rule.rule);
    site
}

/// A launch's frames innermost first, as compute-sanitizer lists them: the
/// native ones, then the Python ones from the most recent call out.
fn host_frames(launch: &ncu::stacks::LaunchStacks) -> Vec<crate::model::Frame> {
    let mut frames = launch.native.clone();
    frames.extend(launch.python.iter().rev().cloned());
    frames
}

/// The frame that launched `kernel`: the innermost Python frame of the
/// user's code, else the innermost native frame with a source line that is
/// neither CUDA's (runtime, stubs, headers) nor the kernel's own host stub
/// (`gather_coalesced(...)` at the kernel's definition).
fn launching_frame(frames: &[crate::model::Frame], kernel: &str) -> Option<crate::model::Frame> {
    let stub = crate::site::simple_kernel_name(kernel);
    frames
        .iter()
        .find(|f| f.is_python() && !f.is_runtime())
        .or_else(|| {
            frames.iter().find(|f| {
                let file = f.file.as_deref().unwrap_or("");
                !f.is_python()
                    && !f.is_runtime()
                    && f.line.is_some()
                    && !file.contains("/cuda/")
                    && !file.contains(".stub.c")
                    && !f
                        .func
                        .as_deref()
                        .is_some_and(|func| func.starts_with(&format!("{stub}(")))
            })
        })
        .cloned()
}
