//! The host call stacks ncu records with `--call-stack --call-stack-type
//! native --call-stack-type python`. They are only in the text of the
//! details page (`ncu --import REPORT --page details --print-details all`,
//! without `--csv`); the CSV pages carry none. Per launch, as captured on
//! the H100 (sample-reports/beyond/*/ncu-stack-text.stdout):
//!
//! ```text
//! [695] python3.12@127.0.0.1
//!   KERNEL (1056, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
//!
//!     CPU Call Stack:
//!       #4 0x56350a8553ed in gather_coalesced(float const*, float*, int)
//!          at /work/main/tests/gpu/coalescing.cu:5
//!          of /tmp/st/.bin/coalescing-g
//!
//!     Python CPU Call Stack (most recent call last):
//!       #2 File "/work/main/tests/gpu/beyond/library_kernels.py", line 9, in sort_step
//! ```
//!
//! Launches come in the report's order, the raw page's `ID` order.

use crate::model::Frame;

/// One profiled launch's stacks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchStacks {
    /// The kernel as the header names it.
    pub kernel: String,
    /// `(1056, 1, 1)`.
    pub grid: String,
    /// `(256, 1, 1)`.
    pub block: String,
    /// Native frames, innermost first (`#0` is in the CUDA runtime).
    pub native: Vec<Frame>,
    /// Python frames, outermost first (most recent call last).
    pub python: Vec<Frame>,
}

/// Which stack the frame lines being read belong to.
enum In {
    Nothing,
    Native,
    Python,
}

/// Every launch's stacks, in the page's order. Lines it does not know are
/// skipped: a page without stacks gives launches with none.
pub fn parse(text: &str) -> Vec<LaunchStacks> {
    let mut launches: Vec<LaunchStacks> = Vec::new();
    let mut reading = In::Nothing;
    for line in text.lines() {
        let body = line.trim();
        if let Some(launch) = header(line) {
            launches.push(launch);
            reading = In::Nothing;
            continue;
        }
        let Some(launch) = launches.last_mut() else {
            continue;
        };
        if body == "CPU Call Stack:" {
            reading = In::Native;
        } else if body.starts_with("Python CPU Call Stack") {
            reading = In::Python;
        } else if body.starts_with("Section:") || body.starts_with("Warning:") {
            reading = In::Nothing;
        } else if let Some(frame) = body.strip_prefix('#') {
            match reading {
                In::Native => launch.native.push(native_frame(frame)),
                In::Python => launch.python.extend(python_frame(frame)),
                In::Nothing => {}
            }
        } else if let (In::Native, Some(frame)) = (&reading, launch.native.last_mut()) {
            if let Some(at) = body.strip_prefix("at ") {
                if let Some((file, line)) = at.rsplit_once(':') {
                    frame.file = Some(file.to_string());
                    frame.line = line.parse().ok();
                }
            } else if let Some(module) = body.strip_prefix("of ") {
                frame.module = Some(module.to_string());
            }
        }
    }
    launches
}

/// `  KERNEL (GRID)x(BLOCK), Context N, Stream N, Device N, CC X.Y`.
fn header(line: &str) -> Option<LaunchStacks> {
    if !line.starts_with("  ") || line.starts_with("   ") {
        return None;
    }
    let body = line.trim();
    let (front, _) = body.split_once("), Context ")?;
    let (kernel_and_grid, block) = front.rsplit_once(")x(")?;
    let open = kernel_and_grid.rfind(" (")?;
    Some(LaunchStacks {
        kernel: kernel_and_grid[..open].to_string(),
        grid: format!("{})", &kernel_and_grid[open + 1..]),
        block: format!("({block})"),
        ..LaunchStacks::default()
    })
}

/// `4 0x56350a8553ed in gather_coalesced(float const*, float*, int)`.
fn native_frame(rest: &str) -> Frame {
    let after_number = rest.split_once(' ').map_or("", |(_, r)| r);
    let (pc, func) = match after_number.split_once(" in ") {
        Some((pc, func)) => (pc, Some(func.to_string())),
        None => (after_number, None),
    };
    Frame {
        func,
        pc: Some(pc.trim().to_string()).filter(|p| !p.is_empty()),
        ..Frame::default()
    }
}

/// `2 File "/x/library_kernels.py", line 9, in sort_step`.
fn python_frame(rest: &str) -> Option<Frame> {
    let quoted = rest.split_once("File \"")?.1;
    let (file, after) = quoted.split_once("\", line ")?;
    let (line, func) = after.split_once(", in ").unwrap_or((after, ""));
    Some(Frame {
        file: Some(file.to_string()),
        line: line.trim().parse().ok(),
        func: Some(func.trim().to_string()).filter(|f| !f.is_empty()),
        ..Frame::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(case: &str) -> String {
        match case {
            "coalescing_stack" => include_str!(
                "../../../sample-reports/beyond/coalescing_stack/ncu-stack-text.stdout"
            ),
            _ => {
                include_str!("../../../sample-reports/beyond/library_kernels/ncu-stack-text.stdout")
            }
        }
        .to_string()
    }

    #[test]
    fn a_cpp_launch_has_its_host_line_and_module() {
        let launches = parse(&capture("coalescing_stack"));
        assert_eq!(launches.len(), 2, "{launches:?}");
        let first = &launches[0];
        assert_eq!(
            first.kernel,
            "gather_coalesced(const float *, float *, int)"
        );
        assert_eq!(
            (first.grid.as_str(), first.block.as_str()),
            ("(16384, 1, 1)", "(256, 1, 1)")
        );
        let main = first
            .native
            .iter()
            .find(|f| f.func.as_deref() == Some("main"))
            .expect("main");
        assert!(
            main.file
                .as_deref()
                .unwrap()
                .ends_with("tests/gpu/coalescing.cu")
        );
        assert_eq!(main.line, Some(22));
        assert!(main.module.as_deref().unwrap().ends_with("coalescing-g"));
        assert!(first.python.is_empty());
    }

    #[test]
    fn a_python_launch_has_the_users_lines_outermost_first() {
        let launches = parse(&capture("library_kernels"));
        assert_eq!(launches.len(), 14);
        let sort = launches
            .iter()
            .find(|l| l.kernel.contains("DeviceRadixSortHistogramKernel"))
            .unwrap();
        let innermost = sort.python.last().unwrap();
        assert!(
            innermost
                .file
                .as_deref()
                .unwrap()
                .ends_with("library_kernels.py")
        );
        assert_eq!(innermost.func.as_deref(), Some("sort_step"));
        assert!(innermost.is_python());
        assert!(
            sort.native.iter().any(|f| f
                .module
                .as_deref()
                .is_some_and(|m| m.ends_with("libtorch_cuda.so"))),
            "{:?}",
            sort.native
        );
    }

    #[test]
    fn a_page_without_stacks_or_a_cut_one_never_fails() {
        assert!(parse("").is_empty());
        let text = capture("library_kernels");
        let cut = &text[..text.len() / 3];
        let launches = parse(cut);
        assert!(!launches.is_empty() && launches.len() < 14);
    }
}
