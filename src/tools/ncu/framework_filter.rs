//! ncu's default filter: PyTorch's own kernels (ATen's) left out of the
//! profile. On a pure PyTorch model they are most launches (ViT-tiny's
//! step: 49 of the 70 ncu profiled, one per kernel and launch shape), and
//! their coalescing is ATen's code: a launch from the user's line is
//! reported but gates only under `--fail-on warning`, and every one only
//! under `--gate-scope all`; with either, they are profiled
//! (`NcuOptions::framework_kernels`). Library kernels (cuDNN's, cuBLAS's)
//! stay profiled: fewer, and their rows say which Hopper kernels ran,
//! whose stores initcheck cannot see (`judge::owner::unseen_writer`).
//!
//! The filter is one ncu `--kernel-name` on mangled names, the names a
//! filter of ours is told by: `regex:^(?!(^_ZN2at6native|...))`, where the
//! alternatives are `library_kernels::framework_filter`'s (the program's
//! own kernels' names kept), and `nccl` too for a program of several
//! processes (`super::leave_out_nccl`).

use std::ffi::OsString;

use crate::tools::library_kernels::{FRAMEWORK_KERNEL_NAMES, framework_filter, split_alternatives};

/// How a filter of ours starts, and the alternatives after it.
const START: &str = "regex:^(?!";
/// NCCL's kernels, by a word every one's mangled name carries.
const NCCL: &str = "nccl";

/// The options that leave PyTorch's kernels out of a profile, less those
/// the program's own kernels carry (`own`, mangled); none when nothing is
/// left to leave out.
pub fn options(own: &[String]) -> Vec<OsString> {
    let Some(alternatives) = framework_filter(own) else {
        return Vec::new();
    };
    vec![
        "--kernel-name-base".into(),
        "mangled".into(),
        "--kernel-name".into(),
        format!("{START}{alternatives})").into(),
    ]
}

/// The alternatives of a `--kernel-name` value of ours, without their
/// parentheses; None when the value is not ours (the user's filter).
fn alternatives(value: &str) -> Option<&str> {
    value
        .strip_prefix(START)?
        .strip_suffix(')')?
        .strip_prefix('(')?
        .strip_suffix(')')
}

/// Adds NCCL's kernels to a filter of ours in `argv`; false when `argv`
/// has no filter of ours.
pub fn add_nccl(argv: &mut [OsString]) -> bool {
    let Some(i) = argv.iter().position(|a| a == "--kernel-name") else {
        return false;
    };
    let Some(value) = argv.get(i + 1).and_then(|v| v.to_str()) else {
        return false;
    };
    let Some(inner) = alternatives(value) else {
        return false;
    };
    let with_nccl = format!("{START}({inner}|{NCCL}))");
    argv[i + 1] = with_nccl.into();
    true
}

/// What a profiling command's filter of ours leaves out.
#[derive(Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// PyTorch's names still profiled because the program's own kernels
    /// carry them, by the words a reason names them with.
    pub kept: Vec<&'static str>,
    /// NCCL's kernels left out too.
    pub nccl: bool,
    /// The filter's alternatives, `^_ZN2at6native|...`.
    alternatives: String,
}

/// What the filter of ours in `command` leaves out; None without one.
pub fn left_out(command: &[String]) -> Option<LeftOut> {
    let i = command.iter().position(|a| a == "--kernel-name")?;
    let inner = alternatives(command.get(i + 1)?)?;
    let parts = split_alternatives(inner);
    Some(LeftOut {
        alternatives: inner.to_string(),
        kept: FRAMEWORK_KERNEL_NAMES
            .iter()
            .filter(|(name, _)| !parts.contains(name))
            .map(|(_, shown)| *shown)
            .collect(),
        nccl: parts.contains(&NCCL),
    })
}

impl LeftOut {
    /// Whether the filter leaves out a kernel ncu names by `name` (as it
    /// lists those it saw launched, unprofiled). A name it cannot place is
    /// not taken for one left out.
    pub fn leaves_out(&self, name: &str) -> bool {
        regex::Regex::new(&format!("({})", self.alternatives)).is_ok_and(|re| re.is_match(name))
    }

    /// What the stage's reason says of it: `PyTorch's own kernels (ATen)
    /// not profiled...`.
    pub fn said(&self) -> String {
        let own = if self.kept.is_empty() {
            String::new()
        } else {
            format!(
                " but for names the program's own kernels carry, still profiled ({})",
                self.kept.join(", ")
            )
        };
        let nccl = if self.nccl {
            "; NCCL's kernels left out too, whose collectives would wait on \
             the other processes' under ncu"
        } else {
            ""
        };
        format!(
            "PyTorch's own kernels (ATen) not profiled{own}: their coalescing is ATen's code and \
             gates only under --fail-on warning or --gate-scope all, which profile them{nccl}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(argv: &[OsString]) -> Vec<String> {
        argv.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_filter_is_read_back_from_the_command_with_what_it_keeps_and_nccl() {
        let mut argv = options(&[]);
        let mut command = words(&argv);
        assert_eq!(
            command,
            [
                "--kernel-name-base",
                "mangled",
                "--kernel-name",
                "regex:^(?!(^_ZN2at6native|^_ZN2at4cuda|^_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_SoftMax_cu_))"
            ]
        );
        assert_eq!(
            left_out(&command),
            Some(LeftOut {
                kept: vec![],
                nccl: false,
                alternatives: command[3][11..command[3].len() - 2].to_string()
            })
        );
        let filter = left_out(&command).unwrap();
        assert!(filter.leaves_out("_ZN2at6native29vectorized_elementwise_kernelILi4EEEvv"));
        assert!(!filter.leaves_out("_Z15gather_stridedPKfPfi"));
        assert!(!filter.leaves_out("vectorized_elementwise_kernel"));
        assert!(add_nccl(&mut argv));
        command = words(&argv);
        assert!(
            command[3].ends_with("_SoftMax_cu_|nccl))"),
            "{}",
            command[3]
        );
        assert!(left_out(&command).unwrap().nccl);
        // A program's own at::native kernel keeps that name profiled.
        let own = words(&options(&["_ZN2at6native9my_kernelEPf".to_string()]));
        let said = left_out(&own).unwrap().said();
        assert!(
            said.contains("still profiled (ATen's at::native)"),
            "{said}"
        );
        // The user's own filter is not ours, and gets no NCCL added.
        let mut user: Vec<OsString> = vec!["--kernel-name".into(), "regex:gemm".into()];
        assert!(!add_nccl(&mut user));
        assert_eq!(left_out(&words(&user)), None);
        assert!(
            options(&[
                "_ZN2at6native1kEv".into(),
                "_ZN2at4cuda1kEv".into(),
                "_ZN12_GLOBAL__N__1f_12_SoftMax_cu_1kEv".into()
            ])
            .is_empty()
        );
    }
}
