//! The processes of a program: which rank each is, on which GPU. A
//! multi-GPU program is a tree of processes (a launcher and one worker per
//! GPU); a finding says which of them it happened in, and the verdict
//! which rank failed first.

use serde::{Deserialize, Serialize};

/// One process of the program as a finding or a stage names it; every
/// field is optional because each source knows only some (a `[rank1]:`
/// prefix gives the rank, torchrun's summary the rank and the pid, NVML
/// the pid and the GPU).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProcessRef {
    /// The global rank (`RANK`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// The rank on its node (`LOCAL_RANK`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_rank: Option<u32>,
    /// The process id, in the run that saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The GPU it used, as NVML indexes it or by UUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
}

impl ProcessRef {
    /// A process known by its rank alone.
    pub fn rank(rank: u32) -> ProcessRef {
        ProcessRef {
            rank: Some(rank),
            ..ProcessRef::default()
        }
    }

    /// "rank 1", "rank 1 (pid 1051, GPU 1)", "pid 1051": what a person
    /// reads to find the process.
    pub fn describe(&self) -> String {
        let mut extra = Vec::new();
        if self.rank.is_some()
            && let Some(pid) = self.pid
        {
            extra.push(format!("pid {pid}"));
        }
        if let Some(gpu) = &self.gpu {
            extra.push(format!("GPU {gpu}"));
        }
        let head = match (self.rank, self.pid) {
            (Some(rank), _) => format!("rank {rank}"),
            (None, Some(pid)) => format!("pid {pid}"),
            (None, None) => "a process".to_string(),
        };
        if extra.is_empty() {
            head
        } else {
            format!("{head} ({})", extra.join(", "))
        }
    }

    /// Fills what `other` knows and this does not (the same process seen
    /// by two sources).
    pub fn merge(&mut self, other: &ProcessRef) {
        self.rank = self.rank.or(other.rank);
        self.local_rank = self.local_rank.or(other.local_rank);
        self.pid = self.pid.or(other.pid);
        if self.gpu.is_none() {
            self.gpu.clone_from(&other.gpu);
        }
    }
}

/// "rank 1", "ranks 0 and 1", "ranks 0, 1 and 3".
pub fn ranks_words(ranks: &[u32]) -> String {
    let names: Vec<String> = ranks.iter().map(u32::to_string).collect();
    match names.as_slice() {
        [] => "no rank".to_string(),
        [one] => format!("rank {one}"),
        [rest @ .., last] => format!("ranks {} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_named_by_what_is_known_of_it() {
        assert_eq!(ProcessRef::rank(1).describe(), "rank 1");
        let full = ProcessRef {
            rank: Some(1),
            local_rank: Some(1),
            pid: Some(1051),
            gpu: Some("1".into()),
        };
        assert_eq!(full.describe(), "rank 1 (pid 1051, GPU 1)");
        let pid_only = ProcessRef {
            pid: Some(7),
            ..ProcessRef::default()
        };
        assert_eq!(pid_only.describe(), "pid 7");
        assert_eq!(ranks_words(&[0, 1, 3]), "ranks 0, 1 and 3");
        assert_eq!(ranks_words(&[1]), "rank 1");
    }
}
