//! Ctrl-C and SIGTERM, as a stream the supervisor selects on. The child
//! runs in its own process group, so the terminal's Ctrl-C reaches only
//! cudawatch; cudawatch decides what the child gets.

use tokio::signal::unix::{Signal, SignalKind, signal};

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
    received: u32,
}

impl Signals {
    /// Installs handlers for SIGINT and SIGTERM (SIGTERM is what Slurm and
    /// CI runners send at their time limit). Without a handler, signals are
    /// simply not watched.
    pub fn install() -> Signals {
        Signals {
            interrupt: signal(SignalKind::interrupt()).ok(),
            terminate: signal(SignalKind::terminate()).ok(),
            received: 0,
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
        self.received += 1;
        number
    }

    /// Where the signals so far leave the run.
    pub fn shutdown(&self) -> Shutdown {
        match self.received {
            0 => Shutdown::None,
            1 => Shutdown::AfterStage,
            _ => Shutdown::Now,
        }
    }
}
