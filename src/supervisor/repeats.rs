//! The repeat watch: a sanitizer stage under kernel-level recovery
//! (`--destroy-on-device-error kernel`) whose records keep coming and say
//! nothing new. The tool ends each faulting kernel and lets the program go
//! on, so a program that loops until its kernel succeeds (a solver that
//! iterates until its residual, written by the faulting kernel, is small
//! enough) never sees its error and runs until the stage's limit, where the
//! tool's own default (the first error ends the checking) answers in a
//! second. The watch tells such a loop from a long run with one bug per
//! step only by time: no record unlike those before for [`RepeatWatch::quiet`]
//! while [`RepeatWatch::records`] more arrived.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::{Duration, Instant};

/// When records repeating is taken for a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepeatWatch {
    /// At least this many records since the last new one...
    pub records: u64,
    /// ...over at least this long.
    pub quiet: Duration,
}

impl Default for RepeatWatch {
    fn default() -> RepeatWatch {
        RepeatWatch {
            // A loop of one faulting launch writes a record per faulting
            // thread: thousands a second under memcheck.
            records: 1_000,
            quiet: Duration::from_secs(10),
        }
    }
}

/// Reads compute-sanitizer's text as it arrives: each record's first two
/// lines (what it is, and where: `Invalid __global__ write of size 4
/// bytes`, `at scale(float *, float)+0x70 in graph_oob.cu:10`) are its
/// signature; the thread, block and address lines that follow differ from
/// record to record of one bug and are left out.
pub struct RepeatCounter {
    watch: RepeatWatch,
    seen: HashSet<u64>,
    last_new: Instant,
    since_new: u64,
    /// The current record's lines so far (at most two are kept).
    head: Vec<String>,
    /// A line cut by the end of a chunk.
    partial: Vec<u8>,
}

/// The line that ends a record (`sanitizer::RECORD_END` without its
/// newlines).
const RECORD_END_LINE: &[u8] = b"========= ";

impl RepeatCounter {
    pub fn new(watch: RepeatWatch, now: Instant) -> RepeatCounter {
        RepeatCounter {
            watch,
            seen: HashSet::new(),
            last_new: now,
            since_new: 0,
            head: Vec::new(),
            partial: Vec::new(),
        }
    }

    /// Reads `chunk`; true once the records are taken for a loop.
    pub fn looping(&mut self, chunk: &[u8], now: Instant) -> bool {
        self.partial.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(end) = self.partial[start..].iter().position(|b| *b == b'\n') {
            let line = self.partial[start..start + end].to_vec();
            start += end + 1;
            self.line(&line, now);
        }
        self.partial.drain(..start);
        // A line without its end for 64 KiB is no record's head.
        if self.partial.len() > 64 << 10 {
            self.partial.clear();
        }
        self.since_new >= self.watch.records
            && now.duration_since(self.last_new) >= self.watch.quiet
    }

    fn line(&mut self, line: &[u8], now: Instant) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line == RECORD_END_LINE {
            self.record_ended(now);
            return;
        }
        let Some(text) = line.strip_prefix(b"=========") else {
            return;
        };
        if self.head.len() < 2 {
            self.head
                .push(String::from_utf8_lossy(text).trim().to_string());
        }
    }

    fn record_ended(&mut self, now: Instant) {
        let mut hasher = DefaultHasher::new();
        std::mem::take(&mut self.head).hash(&mut hasher);
        if self.seen.insert(hasher.finish()) {
            self.last_new = now;
            self.since_new = 0;
        } else {
            self.since_new += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: u32, thread: u32) -> String {
        format!(
            "========= Invalid __global__ write of size 4 bytes\n\
             =========     at scale(float *, float)+0x70 in graph_oob.cu:{line}\n\
             =========     by thread ({thread},0,0) in block (3,0,0)\n\
             =========     Access to 0x7f07{thread:08x} is out of bounds\n\
             ========= \n"
        )
    }

    fn watch() -> RepeatWatch {
        RepeatWatch {
            records: 100,
            quiet: Duration::from_secs(20),
        }
    }

    #[test]
    fn the_same_records_for_long_enough_are_a_loop_though_threads_and_addresses_differ() {
        let start = Instant::now();
        let mut counter = RepeatCounter::new(watch(), start);
        assert!(!counter.looping(record(10, 0).as_bytes(), start));
        for second in 1..=25u64 {
            let now = start + Duration::from_secs(second);
            // Split mid-line, as pipes deliver it.
            let text: String = (0..10).map(|t| record(10, t)).collect();
            let (a, b) = text.as_bytes().split_at(37);
            let first = counter.looping(a, now);
            let looping = counter.looping(b, now);
            assert!(!first || looping);
            assert_eq!(looping, second >= 20, "second {second}");
        }
    }

    #[test]
    fn a_new_kind_of_record_starts_the_quiet_time_again() {
        let start = Instant::now();
        let mut counter = RepeatCounter::new(watch(), start);
        let many: String = (0..200).map(|t| record(10, t)).collect();
        counter.looping(many.as_bytes(), start);
        // 15 s later another line faults: not yet quiet for 20 s after it.
        let later = start + Duration::from_secs(15);
        assert!(!counter.looping(record(11, 0).as_bytes(), later));
        let at_30 = start + Duration::from_secs(30);
        assert!(!counter.looping(many.as_bytes(), at_30));
        let at_36 = start + Duration::from_secs(36);
        assert!(counter.looping(many.as_bytes(), at_36));
    }

    #[test]
    fn few_records_over_a_long_time_are_no_loop() {
        // One record per step of a long training run: not enough to stop.
        let start = Instant::now();
        let mut counter = RepeatCounter::new(watch(), start);
        for second in 0..60u64 {
            let now = start + Duration::from_secs(second);
            assert!(!counter.looping(record(10, 0).as_bytes(), now));
        }
    }
}
