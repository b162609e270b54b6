//! Streaming reader of compute-sanitizer's `--xml --save` output.
//!
//! One `<record>` is held in memory at a time and handed to a callback, so
//! memory does not grow with the file (a `--print-limit 0` run writes one
//! record per faulting thread: hundreds of megabytes are normal). A file
//! that ends early, as when the tool was killed, yields every complete record
//! and says where it broke; a file that is not compute-sanitizer XML at all
//! is an error naming the position.

use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::Event;

use super::{Access, ApiCall, Record, RecordKind, parse_u64};
use crate::error::{ParseError, ParseErrorKind};
use crate::model::{Dim3, Frame, Severity, SourceLocation};

const ROOT: &str = "ComputeSanitizerOutput";

/// What a complete or partial read of one XML file gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlRead {
    /// Complete records handed to the callback.
    pub records: u64,
    /// Set when the document broke off or went bad after it had started:
    /// the records before it were kept.
    pub broken: Option<ParseError>,
}

/// Reads a compute-sanitizer XML document, calling `on_record` for each
/// complete `<record>`.
///
/// Returns an error only when the input is not compute-sanitizer XML (its
/// root element never opened). Damage after the root opened is returned in
/// [`XmlRead::broken`] with every record before it delivered.
pub fn parse<R: BufRead>(
    input: R,
    mut on_record: impl FnMut(Record),
) -> Result<XmlRead, ParseError> {
    let mut reader = Reader::from_reader(input);
    reader.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut state = State::default();
    let mut read = XmlRead {
        records: 0,
        broken: None,
    };
    loop {
        let event = reader.read_event_into(&mut buf);
        let offset = reader.buffer_position();
        match event {
            Ok(Event::Start(e)) => state.start(e.name().as_ref(), offset)?,
            Ok(Event::Empty(e)) => {
                state.start(e.name().as_ref(), offset)?;
                if let Some(record) = state.end() {
                    read.records += 1;
                    on_record(record);
                }
                if state.depth == 0 {
                    state.closed = true;
                }
            }
            Ok(Event::End(_)) => {
                if let Some(record) = state.end() {
                    read.records += 1;
                    on_record(record);
                }
                if state.depth == 0 {
                    state.closed = true;
                }
            }
            Ok(Event::Text(e)) => state.text.push_str(&utf8(e.as_ref())),
            Ok(Event::CData(e)) => state.text.push_str(&utf8(e.as_ref())),
            Ok(Event::GeneralRef(e)) => {
                let name = String::from_utf8_lossy(e.as_ref()).into_owned();
                match e.resolve_char_ref() {
                    Ok(Some(c)) => state.text.push(c),
                    _ => match quick_xml::escape::resolve_predefined_entity(&name) {
                        Some(s) => state.text.push_str(s),
                        None => {
                            state.text.push('&');
                            state.text.push_str(&name);
                            state.text.push(';');
                        }
                    },
                }
            }
            Ok(Event::Eof) => {
                if !state.started {
                    return Err(ParseError::new(
                        ParseErrorKind::NotThisFormat("no <ComputeSanitizerOutput> element".into()),
                        offset,
                        "",
                    ));
                }
                if !state.closed {
                    read.broken = Some(ParseError::new(
                        ParseErrorKind::Truncated,
                        offset,
                        state.path(),
                    ));
                }
                break;
            }
            Ok(_) => {}
            Err(e) => {
                let err = ParseError::new(
                    ParseErrorKind::Xml(e.to_string()),
                    reader.error_position(),
                    state.path(),
                );
                if !state.started {
                    return Err(err);
                }
                read.broken = Some(err);
                break;
            }
        }
        buf.clear();
    }
    Ok(read)
}

/// The reader's position: open elements, the text of the innermost one, and
/// the record being read. Buffers are reused from record to record, so a
/// file of a million records costs few allocations beyond the records
/// themselves.
#[derive(Default)]
struct State {
    /// `names[..depth]` are the open elements; deeper slots keep their
    /// capacity for reuse.
    names: Vec<String>,
    has_child: Vec<bool>,
    depth: usize,
    started: bool,
    closed: bool,
    text: String,
    record_index: usize,
    in_record: bool,
    record: RawRecord,
}

/// The leaves of one `<record>`, as (path below `record`, text) pairs, and
/// its frames. `leaves[..len]` are this record's; the rest are spare buffers.
#[derive(Default)]
struct RawRecord {
    leaves: Vec<(String, String)>,
    len: usize,
    host_frames: Vec<Frame>,
    device_frames: Vec<Frame>,
}

impl RawRecord {
    fn clear(&mut self) {
        self.len = 0;
        self.host_frames.clear();
        self.device_frames.clear();
    }

    fn leaves(&self) -> &[(String, String)] {
        &self.leaves[..self.len]
    }
}

impl State {
    fn name(&self, depth: usize) -> &str {
        self.names.get(depth).map_or("", String::as_str)
    }

    fn path(&self) -> String {
        let mut path = String::new();
        for i in 0..self.depth {
            if i > 0 {
                path.push('/');
            }
            path.push_str(self.name(i));
            if i == 1 && self.name(i) == "record" {
                path.push_str(&format!("[{}]", self.record_index.saturating_sub(1)));
            }
        }
        path
    }

    fn start(&mut self, name: &[u8], offset: u64) -> Result<(), ParseError> {
        let name = utf8(name);
        if !self.started {
            if name != ROOT {
                return Err(ParseError::new(
                    ParseErrorKind::NotThisFormat(format!(
                        "root element is <{name}>, not <{ROOT}>"
                    )),
                    offset,
                    "",
                ));
            }
            self.started = true;
        }
        if self.depth > 0 {
            self.has_child[self.depth - 1] = true;
        }
        if self.depth == 1 && name == "record" {
            self.record.clear();
            self.in_record = true;
            self.record_index += 1;
        }
        if name == "frame" && self.in_record {
            match self.name(self.depth.wrapping_sub(1)) {
                "deviceStack" => self.record.device_frames.push(Frame::default()),
                _ => self.record.host_frames.push(Frame::default()),
            }
        }
        if self.names.len() <= self.depth {
            self.names.push(String::new());
            self.has_child.push(false);
        }
        self.names[self.depth].clear();
        self.names[self.depth].push_str(&name);
        self.has_child[self.depth] = false;
        self.depth += 1;
        self.text.clear();
        Ok(())
    }

    /// Closes the innermost element; returns the record it completed, if any.
    fn end(&mut self) -> Option<Record> {
        if self.depth == 0 {
            return None;
        }
        self.depth -= 1;
        let depth = self.depth;
        let is_leaf = !self.has_child[depth];
        if depth == 1 && self.name(1) == "record" {
            self.text.clear();
            self.in_record = false;
            return Some(to_record(&self.record));
        }
        if self.in_record && is_leaf && depth >= 2 {
            let value = self.text.trim();
            if self.name(depth - 1) == "frame" {
                let frames = match self.name(depth.wrapping_sub(2)) {
                    "deviceStack" => &mut self.record.device_frames,
                    _ => &mut self.record.host_frames,
                };
                if let Some(frame) = frames.last_mut() {
                    set_frame_field(frame, &self.names[depth], value.to_string());
                }
            } else {
                let record = &mut self.record;
                if record.leaves.len() <= record.len {
                    record.leaves.push((String::new(), String::new()));
                }
                let (path, slot) = &mut record.leaves[record.len];
                path.clear();
                for name in &self.names[2..depth] {
                    path.push_str(name);
                    path.push('/');
                }
                path.push_str(&self.names[depth]);
                slot.clear();
                slot.push_str(value);
                record.len += 1;
            }
        }
        self.text.clear();
        None
    }
}

/// Bytes as text: borrowed when valid UTF-8 (the fast, usual case), with
/// U+FFFD for bad bytes otherwise.
fn utf8(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

fn set_frame_field(frame: &mut Frame, field: &str, value: String) {
    match field {
        "func" => frame.func = Some(value),
        "module" => frame.module = Some(value),
        "path" => frame.file = Some(value),
        "line" => frame.line = value.parse().ok(),
        "pc" => frame.pc = Some(value),
        _ => {}
    }
}

/// Turns the leaves of one record into a typed [`Record`]. Leaves it does
/// not know stay in `unrecognised`, so a new tool version loses nothing.
fn to_record(raw: &RawRecord) -> Record {
    let get = |path: &str| {
        raw.leaves()
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, v)| v.as_str())
    };
    let dim = |[x, y, z]: [&str; 3]| -> Option<Dim3> {
        Some(Dim3 {
            x: get(x)?.parse().ok()?,
            y: get(y)?.parse().ok()?,
            z: get(z)?.parse().ok()?,
        })
    };
    let location = |[path, line]: [&str; 2]| -> Option<SourceLocation> {
        Some(SourceLocation {
            file: get(path)?.to_string(),
            line: get(line)?.parse().ok()?,
        })
    };
    let kind = RecordKind::from_xml(get("kind").unwrap_or(""));
    let mut record = Record::new(kind.clone());
    record.severity = match get("level") {
        Some("Warning") => Severity::Warning,
        _ => Severity::Error,
    };
    record.text = get("what/text").unwrap_or_default().to_string();
    record.func = get("where/func").map(str::to_string);
    record.location = location(["where/path", "where/line"]);
    record.pc = get("where/pc").map(str::to_string);
    record.thread = dim(["who/threadIdx/x", "who/threadIdx/y", "who/threadIdx/z"]);
    record.block = dim(["who/blockIdx/x", "who/blockIdx/y", "who/blockIdx/z"]);
    record.address = get("what/address").and_then(parse_u64);
    record.size = get("what/size").and_then(parse_u64);
    record.detail = get("what/error")
        .or(get("what/type"))
        .or(get("what/exception"))
        .map(str::to_string);
    let mut known: Vec<&str> = vec![
        "kind",
        "level",
        "what/text",
        "where/func",
        "where/path",
        "where/line",
        "where/pc",
        "who/threadIdx/x",
        "who/threadIdx/y",
        "who/threadIdx/z",
        "who/blockIdx/x",
        "who/blockIdx/y",
        "who/blockIdx/z",
        "what/address",
        "what/size",
        "what/error",
        "what/type",
        "what/exception",
        "what/space",
        "what/direction",
        "what/pc",
        "hostStack/saveLocation",
    ];
    match &kind {
        RecordKind::Api => {
            record.api = Some(ApiCall {
                api: get("what/api").unwrap_or_default().to_string(),
                error: get("what/error").unwrap_or_default().to_string(),
                code: get("what/result").and_then(|r| r.parse().ok()),
                message: get("what/message").unwrap_or_default().to_string(),
            });
            known.extend(["what/api", "what/message", "what/result"]);
        }
        RecordKind::UnusedMemory => {
            record.address = get("what/allocation/address").and_then(parse_u64);
            record.size = get("what/allocation/size").and_then(parse_u64);
            record.detail = get("what/unused").map(|u| format!("{u} bytes unused"));
            known.extend([
                "what/allocation/address",
                "what/allocation/size",
                "what/block/address",
                "what/block/size",
                "what/unused",
            ]);
        }
        RecordKind::Analysis => {
            record.func = get("what/destination/where/func").map(str::to_string);
            record.location =
                location(["what/destination/where/path", "what/destination/where/line"]);
            record.pc = get("what/destination/where/pc").map(str::to_string);
            record.hazards = get("what/destination/count").and_then(parse_u64);
            record.detail = get("what/destination/direction").map(str::to_string);
            record.first_access = Some(Access {
                direction: get("what/source/direction").unwrap_or_default().to_string(),
                func: get("what/source/where/func").map(str::to_string),
                location: location(["what/source/where/path", "what/source/where/line"]),
                pc: get("what/source/where/pc").map(str::to_string),
                thread: None,
            });
            known.extend([
                "what/source/direction",
                "what/source/where/func",
                "what/source/where/path",
                "what/source/where/line",
                "what/source/where/pc",
                "what/destination/direction",
                "what/destination/where/func",
                "what/destination/where/path",
                "what/destination/where/line",
                "what/destination/where/pc",
                "what/destination/count",
            ]);
        }
        RecordKind::Hazard => {
            record.func = get("what/thread1/where/func").map(str::to_string);
            record.location = location(["what/thread1/where/path", "what/thread1/where/line"]);
            record.pc = get("what/thread1/where/pc").map(str::to_string);
            record.thread = dim([
                "what/thread1/threadIdx/x",
                "what/thread1/threadIdx/y",
                "what/thread1/threadIdx/z",
            ]);
            record.block = dim([
                "what/common/blockIdx/x",
                "what/common/blockIdx/y",
                "what/common/blockIdx/z",
            ]);
            record.address = get("what/common/address").and_then(parse_u64);
            record.detail = get("what/common/type").map(str::to_string);
            let first_thread = dim([
                "what/thread0/threadIdx/x",
                "what/thread0/threadIdx/y",
                "what/thread0/threadIdx/z",
            ]);
            record.first_access = Some(Access {
                direction: get("what/thread0/access").unwrap_or_default().to_string(),
                func: get("what/thread0/where/func").map(str::to_string),
                location: location(["what/thread0/where/path", "what/thread0/where/line"]),
                pc: get("what/thread0/where/pc").map(str::to_string),
                thread: first_thread,
            });
            // The XML has no level for hazards. The text output calls a hazard
            // between threads of one warp a "(Warp Level Programming)" warning
            // and one across warps an error; the same rule reproduces its
            // counts (992 warnings, 32 errors on the smem_race capture).
            if let (Some(a), Some(b)) = (first_thread, record.thread)
                && same_warp(a, b)
            {
                record.severity = Severity::Warning;
            }
            known.extend([
                "what/common/gridid",
                "what/common/type",
                "what/common/address",
                "what/common/blockIdx/x",
                "what/common/blockIdx/y",
                "what/common/blockIdx/z",
                "what/common/current",
                "what/common/write",
                "what/common/isCudaBarrierOp",
                "what/thread0/access",
                "what/thread0/threadIdx/x",
                "what/thread0/threadIdx/y",
                "what/thread0/threadIdx/z",
                "what/thread0/where/func",
                "what/thread0/where/path",
                "what/thread0/where/line",
                "what/thread0/where/pc",
                "what/thread1/access",
                "what/thread1/threadIdx/x",
                "what/thread1/threadIdx/y",
                "what/thread1/threadIdx/z",
                "what/thread1/where/func",
                "what/thread1/where/path",
                "what/thread1/where/line",
                "what/thread1/where/pc",
            ]);
        }
        _ => {}
    }
    if matches!(kind, RecordKind::Imprecise) && record.func.is_none() {
        record.func = raw.device_frames.first().and_then(|f| f.func.clone());
    }
    record.unrecognised = raw
        .leaves()
        .iter()
        .filter(|(p, _)| !known.contains(&p.as_str()))
        .cloned()
        .collect();
    if let RecordKind::Other(name) = &kind {
        record.text = if record.text.is_empty() {
            name.clone()
        } else {
            record.text
        };
    }
    record.host_frames = raw.host_frames.clone();
    record
}

/// Threads are numbered x fastest, and a block's threads fill warps of 32
/// in that order. Block shape is not in the record, so this assumes a 1-D
/// block when y or z is nonzero on either side; then only equal y and z count.
fn same_warp(a: Dim3, b: Dim3) -> bool {
    a.y == b.y && a.z == b.z && a.x / 32 == b.x / 32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(xml: &str) -> (Vec<Record>, Result<XmlRead, ParseError>) {
        let mut out = Vec::new();
        let res = parse(xml.as_bytes(), |r| out.push(r));
        (out, res)
    }

    #[test]
    fn an_empty_clean_run_is_a_complete_document_with_no_records() {
        let (recs, res) =
            records("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ComputeSanitizerOutput/>\n");
        assert!(recs.is_empty());
        assert_eq!(
            res.unwrap(),
            XmlRead {
                records: 0,
                broken: None
            }
        );
    }

    #[test]
    fn a_document_of_another_kind_is_an_error_naming_its_root() {
        let (_, res) = records("<html><body/></html>");
        let err = res.unwrap_err();
        assert!(err.to_string().contains("root element is <html>"), "{err}");
    }

    #[test]
    fn entities_inside_text_are_resolved_without_eating_spaces() {
        let (recs, _) = records(
            "<ComputeSanitizerOutput><record><kind>Api</kind><what><text>hit &quot;x&quot; &amp; more</text></what></record></ComputeSanitizerOutput>",
        );
        assert_eq!(recs[0].text, "hit \"x\" & more");
    }

    #[test]
    fn unknown_elements_and_kinds_are_kept_as_unrecognised() {
        let (recs, res) = records(
            "<ComputeSanitizerOutput><record><kind>Brand New</kind><what><text>t</text><shiny>7</shiny></what></record></ComputeSanitizerOutput>",
        );
        assert!(res.unwrap().broken.is_none());
        assert_eq!(recs[0].kind, RecordKind::Other("Brand New".into()));
        assert_eq!(
            recs[0].unrecognised,
            vec![("what/shiny".to_string(), "7".to_string())]
        );
    }
}
