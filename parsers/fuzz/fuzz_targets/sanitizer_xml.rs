//! No input may make the XML reader panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut n = 0u64;
    if let Ok(read) = cudawatch_parsers::sanitizer::xml::parse(data, |_| n += 1) {
        assert_eq!(read.records, n);
    }
});
