//! Versions, parsed from what each tool prints (`nvcc --version`,
//! `compute-sanitizer --version`, PyTorch's build), and how a CUDA
//! version compares with what the driver supports. Pure.

/// `13.0` (or `13.0.88`, `sm_90`'s digits aside) as `(13, 0)`.
pub fn major_minor(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().split('.');
    let major = parts.next()?.trim().parse().ok()?;
    let minor = parts
        .next()
        .and_then(|m| m.trim().parse().ok())
        .unwrap_or(0);
    Some((major, minor))
}

/// nvcc's `Cuda compilation tools, release 13.0, V13.0.88`.
pub fn nvcc_release(output: &str) -> Option<(u32, u32)> {
    let i = output.find("release ")?;
    major_minor(output[i + 8..].split(',').next()?)
}

/// compute-sanitizer's and ncu's `Version 2025.3.1.0 (build ...)`.
pub fn tool_version(output: &str) -> Option<String> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix("Version "))
        .and_then(|v| v.split_whitespace().next())
        .map(str::to_string)
}

/// `13.0` from cuda-gdb's first line, `NVIDIA (R) cuda-gdb 13.0`.
pub fn cuda_gdb_version(output: &str) -> Option<String> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix("NVIDIA (R) cuda-gdb "))
        .and_then(|v| v.split_whitespace().next())
        .map(str::to_string)
}

/// PyTorch's build, as doctor's Python one-liner prints it: version,
/// `torch.version.cuda`, `get_arch_list()`, `is_available()`.
#[derive(Debug, Clone, PartialEq)]
pub struct Torch {
    /// `2.11.0+cu130`.
    pub version: String,
    /// The CUDA it was built with; `None` for a CPU build.
    pub cuda: Option<(u32, u32)>,
    /// `sm_90`, `compute_90`, ...
    pub arch_list: Vec<String>,
    /// `torch.cuda.is_available()`.
    pub available: bool,
}

/// The script doctor runs with the Python on PATH.
pub const TORCH_SCRIPT: &str = "import torch; print(torch.__version__); print(torch.version.cuda); print(torch.cuda.get_arch_list()); print(torch.cuda.is_available())";

/// Reads the script's four lines.
pub fn torch(output: &str) -> Option<Torch> {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let n = lines.len();
    if n < 4 {
        return None;
    }
    // The last four lines: a warning printed on import may come first.
    let [version, cuda, arch, available] = [lines[n - 4], lines[n - 3], lines[n - 2], lines[n - 1]];
    Some(Torch {
        version: version.to_string(),
        cuda: major_minor(cuda),
        arch_list: arch
            .trim_matches(['[', ']'])
            .split(',')
            .map(|a| a.trim().trim_matches('\'').to_string())
            .filter(|a| !a.is_empty())
            .collect(),
        available: available == "True",
    })
}

/// How a CUDA version built into something compares with the driver's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The driver supports it.
    Supported,
    /// A newer minor release of the same major: runs through CUDA's
    /// minor-version compatibility, except what needs PTX JIT.
    MinorNewer,
    /// A newer major release: the driver is too old.
    TooNew,
}

/// `built` against what the driver supports.
pub fn fit(built: (u32, u32), driver: (u32, u32)) -> Fit {
    if built.0 > driver.0 {
        Fit::TooNew
    } else if built.0 == driver.0 && built.1 > driver.1 {
        Fit::MinorNewer
    } else {
        Fit::Supported
    }
}

/// Whether a GPU of capability `cc` can run code built for `arch_list`:
/// a matching `sm_XY` (binaries run on the same major with an equal or
/// higher minor), or PTX (`compute_XY`) at or below it, which the driver
/// compiles.
pub fn arch_covers(arch_list: &[String], cc: (u32, u32)) -> bool {
    let parse = |a: &str, prefix: &str| {
        let digits = a
            .strip_prefix(prefix)?
            .trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let value: u32 = digits.parse().ok()?;
        Some((value / 10, value % 10))
    };
    arch_list.iter().any(|a| {
        parse(a, "sm_").is_some_and(|(major, minor)| major == cc.0 && minor <= cc.1)
            || parse(a, "compute_").is_some_and(|v| v <= cc)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_the_captures() {
        let capture = include_str!("../../sample-reports/doctor/h100.txt");
        assert_eq!(nvcc_release(capture), Some((13, 0)));
        assert_eq!(tool_version("NVIDIA (R) Compute Sanitizer\nVersion 2025.3.1.0 (build 36400806) (public-release)\n").as_deref(), Some("2025.3.1.0"));
        let t = torch(
            "2.11.0+cu130\n13.0\n['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120']\nTrue\n",
        )
        .unwrap();
        assert_eq!(t.cuda, Some((13, 0)));
        assert!(t.available && arch_covers(&t.arch_list, (9, 0)));
        assert!(
            !arch_covers(&t.arch_list, (6, 1)),
            "a Pascal GPU is not covered"
        );
        assert!(
            arch_covers(&["sm_80".into()], (8, 6)),
            "sm_80 binaries run on 8.6"
        );
        assert!(
            arch_covers(&["compute_70".into()], (9, 0)),
            "PTX is compiled by the driver"
        );
        assert!(!arch_covers(&["sm_90a".into()], (10, 0)));
        assert_eq!(fit((13, 0), (12, 8)), Fit::TooNew);
        assert_eq!(fit((12, 8), (12, 4)), Fit::MinorNewer);
        assert_eq!(fit((12, 4), (13, 0)), Fit::Supported);
    }
}
