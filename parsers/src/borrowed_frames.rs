//! Launching lines for findings whose tool gave none, from where ncu saw
//! the same kernel launched.
//!
//! racecheck's analysis records (its default report) and synccheck's carry
//! no host call stack, and initcheck runs without one, so a race in a
//! user's extension kernel came out at its kernel line with no word of
//! which Python line launched it (`docs/examples/real/user_kernel_race`).
//! ncu records every profiled launch's call stack. When every profiled
//! launch of the site's kernel was launched from one frame, the site takes
//! it, marked as ncu's (`Site::launch_seen_by`): ncu profiles one launch
//! per kernel and launch shape, so another launch of the kernel from
//! another line, with the same shape, is not among them.

use std::collections::HashMap;

use crate::model::{Frame, Report, Tool};
use crate::site::{bare_kernel_name, qualified_kernel_name, signatures_by_bare_name};

/// Fills the launching frame of sites without one from the report's
/// profiled launches; returns how many sites got one.
pub(crate) fn from_ncu_launches(report: &mut Report) -> usize {
    // A bare name two kernels of different namespaces share (a user's
    // `reduce_kernel` beside ATen's) says nothing of which was launched.
    let unique = signatures_by_bare_name(report.coalescing.iter().map(|k| k.kernel.as_str()));
    // Each kernel's one launching frame, by bare name, with its signature;
    // None where its launches came from different frames (or none).
    let mut frames: HashMap<&str, Option<&Frame>> = HashMap::new();
    for launch in &report.coalescing {
        let bare = bare_kernel_name(&launch.kernel);
        if !matches!(unique.get(bare), Some(Some(_))) {
            continue;
        }
        let here = launch.launched_from.as_ref();
        frames
            .entry(bare)
            .and_modify(|seen| {
                if *seen != here {
                    *seen = None;
                }
            })
            .or_insert(here);
    }
    let mut filled = 0;
    for site in &mut report.findings {
        if site.tool == Tool::Ncu || site.python_frame.is_some() || site.launch_frame.is_some() {
            continue;
        }
        let Some(kernel) = site.kernel.as_deref() else {
            continue;
        };
        let bare = bare_kernel_name(kernel);
        let Some(Some(frame)) = frames.get(bare) else {
            continue;
        };
        // Where the tool gave the kernel's signature, the namespaces agree
        // too: ncu may not have profiled this kernel at all (a kernel
        // filter) but another of the same bare name.
        if let (Some(signature), Some(Some(profiled))) = (&site.kernel_signature, unique.get(bare))
            && qualified_kernel_name(signature) != qualified_kernel_name(profiled)
        {
            continue;
        }
        let frame = (*frame).clone();
        if frame.is_python() {
            site.python_frame = Some(frame);
        } else {
            site.launch_frame = Some(frame);
        }
        site.launch_seen_by = Some(Tool::Ncu);
        filled += 1;
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FindingKind, KernelCoalescing, Severity};
    use crate::site::new_site;

    fn python(line: u32) -> Frame {
        Frame {
            func: Some("main".into()),
            file: Some("/src/train.py".into()),
            line: Some(line),
            ..Frame::default()
        }
    }

    fn launch(kernel: &str, from: Option<Frame>) -> KernelCoalescing {
        KernelCoalescing {
            kernel: kernel.into(),
            launched_from: from,
            ..KernelCoalescing::default()
        }
    }

    fn race_in(kernel: &str, launches: Vec<KernelCoalescing>) -> Report {
        let mut report = Report::new("test");
        let mut site = new_site(
            Tool::Racecheck,
            FindingKind::Race,
            Severity::Error,
            "race".into(),
        );
        site.kernel = Some(kernel.into());
        report.findings.push(site);
        report.coalescing = launches;
        report
    }

    #[test]
    fn a_kernel_ncu_saw_launched_from_one_line_gives_its_race_that_line_marked_as_ncus() {
        let mut report = race_in(
            "block_sum",
            vec![launch(
                "block_sum(const float *, float *)",
                Some(python(31)),
            )],
        );
        assert_eq!(from_ncu_launches(&mut report), 1);
        let site = &report.findings[0];
        assert_eq!(site.python_frame, Some(python(31)));
        assert_eq!(site.launch_seen_by, Some(Tool::Ncu));
    }

    #[test]
    fn launches_from_two_lines_or_none_or_a_namesake_say_nothing() {
        // Two shapes launched from two lines: which launch raced is unknown.
        let mut two = race_in(
            "block_sum",
            vec![
                launch("block_sum(const float *, float *)", Some(python(31))),
                launch("block_sum(const float *, float *)", Some(python(40))),
            ],
        );
        // One profiled launch without a stack beside one with.
        let mut partly = race_in(
            "block_sum",
            vec![
                launch("block_sum(const float *, float *)", Some(python(31))),
                launch("block_sum(const float *, float *)", None),
            ],
        );
        // A user's reduce_kernel beside ATen's: the bare name is shared.
        let mut namesakes = race_in(
            "reduce_kernel",
            vec![
                launch("reduce_kernel(float *)", Some(python(31))),
                launch(
                    "void at::native::reduce_kernel<512, 1>(float *)",
                    Some(python(12)),
                ),
            ],
        );
        for report in [&mut two, &mut partly, &mut namesakes] {
            assert_eq!(from_ncu_launches(report), 0);
            assert_eq!(report.findings[0].python_frame, None);
            assert_eq!(report.findings[0].launch_seen_by, None);
        }
        // The site's own signature names another namespace than the one
        // kernel of that bare name ncu profiled.
        let mut other = race_in(
            "reduce_kernel",
            vec![launch(
                "void at::native::reduce_kernel<512, 1>(float *)",
                Some(python(12)),
            )],
        );
        other.findings[0].kernel_signature = Some("void mylib::reduce_kernel(float *)".into());
        assert_eq!(from_ncu_launches(&mut other), 0);
    }

    #[test]
    fn a_site_with_its_own_launching_frame_keeps_it() {
        let mut report = race_in(
            "block_sum",
            vec![launch(
                "block_sum(const float *, float *)",
                Some(python(31)),
            )],
        );
        report.findings[0].python_frame = Some(python(7));
        assert_eq!(from_ncu_launches(&mut report), 0);
        assert_eq!(report.findings[0].python_frame, Some(python(7)));
    }
}
