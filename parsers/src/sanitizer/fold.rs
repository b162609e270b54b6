//! How compute-sanitizer records fold into sites: their identity (kind
//! and discriminator), their one-line message, and the fast path for the
//! many repeats of a known site, read from the XML reader's borrowed view.

use crate::model::{FindingKind, Frame, Sample, Site, Tool};
use crate::sanitizer::xml::RawView;
use crate::sanitizer::{Record, RecordKind};
use crate::site::{Folder, id_hash, new_site, note_pc};

/// Folds in a record as the XML reader holds it: a repeat of a known
/// invalid-access or initcheck site only counts and samples, from borrowed
/// fields; anything else is built in full first.
pub fn add_raw(folder: &mut Folder, tool: Tool, raw: &RawView<'_>) {
    if let Some(q) = raw.quick() {
        let kind = if q.precise {
            FindingKind::InvalidAccess
        } else {
            FindingKind::UninitializedRead
        };
        let tool = match tool {
            Tool::Sanitizer if q.precise => Tool::Memcheck,
            Tool::Sanitizer => Tool::Initcheck,
            tool => tool,
        };
        let hash = id_hash(tool, &kind, q.func, q.file.zip(q.line), q.pc, "");
        let sample = Sample {
            thread: q.thread,
            block: q.block,
            address: q.address,
            nearest_allocation: None,
            bytes: None,
        };
        if let Some(site) = folder.repeat(hash, q.severity, Some(sample)) {
            note_pc(site, q.pc);
            return;
        }
    }
    add_record(folder, tool, raw.record());
}

/// Folds one sanitizer record in. Most records repeat a site already seen
/// (one record per faulting thread), so the identity is computed first and
/// a known site only gains a count and perhaps a sample.
pub fn add_record(folder: &mut Folder, tool: Tool, record: Record) {
    if record.kind == RecordKind::ToolError {
        if record.text.contains(super::BUFFER_OVERFLOW) {
            folder.overflowed();
        } else {
            folder.tool_error(record.text.trim(), 1);
        }
        return;
    }
    let tool = if tool == Tool::Sanitizer {
        record.kind.tool().unwrap_or(tool)
    } else {
        tool
    };
    let (kind, discriminator) = identity(&record);
    let hash = id_hash(
        tool,
        &kind,
        record.func.as_deref(),
        record.location.as_ref().map(|l| (l.file.as_str(), l.line)),
        record.pc.as_deref(),
        &discriminator,
    );
    if folder.knows(hash) {
        let sample = (record.thread.is_some() || record.address.is_some()).then_some(Sample {
            thread: record.thread,
            block: record.block,
            address: record.address,
            nearest_allocation: record.nearest_allocation,
            bytes: (kind == FindingKind::Leak).then_some(record.size).flatten(),
        });
        if let Some(existing) = folder.repeat(hash, record.severity, sample) {
            note_pc(existing, record.pc.as_deref());
            if kind == FindingKind::Leak {
                existing.bytes = Some(existing.bytes.unwrap_or(0) + record.size.unwrap_or(0));
            }
            if let Some(h) = record.hazards {
                existing.hazards = Some(existing.hazards.unwrap_or(0) + h);
            }
        }
        return;
    }
    folder.insert_new(record_site(tool, record), hash);
}

/// A record's finding kind and the part of its identity beyond tool,
/// kernel, line and pc.
fn identity(record: &Record) -> (FindingKind, String) {
    let user_frame = || {
        user_native_frame(&record.host_frames)
            .map(|f| f.to_string())
            .unwrap_or_default()
    };
    match &record.kind {
        RecordKind::Precise => (FindingKind::InvalidAccess, String::new()),
        RecordKind::Imprecise => {
            let exception = record.detail.clone().unwrap_or_else(|| record.text.clone());
            (imprecise_kind(&exception), exception)
        }
        RecordKind::HeapError => (
            FindingKind::DeviceHeapError,
            record.detail.clone().unwrap_or_default(),
        ),
        RecordKind::Api => {
            let (name, error) = record
                .api
                .as_ref()
                .map_or(("", ""), |a| (a.api.as_str(), a.error.as_str()));
            (FindingKind::ApiError, format!("{name}|{error}"))
        }
        RecordKind::Leak => (FindingKind::Leak, user_frame()),
        RecordKind::Initcheck => (FindingKind::UninitializedRead, String::new()),
        // One record per 32 bytes of one call: a site per calling line.
        RecordKind::InitcheckApi => (FindingKind::UninitializedCopy, calling_line(record)),
        RecordKind::StackOverflow => (FindingKind::StackOverflow, String::new()),
        RecordKind::UnusedMemory => (FindingKind::UnusedMemory, user_frame()),
        RecordKind::Synccheck => (
            FindingKind::BarrierError,
            record.detail.clone().unwrap_or_default(),
        ),
        RecordKind::Analysis | RecordKind::Hazard => {
            let kind = if record.kind == RecordKind::Analysis {
                FindingKind::Race
            } else {
                FindingKind::Hazard
            };
            // The other access by its line where there is one (one line,
            // one site), by its offset where not.
            let first = record.first_access.as_ref();
            let other = first
                .and_then(|f| f.location.as_ref().map(|l| l.line.to_string()))
                .or_else(|| first.and_then(|f| f.pc.clone()))
                .unwrap_or_default();
            let discriminator = format!(
                "{}|{other}|{:?}",
                first.map_or("", |f| f.direction.as_str()),
                record.severity
            );
            (kind, discriminator)
        }
        RecordKind::Other(name) => (FindingKind::Unrecognised, name.clone()),
        // Never folded (add_record counts it apart); named for completeness.
        RecordKind::ToolError => (FindingKind::Unrecognised, "Sanitizer".into()),
    }
}

/// The kind of a hardware exception memcheck reports: each its own
/// (`crate::exceptions`), but an assert or an address fault without a
/// precise access, which stay device exceptions: memcheck's view of a
/// failed assert is `__assertfail`'s, and the judge folds it under the
/// program's own assert message.
fn imprecise_kind(exception: &str) -> FindingKind {
    match crate::exceptions::classify(exception).0 {
        FindingKind::DeviceAssert | FindingKind::InvalidAccess => FindingKind::DeviceException,
        kind => kind,
    }
}

/// The one-line message of a record.
fn message_of(record: &Record) -> String {
    match &record.kind {
        RecordKind::Precise => match &record.detail {
            Some(detail) if !record.text.ends_with(detail.as_str()) => {
                format!("{} is {detail}", record.text)
            }
            _ => record.text.clone(),
        },
        RecordKind::Imprecise => record.detail.clone().unwrap_or_else(|| record.text.clone()),
        RecordKind::Api => {
            let api = record.api.clone().unwrap_or_default();
            let code = api.code.map(|c| format!(" ({c})")).unwrap_or_default();
            format!("{} returned {}{code}: {}", api.api, api.error, api.message)
        }
        RecordKind::Leak if record.detail.as_deref() == Some("deviceheap") => {
            "device-heap memory (malloc in a kernel) never freed".to_string()
        }
        RecordKind::Leak => match user_native_frame(&record.host_frames) {
            Some(frame) => format!("device memory allocated in {frame} leaked"),
            None => "device memory leaked".to_string(),
        },
        RecordKind::UnusedMemory => "allocation never used".to_string(),
        RecordKind::InitcheckApi => match api_call(&record.host_frames).or_else(|| {
            // The text's "on access by cudaMemcpy source".
            record
                .detail
                .as_deref()?
                .split_whitespace()
                .next()
                .map(str::to_string)
        }) {
            Some(api) => format!("{api} read device memory nothing wrote"),
            None => "a CUDA API call (a copy or a set) read device memory nothing wrote".into(),
        },
        RecordKind::StackOverflow => {
            "stack overflow: a thread ran out of its call stack (recursion too deep, or \
             local arrays too large)"
                .to_string()
        }
        RecordKind::HeapError => format!(
            "device heap: {}",
            record.detail.as_deref().unwrap_or("malloc/free error")
        ),
        RecordKind::Synccheck => {
            format!(
                "barrier error: {}",
                record.detail.as_deref().unwrap_or_default()
            )
        }
        RecordKind::Analysis | RecordKind::Hazard => {
            let first = record.first_access.clone().unwrap_or_default();
            let second = record.detail.clone().unwrap_or_default();
            let at = |l: Option<&crate::model::SourceLocation>| {
                l.map(|l| format!(" at {}", base(l))).unwrap_or_default()
            };
            let (first_at, second_at) = (at(first.location.as_ref()), at(record.location.as_ref()));
            if record.kind == RecordKind::Analysis {
                format!(
                    "shared-memory race: {} access{first_at} vs {second} access{second_at}",
                    first.direction
                )
            } else {
                format!(
                    "{second} hazard: {} access{first_at} vs access{second_at}",
                    first.direction
                )
            }
        }
        // A kind this cudawatch does not know, by the tool's own name for it.
        RecordKind::Other(name) if !record.text.is_empty() && record.text != *name => {
            format!("{name}: {}", record.text)
        }
        RecordKind::Initcheck | RecordKind::ToolError | RecordKind::Other(_) => record.text.clone(),
    }
}

/// The CUDA call a host-API record was made in (`cudaMemcpyAsync`), from
/// its host stack: the outermost frame of the CUDA runtime's or driver's
/// own names, under the caller.
fn api_call(frames: &[Frame]) -> Option<String> {
    frames
        .iter()
        .filter_map(|f| f.func.as_deref())
        .take_while(|name| !name.starts_with("at::") && !name.contains("::"))
        .filter(|name| name.starts_with("cuda") || name.starts_with("cuMem"))
        .last()
        .map(str::to_string)
}

/// The line a host-API record was made from: its Python frame outside the
/// runtime, else the user's native frame; empty when it has no host stack
/// (initcheck as its stage runs it).
fn calling_line(record: &Record) -> String {
    record
        .host_frames
        .iter()
        .find(|f| f.is_python() && !f.is_runtime())
        .map(|f| f.to_string())
        .or_else(|| user_native_frame(&record.host_frames).map(|f| f.to_string()))
        .unwrap_or_default()
}

/// Turns one record into a one-count site (its id is set by the caller).
fn record_site(tool: Tool, record: Record) -> Site {
    let (kind, _) = identity(&record);
    let message = message_of(&record);
    let mut site = new_site(tool, kind, record.severity, message);
    site.kernel = record.func.clone();
    site.location = record.location.clone();
    site.pc = record.pc.clone();
    site.hazards = record.hazards;
    site.error = record.api.as_ref().map(|a| a.error.clone());
    if matches!(record.kind, RecordKind::Leak | RecordKind::UnusedMemory) {
        site.bytes = record.size;
    }

    if let Some(first) = &record.first_access {
        site.other = Some(crate::model::OtherAccess {
            access: first.direction.clone(),
            location: first.location.clone(),
            pc: first.pc.clone(),
        });
    }
    if record.thread.is_some() || record.block.is_some() || record.address.is_some() {
        site.samples.push(Sample {
            thread: record.thread,
            block: record.block,
            address: record.address,
            nearest_allocation: record.nearest_allocation.clone(),
            bytes: matches!(record.kind, RecordKind::Leak)
                .then_some(record.size)
                .flatten(),
        });
    }
    site.python_frame = record
        .host_frames
        .iter()
        .find(|f| f.is_python() && !f.is_runtime())
        .cloned();
    site.launch_frame = user_native_frame(&record.host_frames);
    site.inlined = record.inlined;
    site.host_frames = record.host_frames;
    site.unrecognised = record.unrecognised;
    site.test = record.test;
    site
}

fn base(location: &crate::model::SourceLocation) -> String {
    let file = location.file.rsplit('/').next().unwrap_or(&location.file);
    format!("{file}:{}", location.line)
}

/// The innermost native frame that is not CUDA runtime, driver or libc.
fn user_native_frame(frames: &[Frame]) -> Option<Frame> {
    frames
        .iter()
        .find(|f| !f.is_python() && !f.is_runtime())
        .cloned()
}
