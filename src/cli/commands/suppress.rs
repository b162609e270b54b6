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
    rule.insert("reason".into(), args.reason.clone().into());
    if let Some(date) = &args.expires {
        rule.insert("expires".into(), date.clone().into());
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
    eprintln!(
        "added a rule for {} to {}{}",
        site.id,
        args.file.display(),
        if matched {
            ""
        } else {
            " (warning: it does not match the site)"
        }
    );
    Ok(exit_codes::CLEAN)
}
