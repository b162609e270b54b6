//! JAX's XLA under the tools: the settings every stage of a Python program
//! gets so that a JAX program can be checked at all. Programs that never
//! load XLA ignore them (PyTorch and CuPy read none of these variables).
//!
//! Seen on the H100 (compute-sanitizer and ncu 2025.3.1, jax 0.11.2,
//! 2026-11-25; `sample-reports/beyond/jax_step`, `docs/tool-surprises.md`):
//! - memcheck died of SIGSEGV 5 to 8 s into a small JAX training step in
//!   all 5 runs with XLA's GEMM autotuner on (with or without
//!   preallocation, with XLA's platform allocator); with it off
//!   (`--xla_gpu_autotune_level=0`) 3 of 18 sanitizer runs died so, at
//!   random points, and under load far more: 9 of 18 memcheck runs six at
//!   a time (`benches/jax-sanitizer-crashes.sh`), against 0 of 18 with XLA
//!   compiling on one thread (`--xla_gpu_force_compilation_parallelism=1`).
//!   A program with nothing to compile in parallel (one Pallas kernel)
//!   never crashed. A stage whose tool still dies so runs once more
//!   (`starved::tool_crashed`);
//! - ncu profiled 1,867 launches of that step in 118 s, nearly all of them
//!   the autotuner's candidates, against 31 with it off; with XLA's command
//!   buffers (CUDA graphs) on it died of SIGSEGV in one of three runs;
//! - XLA preallocates 75% of the GPU at start: the plain run's measured
//!   peak (what the stages' concurrency, ncu's replay mode and the headroom
//!   check read) is then XLA's reservation, not the program's need, and
//!   initcheck tracks all of it (77 s against 4.4 s without, on the Pallas
//!   program);
//! - XLA's BFC allocator hands out pieces of large regions, as PyTorch's
//!   caching allocator does, so memcheck sees no bound between its buffers
//!   (`tools::sanitizer::allocator` says what that hides).

use cudawatch_model::Tool;

use super::StageCommand;

/// XLA's flags variable.
pub const FLAGS: &str = "XLA_FLAGS";
/// XLA's GEMM autotuner off: compute-sanitizer crashed in it, and its
/// candidates are not the program's kernels.
pub const AUTOTUNE_OFF: &str = "--xla_gpu_autotune_level=0";
/// XLA's compilation on one thread under the sanitizers: with several,
/// compute-sanitizer died of SIGSEGV in half the runs under load.
pub const COMPILE_ON_ONE_THREAD: &str = "--xla_gpu_force_compilation_parallelism=1";
/// XLA's command buffers (CUDA graphs) off under ncu, which once crashed
/// with them.
pub const COMMAND_BUFFERS_OFF: &str = "--xla_gpu_enable_command_buffer=";
/// Preallocation of 75% of the GPU at start.
pub const PREALLOCATE: &str = "XLA_PYTHON_CLIENT_PREALLOCATE";
/// The allocator: `platform` allocates each buffer on its own.
pub const ALLOCATOR: &str = "XLA_PYTHON_CLIENT_ALLOCATOR";

/// What the user's environment says of XLA, read once by the plan.
#[derive(Debug, Clone, Default)]
pub struct UserXla {
    /// The user's `XLA_FLAGS`, kept before ours.
    pub flags: Option<String>,
    /// Whether the user chose preallocation themselves.
    pub preallocate_set: bool,
}

impl UserXla {
    /// From the process environment.
    pub fn from_env() -> UserXla {
        UserXla {
            flags: std::env::var(FLAGS).ok().filter(|f| !f.trim().is_empty()),
            preallocate_set: std::env::var_os(PREALLOCATE).is_some(),
        }
    }
}

/// XLA's settings for a stage of a Python program: no preallocation in
/// every stage (the plain run's only where the user did not choose it: its
/// peak is then what the program really holds); in the sanitizer stages
/// the autotuner off, compilation on one thread and, unless the pools are
/// kept, each buffer its own allocation; in ncu's the autotuner and the
/// command buffers off.
pub fn settle(command: &mut StageCommand, tool: Tool, user: &UserXla, keep_pools: bool) {
    let sanitizer = Tool::SANITIZERS.contains(&tool);
    if tool != Tool::Plain || !user.preallocate_set {
        command.env.push((PREALLOCATE.into(), "false".into()));
    }
    let ours: &[&str] = if sanitizer {
        &[AUTOTUNE_OFF, COMPILE_ON_ONE_THREAD]
    } else if tool == Tool::Ncu {
        &[AUTOTUNE_OFF, COMMAND_BUFFERS_OFF]
    } else {
        &[]
    };
    if !ours.is_empty() {
        // XLA reads its flags in order, the last of a name winning: ours
        // after the user's.
        let flags = user
            .flags
            .iter()
            .map(String::as_str)
            .chain(ours.iter().copied())
            .collect::<Vec<_>>()
            .join(" ");
        command.env.push((FLAGS.into(), flags));
    }
    if sanitizer && !keep_pools {
        command.env.push((ALLOCATOR.into(), "platform".into()));
    }
}

/// Whether a stage ran with XLA's autotuner off (from its recorded
/// `KEY=VALUE` environment).
pub fn autotune_was_off(env: &[String]) -> bool {
    super::env_value(env, FLAGS)
        .is_some_and(|flags| flags.split_whitespace().any(|f| f == AUTOTUNE_OFF))
}

/// `" (it imported JAX)"` where the hook saw JAX instead of torch: the
/// PyTorch-only stages say why they had nothing to watch.
pub fn imported_instead(hook: &cudawatch_parsers::memory::HookFacts) -> &'static str {
    if hook.jax_imported {
        " (it imported JAX)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(tool: Tool, user: &UserXla, keep: bool) -> Vec<(String, String)> {
        let mut command = StageCommand::default();
        settle(&mut command, tool, user, keep);
        command.env
    }

    fn get<'a>(env: &'a [(String, String)], key: &str) -> Option<&'a str> {
        env.iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn sanitizers_run_xla_without_its_autotuner_preallocation_or_pool() {
        let env = env_of(Tool::Racecheck, &UserXla::default(), false);
        assert_eq!(
            get(&env, FLAGS),
            Some("--xla_gpu_autotune_level=0 --xla_gpu_force_compilation_parallelism=1")
        );
        assert_eq!(get(&env, PREALLOCATE), Some("false"));
        assert_eq!(get(&env, ALLOCATOR), Some("platform"));
        let kept = env_of(Tool::Memcheck, &UserXla::default(), true);
        assert_eq!(get(&kept, ALLOCATOR), None);
    }

    #[test]
    fn ncu_also_turns_command_buffers_off_and_the_users_flags_come_first() {
        let user = UserXla {
            flags: Some("--xla_dump_to=/tmp/d".into()),
            preallocate_set: false,
        };
        let env = env_of(Tool::Ncu, &user, false);
        assert_eq!(
            get(&env, FLAGS),
            Some(
                "--xla_dump_to=/tmp/d --xla_gpu_autotune_level=0 --xla_gpu_enable_command_buffer="
            )
        );
        assert_eq!(get(&env, ALLOCATOR), None);
    }

    #[test]
    fn the_plain_run_keeps_the_users_kernels_and_their_preallocation_choice() {
        let env = env_of(Tool::Plain, &UserXla::default(), false);
        assert_eq!(get(&env, FLAGS), None);
        assert_eq!(get(&env, PREALLOCATE), Some("false"));
        let chosen = UserXla {
            flags: None,
            preallocate_set: true,
        };
        assert_eq!(get(&env_of(Tool::Plain, &chosen, false), PREALLOCATE), None);
    }

    #[test]
    fn a_stage_record_says_whether_the_autotuner_was_off() {
        assert!(autotune_was_off(&[
            "XLA_FLAGS=--xla_dump_to=/x --xla_gpu_autotune_level=0".into()
        ]));
        assert!(!autotune_was_off(&["XLA_FLAGS=--xla_dump_to=/x".into()]));
        assert!(!autotune_was_off(&[
            "XLA_FLAGS_X=--xla_gpu_autotune_level=0".into()
        ]));
    }
}
