//! Sentences more than one format says the same way: a thread sample, where
//! a kernel was launched from. Kept here so the
//! terminal and HTML reports cannot drift apart.

use std::fmt::Write as _;

use cudawatch_model::{Frame, Sample, Site};

/// `thread (232,0,0) block (3,0,0) address 0x7fa5…, 1 bytes after the
/// 4000-byte allocation at 0x7fa5…`; empty when the sample has nothing.
/// `rank 1 (pid 1051, GPU 1)`, or `rank 0 (pid 10), rank 1 (pid 11)`:
/// the processes of a multi-process program a site was seen in; `None`
/// when the tool could not tell them apart.
pub fn processes_line(site: &Site) -> Option<String> {
    (!site.processes.is_empty()).then(|| {
        site.processes
            .iter()
            .map(cudawatch_model::ProcessRef::describe)
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// `memcheck, racecheck`: the other stages whose output showed the site.
pub fn seen_by_line(site: &Site) -> Option<String> {
    (!site.seen_by.is_empty()).then(|| {
        site.seen_by
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    })
}

pub fn sample_line(s: &Sample) -> String {
    let mut line = String::new();
    if let (Some(t), Some(b)) = (s.thread, s.block) {
        let _ = write!(line, "thread {t} block {b}");
    }
    if let Some(a) = s.address {
        let _ = write!(line, " address {a:#x}");
    }
    if let Some(n) = &s.nearest_allocation {
        let _ = match n.relation.as_str() {
            "inside" => write!(
                line,
                ", inside the {}-byte allocation at {:#x}",
                n.size, n.base
            ),
            rel => write!(
                line,
                ", {} bytes {rel} the {}-byte allocation at {:#x}",
                n.distance, n.size, n.base
            ),
        };
    }
    line.trim().to_string()
}

/// Whether a site is listed on its own: a root cause (not one that follows
/// another) inside the gate's scope. The terminal, HTML and Markdown count
/// and list these, and fold the rest.
pub fn is_listed(site: &Site, out_of_scope: &[String]) -> bool {
    site.consequence_of.is_none() && !out_of_scope.contains(&site.id)
}

/// The Python frame of the user's code if there is one, else the native
/// frame that launched the kernel.
pub fn launched_from(site: &Site) -> Option<Frame> {
    site.python_frame
        .clone()
        .or_else(|| site.launch_frame.clone())
}

/// Said after a launching frame that is not from the finding's own record
/// but where ncu saw the same kernel launched (`Site::launch_seen_by`).
pub fn seen_by_note(site: &Site) -> &'static str {
    match site.launch_seen_by {
        // The core dump's fault: the plain run's error surfaced at the
        // call that ran the kernel (`graph.replay()`).
        Some(cudawatch_model::Tool::Plain) => " (where the plain run's error surfaced)",
        Some(_) => " (where ncu saw this kernel launched)",
        None => "",
    }
}

/// What explains a site (`cudawatch explain TOPIC`) and the link to it
/// in docs/errors.md; a report judged before explanations existed has
/// its kind.
pub fn explanation(site: &Site) -> (String, Option<String>) {
    let topic = site
        .explain
        .clone()
        .unwrap_or_else(|| site.kind.id().to_string());
    let link = topic_link(&topic);
    (topic, link)
}

/// The link to a topic's explanation, when a documentation base is set.
pub fn topic_link(topic: &str) -> Option<String> {
    docs_base().map(|base| cudawatch_knowledge::link(base, topic))
}

/// Where cudawatch's docs are published: `CUDAWATCH_DOCS_URL` when
/// cudawatch runs, else the same variable when it was built (a packager's
/// choice), else none: reports then name `cudawatch explain TOPIC` only.
pub fn docs_base() -> Option<&'static str> {
    static BASE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        std::env::var("CUDAWATCH_DOCS_URL")
            .ok()
            .or_else(|| option_env!("CUDAWATCH_DOCS_URL").map(str::to_string))
            .map(|b| b.trim().to_string())
            .filter(|b| is_plain_url(b))
    })
    .as_deref()
}

/// An http(s) URL of plain characters only: what goes into Markdown, HTML
/// and SARIF as a link must not close it and open a remote image, a
/// heading or a tag (`https://x/) ![img](https://tracker/`).
fn is_plain_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~:/%#?=&+,@".contains(c))
    })
}

use crate::words::shorten;

/// `path` as the human report shows it, from the project or the working
/// directory (`tests/gpu/oob.cu`, not `/home/me/proj/tests/gpu/oob.cu`),
/// as a compiler or ripgrep shows it ([`super::relative_to_cwd`]).
pub fn from_here(path: &str) -> String {
    super::relative_to_cwd(path).0
}

/// A frame as the human report shows it: its file from here.
pub fn frame_from_here(frame: &cudawatch_model::Frame) -> String {
    frame_with_file(frame, from_here)
}

/// A frame with its file as `shown` gives it (the terminal's from here,
/// the HTML page's without the report's `./`).
pub fn frame_with_file(frame: &cudawatch_model::Frame, shown: impl Fn(&str) -> String) -> String {
    let mut frame = frame.clone();
    if let Some(file) = &frame.file {
        frame.file = Some(shown(file));
    }
    frame.to_string()
}

/// Each of `texts` shortened to `max` characters; those that would look
/// the same once cut at the end (two ATen kernels, `at::<unnamed>::nl…`
/// twice with different figures) keep their start and, after `…`, the
/// part where they first differ: different names stay different where the
/// width allows.
pub fn shorten_distinct(texts: &[&str], max: usize) -> Vec<String> {
    let cut: Vec<String> = texts.iter().map(|t| shorten(t, max)).collect();
    texts
        .iter()
        .zip(&cut)
        .map(|(text, short)| {
            let differs_at = texts
                .iter()
                .zip(&cut)
                .filter(|(other, other_short)| other != &text && *other_short == short)
                .map(|(other, _)| first_difference(text, other))
                .min();
            match differs_at {
                Some(at) => around(text, at, max),
                None => short.clone(),
            }
        })
        .collect()
}

/// The character position where `a` and `b` first differ.
fn first_difference(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// `head…part where it differs…` in `max` characters.
fn around(text: &str, at: usize, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max || max < 8 {
        return shorten(text, max);
    }
    let head = (max / 3).min(at);
    let start = at.saturating_sub(3).max(head);
    let room = max - head - 1;
    let mut s: String = chars[..head].iter().collect();
    if start > head {
        s.push('…');
    }
    let end = (start + room - usize::from(start > head)).min(chars.len());
    let window: String = chars[start..end].iter().collect();
    if end < chars.len() {
        s.push_str(&shorten(&format!("{window} "), window.chars().count()));
    } else {
        s.push_str(&window);
    }
    s
}

/// Why a finding gates at a level its tool did not give it, if it does.
pub fn raised_severity(site: &Site) -> Option<String> {
    // A doubted read was lowered because of its doubt, which is shown.
    if site.doubt.is_some() {
        return None;
    }
    let tool = site.tool_severity?;
    if tool > site.severity {
        return Some(format!(
            "a {}: the program checked this error and went on to finish normally under {}; \
             an error a program does not survive stays an {}",
            site.severity.name(),
            site.tool.name(),
            tool.name()
        ));
    }
    Some(format!(
        "gated as {}: {} calls it {}, but since sm_70 the lanes of a warp do not run in \
         lockstep (--racecheck-warnings report keeps the tool's level)",
        site.severity.name(),
        site.tool.name(),
        tool.name()
    ))
}

/// `inside __syncwarp (sm_30_intrinsics.hpp:110), inlined at this line`:
/// where the tool placed a finding that cudawatch moved to the user's line.
pub fn inlined_line(inlined: &Frame) -> String {
    let func = inlined.func.as_deref().unwrap_or("an inlined function");
    match (&inlined.file, inlined.line) {
        (Some(file), Some(line)) => format!(
            "inside {func} ({}), inlined at this line",
            cudawatch_model::short_place(file, line)
        ),
        _ => format!("inside {func}, inlined at this line"),
    }
}

/// `4 instructions on this line: 0x60, 0x70, 0x80, 0x90` (an unrolled loop).
pub fn pcs_line(pcs: &[String]) -> String {
    let shown: Vec<&str> = pcs.iter().take(6).map(String::as_str).collect();
    let more = if pcs.len() > shown.len() { ", …" } else { "" };
    format!(
        "{} instructions on this line: {}{more}",
        pcs.len(),
        shown.join(", ")
    )
}

#[cfg(test)]
mod distinct_tests {
    use super::*;

    #[test]
    fn names_that_look_the_same_cut_at_the_end_keep_their_ends() {
        let a = "at::<unnamed>::nll_loss_forward_kernel<float>";
        let b = "at::<unnamed>::nll_loss_backward_kernel<double>";
        let c = "scatter";
        let short = shorten_distinct(&[a, b, c], 20);
        assert_ne!(short[0], short[1], "{short:?}");
        assert!(short[0].contains("forw"), "{short:?}");
        assert!(short[1].contains("back"), "{short:?}");
        assert!(short.iter().all(|s| s.chars().count() <= 20), "{short:?}");
        assert_eq!(short[2], "scatter");
    }
}

#[cfg(test)]
mod tests {
    use super::is_plain_url;

    #[test]
    fn a_docs_url_that_would_break_out_of_a_link_is_refused() {
        assert!(is_plain_url("https://example.org/cudawatch/docs/errors.md"));
        assert!(is_plain_url("http://docs.local:8080/errors.md#topic"));
        assert!(!is_plain_url("https://x/) ![img](https://tracker/p.png"));
        assert!(!is_plain_url("https://x/\n# forged heading"));
        assert!(!is_plain_url("https://x/<img src=y>"));
        assert!(!is_plain_url("javascript:alert(1)"));
        assert!(!is_plain_url("https://"));
    }
}
