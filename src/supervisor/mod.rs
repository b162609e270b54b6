//! The only async code: the stage loop, running one child at a time under
//! a timeout, with its output drained to files, Ctrl-C forwarded, and the
//! whole process group cleaned up; and the pool, which runs several at
//! once, one per GPU (sweeps, `--parallel-stages`). See
//! `docs/signal-handling.md`.

pub mod bounded;
pub mod child;
pub mod events;
pub mod gpu_memory;
pub mod gpus;
pub mod group;
pub mod head_start;
pub mod notices;
pub mod pool;
pub mod rendezvous;
pub mod repeats;
pub mod signals;
pub mod stage;
pub mod stage_loop;
mod stage_run;

pub use events::StageEvent;
pub use stage_loop::run_plan;
