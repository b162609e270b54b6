//! End-to-end tests of the cudawatch binary, without a GPU: `parse` on the
//! real captures in sample-reports/, and `run` against fake
//! compute-sanitizer and ncu executables (tests/fakes/) that replay those
//! captures and misbehave on demand.

mod architecture;
mod capture_folders;
mod checklist;
mod concurrency;
mod config;
mod coredump;
mod csan_stage;
mod diff;
mod doc_commands;
mod doctor;
mod evidence;
mod explain;
mod first_contact;
mod floods;
mod formats;
mod gate_property;
mod global_race_stage;
mod head_start;
mod helpers;
mod hook_evidence;
mod html;
mod jax_programs;
mod judging;
mod memory_stage;
mod mps;
mod multi_gpu;
mod native_global_race;
mod outside_programs;
mod own_kernels;
mod parse;
mod parse_evidence;
mod precision;
mod pytest_suites;
mod real_programs;
mod records;
mod run;
mod second_contact;
mod slurm;
mod snapshots;
mod speed;
mod steps;
mod sweep;
mod trust;
