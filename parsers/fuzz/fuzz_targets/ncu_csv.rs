//! No input may make any ncu page reader panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cudawatch_parsers::ncu::raw::parse(data);
    let _ = cudawatch_parsers::ncu::details::parse(data);
    let _ = cudawatch_parsers::ncu::source::parse(data);
    let _ = cudawatch_parsers::ncu::log::parse(data);
});
