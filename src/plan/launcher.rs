//! What a command line launches, seen through the wrappers users put in
//! front of their program (`env`, `nice`, `timeout`, `uv run`, ...), and
//! whether it is a launcher of several processes, one per GPU (torchrun,
//! `python -m torch.distributed.run`, accelerate, deepspeed): how many it
//! says it starts, before any of them ran.

use std::ffi::OsString;

/// A launcher of worker processes and how many it was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiProcess {
    /// `torchrun`, `accelerate launch`, `deepspeed`.
    pub launcher: &'static str,
    /// Workers per node; `None` when the command line leaves it to the
    /// launcher (`gpu`, `auto`, the default of accelerate's config).
    pub per_node: Option<u32>,
}

impl MultiProcess {
    /// Whether it starts more than one worker (or may).
    pub fn several(&self) -> bool {
        self.per_node != Some(1)
    }
}

/// The command behind the wrappers that only change how it runs: `env
/// [-i] [-u NAME] [NAME=VALUE]...`, `nice [-n N]`, `timeout [opts]
/// DURATION`, `nohup`, `time`, `stdbuf -oL`, `taskset MASK`, `numactl
/// ...  --`, `uv run`, `poetry run`, `pipenv run`, `conda run -n ENV`.
pub fn unwrapped(argv: &[OsString]) -> Vec<String> {
    let mut words: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // Bounded: each pass removes at least one word.
    for _ in 0..8 {
        let Some(skip) = wrapper_len(&words) else {
            break;
        };
        words.drain(..skip.min(words.len()));
    }
    words
}

/// How many words of `words` a wrapper takes before its command.
fn wrapper_len(words: &[String]) -> Option<usize> {
    let first = base(words.first()?);
    let opts_then = |takes_value: &[&str], positional: usize| {
        let mut i = 1;
        while let Some(w) = words.get(i) {
            if w == "--" {
                return Some(i + 1);
            }
            if !w.starts_with('-') {
                break;
            }
            i += if takes_value.contains(&w.as_str()) {
                2
            } else {
                1
            };
        }
        Some(i + positional)
    };
    match first.as_str() {
        "env" => {
            let mut i = 1;
            while let Some(w) = words.get(i) {
                if w == "-u" || w == "--unset" || w == "-C" || w == "--chdir" {
                    i += 2;
                } else if w.starts_with('-') || (w.contains('=') && !w.starts_with('=')) {
                    i += 1;
                } else {
                    break;
                }
            }
            Some(i)
        }
        "nice" => opts_then(&["-n", "--adjustment"], 0),
        "timeout" => opts_then(&["-s", "--signal", "-k", "--kill-after"], 1),
        "nohup" | "time" => Some(1),
        "stdbuf" => opts_then(&["-i", "-o", "-e"], 0),
        "taskset" => opts_then(&[], 1),
        "numactl" => opts_then(&["-C", "-N", "-m", "-p", "-i"], 0),
        "uv" | "poetry" | "pipenv" if words.get(1).map(String::as_str) == Some("run") => {
            let mut i = 2;
            while let Some(w) = words.get(i) {
                if w == "--" {
                    return Some(i + 1);
                }
                if !w.starts_with('-') {
                    break;
                }
                // `uv run --with numpy`: flags of uv's that take a value.
                i += if ["--with", "--python", "-p", "--project", "--directory"]
                    .contains(&w.as_str())
                {
                    2
                } else {
                    1
                };
            }
            Some(i)
        }
        "conda" | "mamba" | "micromamba" if words.get(1).map(String::as_str) == Some("run") => {
            let mut i = 2;
            while let Some(w) = words.get(i) {
                if !w.starts_with('-') {
                    break;
                }
                i += if ["-n", "--name", "-p", "--prefix"].contains(&w.as_str()) {
                    2
                } else {
                    1
                };
            }
            Some(i)
        }
        _ => None,
    }
}

/// The launcher of several processes that `argv` runs, if any.
pub fn multi_process(argv: &[OsString]) -> Option<MultiProcess> {
    let words = unwrapped(argv);
    let first = base(words.first()?);
    let value = |names: &[&str]| option_value(&words, names);
    let torchrun = || MultiProcess {
        launcher: "torchrun",
        per_node: value(&["--nproc_per_node", "--nproc-per-node"]).and_then(|v| v.parse().ok()),
    };
    if first == "torchrun" {
        return Some(torchrun());
    }
    if first.starts_with("python")
        && let Some(m) = words.iter().position(|w| w == "-m")
        && matches!(
            words.get(m + 1).map(String::as_str),
            Some("torch.distributed.run" | "torch.distributed.launch")
        )
    {
        return Some(torchrun());
    }
    if first == "accelerate" && words.get(1).map(String::as_str) == Some("launch") {
        return Some(MultiProcess {
            launcher: "accelerate launch",
            per_node: value(&["--num_processes", "--num-processes"]).and_then(|v| v.parse().ok()),
        });
    }
    if first == "deepspeed" {
        return Some(MultiProcess {
            launcher: "deepspeed",
            per_node: value(&["--num_gpus", "--num-gpus"]).and_then(|v| v.parse().ok()),
        });
    }
    None
}

/// `--name=V` or `--name V`, up to the program's own arguments (the first
/// word ending in `.py`).
fn option_value(words: &[String], names: &[&str]) -> Option<String> {
    for (i, w) in words.iter().enumerate() {
        if w.ends_with(".py") {
            break;
        }
        for name in names {
            if let Some(v) = w.strip_prefix(&format!("{name}=")) {
                return Some(v.to_string());
            }
            if w == name {
                return words.get(i + 1).cloned();
            }
        }
    }
    None
}

/// A command word's file name (`/usr/bin/python3` → `python3`).
pub(super) fn base(word: &str) -> String {
    std::path::Path::new(word)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn wrappers_are_seen_through() {
        assert_eq!(
            unwrapped(&os(&["env", "-u", "X", "A=1", "python3", "t.py"])),
            ["python3", "t.py"]
        );
        assert_eq!(
            unwrapped(&os(&[
                "nice", "-n", "5", "timeout", "-s", "INT", "60", "python3", "t.py"
            ])),
            ["python3", "t.py"]
        );
        assert_eq!(
            unwrapped(&os(&["uv", "run", "--with", "numpy", "python", "t.py"])),
            ["python", "t.py"]
        );
        assert_eq!(
            unwrapped(&os(&["conda", "run", "-n", "ml", "python", "t.py"])),
            ["python", "t.py"]
        );
        assert_eq!(unwrapped(&os(&["./app"])), ["./app"]);
    }

    #[test]
    fn launchers_of_several_processes_say_how_many() {
        let two = multi_process(&os(&["torchrun", "--nproc_per_node=2", "t.py"])).unwrap();
        assert_eq!(two.per_node, Some(2));
        assert!(two.several());
        let one = multi_process(&os(&["torchrun", "--nproc-per-node", "1", "t.py"])).unwrap();
        assert!(!one.several());
        let gpu = multi_process(&os(&[
            "env",
            "X=1",
            "torchrun",
            "--nproc_per_node=gpu",
            "t.py",
        ]));
        assert_eq!(gpu.unwrap().per_node, None);
        let module = multi_process(&os(&[
            "python3",
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "4",
            "t.py",
        ]));
        assert_eq!(module.unwrap().per_node, Some(4));
        // The program's own `--nproc_per_node` after its script is not the launcher's.
        let own = multi_process(&os(&["torchrun", "t.py", "--nproc_per_node=8"])).unwrap();
        assert_eq!(own.per_node, None);
        assert!(multi_process(&os(&["python3", "t.py"])).is_none());
        assert_eq!(
            multi_process(&os(&[
                "accelerate",
                "launch",
                "--num_processes",
                "2",
                "t.py"
            ]))
            .unwrap()
            .per_node,
            Some(2)
        );
    }
}
