//! Ctrl-C and SIGTERM, as a stream the supervisor selects on. The child
//! runs in its own process group, so the terminal's Ctrl-C reaches only
//! cudawatch; cudawatch decides what the child gets.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Every SIGINT and SIGTERM since [`Signals::install`], counted by a plain
/// handler beside tokio's: it works while no async code is polling.
static RECEIVED: AtomicU32 = AtomicU32::new(0);
/// Set while cudawatch is busy outside the async loop ([`Blocking`]).
static BLOCKING: AtomicBool = AtomicBool::new(false);
static HANDLER: Once = Once::new();

/// What the user asked for, by how many signals arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shutdown {
    /// Keep going.
    None,
    /// First signal: forward it, stop after this stage, still write the report.
    AfterStage,
    /// Second signal: kill the stage now.
    Now,
}

/// The signal streams and how many have arrived.
pub struct Signals {
    interrupt: Option<Signal>,
    terminate: Option<Signal>,
}

impl Signals {
    /// Installs handlers for SIGINT and SIGTERM (SIGTERM is what Slurm and
    /// CI runners send at their time limit). Without a handler, signals are
    /// simply not watched.
    pub fn install() -> Signals {
        HANDLER.call_once(|| {
            for sig in [
                rustix::process::Signal::INT.as_raw(),
                rustix::process::Signal::TERM.as_raw(),
            ] {
                // SAFETY: the action only touches atomics and calls _exit,
                // both async-signal-safe.
                let _ = unsafe {
                    signal_hook::low_level::register(sig, || {
                        let n = RECEIVED.fetch_add(1, Ordering::SeqCst) + 1;
                        // A second signal while busy: the user means now.
                        if n >= 2 && BLOCKING.load(Ordering::SeqCst) {
                            signal_hook::low_level::exit(130);
                        }
                    })
                };
            }
        });
        Signals {
            interrupt: signal(SignalKind::interrupt()).ok(),
            terminate: signal(SignalKind::terminate()).ok(),
        }
    }

    /// No signal watched: for a short command whose caller decides what a
    /// signal means (`bounded`).
    pub fn unwatched() -> Signals {
        Signals {
            interrupt: None,
            terminate: None,
        }
    }

    /// Waits for the next SIGINT or SIGTERM and returns the signal number.
    pub async fn recv(&mut self) -> i32 {
        let interrupt = async {
            match self.interrupt.as_mut() {
                Some(s) => s.recv().await,
                None => std::future::pending().await,
            }
        };
        let terminate = async {
            match self.terminate.as_mut() {
                Some(s) => s.recv().await,
                None => std::future::pending().await,
            }
        };
        let number = tokio::select! {
            _ = interrupt => rustix::process::Signal::INT.as_raw(),
            _ = terminate => rustix::process::Signal::TERM.as_raw(),
        };
        number
    }

    /// Where the signals so far leave the run: counted by the plain handler,
    /// so a signal that came while nothing was polling (during assembly,
    /// between stages) counts at once.
    pub fn shutdown(&self) -> Shutdown {
        match RECEIVED.load(Ordering::SeqCst) {
            0 => Shutdown::None,
            1 => Shutdown::AfterStage,
            _ => Shutdown::Now,
        }
    }
}

/// Marks cudawatch busy outside the async loop (assembling a report,
/// rendering): a second signal then ends the process at once with 130
/// instead of waiting for the work to finish. The first signal is left to
/// the stage loop, which stops before the next stage.
pub struct Blocking(());

impl Blocking {
    /// Enters a busy section until the guard is dropped.
    pub fn enter() -> Blocking {
        // Signals that came before are the stage loop's to act on (a stage
        // killed by a second Ctrl-C still gets its record written).
        BLOCKING.store(true, Ordering::SeqCst);
        Blocking(())
    }
}

impl Drop for Blocking {
    fn drop(&mut self) {
        BLOCKING.store(false, Ordering::SeqCst);
    }
}
