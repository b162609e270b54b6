//! Python's own tracebacks in a program's output: every one of them, with
//! the lines it spans, its exception and the innermost frame in the user's
//! code. A program that catches an exception and raises another, or a test
//! runner that reports several failures, prints more than one. CSAN prints
//! its stacks in the same frame lines.

use std::ops::Range;

use crate::model::Frame;

/// One failure the program reported: a Python traceback, or a failed
/// test's part of pytest's report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    /// The exception line: `torch.AcceleratorError: CUDA error: ...`.
    pub exception: String,
    /// The innermost frame in the user's own code (outside site-packages
    /// and the standard library), if any.
    pub user_frame: Option<Frame>,
    /// The output lines it spans.
    pub lines: Range<usize>,
    /// Whether Python went on to a later traceback that this one caused
    /// ("During handling of the above exception, another exception
    /// occurred:"): then the later one is the program's failure.
    pub chained: bool,
}

/// The lines Python prints between an exception and the one it led to.
const CHAINS: [&str; 2] = [
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
];

/// The line every Python traceback starts with.
pub(crate) const HEADER: &str = "Traceback (most recent call last):";

/// Every traceback in `lines`, in order.
pub(crate) fn tracebacks(lines: &[&str]) -> Vec<Failure> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(offset) = lines[at..].iter().position(|l| l.starts_with(HEADER)) {
        let start = at + offset;
        let mut frames = Vec::new();
        let mut exception = String::new();
        let mut end = lines.len();
        for (i, line) in lines.iter().enumerate().skip(start + 1) {
            if let Some(frame) = frame(line) {
                frames.push(frame);
            } else if line.starts_with(HEADER) {
                end = i;
                break;
            } else if !line.starts_with(' ') && !line.is_empty() {
                exception = line.trim().to_string();
                end = i + 1;
                break;
            }
        }
        let chained = lines[end..]
            .iter()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| CHAINS.contains(&l.trim()));
        out.push(Failure {
            exception,
            user_frame: innermost_user_frame(&frames),
            lines: start..end,
            chained,
        });
        at = end.max(start + 1);
    }
    out
}

/// `  File "/work/train.py", line 12, in main`.
pub(crate) fn frame(line: &str) -> Option<Frame> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (file, rest) = rest.split_once("\", line ")?;
    let (number, func) = rest.split_once(", in ").unwrap_or((rest, ""));
    Some(Frame {
        func: Some(func.trim().to_string()),
        module: None,
        file: Some(file.to_string()),
        line: number.trim().parse().ok(),
        pc: None,
    })
}

/// The innermost of `frames` (listed outermost first, as Python and pytest
/// print them) that is in the user's own Python code.
pub(crate) fn innermost_user_frame(frames: &[Frame]) -> Option<Frame> {
    frames
        .iter()
        .rev()
        .find(|f| !f.is_runtime() && f.file.as_deref().is_some_and(|p| p.ends_with(".py")))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chained_exception_is_two_tracebacks_each_with_its_own_user_frame() {
        let text = "\
Traceback (most recent call last):
  File \"/work/train.py\", line 12, in step
    loss = model(x)
torch.AcceleratorError: CUDA error: device-side assert triggered

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File \"/work/train.py\", line 20, in main
    raise RuntimeError(\"step failed\")
RuntimeError: step failed
";
        let lines: Vec<&str> = text.lines().collect();
        let found = tracebacks(&lines);
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].exception,
            "torch.AcceleratorError: CUDA error: device-side assert triggered"
        );
        assert_eq!(found[0].user_frame.as_ref().unwrap().line, Some(12));
        assert_eq!(found[0].lines, 0..4);
        assert!(found[0].chained && !found[1].chained);
        assert_eq!(found[1].exception, "RuntimeError: step failed");
        assert_eq!(found[1].user_frame.as_ref().unwrap().line, Some(20));
    }

    #[test]
    fn a_cut_traceback_keeps_its_frames_and_has_no_exception() {
        let lines = [HEADER, "  File \"/work/train.py\", line 3, in <module>"];
        let found = tracebacks(&lines);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].exception, "");
        assert_eq!(found[0].user_frame.as_ref().unwrap().line, Some(3));
    }
}
