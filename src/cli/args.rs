//! The command line, as clap derives it. Kept close to the flags: turning
//! them into the settings each part takes happens in `settings.rs`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use cudawatch_model::Tool;

/// Runs a CUDA program under compute-sanitizer and Nsight Compute and folds
/// every tool's output into one report.
#[derive(Debug, Parser)]
#[command(name = "cudawatch", version, about, long_about = None, after_long_help = AFTER_HELP)]
pub struct Args {
    /// When to colour terminal output (NO_COLOR is honoured under auto).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto, global = true, env = "CUDAWATCH_COLOR")]
    pub color: ColorArg,
    /// The settings file [default: the first cudawatch.toml in the working
    /// directory or above it].
    #[arg(long, global = true, value_name = "FILE", env = "CUDAWATCH_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// Exit codes, environment and examples: the end of `--help` and of the
/// man page.
const AFTER_HELP: &str = "\
Exit status (the worst wins):
  0    clean: every stage ran to the end and nothing gates
  1    findings: a finding at or above --fail-on in the gate's scope,
       a failed checklist item, or the program failed on its own
  2    usage: the command line is wrong
  3    inconclusive: a stage could not really check the program
       (tool missing, crashed, timed out, truncated output)
  4    setup error: no program, an unreadable input, a run directory
       that is not new, a wrong cudawatch.toml, sweep or suppression file
  5    write error: a report could not be written
  130  interrupted: SIGINT or SIGTERM; the report of what finished is
       written

Environment:
  CUDAWATCH_<FLAG>     every setting of `run` (CUDAWATCH_FAIL_ON,
                       CUDAWATCH_TIMEOUT, CUDAWATCH_GPUS, ...)
  CUDAWATCH_CONFIG     the settings file (else cudawatch.toml in the
                       working directory or above)
  CUDAWATCH_DOCS_URL   where findings link to (unset: no links, only
                       `cudawatch explain TOPIC`)
  NO_COLOR             no colour under --color auto
  COLUMNS              width of tables and text when the output is not
                       a terminal
  CUDA_HOME            where to look for compute-sanitizer and ncu
                       (after PATH)
  GITHUB_STEP_SUMMARY  a Markdown report is appended to it

Examples:
  cudawatch doctor
  cudawatch run -- python train.py
  cudawatch run --stages plain,memcheck --fail-on warning -- ./app
  cudawatch report cudawatch-runs/<run> --report html=run.html
  cudawatch parse memcheck.xml memcheck.stdout
  python train.py 2>&1 | cudawatch explain
  cudawatch sweep nightly.toml --out-dir sweeps/today \\
      --baseline sweeps/yesterday
";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a program plainly, under every compute-sanitizer tool and under
    /// ncu, and print one combined report.
    ///
    /// Example: cudawatch run -- python train.py --lr 3e-4
    ///
    /// cudawatch's own flags go before `--`; everything after it is the
    /// program and its arguments.
    Run(Box<RunArgs>),
    /// Check this machine: GPUs, driver, PyTorch, and whether
    /// compute-sanitizer and ncu really work here.
    ///
    /// Example: cudawatch doctor; cudawatch doctor --quick --format json
    ///
    /// Checks the GPUs (and memory held by other processes), the driver
    /// against the toolkit and PyTorch, the GPU's architecture against
    /// PyTorch's, compute-sanitizer and ncu on a probe, and the settings
    /// that change what the tools see. Exit 1 when a check finds a problem.
    Doctor(DoctorArgs),
    /// What a CUDA error means and what to do: a number, a name, a finding
    /// kind, or a pasted message or traceback (from stdin when no argument
    /// is given).
    ///
    /// Example: cudawatch explain 700; python train.py 2>&1 | cudawatch explain
    ///
    /// Covers the CUDA runtime and driver (CUDA 13 numbering, and the one
    /// before CUDA 10.1 where a number meant something else), cuBLAS,
    /// cuDNN, cuFFT, cuSOLVER, cuRAND and NCCL. Exit 1 when nothing matched.
    Explain(ExplainArgs),
    /// Fold tool outputs captured earlier (sanitizer XML or text, ncu CSV
    /// pages, a program's stderr) into one report; kinds are detected from
    /// content.
    ///
    /// Example: cudawatch parse memcheck.xml memcheck.stdout ncu-raw.csv
    Parse(ParseArgs),
    /// Re-render a saved run: a run directory, from its raw artifacts, or
    /// a JSON report written earlier.
    ///
    /// Example: cudawatch report cudawatch-runs/<run> --report html=run.html
    ///
    /// No run yet: cudawatch report --example renders a real one, built in.
    Report(ReportArgs),
    /// Compare two cudawatch JSON reports: new, fixed and unchanged sites.
    ///
    /// Example: cudawatch diff old/report.json new/report.json
    ///
    /// Exit status: 0 when NEW has no site OLD lacked at or above
    /// --fail-on; 1 when it has; 3 when a site may be gone only because
    /// its tool did not check NEW (inconclusive); 4 when a report cannot
    /// be read.
    Diff(DiffArgs),
    /// Run many programs, spread over the machine's GPUs, each with
    /// `cudawatch run`, and merge their reports; resumable, shardable.
    ///
    /// Example: cudawatch sweep nightly.toml --out-dir sweeps/today
    ///
    /// The sweep file has one [[target]] table per program (name, command,
    /// and optionally workdir, env, stages, timeout, stage-timeout, tags,
    /// expect = "clean" | "findings" | "conclusive", run-args) and a
    /// [defaults] table for what they share. Run again on the same
    /// directory, a sweep skips what finished and reruns the rest.
    Sweep(Box<SweepArgs>),
    /// Merge the directories of a sharded sweep into one report.
    ///
    /// Example: cudawatch merge sweeps/shard-* --format json > nightly.json
    Merge(MergeArgs),
    /// Append a suppression rule for one finding of a report to a rules file.
    ///
    /// Example: cudawatch suppress r.json leak-3f2a9c0d11e4b7a2 --reason "at exit"
    Suppress(SuppressArgs),
    /// Show every setting as resolved from the command line, the
    /// environment (CUDAWATCH_*) and cudawatch.toml, and where each came from.
    ///
    /// Settings are the long flags of `run`; cudawatch.toml sets them by the
    /// same names (fail-on = "warning", report = ["sarif=cudawatch.sarif"]),
    /// paths relative to the file. The command line beats the environment,
    /// which beats the file.
    ///
    /// Example: cudawatch config --fail-on warning
    Config(ConfigArgs),
    /// Print a shell completion script.
    ///
    /// Example: cudawatch completions bash > /etc/bash_completion.d/cudawatch
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff): cudawatch's, or a subcommand's; or write
    /// every page into a directory.
    ///
    /// Example: cudawatch man --dir /usr/local/share/man/man1
    Man(ManArgs),
}

/// `cudawatch parse`.
#[derive(Debug, clap::Args)]
pub struct ParseArgs {
    /// Files to read, or directories of captures.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Say on stderr what each file was taken for and what was read from
    /// it, so a file that gave nothing can be told apart from a clean one.
    #[arg(long)]
    pub explain_detection: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `cudawatch suppress`.
#[derive(Debug, clap::Args)]
pub struct SuppressArgs {
    /// A cudawatch JSON report.
    pub report: PathBuf,
    /// The site's id, as the JSON report gives it.
    pub site: String,
    /// Why the finding is accepted.
    #[arg(long)]
    pub reason: String,
    /// Last day the rule applies (YYYY-MM-DD).
    #[arg(long)]
    pub expires: Option<String>,
    /// The rules file to append to.
    #[arg(long, default_value = "cudawatch-suppress.toml")]
    pub file: PathBuf,
}

/// `cudawatch config`. It takes every setting flag of `run` (added in
/// `config::command`), to show how they combine; `--format json`, one of
/// them, prints the settings as JSON.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {}

/// `cudawatch man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (run, report, parse, ...).
    pub subcommand: Option<String>,
    /// Write cudawatch.1 and one cudawatch-SUBCOMMAND.1 per subcommand here.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `cudawatch diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The earlier report.
    pub old: PathBuf,
    /// The later report.
    pub new: PathBuf,
    /// Print the diff as JSON on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "CUDAWATCH_FORMAT")]
    pub format: Format,
    /// The least severe new finding that fails (exit 1).
    #[arg(long, value_enum, default_value_t = FailOnArg::Error, env = "CUDAWATCH_FAIL_ON")]
    pub fail_on: FailOnArg,
    /// Compare reports of two different programs anyway (by default they
    /// are refused: one program's bugs would read as "fixed").
    #[arg(long)]
    pub different_programs: bool,
}

/// `cudawatch report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A run directory written by `cudawatch run`, or a cudawatch JSON report.
    #[arg(value_name = "DIR|REPORT.json", required_unless_present = "example")]
    pub dir: Option<PathBuf>,
    /// Render a real run bundled in cudawatch instead: memcheck finding an
    /// out-of-bounds write on an H100 (docs/examples/oob_write), to try
    /// cudawatch where there is no GPU.
    #[arg(long, conflicts_with = "dir")]
    pub example: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `cudawatch run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Stages to run, in order, comma-separated (plain,memcheck,ncu).
    #[arg(help_heading = "Stages", long, value_parser = stage_parser(), value_delimiter = ',', default_values_t = Tool::DEFAULT_STAGES, env = "CUDAWATCH_STAGES")]
    pub stages: Vec<Tool>,
    /// Where to keep raw artifacts and report.json
    /// [default: cudawatch-runs/<YYYYMMDD-HHMMSS>-<program>]; must be empty
    /// or new, so that a run only reads what it wrote itself.
    #[arg(help_heading = "Output", long, env = "CUDAWATCH_OUT_DIR")]
    pub out_dir: Option<PathBuf>,
    /// Per-stage timeout of tool stages, in seconds or with a unit (600,
    /// 10m, 2h) [default: 40 × the plain run's time, at least 120 s; 3600 s
    /// when the plain run was skipped].
    #[arg(help_heading = "Timeouts", long, value_name = "DURATION", value_parser = time_limit, env = "CUDAWATCH_TIMEOUT")]
    pub timeout: Option<f64>,
    /// Timeout of the plain run, in seconds or with a unit (600, 10m, 2h).
    #[arg(hide_short_help = true, help_heading = "Timeouts", long, value_name = "DURATION", default_value_t = 3600.0, value_parser = time_limit, env = "CUDAWATCH_PLAIN_TIMEOUT")]
    pub plain_timeout: f64,
    /// Time between SIGTERM and SIGKILL when a stage is stopped (seconds,
    /// or 30s, 1m).
    #[arg(hide_short_help = true, help_heading = "Timeouts", long, value_name = "DURATION", default_value_t = 5.0, value_parser = duration, env = "CUDAWATCH_GRACE")]
    pub grace: f64,
    #[command(flatten)]
    pub output: OutputArgs,
    /// At most N stages at once, the plain run counted [default: one per
    /// CPU; as many as fit in the GPUs' free memory].
    ///
    /// When the GPU has room, tool stages start beside the plain run and are stopped and
    /// started again if it shows they should not have. `-j 1` runs one
    /// stage at a time. The report is the same either way.
    #[arg(help_heading = "Stages", short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..), env = "CUDAWATCH_JOBS")]
    pub jobs: Option<u16>,
    /// Kept for scripts written before stages ran at once by default; it
    /// changes nothing.
    #[arg(long, hide = true, env = "CUDAWATCH_PARALLEL_STAGES",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub parallel_stages: bool,
    /// The GPUs the tool stages are spread over: a list (`0,1`), `all` or
    /// `none`, as for `sweep --gpus` [default: all: CUDA_VISIBLE_DEVICES,
    /// else every GPU nvidia-smi lists].
    #[arg(
        help_heading = "Stages",
        long,
        value_name = "LIST",
        env = "CUDAWATCH_GPUS"
    )]
    pub gpus: Option<String>,
    /// Stream each stage's output live to stderr as well as to its files.
    /// The bytes are the program's and the tools' own, passed on raw
    /// (escape sequences included), unlike everything cudawatch prints.
    #[arg(hide_short_help = true, help_heading = "Output", long, env = "CUDAWATCH_STREAM",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub stream: bool,
    /// Keep PyTorch's caching allocator (and JAX's BFC pool) on under the
    /// sanitizers (they hide out-of-bounds accesses inside their blocks;
    /// off by default).
    #[arg(
        help_heading = "Stages",
        long,
        env = "CUDAWATCH_KEEP_CACHING_ALLOCATOR",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub keep_caching_allocator: bool,
    /// Keep the GPU core dumps the coredump stage wrote (`coredump/core.PID`)
    /// once cuda-gdb has read them; they are deleted by default (a dump
    /// without the GPU's memory is small, but it is not the report).
    #[arg(hide_short_help = true, help_heading = "Stages", long, env = "CUDAWATCH_KEEP_DUMPS",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub keep_dumps: bool,
    /// The oom-recovery stage caps the program's GPU memory to this share
    /// of the peak allocated memory the memory stage measured.
    #[arg(hide_short_help = true, help_heading = "Stages", long, default_value_t = 0.6, value_parser = share, env = "CUDAWATCH_OOM_RECOVERY_SHARE")]
    pub oom_recovery_share: f64,
    /// Most kernel launches ncu profiles in all.
    #[arg(
        hide_short_help = true,
        help_heading = "Tools",
        long,
        default_value_t = 50,
        env = "CUDAWATCH_NCU_LAUNCH_CAP"
    )]
    pub ncu_launch_cap: u32,
    /// Profile every launch, not one per unique kernel and launch configuration.
    #[arg(hide_short_help = true, help_heading = "Tools", long, env = "CUDAWATCH_NCU_ALL_LAUNCHES",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub ncu_all_launches: bool,
    /// Only profile kernels whose name matches this ncu filter (e.g. regex:gemm),
    /// in place of cudawatch's own, which leaves PyTorch's kernels and the
    /// libraries' (but their Hopper ones) out.
    #[arg(
        hide_short_help = true,
        help_heading = "Tools",
        long,
        env = "CUDAWATCH_NCU_KERNEL"
    )]
    pub ncu_kernel: Option<String>,
    /// A compute-sanitizer suppression XML, passed to every sanitizer stage
    /// as `--suppressions`.
    #[arg(
        hide_short_help = true,
        help_heading = "Stages",
        long,
        value_name = "FILE",
        env = "CUDAWATCH_SANITIZER_SUPPRESSIONS"
    )]
    pub sanitizer_suppressions: Option<PathBuf>,
    /// Sanitizer stages check only this many kernel launches (after the
    /// skipped ones, counting only launches the kernel filter selects):
    /// the stage is then clean only for those launches, and says so.
    /// Caveat, as for --sanitizer-kernel: racecheck crashes programs whose
    /// unchecked launches are cuDNN's (a ResNet step did, either way).
    #[arg(
        hide_short_help = true,
        help_heading = "Stages",
        long,
        value_name = "N",
        env = "CUDAWATCH_SANITIZER_LAUNCH_COUNT"
    )]
    pub sanitizer_launch_count: Option<u64>,
    /// Sanitizer stages skip this many kernel launches before checking
    /// (the caveat of --sanitizer-launch-count holds).
    #[arg(
        hide_short_help = true,
        help_heading = "Stages",
        long,
        value_name = "N",
        env = "CUDAWATCH_SANITIZER_LAUNCH_SKIP"
    )]
    pub sanitizer_launch_skip: Option<u64>,
    /// Sanitizer stages check only kernels matching this compute-sanitizer
    /// filter (`kns=SUBSTRING`, `regex=EXPR` on the mangled name; `regex=`,
    /// not `regex:`). Caveat: what unchecked kernels write is not tracked,
    /// so initcheck reports reads of it as uninitialised; and do not use it
    /// to leave out library kernels (on a ResNet step without cuDNN,
    /// racecheck crashed and initcheck flooded with false reports).
    #[arg(
        hide_short_help = true,
        help_heading = "Stages",
        long,
        value_name = "FILTER",
        env = "CUDAWATCH_SANITIZER_KERNEL"
    )]
    pub sanitizer_kernel: Option<String>,
    /// memcheck's leak check: `auto` checks native programs but not Python,
    /// whose teardown crashes under `--leak-check full` (the memory check
    /// would be lost with it); `full` forces it, `off` never.
    #[arg(hide_short_help = true, help_heading = "Stages", long, value_enum, default_value_t = LeakCheckArg::Auto, env = "CUDAWATCH_LEAK_CHECK")]
    pub leak_check: LeakCheckArg,
    /// What a sanitizer stage does after a kernel faults: `kernel` stops
    /// that kernel only and goes on checking (compute-sanitizer's
    /// `--destroy-on-device-error kernel`), so independent bugs are all
    /// found in one run; `context` is the tool's default: the first device
    /// error ends the checking, and every later CUDA call fails.
    #[arg(hide_short_help = true, help_heading = "Stages", long, value_enum, default_value_t = RecoveryArg::Kernel, env = "CUDAWATCH_SANITIZER_RECOVERY")]
    pub sanitizer_recovery: RecoveryArg,
    /// Which blocks of each launch racecheck analyses: `all` (the
    /// default), or `first`: block (or cluster) 0 only, through
    /// compute-sanitizer's `--racecheck-filter-cluster-id 0`, which needs
    /// compute-sanitizer 2026.3 or newer. Every launch stays checked; a race
    /// that shows only in other blocks (a tail tile, a data-dependent one)
    /// is not seen, and the stage says so. Measured on ResNet-18's step on
    /// an H100 with 2026.4: racecheck 29 s against 64 s (49 s with 2025.3.1),
    /// and a race present in every block still found.
    #[arg(hide_short_help = true, help_heading = "Stages", long, value_enum, default_value_t = RacecheckBlocksArg::All, env = "CUDAWATCH_RACECHECK_BLOCKS")]
    pub racecheck_blocks: RacecheckBlocksArg,
    /// Host call stacks in the sanitizers' records: `auto` keeps them
    /// except in initcheck, which writes one record per thread and spends
    /// most of its time unwinding their host stacks (ResNet-18's step: 191 s
    /// with them, 26 s without; its records keep their device frames,
    /// kernel and source line). A Python program's initcheck keeps no stack
    /// at all: its reads are nearly all in library and framework kernels,
    /// whose floods made it run twice (the tool then keeps each launch's
    /// first 256 records). When a read outside NVIDIA's libraries then has
    /// no launching line (ATen's kernel under `buf.sum()`), initcheck runs
    /// once more with host stacks for its first 2000 records, unless the
    /// tool dropped records (a flood), and the site takes its line from
    /// there. `all` keeps them in every stage.
    #[arg(hide_short_help = true, help_heading = "Stages", long, value_enum, default_value_t = HostStacksArg::Auto, env = "CUDAWATCH_HOST_STACKS")]
    pub host_stacks: HostStacksArg,
    /// Records a memcheck, initcheck or synccheck stage may print before it
    /// is stopped as a flood and run again without call stacks
    /// (`--show-backtrace no`): the tool then keeps each launch's first 256
    /// records and counts the rest, so the stage ends in about a program
    /// run (ViT-tiny's initcheck: 33 million reads of what Hopper's GEMMs
    /// wrote, past 4 minutes with stacks, 46 s without) with every launch
    /// that erred and the tool's total, its site counts lower bounds. At
    /// 5,000 rather than 50,000 the restart comes seconds into a flood, not
    /// a minute (ViT-tiny's full check on an H100: 88 s against 103 s). 0:
    /// never.
    #[arg(
        hide_short_help = true,
        help_heading = "Stages",
        long,
        default_value_t = 5_000,
        value_name = "RECORDS",
        env = "CUDAWATCH_FLOOD_RECORDS"
    )]
    pub flood_records: u64,
    /// Seconds a memcheck stage under kernel-level recovery may print only
    /// records it printed before (the same error, again and again) before
    /// it is taken for a loop: the tool ends each faulting kernel and the
    /// program, never told, may go on until the stage's limit (a solver
    /// iterating until its faulting kernel converges). The stage is then
    /// stopped, its records kept, and run again with the tool's default,
    /// where the first error ends the checking. 0: never.
    #[arg(
        hide_short_help = true,
        help_heading = "Stages",
        long,
        default_value_t = 10,
        value_name = "SECONDS",
        env = "CUDAWATCH_LOOP_SECONDS"
    )]
    pub loop_seconds: u64,
    /// End a Python program after its first N optimizer steps, in every
    /// stage [default: the plain run whole, each tool stage its first steps].
    ///
    /// Steps are `torch.optim` steps, counted in every stage, the plain run
    /// too. Without it, the plain run runs the whole program and each tool
    /// stage its first steps (racecheck and ncu 1, memcheck, initcheck, synccheck and csan
    /// 2, memory 16): a training loop's later steps launch the kernels its
    /// first ones did. A program that builds no optimizer (inference,
    /// evaluation, generation) counts model calls (a `torch.nn.Module`
    /// called outside any other); one with neither runs to its end. The
    /// memory stage needs 7 steps to judge growth.
    #[arg(
        help_heading = "Stages",
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..),
        env = "CUDAWATCH_STEPS",
        conflicts_with = "whole_program"
    )]
    pub steps: Option<u32>,
    /// Run the whole program in every stage, every step of a training
    /// script under every tool.
    ///
    /// By default the tool stages check its first steps (`--steps`): a bug that shows only at a later step is then seen by the
    /// tools too, at their cost per step (racecheck: minutes a step of a
    /// convolutional model).
    #[arg(help_heading = "Stages", long, env = "CUDAWATCH_WHOLE_PROGRAM")]
    pub whole_program: bool,
    /// compute-sanitizer executable.
    #[arg(help_heading = "Tools", long, env = "CUDAWATCH_COMPUTE_SANITIZER")]
    pub compute_sanitizer: Option<PathBuf>,
    /// A compute-sanitizer for the racecheck stage alone. 2026.4 or newer
    /// leaves library kernels (cuDNN, cuBLAS) and PyTorch's (ATen) out of
    /// racecheck, whose races in them never gate: seconds a training step
    /// instead of minutes.
    /// 2025.3.1 crashes the program when they are left out, so it analyses
    /// them. By default, where the toolkit's is older, racecheck,
    /// synccheck (whose cuDNN flood it ends the same way) and initcheck
    /// (which leaves the libraries' kernels out, tracking what they write)
    /// take the one pip installed in the program's Python (nvidia-cuda-sanitizer-api,
    /// site-packages/nvidia/cu13/compute-sanitizer/), unless
    /// --compute-sanitizer names one; this flag names racecheck's alone.
    #[arg(
        hide_short_help = true,
        help_heading = "Tools",
        long,
        env = "CUDAWATCH_RACECHECK_SANITIZER"
    )]
    pub racecheck_sanitizer: Option<PathBuf>,
    /// ncu executable.
    #[arg(help_heading = "Tools", long, env = "CUDAWATCH_NCU")]
    pub ncu: Option<PathBuf>,
    /// The program and its arguments, after `--`: everything before `--` is
    /// cudawatch's, so a mistyped flag is an error, not a program.
    #[arg(required = true, last = true, value_name = "PROGRAM")]
    pub program: Vec<OsString>,
}

/// Where the report goes, shared by `run`, `parse` and `report`.
#[derive(Debug, clap::Args)]
pub struct OutputArgs {
    #[command(flatten)]
    pub export: ExportArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    /// A cudawatch JSON report of an earlier run: findings it already had
    /// (same site id) are shown but do not fail the gate.
    #[arg(
        help_heading = "Gate",
        long,
        value_name = "REPORT.json",
        env = "CUDAWATCH_BASELINE"
    )]
    pub baseline: Option<PathBuf>,
    /// Source snippets are read only from regular files under this
    /// directory, named by the tools' output, and reports name the files
    /// under it from it [default: the folder of cudawatch.toml, else the
    /// working directory]; never from /proc, /sys or /dev. A saved JSON
    /// report is rendered with the snippets it carries.
    #[arg(
        hide_short_help = true,
        help_heading = "Output",
        long,
        value_name = "DIR",
        env = "CUDAWATCH_SOURCE_ROOT"
    )]
    pub source_root: Option<PathBuf>,
}

/// The formats a report is written in, shared by every command that
/// writes one.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// `table`: the human report (on stderr during `run` and `sweep`, on
    /// stdout from `report`, `parse`, `merge`); `json`: the JSON report on
    /// stdout, the human report then on stderr (the same as
    /// `--report json=-`).
    #[arg(help_heading = "Output", long, value_enum, default_value_t = Format::Table, env = "CUDAWATCH_FORMAT")]
    pub format: Format,
    /// Also write the report as FORMAT (json, sarif, junit, markdown, html) to
    /// PATH, or to stdout when PATH is `-` or missing; repeatable, at most
    /// one to stdout. Markdown is appended to $GITHUB_STEP_SUMMARY too when
    /// that is set.
    ///
    /// Example: --report sarif=cudawatch.sarif --report junit=junit.xml
    #[arg(
        help_heading = "Output",
        long = "report",
        value_name = "FORMAT[=PATH]",
        value_delimiter = ',',
        env = "CUDAWATCH_REPORT"
    )]
    pub reports: Vec<String>,
}

/// How findings are judged: the gate and the checklist's thresholds,
/// shared by `run`, `parse`, `report`, `sweep` and `merge`.
#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// The least severe finding that fails the run (exit 1): uncoalesced
    /// access is a warning, memory errors are errors. With `warning` or
    /// `note`, ncu profiles PyTorch's own kernels and the libraries' too (an
    /// uncoalesced ATen or cuDNN launch from the user's line can then gate).
    #[arg(help_heading = "Gate", long, value_enum, default_value_t = FailOnArg::Error, env = "CUDAWATCH_FAIL_ON")]
    pub fail_on: FailOnArg,
    /// Which findings fail the gate: `user` counts the user's code, failures
    /// (faults, asserts, failed calls) wherever they happen, and hazards in
    /// framework or library kernels the user's own line launched (but a race
    /// or barrier error in their shared memory, their own code's);
    /// racecheck, initcheck and coalescing findings inside cuDNN, cuBLAS,
    /// CUTLASS or ATen are reported, not gating. `all` counts every finding,
    /// and racecheck, synccheck, initcheck and ncu then check the library
    /// and PyTorch kernels they leave out by default.
    #[arg(hide_short_help = true, help_heading = "Gate", long, value_enum, default_value_t = GateScopeArg::User, env = "CUDAWATCH_GATE_SCOPE")]
    pub gate_scope: GateScopeArg,
    /// racecheck calls races between lanes of one warp (shared memory
    /// without `__syncwarp`) warnings; on sm_70 and later the lanes do not
    /// run in lockstep, so in the user's kernels they are real races and
    /// gate as errors. `report` keeps racecheck's level, for code that
    /// targets older GPUs only.
    #[arg(hide_short_help = true, help_heading = "Gate", long, value_enum, default_value_t = RacecheckWarningsArg::Gate, env = "CUDAWATCH_RACECHECK_WARNINGS")]
    pub racecheck_warnings: RacecheckWarningsArg,
    /// Fail the gate when the oom-recovery stage shows the program does not
    /// recover from running out of memory. Off by default: the stage runs
    /// the program on less memory than it needs, on purpose, and many
    /// correct programs are not meant to adapt; ask for it where recovery
    /// is a requirement (a service that must survive a smaller GPU).
    #[arg(hide_short_help = true, help_heading = "Gate", long, env = "CUDAWATCH_GATE_OOM_RECOVERY",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub gate_oom_recovery: bool,
    /// A TOML file of suppression rules: matching findings stay visible as
    /// suppressed and do not fail the gate; expired rules stop hiding.
    #[arg(
        help_heading = "Gate",
        long,
        value_name = "FILE",
        env = "CUDAWATCH_SUPPRESSIONS"
    )]
    pub suppressions: Option<PathBuf>,
    /// Checklist: the most a kernel may waste of its global sectors, in percent.
    #[arg(
        hide_short_help = true,
        help_heading = "Checklist thresholds",
        long,
        default_value_t = 50.0,
        value_parser = percent,
        value_name = "PCT",
        env = "CUDAWATCH_MAX_WASTED_SECTORS"
    )]
    pub max_wasted_sectors: f64,
    /// Checklist: the most a single source line may waste of the sectors
    /// its accesses move, in percent [default: not checked].
    #[arg(hide_short_help = true, help_heading = "Checklist thresholds", long, value_name = "PCT", value_parser = percent, env = "CUDAWATCH_MAX_LINE_WASTED_SECTORS")]
    pub max_line_wasted_sectors: Option<f64>,
    /// Checklist: the most sectors per request a kernel's loads or stores
    /// may need beyond the ideal for its access width (4 for 4-byte
    /// accesses) [default: not checked].
    #[arg(
        hide_short_help = true,
        help_heading = "Checklist thresholds",
        long,
        value_name = "SECTORS",
        value_parser = non_negative,
        env = "CUDAWATCH_MAX_EXCESS_SECTORS_PER_REQUEST"
    )]
    pub max_excess_sectors_per_request: Option<f64>,
    /// Checklist: the least free GPU memory at the plain run's peak, in percent.
    #[arg(
        hide_short_help = true,
        help_heading = "Checklist thresholds",
        long,
        default_value_t = 10.0,
        value_parser = percent,
        value_name = "PCT",
        env = "CUDAWATCH_MIN_MEMORY_HEADROOM"
    )]
    pub min_memory_headroom: f64,
}

/// `cudawatch sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// The sweep file (TOML).
    pub file: PathBuf,
    /// The sweep directory: one run directory per target, the merged
    /// report; run again on it to resume.
    #[arg(long = "out-dir", value_name = "DIR", env = "CUDAWATCH_SWEEP_DIR")]
    pub sweep_dir: PathBuf,
    /// Run only shard I of N (from 0) [default: from SLURM_ARRAY_TASK_ID
    /// and SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX with --shards].
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// How many shards, with Kubernetes' JOB_COMPLETION_INDEX (an Indexed
    /// Job does not export its completions).
    #[arg(long, value_name = "N", env = "CUDAWATCH_SHARDS")]
    pub shards: Option<u32>,
    /// GPUs to spread targets over, one target per GPU at a time
    /// (`0,1,3`), or `all` [default: all: CUDA_VISIBLE_DEVICES, else every
    /// GPU nvidia-smi lists; without a GPU, one target at a time].
    #[arg(
        long,
        value_name = "LIST",
        default_value = "all",
        env = "CUDAWATCH_GPUS"
    )]
    pub gpus: String,
    /// Wall time of the whole sweep (`3600`, `90m`, `8h`): a target still
    /// running then is stopped, keeps its partial findings and is marked
    /// incomplete; targets not started are left for a resume.
    #[arg(long, value_name = "DURATION", value_parser = budget, env = "CUDAWATCH_BUDGET")]
    pub budget: Option<f64>,
    /// Seconds a stopped target's `cudawatch run` gets to stop its stage
    /// and write its report before SIGKILL.
    #[arg(hide_short_help = true, long, value_name = "DURATION", default_value_t = 30.0, value_parser = duration, env = "CUDAWATCH_SWEEP_GRACE")]
    pub grace: f64,
    /// A history file (JSON lines): the trend, shards balanced by the last
    /// night's durations; a line is appended for this sweep (unsharded; a
    /// sharded sweep's line comes from `merge`).
    #[arg(long, value_name = "FILE.jsonl", env = "CUDAWATCH_HISTORY")]
    pub history: Option<PathBuf>,
    #[command(flatten)]
    pub gate: SweepGateArgs,
}

/// `cudawatch doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Skip the probes (compute-sanitizer and ncu on a tiny program) and
    /// PyTorch's import: seconds instead of a minute.
    #[arg(long)]
    pub quick: bool,
    /// The Python whose PyTorch to check [default: python3 on PATH].
    #[arg(long, value_name = "PYTHON")]
    pub python: Option<PathBuf>,
    /// `json`: the checks as JSON on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "CUDAWATCH_FORMAT")]
    pub format: Format,
    /// compute-sanitizer executable.
    #[arg(long, env = "CUDAWATCH_COMPUTE_SANITIZER")]
    pub compute_sanitizer: Option<PathBuf>,
    /// ncu executable.
    #[arg(long, env = "CUDAWATCH_NCU")]
    pub ncu: Option<PathBuf>,
}

/// `cudawatch explain`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// A code (700, 0x2bc), a name (cudaErrorIllegalAddress), a finding
    /// kind (invalid_access) or a message; nothing or `-` reads stdin.
    #[arg(value_name = "CODE|NAME|MESSAGE")]
    pub query: Vec<String>,
    /// Print every code of every table and every finding kind, as Markdown
    /// (docs/errors.md).
    #[arg(long, conflicts_with = "query")]
    pub all: bool,
    /// `json`: the answer as JSON on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "CUDAWATCH_FORMAT")]
    pub format: Format,
}

/// `cudawatch merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Sweep directories written by the shards of one sweep.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// A history file: the trend, and a line appended for this sweep.
    #[arg(long, value_name = "FILE.jsonl", env = "CUDAWATCH_HISTORY")]
    pub history: Option<PathBuf>,
    #[command(flatten)]
    pub gate: SweepGateArgs,
}

/// How a sweep is judged and where its merged report goes.
#[derive(Debug, clap::Args)]
pub struct SweepGateArgs {
    #[command(flatten)]
    pub export: ExportArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    /// An earlier sweep to compare with: its directory, its merged JSON
    /// report, or a history file (its last line). Marks targets and sites
    /// new, fixed, still failing or flaky; the gate is not changed by it.
    #[arg(
        help_heading = "Gate",
        long = "baseline",
        value_name = "DIR|REPORT.json|FILE.jsonl",
        env = "CUDAWATCH_SWEEP_BASELINE"
    )]
    pub sweep_baseline: Option<PathBuf>,
}

/// `--fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// Errors fail.
    Error,
    /// Warnings and errors fail.
    Warning,
    /// Every finding fails.
    Note,
    /// Findings never fail (inconclusive stages still do).
    Never,
}

/// `--racecheck-warnings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RacecheckWarningsArg {
    /// Races in the user's kernels gate whatever racecheck's level.
    Gate,
    /// racecheck's warnings stay warnings.
    Report,
}

/// `--gate-scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GateScopeArg {
    /// What the user can act on.
    User,
    /// Every finding.
    All,
}

/// `--leak-check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LeakCheckArg {
    /// Native programs only.
    Auto,
    /// Always.
    Full,
    /// Never.
    Off,
}

/// `--host-stacks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HostStacksArg {
    /// In every sanitizer stage but initcheck (device frames only, none
    /// in a Python program; it runs again with them when a read outside
    /// NVIDIA's libraries has no launching line).
    Auto,
    /// In every sanitizer stage.
    All,
}

/// `--sanitizer-recovery`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RecoveryArg {
    /// Stop only the faulting kernel and go on checking.
    Kernel,
    /// Stop checking at the first device error (the tool's default).
    Context,
}

/// `--racecheck-blocks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RacecheckBlocksArg {
    /// Every block of every launch.
    All,
    /// Block (or cluster) 0 of every launch (compute-sanitizer 2026.3+).
    First,
}

/// `--stages`' values: the model's list of stage kinds (`Tool::STAGES`),
/// each with its one-line summary, so a new kind appears here by itself.
fn stage_parser() -> impl clap::builder::TypedValueParser<Value = Tool> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        Tool::STAGES.map(|tool| PossibleValue::new(tool.name()).help(tool.summary())),
    )
    .try_map(|name| {
        Tool::from_name(&name).ok_or_else(|| format!("`{name}` is not a stage of cudawatch run"))
    })
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The human report: tables and text.
    Table,
    /// The JSON report on stdout.
    Json,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Colour when stderr is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// The longest time limit accepted: a year. Larger values cannot be
/// represented as deadlines, and no stage should wait that long.
const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// A number of seconds: finite, not negative, at most a year. Checked where
/// the value is parsed, so flags, `CUDAWATCH_*` and `cudawatch.toml` all
/// get the same one-line error instead of a panic later.
fn seconds(text: &str) -> Result<f64, String> {
    let value = non_negative(text)?;
    if value > MAX_SECONDS {
        return Err(format!("{value} seconds is more than a year"));
    }
    Ok(value)
}

/// A wall time: seconds, or a number with `s`, `m` or `h`.
fn duration(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().last() {
        Some((i, 's')) => (&t[..i], 1.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 'h')) => (&t[..i], 3600.0),
        _ => (t, 1.0),
    };
    let value = non_negative(number).map_err(|_| {
        format!(
            "`{text}` is not a duration: give seconds (600) or a number with s, m or h (90m, 8h)"
        )
    })? * unit;
    seconds(&value.to_string())
}

/// A sweep's budget: more than zero (a budget of 0 started no target and
/// reported every one as not run).
fn budget(text: &str) -> Result<f64, String> {
    let value = duration(text)?;
    if value <= 0.0 {
        return Err(format!(
            "a budget of `{text}` would start no target: give the sweep's wall time (3600, 90m, 8h), or leave --budget out"
        ));
    }
    Ok(value)
}

/// A time limit: a duration more than zero (a limit of 0 would stop the
/// stage the moment it starts).
fn time_limit(text: &str) -> Result<f64, String> {
    let value = duration(text)?;
    if value <= 0.0 {
        return Err(format!(
            "a time limit of `{text}` would stop the stage at once: give seconds (600) or a duration (10m, 2h)"
        ));
    }
    Ok(value)
}

/// A percentage from 0 to 100.
fn percent(text: &str) -> Result<f64, String> {
    let value = non_negative(text)?;
    if value > 100.0 {
        return Err(format!("{value} is not a percentage from 0 to 100"));
    }
    Ok(value)
}

/// A finite number, not negative (`nan` and `inf` would silently turn a
/// check off).
fn non_negative(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("`{text}` must be a finite number, 0 or more"));
    }
    Ok(value)
}

/// A share strictly between 0 and 1 (`0.6`).
fn share(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err("a share between 0 and 1, such as 0.6".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_that_would_disable_a_check_or_overflow_a_deadline_are_refused() {
        for bad in ["nan", "inf", "-1", "1e308", "x"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(seconds("2.5"), Ok(2.5));
        assert!(percent("101").is_err() && percent("NaN").is_err());
        assert_eq!(percent("90"), Ok(90.0));
        assert_eq!(duration("90m"), Ok(5400.0));
        assert_eq!(duration("8h"), Ok(28800.0));
        assert_eq!(duration("30"), Ok(30.0));
        assert!(duration("8d").is_err() && duration("-1h").is_err() && duration("infh").is_err());
        assert!(non_negative("-inf").is_err());
    }
}
