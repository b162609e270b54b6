//! How each external tool is invoked: where it is, and the argv that asks
//! it for what cudawatch reads back. Pure: no processes are started here.

pub mod csan;
pub mod hook;
pub mod lookup;
pub mod memory;
pub mod ncu;
pub mod sanitizer;

pub use lookup::ToolPaths;
