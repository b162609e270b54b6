//! How many tool stages run at once after the plain run, and on which GPU:
//! as many as fit in each GPU's free memory (each stage needs about the
//! program's peak plus its tool's own memory), at most `--jobs`, spread
//! over the GPUs. Pure: the supervisor measures, this decides.
//!
//! Stages share a GPU well: the tools spend most of their time on the host
//! (instrumentation, records, replays), so five stages at once on one H100
//! took 40 s where one after another took 106 s (docs/benchmarks.md).

use cudawatch_model::Tool;

/// What the user allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concurrency {
    /// `-j/--jobs`: at most this many stages at once; `None`: one per CPU.
    pub jobs: Option<usize>,
    /// The GPUs stages may use (`--gpus`, else every visible one); empty
    /// when none is known.
    pub gpus: Vec<String>,
    /// Pin each stage to its GPU with `CUDA_VISIBLE_DEVICES` (several GPUs,
    /// or GPUs the user named).
    pub pin: bool,
}

impl Concurrency {
    /// One stage at a time.
    pub fn sequential() -> Concurrency {
        Concurrency {
            jobs: Some(1),
            gpus: Vec::new(),
            pin: false,
        }
    }
}

/// What was measured before the tool stages start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Measured {
    /// The plain run's peak GPU memory, MiB (`None`: not seen on a GPU, or
    /// not measurable).
    pub peak_mib: Option<u64>,
    /// Each GPU's free memory now, MiB (`None`: unknown), in `gpus` order.
    pub free_mib: Vec<Option<u64>>,
    /// How many GPUs the program's whole process tree used in its plain
    /// run (NVML's accounting of the tree's processes); `None` before the
    /// plain run has shown it, or when it could not be seen. A stage gets
    /// every GPU the program was given unless this says fewer will do.
    pub width: Option<usize>,
}

/// The decision: a slot per stage that may run at once (`Some(gpu)` pins
/// it), and why, in words for the progress line and `run.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// The slots; one slot is the sequential run.
    pub slots: Vec<Option<String>>,
    /// Why this many.
    pub why: String,
}

/// Only this share of a GPU's free memory is handed out: the program's
/// peak is sampled, not exact, and the driver needs room of its own.
const USABLE_SHARE: f64 = 0.85;

/// The GPU memory a stage of `tool` needs for a program whose plain run
/// peaked at `peak` MiB: its kind's figure (`StageKind::gpu_need_mib`).
pub fn need_mib(tool: Tool, peak: u64) -> u64 {
    crate::tools::kind(tool).gpu_need_mib(tool, peak)
}

/// How many of the stages needing `needs` MiB fit in `budget` MiB whichever
/// of them land together: the most such that the largest that many fit.
fn how_many_fit(needs: &[u64], budget: u64) -> usize {
    let mut sorted = needs.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let mut used = 0;
    sorted
        .iter()
        .take_while(|need| {
            used += **need;
            used <= budget
        })
        .count()
}

/// What a stage's `CUDA_VISIBLE_DEVICES` is when it runs in slot `start`:
/// `None` when nothing is pinned; the one GPU when the program was seen
/// on one GPU only; else every GPU the program was given, turned so that
/// the slot's GPUs come first (`1,0` on two GPUs), so a program that uses
/// fewer than it sees still lands on the slot's GPUs while one that uses
/// them all (a rank per GPU) finds every one. Never fewer GPUs than the
/// program was given, unless its plain run showed it needs fewer.
fn slot_at(allowed: &Concurrency, start: usize, width: Option<usize>) -> Option<String> {
    if !allowed.pin || allowed.gpus.is_empty() {
        return None;
    }
    let n = allowed.gpus.len();
    if width == Some(1) {
        return Some(allowed.gpus[start % n].clone());
    }
    let turned: Vec<&str> = (0..n)
        .map(|i| allowed.gpus[(start + i) % n].as_str())
        .collect();
    Some(turned.join(","))
}

/// Whether a stage started in slot `early` runs where the schedule's slot
/// `real` would put it, for a program `width` GPUs wide: the same GPUs
/// first, in any order (a program that uses one GPU uses the first it
/// sees; ranks on GPUs `1,0` are as good as on `0,1`).
pub fn same_place(early: Option<&str>, real: Option<&str>, width: Option<usize>) -> bool {
    match (early, real) {
        (Some(early), Some(real)) => {
            let first = |slot: &str| {
                let mut gpus: Vec<String> = slot.split(',').map(str::to_string).collect();
                let w = width.unwrap_or(gpus.len()).min(gpus.len());
                gpus.truncate(w);
                gpus.sort();
                gpus
            };
            first(early) == first(real)
        }
        (early, real) => early == real,
    }
}

/// The GPUs a stage of a program `width` GPUs wide needs together: groups
/// of `width` consecutive GPUs of the list (one group when the program
/// needs as many as there are, or its width is unknown).
fn groups(gpus: usize, width: Option<usize>) -> Vec<std::ops::Range<usize>> {
    match width {
        Some(w) if w >= 1 && w < gpus => (0..gpus / w).map(|g| g * w..(g + 1) * w).collect(),
        Some(_) => std::iter::once(0..gpus).collect(),
        // Unknown: each GPU may be where the program lands first.
        None => (0..gpus).map(|g| g..g + 1).collect(),
    }
}

/// The slots for `stages` (the tool stages left after the plain run).
// Over 100 lines on purpose: the schedule's decisions in order, each said in
// its reason.
pub fn schedule(
    allowed: &Concurrency,
    stages: &[Tool],
    measured: &Measured,
    cpus: usize,
) -> Schedule {
    let cap = allowed.jobs.unwrap_or(cpus).max(1).min(stages.len().max(1));
    let width = measured.width;
    let first = slot_at(allowed, 0, width);
    if cap == 1 {
        let why = if allowed.jobs == Some(1) {
            "one stage at a time (--jobs 1)".to_string()
        } else if stages.len() <= 1 {
            "one tool stage".to_string()
        } else {
            "one stage at a time (one CPU)".to_string()
        };
        return Schedule {
            slots: vec![first],
            why: format!("{why}{}", width_words(allowed, width)),
        };
    }
    if allowed.gpus.is_empty() {
        return Schedule {
            slots: vec![None; cap],
            why: format!("{cap} stages at once (no GPU listed, nothing to share)"),
        };
    }
    let groups = groups(allowed.gpus.len(), width);
    let known_free = measured.free_mib.iter().any(Option::is_some);
    if !known_free {
        // Nothing measured: a stage per group of GPUs, which no program's
        // own memory can make worse than its plain run.
        let slots: Vec<Option<String>> = groups
            .iter()
            .take(cap)
            .map(|g| slot_at(allowed, g.start, width))
            .collect();
        let n = slots.len();
        return Schedule {
            slots,
            why: if n == 1 {
                format!(
                    "one stage at a time (the GPU's free memory could not be read){}",
                    width_words(allowed, width)
                )
            } else {
                format!("{n} stages at once, one per GPU (free memory could not be read)")
            },
        };
    }
    let peak = measured.peak_mib.unwrap_or(0);
    // A program over several GPUs holds its peak spread over them: each
    // GPU of a group carries its share.
    let share = match width {
        Some(w) if w > 1 => peak / w as u64,
        _ => peak,
    };
    let needs: Vec<u64> = stages.iter().map(|t| need_mib(*t, share).max(1)).collect();
    let (least, most) = (
        needs.iter().copied().min().unwrap_or(1),
        needs.iter().copied().max().unwrap_or(1),
    );
    // A group fits as many as its fullest GPU does.
    let fits: Vec<usize> = groups
        .iter()
        .map(|g| {
            g.clone()
                .map(|i| match measured.free_mib.get(i).copied().flatten() {
                    Some(free) => how_many_fit(&needs, (free as f64 * USABLE_SHARE) as u64),
                    // A GPU whose memory could not be read takes one, as before.
                    None => 1,
                })
                .min()
                .unwrap_or(1)
        })
        .collect();
    let (slots, taken) = round_robin(allowed, &groups, &fits, (cap, width));
    let slots = longest_first(slots, stages);
    let free_total: u64 = measured.free_mib.iter().flatten().sum();
    let peak_words = match measured.peak_mib {
        Some(p) => format!("the plain run peaked at {}", mib(p)),
        None => "the plain run was not seen on a GPU".to_string(),
    };
    if slots.len() <= 1 {
        return Schedule {
            slots: vec![first],
            why: format!(
                "one stage at a time: {peak_words} and its stages need {}, with {} free{}",
                needs_words(least, most),
                mib(free_total),
                width_words(allowed, width)
            ),
        };
    }
    let gpus_used = taken.iter().filter(|t| **t > 0).count();
    let n = slots.len();
    let limit = if n == cap {
        match allowed.jobs {
            Some(j) => format!(" (--jobs {j})"),
            None if cap < stages.len() => " (one per CPU)".to_string(),
            None => String::new(),
        }
    } else {
        String::new()
    };
    Schedule {
        slots,
        why: format!(
            "{n} stages at once on {}{limit}: {peak_words}, its stages need {}, {} free",
            if gpus_used == 1 && groups.len() > 1 {
                format!(
                    "GPU {}",
                    allowed.gpus[groups[taken.iter().position(|t| *t > 0).unwrap_or(0)].start]
                )
            } else if width.is_some_and(|w| w > 1) {
                format!(
                    "{} GPUs, each stage with the {} the program used",
                    allowed.gpus.len(),
                    width.unwrap_or(1)
                )
            } else if gpus_used == 1 {
                format!("GPU {}", allowed.gpus[0])
            } else {
                format!("{gpus_used} GPUs")
            },
            needs_words(least, most),
            mib(free_total)
        ),
    }
}

/// The slots, spread over the groups of GPUs before any group takes two,
/// each group taking at most what fits in it, `cap` in all; and how many
/// each group took.
fn round_robin(
    allowed: &Concurrency,
    groups: &[std::ops::Range<usize>],
    fits: &[usize],
    (cap, width): (usize, Option<usize>),
) -> (Vec<Option<String>>, Vec<usize>) {
    let mut slots = Vec::new();
    let mut taken = vec![0usize; fits.len()];
    'fill: while slots.len() < cap {
        let mut added = false;
        for (i, group) in groups.iter().enumerate() {
            if slots.len() == cap {
                break 'fill;
            }
            if taken[i] < fits[i] {
                taken[i] += 1;
                slots.push(slot_at(allowed, group.start, width));
                added = true;
            }
        }
        if !added {
            break;
        }
    }
    (slots, taken)
}

/// How long a stage kind takes against the others: its kind's figure
/// (`StageKind::relative_cost`).
fn relative_cost(tool: Tool) -> u32 {
    crate::tools::kind(tool).relative_cost(tool)
}

/// The slots of the stages that start together, placed by cost when they
/// lie on several GPUs: longest first, each on the GPU with the least work
/// placed so far among those with a slot left (LPT), so racecheck, ncu and
/// initcheck do not share a GPU while another runs short stages, whatever
/// order `--stages` names them in. Slot `k` is stage `k`'s (the pool starts
/// stages in order); slots past the stages, taken as stages end, keep
/// their order.
fn longest_first(slots: Vec<Option<String>>, stages: &[Tool]) -> Vec<Option<String>> {
    let n = slots.len().min(stages.len());
    // Each GPU (or group) with its slots left and the cost placed on it.
    let mut gpus: Vec<(Option<String>, usize, u32)> = Vec::new();
    for slot in &slots[..n] {
        match gpus.iter_mut().find(|g| g.0 == *slot) {
            Some(g) => g.1 += 1,
            None => gpus.push((slot.clone(), 1, 0)),
        }
    }
    if gpus.len() < 2 {
        return slots;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(relative_cost(stages[i])));
    let mut placed: Vec<Option<String>> = vec![None; n];
    for i in order {
        let Some(gpu) = gpus.iter_mut().filter(|g| g.1 > 0).min_by_key(|g| g.2) else {
            break;
        };
        gpu.1 -= 1;
        gpu.2 += relative_cost(stages[i]);
        placed[i] = gpu.0.clone();
    }
    placed
        .into_iter()
        .chain(slots[n..].iter().cloned())
        .collect()
}

/// What the schedule's reason says of a program over several GPUs.
fn width_words(allowed: &Concurrency, width: Option<usize>) -> String {
    match width {
        Some(w) if w > 1 && allowed.pin => {
            format!(", each stage with every GPU: the program used {w}")
        }
        _ => String::new(),
    }
}

/// The program's peak assumed before its plain run has shown it, for the
/// stages started beside that run: a training step of a small or middling
/// model (the real corpus peaks at 0.8 to 1.4 GiB). A program that needs
/// more is caught by the watch on the GPU's free memory and by the checks
/// for a crowded stage (`supervisor::head_start`); it costs those stages a
/// second start, never a wrong report.
pub const ASSUMED_PEAK_MIB: u64 = 4096;

/// The stages that start beside the plain run, before its peak is known
/// (the plain run's own memory, assumed, taken from the free memory
/// first): `None` when none should, with `--jobs 1`, with fewer than two
/// tool stages, when no GPU's free memory could be read (nothing would
/// then watch for a program that fills it), or when fewer than two would
/// fit. The plain run counts against `--jobs` (and takes a CPU) like any
/// stage.
pub fn head_start(
    allowed: &Concurrency,
    stages: &[Tool],
    free_mib: &[Option<u64>],
    cpus: usize,
) -> Option<Schedule> {
    let beside = allowed.jobs.unwrap_or(cpus).saturating_sub(1);
    if beside == 0 || stages.len() < 2 || !free_mib.iter().any(Option::is_some) {
        return None;
    }
    let measured = Measured {
        // Not known before the plain run: every stage sees every GPU.
        width: None,
        peak_mib: Some(ASSUMED_PEAK_MIB),
        free_mib: free_mib
            .iter()
            .map(|f| f.map(|f| f.saturating_sub(ASSUMED_PEAK_MIB)))
            .collect(),
    };
    let by_memory = Concurrency {
        jobs: Some(stages.len()),
        ..allowed.clone()
    };
    let mut decided = schedule(&by_memory, stages, &measured, cpus);
    if decided.slots.len() < 2 {
        return None;
    }
    decided.slots.truncate(beside);
    decided.why = format!(
        "{} stage{} start{} beside the plain run (each GPU's free memory: {}; a program up to {} assumed until the plain run shows its peak)",
        decided.slots.len(),
        if decided.slots.len() == 1 { "" } else { "s" },
        if decided.slots.len() == 1 { "s" } else { "" },
        free_mib
            .iter()
            .map(|f| f.map_or_else(|| "unknown".to_string(), mib))
            .collect::<Vec<_>>()
            .join(", "),
        mib(ASSUMED_PEAK_MIB)
    );
    Some(decided)
}

/// "about 2.4 GiB" or "1.2 to 2.4 GiB".
fn needs_words(least: u64, most: u64) -> String {
    if mib(least) == mib(most) {
        format!("about {}", mib(most))
    } else {
        format!("{} to {} each", mib(least), mib(most))
    }
}

fn mib(n: u64) -> String {
    cudawatch_model::size(n.saturating_mul(1024 * 1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTHON_STAGES: [Tool; 7] = [
        Tool::Memcheck,
        Tool::Racecheck,
        Tool::Initcheck,
        Tool::Synccheck,
        Tool::Ncu,
        Tool::Csan,
        Tool::Memory,
    ];

    fn allowed(jobs: Option<usize>, gpus: &[&str]) -> Concurrency {
        Concurrency {
            jobs,
            gpus: gpus.iter().map(|g| g.to_string()).collect(),
            pin: gpus.len() > 1,
        }
    }

    #[test]
    fn a_small_program_runs_every_stage_at_once_on_one_gpu() {
        let s = schedule(
            &allowed(None, &["0"]),
            &PYTHON_STAGES,
            &Measured {
                width: Some(1),
                peak_mib: Some(900),
                free_mib: vec![Some(80_000)],
            },
            16,
        );
        assert_eq!(s.slots, vec![None; 7]);
        assert!(s.why.starts_with("7 stages at once on GPU 0"), "{}", s.why);
    }

    #[test]
    fn a_small_program_starts_every_stage_beside_its_plain_run_on_an_idle_gpu() {
        let s = head_start(&allowed(None, &["0"]), &PYTHON_STAGES, &[Some(80_000)], 16)
            .expect("an idle H100 has room");
        assert_eq!(s.slots.len(), 7);
        assert!(s.why.contains("beside the plain run"), "{}", s.why);
        // The plain run counts against --jobs and the CPUs.
        let s = head_start(
            &allowed(Some(4), &["0"]),
            &PYTHON_STAGES,
            &[Some(80_000)],
            16,
        );
        assert_eq!(s.map(|s| s.slots.len()), Some(3));
        let s = head_start(&allowed(None, &["0"]), &PYTHON_STAGES, &[Some(80_000)], 2);
        assert_eq!(s.map(|s| s.slots.len()), Some(1));
    }

    #[test]
    fn no_head_start_when_sequential_unmeasured_or_crowded() {
        let stages = &PYTHON_STAGES;
        assert_eq!(
            head_start(&allowed(Some(1), &["0"]), stages, &[Some(80_000)], 16),
            None
        );
        assert_eq!(
            head_start(&allowed(None, &["0"]), stages, &[None], 16),
            None
        );
        assert_eq!(head_start(&allowed(None, &[]), stages, &[], 16), None);
        // A GPU already mostly taken by someone else: at most one would fit.
        assert_eq!(
            head_start(&allowed(None, &["0"]), stages, &[Some(12_000)], 16),
            None
        );
        assert_eq!(
            head_start(&allowed(None, &["0"]), &stages[..1], &[Some(80_000)], 16),
            None
        );
    }

    #[test]
    fn a_small_gpu_starts_fewer_beside_the_plain_run() {
        let s = head_start(&allowed(None, &["0"]), &PYTHON_STAGES, &[Some(24_000)], 16)
            .expect("room for some");
        assert!((2..7).contains(&s.slots.len()), "{:?}", s.slots);
    }

    #[test]
    fn jobs_caps_and_jobs_one_is_the_sequential_run() {
        let m = Measured {
            width: Some(1),
            peak_mib: Some(900),
            free_mib: vec![Some(80_000)],
        };
        let s = schedule(&allowed(Some(3), &["0"]), &PYTHON_STAGES, &m, 16);
        assert_eq!(s.slots.len(), 3);
        assert!(
            s.why.starts_with("3 stages at once on GPU 0 (--jobs 3): "),
            "{}",
            s.why
        );
        let s = schedule(&allowed(Some(1), &["0"]), &PYTHON_STAGES, &m, 16);
        assert_eq!(s.slots.len(), 1);
        assert_eq!(s.why, "one stage at a time (--jobs 1)");
        let s = schedule(&allowed(None, &["0"]), &PYTHON_STAGES, &m, 2);
        assert_eq!(s.slots.len(), 2, "one per CPU by default");
    }

    #[test]
    fn a_program_that_needs_most_of_the_gpu_runs_its_stages_one_at_a_time() {
        let s = schedule(
            &allowed(None, &["0"]),
            &PYTHON_STAGES,
            &Measured {
                width: Some(1),
                peak_mib: Some(60_000),
                free_mib: vec![Some(79_000)],
            },
            16,
        );
        assert_eq!(s.slots, vec![None]);
        assert!(
            s.why
                .starts_with("one stage at a time: the plain run peaked at 58.6 GiB"),
            "{}",
            s.why
        );
    }

    #[test]
    fn memory_that_fits_four_gives_four() {
        // ncu needs 2 x 10 GiB + 1 GiB = 21 GiB, initcheck 12.5, the rest
        // 11.5: the largest four (56.5 GiB) fit in 0.85 x 79 GiB, five do not.
        let s = schedule(
            &allowed(None, &["0"]),
            &PYTHON_STAGES,
            &Measured {
                width: Some(1),
                peak_mib: Some(10_240),
                free_mib: vec![Some(80_896)],
            },
            16,
        );
        assert_eq!(s.slots.len(), 4);
        assert!(
            s.why.contains("its stages need 11.5 GiB to 21.0 GiB each"),
            "{}",
            s.why
        );
    }

    #[test]
    fn a_program_holding_a_fifth_of_the_gpu_runs_two_stages_at_once() {
        // tests/gpu/beyond/most_memory.py with SHARE=0.2 on the H100: the
        // plain run peaked at 17,026 MiB with 81,100 free. The stages' own
        // peaks beside it: memcheck +146, racecheck +34, initcheck +2,088,
        // ncu +16,532 MiB. The old rule (twice the peak for every stage)
        // ran them one at a time.
        let s = schedule(
            &allowed(None, &["0"]),
            &PYTHON_STAGES,
            &Measured {
                width: Some(1),
                peak_mib: Some(17_026),
                free_mib: vec![Some(81_100)],
            },
            16,
        );
        assert_eq!(s.slots.len(), 2, "{}", s.why);
    }

    #[test]
    fn stages_spread_over_gpus_before_doubling_up_and_are_pinned() {
        let s = schedule(
            &allowed(None, &["0", "1"]),
            &PYTHON_STAGES[..5],
            &Measured {
                width: Some(1),
                peak_mib: Some(900),
                free_mib: vec![Some(80_000), Some(80_000)],
            },
            16,
        );
        let names: Vec<&str> = s.slots.iter().map(|g| g.as_deref().unwrap()).collect();
        // memcheck, racecheck, initcheck, synccheck, ncu: racecheck and ncu
        // apart, initcheck beside ncu, the short ones with racecheck.
        assert_eq!(names, ["0", "0", "1", "0", "1"]);
        assert!(s.why.contains("on 2 GPUs"), "{}", s.why);
    }

    #[test]
    fn the_long_stages_are_placed_apart_whatever_order_they_are_named_in() {
        // Round robin put racecheck and initcheck together, ncu and
        // memcheck together, when --stages named them in this order.
        let stages = [Tool::Racecheck, Tool::Ncu, Tool::Initcheck, Tool::Memcheck];
        let s = schedule(
            &allowed(None, &["0", "1"]),
            &stages,
            &Measured {
                width: Some(1),
                peak_mib: Some(900),
                free_mib: vec![Some(80_000), Some(80_000)],
            },
            16,
        );
        let on = |gpu: &str| -> Vec<Tool> {
            (0..stages.len())
                .filter(|&i| s.slots[i].as_deref() == Some(gpu))
                .map(|i| stages[i])
                .collect()
        };
        assert_eq!(on("0"), [Tool::Racecheck, Tool::Memcheck]);
        assert_eq!(on("1"), [Tool::Ncu, Tool::Initcheck]);
    }

    #[test]
    fn unknown_free_memory_gives_one_stage_per_gpu() {
        let s = schedule(
            &allowed(None, &["0", "1"]),
            &PYTHON_STAGES,
            &Measured {
                width: Some(1),
                peak_mib: Some(900),
                free_mib: vec![None, None],
            },
            16,
        );
        assert_eq!(s.slots.len(), 2);
        let s = schedule(
            &allowed(None, &["0"]),
            &PYTHON_STAGES,
            &Measured::default(),
            16,
        );
        assert_eq!(s.slots.len(), 1);
        assert!(s.why.contains("could not be read"), "{}", s.why);
    }

    #[test]
    fn without_a_gpu_stages_share_only_the_cpus() {
        let s = schedule(
            &allowed(None, &[]),
            &PYTHON_STAGES[..4],
            &Measured::default(),
            16,
        );
        assert_eq!(s.slots, vec![None; 4]);
    }

    #[test]
    fn a_program_over_two_gpus_keeps_both_in_every_stage() {
        // A two-rank DDP step: each stage must see both GPUs, or rank 1's
        // set_device(1) fails (seen on two H100s before this rule).
        let s = schedule(
            &allowed(None, &["0", "1"]),
            &PYTHON_STAGES,
            &Measured {
                width: Some(2),
                peak_mib: Some(3000),
                free_mib: vec![Some(80000), Some(80000)],
            },
            16,
        );
        assert!(s.slots.len() > 1, "{s:?}");
        assert!(
            s.slots.iter().all(|slot| slot.as_deref() == Some("0,1")),
            "{s:?}"
        );
        assert!(
            s.why.contains("each stage with the 2 the program used"),
            "{}",
            s.why
        );
    }

    #[test]
    fn before_the_plain_run_every_stage_sees_every_gpu_turned_to_its_own() {
        let s = schedule(
            &allowed(None, &["0", "1"]),
            &PYTHON_STAGES,
            &Measured {
                width: None,
                peak_mib: Some(1000),
                free_mib: vec![Some(80000), Some(80000)],
            },
            16,
        );
        assert!(s.slots.contains(&Some("0,1".to_string())), "{s:?}");
        assert!(s.slots.contains(&Some("1,0".to_string())), "{s:?}");
        // Alone, too: never one GPU for a program that was given two.
        let one = schedule(
            &allowed(Some(1), &["0", "1"]),
            &PYTHON_STAGES,
            &Measured::default(),
            16,
        );
        assert_eq!(one.slots, vec![Some("0,1".to_string())]);
    }

    #[test]
    fn a_two_gpu_program_on_four_gpus_gets_pairs() {
        let s = schedule(
            &allowed(None, &["0", "1", "2", "3"]),
            &PYTHON_STAGES,
            &Measured {
                width: Some(2),
                peak_mib: Some(2000),
                free_mib: vec![Some(80000); 4],
            },
            16,
        );
        assert!(s.slots.contains(&Some("0,1,2,3".to_string())), "{s:?}");
        assert!(s.slots.contains(&Some("2,3,0,1".to_string())), "{s:?}");
    }

    #[test]
    fn a_stage_started_beside_the_plain_run_stays_where_the_program_would_land_anyway() {
        assert!(same_place(Some("1,0"), Some("1"), Some(1)));
        assert!(!same_place(Some("0,1"), Some("1"), Some(1)));
        assert!(same_place(Some("0,1"), Some("0,1"), Some(2)));
        // Two ranks on GPUs 1 and 0 are as good as on 0 and 1: no restart
        // (three stages were started again for this on two H100s).
        assert!(same_place(Some("1,0"), Some("0,1"), Some(2)));
        assert!(!same_place(Some("1,2,3,0"), Some("0,1,2,3"), Some(2)));
        assert!(same_place(None, None, None));
    }
}
