//! Cutting the input into blocks that end just after a `</record>`, so each
//! can be parsed on its own.

use std::io::BufRead;

/// The most a damaged stretch is joined up to before it is taken as damage.
pub(super) const MAX_JOINED: usize = 64 << 20;

/// One block of input: bytes that end at a record boundary.
pub(super) struct Block {
    pub(super) bytes: Vec<u8>,
    /// Offset of its first byte in the input.
    pub(super) base: u64,
    /// Whether it is the input's first block (the only one that opens the root).
    pub(super) first: bool,
    /// Whether it is the last block.
    pub(super) last: bool,
}

impl Block {
    /// Extends this block with the one after it.
    pub(super) fn append<R: BufRead>(&mut self, next: Block, blocks: &mut Blocks<R>) {
        self.bytes.extend_from_slice(&next.bytes);
        self.last = next.last;
        blocks.recycle_bytes(next.bytes);
    }
}

/// Splits the input into blocks of about [`BLOCK`] bytes, each ending just
/// after a `</record>` (the last one at the input's end).
pub(super) struct Blocks<R> {
    pub(super) input: R,
    pub(super) pending: Vec<u8>,
    pub(super) consumed: u64,
    pub(super) eof: bool,
    pub(super) finished: bool,
    pub(super) size: usize,
    /// Buffers of finished blocks, reused so that no block pays for fresh
    /// pages.
    pub(super) spare: Vec<Vec<u8>>,
}

impl<R: BufRead> Blocks<R> {
    pub(super) fn new(input: R, size: usize) -> Blocks<R> {
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
    pub(super) fn recycle_bytes(&mut self, mut bytes: Vec<u8>) {
        bytes.clear();
        self.spare.push(bytes);
    }

    /// Returns a block's buffer for reuse.
    pub(super) fn recycle(&mut self, block: Block) {
        let mut bytes = block.bytes;
        bytes.clear();
        self.spare.push(bytes);
    }

    pub(super) fn next_block(&mut self) -> std::io::Result<Option<Block>> {
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

/// Bytes read per block.
pub(super) const BLOCK: usize = 4 << 20;

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
