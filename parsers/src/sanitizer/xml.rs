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
/// complete `<record>`, in order.
///
/// Returns an error only when the input is not compute-sanitizer XML (its
/// root element never opened). Damage after the root opened is returned in
/// [`XmlRead::broken`] with every record before it delivered.
pub fn parse<R: BufRead>(
    input: R,
    mut on_record: impl FnMut(Record),
) -> Result<XmlRead, ParseError> {
    parse_in_blocks(
        input,
        BLOCK,
        1,
        Vec::new,
        |records: &mut Vec<Record>, raw| records.push(raw.record()),
        |records| records.into_iter().for_each(&mut on_record),
    )
}

/// Reads with `threads` threads. The input is cut into blocks of about 4
/// MiB that end just after a `</record>`; once the root element is open
/// such blocks are independent, so each is parsed into a sink of its own
/// (made by `new_sink`, filled by `on_record`, which gets each record
/// without its host stack and a function that builds it), and the sinks are
/// handed to `deliver` in input order. Records after damage are not
/// delivered, as in [`parse`].
pub fn parse_parallel<R, T, N, F, D>(
    input: R,
    threads: usize,
    new_sink: N,
    on_record: F,
    deliver: D,
) -> Result<XmlRead, ParseError>
where
    R: BufRead,
    T: Send,
    N: Fn() -> T + Sync,
    F: Fn(&mut T, &RawView<'_>) + Sync,
    D: FnMut(T),
{
    parse_in_blocks(input, BLOCK, threads, new_sink, on_record, deliver)
}

/// [`parse_parallel`] with blocks of `block_size` bytes: tests and fuzzing
/// use tiny blocks so that every record boundary is a block boundary
/// somewhere.
#[doc(hidden)]
pub fn parse_in_blocks<R, T, N, F, D>(
    input: R,
    block_size: usize,
    threads: usize,
    new_sink: N,
    on_record: F,
    mut deliver: D,
) -> Result<XmlRead, ParseError>
where
    R: BufRead,
    T: Send,
    N: Fn() -> T + Sync,
    F: Fn(&mut T, &RawView<'_>) + Sync,
    D: FnMut(T),
{
    let mut blocks = Blocks::new(input, block_size);
    let mut progress = Progress::default();
    let mut queued: std::collections::VecDeque<Block> = std::collections::VecDeque::new();
    let parse_into = |block: &Block, record_base: u64| {
        let mut sink = new_sink();
        let result = parse_one(block, record_base, &mut |raw| on_record(&mut sink, raw));
        (sink, result)
    };
    loop {
        let mut batch: Vec<Block> = Vec::new();
        while batch.len() < threads.max(1) {
            if let Some(block) = queued.pop_front() {
                batch.push(block);
                continue;
            }
            match blocks.next_block() {
                Ok(Some(block)) => batch.push(block),
                Ok(None) => break,
                Err(e) => {
                    progress.io_error(e, blocks.consumed);
                    break;
                }
            }
        }
        if batch.is_empty() {
            break;
        }
        let results: Vec<(T, BlockResult)> = if batch.len() == 1 {
            vec![parse_into(&batch[0], progress.records)]
        } else {
            std::thread::scope(|scope| {
                let others: Vec<_> = batch[1..]
                    .iter()
                    .map(|b| scope.spawn(|| parse_into(b, 0)))
                    .collect();
                let mut results = vec![parse_into(&batch[0], progress.records)];
                for handle in others {
                    results.push(
                        handle
                            .join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                    );
                }
                results
            })
        };
        let mut batch = batch.into_iter();
        let mut stop = false;
        for (sink, mut result) in results {
            let Some(block) = batch.next() else { break };
            if result.stop.is_some() && !block.last && block.bytes.len() < MAX_JOINED {
                // Either real damage or a false boundary (`</record>` text
                // inside a damaged tag, comment or instruction): parse this
                // block again joined with the next, until it reads cleanly,
                // reaches the end of input, or grows too large to hold.
                let mut joined = block;
                let next = match batch.next() {
                    Some(next) => Some(next),
                    None => blocks.next_block().unwrap_or(None),
                };
                match next {
                    Some(next) => joined.append(next, &mut blocks),
                    None => joined.last = true,
                }
                queued.push_front(joined);
                queued.extend(batch.by_ref());
                break;
            }
            if result.stop.is_some() && progress.records > 0 {
                // Re-read the broken block alone so its error names the
                // record by its index in the whole file.
                result = parse_one(&block, progress.records, &mut |_| {});
            }
            blocks.recycle(block);
            deliver(sink);
            if progress.absorb(result) {
                stop = true;
                break;
            }
        }
        for block in batch {
            blocks.recycle(block);
        }
        if stop || progress.io_failed {
            break;
        }
    }
    progress.finish(blocks.consumed)
}

/// The most a damaged stretch is joined up to before it is taken as damage.
const MAX_JOINED: usize = 64 << 20;

/// One block of input: bytes that end at a record boundary.
struct Block {
    bytes: Vec<u8>,
    /// Offset of its first byte in the input.
    base: u64,
    /// Whether it is the input's first block (the only one that opens the root).
    first: bool,
    /// Whether it is the last block.
    last: bool,
}

impl Block {
    /// Extends this block with the one after it.
    fn append<R: BufRead>(&mut self, next: Block, blocks: &mut Blocks<R>) {
        self.bytes.extend_from_slice(&next.bytes);
        self.last = next.last;
        blocks.recycle_bytes(next.bytes);
    }
}

/// Splits the input into blocks of about [`BLOCK`] bytes, each ending just
/// after a `</record>` (the last one at the input's end).
struct Blocks<R> {
    input: R,
    pending: Vec<u8>,
    consumed: u64,
    eof: bool,
    finished: bool,
    size: usize,
    /// Buffers of finished blocks, reused so that no block pays for fresh
    /// pages.
    spare: Vec<Vec<u8>>,
}

impl<R: BufRead> Blocks<R> {
    fn new(input: R, size: usize) -> Blocks<R> {
        let size = size.max(1);
        Blocks {
            input,
            pending: Vec::with_capacity(size + size / 4),
            consumed: 0,
            eof: false,
            finished: false,
            size,
            spare: Vec::new(),
        }
    }

    /// Returns a block's buffer for reuse.
    fn recycle_bytes(&mut self, mut bytes: Vec<u8>) {
        bytes.clear();
        self.spare.push(bytes);
    }

    /// Returns a block's buffer for reuse.
    fn recycle(&mut self, block: Block) {
        let mut bytes = block.bytes;
        bytes.clear();
        self.spare.push(bytes);
    }

    fn next_block(&mut self) -> std::io::Result<Option<Block>> {
        if self.finished {
            return Ok(None);
        }
        loop {
            if !self.eof && self.pending.len() < self.size {
                if fill(&mut self.input, &mut self.pending)? == 0 {
                    self.eof = true;
                }
                continue;
            }
            let end = match last_record_end(&self.pending) {
                _ if self.eof => self.pending.len(),
                Some(end) => end,
                // No complete record yet: read on.
                None => {
                    if fill(&mut self.input, &mut self.pending)? == 0 {
                        self.eof = true;
                    }
                    continue;
                }
            };
            // At the end of input the rest is the last block, even when empty
            // (an empty input must still be reported as not XML).
            self.finished = self.eof;
            let size = self.size;
            let mut next = self
                .spare
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(size + size / 4));
            next.extend_from_slice(&self.pending[end..]);
            self.pending.truncate(end);
            let bytes = std::mem::replace(&mut self.pending, next);
            let block = Block {
                bytes,
                base: self.consumed,
                first: self.consumed == 0,
                last: self.finished,
            };
            self.consumed += end as u64;
            return Ok(Some(block));
        }
    }
}

/// What one block gave.
struct BlockResult {
    records: u64,
    started: bool,
    closed: bool,
    stop: Option<Stop>,
    path: String,
}

fn parse_one(
    block: &Block,
    record_base: u64,
    on_record: &mut impl FnMut(&RawView<'_>),
) -> BlockResult {
    let mut state = if block.first {
        State::default()
    } else {
        State::inside_root()
    };
    state.record_index = record_base as usize;
    let mut read = XmlRead {
        records: 0,
        broken: None,
    };
    let mut stop = parse_block(&block.bytes, block.base, &mut state, &mut read, on_record).err();
    // A block is cut just after a `</record>`; if that text was not really
    // the end of a record (it sat inside a damaged tag), the document is
    // damaged there, whatever the next block would say.
    if stop.is_none() && !block.last && state.depth != 1 {
        let offset = block.base + block.bytes.len() as u64;
        let err = ParseError::new(
            ParseErrorKind::Xml("an element is still open at a record boundary".into()),
            offset,
            state.path(),
        );
        stop = Some(if state.started {
            Stop::Broken(err)
        } else {
            Stop::NotThisFormat(err)
        });
    }
    BlockResult {
        records: read.records,
        started: state.started,
        closed: state.closed,
        stop,
        path: state.path(),
    }
}

/// The whole read so far, block by block.
#[derive(Default)]
struct Progress {
    records: u64,
    started: bool,
    closed: bool,
    path: String,
    broken: Option<ParseError>,
    not_this_format: Option<ParseError>,
    io_failed: bool,
}

impl Progress {
    /// Takes in one block's result; true when reading must stop.
    fn absorb(&mut self, result: BlockResult) -> bool {
        self.records += result.records;
        self.started |= result.started;
        self.closed = result.closed;
        self.path = result.path;
        match result.stop {
            Some(Stop::NotThisFormat(e)) => {
                self.not_this_format = Some(e);
                true
            }
            Some(Stop::Broken(e)) => {
                self.broken = Some(e);
                true
            }
            None => false,
        }
    }

    fn io_error(&mut self, error: std::io::Error, offset: u64) {
        self.io_failed = true;
        self.broken = Some(ParseError::new(
            ParseErrorKind::Io(error.to_string()),
            offset,
            self.path.clone(),
        ));
    }

    fn finish(self, consumed: u64) -> Result<XmlRead, ParseError> {
        if let Some(e) = self.not_this_format {
            return Err(e);
        }
        if !self.started {
            return Err(self.broken.unwrap_or_else(|| {
                ParseError::new(
                    ParseErrorKind::NotThisFormat("no <ComputeSanitizerOutput> element".into()),
                    consumed,
                    "",
                )
            }));
        }
        let broken = self.broken.or_else(|| {
            (!self.closed).then(|| ParseError::new(ParseErrorKind::Truncated, consumed, self.path))
        });
        Ok(XmlRead {
            records: self.records,
            broken,
        })
    }
}

/// Bytes read per block.
const BLOCK: usize = 4 << 20;

fn fill<R: BufRead>(input: &mut R, block: &mut Vec<u8>) -> std::io::Result<usize> {
    let available = input.fill_buf()?;
    let n = available.len();
    block.extend_from_slice(available);
    input.consume(n);
    Ok(n)
}

/// Where the last complete `</record>` of `block` ends.
fn last_record_end(block: &[u8]) -> Option<usize> {
    const CLOSE: &[u8] = b"</record>";
    block
        .windows(CLOSE.len())
        .rposition(|w| w == CLOSE)
        .map(|i| i + CLOSE.len())
}

/// Why a block's parse stopped.
enum Stop {
    NotThisFormat(ParseError),
    Broken(ParseError),
}

/// Damage once the root element has opened; before that, not this format.
fn stop_for(state: &State, err: ParseError) -> Stop {
    if state.started {
        Stop::Broken(err)
    } else {
        Stop::NotThisFormat(err)
    }
}

/// Parses one block, which ends at a record boundary (or at the input's end).
fn parse_block(
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
    frames: Vec<RawFrame>,
    frames_len: usize,
}

/// One `<frame>`'s fields, kept as reusable buffers: a record's stack is
/// turned into [`Frame`]s only when the caller asks (most records repeat a
/// site whose stack is already known).
#[derive(Default)]
struct RawFrame {
    device: bool,
    /// func, module, path, line, pc.
    fields: [String; 5],
    present: u8,
}

impl RawFrame {
    fn field(&self, i: usize) -> Option<String> {
        (self.present & (1 << i) != 0).then(|| self.fields[i].clone())
    }

    fn to_frame(&self) -> Frame {
        Frame {
            func: self.field(0),
            module: self.field(1),
            file: self.field(2),
            line: self.field(3).and_then(|l| l.parse().ok()),
            pc: self.field(4),
        }
    }
}

impl RawRecord {
    fn clear(&mut self) {
        self.len = 0;
        self.frames_len = 0;
    }

    fn leaves(&self) -> &[(String, String)] {
        &self.leaves[..self.len]
    }

    fn frames(&self) -> &[RawFrame] {
        &self.frames[..self.frames_len]
    }

    /// The host stack as [`Frame`]s, innermost first.
    fn host_frames(&self) -> Vec<Frame> {
        self.frames()
            .iter()
            .filter(|f| !f.device)
            .map(RawFrame::to_frame)
            .collect()
    }
}

impl State {
    /// The state at the start of a block after the first: inside the root.
    fn inside_root() -> State {
        State {
            names: vec![ROOT.to_string()],
            has_child: vec![true],
            depth: 1,
            started: true,
            ..State::default()
        }
    }

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

    fn start(&mut self, name: &str, offset: u64) -> Result<(), ParseError> {
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
    fn close(
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
    fn end(&mut self) -> bool {
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
    bytes: &'a [u8],
    text: Option<&'a str>,
}

impl<'a> BlockText<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        BlockText {
            bytes,
            text: std::str::from_utf8(bytes).ok(),
        }
    }

    /// `slice` as text: cut from the validated block when it lies inside it,
    /// else validated on its own.
    fn of<'b>(&self, slice: &'b [u8]) -> std::borrow::Cow<'b, str>
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

/// A record as read, before it becomes a [`Record`]: a site's first record
/// is built in full, while the many repeats of a known site (one record per
/// faulting thread) are folded from a few borrowed fields.
pub struct RawView<'a> {
    raw: &'a RawRecord,
}

/// The fields of a record that identify its site, borrowed; only for the
/// kinds whose identity needs nothing more (invalid accesses, uninitialised reads).
#[derive(Debug, Clone, Copy)]
pub struct QuickRecord<'a> {
    /// `Precise` or `Initcheck`.
    pub precise: bool,
    /// `Error` unless the record says `Warning`.
    pub severity: Severity,
    /// Kernel.
    pub func: Option<&'a str>,
    /// Source file.
    pub file: Option<&'a str>,
    /// Source line.
    pub line: Option<u32>,
    /// Offset in the kernel.
    pub pc: Option<&'a str>,
    /// Faulting thread.
    pub thread: Option<Dim3>,
    /// Its block.
    pub block: Option<Dim3>,
    /// Address accessed.
    pub address: Option<u64>,
}

impl RawView<'_> {
    /// The typed record, host stack included.
    pub fn record(&self) -> Record {
        let mut record = to_record(self.raw);
        record.host_frames = self.raw.host_frames();
        record
    }

    /// The identifying fields, for invalid-access and initcheck records.
    pub fn quick(&self) -> Option<QuickRecord<'_>> {
        let get = |path: &str| {
            self.raw
                .leaves()
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, v)| v.as_str())
        };
        let precise = match get("kind")? {
            "Precise" => true,
            "Initcheck" => false,
            _ => return None,
        };
        let dim = |[x, y, z]: [&str; 3]| -> Option<Dim3> {
            Some(Dim3 {
                x: get(x)?.parse().ok()?,
                y: get(y)?.parse().ok()?,
                z: get(z)?.parse().ok()?,
            })
        };
        Some(QuickRecord {
            precise,
            severity: if get("level") == Some("Warning") {
                Severity::Warning
            } else {
                Severity::Error
            },
            func: get("where/func"),
            file: get("where/path"),
            line: get("where/line").and_then(|l| l.parse().ok()),
            pc: get("where/pc"),
            thread: dim(["who/threadIdx/x", "who/threadIdx/y", "who/threadIdx/z"]),
            block: dim(["who/blockIdx/x", "who/blockIdx/y", "who/blockIdx/z"]),
            address: get("what/address").and_then(parse_u64),
        })
    }
}

/// Every leaf path the conversion below reads or deliberately ignores,
/// sorted for binary search; any other leaf is kept as unrecognised.
const KNOWN: &[&str] = &[
    "hostStack/saveLocation",
    "kind",
    "level",
    "what/address",
    "what/allocation/address",
    "what/allocation/size",
    "what/api",
    "what/block/address",
    "what/block/size",
    "what/common/address",
    "what/common/blockIdx/x",
    "what/common/blockIdx/y",
    "what/common/blockIdx/z",
    "what/common/current",
    "what/common/gridid",
    "what/common/isCudaBarrierOp",
    "what/common/type",
    "what/common/write",
    "what/destination/count",
    "what/destination/direction",
    "what/destination/where/func",
    "what/destination/where/line",
    "what/destination/where/path",
    "what/destination/where/pc",
    "what/direction",
    "what/error",
    "what/exception",
    "what/message",
    "what/pc",
    "what/result",
    "what/size",
    "what/source/direction",
    "what/source/where/func",
    "what/source/where/line",
    "what/source/where/path",
    "what/source/where/pc",
    "what/space",
    "what/text",
    "what/thread0/access",
    "what/thread0/threadIdx/x",
    "what/thread0/threadIdx/y",
    "what/thread0/threadIdx/z",
    "what/thread0/where/func",
    "what/thread0/where/line",
    "what/thread0/where/path",
    "what/thread0/where/pc",
    "what/thread1/access",
    "what/thread1/threadIdx/x",
    "what/thread1/threadIdx/y",
    "what/thread1/threadIdx/z",
    "what/thread1/where/func",
    "what/thread1/where/line",
    "what/thread1/where/path",
    "what/thread1/where/pc",
    "what/type",
    "what/unused",
    "where/func",
    "where/line",
    "where/path",
    "where/pc",
    "who/blockIdx/x",
    "who/blockIdx/y",
    "who/blockIdx/z",
    "who/threadIdx/x",
    "who/threadIdx/y",
    "who/threadIdx/z",
];

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
    match &kind {
        RecordKind::Api => {
            record.api = Some(ApiCall {
                api: get("what/api").unwrap_or_default().to_string(),
                error: get("what/error").unwrap_or_default().to_string(),
                code: get("what/result").and_then(|r| r.parse().ok()),
                message: get("what/message").unwrap_or_default().to_string(),
            });
        }
        RecordKind::UnusedMemory => {
            record.address = get("what/allocation/address").and_then(parse_u64);
            record.size = get("what/allocation/size").and_then(parse_u64);
            record.detail = get("what/unused").map(|u| format!("{u} bytes unused"));
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
        }
        _ => {}
    }
    if matches!(kind, RecordKind::Imprecise) && record.func.is_none() {
        record.func = raw
            .frames()
            .iter()
            .find(|f| f.device)
            .and_then(|f| f.field(0));
    }
    record.unrecognised = raw
        .leaves()
        .iter()
        .filter(|(p, _)| KNOWN.binary_search(&p.as_str()).is_err())
        .cloned()
        .collect();
    if let RecordKind::Other(name) = &kind {
        record.text = if record.text.is_empty() {
            name.clone()
        } else {
            record.text
        };
    }
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

    /// A document of `n` records, thread x counting up.
    fn document(n: usize) -> String {
        let mut doc =
            String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ComputeSanitizerOutput>\n");
        for i in 0..n {
            doc.push_str(&format!(
                "  <record>\n    <kind>Precise</kind>\n    <level>Error</level>\n    <who><threadIdx><x>{i}</x><y>0</y><z>0</z></threadIdx><blockIdx><x>0</x><y>0</y><z>0</z></blockIdx></who>\n    <what><text>Invalid __global__ write of size 4 bytes is out of bounds</text><address>0x{i:x}</address></what>\n    <where><func>k</func><path>/a/k.cu</path><line>{}</line><pc>0x80</pc></where>\n    <hostStack><saveLocation>kernel launch time</saveLocation><frame><func>main</func><pc>0x1</pc><module>/a/k</module></frame></hostStack>\n  </record>\n",
                i % 7
            ));
        }
        doc.push_str("</ComputeSanitizerOutput>\n");
        doc
    }

    fn threads_of(
        doc: &str,
        block: usize,
        threads: usize,
    ) -> (Vec<u32>, Result<XmlRead, ParseError>) {
        let mut xs = Vec::new();
        let read = parse_in_blocks(
            doc.as_bytes(),
            block,
            threads,
            Vec::new,
            |sink: &mut Vec<u32>, raw| sink.push(raw.record().thread.map_or(u32::MAX, |t| t.x)),
            |sink| xs.extend(sink),
        );
        (xs, read)
    }

    #[test]
    fn any_block_size_and_thread_count_reads_every_record_in_order() {
        let doc = document(300);
        for block in [1, 37, 500, 4096, 1 << 22] {
            for threads in [1, 2, 3] {
                let (xs, read) = threads_of(&doc, block, threads);
                assert_eq!(
                    read.unwrap(),
                    XmlRead {
                        records: 300,
                        broken: None
                    },
                    "block {block}, threads {threads}"
                );
                assert_eq!(
                    xs,
                    (0..300).collect::<Vec<u32>>(),
                    "block {block}, threads {threads}"
                );
            }
        }
    }

    #[test]
    fn a_cut_document_keeps_the_same_complete_records_whatever_the_blocks() {
        let doc = document(120);
        let cut = &doc[..doc.len() * 2 / 3];
        let mut expected = None;
        for block in [1, 100, 3000, 1 << 22] {
            for threads in [1, 2] {
                let (xs, read) = threads_of(cut, block, threads);
                let read = read.unwrap();
                assert!(read.broken.is_some(), "a cut file is broken");
                assert_eq!(xs.len() as u64, read.records);
                let expected = expected.get_or_insert_with(|| xs.clone());
                assert_eq!(&xs, expected, "block {block}, threads {threads}");
            }
        }
        assert!(expected.unwrap().len() >= 70);
    }

    #[test]
    fn a_broken_record_in_a_later_block_names_its_index_in_the_whole_file() {
        let doc = document(50)
            .replacen("<kind>Precise</kind>", "<kind>Precise</knd>", 41)
            .replacen("</knd>", "</kind>", 40);
        let (_, read) = threads_of(&doc, 512, 2);
        let broken = read.unwrap().broken.expect("broken");
        assert!(broken.path.contains("record[40]"), "{broken}");
    }

    #[test]
    fn a_damaged_tag_holding_an_end_tag_is_damage_whatever_the_block_size() {
        // Found by the fuzzer: `</record>` inside a broken tag looked like a
        // record boundary to the block splitter.
        let doc = format!(
            "{}  <record>\n    <kind>Synccheck</kind>\n    <who>\n      <threadId</record>\n</ComputeSanitizerOutput>\n",
            document(3).trim_end_matches("</ComputeSanitizerOutput>\n")
        );
        let whole = parse(doc.as_bytes(), |_| {}).unwrap();
        assert!(whole.broken.is_some());
        for block in [1, 64, 1 << 22] {
            let (xs, read) = threads_of(&doc, block, 2);
            let read = read.unwrap();
            assert!(read.broken.is_some(), "block {block}");
            assert_eq!((xs.len() as u64, read.records), (3, 3), "block {block}");
        }
    }

    #[test]
    fn a_record_boundary_inside_an_unclosed_instruction_is_healed() {
        // Found by the fuzzer: `</record>` inside a `<?...` that closes later.
        let doc = format!(
            "{}<?pi text </record> more ?>\n{}",
            document(2).trim_end_matches("</ComputeSanitizerOutput>\n"),
            "  <record><kind>Leak</kind></record>\n</ComputeSanitizerOutput>\n"
        );
        let whole = parse(doc.as_bytes(), |_| {}).unwrap();
        for block in [1, 16, 64, 1 << 22] {
            let (xs, read) = threads_of(&doc, block, 2);
            assert_eq!(read.unwrap(), whole, "block {block}");
            assert_eq!(xs, vec![0, 1, u32::MAX], "block {block}");
        }
    }

    #[test]
    fn content_after_the_root_closed_is_damage() {
        // Found by the fuzzer: elements after </ComputeSanitizerOutput>.
        let doc = "<ComputeSanitizerOutput/>\n<record><kind>Leak</kind></record>\n";
        let read = parse(doc.as_bytes(), |_| {}).unwrap();
        assert!(
            read.broken
                .unwrap()
                .to_string()
                .contains("after the root element closed")
        );
        let (_, split) = threads_of(doc, 8, 2);
        assert!(split.unwrap().broken.is_some());
    }

    #[test]
    fn the_known_leaf_list_is_sorted_for_binary_search() {
        assert!(KNOWN.windows(2).all(|w| w[0] < w[1]));
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
