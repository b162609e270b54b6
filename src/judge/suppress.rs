//! Suppression rules: findings a team has looked at and accepted, kept
//! visible as suppressed instead of failing the gate. A rule past its
//! `expires` date stops suppressing and says so, so nothing stays hidden
//! by accident.
//!
//! A rule must name something of the finding it is for: a `kernel`, `file`
//! or `frame` glob with three letters of its own; `tool`, `kind` and
//! `owner` only narrow it (a rule of a class alone would hide every leak).
//!
//! ```toml
//! [[suppress]]
//! tool = "memcheck"              # optional
//! kind = "leak"                  # optional, a finding kind id
//! kernel = "nccl*"               # glob on the kernel's simple name
//! file = "third_party/*"         # glob on the finding's file
//! frame = "load_batch"           # glob on a launching frame (function, or file.py:LINE)
//! owner = "cuDNN"                # optional: user, framework, library, or a component
//! reason = "NCCL keeps its buffers until exit"
//! expires = "2027-01-31"         # optional, YYYY-MM-DD
//! ```

use std::path::Path;

use cudawatch_model::{Report, Site, Warning};
use cudawatch_parsers::site::simple_kernel_name;
use serde::Deserialize;

use crate::errors::ExpectedError;

/// The source of the warnings judging adds (a rule that expired): they
/// belong to one judgement and are dropped before the next.
pub const WARNING_SOURCE: &str = "suppressions";

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
    /// Glob on a launching or allocating frame: a host function, or a
    /// Python frame as `file.py:LINE` or its function; what a leak or an
    /// API error has when it has no kernel and no source line.
    pub frame: Option<String>,
    /// Whose code: `user`, `framework`, `library`, or a component such as
    /// `cuDNN` (case does not matter).
    pub owner: Option<String>,
    /// Why it is accepted; shown beside the finding.
    pub reason: String,
    /// Last day the rule applies, `YYYY-MM-DD` (a string or a TOML date).
    #[serde(default, deserialize_with = "date_or_string")]
    pub expires: Option<String>,
}

/// `expires = "2027-01-31"` and `expires = 2027-01-31` both read as text;
/// whether it is a real date is checked in [`check`].
fn date_or_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Text(String),
        Date(toml::value::Datetime),
    }
    Ok(Option::<Either>::deserialize(d)?.map(|e| match e {
        Either::Text(t) => t,
        Either::Date(d) => d.to_string(),
    }))
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
    for (i, rule) in rules.suppress.iter().enumerate() {
        check(rule).map_err(|message| ExpectedError::Input {
            path: path.display().to_string(),
            message: format!("suppression rule {} ({:?}): {message}", i + 1, rule.reason),
        })?;
    }
    Ok(rules)
}

/// Checks a rule: it names what it matches with at least one field that
/// narrows (a rule of `reason` alone, or of `*` globs, would hide every
/// finding), its tool and kind exist, and its expiry is a real date.
pub fn check(rule: &Rule) -> Result<(), String> {
    if let Some(tool) = &rule.tool
        && cudawatch_model::Tool::from_name(tool).is_none()
    {
        return Err(format!(
            "tool = {tool:?} is not a tool ({})",
            cudawatch_model::Tool::STAGES
                .map(cudawatch_model::Tool::name)
                .join(", ")
        ));
    }
    if let Some(kind) = &rule.kind
        && serde_json::from_value::<cudawatch_model::FindingKind>(serde_json::json!(kind)).is_err()
    {
        return Err(format!(
            "kind = {kind:?} is not a finding kind (invalid_access, leak, race, ...)"
        ));
    }
    for glob in [&rule.kernel, &rule.file, &rule.frame]
        .into_iter()
        .flatten()
    {
        if let Err(e) = globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
        {
            return Err(format!("{glob:?} is not a glob: {e}"));
        }
    }
    if let Some(owner) = &rule.owner
        && owner.trim().is_empty()
    {
        return Err("owner is empty".into());
    }
    if let Some(date) = &rule.expires
        && !is_date(date)
    {
        return Err(format!("expires = {date:?} is not a date (YYYY-MM-DD)"));
    }
    if ![&rule.kernel, &rule.file, &rule.frame]
        .into_iter()
        .flatten()
        .any(|g| names_something(g))
    {
        return Err(
            "names nothing specific to the finding it is for, so it would hide a whole class \
             (every leak, every finding of a tool or an owner): give a kernel, file or frame glob \
             with at least three letters of its own (kernel = \"nccl*\", file = \"third_party/*\", \
             frame = \"load_batch\"); tool, kind and owner only narrow such a rule"
                .into(),
        );
    }
    if rule.kernel.is_none()
        && rule.file.is_none()
        && let Some(frame) = rule.frame.as_deref()
        && ENTRY_POINTS.contains(&frame.trim())
    {
        return Err(format!(
            "frame = {frame:?} is every program's entry, so it would hide that finding in every \
             program: name the program too (frame = \"{frame}@my_app\", the function and the \
             executable or library it is in)"
        ));
    }
    Ok(())
}

/// Functions every program's stacks share: a frame rule of one of them
/// alone names no program.
const ENTRY_POINTS: [&str; 6] = [
    "main",
    "_start",
    "__libc_start_main",
    "__libc_start_call_main",
    "<module>",
    "*main",
];

/// `main@oob_write`: a native frame's function and the file name of the
/// executable or library it is in, what a frame rule can name a program's
/// own `main` by.
pub fn frame_in_module(frame: &cudawatch_model::Frame) -> Option<String> {
    let func = frame.func.as_deref()?;
    let module = frame.module.as_deref()?;
    let base = module.rsplit('/').next().unwrap_or(module);
    Some(format!("{func}@{base}"))
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
            source: WARNING_SOURCE.into(),
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
    let frame_ok = rule.frame.as_deref().is_none_or(|g| {
        let python = site.python_frame.iter().flat_map(|f| {
            let at = f.file.as_deref().map(|file| {
                let base = file.rsplit('/').next().unwrap_or(file);
                match f.line {
                    Some(line) => format!("{base}:{line}"),
                    None => base.to_string(),
                }
            });
            [at, f.func.clone()]
        });
        let native = site
            .launch_frame
            .iter()
            .chain(&site.host_frames)
            .flat_map(|f| [f.func.clone(), frame_in_module(f)]);
        python.chain(native).flatten().any(|name| glob(g, &name))
    });
    tool_ok && kind_ok && kernel_ok && file_ok && owner_ok && frame_ok
}

/// Whether a glob names something rather than a class of names: three
/// letters, digits or underscores in a row outside its wildcards. `*`,
/// `?*`, `[a-z]*`, `**` and `*.cu` match (nearly) every finding; `nccl*`,
/// `*gemm*` and `third_party/*` do not.
fn names_something(pattern: &str) -> bool {
    let mut run = 0;
    let mut in_class = false;
    for c in pattern.chars() {
        match c {
            '[' | '{' => in_class = true,
            ']' | '}' => in_class = false,
            c if !in_class && (c.is_alphanumeric() || c == '_') => {
                run += 1;
                if run >= 3 {
                    return true;
                }
                continue;
            }
            _ => {}
        }
        run = 0;
    }
    false
}

/// Whether `text` matches the glob, as globset reads it with
/// gitignore-like rules: `*` and `?` stay within one path component, `**`
/// crosses `/`, `[..]` and `{a,b}` work. A glob that does not parse matches
/// nothing ([`check`] refuses it when the file is read).
fn glob(pattern: &str, text: &str) -> bool {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(text))
}

/// Whether `text` has the shape `YYYY-MM-DD`.
pub fn is_date(text: &str) -> bool {
    text.len() == 10 && text.parse::<jiff::civil::Date>().is_ok()
}

/// Today as `YYYY-MM-DD` (UTC), from the system clock.
pub fn today() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%d").to_string()
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
        // gitignore-like: `*` stays in a component, `**` crosses them.
        assert!(!glob("third_party/*", "third_party/nccl/ring.cu"));
        assert!(glob("third_party/**", "third_party/nccl/ring.cu"));
        assert!(glob("*.{cu,cuh}", "kernel.cuh") && glob("k[0-9].cu", "k7.cu"));
    }

    #[test]
    fn dates_are_checked_and_today_is_a_date() {
        assert!(is_date(&today()));
        assert!(is_date("2028-02-29"));
        for bad in [
            "2027-1-31",
            "2026-02-31",
            "9999-99-99",
            "2027-01-31T00:00:00",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
    }

    #[test]
    fn a_rule_must_narrow_name_real_things_and_expire_on_a_real_day() {
        let check_of = |text: &str| check(&rules(text).suppress[0]);
        // Before: a rule of a reason alone hid every finding, exit 0.
        assert!(
            check_of("[[suppress]]\nreason = \"all\"")
                .unwrap_err()
                .contains("names nothing")
        );
        assert!(check_of("[[suppress]]\nkernel = \"*\"\nfile = \"**\"\nreason = \"r\"").is_err());
        assert!(
            check_of("[[suppress]]\ntool = \"memchek\"\nreason = \"r\"")
                .unwrap_err()
                .contains("not a tool")
        );
        assert!(
            check_of("[[suppress]]\nkind = \"leaks\"\nreason = \"r\"")
                .unwrap_err()
                .contains("not a finding kind")
        );
        assert!(
            check_of("[[suppress]]\nkind = \"leak\"\nreason = \"r\"\nexpires = \"2026-02-31\"")
                .unwrap_err()
                .contains("not a date")
        );
        // A TOML date reads like a quoted one.
        let toml_date = rules(
            "[[suppress]]\nkind = \"leak\"\nframe = \"load_batch\"\nreason = \"r\"\nexpires = 2027-01-31",
        );
        assert_eq!(toml_date.suppress[0].expires.as_deref(), Some("2027-01-31"));
        assert!(check(&toml_date.suppress[0]).is_ok());
    }

    #[test]
    fn a_rule_of_a_class_alone_or_a_glob_that_matches_everything_is_refused() {
        // Before: each of these hid every finding (or every leak), and the
        // checklist then said "found none".
        let check_of = |text: &str| {
            check(&rules(&format!("[[suppress]]\n{text}\nreason = \"r\"")).suppress[0])
        };
        for broad in [
            "tool = \"memcheck\"\nkind = \"leak\"",
            "owner = \"user\"",
            "kernel = \"?*\"",
            "kernel = \"[a-z]*\"",
            "file = \"*.cu\"",
            "frame = \"**\"",
        ] {
            let why = check_of(broad).unwrap_err();
            assert!(why.contains("names nothing specific"), "{broad}: {why}");
        }
        for narrow in [
            "kernel = \"nccl*\"",
            "kind = \"race\"\nkernel = \"*gemm*\"",
            "file = \"third_party/*\"",
            "kind = \"leak\"\nframe = \"main@my_app\"",
        ] {
            assert!(check_of(narrow).is_ok(), "{narrow}");
        }
        // `main` alone is every program's entry: it hid every program's leaks.
        let why = check_of("kind = \"leak\"\nframe = \"main\"").unwrap_err();
        assert!(why.contains("every program's entry"), "{why}");
    }

    #[test]
    fn a_frame_rule_matches_the_launching_frame_of_a_leak() {
        let mut site = leak_in("/a.cu");
        site.location = None;
        site.kernel = None;
        site.launch_frame = Some(cudawatch_model::Frame {
            func: Some("load_batch".into()),
            module: None,
            file: None,
            line: None,
            pc: None,
        });
        let rule =
            |g: &str| rules(&format!("[[suppress]]\nframe = \"{g}\"\nreason = \"r\"")).suppress;
        assert!(matches(&rule("load_batch")[0], &site));
        assert!(!matches(&rule("save_batch")[0], &site));
    }
}
