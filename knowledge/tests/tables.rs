//! The tables are the headers' enums, all of them: checked against the
//! snapshot two ways (every `NAME = VALUE` line, and the code list the
//! string capture made from the same snapshot with its own parser), and
//! the answers to what users paste.

use cudawatch_knowledge::enums::Library;
use cudawatch_knowledge::{Knowledge, advice};

#[test]
fn every_code_of_every_header_enum_is_in_the_tables() {
    let k = Knowledge::load();
    let count = |lib: Library| {
        k.tables
            .iter()
            .filter(|t| t.library == lib)
            .map(|t| t.codes.len())
            .sum::<usize>()
    };
    // The strings capture listed each enum's codes with its own parser
    // (scripts/capture-error-strings.py): both must agree, code for code.
    for line in cudawatch_knowledge::STRINGS.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let lib = Library::of_type(f[0]).unwrap();
        let value: i64 = f[1].parse().unwrap();
        assert!(
            k.tables
                .iter()
                .filter(|t| t.library == lib)
                .flat_map(|t| &t.codes)
                .any(|c| c.name == f[2] && c.value == value),
            "{} = {value} of {} is missing",
            f[2],
            f[0]
        );
    }
    // And every line of the snapshot that assigns a number to a name.
    // (`NAME = 0x2bd`, `NAME = OTHER_NAME`, `NAME ATTRIBUTE_MACRO = ...`).
    let mut assigned = 0;
    for line in cudawatch_knowledge::ENUMS.lines() {
        let code = line
            .trim()
            .trim_start_matches("typedef enum {")
            .trim()
            .trim_start_matches(',')
            .trim();
        if code.starts_with('*') || code.starts_with("/") {
            continue;
        }
        if let Some((left, _)) = code.split_once('=') {
            let words: Vec<&str> = left.split_whitespace().collect();
            if (1..=2).contains(&words.len())
                && words
                    .iter()
                    .all(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            {
                assigned += 1;
            }
        }
    }
    let total: usize = k.tables.iter().map(|t| t.codes.len()).sum();
    assert_eq!(
        total, assigned,
        "codes parsed vs `NAME = number` lines in the snapshot"
    );
    assert_eq!(k.tables.len(), 8, "runtime, driver and six libraries");
    assert!(
        count(Library::Runtime) > 120 && count(Library::Driver) > 95,
        "the full CUDA 13 enums"
    );
}

#[test]
fn an_illegal_address_by_number_name_or_message_is_the_same_sticky_error() {
    let k = Knowledge::load();
    let by_number = k.explain("700");
    let first = &by_number.explanations[0];
    assert_eq!(first.name, "cudaErrorIllegalAddress");
    assert_eq!(first.twin.as_deref(), Some("CUDA_ERROR_ILLEGAL_ADDRESS"));
    assert!(first.sticky);
    assert_eq!(
        first.message.as_deref(),
        Some("an illegal memory access was encountered")
    );
    assert_eq!(first.stage.as_deref(), Some("memcheck"));
    assert!(
        first
            .next
            .as_deref()
            .unwrap()
            .starts_with("cudawatch run --stages plain,memcheck")
    );
    assert_eq!(
        k.explain("cudaErrorIllegalAddress").explanations[0].value,
        Some(700)
    );
    let pasted = k.explain("RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.");
    assert_eq!(pasted.explanations[0].name, "cudaErrorIllegalAddress");
    assert!(pasted.notes.iter().any(|n| n.contains("asynchronously")));
    assert!(pasted.notes.iter().any(|n| n.contains("sticky")));
}

#[test]
fn numbers_that_meant_something_else_before_cuda_10_1_say_both() {
    let k = Knowledge::load();
    for (value, old) in [
        (4, "cudaErrorLaunchFailure"),
        (59, "cudaErrorAssert"),
        (77, "cudaErrorIllegalAddress"),
    ] {
        let a = k.explain(&value.to_string());
        assert!(
            a.notes.iter().any(|n| n.contains(old)),
            "{value}: {:?}",
            a.notes
        );
        assert!(a.explanations.iter().any(|e| e.name == old), "{value}");
    }
    // 700 meant nothing else.
    assert!(k.explain("700").notes.is_empty());
}

#[test]
fn what_users_paste_is_recognised() {
    let k = Knowledge::load();
    let cases = [
        (
            "CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
            "CUBLAS_STATUS_EXECUTION_FAILED",
        ),
        (
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            "cudaErrorNoKernelImageForDevice",
        ),
        (
            "CUDA driver version is insufficient for CUDA runtime version",
            "cudaErrorInsufficientDriver",
        ),
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB",
            "cudaErrorMemoryAllocation",
        ),
        (
            "RuntimeError: CUDA error: device-side assert triggered",
            "cudaErrorAssert",
        ),
        ("cudnn_status_not_supported", "CUDNN_STATUS_NOT_SUPPORTED"),
        (
            "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9",
            "ncclSystemError",
        ),
    ];
    for (text, name) in cases {
        let a = k.explain(text);
        assert_eq!(
            a.explanations.first().map(|e| e.name.as_str()),
            Some(name),
            "{text}"
        );
    }
    let library = &k.explain("CUBLAS_STATUS_EXECUTION_FAILED").explanations[0];
    assert_eq!(library.library, Some(Library::Cublas));
    assert_eq!(library.value, Some(13));
    assert!(!library.sticky);
    assert!(k.explain("no such thing at all").explanations.is_empty());
}

#[test]
fn every_name_the_advice_names_is_a_real_code() {
    let k = Knowledge::load();
    let source = include_str!("../src/advice.rs");
    for token in source.split('"').skip(1).step_by(2) {
        let looks_like_code = (token.starts_with("cudaError")
            || token.starts_with("CUDA_ERROR_")
            || token.starts_with("CUBLAS_")
            || token.starts_with("CUDNN_")
            || token.starts_with("CUFFT_")
            || token.starts_with("CUSOLVER_")
            || token.starts_with("CURAND_")
            || token.starts_with("nccl"))
            && !token.contains(' ');
        if looks_like_code {
            assert!(
                k.tables
                    .iter()
                    .flat_map(|t| &t.codes)
                    .any(|c| c.name == token),
                "advice names {token}, which no header has"
            );
        }
    }
    for kind in advice::kinds() {
        assert!(Knowledge::explain_kind(kind.kind).is_some());
    }
}
