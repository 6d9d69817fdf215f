//! Point-by-point comparison of two sets of result rows: what `runner diff` reports.
//!
//! Rows are matched by the point they describe, not by task id (a task id changes with the
//! evaluator version, which is exactly what a diff is for): method, scenario, load grid, the
//! load as the spec wrote it (a fraction of saturation, a trace time scale, or a rate) and the
//! replication. For each matched pair the gated quantities (`latency`, `throughput`,
//! `flit_throughput`, `saturation_rate`) are compared with their 95% intervals: a quantity
//! *moved* when the two intervals do not overlap (`|b - a| > ci_a + ci_b`). Latency's interval
//! is its `latency_ci95` column; a measured throughput's is the Poisson count interval
//! `1.96 x / sqrt(messages_measured)` (conservative in throughput mode, where accepted traffic
//! varies less than Poisson arrivals); a value without an interval (a model's) counts as
//! zero width, so it moves when it changes at all, unless its relative change is within the
//! caller's tolerance. A status change, an added or a
//! removed point also counts; everything else that differs (percentiles, hops, intermediates)
//! is listed by column but does not count. Timings (`wall_seconds`) and identities (`task_id`,
//! `evaluator`) are never compared; evaluator versions are reported per method.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::row::{Row, SPEC_GRID};

/// The quantities whose movement counts, with the column of their 95% half-width.
const GATED: [(&str, Option<&str>); 4] = [
    ("latency", Some("latency_ci95")),
    ("throughput", None),
    ("flit_throughput", None),
    ("saturation_rate", None),
];

/// Columns never compared: timings, and identities that change with the evaluator version.
const IGNORED: [&str; 4] = ["wall_seconds", "task_id", "evaluator", "experiment"];

/// One point of a bundle, as a diff names it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// `model`, `simulation` or an external method's name.
    pub method: String,
    /// The scenario's short hash.
    pub scenario_id: String,
    /// A short description of the scenario (topology, routing, V, M, ...).
    pub scenario: String,
    /// How the load is given: `fraction_of_saturation`, `trace_time_scale` or `rate`.
    pub load_kind: &'static str,
    /// The load in that unit.
    pub load: f64,
    /// `spec` or `dense` (the model's dense curve).
    pub load_grid: String,
    /// Replication index; `None` for a model row or a simulation's aggregate row.
    pub replication: Option<u32>,
}

impl Point {
    fn of(row: &Row) -> Point {
        let (load_kind, load) = match (row.fraction_of_saturation, row.trace_time_scale) {
            (Some(f), _) => ("fraction_of_saturation", f),
            (None, Some(s)) => ("trace_time_scale", s),
            (None, None) => ("rate", row.rate),
        };
        Point {
            method: row.method.clone(),
            scenario_id: row.scenario_id.clone(),
            scenario: scenario_label(row),
            load_kind,
            load,
            load_grid: row.load_grid.clone().unwrap_or_else(|| SPEC_GRID.to_string()),
            replication: row.replication,
        }
    }

    /// The matching key: every field but the description, the load by its exact bits.
    fn key(&self) -> Key {
        (
            self.method.clone(),
            self.scenario_id.clone(),
            self.load_grid.clone(),
            self.load_kind,
            self.load.to_bits(),
            self.replication,
        )
    }

    /// One line for people: method, scenario, load, replication.
    pub fn label(&self) -> String {
        let load = match self.load_kind {
            "fraction_of_saturation" => format!("{:.4} of saturation", self.load),
            "trace_time_scale" => format!("trace time scale {}", self.load),
            _ => format!("rate {}", self.load),
        };
        let grid = if self.load_grid == SPEC_GRID { "" } else { " (dense curve)" };
        let replication =
            self.replication.map(|r| format!(", replication {r}")).unwrap_or_default();
        format!(
            "{} [{}] {}, {load}{grid}{replication}",
            self.method, self.scenario_id, self.scenario
        )
    }
}

/// A short description of a row's scenario.
fn scenario_label(row: &Row) -> String {
    let mut parts = vec![match row.topology.as_str() {
        "torus" | "mesh" => format!("{} {}-ary {}-cube", row.topology, row.radix, row.dimensions),
        "hypercube" => format!("{}-cube", row.dimensions),
        "graph" => format!("graph {}", row.graph.as_deref().unwrap_or("?")),
        other => format!("{other} ({} nodes)", row.nodes),
    }];
    if row.switching != "wormhole" {
        parts.push(match row.scouting_distance {
            Some(k) => format!("scouting K={k}"),
            None => row.switching.clone(),
        });
    }
    parts.push(row.routing.clone());
    parts.push(format!("V={}", row.virtual_channels));
    parts.push(format!("M={}", row.message_length));
    if row.fault_rate > 0.0 {
        parts.push(format!("faults {}", row.fault_rate));
    }
    if row.broadcast_fraction > 0.0 {
        parts.push(format!("broadcast {}", row.broadcast_fraction));
    }
    if row.traffic != "uniform" {
        parts.push(row.traffic.clone());
    }
    parts.join(", ")
}

/// A status that differs between the two sides.
#[derive(Clone, Debug, Serialize)]
pub struct StatusChange {
    /// The point.
    pub point: Point,
    /// Status in A (`ok`, `saturated`, `failed`, ...).
    pub a: String,
    /// Status in B.
    pub b: String,
}

/// One gated quantity of one point that differs between the two sides.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// The point.
    pub point: Point,
    /// The column.
    pub quantity: &'static str,
    /// Value in A.
    pub a: f64,
    /// Value in B.
    pub b: f64,
    /// 95% half-width in A, when the column has one.
    pub a_ci95: Option<f64>,
    /// 95% half-width in B.
    pub b_ci95: Option<f64>,
    /// `b - a`.
    pub delta: f64,
    /// `(b - a) / |a|` (NaN when `a` is zero).
    pub relative: f64,
    /// Whether the 95% intervals overlap (zero-width when absent).
    pub overlap: bool,
    /// Whether this counts as moved: intervals apart, beyond the relative tolerance.
    pub moved: bool,
}

/// The evaluators one method used on each side, when they differ.
#[derive(Clone, Debug, Serialize)]
pub struct EvaluatorChange {
    /// The method.
    pub method: String,
    /// Evaluators (name@version) in A.
    pub a: Vec<String>,
    /// Evaluators in B.
    pub b: Vec<String>,
}

/// What differs between two sets of rows.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Diff {
    /// Points in A.
    pub points_a: usize,
    /// Points in B.
    pub points_b: usize,
    /// Points in both.
    pub matched: usize,
    /// Matched points where nothing compared differs.
    pub unchanged: usize,
    /// Methods whose evaluator versions differ.
    pub evaluators: Vec<EvaluatorChange>,
    /// Points only in B.
    pub added: Vec<Point>,
    /// Points only in A.
    pub removed: Vec<Point>,
    /// Matched points whose status differs.
    pub status_changed: Vec<StatusChange>,
    /// Gated quantities that differ (moved or within their intervals).
    pub changes: Vec<Change>,
    /// Other columns that differ, with the number of matched points where they do.
    pub other_columns: BTreeMap<String, usize>,
}

impl Diff {
    /// The changes that moved beyond their intervals.
    pub fn moved(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.moved)
    }

    /// Whether anything counts: points added or removed, a status change, a moved quantity.
    pub fn any_moved(&self) -> bool {
        !self.added.is_empty()
            || !self.removed.is_empty()
            || !self.status_changed.is_empty()
            || self.moved().next().is_some()
    }
}

/// Compares rows `a` with rows `b`. `tolerance` is the relative change below which a quantity
/// without an interval does not count as moved (0: any change counts).
pub fn diff(a: &[Row], b: &[Row], tolerance: f64) -> Diff {
    let (left, right) = (index(a), index(b));
    let mut out = Diff { points_a: left.len(), points_b: right.len(), ..Diff::default() };
    out.evaluators = evaluator_changes(a, b);
    for (key, (point, _)) in &left {
        if !right.contains_key(key) {
            out.removed.push(point.clone());
        }
    }
    for (key, (point, row_b)) in &right {
        let Some((_, row_a)) = left.get(key) else {
            out.added.push(point.clone());
            continue;
        };
        out.matched += 1;
        let mut differs = false;
        if row_a.status != row_b.status {
            differs = true;
            out.status_changed.push(StatusChange {
                point: point.clone(),
                a: row_a.status.clone(),
                b: row_b.status.clone(),
            });
        }
        let (fields_a, fields_b) = (fields(row_a), fields(row_b));
        for (name, value_a) in &fields_a {
            let value_b = fields_b.get(name);
            if value_b == Some(value_a) || IGNORED.contains(&name.as_str()) || name == "status" {
                continue;
            }
            differs = true;
            match GATED.iter().find(|(gated, _)| gated == name) {
                Some(&(quantity, ci)) => {
                    if let Some(change) =
                        compare(point, quantity, ci, &fields_a, &fields_b, tolerance)
                    {
                        out.changes.push(change);
                    }
                }
                None => *out.other_columns.entry(name.clone()).or_default() += 1,
            }
        }
        if !differs {
            out.unchanged += 1;
        }
    }
    out
}

/// What matches two rows: method, scenario id, load grid, load kind, load bits, replication.
type Key = (String, String, String, &'static str, u64, Option<u32>);

/// The rows by point key (the first row of a key when one repeats).
fn index(rows: &[Row]) -> BTreeMap<Key, (Point, &Row)> {
    let mut map = BTreeMap::new();
    for row in rows {
        let point = Point::of(row);
        map.entry(point.key()).or_insert((point, row));
    }
    map
}

/// A row's columns by name, as JSON values (the side tables left out).
fn fields(row: &Row) -> BTreeMap<String, serde_json::Value> {
    match serde_json::to_value(row) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .filter(|(name, _)| name != "link_loads" && name != "histograms")
            .collect(),
        _ => BTreeMap::new(),
    }
}

/// The change of one gated quantity; `None` when only one side has a value (the status
/// change or the other columns tell that story).
fn compare(
    point: &Point,
    quantity: &'static str,
    ci: Option<&str>,
    a: &BTreeMap<String, serde_json::Value>,
    b: &BTreeMap<String, serde_json::Value>,
    tolerance: f64,
) -> Option<Change> {
    let number = |map: &BTreeMap<String, serde_json::Value>, name: &str| {
        map.get(name).and_then(serde_json::Value::as_f64)
    };
    let (va, vb) = (number(a, quantity)?, number(b, quantity)?);
    let interval = |map: &BTreeMap<String, serde_json::Value>, value: f64| match ci {
        Some(column) => number(map, column),
        None if quantity.ends_with("throughput") => number(map, "messages_measured")
            .filter(|&messages| messages > 0.0)
            .map(|messages| 1.96 * value.abs() / messages.sqrt()),
        None => None,
    };
    let (ca, cb) = (interval(a, va), interval(b, vb));
    let delta = vb - va;
    let relative = if va == 0.0 { f64::NAN } else { delta / va.abs() };
    let half_widths = ca.unwrap_or(0.0) + cb.unwrap_or(0.0);
    let overlap = delta.abs() <= half_widths;
    let tolerated = ca.is_none() && cb.is_none() && relative.abs() <= tolerance;
    Some(Change {
        point: point.clone(),
        quantity,
        a: va,
        b: vb,
        a_ci95: ca,
        b_ci95: cb,
        delta,
        relative,
        overlap,
        moved: !overlap && !tolerated,
    })
}

/// Methods whose sets of evaluators differ between the sides.
fn evaluator_changes(a: &[Row], b: &[Row]) -> Vec<EvaluatorChange> {
    let by_method = |rows: &[Row]| {
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for row in rows {
            map.entry(row.method.clone()).or_default().insert(row.evaluator.clone());
        }
        map
    };
    let (left, right) = (by_method(a), by_method(b));
    let methods: BTreeSet<&String> = left.keys().chain(right.keys()).collect();
    methods
        .into_iter()
        .filter_map(|method| {
            let (ea, eb) = (left.get(method), right.get(method));
            (ea.is_some() && eb.is_some() && ea != eb).then(|| EvaluatorChange {
                method: method.clone(),
                a: ea.map(|s| s.iter().cloned().collect()).unwrap_or_default(),
                b: eb.map(|s| s.iter().cloned().collect()).unwrap_or_default(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(method: &str, fraction: f64, latency: f64, ci: Option<f64>) -> Row {
        Row {
            method: method.into(),
            scenario_id: "abc".into(),
            evaluator: format!("{method}@1"),
            topology: "torus".into(),
            radix: 8,
            dimensions: 2,
            routing: "nbc".into(),
            traffic: "uniform".into(),
            switching: "wormhole".into(),
            fraction_of_saturation: Some(fraction),
            rate: fraction * 0.01,
            latency: Some(latency),
            latency_ci95: ci,
            status: "ok".into(),
            ..Row::default()
        }
    }

    #[test]
    fn a_bundle_against_itself_reports_nothing() {
        let rows = vec![row("model", 0.1, 40.0, None), row("simulation", 0.1, 41.0, Some(0.5))];
        let d = diff(&rows, &rows, 0.0);
        assert!(!d.any_moved());
        assert_eq!((d.matched, d.unchanged), (2, 2));
        assert!(d.changes.is_empty() && d.other_columns.is_empty() && d.evaluators.is_empty());
    }

    #[test]
    fn timings_and_task_ids_are_not_compared() {
        let a = vec![row("simulation", 0.1, 41.0, Some(0.5))];
        let mut b = a.clone();
        b[0].wall_seconds = 9.0;
        b[0].task_id = "other".into();
        let d = diff(&a, &b, 0.0);
        assert!(!d.any_moved());
        assert_eq!(d.unchanged, 1);
    }

    #[test]
    fn a_change_within_the_intervals_does_not_count_and_one_beyond_does() {
        let a =
            vec![row("simulation", 0.1, 41.0, Some(0.5)), row("simulation", 0.2, 50.0, Some(0.5))];
        let b =
            vec![row("simulation", 0.1, 41.8, Some(0.5)), row("simulation", 0.2, 51.2, Some(0.5))];
        let d = diff(&a, &b, 0.0);
        assert_eq!(d.changes.len(), 2);
        let moved: Vec<f64> = d.moved().map(|c| c.point.load).collect();
        assert_eq!(moved, vec![0.2]);
        assert!(d.any_moved());
        let within = d.changes.iter().find(|c| !c.moved).map(|c| (c.overlap, c.delta));
        assert!(matches!(within, Some((true, delta)) if (delta - 0.8).abs() < 1e-12));
    }

    #[test]
    fn a_measured_throughput_has_the_poisson_count_interval() {
        let mut a = vec![row("simulation", 0.1, 41.0, Some(0.5))];
        a[0].throughput = Some(0.0100);
        a[0].messages_measured = Some(10_000);
        let mut b = a.clone();
        // 1.96 x 0.01 / 100 = 0.000196 per side: 0.0003 apart overlaps, 0.0005 does not.
        b[0].throughput = Some(0.0103);
        assert!(!diff(&a, &b, 0.0).any_moved());
        b[0].throughput = Some(0.0105);
        assert!(diff(&a, &b, 0.0).any_moved());
    }

    #[test]
    fn a_model_value_moves_when_it_changes_unless_tolerated() {
        let a = vec![row("model", 0.1, 40.0, None)];
        let b = vec![row("model", 0.1, 40.000001, None)];
        assert!(diff(&a, &b, 0.0).any_moved());
        assert!(!diff(&a, &b, 1e-6).any_moved());
    }

    #[test]
    fn added_removed_status_and_evaluators_are_reported() {
        let a = vec![row("model", 0.1, 40.0, None), row("model", 0.2, 45.0, None)];
        let mut b = vec![row("model", 0.1, 40.0, None), row("model", 0.3, 50.0, None)];
        b[0].status = "saturated".into();
        b[0].evaluator = "model@2".into();
        b[1].evaluator = "model@2".into();
        b[0].hops = Some(4.0);
        let d = diff(&a, &b, 0.0);
        assert_eq!(d.added.iter().map(|p| p.load).collect::<Vec<_>>(), vec![0.3]);
        assert_eq!(d.removed.iter().map(|p| p.load).collect::<Vec<_>>(), vec![0.2]);
        assert_eq!(d.status_changed.len(), 1);
        assert_eq!(
            (d.status_changed[0].a.as_str(), d.status_changed[0].b.as_str()),
            ("ok", "saturated")
        );
        assert_eq!(d.evaluators.len(), 1);
        assert_eq!(d.evaluators[0].b, vec!["model@2".to_string()]);
        assert_eq!(d.other_columns.get("hops"), Some(&1));
        assert!(d.any_moved());
    }

    #[test]
    fn points_are_matched_by_load_not_by_row_order() {
        let a = vec![row("model", 0.1, 40.0, None), row("model", 0.2, 45.0, None)];
        let b = vec![row("model", 0.2, 45.0, None), row("model", 0.1, 40.0, None)];
        let d = diff(&a, &b, 0.0);
        assert_eq!((d.matched, d.unchanged), (2, 2));
    }
}
