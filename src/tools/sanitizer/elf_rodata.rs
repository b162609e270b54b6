//! The read-only data of an ELF file (its `.rodata*` sections): where the
//! host code keeps the names it registers its kernels under with the CUDA
//! runtime (`__cudaRegisterFunction(..., "_Z10tiled_gemmPKfS0_Pfi", ...)`),
//! which `strip` keeps, where it drops the symbols that name nvcc's stubs.
//! Only 64-bit little-endian files, as the GPU machines run; anything else,
//! or a header that does not hold together, gives nothing.

use std::io::{Read, Seek, SeekFrom};

/// Bytes read from one file's sections at most.
const MAX_BYTES: u64 = 256 << 20;

/// The contents of `file`'s `.rodata` sections, each whole, in order.
pub fn sections(file: &mut std::fs::File) -> Vec<Vec<u8>> {
    read_sections(file).unwrap_or_default()
}

fn read_sections(file: &mut std::fs::File) -> Option<Vec<Vec<u8>>> {
    let header = read_at(file, 0, 64)?;
    // ELF magic, 64-bit, little-endian.
    if header.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let table_at = u64_at(&header, 0x28)?;
    let entry_size = u64::from(u16_at(&header, 0x3A)?);
    let count = u64::from(u16_at(&header, 0x3C)?);
    let names_index = u64::from(u16_at(&header, 0x3E)?);
    if entry_size < 64 || count == 0 || names_index >= count {
        return None;
    }
    let table = read_at(file, table_at, entry_size.checked_mul(count)?)?;
    let entry = |i: u64| -> Option<(u32, u32, u64, u64)> {
        let at = usize::try_from(i.checked_mul(entry_size)?).ok()?;
        let e = table.get(at..at + 64)?;
        Some((
            u32_at(e, 0)?,
            u32_at(e, 4)?,
            u64_at(e, 0x18)?,
            u64_at(e, 0x20)?,
        ))
    };
    let (_, _, names_at, names_size) = entry(names_index)?;
    let names = read_at(file, names_at, names_size.min(1 << 20))?;
    let mut out = Vec::new();
    let mut budget = MAX_BYTES;
    for i in 0..count {
        let Some((name, kind, at, size)) = entry(i) else {
            continue;
        };
        // SHT_PROGBITS, named `.rodata` or `.rodata.<something>`.
        let named = names
            .get(name as usize..)
            .and_then(|rest| rest.split(|b| *b == 0).next())
            .is_some_and(|n| n == b".rodata" || n.starts_with(b".rodata."));
        if kind != 1 || !named || size > budget {
            continue;
        }
        budget -= size;
        if let Some(bytes) = read_at(file, at, size) {
            out.push(bytes);
        }
    }
    Some(out)
}

fn read_at(file: &mut std::fs::File, at: u64, len: u64) -> Option<Vec<u8>> {
    file.seek(SeekFrom::Start(at)).ok()?;
    let mut bytes = Vec::new();
    file.take(len).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 == len).then_some(bytes)
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
/// A minimal ELF64 file: sections `.rodata`, `.strtab` and the names.
pub fn elf(rodata: &[u8], strtab: &[u8]) -> Vec<u8> {
    let names = b"\0.rodata\0.strtab\0.shstrtab\0";
    let mut body = vec![0u8; 64];
    body[..6].copy_from_slice(b"\x7fELF\x02\x01");
    let place = |bytes: &[u8], body: &mut Vec<u8>| {
        let at = body.len() as u64;
        body.extend_from_slice(bytes);
        (at, bytes.len() as u64)
    };
    let sections = [
        (0u32, 0u32, (0, 0)),
        (1, 1, place(rodata, &mut body)),
        (9, 3, place(strtab, &mut body)),
        (17, 3, place(names, &mut body)),
    ];
    let table_at = body.len() as u64;
    for (name, kind, (at, size)) in sections {
        let mut e = vec![0u8; 64];
        e[0..4].copy_from_slice(&name.to_le_bytes());
        e[4..8].copy_from_slice(&kind.to_le_bytes());
        e[0x18..0x20].copy_from_slice(&at.to_le_bytes());
        e[0x20..0x28].copy_from_slice(&size.to_le_bytes());
        body.extend_from_slice(&e);
    }
    body[0x28..0x30].copy_from_slice(&table_at.to_le_bytes());
    body[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
    body[0x3C..0x3E].copy_from_slice(&4u16.to_le_bytes());
    body[0x3E..0x40].copy_from_slice(&3u16.to_le_bytes());
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_read_only_data_is_read_and_a_broken_header_gives_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("app");
        let kernel = b"_ZN7cutlass6KernelI7TileSumEEvNT_6ParamsE\0";
        std::fs::write(&path, elf(kernel, b"_ZN3c104atenL10_cudnn_rnnE\0")).unwrap();
        let found = sections(&mut std::fs::File::open(&path).unwrap());
        assert_eq!(found, [kernel.to_vec()]);
        // Cut short, or not an ELF file: nothing, and no panic.
        let whole = std::fs::read(&path).unwrap();
        for cut in [10, 64, 100, whole.len() - 1] {
            std::fs::write(&path, &whole[..cut]).unwrap();
            assert!(sections(&mut std::fs::File::open(&path).unwrap()).is_empty());
        }
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        assert!(sections(&mut std::fs::File::open(&path).unwrap()).is_empty());
    }
}
