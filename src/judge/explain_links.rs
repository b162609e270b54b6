//! Each finding names what explains it (`Site::explain`): its error code
//! when the tables know it, else its kind. Every format links there, to
//! `cudawatch explain` and `docs/errors.md`.

use std::sync::OnceLock;

use cudawatch_knowledge::Knowledge;
use cudawatch_model::Report;

/// The tables, parsed once per process.
pub fn knowledge() -> &'static Knowledge {
    static KNOWLEDGE: OnceLock<Knowledge> = OnceLock::new();
    KNOWLEDGE.get_or_init(Knowledge::load)
}

/// Sets `explain` on every site.
pub fn link(report: &mut Report) {
    let k = knowledge();
    for site in &mut report.findings {
        site.explain = Some(k.topic_of(site.kind.id(), site.error.as_deref()));
    }
}
