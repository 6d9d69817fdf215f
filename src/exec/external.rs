//! External evaluators: one run of a program named in `methods.external`, by the protocol of
//! `docs/external.md` (JSON Schemas in `schemas/external-request.schema.json` and
//! `schemas/external-response.schema.json`, generated from [`Request`] and [`Response`]).
//!
//! `runner` starts the program in the spec file's directory, in a process group of its own,
//! writes one [`Request`] to its standard input and closes it, and reads one [`Response`] from
//! its standard output (at most [`MAX_STDOUT_BYTES`]). Standard error goes to the task's log
//! beside its cache entry (`.runner/cache/<xx>/<task id>.log`, at most [`MAX_LOG_BYTES`] of
//! it, after a header naming the command and how it ended). A program that outlives its
//! `timeout_seconds` is killed with its whole process group.
//!
//! When a guard is registered ([`use_guard`]; the `runner` binary registers itself), the
//! program runs under it ([`super::guard`]): the guard leads the process group, and kills every
//! process below it when the program ends, when `runner` stops it (SIGTERM, then the group's
//! SIGKILL [`TERM_GRACE`] later) and when `runner` dies, even by `kill -9` (its parent-death
//! signal). So nothing the program started outlives the task, not even a process that left the
//! group with `setsid`, and a pipe such a process held open no longer costs the reply: the
//! output readers hand over what they read so far when a pipe is still open [`PIPE_GRACE`]
//! after the program ended.
//!
//! Everything a program can do wrong (not start, exit non-zero, die by a signal, time out,
//! print something that is not one JSON object, give a key twice, leave out a required field,
//! give a value of the wrong type or a number outside its domain, print too much) is a
//! [`Failure`] that names the problem and the log: a failed row, never the end of the run.
//! `unsupported` with a reason is a result.

use std::collections::BTreeMap;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, mpsc};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cache::Output;
use super::evaluate::{CANCELLED, Failure, GRACE};
use crate::measurement::{Measurement, Status};
use crate::plan::Task;
use crate::plan::identity::EXTERNAL_PROTOCOL;
use crate::scenario::Scenario;
use crate::spec::external::ExternalChoice;
use crate::spec::types::ExternalKind;
use crate::store::build::{base_row, fill, finite};
use crate::store::row::{Row, column_type};

/// The most a program may print on standard output (16 MiB); more is a failure.
pub const MAX_STDOUT_BYTES: usize = 16 << 20;
/// The most of a program's standard error kept in its log (4 MiB); the rest is counted.
pub const MAX_LOG_BYTES: usize = 4 << 20;
/// How long the output pipes may stay open after the program ended (a child it left behind
/// may hold them) before `runner` stops waiting for them.
const PIPE_GRACE: Duration = Duration::from_secs(5);
/// How long a guard has to kill what is below it, after SIGTERM, before its process group is
/// killed.
const TERM_GRACE: Duration = Duration::from_secs(1);

/// The binary whose [`guard`](super::guard) runs each external program, once registered.
static GUARD: OnceLock<PathBuf> = OnceLock::new();

/// Runs every external program from now on under the guard of `binary` ([`super::guard`]):
/// `binary __external-guard <pid> -- <program> <args>...` must be [`super::guard::run`]. The
/// `runner` binary registers itself (`cli::main`); without a guard (a library user, the unit
/// tests) a program is started directly, and only its process group is killed.
pub fn use_guard(binary: PathBuf) {
    let _ = GUARD.set(binary);
}

/// What `runner` writes to the program's standard input: one JSON object.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[schemars(title = "runner external evaluator request")]
pub struct Request {
    /// The protocol version (1).
    pub protocol: u32,
    /// The method's name (`methods.external[].name`).
    pub method: String,
    /// `model` or `simulation`.
    pub kind: ExternalKind,
    /// The task's id (64 hex digits), for the program's own logs.
    pub task_id: String,
    /// The fully resolved scenario, every field, under the names of the result columns.
    pub scenario: ScenarioColumns,
    /// Offered load in messages per node per cycle.
    pub rate: f64,
    /// The load as a fraction of the model's saturation rate, when the spec gives it so.
    pub fraction_of_saturation: Option<f64>,
    /// The model's saturation rate of the scenario, when the spec's loads are fractions of it.
    pub saturation_rate: Option<f64>,
    /// The replication's random seed (`kind: simulation`; null for a model).
    pub seed: Option<u64>,
    /// The replication index from 0 (`kind: simulation`; null for a model).
    pub replication: Option<u32>,
    /// The seed of the replication's fault map (`fault_rate > 0` only).
    pub fault_seed: Option<u64>,
    /// What to measure (`kind: simulation`): `latency`, or `throughput` (accepted throughput
    /// past saturation too, with bounded source queues); null for a model.
    pub measure: Option<String>,
    /// The method's `options`, as the spec writes them.
    pub options: BTreeMap<String, serde_json::Value>,
}

/// Defines [`ScenarioColumns`] from `scenario::fields::each_column`.
macro_rules! scenario_columns {
    ($( $(#[$meta:meta])* $name:ident: $kind:ident; )*) => {
        /// The scenario columns of a result row (`schemas/results.md`), every one present (null
        /// where it does not apply).
        #[derive(Clone, Debug, Serialize, JsonSchema)]
        pub struct ScenarioColumns {
            $( $(#[$meta])* pub $name: column_type!($kind), )*
        }

        impl ScenarioColumns {
            /// The scenario columns of `scenario`, as its result rows have them.
            pub fn of(scenario: &Scenario) -> ScenarioColumns {
                let row = Row::of_scenario(scenario);
                ScenarioColumns { $( $name: row.$name, )* }
            }
        }
    };
}
crate::scenario::fields::each_column!(scenario_columns);

/// How the evaluation ended, in the vocabulary of the `status` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResponseStatus {
    /// A finite, stable result: `latency` is required.
    Ok,
    /// The load is at or past saturation; latency is unbounded (`latency` may be null).
    Saturated,
    /// The network deadlocked.
    Deadlock,
    /// An estimate only (the run stopped short of its precision target): `latency` is required.
    Imprecise,
    /// The program cannot evaluate this scenario: `detail` says why. A result, not a failure.
    Unsupported,
}

/// What the program prints on standard output: one JSON object. Fields other than these are
/// refused (a misspelt column would otherwise vanish); every measurement is optional except
/// `latency` when `status` is `ok` or `imprecise`, and `detail` when it is `unsupported`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "runner external evaluator response")]
pub struct Response {
    /// How the evaluation ended.
    pub status: ResponseStatus,
    /// Why it is saturated, deadlocked, imprecise or unsupported, in a sentence (also accepted
    /// as `reason`); the row's `error` column.
    #[serde(default, alias = "reason")]
    pub detail: Option<String>,
    /// Mean message latency (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency: Option<f64>,
    /// 95% confidence half-width of `latency` (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_ci95: Option<f64>,
    /// Mean network latency without the source wait (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency: Option<f64>,
    /// Mean source-queue wait (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait: Option<f64>,
    /// Mean unicast latency, where broadcasts are reported separately (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub unicast_latency: Option<f64>,
    /// Average multiplexing degree of a physical channel.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub multiplexing_degree: Option<f64>,
    /// Message arrival rate at one channel (messages/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub channel_rate: Option<f64>,
    /// Probability that all virtual channels of a channel are busy.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub blocking_probability: Option<f64>,
    /// Accepted throughput (messages/node/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub throughput: Option<f64>,
    /// Mean hops per message.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub hops: Option<f64>,
    /// Offered load generated in the measurement window (messages/node/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub offered_throughput: Option<f64>,
    /// Accepted throughput of the least-served node (messages/node/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub throughput_min: Option<f64>,
    /// Accepted throughput of the best-served node (messages/node/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub throughput_max: Option<f64>,
    /// Accepted throughput in flits/node/cycle.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub flit_throughput: Option<f64>,
    /// Accepted flits/node/cycle of the least-served node.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub flit_throughput_min: Option<f64>,
    /// Accepted flits/node/cycle of the best-served node.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub flit_throughput_max: Option<f64>,
    /// Cycles simulated.
    #[serde(default)]
    #[schemars(range(max = 9_007_199_254_740_992u64))]
    pub cycles: Option<u64>,
    /// Flit-link traversals simulated.
    #[serde(default)]
    #[schemars(range(max = 9_007_199_254_740_992u64))]
    pub flit_hops: Option<u64>,
    /// Messages whose latency entered the mean.
    #[serde(default)]
    #[schemars(range(max = 9_007_199_254_740_992u64))]
    pub messages_measured: Option<u64>,
    /// Messages dropped at full source queues.
    #[serde(default)]
    #[schemars(range(max = 9_007_199_254_740_992u64))]
    pub source_drops: Option<u64>,
    /// The median of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_p50: Option<f64>,
    /// The 90th percentile of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_p90: Option<f64>,
    /// The 99th percentile of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_p99: Option<f64>,
    /// The largest value of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_max: Option<f64>,
    /// The median of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency_p50: Option<f64>,
    /// The 90th percentile of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency_p90: Option<f64>,
    /// The 99th percentile of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency_p99: Option<f64>,
    /// The largest value of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency_max: Option<f64>,
    /// The median of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait_p50: Option<f64>,
    /// The 90th percentile of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait_p90: Option<f64>,
    /// The 99th percentile of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait_p99: Option<f64>,
    /// The largest value of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait_max: Option<f64>,
    /// Every other named quantity, as numbers (figures plot them as `intermediates.<key>`).
    #[serde(default)]
    pub intermediates: BTreeMap<String, f64>,
}

/// The JSON Schema of [`Request`] (`schemas/external-request.schema.json`), as pretty JSON.
pub fn request_schema() -> String {
    pretty(&schemars::schema_for!(Request))
}

/// The JSON Schema of [`Response`] (`schemas/external-response.schema.json`), as pretty JSON.
pub fn response_schema() -> String {
    pretty(&schemars::schema_for!(Response))
}

fn pretty(schema: &schemars::Schema) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// The request of one External task.
pub fn request(
    method: &ExternalChoice,
    task: &Task,
    scenario: &Scenario,
    rate: f64,
    saturation: Option<f64>,
) -> Request {
    let fraction = match task.load {
        Some(crate::plan::LoadPoint::FractionOfSaturation(f)) => Some(f),
        _ => None,
    };
    Request {
        protocol: EXTERNAL_PROTOCOL,
        method: method.name.clone(),
        kind: method.kind,
        task_id: task.id.clone(),
        scenario: ScenarioColumns::of(scenario),
        rate,
        fraction_of_saturation: fraction,
        saturation_rate: saturation,
        seed: task.seed,
        replication: task.replication,
        fault_seed: task.fault_seed,
        measure: measure(method).map(str::to_string),
        options: method.options.clone(),
    }
}

/// What a method measures: `latency` or `throughput` for `kind: simulation`, nothing for a
/// model. The request's `measure` and the rows' `measure` column.
fn measure(method: &ExternalChoice) -> Option<&'static str> {
    match (method.kind, method.throughput) {
        (ExternalKind::Model, _) => None,
        (ExternalKind::Simulation, false) => Some("latency"),
        (ExternalKind::Simulation, true) => Some("throughput"),
    }
}

/// Runs the External `task` of `method` at `rate` and turns its response into the task's row.
/// `log` is where the program's standard error goes; once `interrupt` is set, a program still
/// running [`GRACE`] later is killed and the task returns [`CANCELLED`].
pub fn evaluate(
    method: &ExternalChoice,
    task: &Task,
    scenario: &Scenario,
    rate: f64,
    saturation: Option<f64>,
    log: Option<&Path>,
    interrupt: Option<&AtomicBool>,
) -> Result<Output, Failure> {
    let started = Instant::now();
    let request = request(method, task, scenario, rate, saturation);
    let bytes =
        serde_json::to_vec(&request).map_err(|e| format!("cannot encode the request: {e}"))?;
    // The task id holds the hashes of the program file and the inputs taken when the spec was
    // loaded: what runs must be that content, so they are hashed again before and after.
    let changed = |when: &str| {
        method
            .changed_file()
            .map(|problem| format!("external method `{}` ({when}): {problem}", method.name))
    };
    if let Some(problem) = changed("before it ran") {
        return Err(problem);
    }
    let ran = run(method, &bytes, interrupt);
    if let Some(problem) = changed("while it ran") {
        return Err(problem);
    }
    let outcome = ran.as_ref().map_err(Clone::clone).and_then(|ended| {
        let problem = |what: String| Err(what);
        match &ended.stop {
            Some(Stop::TimedOut) => {
                return problem(format!(
                    "timed out after {} s and was killed",
                    method.timeout_seconds
                ));
            }
            Some(Stop::Cancelled) => return Err(CANCELLED.to_string()),
            None => {}
        }
        match ended.status {
            Some(status) if status.success() => {}
            Some(status) => return problem(exit_problem(status, &ended.stderr)),
            None => return problem("could not be waited for".into()),
        }
        if ended.stdout_overflow {
            return problem(format!(
                "printed more than {} MiB on standard output; one JSON object is expected",
                MAX_STDOUT_BYTES >> 20
            ));
        }
        parse(&ended.stdout)
    });
    let log_note = log.map(|path| {
        let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        match write_log(path, method, ran.as_ref(), &outcome) {
            Ok(()) => format!("log: {}", shown.display()),
            Err(e) => format!("log not written to {}: {e}", shown.display()),
        }
    });
    let response = match outcome {
        Ok(response) => response,
        Err(problem) if problem == CANCELLED => return Err(problem),
        Err(problem) => {
            let log_note = log_note.unwrap_or_else(|| "standard error not kept".into());
            return Err(format!(
                "external method `{}` ({}): {problem}; {log_note}",
                method.name,
                method.command_line()
            ));
        }
    };
    let mut row = base_row(scenario, task, rate, &method.name);
    row.evaluator = method.evaluator();
    row.replication = task.replication;
    row.seed = task.seed;
    row.fault_seed = task.fault_seed;
    fill_row(&mut row, &response);
    row.measure = measure(method).map(str::to_string);
    row.wall_seconds = started.elapsed().as_secs_f64();
    Ok(Output::Rows(vec![row]))
}

/// Reads the program's standard output as one [`Response`] and checks what serde cannot: no
/// key twice in one object, and every number in its domain ([`check_domains`]).
pub fn parse(stdout: &[u8]) -> Result<Response, String> {
    let text = String::from_utf8_lossy(stdout);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("printed nothing on standard output; one JSON object is expected".into());
    }
    let value = match serde_json::from_str::<UniqueKeys>(trimmed) {
        Ok(UniqueKeys(value)) => value,
        // Only `UniqueKeys` raises a data error: a key given twice.
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            return Err(format!("printed a response in which {e}"));
        }
        Err(e) => {
            return Err(format!(
                "printed output that is not one JSON object ({e}); it begins {:?}",
                excerpt(trimmed, 80)
            ));
        }
    };
    let Some(object) = value.as_object() else {
        return Err(format!(
            "printed JSON that is not an object; it begins {:?}",
            excerpt(trimmed, 80)
        ));
    };
    check_domains(object)?;
    let response: Response = serde_json::from_value(value)
        .map_err(|e| format!("printed a response that {}", serde_problem(&e)))?;
    let status = response.status;
    let needs_latency = matches!(status, ResponseStatus::Ok | ResponseStatus::Imprecise);
    if needs_latency && response.latency.is_none() {
        return Err(format!(
            "printed `status: {}` without the required field `latency` (a number of cycles)",
            status_name(status)
        ));
    }
    if status == ResponseStatus::Unsupported
        && response.detail.as_deref().is_none_or(|d| d.trim().is_empty())
    {
        return Err("printed `status: unsupported` without the required `detail` saying why".into());
    }
    Ok(response)
}

/// A JSON value read with every object's keys unique: serde_json keeps the last of two equal
/// keys, so a reply giving `latency` twice would lose one of them silently.
struct UniqueKeys(serde_json::Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeysVisitor)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_str<E>(self, v: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_string<E>(self, v: String) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(serde_json::Value::Null))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(UniqueKeys(serde_json::Value::Array(items)))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{}` appears twice in one object; give each key once",
                    excerpt(&key, 64)
                )));
            }
            let UniqueKeys(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(UniqueKeys(serde_json::Value::Object(object)))
    }
}

/// The largest magnitude a reply's number may have: far beyond any latency, rate or count,
/// and small enough that the sums, squares and products of aggregating up to
/// `MAX_REPLICATIONS` replications stay finite (a reply of 1e308 would average to `inf`).
pub const MAX_MAGNITUDE: f64 = 1e100;

/// The largest count a reply may give: 2^53, exact in a double (as JSON readers keep numbers).
pub const MAX_COUNT: u64 = 1 << 53;

/// What values a number of the protocol may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Domain {
    /// A finite number >= 0 (at most [`MAX_MAGNITUDE`]).
    NonNegative,
    /// A probability: 0 to 1.
    Probability,
    /// A non-negative integer (at most [`MAX_COUNT`]).
    Count,
    /// A whole number from 0 to [`MAX_COUNT`], which may be written as a fraction (`10.0`):
    /// an intermediate, a number like every other.
    Whole,
    /// Any finite number of magnitude at most [`MAX_MAGNITUDE`] (a free-form intermediate).
    Real,
}

impl Domain {
    /// What the domain is, for a message.
    fn describe(self) -> String {
        match self {
            Domain::NonNegative => {
                format!("a non-negative number (at most {})", crate::number::compact(MAX_MAGNITUDE))
            }
            Domain::Probability => "a probability, from 0 to 1".into(),
            Domain::Count => {
                format!("a non-negative integer (at most 2^53 = {MAX_COUNT})")
            }
            Domain::Whole => format!("a whole number from 0 to 2^53 = {MAX_COUNT}"),
            Domain::Real => format!(
                "a finite number of magnitude at most {}",
                crate::number::compact(MAX_MAGNITUDE)
            ),
        }
    }

    /// Whether `value` lies in the domain.
    fn holds(self, value: &serde_json::Number) -> bool {
        match self {
            Domain::Count => value.as_u64().is_some_and(|n| n <= MAX_COUNT),
            _ => {
                let Some(x) = value.as_f64() else { return false };
                match self {
                    Domain::NonNegative => (0.0..=MAX_MAGNITUDE).contains(&x),
                    Domain::Probability => (0.0..=1.0).contains(&x),
                    Domain::Real => x.is_finite() && x.abs() <= MAX_MAGNITUDE,
                    Domain::Whole => x.fract() == 0.0 && (0.0..=MAX_COUNT as f64).contains(&x),
                    Domain::Count => false,
                }
            }
        }
    }
}

/// Every number of a response with its domain (`docs/external.md`, "Response"); a test keeps
/// it equal to [`Response`]'s numeric fields.
const DOMAINS: &[(&str, Domain)] = &[
    ("latency", Domain::NonNegative),
    ("latency_ci95", Domain::NonNegative),
    ("network_latency", Domain::NonNegative),
    ("source_wait", Domain::NonNegative),
    ("unicast_latency", Domain::NonNegative),
    ("multiplexing_degree", Domain::NonNegative),
    ("channel_rate", Domain::NonNegative),
    ("blocking_probability", Domain::Probability),
    ("throughput", Domain::NonNegative),
    ("hops", Domain::NonNegative),
    ("offered_throughput", Domain::NonNegative),
    ("throughput_min", Domain::NonNegative),
    ("throughput_max", Domain::NonNegative),
    ("flit_throughput", Domain::NonNegative),
    ("flit_throughput_min", Domain::NonNegative),
    ("flit_throughput_max", Domain::NonNegative),
    ("cycles", Domain::Count),
    ("flit_hops", Domain::Count),
    ("messages_measured", Domain::Count),
    ("source_drops", Domain::Count),
    ("latency_p50", Domain::NonNegative),
    ("latency_p90", Domain::NonNegative),
    ("latency_p99", Domain::NonNegative),
    ("latency_max", Domain::NonNegative),
    ("network_latency_p50", Domain::NonNegative),
    ("network_latency_p90", Domain::NonNegative),
    ("network_latency_p99", Domain::NonNegative),
    ("network_latency_max", Domain::NonNegative),
    ("source_wait_p50", Domain::NonNegative),
    ("source_wait_p90", Domain::NonNegative),
    ("source_wait_p99", Domain::NonNegative),
    ("source_wait_max", Domain::NonNegative),
];

/// The intermediates with a meaning of their own (the batch statistics the aggregate pools);
/// any other intermediate is [`Domain::Real`].
const INTERMEDIATE_DOMAINS: &[(&str, Domain)] = &[
    ("latency_batches", Domain::Whole),
    ("latency_batch_mean", Domain::NonNegative),
    ("latency_batch_sd", Domain::NonNegative),
];

/// Fields that must not decrease along each list, where given: the percentiles, and the least-
/// and best-served nodes' throughputs.
const ORDERED: &[&[&str]] = &[
    &["latency_p50", "latency_p90", "latency_p99", "latency_max"],
    &["network_latency_p50", "network_latency_p90", "network_latency_p99", "network_latency_max"],
    &["source_wait_p50", "source_wait_p90", "source_wait_p99", "source_wait_max"],
    &["throughput_min", "throughput_max"],
    &["flit_throughput_min", "flit_throughput_max"],
];

/// A number of a reply as it was written, compactly (`1e300`, not 301 digits; `3.0` stays a
/// fraction, so that a count given as `3.0` is seen not to be an integer).
fn shown(number: &serde_json::Number) -> String {
    match number.as_f64() {
        Some(x) if number.is_f64() => {
            let text = crate::number::compact(x);
            if x.is_finite() && x.fract() == 0.0 && !text.contains(['.', 'e']) {
                format!("{text}.0")
            } else {
                text
            }
        }
        _ => number.to_string(),
    }
}

/// Checks every number of a response against its domain ([`DOMAINS`]), the intermediates,
/// and the order of the percentiles, naming the field and the value.
fn check_domains(object: &serde_json::Map<String, serde_json::Value>) -> Result<(), String> {
    let check = |name: &str, value: &serde_json::Value, domain: Domain| -> Result<(), String> {
        let found = match value {
            serde_json::Value::Null => return Ok(()),
            serde_json::Value::Number(number) if domain.holds(number) => return Ok(()),
            serde_json::Value::Number(number) => shown(number),
            serde_json::Value::Bool(_) => "a boolean".into(),
            serde_json::Value::String(_) => "a string".into(),
            serde_json::Value::Array(_) => "an array".into(),
            serde_json::Value::Object(_) => "an object".into(),
        };
        let wrong_type = if value.is_number() { "" } else { " (a value of the wrong type)" };
        Err(format!("printed `{name}` = {found}{wrong_type}; it must be {}", domain.describe()))
    };
    for (name, domain) in DOMAINS {
        if let Some(value) = object.get(*name) {
            check(name, value, *domain)?;
        }
    }
    if let Some(serde_json::Value::Object(intermediates)) = object.get("intermediates") {
        for (key, value) in intermediates {
            let domain = INTERMEDIATE_DOMAINS
                .iter()
                .find(|(name, _)| name == key)
                .map_or(Domain::Real, |(_, domain)| *domain);
            if value.is_null() {
                return Err(format!(
                    "printed `intermediates.{}` = null; it must be {}",
                    excerpt(key, 64),
                    domain.describe()
                ));
            }
            check(&format!("intermediates.{}", excerpt(key, 64)), value, domain)?;
        }
    }
    for list in ORDERED {
        let given: Vec<(&str, f64)> = list
            .iter()
            .filter_map(|name| {
                object.get(*name).and_then(serde_json::Value::as_f64).map(|v| (*name, v))
            })
            .collect();
        for pair in given.windows(2) {
            let [(low_name, low), (high_name, high)] = pair else { continue };
            if high < low {
                return Err(format!(
                    "printed `{high_name}` = {} below `{low_name}` = {}; they must be ordered {}",
                    crate::number::compact(*high),
                    crate::number::compact(*low),
                    list.join(" <= ")
                ));
            }
        }
    }
    Ok(())
}

/// A serde error in the words of the protocol: a missing field, an unknown one, or a value of
/// the wrong type, with the field's name when serde gives it.
fn serde_problem(error: &serde_json::Error) -> String {
    let text = error.to_string();
    // serde_json appends " at line L column C" to messages of `from_str`; a value has none.
    if let Some(field) = text.strip_prefix("unknown field ") {
        return format!("has an unknown field {field}");
    }
    if let Some(field) = text.strip_prefix("missing field ") {
        return format!("lacks the required field {field}");
    }
    format!("has a value of the wrong type: {text}")
}

fn status_name(status: ResponseStatus) -> &'static str {
    match status {
        ResponseStatus::Ok => "ok",
        ResponseStatus::Saturated => "saturated",
        ResponseStatus::Deadlock => "deadlock",
        ResponseStatus::Imprecise => "imprecise",
        ResponseStatus::Unsupported => "unsupported",
    }
}

/// Copies a response into a row (the row's scenario and load columns are already set).
fn fill_row(row: &mut Row, r: &Response) {
    let status = match r.status {
        ResponseStatus::Saturated => Status::Saturated,
        ResponseStatus::Deadlock => Status::Deadlock,
        ResponseStatus::Imprecise => Status::Imprecise,
        ResponseStatus::Ok | ResponseStatus::Unsupported => Status::Ok,
    };
    let measurement = Measurement {
        status,
        detail: r.detail.clone(),
        latency: r.latency,
        latency_ci95: r.latency_ci95,
        network_latency: r.network_latency,
        source_wait: r.source_wait,
        unicast_latency: r.unicast_latency,
        multiplexing_degree: r.multiplexing_degree,
        channel_rate: r.channel_rate,
        blocking_probability: r.blocking_probability,
        throughput: r.throughput,
        hops: r.hops,
        cycles: r.cycles,
        flit_hops: r.flit_hops,
        messages_measured: r.messages_measured,
        intermediates: r.intermediates.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        fault_count: None,
        fault_map: None,
        latency_percentiles: None,
        network_latency_percentiles: None,
        source_wait_percentiles: None,
        unicast_latency_percentiles: None,
        node_throughput: None,
        link_loads: None,
        histograms: None,
    };
    fill(row, &measurement);
    if r.status == ResponseStatus::Unsupported {
        row.status = "unsupported".into();
    }
    row.offered_throughput = finite(r.offered_throughput);
    row.throughput_min = finite(r.throughput_min);
    row.throughput_max = finite(r.throughput_max);
    row.flit_throughput = finite(r.flit_throughput);
    row.flit_throughput_min = finite(r.flit_throughput_min);
    row.flit_throughput_max = finite(r.flit_throughput_max);
    row.source_drops = r.source_drops;
    row.latency_p50 = finite(r.latency_p50);
    row.latency_p90 = finite(r.latency_p90);
    row.latency_p99 = finite(r.latency_p99);
    row.latency_max = finite(r.latency_max);
    row.network_latency_p50 = finite(r.network_latency_p50);
    row.network_latency_p90 = finite(r.network_latency_p90);
    row.network_latency_p99 = finite(r.network_latency_p99);
    row.network_latency_max = finite(r.network_latency_max);
    row.source_wait_p50 = finite(r.source_wait_p50);
    row.source_wait_p90 = finite(r.source_wait_p90);
    row.source_wait_p99 = finite(r.source_wait_p99);
    row.source_wait_max = finite(r.source_wait_max);
}

/// The first `chars` characters of `text`, with `...` when cut.
fn excerpt(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if text.chars().count() > chars {
        out.push_str("...");
    }
    out
}

/// Why an exit status is a failure, with the last line of standard error when there is one.
fn exit_problem(status: ExitStatus, stderr: &[u8]) -> String {
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
enum Stop {
    /// Past `timeout_seconds`.
    TimedOut,
    /// After an interrupt, past [`GRACE`].
    Cancelled,
}

/// What a run of the program left.
#[derive(Debug, Default)]
struct Ended {
    /// The exit status (`None` when it could not be waited for).
    status: Option<ExitStatus>,
    /// Set when `runner` killed the program.
    stop: Option<Stop>,
    stdout: Vec<u8>,
    stdout_overflow: bool,
    stderr: Vec<u8>,
    /// Bytes of standard error beyond [`MAX_LOG_BYTES`], not kept.
    stderr_dropped: u64,
    /// Set when an output pipe was still open [`PIPE_GRACE`] after the program ended.
    pipes_open: bool,
    seconds: f64,
}

/// What a reader thread has read of one output so far.
#[derive(Debug, Default)]
struct Drained {
    /// The first bytes, up to the cap.
    kept: Vec<u8>,
    /// Bytes past the cap, counted only.
    dropped: u64,
    /// Set once `runner` took `kept`: the thread reads on (a writer left behind must not block
    /// on a full pipe) but keeps nothing more.
    taken: bool,
}

/// A reader thread: what it has read so far, shared, and a channel that closes at the end of
/// its output.
struct Reader {
    read: Arc<Mutex<Drained>>,
    done: mpsc::Receiver<()>,
}

/// Reads `source` to its end on a thread of its own, keeping the first `cap` bytes and counting
/// the rest, so the program never blocks on a full pipe. What it read is there to take at any
/// time ([`collect`]), so a pipe that a process left behind keeps open loses nothing that was
/// written before.
fn drain(mut source: impl Read + Send + 'static, cap: usize) -> Reader {
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
fn collect(reader: Reader, until: Instant) -> (Vec<u8>, u64, bool) {
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
/// says so ([`super::guard::START_FAILED`]).
fn start_failure(status: Option<ExitStatus>, stderr: &[u8]) -> Option<String> {
    if status?.code()? != super::guard::START_FAILED {
        return None;
    }
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .find_map(|line| line.strip_prefix(super::guard::START_FAILED_MARK))
        .map(str::to_string)
}

/// Starts the program, feeds it `request`, and waits for it within its time-out.
fn run(
    method: &ExternalChoice,
    request: &[u8],
    interrupt: Option<&AtomicBool>,
) -> Result<Ended, String> {
    use std::os::unix::process::CommandExt as _;
    let started = Instant::now();
    let guard = GUARD.get();
    let mut command = match guard {
        // The guard runs the program in its place, in the directory and with the environment
        // given here, and kills what the program leaves behind (`super::guard`).
        Some(binary) => {
            let mut command = Command::new(binary);
            command
                .arg0("runner")
                .args(super::guard::arguments(std::process::id()))
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
fn write_log(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes a reader took before the end of its output are kept when the pipe stays open
    /// (a process the program left behind holds it): the reply is there, not "printed nothing".
    #[test]
    fn what_was_read_is_kept_when_a_pipe_stays_open() {
        let (source, mut writer) = std::io::pipe().expect("pipe");
        writer.write_all(br#"{"status": "ok", "latency": 40}"#).expect("write");
        let reader = drain(source, 8);
        let deadline = Instant::now() + Duration::from_secs(30);
        while reader.read.lock().expect("lock").kept.len() < 8 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (kept, dropped, open) = collect(reader, Instant::now());
        assert_eq!((kept.as_slice(), dropped, open), (&br#"{"status"#[..], 23, true));
        // Read on after it was taken, so the writer never blocks; nothing more is kept.
        writer.write_all(&[b'x'; 200_000]).expect("the reader drains on");
        drop(writer);

        let (source, mut writer) = std::io::pipe().expect("pipe");
        let reader = drain(source, 1 << 10);
        writer.write_all(b"all of it").expect("write");
        drop(writer);
        let (kept, dropped, open) = collect(reader, Instant::now() + Duration::from_secs(30));
        assert_eq!((kept.as_slice(), dropped, open), (&b"all of it"[..], 0, false));
    }

    #[test]
    fn only_the_guard_saying_so_is_a_program_that_did_not_start() {
        use std::os::unix::process::ExitStatusExt as _;
        let failed = ExitStatus::from_raw(super::super::guard::START_FAILED << 8);
        let line =
            format!("{}Permission denied (os error 13)\n", super::super::guard::START_FAILED_MARK);
        assert_eq!(
            start_failure(Some(failed), line.as_bytes()).as_deref(),
            Some("Permission denied (os error 13)")
        );
        assert_eq!(start_failure(Some(failed), b"command not found\n"), None);
        assert_eq!(start_failure(Some(ExitStatus::from_raw(0)), line.as_bytes()), None);
        assert_eq!(start_failure(None, line.as_bytes()), None);
    }

    #[test]
    fn a_complete_response_parses_and_fills_a_row() {
        let response = parse(
            br#"{"status": "ok", "latency": 41.5, "throughput": 0.01, "cycles": 1000,
                 "latency_p99": 97.0, "source_wait_max": 12.0,
                 "intermediates": {"utilisation": 0.25}}"#,
        )
        .expect("valid");
        let mut row = Row::default();
        fill_row(&mut row, &response);
        assert_eq!(row.status, "ok");
        assert_eq!(row.latency, Some(41.5));
        assert_eq!(row.throughput, Some(0.01));
        assert_eq!(row.cycles, Some(1000));
        assert_eq!(
            (row.latency_p99, row.source_wait_max, row.latency_p50),
            (Some(97.0), Some(12.0), None)
        );
        assert_eq!(row.intermediates, r#"{"utilisation":0.25}"#);
    }

    #[test]
    fn unsupported_is_a_status_with_its_reason() {
        let response =
            parse(br#"{"status": "unsupported", "reason": "no fat-trees"}"#).expect("valid");
        let mut row = Row::default();
        fill_row(&mut row, &response);
        assert_eq!(row.status, "unsupported");
        assert_eq!(row.error.as_deref(), Some("no fat-trees"));
        assert_eq!(row.latency, None);
        let bare = parse(br#"{"status": "unsupported"}"#).expect_err("no reason");
        assert!(bare.contains("detail"), "{bare}");
    }

    #[test]
    fn every_malformed_response_names_its_problem() {
        let cases: [(&[u8], &str); 8] = [
            (b"", "printed nothing"),
            (b"hello", "not one JSON object"),
            (b"[1, 2]", "not an object"),
            (br#"{"latency": 3}"#, "`status`"),
            (br#"{"status": "ok"}"#, "`latency`"),
            (br#"{"status": "ok", "latency": "fast"}"#, "wrong type"),
            (br#"{"status": "ok", "latency": 3, "latncy": 4}"#, "unknown field `latncy`"),
            (br#"{"status": "fine", "latency": 3}"#, "wrong type"),
        ];
        for (output, expected) in cases {
            let problem = parse(output).expect_err("malformed");
            assert!(problem.contains(expected), "{problem:?} lacks {expected:?}");
        }
        let two = parse(b"{\"status\": \"saturated\"}\n{\"status\": \"ok\"}").expect_err("two");
        assert!(two.contains("not one JSON object"), "{two}");
    }

    #[test]
    fn every_number_of_a_response_is_checked_against_its_domain() {
        let ok = |fields: &str| format!(r#"{{"status": "ok", "latency": 40, {fields}}}"#);
        let cases = [
            (ok(r#""latency_ci95": -0.5"#), "`latency_ci95` = -0.5"),
            (ok(r#""hops": -2"#), "`hops` = -2"),
            (ok(r#""throughput": -0.01"#), "`throughput` = -0.01"),
            (ok(r#""latency_p99": -1"#), "`latency_p99` = -1"),
            (ok(r#""source_wait_max": -3"#), "`source_wait_max` = -3"),
            (ok(r#""blocking_probability": 1.5"#), "`blocking_probability` = 1.5"),
            (ok(r#""cycles": 3.5"#), "`cycles` = 3.5"),
            (ok(r#""cycles": 3.0"#), "`cycles` = 3.0"),
            (ok(r#""flit_hops": -1"#), "`flit_hops` = -1"),
            (ok(r#""messages_measured": 9007199254740993"#), "`messages_measured`"),
            (ok(r#""source_drops": "many""#), "`source_drops` = a string"),
            (ok(r#""network_latency": 1e308"#), "`network_latency` = 1e308"),
            (ok(r#""intermediates": {"u": -1e300}"#), "`intermediates.u` = -1e300"),
            (ok(r#""intermediates": {"latency_batches": 2.5}"#), "`intermediates.latency_batches`"),
            (
                ok(r#""intermediates": {"latency_batch_sd": -1}"#),
                "`intermediates.latency_batch_sd`",
            ),
            (
                ok(r#""latency_p50": 30, "latency_p90": 20"#),
                "`latency_p90` = 20 below `latency_p50` = 30",
            ),
            (
                ok(r#""network_latency_p99": 50, "network_latency_max": 49"#),
                "`network_latency_max`",
            ),
            (ok(r#""throughput_min": 0.2, "throughput_max": 0.1"#), "`throughput_max`"),
            (r#"{"status": "ok", "latency": -1}"#.to_string(), "`latency` = -1"),
            (r#"{"status": "ok", "latency": 1e300}"#.to_string(), "`latency` = 1e300"),
            (r#"{"status": "saturated", "throughput": -1}"#.to_string(), "`throughput` = -1"),
        ];
        for (reply, expected) in cases {
            let problem = parse(reply.as_bytes()).expect_err(&reply);
            assert!(problem.contains(expected), "{problem:?} lacks {expected:?}");
            assert!(problem.len() < 300, "{problem}");
        }
        // The ends of each domain are in it.
        let edges = ok(r#""blocking_probability": 1, "hops": 0, "cycles": 9007199254740992,
                          "latency_p50": 5, "latency_p90": 5, "latency_max": 1e100,
                          "intermediates": {"x": -1e100, "latency_batches": 2.0}"#);
        parse(edges.as_bytes()).expect("edges");
    }

    #[test]
    fn every_number_of_the_response_has_a_domain() {
        let schema: serde_json::Value = serde_json::from_str(&response_schema()).expect("json");
        let properties = schema["properties"].as_object().expect("properties");
        let mut numbers: Vec<&str> = properties
            .iter()
            .filter(|(_, p)| {
                let kind = p["type"].to_string();
                kind.contains("number") || kind.contains("integer")
            })
            .map(|(name, _)| name.as_str())
            .collect();
        numbers.sort_unstable();
        let mut domains: Vec<&str> = DOMAINS.iter().map(|(name, _)| *name).collect();
        domains.sort_unstable();
        assert_eq!(numbers, domains);
        for (name, domain) in DOMAINS {
            let property = &properties[*name];
            let integer = property["type"].to_string().contains("integer");
            assert_eq!(integer, *domain == Domain::Count, "{name}");
            // The schema states the domain's bounds.
            let bounds = (property["minimum"].as_f64(), property["maximum"].as_f64());
            let expected = match domain {
                Domain::NonNegative => (Some(0.0), Some(MAX_MAGNITUDE)),
                Domain::Probability => (Some(0.0), Some(1.0)),
                Domain::Count => (Some(0.0), Some(MAX_COUNT as f64)),
                Domain::Whole | Domain::Real => (None, None),
            };
            assert_eq!(bounds, expected, "{name}");
        }
    }

    #[test]
    fn a_key_given_twice_in_a_response_is_refused() {
        let cases: [(&[u8], &str); 3] = [
            (br#"{"status": "ok", "latency": 3, "latency": 4}"#, "`latency` appears twice"),
            (br#"{"status": "ok", "status": "saturated", "latency": 3}"#, "`status` appears twice"),
            (
                br#"{"status": "ok", "latency": 3, "intermediates": {"u": 1, "u": 2}}"#,
                "`u` appears twice",
            ),
        ];
        for (output, expected) in cases {
            let problem = parse(output).expect_err("a key twice");
            assert!(problem.contains(expected), "{problem:?} lacks {expected:?}");
        }
    }

    /// The largest replies the domains accept average to finite values over the most
    /// replications a spec may ask for: no `inf` or NaN with status `ok`.
    #[test]
    fn aggregating_the_largest_accepted_replies_stays_finite() {
        let reply = br#"{"status": "ok", "latency": 1e100, "latency_ci95": 1e100,
            "throughput": 1e100, "hops": 1e100, "latency_p99": 1e100, "latency_max": 1e100,
            "cycles": 9007199254740992, "messages_measured": 9007199254740992,
            "intermediates": {"latency_batches": 9007199254740992, "latency_batch_mean": 1e100,
                              "latency_batch_sd": 1e100, "x": -1e100}}"#;
        let response = parse(reply).expect("in the domains");
        let mut small = Row::default();
        let zeros = br#"{"status": "ok", "latency": 0, "latency_ci95": 0, "throughput": 0,
            "hops": 0, "latency_p99": 0, "latency_max": 0, "cycles": 0, "messages_measured": 0,
            "intermediates": {"latency_batches": 2, "latency_batch_mean": 0,
                              "latency_batch_sd": 0, "x": 1e100}}"#;
        fill_row(&mut small, &parse(zeros).expect("valid"));
        let mut large = Row::default();
        fill_row(&mut large, &response);
        let task = Task {
            kind: crate::plan::TaskKind::Aggregate,
            id: "a".into(),
            scenario: None,
            load: None,
            loads: None,
            replication: None,
            seed: None,
            fault_seed: None,
            cost: 0.0,
            method: None,
        };
        let mut replications = vec![large.clone(), small.clone()];
        let faulty = Row { fault_seed: Some(1), ..large.clone() };
        let mut with_faults = vec![faulty.clone(), Row { fault_seed: Some(2), ..small.clone() }];
        let max = crate::spec::external::MAX_REPLICATIONS as usize;
        let mut many: Vec<Row> =
            (0..max).map(|i| if i % 2 == 0 { large.clone() } else { small.clone() }).collect();
        for rows in [&mut replications, &mut with_faults, &mut many] {
            // Counts of many replications may pass u64::MAX: a failure, never a wrap or a panic.
            for row in rows.iter_mut() {
                row.cycles = Some(1);
                row.messages_measured = Some(1);
            }
            let row = super::super::aggregate::aggregate(rows, &task).expect("aggregates");
            for value in [
                row.latency,
                row.latency_ci95,
                row.throughput,
                row.hops,
                row.latency_p99,
                row.latency_max,
            ] {
                assert!(value.is_some_and(f64::is_finite), "{value:?}");
            }
            assert!(!row.intermediates.contains("null"), "{}", row.intermediates);
        }
        let overflow: Vec<Row> = (0..max).map(|_| large.clone()).collect();
        let problem = super::super::aggregate::aggregate(&overflow, &task).expect_err("overflow");
        assert!(problem.contains("`cycles`"), "{problem}");
    }

    #[test]
    fn the_request_names_every_scenario_column() {
        let scenario = Scenario::new(crate::scenario::Topology::Torus { radix: 4, dimensions: 2 });
        let columns = serde_json::to_value(ScenarioColumns::of(&scenario)).expect("json");
        let names: Vec<&str> =
            columns.as_object().expect("object").keys().map(String::as_str).collect();
        // Every scenario column, the trace's too (always null here: a spec that replays a
        // trace refuses external methods), in the order of `results.parquet`.
        let columns: Vec<&str> = crate::scenario::fields::columns().map(|f| f.name).collect();
        for column in &columns {
            assert!(names.contains(column), "the request lacks the scenario column {column}");
        }
        assert_eq!(names.len(), columns.len(), "{names:?}");
        let row = serde_json::to_value(Row::of_scenario(&scenario)).expect("json");
        for name in &names {
            assert!(row.get(*name).is_some(), "{name} is not a result column");
        }
    }

    /// The committed schemas are the generated ones (regenerate with
    /// `runner schema --external request|response`).
    #[test]
    fn the_committed_protocol_schemas_are_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        for (file, schema, which) in [
            ("external-request.schema.json", request_schema(), "request"),
            ("external-response.schema.json", response_schema(), "response"),
        ] {
            let committed = std::fs::read_to_string(root.join(file)).unwrap_or_default();
            assert!(
                committed == schema,
                "schemas/{file} is stale: run `runner schema --external {which} > schemas/{file}`"
            );
        }
    }
}
