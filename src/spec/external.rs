//! `methods.external`: programs run as evaluators, checked and resolved.
//!
//! [`choices`] checks what the YAML says (names, command, replications, time-out, cost) with
//! the location of every problem; [`resolve`] then anchors the method in the spec file's
//! directory: the command runs there, `inputs` and a program written with a `/` are files
//! relative to it, and each such file's blake3 content hash is taken now, through
//! [`crate::files::hash_regular`], so the task ids of `plan::identity` are pure functions of the
//! [`ExternalChoice`]. The protocol itself is `exec::external` and `docs/external.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_saphyr::Location;

use super::error::Diagnostic;
use super::types::{
    DEFAULT_EXTERNAL_COST_SECONDS, DEFAULT_EXTERNAL_TIMEOUT_SECONDS, DEFAULT_REPLICATIONS,
    ExternalKind, MeasureName, MethodsSpec,
};
use crate::console::shell_quote;
use crate::files::short_hash;

/// The longest external method name.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest time-out an external evaluation may have: a week.
pub const MAX_TIMEOUT_SECONDS: u64 = 7 * 24 * 3600;
/// The most replications per load point (as for the built-in simulation).
pub const MAX_REPLICATIONS: u32 = 10_000;

/// A file an external method depends on, with its content hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HashedFile {
    /// The path as the spec writes it.
    pub path: String,
    /// blake3 of its content (hex); empty until [`resolve`].
    pub blake3: String,
}

/// One external evaluator, validated and resolved.
#[derive(Clone, Debug, Serialize)]
pub struct ExternalChoice {
    /// The method's name (the rows' `method`).
    pub name: String,
    /// Model (one evaluation per load) or simulation (seeded replications).
    pub kind: ExternalKind,
    /// The program and its arguments, as written.
    pub command: Vec<String>,
    /// The program file when the command names one by path (it has a `/`), hashed.
    pub executable: Option<HashedFile>,
    /// The declared inputs, hashed.
    pub inputs: Vec<HashedFile>,
    /// The declared version.
    pub version: String,
    /// Replications per load point (1 for a model).
    pub replications: u32,
    /// Saturation searches per scenario (`kind: simulation`; 0: none).
    pub saturation_searches: u32,
    /// Seconds one evaluation may run.
    pub timeout_seconds: u64,
    /// The plan's estimate of one evaluation, in seconds.
    pub cost_seconds: f64,
    /// Settings handed to the program.
    /// `kind: simulation`: true when the program measures throughput (`measure: throughput`);
    /// false for latency, the default, and for models.
    pub throughput: bool,
    pub options: BTreeMap<String, serde_json::Value>,
    /// The spec file's directory, absolute: where the command runs and paths resolve.
    pub dir: PathBuf,
    /// Where the spec writes the command and each input.
    #[serde(skip)]
    locations: Locations,
}

#[derive(Clone, Debug, Default)]
struct Locations {
    command: Option<Location>,
    inputs: Vec<Location>,
}

impl ExternalChoice {
    /// The program to start: a path below [`ExternalChoice::dir`] when the command names a file,
    /// else the bare name (looked up on `PATH`).
    pub fn program(&self) -> PathBuf {
        let first = self.command.first().map(String::as_str).unwrap_or_default();
        if first.contains('/') { self.dir.join(first) } else { PathBuf::from(first) }
    }

    /// The command line for people: each word quoted when it needs to be, control characters
    /// shown as escapes (`console::shell_quote`), so the line shows exactly what runs.
    pub fn command_line(&self) -> String {
        self.command.iter().map(|word| shell_quote(word)).collect::<Vec<_>>().join(" ")
    }

    /// The `evaluator` column of this method's rows: `name@version`.
    pub fn evaluator(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }

    /// The first file the method depends on (its program file, then its inputs) whose content
    /// is no longer the one hashed when the spec was loaded, as a problem; `None` when every
    /// one is unchanged. Task ids hold those hashes, so a changed file must not be evaluated
    /// (and cached) under them.
    pub fn changed_file(&self) -> Option<String> {
        let program = self.executable.iter().map(|file| ("program", file));
        let inputs = self.inputs.iter().map(|file| ("input", file));
        for (what, file) in program.chain(inputs) {
            let full = self.dir.join(&file.path);
            match crate::files::changed_hash(&full, &file.blake3) {
                Ok(None) => {}
                Ok(Some(now)) => {
                    return Some(format!(
                        "its {what} {} changed since the spec was loaded (blake3 {} is now {}); \
                         nothing is cached, so run again to evaluate the new content",
                        full.display(),
                        short_hash(&file.blake3),
                        short_hash(&now)
                    ));
                }
                Err(e) => {
                    return Some(format!(
                        "its {what} {} cannot be read again: {e}",
                        full.display()
                    ));
                }
            }
        }
        None
    }
}

fn error(location: Location, message: impl Into<String>, help: Option<&str>) -> Diagnostic {
    Diagnostic { message: message.into(), location: Some(location), help: help.map(str::to_string) }
}

/// Whether `name` may name a method: a letter, then letters, digits or `_`.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The external methods of `methods`, each checked; problems go to `diags`. Hashes are empty
/// until [`resolve`].
pub fn choices(methods: &MethodsSpec, diags: &mut Vec<Diagnostic>) -> Vec<ExternalChoice> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::with_capacity(methods.external.len());
    for entry in &methods.external {
        let method = &entry.value;
        let name = method.name.value.as_str();
        let at = method.name.referenced;
        if !is_identifier(name) || name.len() > MAX_NAME_CHARS {
            diags.push(error(
                at,
                format!(
                    "external method name {name:?} is not a name: a letter, then letters, digits or `_`, at most {MAX_NAME_CHARS}"
                ),
                Some("for example `booksim` or `md1_model`"),
            ));
        } else if name == "model" || name == "simulation" {
            diags.push(error(
                at,
                format!("`{name}` names a built-in method; give the external method its own name"),
                None,
            ));
        } else if seen.contains(&name) {
            diags.push(error(
                at,
                format!("two external methods are named `{name}`; rows could not tell them apart"),
                None,
            ));
        }
        seen.push(name);
        let command = &method.command;
        if command.value.is_empty() || command.value[0].trim().is_empty() {
            diags.push(error(
                command.referenced,
                "`command` is empty; give the program and its arguments",
                Some("for example `command: [python3, adapters/md1_channel.py]`"),
            ));
        } else if command.value.iter().any(|word| word.contains('\0')) {
            diags.push(error(command.referenced, "`command` holds a NUL character", None));
        }
        let kind = method.kind.value;
        let replications = match (&method.replications, kind) {
            (None, _) => DEFAULT_REPLICATIONS,
            (Some(r), ExternalKind::Model) => {
                diags.push(error(
                    r.referenced,
                    "`replications` applies to `kind: simulation` only; a model is evaluated once per load point",
                    Some("remove `replications`, or set `kind: simulation`"),
                ));
                1
            }
            (Some(r), ExternalKind::Simulation) => {
                if !(1..=MAX_REPLICATIONS).contains(&r.value) {
                    diags.push(error(
                        r.referenced,
                        format!(
                            "`replications` must be 1 to {MAX_REPLICATIONS}, found {}",
                            r.value
                        ),
                        None,
                    ));
                }
                r.value
            }
        };
        let saturation_searches = match (&method.saturation_searches, kind) {
            (None, _) => 0,
            (Some(n), ExternalKind::Model) => {
                diags.push(error(
                    n.referenced,
                    "`saturation_searches` applies to `kind: simulation` only: a model's \
                     saturation is not searched by simulating loads",
                    Some("remove `saturation_searches`, or set `kind: simulation`"),
                ));
                0
            }
            (Some(n), ExternalKind::Simulation) => {
                if let Err(message) = crate::spec::validate::check_saturation_searches(n.value) {
                    diags.push(error(n.referenced, message, None));
                }
                n.value
            }
        };
        let measure = method.measure.as_ref().map(|m| m.value);
        if let Some(m) = &method.measure
            && kind == ExternalKind::Model
        {
            diags.push(error(
                m.referenced,
                "`measure` applies to `kind: simulation` only; a model is evaluated once per load point",
                Some("remove `measure`, or set `kind: simulation`"),
            ));
        }
        let timeout_seconds =
            method.timeout_seconds.as_ref().map_or(DEFAULT_EXTERNAL_TIMEOUT_SECONDS, |t| t.value);
        if let Some(t) = &method.timeout_seconds
            && !(1..=MAX_TIMEOUT_SECONDS).contains(&t.value)
        {
            diags.push(error(
                t.referenced,
                format!(
                    "`timeout_seconds` must be 1 to {MAX_TIMEOUT_SECONDS} (a week), found {}",
                    t.value
                ),
                None,
            ));
        }
        let cost_seconds =
            method.cost_seconds.as_ref().map_or(DEFAULT_EXTERNAL_COST_SECONDS, |c| c.value);
        if let Some(c) = &method.cost_seconds
            && !(c.value.is_finite() && c.value >= 0.0 && c.value <= 1e9)
        {
            diags.push(error(
                c.referenced,
                format!(
                    "`cost_seconds` must be a number of seconds from 0 to 1e9, found {}",
                    crate::number::compact(c.value)
                ),
                None,
            ));
        }
        let version = method.version.value.trim();
        if version.is_empty() {
            diags.push(error(
                method.version.referenced,
                "`version` is empty; declare the evaluator's version (a release or a commit)",
                None,
            ));
        }
        for input in &method.inputs {
            if input.value.trim().is_empty() || input.value.contains('\0') {
                diags.push(error(input.referenced, "an empty input path", None));
            }
        }
        out.push(ExternalChoice {
            name: name.to_string(),
            kind,
            command: command.value.clone(),
            executable: None,
            inputs: method
                .inputs
                .iter()
                .map(|i| HashedFile { path: i.value.clone(), blake3: String::new() })
                .collect(),
            version: version.to_string(),
            replications,
            saturation_searches,
            timeout_seconds,
            cost_seconds,
            throughput: measure == Some(MeasureName::Throughput),
            options: method.options.clone(),
            dir: PathBuf::new(),
            locations: Locations {
                command: Some(command.referenced),
                inputs: method.inputs.iter().map(|i| i.referenced).collect(),
            },
        });
    }
    out
}

/// Anchors each method in `spec_dir` (made absolute) and hashes its inputs and its program
/// file; returns the problems (a file that is missing, not a regular file, or unreadable).
pub fn resolve(choices: &mut [ExternalChoice], spec_dir: &Path) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    if choices.is_empty() {
        return diags;
    }
    let dir = std::path::absolute(spec_dir).unwrap_or_else(|_| spec_dir.to_path_buf());
    for choice in choices.iter_mut() {
        choice.dir = dir.clone();
        let hash = |path: &str, what: &str, location: Option<Location>| {
            let full = dir.join(path);
            crate::files::hash_regular(&full).map_err(|e| {
                let why = match e.kind() {
                    std::io::ErrorKind::NotFound => "does not exist".to_string(),
                    _ => e.to_string(),
                };
                Diagnostic {
                    message: format!(
                        "external method `{}`: {what} {} {why}",
                        choice.name,
                        full.display()
                    ),
                    location,
                    help: Some("paths are relative to the spec file's directory".into()),
                }
            })
        };
        for (index, input) in choice.inputs.iter_mut().enumerate() {
            let location = choice.locations.inputs.get(index).copied();
            match hash(&input.path, "input", location) {
                Ok(digest) => input.blake3 = digest,
                Err(diagnostic) => diags.push(diagnostic),
            }
        }
        if let Some(first) = choice.command.first().filter(|word| word.contains('/')) {
            match hash(first, "program", choice.locations.command) {
                Ok(digest) => {
                    choice.executable = Some(HashedFile { path: first.clone(), blake3: digest })
                }
                Err(diagnostic) => diags.push(diagnostic),
            }
        }
    }
    diags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_identifiers_and_words_are_quoted_when_needed() {
        assert!(is_identifier("booksim"));
        assert!(is_identifier("md1_model2"));
        assert!(!is_identifier("2fast"));
        assert!(!is_identifier("my-sim"));
        assert!(!is_identifier(""));
        assert_eq!(shell_quote("adapters/md1.py"), "adapters/md1.py");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
