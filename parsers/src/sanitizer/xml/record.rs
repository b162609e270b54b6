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
    "what/accessAddress",
    "what/accessSize",
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
    "what/errorAddress",
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
/// A record's leaves by path, and the shapes the XML spells over several.
struct Fields<'a>(&'a RawRecord);

impl<'a> Fields<'a> {
    fn get(&self, path: &str) -> Option<&'a str> {
        self.0
            .leaves()
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, v)| v.as_str())
    }

    fn string(&self, path: &str) -> Option<String> {
        self.get(path).map(str::to_string)
    }

    fn dim(&self, [x, y, z]: [&str; 3]) -> Option<Dim3> {
        Some(Dim3 {
            x: self.get(x)?.parse().ok()?,
            y: self.get(y)?.parse().ok()?,
            z: self.get(z)?.parse().ok()?,
        })
    }

    /// `PREFIX/threadIdx/{x,y,z}`.
    fn thread(&self, prefix: &str) -> Option<Dim3> {
        let [x, y, z] = ["x", "y", "z"].map(|c| format!("{prefix}/threadIdx/{c}"));
        self.dim([&x, &y, &z])
    }

    /// `PREFIX/path` and `PREFIX/line`.
    fn location(&self, prefix: &str) -> Option<SourceLocation> {
        Some(SourceLocation {
            file: self.get(&format!("{prefix}/path"))?.to_string(),
            line: self.get(&format!("{prefix}/line"))?.parse().ok()?,
        })
    }

    /// The function, line and pc of `PREFIX/where` into `record`.
    fn place(&self, record: &mut Record, prefix: &str) {
        record.func = self.string(&format!("{prefix}/where/func"));
        record.location = self.location(&format!("{prefix}/where"));
        record.pc = self.string(&format!("{prefix}/where/pc"));
    }

    /// The other side of a race, at `PREFIX`, its direction at `direction`.
    fn access(&self, prefix: &str, direction: &str, thread: Option<Dim3>) -> Access {
        Access {
            direction: self.get(direction).unwrap_or_default().to_string(),
            func: self.string(&format!("{prefix}/where/func")),
            location: self.location(&format!("{prefix}/where")),
            pc: self.string(&format!("{prefix}/where/pc")),
            thread,
        }
    }
}

pub(super) fn to_record(raw: &RawRecord) -> Record {
    let f = Fields(raw);
    let kind = RecordKind::from_xml_text(
        f.get("kind").unwrap_or(""),
        f.get("what/text").unwrap_or(""),
    );
    let mut record = Record::new(kind.clone());
    record.severity = match f.get("level") {
        Some("Warning") => Severity::Warning,
        _ => Severity::Error,
    };
    record.text = f.get("what/text").unwrap_or_default().to_string();
    record.func = f.string("where/func");
    record.location = f.location("where");
    record.pc = f.string("where/pc");
    record.thread = f.thread("who");
    record.block = f.dim(["who/blockIdx/x", "who/blockIdx/y", "who/blockIdx/z"]);
    record.address = f.get("what/address").and_then(parse_u64);
    record.size = f.get("what/size").and_then(parse_u64);
    record.detail = f
        .get("what/error")
        .or(f.get("what/type"))
        .or(f.get("what/exception"))
        .map(str::to_string);
    match &kind {
        RecordKind::Api => {
            record.api = Some(ApiCall {
                api: f.get("what/api").unwrap_or_default().to_string(),
                error: f.get("what/error").unwrap_or_default().to_string(),
                code: f.get("what/result").and_then(|r| r.parse().ok()),
                message: f.get("what/message").unwrap_or_default().to_string(),
            });
        }
        RecordKind::UnusedMemory => {
            record.address = f.get("what/allocation/address").and_then(parse_u64);
            record.size = f.get("what/allocation/size").and_then(parse_u64);
            record.detail = f.get("what/unused").map(|u| format!("{u} bytes unused"));
        }
        RecordKind::Analysis => analysis(&f, &mut record),
        RecordKind::Hazard => hazard(&f, &mut record),
        RecordKind::InitcheckApi => {
            // The first uninitialised byte; the call's whole access.
            record.address = f.get("what/errorAddress").and_then(parse_u64);
            record.size = f.get("what/accessSize").and_then(parse_u64);
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
    if let RecordKind::Other(name) = &kind
        && record.text.is_empty()
    {
        record.text = name.clone();
    }
    record
}

/// racecheck's analysis record: the destination of the race is the
/// record's place, its source the first access.
fn analysis(f: &Fields<'_>, record: &mut Record) {
    f.place(record, "what/destination");
    record.hazards = f.get("what/destination/count").and_then(parse_u64);
    record.detail = f.string("what/destination/direction");
    record.first_access = Some(f.access("what/source", "what/source/direction", None));
}

/// racecheck's hazard record: thread 1 is the record's place, thread 0
/// the first access.
fn hazard(f: &Fields<'_>, record: &mut Record) {
    f.place(record, "what/thread1");
    record.thread = f.thread("what/thread1");
    record.block = f.dim([
        "what/common/blockIdx/x",
        "what/common/blockIdx/y",
        "what/common/blockIdx/z",
    ]);
    record.address = f.get("what/common/address").and_then(parse_u64);
    record.detail = f.string("what/common/type");
    let first_thread = f.thread("what/thread0");
    record.first_access = Some(f.access("what/thread0", "what/thread0/access", first_thread));
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

/// Threads are numbered x fastest, and a block's threads fill warps of 32
/// in that order. Block shape is not in the record, so this assumes a 1-D
/// block when y or z is nonzero on either side; then only equal y and z count.
fn same_warp(a: Dim3, b: Dim3) -> bool {
    a.y == b.y && a.z == b.z && a.x / 32 == b.x / 32
}
