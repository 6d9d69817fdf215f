//! The one way `runner` reads and writes its own files: atomically on write, and on read only
//! regular files, opened without blocking and read up to a limit.
//!
//! Every file the pipeline writes (cache entries, `results.parquet`, the bundle's pages,
//! figures and tables, Slurm records) goes through [`write_atomic`] or [`persist_atomic`]: a
//! temporary file in the same directory, flushed to disk, then renamed over the target, so a
//! reader sees the old file or the new one, never half of one. Temporary files carry the
//! [`TEMP_PREFIX`], so a file left by `kill -9` between the write and the rename is recognised
//! (and left out of a bundle's manifest) instead of being taken for data. Files are created
//! with mode 0666 less the process umask, as `open(2)` would, so collaborators on shared
//! project space read the data as they read the HTML.
//!
//! Every file `runner` reads whose path a user can influence (cache entries, manifest-listed
//! bundle files, profiles) goes through [`open_regular`] or [`read_regular`]: a FIFO, a
//! device or a directory in its place is refused at once instead of blocking forever or
//! reading `/dev/zero` until memory runs out.

use std::fs::{self, File};
use std::io::{self, Read as _, Write as _};
use std::path::Path;

/// The name prefix of every temporary file `runner` creates next to a file it writes.
pub const TEMP_PREFIX: &str = ".runner-tmp-";

/// True when `name` (a file name, not a path) is one of `runner`'s temporary files, or one of
/// the `.tmpXXXXXX` files earlier versions left.
pub fn is_temporary(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX)
        || (name.starts_with(".tmp")
            && name.len() == 10
            && name[4..].chars().all(|c| c.is_ascii_alphanumeric()))
}

/// A temporary file next to `path`, created 0666 less the umask.
fn temporary_next_to(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Writes `bytes` to `path` through a flushed temporary file in the same directory and a
/// rename, creating the directory (and its parents) first when it is missing.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    persist_atomic(path, |file| file.write_all(bytes))
}

/// [`write_atomic`] without the flush to disk before the rename: after a power cut the file
/// may be empty or torn, so only for files whose reader detects that and can recompute them
/// (the cache's entries, which name their own task and carry a checksum).
pub fn write_atomic_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut temp = temporary_next_to(path)?;
    temp.as_file_mut().write_all(bytes)?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Like [`write_atomic`], for content produced by a writer: `fill` writes into the temporary
/// file (through its own handle, if it likes), which is then flushed and renamed to `path`.
pub fn persist_atomic(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let mut temp = temporary_next_to(path)?;
    fill(temp.as_file_mut())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The error for a path that exists but is not a regular file.
fn not_regular(kind: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("not a regular file ({kind})"))
}

/// What kind of file `metadata` describes, in words (`a FIFO`, `a symbolic link`, ...; from
/// `symlink_metadata`, a link is named as such, from `metadata`, what it points to).
pub fn kind_in_words(metadata: &fs::Metadata) -> &'static str {
    let kind = metadata.file_type();
    if kind.is_symlink() {
        return "a symbolic link";
    }
    if kind.is_dir() {
        return "a directory";
    }
    if kind.is_file() {
        return "a regular file";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// Opens `path` for reading only if it is a regular file (following symbolic links): the open
/// does not block on a FIFO, and the check is made on the opened handle, so nothing can be
/// swapped in between.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(not_regular(kind_in_words(&metadata)));
    }
    Ok(file)
}

/// Reads the whole of the regular file `path`, refusing anything larger than `max_bytes`
/// (as the error kind `FileTooLarge`) without reading past the limit.
pub fn read_regular(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let too_large = || {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than the {max_bytes} bytes allowed here"),
        )
    };
    if file.metadata()?.len() > max_bytes {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The blake3 hash (hex) of the regular file `path`, read through [`open_regular`] in blocks
/// (so a file of any size costs a little memory, and a FIFO or a device is refused at once).
pub fn hash_regular(path: &Path) -> io::Result<String> {
    let mut file = open_regular(path)?;
    let mut hasher = blake3::Hasher::new();
    io::copy(&mut file, &mut hasher)?;
    Ok(hasher.finalize().to_hex().to_string())
}

/// The blake3 hash (hex) of the regular file `path` now, when it is no longer `blake3`: a file
/// hashed when the spec was loaded and edited since. `None` when its content is unchanged.
pub fn changed_hash(path: &Path, blake3: &str) -> io::Result<Option<String>> {
    let now = hash_regular(path)?;
    Ok((now != blake3).then_some(now))
}

/// The first 16 hex digits of a content hash, as messages show it.
pub fn short_hash(blake3: &str) -> &str {
    &blake3[..blake3.len().min(16)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_atomic_and_shareable() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("a.txt");
        write_atomic(&path, b"one").expect("write");
        write_atomic(&path, b"two").expect("rewrite");
        assert_eq!(fs::read(&path).expect("read"), b"two");
        let nested = dir.path().join("new").join("dir").join("c.txt");
        write_atomic(&nested, b"four").expect("a write into a missing directory creates it");
        assert_eq!(fs::read(&nested).expect("read"), b"four");
        fs::remove_dir_all(dir.path().join("new")).expect("remove");
        let names: Vec<String> = fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.txt"], "no temporary file is left behind");
        let unsynced = dir.path().join("b.txt");
        write_atomic_unsynced(&unsynced, b"three").expect("unsynced write");
        assert_eq!(fs::read(&unsynced).expect("read"), b"three");
        // The process umask (Linux reports it in /proc/self/status); 022 unless set otherwise.
        let umask = fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| {
                let line = status.lines().find(|l| l.starts_with("Umask:"))?.to_string();
                u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
            })
            .unwrap_or(0o022);
        #[cfg(unix)]
        if umask & 0o044 == 0 {
            use std::os::unix::fs::PermissionsExt as _;
            for path in [&path, &unsynced] {
                let mode = fs::metadata(path).expect("metadata").permissions().mode() & 0o777;
                assert_eq!(mode & 0o044, 0o044, "group and others can read: {mode:o}");
            }
        }
    }

    #[test]
    fn temporary_names_are_recognised() {
        assert!(is_temporary(".runner-tmp-abc123"));
        assert!(is_temporary(".tmpAb12Cd"));
        assert!(!is_temporary("results.parquet"));
        assert!(!is_temporary(".tmpfile-notours"));
    }

    #[test]
    fn special_files_are_refused_without_blocking() {
        let error = read_regular(Path::new("/dev/zero"), 1024).expect_err("a device");
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        assert!(error.to_string().contains("a device"), "{error}");
        let dir = tempfile::tempdir().expect("temp dir");
        let error = read_regular(dir.path(), 1024).expect_err("a directory");
        assert!(error.to_string().contains("a directory"), "{error}");
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo");
            let status = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
            assert!(status.success());
            let error = read_regular(&fifo, 1024).expect_err("a FIFO");
            assert!(error.to_string().contains("a FIFO"), "{error}");
        }
    }

    #[test]
    fn hashes_are_of_the_content_and_refuse_special_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("input.cfg");
        fs::write(&path, b"one").expect("write");
        let first = hash_regular(&path).expect("hash");
        assert_eq!(first, blake3::hash(b"one").to_hex().to_string());
        fs::write(&path, b"two").expect("rewrite");
        assert_ne!(hash_regular(&path).expect("hash"), first);
        assert!(hash_regular(dir.path()).is_err(), "a directory");
        assert!(hash_regular(Path::new("/dev/zero")).is_err(), "a device");
    }

    #[test]
    fn reads_stop_at_the_limit() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("big");
        fs::write(&path, vec![b'x'; 2048]).expect("write");
        assert_eq!(read_regular(&path, 4096).expect("read").len(), 2048);
        let error = read_regular(&path, 1024).expect_err("too large");
        assert_eq!(error.kind(), io::ErrorKind::FileTooLarge);
    }
}
