//! The only async code: running one child at a time under a timeout, with
//! its output drained to files, Ctrl-C forwarded, and the whole process
//! group cleaned up. See `docs/signal-handling.md`.

pub mod child;
pub mod group;
pub mod signals;

pub use child::{ChildSpec, supervise};
pub use signals::Signals;
