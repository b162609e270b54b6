//! A JSON report from someone else (`cudawatch report REPORT.json`): any
//! bytes either fail to read as a report or read as one that serialises
//! and reads back. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(report) = serde_json::from_slice::<cudawatch_model::Report>(data) {
        let again = serde_json::to_vec(&report).expect("a report read back serialises");
        // What cudawatch writes, it reads back (a report is re-rendered
        // by `cudawatch report`). Byte-for-byte sameness is not promised:
        // a float may print differently once it went through a string.
        let _: cudawatch_model::Report =
            serde_json::from_slice(&again).expect("what cudawatch wrote reads back");
    }
});
