//! The plain run's findings of a multi-process program, completed with what
//! the supervisor saw of its processes (`StageRecord::gpu_processes`: each
//! worker's pid, GPU and `RANK`/`WORLD_SIZE` from its environment): a site
//! that its output tied to a rank learns that rank's pid and GPU, and a
//! collective timeout names the ranks that never entered the collective.

use cudawatch_model::{FindingKind, ProcessRef, Site, Tool, ranks_words};

use super::StageRecord;

/// Completes the sites of a stage that reads the program's own output (the
/// plain run, the core dump, CSAN) from `record`'s processes.
pub fn attribute(sites: &mut [Site], record: &StageRecord) {
    for site in sites
        .iter_mut()
        .filter(|s| matches!(s.tool, Tool::Plain | Tool::Coredump | Tool::Csan))
    {
        for process in &mut site.processes {
            complete(process, record);
        }
    }
    let world = world_size(record);
    for site in sites
        .iter_mut()
        .filter(|s| s.tool == Tool::Plain && s.kind == FindingKind::CollectiveTimeout)
    {
        name_the_missing(site, world);
    }
}

/// `process` with the pid, GPU and ranks the stage saw the same worker
/// have (`StageRecord::gpu_processes`).
pub fn complete(process: &mut ProcessRef, record: &StageRecord) {
    if let Some(known) = record
        .gpu_processes
        .iter()
        .map(|p| p.reference())
        .find(|seen| same_process(seen, process))
    {
        process.merge(&known);
    }
}

/// How many ranks the program's workers said the job has (`WORLD_SIZE`).
pub fn world_size(record: &StageRecord) -> Option<u32> {
    record
        .gpu_processes
        .iter()
        .filter_map(|p| p.ranks.world_size)
        .max()
}

/// The same worker: the same rank, or (no rank known) the same local rank
/// or pid.
fn same_process(a: &ProcessRef, b: &ProcessRef) -> bool {
    match (a.rank, b.rank) {
        (Some(x), Some(y)) => x == y,
        _ => {
            (a.pid.is_some() && a.pid == b.pid)
                || (a.local_rank.is_some() && a.local_rank == b.local_rank)
        }
    }
}

/// "rank 0 waited in ALLREDUCE (sequence 11) until the process group's
/// timeout (40 s); rank 1 never entered it".
fn name_the_missing(site: &mut Site, world: Option<u32>) {
    let mut waiting: Vec<u32> = site.processes.iter().filter_map(|p| p.rank).collect();
    waiting.sort_unstable();
    waiting.dedup();
    if waiting.is_empty() {
        return;
    }
    let Some(head) = site.message.split(": another rank never entered it").next() else {
        return;
    };
    let missing: Vec<u32> = world
        .map(|w| (0..w).filter(|r| !waiting.contains(r)).collect())
        .unwrap_or_default();
    let tail = if missing.is_empty() {
        "another rank never entered it".to_string()
    } else {
        format!("{} never entered it", ranks_words(&missing))
    };
    site.message = format!("{} {head}; {tail}", ranks_words(&waiting));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{GpuProcess, Ranks};
    use cudawatch_model::Severity;

    #[test]
    fn a_timeout_names_who_waited_and_who_never_came() {
        let mut site = cudawatch_parsers::site::new_site(
            Tool::Plain,
            FindingKind::CollectiveTimeout,
            Severity::Error,
            "waited in ALLREDUCE (sequence 11) until the process group's timeout (40 s): \
             another rank never entered it"
                .into(),
        );
        site.processes.push(ProcessRef::rank(0));
        let mut record = StageRecord::unfinished(Tool::Plain);
        for (pid, rank) in [(10, 0), (11, 1)] {
            record.gpu_processes.push(GpuProcess {
                pid,
                gpu: rank.to_string(),
                mib: 500,
                executable: "python3".into(),
                ranks: Ranks {
                    rank: Some(rank),
                    local_rank: Some(rank),
                    world_size: Some(2),
                },
            });
        }
        let mut sites = vec![site];
        attribute(&mut sites, &record);
        assert_eq!(
            sites[0].message,
            "rank 0 waited in ALLREDUCE (sequence 11) until the process group's timeout (40 s); \
             rank 1 never entered it"
        );
        assert_eq!(sites[0].processes[0].pid, Some(10));
        assert_eq!(sites[0].processes[0].gpu.as_deref(), Some("0"));
    }
}
