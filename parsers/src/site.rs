//! Sites and their stable ids, and the generic folding of findings into
//! sites: one row per (tool, kind, kernel, line, pc) with a count and a few
//! samples, instead of one record per thread. How a sanitizer record becomes
//! a site is `sanitizer::fold`'s business.

use std::collections::HashMap;

use crate::model::{FindingKind, MAX_SAMPLES, Sample, Severity, Site, Tool};

/// A site with nothing but its identity fields filled in.
pub fn new_site(tool: Tool, kind: FindingKind, severity: Severity, message: String) -> Site {
    Site {
        id: String::new(),
        tool,
        kind,
        severity,
        message,
        kernel: None,
        kernel_signature: None,
        location: None,
        snippet: None,
        pc: None,
        pcs: Vec::new(),
        inlined: None,
        runtime_source: None,
        count: 1,
        count_at_least: false,
        samples: Vec::new(),
        other: None,
        bytes: None,
        hazards: None,
        error: None,
        python_frame: None,
        launch_frame: None,
        launch_seen_by: None,
        host_frames: Vec::new(),
        stackless_with_stacks: false,
        read_with_tensors_filled: false,
        unrecognised: Vec::new(),
        suppressed: None,
        in_baseline: false,
        tool_severity: None,
        doubt: None,
        owner: None,
        consequence_of: None,
        explain: None,
        memory: None,
        test: None,
        processes: Vec::new(),
        seen_by: Vec::new(),
        only_in_try: None,
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

/// The bare name of a kernel signature: no return type, arguments,
/// template arguments or namespaces (`void cudnn::engines::k<float>(int)`
/// → `k`), as compute-sanitizer's XML names kernels.
pub fn bare_kernel_name(signature: &str) -> &str {
    let qualified = qualified_kernel_name(signature);
    qualified.rsplit("::").next().unwrap_or(qualified).trim()
}

/// Each bare kernel name of `signatures` with its signature, or `None`
/// when kernels of different namespaces share the bare name (a user's
/// `reduce_kernel` beside ATen's): then the name says nothing of whose.
pub fn signatures_by_bare_name<'a>(
    signatures: impl Iterator<Item = &'a str>,
) -> HashMap<String, Option<String>> {
    let mut by_bare: HashMap<String, Option<String>> = HashMap::new();
    for sig in signatures {
        let qualified = qualified_kernel_name(sig);
        by_bare
            .entry(bare_kernel_name(sig).to_string())
            .and_modify(|seen| {
                if seen
                    .as_deref()
                    .is_some_and(|s| qualified_kernel_name(s) != qualified)
                {
                    *seen = None;
                }
            })
            .or_insert_with(|| Some(sig.to_string()));
    }
    by_bare
}

/// A kernel signature without return type, arguments and template
/// arguments, namespaces kept (`void cudnn::engines::k<float>(int)` →
/// `cudnn::engines::k`). compute-sanitizer and ncu both print an anonymous
/// namespace as `<unnamed>` (`at::native::<unnamed>::fused_dropout_kernel_vec<...>`,
/// ATen's dropout under Hugging Face's Trainer): a namespace, not the
/// template's arguments.
pub fn qualified_kernel_name(signature: &str) -> &str {
    const ANONYMOUS: &str = "<unnamed>";
    let name = simple_kernel_name(signature);
    let mut from = 0;
    while let Some(found) = name[from..].find('<') {
        let at = from + found;
        if !name[at..].starts_with(ANONYMOUS) {
            return &name[..at];
        }
        from = at + ANONYMOUS.len();
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
pub fn id_hash(
    tool: Tool,
    kind: &FindingKind,
    kernel: Option<&str>,
    location: Option<(&str, u32)>,
    pc: Option<&str>,
    discriminator: &str,
) -> u64 {
    // One source line is one site: an unrolled loop puts many instructions
    // on a line, and their offsets stay inside the site (`Site::pcs`). The
    // offset tells sites apart only where there is no line (no -lineinfo).
    let pc = if location.is_some() { None } else { pc };
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
/// FNV-1a, 64 bits: stable across builds and machines (std's hasher is
/// not), for ids that must match from one night to the next.
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Feeds bytes in.
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// The most instruction offsets a site lists.
pub const MAX_PCS: usize = 64;

/// Adds an instruction offset to a site that folds several: `pc` stays the
/// first one seen, `pcs` lists every distinct one (up to [`MAX_PCS`]) once
/// there is more than one.
pub fn note_pc(site: &mut Site, pc: Option<&str>) {
    let Some(pc) = pc else { return };
    if site.pc.as_deref() == Some(pc) || site.pcs.iter().any(|p| p == pc) {
        return;
    }
    if site.pc.is_none() {
        site.pc = Some(pc.to_string());
        return;
    }
    if site.pcs.is_empty() {
        site.pcs.extend(site.pc.clone());
    }
    if site.pcs.len() < MAX_PCS {
        site.pcs.push(pc.to_string());
    }
}

/// Sites, merged by id as records arrive.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    sites: Vec<Site>,
    by_id: HashMap<u64, usize>,
    /// The tool's own failures among the records, each message once with
    /// how many records said it: not sites.
    tool_errors: Vec<(String, u64)>,
    /// Launches whose records the tool dropped (its error buffer
    /// overflowed): every count is then a lower bound.
    overflows: u64,
}

impl Folder {
    /// Counts one more record of the site with this id hash, if it is
    /// known: its severity rises to the record's, and `sample` is kept
    /// while there is room. Returns whether the site was known; a format's
    /// folding builds the full site only when it was not.
    pub fn repeat(
        &mut self,
        hash: u64,
        severity: Severity,
        sample: Option<Sample>,
    ) -> Option<&mut Site> {
        let &i = self.by_id.get(&hash)?;
        let existing = &mut self.sites[i];
        existing.count += 1;
        if existing.severity < severity {
            existing.severity = severity;
        }
        if let Some(sample) = sample
            && existing.samples.len() < MAX_SAMPLES
        {
            existing.samples.push(sample);
        }
        Some(existing)
    }

    /// Whether a site with this id hash is known.
    pub fn knows(&self, hash: u64) -> bool {
        self.by_id.contains_key(&hash)
    }

    /// Adds a new site whose id was made from `hash` (see [`id_hash`]).
    pub fn insert_new(&mut self, mut site: Site, hash: u64) {
        site.id = id_string(&site.kind, hash);
        self.merge(site, "");
    }

    /// Merges another folder's sites in, in their order (a later block of
    /// the same file).
    pub fn absorb(&mut self, other: Folder) {
        for site in other.sites {
            self.merge(site, "");
        }
        for (message, n) in other.tool_errors {
            self.tool_error(&message, n);
        }
        self.overflows += other.overflows;
    }

    /// Counts one launch whose records the tool dropped
    /// ([`crate::sanitizer::BUFFER_OVERFLOW`]).
    pub fn overflowed(&mut self) {
        self.overflows += 1;
    }

    /// Launches whose records the tool dropped.
    pub fn overflows(&self) -> u64 {
        self.overflows
    }

    /// Marks every site's count a lower bound. Which launch a record came
    /// from is not in it, so a dropped record could have been any site's.
    pub fn counts_at_least(&mut self) {
        for site in &mut self.sites {
            site.count_at_least = true;
        }
    }

    /// Counts `n` records of the tool's own failure `message`.
    pub fn tool_error(&mut self, message: &str, n: u64) {
        match self.tool_errors.iter_mut().find(|(m, _)| m == message) {
            Some((_, count)) => *count += n,
            None => self.tool_errors.push((message.to_string(), n)),
        }
    }

    /// The tool's own failures, each message with its count.
    pub fn tool_errors(&self) -> &[(String, u64)] {
        &self.tool_errors
    }

    /// Whether a site with this id string is known.
    pub fn knows_id(&self, id: &str) -> bool {
        self.by_id.contains_key(&key_of_id(id))
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
                existing.count_at_least |= site.count_at_least;
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
                for pc in site.pc.iter().chain(&site.pcs) {
                    note_pc(existing, Some(pc));
                }
                // The same site seen by several ranks (each under its own
                // sanitizer) names them all.
                for process in site.processes {
                    if !existing.processes.contains(&process) {
                        existing.processes.push(process);
                    }
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

    /// Gives each site whose kernel is a bare name the full signature the
    /// text log printed for it (`signatures`: bare name → signature, `None`
    /// where two kernels of different namespaces share the bare name, so
    /// that a user's kernel is never taken for a library's of that name).
    pub fn enrich_signatures(&mut self, signatures: &HashMap<String, Option<String>>) {
        for site in &mut self.sites {
            if site.kernel_signature.is_none()
                && let Some(kernel) = &site.kernel
                && let Some(Some(signature)) = signatures.get(kernel)
                && signature != kernel
            {
                site.kernel_signature = Some(signature.clone());
            }
        }
    }

    /// The sites folded so far, to be completed in place.
    pub fn sites_mut(&mut self) -> impl Iterator<Item = &mut Site> {
        self.sites.iter_mut()
    }

    /// The sites folded so far.
    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    /// Total records folded so far.
    pub fn record_count(&self) -> u64 {
        self.sites.iter().map(|s| s.count).sum()
    }

    /// The sites, errors first, then by count, then those placed whole
    /// (a race whose other access has its line before one the tool met
    /// before it was recorded): the verdict names the first.
    pub fn finish(mut self) -> Vec<Site> {
        let placed = |s: &Site| {
            s.location.is_some() && s.other.as_ref().is_none_or(|o| o.location.is_some())
        };
        self.sites.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(b.count.cmp(&a.count))
                .then(placed(b).cmp(&placed(a)))
                .then(a.id.cmp(&b.id))
        });
        self.sites
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_give_the_bare_and_qualified_names_the_xml_and_owners_use() {
        let sig =
            "void cudnn::engines_precompiled::nhwcToNchwKernel<float, (bool)1>(const float *, int)";
        assert_eq!(bare_kernel_name(sig), "nhwcToNchwKernel");
        assert_eq!(
            qualified_kernel_name(sig),
            "cudnn::engines_precompiled::nhwcToNchwKernel"
        );
        assert_eq!(
            bare_kernel_name("copy_uninit(int *, const int *)"),
            "copy_uninit"
        );
    }

    #[test]
    fn a_bare_name_two_namespaces_share_gets_no_signature() {
        let map = signatures_by_bare_name(
            [
                "void at::native::reduce_kernel<512, 1>(float *)",
                "reduce_kernel(float *, int)",
                "void cudnn::k<float>(int)",
                "void cudnn::k<double>(int)",
            ]
            .into_iter(),
        );
        assert_eq!(
            map["reduce_kernel"], None,
            "the user's kernel stays the user's"
        );
        assert_eq!(map["k"].as_deref(), Some("void cudnn::k<float>(int)"));
    }

    #[test]
    fn simple_kernel_names_drop_parameters_and_return_type() {
        assert_eq!(simple_kernel_name("oob_write(int *, int)"), "oob_write");
        assert_eq!(simple_kernel_name("oob_write"), "oob_write");
        assert_eq!(simple_kernel_name("void k<(int)3>(float *)"), "k<(int)3>");
    }

    #[test]
    fn a_kernel_in_an_anonymous_namespace_keeps_its_name() {
        // As compute-sanitizer's text printed ATen's dropout kernel under
        // Hugging Face's Trainer (H100, 2026-11-25,
        // sample-reports/beyond/hf_trainer/): the XML names it
        // `fused_dropout_kernel_vec`.
        let sig = "void at::native::<unnamed>::fused_dropout_kernel_vec<c10::BFloat16, float, \
                   unsigned int, (int)1, (int)8, bool>(at::cuda::detail::TensorInfo<const T1, T3>, \
                   T3, T2, at::PhiloxCudaState)";
        assert_eq!(bare_kernel_name(sig), "fused_dropout_kernel_vec");
        assert_eq!(
            qualified_kernel_name(sig),
            "at::native::<unnamed>::fused_dropout_kernel_vec"
        );
        let map = signatures_by_bare_name([sig].into_iter());
        assert_eq!(map["fused_dropout_kernel_vec"].as_deref(), Some(sig));
        assert_eq!(bare_kernel_name("void <unnamed>::k(int)"), "k");
    }
}
