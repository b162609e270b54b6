//! Pure parsers for what compute-sanitizer, Nsight Compute and a failing
//! CUDA program print, and the report model they fill.
//!
//! Bytes in, typed findings out: no processes, no terminal, no async. The
//! `cudawatch` binary runs the tools and renders; this crate only reads.
//!
//! ```
//! use cudawatch_model::Tool;
//! use cudawatch_parsers::builder::ReportBuilder;
//!
//! let text = b"========= COMPUTE-SANITIZER\n\
//! ========= Invalid __global__ write of size 4 bytes\n\
//! =========     at oob_write(int *, int)+0x80 in fx.cu:8\n\
//! =========     by thread (232,0,0) in block (3,0,0)\n\
//! =========     Access to 0x7f9e30800fa0 is out of bounds\n\
//! =========     and is 1 bytes after the nearest allocation at 0x7f9e30800000 of size 4,000 bytes\n\
//! ========= \n\
//! ========= ERROR SUMMARY: 1 error\n";
//! let mut builder = ReportBuilder::new("0.1.0");
//! let evidence = builder.sanitizer(Tool::Memcheck, None::<(&str, &[u8])>, Some(("memcheck.log", &text[..])));
//! assert_eq!(evidence.summary.errors, Some(1));
//! let report = builder.finish();
//! assert_eq!(report.findings[0].location.as_ref().unwrap().to_string(), "fx.cu:8");
//! assert_eq!(report.findings[0].samples[0].nearest_allocation.as_ref().unwrap().distance, 1);
//! ```
#![deny(missing_docs)]

mod borrowed_frames;
pub mod builder;
pub mod coredump;
pub mod csan;
pub mod detect;
pub mod error;
pub mod exceptions;
pub mod global_race;
pub mod mangled;
pub mod memory;
pub mod ncu;
pub mod program;
pub mod sanitizer;
pub mod site;
mod traceback;

// The model has a crate of its own; parsers fill it.
use cudawatch_model as model;
