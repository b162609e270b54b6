//! No input may make the XML reader panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    use cudawatch_parsers::sanitizer::xml;
    let mut n = 0u64;
    let whole = xml::parse(data, |_| n += 1);
    if let Ok(read) = &whole {
        assert_eq!(read.records, n);
    }
    // Tiny blocks and two threads must deliver the same records.
    let mut delivered = 0u64;
    let split = xml::parse_in_blocks(data, 64, 2, || 0u64, |count: &mut u64, _| *count += 1, |count| delivered += count);
    match (whole, split) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.records, b.records);
            assert_eq!(delivered, b.records);
            assert_eq!(a.broken.is_some(), b.broken.is_some());
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!("block split changed the outcome: {a:?} vs {b:?}"),
    }
});
