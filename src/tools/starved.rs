//! A stage crowded out by the stages beside it: it ran out of GPU memory
//! (what the tools and the libraries print when an allocation fails, found
//! in its output and not in the plain run's), it could not bind the port
//! another run of the program held (a torch.distributed rendezvous), or the
//! program crashed under a sanitizer before the end of the work the plain
//! run finished. Such a stage is run again alone (`supervisor::stage_loop`),
//! never reported as the program's failure.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use cudawatch_model::{ProcessEnd, Tool};

use super::StageRecord;

/// What an allocation that failed for lack of GPU memory prints, as seen
/// in real captures (sample-reports/beyond/hog-*: memcheck's "due to \"out
/// of memory\"", cuBLAS's ALLOC_FAILED, PyTorch's OutOfMemoryError) and as
/// compute-sanitizer words its own failure ("Unable to allocate enough
/// memory", issue 21).
const SIGNS: [&str; 6] = [
    "out of memory",
    "Unable to allocate enough memory",
    "CUBLAS_STATUS_ALLOC_FAILED",
    "CUDNN_STATUS_ALLOC_FAILED",
    "cudaErrorMemoryAllocation",
    "CUDA_ERROR_OUT_OF_MEMORY",
];

/// What a program prints when the port it listens on is taken: Python's
/// `OSError: [Errno 98] Address already in use`, and torch.distributed's
/// `DistNetworkError: The server socket has failed to listen on any local
/// network address. port: 29500, ... name: EADDRINUSE, message: address
/// already in use` (`sample-reports/beyond/ddp_ports/`). Each tool stage has
/// a rendezvous port of its own (`supervisor::rendezvous`); a port written
/// into the program is still shared.
const PORT_SIGNS: [&str; 2] = ["address already in use", "Address already in use"];

/// Only the end of an output is read: an allocation failure ends a run,
/// and a flood of records before it must not be read whole.
const TAIL: u64 = 256 * 1024;

/// Why the stage of `tool` in `stage_dir` looks starved of GPU memory (the
/// sign it printed), when the plain run in `plain_dir` printed no such
/// sign; `None` otherwise. The oom-recovery stage runs out on purpose.
pub fn of_memory(tool: Tool, stage_dir: &Path, plain_dir: Option<&Path>) -> Option<String> {
    if matches!(tool, Tool::Plain | Tool::OomRecovery) {
        return None;
    }
    let sign = sign_in(stage_dir)?;
    if plain_dir.and_then(sign_in).is_some() {
        return None;
    }
    Some(format!(
        "ran out of GPU memory (it printed \"{sign}\", the plain run did not)"
    ))
}

/// Why a stage is to be run again alone because a run of the program
/// beside it held the port it listens on, when the plain run in
/// `plain_dir` printed no such sign; `None` otherwise.
pub fn of_port(tool: Tool, stage_dir: &Path, plain_dir: Option<&Path>) -> Option<String> {
    if tool == Tool::Plain {
        return None;
    }
    let sign = port_sign_in(stage_dir)?;
    if plain_dir.and_then(port_sign_in).is_some() {
        return None;
    }
    Some(format!(
        "could not listen on its port (it printed \"{sign}\", the plain run did not)"
    ))
}

/// Why a plain run that had tool stages beside it (started before its peak
/// was known) is to be run again alone: it printed that an allocation
/// failed, or that the port it listens on was taken. Alone it shows
/// whether the program itself fails so, which is what the report must say
/// (and what the oom stages then look into).
pub fn plain_crowded(plain_dir: &Path) -> Option<String> {
    if let Some(sign) = sign_in(plain_dir) {
        if under_its_own_cap(plain_dir) {
            return None;
        }
        return Some(format!(
            "ran out of GPU memory (it printed \"{sign}\") with tool stages beside it"
        ));
    }
    let sign = port_sign_in(plain_dir)?;
    Some(format!(
        "could not listen on its port (it printed \"{sign}\") with tool stages beside it"
    ))
}

/// Whether the plain run's out-of-memory error says the GPU had room to
/// spare: PyTorch's message gives the GPU's free memory when the
/// allocation failed ("... of which 72.18 GiB is free"). With a gibibyte
/// more free than it asked for, the allocation failed against the
/// program's own cap (`set_per_process_memory_fraction`, a framework's
/// preallocated pool), not for what the stages beside it took: alone it
/// fails the same way, so it is not run again (measured on the H100: a
/// GPT-2 step capped at 6 GB ran twice, 15 s each, for nothing). Nor
/// when it asked for more than the whole GPU holds (`oom_rank1` on two
/// H200s: 200 GiB of 139.8, stopped 8 stages and ran again for nothing).
fn under_its_own_cap(plain_dir: &Path) -> bool {
    const SPARE: u64 = 1 << 30;
    let text: String = ["stderr", "stdout"]
        .iter()
        .filter_map(|name| tail(&plain_dir.join(name)))
        .collect();
    cudawatch_parsers::program::parse(text.as_bytes())
        .iter()
        .filter_map(|site| site.memory.as_ref())
        .any(|m| {
            let room_to_spare = matches!((m.free, m.tried),
                (Some(free), Some(tried)) if free >= tried.saturating_add(SPARE));
            let beyond_the_gpu =
                matches!((m.capacity, m.tried), (Some(all), Some(tried)) if tried > all);
            room_to_spare || beyond_the_gpu
        })
}

/// Why a sanitizer stage that ran beside others is to be run again alone
/// though no allocation failed: the program crashed under the tool
/// ("didn't terminate successfully") before the end of its work, where the
/// plain run (`plain_ok`) finished cleanly. Seen on the H100 with ten
/// programs' stages sharing one machine: a DataLoader step's initcheck
/// crashed halfway beside the others and ran to its end alone. A crash
/// after all the work (at teardown) is not rerun: alone it crashes too.
pub fn crashed(
    tool: Tool,
    stage_dir: &Path,
    plain_dir: Option<&Path>,
    plain_ok: bool,
) -> Option<String> {
    if !plain_ok
        || !matches!(
            tool,
            Tool::Memcheck | Tool::Racecheck | Tool::Initcheck | Tool::Synccheck
        )
    {
        return None;
    }
    let stdout = tail(&stage_dir.join("stdout"))?;
    if !stdout.contains("didn't terminate successfully") {
        return None;
    }
    let plain = std::fs::read(plain_dir?.join("stdout")).unwrap_or_default();
    if crate::tools::sanitizer::output_complete(&plain, stdout.as_bytes()) {
        return None;
    }
    Some(
        "the program crashed under the tool before the end of its work (the plain run finished it)"
            .into(),
    )
}

/// Why an ncu stage that ran beside others is to be run again alone: ncu
/// failed to profile a launch and shut the program down, where the plain
/// run finished. Seen on two H200s with FSDP2's step (`fsdp_step`, its
/// eight stages beside another program's): "Failed to profile
/// \"split_with_sizes_copy_out_con...\"", exit 9, the same kernel
/// profiled in the round before. And on one H200 with the DataLoader step
/// beside two other programs' checks (`sample-reports/beyond/
/// ncu_counters_beside/`): "An error was reported by the counter
/// measurement library: LaunchFailed", exit 9, where the plain run (no
/// fault) finished and the same step alone is profiled whole.
pub fn profile_failed(tool: Tool, stage_dir: &Path, plain_ok: bool) -> Option<String> {
    if tool != Tool::Ncu || !plain_ok {
        return None;
    }
    let stdout = tail(&stage_dir.join("stdout"))?;
    let summary = cudawatch_parsers::ncu::log::parse(stdout.as_bytes());
    let failed = summary.failures.iter().find(|f| {
        f.starts_with("Failed to profile")
            || f.starts_with("An error was reported by the counter measurement library")
    })?;
    Some(format!(
        "ncu shut the program down (\"{}\")",
        failed.chars().take(100).collect::<String>()
    ))
}

/// Why a sanitizer stage is run once more though nothing crowded it:
/// compute-sanitizer itself (the stage's own process; a program that
/// crashes under it is reported by the tool, which then exits) died of a
/// fault signal before printing its summary, and nobody stopped it. Seen
/// on the H100 with compute-sanitizer 2025.3.1 and a small JAX training
/// step (`sample-reports/beyond/jax_step`): SIGSEGV in every run with XLA's
/// autotuner on, and in 3 of 18 with it off, at random points, the next
/// run of the same command whole. A second crash is reported as it is.
pub fn tool_crashed(record: &StageRecord, stage_dir: &Path) -> Option<String> {
    if !Tool::SANITIZERS.contains(&record.tool)
        || record.timed_out
        || record.interrupted
        || record.killed
    {
        return None;
    }
    let ProcessEnd::Signaled(signal) = record.end else {
        return None;
    };
    let name = FAULTS.iter().find(|(n, _)| *n == signal)?.1;
    if tail(&stage_dir.join("stdout")).is_some_and(|t| t.contains("ERROR SUMMARY")) {
        return None;
    }
    Some(format!(
        "compute-sanitizer itself died of signal {signal} ({name}) before its summary"
    ))
}

/// The signals of a process's own fault, by number (Linux).
const FAULTS: [(i32, &str); 5] = [
    (4, "SIGILL"),
    (6, "SIGABRT"),
    (7, "SIGBUS"),
    (8, "SIGFPE"),
    (11, "SIGSEGV"),
];

fn sign_in(dir: &Path) -> Option<&'static str> {
    printed(dir, &SIGNS)
}

fn port_sign_in(dir: &Path) -> Option<&'static str> {
    printed(dir, &PORT_SIGNS)
}

/// The first of `signs` that the end of a stage's stdout or stderr in
/// `dir` holds.
pub(crate) fn printed(dir: &Path, signs: &[&'static str]) -> Option<&'static str> {
    ["stdout", "stderr"].iter().find_map(|name| {
        let text = tail(&dir.join(name))?;
        signs.iter().copied().find(|sign| text.contains(sign))
    })
}

fn tail(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
    let mut bytes = Vec::new();
    file.take(TAIL).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_run_that_hit_its_own_memory_cap_is_not_crowded() {
        // The message of the H100 run of tests/gpu/real/gpt2_oom_step.py
        // (capped at 8% of the GPU, seven stages beside it).
        let capped = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 36.00 MiB. \
            GPU 0 has a total capacity of 79.18 GiB of which 72.18 GiB is free. Including \
            non-PyTorch memory, this process has 6.99 GiB memory in use. 6.33 GiB allowed; \
            Of the allocated memory 6.27 GiB is allocated by PyTorch, and 65.03 MiB is \
            reserved by PyTorch but unallocated.\n";
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stderr"), capped).unwrap();
        assert_eq!(plain_crowded(dir.path()), None);
        // The GPU itself full: the stages beside it may have taken it.
        let full = capped.replace("72.18 GiB is free", "50.62 MiB is free");
        std::fs::write(dir.path().join("stderr"), full).unwrap();
        assert_eq!(
            plain_crowded(dir.path()).as_deref(),
            Some("ran out of GPU memory (it printed \"out of memory\") with tool stages beside it")
        );
    }

    #[test]
    fn a_plain_run_that_asked_for_more_than_the_gpu_holds_is_not_crowded() {
        // oom_rank1 on two H100s: rank 1 asks for 200 GiB; beside stages or
        // alone, it fails the same way.
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/sample-reports/multi/oom_rank1/plain.stderr"
            ),
            dir.path().join("stderr"),
        )
        .unwrap();
        assert_eq!(plain_crowded(dir.path()), None);
    }

    #[test]
    fn ncu_that_failed_to_profile_beside_others_runs_again_alone() {
        let dir = dir_with(
            "==PROF== Profiling \"split_with_sizes_copy_out_contiguous\" - 40: 0%....\n\
             ==ERROR== Failed to profile \"split_with_sizes_copy_out_con...\" in process 4794\n\
             ==PROF== Trying to shutdown target application\n",
        );
        let why = profile_failed(Tool::Ncu, dir.path(), true).unwrap();
        assert!(why.contains("Failed to profile"), "{why}");
        // A program that failed plainly fails under ncu too: not crowded.
        assert_eq!(profile_failed(Tool::Ncu, dir.path(), false), None);
        let clean = dir_with("==PROF== Report: /r/ncu/profile.ncu-rep\n");
        assert_eq!(profile_failed(Tool::Ncu, clean.path(), true), None);
        // The counters failing beside two other programs' checks (H200).
        let counters = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/sample-reports/beyond/ncu_counters_beside/ncu"
        );
        let why = profile_failed(Tool::Ncu, Path::new(counters), true).unwrap();
        assert_eq!(
            why,
            "ncu shut the program down (\"An error was reported by the counter measurement \
             library: LaunchFailed\")"
        );
        assert_eq!(profile_failed(Tool::Ncu, Path::new(counters), false), None);
    }

    fn dir_with(stdout: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stdout"), stdout).unwrap();
        dir
    }

    #[test]
    fn a_real_out_of_memory_under_the_sanitizer_is_starvation_when_the_plain_run_had_none() {
        let captured = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("sample-reports/beyond/hog-640mib/memcheck.stdout"),
        )
        .unwrap();
        let stage = dir_with(&captured);
        let plain = dir_with("loss 2.3\n");
        let why = of_memory(Tool::Memcheck, stage.path(), Some(plain.path())).unwrap();
        assert_eq!(
            why,
            "ran out of GPU memory (it printed \"out of memory\", the plain run did not)"
        );
        // The same sign in the plain run: the program's own failure.
        let plain = dir_with("torch.OutOfMemoryError: CUDA out of memory.\n");
        assert_eq!(
            of_memory(Tool::Memcheck, stage.path(), Some(plain.path())),
            None
        );
        // oom-recovery runs out on purpose.
        assert_eq!(of_memory(Tool::OomRecovery, stage.path(), None), None);
    }

    #[test]
    fn a_sanitizer_that_dies_of_a_fault_before_its_summary_is_run_again() {
        let record = |end, summary: &str| {
            let dir = dir_with(summary);
            let mut record = StageRecord::unfinished(Tool::Memcheck);
            record.unfinished = false;
            record.end = end;
            (record, dir)
        };
        let (crashed, dir) = record(ProcessEnd::Signaled(11), "========= COMPUTE-SANITIZER\n");
        assert_eq!(
            tool_crashed(&crashed, dir.path()).as_deref(),
            Some("compute-sanitizer itself died of signal 11 (SIGSEGV) before its summary")
        );
        // Its evidence is whole: nothing to run again.
        let (late, dir) = record(
            ProcessEnd::Signaled(11),
            "========= ERROR SUMMARY: 0 errors\n",
        );
        assert_eq!(tool_crashed(&late, dir.path()), None);
        // Stopped by cudawatch (a time limit, Ctrl-C), or ended by itself.
        let (mut stopped, dir) = record(ProcessEnd::Signaled(11), "");
        stopped.timed_out = true;
        assert_eq!(tool_crashed(&stopped, dir.path()), None);
        let (term, dir) = record(ProcessEnd::Signaled(15), "");
        assert_eq!(tool_crashed(&term, dir.path()), None);
        let (exited, dir) = record(ProcessEnd::Exited(1), "");
        assert_eq!(tool_crashed(&exited, dir.path()), None);
    }

    #[test]
    fn a_stage_without_a_sign_is_not_starved() {
        let stage = dir_with("========= ERROR SUMMARY: 0 errors\n");
        assert_eq!(of_memory(Tool::Initcheck, stage.path(), None), None);
    }
}
