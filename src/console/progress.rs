//! Progress output: a bar with ETA on a terminal, plain periodic lines when piped, nothing with `--quiet`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Where progress goes.
pub enum Progress {
    /// Nothing is shown.
    Quiet,
    /// An indicatif bar on stderr.
    Bar(ProgressBar),
    /// A line on stderr every few seconds.
    Lines { total: u64, done: u64, last: Instant, started: Instant, label: String },
}

impl Progress {
    /// Chooses the kind of output for `total` tasks.
    pub fn new(total: u64, label: &str, quiet: bool) -> Progress {
        if quiet || total == 0 {
            return Progress::Quiet;
        }
        if std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb") {
            let bar = ProgressBar::new(total);
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} tasks {msg} ({elapsed}, eta {eta})",
            )
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_prefix(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(200));
            Progress::Bar(bar)
        } else {
            let now = Instant::now();
            Progress::Lines { total, done: 0, last: now, started: now, label: label.to_string() }
        }
    }

    /// One more task finished; `failed` so far.
    pub fn tick(&mut self, failed: u64) {
        match self {
            Progress::Quiet => {}
            Progress::Bar(bar) => {
                bar.inc(1);
                if failed > 0 {
                    bar.set_message(format!("{failed} failed"));
                }
            }
            Progress::Lines { total, done, last, started, label } => {
                *done += 1;
                if last.elapsed() >= Duration::from_secs(5) || *done == *total {
                    *last = Instant::now();
                    let elapsed = started.elapsed().as_secs_f64();
                    let eta = elapsed / (*done as f64) * ((*total - *done) as f64);
                    super::eprint_line(&format!(
                        "{label}: {done}/{total} tasks, {failed} failed, {elapsed:.1}s elapsed, eta {eta:.0}s"
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
        match self {
            Progress::Bar(bar) => bar.suspend(|| super::eprint_line(&format!("runner: {text}"))),
            _ => super::eprint_line(&format!("runner: {text}")),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
