//! What the faster defaults of issue 23 must not lose: initcheck without
//! host call stacks (`--show-backtrace device`, 191 s → 26 s on ResNet-18's
//! step) gives the same sites, counts, owners and verdict as with them, on
//! real captures of the same programs (sample-reports/beyond/).

use serde_json::Value;

use crate::helpers::{cudawatch, json, run, sample};

fn sites(report: &Value) -> Vec<(String, u64, String)> {
    let mut sites: Vec<(String, u64, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["count"].as_u64().unwrap(),
                s["owner"]["component"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    sites.sort();
    sites
}

#[test]
fn initcheck_without_host_stacks_finds_the_same_sites_counts_and_owners() {
    let parse = |stem: &str| {
        let dir = sample("beyond/host-stacks-uninit_read");
        let out = run(cudawatch()
            .args(["parse", "--format", "json"])
            .arg(dir.join(format!("{stem}.xml")))
            .arg(dir.join(format!("{stem}.stdout"))));
        let report = json(&out);
        (out.code, sites(&report))
    };
    let (full_code, full) = parse("initcheck");
    let (device_code, device) = parse("initcheck-device");
    assert_eq!(full_code, 1, "the planted uninitialised read gates");
    assert_eq!(device_code, full_code);
    assert_eq!(device, full);
    assert_eq!(full, vec![(full[0].0.clone(), 512, "user".to_string())]);
}

#[test]
fn a_library_flood_without_host_stacks_is_still_the_librarys_and_every_record_is_counted() {
    // ResNet-18's step: 40,960 uninitialised reads in cuDNN's
    // nhwcToNchwKernel. Without host stacks the XML names the kernel
    // `nhwcToNchwKernel` only; the text log's signature (`void
    // cudnn::engines_precompiled::nhwcToNchwKernel<...>`) says whose it is.
    // Before: both sites were the user's and the run failed.
    let tmp = tempfile::tempdir().unwrap();
    let xml = tmp.path().join("initcheck.xml");
    let gz = sample("beyond/resnet_step/initcheck-device.xml.gz");
    let unpacked = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .expect("gzip");
    std::fs::write(&xml, unpacked.stdout).unwrap();
    let text = tmp.path().join("initcheck.stdout");
    std::fs::copy(
        sample("beyond/resnet_step/initcheck-text-tail.stdout"),
        &text,
    )
    .unwrap();
    let out = run(cudawatch()
        .args(["parse", "--format", "json"])
        .arg(&xml)
        .arg(&text));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out);
    let found = sites(&report);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found.iter().all(|(_, _, owner)| owner == "cuDNN"),
        "{found:?}"
    );
    let total: u64 = found.iter().map(|(_, n, _)| n).sum();
    let summary =
        std::fs::read_to_string(sample("beyond/resnet_step/initcheck-device-summary.stdout"))
            .unwrap();
    assert!(summary.contains("ERROR SUMMARY: 40960 errors"));
    assert_eq!(
        total, 40960,
        "every record counted, as the tool's own total"
    );
}
