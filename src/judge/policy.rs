//! The policy a report is judged under: which severities fail, the
//! checklist's thresholds, and what the team has already accepted (a
//! baseline, suppression rules). Plain data resolved once from flags,
//! environment and `cudawatch.toml` (see `cli::settings`); nothing here
//! knows about clap.

use std::collections::HashSet;

use cudawatch_model::{FindingKind, Owner, Severity, Site};

use super::suppress::Suppressions;

/// The least severe finding that fails the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// Errors fail.
    Error,
    /// Warnings and errors fail.
    Warning,
    /// Every finding fails.
    Note,
    /// Findings never fail (inconclusive stages still do).
    Never,
}

impl FailOn {
    /// Whether a finding of `severity` fails the gate.
    pub fn fails(self, severity: Severity) -> bool {
        match self {
            FailOn::Error => severity >= Severity::Error,
            FailOn::Warning => severity >= Severity::Warning,
            FailOn::Note => true,
            FailOn::Never => false,
        }
    }

    /// The flag value, for sentences (`--fail-on warning`).
    pub fn name(self) -> &'static str {
        match self {
            FailOn::Error => "error",
            FailOn::Warning => "warning",
            FailOn::Note => "note",
            FailOn::Never => "never",
        }
    }
}

/// Which findings the gate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateScope {
    /// What the user can act on: findings in the user's code, failures
    /// (faults, asserts, failed calls) wherever they happened, and hazards
    /// in framework or library kernels that the user's own line launched.
    User,
    /// Every finding, library internals included.
    All,
}

/// Thresholds the checklist applies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Most excessive global sectors a kernel may move, in percent of all its sectors.
    pub max_wasted_sectors_pct: f64,
    /// Most excessive sectors one source line may move, in percent of the
    /// sectors its accesses need; unchecked when `None`.
    pub max_line_wasted_sectors_pct: Option<f64>,
    /// Most sectors per request a kernel's loads or stores may need beyond
    /// the ideal for their width; unchecked when `None`.
    pub max_excess_sectors_per_request: Option<f64>,
    /// Least free GPU memory at the plain run's peak, in percent of the total.
    pub min_memory_headroom_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            max_wasted_sectors_pct: 50.0,
            max_line_wasted_sectors_pct: None,
            max_excess_sectors_per_request: None,
            min_memory_headroom_pct: 10.0,
        }
    }
}

/// Everything judging needs beyond the report.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Which severities fail.
    pub fail_on: FailOn,
    /// Which owners' findings count.
    pub scope: GateScope,
    /// The checklist's limits.
    pub thresholds: Thresholds,
    /// Site ids of an earlier report: findings it already had do not fail.
    pub baseline: Option<HashSet<String>>,
    /// Accepted findings.
    pub suppressions: Option<Suppressions>,
    /// Today, `YYYY-MM-DD`, for suppression expiry.
    pub today: String,
    /// Whether races racecheck calls warnings gate in the user's kernels.
    pub racecheck_warnings: RacecheckWarnings,
    /// Whether a program that does not recover from OOM under the
    /// oom-recovery stage's cap fails the gate.
    pub gate_oom_recovery: bool,
}

/// What racecheck's warning-level races (warp-synchronous shared memory
/// without `__syncwarp`) are in the user's kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RacecheckWarnings {
    /// Errors: with independent thread scheduling (sm_70 and later) the
    /// lanes of a warp do not run in lockstep, so they are real races.
    Gate,
    /// Warnings, as racecheck says (code written for lockstep warps).
    Report,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            fail_on: FailOn::Error,
            scope: GateScope::User,
            thresholds: Thresholds::default(),
            baseline: None,
            suppressions: None,
            today: super::suppress::today(),
            racecheck_warnings: RacecheckWarnings::Gate,
            gate_oom_recovery: false,
        }
    }
}

/// Whether a finding still needs someone's attention: not suppressed and
/// not already in the baseline. The one definition every part uses (gate,
/// checklist, verdict, diff, renderers).
pub fn is_open(site: &Site) -> bool {
    site.suppressed.is_none() && !site.in_baseline
}

impl Policy {
    /// Whether this finding fails the gate: open, in scope, and severe enough.
    /// A consequence never gates on its own: its root cause does.
    pub fn gates(&self, site: &Site) -> bool {
        is_open(site)
            && site.consequence_of.is_none()
            && self.in_scope(site)
            && self.fail_on.fails(site.severity)
    }

    /// Whether an uncoalesced access in a framework's or library's kernel
    /// (a warning, in scope where the user's own line launched it) can
    /// fail the gate: ncu profiles PyTorch's and the libraries' kernels
    /// only then (`tools::ncu`).
    pub fn vendor_coalescing_gates(&self) -> bool {
        self.scope == GateScope::All || self.fail_on.fails(Severity::Warning)
    }

    /// Whether the gate's scope covers this finding (see [`GateScope`]). A
    /// site without an owner (not yet judged) is in scope.
    pub fn in_scope(&self, site: &Site) -> bool {
        if self.scope == GateScope::All {
            return true;
        }
        if handled_inside_library(site) {
            return false;
        }
        super::owner::is_failure(&site.kind)
            || site
                .owner
                .as_ref()
                .is_none_or(|o| o.owner == Owner::User || o.user_call)
    }

    /// Whether a kernel's coalescing counts against the thresholds: the
    /// user's kernels, or every kernel under `--gate-scope all`. A kernel
    /// with a wasteful line in the user's source is the user's whatever
    /// its name (a `tiled_gemm`, as cuBLAS names its own: `judge::owner`).
    /// A kernel whose site in `report` is a framework's or library's (its
    /// launching module or Python package said so) is theirs too.
    pub fn kernel_in_scope(&self, kernel: &str, report: &cudawatch_model::Report) -> bool {
        if self.scope == GateScope::All {
            return true;
        }
        let owned_elsewhere = report.findings.iter().any(|s| {
            s.kernel.as_deref() == Some(kernel)
                && s.owner.as_ref().is_some_and(|o| o.owner != Owner::User)
        });
        let users_lines = report
            .wasteful_lines
            .iter()
            .any(|l| l.kernel == kernel && super::owner::is_users_source(&l.location.file));
        let own = super::own_kernels::defining(&report.own_kernels, kernel).is_some();
        (users_lines || own || super::owner::of_kernel(kernel) == Owner::User) && !owned_elsewhere
    }
}

/// A failed CUDA call that a framework's or library's own code made and got
/// past (lowered to a warning by `severity::judge`): NCCL probing a kernel
/// image for each architecture at init ("cudaFuncGetAttributes returned
/// cudaErrorNoKernelImageForDevice" in `ncclInitKernelsForDevice`, under a
/// correct DDP step's `DDP(...)` line on the H100). The library's business,
/// whoever called the library; one it does not get past stays an error and
/// gates wherever it happened.
fn handled_inside_library(site: &Site) -> bool {
    site.kind == FindingKind::ApiError
        && site.tool_severity.is_some_and(|tool| tool > site.severity)
        && site.owner.as_ref().is_some_and(|o| o.owner != Owner::User)
}
