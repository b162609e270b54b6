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

#[test]
fn every_command_the_docs_show_is_accepted_as_written() {
    let mut files = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
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
