//! One try of a stage: the child supervised (time limit, orders, flood and
//! repeat watches, GPU memory sampled) and the commands its kind plans
//! after it. Its tries are `stage_run::run_tries`'s.

use std::time::Duration;

use cudawatch_model::ProcessEnd;
use cudawatch_model::Tool;

use super::child::{ChildEnd, ChildSpec, FloodWatch, Output, Steer, supervise};
use super::gpu_memory::Sampler;
use super::repeats::RepeatWatch;
use super::signals::{Shutdown, Signals};
use crate::plan::{Plan, Stage};
use crate::tools::{FollowUp, FollowUpContext, StageRecord, sanitizer};

/// The stage's flood watch, when it can flood and be made cheaper
/// (`tools::sanitizer::can_flood`) and the user did not turn it off.
fn flood_watch(plan: &Plan, stage: &Stage) -> Option<FloodWatch> {
    (plan.flood_records > 0 && sanitizer::can_flood(stage.tool, &stage.command.argv)).then_some(
        FloodWatch {
            marker: sanitizer::RECORD_END,
            limit: plan.flood_records,
        },
    )
}

/// The stage's repeat watch, when its records may only repeat themselves
/// in a loop its tool keeps alive (`tools::sanitizer::can_loop`) and the
/// user did not turn it off.
fn repeat_watch(plan: &Plan, stage: &Stage) -> Option<RepeatWatch> {
    (plan.loop_seconds > 0 && sanitizer::can_loop(stage.tool, &stage.command.argv)).then(|| {
        RepeatWatch {
            quiet: Duration::from_secs(plan.loop_seconds),
            ..RepeatWatch::default()
        }
    })
}

/// One try of the stage's command (`stage_run::run_tries` runs them all),
/// its flood watched unless a flood already made it run again
/// (`watch_floods`): its record and how its child ended.
pub(super) async fn run_once(
    plan: &Plan,
    stage: &Stage,
    (timeout, steer): (Duration, Option<tokio::sync::watch::Receiver<Steer>>),
    watch_floods: bool,
    signals: &mut Signals,
) -> (StageRecord, ChildEnd) {
    let flood = watch_floods.then(|| flood_watch(plan, stage)).flatten();
    let mut command = stage.command.clone();
    if stage.tool != Tool::Plain {
        super::rendezvous::own_port(&mut command.env);
    }
    let command = &command;
    let spec = ChildSpec {
        argv: command.argv.clone(),
        env: command.env.clone(),
        env_remove: command.env_remove.clone(),
        output: Output::Files {
            stdout: stage.dir.join("stdout"),
            stderr: stage.dir.join("stderr"),
        },
        timeout,
        grace: plan.timeouts.grace,
        stream: plan.stream,
        cwd: None,
        steer: steer.clone(),
        flood,
        repeats: repeat_watch(plan, stage),
    };
    // Every stage's peak GPU memory: the plain run's decides how many tool
    // stages fit at once; the tools' own show what each costs.
    let sampler = Some(Sampler::start());
    let end = match command
        .cannot_start
        .as_ref()
        .or(command.not_applicable.as_ref())
    {
        Some(why) => ChildEnd::not_started(why.clone()),
        None => {
            supervise(&spec, signals, |pgid| {
                if let Some(s) = &sampler {
                    s.watch(pgid);
                }
            })
            .await
        }
    };
    let sampled = sampler.map(Sampler::stop).unwrap_or_default();
    // The limit it ran under last (a stage started beside the plain run
    // got its own once the plain run's time was known).
    let timeout = match steer.map(|s| *s.borrow()) {
        Some(Steer::Limit(limit)) => limit,
        _ => timeout,
    };
    let mut env: Vec<String> = command
        .env
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    env.extend(command.env_remove.iter().map(|k| format!("-{k}")));
    let mut record = StageRecord {
        tool: stage.tool,
        command: command
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        env,
        end: end.end,
        seconds: end.seconds,
        timeout_seconds: timeout.as_secs_f64(),
        timed_out: end.timed_out,
        interrupted: end.interrupted,
        killed: end.killed,
        left_behind: end.left_behind,
        unfinished: false,
        // Not applicable is a fact about the program, not a failure to start.
        not_applicable: command.not_applicable.clone(),
        spawn_error: if command.not_applicable.is_some() {
            None
        } else {
            end.spawn_error.clone().or(end.write_error.clone())
        },
        gpu_memory_mib: sampled.peak,
        gpu_leader_only: sampled.leader_only,
        imports: Vec::new(),
        notes: sampled.note.into_iter().collect(),
        gpu_others: sampled.others,
        gpu_processes: sampled.tree,
        earlier_tries: Vec::new(),
        out_of_memory_at: None,
        collective_timeout_at: None,
        device_exception: None,
    };
    if end.end != ProcessEnd::NotStarted && !end.cancelled && !end.flooded && !end.repeating {
        record.imports = follow_ups(plan, stage, timeout, signals).await;
    }
    (record, end)
}

/// The commands the stage's kind plans after it (ncu's CSV imports, the
/// memory stage's rerun), each supervised like a stage. The kind is asked
/// again whenever one ends, so a command that needs another's output starts
/// as soon as that one is done, not when all that started with it are (ncu's
/// source pages wait for the raw page only, not for the slow call stacks);
/// nothing new starts once the user asked to stop. Returns how each ended,
/// in the order they started: one that failed left an artifact that cannot
/// be trusted.
async fn follow_ups(
    plan: &Plan,
    stage: &Stage,
    timeout: Duration,
    signals: &mut Signals,
) -> Vec<(String, ProcessEnd)> {
    let kind = crate::tools::kind(stage.tool);
    kind.after_stage(&stage.dir);
    let context = FollowUpContext {
        tool: stage.tool,
        stage_dir: &stage.dir,
        command: &stage.command,
        tools: &plan.tools,
        keep_dumps: plan.keep_dumps,
    };
    // In the order they started; `None` while running.
    let mut ends: Vec<(String, Option<ProcessEnd>)> = Vec::new();
    let mut running = tokio::task::JoinSet::new();
    let mut index_of = std::collections::HashMap::new();
    loop {
        let mut started_now = 0;
        if signals.shutdown() == Shutdown::None {
            let started: Vec<String> = ends.iter().map(|(name, _)| name.clone()).collect();
            let finished: Vec<String> = ends
                .iter()
                .filter(|(_, end)| end.is_some())
                .map(|(name, _)| name.clone())
                .collect();
            for next in kind.follow_ups(&context, &started, &finished) {
                started_now += 1;
                let index = ends.len();
                ends.push((next.name.clone(), None));
                let Some(spec) = follow_up_spec(plan, next, timeout) else {
                    ends[index].1 = Some(ProcessEnd::NotStarted);
                    continue;
                };
                // A task each: they run at once on the loop's thread, each
                // with its own view of the user's signals.
                let task = running.spawn_local(async move {
                    let mut signals = Signals::install();
                    supervise(&spec, &mut signals, |_| {}).await.end
                });
                index_of.insert(task.id(), index);
            }
        }
        if running.is_empty() {
            if started_now == 0 {
                break;
            }
            // Those planned could not start: the kind may plan others.
            continue;
        }
        let (id, end) = match running.join_next_with_id().await {
            Some(Ok((id, end))) => (id, end),
            Some(Err(error)) => (error.id(), ProcessEnd::NotStarted),
            None => break,
        };
        if let Some(&index) = index_of.get(&id) {
            ends[index].1 = Some(end);
        }
    }
    kind.after_follow_ups(&context);
    ends.into_iter()
        .map(|(name, end)| (name, end.unwrap_or(ProcessEnd::NotStarted)))
        .collect()
}

/// How a follow-up command is supervised; `None` when its folder cannot be
/// made.
fn follow_up_spec(plan: &Plan, next: FollowUp, timeout: Duration) -> Option<ChildSpec> {
    if let Some(dir) = next.stdout.parent() {
        std::fs::create_dir_all(dir).ok()?;
    }
    // A follow-up that runs the program again (initcheck's rerun with host
    // stacks, the memory stage's) may run beside other stages too.
    let mut env = next.env;
    super::rendezvous::own_port(&mut env);
    Some(ChildSpec {
        argv: next.argv,
        env,
        env_remove: next.env_remove,
        output: Output::Files {
            stdout: next.stdout,
            stderr: next.stderr,
        },
        // Its own limit, never past the stage's.
        timeout: next.timeout.map_or(timeout, |own| own.min(timeout)),
        grace: plan.timeouts.grace,
        stream: false,
        cwd: None,
        steer: None,
        flood: None,
        repeats: None,
    })
}
