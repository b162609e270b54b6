//! Every real capture in sample-reports/ through every parser that reads it,
//! checked against what the tool itself said about the same run.

use std::fs;
use std::path::{Path, PathBuf};

use cudawatch_model::Tool;
use cudawatch_parsers::sanitizer::{RecordKind, fold, text, xml};
use cudawatch_parsers::{ncu, program};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-reports")
}

/// (case, run) for every run whose files match `suffix`.
fn runs(suffix: &str) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for case in fs::read_dir(samples()).unwrap().flatten() {
        if !case.path().is_dir() {
            continue;
        }
        for file in fs::read_dir(case.path()).unwrap().flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if let Some(run) = name.strip_suffix(suffix) {
                out.push((case.path(), run.to_string()));
            }
        }
    }
    out.sort();
    assert!(!out.is_empty(), "no {suffix} captures");
    out
}

fn xml_records(path: &Path) -> Vec<cudawatch_parsers::sanitizer::Record> {
    let mut records = Vec::new();
    let read = xml::parse(fs::read(path).unwrap().as_slice(), |r| records.push(r))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        read.broken.is_none(),
        "{}: complete capture read as broken",
        path.display()
    );
    assert_eq!(read.records as usize, records.len());
    records
}

#[test]
fn every_sanitizer_xml_reads_completely_with_known_record_kinds() {
    for (dir, run) in runs(".xml") {
        let path = dir.join(format!("{run}.xml"));
        let raw = fs::read_to_string(&path).unwrap();
        let records = xml_records(&path);
        assert_eq!(
            records.len(),
            raw.matches("<record>").count(),
            "{}",
            path.display()
        );
        for r in &records {
            assert!(
                !matches!(r.kind, RecordKind::Other(_)),
                "{}: {:?}",
                path.display(),
                r.kind
            );
            assert!(
                r.unrecognised.is_empty(),
                "{}: unrecognised {:?}",
                path.display(),
                r.unrecognised
            );
        }
    }
}

#[test]
fn text_and_xml_of_one_run_agree_with_the_tools_own_summary() {
    let mut checked = 0;
    for (dir, run) in runs(".xml") {
        let xml_path = dir.join(format!("{run}.xml"));
        let stdout = fs::read(dir.join(format!("{run}.stdout"))).unwrap();
        let mut text_records = Vec::new();
        let summary = text::parse(&stdout, |r| text_records.push(r));
        let records = xml_records(&xml_path);
        let context = format!("{}", xml_path.display());
        if summary.not_printed.is_some() {
            // --print-limit: the XML holds only the printed records.
            assert!(
                records.len() < summary.errors.unwrap() as usize,
                "{context}"
            );
            continue;
        }
        if let Some(errors) = summary.errors {
            assert_eq!(
                records.len() as u64,
                errors,
                "{context}: XML records vs ERROR SUMMARY"
            );
        }
        if let Some((displayed, ..)) = summary.racecheck {
            assert_eq!(
                records.len() as u64,
                displayed,
                "{context}: XML records vs RACECHECK SUMMARY"
            );
            let warnings = records
                .iter()
                .filter(|r| r.severity == cudawatch_model::Severity::Warning)
                .count();
            assert_eq!(
                warnings as u64,
                summary.racecheck.unwrap().2,
                "{context}: warnings"
            );
        }
        assert_eq!(
            text_records.len(),
            records.len(),
            "{context}: text records vs XML records"
        );
        if let Some((bytes, allocations)) = summary.leaked {
            let leaks: Vec<_> = records
                .iter()
                .filter(|r| r.kind == RecordKind::Leak)
                .collect();
            assert_eq!(leaks.len() as u64, allocations, "{context}");
            assert_eq!(
                leaks.iter().map(|r| r.size.unwrap()).sum::<u64>(),
                bytes,
                "{context}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 60, "only {checked} runs cross-checked");
}

#[test]
fn a_killed_run_leaves_text_records_but_no_summary() {
    let stdout = fs::read(samples().join("hang_after_error/memcheck.stdout")).unwrap();
    let mut records = Vec::new();
    let summary = text::parse(&stdout, |r| records.push(r));
    assert!(!summary.has_closing_line());
    let invalid: Vec<_> = records
        .iter()
        .filter(|r| r.kind == RecordKind::Precise)
        .collect();
    assert_eq!(invalid.len(), 24, "one record per faulting thread");
    assert!(invalid.iter().all(|r| r.nearest_allocation.is_some()));
    assert!(
        records.iter().any(|r| r.kind == RecordKind::Api),
        "the failed synchronize"
    );
    assert!(
        !samples().join("hang_after_error/memcheck.xml").exists(),
        "the XML is written only at exit"
    );
}

#[test]
fn a_program_without_cuda_says_so() {
    let stdout = fs::read(samples().join("no_cuda/memcheck.stdout")).unwrap();
    let summary = text::parse(&stdout, |_| {});
    assert!(summary.failures[0].contains("terminated before first instrumented API call"));
}

#[test]
fn every_ncu_raw_page_has_one_kernel_per_profiled_launch() {
    for (dir, run) in runs("-raw.stdout") {
        let kernels =
            ncu::raw::parse(&fs::read(dir.join(format!("{run}-raw.stdout"))).unwrap()).unwrap();
        // A live `ncu --csv` page has no separate log (and prints no
        // "Profiling" lines); the others are checked against theirs.
        if let Ok(log) = fs::read(dir.join(format!("{run}.stdout"))) {
            assert_eq!(
                kernels.len() as u64,
                ncu::log::parse(&log).kernels_profiled.unwrap(),
                "{} {run}",
                dir.display()
            );
        }
        for k in &kernels {
            // Whichever metrics the page has, a coalescing figure is read.
            assert!(
                k.load.sectors.is_some() || k.total_sectors.is_some(),
                "{run}: {}",
                k.kernel
            );
            assert!(k.duration_ns.unwrap() > 0.0);
        }
    }
}

#[test]
fn every_raw_page_shape_gives_the_same_figures_for_the_strided_gather() {
    // cudawatch's own import (--print-units base), an import without it
    // (us, Mbyte), live `ncu --csv` output with ==PROF== and program lines
    // before it (l1tex metrics only), and a SourceCounters-only profile.
    let dir = samples().join("coalescing");
    for page in ["ncu-raw", "ncu-units-raw", "ncu-live-raw", "ncu-sc-raw"] {
        let kernels = ncu::raw::parse(&fs::read(dir.join(format!("{page}.stdout"))).unwrap())
            .unwrap_or_else(|e| panic!("{page}: {e}"));
        assert_eq!(kernels.len(), 2, "{page}");
        let strided = kernels
            .iter()
            .find(|k| k.kernel.starts_with("gather_strided"))
            .unwrap();
        let pct = strided.excessive_pct().unwrap();
        assert!((pct - 77.8).abs() < 0.5, "{page}: {pct}% wasted");
        let micros = strided.duration_ns.unwrap() / 1000.0;
        assert!((90.0..120.0).contains(&micros), "{page}: {micros} µs");
        let coalesced = kernels
            .iter()
            .find(|k| k.kernel.starts_with("gather_coalesced"))
            .unwrap();
        assert!(coalesced.excessive_pct().unwrap() < 1.0, "{page}");
    }
}

#[test]
fn every_ncu_details_and_source_page_reads() {
    for (dir, run) in runs("-details.stdout") {
        let rules =
            ncu::details::parse(&fs::read(dir.join(format!("{run}-details.stdout"))).unwrap())
                .unwrap();
        // cudawatch's lean section has no rules; NVIDIA's SourceCounters has.
        if dir.ends_with("coalescing") && !run.contains("lean") {
            let rule = rules
                .iter()
                .find(|r| r.rule == "UncoalescedGlobalAccess")
                .unwrap();
            assert!(rule.kernel.starts_with("gather_strided"));
            assert!(rule.speedup_pct.unwrap() > 50.0);
        }
    }
    for (dir, run) in runs(".stdout")
        .into_iter()
        .filter(|(_, r)| r.contains("-source-"))
    {
        ncu::source::parse(&fs::read(dir.join(format!("{run}.stdout"))).unwrap())
            .unwrap_or_else(|e| panic!("{}/{run}: {e}", dir.display()));
    }
}

#[test]
fn no_kernels_profiled_is_seen_in_the_console_log() {
    let log = ncu::log::parse(&fs::read(samples().join("coalescing/ncu-nomatch.stdout")).unwrap());
    assert!(log.no_kernels_profiled);
    assert_eq!(log.kernels_profiled, Some(0));
}

#[test]
fn a_program_that_failed_under_ncu_is_seen_in_the_console_log() {
    // Inductor's CUDA graphs under ncu on the H100: 10 launches profiled,
    // then the program exited 1.
    let log = ncu::log::parse(
        &fs::read(samples().join("beyond/many_processes/ncu-cudagraphs.stdout")).unwrap(),
    );
    assert!(log.target_failed);
    assert!(!log.no_kernels_profiled);
}

#[test]
fn every_failing_plain_run_yields_a_finding_and_clean_ones_none() {
    for (dir, _) in runs(".stderr").into_iter().filter(|(_, r)| r == "plain") {
        let mut output = fs::read(dir.join("plain.stderr")).unwrap();
        output.extend(fs::read(dir.join("plain.stdout")).unwrap());
        let exit: i32 = fs::read_to_string(dir.join("plain.exit"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let sites = program::parse(&output);
        assert!(sites.iter().all(|s| s.tool == Tool::Plain));
        if exit != 0 {
            assert!(
                !sites.is_empty(),
                "{}: exit {exit} but nothing found",
                dir.display()
            );
        } else {
            assert!(
                sites.is_empty(),
                "{}: clean run but found {sites:?}",
                dir.display()
            );
        }
    }
}

#[test]
fn folding_repeats_from_borrowed_fields_gives_the_same_sites_as_full_records() {
    use cudawatch_parsers::site::Folder;
    for (dir, run) in runs(".xml") {
        let bytes = fs::read(dir.join(format!("{run}.xml"))).unwrap();
        let mut full = Folder::default();
        xml::parse(bytes.as_slice(), |r| {
            fold::add_record(&mut full, Tool::Memcheck, r)
        })
        .unwrap();
        let mut quick = Folder::default();
        xml::parse_in_blocks(
            bytes.as_slice(),
            4096,
            2,
            Folder::default,
            |folder, raw| fold::add_raw(folder, Tool::Memcheck, raw),
            |folder| quick.absorb(folder),
        )
        .unwrap();
        assert_eq!(quick.finish(), full.finish(), "{}/{run}", dir.display());
    }
}

#[test]
fn details_pages_with_every_detail_still_give_the_coalescing_rule() {
    // `--print-details all`, imported and live.
    let dir = samples().join("coalescing");
    for page in ["ncu-sc-details-all", "ncu-live-details"] {
        let rules = ncu::details::parse(&fs::read(dir.join(format!("{page}.stdout"))).unwrap())
            .unwrap_or_else(|e| panic!("{page}: {e}"));
        let rule = rules
            .iter()
            .find(|r| r.rule == "UncoalescedGlobalAccess")
            .unwrap_or_else(|| panic!("{page}: no UncoalescedGlobalAccess"));
        assert!(rule.kernel.starts_with("gather_strided"), "{page}");
        assert!(rule.description.contains("excessive sectors"), "{page}");
    }
}

/// The report of one ncu profile as the stage reads it: raw, details and
/// source pages of `run` in `case`.
fn ncu_report(case: &str, run: &str) -> cudawatch_model::Report {
    let dir = samples().join(case);
    let read = |page: &str| fs::read(dir.join(format!("{run}-{page}.stdout"))).unwrap();
    let (raw, details) = (read("raw"), read("details"));
    let sources: Vec<(String, Vec<u8>)> = (0..8)
        .filter_map(|i| {
            let name = format!("{run}-source-{i}.stdout");
            fs::read(dir.join(&name)).ok().map(|b| (name, b))
        })
        .collect();
    let named: Vec<(&str, &[u8])> = sources
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let mut builder = cudawatch_parsers::builder::ReportBuilder::new("test");
    builder.ncu(
        Some(("raw", raw.as_slice())),
        Some(("details", details.as_slice())),
        &named,
        None,
    );
    builder.finish()
}

#[test]
fn the_lean_section_gives_the_uncoalesced_site_that_sourcecounters_rule_gives() {
    // Profiled with NVIDIA's SourceCounters, ncu's rule names the strided
    // gather; profiled with cudawatch's CoalescingSource section (one pass
    // fewer, no rules), the same site comes from the same totals: the same
    // kernel, line, excessive sectors and share; only ncu's speedup
    // estimate is missing.
    let sites = |run: &str| {
        let report = ncu_report("coalescing", run);
        report
            .findings
            .into_iter()
            .filter(|f| f.kind == cudawatch_model::FindingKind::UncoalescedAccess)
            .collect::<Vec<_>>()
    };
    let (full, lean) = (sites("ncu"), sites("ncu-lean"));
    assert_eq!(full.len(), 1);
    assert_eq!(lean.len(), 1);
    let (full, lean) = (&full[0], &lean[0]);
    assert_eq!(lean.id, full.id, "the site keeps its id");
    assert_eq!(lean.kernel, full.kernel);
    assert_eq!(lean.location, full.location);
    assert_eq!(
        lean.location.as_ref().map(|l| l.line),
        Some(12),
        "the strided line"
    );
    let without_speedup = full.message.split("; est. speedup").next().unwrap();
    assert_eq!(lean.message, without_speedup);
    assert!(
        lean.message
            .contains("3670016 excessive sectors (78% of the total 4718592 sectors)"),
        "{}",
        lean.message
    );
    // The per-line figures and the coalescing table are the same too.
    let (a, b) = (
        ncu_report("coalescing", "ncu"),
        ncu_report("coalescing", "ncu-lean"),
    );
    let line = |r: &cudawatch_model::Report| {
        r.wasteful_lines
            .iter()
            .map(|l| (l.location.line, l.excessive_sectors, l.theoretical_sectors))
            .collect::<Vec<_>>()
    };
    assert_eq!(line(&a), line(&b));
    let waste = |r: &cudawatch_model::Report| {
        r.coalescing
            .iter()
            .map(|k| (k.kernel.clone(), k.excessive_sectors, k.total_sectors))
            .collect::<Vec<_>>()
    };
    assert_eq!(waste(&a), waste(&b));
}

#[test]
fn a_coalesced_cp_async_load_is_never_read_as_wasted_bytes() {
    // ncu's SASS bytes-per-sector share sees LDG loads only; l1tex's sectors
    // also count cp.async (LDGSTS) loads, so a perfectly coalesced cp.async
    // copy and cuBLAS's multistage GEMM read "0%" there.
    let dir = samples().join("beyond/async_loads");
    let kernel = |page: &str, name: &str| {
        ncu::raw::parse(&fs::read(dir.join(page)).unwrap())
            .unwrap()
            .into_iter()
            .find(|k| k.kernel.starts_with(name))
            .unwrap_or_else(|| panic!("{page}: no {name}"))
    };
    // The stage's page (source-level totals) and a page of the metrics
    // alone, where the waste comes from the share.
    for page in ["stage-async_loads-raw.csv", "ncu-async_loads-raw.stdout"] {
        let ldg = kernel(page, "plain_copy");
        assert_eq!(ldg.load.bytes_used_pct, Some(100.0), "{page}");
        assert!(ldg.excessive_pct().unwrap() < 1.0, "{page}");
        let async_copy = kernel(page, "async_copy");
        assert_eq!(async_copy.load.sectors, ldg.load.sectors, "{page}");
        assert_eq!(
            async_copy.load.bytes_used_pct, None,
            "{page}: a share of 0% is not one"
        );
        assert_eq!(async_copy.store.bytes_used_pct, Some(100.0), "{page}");
        // Where the share was all there was, the waste is unknown, not 50%.
        match page {
            "stage-async_loads-raw.csv" => assert!(async_copy.excessive_pct().unwrap() < 1.0),
            _ => assert_eq!(async_copy.excessive_pct(), None, "{page}"),
        }
        // A broadcast load is a real share below 100%: 4 bytes of its sector.
        let broadcast = kernel(page, "broadcast_scale");
        assert_eq!(broadcast.load.bytes_used_pct, Some(82.5), "{page}");
    }
    for page in ["stage-matmul-raw.csv", "ncu-matmul-raw.stdout"] {
        let gemm = kernel(page, "sm80_xmma_gemm");
        assert!(gemm.load.sectors.unwrap() > 0.0);
        assert_eq!(gemm.load.bytes_used_pct, None, "{page}");
    }
}

#[test]
fn a_launch_that_faulted_under_ncu_costs_the_launches_before_it_nothing() {
    // A launch that faults while ncu profiles it (`==ERROR== LaunchFailed`)
    // has "nan" in every metric of the raw page; the page was refused
    // whole before, losing the launches ncu had measured.
    let dir = samples().join("beyond/faulting_launch");
    let page = |name: &str| ncu::raw::parse(&fs::read(dir.join(name)).unwrap()).unwrap();
    let embedding = page("stage-embedding_bad_index-raw.csv");
    assert_eq!(embedding.len(), 2);
    assert!(
        embedding[0]
            .kernel
            .contains("elementwise_kernel_with_index")
    );
    assert_eq!(embedding[0].excessive_pct(), Some(0.0));
    assert!(embedding[1].kernel.contains("vectorized_gather_kernel"));
    assert_eq!(embedding[1].store.sectors, None);
    assert_eq!(embedding[1].total_sectors, None);
    assert_eq!(embedding[1].duration_ns, None);
    for program in ["device_assert", "misaligned"] {
        let launches = page(&format!("stage-{program}-raw.csv"));
        assert_eq!(launches.len(), 1, "{program}");
        assert_eq!(launches[0].excessive_pct(), None, "{program}");
    }
    // The console log says why.
    let log = ncu::log::parse(&fs::read(dir.join("stage-embedding_bad_index-ncu.stdout")).unwrap());
    assert_eq!(log.kernels_profiled, Some(2));
}

#[test]
fn xlas_out_of_memory_is_an_oom_at_the_users_line_once() {
    // jax 0.11.2 on the H100: a 125 GiB batch. The status is also in XLA's
    // log, where its autotuner met it first; only the exception the
    // program died of counts.
    let stderr = fs::read(samples().join("beyond/jax_oom/program.stderr")).unwrap();
    let sites = program::parse(&stderr);
    assert_eq!(sites.len(), 1, "{sites:?}");
    let oom = &sites[0];
    assert_eq!(oom.kind, cudawatch_model::FindingKind::OutOfMemory);
    assert_eq!(oom.count, 1);
    assert_eq!(
        oom.message,
        "out of GPU memory (XLA): tried to allocate 125.02GiB (GPU_0_bfc)"
    );
    assert_eq!(oom.bytes, Some((125.02 * 1024.0 * 1024.0 * 1024.0) as u64));
    assert_eq!(oom.location.as_ref().unwrap().line, 21);
}

/// Every file under `dir` (recursively) whose name ends in `suffix`.
fn files_under(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn every_record_of_the_outside_programs_has_a_kind_of_its_own() {
    // InitcheckApiError, StackOverflow and 2026.4's tool errors among them
    // (sample-reports/outside/, one H200).
    let xmls = files_under(&samples().join("outside"), ".xml");
    assert!(xmls.len() >= 8, "{xmls:?}");
    let mut kinds = std::collections::BTreeSet::new();
    for path in xmls {
        for r in xml_records(&path) {
            assert!(
                !matches!(r.kind, RecordKind::Other(_)) && r.unrecognised.is_empty(),
                "{}: {:?} {:?}",
                path.display(),
                r.kind,
                r.unrecognised
            );
            kinds.insert(format!("{:?}", r.kind));
        }
    }
    for kind in ["InitcheckApi", "StackOverflow", "ToolError"] {
        assert!(kinds.contains(kind), "{kinds:?}");
    }
}
