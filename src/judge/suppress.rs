//! Suppression rules: findings a team has looked at and accepted, kept
//! visible as suppressed instead of failing the gate. A rule past its
//! `expires` date stops suppressing and says so, so nothing stays hidden
//! by accident.
//!
//! ```toml
//! [[suppress]]
//! tool = "memcheck"              # optional
//! kind = "leak"                  # optional, a finding kind id
//! kernel = "nccl*"               # optional, glob on the kernel's simple name
//! file = "third_party/*"         # optional, glob on the finding's file
//! owner = "cuDNN"                # optional: user, framework, library, or a component
//! reason = "NCCL keeps its buffers until exit"
//! expires = "2027-01-31"         # optional, YYYY-MM-DD
//! ```

use std::path::Path;

use cudawatch_model::{Report, Site, Warning};
use cudawatch_parsers::site::simple_kernel_name;
use serde::Deserialize;

use crate::errors::ExpectedError;

/// A suppressions file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suppressions {
    /// The rules, first match wins.
    #[serde(default)]
    pub suppress: Vec<Rule>,
}

/// One rule; every field given must match.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Tool name.
    pub tool: Option<String>,
    /// Finding kind id.
    pub kind: Option<String>,
    /// Glob on the kernel's simple name.
    pub kernel: Option<String>,
    /// Glob on the finding's file path (matched against the whole path and its tail).
    pub file: Option<String>,
    /// Whose code: `user`, `framework`, `library`, or a component such as
    /// `cuDNN` (case does not matter).
    pub owner: Option<String>,
    /// Why it is accepted; shown beside the finding.
    pub reason: String,
    /// Last day the rule applies, `YYYY-MM-DD`.
    pub expires: Option<String>,
}

/// Reads a suppressions file; errors name the file and toml's position.
pub fn load(path: &Path) -> Result<Suppressions, ExpectedError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExpectedError::Input {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let rules: Suppressions = toml::from_str(&text).map_err(|e| ExpectedError::Input {
        path: path.display().to_string(),
        message: crate::errors::toml_one_line(&e),
    })?;
    for rule in &rules.suppress {
        if let Some(date) = &rule.expires
            && !is_date(date)
        {
            return Err(ExpectedError::Input {
                path: path.display().to_string(),
                message: format!("expires = \"{date}\" is not a YYYY-MM-DD date"),
            });
        }
    }
    Ok(rules)
}

/// Marks the findings the rules cover as suppressed; an expired rule that
/// would have matched adds a warning instead. `today` is `YYYY-MM-DD`.
pub fn apply(report: &mut Report, rules: &Suppressions, today: &str) {
    let mut expired: Vec<String> = Vec::new();
    for site in &mut report.findings {
        for rule in &rules.suppress {
            if !matches(rule, site) {
                continue;
            }
            match &rule.expires {
                // ISO dates compare correctly as strings.
                Some(date) if date.as_str() < today => {
                    let note = format!(
                        "a suppression rule expired on {date} and no longer hides: {}",
                        rule.reason
                    );
                    if !expired.contains(&note) {
                        expired.push(note);
                    }
                }
                _ => {
                    site.suppressed = Some(rule.reason.clone());
                    break;
                }
            }
        }
    }
    report
        .warnings
        .extend(expired.into_iter().map(|message| Warning {
            source: "suppressions".into(),
            message,
        }));
}

/// Whether every field the rule gives matches the site.
pub fn matches(rule: &Rule, site: &Site) -> bool {
    let tool_ok = rule.tool.as_deref().is_none_or(|t| t == site.tool.name());
    let kind_ok = rule.kind.as_deref().is_none_or(|k| k == site.kind.id());
    let kernel_ok = rule.kernel.as_deref().is_none_or(|g| {
        site.kernel
            .as_deref()
            .is_some_and(|k| glob(g, simple_kernel_name(k)))
    });
    let file_ok = rule.file.as_deref().is_none_or(|g| {
        site.location.as_ref().is_some_and(|l| {
            glob(g, &l.file)
                || l.file
                    .match_indices('/')
                    .any(|(i, _)| glob(g, &l.file[i + 1..]))
        })
    });
    let owner_ok = rule.owner.as_deref().is_none_or(|want| {
        site.owner.as_ref().is_some_and(|o| {
            want.eq_ignore_ascii_case(o.owner.name()) || want.eq_ignore_ascii_case(&o.component)
        })
    });
    tool_ok && kind_ok && kernel_ok && file_ok && owner_ok
}

/// `*` matches any run of characters, `?` one; nothing else is special.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Whether `text` has the shape `YYYY-MM-DD`.
pub fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// Today as `YYYY-MM-DD` (UTC), from the system clock.
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    civil_from_days(days as i64)
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> String {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudawatch_model::{FindingKind, Severity, SourceLocation, Tool};
    use cudawatch_parsers::site::new_site;

    fn leak_in(file: &str) -> Site {
        let mut site = new_site(
            Tool::Memcheck,
            FindingKind::Leak,
            Severity::Error,
            "leak".into(),
        );
        site.kernel = Some("ncclKernel(int)".into());
        site.location = Some(SourceLocation {
            file: file.into(),
            line: 3,
        });
        site
    }

    fn rules(text: &str) -> Suppressions {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_matching_rule_suppresses_and_an_expired_one_warns_instead() {
        let mut report = Report::new("t");
        report.findings = vec![leak_in("/src/third_party/nccl.cu"), leak_in("/src/app.cu")];
        let set = rules(
            "[[suppress]]\nkind = \"leak\"\nfile = \"third_party/*\"\nreason = \"NCCL buffers\"\nexpires = \"2027-01-31\"\n",
        );
        apply(&mut report, &set, "2026-11-22");
        assert_eq!(
            report.findings[0].suppressed.as_deref(),
            Some("NCCL buffers")
        );
        assert_eq!(report.findings[1].suppressed, None);
        let mut later = Report::new("t");
        later.findings = vec![leak_in("/src/third_party/nccl.cu")];
        apply(&mut later, &set, "2027-02-01");
        assert_eq!(later.findings[0].suppressed, None);
        assert!(later.warnings[0].message.contains("expired on 2027-01-31"));
    }

    #[test]
    fn a_rule_can_name_an_owner_or_a_component() {
        let mut site = leak_in("/a.cu");
        site.owner = Some(cudawatch_model::Ownership {
            owner: cudawatch_model::Owner::Library,
            component: "cuDNN".into(),
            because: "kernel name".into(),
            user_call: false,
        });
        let rule = |owner: &str| {
            rules(&format!(
                "[[suppress]]\nowner = \"{owner}\"\nreason = \"r\""
            ))
            .suppress
        };
        assert!(matches(&rule("library")[0], &site));
        assert!(matches(&rule("cudnn")[0], &site));
        assert!(!matches(&rule("user")[0], &site));
        assert!(!matches(&rule("cuBLAS")[0], &site));
    }

    #[test]
    fn kernel_globs_match_the_simple_name() {
        assert!(matches(
            &rules("[[suppress]]\nkernel = \"nccl*\"\nreason = \"r\"").suppress[0],
            &leak_in("/a.cu")
        ));
        assert!(!matches(
            &rules("[[suppress]]\nkernel = \"gemm*\"\nreason = \"r\"").suppress[0],
            &leak_in("/a.cu")
        ));
        assert!(glob("a*c?e", "abbbcde") && !glob("a*c", "ab"));
    }

    #[test]
    fn dates_are_checked_and_today_is_a_date() {
        assert!(is_date(&today()));
        assert_eq!(civil_from_days(0), "1970-01-01");
        assert_eq!(civil_from_days(20_414), "2025-11-22");
        assert!(!is_date("2027-1-31"));
    }
}
