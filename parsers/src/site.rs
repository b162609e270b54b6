//! Folding records into sites: one row per (tool, kind, kernel, line, pc)
//! with a count and a few samples, instead of one record per thread.

use std::collections::HashMap;

use crate::model::{FindingKind, Frame, MAX_SAMPLES, Sample, Severity, Site, Tool};
use crate::sanitizer::{Record, RecordKind};

/// A site with nothing but its identity fields filled in.
pub fn new_site(tool: Tool, kind: FindingKind, severity: Severity, message: String) -> Site {
    Site {
        id: String::new(),
        tool,
        kind,
        severity,
        message,
        kernel: None,
        location: None,
        snippet: None,
        pc: None,
        count: 1,
        samples: Vec::new(),
        other: None,
        bytes: None,
        hazards: None,
        error: None,
        python_frame: None,
        launch_frame: None,
        host_frames: Vec::new(),
        unrecognised: Vec::new(),
        suppressed: None,
        in_baseline: false,
    }
}

/// The kernel's name without parameters or return type: `oob_write` for
/// both the XML's `oob_write` and the text's `oob_write(int *, int)`.
pub fn simple_kernel_name(name: &str) -> &str {
    let name = name.strip_prefix("void ").unwrap_or(name);
    let mut depth = 0;
    for (i, c) in name.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 && i > 0 => return &name[..i],
            _ => {}
        }
    }
    name
}

/// A stable identity: tool, kind, kernel (simple name), file base name,
/// line, pc and a kind-specific discriminator, hashed. Addresses, threads
/// and absolute paths stay out, so the id survives reruns and machines.
pub fn site_id(site: &Site, discriminator: &str) -> String {
    let hash = id_hash(
        site.tool,
        &site.kind,
        site.kernel.as_deref(),
        site.location.as_ref().map(|l| (l.file.as_str(), l.line)),
        site.pc.as_deref(),
        discriminator,
    );
    id_string(&site.kind, hash)
}

fn id_string(kind: &FindingKind, hash: u64) -> String {
    format!("{}-{hash:016x}", kind.id())
}

/// The hash behind a site id, computed without allocating: most records
/// only look their site up.
fn id_hash(
    tool: Tool,
    kind: &FindingKind,
    kernel: Option<&str>,
    location: Option<(&str, u32)>,
    pc: Option<&str>,
    discriminator: &str,
) -> u64 {
    let file = location.map_or("", |(f, _)| f.rsplit('/').next().unwrap_or(f));
    let mut digits = [0u8; 10];
    let line = decimal(location.map_or(0, |(_, l)| l), &mut digits);
    let kernel = kernel.map(simple_kernel_name).unwrap_or("");
    let mut hash = Fnv::default();
    for part in [
        tool.name().as_bytes(),
        kind.id().as_bytes(),
        kernel.as_bytes(),
        file.as_bytes(),
        line,
        pc.unwrap_or("").as_bytes(),
        discriminator.as_bytes(),
    ] {
        hash.write(part);
        hash.write(b"|");
    }
    hash.0
}

/// `n` in decimal, written into `buf`.
fn decimal(mut n: u32, buf: &mut [u8; 10]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// The lookup key of a site id: the hash it was made from, or a hash of
/// the id itself for ids of another form.
fn key_of_id(id: &str) -> u64 {
    id.rsplit_once('-')
        .and_then(|(_, h)| u64::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| {
            let mut hash = Fnv::default();
            hash.write(id.as_bytes());
            hash.0
        })
}

/// FNV-1a: stable across runs and platforms, unlike std's hasher.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Sites, merged by id as records arrive.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    sites: Vec<Site>,
    by_id: HashMap<u64, usize>,
}

impl Folder {
    /// Folds in a record as the XML reader holds it: a repeat of a known
    /// invalid-access or initcheck site only counts and samples, from
    /// borrowed fields; anything else is built in full first.
    pub fn add_raw(&mut self, tool: Tool, raw: &crate::sanitizer::xml::RawView<'_>) {
        if let Some(q) = raw.quick() {
            let kind = if q.precise {
                FindingKind::InvalidAccess
            } else {
                FindingKind::UninitializedRead
            };
            let tool = if tool == Tool::Sanitizer {
                if q.precise {
                    Tool::Memcheck
                } else {
                    Tool::Initcheck
                }
            } else {
                tool
            };
            let hash = id_hash(tool, &kind, q.func, q.file.zip(q.line), q.pc, "");
            if let Some(&i) = self.by_id.get(&hash) {
                let existing = &mut self.sites[i];
                existing.count += 1;
                if existing.severity < q.severity {
                    existing.severity = q.severity;
                }
                if existing.samples.len() < MAX_SAMPLES {
                    existing.samples.push(Sample {
                        thread: q.thread,
                        block: q.block,
                        address: q.address,
                        nearest_allocation: None,
                    });
                }
                return;
            }
        }
        self.add_record(tool, raw.record());
    }

    /// Folds one sanitizer record in. Most records repeat a site already
    /// seen (one record per faulting thread), so the identity is computed
    /// first and a known site only gains a count and perhaps a sample.
    pub fn add_record(&mut self, tool: Tool, record: Record) {
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
        if let Some(&i) = self.by_id.get(&hash) {
            let existing = &mut self.sites[i];
            existing.count += 1;
            if kind == FindingKind::Leak {
                existing.bytes = Some(existing.bytes.unwrap_or(0) + record.size.unwrap_or(0));
            }
            if let Some(h) = record.hazards {
                existing.hazards = Some(existing.hazards.unwrap_or(0) + h);
            }
            if existing.severity < record.severity {
                existing.severity = record.severity;
            }
            if existing.samples.len() < MAX_SAMPLES
                && (record.thread.is_some() || record.address.is_some())
            {
                existing.samples.push(Sample {
                    thread: record.thread,
                    block: record.block,
                    address: record.address,
                    nearest_allocation: record.nearest_allocation,
                });
            }
            return;
        }
        let mut site = record_site(tool, record);
        site.id = id_string(&kind, hash);
        self.merge(site, "");
    }

    /// Merges another folder's sites in, in their order (a later block of
    /// the same file).
    pub fn absorb(&mut self, other: Folder) {
        for site in other.sites {
            self.merge(site, "");
        }
    }

    /// Folds a ready-made site in (program output, ncu rules).
    pub fn add_site(&mut self, site: Site) {
        let id = site.id.clone();
        self.merge(site, &id);
    }

    fn merge(&mut self, mut site: Site, discriminator: &str) {
        if site.id.is_empty() {
            site.id = site_id(&site, discriminator);
        }
        let key = key_of_id(&site.id);
        match self.by_id.get(&key) {
            Some(&i) => {
                let existing = &mut self.sites[i];
                existing.count += site.count;
                existing.bytes = match (existing.bytes, site.bytes) {
                    (Some(a), Some(b)) if existing.kind == FindingKind::Leak => Some(a + b),
                    (a, b) => a.or(b),
                };
                existing.hazards = match (existing.hazards, site.hazards) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
                for sample in site.samples {
                    if existing.samples.len() >= MAX_SAMPLES {
                        break;
                    }
                    existing.samples.push(sample);
                }
                if existing.severity < site.severity {
                    existing.severity = site.severity;
                }
            }
            None => {
                self.by_id.insert(key, self.sites.len());
                self.sites.push(site);
            }
        }
    }

    /// Adds a nearest-allocation hint to samples that lack one (the XML has
    /// none; the text has it per address).
    pub fn enrich_allocations(&mut self, hints: &HashMap<u64, crate::model::NearestAllocation>) {
        for site in &mut self.sites {
            for sample in &mut site.samples {
                if sample.nearest_allocation.is_none()
                    && let Some(address) = sample.address
                {
                    sample.nearest_allocation = hints.get(&address).cloned();
                }
            }
        }
    }

    /// The sites so far, in arrival order.
    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    /// Total records folded so far.
    pub fn record_count(&self) -> u64 {
        self.sites.iter().map(|s| s.count).sum()
    }

    /// The sites, errors first, then by count.
    pub fn finish(mut self) -> Vec<Site> {
        self.sites.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(b.count.cmp(&a.count))
                .then(a.id.cmp(&b.id))
        });
        self.sites
    }
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
        RecordKind::Imprecise => (
            FindingKind::DeviceException,
            record.detail.clone().unwrap_or_else(|| record.text.clone()),
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
            let first = record.first_access.as_ref();
            let discriminator = format!(
                "{}|{}|{:?}",
                first.map_or("", |f| f.direction.as_str()),
                first.and_then(|f| f.pc.as_deref()).unwrap_or(""),
                record.severity
            );
            (kind, discriminator)
        }
        RecordKind::Other(name) => (FindingKind::Unrecognised, name.clone()),
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
        RecordKind::Leak => match user_native_frame(&record.host_frames) {
            Some(frame) => format!("device memory allocated in {frame} leaked"),
            None => "device memory leaked".to_string(),
        },
        RecordKind::UnusedMemory => "allocation never used".to_string(),
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
        RecordKind::Initcheck | RecordKind::Other(_) => record.text.clone(),
    }
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
        });
    }
    site.python_frame = record
        .host_frames
        .iter()
        .find(|f| f.is_python() && !f.is_runtime())
        .cloned();
    site.launch_frame = user_native_frame(&record.host_frames);
    site.host_frames = record.host_frames;
    site.unrecognised = record.unrecognised;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_kernel_names_drop_parameters_and_return_type() {
        assert_eq!(simple_kernel_name("oob_write(int *, int)"), "oob_write");
        assert_eq!(simple_kernel_name("oob_write"), "oob_write");
        assert_eq!(simple_kernel_name("void k<(int)3>(float *)"), "k<(int)3>");
    }
}
