//! Cutting a sweep into shards: `--shard I/N`, or what Slurm's job arrays
//! and Kubernetes' Indexed Jobs put in the environment. The slice is a
//! pure function of the target list (and the durations of the last night,
//! when a history is given), so every shard computes the same split
//! without talking to the others.

use std::collections::BTreeMap;

use crate::errors::ExpectedError;

/// This process's part of the sweep: shard `index` of `count`, from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// From 0.
    pub index: u32,
    /// How many.
    pub count: u32,
}

impl Shard {
    /// The whole sweep.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// `I/N`, with I from 0 to N-1.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not I/N (e.g. 0/4: the first of four shards)"))?;
        let index: u32 = i
            .trim()
            .parse()
            .map_err(|_| format!("`{i}` in {text} is not a shard number"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("`{n}` in {text} is not a shard count"))?;
        Shard::new(index, count).ok_or_else(|| {
            format!("shard {text}: shards are numbered from 0 to N-1, and N is at least 1")
        })
    }

    /// Shard `index` of `count`, when that is one (count 1 to 10,000).
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (count >= 1 && index < count && count <= 10_000).then_some(Shard { index, count })
    }

    /// The shard from the environment: Slurm job arrays
    /// (`SLURM_ARRAY_TASK_ID` from `SLURM_ARRAY_TASK_MIN`, of
    /// `SLURM_ARRAY_TASK_COUNT`), or a Kubernetes Indexed Job
    /// (`JOB_COMPLETION_INDEX`, with the count from `shards`, since the
    /// Job does not export its completions). `None`: not sharded.
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
        shards: Option<u32>,
    ) -> Result<Option<Shard>, ExpectedError> {
        let number = |name: &str| -> Result<Option<u32>, ExpectedError> {
            match var(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| ExpectedError::Setup(format!("{name}={v} is not a number"))),
            }
        };
        if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
            let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let count = match (shards, number("SLURM_ARRAY_TASK_COUNT")?) {
                (Some(n), _) | (None, Some(n)) => n,
                (None, None) => {
                    return Err(ExpectedError::Setup(
                        "SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT: give --shard I/N".into(),
                    ));
                }
            };
            return Shard::new(id.saturating_sub(min), count).map(Some).ok_or_else(|| {
                ExpectedError::Setup(format!(
                    "Slurm array task {id} (from {min}) is not one of {count} shards: use --array=0-{}",
                    count.saturating_sub(1)
                ))
            });
        }
        if let Some(index) = number("JOB_COMPLETION_INDEX")? {
            let Some(count) = shards else {
                return Err(ExpectedError::Setup(
                    "JOB_COMPLETION_INDEX is set: give --shards N (the Job's completions) or --shard I/N".into(),
                ));
            };
            return Shard::new(index, count).map(Some).ok_or_else(|| {
                ExpectedError::Setup(format!(
                    "JOB_COMPLETION_INDEX={index} is not one of {count} shards"
                ))
            });
        }
        Ok(None)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Which shard runs each target, by position. Without durations, target
/// `i` goes to shard `i mod N`. With durations (seconds, by name, from the
/// last night), longest first onto the least loaded shard; a target
/// without a known duration counts as the median of the known ones. Ties
/// break by position, so the split is the same in every shard.
pub fn assign(names: &[String], count: u32, durations: &BTreeMap<String, f64>) -> Vec<u32> {
    let count = count.max(1) as usize;
    let known: Vec<f64> = names
        .iter()
        .filter_map(|n| durations.get(n).copied())
        .filter(|d| d.is_finite() && *d >= 0.0)
        .collect();
    if known.is_empty() {
        return (0..names.len()).map(|i| (i % count) as u32).collect();
    }
    let mut sorted = known.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let cost = |n: &String| {
        durations
            .get(n)
            .copied()
            .filter(|d| d.is_finite() && *d >= 0.0)
            .unwrap_or(median)
    };
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|a, b| cost(&names[*b]).total_cmp(&cost(&names[*a])).then(a.cmp(b)));
    let mut load = vec![0.0f64; count];
    let mut shard_of = vec![0u32; names.len()];
    for i in order {
        let lightest = (0..count)
            .min_by(|x, y| load[*x].total_cmp(&load[*y]).then(x.cmp(y)))
            .expect("at least one shard");
        load[lightest] += cost(&names[i]);
        shard_of[i] = lightest as u32;
    }
    shard_of
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("t{i:02}")).collect()
    }

    #[test]
    fn every_target_is_in_exactly_one_shard_for_one_to_ten_shards() {
        let targets = names(23);
        let mut durations = BTreeMap::new();
        for (i, n) in targets.iter().enumerate().step_by(2) {
            durations.insert(n.clone(), (i * 37 % 11) as f64 * 10.0);
        }
        for history in [BTreeMap::new(), durations] {
            for count in 1..=10u32 {
                let split = assign(&targets, count, &history);
                assert_eq!(split.len(), targets.len());
                assert!(split.iter().all(|s| *s < count));
                // Each shard computes the split on its own: it must be the same.
                assert_eq!(split, assign(&targets, count, &history));
                let mut per_shard = vec![0; count as usize];
                for s in &split {
                    per_shard[*s as usize] += 1;
                }
                assert!(per_shard.iter().all(|n| *n > 0), "{count}: {per_shard:?}");
            }
        }
    }

    #[test]
    fn durations_balance_the_shards() {
        let targets = names(5);
        let durations: BTreeMap<String, f64> = targets
            .iter()
            .cloned()
            .zip([100.0, 10.0, 10.0, 10.0, 70.0])
            .collect();
        let split = assign(&targets, 2, &durations);
        // 100 alone; 70 + 10 + 10 + 10 on the other.
        assert_eq!(split[0], 0);
        assert!(split[1..].iter().all(|s| *s == 1), "{split:?}");
    }

    #[test]
    fn the_shard_comes_from_slurm_or_kubernetes() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            Shard::from_env(slurm, None).unwrap(),
            Some(Shard { index: 2, count: 4 })
        );
        let k8s = env(&[("JOB_COMPLETION_INDEX", "1")]);
        assert_eq!(
            Shard::from_env(k8s, Some(3)).unwrap(),
            Some(Shard { index: 1, count: 3 })
        );
        assert!(Shard::from_env(env(&[("JOB_COMPLETION_INDEX", "1")]), None).is_err());
        assert_eq!(Shard::from_env(env(&[]), None).unwrap(), None);
        assert!(Shard::parse("4/4").is_err() && Shard::parse("x").is_err());
        assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, count: 4 }));
    }
}
