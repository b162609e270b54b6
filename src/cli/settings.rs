//! From the command line to the settings each part takes: flags,
//! `CUDAWATCH_*` and `cudawatch.toml` (already merged by clap, see
//! `config_file.rs`) become plain data (ripgrep's low-args → high-args).
//! Files the flags name are read here, before anything runs, so a missing
//! baseline fails in a second, not after an hour of sanitizers.

use std::time::Duration;

use super::args::{
    ColorArg, ExportArgs, FailOnArg, GateArgs, GateScopeArg, HostStacksArg, LeakCheckArg,
    OutputArgs, RacecheckBlocksArg, RacecheckWarningsArg, RecoveryArg, RunArgs, SweepGateArgs,
};
use crate::errors::ExpectedError;
use crate::judge::{self, FailOn, GateScope, Policy, Thresholds};
use crate::plan::{Concurrency, Coverage, LeakCheck, RunSettings, Timeouts};
use crate::render::OutputSettings;
use crate::render::style::ColorChoice;
use crate::tools::ToolPaths;
use crate::tools::ncu::NcuOptions;
use crate::tools::sanitizer::SanitizerLaunches;

/// What `cudawatch run` runs.
pub fn run_settings(args: &RunArgs) -> RunSettings {
    RunSettings {
        program: args.program.clone(),
        stages: args.stages.clone(),
        out_dir: args.out_dir.clone(),
        timeouts: Timeouts {
            tool: args.timeout.map(seconds),
            plain: seconds(args.plain_timeout),
            grace: seconds(args.grace),
        },
        stream: args.stream,
        keep_caching_allocator: args.keep_caching_allocator,
        keep_dumps: args.keep_dumps,
        oom_recovery_share: args.oom_recovery_share,
        ncu: NcuOptions {
            launch_cap: args.ncu_launch_cap,
            all_launches: args.ncu_all_launches,
            kernel: args.ncu_kernel.clone(),
            // Where ATen's and the libraries' coalescing can gate
            // (`tools::ncu` leaves their kernels out elsewhere), as the gate
            // the run is judged by says.
            vendor_kernels: Policy {
                fail_on: fail_on(args.output.gate.fail_on),
                scope: gate_scope(args.output.gate.gate_scope),
                ..Policy::default()
            }
            .vendor_coalescing_gates(),
        },
        sanitizer_suppressions: args.sanitizer_suppressions.clone(),
        // Found in the program's binaries once its run starts (commands::run).
        own_library_named: Vec::new(),
        sanitizer_launches: SanitizerLaunches {
            count: args.sanitizer_launch_count,
            skip: args.sanitizer_launch_skip,
            kernel: args.sanitizer_kernel.clone(),
            recover_kernels: args.sanitizer_recovery == RecoveryArg::Kernel,
            racecheck_first_block: args.racecheck_blocks == RacecheckBlocksArg::First,
            library_kernels: args.output.gate.gate_scope == GateScopeArg::All,
            initcheck_host_stacks: args.host_stacks == HostStacksArg::All,
            flood_records: args.flood_records,
            loop_seconds: args.loop_seconds,
        },
        leak_check: match args.leak_check {
            LeakCheckArg::Auto => LeakCheck::Auto,
            LeakCheckArg::Full => LeakCheck::Full,
            LeakCheckArg::Off => LeakCheck::Off,
        },
        tools: ToolPaths {
            racecheck_sanitizer: args.racecheck_sanitizer.clone().map(|path| (path, None)),
            ..ToolPaths::resolve(args.compute_sanitizer.as_deref(), args.ncu.as_deref())
        },
        concurrency: if args.jobs == Some(1) {
            Concurrency::sequential()
        } else {
            let gpus = gpus(args.gpus.as_deref());
            Concurrency {
                jobs: args.jobs.map(usize::from),
                // Pinned when there is a choice to make: several GPUs, or
                // the ones the user named.
                pin: gpus.len() > 1 || args.gpus.is_some(),
                gpus,
            }
        },
        mps_pipe: crate::tools::ncu::mps::control_pipe(|k| std::env::var(k).ok()),
        coverage: match (args.steps, args.whole_program) {
            (Some(n), _) => Coverage::Steps(n),
            (None, true) => Coverage::Whole,
            (None, false) => Coverage::FirstSteps,
        },
    }
}

/// The GPUs `--gpus` names (one grammar for `run` and `sweep`); a GPU list
/// that could not be had is said on one line, and the work goes on unpinned.
pub fn gpus(spec: Option<&str>) -> Vec<String> {
    let choice = crate::supervisor::gpus::choose(spec);
    if let Some(warning) = &choice.warning {
        crate::render::stderr::warning(warning);
    }
    choice.gpus
}

/// The policy a report is judged under, with its baseline and suppression
/// files read.
pub fn policy(output: &OutputArgs) -> Result<Policy, ExpectedError> {
    let baseline = output
        .baseline
        .as_deref()
        .map(judge::baseline::load)
        .transpose()
        .map_err(|e| e.for_flag("--baseline"))?;
    gate_policy(&output.gate, baseline)
}

/// The policy every target of a sweep is judged under. A sweep's
/// `--baseline` is an earlier sweep to compare with, not a filter of the
/// gate, so the policy has none.
pub fn sweep_policy(gate: &SweepGateArgs) -> Result<Policy, ExpectedError> {
    gate_policy(&gate.gate, None)
}

/// The gate's flags as a policy, its suppression file read.
fn gate_policy(
    gate: &GateArgs,
    baseline: Option<std::collections::HashSet<String>>,
) -> Result<Policy, ExpectedError> {
    Ok(Policy {
        fail_on: fail_on(gate.fail_on),
        scope: gate_scope(gate.gate_scope),
        thresholds: Thresholds {
            max_wasted_sectors_pct: gate.max_wasted_sectors,
            max_line_wasted_sectors_pct: gate.max_line_wasted_sectors,
            max_excess_sectors_per_request: gate.max_excess_sectors_per_request,
            min_memory_headroom_pct: gate.min_memory_headroom,
        },
        baseline,
        suppressions: gate
            .suppressions
            .as_deref()
            .map(judge::suppress::load)
            .transpose()
            .map_err(|e| e.for_flag("--suppressions"))?,
        today: judge::suppress::today(),
        racecheck_warnings: match gate.racecheck_warnings {
            RacecheckWarningsArg::Gate => judge::RacecheckWarnings::Gate,
            RacecheckWarningsArg::Report => judge::RacecheckWarnings::Report,
        },
        gate_oom_recovery: gate.gate_oom_recovery,
    })
}

/// Where a sweep's merged report goes.
pub fn sweep_output(gate: &SweepGateArgs) -> Result<OutputSettings, ExpectedError> {
    exports(&gate.export)
}

/// Where the report goes.
pub fn output(output: &OutputArgs) -> Result<OutputSettings, ExpectedError> {
    exports(&output.export)
}

fn exports(export: &ExportArgs) -> Result<OutputSettings, ExpectedError> {
    OutputSettings::new(&export.reports, export.format == super::args::Format::Json)
}

/// Where source snippets may be read from: `--source-root`, else the
/// working directory.
pub fn source_root(output: &OutputArgs) -> std::path::PathBuf {
    output
        .source_root
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| std::path::PathBuf::from("."))
}

/// `--fail-on`.
pub fn fail_on(arg: FailOnArg) -> FailOn {
    match arg {
        FailOnArg::Error => FailOn::Error,
        FailOnArg::Warning => FailOn::Warning,
        FailOnArg::Note => FailOn::Note,
        FailOnArg::Never => FailOn::Never,
    }
}

/// `--gate-scope`.
pub fn gate_scope(arg: GateScopeArg) -> GateScope {
    match arg {
        GateScopeArg::User => GateScope::User,
        GateScopeArg::All => GateScope::All,
    }
}

/// `--color`.
pub fn color(arg: ColorArg) -> ColorChoice {
    match arg {
        ColorArg::Auto => ColorChoice::Auto,
        ColorArg::Always => ColorChoice::Always,
        ColorArg::Never => ColorChoice::Never,
    }
}

/// Seconds as a duration; the flags' parsers already refused anything
/// negative, not finite or over a year.
fn seconds(value: f64) -> Duration {
    Duration::try_from_secs_f64(value).unwrap_or(Duration::ZERO)
}
