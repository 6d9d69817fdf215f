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
//!
//! This file builds the request and turns an evaluation into its row; `reply` reads and checks
//! the program's [`Response`], `process` runs the program.

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

mod process;
mod reply;

pub use process::kill_running;
use process::{Stop, exit_problem, run, write_log};
use reply::fill_row;
pub use reply::{MAX_COUNT, MAX_MAGNITUDE, Response, ResponseStatus, parse};

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
    /// The load as a fraction of a saturation, when the spec gives it so.
    pub fraction_of_saturation: Option<f64>,
    /// The saturation rate the fraction is of, when the spec's loads are fractions: the
    /// model's, or (`load.saturation: simulation`) the simulator's, the knee its searches
    /// bracket (messages/node/cycle).
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
    let response = exchange(method, &request, log, interrupt)?;
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

/// One exchange with the program of `method`: `request` in, its checked [`Response`] out,
/// standard error to `log`; a failure names the problem and the log.
fn exchange(
    method: &ExternalChoice,
    request: &Request,
    log: Option<&Path>,
    interrupt: Option<&AtomicBool>,
) -> Result<Response, Failure> {
    let bytes =
        serde_json::to_vec(request).map_err(|e| format!("cannot encode the request: {e}"))?;
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
    Ok(response)
}

/// Runs the Search `task` of `method`: runner's saturation search (`sim::saturation::search`)
/// with the program evaluating each point, a request at that rate with `measure:
/// throughput` and the search's seed. The log holds the last point's standard error.
pub fn search(
    method: &ExternalChoice,
    task: &Task,
    scenario: &Scenario,
    log: Option<&Path>,
    interrupt: Option<&AtomicBool>,
) -> Result<crate::sim::saturation::Saturation, Failure> {
    let bound = crate::sim::saturation::injection_bound(scenario);
    let found = crate::sim::saturation::search(bound, |rate| {
        let mut request = request(method, task, scenario, rate, None);
        request.measure = Some("throughput".into());
        let response = exchange(method, &request, log, interrupt).map_err(crate::sim::SimError)?;
        // An imprecise point accepted what it was offered as far as it measured: stable.
        let status = match response.status {
            ResponseStatus::Saturated => Status::Saturated,
            ResponseStatus::Deadlock => Status::Deadlock,
            ResponseStatus::Ok | ResponseStatus::Imprecise => Status::Ok,
            ResponseStatus::Unsupported => {
                let why = response.detail.unwrap_or_default();
                return Err(crate::sim::SimError(format!(
                    "external method `{}` cannot evaluate this scenario: {why}",
                    method.name
                )));
            }
        };
        Ok(crate::sim::saturation::Point {
            rate,
            status,
            throughput: finite(response.throughput),
            flit_throughput: finite(response.flit_throughput),
            source_drops: response.source_drops.map(|d| d as f64),
        })
    });
    found.map_err(|e| e.0)
}

/// The first `chars` characters of `text`, with `...` when cut.
fn excerpt(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if text.chars().count() > chars {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests;
