//! Experiment specs: YAML in, a validated, fully expanded [`Experiment`] out.
//!
//! This is the only module that knows YAML. [`load`] reads a file, parses it
//! with serde-saphyr (budgets on nesting, aliases and events refuse alias bombs
//! and absurd nesting), validates every value with its location, and expands
//! the sweeps into scenario points (order documented in [`validate`]).

pub mod columns;
pub mod error;
pub mod external;
pub mod report;
pub mod sweep;
pub mod trace;
pub mod types;
pub mod validate;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_saphyr::{Budget, Location, Options};
use sha2::{Digest, Sha256};

pub use error::{Diagnostic, SpecError};
use report::ReportSpec;
pub use types::SaturationOf;

use crate::model::{ModelName, ModelOptions};
use crate::scenario::Scenario;
use crate::sim::SimOptions;

/// A validated, expanded experiment.
#[derive(Clone, Debug, Serialize)]
pub struct Experiment {
    /// The spec's `name`.
    pub name: String,
    /// Report title (the name when the spec has none).
    pub title: String,
    /// Free text from the spec.
    pub description: Option<String>,
    /// Root seed.
    pub seed: u64,
    /// Distinct scenarios, in expansion order.
    pub scenarios: Vec<ScenarioPoint>,
    /// Load points, applied to every scenario (written as the range they came from when
    /// they are exactly its points: a copy of a 100,000-point sweep stays three lines).
    #[serde(serialize_with = "serialize_load")]
    pub load: Load,
    /// Whose saturation a load given as `fraction_of_saturation` is a fraction of.
    #[serde(skip_serializing_if = "SaturationOf::is_model")]
    pub saturation_of: SaturationOf,
    /// The analytical model, if requested.
    pub model: Option<ModelChoice>,
    /// The simulator settings, if requested.
    pub simulation: Option<SimulationChoice>,
    /// External evaluators, in the order the spec lists them.
    pub external: Vec<external::ExternalChoice>,
    /// Figures and tables.
    pub report: ReportSpec,
    /// Names of the scenario fields with more than one value.
    pub swept: Vec<&'static str>,
    /// Things that are valid but probably not what was meant (printed, never fatal).
    #[serde(skip)]
    pub warnings: Vec<Diagnostic>,
}

/// One scenario of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioPoint {
    /// The system.
    pub scenario: Scenario,
    /// A short description for messages and progress.
    pub label: String,
}

/// Load points in messages/node/cycle, or as fractions of the model's saturation rate.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Load {
    /// Absolute offered loads.
    Rates(Vec<f64>),
    /// Fractions of the saturation rate the model computes for each scenario.
    FractionOfSaturation(Vec<f64>),
    /// Time scale factors of a replayed trace (`traffic.pattern: trace`): the rate is what
    /// the trace offers at each.
    TraceTimeScale(Vec<f64>),
}

/// A load list as a `{from, to, points}` range when it is exactly that range's values (the
/// same floating-point numbers the spec loader expands), else as the list.
fn serialize_load<S: serde::Serializer>(load: &Load, serializer: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Points {
        from: f64,
        to: f64,
        points: u64,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Compact {
        Rates(Points),
        FractionOfSaturation(Points),
        TraceTimeScale(Points),
    }
    let (Load::Rates(values) | Load::FractionOfSaturation(values) | Load::TraceTimeScale(values)) =
        load;
    let range = match (values.first(), values.last()) {
        (Some(&from), Some(&to)) if values.len() > 2 => {
            let range = sweep::Range { from, to, by: sweep::RangeBy::Points(values.len() as u64) };
            range.values().ok().filter(|expanded| expanded == values).map(|_| Points {
                from,
                to,
                points: values.len() as u64,
            })
        }
        _ => None,
    };
    match (range, load) {
        (Some(points), Load::Rates(_)) => Compact::Rates(points).serialize(serializer),
        (Some(points), Load::FractionOfSaturation(_)) => {
            Compact::FractionOfSaturation(points).serialize(serializer)
        }
        (Some(points), Load::TraceTimeScale(_)) => {
            Compact::TraceTimeScale(points).serialize(serializer)
        }
        (None, load) => load.serialize(serializer),
    }
}

impl Load {
    /// Number of load points.
    pub fn len(&self) -> usize {
        match self {
            Load::Rates(v) | Load::FractionOfSaturation(v) | Load::TraceTimeScale(v) => v.len(),
        }
    }

    /// Whether there are no load points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The model a spec asks for.
#[derive(Clone, Debug, Serialize)]
pub struct ModelChoice {
    /// Which model.
    pub name: ModelName,
    /// Its reading options.
    pub options: ModelOptions,
    /// Points of the dense model curve per scenario (0: none).
    pub curve_points: u32,
    /// Where the spec names it.
    #[serde(skip)]
    pub location: Location,
}

/// The simulator settings a spec asks for.
#[derive(Clone, Debug, Serialize)]
pub struct SimulationChoice {
    /// Run length and stopping rules.
    pub options: SimOptions,
    /// Independent replications per load point.
    pub replications: u32,
    /// Independent saturation searches per scenario (0: none).
    pub saturation_searches: u32,
    /// Threads per simulation of a large network (`None`: the run decides per task, see
    /// `exec::threads`); never part of a task's identity.
    #[serde(skip_serializing)]
    pub threads: Option<u32>,
}

/// A spec file read from disk: its text and hash, before parsing.
#[derive(Clone, Debug)]
pub struct SpecSource {
    /// Path as given.
    pub path: PathBuf,
    /// The file's text.
    pub text: String,
    /// SHA-256 of the file's bytes (hex).
    pub sha256: String,
}

/// Spec files larger than this (1 MiB) are refused before they are read.
pub const MAX_SPEC_BYTES: u64 = 1 << 20;

/// Loads per Solve task: a scenario's load points are cut, in load order, into batches of this
/// many (the last one shorter), a pure function of the spec. A batch of 4096 model points takes
/// some 40 ms and its cache entry some 3 MB, and a large sweep still keeps every core busy.
/// Defined here, below `plan`, because validation counts a sweep's tasks before planning it.
pub const SOLVE_BATCH: usize = 4096;

/// Bounds a spec must respect, checked at validation time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most tasks the spec may plan (Saturation + Solve + Simulate + Aggregate + Gather +
    /// Report); `--max-tasks` raises it.
    pub max_tasks: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_tasks: validate::MAX_TASKS }
    }
}

/// Reads, parses, validates and expands the spec at `path` under the default [`Limits`].
pub fn load(path: &Path) -> Result<(SpecSource, Experiment), SpecError> {
    load_with(path, &Limits::default())
}

/// Reads, parses, validates and expands the spec at `path` under `limits`.
pub fn load_with(path: &Path, limits: &Limits) -> Result<(SpecSource, Experiment), SpecError> {
    let source = read(path)?;
    let experiment = parse_with(&source, limits)?;
    Ok((source, experiment))
}

/// Reads a spec file as UTF-8 text: only a regular file of at most [`MAX_SPEC_BYTES`], checked
/// before reading (so `/dev/zero` or a FIFO is refused at once, not read for minutes).
pub fn read(path: &Path) -> Result<SpecSource, SpecError> {
    use std::io::Read as _;
    let fail = |message: String, location: Option<Location>, source: &str| {
        SpecError::single(path, source, Diagnostic { message, location, help: None })
    };
    let cannot_read = |e: std::io::Error| fail(format!("cannot read the spec: {e}"), None, "");
    let metadata = std::fs::metadata(path).map_err(cannot_read)?;
    if !metadata.is_file() {
        let what = if metadata.is_dir() { "a directory" } else { "not a regular file" };
        return Err(fail(format!("the spec is {what}; give a YAML file"), None, ""));
    }
    let too_large = |size: u64| {
        fail(
            format!(
                "the spec is {size} bytes; specs are limited to {MAX_SPEC_BYTES} bytes (1 MiB)"
            ),
            None,
            "",
        )
    };
    if metadata.len() > MAX_SPEC_BYTES {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_SPEC_BYTES + 1).read_to_end(&mut bytes))
        .map_err(cannot_read)?;
    if bytes.len() as u64 > MAX_SPEC_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    let sha256 = hex(&Sha256::digest(&bytes));
    let text = String::from_utf8(bytes).map_err(|e| {
        let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
        let valid = String::from_utf8_lossy(&e.as_bytes()[..e.utf8_error().valid_up_to()]);
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        fail(
            "the spec is not UTF-8 text (an invalid byte here); is this a YAML file?".into(),
            error::location(line, column),
            &lossy,
        )
    })?;
    Ok(SpecSource { path: path.to_path_buf(), text, sha256 })
}

/// Parses and validates spec text under the default [`Limits`].
pub fn parse(source: &SpecSource) -> Result<Experiment, SpecError> {
    parse_with(source, &Limits::default())
}

/// Parses and validates spec text under `limits`.
pub fn parse_with(source: &SpecSource, limits: &Limits) -> Result<Experiment, SpecError> {
    let path = &source.path;
    let text = &source.text;
    // YAML breaks lines at LF, CRLF and a lone CR (`str::lines` misses the last), so a file of
    // CR-only lines with a leading comment is not one long comment.
    if text.split(['\n', '\r']).all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) {
        return Err(SpecError::single(
            path,
            text,
            Diagnostic {
                message: "the spec is empty".into(),
                location: None,
                help: Some("start from experiments/quickstart.yaml".into()),
            },
        ));
    }
    let mut budget = Budget::default();
    budget.max_depth = 32;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_events = 200_000;
    let mut options = Options::default();
    options.budget = Some(budget);
    let file: types::SpecFile = serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| error::from_parse_error(path, text, &e))?;
    let trace_location = file.scenario.value.traffic.as_ref().and_then(|t| t.trace.as_ref());
    let trace_location = trace_location.map(|t| t.referenced);
    let mut diags = validate::Diags::default();
    let spec_dir = path.parent().filter(|dir| !dir.as_os_str().is_empty());
    let spec_dir = spec_dir.unwrap_or(Path::new("."));
    let mut experiment = validate::validate(file, limits, spec_dir, &mut diags);
    if let Some(experiment) = &mut experiment {
        diags.0.extend(experiment.report.check_template_dir(spec_dir));
        diags.0.extend(external::resolve(&mut experiment.external, spec_dir));
        if diags.0.is_empty() {
            diags.0.extend(trace::resolve(experiment, spec_dir, trace_location));
        }
    }
    match experiment {
        Some(experiment) if diags.0.is_empty() => Ok(experiment),
        _ => {
            let mut diagnostics = diags.0;
            diagnostics.sort_by_key(|d| d.location.map(|l| (l.line(), l.column())));
            Err(SpecError {
                path: path.clone(),
                source: text.clone(),
                diagnostics,
                parse_report: None,
            })
        }
    }
}

/// Lower-case hex of a byte string.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The JSON Schema of the spec format (draft 2020-12), as pretty JSON.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(types::SpecFile);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
