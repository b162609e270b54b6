//! `cudawatch suppress REPORT SITE --reason ...`: appends a rule that
//! matches one site of a report to a suppressions file.

use std::io::Write as _;

use cudawatch_parsers::site::simple_kernel_name;

use crate::cli::args::SuppressArgs;
use crate::errors::ExpectedError;
use crate::exit_codes;
use crate::judge::baseline;
use crate::judge::suppress::{is_date, load, matches};

/// `cudawatch suppress`: appends a rule matching one site of a report
/// (its tool, kind, kernel and file) to the rules file.
// Over 100 lines on purpose: the command's steps in order (read the report,
// pick the site, write the rule), each short.
pub fn run(args: &SuppressArgs) -> Result<i32, ExpectedError> {
    let report = baseline::read_report(&args.report)?;
    let Some(site) = report.findings.iter().find(|s| s.id == args.site) else {
        return Err(ExpectedError::Usage(format!(
            "no site {} in {}: copy an id from its findings[].id",
            args.site,
            args.report.display()
        )));
    };
    if let Some(date) = &args.expires
        && !is_date(date)
    {
        return Err(ExpectedError::Usage(format!(
            "--expires {date} is not a date (YYYY-MM-DD)"
        )));
    }
    // Serialised by toml, so quotes, backslashes and newlines in a reason
    // or a kernel name cannot corrupt the file.
    let mut rule = toml::Table::new();
    rule.insert("tool".into(), site.tool.name().into());
    rule.insert("kind".into(), site.kind.id().into());
    if let Some(kernel) = &site.kernel {
        rule.insert("kernel".into(), simple_kernel_name(kernel).into());
    }
    if let Some(location) = &site.location {
        let base = location.file.rsplit('/').next().unwrap_or(&location.file);
        rule.insert("file".into(), format!("*{base}").into());
    }
    // A leak or an API error has no kernel and no line: its launching or
    // allocating frame is what names it (a rule of tool and kind alone
    // would hide every leak of every program).
    if site.kernel.is_none() && site.location.is_none() {
        let frame = site
            .python_frame
            .as_ref()
            .and_then(|f| {
                let file = f.file.as_deref()?;
                let base = file.rsplit('/').next().unwrap_or(file);
                Some(format!("{base}:{}", f.line?))
            })
            // A native frame with its module (`main@my_app`): `main` alone
            // is every program's.
            .or_else(|| {
                site.launch_frame.as_ref().and_then(|f| {
                    crate::judge::suppress::frame_in_module(f).or_else(|| f.func.clone())
                })
            });
        if let Some(frame) = frame {
            rule.insert("frame".into(), escape_glob(&frame).into());
        }
    }
    rule.insert("reason".into(), args.reason.clone().into());
    if let Some(date) = &args.expires {
        rule.insert("expires".into(), date.clone().into());
    }
    // Refused before the file is touched: a rule the file's own check would
    // refuse must not be appended to it.
    let check: Result<crate::judge::suppress::Rule, _> =
        toml::Value::Table(rule.clone()).try_into();
    if let Err(why) = check
        .map_err(|e| e.to_string())
        .and_then(|r| crate::judge::suppress::check(&r))
    {
        return Err(ExpectedError::Usage(format!(
            "site {} has no kernel, file or frame to name it by, so a rule for it would {}; \
             accept it with --baseline instead",
            site.id,
            why.split_once(", so it would ")
                .map_or(why.as_str(), |(_, rest)| rest)
        )));
    }
    let mut file = toml::Table::new();
    file.insert(
        "suppress".into(),
        toml::Value::Array(vec![toml::Value::Table(rule)]),
    );
    let body = toml::to_string(&file).map_err(|e| ExpectedError::Write {
        target: args.file.display().to_string(),
        message: e.to_string(),
    })?;
    let comment: String = site
        .message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let rule = format!("\n# {comment}\n{body}");
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.file)
        .and_then(|mut f| f.write_all(rule.as_bytes()))
        .map_err(|e| ExpectedError::Write {
            target: args.file.display().to_string(),
            message: e.to_string(),
        })?;
    // Check that the file still reads and the rule matches its site.
    let rules = load(&args.file)?;
    let matched = rules.suppress.iter().any(|r| matches(r, site));
    crate::render::stderr::line(&format!(
        "added a rule for {} to {}{}",
        site.id,
        args.file.display(),
        if matched {
            ""
        } else {
            " (warning: it does not match the site)"
        }
    ));
    Ok(exit_codes::CLEAN)
}

/// A name as a glob that matches it and no wildcard's worth more: each of
/// the glob's own characters (`void k(int*)` has a `*`) becomes `?`.
fn escape_glob(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '*' | '?' | '[' | ']' | '{' | '}' => '?',
            c => c,
        })
        .collect()
}
