//! Reading and writing the files of a run directory, which may come from
//! someone else (`cudawatch report DIR` on a copied run): only regular files
//! are read, never through a symlink, and never more than a bound; files
//! are created without following a symlink planted in their place. A FIFO
//! or `/dev/zero` named like an artifact is refused, not read forever.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The most cudawatch reads of one artifact. A ResNet step's initcheck text
/// is 420 MB; nothing real comes near this.
pub const MAX_ARTIFACT_BYTES: u64 = 16 << 30;

/// Opens a regular file for reading, refusing symlinks, FIFOs and devices.
pub fn open(path: &Path) -> io::Result<File> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a symlink, FIFO or device is never read)",
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nofollow() | nonblock())
        .open(path)?;
    // Checked again on what was opened: the name may have changed in between.
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    // A streamed artifact (the sanitizer's XML) is bounded too: a sparse
    // file of terabytes would otherwise be read to its end.
    if meta.len() > MAX_ARTIFACT_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "{} bytes, more than the {MAX_ARTIFACT_BYTES} cudawatch reads",
                meta.len()
            ),
        ));
    }
    Ok(file)
}

/// Reads a whole regular file of at most [`MAX_ARTIFACT_BYTES`]; a larger
/// one is an error, never silently cut or read as empty.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    read_at_most(path, MAX_ARTIFACT_BYTES)
}

/// Reads a whole regular file of at most `limit` bytes.
pub fn read_at_most(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_bounded(open(path)?, limit)
}

/// Reads a file the user named on the command line (a report to render
/// or compare, which may be a link they made), at most `limit` bytes. What
/// it names must be a regular file: opening a FIFO waits for a writer
/// that may never come, and a device never ends.
pub fn read_named_at_most(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let not_regular = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO or device is never read: save it to a file first)",
        )
    };
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nonblock())
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    read_bounded(file, limit)
}

/// `file` whole, refused when it is or grows over `limit` bytes.
fn read_bounded(file: File, limit: u64) -> io::Result<Vec<u8>> {
    let too_large = |len: u64| {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("{len} bytes, more than the {limit} cudawatch reads"),
        )
    };
    let len = file.metadata()?.len();
    if len > limit {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        // It grew while being read.
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// A regular file's first `head` and last `tail` bytes, with a line saying
/// how many bytes between them were left out, and that count (0: the whole
/// file was read). A program's own output is read so: what it printed last
/// (the error that ended it) and first are kept, and a program that prints
/// gigabytes costs cudawatch a bounded amount of memory.
pub fn read_ends(path: &Path, head: u64, tail: u64) -> io::Result<(Vec<u8>, u64)> {
    use std::io::{Seek, SeekFrom};
    let mut file = open(path)?;
    let len = file.metadata()?.len();
    let whole = head.saturating_add(tail);
    if len <= whole {
        let mut bytes = Vec::with_capacity(len as usize);
        file.take(whole).read_to_end(&mut bytes)?;
        return Ok((bytes, 0));
    }
    let cut = len - whole;
    let mut bytes = Vec::with_capacity(whole as usize + 64);
    (&mut file).take(head).read_to_end(&mut bytes)?;
    bytes.extend_from_slice(format!("\n[cudawatch: {cut} bytes left out here]\n").as_bytes());
    file.seek(SeekFrom::Start(len - tail))?;
    file.take(tail).read_to_end(&mut bytes)?;
    Ok((bytes, cut))
}

/// Whether every line of a regular file that starts between byte `from`
/// and byte `to` starts with `prefix` or is blank, read in a stream (the
/// part of a program's output [`read_ends`] left out can be gigabytes).
/// `begun` is what came before `from` of the line it lands in (empty
/// when `from` starts a line).
pub fn lines_between_all_start_with(
    path: &Path,
    (from, to): (u64, u64),
    begun: &[u8],
    prefix: &[u8],
) -> io::Result<bool> {
    use std::io::{BufRead, Seek, SeekFrom};
    let mut file = open(path)?;
    file.seek(SeekFrom::Start(from))?;
    let mut reader = io::BufReader::with_capacity(1 << 20, file.take(to.saturating_sub(from)));
    // The bytes of the current line seen so far, up to the prefix's length.
    let mut line_head: Vec<u8> = begun[..begun.len().min(prefix.len())].to_vec();
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            // The last line may run on past `to`: judged by its start.
            return Ok(line_head.is_empty() || prefix.starts_with(&line_head));
        }
        let used = chunk.len();
        for byte in chunk {
            if *byte == b'\n' {
                let blank = line_head.is_empty() || line_head == b"\r";
                if !blank && !line_head.starts_with(prefix) {
                    return Ok(false);
                }
                line_head.clear();
            } else if line_head.len() < prefix.len() {
                line_head.push(*byte);
            }
        }
        reader.consume(used);
    }
}

/// Creates (or truncates) a file to write, never through a symlink.
pub fn create(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(nofollow())
        .open(path)
}

/// Replaces `path` with `bytes` at once: written beside it under a
/// temporary name (never through a symlink), then renamed over it, so a
/// reader, or a resume after a kill, sees the old file or the new one,
/// never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    create(&tmp)?.write_all(bytes)?;
    std::fs::rename(&tmp, path)
}

fn nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// A FIFO opened for reading would block until a writer comes; the type
/// check refuses it, and this keeps the open itself from blocking.
fn nonblock() -> i32 {
    rustix::fs::OFlags::NONBLOCK.bits() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_output_keeps_its_first_and_last_bytes_and_says_how_much_went() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout");
        let mut text = b"first line\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 1000));
        text.extend(b"\nRuntimeError: CUDA error: an illegal memory access was encountered\n");
        std::fs::write(&path, &text).unwrap();
        let (bytes, cut) = read_ends(&path, 11, 70).unwrap();
        let shown = String::from_utf8(bytes).unwrap();
        assert_eq!(cut, text.len() as u64 - 81);
        assert!(shown.starts_with("first line\n"), "{shown}");
        assert!(
            shown.ends_with("an illegal memory access was encountered\n"),
            "{shown}"
        );
        assert!(shown.contains(&format!("[cudawatch: {cut} bytes left out here]")));
        let (whole, none) = read_ends(&path, 4096, 4096).unwrap();
        assert_eq!((whole, none), (text, 0));
    }

    #[test]
    fn symlinks_fifos_and_devices_are_refused_and_creation_does_not_follow_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let regular = dir.path().join("stdout");
        std::fs::write(&regular, "ok").unwrap();
        assert_eq!(read(&regular).unwrap(), b"ok");
        let link = dir.path().join("stderr");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(read(&link).is_err());
        assert!(read(Path::new("/dev/zero")).is_err());
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(read(&fifo).is_err(), "refused, not blocked on");
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        let planted = dir.path().join("planted");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(create(&planted).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }
}
