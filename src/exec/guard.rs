//! The guard of an external program (Linux): what `runner __external-guard <runner pid> --
//! <program> <args>...` runs. [`external`](super::external) starts it in place of the program,
//! as the leader of a new process group, so that nothing the program starts outlives its task:
//!
//! - its parent-death signal is SIGTERM, so a `runner` that dies, even by `kill -9`, takes the
//!   guard's work with it; it then checks that its parent is still the `runner` that started it
//!   (the signal is sent only for a death after it was set), and runs nothing otherwise;
//! - it is a child subreaper: a process below it whose parent ends (a double fork, a daemon that
//!   called `setsid`) is re-parented to the guard, not to `init`, so it stays below it;
//! - it starts the program with its own standard input, output and error, directory and
//!   environment, in its own process group, waits for it, and reaps the orphans that end
//!   meanwhile;
//! - when the program ends, or on SIGTERM, SIGINT or SIGHUP (the parent-death signal, or
//!   `runner` at a time-out), it kills every process below it, whatever its session or process
//!   group (found by their parents in `/proc/<pid>/stat`, parents first), reaps them, and ends
//!   as the program did: with its exit code, or killed by the same signal, so that what `runner`
//!   says of the guard's end is what it would say of the program's.
//!
//! The guard prints nothing on standard output (the program's reply) and, on standard error,
//! only why it could not start the program ([`START_FAILED`], after [`START_FAILED_MARK`]) or
//! could not become a subreaper. What it cannot stop: a process that changes its user (a setuid
//! program; the guard may not signal it), and one in the moment between being found and being
//! killed whose parent reaps it and whose pid is reused (the guard kills parents before their
//! children to make that window as small as it can be).

use std::ffi::OsString;

/// The hidden subcommand of the `runner` binary that runs [`run`].
pub const SUBCOMMAND: &str = "__external-guard";

/// The guard's exit code when it could not start the program (as a shell's).
pub const START_FAILED: i32 = 127;

/// How the guard's line on standard error begins when it could not start the program; the OS
/// error follows.
pub const START_FAILED_MARK: &str = "runner external guard: cannot start: ";

/// The arguments that put the guard of the `runner` of pid `parent` in front of a program: the
/// program and its arguments follow.
pub fn arguments(parent: u32) -> [OsString; 3] {
    [SUBCOMMAND.into(), parent.to_string().into(), "--".into()]
}

#[cfg(target_os = "linux")]
pub use linux::run;

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::io::Write as _;
    use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
    use std::process::{Command, ExitStatus};
    use std::sync::{Mutex, PoisonError};
    use std::time::{Duration, Instant};

    use nix::errno::Errno;
    use nix::sys::signal::{SigSet, Signal, kill, raise};
    use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
    use nix::unistd::{Pid, getppid};

    use super::{START_FAILED, START_FAILED_MARK};

    /// How long the guard goes on killing what is below it before it gives up (a process stuck
    /// in the kernel, or one it may not signal).
    const KILL_PATIENCE: Duration = Duration::from_secs(2);

    /// Held by whichever thread ends the guard: the main one when the program ended, the
    /// signal thread on a stop signal. The other waits on it until the process is gone.
    static FINISHING: Mutex<()> = Mutex::new(());

    /// How the guard ends.
    enum End {
        /// The program exited with this code.
        Exited(i32),
        /// The program was killed by this signal (its number: nix names only some).
        Killed(i32),
        /// The guard was told to stop by this signal.
        Stopped(Signal),
        /// The program's end could not be read.
        Unknown,
    }

    /// The signals that stop the guard: SIGTERM (its parent-death signal, and what `runner`
    /// sends at a time-out), SIGINT and SIGHUP.
    fn stop_signals() -> SigSet {
        let mut set = SigSet::empty();
        for signal in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
            set.add(signal);
        }
        set
    }

    /// Guards `command` (the program, then its arguments) for the `runner` of pid `parent`;
    /// never returns.
    pub fn run(parent: u32, command: &[OsString]) -> ! {
        let stops = stop_signals();
        // Blocked before any thread starts, so that every thread has them blocked and a stop
        // signal waits for the signal thread (the program starts with an empty mask: std's
        // `Command` clears it).
        let blocked = stops.thread_block().is_ok();
        let watched = nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).is_ok();
        if !watched || i32::try_from(parent).ok() != Some(getppid().as_raw()) {
            // The `runner` that started the guard is gone already: the program must not run.
            note(format_args!(
                "runner: the external program's guard has lost its runner (pid {parent})"
            ));
            std::process::exit(START_FAILED);
        }
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            note(format_args!(
                "runner: the external program's guard cannot be a child subreaper ({e}); what \
                 the program starts in a session of its own may outlive it"
            ));
        }
        let Some((program, args)) = command.split_first() else {
            note(format_args!("{START_FAILED_MARK}no program given"));
            std::process::exit(START_FAILED);
        };
        let mut child = match Command::new(program).args(args).spawn() {
            Ok(child) => child,
            Err(e) => {
                note(format_args!("{START_FAILED_MARK}{e}"));
                std::process::exit(START_FAILED);
            }
        };
        let Ok(pid) = i32::try_from(child.id()) else {
            finish(|| End::Unknown);
        };
        let program = Pid::from_raw(pid);
        if blocked {
            let watcher =
                std::thread::Builder::new().name("stop signals".into()).spawn(move || {
                    if let Ok(signal) = stops.wait() {
                        finish(|| End::Stopped(signal));
                    }
                });
            if watcher.is_err() {
                // Nothing would take them: let them end the guard as they would any process.
                let _ = stops.thread_unblock();
            }
        }
        loop {
            // Without reaping: the program is reaped by `child.wait` (its status as the kernel
            // gives it), an orphan at once.
            match waitid(Id::All, WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
                Ok(status) if status.pid() == Some(program) => break,
                Ok(status) => {
                    if let Some(orphan) = status.pid() {
                        let _ = waitpid(orphan, Some(WaitPidFlag::WNOHANG));
                    }
                }
                Err(Errno::EINTR) => {}
                Err(Errno::ECHILD) => break,
                // A child killed by a signal nix cannot name (a real-time one): the program, or
                // an orphan to reap by its pid.
                Err(_) => {
                    if let Ok(Some(_)) = child.try_wait() {
                        break;
                    }
                    reap_orphans(program);
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        finish(move || child.wait().map_or(End::Unknown, end_of))
    }

    /// Writes a line on standard error, if it can: `runner` may be gone (a write that fails
    /// must not stop the guard, as `eprintln!` would, by a panic).
    fn note(line: std::fmt::Arguments) {
        let _ = writeln!(std::io::stderr(), "{line}");
    }

    /// The program's end from its exit status.
    fn end_of(status: ExitStatus) -> End {
        match (status.code(), status.signal()) {
            (Some(code), _) => End::Exited(code),
            (None, Some(signal)) => End::Killed(signal),
            (None, None) => End::Unknown,
        }
    }

    /// Ends the guard: takes [`FINISHING`], reads how with `end`, kills and reaps everything
    /// below the guard, then ends as the program did.
    fn finish(end: impl FnOnce() -> End) -> ! {
        let _finishing = FINISHING.lock().unwrap_or_else(PoisonError::into_inner);
        let end = end();
        kill_descendants();
        match end {
            End::Exited(code) => std::process::exit(code),
            End::Killed(signal) => die_by(signal),
            End::Stopped(signal) => die_by(signal as i32),
            End::Unknown => {
                note(format_args!("runner: the external program's guard could not wait for it"));
                std::process::exit(START_FAILED);
            }
        }
    }

    /// Kills every live process below the guard, parents first, and reaps what ends, until
    /// none is left (or [`KILL_PATIENCE`] has passed).
    fn kill_descendants() {
        let Ok(me) = i32::try_from(std::process::id()) else { return };
        let started = Instant::now();
        loop {
            reap_all();
            let below = descendants(me);
            if below.is_empty() || started.elapsed() > KILL_PATIENCE {
                break;
            }
            for pid in below {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        reap_all();
    }

    /// Reaps every child of the guard that has ended.
    fn reap_all() {
        // Bounded: each turn reaps one child (or says that none is left).
        for _ in 0..100_000 {
            match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return,
                // A child reaped (nix may fail to name its signal after reaping it).
                Ok(_) | Err(_) => {}
            }
        }
    }

    /// Reaps the ended children of the guard other than `program`, by their pids.
    fn reap_orphans(program: Pid) {
        let Ok(me) = i32::try_from(std::process::id()) else { return };
        let table = processes();
        for &(pid, dead) in table.get(&me).into_iter().flatten() {
            if dead && pid != program.as_raw() {
                let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
            }
        }
    }

    /// The live processes below `root`, parents before their children (zombies, dead already,
    /// left out).
    fn descendants(root: i32) -> Vec<i32> {
        let table = processes();
        let mut found = Vec::new();
        let mut next = vec![root];
        let mut at = 0;
        while let Some(&parent) = next.get(at) {
            at += 1;
            for &(pid, dead) in table.get(&parent).into_iter().flatten() {
                // A bound against a table read while processes come and go.
                if next.len() < 1_000_000 {
                    next.push(pid);
                }
                if !dead {
                    found.push(pid);
                }
            }
        }
        found
    }

    /// Every process of `/proc`, by its parent: (pid, whether it is dead: a zombie).
    fn processes() -> BTreeMap<i32, Vec<(i32, bool)>> {
        let mut table: BTreeMap<i32, Vec<(i32, bool)>> = BTreeMap::new();
        let Ok(entries) = std::fs::read_dir("/proc") else { return table };
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
            if let Some((state, parent)) = parse_stat(&stat) {
                table.entry(parent).or_default().push((pid, matches!(state, 'Z' | 'X' | 'x')));
            }
        }
        table
    }

    /// The state and the parent's pid from a `/proc/<pid>/stat` line: the first two fields
    /// after the command name, which is in parentheses and may itself hold `)` and spaces.
    pub(super) fn parse_stat(stat: &str) -> Option<(char, i32)> {
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let parent = fields.next()?.parse().ok()?;
        Some((state, parent))
    }

    /// Ends the guard killed by signal `number`, as the program was.
    fn die_by(number: i32) -> ! {
        if let Ok(signal) = Signal::try_from(number) {
            // A core dump of the guard would take the place of the program's own.
            let _ = nix::sys::prctl::set_dumpable(false);
            let mut set = SigSet::empty();
            set.add(signal);
            let _ = set.thread_unblock();
            // Twice: std's handler of SIGSEGV and SIGBUS restores the default action and
            // returns on a signal that is not a stack overflow.
            for _ in 0..2 {
                let _ = raise(signal);
            }
        }
        // Still here: the guard ignores the signal (SIGPIPE, as Rust's runtime does), or nix
        // cannot name it (a real-time one). A shell in the guard's place (the same pid; std
        // restores SIGPIPE's default action for it) kills itself with it.
        let error = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("kill -{number} $$; exit {}", 128 + number))
            .exec();
        note(format_args!(
            "runner: the external program's guard cannot end by signal {number}: {error}"
        ));
        std::process::exit(128 + number)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::linux::parse_stat;

    #[test]
    fn a_stat_line_gives_the_state_and_the_parent_whatever_the_command_name() {
        assert_eq!(parse_stat("42 (sleep) S 7 42 42 0 -1"), Some(('S', 7)));
        assert_eq!(parse_stat("42 (a) b) (c) Z 1 0 0"), Some(('Z', 1)));
        assert_eq!(parse_stat("42 (odd name) R 3"), Some(('R', 3)));
        assert_eq!(parse_stat("42 (cut"), None);
        assert_eq!(parse_stat("42 (x) S"), None);
    }
}
