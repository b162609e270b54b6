//! The XML state machine: one block of input to raw records, with the
//! element path kept for errors.

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::error::{ParseError, ParseErrorKind};

use super::raw::{RawFrame, RawRecord};
use super::record::RawView;
use super::{ROOT, XmlRead};

/// Why a block's parse stopped.
pub(super) enum Stop {
    NotThisFormat(ParseError),
    Broken(ParseError),
}

/// Damage once the root element has opened; before that, not this format.
pub(super) fn stop_for(state: &State, err: ParseError) -> Stop {
    if state.started {
        Stop::Broken(err)
    } else {
        Stop::NotThisFormat(err)
    }
}

/// Parses one block, which ends at a record boundary (or at the input's end).
pub(super) fn parse_block(
    block: &[u8],
    base: u64,
    state: &mut State,
    read: &mut XmlRead,
    on_record: &mut impl FnMut(&RawView<'_>),
) -> Result<(), Stop> {
    let text = BlockText::new(block);
    let mut reader = Reader::from_reader(block);
    // Blocks after the first start inside the root element and the last one
    // closes it, so quick-xml cannot match end tags across blocks:
    // `State::close` does.
    reader.config_mut().trim_text(false);
    reader.config_mut().check_end_names = false;
    reader.config_mut().allow_unmatched_ends = true;
    loop {
        let event = reader.read_event();
        let offset = base + reader.buffer_position();
        let broken = |e: String, state: &State| {
            let err = ParseError::new(ParseErrorKind::Xml(e), offset, state.path());
            if state.started {
                Stop::Broken(err)
            } else {
                Stop::NotThisFormat(err)
            }
        };
        match event {
            Ok(Event::Start(e)) => {
                let opened = state.start(&text.of(e.name().as_ref()), offset);
                opened.map_err(|err| stop_for(state, err))?;
            }
            Ok(Event::Empty(e)) => {
                let opened = state.start(&text.of(e.name().as_ref()), offset);
                opened.map_err(|err| stop_for(state, err))?;
                state
                    .close(e.name().as_ref(), read, on_record)
                    .map_err(|m| broken(m, state))?;
            }
            Ok(Event::End(e)) => state
                .close(e.name().as_ref(), read, on_record)
                .map_err(|m| broken(m, state))?,
            // Indentation between elements is most of the text events; values
            // are trimmed anyway, so leading whitespace need not be kept.
            Ok(Event::Text(e))
                if state.text.is_empty() && e.iter().all(u8::is_ascii_whitespace) => {}
            Ok(Event::Text(e)) => state.text.push_str(&text.of(e.as_ref())),
            Ok(Event::CData(e)) => state.text.push_str(&text.of(e.as_ref())),
            Ok(Event::GeneralRef(e)) => {
                let name = utf8(e.as_ref());
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
            Ok(Event::Eof) => return Ok(()),
            Ok(_) => {}
            Err(e) => {
                let offset = base + reader.error_position();
                let err = ParseError::new(ParseErrorKind::Xml(e.to_string()), offset, state.path());
                return Err(if state.started {
                    Stop::Broken(err)
                } else {
                    Stop::NotThisFormat(err)
                });
            }
        }
    }
}

/// The reader's position: open elements, the text of the innermost one, and
/// the record being read. Buffers are reused from record to record, so a
/// file of a million records costs few allocations beyond the records
/// themselves.
#[derive(Default)]
pub(super) struct State {
    /// `names[..depth]` are the open elements; deeper slots keep their
    /// capacity for reuse.
    pub(super) names: Vec<String>,
    pub(super) has_child: Vec<bool>,
    pub(super) depth: usize,
    pub(super) started: bool,
    pub(super) closed: bool,
    pub(super) text: String,
    pub(super) record_index: usize,
    pub(super) in_record: bool,
    pub(super) record: RawRecord,
}

impl State {
    /// The state at the start of a block after the first: inside the root.
    pub(super) fn inside_root() -> State {
        State {
            names: vec![ROOT.to_string()],
            has_child: vec![true],
            depth: 1,
            started: true,
            ..State::default()
        }
    }

    pub(super) fn name(&self, depth: usize) -> &str {
        self.names.get(depth).map_or("", String::as_str)
    }

    pub(super) fn path(&self) -> String {
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

    pub(super) fn start(&mut self, name: &str, offset: u64) -> Result<(), ParseError> {
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
        } else if self.closed {
            return Err(ParseError::new(
                ParseErrorKind::Xml(format!("<{name}> after the root element closed")),
                offset,
                ROOT,
            ));
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
            let device = self.name(self.depth.wrapping_sub(1)) == "deviceStack";
            let record = &mut self.record;
            if record.frames.len() <= record.frames_len {
                record.frames.push(RawFrame::default());
            }
            let frame = &mut record.frames[record.frames_len];
            frame.device = device;
            frame.present = 0;
            record.frames_len += 1;
        }
        if self.names.len() <= self.depth {
            self.names.push(String::new());
            self.has_child.push(false);
        }
        self.names[self.depth].clear();
        self.names[self.depth].push_str(name);
        self.has_child[self.depth] = false;
        self.depth += 1;
        self.text.clear();
        Ok(())
    }

    /// Closes the element `name`, handing a completed record to `on_record`.
    /// Errors (with a message) when `name` is not the innermost open element.
    pub(super) fn close(
        &mut self,
        name: &[u8],
        read: &mut XmlRead,
        on_record: &mut impl FnMut(&RawView<'_>),
    ) -> Result<(), String> {
        let open = self
            .depth
            .checked_sub(1)
            .map(|d| self.name(d))
            .unwrap_or("");
        if open.as_bytes() != name {
            return Err(format!("expected </{open}>, found </{}>", utf8(name)));
        }
        if self.end() {
            read.records += 1;
            on_record(&RawView { raw: &self.record });
        }
        if self.depth == 0 {
            self.closed = true;
        }
        Ok(())
    }

    /// Closes the innermost element; true when that completed a record.
    pub(super) fn end(&mut self) -> bool {
        if self.depth == 0 {
            return false;
        }
        self.depth -= 1;
        let depth = self.depth;
        let is_leaf = !self.has_child[depth];
        if depth == 1 && self.name(1) == "record" {
            self.text.clear();
            self.in_record = false;
            return true;
        }
        if self.in_record && is_leaf && depth >= 2 {
            let value = self.text.trim();
            if self.name(depth - 1) == "frame" {
                let index = match self.names[depth].as_str() {
                    "func" => Some(0),
                    "module" => Some(1),
                    "path" => Some(2),
                    "line" => Some(3),
                    "pc" => Some(4),
                    _ => None,
                };
                let record = &mut self.record;
                if let (Some(i), Some(frame)) =
                    (index, record.frames[..record.frames_len].last_mut())
                {
                    frame.fields[i].clear();
                    frame.fields[i].push_str(value);
                    frame.present |= 1 << i;
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
        false
    }
}

/// One block's bytes as text. Names and values are slices of the block
/// (quick-xml's slice reader borrows them), so the block's UTF-8 is
/// validated once and each slice is cut from it, instead of validating
/// every name and value on its own (9% of all instructions before).
struct BlockText<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) text: Option<&'a str>,
}

impl<'a> BlockText<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        BlockText {
            bytes,
            text: std::str::from_utf8(bytes).ok(),
        }
    }

    /// `slice` as text: cut from the validated block when it lies inside it,
    /// else validated on its own.
    pub(super) fn of<'b>(&self, slice: &'b [u8]) -> std::borrow::Cow<'b, str>
    where
        'a: 'b,
    {
        let start = (slice.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        if let Some(text) = self.text
            && start <= self.bytes.len()
            && let Some(cut) = text.get(start..start + slice.len())
        {
            return std::borrow::Cow::Borrowed(cut);
        }
        utf8(slice)
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
