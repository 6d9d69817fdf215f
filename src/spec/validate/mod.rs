//! Semantic validation and sweep expansion: `SpecFile` -> `Experiment`.
//!
//! Every problem is collected with its location; nothing stops at the first.
//!
//! **Expansion order** (documented in README and relied on by tests): the
//! scenario fields form a grid in the fixed order of [`FIELDS`]: the first
//! field varies slowest, the last fastest. A `zip:` group moves as one axis,
//! placed where its earliest field stands. Load points vary fastest of all,
//! within each scenario, in the order written.

use std::path::Path;
use std::sync::Arc;

use serde_saphyr::{Location, Spanned};

use super::error::Diagnostic;
use super::sweep::{Sweep, SweepValue};
use super::types::*;
use super::{Experiment, Load, ModelChoice, ScenarioPoint, SimulationChoice};
use crate::model::{self, ModelOptions};
use crate::scenario::graph::{self, Graph};
use crate::scenario::{
    BroadcastOrder, Dateline, GlobalArrangement, InjectionProcess, InjectionProcessKind,
    LengthDistributionKind, MessageLengths, Routing, Scenario, Switching, SwitchingKind, TieBreak,
    Topology, TopologyKind, Traffic,
};
use crate::scenario::{bounds, fields};
use crate::sim::{self, SimOptions};
use crate::suggest::did_you_mean;

mod build;
mod columns;
mod expand;
mod figures;
mod load;
mod methods;

use build::*;
pub use columns::read_graph;
use columns::*;
use expand::*;
use figures::*;
use load::*;
use methods::*;
pub use methods::{
    DEFAULT_CURVE_POINTS, MAX_CURVE_POINTS, MAX_SATURATION_SEARCHES, check_saturation_searches,
    check_target_precision,
};

/// Scenario field names in expansion order (the sweep axes of [`fields::FIELDS`]); also the
/// result columns they fill.
pub const FIELDS: [&str; fields::SWEPT.len()] = fields::SWEPT;

const TOPOLOGY: usize = fields::swept_index("topology");
const GRAPH: usize = fields::swept_index("graph");
const GLOBAL_ARRANGEMENT: usize = fields::swept_index("global_arrangement");
const SWITCHING: usize = fields::swept_index("switching");
const SCOUTING: usize = fields::swept_index("scouting_distance");
const ROUTING: usize = fields::swept_index("routing");
const ESCAPE: usize = fields::swept_index("escape_channels");
const MESSAGE_LENGTH: usize = fields::swept_index("message_length");
const SECOND_MOMENT: usize = fields::swept_index("message_length_second_moment");
const LENGTH_DISTRIBUTION: usize = fields::swept_index("message_length_distribution");
const LENGTH_MIN: usize = fields::swept_index("message_length_min");
const LENGTH_MAX: usize = fields::swept_index("message_length_max");
const BROADCAST: usize = fields::swept_index("broadcast_fraction");
const STARTUP: usize = fields::swept_index("startup_latency");
const DATELINE: usize = fields::swept_index("dateline");
const TIE_BREAK: usize = fields::swept_index("tie_break");
const TRAFFIC: usize = fields::swept_index("traffic");
const HOTSPOT: usize = fields::swept_index("hotspot_fraction");
const INJECTION: usize = fields::swept_index("injection_process");
const BURST: usize = fields::swept_index("burst_length");
const BROADCAST_ORDER: usize = fields::swept_index("broadcast_order");
const CIRCUIT_BACKOFF: usize = fields::swept_index("circuit_backoff");
const CIRCUIT_RETRY_LIMIT: usize = fields::swept_index("circuit_retry_limit");

/// The most scenario x load points one spec may expand to.
pub const MAX_POINTS: usize = 1_000_000;

/// The most tasks one spec may plan unless `--max-tasks` says otherwise.
pub const MAX_TASKS: u64 = 1_000_000;

/// The longest `name`: it names `reports/<name>/` and the run's lock file.
pub const MAX_NAME_CHARS: usize = 100;

/// The largest network the tool accepts, in nodes.
pub const MAX_NODES: u64 = 1 << 24;

type Values<T> = Vec<(T, Location)>;

/// Collected problems.
#[derive(Default)]
pub(super) struct Diags(pub Vec<Diagnostic>);

impl Diags {
    fn error(&mut self, location: Location, message: impl Into<String>, help: Option<String>) {
        let diagnostic = Diagnostic { message: message.into(), location: Some(location), help };
        if !self.0.contains(&diagnostic) {
            self.0.push(diagnostic);
        }
    }
}

/// Validates and expands a parsed spec; problems go to `diags`.
pub(super) fn validate(
    spec: SpecFile,
    limits: &super::Limits,
    spec_dir: &Path,
    diags: &mut Diags,
) -> Option<Experiment> {
    let name = spec.name.value.clone();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        diags.error(
            spec.name.referenced,
            format!("`name` must be letters, digits, `_` or `-` (it names reports/<name>/), found {name:?}"),
            None,
        );
    } else if name.chars().count() > MAX_NAME_CHARS {
        diags.error(
            spec.name.referenced,
            format!(
                "`name` is {} characters long; at most {MAX_NAME_CHARS} are allowed (it names reports/<name>/ and the run's lock file)",
                name.chars().count()
            ),
            None,
        );
    }
    let scenario = &spec.scenario.value;
    let columns = columns(scenario, spec_dir, diags);
    let model = model_choice(&spec.methods.value, diags);
    let simulation = simulation_choice(&spec.methods.value, diags);
    let external = super::external::choices(&spec.methods.value, &mut diags.0);
    if spec.methods.value.model.is_none()
        && spec.methods.value.simulation.is_none()
        && external.is_empty()
    {
        diags.error(
            spec.methods.referenced,
            "`methods` names no method",
            Some("add `model: {name: ...}` (see `runner models`), `simulation: {}` and/or `external: [...]`".into()),
        );
    }
    let saturation_of = saturation_of(&spec.load, model.as_ref(), simulation.as_ref(), diags);
    let load =
        load(&spec.load, model.is_some() || !saturation_of.is_model(), columns.replays, diags);
    if let (Some(Load::FractionOfSaturation(_)), Some(model), true) =
        (&load, &model, saturation_of.is_model())
    {
        fraction_of_saturation_needs_poisson(&columns, model, diags);
    }
    if columns.replays {
        refuse_with_trace(&spec.methods.value, &external, diags);
    }
    let groups = zip_groups(scenario, &columns, diags);
    let report_location = spec.report.as_ref().map_or(Location::UNKNOWN, |r| r.referenced);
    let spec_report_written = spec.report.is_some();
    let report = spec.report.map(|r| r.value).unwrap_or_default();
    for (index, figure) in report.figures.iter().enumerate() {
        if let Err(message) = super::columns::check_figure(figure) {
            diags.error(report_location, format!("report figure: {message}"), None);
        }
        let link_loads = simulation.as_ref().is_some_and(|s| s.options.link_loads);
        if figure.kind == crate::spec::report::FigureKind::LinkHeatmap && !link_loads {
            diags.error(
                report_location,
                format!(
                    "report figure {}: `kind: link_heatmap` draws the per-link loads, which the \
                     simulation records only with `methods.simulation.link_loads: true`",
                    index + 1
                ),
                Some("add `link_loads: true` under `methods.simulation`".into()),
            );
        }
        for problem in figure.check_fields(index + 1) {
            if !diags.0.contains(&problem) {
                diags.0.push(problem);
            }
        }
    }
    if !diags.0.is_empty() {
        return None;
    }
    let scenarios =
        expand(&columns, &groups, &spec.methods, model.as_ref(), simulation.is_some(), diags);
    if !diags.0.is_empty() {
        return None;
    }
    let load = load?;
    // Rates a Bernoulli or on/off source cannot offer, at the rate written (a fraction of
    // saturation is checked when its rate is known: the simulation task fails saying why).
    if let (Load::Rates(_), Some(rates)) = (&load, &spec.load.value.rates) {
        let values = column(diags, Some(rates), None, any);
        for point in &scenarios {
            for (rate, location) in &values {
                if let Err(message) = point.scenario.injection_process.check_rate(*rate) {
                    diags.error(*location, format!("{}: {message}", point.label), None);
                }
            }
        }
        if !diags.0.is_empty() {
            return None;
        }
    }
    let points = scenarios.len().saturating_mul(load.len());
    if points > MAX_POINTS {
        diags.error(
            spec.scenario.referenced,
            format!("the sweep expands to {points} points; at most {MAX_POINTS} are allowed"),
            Some("split the spec, or sweep fewer values".into()),
        );
        return None;
    }
    let tasks =
        planned_tasks(scenarios.len(), load.len(), model.as_ref(), simulation.as_ref(), &external);
    if tasks > limits.max_tasks {
        let location = spec
            .methods
            .value
            .simulation
            .as_ref()
            .and_then(|s| s.replications.as_ref())
            .map_or(spec.scenario.referenced, |r| r.referenced);
        diags.error(
            location,
            format!(
                "the spec plans {tasks} tasks ({} scenarios x {} load points{}); the limit is {}",
                scenarios.len(),
                load.len(),
                simulation
                    .as_ref()
                    .map(|s| format!(" x {} replications", s.replications))
                    .unwrap_or_default(),
                limits.max_tasks
            ),
            Some("sweep fewer values or replications, split the spec, or raise the limit deliberately with `--max-tasks N`".into()),
        );
        return None;
    }
    let figures =
        FigureBounds::new(&scenarios, &load, model.is_some(), simulation.as_ref(), &external);
    for (index, figure) in report.figures.iter().enumerate() {
        if let Err(message) = figures.check(figure) {
            if spec_report_written {
                diags.error(
                    report_location,
                    format!("report figure {}: {message}", index + 1),
                    None,
                );
            } else {
                // The default figure of a spec without `report:`: point at the sweep.
                diags.error(
                    spec.scenario.referenced,
                    format!("the default report figure (latency against rate): {message}"),
                    Some("add a `report:` section whose figure puts a swept field in `panels`, or `figures: []` for none".into()),
                );
            }
        }
    }
    if !diags.0.is_empty() {
        return None;
    }
    let warnings = simulator_only_sweeps(&columns, simulation.is_some());
    Some(Experiment {
        title: spec.title.unwrap_or_else(|| name.clone()),
        name,
        description: spec.description,
        seed: spec.seed.unwrap_or(DEFAULT_SEED),
        scenarios,
        load,
        saturation_of,
        model,
        simulation,
        external,
        report,
        swept: (0..FIELDS.len()).filter(|&f| columns.len(f) > 1).map(|f| FIELDS[f]).collect(),
        warnings,
    })
}

/// How many tasks `plan::build` makes for a spec (without `--only`): a Saturation per
/// scenario when there is a model, a Curve when it has curve points, and a Solve per batch of
/// [`super::SOLVE_BATCH`] load points; per scenario and
/// load point the replications plus their Aggregate (simulation), and per
/// external method one evaluation (`kind: model`) or its replications plus their Aggregate
/// (`kind: simulation`); per scenario and method with `saturation_searches` its searches plus
/// their Aggregate; then Gather and Report.
pub fn planned_tasks(
    scenarios: usize,
    loads: usize,
    model: Option<&ModelChoice>,
    simulation: Option<&SimulationChoice>,
    external: &[super::external::ExternalChoice],
) -> u64 {
    let (scenarios, loads) = (scenarios as u64, loads as u64);
    let searches = |n: u32| if n == 0 { 0 } else { u64::from(n) + 1 };
    let search_tasks = simulation.map_or(0, |s| searches(s.saturation_searches))
        + external
            .iter()
            .filter(|e| e.kind == ExternalKind::Simulation)
            .map(|e| searches(e.saturation_searches))
            .sum::<u64>();
    let external: u64 = external
        .iter()
        .map(|e| match e.kind {
            ExternalKind::Model => 1,
            ExternalKind::Simulation => u64::from(e.replications).saturating_add(1),
        })
        .fold(0u64, u64::saturating_add);
    let per_point =
        simulation.map_or(0, |s| u64::from(s.replications).saturating_add(1)) + external;
    // The model: a Saturation, a Curve when it has points, and the Solve batches.
    let batches = loads.div_ceil(super::SOLVE_BATCH as u64);
    let per_scenario = model.map_or(0, |m| 1 + u64::from(m.curve_points > 0) + batches);
    let per_scenario = per_scenario + search_tasks;
    scenarios
        .saturating_mul(loads)
        .saturating_mul(per_point)
        .saturating_add(scenarios.saturating_mul(per_scenario).saturating_add(2))
}

/// Warnings for sweeps over fields only the simulator reads, in a spec that does not simulate:
/// every value gives the same model rows.
fn simulator_only_sweeps(columns: &Columns, simulate: bool) -> Vec<Diagnostic> {
    if simulate {
        return Vec::new();
    }
    (0..FIELDS.len())
        .filter(|&field| {
            fields::get(FIELDS[field]).is_some_and(|f| f.evaluators == fields::Evaluators::Simulator)
        })
        .filter(|&field| columns.len(field) > 1)
        .map(|field| Diagnostic {
            message: format!(
                "`{}` is swept over {} values, but only the simulator reads it and this spec has no `methods.simulation`: the model gives identical rows for every value",
                FIELDS[field],
                columns.len(field)
            ),
            location: columns.written[field],
            help: Some(format!("give `{}` one value, or add `methods.simulation`", FIELDS[field])),
        })
        .collect()
}

/// A load given as a fraction of saturation takes the model's saturation rate, and the models
/// assume Poisson arrivals: a Bernoulli or on/off process cannot have one. Located at the
/// process, with the way out (its rate written in messages per node per cycle).
fn fraction_of_saturation_needs_poisson(columns: &Columns, model: &ModelChoice, diags: &mut Diags) {
    for (process, location) in &columns.injection_process {
        if *process == InjectionProcessKind::Poisson {
            continue;
        }
        let name = match process {
            InjectionProcessKind::Bernoulli => "bernoulli",
            _ => "on_off",
        };
        diags.error(
            *location,
            format!(
                "injection_process `{name}` cannot take its load as `fraction_of_saturation`: the \
                 fraction is of the saturation rate model `{}` computes, and the models assume \
                 Poisson arrivals, so no model gives a `{name}` source a saturation rate",
                model.name.as_str()
            ),
            Some(format!(
                "give the load as `load.rates` in messages/node/cycle (a `{name}` source offers \
                 at most {}), and evaluate `{name}` with `methods.simulation` only",
                if name == "bernoulli" { "1" } else { "B / (B + 1), B the burst_length" }
            )),
        );
    }
}

/// Trace replay (`pattern: trace`) is the built-in simulator's, over a fixed window, once per
/// load point: replications of one trace replay the same workload (docs/statistics.md, "Trace
/// replay").
fn refuse_with_trace(
    methods: &MethodsSpec,
    external: &[super::external::ExternalChoice],
    diags: &mut Diags,
) {
    if let Some(r) = methods.simulation.as_ref().and_then(|s| s.replications.as_ref())
        && r.value > 1
    {
        diags.error(
            r.referenced,
            format!(
                "`replications: {}` with trace traffic: every replication replays the same \
                 messages at the same times, so pooling them narrows the interval without \
                 saying more about the workload",
                r.value
            ),
            Some(
                "a trace replay is one workload: use replications: 1; its interval is the \
                 batch-means interval of the one replay"
                    .into(),
            ),
        );
    }
    if let Some(p) = methods.simulation.as_ref().and_then(|s| s.target_precision.as_ref()) {
        diags.error(
            p.referenced,
            "`target_precision` does not apply to trace traffic: a replay is measured over the \
             fixed window of `cycles` (closed early when the trace ends)",
            Some("leave `target_precision` out".into()),
        );
    }
    if let Some(n) = methods.simulation.as_ref().and_then(|s| s.saturation_searches.as_ref())
        && n.value > 0
    {
        diags.error(
            n.referenced,
            "`saturation_searches` does not apply to trace traffic: a trace offers its own \
             load, so there is no offered load to search",
            Some("leave `saturation_searches` out".into()),
        );
    }
    if let (Some(first), Some(entry)) = (external.first(), methods.external.first()) {
        diags.error(
            entry.referenced,
            format!(
                "external method `{}` cannot evaluate trace traffic: the protocol hands a \
                 program a scenario and a rate, not a trace",
                first.name
            ),
            Some("evaluate the trace with `methods.simulation`".into()),
        );
    }
}

/// A short human description of a scenario: `torus 8-ary 2-cube, wormhole, duato, V=3, M=32`.
pub fn label(s: &Scenario) -> String {
    let topology = s.topology.label();
    let switching = match s.switching {
        Switching::Scouting { scouting_distance } => format!("scouting K={scouting_distance}"),
        other => other.kind().to_string(),
    };
    let mut text = format!(
        "{topology}, {switching}, {}, V={}, M={}",
        s.routing.as_str(),
        s.virtual_channels,
        s.message_length
    );
    if let Some(v2) = s.escape_channels {
        text.push_str(&format!(", V2={v2}"));
    }
    match s.message_length_distribution {
        MessageLengths::Fixed => {}
        lengths => {
            text.push_str(&format!(", {} lengths", lengths.as_str()));
            if let Some((min, max)) = lengths.bounds() {
                text.push_str(&format!(" {min}..{max}"));
            }
        }
    }
    if s.fault_rate > 0.0 {
        text.push_str(&format!(", theta={}", s.fault_rate));
    }
    if s.broadcast_fraction > 0.0 {
        text.push_str(&format!(", beta={}", s.broadcast_fraction));
        if s.broadcast_order != BroadcastOrder::Random {
            text.push_str(&format!(", {} trees", s.broadcast_order.as_str()));
        }
    }
    if s.routing == Routing::DimensionOrder {
        if let Some(dateline) = s.dateline.filter(|&d| d != Dateline::PerTraversal) {
            text.push_str(&format!(", dateline {}", dateline.as_str()));
        }
        if let Some(tie) = s.tie_break.filter(|&t| t != TieBreak::Random) {
            text.push_str(&format!(", ties {}", tie.as_str()));
        }
    }
    match &s.traffic {
        Traffic::Uniform => {}
        Traffic::Trace(trace) => {
            let name = trace.path.file_name().unwrap_or(trace.path.as_os_str());
            text.push_str(&format!(", trace {}", name.to_string_lossy()));
        }
        other => text.push_str(&format!(", {} traffic", other.as_str())),
    }
    match s.injection_process {
        InjectionProcess::Poisson => {}
        InjectionProcess::Bernoulli => text.push_str(", bernoulli injection"),
        InjectionProcess::OnOff { burst_length } => {
            text.push_str(&format!(", on_off injection B={burst_length}"))
        }
    }
    text
}
