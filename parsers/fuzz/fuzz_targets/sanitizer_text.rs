//! No input may make the text reader panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cudawatch_parsers::sanitizer::text::parse(data, |_| {});
});
