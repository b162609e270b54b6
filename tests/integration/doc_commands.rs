//! Every `cudawatch` command the README and docs/ show, in a code block or
//! inline, is one the binary accepts as written: its subcommand, its flags
//! and their values (a doc that named a flag since renamed, or a value a
//! flag refuses, sent users to an error). Each is run with `--help` put
//! before its program, so clap checks everything before it and nothing
//! runs.

use crate::helpers::{cudawatch, root, run};

/// The `cudawatch ...` commands of one Markdown file: whole lines of its
/// code blocks (a `\` continuation joined) and inline code spans.
fn commands_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_block = false;
    let mut prose = String::new();
    let mut block = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            block.push_str(line.trim_end_matches('\\'));
            if line.ends_with('\\') {
                continue;
            }
            let command = block.trim().trim_start_matches("$ ");
            if command.starts_with("cudawatch ") {
                found.push(command.to_string());
            }
            block.clear();
        } else {
            prose.push_str(line);
            prose.push(' ');
        }
    }
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 1 && span.starts_with("cudawatch ") {
            found.push(span.to_string());
        }
    }
    found
}

/// `command`'s words up to where the shell or the prose takes over (a
/// pipe, a redirection, a comment, a parenthesis or comma of the text
/// around it), quotes removed.
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    // A comma and a space end the command in prose ("doctor, then ...");
    // a comma inside a word is a list (`plain,memcheck`).
    let command = command.split(", ").next().unwrap_or(command);
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, '|' | '>' | ';' | '#' | '(') => break,
            (None, ' ') => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The README and every page of docs/.
fn doc_files() -> Vec<std::path::PathBuf> {
    let mut files = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files
}

#[test]
fn every_command_the_docs_show_is_accepted_as_written() {
    let files = doc_files();
    let mut checked = 0;
    let mut refused = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for command in commands_in(&text) {
            let mut args = words(&command);
            // `cudawatch ... --format json` names no subcommand: a pattern.
            if args.iter().any(|w| w == "..." || w.ends_with("...")) {
                continue;
            }
            args.remove(0);
            let at = args.iter().position(|w| w == "--").unwrap_or(args.len());
            args.insert(at, "--help".into());
            let out = run(cudawatch().args(&args));
            checked += 1;
            if out.code != 0 {
                refused.push(format!(
                    "{}: `{command}`: {}",
                    file.strip_prefix(root()).unwrap().display(),
                    out.stderr.lines().next().unwrap_or_default()
                ));
            }
        }
    }
    assert!(checked > 100, "only {checked} commands found");
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

/// The subcommands that only read files and print: safe to run as the docs
/// show them, on the files they name.
const READERS: [&str; 5] = ["report", "parse", "explain", "diff", "config"];

#[test]
fn every_command_the_docs_show_on_committed_files_runs_as_written() {
    // Run for real (in a scratch folder, the files they name taken from the
    // project): a documented command that a user copies must not end in a
    // usage error (2) or an input error (4).
    let files = doc_files();
    let scratch = tempfile::tempdir().unwrap();
    let (mut ran, mut failed) = (0, Vec::new());
    for file in &files {
        for command in commands_in(&std::fs::read_to_string(file).unwrap()) {
            let mut args = words(&command);
            args.remove(0);
            if !args.first().is_some_and(|s| READERS.contains(&s.as_str())) {
                continue;
            }
            // Only commands on files of the project (a placeholder, `OLD`,
            // or a user's own `memcheck.xml` is not run), and every
            // `explain`: its argument is an id the docs name.
            let looks_like_path = |w: &String| {
                !w.starts_with('-') && !w.contains('=') && (w.contains('/') || w.contains('.'))
            };
            let paths: Vec<&String> = args.iter().filter(|w| looks_like_path(w)).collect();
            let on_project_files =
                !paths.is_empty() && paths.iter().all(|w| root().join(w).exists());
            let explains = args[0] == "explain" && args.len() > 1;
            let bundled = args.iter().any(|w| w == "--example");
            if !(on_project_files || explains || bundled)
                || args.iter().any(|w| w.contains("...") || w.contains('<'))
            {
                continue;
            }
            let args: Vec<String> = args
                .into_iter()
                .map(|w| {
                    let path = root().join(&w);
                    if looks_like_path(&w) && path.exists() {
                        path.display().to_string()
                    } else {
                        w
                    }
                })
                .collect();
            let out = run(cudawatch().current_dir(scratch.path()).args(&args));
            ran += 1;
            if ![0, 1, 3].contains(&out.code) {
                failed.push(format!(
                    "{}: `{command}` exited {}: {}",
                    file.strip_prefix(root()).unwrap().display(),
                    out.code,
                    out.stderr.lines().last().unwrap_or_default()
                ));
            }
        }
    }
    // Today: `explain` in its forms, `report --example` and the commands on
    // docs/examples/; the rest name a user's files or a placeholder.
    assert!(ran >= 10, "only {ran} commands ran");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// What the docs' `run` commands name as the user's program, stood in for
/// in a scratch folder: a script that ends at once, as a correct program.
const STAND_INS: [(&str, &str); 4] = [
    ("train.py", "print('step 1')\n"),
    ("generate.py", "print('generated')\n"),
    ("my_app", "#!/bin/sh\necho ok\n"),
    ("app", "#!/bin/sh\necho ok\n"),
];

#[test]
fn every_run_command_the_docs_show_runs_as_written_on_the_fakes() {
    use std::os::unix::fs::PermissionsExt;
    // The user's program is a stand-in, the tools are the fakes replaying a
    // clean capture: a documented command a user copies must not end in a
    // usage error (2) or an input error (4). Skipped: placeholders (PATH,
    // PROGRAM), files of the user's the docs name as inputs (a baseline, a
    // sweep file), and launchers that need what this machine lacks
    // (torchrun's ranks, pytest's suite).
    let scratch = tempfile::tempdir().unwrap();
    for (name, text) in STAND_INS {
        let path = scratch.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (bin, path) = crate::helpers::fake_smi_path(scratch.path());
    for tool in ["compute-sanitizer", "ncu"] {
        std::os::unix::fs::symlink(root().join("tests/fakes").join(tool), bin.join(tool)).unwrap();
    }
    // `python` as the docs write it, where a machine has only python3.
    if let Some(python3) = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
    {
        std::os::unix::fs::symlink(python3, bin.join("python")).unwrap();
    }
    let (mut ran, mut failed) = (0, Vec::new());
    for file in doc_files() {
        for command in commands_in(&std::fs::read_to_string(&file).unwrap()) {
            let mut args = words(&command);
            args.remove(0);
            if args.first().map(String::as_str) != Some("run")
                || !runnable_here(&args, scratch.path())
            {
                continue;
            }
            let out = run(cudawatch()
                .current_dir(scratch.path())
                .env("PATH", &path)
                .env("FAKE_CASE", crate::helpers::sample("clean"))
                .args(&args));
            ran += 1;
            if [2, 4].contains(&out.code) || out.code > 3 {
                failed.push(format!(
                    "{}: `{command}` exited {}: {}",
                    file.strip_prefix(root()).unwrap().display(),
                    out.code,
                    out.stderr.lines().last().unwrap_or_default()
                ));
            }
        }
    }
    assert!(ran >= 15, "only {ran} run commands ran");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Whether a documented `run` command can run here as written: its program
/// is a stand-in, and every file it reads exists (what it writes need not).
fn runnable_here(args: &[String], scratch: &std::path::Path) -> bool {
    let Some(at) = args.iter().position(|w| w == "--") else {
        return false;
    };
    let (options, program) = args.split_at(at);
    let program = &program[1..];
    let stand_in = |w: &str| {
        STAND_INS
            .iter()
            .any(|(name, _)| w.trim_start_matches("./") == *name)
    };
    let known_program = match program.first().map(String::as_str) {
        Some("python") | Some("python3") => program.get(1).is_some_and(|s| stand_in(s)),
        Some(first) => stand_in(first),
        None => false,
    };
    // Options that read a file of the user's: run only where it exists.
    const READS: [&str; 4] = [
        "--baseline",
        "--suppressions",
        "--sanitizer-suppressions",
        "--config",
    ];
    let inputs_exist = options
        .windows(2)
        .filter(|w| READS.contains(&w[0].as_str()))
        .all(|w| scratch.join(&w[1]).exists());
    let placeholder = options
        .iter()
        .any(|w| w.chars().all(|c| c.is_ascii_uppercase()) || w.contains("..."));
    known_program && inputs_exist && !placeholder
}
