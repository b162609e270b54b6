//! A stage whose tool doctor found unable to check anything here (a
//! compute-sanitizer that exits before instrumenting on this driver, an
//! ncu without access to the counters) is never clean: whatever it
//! printed, the run could not really check that.

use cudawatch_model::{EnvStatus, Outcome, Report};

/// Marks clean stages of broken tools inconclusive, saying why.
pub fn apply(report: &mut Report) {
    let Some(env) = &report.environment else {
        return;
    };
    for stage in &mut report.stages {
        if stage.outcome != Outcome::Clean {
            continue;
        }
        if let Some(check) = env
            .checks
            .iter()
            .find(|c| c.status == EnvStatus::Problem && c.breaks.contains(&stage.tool))
        {
            stage.outcome = Outcome::Inconclusive;
            stage.reason = format!(
                "doctor found {} broken here: {}",
                stage.tool.name(),
                check.detail
            );
        }
    }
}
