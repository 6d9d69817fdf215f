//! Running an external program: started (under its guard when one is registered) in a process
//! group of its own, fed its request, its output drained within bounds, killed at its
//! time-out or after an interrupt, and its log written.

use super::*;

/// Why an exit status is a failure, with the last line of standard error when there is one.
pub(super) fn exit_problem(status: ExitStatus, stderr: &[u8]) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    let how = match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => format!("ended abnormally ({status})"),
    };
    let text = String::from_utf8_lossy(stderr);
    match text.lines().rev().map(str::trim).find(|l| !l.is_empty()) {
        Some(last) => format!("{how} (last line of standard error: {:?})", excerpt(last, 200)),
        None => how,
    }
}

/// Why a run was stopped by `runner`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// Past `timeout_seconds`.
    TimedOut,
    /// After an interrupt, past [`GRACE`].
    Cancelled,
}

/// What a run of the program left.
#[derive(Debug, Default)]
pub(super) struct Ended {
    /// The exit status (`None` when it could not be waited for).
    pub(super) status: Option<ExitStatus>,
    /// Set when `runner` killed the program.
    pub(super) stop: Option<Stop>,
    pub(super) stdout: Vec<u8>,
    pub(super) stdout_overflow: bool,
    pub(super) stderr: Vec<u8>,
    /// Bytes of standard error beyond [`MAX_LOG_BYTES`], not kept.
    pub(super) stderr_dropped: u64,
    /// Set when an output pipe was still open [`PIPE_GRACE`] after the program ended.
    pub(super) pipes_open: bool,
    pub(super) seconds: f64,
}

/// What a reader thread has read of one output so far.
#[derive(Debug, Default)]
pub(super) struct Drained {
    /// The first bytes, up to the cap.
    pub(super) kept: Vec<u8>,
    /// Bytes past the cap, counted only.
    pub(super) dropped: u64,
    /// Set once `runner` took `kept`: the thread reads on (a writer left behind must not block
    /// on a full pipe) but keeps nothing more.
    pub(super) taken: bool,
}

/// A reader thread: what it has read so far, shared, and a channel that closes at the end of
/// its output.
pub(super) struct Reader {
    pub(super) read: Arc<Mutex<Drained>>,
    pub(super) done: mpsc::Receiver<()>,
}

/// Reads `source` to its end on a thread of its own, keeping the first `cap` bytes and counting
/// the rest, so the program never blocks on a full pipe. What it read is there to take at any
/// time ([`collect`]), so a pipe that a process left behind keeps open loses nothing that was
/// written before.
pub(super) fn drain(mut source: impl Read + Send + 'static, cap: usize) -> Reader {
    let read = Arc::new(Mutex::new(Drained::default()));
    let (sender, done) = mpsc::channel::<()>();
    let shared = Arc::clone(&read);
    std::thread::spawn(move || {
        // Dropped at the end of the output, which closes the channel.
        let _sender = sender;
        let mut buffer = [0u8; 64 * 1024];
        loop {
            match source.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => {
                    let mut read = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    if !read.taken {
                        let room = cap.saturating_sub(read.kept.len()).min(n);
                        read.kept.extend_from_slice(&buffer[..room]);
                        read.dropped += (n - room) as u64;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    });
    Reader { read, done }
}

/// Takes what `reader` read: all of its output once it ends, or by `until` what it read so far.
/// Returns the bytes kept, the bytes dropped past the cap, and whether the output was still
/// open at `until`.
pub(super) fn collect(reader: Reader, until: Instant) -> (Vec<u8>, u64, bool) {
    let wait = until.saturating_duration_since(Instant::now());
    let open = matches!(reader.done.recv_timeout(wait), Err(mpsc::RecvTimeoutError::Timeout));
    let mut read = reader.read.lock().unwrap_or_else(PoisonError::into_inner);
    read.taken = true;
    (std::mem::take(&mut read.kept), read.dropped, open)
}

/// The process groups of the programs running now, so that [`kill_running`] can end them.
static RUNNING: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Kills every external program still running, with everything it started: for a second
/// interrupt, which ends `runner` at once (the programs, in process groups of their own, would
/// otherwise run on, orphaned). Guards are asked first (SIGTERM), and given up to
/// [`TERM_GRACE`] to kill what left their process groups.
pub fn kill_running() {
    let snapshot = || RUNNING.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let groups = snapshot();
    if GUARD.get().is_some() {
        for &pid in &groups {
            signal_group(pid, nix::sys::signal::Signal::SIGTERM);
        }
        let until = Instant::now() + TERM_GRACE;
        while Instant::now() < until && snapshot().iter().any(|pid| groups.contains(pid)) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    for pid in groups {
        kill_group(pid);
    }
}

/// Registers or forgets a running program's process group.
fn running(pid: u32, alive: bool) {
    let mut groups = match RUNNING.lock() {
        Ok(groups) => groups,
        Err(poisoned) => poisoned.into_inner(),
    };
    if alive {
        groups.push(pid);
    } else {
        groups.retain(|&p| p != pid);
    }
}

/// Kills the process group led by `pid` (the program and whatever it started).
fn kill_group(pid: u32) {
    signal_group(pid, nix::sys::signal::Signal::SIGKILL);
}

/// Sends `signal` to the process group led by `pid`.
fn signal_group(pid: u32, signal: nix::sys::signal::Signal) {
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
}

/// Asks a guard to end its program and everything below it (SIGTERM to its process group), and
/// waits up to [`TERM_GRACE`] for it to end.
fn stop_guard(child: &mut Child, pid: u32) {
    signal_group(pid, nix::sys::signal::Signal::SIGTERM);
    let until = Instant::now() + TERM_GRACE;
    while Instant::now() < until {
        match child.try_wait() {
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Ok(Some(_)) | Err(_) => return,
        }
    }
}

/// Why the guard could not start the program, from its standard error, when its exit `status`
/// says so ([`crate::exec::guard::START_FAILED`]).
pub(super) fn start_failure(status: Option<ExitStatus>, stderr: &[u8]) -> Option<String> {
    if status?.code()? != crate::exec::guard::START_FAILED {
        return None;
    }
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .find_map(|line| line.strip_prefix(crate::exec::guard::START_FAILED_MARK))
        .map(str::to_string)
}

/// Starts the program, feeds it `request`, and waits for it within its time-out.
pub(super) fn run(
    method: &ExternalChoice,
    request: &[u8],
    interrupt: Option<&AtomicBool>,
) -> Result<Ended, String> {
    use std::os::unix::process::CommandExt as _;
    let started = Instant::now();
    let guard = GUARD.get();
    let mut command = match guard {
        // The guard runs the program in its place, in the directory and with the environment
        // given here, and kills what the program leaves behind (`crate::exec::guard`).
        Some(binary) => {
            let mut command = Command::new(binary);
            command
                .arg0("runner")
                .args(crate::exec::guard::arguments(std::process::id()))
                .arg(method.program());
            command
        }
        None => Command::new(method.program()),
    };
    command
        .args(method.command.iter().skip(1))
        .current_dir(&method.dir)
        .env("RUNNER_EXTERNAL_PROTOCOL", EXTERNAL_PROTOCOL.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group (the guard's, when there is one): a time-out kills everything it
        // started there, and the terminal's Ctrl-C reaches `runner`, which decides (see GRACE).
        .process_group(0);
    let mut child = command.spawn().map_err(|e| {
        format!("cannot start `{}` in {}: {e}", method.program().display(), method.dir.display())
    })?;
    let pid = child.id();
    running(pid, true);
    if let Some(mut stdin) = child.stdin.take() {
        let request = request.to_vec();
        // A program that never reads its input must not block `runner`: write on a thread.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&request);
        });
    }
    let stdout = child.stdout.take().map(|s| drain(s, MAX_STDOUT_BYTES));
    let stderr = child.stderr.take().map(|s| drain(s, MAX_LOG_BYTES));
    let deadline = Duration::from_secs(method.timeout_seconds);
    let interrupted_at = OnceLock::new();
    let mut ended = Ended::default();
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                ended.status = Some(status);
                break;
            }
            Ok(None) => {}
            Err(_) => {
                kill_group(pid);
                let _ = child.kill();
                ended.status = child.wait().ok();
                break;
            }
        }
        let stop = if started.elapsed() >= deadline {
            Some(Stop::TimedOut)
        } else if interrupt.is_some_and(|flag| flag.load(Ordering::SeqCst))
            && interrupted_at.get_or_init(Instant::now).elapsed() >= GRACE
        {
            Some(Stop::Cancelled)
        } else {
            None
        };
        if let Some(stop) = stop {
            if guard.is_some() {
                stop_guard(&mut child, pid);
            }
            kill_group(pid);
            let _ = child.kill();
            ended.status = child.wait().ok();
            ended.stop = Some(stop);
            break;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    // Whatever the program left running in its group goes with it, so the pipes close (a
    // guard has killed what left the group already).
    kill_group(pid);
    running(pid, false);
    ended.seconds = started.elapsed().as_secs_f64();
    let until = Instant::now() + PIPE_GRACE;
    if let Some(reader) = stdout {
        let (out, dropped, open) = collect(reader, until);
        ended.stdout = out;
        ended.stdout_overflow = dropped > 0;
        ended.pipes_open |= open;
    }
    if let Some(reader) = stderr {
        let (err, dropped, open) = collect(reader, until);
        ended.stderr = err;
        ended.stderr_dropped = dropped;
        ended.pipes_open |= open;
    }
    if guard.is_some()
        && ended.stop.is_none()
        && let Some(problem) = start_failure(ended.status, &ended.stderr)
    {
        return Err(format!(
            "cannot start `{}` in {}: {problem}",
            method.program().display(),
            method.dir.display()
        ));
    }
    Ok(ended)
}

/// Writes the task's log: a header (command, directory, how it ended), then the program's
/// standard error, then its standard output when that was the problem.
pub(super) fn write_log(
    path: &Path,
    method: &ExternalChoice,
    ran: Result<&Ended, &String>,
    outcome: &Result<Response, String>,
) -> std::io::Result<()> {
    let mut text = format!(
        "# runner external method `{}` ({} {})\n# command: {}\n# directory: {}\n",
        method.name,
        method.kind.as_str(),
        method.evaluator(),
        method.command_line(),
        method.dir.display()
    );
    let mut bytes = Vec::new();
    match ran {
        Err(problem) => text.push_str(&format!("# not started: {problem}\n")),
        Ok(ended) => {
            let how = match (ended.stop, ended.status) {
                (Some(Stop::TimedOut), _) => {
                    format!("killed after its time-out of {} s", method.timeout_seconds)
                }
                (Some(Stop::Cancelled), _) => "killed after an interrupt".to_string(),
                (None, Some(status)) => status.to_string(),
                (None, None) => "could not be waited for".to_string(),
            };
            text.push_str(&format!("# ended: {how}, after {:.3} s\n", ended.seconds));
            if let Err(problem) = outcome {
                text.push_str(&format!("# problem: {problem}\n"));
            }
            if ended.pipes_open {
                text.push_str(
                    "# a process it started kept its output open; runner stopped reading\n",
                );
            }
            text.push_str("# standard error:\n");
            bytes.extend_from_slice(text.as_bytes());
            bytes.extend_from_slice(&ended.stderr);
            if ended.stderr_dropped > 0 {
                bytes.extend_from_slice(
                    format!(
                        "\n# ... {} more bytes of standard error not kept\n",
                        ended.stderr_dropped
                    )
                    .as_bytes(),
                );
            }
            if outcome.is_err() && !ended.stdout.is_empty() {
                bytes.extend_from_slice(b"\n# standard output:\n");
                let shown = ended.stdout.len().min(64 * 1024);
                bytes.extend_from_slice(&ended.stdout[..shown]);
                bytes.push(b'\n');
            }
        }
    }
    if bytes.is_empty() {
        bytes = text.into_bytes();
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    crate::files::write_atomic_unsynced(path, &bytes)
}
