//! Grouping a figure's rows into panels and series ([`prepare`]): which rows are plotted,
//! which scenario columns label the series besides the spec's `lines` ([`legend_columns`]),
//! each series' model line and simulation markers, at most [`MAX_FIGURE_POINTS`] in all.

use std::collections::BTreeMap;

use serde_json::Value;

use super::labels::{SortKey, label_part, natural_cmp, panel_title};
use super::plot_row::PlotFields;
use super::plot_row::PlotRow;
use super::reader::Reader;
use super::style::StyleKey;
use crate::report::columns;
use crate::spec::report::FigureSpec;

/// A figure draws at most this many points in all (model and simulation), spread evenly over
/// its series, so the SVG, the PDF and the HTML page that inlines it stay small however many
/// load points a spec sweeps; every point is in `tables/results.csv` and `results.parquet`.
pub(crate) const MAX_FIGURE_POINTS: usize = 20_000;
/// ... but every series keeps at least this many.
pub(crate) const MIN_SERIES_POINTS: usize = 50;

/// The figure's data, grouped into panels and series.
pub(super) struct FigureData {
    pub(super) panels: Vec<Panel>,
    /// Whether some panel has a model line or a simulation marker (for the legend).
    pub(super) has_model: bool,
    pub(super) has_simulation: bool,
    /// Some simulation point has a confidence interval.
    pub(super) has_ci: bool,
    /// Series labels with their styles, in legend order (empty when there is a single
    /// unlabelled series).
    pub(super) legend: Vec<(String, StyleKey)>,
    /// The most points a series keeps, when some series had more (see [`MAX_FIGURE_POINTS`]).
    pub(super) thinned: Option<usize>,
    /// The most model points a series has.
    pub(super) model_points: usize,
}

pub(super) struct Panel {
    pub(super) title: String,
    pub(super) series: Vec<Series>,
}

pub(super) struct Series {
    /// The legend label (empty for a single unlabelled series).
    pub(super) label: String,
    pub(super) style: StyleKey,
    /// The scenario columns of the series (for the CSV).
    pub(super) scenario: Value,
    /// Finite model points, sorted by x.
    pub(super) model: Vec<(f64, f64)>,
    /// Model saturation point on the x axis, when known.
    pub(super) saturation_x: Option<f64>,
    /// Finite simulation points (x, y, CI half-width), sorted by x.
    pub(super) simulation: Vec<(f64, f64, Option<f64>)>,
    /// x of simulation points that saturated (no finite y).
    pub(super) simulation_saturated: Vec<f64>,
    /// x of simulation points that deadlocked.
    pub(super) simulation_deadlocked: Vec<f64>,
    /// Simulation points that stopped short of their target precision (an estimate), (x, y,
    /// CI half-width).
    pub(super) simulation_imprecise: Vec<(f64, f64, Option<f64>)>,
    /// The most replications of a plotted point with faults (each its own fault map, so its
    /// interval spans the maps as well as the noise); `None` without such a point.
    pub(super) fault_maps: Option<u32>,
}

/// Series key (line label values, scenario id) to its rows.
type SeriesMap<'r, 'a> = BTreeMap<(Vec<String>, String), Vec<&'r PlotRow<'a>>>;

/// Panel key to (panel title, series).
type PanelMap<'r, 'a> = BTreeMap<Vec<SortKey>, (String, SeriesMap<'r, 'a>)>;

pub(super) fn prepare(spec: &FigureSpec, rows: &[PlotRow<'_>]) -> FigureData {
    let reader = Reader::new(rows);
    let plotted: Vec<&PlotRow<'_>> = rows
        .iter()
        // The model's rows, and one row per load point of every other method: the built-in
        // simulation's and external simulations' aggregates, external models' evaluations.
        .filter(|plot_row| spec.selects(plot_row.scenario))
        .filter(|plot_row| &*plot_row.row.method == "model" || plot_row.row.replication.is_none())
        // A dense model curve runs over the load; against a scenario column (one value per
        // scenario) it would be a column of points, not a line.
        .filter(|plot_row| {
            !(plot_row.row.dense && columns::SCENARIO_COLUMNS.contains(&spec.x.as_str()))
        })
        .filter(|plot_row| reader.value(plot_row, &spec.x).is_some())
        .collect();
    let varying = legend_columns(spec, &plotted);
    // An external method (`methods.external`) is a series of its own, named in the legend,
    // beside the built-in methods' (then named `runner`).
    let external = |row: &PlotFields| &*row.method != "model" && &*row.method != "simulation";
    let any_external = plotted.iter().any(|plot_row| external(plot_row.row));

    let mut panels: PanelMap<'_, '_> = BTreeMap::new();
    for plot_row in &plotted {
        let panel_values: Vec<Option<String>> =
            spec.panels.iter().map(|column| plot_row.text(column)).collect();
        let panel_key = panel_values.iter().map(|value| SortKey::new(value.as_deref())).collect();
        let mut line_values: Vec<String> =
            spec.lines.iter().map(|column| label_part(column, plot_row.text(column))).collect();
        line_values.extend(varying.iter().map(|column| label_part(column, plot_row.text(column))));
        if any_external {
            let row = plot_row.row;
            line_values.push(if external(row) { row.method.to_string() } else { "runner".into() });
        }
        let entry = panels
            .entry(panel_key)
            .or_insert_with(|| (panel_title(&spec.panels, &panel_values), BTreeMap::new()));
        entry
            .1
            .entry((line_values, plot_row.row.scenario_id.to_string()))
            .or_default()
            .push(plot_row);
    }

    // Styles follow the series label across panels, in sorted label order; with external
    // methods a configuration (the label less its method) keeps one colour and shape, and
    // its methods differ by fill and dash (`figure/style.rs`).
    let split = |values: &[String]| -> (String, Option<String>) {
        match values.split_last() {
            Some((method, configuration)) if any_external => {
                (configuration.join(", "), Some(method.clone()))
            }
            _ => (values.join(", "), None),
        }
    };
    let mut configurations: Vec<String> = Vec::new();
    let mut methods: Vec<String> = Vec::new();
    for (_, series) in panels.values() {
        for (values, _) in series.keys() {
            let (configuration, method) = split(values);
            configurations.push(configuration);
            methods.extend(method);
        }
    }
    configurations.sort_by(|a, b| natural_cmp(a, b));
    configurations.dedup();
    // runner first (filled markers, solid lines), then the external methods by name.
    methods.sort_by_key(|method| (method != "runner", method.clone()));
    methods.dedup();
    let style_of = |values: &[String]| -> StyleKey {
        let (configuration, method) = split(values);
        StyleKey {
            configuration: configurations.iter().position(|c| *c == configuration).unwrap_or(0),
            method: method.and_then(|m| methods.iter().position(|known| *known == m)).unwrap_or(0),
            methods: methods.len().max(1),
        }
    };
    let mut legend: Vec<(String, StyleKey)> = Vec::new();
    for (_, series) in panels.values() {
        for (values, _) in series.keys() {
            legend.push((values.join(", "), style_of(values)));
        }
    }
    legend.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    legend.dedup_by(|a, b| a.0 == b.0);
    let single_unlabelled = legend.len() == 1 && legend[0].0.is_empty();

    let mut data = FigureData {
        panels: Vec::new(),
        has_model: false,
        has_simulation: false,
        has_ci: false,
        legend: if single_unlabelled { Vec::new() } else { legend },
        thinned: None,
        model_points: 0,
    };
    for (_, (title, series_map)) in panels {
        let mut panel = Panel { title, series: Vec::new() };
        for ((values, _), members) in series_map {
            let label = values.join(", ");
            let series = build_series(spec, &reader, label, style_of(&values), &members);
            panel.series.push(series);
        }
        data.panels.push(panel);
    }
    let series_count: usize = data.panels.iter().map(|panel| panel.series.len()).sum();
    let cap = (MAX_FIGURE_POINTS / series_count.max(1)).max(MIN_SERIES_POINTS);
    let mut thinned = false;
    for series in data.panels.iter_mut().flat_map(|panel| panel.series.iter_mut()) {
        thinned |= thin(&mut series.model, cap);
        thinned |= thin(&mut series.simulation, cap);
        thinned |= thin(&mut series.simulation_saturated, cap);
        thinned |= thin(&mut series.simulation_deadlocked, cap);
        thinned |= thin(&mut series.simulation_imprecise, cap);
    }
    data.thinned = thinned.then_some(cap);
    let all_series = data.panels.iter().flat_map(|panel| &panel.series);
    data.has_model = all_series.clone().any(|series| !series.model.is_empty());
    data.has_simulation = all_series.clone().any(|series| {
        !series.simulation.is_empty()
            || !series.simulation_saturated.is_empty()
            || !series.simulation_deadlocked.is_empty()
            || !series.simulation_imprecise.is_empty()
    });
    data.has_ci = all_series.clone().any(|series| series.simulation.iter().any(|p| p.2.is_some()));
    data.model_points = all_series.map(|series| series.model.len()).max().unwrap_or(0);
    data
}

/// The scenario columns that label series besides the spec's `lines`: those that vary within
/// some panel, less those that follow from the others (the node count from radix and
/// dimensions, a dateline or tie-break from the routing): a column that is a function of the
/// panel, the lines and the other labelling columns separates no series and would only
/// clutter the legend. (A column that only changes from panel to panel, like `dimensions`
/// when the panels are `nodes`, is left out too.)
fn legend_columns(spec: &FigureSpec, plotted: &[&PlotRow<'_>]) -> Vec<&'static str> {
    let panel_of = |plot_row: &PlotRow<'_>| -> Vec<Option<String>> {
        spec.panels.iter().map(|column| plot_row.text(column)).collect()
    };
    // Every text read below is a panel's, a line's or a scenario column's, and the last are
    // one scenario's: rows that agree on their panels, their lines and their scenario decide
    // alike, so one of each is read (a sweep of a million load points of one scenario reads
    // one row for each of the sixty scenario columns, not a million).
    let mut seen = std::collections::HashSet::new();
    let plotted: Vec<&PlotRow<'_>> = plotted
        .iter()
        .copied()
        .filter(|plot_row| {
            let lines: Vec<Option<String>> =
                spec.lines.iter().map(|column| plot_row.text(column)).collect();
            seen.insert((panel_of(plot_row), lines, std::ptr::from_ref(plot_row.scenario)))
        })
        .collect();
    let mut varying: Vec<&'static str> = columns::SCENARIO_COLUMNS
        .iter()
        .copied()
        .filter(|column| !spec.panels.iter().any(|panel| panel == column))
        .filter(|column| !spec.lines.iter().any(|line| line == column))
        .filter(|column| {
            let mut first_in_panel: BTreeMap<Vec<Option<String>>, Option<String>> = BTreeMap::new();
            plotted.iter().any(|plot_row| {
                let value = plot_row.text(column);
                let first =
                    first_in_panel.entry(panel_of(plot_row)).or_insert_with(|| value.clone());
                *first != value
            })
        })
        .collect();
    // Derived columns go first, then the others from the least to the most fundamental.
    const DERIVED_FIRST: [&str; 6] = [
        "nodes",
        "dateline",
        "tie_break",
        "message_length_second_moment",
        "escape_channels",
        "hotspot_nodes",
    ];
    let mut order: Vec<&'static str> =
        DERIVED_FIRST.iter().copied().filter(|column| varying.contains(column)).collect();
    order.extend(varying.iter().rev().copied().filter(|column| !DERIVED_FIRST.contains(column)));
    for column in order {
        let others: Vec<&str> = spec
            .panels
            .iter()
            .chain(&spec.lines)
            .map(String::as_str)
            .chain(varying.iter().copied().filter(|other| *other != column))
            .collect();
        let mut determined: BTreeMap<Vec<Option<String>>, Option<String>> = BTreeMap::new();
        let function = plotted.iter().all(|plot_row| {
            let key: Vec<Option<String>> = others.iter().map(|name| plot_row.text(name)).collect();
            let value = plot_row.text(column);
            determined.entry(key).or_insert_with(|| value.clone()) == &value
        });
        if function {
            varying.retain(|kept| *kept != column);
        }
    }
    varying
}

/// Keeps `cap` evenly spaced points of `points` (the first and the last among them) when it
/// has more; returns whether it did.
fn thin<T: Copy>(points: &mut Vec<T>, cap: usize) -> bool {
    let len = points.len();
    if len <= cap || cap < 2 {
        return false;
    }
    *points = (0..cap).map(|i| points[i * (len - 1) / (cap - 1)]).collect();
    true
}

fn build_series(
    spec: &FigureSpec,
    reader: &Reader,
    label: String,
    style: StyleKey,
    members: &[&PlotRow<'_>],
) -> Series {
    let mut series = Series {
        label,
        style,
        scenario: members.first().map_or(Value::Null, |plot_row| plot_row.scenario.clone()),
        model: Vec::new(),
        saturation_x: None,
        simulation: Vec::new(),
        simulation_saturated: Vec::new(),
        simulation_deadlocked: Vec::new(),
        simulation_imprecise: Vec::new(),
        fault_maps: None,
    };
    let mut first_saturated_model: Option<f64> = None;
    for plot_row in members {
        let Some(x) = reader.value(plot_row, &spec.x) else { continue };
        let row = plot_row.row;
        let y = if spec.y == "latency" && &*row.method == "model" {
            row.comparable_model_latency()
        } else {
            reader.value(plot_row, &spec.y)
        };
        // The built-in model and an external model (`kind: model`: one evaluation per load
        // point, no replications) are lines; simulations are markers.
        let drawn_as_line = &*row.method == "model"
            || (&*row.method != "simulation"
                && row.replication.is_none()
                && row.replications.is_none());
        if drawn_as_line {
            match y {
                Some(y) if &*row.status == "ok" => series.model.push((x, y)),
                _ if &*row.status == "saturated" => {
                    first_saturated_model = Some(first_saturated_model.map_or(x, |old| old.min(x)));
                }
                _ => {}
            }
            // The model's saturation rate is an x position only when x is a load.
            if let Some(saturation) = reader.saturation_x(row, &spec.x) {
                series.saturation_x = Some(saturation);
            }
        } else {
            match y {
                // Throughput mode measures the whole window past saturation too: its
                // throughput columns are results there (its latency is empty).
                Some(y) if &*row.status == "ok" || measured_past_saturation(row) => {
                    // The y column's own 95% half-width, where it has one (latency,
                    // throughput, the latency percentiles: `report::intervals`).
                    let ci = plot_row.half_width(&spec.y);
                    if ci.is_some() && row.fault_rate > 0.0 {
                        let maps = row.replications.unwrap_or(1);
                        series.fault_maps = series.fault_maps.max(Some(maps));
                    }
                    series.simulation.push((x, y, ci));
                }
                Some(y) if &*row.status == "imprecise" => {
                    series.simulation_imprecise.push((x, y, plot_row.half_width(&spec.y)));
                }
                _ if &*row.status == "saturated" => series.simulation_saturated.push(x),
                _ if &*row.status == "deadlock" => series.simulation_deadlocked.push(x),
                _ => {}
            }
        }
    }
    if series.saturation_x.is_none() {
        series.saturation_x = first_saturated_model;
    }
    series.model.sort_by(|a, b| a.0.total_cmp(&b.0));
    series.simulation.sort_by(|a, b| a.0.total_cmp(&b.0));
    series.simulation_imprecise.sort_by(|a, b| a.0.total_cmp(&b.0));
    series
}

/// A simulation row measured in throughput mode past saturation (`sim::Measure`).
fn measured_past_saturation(row: &PlotFields) -> bool {
    &*row.status == "saturated" && row.measure.as_deref() == Some("throughput")
}
