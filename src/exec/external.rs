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
//! Everything a program can do wrong (not start, exit non-zero, die by a signal, time out,
//! print something that is not one JSON object, leave out a required field, give a value of
//! the wrong type, print too much) is a [`Failure`] that names the problem and the log: a
//! failed row, never the end of the run. `unsupported` with a reason is a result.

use std::collections::BTreeMap;
use std::io::{Read, Write as _};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
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
    pub latency: Option<f64>,
    /// 95% confidence half-width of `latency` (cycles).
    #[serde(default)]
    pub latency_ci95: Option<f64>,
    /// Mean network latency without the source wait (cycles).
    #[serde(default)]
    pub network_latency: Option<f64>,
    /// Mean source-queue wait (cycles).
    #[serde(default)]
    pub source_wait: Option<f64>,
    /// Mean unicast latency, where broadcasts are reported separately (cycles).
    #[serde(default)]
    pub unicast_latency: Option<f64>,
    /// Average multiplexing degree of a physical channel.
    #[serde(default)]
    pub multiplexing_degree: Option<f64>,
    /// Message arrival rate at one channel (messages/cycle).
    #[serde(default)]
    pub channel_rate: Option<f64>,
    /// Probability that all virtual channels of a channel are busy.
    #[serde(default)]
    pub blocking_probability: Option<f64>,
    /// Accepted throughput (messages/node/cycle).
    #[serde(default)]
    pub throughput: Option<f64>,
    /// Mean hops per message.
    #[serde(default)]
    pub hops: Option<f64>,
    /// Offered load generated in the measurement window (messages/node/cycle).
    #[serde(default)]
    pub offered_throughput: Option<f64>,
    /// Accepted throughput of the least-served node (messages/node/cycle).
    #[serde(default)]
    pub throughput_min: Option<f64>,
    /// Accepted throughput of the best-served node (messages/node/cycle).
    #[serde(default)]
    pub throughput_max: Option<f64>,
    /// Accepted throughput in flits/node/cycle.
    #[serde(default)]
    pub flit_throughput: Option<f64>,
    /// Accepted flits/node/cycle of the least-served node.
    #[serde(default)]
    pub flit_throughput_min: Option<f64>,
    /// Accepted flits/node/cycle of the best-served node.
    #[serde(default)]
    pub flit_throughput_max: Option<f64>,
    /// Cycles simulated.
    #[serde(default)]
    pub cycles: Option<u64>,
    /// Flit-link traversals simulated.
    #[serde(default)]
    pub flit_hops: Option<u64>,
    /// Messages whose latency entered the mean.
    #[serde(default)]
    pub messages_measured: Option<u64>,
    /// Messages dropped at full source queues.
    #[serde(default)]
    pub source_drops: Option<u64>,
    /// The median of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub latency_p50: Option<f64>,
    /// The 90th percentile of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub latency_p90: Option<f64>,
    /// The 99th percentile of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub latency_p99: Option<f64>,
    /// The largest value of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub latency_max: Option<f64>,
    /// The median of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub network_latency_p50: Option<f64>,
    /// The 90th percentile of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub network_latency_p90: Option<f64>,
    /// The 99th percentile of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub network_latency_p99: Option<f64>,
    /// The largest value of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub network_latency_max: Option<f64>,
    /// The median of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub source_wait_p50: Option<f64>,
    /// The 90th percentile of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub source_wait_p90: Option<f64>,
    /// The 99th percentile of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    pub source_wait_p99: Option<f64>,
    /// The largest value of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
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

/// Reads the program's standard output as one [`Response`] and checks what serde cannot.
pub fn parse(stdout: &[u8]) -> Result<Response, String> {
    let text = String::from_utf8_lossy(stdout);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("printed nothing on standard output; one JSON object is expected".into());
    }
    let value: serde_json::Value = serde_json::from_str(trimmed).map_err(|e| {
        format!(
            "printed output that is not one JSON object ({e}); it begins {:?}",
            excerpt(trimmed, 80)
        )
    })?;
    if !value.is_object() {
        return Err(format!(
            "printed JSON that is not an object; it begins {:?}",
            excerpt(trimmed, 80)
        ));
    }
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
    if let Some(latency) = response.latency
        && latency < 0.0
    {
        return Err(format!("printed a negative `latency` ({latency})"));
    }
    Ok(response)
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

/// Reads `source` to its end on a thread of its own, keeping the first `cap` bytes and counting
/// the rest, so the program never blocks on a full pipe.
fn drain(mut source: impl Read + Send + 'static, cap: usize) -> mpsc::Receiver<(Vec<u8>, u64)> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped = 0u64;
        let mut buffer = [0u8; 64 * 1024];
        loop {
            match source.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(kept.len()).min(n);
                    kept.extend_from_slice(&buffer[..room]);
                    dropped += (n - room) as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = sender.send((kept, dropped));
    });
    receiver
}

/// The process groups of the programs running now, so that [`kill_running`] can end them.
static RUNNING: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Kills every external program still running, with everything it started: for a second
/// interrupt, which ends `runner` at once (the programs, in process groups of their own, would
/// otherwise run on, orphaned).
pub fn kill_running() {
    let groups = match RUNNING.lock() {
        Ok(groups) => groups.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
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
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Starts the program, feeds it `request`, and waits for it within its time-out.
fn run(
    method: &ExternalChoice,
    request: &[u8],
    interrupt: Option<&AtomicBool>,
) -> Result<Ended, String> {
    use std::os::unix::process::CommandExt as _;
    let started = Instant::now();
    let mut command = Command::new(method.program());
    command
        .args(method.command.iter().skip(1))
        .current_dir(&method.dir)
        .env("RUNNER_EXTERNAL_PROTOCOL", EXTERNAL_PROTOCOL.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: a time-out kills everything it started, and the terminal's
        // Ctrl-C reaches `runner`, which decides (see GRACE).
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
            kill_group(pid);
            let _ = child.kill();
            ended.status = child.wait().ok();
            ended.stop = Some(stop);
            break;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    // Whatever the program left running in its group goes with it, so the pipes close.
    kill_group(pid);
    running(pid, false);
    ended.seconds = started.elapsed().as_secs_f64();
    let until = Instant::now() + PIPE_GRACE;
    let mut collect = |receiver: Option<mpsc::Receiver<(Vec<u8>, u64)>>| {
        let wait = until.saturating_duration_since(Instant::now());
        match receiver.map(|r| r.recv_timeout(wait)) {
            Some(Ok(output)) => output,
            Some(Err(_)) => {
                ended.pipes_open = true;
                (Vec::new(), 0)
            }
            None => (Vec::new(), 0),
        }
    };
    let (out, out_dropped) = collect(stdout);
    let (err, err_dropped) = collect(stderr);
    ended.stdout = out;
    ended.stdout_overflow = out_dropped > 0;
    ended.stderr = err;
    ended.stderr_dropped = err_dropped;
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
