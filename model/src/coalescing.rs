//! Global-memory coalescing: per kernel launch and per source line.

use serde::{Deserialize, Serialize};

use crate::SourceLocation;

/// Sectors and requests of one direction (loads or stores) of one kernel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AccessStats {
    /// Warp-level requests (`l1tex__t_requests_pipe_lsu_mem_global_op_*.sum`).
    pub requests: Option<f64>,
    /// 32-byte sectors (`l1tex__t_sectors_pipe_lsu_mem_global_op_*.sum`).
    pub sectors: Option<f64>,
    /// Share of each fetched sector the threads used, in percent.
    pub bytes_used_pct: Option<f64>,
    /// Sectors per request (the guide's "4:1 ratio" for 4-byte accesses),
    /// when both were measured and requests were made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sectors_per_request: Option<f64>,
}

impl AccessStats {
    /// From the measured figures; sectors per request is worked out, and
    /// a share that is none is dropped.
    ///
    /// ncu's share (`smsp__sass_average_data_bytes_per_sector_mem_global_op_*`)
    /// is counted over LDG and STG instructions only, while l1tex's sectors
    /// also count cp.async (LDGSTS) loads: a kernel loading through cp.async,
    /// as the multistage GEMMs of cuBLAS, cuDNN and CUTLASS do, reads 0% with
    /// every sector fully used (`sample-reports/beyond/async_loads/`). So 0%
    /// beside counted sectors is unknown, not waste; above 100% is no share
    /// either (ViT-tiny's step: 329.76% for a CUTLASS wmma kernel).
    pub fn new(requests: Option<f64>, sectors: Option<f64>, bytes_used_pct: Option<f64>) -> Self {
        let bytes_used_pct = bytes_used_pct.filter(|p| {
            (0.0..=100.0).contains(p) && !(*p == 0.0 && sectors.is_some_and(|n| n > 0.0))
        });
        let mut stats = AccessStats {
            requests,
            sectors,
            bytes_used_pct,
            sectors_per_request: None,
        };
        stats.sectors_per_request = stats.sectors_per_request();
        stats
    }

    /// Sectors per request, when both were measured and requests were made.
    pub fn sectors_per_request(&self) -> Option<f64> {
        match (self.sectors, self.requests) {
            (Some(s), Some(r)) if r > 0.0 => Some(s / r),
            _ => None,
        }
    }
}

/// Global-memory coalescing of one profiled kernel launch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelCoalescing {
    /// ncu's launch ID within its report.
    pub launch_id: u64,
    /// Demangled kernel name.
    pub kernel: String,
    /// Grid size, e.g. `(16384, 1, 1)`.
    pub grid: String,
    /// Block size, e.g. `(256, 1, 1)`.
    pub block: String,
    /// Global loads.
    pub load: AccessStats,
    /// Global stores.
    pub store: AccessStats,
    /// Kernel duration in nanoseconds.
    pub duration_ns: Option<f64>,
    /// Sectors per request a fully coalesced access of this kernel's widest
    /// access size would need (4 for 4-byte accesses, 16 for 16-byte ones).
    pub ideal_sectors_per_request: Option<f64>,
    /// Sectors moved beyond the ideal (SourceCounters).
    pub excessive_sectors: Option<f64>,
    /// All global sectors the kernel moved (SourceCounters).
    pub total_sectors: Option<f64>,
    /// The host frame that launched it, when ncu recorded call stacks: the
    /// innermost Python frame of the user's code, else the innermost
    /// native frame with a source line outside CUDA's own code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched_from: Option<crate::Frame>,
}

impl KernelCoalescing {
    /// Whether ncu gave the launch's shape: a launch that faulted while
    /// profiled has grid and block `(0, 0, 0)` (and every metric `nan`),
    /// which no launch has.
    pub fn shape_known(&self) -> bool {
        let given = |shape: &str| shape.chars().any(|c| matches!(c, '1'..='9'));
        given(&self.grid) && given(&self.block)
    }

    /// Share of sectors that were wasted, in percent.
    pub fn excessive_pct(&self) -> Option<f64> {
        match (self.excessive_sectors, self.total_sectors) {
            (Some(e), Some(t)) if t > 0.0 => Some(100.0 * e / t),
            _ => None,
        }
    }
}

/// Wasted sectors attributed to one source line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineSectors {
    /// The kernel the line belongs to.
    pub kernel: String,
    /// Where it is.
    pub location: SourceLocation,
    /// The line's text, as ncu imported it.
    pub source: String,
    /// `Load`, `Store` or both.
    pub access: String,
    /// Sectors beyond the ideal.
    pub excessive_sectors: f64,
    /// Sectors the line's accesses need at their pattern.
    pub theoretical_sectors: f64,
    /// Sectors a coalesced pattern would need.
    pub ideal_sectors: f64,
}

impl LineSectors {
    /// Share of the line's sectors beyond the ideal, in percent.
    pub fn excessive_pct(&self) -> Option<f64> {
        (self.theoretical_sectors > 0.0)
            .then(|| 100.0 * self.excessive_sectors / self.theoretical_sectors)
    }
}
