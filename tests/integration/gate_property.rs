//! A property of the gate: damage never improves a verdict. From real runs
//! (the fakes replay real H100 captures into real run directories), damaged
//! copies are made (files cut at random offsets, removed, emptied, made
//! huge; the tool's or program's end changed to another code or a signal;
//! summaries contradicting their records; figures made non-finite or
//! negative; stages removed or listed twice; a stage folder made a symlink
//! to another, clean run's; a stage.json that says it is another stage's;
//! an earlier try's folder taken away, from a base whose findings only a
//! crashed first try saw; the hook's facts and lines of the stages that
//! watch from inside, and those lines forged without the stage's nonce; a
//! rank's exit file under per-rank sanitizers, forged the same way) and
//! `cudawatch report` must
//! judge each no better than the original: FINDINGS or CLEAN may become
//! INCONCLUSIVE, nothing may become CLEAN that was not, FINDINGS never
//! CLEAN; and a clean run whose evidence was taken away (a summary line, an
//! XML's end, a record of its end) must not stay clean.
//!
//! A sweep's saved state is damaged the same way (records and reports of
//! its attempts) and its merged verdict must never improve either.
//!
//! A fixed seed in CI; `CUDAWATCH_GATE_CASES=20000` (and
//! `CUDAWATCH_GATE_SEED`) runs it as a longer fuzz.

use std::path::{Path, PathBuf};

use crate::helpers::{copy_dir, cudawatch, run};
use crate::run::fake_run;

/// xorshift64*: small, deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// How good a verdict is: higher is worse. Setup errors (a run directory
/// too damaged to be one) are as far from clean as inconclusive.
fn rank(code: i32) -> u8 {
    match code {
        0 => 0,
        1 => 1,
        3 | 4 => 2,
        other => panic!("unexpected exit code {other}"),
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        // Never through a symlink a damage planted: it points at a base.
        if entry.file_type().unwrap().is_symlink() {
            continue;
        }
        if path.is_dir() {
            out.extend(files(&path));
        } else if path.file_name().unwrap() != "run.json"
            && path.file_name().unwrap() != "report.json"
            && path.file_name().unwrap() != "environment.json"
        {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn verdict(dir: &Path) -> (i32, String) {
    let out = run(cudawatch().arg("report").arg(dir));
    (out.code, format!("{}{}", out.stdout, out.stderr))
}

/// What one damage did, and whether it took evidence a clean verdict
/// needs (then a clean original must not stay clean).
struct Damage {
    what: String,
    took_evidence: bool,
}

fn is_evidence(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    let stage = path
        .parent()
        .and_then(|p| p.file_name())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A tool's stdout is its summary; the stages that run the program
    // itself (the plain run, CSAN, the memory hook) have the program's.
    // Per rank, the stage's stdout is the launcher's, and each rank's log
    // has its tool's summary.
    let per_rank = path.parent().is_some_and(|dir| {
        std::fs::read_dir(dir).is_ok_and(|mut entries| {
            entries.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().contains(".rank")))
        })
    });
    let tool_output = !["plain", "csan", "memory"].contains(&stage.as_str()) && !per_rank;
    tool_output && (name == "stdout" || name.ends_with(".xml") || name == "raw.csv")
        || (per_rank && name.contains(".rank") && name.ends_with(".xml"))
        || name == "stage.json"
        // What the hook saw: without it CSAN's silence proves nothing.
        || name == "hook.json"
        // A rank's exit under its own sanitizer: without it, that rank's
        // silence proves nothing.
        || (name.contains(".rank") && name.ends_with(".exit"))
}

fn damage(dir: &Path, rng: &mut Rng) -> Damage {
    let all = files(dir);
    if all.is_empty() {
        return Damage {
            what: "nothing (no file left)".into(),
            took_evidence: false,
        };
    }
    let file = rng.pick(&all).clone();
    let shown = file.strip_prefix(dir).unwrap().display().to_string();
    // A file an earlier damage made huge is not read back.
    let bytes = if std::fs::metadata(&file).unwrap().len() > 64 << 20 {
        Vec::new()
    } else {
        std::fs::read(&file).unwrap()
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    match rng.below(12) {
        0 if !bytes.is_empty() => {
            let at = rng.below(bytes.len());
            std::fs::write(&file, &bytes[..at]).unwrap();
            // Did the cut take the summary line, the XML's end or the
            // record's closing brace?
            let kept = String::from_utf8_lossy(&bytes[..at]);
            let took = is_evidence(&file)
                && ([
                    "ERROR SUMMARY",
                    "RACECHECK SUMMARY",
                    "</ComputeSanitizerOutput>",
                ]
                .iter()
                .any(|m| text.contains(m) && !kept.contains(m))
                    || (file.ends_with("stage.json"))
                    || (file.ends_with("raw.csv") && kept.lines().count() < 3));
            Damage {
                what: format!("cut {shown} at {at} of {}", bytes.len()),
                took_evidence: took,
            }
        }
        1 => {
            std::fs::remove_file(&file).unwrap();
            Damage {
                what: format!("removed {shown}"),
                took_evidence: is_evidence(&file),
            }
        }
        2 => {
            std::fs::write(&file, b"").unwrap();
            Damage {
                what: format!("emptied {shown}"),
                took_evidence: is_evidence(&file),
            }
        }
        3 => {
            // Sparse: huge on paper, nothing on disk.
            std::fs::OpenOptions::new()
                .write(true)
                .open(&file)
                .unwrap()
                .set_len(17 << 30)
                .unwrap();
            Damage {
                what: format!("made {shown} 17 GiB"),
                took_evidence: is_evidence(&file),
            }
        }
        4 => {
            // Another end for a stage: a signal, or another exit code.
            let stage_json = file.parent().unwrap().join("stage.json");
            let Ok(record) = std::fs::read_to_string(&stage_json) else {
                return Damage {
                    what: "nothing (no stage.json)".into(),
                    took_evidence: false,
                };
            };
            let Ok(mut record) = serde_json::from_str::<serde_json::Value>(&record) else {
                return Damage {
                    what: "nothing (stage.json already damaged)".into(),
                    took_evidence: false,
                };
            };
            let end = match rng.below(4) {
                0 => serde_json::json!({"how": "signaled", "code": 11}),
                1 => serde_json::json!({"how": "signaled", "code": 9}),
                2 => serde_json::json!({"how": "exited", "code": 86}),
                _ => serde_json::json!({"how": "exited", "code": 1}),
            };
            let before = record["end"].clone();
            record["end"] = end.clone();
            std::fs::write(&stage_json, record.to_string()).unwrap();
            let sanitizer = record["tool"] != "plain" && record["tool"] != "ncu";
            Damage {
                what: format!("{} ended {end} (was {before})", record["tool"]),
                took_evidence: before != end
                    && (sanitizer || record["tool"] == "plain")
                    && !(end["code"] == 1 && text.contains("Target application returned")),
            }
        }
        5 if text.contains("ERROR SUMMARY") || text.contains("RACECHECK SUMMARY") => {
            // A summary that contradicts the records.
            let lied: String = text
                .lines()
                .map(|l| {
                    if let Some((head, _)) = l.split_once("ERROR SUMMARY:") {
                        format!("{head}ERROR SUMMARY: 0 errors")
                    } else if let Some((head, _)) = l.split_once("RACECHECK SUMMARY:") {
                        format!(
                            "{head}RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
                        )
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
            std::fs::write(&file, lied).unwrap();
            Damage {
                what: format!("{shown}: summary says 0"),
                took_evidence: false,
            }
        }
        6 if file.ends_with("raw.csv") => {
            let bad = *rng.pick(&["inf", "-5", "1e300", "NaN", "4.194.304"]);
            let mut cells = 0;
            let damaged: String = text
                .lines()
                .enumerate()
                .map(|(i, l)| {
                    if i < 2 {
                        return l.to_string();
                    }
                    l.split("\",\"")
                        .map(|c| {
                            if c.chars().next().is_some_and(|d| d.is_ascii_digit()) && cells == 0 {
                                cells += 1;
                                bad.to_string()
                            } else {
                                c.to_string()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("\",\"")
                })
                .collect::<Vec<_>>()
                .join("\n");
            std::fs::write(&file, damaged).unwrap();
            Damage {
                what: format!("{shown}: a figure made {bad}"),
                took_evidence: false,
            }
        }
        7 => {
            let stage = file.parent().unwrap();
            if stage == dir {
                return Damage {
                    what: "nothing".into(),
                    took_evidence: false,
                };
            }
            // A stage's folder holds its record; the run's `hook/` (the
            // hook's code, copied for the stages) is no evidence.
            let a_stage = stage.join("stage.json").exists();
            std::fs::remove_dir_all(stage).unwrap();
            Damage {
                what: format!("removed the stage folder of {shown}"),
                took_evidence: a_stage,
            }
        }
        9 => {
            // A stage folder made a symlink to the clean base's same stage.
            let Some(stage) = file.parent().filter(|p| *p != dir) else {
                return Damage {
                    what: "nothing".into(),
                    took_evidence: false,
                };
            };
            let name = stage.file_name().unwrap().to_owned();
            let other = dir.parent().unwrap().join("base-clean").join(&name);
            if !other.is_dir() || stage.parent() != Some(dir) {
                return Damage {
                    what: "nothing".into(),
                    took_evidence: false,
                };
            }
            std::fs::remove_dir_all(stage).unwrap();
            std::os::unix::fs::symlink(&other, stage).unwrap();
            Damage {
                what: format!(
                    "{} made a symlink to the clean run's",
                    name.to_string_lossy()
                ),
                took_evidence: true,
            }
        }
        10 if file.ends_with("stage.json") => {
            // A stage.json that says it is another stage's record.
            let mut record: serde_json::Value = match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(_) => {
                    return Damage {
                        what: "nothing".into(),
                        took_evidence: false,
                    };
                }
            };
            let other = if record["tool"] == "plain" {
                "memcheck"
            } else {
                "plain"
            };
            record["tool"] = other.into();
            std::fs::write(&file, record.to_string()).unwrap();
            Damage {
                what: format!("{shown} says it is {other}'s"),
                took_evidence: true,
            }
        }
        11 => {
            // An earlier try's folder taken away.
            let Some(kept) = ["crashed", "flooded", "crowded"]
                .iter()
                .map(|f| dir.join(f))
                .find(|p| p.is_dir())
            else {
                return Damage {
                    what: "nothing".into(),
                    took_evidence: false,
                };
            };
            std::fs::remove_dir_all(&kept).unwrap();
            Damage {
                what: format!("removed {}", kept.display()),
                took_evidence: true,
            }
        }
        8 if file.ends_with("processes.jsonl") => {
            // The hook's lines as a launcher would forge them: without the
            // stage's nonce, or with another's.
            let forged: String = text
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .map(|mut line| {
                    if rng.below(2) == 0 {
                        line.as_object_mut().map(|o| o.remove("nonce"));
                    } else {
                        line["nonce"] = "0123456789abcdef".into();
                    }
                    line.to_string() + "\n"
                })
                .collect();
            std::fs::write(&file, forged).unwrap();
            Damage {
                what: format!("{shown}: every line without the stage's nonce"),
                took_evidence: true,
            }
        }
        8 if shown.contains(".rank") && shown.ends_with(".exit") => {
            // A rank's exit file as a process of the run would forge it:
            // its status without the stage's nonce.
            let status = text.split_whitespace().next().unwrap_or("0").to_string();
            std::fs::write(&file, status + "\n").unwrap();
            Damage {
                what: format!("{shown}: its status without the stage's nonce"),
                took_evidence: true,
            }
        }
        _ => {
            // A stage listed twice in run.json.
            let path = dir.join("run.json");
            let mut record: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let stages = record["stages"].as_array_mut().unwrap();
            if stages.is_empty() {
                return Damage {
                    what: "nothing".into(),
                    took_evidence: false,
                };
            }
            let twice = stages[rng.below(stages.len())].clone();
            stages.push(twice.clone());
            std::fs::write(&path, record.to_string()).unwrap();
            Damage {
                what: format!("{twice} listed twice"),
                took_evidence: false,
            }
        }
    }
}

#[test]
fn damage_never_improves_a_verdict() {
    let cases: usize = std::env::var("CUDAWATCH_GATE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(240);
    let seed: u64 = std::env::var("CUDAWATCH_GATE_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0x5eed_cafe);
    let tmp = tempfile::tempdir().unwrap();
    let bases: Vec<(PathBuf, i32)> = [
        ("clean", "plain,memcheck,racecheck,initcheck,synccheck"),
        ("oob_write", "plain,memcheck,racecheck"),
        ("smem_race", "racecheck,synccheck"),
        ("uninit_read", "initcheck"),
        ("coalescing", "ncu"),
        ("torch_index_oob", "plain,memcheck,initcheck"),
    ]
    .iter()
    .map(|(case, stages)| {
        let dir = tmp.path().join(format!("base-{case}"));
        run(fake_run(case, &dir, stages, &[]));
        let (code, _) = verdict(&dir);
        (dir, code)
    })
    .chain(std::iter::once({
        // The stages that watch from inside (CSAN, the memory hook) over a
        // training loop they check the first steps of: the hook's facts
        // and lines are their evidence.
        let dir = tmp.path().join("base-hooked");
        let program = "import torch\nopt = torch.optim.Optimizer()\ntorch.cuda.init()\n\
                       for step in range(40):\n    x = torch.cuda.fake_alloc(1 << 20)\n    \
                       torch.cuda.fake_free(x)\n    opt.step()\n";
        let work = tmp.path().join("hooked-program");
        std::fs::create_dir_all(&work).unwrap();
        run(crate::helpers::with_fake_torch(&work, program)
            .args([
                "run",
                "--grace",
                "0.5",
                "--stages",
                "plain,csan,memory",
                "--out-dir",
            ])
            .arg(&dir)
            .args(["--", "python3", "prog.py"]));
        let (code, _) = verdict(&dir);
        assert_eq!(code, 0, "a clean hooked base");
        (dir, code)
    }))
    .chain(std::iter::once({
        // Two ranks under torchrun, each under its own memcheck: each
        // rank's exit file, with the stage's nonce, is its evidence.
        let work = tmp.path().join("ranked");
        std::fs::create_dir_all(&work).unwrap();
        let (dir, out) = crate::multi_gpu::run_per_rank_with(&work, &[], None, true, &[]);
        let (code, _) = verdict(&dir);
        assert_eq!(
            code,
            0,
            "a clean two-rank base: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (dir, code)
    }))
    .chain(std::iter::once({
        // A stage run again: its first try printed invalid writes and
        // compute-sanitizer died; the rerun was clean. The try is evidence.
        let dir = tmp.path().join("base-crashed-try");
        run(fake_run("oob_write", &dir, "plain,memcheck", &[])
            .env("FAKE_MODE", "records-then-crash-once")
            .env("FAKE_CRASH_MARK", tmp.path().join("crashed-once"))
            .env("FAKE_RERUN_CASE", crate::helpers::sample("clean")));
        let (code, _) = verdict(&dir);
        assert_eq!(code, 1, "the crashed try's findings are judged");
        (dir, code)
    }))
    .collect();
    assert!(bases.iter().any(|(_, c)| *c == 0), "a clean base");
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    for n in 0..cases {
        let (base, before) = &bases[n % bases.len()];
        let copy = tmp.path().join(format!("case-{n}"));
        copy_dir(base, &copy);
        let mut done = Vec::new();
        let mut took = false;
        for _ in 0..=rng.below(2) {
            let d = damage(&copy, &mut rng);
            took |= d.took_evidence;
            done.push(d.what);
        }
        let (after, out) = verdict(&copy);
        let worse_or_same = rank(after) >= rank(*before);
        let clean_kept = *before == 0 && after == 0 && took;
        if !worse_or_same || clean_kept {
            failures.push(format!(
                "case {n} ({}): {} -> {after} after {}\n{}",
                base.file_name().unwrap().to_string_lossy(),
                before,
                done.join("; "),
                out.lines()
                    .filter(|l| l.contains("CLEAN") || l.contains("FINDINGS") || l.contains("│"))
                    .take(12)
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
        let _ = std::fs::remove_dir_all(&copy);
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} damaged runs judged better than their original (seed {seed}):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The same property over a sweep's saved state: a sweep of a clean
/// target and one whose run found an illegal access, its attempts'
/// records and reports damaged (a report swapped for the other target's,
/// with or without its record; a recorded exit code, checksum or report
/// digest changed; a report cut or removed), must never merge better than
/// the original.
#[test]
fn damage_to_a_sweeps_state_never_improves_its_merged_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("sweep.toml");
    std::fs::write(
        &file,
        "[defaults]\nstages = [\"plain\"]\nrun-args = [\"--grace\", \"0.5\"]\n\n\
         [[target]]\nname = \"good\"\ncommand = [\"sh\", \"-c\", \"exit 0\"]\n\n\
         [[target]]\nname = \"bad\"\ncommand = [\"sh\", \"-c\", \"echo RuntimeError: CUDA \
         error: an illegal memory access was encountered >&2; exit 1\"]\n",
    )
    .unwrap();
    let base = tmp.path().join("base");
    run(cudawatch()
        .arg("sweep")
        .arg(&file)
        .arg("--out-dir")
        .arg(&base));
    let merged = |dir: &Path| run(cudawatch().arg("merge").arg(dir)).code;
    let before = merged(&base);
    assert_eq!(before, 1, "the bad target's finding gates");
    type Damage = (&'static str, fn(&Path));
    let damages: [Damage; 8] = [
        ("report swapped for the clean target's", |d| {
            std::fs::copy(report(d, "good"), report(d, "bad")).unwrap();
        }),
        ("report swapped and its record removed", |d| {
            std::fs::copy(report(d, "good"), report(d, "bad")).unwrap();
            std::fs::remove_file(record(d, "bad")).unwrap();
        }),
        ("recorded exit code 0", |d| {
            edit_record(d, "exit_code", 0.into())
        }),
        ("recorded checksum changed", |d| {
            edit_record(d, "checksum", "0000000000000000".into());
        }),
        ("recorded report digest changed", |d| {
            edit_record(d, "report_digest", "0000000000000000".into());
        }),
        ("report cut in half", |d| {
            let bytes = std::fs::read(report(d, "bad")).unwrap();
            std::fs::write(report(d, "bad"), &bytes[..bytes.len() / 2]).unwrap();
        }),
        ("report removed", |d| {
            std::fs::remove_file(report(d, "bad")).unwrap();
        }),
        ("record removed", |d| {
            std::fs::remove_file(record(d, "bad")).unwrap();
        }),
    ];
    let mut failures = Vec::new();
    for (n, (what, damage)) in damages.iter().enumerate() {
        let copy = tmp.path().join(format!("case-{n}"));
        copy_dir(&base, &copy);
        damage(&copy);
        let after = merged(&copy);
        if rank(after) < rank(before) {
            failures.push(format!("{what}: {before} -> {after}"));
        }
    }
    assert!(
        failures.is_empty(),
        "damaged sweeps merged better than their original:\n{}",
        failures.join("\n")
    );
}

fn record(dir: &Path, target: &str) -> PathBuf {
    dir.join(format!("targets/{target}/attempt-1.json"))
}

fn report(dir: &Path, target: &str) -> PathBuf {
    dir.join(format!("targets/{target}/attempt-1/report.json"))
}

/// Sets `key` of the bad target's attempt record.
fn edit_record(dir: &Path, key: &str, value: serde_json::Value) {
    let path = record(dir, "bad");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json[key] = value;
    std::fs::write(&path, json.to_string()).unwrap();
}
