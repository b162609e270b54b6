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
            "--expires {date} is not a YYYY-MM-DD date"
        )));
    }
    let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let mut rule = format!(
        "\n# {}\n[[suppress]]\ntool = {}\nkind = {}\n",
        site.message.replace('\n', " "),
        quote(site.tool.name()),
        quote(site.kind.id())
    );
    if let Some(kernel) = &site.kernel {
        rule.push_str(&format!("kernel = {}\n", quote(simple_kernel_name(kernel))));
    }
    if let Some(location) = &site.location {
        let base = location.file.rsplit('/').next().unwrap_or(&location.file);
        rule.push_str(&format!("file = {}\n", quote(&format!("*{base}"))));
    }
    rule.push_str(&format!("reason = {}\n", quote(&args.reason)));
    if let Some(date) = &args.expires {
        rule.push_str(&format!("expires = {}\n", quote(date)));
    }
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
