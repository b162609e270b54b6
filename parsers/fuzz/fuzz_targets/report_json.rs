//! A JSON report from someone else (`cudawatch report REPORT.json`): any
//! bytes either fail to read as a report or read as one that serialises
//! and reads back to the same report. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(report) = serde_json::from_slice::<cudawatch_model::Report>(data) {
        let again = serde_json::to_vec(&report).expect("a report read back serialises");
        let back: cudawatch_model::Report =
            serde_json::from_slice(&again).expect("what cudawatch wrote reads back");
        // f64 fields (NaN) make PartialEq unusable; compare the texts.
        assert_eq!(serde_json::to_vec(&back).unwrap(), again);
    }
});
