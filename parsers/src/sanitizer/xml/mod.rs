//! Streaming reader of compute-sanitizer's `--xml --save` output.
//!
//! One `<record>` is held in memory at a time and handed to a callback, so
//! memory does not grow with the file (a `--print-limit 0` run writes one
//! record per faulting thread: hundreds of megabytes are normal). A file
//! that ends early, as when the tool was killed, yields every complete record
//! and says where it broke; a file that is not compute-sanitizer XML at all
//! is an error naming the position.
//!
//! The reader is four parts: `blocks` cuts the input at record boundaries,
//! `reader` is the XML state machine that turns one block into raw
//! records, `record` converts a raw record into a typed [`Record`] (or the
//! few borrowed fields a repeat needs), and this module runs the blocks,
//! in parallel where asked, and keeps their results in order.

mod blocks;
mod raw;
mod reader;
mod record;

use std::io::BufRead;

use super::Record;
use crate::error::{ParseError, ParseErrorKind};

use blocks::{BLOCK, Block, Blocks, MAX_JOINED};
use reader::{State, Stop, parse_block};
pub use record::{QuickRecord, RawView};

pub(crate) const ROOT: &str = "ComputeSanitizerOutput";

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
        let batch = next_batch(&mut queued, &mut blocks, &mut progress, threads.max(1));
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

/// Up to `threads` blocks to parse at once: those queued again first
/// (a block joined with its successor), then new ones from the input.
fn next_batch<R: BufRead>(
    queued: &mut std::collections::VecDeque<Block>,
    blocks: &mut Blocks<R>,
    progress: &mut Progress,
    threads: usize,
) -> Vec<Block> {
    let mut batch = Vec::new();
    while batch.len() < threads {
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
    batch
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

#[cfg(test)]
mod tests {
    use super::record::KNOWN;
    use super::*;
    use crate::sanitizer::RecordKind;

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
