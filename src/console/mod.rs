//! What `runner` writes for people: a command's product on stdout, messages and progress on
//! stderr. The one place that prints, below every module that has something to say.
//!
//! A command's product goes to stdout through [`write_stdout`] (the `outln!`/`out!` macros of
//! `cli`), which returns write errors: a full disk exits 2, a closed pipe (as in `| head`) ends
//! the command quietly. Messages and progress go to stderr through [`print_error`] and
//! [`eprint_line`] (and [`Progress`]), which drop write errors, so a closed stderr never ends
//! a run early or as a success.
//!
//! Text a user or a program supplied (spec values, paths, an external program's commands,
//! errors and `detail`) can hold control characters: an argument holding `\r\e[2K` erases the
//! line it is printed on, and the terminal shows whatever follows instead. [`escape`] is the
//! one function that makes such text visible, and [`escape_text`] the same for text with
//! lines; everything printed here goes through the latter, and the report's pages through it
//! too (`report::tables::sanitize`).

mod escape;
mod progress;

pub use escape::{escape, escape_text, is_invisible_format, needs_escape, shell_quote};
pub use progress::Progress;

/// A command's output could not be written to stdout.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output: {0}")]
pub struct StdoutError(#[source] pub std::io::Error);

/// Alternatives in words: `a`, `a or b`, `a, b or c`.
pub fn alternatives<S: AsRef<str>>(items: &[S]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.as_ref().to_owned(),
        Some((last, rest)) => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} or {}", rest.join(", "), last.as_ref())
        }
    }
}

/// Writes a command's output (its product: a table, JSON, DOT, ids) to stdout. A write error
/// is returned, never a panic: a closed pipe (`runner plan --dot | head`) then ends the command
/// quietly with exit 0, any other error (`> /dev/full`) with exit 2 and one message. Control
/// characters are shown, never sent ([`escape_text`]).
pub(crate) fn write_stdout(text: std::fmt::Arguments<'_>) -> Result<(), StdoutError> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let result = match text.as_str() {
        Some(text) => stdout.write_all(escape_text(text).as_bytes()),
        None => stdout.write_all(escape_text(&text.to_string()).as_bytes()),
    };
    result.and_then(|()| stdout.flush()).map_err(StdoutError)
}

/// Writes `runner: message` to stderr, control characters shown ([`escape_text`]). Messages and progress never fail a command: on a closed
/// or full stderr they are dropped and the command goes on (`runner run spec 2>&1 | head -1`
/// still finishes the run and writes its bundle, and exits with the run's own code).
pub(crate) fn print_error(message: &str) {
    use std::io::Write;
    progress::with_bar_suspended(|| {
        let _ = write!(std::io::stderr().lock(), "runner: {}", escape_text(message));
    });
}

/// Writes `line` and a newline to stderr, without a `runner:` prefix and with control
/// characters shown ([`escape_text`]); see [`print_error`].
pub(crate) fn eprint_line(line: &str) {
    use std::io::Write;
    progress::with_bar_suspended(|| {
        let _ = writeln!(std::io::stderr().lock(), "{}", escape_text(line));
    });
}
