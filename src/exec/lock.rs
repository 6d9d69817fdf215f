//! The run lock: one `runner run` per experiment at a time.
//!
//! A second run of the same experiment waits for the first (saying so), so two
//! processes never write the same `reports/<name>/` at once; `runner report` of
//! `ROOT/reports/<name>` takes the same lock (`cli::report`). The lock is an OS
//! file lock (`std::fs::File::lock`), released when the process ends, even on
//! `kill -9`: no stale lock files to clean up.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often a waiting run tries the lock again (and checks for an interrupt).
const RETRY: Duration = Duration::from_millis(50);

/// A held run lock; released on drop.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock file could not be created, opened or locked.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Interrupted (Ctrl-C, SIGTERM, SIGHUP) while waiting for another run.
    #[error("interrupted while waiting for another run of the experiment")]
    Interrupted,
}

/// Takes the lock for `experiment` under `dir`, waiting (and saying so) if another run holds it.
/// A wait ends at once, with [`LockError::Interrupted`], when `interrupt` is set: a waiting run
/// has nothing in flight to finish.
pub fn acquire(
    dir: &Path,
    experiment: &str,
    quiet: bool,
    interrupt: &AtomicBool,
) -> Result<RunLock, LockError> {
    fs::create_dir_all(dir)?;
    let path = dir.join(format!("{experiment}.lock"));
    let mut file =
        OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path)?;
    if !file.metadata()?.is_file() {
        return Err(LockError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        )));
    }
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            if !quiet {
                let holder = crate::files::read_regular(&path, 4096).unwrap_or_default();
                crate::console::print_error(&format!(
                    "another run of `{experiment}` is in progress ({}); waiting for it to finish\n",
                    String::from_utf8_lossy(&holder).trim()
                ));
            }
            loop {
                if interrupt.load(Ordering::SeqCst) {
                    return Err(LockError::Interrupted);
                }
                match file.try_lock() {
                    Ok(()) => break,
                    Err(fs::TryLockError::WouldBlock) => std::thread::sleep(RETRY),
                    Err(fs::TryLockError::Error(e)) => return Err(e.into()),
                }
            }
        }
        Err(fs::TryLockError::Error(e)) => return Err(e.into()),
    }
    file.set_len(0)?;
    let _ = writeln!(file, "pid {}", std::process::id());
    Ok(RunLock { _file: file })
}
