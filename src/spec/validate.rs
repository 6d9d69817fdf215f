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
use super::suggest::did_you_mean;
use super::sweep::{Sweep, SweepValue};
use super::types::*;
use super::{Experiment, Load, ModelChoice, ScenarioPoint, SimulationChoice};
use crate::model::{self, ModelName, ModelOptions};
use crate::scenario::bounds;
use crate::scenario::graph::{self, Graph};
use crate::scenario::{
    BroadcastOrder, Dateline, Ejection, InjectionProcess, MessageLengths, Routing, Scenario,
    Switching, TieBreak, Topology, Traffic,
};
use crate::sim::{self, SimOptions};

/// Scenario field names in expansion order; also the result columns they fill.
pub const FIELDS: [&str; 34] = [
    "topology",
    "radix",
    "dimensions",
    "processors",
    "terminals_per_router",
    "routers_per_group",
    "global_links_per_router",
    "graph",
    "switching",
    "scouting_distance",
    "routing",
    "virtual_channels",
    "escape_channels",
    "buffer_depth",
    "router_delay",
    "input_speedup",
    "message_length",
    "message_length_second_moment",
    "message_length_distribution",
    "message_length_min",
    "message_length_max",
    "fault_rate",
    "broadcast_fraction",
    "startup_latency",
    "ejection",
    "dateline",
    "tie_break",
    "traffic",
    "hotspot_fraction",
    "injection_process",
    "burst_length",
    "broadcast_order",
    "circuit_backoff",
    "circuit_retry_limit",
];

const TOPOLOGY: usize = 0;
const RADIX: usize = 1;
const DIMENSIONS: usize = 2;
const PROCESSORS: usize = 3;
const TERMINALS: usize = 4;
const ROUTERS: usize = 5;
const GLOBAL_LINKS: usize = 6;
const GRAPH: usize = 7;
const SWITCHING: usize = 8;
const SCOUTING: usize = 9;
const ROUTING: usize = 10;
const VIRTUAL_CHANNELS: usize = 11;
const ESCAPE: usize = 12;
const BUFFER: usize = 13;
const ROUTER_DELAY: usize = 14;
const INPUT_SPEEDUP: usize = 15;
const MESSAGE_LENGTH: usize = 16;
const SECOND_MOMENT: usize = 17;
const LENGTH_DISTRIBUTION: usize = 18;
const LENGTH_MIN: usize = 19;
const LENGTH_MAX: usize = 20;
const FAULT_RATE: usize = 21;
const BROADCAST: usize = 22;
const STARTUP: usize = 23;
const EJECTION: usize = 24;
const DATELINE: usize = 25;
const TIE_BREAK: usize = 26;
const TRAFFIC: usize = 27;
const HOTSPOT: usize = 28;
const INJECTION: usize = 29;
const BURST: usize = 30;
const BROADCAST_ORDER: usize = 31;
const CIRCUIT_BACKOFF: usize = 32;
const CIRCUIT_RETRY_LIMIT: usize = 33;

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

/// Every field's values, each with the location it was written at.
struct Columns {
    topology: Values<TopologyKind>,
    radix: Values<u32>,
    dimensions: Values<u32>,
    processors: Values<u32>,
    terminals_per_router: Values<u32>,
    routers_per_group: Values<u32>,
    global_links_per_router: Values<u32>,
    graph: Values<Arc<Graph>>,
    switching: Values<SwitchingKind>,
    scouting_distance: Values<u32>,
    routing: Values<RoutingName>,
    virtual_channels: Values<u32>,
    escape_channels: Values<u32>,
    buffer_depth: Values<u32>,
    router_delay: Values<u32>,
    input_speedup: Values<u32>,
    message_length: Values<u32>,
    second_moment: Values<f64>,
    length_distribution: Values<LengthDistributionName>,
    length_min: Values<u32>,
    length_max: Values<u32>,
    fault_rate: Values<f64>,
    broadcast_fraction: Values<f64>,
    startup_latency: Values<f64>,
    ejection: Values<EjectionName>,
    dateline: Values<DatelineName>,
    tie_break: Values<TieBreakName>,
    traffic: Values<TrafficPattern>,
    hotspot_fraction: Values<f64>,
    hotspot_nodes: Vec<u32>,
    injection_process: Values<InjectionProcessName>,
    burst_length: Values<f64>,
    broadcast_order: Values<BroadcastOrderName>,
    circuit_backoff: Values<u32>,
    circuit_retry_limit: Values<u32>,
    /// `traffic.trace` (as written) and `traffic.trace_flit_bytes`, for `pattern: trace`.
    trace: Option<String>,
    trace_flit_bytes: Option<u32>,
    /// Every point replays a trace (`pattern: trace`).
    replays: bool,
    /// Where each field was written (`None`: left out, default used or not applicable).
    written: [Option<Location>; FIELDS.len()],
}

impl Columns {
    fn len(&self, field: usize) -> usize {
        match field {
            TOPOLOGY => self.topology.len(),
            RADIX => self.radix.len(),
            DIMENSIONS => self.dimensions.len(),
            PROCESSORS => self.processors.len(),
            TERMINALS => self.terminals_per_router.len(),
            ROUTERS => self.routers_per_group.len(),
            GLOBAL_LINKS => self.global_links_per_router.len(),
            GRAPH => self.graph.len(),
            SWITCHING => self.switching.len(),
            SCOUTING => self.scouting_distance.len(),
            ROUTING => self.routing.len(),
            VIRTUAL_CHANNELS => self.virtual_channels.len(),
            ESCAPE => self.escape_channels.len(),
            BUFFER => self.buffer_depth.len(),
            ROUTER_DELAY => self.router_delay.len(),
            INPUT_SPEEDUP => self.input_speedup.len(),
            MESSAGE_LENGTH => self.message_length.len(),
            SECOND_MOMENT => self.second_moment.len(),
            LENGTH_DISTRIBUTION => self.length_distribution.len(),
            LENGTH_MIN => self.length_min.len(),
            LENGTH_MAX => self.length_max.len(),
            FAULT_RATE => self.fault_rate.len(),
            BROADCAST => self.broadcast_fraction.len(),
            STARTUP => self.startup_latency.len(),
            EJECTION => self.ejection.len(),
            DATELINE => self.dateline.len(),
            TIE_BREAK => self.tie_break.len(),
            TRAFFIC => self.traffic.len(),
            HOTSPOT => self.hotspot_fraction.len(),
            INJECTION => self.injection_process.len(),
            BURST => self.burst_length.len(),
            BROADCAST_ORDER => self.broadcast_order.len(),
            CIRCUIT_BACKOFF => self.circuit_backoff.len(),
            _ => self.circuit_retry_limit.len(),
        }
    }
}

/// Reads one sweepable field: its values (or the default), checking each value.
fn column<T: SweepValue>(
    diags: &mut Diags,
    field: Option<&Spanned<Sweep<T>>>,
    default: Option<T>,
    check: impl Fn(&T) -> Result<(), String>,
) -> Values<T> {
    let Some(field) = field else {
        return default.map(|d| vec![(d, Location::UNKNOWN)]).unwrap_or_default();
    };
    match field.value.values(field.referenced) {
        Ok(values) => {
            let mut ok = Vec::with_capacity(values.len());
            for (value, location) in values {
                match check(&value) {
                    Ok(()) => ok.push((value, location)),
                    Err(message) => diags.error(location, message, None),
                }
            }
            ok
        }
        Err(message) => {
            diags.error(field.referenced, message, None);
            Vec::new()
        }
    }
}

fn any<T>(_: &T) -> Result<(), String> {
    Ok(())
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
    let load = load(&spec.load, model.is_some(), columns.replays, diags);
    if let (Some(Load::FractionOfSaturation(_)), Some(model)) = (&load, &model) {
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
        if let Err(message) = crate::report::check_figure(figure) {
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
/// `plan::SOLVE_BATCH` load points; per scenario and
/// load point the replications plus their Aggregate (simulation), and per
/// external method one evaluation (`kind: model`) or its replications plus their Aggregate
/// (`kind: simulation`); then Gather and Report.
pub fn planned_tasks(
    scenarios: usize,
    loads: usize,
    model: Option<&ModelChoice>,
    simulation: Option<&SimulationChoice>,
    external: &[super::external::ExternalChoice],
) -> u64 {
    let (scenarios, loads) = (scenarios as u64, loads as u64);
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
    let batches = loads.div_ceil(crate::plan::SOLVE_BATCH as u64);
    let per_scenario = model.map_or(0, |m| 1 + u64::from(m.curve_points > 0) + batches);
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
    [BUFFER, ROUTER_DELAY, INPUT_SPEEDUP]
        .into_iter()
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

/// Upper bounds, known before anything runs, on the panels and lines a figure will draw.
///
/// Scenario columns are counted exactly over the expanded scenarios (zipped fields included);
/// the other columns by what can vary: `method` over the methods, `rate` over the load points,
/// `replication` and `seed` over the replications, and per-row columns (`task_id`, `latency`,
/// ...) over the rows.
struct FigureBounds {
    /// Each scenario's row as JSON (scenario columns filled), for the scenario columns.
    scenarios: Vec<serde_json::Value>,
    loads: usize,
    methods: usize,
    replications: usize,
    fractions: bool,
}

impl FigureBounds {
    fn new(
        scenarios: &[ScenarioPoint],
        load: &Load,
        model: bool,
        simulation: Option<&SimulationChoice>,
        external: &[super::external::ExternalChoice],
    ) -> FigureBounds {
        FigureBounds {
            scenarios: scenarios
                .iter()
                .map(|p| {
                    let row = crate::store::row::Row::of_scenario(&p.scenario);
                    serde_json::to_value(row).unwrap_or_default()
                })
                .collect(),
            loads: load.len(),
            methods: usize::from(model) + usize::from(simulation.is_some()) + external.len(),
            replications: simulation
                .map(|s| s.replications as usize)
                .into_iter()
                .chain(external.iter().map(|e| e.replications as usize))
                .max()
                .unwrap_or(0),
            fractions: matches!(load, Load::FractionOfSaturation(_)),
        }
    }

    /// How many values a non-scenario column can take over the whole run.
    fn values(&self, column: &str) -> usize {
        let scenarios = self.scenarios.len();
        let rows = scenarios * self.loads * (self.methods + self.replications);
        match column {
            "experiment" | "replications" => 1,
            "method" | "evaluator" => self.methods,
            "rate" if self.fractions => scenarios * self.loads,
            "rate" | "fraction_of_saturation" | "trace_time_scale" | "trace_flit_load" => {
                self.loads
            }
            "saturation_rate" => scenarios,
            "replication" | "seed" => self.replications + 1,
            "status" => 4,
            _ => rows.max(1),
        }
    }

    /// The panel key of a scenario: its values of the scenario columns among `columns`.
    fn key(row: &serde_json::Value, columns: &[String]) -> String {
        columns
            .iter()
            .filter(|c| crate::report::is_scenario_column(c))
            .map(|c| row[c.as_str()].to_string())
            .collect::<Vec<_>>()
            .join("\u{1f}")
    }

    /// The scenarios of each panel (by the scenario columns among `panels`).
    fn panels(&self, panels: &[String]) -> Vec<Vec<&serde_json::Value>> {
        let mut groups: std::collections::BTreeMap<String, Vec<&serde_json::Value>> =
            std::collections::BTreeMap::new();
        for row in &self.scenarios {
            groups.entry(Self::key(row, panels)).or_default().push(row);
        }
        groups.into_values().collect()
    }

    /// The most panels, and the most lines within one panel. A figure draws one series per
    /// scenario (and per combination of the non-scenario `lines` columns): a scenario column
    /// in neither `panels` nor `lines` that varies within a panel is folded into the lines
    /// (the legend names it), so the lines of a panel are its scenarios, not only the
    /// combinations of the `lines` columns.
    fn counts(&self, panels: &[String], lines: &[String]) -> (usize, usize) {
        let other = |columns: &[String]| {
            columns
                .iter()
                .filter(|c| !crate::report::is_scenario_column(c))
                .fold(1usize, |acc, c| acc.saturating_mul(self.values(c)))
        };
        let groups = self.panels(panels);
        let lines_per_panel = groups.iter().map(Vec::len).max().unwrap_or(1).max(1);
        (
            groups.len().max(1).saturating_mul(other(panels)),
            lines_per_panel.saturating_mul(other(lines)),
        )
    }

    /// The scenario columns in neither `panels` nor `lines` that vary within some panel,
    /// with the most values one panel has of each.
    fn folded(&self, figure: &crate::spec::report::FigureSpec) -> Vec<(&'static str, usize)> {
        let groups = self.panels(&figure.panels);
        crate::report::scenario_columns()
            .iter()
            .copied()
            .filter(|c| !figure.panels.iter().chain(&figure.lines).any(|named| named == c))
            .filter_map(|c| {
                let most = groups
                    .iter()
                    .map(|group| {
                        group
                            .iter()
                            .map(|row| row[c].to_string())
                            .collect::<std::collections::BTreeSet<_>>()
                            .len()
                    })
                    .max()
                    .unwrap_or(0);
                (most > 1).then_some((c, most))
            })
            .collect()
    }

    fn check(&self, figure: &crate::spec::report::FigureSpec) -> Result<(), String> {
        use crate::spec::report::{MAX_LINES, MAX_PANELS};
        let (panels, lines) = self.counts(&figure.panels, &figure.lines);
        if panels > MAX_PANELS {
            return Err(format!(
                "`panels: [{}]` makes up to {panels} panels; at most {MAX_PANELS} are allowed (panel by columns with fewer values, or split the figure)",
                figure.panels.join(", ")
            ));
        }
        if lines > MAX_LINES {
            let mut folded: Vec<(&str, usize)> = self.folded(figure);
            // The node count follows from radix and dimensions; the legend leaves it out.
            if folded.iter().any(|(c, _)| matches!(*c, "radix" | "dimensions")) {
                folded.retain(|(c, _)| *c != "nodes");
            }
            let because = if folded.is_empty() {
                String::new()
            } else {
                let named: Vec<String> =
                    folded.iter().map(|(c, n)| format!("`{c}` ({n} values)")).collect();
                format!(
                    "; every scenario gets its own line, and {} {} within a panel without being in `panels` or `lines`, so {} folded into the lines",
                    named.join(" and "),
                    if folded.len() == 1 { "varies" } else { "vary" },
                    if folded.len() == 1 { "it is" } else { "they are" },
                )
            };
            return Err(format!(
                "`lines: [{}]` makes up to {lines} lines in one panel; at most {MAX_LINES} are allowed{because} (move a column to `panels`, or split the figure)",
                figure.lines.join(", ")
            ));
        }
        Ok(())
    }
}

/// A load given as a fraction of saturation takes the model's saturation rate, and the models
/// assume Poisson arrivals: a Bernoulli or on/off process cannot have one. Located at the
/// process, with the way out (its rate written in messages per node per cycle).
fn fraction_of_saturation_needs_poisson(columns: &Columns, model: &ModelChoice, diags: &mut Diags) {
    for (process, location) in &columns.injection_process {
        if *process == InjectionProcessName::Poisson {
            continue;
        }
        let name = match process {
            InjectionProcessName::Bernoulli => "bernoulli",
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

/// Trace replay (`pattern: trace`) is the built-in simulator's, over a fixed window.
fn refuse_with_trace(
    methods: &MethodsSpec,
    external: &[super::external::ExternalChoice],
    diags: &mut Diags,
) {
    if let Some(p) = methods.simulation.as_ref().and_then(|s| s.target_precision.as_ref()) {
        diags.error(
            p.referenced,
            "`target_precision` does not apply to trace traffic: a replay is measured over the \
             fixed window of `cycles` (closed early when the trace ends)",
            Some("leave `target_precision` out".into()),
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

/// `traffic.pattern: trace` and the fields it needs and excludes; whether every point replays
/// a trace.
fn trace_fields(s: &ScenarioSpec, diags: &mut Diags) -> bool {
    let traffic = s.traffic.as_ref();
    let patterns = traffic.and_then(|t| t.pattern.as_ref());
    let values = patterns.and_then(|p| p.value.values(p.referenced).ok()).unwrap_or_default();
    let traces = values.iter().filter(|v| v.0 == TrafficPattern::Trace).count();
    let file = traffic.and_then(|t| t.trace.as_ref());
    let flit_bytes = traffic.and_then(|t| t.trace_flit_bytes.as_ref());
    if traces == 0 {
        if let Some(file) = file {
            diags.error(
                file.referenced,
                "`trace` needs `pattern: trace`",
                Some("set `traffic.pattern: trace`, or remove `trace`".into()),
            );
        }
        if let Some(bytes) = flit_bytes {
            diags.error(
                bytes.referenced,
                "`trace_flit_bytes` applies to `pattern: trace` only",
                Some("remove `trace_flit_bytes`".into()),
            );
        }
        return false;
    }
    let Some(patterns) = patterns else { return false };
    if traces < values.len() {
        diags.error(
            patterns.referenced,
            "`pattern: trace` cannot be swept beside other patterns: a trace offers its own load \
             (`load.trace_time_scale`), the others take `load.rates`",
            Some("split the spec: one for the trace, one for the generated traffic".into()),
        );
    }
    if file.is_none() {
        diags.error(
            patterns.referenced,
            "`pattern: trace` needs `traffic.trace`, the trace file",
            Some("for example `trace: traces/poisson_8x8.csv` (docs/traces.md)".into()),
        );
    }
    if let Some(bytes) = flit_bytes
        && bytes.value == 0
    {
        diags.error(bytes.referenced, "`trace_flit_bytes` must be at least 1 byte", None);
    }
    let gives = "the trace gives every message's time, endpoints and length";
    let excluded = [
        ("message_length", s.message_length.as_ref().map(|f| f.referenced)),
        (
            "message_length_second_moment",
            s.message_length_second_moment.as_ref().map(|f| f.referenced),
        ),
        (
            "message_length_distribution",
            s.message_length_distribution.as_ref().map(|f| f.referenced),
        ),
        ("message_length_min", s.message_length_min.as_ref().map(|f| f.referenced)),
        ("message_length_max", s.message_length_max.as_ref().map(|f| f.referenced)),
        ("fault_rate", s.fault_rate.as_ref().map(|f| f.referenced)),
        (
            "injection_process",
            traffic.and_then(|t| t.injection_process.as_ref()).map(|f| f.referenced),
        ),
        ("burst_length", traffic.and_then(|t| t.burst_length.as_ref()).map(|f| f.referenced)),
        (
            "hotspot_fraction",
            traffic.and_then(|t| t.hotspot_fraction.as_ref()).map(|f| f.referenced),
        ),
        ("hotspot_nodes", traffic.and_then(|t| t.hotspot_nodes.as_ref()).map(|f| f.referenced)),
        (
            "broadcast_fraction",
            traffic.and_then(|t| t.broadcast_fraction.as_ref()).map(|f| f.referenced),
        ),
    ];
    for (field, location) in excluded {
        if let Some(location) = location {
            diags.error(
                location,
                format!("`{field}` does not apply to trace traffic: {gives}"),
                Some(format!("remove `{field}`")),
            );
        }
    }
    traces == values.len()
}

fn columns(s: &ScenarioSpec, spec_dir: &Path, diags: &mut Diags) -> Columns {
    let replays = trace_fields(s, diags);
    let topology = &s.topology;
    let switching = s.switching.as_ref();
    let traffic = s.traffic.as_ref();
    let mut written = [None; FIELDS.len()];
    let mut mark = |field: usize, location: Option<Location>| written[field] = location;
    mark(TOPOLOGY, Some(topology.kind.referenced));
    mark(RADIX, topology.radix.as_ref().map(|f| f.referenced));
    mark(DIMENSIONS, topology.dimensions.as_ref().map(|f| f.referenced));
    mark(PROCESSORS, topology.processors.as_ref().map(|f| f.referenced));
    mark(TERMINALS, topology.terminals_per_router.as_ref().map(|f| f.referenced));
    mark(ROUTERS, topology.routers_per_group.as_ref().map(|f| f.referenced));
    mark(GLOBAL_LINKS, topology.global_links_per_router.as_ref().map(|f| f.referenced));
    mark(GRAPH, topology.graph.as_ref().map(|f| f.referenced));
    mark(SWITCHING, switching.map(|f| f.kind.referenced));
    mark(SCOUTING, switching.and_then(|f| f.scouting_distance.as_ref()).map(|f| f.referenced));
    mark(ROUTING, Some(s.routing.referenced));
    mark(VIRTUAL_CHANNELS, s.virtual_channels.as_ref().map(|f| f.referenced));
    mark(ESCAPE, s.escape_channels.as_ref().map(|f| f.referenced));
    mark(BUFFER, s.buffer_depth.as_ref().map(|f| f.referenced));
    mark(ROUTER_DELAY, s.router_delay.as_ref().map(|f| f.referenced));
    mark(INPUT_SPEEDUP, s.input_speedup.as_ref().map(|f| f.referenced));
    mark(MESSAGE_LENGTH, s.message_length.as_ref().map(|f| f.referenced));
    mark(SECOND_MOMENT, s.message_length_second_moment.as_ref().map(|f| f.referenced));
    mark(LENGTH_DISTRIBUTION, s.message_length_distribution.as_ref().map(|f| f.referenced));
    mark(LENGTH_MIN, s.message_length_min.as_ref().map(|f| f.referenced));
    mark(LENGTH_MAX, s.message_length_max.as_ref().map(|f| f.referenced));
    mark(FAULT_RATE, s.fault_rate.as_ref().map(|f| f.referenced));
    mark(BROADCAST, traffic.and_then(|t| t.broadcast_fraction.as_ref()).map(|f| f.referenced));
    mark(STARTUP, traffic.and_then(|t| t.startup_latency.as_ref()).map(|f| f.referenced));
    mark(EJECTION, s.ejection.as_ref().map(|f| f.referenced));
    mark(DATELINE, s.dateline.as_ref().map(|f| f.referenced));
    mark(TIE_BREAK, s.tie_break.as_ref().map(|f| f.referenced));
    mark(TRAFFIC, traffic.and_then(|t| t.pattern.as_ref()).map(|f| f.referenced));
    mark(HOTSPOT, traffic.and_then(|t| t.hotspot_fraction.as_ref()).map(|f| f.referenced));
    mark(INJECTION, traffic.and_then(|t| t.injection_process.as_ref()).map(|f| f.referenced));
    mark(BURST, traffic.and_then(|t| t.burst_length.as_ref()).map(|f| f.referenced));
    mark(BROADCAST_ORDER, traffic.and_then(|t| t.broadcast_order.as_ref()).map(|f| f.referenced));
    mark(CIRCUIT_BACKOFF, switching.and_then(|f| f.circuit_backoff.as_ref()).map(|f| f.referenced));
    mark(
        CIRCUIT_RETRY_LIMIT,
        switching.and_then(|f| f.circuit_retry_limit.as_ref()).map(|f| f.referenced),
    );

    if let Some(traffic) = traffic
        && let Some(pattern) = &traffic.pattern
        && !matches!(pattern.value.values(pattern.referenced), Ok(values) if values.iter().any(|v| v.0 == TrafficPattern::BroadcastMix))
        && let Some(field) = &traffic.broadcast_fraction
    {
        diags.error(
            field.referenced,
            "`broadcast_fraction` needs `pattern: broadcast_mix`",
            Some("remove `broadcast_fraction`, or set `pattern: broadcast_mix`".into()),
        );
    }
    // The bounds of `scenario::bounds`, which the command line applies too.
    let int = |field: usize| move |v: &u32| bounds::integer(FIELDS[field], *v);
    let real = |field: usize| move |v: &f64| bounds::real(FIELDS[field], *v);
    if let Some(traffic) = traffic
        && let Some(nodes) = &traffic.hotspot_nodes
        && let Err(message) = bounds::hotspot_nodes(&nodes.value)
    {
        diags.error(nodes.referenced, message, None);
    }
    Columns {
        topology: column(diags, Some(&topology.kind), None, any),
        radix: column(diags, topology.radix.as_ref(), None, int(RADIX)),
        dimensions: column(diags, topology.dimensions.as_ref(), None, int(DIMENSIONS)),
        processors: column(diags, topology.processors.as_ref(), None, int(PROCESSORS)),
        terminals_per_router: column(
            diags,
            topology.terminals_per_router.as_ref(),
            None,
            int(TERMINALS),
        ),
        routers_per_group: column(diags, topology.routers_per_group.as_ref(), None, int(ROUTERS)),
        global_links_per_router: column(
            diags,
            topology.global_links_per_router.as_ref(),
            None,
            int(GLOBAL_LINKS),
        ),
        graph: graphs(diags, topology.graph.as_ref(), spec_dir),
        switching: column(diags, switching.map(|s| &s.kind), Some(SwitchingKind::Wormhole), any),
        scouting_distance: column(
            diags,
            switching.and_then(|s| s.scouting_distance.as_ref()),
            None,
            int(SCOUTING),
        ),
        routing: column(diags, Some(&s.routing), None, any),
        virtual_channels: column(
            diags,
            s.virtual_channels.as_ref(),
            Some(DEFAULT_VIRTUAL_CHANNELS),
            int(VIRTUAL_CHANNELS),
        ),
        escape_channels: column(diags, s.escape_channels.as_ref(), None, int(ESCAPE)),
        buffer_depth: column(
            diags,
            s.buffer_depth.as_ref(),
            Some(DEFAULT_BUFFER_DEPTH),
            int(BUFFER),
        ),
        router_delay: column(
            diags,
            s.router_delay.as_ref(),
            Some(DEFAULT_ROUTER_DELAY),
            int(ROUTER_DELAY),
        ),
        input_speedup: column(diags, s.input_speedup.as_ref(), None, int(INPUT_SPEEDUP)),
        message_length: column(
            diags,
            s.message_length.as_ref(),
            Some(DEFAULT_MESSAGE_LENGTH),
            int(MESSAGE_LENGTH),
        ),
        second_moment: column(
            diags,
            s.message_length_second_moment.as_ref(),
            None,
            real(SECOND_MOMENT),
        ),
        length_distribution: column(
            diags,
            s.message_length_distribution.as_ref(),
            Some(LengthDistributionName::Fixed),
            any,
        ),
        length_min: column(diags, s.message_length_min.as_ref(), None, int(LENGTH_MIN)),
        length_max: column(diags, s.message_length_max.as_ref(), None, int(LENGTH_MAX)),
        fault_rate: column(
            diags,
            s.fault_rate.as_ref(),
            Some(DEFAULT_FAULT_RATE),
            real(FAULT_RATE),
        ),
        broadcast_fraction: column(
            diags,
            traffic.and_then(|t| t.broadcast_fraction.as_ref()),
            Some(DEFAULT_BROADCAST_FRACTION),
            real(BROADCAST),
        ),
        startup_latency: column(
            diags,
            traffic.and_then(|t| t.startup_latency.as_ref()),
            Some(DEFAULT_STARTUP_LATENCY),
            real(STARTUP),
        ),
        ejection: column(diags, s.ejection.as_ref(), Some(EjectionName::Single), any),
        dateline: column(diags, s.dateline.as_ref(), None, any),
        tie_break: column(diags, s.tie_break.as_ref(), None, any),
        traffic: column(
            diags,
            traffic.and_then(|t| t.pattern.as_ref()),
            Some(TrafficPattern::Uniform),
            any,
        ),
        hotspot_fraction: column(
            diags,
            traffic.and_then(|t| t.hotspot_fraction.as_ref()),
            None,
            real(HOTSPOT),
        ),
        hotspot_nodes: traffic
            .and_then(|t| t.hotspot_nodes.as_ref())
            .map(|n| n.value.clone())
            .unwrap_or_default(),
        injection_process: column(
            diags,
            traffic.and_then(|t| t.injection_process.as_ref()),
            Some(InjectionProcessName::Poisson),
            any,
        ),
        burst_length: column(
            diags,
            traffic.and_then(|t| t.burst_length.as_ref()),
            None,
            real(BURST),
        ),
        broadcast_order: column(
            diags,
            traffic.and_then(|t| t.broadcast_order.as_ref()),
            Some(BroadcastOrderName::Random),
            any,
        ),
        circuit_backoff: column(
            diags,
            switching.and_then(|f| f.circuit_backoff.as_ref()),
            None,
            int(CIRCUIT_BACKOFF),
        ),
        circuit_retry_limit: column(
            diags,
            switching.and_then(|f| f.circuit_retry_limit.as_ref()),
            None,
            int(CIRCUIT_RETRY_LIMIT),
        ),
        trace: traffic.and_then(|t| t.trace.as_ref()).map(|t| t.value.clone()),
        trace_flit_bytes: traffic.and_then(|t| t.trace_flit_bytes.as_ref()).map(|b| b.value),
        replays,
        written,
    }
}

/// Points of the dense model curve per scenario unless the spec says otherwise.
pub const DEFAULT_CURVE_POINTS: u32 = 100;
/// The most points a dense model curve may have.
pub const MAX_CURVE_POINTS: u32 = 1000;

fn model_choice(methods: &MethodsSpec, diags: &mut Diags) -> Option<ModelChoice> {
    let method = methods.model.as_ref()?;
    let curve_points = match &method.curve_points {
        None => DEFAULT_CURVE_POINTS,
        Some(points) if points.value > MAX_CURVE_POINTS => {
            diags.error(
                points.referenced,
                format!(
                    "`curve_points: {}` asks for more than {MAX_CURVE_POINTS} points per curve",
                    points.value
                ),
                Some(format!("{DEFAULT_CURVE_POINTS} points draw a smooth curve; use 0 for none")),
            );
            DEFAULT_CURVE_POINTS
        }
        Some(points) => points.value,
    };
    let name = match method.name.value {
        ModelNameSpec::ScoutingTorus => ModelName::ScoutingTorus,
        ModelNameSpec::BroadcastHypercube => ModelName::BroadcastHypercube,
        ModelNameSpec::CircuitTorusFaults => ModelName::CircuitTorusFaults,
        ModelNameSpec::NbcTorus => ModelName::NbcTorus,
        ModelNameSpec::FatTree => ModelName::FatTree,
    };
    Some(ModelChoice {
        name,
        options: ModelOptions { literal_eq22: method.literal_eq22 },
        curve_points,
        location: method.name.referenced,
    })
}

fn simulation_choice(methods: &MethodsSpec, diags: &mut Diags) -> Option<SimulationChoice> {
    let method = methods.simulation.as_ref()?;
    let cycles = method.cycles.as_ref().map_or(DEFAULT_CYCLES, |c| c.value);
    if let Some(c) = &method.cycles
        && c.value == 0
    {
        diags.error(c.referenced, "`cycles` must be at least 1", None);
    }
    // At most 10^10 cycles each (`scenario::bounds`, as on the command line): the plan's
    // estimates and the simulator's counters stay finite.
    for (field, value) in [
        ("cycles", &method.cycles),
        ("warmup_cycles", &method.warmup_cycles),
        ("max_cycles", &method.max_cycles),
        ("deadlock_cycles", &method.deadlock_cycles),
    ] {
        if let Some(v) = value
            && v.value > bounds::MAX_CYCLES
            && let Err(message) = bounds::cycles(field, v.value)
        {
            diags.error(
                v.referenced,
                format!("`{field}`: {message}"),
                Some("a simulation that long would not end; simulate fewer cycles".into()),
            );
        }
    }
    let warmup_cycles = method.warmup_cycles.as_ref().map_or(DEFAULT_WARMUP_CYCLES, |w| w.value);
    let replications = method.replications.as_ref().map_or(DEFAULT_REPLICATIONS, |r| r.value);
    if let Some(r) = &method.replications
        && !(1..=10_000).contains(&r.value)
    {
        diags.error(
            r.referenced,
            format!("`replications` must be 1 to 10000, found {}", r.value),
            None,
        );
    }
    if let Some(p) = &method.target_precision
        && let Err(message) = check_target_precision(p.value)
    {
        diags.error(
            p.referenced,
            format!("`target_precision` {message}"),
            Some("for example 0.02: stop when the 95% CI is within 2% of the mean".into()),
        );
    }
    let deadlock_cycles =
        method.deadlock_cycles.as_ref().map_or(DEFAULT_DEADLOCK_CYCLES, |d| d.value);
    if let Some(d) = &method.deadlock_cycles
        && d.value == 0
    {
        diags.error(d.referenced, "`deadlock_cycles` must be at least 1", None);
    }
    if method.target_precision.is_some()
        && let Some(max_cycles) = method.max_cycles.as_ref().map(|m| m.value)
        && max_cycles <= warmup_cycles
    {
        let location = method.target_precision.as_ref().map_or(Location::UNKNOWN, |p| p.referenced);
        diags.error(
            location,
            format!("`max_cycles` = {max_cycles} leaves no cycles after the warm-up"),
            Some("raise `max_cycles` above `warmup_cycles`".into()),
        );
    }
    let measure = measure(method, diags);
    let defaults = SimOptions::default();
    Some(SimulationChoice {
        options: SimOptions {
            warmup_cycles,
            cycles,
            target_precision: method.target_precision.as_ref().map(|p| p.value),
            max_cycles: method
                .max_cycles
                .as_ref()
                .map_or(defaults.max_cycles.max(cycles), |m| m.value),
            deadlock_cycles,
            measure,
            link_loads: method.link_loads || method.link_loads_per_vc,
            link_loads_per_vc: method.link_loads_per_vc,
            ..defaults
        },
        replications,
    })
}

/// `methods.simulation.measure` and its `source_queue_capacity`.
fn measure(method: &SimulationMethod, diags: &mut Diags) -> sim::Measure {
    let capacity = method.source_queue_capacity.as_ref();
    if let Some(c) = capacity
        && c.value == 0
    {
        diags.error(c.referenced, "`source_queue_capacity` must be at least 1 message", None);
    }
    if let Some(c) = capacity
        && c.value > bounds::MAX_SOURCE_QUEUE_CAPACITY
        && let Err(message) = bounds::source_queue_capacity(c.value, 1)
    {
        diags.error(c.referenced, message, None);
    }
    match method.measure.as_ref().map(|m| m.value) {
        None | Some(MeasureName::Latency) => {
            if let Some(c) = capacity {
                diags.error(
                    c.referenced,
                    "`source_queue_capacity` applies to `measure: throughput` only",
                    Some("add `measure: throughput`, or leave `source_queue_capacity` out".into()),
                );
            }
            sim::Measure::Latency
        }
        Some(MeasureName::Throughput) => {
            if let Some(p) = &method.target_precision {
                diags.error(
                    p.referenced,
                    "`target_precision` applies to `measure: latency` only: throughput mode \
                     measures a fixed window of `cycles`",
                    Some("leave `target_precision` out, or use `measure: latency`".into()),
                );
            }
            sim::Measure::Throughput {
                source_queue_capacity: capacity
                    .map_or(DEFAULT_SOURCE_QUEUE_CAPACITY, |c| c.value.max(1)),
            }
        }
    }
}

/// The one rule for a target precision, in specs and on `runner simulate`'s command line.
pub fn check_target_precision(precision: f64) -> Result<(), String> {
    if precision.is_finite() && precision > 0.0 && precision < 1.0 {
        Ok(())
    } else {
        Err(format!("is a relative half-width in (0, 1), found {precision}"))
    }
}

fn load(
    load: &Spanned<LoadSpec>,
    has_model: bool,
    replays: bool,
    diags: &mut Diags,
) -> Option<Load> {
    let spec = &load.value;
    match (&spec.trace_time_scale, replays) {
        (Some(scales), true) => {
            for (other, name) in
                [(&spec.rates, "rates"), (&spec.fraction_of_saturation, "fraction_of_saturation")]
            {
                if let Some(other) = other {
                    diags.error(
                        other.referenced,
                        format!("`{name}` does not apply to trace traffic: the trace offers its own load"),
                        Some(format!("remove `{name}`; `trace_time_scale` sweeps the trace's load")),
                    );
                }
            }
            let before = diags.0.len();
            let values = column(diags, Some(scales), None, |v: &f64| {
                if v.is_finite() && *v > 0.0 && *v <= 1e9 {
                    Ok(())
                } else {
                    Err(format!(
                        "a time scale must be a positive, finite number up to 1e9, found {v}"
                    ))
                }
            });
            return (diags.0.len() == before)
                .then(|| Load::TraceTimeScale(values.into_iter().map(|v| v.0).collect()));
        }
        (Some(scales), false) => {
            diags.error(
                scales.referenced,
                "`trace_time_scale` applies to `traffic.pattern: trace` only",
                Some("give the load as `rates:`, or replay a trace".into()),
            );
            return None;
        }
        (None, true) => {
            let at = spec.rates.as_ref().or(spec.fraction_of_saturation.as_ref());
            diags.error(
                at.map_or(load.referenced, |f| f.referenced),
                "trace traffic offers its own load: give `load.trace_time_scale`, the time scale \
                 factors of the replay, instead of rates",
                Some("e.g. `trace_time_scale: [2, 1.5, 1, 0.8]` (below 1: higher load)".into()),
            );
            return None;
        }
        (None, false) => {}
    }
    let positive = |what: &'static str| {
        move |v: &f64| {
            if v.is_finite() && *v > 0.0 {
                Ok(())
            } else {
                Err(format!("{what} must be a positive, finite number, found {v}"))
            }
        }
    };
    match (&spec.rates, &spec.fraction_of_saturation) {
        (Some(rates), None) => {
            let before = diags.0.len();
            let values = column(diags, Some(rates), None, positive("a rate"));
            (diags.0.len() == before)
                .then(|| Load::Rates(values.into_iter().map(|v| v.0).collect()))
        }
        (None, Some(fractions)) => {
            if !has_model {
                diags.error(
                    fractions.referenced,
                    "`fraction_of_saturation` needs a model to compute the saturation rate",
                    Some("add `methods.model`, or give the load as `rates:`".into()),
                );
                return None;
            }
            let before = diags.0.len();
            let values = column(diags, Some(fractions), None, positive("a fraction of saturation"));
            (diags.0.len() == before)
                .then(|| Load::FractionOfSaturation(values.into_iter().map(|v| v.0).collect()))
        }
        (Some(_), Some(f)) => {
            diags.error(f.referenced, "give `rates` or `fraction_of_saturation`, not both", None);
            None
        }
        (None, None) => {
            diags.error(
                load.referenced,
                "`load` needs `rates` or `fraction_of_saturation`",
                Some("e.g. `rates: {from: 0.001, to: 0.01, points: 10}`".into()),
            );
            None
        }
    }
}

/// The grid axes: groups of fields that vary together, in expansion order.
fn zip_groups(s: &ScenarioSpec, columns: &Columns, diags: &mut Diags) -> Vec<Vec<usize>> {
    let mut group_of: Vec<usize> = (0..FIELDS.len()).collect();
    for group in &s.zip {
        let mut members = Vec::new();
        for name in &group.value {
            match FIELDS.iter().position(|f| *f == name.value) {
                Some(field) => members.push(field),
                None => {
                    let help =
                        did_you_mean(&name.value, FIELDS).map(|b| format!("did you mean `{b}`?"));
                    diags.error(
                        name.referenced,
                        format!("`{}` is not a scenario field", name.value),
                        help,
                    );
                }
            }
        }
        if members.len() < 2 {
            diags.error(group.referenced, "a `zip` group needs at least two fields", None);
            continue;
        }
        let len = columns.len(members[0]);
        for &field in &members {
            if columns.len(field) != len {
                diags.error(
                    group.referenced,
                    format!(
                        "zipped fields must have equal lengths: `{}` has {} values, `{}` has {}",
                        FIELDS[members[0]],
                        len,
                        FIELDS[field],
                        columns.len(field)
                    ),
                    None,
                );
            }
            if group_of[field] != field {
                diags.error(
                    group.referenced,
                    format!("`{}` is in two zip groups", FIELDS[field]),
                    None,
                );
            }
        }
        let leader = members.iter().copied().min().unwrap_or(0);
        for &field in &members {
            group_of[field] = leader;
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for field in 0..FIELDS.len() {
        if group_of[field] == field {
            groups.push((0..FIELDS.len()).filter(|&f| group_of[f] == field).collect());
        }
    }
    groups
}

/// Expands the grid and builds one `Scenario` per point.
fn expand(
    columns: &Columns,
    groups: &[Vec<usize>],
    methods: &Spanned<MethodsSpec>,
    model: Option<&ModelChoice>,
    simulate: bool,
    diags: &mut Diags,
) -> Vec<ScenarioPoint> {
    let lens: Vec<usize> = groups.iter().map(|g| columns.len(g[0]).max(1)).collect();
    let total = lens.iter().try_fold(1usize, |acc, &l| acc.checked_mul(l));
    let Some(total) = total.filter(|&t| t <= MAX_POINTS) else {
        diags.error(
            columns.written[TOPOLOGY].unwrap_or(Location::UNKNOWN),
            format!("the scenario grid has more than {MAX_POINTS} points"),
            Some("sweep fewer values, or use `zip:` for fields that vary together".into()),
        );
        return Vec::new();
    };
    let mut used = [false; FIELDS.len()];
    let mut points = Vec::with_capacity(total);
    let mut seen = std::collections::HashSet::with_capacity(total);
    let mut index = vec![0usize; FIELDS.len()];
    let mut odometer = vec![0usize; groups.len()];
    for _ in 0..total {
        for (g, group) in groups.iter().enumerate() {
            for &field in group {
                index[field] = odometer[g];
            }
        }
        if let Some(point) = build(columns, &index, &mut used, diags) {
            check_methods(&point, columns, methods, model, simulate, diags);
            if seen.insert(format!("{:?}", point.scenario)) {
                points.push(point);
            }
        }
        for g in (0..groups.len()).rev() {
            odometer[g] += 1;
            if odometer[g] < lens[g] {
                break;
            }
            odometer[g] = 0;
        }
        if diags.0.len() >= 20 {
            break;
        }
    }
    for field in 0..FIELDS.len() {
        if let Some(location) = columns.written[field]
            && !used[field]
            && diags.0.is_empty()
        {
            let applies = match field {
                RADIX => "`topology.kind: torus` or `mesh`",
                DIMENSIONS => "`topology.kind: torus`, `mesh` or `hypercube`",
                PROCESSORS => "`topology.kind: fat_tree`",
                TERMINALS | ROUTERS | GLOBAL_LINKS => "`topology.kind: dragonfly`",
                GRAPH => "`topology.kind: graph`",
                SCOUTING => "`switching.kind: scouting`",
                DATELINE => "`routing: dimension_order` or `duato` on a torus",
                TIE_BREAK => "`routing: dimension_order` or `duato` on a torus of even radix",
                HOTSPOT => "`traffic.pattern: hotspot`",
                BURST => "`traffic.injection_process: on_off`",
                BROADCAST_ORDER => "`traffic.broadcast_fraction` > 0",
                CIRCUIT_BACKOFF | CIRCUIT_RETRY_LIMIT => "`switching.kind: circuit`",
                LENGTH_MIN | LENGTH_MAX => "`message_length_distribution: bimodal` or `uniform`",
                ESCAPE => "`routing: duato` or `nbc` (the routings with escape channels)",
                _ => "other settings",
            };
            diags.error(
                location,
                format!(
                    "`{}` applies only to {applies}, which no point of this spec uses",
                    FIELDS[field]
                ),
                Some(format!("remove `{}`", FIELDS[field])),
            );
        }
    }
    points
}

/// The graph files of `topology.graph`, each read (through `crate::files`, relative to the
/// spec's directory), hashed and parsed; every problem located at the value that names the
/// file, with the file's own line and column.
fn graphs(diags: &mut Diags, field: Option<&Field<String>>, spec_dir: &Path) -> Values<Arc<Graph>> {
    let mut out = Vec::new();
    for (path, location) in column(diags, field, None, any) {
        match read_graph(spec_dir, &path) {
            Ok(graph) => out.push((Arc::new(graph), location)),
            Err(messages) => {
                for message in messages {
                    diags.error(
                        location,
                        message,
                        Some("the graph format is in docs/graph.md; paths are relative to the spec file's directory".into()),
                    );
                }
            }
        }
    }
    out
}

/// Reads and parses one graph file, or says what is wrong (`file:line:column: ...`); `path`
/// is relative to `spec_dir` (the command line's `graph=` key: to the working directory).
pub fn read_graph(spec_dir: &Path, path: &str) -> Result<Graph, Vec<String>> {
    if path.trim().is_empty() || path.contains('\0') {
        return Err(vec!["`graph` names no file; give the path of a graph file".into()]);
    }
    let full = spec_dir.join(path);
    let bytes = crate::files::read_regular(&full, graph::MAX_FILE_BYTES).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "does not exist".to_string(),
            _ => e.to_string(),
        };
        vec![format!("graph file {} {why}", full.display())]
    })?;
    let blake3 = blake3::hash(&bytes).to_hex().to_string();
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        vec![format!("{}:{line}: the graph file is not UTF-8 text", full.display())]
    })?;
    graph::parse(path, &text, blake3).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| format!("{}:{}:{}: {}", full.display(), e.line, e.column, e.message))
            .collect()
    })
}

fn get<T: Copy>(values: &Values<T>, index: usize) -> Option<T> {
    values.get(index).map(|v| v.0)
}

/// One scenario from one combination of value indices.
fn build(
    c: &Columns,
    index: &[usize],
    used: &mut [bool; FIELDS.len()],
    diags: &mut Diags,
) -> Option<ScenarioPoint> {
    let kind_location = c.topology.get(index[TOPOLOGY])?.1;
    let kind = get(&c.topology, index[TOPOLOGY])?;
    let mut need = |field: usize, values: &Values<u32>, what: &str| -> Option<u32> {
        used[field] = true;
        let value = get(values, index[field]);
        if value.is_none() {
            diags.error(
                kind_location,
                format!("a {what} needs `topology.{}`", FIELDS[field]),
                None,
            );
        }
        value
    };
    let topology = match kind {
        TopologyKind::Torus => Topology::Torus {
            radix: need(RADIX, &c.radix, "torus")?,
            dimensions: need(DIMENSIONS, &c.dimensions, "torus")?,
        },
        TopologyKind::Mesh => Topology::Mesh {
            radix: need(RADIX, &c.radix, "mesh")?,
            dimensions: need(DIMENSIONS, &c.dimensions, "mesh")?,
        },
        TopologyKind::Hypercube => {
            Topology::Hypercube { dimensions: need(DIMENSIONS, &c.dimensions, "hypercube")? }
        }
        TopologyKind::FatTree => {
            Topology::FatTree { processors: need(PROCESSORS, &c.processors, "fat_tree")? }
        }
        TopologyKind::KaryNTree => Topology::KaryNTree {
            radix: need(RADIX, &c.radix, "kary_ntree")?,
            dimensions: need(DIMENSIONS, &c.dimensions, "kary_ntree")?,
        },
        TopologyKind::Graph => {
            used[GRAPH] = true;
            let Some((graph, _)) = c.graph.get(index[GRAPH]) else {
                diags.error(
                    kind_location,
                    "a graph needs `topology.graph`, the file describing it (docs/graph.md)",
                    None,
                );
                return None;
            };
            Topology::Graph { graph: graph.clone() }
        }
        TopologyKind::Dragonfly => {
            // Balanced by default: a = 2p, h = p (Kim et al.'s a = 2p = 2h).
            let p = need(TERMINALS, &c.terminals_per_router, "dragonfly")?;
            used[ROUTERS] = true;
            used[GLOBAL_LINKS] = true;
            Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: get(&c.routers_per_group, index[ROUTERS])
                    .unwrap_or(p.saturating_mul(2)),
                global_links_per_router: get(&c.global_links_per_router, index[GLOBAL_LINKS])
                    .unwrap_or(p),
            }
        }
    };
    if topology.nodes() > MAX_NODES {
        diags.error(
            kind_location,
            format!("{} nodes is more than the {MAX_NODES} this tool supports", topology.nodes()),
            None,
        );
        return None;
    }
    used[TOPOLOGY] = true;
    used[SWITCHING] = true;
    let switching = match get(&c.switching, index[SWITCHING])? {
        SwitchingKind::Wormhole => Switching::Wormhole,
        SwitchingKind::Circuit => Switching::Circuit,
        SwitchingKind::Scouting => {
            used[SCOUTING] = true;
            match get(&c.scouting_distance, index[SCOUTING]) {
                Some(scouting_distance) => Switching::Scouting { scouting_distance },
                None => {
                    let location = c.written[SWITCHING].unwrap_or(kind_location);
                    diags.error(
                        location,
                        "scouting switching needs `switching.scouting_distance`",
                        None,
                    );
                    return None;
                }
            }
        }
    };
    used[ROUTING] = true;
    let routing = match get(&c.routing, index[ROUTING])? {
        RoutingName::DimensionOrder => Routing::DimensionOrder,
        RoutingName::Adaptive => Routing::Adaptive,
        RoutingName::Duato => Routing::Duato,
        RoutingName::Nbc => Routing::Nbc,
        RoutingName::UpDown => Routing::UpDown,
        RoutingName::UpDownRandom => Routing::UpDownRandom,
        RoutingName::WestFirst => Routing::WestFirst,
        RoutingName::OddEven => Routing::OddEven,
        RoutingName::Minimal => Routing::Minimal,
        RoutingName::Valiant => Routing::Valiant,
        RoutingName::Ugal => Routing::Ugal,
    };
    let routing_location = c.routing.get(index[ROUTING]).map_or(Location::UNKNOWN, |v| v.1);
    let on_graph = topology.graph().is_some();
    if on_graph && !matches!(routing, Routing::UpDown | Routing::Minimal) {
        diags.error(
            routing_location,
            format!(
                "routing `{}` does not fit topology `graph`: a graph routes up_down (up*/down* on a spanning tree) or minimal (shortest paths with an up*/down* escape channel)",
                routing.as_str()
            ),
            Some("use `routing: up_down` or `routing: minimal` on a graph".into()),
        );
        return None;
    }
    let up_down = matches!(routing, Routing::UpDown | Routing::UpDownRandom);
    let tree = matches!(topology, Topology::FatTree { .. } | Topology::KaryNTree { .. });
    if !on_graph && up_down != tree {
        diags.error(
            routing_location,
            format!(
                "routing `{}` does not fit topology `{}`: up_down and up_down_random are for the fat-trees (fat_tree, kary_ntree; up_down also for graph), and the fat-trees route up_down or up_down_random",
                routing.as_str(),
                topology.kind()
            ),
            None,
        );
        return None;
    }
    let dragonfly_routing = matches!(routing, Routing::Minimal | Routing::Valiant | Routing::Ugal);
    if !on_graph && dragonfly_routing != topology.dragonfly().is_some() {
        diags.error(
            routing_location,
            format!(
                "routing `{}` does not fit topology `{}`: minimal, valiant and ugal are the dragonfly's routings, and the dragonfly routes with them only",
                routing.as_str(),
                topology.kind()
            ),
            Some(if dragonfly_routing {
                "use `topology.kind: dragonfly`, or a routing of this topology".into()
            } else {
                "use `routing: minimal`, `valiant` or `ugal` on the dragonfly".into()
            }),
        );
        return None;
    }
    // Only routings with escape channels read `escape_channels`; elsewhere it is left unset
    // (as the circuit parameters are), and a spec where no point reads it is refused below.
    let escape = matches!(routing, Routing::Duato | Routing::Nbc);
    used[ESCAPE] |= escape;
    for field in [
        VIRTUAL_CHANNELS,
        BUFFER,
        ROUTER_DELAY,
        INPUT_SPEEDUP,
        MESSAGE_LENGTH,
        SECOND_MOMENT,
        LENGTH_DISTRIBUTION,
    ] {
        used[field] = true;
    }
    for field in [FAULT_RATE, BROADCAST, STARTUP, EJECTION, TRAFFIC, INJECTION] {
        used[field] = true;
    }
    let message_length = get(&c.message_length, index[MESSAGE_LENGTH])?;
    let second_moment = get(&c.second_moment, index[SECOND_MOMENT]);
    if let Some(m2) = second_moment {
        let mean = f64::from(message_length);
        if m2 < mean * mean * (1.0 - 1e-12) {
            let location =
                c.second_moment.get(index[SECOND_MOMENT]).map_or(Location::UNKNOWN, |v| v.1);
            diags.error(
                location,
                format!(
                    "message_length_second_moment = {m2} is below message_length^2 = {}: a second moment is at least the squared mean",
                    mean * mean
                ),
                None,
            );
            return None;
        }
    }
    let message_length_distribution = lengths(c, index, used, diags, message_length)?;
    let injection_process = match get(&c.injection_process, index[INJECTION])? {
        InjectionProcessName::Poisson => InjectionProcess::Poisson,
        InjectionProcessName::Bernoulli => InjectionProcess::Bernoulli,
        InjectionProcessName::OnOff => {
            used[BURST] = true;
            let Some(burst_length) = get(&c.burst_length, index[BURST]) else {
                let location = c.written[INJECTION].unwrap_or(kind_location);
                diags.error(
                    location,
                    "injection_process `on_off` needs `traffic.burst_length`, the mean number of messages in a burst",
                    None,
                );
                return None;
            };
            InjectionProcess::OnOff { burst_length }
        }
    };
    let scenario = Scenario {
        topology,
        switching,
        routing,
        virtual_channels: get(&c.virtual_channels, index[VIRTUAL_CHANNELS])?,
        escape_channels: escape.then(|| get(&c.escape_channels, index[ESCAPE])).flatten(),
        buffer_depth: get(&c.buffer_depth, index[BUFFER])?,
        router_delay: get(&c.router_delay, index[ROUTER_DELAY])?,
        input_speedup: get(&c.input_speedup, index[INPUT_SPEEDUP]),
        message_length,
        message_length_second_moment: second_moment,
        message_length_distribution,
        injection_process,
        fault_rate: get(&c.fault_rate, index[FAULT_RATE])?,
        broadcast_fraction: get(&c.broadcast_fraction, index[BROADCAST])?,
        startup_latency: get(&c.startup_latency, index[STARTUP])?,
        broadcast_order: match get(&c.broadcast_order, index[BROADCAST_ORDER])? {
            BroadcastOrderName::Random => BroadcastOrder::Random,
            BroadcastOrderName::RoundRobin => BroadcastOrder::RoundRobin,
        },
        ejection: match get(&c.ejection, index[EJECTION])? {
            EjectionName::Single => Ejection::Single,
            EjectionName::Unlimited => Ejection::Unlimited,
            EjectionName::Interleaved => Ejection::Interleaved,
        },
        dateline: get(&c.dateline, index[DATELINE]).map(|d| match d {
            DatelineName::PerTraversal => Dateline::PerTraversal,
            DatelineName::Switch => Dateline::Switch,
        }),
        tie_break: get(&c.tie_break, index[TIE_BREAK]).map(|t| match t {
            TieBreakName::Random => TieBreak::Random,
            TieBreakName::Positive => TieBreak::Positive,
        }),
        traffic: match get(&c.traffic, index[TRAFFIC])? {
            TrafficPattern::Uniform | TrafficPattern::BroadcastMix => Traffic::Uniform,
            TrafficPattern::UniformWithSelf => Traffic::UniformWithSelf,
            TrafficPattern::Transpose => Traffic::Transpose,
            TrafficPattern::BitComplement => Traffic::BitComplement,
            TrafficPattern::BitReverse => Traffic::BitReverse,
            TrafficPattern::Tornado => Traffic::Tornado,
            TrafficPattern::Neighbor => Traffic::Neighbor,
            TrafficPattern::GroupShift => Traffic::GroupShift,
            TrafficPattern::Trace => Traffic::Trace(crate::scenario::TraceFile {
                path: c.trace.clone().unwrap_or_default().into(),
                flit_bytes: c.trace_flit_bytes,
                ..crate::scenario::TraceFile::default()
            }),
            TrafficPattern::Hotspot => {
                used[HOTSPOT] = true;
                let Some(fraction) = get(&c.hotspot_fraction, index[HOTSPOT]) else {
                    let location = c.written[TRAFFIC].unwrap_or(kind_location);
                    diags.error(
                        location,
                        "traffic `hotspot` needs `traffic.hotspot_fraction` and `traffic.hotspot_nodes`",
                        None,
                    );
                    return None;
                };
                Traffic::Hotspot { fraction, nodes: c.hotspot_nodes.clone() }
            }
        },
        // Simulator-only circuit parameters, for circuit switching only; the defaults (no
        // back-off, the simulator's retry limit) are left unset, so that equal systems compare
        // (and hash) equal.
        circuit_backoff: (switching == Switching::Circuit)
            .then(|| get(&c.circuit_backoff, index[CIRCUIT_BACKOFF]))
            .flatten()
            .filter(|&b| b != 0),
        circuit_retry_limit: (switching == Switching::Circuit)
            .then(|| get(&c.circuit_retry_limit, index[CIRCUIT_RETRY_LIMIT]))
            .flatten()
            .filter(|&r| r != sim::DEFAULT_CIRCUIT_RETRY_LIMIT),
    };
    used[CIRCUIT_BACKOFF] |= switching == Switching::Circuit;
    used[CIRCUIT_RETRY_LIMIT] |= switching == Switching::Circuit;
    used[DATELINE] |= scenario.dateline.is_some() && scenario.dateline_convention().is_some();
    used[BROADCAST_ORDER] |= scenario.broadcast_fraction > 0.0;
    // Only broadcasts have a tree order: with beta = 0 the default stands for "none", so that
    // equal systems compare (and hash) equal.
    let scenario = Scenario {
        broadcast_order: if scenario.broadcast_fraction > 0.0 {
            scenario.broadcast_order
        } else {
            BroadcastOrder::Random
        },
        ..scenario
    };
    used[TIE_BREAK] |= scenario.tie_break.is_some() && scenario.tie_break_convention().is_some();
    if let Err(message) = bounds::message_lengths(&scenario) {
        let location = c.second_moment.get(index[SECOND_MOMENT]).map_or(kind_location, |v| v.1);
        diags.error(
            location,
            message,
            Some("leave `message_length_second_moment` out: the distribution implies it".into()),
        );
        return None;
    }
    let scenario = scenario.with_conventions_resolved();
    Some(ScenarioPoint { label: label(&scenario), scenario })
}

/// The message-length distribution of one point around its mean `mean`, located errors for
/// missing or inconsistent bounds.
fn lengths(
    c: &Columns,
    index: &[usize],
    used: &mut [bool; FIELDS.len()],
    diags: &mut Diags,
    mean: u32,
) -> Option<MessageLengths> {
    let name = get(&c.length_distribution, index[LENGTH_DISTRIBUTION])?;
    let at = |values: &Values<u32>, field: usize| values.get(index[field]).map(|v| v.1);
    let location = at(&c.length_min, LENGTH_MIN)
        .or(at(&c.length_max, LENGTH_MAX))
        .or(c.length_distribution.get(index[LENGTH_DISTRIBUTION]).map(|v| v.1))
        .unwrap_or(Location::UNKNOWN);
    let bounded = matches!(name, LengthDistributionName::Bimodal | LengthDistributionName::Uniform);
    used[LENGTH_MIN] |= bounded;
    used[LENGTH_MAX] |= bounded;
    let (min, max) = if bounded {
        (get(&c.length_min, index[LENGTH_MIN]), get(&c.length_max, index[LENGTH_MAX]))
    } else {
        (None, None)
    };
    let missing = match name {
        LengthDistributionName::Bimodal => min.is_none() || max.is_none(),
        LengthDistributionName::Uniform => min.is_none() && max.is_none(),
        _ => false,
    };
    if missing {
        diags.error(
            location,
            format!(
                "message_length_distribution `{}` needs {} (flits)",
                name.as_str(),
                if name == LengthDistributionName::Bimodal {
                    "`message_length_min` and `message_length_max`, its two lengths"
                } else {
                    "`message_length_min` or `message_length_max` (the other follows from the mean `message_length`)"
                }
            ),
            None,
        );
        return None;
    }
    let lengths = MessageLengths::from_parts(name.as_str(), mean, min, max)?;
    if let Err(message) = lengths.check(mean) {
        diags.error(location, message, None);
        return None;
    }
    Some(lengths)
}

/// Asks each requested evaluator whether it covers the scenario.
fn check_methods(
    point: &ScenarioPoint,
    columns: &Columns,
    methods: &Spanned<MethodsSpec>,
    model: Option<&ModelChoice>,
    simulate: bool,
    diags: &mut Diags,
) {
    if let Some(model) = model
        && let Err(error) = model::check(model.name, &point.scenario)
    {
        diags.error(
            model.location,
            format!("model `{}` cannot evaluate {}: {error}", model.name.as_str(), point.label),
            Some("see `runner models` for what each model covers".into()),
        );
    }
    if simulate && let Err(error) = sim::check(&point.scenario) {
        let location = columns.written[ROUTING].unwrap_or(methods.referenced);
        diags.error(location, format!("the simulator cannot run {}: {error}", point.label), None);
    }
    // Throughput mode: what all source queues may hold together (nodes x capacity).
    if simulate
        && let Some(simulation) = &methods.value.simulation
        && matches!(simulation.measure.as_ref().map(|m| m.value), Some(MeasureName::Throughput))
    {
        let capacity = simulation.source_queue_capacity.as_ref();
        let value = capacity.map_or(DEFAULT_SOURCE_QUEUE_CAPACITY, |c| c.value);
        if (1..=bounds::MAX_SOURCE_QUEUE_CAPACITY).contains(&value)
            && let Err(message) = bounds::source_queue_capacity(value, point.scenario.nodes())
        {
            let location = capacity
                .map(|c| c.referenced)
                .or(simulation.measure.as_ref().map(|m| m.referenced))
                .unwrap_or(methods.referenced);
            diags.error(location, format!("{}: {message}", point.label), None);
        }
    }
}

/// A short human description of a scenario: `torus 8-ary 2-cube, wormhole, duato, V=3, M=32`.
pub fn label(s: &Scenario) -> String {
    let topology = match &s.topology {
        Topology::Graph { graph } => format!(
            "graph {} ({} terminals, {} routers)",
            graph.file_name(),
            graph.terminals(),
            graph.routers.len()
        ),
        &Topology::Torus { radix, dimensions } => format!("{radix}-ary {dimensions}-cube torus"),
        &Topology::Mesh { radix, dimensions } => format!("{radix}-ary {dimensions}-mesh"),
        &Topology::Hypercube { dimensions } => format!("{dimensions}-cube"),
        &Topology::FatTree { processors } => format!("fat-tree N={processors}"),
        &Topology::Dragonfly {
            terminals_per_router: p,
            routers_per_group: a,
            global_links_per_router: h,
        } => format!("dragonfly p={p} a={a} h={h}"),
        Topology::KaryNTree { radix, dimensions } => format!("{radix}-ary {dimensions}-tree"),
    };
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
