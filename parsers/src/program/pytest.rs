//! pytest's report of its failed tests, as a CI job's log shows it (pytest
//! 9.1 on the H100, every `--tb` style: `sample-reports/beyond/pytest_formats/`).
//!
//! ```text
//! =================================== FAILURES ===================================
//! _________________________________ test_lookup __________________________________
//!
//!     def test_lookup(emb):
//!         ids = token_ids(["the", "mat"], VOCAB, "cuda")
//! >       out = emb(ids)
//!
//! test_lookup.py:26:
//! _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
//! /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py:1779: in _wrapped_call_impl
//!     return self._call_impl(*args, **kwargs)
//! ...
//! E       torch.AcceleratorError: CUDA error: device-side assert triggered
//!
//! /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/functional.py:2567: AcceleratorError
//! ----------------------------- Captured stderr call -----------------------------
//! /pytorch/aten/src/ATen/native/cuda/Indexing.cu:1515: indexSelectSmallIndex: block: [0,0,0], ...
//! ```
//!
//! There is no "Traceback (most recent call last):" here (except with
//! `--tb=native`), so Python's reader finds nothing: each test's part gives
//! its frames (`path:line:` lines, relative to where pytest was started;
//! the function from `in NAME` or from the `def` line pytest shows above),
//! its exception (the first `E` line, with the type from the last frame's
//! line when pytest's assertion rewriting left it out) and the lines it
//! spans, which hold the test's captured output too. `--tb=line` prints
//! one `path:line: exception` line per test and no parts.

use crate::model::Frame;

use crate::traceback::{self, Failure, HEADER};

/// Every failed or errored test in pytest's report, in the order pytest
/// printed them; empty when the output holds no such report.
pub(crate) fn failures(lines: &[&str]) -> Vec<Failure> {
    let Some(first) = lines.iter().position(|l| is_failures_banner(l)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // The test whose part is being read, and where it started.
    let mut part: Option<(String, usize)> = None;
    // Where the next `--tb=line` failure's lines start.
    let mut loose_start = first + 1;
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate().skip(first + 1) {
        if is_banner(line) {
            if let Some((test, start)) = part.take() {
                out.push(read_part(&test, lines, start..i));
            }
            if is_failures_banner(line) {
                loose_start = i + 1;
                continue;
            }
            end = i;
            break;
        }
        if let Some(test) = header(line) {
            if let Some((test, start)) = part.take() {
                out.push(read_part(&test, lines, start..i));
            }
            part = Some((test.to_string(), i));
            continue;
        }
        if part.is_none()
            && let Some(at) = location(line)
            && !at.message.is_empty()
            && !at.message.starts_with("in ")
        {
            let frame = at.frame(String::from("?"));
            out.push(Failure {
                exception: at.message.to_string(),
                user_frame: traceback::innermost_user_frame(&[frame]),
                lines: loose_start..i + 1,
                chained: false,
            });
            loose_start = i + 1;
        }
    }
    if let Some((test, start)) = part {
        out.push(read_part(&test, lines, start..end));
    }
    out
}

/// One test's part of the report, `lines[range]`, from its header on.
fn read_part(test: &str, lines: &[&str], range: std::ops::Range<usize>) -> Failure {
    let part = &lines[range.clone()];
    if part.iter().any(|l| l.starts_with(HEADER)) {
        // `--tb=native`: Python's own traceback; the last is the test's.
        if let Some(last) = traceback::tracebacks(part).pop() {
            return Failure {
                lines: range,
                chained: false,
                ..last
            };
        }
    }
    let base = test_function(test);
    let mut frames = Vec::new();
    let mut block_start = 1;
    let mut raised = "";
    let mut message: Option<&str> = None;
    for (i, line) in part.iter().enumerate().skip(1) {
        if line.starts_with("_ _ _") {
            block_start = i + 1;
        } else if let Some(at) = location(line) {
            let func = match at.message.strip_prefix("in ") {
                Some(func) => func.to_string(),
                None => match def_name(&part[block_start..i]) {
                    Some(name) if name == base => test.to_string(),
                    Some(name) => name.to_string(),
                    None => String::from("?"),
                },
            };
            raised = if at.message.starts_with("in ") {
                ""
            } else {
                at.message
            };
            frames.push(at.frame(func));
            block_start = i + 1;
        } else if message.is_none()
            && let Some(text) = line.strip_prefix('E')
            && (text.is_empty() || text.starts_with(' '))
            && !text.trim().is_empty()
        {
            message = Some(text.trim());
        }
    }
    Failure {
        exception: exception(raised, message),
        user_frame: traceback::innermost_user_frame(&frames),
        lines: range,
        chained: false,
    }
}

/// The exception as Python would have printed it: the `E` line when it
/// names the type (`torch.AcceleratorError: CUDA error: ...`), else the
/// type from the last frame's line before it (`AssertionError: assert
/// 2.31 < 2.29`, which pytest's assertion rewriting prints without one).
fn exception(raised: &str, message: Option<&str>) -> String {
    match message {
        None => raised.to_string(),
        Some(message) if raised.is_empty() => message.to_string(),
        Some(message) => {
            let named = message
                .split(':')
                .next()
                .is_some_and(|head| head.rsplit('.').next() == Some(raised));
            if named {
                message.to_string()
            } else {
                format!("{raised}: {message}")
            }
        }
    }
}

/// `test_lookup`, `TestModel.test_step[bf16]`, `ERROR at setup of test_x`:
/// the test function's own name, `test_step`.
fn test_function(test: &str) -> &str {
    let test = test.rsplit(" of ").next().unwrap_or(test);
    let test = test.split('[').next().unwrap_or(test);
    test.rsplit('.').next().unwrap_or(test)
}

/// The function whose source pytest showed above a frame's line: `    def
/// test_lookup(emb):` (pytest indents the source by four columns, and marks
/// the failing line with `>` in that margin).
fn def_name<'a>(block: &[&'a str]) -> Option<&'a str> {
    block.iter().rev().find_map(|line| {
        let code = line.get(4..)?;
        let code = code.strip_prefix("async ").unwrap_or(code);
        let rest = code.strip_prefix("def ")?;
        let name = rest.split('(').next()?.trim();
        (!name.is_empty()).then_some(name)
    })
}

/// `==== FAILURES ====` or `==== ERRORS ====`: where the report of failed
/// tests starts.
fn is_failures_banner(line: &str) -> bool {
    is_banner(line) && (line.contains(" FAILURES ") || line.contains(" ERRORS "))
}

/// A line of pytest's own between `=` rules: `==== short test summary info ====`.
fn is_banner(line: &str) -> bool {
    let line = line.trim_end();
    line.len() > 8 && line.starts_with("===") && line.ends_with("===") && line.contains(' ')
}

/// `____ test_lookup ____`: a test's part starts.
fn header(line: &str) -> Option<&str> {
    let line = line.trim_end();
    if !line.starts_with("___") || !line.ends_with("___") {
        return None;
    }
    let name = line.trim_matches('_').trim();
    (!name.is_empty()).then_some(name)
}

/// A frame's line: `test_lookup.py:26: `, `loader.py:14: in normalise` or
/// `/opt/.../functional.py:2567: AcceleratorError`.
struct Location<'a> {
    file: &'a str,
    line: u32,
    message: &'a str,
}

impl Location<'_> {
    fn frame(&self, func: String) -> Frame {
        Frame {
            func: Some(func),
            module: None,
            file: Some(self.file.to_string()),
            line: Some(self.line),
            pc: None,
        }
    }
}

fn location(line: &str) -> Option<Location<'_>> {
    if line.starts_with([' ', '\t', '>', '|']) || line.starts_with("E ") {
        return None;
    }
    let at = line.find(".py:")?;
    let (file, rest) = line.split_at(at + 3);
    let rest = &rest[1..];
    let digits = rest.find(|c: char| !c.is_ascii_digit())?;
    let number = rest[..digits].parse().ok()?;
    let message = rest[digits..].strip_prefix(':')?;
    Some(Location {
        file,
        line: number,
        message: message.trim(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Failure> {
        let lines: Vec<&str> = text.lines().collect();
        failures(&lines)
    }

    #[test]
    fn an_assertion_failure_names_its_type_and_the_tests_line() {
        let found = read(
            "\
=================================== FAILURES ===================================
________________ test_training_steps_reduce_the_loss[dtype0] __________________

    def test_training_steps_reduce_the_loss(dtype):
        losses = [2.3, 2.4]
>       assert losses[-1] < losses[0]
E       assert 2.4 < 2.3

test_model.py:35: AssertionError
=========================== short test summary info ============================
",
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].exception, "AssertionError: assert 2.4 < 2.3");
        let frame = found[0].user_frame.clone().unwrap();
        assert_eq!(frame.file.as_deref(), Some("test_model.py"));
        assert_eq!(frame.line, Some(35));
        assert_eq!(
            frame.func.as_deref(),
            Some("test_training_steps_reduce_the_loss[dtype0]")
        );
        assert_eq!(found[0].lines, 1..9);
    }

    #[test]
    fn output_without_pytests_report_has_no_failures() {
        assert!(read("step 0 loss 2.3\n=== done ===\ntest.py:3: note\n").is_empty());
    }

    #[test]
    fn a_frame_line_needs_a_python_file_and_a_line_number() {
        assert!(location("test.py:12: in main").is_some());
        assert!(location("test.py: in main").is_none());
        assert!(location("    test.py:12: in main").is_none());
        assert!(location("E   test.py:12: in main").is_none());
        assert!(location("kernel.cu:12: in main").is_none());
    }
}
