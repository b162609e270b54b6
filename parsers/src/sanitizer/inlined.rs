//! Records inside inlined device functions. compute-sanitizer places such a
//! record at the inlined function (`__syncwarp(unsigned int)+0xd0 in
//! sm_30_intrinsics.hpp:110`) and lists the functions it was inlined into as
//! device frames (`half_mask(int *)+0x30 in inlined_syncwarp.cu:11`). CUDA's
//! headers, CUB, Thrust and cooperative groups are inlined, never launched:
//! the line to fix is the innermost frame outside them, and the kernel is
//! the outermost frame.

use super::Record;
use crate::model::{Frame, SourceLocation};

/// Moves a record placed in a toolkit header to the innermost device frame
/// outside the toolkit, keeping the header's position in `inlined`. A record
/// without device frames, or whose every frame is the toolkit's, is left as
/// the tool wrote it.
pub fn move_to_user_frame(record: &mut Record) {
    let Some(location) = &record.location else {
        return;
    };
    if record.device_frames.is_empty() || !is_toolkit_header(&location.file) {
        return;
    }
    let Some(user) = record
        .device_frames
        .iter()
        .find(|f| {
            f.file
                .as_deref()
                .is_some_and(|file| !is_toolkit_header(file))
        })
        .cloned()
    else {
        return;
    };
    let kernel = record
        .device_frames
        .last()
        .and_then(|f| f.func.clone())
        .or_else(|| user.func.clone());
    record.inlined = Some(Frame {
        func: record.func.take(),
        module: None,
        file: Some(location.file.clone()),
        line: Some(location.line),
        pc: record.pc.take(),
    });
    record.func = kernel;
    record.pc = user.pc.clone();
    record.location = user
        .file
        .zip(user.line)
        .map(|(file, line)| SourceLocation { file, line });
}

/// Whether a source file is one of the CUDA toolkit's headers: the
/// intrinsics and function headers, CCCL (CUB, Thrust, libcu++) and
/// cooperative groups, by directory when the path is whole and by name when
/// the tool stripped it (`--strip-paths`, the default for text).
pub fn is_toolkit_header(file: &str) -> bool {
    const DIRS: [&str; 8] = [
        "/cuda/include/",
        "/targets/x86_64-linux/include/",
        "/targets/sbsa-linux/include/",
        "/include/cub/",
        "/include/thrust/",
        "/include/cuda/",
        "/include/cooperative_groups",
        "/include/crt/",
    ];
    if DIRS.iter().any(|d| file.contains(d)) || file.contains("/cccl/") {
        return true;
    }
    let base = file.rsplit('/').next().unwrap_or(file);
    let stem = base
        .strip_suffix(".hpp")
        .or_else(|| base.strip_suffix(".h"))
        .unwrap_or("");
    (base.starts_with("sm_") && stem.ends_with("_intrinsics"))
        || stem.ends_with("_functions")
        || matches!(
            stem,
            "cuda_fp16"
                | "cuda_bf16"
                | "cuda_fp8"
                | "cooperative_groups"
                | "cuda_pipeline"
                | "cuda_awbarrier"
                | "cuda_awbarrier_primitives"
                | "cuda_pipeline_primitives"
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sanitizer::RecordKind;

    fn frame(func: &str, file: &str, line: u32, pc: &str) -> Frame {
        Frame {
            func: Some(func.into()),
            module: None,
            file: Some(file.into()),
            line: Some(line),
            pc: Some(pc.into()),
        }
    }

    #[test]
    fn a_record_in_cudas_header_moves_to_the_users_line_and_kernel() {
        let mut r = Record::new(RecordKind::Synccheck);
        r.func = Some("__syncwarp".into());
        r.pc = Some("0xd0".into());
        r.location = Some(SourceLocation {
            file: "/usr/local/cuda/targets/x86_64-linux/include/sm_30_intrinsics.hpp".into(),
            line: 110,
        });
        r.device_frames = vec![
            frame("helper", "/src/k.cu", 4, "0x20"),
            frame("half_mask", "/src/k.cu", 11, "0x30"),
        ];
        move_to_user_frame(&mut r);
        assert_eq!(r.location.as_ref().unwrap().to_string(), "/src/k.cu:4");
        assert_eq!(r.func.as_deref(), Some("half_mask"));
        let inlined = r.inlined.unwrap();
        assert_eq!(inlined.func.as_deref(), Some("__syncwarp"));
        assert_eq!(inlined.line, Some(110));
    }

    #[test]
    fn a_record_in_the_users_own_file_stays_where_the_tool_put_it() {
        let mut r = Record::new(RecordKind::Synccheck);
        r.location = Some(SourceLocation {
            file: "/src/k.cu".into(),
            line: 9,
        });
        r.device_frames = vec![frame("k", "/src/other.cu", 3, "0x10")];
        move_to_user_frame(&mut r);
        assert_eq!(r.location.unwrap().line, 9);
        assert!(r.inlined.is_none());
    }

    #[test]
    fn headers_are_told_by_directory_or_by_name() {
        for h in [
            "sm_30_intrinsics.hpp",
            "/opt/cuda/include/cub/block/block_reduce.cuh",
            "/usr/local/cuda/include/thrust/sort.h",
            "cuda_fp16.hpp",
            "device_atomic_functions.hpp",
        ] {
            assert!(is_toolkit_header(h), "{h}");
        }
        for u in [
            "kernels.cu",
            "/home/me/sm_helpers.cuh",
            "/work/include/mine.h",
        ] {
            assert!(!is_toolkit_header(u), "{u}");
        }
    }
}
