//! The run lock: one `runner run` per experiment at a time.
//!
//! A second run of the same experiment waits for the first (saying so), so two
//! processes never write the same `reports/<name>/` at once. The lock is an OS
//! file lock (`std::fs::File::lock`), released when the process ends, even on
//! `kill -9`: no stale lock files to clean up.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// A held run lock; released on drop.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

/// Takes the lock for `experiment` under `dir`, waiting (and saying so) if another run holds it.
pub fn acquire(dir: &Path, experiment: &str, quiet: bool) -> std::io::Result<RunLock> {
    fs::create_dir_all(dir)?;
    let path = dir.join(format!("{experiment}.lock"));
    let mut file =
        OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            if !quiet {
                let holder = fs::read_to_string(&path).unwrap_or_default();
                eprintln!(
                    "runner: another run of `{experiment}` is in progress ({}); waiting for it to finish",
                    holder.trim()
                );
            }
            file.lock()?;
        }
        Err(fs::TryLockError::Error(e)) => return Err(e),
    }
    file.set_len(0)?;
    let _ = writeln!(file, "pid {}", std::process::id());
    Ok(RunLock { _file: file })
}
