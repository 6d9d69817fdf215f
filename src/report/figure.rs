//! Figures as SVG: model lines, simulation markers with 95% CI bars, one panel per configuration.
//!
//! The layout follows Fig. 1 of the papers, styled for an IEEE single column: each panel is
//! 3.5 in wide, lines are thin, there is no grid or frame, the palette is Okabe-Ito (safe for
//! colour-blind readers) and every series also has its own marker shape, so the figure
//! survives greyscale printing. Drawing uses plotters' SVG backend only, so no system font
//! library is involved; text stays `<text>` with the generic family `sans-serif`, which the
//! PDF step maps to the bundled DejaVu Sans.
//!
//! Latencies explode near saturation, so for latency columns the y axis is capped at
//! [`ZERO_LOAD_FACTOR`] times the panel's zero-load latency or at the largest finite
//! simulation point (with its CI), whichever is larger. Points beyond the cap and saturated
//! simulation points are drawn as open triangles on the top edge, deadlocked simulations as
//! crosses there, and simulations short of their target precision as open circles at their
//! estimate; the caption says which of these a figure holds.
//!
//! Coordinates are in units of 1/[`UNITS_PER_PT`] pt: plotters works in integer pixels, and
//! a quarter point keeps curves smooth in print. This file groups the rows into panels and
//! series and picks the axis ranges; `figure/draw.rs` draws them.

mod draw;

use std::collections::BTreeMap;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;

use super::ReportError;
use super::columns;
use crate::spec::report::{FigureSpec, MAX_LINES, MAX_PANELS};
use crate::store::row::Row;
use draw::{LABEL_FONT_PT, draw_panel, font};

/// SVG user units per PostScript point (the PDF step divides by this).
pub(crate) const UNITS_PER_PT: f64 = 4.0;
/// The y axis of a latency figure is capped at this multiple of the zero-load latency.
pub(crate) const ZERO_LOAD_FACTOR: f64 = 6.0;

const PANEL_WIDTH_PT: f64 = 252.0; // 3.5 in
const PANEL_HEIGHT_PT: f64 = 190.0;

/// One rendered figure.
#[derive(Clone, Debug)]
pub(crate) struct Figure {
    /// File name without extension, e.g. `fig1_latency_vs_rate`.
    pub(crate) stem: String,
    /// Short title (the spec's `title` or one derived from the axes).
    pub(crate) title: String,
    /// Caption sentences explaining the encoding (lines, markers, caps).
    pub(crate) caption: String,
    /// The SVG document.
    pub(crate) svg: String,
    /// Width in points (for display sizing).
    pub(crate) width_pt: f64,
}

/// One plotted row: the row and a JSON view of the columns the figures read (for access by
/// column name). The scenario columns, the same for every row of a scenario, are shared per
/// scenario, so a run of many load points does not hold a JSON copy of every row.
pub(crate) struct PlotRow<'a> {
    /// The row.
    pub(crate) row: &'a Row,
    /// The row's columns the figures read that do not describe the scenario, as a JSON object.
    pub(crate) json: Value,
    /// The row's scenario columns, as a JSON object shared by the scenario's rows.
    pub(crate) scenario: &'a Value,
}

impl PlotRow<'_> {
    /// The JSON object holding `column`.
    fn source(&self, column: &str) -> &Value {
        if columns::SCENARIO_COLUMNS.contains(&column) { self.scenario } else { &self.json }
    }

    fn text(&self, column: &str) -> Option<String> {
        columns::text(self.source(column), column)
    }

    fn number(&self, column: &str) -> Option<f64> {
        columns::number(self.source(column), column)
    }
}

/// The columns of `row` the figures of `specs` read that do not describe the scenario, as a
/// JSON object (see [`PlotRow`]).
pub(crate) fn plot_json(row: &Row, specs: &[FigureSpec]) -> Value {
    let mut json = columns::to_json(row);
    if let Value::Object(map) = &mut json {
        map.retain(|key, _| {
            !columns::SCENARIO_COLUMNS.contains(&key.as_str())
                && specs.iter().any(|spec| {
                    spec.x == *key
                        || spec.y == *key
                        || spec.panels.contains(key)
                        || spec.lines.contains(key)
                        || (key == "intermediates"
                            && [&spec.x, &spec.y]
                                .iter()
                                .any(|axis| axis.starts_with(columns::INTERMEDIATE_PREFIX)))
                })
        });
    }
    json
}

/// The scenario columns of `row` as a JSON object (see [`PlotRow`]).
pub(crate) fn scenario_json(row: &Row) -> Value {
    let mut json = columns::to_json(row);
    if let Value::Object(map) = &mut json {
        map.retain(|key, _| columns::SCENARIO_COLUMNS.contains(&key.as_str()));
    }
    json
}

/// A figure draws at most this many points in all (model and simulation), spread evenly over
/// its series, so the SVG, the PDF and the HTML page that inlines it stay small however many
/// load points a spec sweeps; every point is in `tables/results.csv` and `results.parquet`.
pub(crate) const MAX_FIGURE_POINTS: usize = 20_000;
/// ... but every series keeps at least this many.
pub(crate) const MIN_SERIES_POINTS: usize = 50;

/// Builds figure number `number` (1-based) from the rows.
pub(crate) fn build(
    number: usize,
    spec: &FigureSpec,
    rows: &[PlotRow<'_>],
) -> Result<Figure, ReportError> {
    columns::check_figure(spec).map_err(|message| ReportError::Figure { number, message })?;
    let data = prepare(spec, rows);
    // The spec validator bounds these before a run; a bundle re-rendered from an older or
    // edited results file is held to the same limits here, before anything is drawn.
    let lines = data.panels.iter().map(|panel| panel.series.len()).max().unwrap_or(0);
    if data.panels.len() > MAX_PANELS || lines > MAX_LINES {
        return Err(ReportError::Figure {
            number,
            message: format!(
                "{} panels with up to {lines} lines each; a figure may have at most {MAX_PANELS} panels of at most {MAX_LINES} lines (panel or line by columns with fewer values)",
                data.panels.len()
            ),
        });
    }
    let n_panels = data.panels.len().max(1);
    let n_cols = n_panels.min(2);
    let n_rows = n_panels.div_ceil(n_cols);
    let width = (PANEL_WIDTH_PT * UNITS_PER_PT) as u32 * n_cols as u32;
    let height = (PANEL_HEIGHT_PT * UNITS_PER_PT) as u32 * n_rows as u32;
    let mut svg = String::new();
    let mut clipped = false;
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|error| draw_error(number, &error))?;
        let areas = root.split_evenly((n_rows, n_cols));
        for (panel_index, (area, panel)) in areas.iter().zip(&data.panels).enumerate() {
            let title = if data.panels.len() > 1 {
                format!("({}) {}", panel_letter(panel_index), panel.title)
            } else {
                panel.title.clone()
            };
            clipped |= draw_panel(area, &data, panel, &title, spec)
                .map_err(|message| ReportError::Figure { number, message })?;
        }
        if data.panels.is_empty() {
            let style = font(LABEL_FONT_PT).pos(Pos::new(HPos::Center, VPos::Center));
            root.draw(&Text::new(
                "No finite data points to plot",
                (width as i32 / 2, height as i32 / 2),
                style,
            ))
            .map_err(|error| draw_error(number, &error))?;
        }
        root.present().map_err(|error| draw_error(number, &error))?;
    }
    let title = spec.title.clone().unwrap_or_else(|| {
        format!(
            "{} against {}",
            columns::axis_label(&spec.y),
            lower_first(&columns::axis_label(&spec.x))
        )
    });
    // An accessible name for screen readers and SVG viewers.
    if let Some(end) = svg.find('>') {
        svg.insert_str(end + 1, &format!("\n<title>{}</title>", xml_escape(&title)));
    }
    Ok(Figure {
        stem: format!("fig{number}_{}_vs_{}", spec.y, spec.x).replace('.', "_"),
        caption: caption(spec, &data, clipped),
        title,
        svg,
        width_pt: PANEL_WIDTH_PT * n_cols as f64,
    })
}

/// The figure's data, grouped into panels and series.
struct FigureData {
    panels: Vec<Panel>,
    has_model: bool,
    has_simulation: bool,
    /// Some simulation point has a confidence interval (latency figures only).
    has_ci: bool,
    has_saturation: bool,
    /// Whether some simulation point saturated, deadlocked, or is imprecise.
    has_saturated_simulation: bool,
    has_deadlock: bool,
    has_imprecise: bool,
    /// Series labels in colour order (empty when there is a single unlabelled series).
    legend: Vec<String>,
    /// The most points a series keeps, when some series had more (see [`MAX_FIGURE_POINTS`]).
    thinned: Option<usize>,
}

struct Panel {
    title: String,
    series: Vec<Series>,
}

struct Series {
    style_index: usize,
    /// Finite model points, sorted by x.
    model: Vec<(f64, f64)>,
    /// Model saturation point on the x axis, when known.
    saturation_x: Option<f64>,
    /// Finite simulation points (x, y, CI half-width), sorted by x.
    simulation: Vec<(f64, f64, Option<f64>)>,
    /// x of simulation points that saturated (no finite y).
    simulation_saturated: Vec<f64>,
    /// x of simulation points that deadlocked.
    simulation_deadlocked: Vec<f64>,
    /// Simulation points that stopped short of their target precision (an estimate), (x, y).
    simulation_imprecise: Vec<(f64, f64)>,
}

/// Series key (line label values, scenario id) to its rows.
type SeriesMap<'r, 'a> = BTreeMap<(Vec<String>, String), Vec<&'r PlotRow<'a>>>;
/// Panel key to (panel title, series).
type PanelMap<'r, 'a> = BTreeMap<Vec<SortKey>, (String, SeriesMap<'r, 'a>)>;

fn prepare(spec: &FigureSpec, rows: &[PlotRow<'_>]) -> FigureData {
    let plotted: Vec<&PlotRow<'_>> = rows
        .iter()
        .filter(|plot_row| {
            let row = plot_row.row;
            row.method == "model" || (row.method == "simulation" && row.replication.is_none())
        })
        .filter(|plot_row| plot_row.number(&spec.x).is_some())
        .collect();
    // Scenario columns that vary within some panel but are neither panels nor lines: they
    // distinguish series that the spec's `lines` do not. (A column that only changes from panel
    // to panel, like `dimensions` when the panels are `nodes`, would only clutter the legend.)
    let panel_of = |plot_row: &PlotRow<'_>| -> Vec<Option<String>> {
        spec.panels.iter().map(|column| plot_row.text(column)).collect()
    };
    let varying: Vec<&str> = columns::SCENARIO_COLUMNS
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
    // The node count follows from k and n; naming it too would only clutter the legend.
    let mut varying = varying;
    if varying.iter().any(|column| matches!(*column, "radix" | "dimensions")) {
        varying.retain(|column| *column != "nodes");
    }

    let mut panels: PanelMap<'_, '_> = BTreeMap::new();
    for plot_row in &plotted {
        let panel_values: Vec<Option<String>> =
            spec.panels.iter().map(|column| plot_row.text(column)).collect();
        let panel_key = panel_values.iter().map(|value| SortKey::new(value.as_deref())).collect();
        let mut line_values: Vec<String> =
            spec.lines.iter().map(|column| label_part(column, plot_row.text(column))).collect();
        line_values.extend(varying.iter().map(|column| label_part(column, plot_row.text(column))));
        let entry = panels
            .entry(panel_key)
            .or_insert_with(|| (panel_title(&spec.panels, &panel_values), BTreeMap::new()));
        entry.1.entry((line_values, plot_row.row.scenario_id.clone())).or_default().push(plot_row);
    }

    // Colours follow the series label across panels, in sorted label order.
    let mut labels: Vec<String> = panels
        .values()
        .flat_map(|(_, series)| series.keys().map(|(values, _)| values.join(", ")))
        .collect();
    labels.sort_by(|a, b| natural_cmp(a, b));
    labels.dedup();
    let single_unlabelled = labels.len() == 1 && labels[0].is_empty();

    let mut data = FigureData {
        panels: Vec::new(),
        has_model: false,
        has_simulation: false,
        has_ci: false,
        has_saturation: false,
        has_saturated_simulation: false,
        has_deadlock: false,
        has_imprecise: false,
        legend: if single_unlabelled { Vec::new() } else { labels.clone() },
        thinned: None,
    };
    for (_, (title, series_map)) in panels {
        let mut panel = Panel { title, series: Vec::new() };
        for ((values, _), members) in series_map {
            let label = values.join(", ");
            let style_index = labels.iter().position(|known| *known == label).unwrap_or(0);
            let series = build_series(spec, style_index, &members);
            data.has_model |= !series.model.is_empty();
            data.has_simulation |= !series.simulation.is_empty()
                || !series.simulation_saturated.is_empty()
                || !series.simulation_deadlocked.is_empty()
                || !series.simulation_imprecise.is_empty();
            data.has_saturated_simulation |= !series.simulation_saturated.is_empty();
            data.has_deadlock |= !series.simulation_deadlocked.is_empty();
            data.has_imprecise |= !series.simulation_imprecise.is_empty();
            data.has_ci |= series.simulation.iter().any(|point| point.2.is_some());
            data.has_saturation |= series.saturation_x.is_some();
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
    data
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

fn build_series(spec: &FigureSpec, style_index: usize, members: &[&PlotRow<'_>]) -> Series {
    let mut series = Series {
        style_index,
        model: Vec::new(),
        saturation_x: None,
        simulation: Vec::new(),
        simulation_saturated: Vec::new(),
        simulation_deadlocked: Vec::new(),
        simulation_imprecise: Vec::new(),
    };
    let mut first_saturated_model: Option<f64> = None;
    for plot_row in members {
        let Some(x) = plot_row.number(&spec.x) else { continue };
        let row = plot_row.row;
        let y = if spec.y == "latency" && row.method == "model" {
            columns::comparable_model_latency(row)
        } else {
            plot_row.number(&spec.y)
        };
        if row.method == "model" {
            match y {
                Some(y) if row.status == "ok" => series.model.push((x, y)),
                _ if row.status == "saturated" => {
                    first_saturated_model = Some(first_saturated_model.map_or(x, |old| old.min(x)));
                }
                _ => {}
            }
            // The model's saturation rate is an x position only when x is the rate.
            if spec.x == "rate" {
                if let Some(rate) = row.saturation_rate.filter(|rate| rate.is_finite()) {
                    series.saturation_x = Some(rate);
                }
            } else if spec.x == "fraction_of_saturation" && row.saturation_rate.is_some() {
                series.saturation_x = Some(1.0);
            }
        } else {
            match y {
                // Throughput mode measures the whole window past saturation too: its
                // throughput columns are results there (its latency is empty).
                Some(y) if row.status == "ok" || measured_past_saturation(row) => {
                    let ci = if spec.y == "latency" {
                        row.latency_ci95.filter(|ci| ci.is_finite() && *ci >= 0.0)
                    } else {
                        None
                    };
                    series.simulation.push((x, y, ci));
                }
                Some(y) if row.status == "imprecise" => series.simulation_imprecise.push((x, y)),
                _ if row.status == "saturated" => series.simulation_saturated.push(x),
                _ if row.status == "deadlock" => series.simulation_deadlocked.push(x),
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
fn measured_past_saturation(row: &Row) -> bool {
    row.status == "saturated" && row.measure.as_deref() == Some("throughput")
}

/// Axis ranges of one panel.
struct Ranges {
    x: (f64, f64),
    y: (f64, f64),
    /// Whether the latency cap cut off data.
    clipped: bool,
}

fn ranges(panel: &Panel, spec: &FigureSpec) -> Ranges {
    let xs = panel.series.iter().flat_map(|series| {
        series
            .model
            .iter()
            .map(|point| point.0)
            .chain(series.simulation.iter().map(|point| point.0))
            .chain(series.simulation_saturated.iter().copied())
            .chain(series.simulation_deadlocked.iter().copied())
            .chain(series.simulation_imprecise.iter().map(|point| point.0))
    });
    let saturations = panel.series.iter().filter_map(|series| series.saturation_x);
    // A saturation point far beyond the data would squash the curves; it is then left out.
    let (x_min, x_max) = match min_max(xs) {
        Some((x_min, x_max)) => {
            let limit = x_max + 0.25 * x_max.abs();
            let reachable = saturations.filter(|x| *x <= limit).fold(x_max, f64::max);
            (x_min, reachable)
        }
        None => min_max(saturations).unwrap_or((0.0, 1.0)),
    };
    let x_lo = if x_min >= 0.0 { 0.0 } else { x_min };
    let mut x_hi = x_max + 0.04 * (x_max - x_lo);
    if x_hi <= x_lo {
        x_hi = x_lo + 1.0;
    }

    let model_ys = panel.series.iter().flat_map(|series| series.model.iter().map(|point| point.1));
    let sim_tops: Vec<f64> = panel
        .series
        .iter()
        .flat_map(|series| series.simulation.iter().map(|(_, y, ci)| y + ci.unwrap_or(0.0)))
        .collect();
    let all_ys: Vec<f64> = model_ys.chain(sim_tops.iter().copied()).collect();
    let (y_min, y_max) = min_max(all_ys.iter().copied()).unwrap_or((0.0, 1.0));
    let mut cap = y_max;
    if columns::is_latency(&spec.y) {
        // Zero-load latency: the lowest-load point of each series (model preferred).
        let zero_load = panel
            .series
            .iter()
            .filter_map(|series| {
                series.model.first().map(|point| point.1).or(series.simulation.first().map(|p| p.1))
            })
            .filter(|y| *y > 0.0)
            .fold(f64::INFINITY, f64::min);
        if zero_load.is_finite() {
            let sim_max = sim_tops.iter().copied().fold(0.0, f64::max);
            cap = cap.min((ZERO_LOAD_FACTOR * zero_load).max(sim_max));
        }
    }
    let clipped = all_ys.iter().any(|y| *y > cap * (1.0 + 1e-9))
        || panel.series.iter().any(|series| {
            !series.simulation_saturated.is_empty() || !series.simulation_deadlocked.is_empty()
        });
    let (y_lo, y_hi) = if spec.log_y {
        let positive_min =
            all_ys.iter().copied().filter(|y| *y > 0.0).fold(f64::INFINITY, f64::min);
        let lo = if positive_min.is_finite() { positive_min / 1.25 } else { 0.1 };
        let hi = if cap > lo { cap * 1.25 } else { lo * 10.0 };
        (lo, hi)
    } else {
        let lo = if y_min >= 0.0 { 0.0 } else { y_min * 1.05 };
        let hi = if cap > lo { cap + 0.05 * (cap - lo) } else { lo + 1.0 };
        (lo, hi)
    };
    Ranges { x: (x_lo, x_hi), y: (y_lo, y_hi), clipped }
}

fn caption(spec: &FigureSpec, data: &FigureData, clipped: bool) -> String {
    let mut sentences = Vec::new();
    match (data.has_model, data.has_simulation) {
        (true, true) if spec.y == "latency" => sentences.push(
            "Lines: model; markers: simulation mean with 95% confidence interval.".to_owned(),
        ),
        (true, true) => sentences.push("Lines: model; markers: simulation.".to_owned()),
        (true, false) => sentences.push("Lines: model (no simulation results).".to_owned()),
        (false, true) => sentences.push("Markers: simulation (no model results).".to_owned()),
        (false, false) => sentences.push("No finite results to plot.".to_owned()),
    }
    if data.has_saturation {
        sentences.push("Dashed vertical lines: model saturation point.".to_owned());
    }
    if clipped && columns::is_latency(&spec.y) {
        sentences.push(format!(
            "The y axis is capped at {ZERO_LOAD_FACTOR}\u{d7} the zero-load latency of each panel \
             or the largest finite simulation point, whichever is larger; open triangles on the \
             top edge mark simulation points beyond the cap or saturated."
        ));
    } else if data.has_saturated_simulation {
        sentences
            .push("Open triangles on the top edge mark saturated simulation points.".to_owned());
    }
    if data.has_deadlock {
        sentences.push("Crosses on the top edge mark simulations that deadlocked.".to_owned());
    }
    if data.has_imprecise {
        sentences.push(
            "Open circles mark simulation points that stopped short of their target precision \
             (estimates)."
                .to_owned(),
        );
    }
    if spec.log_y {
        sentences.push("Logarithmic y axis.".to_owned());
    }
    if let Some(cap) = data.thinned {
        sentences.push(format!(
            "Series of more than {cap} points show {cap} evenly spaced ones; every point is in results.parquet."
        ));
    }
    sentences.join(" ")
}

fn draw_error(number: usize, error: &dyn std::fmt::Display) -> ReportError {
    ReportError::Figure { number, message: error.to_string() }
}

fn panel_letter(index: usize) -> String {
    let letters = b"abcdefghijklmnopqrstuvwxyz";
    match letters.get(index) {
        Some(letter) => char::from(*letter).to_string(),
        None => (index + 1).to_string(),
    }
}

fn panel_title(columns_: &[String], values: &[Option<String>]) -> String {
    columns_
        .iter()
        .zip(values)
        .map(|(column, value)| label_part(column, value.clone()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `V = 2` for numeric columns, the bare value for text columns (`torus`).
fn label_part(column: &str, value: Option<String>) -> String {
    let value = value.unwrap_or_else(|| "none".to_owned());
    match columns::kind(column) {
        Some(columns::Kind::Text) => value,
        _ => format!("{} = {value}", columns::symbol(column)),
    }
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn min_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.filter(|value| value.is_finite()).fold(None, |acc, value| match acc {
        None => Some((value, value)),
        Some((lo, hi)) => Some((lo.min(value), hi.max(value))),
    })
}

/// Sort key that orders numbers numerically and text alphabetically (missing, numbers, text).
#[derive(Clone, Debug)]
enum SortKey {
    Missing,
    Number(f64),
    Text(String),
}

impl SortKey {
    fn new(value: Option<&str>) -> Self {
        match value {
            None => SortKey::Missing,
            Some(text) => match text.parse::<f64>() {
                Ok(number) if number.is_finite() => SortKey::Number(number),
                _ => SortKey::Text(text.to_owned()),
            },
        }
    }

    fn rank(&self) -> u8 {
        match self {
            SortKey::Missing => 0,
            SortKey::Number(_) => 1,
            SortKey::Text(_) => 2,
        }
    }
}

impl Ord for SortKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (SortKey::Number(a), SortKey::Number(b)) => a.total_cmp(b),
            (SortKey::Text(a), SortKey::Text(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for SortKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for SortKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for SortKey {}

/// Compares labels like `V = 2, M = 16` so that embedded numbers sort numerically.
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |text: &str| -> Vec<SortKey> {
        text.split(", ")
            .map(|part| SortKey::new(Some(part.rsplit(" = ").next().unwrap_or(part))))
            .collect()
    };
    split(a).cmp(&split(b)).then_with(|| a.cmp(b))
}
