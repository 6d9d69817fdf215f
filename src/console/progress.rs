//! Progress output: a bar with ETA on a terminal, plain periodic lines when piped, nothing with `--quiet`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// The bar on screen, if any: every message printed meanwhile goes above it
/// ([`with_bar_suspended`]), whichever thread prints (a spec's bundle is written on a thread of
/// its own while the run's bar goes on).
static ACTIVE: std::sync::Mutex<Option<ProgressBar>> = std::sync::Mutex::new(None);

/// Runs `print` with the bar on screen (if any) cleared, and draws it again after.
pub(crate) fn with_bar_suspended(print: impl FnOnce()) {
    let bar = ACTIVE.lock().ok().and_then(|active| active.clone());
    match bar {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// Where progress goes.
pub enum Progress {
    /// Nothing is shown.
    Quiet,
    /// An indicatif bar on stderr.
    Bar { bar: ProgressBar, eta: Eta },
    /// A line on stderr every few seconds.
    Lines { total: u64, done: u64, last: Instant, label: String, eta: Eta },
}

/// The time left, from the work done so far: by task count, or by the tasks' estimated costs
/// when they are known ([`Progress::with_work`]), which is right when the longest tasks go
/// first and the count alone would make the end look far.
pub struct Eta {
    started: Instant,
    /// The work in all (tasks, or estimated seconds).
    total: f64,
    /// The work done.
    done: f64,
}

impl Eta {
    /// Seconds left at the rate so far (`None` before any work is done).
    fn left(&self) -> Option<f64> {
        (self.done > 0.0).then(|| {
            self.started.elapsed().as_secs_f64() / self.done * (self.total - self.done).max(0.0)
        })
    }

    /// `, eta 40s` or nothing.
    fn text(&self) -> String {
        self.left().map_or_else(String::new, |left| format!(", eta {left:.0}s"))
    }
}

impl Progress {
    /// Chooses the kind of output for `total` tasks.
    pub fn new(total: u64, label: &str, quiet: bool) -> Progress {
        if quiet || total == 0 {
            return Progress::Quiet;
        }
        let eta = Eta { started: Instant::now(), total: total as f64, done: 0.0 };
        if std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb") {
            let bar = ProgressBar::new(total);
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} tasks ({elapsed}{msg})",
            )
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_prefix(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(200));
            if let Ok(mut active) = ACTIVE.lock() {
                *active = Some(bar.clone());
            }
            Progress::Bar { bar, eta }
        } else {
            Progress::Lines { total, done: 0, last: Instant::now(), label: label.to_string(), eta }
        }
    }

    /// Counts the time left by estimated cost: the tasks' estimates sum to `seconds`, and each
    /// [`Progress::tick_work`] says what the task that ended was estimated to cost. (Without
    /// it, or when `seconds` is not positive and finite, by task count.)
    pub fn with_work(mut self, seconds: f64) -> Progress {
        if seconds.is_finite() && seconds > 0.0 {
            match &mut self {
                Progress::Bar { eta, .. } | Progress::Lines { eta, .. } => eta.total = seconds,
                Progress::Quiet => {}
            }
        }
        self
    }

    /// One more task finished; `failed` so far.
    pub fn tick(&mut self, failed: u64) {
        self.tick_work(failed, 1.0);
    }

    /// One more task finished, estimated at `work` ([`Progress::with_work`]); `failed` so far.
    pub fn tick_work(&mut self, failed: u64, work: f64) {
        let failed_text = if failed > 0 { format!(", {failed} failed") } else { String::new() };
        match self {
            Progress::Quiet => {}
            Progress::Bar { bar, eta } => {
                eta.done += work.max(0.0);
                bar.inc(1);
                bar.set_message(format!("{}{failed_text}", eta.text()));
            }
            Progress::Lines { total, done, last, label, eta } => {
                *done += 1;
                eta.done += work.max(0.0);
                if last.elapsed() >= Duration::from_secs(5) || *done == *total {
                    *last = Instant::now();
                    let elapsed = eta.started.elapsed().as_secs_f64();
                    super::eprint_line(&format!(
                        "{label}: {done}/{total} tasks, {failed} failed, {elapsed:.1}s elapsed{}",
                        eta.text()
                    ));
                }
            }
        }
    }

    /// Prints `runner: text` on stderr above the bar (nothing when `quiet`).
    pub fn println(&self, quiet: bool, text: &str) {
        if quiet {
            return;
        }
        // `eprint_line` suspends the bar on screen.
        super::eprint_line(&format!("runner: {text}"));
    }

    /// Removes the bar (dropping it does too).
    pub fn finish(&self) {
        if let Progress::Bar { bar, .. } = self {
            clear(bar);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Takes `bar` off the screen, and off [`ACTIVE`].
fn clear(bar: &ProgressBar) {
    if let Ok(mut active) = ACTIVE.lock() {
        *active = None;
    }
    bar.finish_and_clear();
}
