//! The combined report of every tool.

use serde::{Deserialize, Serialize};

use crate::{Input, KernelCoalescing, LineSectors, SCHEMA_VERSION, Site, StageReport, Warning};

/// The combined report of every tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// See [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// cudawatch's version.
    pub cudawatch_version: String,
    /// The program that was run, if this report is of a run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target: Vec<String>,
    /// The stages of the run, in order; empty for `cudawatch parse`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageReport>,
    /// Every file that went into the report.
    pub inputs: Vec<Input>,
    /// Findings grouped by site, worst first.
    pub findings: Vec<Site>,
    /// Coalescing per profiled kernel launch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coalescing: Vec<KernelCoalescing>,
    /// Source lines that waste the most sectors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wasteful_lines: Vec<LineSectors>,
    /// What PyTorch's allocator held (the memory stage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::MemoryReport>,
    /// What limits trust in this report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// What cudawatch changed about how the program ran, and why (PyTorch's
    /// caching allocator off under the sanitizers): worth knowing, not a
    /// limit on the report, so the verdict does not count them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Warning>,
    /// What `cudawatch doctor` found about the machine the run ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::Environment>,
    /// The user stopped the run (Ctrl-C, SIGTERM): later stages did not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The program's own kernels whose names a library's carry (a kernel
    /// built on CUTLASS, `cutlass::Kernel<TileSum>`), mangled as its
    /// binaries hold them: the judge takes their findings for the user's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_kernels: Vec<String>,
}

impl Report {
    /// An empty report of this cudawatch version.
    pub fn new(cudawatch_version: &str) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            cudawatch_version: cudawatch_version.to_string(),
            target: Vec::new(),
            stages: Vec::new(),
            inputs: Vec::new(),
            findings: Vec::new(),
            coalescing: Vec::new(),
            wasteful_lines: Vec::new(),
            memory: None,
            warnings: Vec::new(),
            notes: Vec::new(),
            environment: None,
            interrupted: false,
            own_kernels: Vec::new(),
        }
    }

    /// Calls `f` on every source or module path the report names: each
    /// source location, each frame's file and module. The one list of them,
    /// so a rewrite of paths (relative to the project) misses none. Inputs
    /// are left out: they are named as given, and warnings name them so.
    pub fn for_each_path_mut(&mut self, mut f: impl FnMut(&mut String)) {
        let frame = |frame: &mut crate::Frame, f: &mut dyn FnMut(&mut String)| {
            frame
                .file
                .iter_mut()
                .chain(frame.module.iter_mut())
                .for_each(f);
        };
        for site in &mut self.findings {
            let locations = site
                .location
                .iter_mut()
                .chain(site.runtime_source.iter_mut())
                .chain(site.other.iter_mut().filter_map(|o| o.location.as_mut()));
            locations.for_each(|l| f(&mut l.file));
            let frames = site
                .inlined
                .iter_mut()
                .chain(site.python_frame.iter_mut())
                .chain(site.launch_frame.iter_mut())
                .chain(site.host_frames.iter_mut());
            frames.for_each(|fr| frame(fr, &mut f));
        }
        for kernel in &mut self.coalescing {
            kernel
                .launched_from
                .iter_mut()
                .for_each(|fr| frame(fr, &mut f));
        }
        self.wasteful_lines
            .iter_mut()
            .for_each(|l| f(&mut l.location.file));
        if let Some(memory) = &mut self.memory {
            for oom in &mut memory.ooms {
                let held = oom.held.iter_mut().filter_map(|h| h.location.as_mut());
                oom.location
                    .iter_mut()
                    .chain(held)
                    .for_each(|l| f(&mut l.file));
            }
            let held = memory
                .at_peak
                .iter_mut()
                .chain(memory.growth.iter_mut().flat_map(|g| g.lines.iter_mut()));
            held.filter_map(|h| h.location.as_mut())
                .for_each(|l| f(&mut l.file));
        }
    }
}
