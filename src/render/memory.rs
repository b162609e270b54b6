//! The memory stage's account as the terminal shows it: what held the
//! memory at an OOM by the user's line, whether fragmentation caused it
//! (and whether the remedy helped), growth across steps, the peak. A
//! person reads it in ten seconds; every figure is also in the JSON.

use std::fmt::Write as _;

use cudawatch_model::{HeldLine, MemoryReport, OomState, size};

/// Lines of "what held it" shown; the rest are summed.
const SHOWN: usize = 5;

/// The section's lines with every control character made visible: what
/// the machine formats embed (markdown indents it, HTML escapes it too).
pub fn cleaned_lines(memory: &MemoryReport) -> Vec<String> {
    section(memory)
        .lines()
        .map(super::untrusted::clean)
        .collect()
}

/// The section, or nothing when the report has no memory account.
pub fn section(memory: &MemoryReport) -> String {
    let mut out = String::new();
    for oom in &memory.ooms {
        oom_lines(&mut out, oom);
    }
    if let Some(growth) = &memory.growth {
        let _ = writeln!(
            out,
            "  Growth: memory left after each optimizer step rises {} a step (steps {}-{}{})",
            size(growth.bytes_per_step),
            growth.from_step,
            growth.to_step,
            growth.of_process()
        );
        for line in growth.lines.iter().take(SHOWN) {
            let _ = writeln!(out, "    +{:>10}/step  {}", size(line.bytes), place(line));
        }
    }
    if let Some(peak) = memory.peak {
        let _ = writeln!(
            out,
            "  Peak: {} allocated, {} reserved, of {} on the GPU",
            size(peak.allocated),
            size(peak.reserved),
            size(peak.device_total)
        );
        if !memory.processes.is_empty() {
            let each: Vec<String> = memory
                .processes
                .iter()
                .map(|p| format!("{} {}", p.process, size(p.allocated)))
                .collect();
            let _ = writeln!(
                out,
                "  {} processes used CUDA, their peaks allocated: {} (the figures here are the \
                 highest's)",
                memory.processes.len(),
                each.join(", ")
            );
        }
        if memory.ooms.is_empty() && !memory.at_peak.is_empty() {
            let moment = if memory.at_peak_exact {
                "At the peak"
            } else {
                "At the largest moment the allocator's trace holds"
            };
            let _ = writeln!(out, "  {moment}, by your line:");
            held(&mut out, &memory.at_peak, None);
        }
    }
    out
}

fn oom_lines(out: &mut String, oom: &OomState) {
    let at = oom
        .location
        .as_ref()
        .map_or(oom.origin.clone(), |l| l.to_string());
    let allowed = oom
        .allowed
        .map_or(String::new(), |a| format!(", {} allowed", size(a)));
    let _ = writeln!(
        out,
        "  Out of memory at {at}: asked {} with {} allocated, {} reserved{allowed} \
         (GPU {}, {} free){}",
        size(oom.request),
        size(oom.allocated),
        size(oom.reserved),
        size(oom.device_total),
        size(oom.device_free),
        if oom.step > 0 {
            format!(", after {} optimizer steps", oom.step)
        } else {
            String::new()
        }
    );
    let _ = writeln!(out, "  What held it, by your line:");
    held(out, &oom.held, Some(oom.allocated));
    if oom.fragmentation {
        let remedy = match oom.expandable_helped {
            Some(true) => {
                "rerun with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: it finished"
            }
            Some(false) => {
                "rerun with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: it still failed"
            }
            None => "try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb)",
        };
        let _ = writeln!(
            out,
            "  Fragmentation: {} free inside PyTorch's segments would have held it, but no hole \
             was larger than {}; {remedy}",
            size(oom.free_in_segments),
            size(oom.largest_free_block)
        );
    } else if oom.free_in_segments > 0 {
        let _ = writeln!(
            out,
            "  Not fragmentation: {} free inside PyTorch's segments, less than the request",
            size(oom.free_in_segments)
        );
    }
    // The largest ten: a message can name every process of a machine.
    let mut others: Vec<_> = oom.other_processes.iter().collect();
    others.sort_by_key(|o| std::cmp::Reverse(o.bytes));
    for other in others.iter().take(OTHERS_SHOWN) {
        let _ = writeln!(
            out,
            "  Another process held {}: PID {}{}",
            size(other.bytes),
            other.pid,
            other
                .command
                .as_ref()
                .map_or(String::new(), |c| format!(" ({c})"))
        );
    }
    if others.len() > OTHERS_SHOWN {
        let rest = &others[OTHERS_SHOWN..];
        let _ = writeln!(
            out,
            "  and {} more processes held {}",
            rest.len(),
            size(rest.iter().map(|o| o.bytes).sum())
        );
    }
}

/// How many other processes holding memory at an OOM are listed.
const OTHERS_SHOWN: usize = 10;

fn held(out: &mut String, lines: &[HeldLine], allocated: Option<u64>) {
    for line in lines.iter().take(SHOWN) {
        let _ = writeln!(
            out,
            "    {:>10}  {:>5} {}  {}",
            size(line.bytes),
            line.blocks,
            if line.blocks == 1 {
                "tensor "
            } else {
                "tensors"
            },
            place(line)
        );
    }
    let rest: u64 = lines.iter().skip(SHOWN).map(|l| l.bytes).sum();
    if rest > 0 {
        let _ = writeln!(
            out,
            "    {:>10}  in {} more places",
            size(rest),
            lines.len() - SHOWN
        );
    }
    if let Some(allocated) = allocated.filter(|a| *a > 0) {
        let total: u64 = lines.iter().map(|l| l.bytes).sum();
        let _ = writeln!(
            out,
            "    = {} of the {} allocated ({:.0}%)",
            size(total),
            size(allocated),
            100.0 * total as f64 / allocated as f64
        );
    }
}

fn place(line: &HeldLine) -> String {
    let via = line
        .via
        .as_ref()
        .map_or(String::new(), |v| format!("  via {v}"));
    match &line.location {
        Some(at) => format!("{at} in {}{via}", line.origin),
        None => line.origin.clone(),
    }
}
