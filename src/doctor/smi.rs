//! What `nvidia-smi` says, parsed: the driver and the CUDA version it
//! supports (its table's header), each GPU (a CSV query), and the
//! processes holding GPU memory. Pure; tested on captures from the GPU
//! machines (`sample-reports/doctor/`).

/// One GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    /// Its index.
    pub index: String,
    /// Its name.
    pub name: String,
    /// Compute capability, `(9, 0)`.
    pub capability: Option<(u32, u32)>,
    /// MiB in use and in all.
    pub memory: Option<(u64, u64)>,
    /// MIG mode, as nvidia-smi says it (`Disabled`, `Enabled`, `[N/A]`).
    pub mig: String,
    /// Persistence mode (`Enabled`, `Disabled`).
    pub persistence: String,
    /// Its UUID, to match processes to it.
    pub uuid: Option<String>,
}

/// A process holding GPU memory.
#[derive(Debug, Clone, PartialEq)]
pub struct App {
    /// The GPU's UUID.
    pub gpu_uuid: String,
    /// Its process id, as the driver sees it.
    pub pid: u32,
    /// Its name.
    pub name: String,
    /// MiB it holds.
    pub mib: Option<u64>,
}

/// The query doctor makes for the GPUs.
pub const GPU_QUERY: &str = "--query-gpu=index,name,compute_cap,memory.used,memory.total,mig.mode.current,persistence_mode,driver_version";
/// The query for the processes holding memory.
pub const APPS_QUERY: &str = "--query-compute-apps=gpu_uuid,pid,process_name,used_memory";
/// The query that maps UUIDs to indexes.
pub const UUID_QUERY: &str = "--query-gpu=index,uuid";

/// `Driver Version: 580.159.04     CUDA Version: 13.0` from the table's header.
pub fn header(table: &str) -> (Option<String>, Option<(u32, u32)>) {
    let after = |key: &str| {
        table.find(key).map(|i| {
            table[i + key.len()..]
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string()
        })
    };
    let driver = after("Driver Version:").filter(|d| !d.is_empty());
    let cuda = after("CUDA Version:").and_then(|v| super::versions::major_minor(&v));
    (driver, cuda)
}

/// The GPUs of the `GPU_QUERY` CSV (no header, no units), with UUIDs
/// from the `UUID_QUERY` CSV.
pub fn gpus(csv: &str, uuids: &str) -> Vec<Gpu> {
    let uuid_of: Vec<(String, String)> = uuids
        .lines()
        .filter_map(|l| l.split_once(','))
        .map(|(i, u)| (i.trim().to_string(), u.trim().to_string()))
        .collect();
    csv.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if f.len() < 7 {
                return None;
            }
            let mib = |s: &str| s.trim_end_matches("MiB").trim().parse::<u64>().ok();
            Some(Gpu {
                index: f[0].to_string(),
                name: f[1].to_string(),
                capability: super::versions::major_minor(f[2]),
                memory: mib(f[3]).zip(mib(f[4])),
                mig: f[5].to_string(),
                persistence: f[6].to_string(),
                uuid: uuid_of
                    .iter()
                    .find(|(i, _)| i == f[0])
                    .map(|(_, u)| u.clone()),
            })
        })
        .collect()
}

/// The processes of the `APPS_QUERY` CSV.
pub fn apps(csv: &str) -> Vec<App> {
    csv.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if f.len() < 4 {
                return None;
            }
            Some(App {
                gpu_uuid: f[0].to_string(),
                pid: f[1].parse().ok()?,
                name: f[2].to_string(),
                mib: f[3].trim_end_matches("MiB").trim().parse().ok(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sections of a capture made by scripts/capture-doctor-inputs.sh.
    pub fn section<'a>(capture: &'a str, command: &str) -> &'a str {
        let start = capture.find(&format!("=== {command}\n")).expect(command) + command.len() + 5;
        let end = capture[start..]
            .find("=== exit")
            .map_or(capture.len(), |e| start + e);
        &capture[start..end]
    }

    #[test]
    fn the_h200_capture_gives_two_gpus_their_capability_and_the_driver() {
        let capture = include_str!("../../sample-reports/doctor/h200x2.txt");
        let (driver, cuda) = header(section(capture, "nvidia-smi"));
        assert_eq!(driver.as_deref(), Some("580.159.04"));
        assert_eq!(cuda, Some((13, 0)));
        let gpus = gpus(
            section(
                capture,
                &format!("nvidia-smi {GPU_QUERY} --format=csv,noheader"),
            ),
            section(
                capture,
                &format!("nvidia-smi {UUID_QUERY} --format=csv,noheader"),
            ),
        );
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[1].name, "NVIDIA H200");
        assert_eq!(gpus[1].capability, Some((9, 0)));
        assert_eq!(gpus[1].memory, Some((0, 143771)));
        assert_eq!(gpus[0].mig, "Disabled");
        assert!(gpus[1].uuid.as_deref().unwrap().starts_with("GPU-f9bf0893"));
        assert!(
            apps(section(
                capture,
                &format!("nvidia-smi {APPS_QUERY} --format=csv,noheader")
            ))
            .is_empty()
        );
        assert_eq!(apps("GPU-1, 4242, python3, 1024 MiB\n")[0].mib, Some(1024));
    }
}
