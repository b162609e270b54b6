//! What cudawatch's global-race tool writes (`native/global-race/`): one
//! JSON line per process that loaded it (`{"tool": "cudawatch-global-race",
//! "version": 1, "pid": N}`), one per launch it checked (the kernel, its
//! module, whether it was checked whole, and each race as a pair of
//! instruction offsets in the kernel), and an `{"error": ...}` line for
//! what it could not do. A race's offsets become lines through the
//! module's SASS with line information (`nvdisasm -g`), which puts
//! `//## File "PATH", line N` before the instructions of each line
//! (sample-reports/global_race/first-run/).

use std::collections::HashMap;

use serde::Deserialize;

use crate::model::{FindingKind, OtherAccess, Sample, Severity, Site, SourceLocation, Tool};
use crate::site::{new_site, site_id};

/// The first line every process that loaded the tool writes.
pub const TOOL_LINE: &str = "cudawatch-global-race";

/// One access of a race: its instruction's offset in the kernel and the
/// thread (linear in the grid) that made it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Access {
    /// Byte offset of the instruction in the kernel (unpatched); `null`
    /// where the tool met the access before it had recorded its place
    /// (read it through [`Access::place`]).
    pub offset: Option<u64>,
    /// The thread's index in the whole grid.
    pub thread: u64,
}

impl Access {
    /// The instruction's offset, where it is one: a kernel's code is never
    /// 4 GiB, so a larger figure (an unrecorded pc from the tool's first
    /// version, less the kernel's start) is no place.
    pub fn place(&self) -> Option<u64> {
        self.offset.filter(|o| *o < 1 << 32)
    }
}

/// One race the tool recorded: a pair of instructions, and how often.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Race {
    /// `write-write`, `read-write` (a read, then another thread's write)
    /// or `write-read`.
    pub kind: String,
    /// The access that came first.
    pub first: Access,
    /// The access that met it.
    pub second: Access,
    /// The word's address, in the first example.
    pub address: u64,
    /// How many times the pair met.
    pub count: u64,
}

/// One launch as the tool saw it.
#[derive(Debug, Clone, Deserialize)]
pub struct Launch {
    /// The kernel's (mangled) name.
    pub kernel: String,
    /// The module it came from: its SASS is `modules/N.sass`.
    pub module: Option<u32>,
    /// Whether the launch was checked at all (its threads fit the table).
    pub checked: bool,
    /// Accesses to words the shadow table had no room for.
    #[serde(default)]
    pub words_dropped: u64,
    /// Races the pair table had no room for.
    #[serde(default)]
    pub pairs_dropped: u64,
    /// Whether blocks were ordered through their atomics (grids of up to
    /// 1,024 blocks); races across blocks were weighed only then.
    #[serde(default)]
    pub blocks_ordered: bool,
    /// Atomics on words the synchronisation table had no room for.
    #[serde(default)]
    pub sync_dropped: u64,
    /// The races.
    #[serde(default)]
    pub races: Vec<Race>,
}

impl Launch {
    /// Whether the launch was checked whole: every word and pair kept,
    /// blocks ordered. What was not, the stage says.
    pub fn whole(&self) -> bool {
        self.checked
            && self.words_dropped == 0
            && self.pairs_dropped == 0
            && self.sync_dropped == 0
            && self.blocks_ordered
    }
}

/// Everything the tool wrote.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// The processes that loaded the tool.
    pub processes: Vec<u64>,
    /// Each launch it checked, in order.
    pub launches: Vec<Launch>,
    /// What the tool said it could not do.
    pub errors: Vec<String>,
    /// Lines that were not the tool's (a line cut short when the program
    /// died, say).
    pub unreadable: usize,
}

/// Reads the tool's lines.
pub fn parse(text: &str) -> Output {
    #[derive(Deserialize)]
    struct Line {
        tool: Option<String>,
        pid: Option<u64>,
        error: Option<String>,
    }
    let mut out = Output::default();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Ok(launch) = serde_json::from_str::<Launch>(line) {
            out.launches.push(launch);
            continue;
        }
        match serde_json::from_str::<Line>(line) {
            Ok(Line {
                tool: Some(tool),
                pid,
                ..
            }) if tool == TOOL_LINE => out.processes.extend(pid),
            Ok(Line {
                error: Some(error), ..
            }) => out.errors.push(error),
            _ => out.unreadable += 1,
        }
    }
    out
}

/// Whether a text is the tool's output: its first line is the tool's.
pub fn is_output(head: &str) -> bool {
    head.lines()
        .next()
        .is_some_and(|l| l.contains(&format!("\"tool\": \"{TOOL_LINE}\"")))
}

/// Each kernel's instructions by offset and the line each belongs to, from
/// a module's SASS (`nvdisasm -g -c`).
#[derive(Debug, Clone, Default)]
pub struct LineTable {
    /// Kernel (mangled) -> (offset, its line), in offset order.
    kernels: HashMap<String, Vec<(u64, SourceLocation)>>,
}

impl LineTable {
    /// Reads `nvdisasm -g` output.
    pub fn from_sass(sass: &str) -> LineTable {
        let mut table = LineTable::default();
        let mut kernel: Option<String> = None;
        let mut place: Option<SourceLocation> = None;
        for line in sass.lines().map(str::trim) {
            if let Some(name) = line
                .strip_prefix(".text.")
                .and_then(|rest| rest.strip_suffix(':'))
            {
                kernel = Some(name.to_string());
                place = None;
            } else if let Some(rest) = line.strip_prefix("//## File \"") {
                place = rest.split_once("\", line ").and_then(|(file, n)| {
                    let line = n.split_whitespace().next()?.parse().ok()?;
                    Some(SourceLocation {
                        file: file.to_string(),
                        line,
                    })
                });
            } else if let (Some(k), Some(p)) = (&kernel, &place)
                && let Some(offset) = line
                    .strip_prefix("/*")
                    .and_then(|r| r.split_once("*/"))
                    .and_then(|(hex, _)| u64::from_str_radix(hex, 16).ok())
            {
                table
                    .kernels
                    .entry(k.clone())
                    .or_default()
                    .push((offset, p.clone()));
            }
        }
        table
    }

    /// The files `kernel`'s line information names (none without it:
    /// cuDNN's and cuBLAS's kernels carry none; the user's, built with
    /// `-lineinfo`, name the user's sources; Inductor's, its generated
    /// files).
    pub fn files<'a>(&'a self, kernel: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.kernels
            .get(kernel)
            .into_iter()
            .flatten()
            .map(|(_, place)| place.file.as_str())
    }

    /// The line of the instruction at `offset` in `kernel`.
    pub fn place(&self, kernel: &str, offset: u64) -> Option<&SourceLocation> {
        let rows = self.kernels.get(kernel)?;
        rows.iter().find(|(o, _)| *o == offset).map(|(_, p)| p)
    }
}

/// Each race of each launch as a site: the second access's line is the
/// site's, the first's its other access; one site per kernel and pair of
/// lines (each launch of a loop's kernel adds to the count).
pub fn sites(output: &Output, tables: &HashMap<u32, LineTable>) -> Vec<Site> {
    let mut sites = Vec::new();
    for launch in &output.launches {
        let table = launch.module.and_then(|m| tables.get(&m));
        let place = |access: &Access| {
            let offset = access.place()?;
            table.and_then(|t| t.place(&launch.kernel, offset)).cloned()
        };
        let pc = |access: &Access| access.place().map(|o| format!("0x{o:x}"));
        for race in &launch.races {
            let (first, second) = (place(&race.first), place(&race.second));
            let (first_access, second_access) = accesses(&race.kind);
            let at = |p: &Option<SourceLocation>, access: &Access| match (p, pc(access)) {
                (Some(l), _) => format!("at {}", l.short()),
                (None, Some(pc)) => format!("at +{pc}"),
                (None, None) => "at a place the tool had not yet recorded".to_string(),
            };
            let mut site = new_site(
                Tool::GlobalRace,
                FindingKind::GlobalRace,
                Severity::Error,
                format!(
                    "global-memory race: a {first_access} {} and another thread's \
                     {second_access} {}, nothing ordering them",
                    at(&first, &race.first),
                    at(&second, &race.second)
                ),
            );
            site.kernel = Some(function_name(&launch.kernel));
            site.location = second;
            site.pc = pc(&race.second);
            site.count = race.count;
            site.other = Some(OtherAccess {
                access: capitalised(first_access),
                location: first.clone(),
                pc: pc(&race.first),
            });
            site.samples.push(Sample {
                thread: None,
                block: None,
                address: Some(race.address),
                nearest_allocation: None,
                bytes: None,
            });
            let other = first.map_or_else(
                || pc(&race.first).unwrap_or_else(|| "?".into()),
                |l| l.line.to_string(),
            );
            site.id = site_id(&site, &format!("{}|{other}", race.kind));
            sites.push(site);
        }
    }
    sites
}

/// A kernel's name as the other tools give it (`count_hits`,
/// `ns::scale`) from the mangled one the Sanitizer API gives
/// (`_Z10count_hitsPKiPii`, `_ZN2ns5scaleEPf`): the function's name only,
/// its parameters and template arguments left out; a name that is not
/// mangled (`extern "C"` kernels) or that it cannot read (a substitution,
/// an operator) is kept as it is.
pub fn function_name(mangled: &str) -> String {
    // A template's arguments are left out as the parameters are
    // (`at::native::reduce_kernel`, whose owner the name then says: a
    // mangled `_ZN2at6native...` was taken for the user's kernel).
    crate::mangled::function_path(mangled)
        .map_or_else(|| mangled.to_string(), |path| path.join("::"))
}

/// `Read` for `read`, as racecheck's other accesses are named.
fn capitalised(access: &str) -> String {
    let mut chars = access.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// The two accesses of a race kind, in order.
fn accesses(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "read-write" => ("read", "write"),
        "write-read" => ("write", "read"),
        _ => ("write", "write"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed tool's output on an H200, and its module's SASS
    /// (scripts/capture-global-race.sh).
    fn captured(name: &str) -> String {
        match name {
            "counter_block.jsonl" => include_str!(
                "../../sample-reports/global_race/corpus/counter_block/global-race/global-race.jsonl"
            ),
            "counter_block.0.sass" => include_str!(
                "../../sample-reports/global_race/corpus/counter_block/global-race/modules/0.sass"
            ),
            "counter_block_atomic.jsonl" => include_str!(
                "../../sample-reports/global_race/corpus/counter_block_atomic/global-race/global-race.jsonl"
            ),
            other => panic!("no capture {other}"),
        }
        .to_string()
    }

    #[test]
    fn a_race_lands_on_its_line_through_the_modules_sass() {
        let output = parse(&captured("counter_block.jsonl"));
        assert_eq!(output.processes.len(), 1);
        assert_eq!(output.launches.len(), 1);
        assert!(output.launches[0].whole());
        assert_eq!(output.unreadable, 0);
        let tables = HashMap::from([(0, LineTable::from_sass(&captured("counter_block.0.sass")))]);
        let sites = sites(&output, &tables);
        assert_eq!(sites.len(), 3, "{sites:#?}");
        for site in &sites {
            let line = site.location.as_ref().unwrap();
            assert!(line.file.ends_with("counter_block.cu"), "{line:?}");
            assert_eq!(line.line, 10);
        }
        // Each read met by another thread's write: two entries of one pair
        // of lines, one site once folded (same kernel, lines, kind).
        let reads: Vec<&Site> = sites
            .iter()
            .filter(|s| s.message.starts_with("global-memory race: a read at "))
            .collect();
        assert_eq!(reads.len(), 2, "{sites:#?}");
        assert_eq!(reads[0].id, reads[1].id);
        assert_eq!(reads.iter().map(|s| s.count).sum::<u64>(), 127 + 128);
        for read in &reads {
            let other = read.other.as_ref().unwrap();
            assert_eq!(other.location.as_ref().unwrap().line, 10);
        }
        // A write whose first access the tool met before its pc was
        // recorded (`"offset": null`): no place, said so.
        let write = sites
            .iter()
            .find(|s| {
                s.message
                    .contains("a write at a place the tool had not yet recorded")
            })
            .unwrap_or_else(|| panic!("{sites:#?}"));
        let other = write.other.as_ref().unwrap();
        assert!(other.location.is_none() && other.pc.is_none(), "{other:?}");
        assert_eq!(write.count, 255);
    }

    #[test]
    fn an_offset_past_any_kernel_is_no_place() {
        // The tool before `null`: pc 0 less the kernel's start (waw_blocks,
        // an H200's first call of the day).
        let line = "{\"launch\": 0, \"kernel\": \"_Z11scale_tilesPKfPfi\", \"module\": 0, \
                    \"checked\": true, \"races\": [{\"kind\": \"write-write\", \"first\": \
                    {\"offset\": 18446604074628743424, \"thread\": 2040}, \"second\": \
                    {\"offset\": 224, \"thread\": 2048}, \"address\": 139998485569024, \
                    \"count\": 74}]}";
        let sites = sites(&parse(line), &HashMap::new());
        assert!(
            sites[0]
                .message
                .starts_with("global-memory race: a write at a place the tool had not yet recorded and another thread's write at +0xe0"),
            "{}",
            sites[0].message
        );
    }

    #[test]
    fn kernels_are_named_as_the_other_tools_name_them() {
        assert_eq!(function_name("_Z10count_hitsPKiPii"), "count_hits");
        assert_eq!(function_name("_ZN2ns5scaleEPf"), "ns::scale");
        assert_eq!(function_name("_Z6kernelIfEvPT_"), "kernel");
        assert_eq!(
            function_name("_ZN2at6native13reduce_kernelILi128ELi4ENS0_8ReduceOpIfEEEEvT1_"),
            "at::native::reduce_kernel"
        );
        assert_eq!(function_name("plain_c_kernel"), "plain_c_kernel");
        assert_eq!(function_name("_Z99short"), "_Z99short");
        // A length ending inside a character: kept, never a panic.
        assert_eq!(function_name("_Z1\u{e9}x"), "_Z1\u{e9}x");
        assert_eq!(function_name("_ZN1\u{e9}E"), "_ZN1\u{e9}E");
    }

    #[test]
    fn a_clean_twin_has_launches_and_no_race() {
        let output = parse(&captured("counter_block_atomic.jsonl"));
        assert_eq!(output.launches.len(), 1);
        assert!(output.launches[0].races.is_empty());
        assert!(sites(&output, &HashMap::new()).is_empty());
    }

    #[test]
    fn lines_the_tool_did_not_write_and_its_errors_are_told_apart() {
        let text = "{\"tool\": \"cudawatch-global-race\", \"version\": 1, \"pid\": 42}\n\
                    {\"error\": \"allocating the shadow memory: out of memory\"}\n\
                    {\"launch\": 0, \"kernel\": \"k\", \"module\": 0, \"checked\": tr";
        let output = parse(text);
        assert_eq!(output.processes, vec![42]);
        assert_eq!(output.errors.len(), 1);
        assert_eq!(output.unreadable, 1);
        assert!(is_output(text));
        assert!(!is_output("counted 1 of 256"));
    }

    #[test]
    fn an_offset_without_a_line_keeps_its_offset() {
        let output = parse(&captured("counter_block.jsonl"));
        let sites = sites(&output, &HashMap::new());
        assert!(sites[0].location.is_none());
        assert!(sites[0].message.contains("+0xf0") && sites[0].message.contains("+0x110"));
    }
}
