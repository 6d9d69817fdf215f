//! Spec errors as data: every problem with its file, line, column and a hint.
//!
//! Validation collects all problems rather than stopping at the first one.
//! Rendering goes through miette, so parse errors from serde-saphyr and our
//! semantic errors look the same: `╭─[experiments/x.yaml:12:5]` and a snippet.

use std::fmt;
use std::path::{Path, PathBuf};

use miette::{Diagnostic as MietteDiagnostic, NamedSource, SourceSpan};
use serde_saphyr::Location;

use crate::suggest::did_you_mean;

/// One problem in a spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// What is wrong, in one sentence.
    pub message: String,
    /// Where (line and column are 1-based); `None` when the problem has no single place.
    pub location: Option<Location>,
    /// What to do about it.
    pub help: Option<String>,
}

/// All problems found in one spec file.
#[derive(Debug)]
pub struct SpecError {
    /// The spec file.
    pub path: PathBuf,
    /// Its text (empty when it could not be read as text).
    pub source: String,
    /// The problems, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// A parse error, rendered by serde-saphyr's miette integration.
    pub parse_report: Option<String>,
}

impl SpecError {
    /// An error with one diagnostic.
    pub fn single(path: &Path, source: &str, diagnostic: Diagnostic) -> SpecError {
        SpecError {
            path: path.to_path_buf(),
            source: source.to_string(),
            diagnostics: vec![diagnostic],
            parse_report: None,
        }
    }

    /// `file:line:column` of the first problem, for one-line summaries and tests.
    pub fn first_position(&self) -> String {
        let (line, column) = self
            .diagnostics
            .first()
            .and_then(|d| d.location)
            .map(|l| (l.line(), l.column()))
            .unwrap_or((1, 1));
        format!("{}:{}:{}", self.path.display(), line, column)
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(report) = &self.parse_report {
            writeln!(f, "{}: invalid spec", self.first_position())?;
            return write!(f, "{report}");
        }
        let count = self.diagnostics.len();
        writeln!(
            f,
            "{}: {} problem{} in this spec",
            self.first_position(),
            count,
            if count == 1 { "" } else { "s" }
        )?;
        let name = self.path.display().to_string();
        for diagnostic in &self.diagnostics {
            let position = diagnostic
                .location
                .filter(|l| l.line() > 0)
                .map(|l| format!("{name}:{}:{}", l.line(), l.column()))
                .unwrap_or_else(|| name.clone());
            // miette's renderer cannot draw a snippet of a very long line (it panics past
            // column 65,535); such a problem is reported by its position alone.
            let snippet = !has_long_line(&self.source);
            let report = miette::Report::new(Located {
                message: format!("{} (at {position})", diagnostic.message),
                src: NamedSource::new(
                    name.clone(),
                    if snippet { self.source.clone() } else { String::new() },
                ),
                span: diagnostic
                    .location
                    .filter(|_| snippet)
                    .and_then(|l| span_of(&self.source, l)),
                help: diagnostic.help.clone(),
            });
            writeln!(f, "{report:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecError {}

#[derive(Debug, thiserror::Error, MietteDiagnostic)]
#[error("{message}")]
struct Located {
    message: String,
    #[source_code]
    src: NamedSource<String>,
    #[label("here")]
    span: Option<SourceSpan>,
    #[help]
    help: Option<String>,
}

/// Lines longer than this many bytes get no source snippet in a diagnostic.
const MAX_SNIPPET_LINE: usize = 4_096;

/// Whether any line of `source` (split YAML's way: LF, CRLF or a lone CR) is too long to show
/// in a snippet: the renderer counts columns in 16 bits, and such a snippet is unreadable anyway.
fn has_long_line(source: &str) -> bool {
    source.split(['\n', '\r']).any(|line| line.len() > MAX_SNIPPET_LINE)
}

/// The byte span of a location in `source`: the token that starts there.
fn span_of(source: &str, location: Location) -> Option<SourceSpan> {
    if location.line() == 0 {
        return None;
    }
    let offset = match location.span().byte_offset() {
        Some(offset) => usize::try_from(offset).ok()?,
        None => {
            let line_start: usize = source
                .split_inclusive('\n')
                .take(usize::try_from(location.line()).ok()? - 1)
                .map(str::len)
                .sum();
            let column = usize::try_from(location.column()).ok()?.saturating_sub(1);
            line_start
                + source[line_start..].chars().take(column).map(char::len_utf8).sum::<usize>()
        }
    };
    if offset > source.len() {
        return None;
    }
    let rest = &source[offset..];
    let len =
        rest.find(['\n', ':', ',', ']', '}']).unwrap_or(rest.len()).max(1).min(rest.len().max(1));
    Some(SourceSpan::new(offset.into(), len))
}

/// A 1-based line and column as a location (serde-saphyr keeps its constructor private, so the
/// value goes through its public deserializer); `None` for line 0.
pub fn location(line: usize, column: usize) -> Option<Location> {
    (line > 0).then_some(())?;
    serde_json::from_value(serde_json::json!({ "line": line, "column": column })).ok()
}

/// Turns a serde-saphyr error into a [`SpecError`], adding a "did you mean" to unknown keys.
pub fn from_parse_error(path: &Path, source: &str, error: &serde_saphyr::Error) -> SpecError {
    let name = path.display().to_string();
    // The message alone: serde-saphyr's `Display` appends a snippet of its own that names the
    // source `<input>`; where a snippet is drawn, it is drawn below under the spec's name.
    let text = without_position(&error.without_snippet().to_string());
    if let Some((_, rest)) = text.split_once("duplicate mapping key") {
        // serde-saphyr's text tells library users which option to set; say it in our words,
        // rendered like our own diagnostics.
        let key = rest.strip_prefix(": ").and_then(|r| r.split(',').next()).unwrap_or("");
        return SpecError::single(
            path,
            source,
            Diagnostic {
                message: format!("the key `{key}` appears twice in the same mapping"),
                location: error.location().filter(|l| l.line() > 0),
                help: Some("a key may appear once: remove or rename one of the two".into()),
            },
        );
    }
    let help = unknown_field_help(&text);
    // No snippet for very long lines (see `has_long_line`): then our own rendering, by position.
    let parse_report = (!has_long_line(source)).then(|| {
        let mut options = serde_saphyr::RenderOptions::default();
        options.source_name = Some(&name);
        let report =
            serde_saphyr::miette::to_miette_report_with_options(error, source, &name, options);
        let mut report = format!("{report:?}");
        if let Some(help) = &help {
            report.push_str(&format!("\n  help: {help}\n"));
        }
        report
    });
    SpecError {
        path: path.to_path_buf(),
        source: source.to_string(),
        diagnostics: vec![Diagnostic {
            message: text,
            location: error.location().filter(|l| l.line() > 0),
            help,
        }],
        parse_report,
    }
}

/// `message` without serde-saphyr's trailing ` at line L, column C`: the rendering gives the
/// position once, with the spec's name.
fn without_position(message: &str) -> String {
    if let Some((text, position)) = message.rsplit_once(" at line ")
        && let Some((line, column)) = position.split_once(", column ")
        && [line, column.trim_end()]
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        return text.to_string();
    }
    message.to_string()
}

/// "did you mean `virtual_channels`?" for serde's "unknown field `x`, expected one of ..." messages.
fn unknown_field_help(message: &str) -> Option<String> {
    let rest = message.split("unknown field `").nth(1)?;
    let (unknown, rest) = rest.split_once('`')?;
    let list = rest.split("expected one of ").nth(1).or_else(|| rest.split("expected ").nth(1))?;
    let list = list.lines().next().unwrap_or_default();
    let expected: Vec<&str> = list
        .split(',')
        .map(|k| k.trim().trim_matches('`'))
        .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    match did_you_mean(unknown, expected.iter().copied()) {
        Some(best) => Some(format!("did you mean `{best}`?")),
        None if !expected.is_empty() => Some(format!(
            "valid keys here: {}",
            expected.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        )),
        None => None,
    }
}
