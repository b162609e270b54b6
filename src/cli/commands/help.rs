//! `cudawatch completions SHELL` and `cudawatch man`, generated from the
//! clap definitions so they never drift from the real flags.

use crate::cli::args::ManArgs;
use crate::cli::config_file::command;
use crate::errors::ExpectedError;
use crate::exit_codes;

/// Prints the completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<i32, ExpectedError> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "cudawatch", &mut script);
    crate::render::write_stdout(&script)?;
    Ok(exit_codes::CLEAN)
}

/// Prints cudawatch's man page, or a subcommand's, on stdout; or writes
/// every page into `--dir`.
pub fn man(args: &ManArgs) -> Result<i32, ExpectedError> {
    let root = command();
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir).map_err(|e| write_error(dir, e))?;
        let mut pages = vec![("cudawatch.1".to_string(), root.clone())];
        for sub in root.get_subcommands() {
            let name = format!("cudawatch-{}", sub.get_name());
            pages.push((format!("{name}.1"), sub.clone().name(name)));
        }
        for (file, cmd) in pages {
            let path = dir.join(&file);
            std::fs::write(&path, render(cmd)).map_err(|e| write_error(&path, e))?;
        }
        return Ok(exit_codes::CLEAN);
    }
    let page = match &args.subcommand {
        None => root,
        Some(name) => {
            let sub = root.find_subcommand(name).cloned().ok_or_else(|| {
                let names: Vec<&str> = root
                    .get_subcommands()
                    .map(|c| c.get_name())
                    .filter(|n| *n != "help")
                    .collect();
                ExpectedError::Usage(format!("no subcommand `{name}`: try {}", names.join(", ")))
            })?;
            sub.name(format!("cudawatch-{name}"))
        }
    };
    crate::render::write_stdout(&render(page))?;
    Ok(exit_codes::CLEAN)
}

fn render(cmd: clap::Command) -> Vec<u8> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut page)
        .expect("rendering into memory cannot fail");
    page
}

fn write_error(path: &std::path::Path, e: std::io::Error) -> ExpectedError {
    ExpectedError::Write {
        target: path.display().to_string(),
        message: e.to_string(),
    }
}
