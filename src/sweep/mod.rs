//! Nightly sweeps: many programs, spread over the machine's GPUs, each
//! run by `cudawatch run` into its own directory; sharded for Slurm or
//! Kubernetes, resumed after a crash, merged into one report and compared
//! night to night. See `docs/sweeps.md`.

pub mod compare;
pub mod dir;
pub mod file;
pub mod merge;
pub mod run;
pub mod shard;
mod tree;
