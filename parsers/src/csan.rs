//! Reader of PyTorch's CUDA sanitizer (CSAN, `TORCH_CUDA_SANITIZER=1`)
//! reports, as it prints them on the program's stderr (torch 2.11, seen on
//! the H100: `sample-reports/pytorch_instruments/stream_race/csan.stderr`):
//!
//! ```text
//! ============================
//! CSAN detected a possible data race on tensor with data pointer 140027408439808
//! Access by stream 1024246128 during kernel:
//! aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
//! reading from argument(s) self
//! With stack trace:
//!   File "/work/stream_race.py", line 18, in <module>
//!     batch = (raw - raw.mean()) / raw.std()
//!   File ".../torch/cuda/_sanitizer.py", line 610, in __torch_dispatch__
//!
//! Previous access by stream 0 during kernel:
//! aten::normal_(Tensor(a!) self, ...) -> Tensor(a!)
//! writing to argument(s) self, and to the output
//! With stack trace:
//!   ...
//!
//! Tensor was allocated with stack trace:
//!   ...
//! ```
//!
//! then `torch.cuda._sanitizer.CUDASanitizerErrors: detected N errors` as
//! the program's exception. Each report becomes a stream-race site at the
//! user's line of the later access, naming the earlier one; the stacks keep
//! the user's frames first (PyTorch's own, below them, are dropped).

use crate::model::{FindingKind, Frame, OtherAccess, Severity, Site, SourceLocation, Tool};
use crate::site::{new_site, site_id};

/// The line every CSAN report starts with.
pub const REPORT_MARKER: &str = "CSAN detected a possible data race on tensor";

/// One side of a race: the kernel, the stream and how it touched the tensor.
#[derive(Debug, Clone, Default, PartialEq)]
struct Access {
    stream: String,
    /// The operator, without its schema: `aten::mean`.
    operator: String,
    /// `reading from argument(s) self`, `writing to argument(s) self, and to the output`.
    how: String,
    /// The user's frames, innermost first.
    frames: Vec<Frame>,
}

impl Access {
    fn writes(&self) -> bool {
        self.how.starts_with("writing")
    }

    fn describe(&self) -> String {
        format!(
            "{} on stream {} ({})",
            self.operator,
            self.stream,
            if self.writes() { "writes" } else { "reads" }
        )
    }
}

/// CSAN failing inside itself: the program's last traceback ends in
/// `torch/cuda/_sanitizer.py` (torch 2.11's CSAN raised "Cannot access data
/// pointer of Tensor that doesn't have storage" on a sparse gradient, H200,
/// tests/gpu/real/train_recsys.py). Not a race and not the program's error.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnFailure {
    /// `RuntimeError: Cannot access data pointer of Tensor ...`.
    pub exception: String,
    /// The user's line whose operator CSAN failed on.
    pub user_frame: Option<Frame>,
}

/// CSAN's own failure in a program's output, if its last traceback is one.
pub fn own_failure(bytes: &[u8]) -> Option<OwnFailure> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let last = crate::traceback::tracebacks(&lines).pop()?;
    let innermost = lines[last.lines.clone()]
        .iter()
        .filter_map(|l| crate::traceback::frame(l))
        .next_back()?;
    let in_csan = innermost
        .file
        .as_deref()?
        .ends_with("torch/cuda/_sanitizer.py");
    // The races CSAN found are raised from there too, as its own error.
    let races = last.exception.contains("CUDASanitizerErrors");
    (in_csan && !races).then_some(OwnFailure {
        exception: last.exception,
        user_frame: last.user_frame,
    })
}

/// Where a report is being read.
#[derive(PartialEq)]
enum Part {
    Current,
    Previous,
    Allocation,
}

/// The stream-race sites of every CSAN report in a program's output.
pub fn parse(lines: &[&str]) -> Vec<Site> {
    parse_ranked(lines, &[])
}

/// The races in a program's whole output, each with the rank its
/// launcher's prefix named (`[rank1]:`, `[default1]:`).
pub fn parse_output(bytes: &[u8]) -> Vec<Site> {
    let text = String::from_utf8_lossy(bytes);
    let tagged: Vec<&str> = text.lines().collect();
    let (lines, tags) = crate::program::ranks::untag(&tagged);
    parse_ranked(&lines, &tags)
}

/// As [`parse`], for lines a launcher's prefixes were taken off
/// (`program::ranks::untag`): each race names the rank that reported it.
pub fn parse_ranked(lines: &[&str], tags: &[Option<crate::program::ranks::Tag>]) -> Vec<Site> {
    let mut sites: Vec<Site> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with(REPORT_MARKER) {
            i += 1;
            continue;
        }
        let process = tags.get(i).copied().flatten().map(|t| t.process());
        let (mut site, next) = report(lines, i);
        i = next;
        match sites.iter_mut().find(|s| s.id == site.id) {
            Some(existing) => {
                existing.count += 1;
                if let Some(p) = process
                    && !existing.processes.contains(&p)
                {
                    existing.processes.push(p);
                }
            }
            None => {
                site.processes.extend(process);
                sites.push(site);
            }
        }
    }
    sites
}

/// Reads the report that starts at `start`; returns its site and the line
/// after it.
fn report(lines: &[&str], start: usize) -> (Site, usize) {
    let mut current = Access::default();
    let mut previous = Access::default();
    let mut allocated: Vec<Frame> = Vec::new();
    let mut part = Part::Current;
    let mut i = start + 1;
    let mut expect_operator = false;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with(REPORT_MARKER) || line.starts_with("Traceback (most recent call last)")
        {
            break;
        }
        if line.starts_with("=====") {
            i += 1;
            break;
        }
        let side = match part {
            Part::Current => &mut current,
            _ => &mut previous,
        };
        if let Some(rest) = line.strip_prefix("Access by stream ") {
            part = Part::Current;
            current.stream = stream_of(rest);
            expect_operator = true;
        } else if let Some(rest) = line.strip_prefix("Previous access by stream ") {
            part = Part::Previous;
            previous.stream = stream_of(rest);
            expect_operator = true;
        } else if line.starts_with("Tensor was allocated with stack trace") {
            part = Part::Allocation;
        } else if expect_operator && !line.trim().is_empty() {
            side.operator = line.split('(').next().unwrap_or(line).trim().to_string();
            expect_operator = false;
        } else if line.starts_with("reading from") || line.starts_with("writing to") {
            side.how = line.trim().to_string();
        } else if let Some(frame) = crate::traceback::frame(line) {
            let frames = match part {
                Part::Current => &mut current.frames,
                Part::Previous => &mut previous.frames,
                Part::Allocation => &mut allocated,
            };
            frames.push(frame);
        }
        i += 1;
    }
    (site_of(current, previous, allocated), i)
}

/// `1024246128 during kernel:` → `1024246128`.
fn stream_of(rest: &str) -> String {
    rest.split_whitespace().next().unwrap_or("").to_string()
}

/// The user's innermost frame. CSAN prints a stack as Python's traceback
/// does, outermost first: in the real prefetcher capture the side stream's
/// write is `prefetch.py:22` (inside `prefetch()`), called from line 25.
fn user_frame(frames: &[Frame]) -> Option<&Frame> {
    frames.iter().rev().find(|f| !f.is_runtime())
}

fn location(frame: Option<&Frame>) -> Option<SourceLocation> {
    let frame = frame?;
    Some(SourceLocation {
        file: frame.file.clone()?,
        line: frame.line?,
    })
}

fn site_of(current: Access, previous: Access, allocated: Vec<Frame>) -> Site {
    let at = location(user_frame(&previous.frames));
    let message = format!(
        "stream race on one tensor: {} while {} may still be running, with no \
         wait_stream, event or synchronize between them",
        current.describe(),
        previous.describe()
    );
    let mut site = new_site(
        Tool::Csan,
        FindingKind::StreamRace,
        Severity::Error,
        message,
    );
    site.python_frame = user_frame(&current.frames).cloned();
    site.location = location(site.python_frame.as_ref());
    site.kernel = Some(current.operator.clone());
    site.other = Some(OtherAccess {
        access: format!(
            "{} by {} on stream {}",
            if previous.writes() { "Write" } else { "Read" },
            previous.operator,
            previous.stream
        ),
        location: at.clone(),
        pc: None,
    });
    // The user's stacks, innermost first: both accesses and the allocation.
    site.host_frames = [&current.frames, &previous.frames, &allocated]
        .into_iter()
        .filter_map(|frames| user_frame(frames).cloned())
        .collect();
    let discriminator = format!(
        "{}|{}|{}",
        previous.operator,
        at.as_ref()
            .map(|l| format!("{}:{}", l.file, l.line))
            .unwrap_or_default(),
        current.how
    );
    site.id = site_id(&site, &discriminator);
    site
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csan_failing_inside_itself_is_told_from_the_programs_own_error() {
        let own = "step 0\nTraceback (most recent call last):\n  \
                   File \"/work/train_recsys.py\", line 54, in <module>\n    loss.backward()\n  \
                   File \"/opt/torch/.venv/lib/python3.12/site-packages/torch/cuda/_sanitizer.py\", line 504, in _handle_argument\n    \
                   data_ptr = value.data_ptr()\nRuntimeError: Cannot access data pointer of Tensor \
                   that doesn't have storage\n";
        let failure = own_failure(own.as_bytes()).unwrap();
        assert!(
            failure
                .exception
                .starts_with("RuntimeError: Cannot access data pointer")
        );
        assert_eq!(failure.user_frame.unwrap().line, Some(54));
        // The program's own error, and CSAN's race exception (raised from
        // its dispatch, with the races printed above it), are not.
        let programs = own.replace(
            "/opt/torch/.venv/lib/python3.12/site-packages/torch/cuda/_sanitizer.py",
            "/work/model.py",
        );
        assert_eq!(own_failure(programs.as_bytes()), None);
        let races = own.replace(
            "RuntimeError: Cannot access data pointer of Tensor that doesn't have storage",
            "torch.cuda._sanitizer.CUDASanitizerErrors: detected 1 errors",
        );
        assert_eq!(own_failure(races.as_bytes()), None);
        assert_eq!(own_failure(b"no traceback\n"), None);
    }

    const REPORT: &str = "============================
CSAN detected a possible data race on tensor with data pointer 140027408439808
Access by stream 1024246128 during kernel:
aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
reading from argument(s) self
With stack trace:
  File \"/work/stream_race.py\", line 18, in <module>
    batch = (raw - raw.mean()) / raw.std()
  File \"/venv/lib/python3.12/site-packages/torch/cuda/_sanitizer.py\", line 610, in __torch_dispatch__
    errors = self.event_handler._handle_kernel_launch(

Previous access by stream 0 during kernel:
aten::normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) -> Tensor(a!)
writing to argument(s) self, and to the output
With stack trace:
  File \"/work/stream_race.py\", line 16, in <module>
    raw.normal_()

Tensor was allocated with stack trace:
  File \"/work/stream_race.py\", line 15, in <module>
    raw = torch.empty(256, 512, device=\"cuda\")

Traceback (most recent call last):
";

    #[test]
    fn a_report_is_a_stream_race_at_the_users_line_naming_the_other_access() {
        let lines: Vec<&str> = REPORT.lines().collect();
        let sites = parse(&lines);
        assert_eq!(sites.len(), 1);
        let site = &sites[0];
        assert_eq!(site.kind, FindingKind::StreamRace);
        assert_eq!(site.tool, Tool::Csan);
        let at = site.location.as_ref().unwrap();
        assert_eq!((at.file.as_str(), at.line), ("/work/stream_race.py", 18));
        let other = site.other.as_ref().unwrap();
        assert_eq!(other.access, "Write by aten::normal_ on stream 0");
        assert_eq!(other.location.as_ref().unwrap().line, 16);
        assert!(
            site.message
                .contains("aten::mean on stream 1024246128 (reads)")
        );
        let lines_seen: Vec<u32> = site.host_frames.iter().filter_map(|f| f.line).collect();
        assert_eq!(lines_seen, [18, 16, 15], "both accesses and the allocation");
    }

    #[test]
    fn the_same_race_in_every_step_is_one_site() {
        let twice = format!("{REPORT}{REPORT}");
        let lines: Vec<&str> = twice.lines().collect();
        let sites = parse(&lines);
        assert_eq!(sites.len(), 1);
        assert_eq!(sites[0].count, 2);
    }

    #[test]
    fn a_report_cut_short_still_names_what_it_has() {
        let lines: Vec<&str> = REPORT.lines().take(8).collect();
        let sites = parse(&lines);
        assert_eq!(sites.len(), 1);
        assert_eq!(sites[0].location.as_ref().unwrap().line, 18);
        assert!(sites[0].other.as_ref().unwrap().location.is_none());
    }
}

#[cfg(test)]
mod teed_tests {
    /// The H100 capture of a stream race, as `torchrun --tee 3` prints it
    /// from local rank 1: every line prefixed `[default1]:`.
    #[test]
    fn a_race_printed_through_torchruns_tee_names_its_local_rank() {
        let captured =
            include_str!("../../sample-reports/pytorch_instruments/stream_race/csan.stderr");
        let teed: String = captured
            .lines()
            .map(|l| format!("[default1]:{l}\n"))
            .collect();
        let plain = super::parse_output(captured.as_bytes());
        let sites = super::parse_output(teed.as_bytes());
        assert!(!sites.is_empty());
        assert_eq!(sites.len(), plain.len());
        assert_eq!(sites[0].id, plain[0].id, "the same race, untagged");
        assert_eq!(sites[0].processes[0].local_rank, Some(1));
    }
}
