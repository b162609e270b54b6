//! `cudawatch config`: every setting as resolved, and where it came from.

use clap::CommandFactory;
use serde::Serialize;

use crate::cli::args::{Args, ConfigArgs};
use crate::cli::config_file::{self as config, Resolved};
use crate::errors::ExpectedError;
use crate::exit_codes;

/// One resolved setting.
#[derive(Debug, Serialize)]
struct Row {
    setting: String,
    value: String,
    origin: String,
}

/// Prints the settings on stdout: a table, or JSON with `--format json`.
pub fn run(_args: &ConfigArgs, resolved: &Resolved) -> Result<i32, ExpectedError> {
    let root = Args::command();
    // What the tool lookup finds for a tool no setting names.
    let lookup = crate::tools::ToolPaths::resolve(None, None);
    let looked_up = |id: &str| -> Option<String> {
        let path = match id {
            "compute_sanitizer" => &lookup.compute_sanitizer,
            "ncu" => &lookup.ncu,
            _ => return None,
        };
        Some(match lookup.missing(path) {
            Some(_) => "(not found)".to_string(),
            None => path.display().to_string(),
        })
    };
    let config_matches = resolved
        .matches
        .subcommand_matches("config")
        .expect("dispatched on the config subcommand");
    let rows: Vec<Row> = config::setting_args(&root)
        .into_iter()
        .map(|arg| {
            let id = arg.get_id().as_str();
            // `--color` is global: its value lives in the root's matches.
            let matches = if arg.is_global_set() {
                &resolved.matches
            } else {
                config_matches
            };
            let value = matches
                .get_raw(id)
                .map(|values| {
                    values
                        .map(|v| v.to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .map(|v| (v, None))
                .or_else(|| {
                    looked_up(id)
                        .map(|v| (v, Some("lookup: PATH, $CUDA_HOME/bin, /usr/local/cuda/bin")))
                })
                .unwrap_or_else(|| ("(unset)".into(), None));
            let (value, found_by) = value;
            Row {
                setting: arg.get_long().expect("settings have long flags").into(),
                value,
                origin: found_by.map_or_else(
                    || config::origin(matches, arg, resolved.file.as_ref()).to_string(),
                    str::to_string,
                ),
            }
        })
        .collect();
    let file = match &resolved.file {
        Some(f) => f.path.display().to_string(),
        None => format!("none ({} not found here or above)", config::FILE_NAME),
    };
    // `--format json` is itself a setting, so it is read from the same
    // matches: one spelling for JSON in every command.
    let json = config_matches
        .get_raw("format")
        .and_then(|mut v| v.next())
        .is_some_and(|v| v == "json");
    if json {
        let json = serde_json::json!({ "config_file": resolved.file.as_ref().map(|f| &f.path), "settings": rows });
        let text = serde_json::to_string_pretty(&json).expect("serialisable");
        crate::render::write_stdout(format!("{text}\n").as_bytes())?;
    } else {
        // Values and file names may come from a file someone else wrote:
        // the table carries them neutralised (JSON above stays lossless).
        use crate::render::untrusted::clean;
        let rows: Vec<Row> = rows
            .into_iter()
            .map(|r| Row {
                setting: clean(&r.setting),
                value: clean(&r.value),
                origin: clean(&r.origin),
            })
            .collect();
        let file = clean(&file);
        let mut table = crate::render::text::Table::new(["setting", "value", "from"]);
        for r in rows {
            table.row([r.setting, r.value, r.origin]);
        }
        let table = table.render(crate::render::width_of(&std::io::stdout()));
        let text = format!(
            "config file: {file}\n{table}precedence: command line > environment > config file > default\n"
        );
        crate::render::write_stdout(text.as_bytes())?;
    }
    Ok(exit_codes::CLEAN)
}
