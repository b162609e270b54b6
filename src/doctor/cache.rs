//! The last probes' results, kept between runs: probing takes seconds to
//! minutes, so `cudawatch run` reuses what `cudawatch doctor` found, but
//! only while the driver, the GPUs and the tools are the ones it probed.

use std::path::PathBuf;

use cudawatch_model::{EnvCheck, Environment};
use serde::{Deserialize, Serialize};

use super::MachineFacts;

#[derive(Serialize, Deserialize)]
struct Cached {
    fingerprint: String,
    at: String,
    probes: Vec<EnvCheck>,
}

/// doctor's cache directory: `CUDAWATCH_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/cudawatch`, else `~/.cache/cudawatch`.
pub fn dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CUDAWATCH_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("cudawatch");
    }
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".cache/cudawatch"),
        None => std::env::temp_dir().join("cudawatch-cache"),
    }
}

/// What the probes depend on: the driver, the GPUs, each tool's path and
/// version.
fn fingerprint(facts: &MachineFacts) -> Option<String> {
    let smi = facts.smi.as_ref().ok()?;
    let tool = |t: &Result<(PathBuf, Option<String>), String>| match t {
        Ok((p, v)) => format!("{}@{}", p.display(), v.as_deref().unwrap_or("?")),
        Err(_) => "missing".into(),
    };
    let gpus: Vec<&str> = smi.gpus.iter().map(|g| g.name.as_str()).collect();
    Some(format!(
        "driver={} gpus={} sanitizer={} ncu={}",
        smi.driver.as_deref().unwrap_or("?"),
        gpus.join("+"),
        tool(&facts.sanitizer),
        tool(&facts.ncu)
    ))
}

/// Keeps the probes of `environment`. A cache that cannot be written is
/// not an error: the next run just has no probes to reuse.
pub fn store(facts: &MachineFacts, environment: &Environment) {
    let Some(fingerprint) = fingerprint(facts) else {
        return;
    };
    let cached = Cached {
        fingerprint,
        at: jiff::Timestamp::now().to_string(),
        probes: environment
            .checks
            .iter()
            .filter(|c| c.id.starts_with("probe_"))
            .cloned()
            .collect(),
    };
    let dir = dir();
    if std::fs::create_dir_all(&dir).is_ok()
        && let Ok(text) = serde_json::to_string_pretty(&cached)
    {
        let _ = crate::safe_files::write_atomic(&dir.join("doctor.json"), text.as_bytes());
    }
}

/// The cached probes and when they ran, if they were made with what
/// `facts` describes.
pub fn load(facts: &MachineFacts) -> Option<(String, Vec<EnvCheck>)> {
    let fingerprint = fingerprint(facts)?;
    let bytes = crate::safe_files::read(&dir().join("doctor.json")).ok()?;
    let cached: Cached = serde_json::from_slice(&bytes).ok()?;
    (cached.fingerprint == fingerprint && !cached.probes.is_empty())
        .then_some((cached.at, cached.probes))
}
