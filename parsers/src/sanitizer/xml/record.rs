//! From a raw record (leaf paths and texts) to a typed [`Record`], and the
//! borrowed view of the few fields that identify a repeated site.

use super::super::{Access, ApiCall, Record, RecordKind, parse_u64};
use crate::model::{Dim3, Severity, SourceLocation};

use super::raw::RawRecord;

/// A record as read, before it becomes a [`Record`]: a site's first record
/// is built in full, while the many repeats of a known site (one record per
/// faulting thread) are folded from a few borrowed fields.
pub struct RawView<'a> {
    pub(super) raw: &'a RawRecord,
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
        record.device_frames = self.raw.device_frames();
        crate::sanitizer::inlined::move_to_user_frame(&mut record);
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
        // A record in an inlined function is placed at the user's frame,
        // which the full record works out.
        if self.raw.frames().iter().any(|f| f.device) {
            return None;
        }
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
pub(super) const KNOWN: &[&str] = &[
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
pub(super) fn to_record(raw: &RawRecord) -> Record {
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
