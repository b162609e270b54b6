//! The one report model: what every parser produces and every renderer reads.
//!
//! A [`Report`] is serialised as cudawatch's JSON output and read back by
//! `cudawatch report`, so its shape is a contract: fields are only added, and
//! [`SCHEMA_VERSION`] is bumped when a field's meaning changes. The JSON schema
//! is documented in `docs/report-schema.md`.

#![deny(missing_docs)]

/// Version of the JSON report's shape.
pub const SCHEMA_VERSION: u32 = 1;

/// How many thread/block samples a site keeps; the count keeps counting.
pub const MAX_SAMPLES: usize = 5;

mod coalescing;
mod diff;
mod environment;
mod finding;
mod inputs;
mod judgement;
mod memory;
mod processes;
mod report;
mod stage;
mod sweep;

pub use coalescing::*;
pub use diff::*;
pub use environment::*;
pub use finding::*;
pub use inputs::*;
pub use judgement::*;
pub use memory::*;
pub use processes::*;
pub use report::*;
pub use stage::*;
pub use sweep::*;
