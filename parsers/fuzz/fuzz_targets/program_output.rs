//! No input may make the program-output reader or the detector panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cudawatch_parsers::program::parse(data);
    let _ = cudawatch_parsers::detect::detect(data);
});
