//! Hardware exceptions by their names, as every reader meets them: memcheck's
//! records ("Invalid PC", "Trace/breakpoint trap", `<exception>Warp
//! assert</exception>`), a GPU core dump's fault ("Warp Illegal
//! Instruction", `CUDBG_EXCEPTION_WARP_INVALID_PC`). One table gives each
//! its finding kind and the CUDA error the program sees after it, so that
//! the same fault read by two tools is one kind, and folds into one site.

use crate::model::FindingKind;

/// The kind of a hardware exception and the CUDA error it ends the kernel
/// with, by its name (any case, with or without `Warp `/`Lane `).
pub fn classify(exception: &str) -> (FindingKind, &'static str) {
    let e = exception.to_ascii_lowercase();
    if e.contains("assert") {
        (FindingKind::DeviceAssert, "cudaErrorAssert")
    } else if e.contains("address space") {
        (
            FindingKind::InvalidAddressSpace,
            "cudaErrorInvalidAddressSpace",
        )
    } else if e.contains("misaligned address") {
        (FindingKind::InvalidAccess, "cudaErrorMisalignedAddress")
    } else if e.contains("address") {
        (FindingKind::InvalidAccess, "cudaErrorIllegalAddress")
    } else if e.contains("illegal instruction") {
        (
            FindingKind::IllegalInstruction,
            "cudaErrorIllegalInstruction",
        )
    } else if e.contains(" pc") || e.starts_with("pc") {
        // Invalid, misaligned or out-of-range PC.
        (FindingKind::InvalidPc, "cudaErrorInvalidPc")
    } else if e.contains("user stack overflow") || e == "stack overflow" {
        (FindingKind::StackOverflow, "cudaErrorIllegalAddress")
    } else if e.contains("stack") {
        (
            FindingKind::HardwareStackError,
            "cudaErrorHardwareStackError",
        )
    } else if e.contains("trap") || e.contains("breakpoint") {
        (FindingKind::Trap, "cudaErrorLaunchFailure")
    } else {
        (FindingKind::DeviceException, "cudaErrorLaunchFailure")
    }
}

/// The headers of memcheck's text records that name a hardware exception
/// without `Warp `/`Lane ` (compute-sanitizer 2025.3.1 on an H200,
/// sample-reports/records/).
pub const BARE_NAMES: [&str; 7] = [
    "Invalid PC",
    "Out-of-range PC",
    "Misaligned PC",
    "Illegal Instruction",
    "Trace/breakpoint trap",
    "Hardware Stack Error",
    "Invalid Address Space",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_exception_has_its_own_kind_and_error() {
        let kind = |e: &str| classify(e).0;
        assert_eq!(kind("Invalid PC"), FindingKind::InvalidPc);
        assert_eq!(kind("Warp Out-of-range PC"), FindingKind::InvalidPc);
        assert_eq!(kind("Warp Misaligned PC"), FindingKind::InvalidPc);
        assert_eq!(
            kind("Warp Illegal Instruction"),
            FindingKind::IllegalInstruction
        );
        assert_eq!(kind("Trace/breakpoint trap"), FindingKind::Trap);
        assert_eq!(
            kind("Warp Invalid Address Space"),
            FindingKind::InvalidAddressSpace
        );
        assert_eq!(
            kind("Warp Hardware Stack Overflow"),
            FindingKind::HardwareStackError
        );
        assert_eq!(kind("Lane User Stack Overflow"), FindingKind::StackOverflow);
        assert_eq!(kind("Warp Misaligned Address"), FindingKind::InvalidAccess);
        assert_eq!(kind("Warp Illegal Address"), FindingKind::InvalidAccess);
        assert_eq!(
            classify("Warp assert"),
            (FindingKind::DeviceAssert, "cudaErrorAssert")
        );
        assert_eq!(kind("Warp Something New"), FindingKind::DeviceException);
    }
}
