//! The sweep as JUnit XML: one test case per target, so a CI test view
//! lists each program. A target not as expected is a `<failure>`; one that
//! could not be checked (incomplete, setup error, missing) an `<error>`.

use std::fmt::Write as _;

use cudawatch_model::{Standing, SweepReport};

use crate::render::escape_markup;

/// `--report junit`.
pub struct SweepJunit;

impl crate::render::Exporter<SweepReport> for SweepJunit {
    fn render(&self, report: &SweepReport) -> Vec<u8> {
        render(report).into_bytes()
    }
}

fn render(report: &SweepReport) -> String {
    let (mut failures, mut errors) = (0, 0);
    let mut cases = String::new();
    for t in &report.targets {
        let body = match t.standing {
            Standing::AsExpected => String::new(),
            Standing::NotAsExpected => {
                failures += 1;
                format!("<failure message=\"{}\"/>", escape_markup(&t.summary))
            }
            Standing::Unchecked => {
                errors += 1;
                format!(
                    "<error message=\"{}: {}\"/>",
                    t.state.name(),
                    escape_markup(&t.summary)
                )
            }
        };
        let _ = write!(
            cases,
            "\n    <testcase classname=\"cudawatch.sweep\" name=\"{}\" time=\"{:.3}\">{body}<system-out>{}</system-out></testcase>",
            escape_markup(&t.name),
            t.seconds,
            escape_markup(&format!(
                "{} | run dir: {}",
                t.command.join(" "),
                t.run_dir.as_deref().unwrap_or("-")
            ))
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"cudawatch sweep {id}\" tests=\"{n}\" failures=\"{failures}\" errors=\"{errors}\">\n  <testsuite name=\"sweep {id}\" tests=\"{n}\" failures=\"{failures}\" errors=\"{errors}\">{cases}\n  </testsuite>\n</testsuites>\n",
        id = escape_markup(&report.sweep_id),
        n = report.targets.len()
    )
}
