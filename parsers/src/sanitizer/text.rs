//! Reader of compute-sanitizer's text output (stdout or `--log-file`).
//!
//! Every tool line starts with the prefix `=========`. A record opens with
//! a header (prefix, one space, text), continues with detail lines (prefix
//! and at least four spaces) and ends with a line holding only the prefix
//! and a space. Lines without the prefix are the program's own output,
//! interleaved on the same stream, and are skipped. Numbers carry thousands
//! separators (`4,000`).
//!
//! The text is read for what the XML lacks: the summary lines (error counts,
//! `N errors were not printed`, leak and racecheck totals, and the lines that
//! say the tool never really ran), the distance to the nearest allocation,
//! and records of a run killed before it could write its XML.

use super::{Access, ApiCall, Record, RecordKind, parse_dim3, parse_u64};
use crate::model::{Frame, NearestAllocation, Severity, SourceLocation, ToolSummary};

const PREFIX: &str = "=========";

/// Lines that mean the tool did not really check the program.
const FAILURE_MARKERS: [&str; 9] = [
    "terminated before first instrumented API call",
    "didn't terminate successfully",
    "No attachable process found",
    "Internal Sanitizer Error",
    "Device not supported",
    "Tracking kernels launched by child processes requires",
    "Target application doesn't exist or is not a valid executable",
    "was enabled but no save location was specified",
    // "Tool execution failed: couldn't find exit code." after the tool lost
    // its target: the tool's failure, never a finding in the program.
    "Tool execution failed",
];

/// Unprefixed lines that say compute-sanitizer rejected its options.
const OPTION_ERRORS: [&str; 4] = [
    "Usage: compute-sanitizer",
    "Filter ill-formed",
    "cannot be specified more than once",
    "unrecognised option",
];

/// Reads compute-sanitizer text, calling `on_record` for each record, and
/// returns the summary lines. Never fails: anything unrecognised is skipped
/// or kept as an [`RecordKind::Other`] record.
pub fn parse(input: &[u8], mut on_record: impl FnMut(Record)) -> ToolSummary {
    let mut on_record = |mut record: Record| {
        super::inlined::move_to_user_frame(&mut record);
        on_record(record)
    };
    let text = String::from_utf8_lossy(input);
    let mut summary = ToolSummary::default();
    let mut current: Option<Record> = None;
    let mut test: Option<String> = None;
    for full_line in text.lines() {
        // A CI log puts a timestamp or a job name before each line, and a
        // test runner its own lines between the tool's: the tool's line
        // starts at its prefix.
        let (before, raw_line) = split_log_prefix(full_line);
        if let Some(name) = test_name(before) {
            test = Some(name);
        }
        let Some(rest) = raw_line.strip_prefix(PREFIX) else {
            // compute-sanitizer's own complaints about its options come
            // without the prefix: it never ran the program.
            if let Some(line) = OPTION_ERRORS
                .iter()
                .find_map(|m| full_line.find(m).map(|i| full_line[i..].trim()))
                && !summary.failures.iter().any(|f| f == line)
            {
                summary.failures.push(line.to_string());
            }
            continue;
        };
        let body = rest.trim_start();
        let indent = rest.len() - body.len();
        if body.is_empty() {
            if let Some(record) = current.take() {
                on_record(record);
            }
            continue;
        }
        if indent >= 4 {
            if let Some(record) = current.as_mut() {
                detail(record, body.trim_end());
            }
            continue;
        }
        if let Some(record) = current.take() {
            on_record(record);
        }
        let body = body.trim_end();
        if summary_line(body, &mut summary) {
            continue;
        }
        current = header(body).map(|mut r| {
            r.test = test.clone();
            r
        });
    }
    // A record still open at the end never got its closing line: the run
    // or the log was cut in the middle of it. What it says is incomplete
    // (often no kernel, no position, no stack), so it is counted as the
    // run's incompleteness, never passed on as a finding.
    if current.is_some() {
        summary.cut_records += 1;
    }
    summary
}

/// Splits a line into what a CI log put before the tool's prefix and the
/// tool's line: the prefix must stand alone (followed by a space or the
/// line's end, so pytest's `=====` banners are not it) and what comes
/// before it must end in a space. A line without the prefix is all
/// "before" (a test runner's own line).
fn split_log_prefix(line: &str) -> (&str, &str) {
    let mut from = 0;
    while let Some(at) = line[from..].find(PREFIX).map(|i| i + from) {
        let after = &line[at + PREFIX.len()..];
        let before = &line[..at];
        let stands_alone = after.is_empty() || after.starts_with(' ');
        if stands_alone && (before.is_empty() || before.ends_with(' ')) {
            return (before, &line[at..]);
        }
        from = at + PREFIX.len();
    }
    (line, "")
}

/// The test a runner says it is running: pytest's `file.py::test_name`,
/// gtest's `[ RUN      ] Suite.Name`, ctest's `Start  3: name`.
fn test_name(text: &str) -> Option<String> {
    if let Some(rest) = text.split("[ RUN      ]").nth(1) {
        return rest.split_whitespace().next().map(str::to_string);
    }
    if let Some(rest) = text.split(" Start ").nth(1)
        && let Some((n, name)) = rest.trim().split_once(": ")
        && n.trim().chars().all(|c| c.is_ascii_digit())
    {
        return name.split_whitespace().next().map(str::to_string);
    }
    text.split_whitespace()
        .find(|w| w.contains(".py::"))
        .map(|w| w.to_string())
}

/// Reads a summary or status line into `summary`; false if it is not one.
fn summary_line(body: &str, summary: &mut ToolSummary) -> bool {
    if body == "COMPUTE-SANITIZER" {
        return true;
    }
    if body.contains("were not printed") || body.contains("was not printed") {
        summary.not_printed = first_number(body.trim_start_matches("ERROR SUMMARY:"));
        return true;
    }
    if let Some(rest) = body.strip_suffix("errors were skipped (error buffer overflow).") {
        // One line per process the tool followed: they add up.
        let n = first_number(rest).unwrap_or(0);
        summary.skipped = Some(summary.skipped.unwrap_or(0) + n);
        return true;
    }
    if let Some(rest) = body.strip_prefix("ERROR SUMMARY:") {
        summary.errors = first_number(rest);
        return true;
    }
    if let Some(rest) = body.strip_prefix("LEAK SUMMARY:") {
        let numbers = numbers(rest);
        if numbers.len() >= 2 {
            summary.leaked = Some((numbers[0], numbers[1]));
        }
        return true;
    }
    if let Some(rest) = body.strip_prefix("RACECHECK SUMMARY:") {
        let numbers = numbers(rest);
        if numbers.len() >= 3 {
            summary.racecheck = Some((numbers[0], numbers[1], numbers[2]));
        }
        return true;
    }
    if body == "Target application returned an error" {
        summary.target_failed = true;
        return true;
    }
    if FAILURE_MARKERS.iter().any(|m| body.contains(m)) {
        // Said once per launch it could not track: kept once.
        if !summary.failures.iter().any(|f| f == body) {
            summary.failures.push(body.to_string());
        }
        return true;
    }
    false
}

fn header(body: &str) -> Option<Record> {
    if body.contains(super::BUFFER_OVERFLOW) {
        // The XML's `<kind>Sanitizer</kind>` warning, as the text has it.
        let mut record = Record::new(RecordKind::ToolError);
        record.text = body.to_string();
        return Some(record);
    }
    // Before "Invalid ": "Invalid PC" is an exception, not an access.
    if crate::exceptions::BARE_NAMES.contains(&body) {
        let mut record = Record::new(RecordKind::Imprecise);
        record.text = body.to_string();
        record.detail = Some(body.to_string());
        return Some(record);
    }
    if let Some(rest) = body.strip_prefix("Invalid ") {
        let mut record = Record::new(RecordKind::Precise);
        record.text = body.to_string();
        record.size = size_of(rest);
        return Some(record);
    }
    if body.starts_with("Host API memory access error") {
        // initcheck's host-API record: "Uninitialized access to ADDR on
        // access by cudaMemcpy source" follows (sample-reports/outside/).
        let mut record = Record::new(RecordKind::InitcheckApi);
        record.text = body.to_string();
        record.size = body
            .split_once("of size ")
            .and_then(|(_, s)| first_number(s));
        return Some(record);
    }
    if let Some(rest) = body.strip_prefix(super::HEAP_ERROR) {
        // "Malloc/Free Error encountered : Device-side double free".
        let mut record = Record::new(RecordKind::HeapError);
        record.text = body.to_string();
        record.detail = Some(rest.trim_start_matches([' ', ':']).to_string());
        return Some(record);
    }
    if body == "Stack overflow" {
        let mut record = Record::new(RecordKind::StackOverflow);
        record.text = body.to_string();
        return Some(record);
    }
    if body.starts_with("Uninitialized ") {
        let mut record = Record::new(RecordKind::Initcheck);
        record.text = body.to_string();
        record.size = size_of(body);
        return Some(record);
    }
    if let Some(rest) = body.strip_prefix("Program hit ") {
        let mut record = Record::new(RecordKind::Api);
        record.text = body.to_string();
        record.api = Some(api_call(rest));
        return Some(record);
    }
    if let Some(rest) = body.strip_prefix("Leaked ") {
        let mut record = Record::new(RecordKind::Leak);
        record.text = body.to_string();
        record.size = first_number(rest);
        record.address = rest
            .split_whitespace()
            .find(|w| w.starts_with("0x"))
            .and_then(parse_u64);
        // "Leaked 256 bytes at 0x205dff920 on the device heap": the XML's
        // <type>deviceheap</type>.
        if rest.ends_with("on the device heap") {
            record.detail = Some("deviceheap".to_string());
        }
        return Some(record);
    }
    if let Some(rest) = body.strip_prefix("Unused memory in allocation ") {
        let mut record = Record::new(RecordKind::UnusedMemory);
        record.text = body.to_string();
        record.address = rest.split_whitespace().next().and_then(parse_u64);
        record.size = rest
            .split_once("of size ")
            .and_then(|(_, s)| first_number(s));
        return Some(record);
    }
    if let Some(rest) = body.strip_prefix("Barrier error detected.") {
        let mut record = Record::new(RecordKind::Synccheck);
        record.text = body.to_string();
        record.detail = Some(rest.trim().trim_end_matches('.').to_string());
        return Some(record);
    }
    let (severity, rest) = if let Some(rest) = body.strip_prefix("Error: ") {
        (Severity::Error, rest)
    } else if let Some(rest) = body.strip_prefix("Warning: ") {
        (Severity::Warning, rest)
    } else {
        (Severity::Error, body)
    };
    if let Some(first) = rest.strip_prefix("Race reported between ") {
        let mut record = Record::new(RecordKind::Analysis);
        record.severity = severity;
        record.text = body.to_string();
        record.first_access = Some(access_at(first));
        return Some(record);
    }
    if rest.contains("hazard detected") {
        let mut record = Record::new(RecordKind::Hazard);
        record.severity = severity;
        record.text = body.to_string();
        record.detail = rest
            .split_whitespace()
            .skip_while(|w| *w != "Potential")
            .nth(1)
            .map(str::to_string);
        if let Some((_, after)) = rest.split_once(" at ") {
            let mut words = after.split_whitespace();
            words.next();
            record.address = words.next().and_then(parse_u64);
        }
        if let Some((_, block)) = rest.split_once("in block ") {
            record.block = parse_dim3(block.trim_end_matches(':').trim());
        }
        return Some(record);
    }
    let mut record = if rest.starts_with("Warp ") || rest.starts_with("Lane ") {
        Record::new(RecordKind::Imprecise)
    } else {
        Record::new(RecordKind::Other(rest.to_string()))
    };
    record.severity = severity;
    record.text = rest.to_string();
    record.detail = Some(rest.to_string());
    Some(record)
}

fn detail(record: &mut Record, line: &str) {
    if let Some(rest) = line.strip_prefix("at ") {
        let (func, pc, location) = code_position(rest);
        record.func = Some(func);
        record.pc = pc;
        record.location = location;
    } else if let Some(rest) = line.strip_prefix("by thread ") {
        let (thread, block) = rest.split_once(" in block ").unwrap_or((rest, ""));
        record.thread = parse_dim3(thread);
        record.block = parse_dim3(block);
    } else if let Some(rest) = line.strip_prefix("Access to ") {
        let mut words = rest.split_whitespace();
        record.address = words.next().and_then(parse_u64);
        if let Some((_, what)) = rest.split_once(" is ") {
            record.detail = Some(what.to_string());
        }
    } else if let Some(rest) = line.strip_prefix("Uninitialized access to ") {
        // A host-API record's first uninitialised byte and its call.
        let mut words = rest.split_whitespace();
        record.address = words.next().and_then(parse_u64);
        record.detail = rest
            .split_once("on access by ")
            .map(|(_, by)| by.to_string());
    } else if let Some(rest) = line.strip_prefix("Address ") {
        record.address = rest.split_whitespace().next().and_then(parse_u64);
    } else if let Some(rest) = line.strip_prefix("and is ") {
        record.nearest_allocation = nearest_allocation(rest);
    } else if let Some(rest) = line.strip_prefix("and ") {
        if let Some((access, hazards)) = rest.split_once(" [") {
            let (func, pc, location) =
                code_position(access.split_once(" access at ").map_or(access, |(_, a)| a));
            record.func = Some(func);
            record.pc = pc;
            record.location = location;
            record.detail = access.split_whitespace().next().map(str::to_string);
            record.hazards = first_number(hazards);
        }
    } else if let Some(frame) = line.strip_prefix("Host Frame:") {
        record.host_frames.push(host_frame(frame.trim()));
    } else if let Some(rest) = line
        .strip_prefix("Write Thread ")
        .or_else(|| line.strip_prefix("Read Thread "))
    {
        let direction = if line.starts_with("Write") {
            "Write"
        } else {
            "Read"
        };
        let (thread, position) = rest.split_once(" at ").unwrap_or((rest, ""));
        let (func, pc, location) = code_position(position);
        if record.first_access.is_none() {
            record.first_access = Some(Access {
                direction: direction.to_string(),
                func: Some(func),
                location,
                pc,
                thread: parse_dim3(thread),
            });
        } else {
            record.func = Some(func);
            record.pc = pc;
            record.location = location;
            record.thread = parse_dim3(thread);
        }
    } else if let Some(frame) = line.strip_prefix("Device Frame:") {
        let (func, pc, location) = code_position(frame.trim());
        record.device_frames.push(Frame {
            func: Some(func),
            module: None,
            file: location.as_ref().map(|l| l.file.clone()),
            line: location.map(|l| l.line),
            pc,
        });
    } else if !line.starts_with("Saved host backtrace") {
        record
            .unrecognised
            .push(("text".to_string(), line.to_string()));
    }
}

/// `oob_write(int *, int)+0x80 in fx.cu:8`, `f+0x19a0`, or the older
/// `unaligned_kernel():0x160 in memcheck_demo.cu:6`.
fn code_position(text: &str) -> (String, Option<String>, Option<SourceLocation>) {
    let (code, location) = match text.rfind(" in ") {
        Some(i) => (&text[..i], location_of(&text[i + 4..])),
        None => (text, None),
    };
    let (func, pc) = match code.rfind("+0x").or_else(|| code.rfind(":0x")) {
        Some(i) => (&code[..i], Some(code[i + 1..].to_string())),
        None => (code, None),
    };
    (func.to_string(), pc, location)
}

fn location_of(text: &str) -> Option<SourceLocation> {
    let (file, line) = text.trim().rsplit_once(':')?;
    Some(SourceLocation {
        file: file.to_string(),
        line: line.trim().parse().ok()?,
    })
}

/// `main [0x8eec] in fx` (native), `main in tri.py:6` (Python),
/// ` [0x2a1c9] in libc.so.6` (stripped).
fn host_frame(text: &str) -> Frame {
    let mut frame = Frame::default();
    if let Some(open) = text
        .rfind(" [0x")
        .or_else(|| text.strip_prefix("[0x").map(|_| 0))
    {
        let func = text[..open].trim();
        let rest = &text[open..];
        if let Some((pc, module)) = rest.trim().trim_start_matches('[').split_once("] in ") {
            frame.pc = Some(pc.to_string());
            frame.module = Some(module.to_string());
        }
        frame.func = (!func.is_empty()).then(|| func.to_string());
    } else if let Some(i) = text.rfind(" in ") {
        frame.func = Some(text[..i].to_string());
        if let Some(location) = location_of(&text[i + 4..]) {
            frame.file = Some(location.file);
            frame.line = Some(location.line);
        }
    } else {
        frame.func = Some(text.to_string());
    }
    frame
}

/// `cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaDeviceSynchronize.`
fn api_call(text: &str) -> ApiCall {
    let error = text
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    let code = text
        .split_once("(error ")
        .and_then(|(_, r)| first_number(r))
        .map(|n| n as i64);
    let message = text
        .split_once("due to \"")
        .and_then(|(_, r)| r.split_once('"'))
        .map(|(m, _)| m.to_string())
        .unwrap_or_default();
    let api = text
        .rsplit_once("API call to ")
        .map(|(_, a)| a.trim_end_matches('.').to_string())
        .unwrap_or_default();
    ApiCall {
        api,
        error,
        code,
        message,
    }
}

/// `1 bytes after the nearest allocation at 0x7f9e30800000 of size 4,000 bytes`
fn nearest_allocation(text: &str) -> Option<NearestAllocation> {
    let (lead, tail) = text.split_once(" the nearest allocation at ")?;
    let mut tail_words = tail.split_whitespace();
    let base = tail_words.next().and_then(parse_u64)?;
    let size = tail
        .split_once("of size ")
        .and_then(|(_, s)| first_number(s))?;
    let (relation, distance) = if lead.starts_with("inside") {
        ("inside", 0)
    } else {
        let distance = first_number(lead)?;
        let relation = if lead.contains("before") {
            "before"
        } else {
            "after"
        };
        (relation, distance)
    };
    Some(NearestAllocation {
        relation: relation.to_string(),
        distance,
        base,
        size,
    })
}

fn access_at(text: &str) -> Access {
    let direction = text
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    let position = text.split_once(" access at ").map_or(text, |(_, p)| p);
    let (func, pc, location) = code_position(position);
    Access {
        direction,
        func: Some(func),
        location,
        pc,
        thread: None,
    }
}

fn size_of(text: &str) -> Option<u64> {
    text.split_once("of size ")
        .and_then(|(_, s)| first_number(s))
}

/// Every number in `text`, thousands separators removed.
fn numbers(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            current.push(c);
        } else if c == ','
            && !current.is_empty()
            && chars.peek().is_some_and(|n| n.is_ascii_digit())
        {
            continue;
        } else if !current.is_empty() {
            out.extend(current.parse::<u64>().ok());
            current.clear();
        }
    }
    out.extend(current.parse::<u64>().ok());
    out
}

fn first_number(text: &str) -> Option<u64> {
    numbers(text).into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_with_thousands_separators_are_read_whole() {
        assert_eq!(
            numbers("20,409 bytes leaked in 4 allocations"),
            vec![20409, 4]
        );
        assert_eq!(
            numbers("1 hazard displayed (1 error, 0 warnings)"),
            vec![1, 1, 0]
        );
        assert_eq!(
            first_number(" 16,940,793,345 bytes after"),
            Some(16_940_793_345)
        );
    }

    #[test]
    fn both_old_and_new_code_positions_are_read() {
        let (func, pc, loc) = code_position("oob_write(int *, int)+0x80 in fx.cu:8");
        assert_eq!(
            (func.as_str(), pc.as_deref()),
            ("oob_write(int *, int)", Some("0x80"))
        );
        assert_eq!(loc.unwrap().to_string(), "fx.cu:8");
        let (func, pc, loc) = code_position("unaligned_kernel():0x160 in memcheck_demo.cu:6");
        assert_eq!(
            (func.as_str(), pc.as_deref()),
            ("unaligned_kernel()", Some("0x160"))
        );
        assert_eq!(loc.unwrap().line, 6);
    }

    #[test]
    fn python_native_and_stripped_host_frames_are_told_apart() {
        let py = host_frame("main in triton_hidden_oob.py:19");
        assert!(py.is_python());
        assert_eq!(py.line, Some(19));
        let native = host_frame("main [0x8eec] in fx");
        assert_eq!(native.module.as_deref(), Some("fx"));
        let stripped = host_frame("[0x2a1c9] in libc.so.6");
        assert_eq!(stripped.func, None);
        assert_eq!(stripped.pc.as_deref(), Some("0x2a1c9"));
    }
}
