//! Figures as SVG: model lines, simulation markers with 95% CI bars, one panel per configuration.
//!
//! The layout follows Fig. 1 of the papers, styled for an IEEE journal: a figure is one column
//! (3.5 in, one panel per row) or the page width (7.16 in, two panels per row); lines are thin,
//! there is no grid or frame, the palette is Okabe-Ito (safe for colour-blind readers) and every
//! series also has its own marker shape, so the figure survives greyscale printing. One legend
//! per figure sits in a strip below the panels, never over data, and names series only by the
//! scenario columns that vary independently ([`legend_columns`]). A figure whose panels do not
//! fit a 10 in page is split into pages `fig<N>a_...`, `fig<N>b_...` ([`pages`]). Drawing uses
//! plotters' SVG backend only, so no system font library is involved; text stays `<text>` with
//! the generic family `sans-serif`, which the PDF step maps to the bundled DejaVu Sans.
//!
//! Latencies explode near saturation, so for latency columns (means and the simulator's
//! percentiles, `columns::is_latency`) the y axis is capped at [`ZERO_LOAD_FACTOR`] times the
//! panel's zero-load value of the column (a percentile's is the simulation's lowest-load one:
//! the models have no percentiles) or at the largest finite simulated value, whichever is
//! larger. Points beyond the cap and saturated simulation points
//! are drawn as open triangles on the top edge, deadlocked simulations as crosses there, and
//! simulations short of their target precision as open circles at their estimate (markers of
//! several series that meet at one x on the top edge stack downwards, so none hides another); a confidence
//! bar that runs past the axis ends in an arrowhead; the caption says which of these a figure
//! holds. The y axis starts at 0 when the data come near it and a little below the data
//! otherwise; the spec's `xlim`, `ylim`, `log_x`, `log_y`, `shared_y`, `y_from_zero`, `width`,
//! `max_panels_per_page` and the label fields override the defaults.
//!
//! Every page also gets a tidy CSV of exactly what it plots (`figures/<stem>.csv`, [`csv`]).
//!
//! Coordinates are in units of 1/[`UNITS_PER_PT`] pt: plotters works in integer pixels, and
//! a quarter point keeps curves smooth in print. This file groups the rows into panels and
//! series and picks the axis ranges; `figure/draw.rs` lays out and draws the pages.

mod conditions;
mod draw;
mod heatmap;
mod histogram;
mod points;
pub(crate) mod side;
mod svg;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::ReportError;
use super::columns;
use crate::spec::report::{FigureSpec, FigureWidth, MAX_LINES, MAX_PANELS};
use crate::store::row::Row;

pub(crate) use draw::Layout;
#[cfg(test)]
pub(crate) use histogram::MAX_BARS as MAX_HISTOGRAM_BARS;

/// SVG user units per PostScript point (the PDF step divides by this).
pub(crate) const UNITS_PER_PT: f64 = 4.0;
/// The y axis of a latency figure is capped at this multiple of the zero-load latency.
pub(crate) const ZERO_LOAD_FACTOR: f64 = 6.0;
/// A one-column figure's width: 3.5 in.
pub(crate) const COLUMN_WIDTH_PT: f64 = 252.0;
/// A page-wide figure's width: 7.16 in, the text width of a two-column journal page.
pub(crate) const PAGE_WIDTH_PT: f64 = 515.5;
/// No page of a figure is taller than a journal page's text: 10 in.
pub(crate) const MAX_PAGE_HEIGHT_PT: f64 = 720.0;

/// One rendered page of a figure (most figures have one).
#[derive(Clone, Debug)]
pub(crate) struct Figure {
    /// File name without extension, e.g. `fig1_latency_vs_rate` (`fig1a_...`, `fig1b_...`
    /// for the pages of a split figure).
    pub(crate) stem: String,
    /// Short title (the spec's `title` or one derived from the axes; a split figure's pages
    /// say which part and panels they hold).
    pub(crate) title: String,
    /// Caption sentences explaining the encoding (lines, markers, caps).
    pub(crate) caption: String,
    /// The SVG document.
    pub(crate) svg: String,
    /// The tidy CSV of the plotted series.
    pub(crate) csv: String,
    /// Width in points (for display sizing).
    pub(crate) width_pt: f64,
    /// Where everything went, for tests that hold the layout to its promises.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) layout: Layout,
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
/// `columns` is [`plot_columns`] of the specs.
pub(crate) fn plot_json(row: &Row, columns: &[&str]) -> Value {
    columns::pick_json(row, columns)
}

/// The columns [`plot_json`] keeps: those the figures of `specs` read (axes, panels, lines,
/// and `intermediates` for an intermediate axis) that do not describe the scenario.
pub(crate) fn plot_columns(specs: &[FigureSpec]) -> Vec<String> {
    let Value::Object(all) = columns::to_json(&Row::default()) else { return Vec::new() };
    all.into_iter()
        .map(|(key, _)| key)
        .filter(|key| {
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
        })
        .collect()
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

/// Builds figure number `number` (1-based) from the rows: one [`Figure`] per page.
pub(crate) fn build(
    number: usize,
    spec: &FigureSpec,
    rows: &[PlotRow<'_>],
) -> Result<Vec<Figure>, ReportError> {
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
    let mut ranges: Vec<Ranges> = data.panels.iter().map(|panel| ranges(panel, spec)).collect();
    if spec.shared_y {
        share_y(&mut ranges, spec);
    }
    let title = spec.title.clone().unwrap_or_else(|| {
        format!(
            "{} against {}",
            columns::axis_label(&spec.y),
            lower_first(&columns::axis_label(&spec.x))
        )
    });
    let base_stem = format!("fig{number}_{}_vs_{}", spec.y, spec.x).replace('.', "_");
    let geometry = draw::Geometry::new(spec, &data);
    let pages = pages(data.panels.len(), &geometry, spec);
    let conditions = conditions::sentence(rows.iter().map(|plot_row| plot_row.row));
    let mut figures = Vec::with_capacity(pages.len());
    for (page_index, page) in pages.iter().enumerate() {
        let flags = Flags::of(&data.panels[page.clone()], &ranges[page.clone()]);
        let (svg, layout) = draw::page(&geometry, &data, spec, page.clone(), &ranges)
            .map_err(|message| ReportError::Figure { number, message })?;
        let (stem, page_title) = if pages.len() == 1 {
            (base_stem.clone(), title.clone())
        } else {
            let letter = panel_letter(page_index);
            let first = panel_letter(page.start);
            let last = panel_letter(page.end - 1);
            (
                base_stem.replacen(&format!("fig{number}_"), &format!("fig{number}{letter}_"), 1),
                format!("{title} (part {letter} of {}: panels {first}\u{2013}{last})", pages.len()),
            )
        };
        // An accessible name for screen readers and SVG viewers.
        let mut svg = svg;
        if let Some(end) = svg.find('>') {
            svg.insert_str(end + 1, &format!("\n<title>{}</title>", xml_escape(&page_title)));
        }
        figures.push(Figure {
            csv: csv(number, spec, &data, page.clone()),
            caption: match &conditions {
                Some(conditions) => format!("{} {conditions}", caption(spec, &data, &flags)),
                None => caption(spec, &data, &flags),
            },
            stem,
            title: page_title,
            svg,
            width_pt: geometry.width_pt,
            layout,
        });
    }
    Ok(figures)
}

/// The panel index ranges of the pages: as many panels per page as fit in
/// [`MAX_PAGE_HEIGHT_PT`] (and at most the spec's `max_panels_per_page`), spread evenly over
/// the fewest pages, whole rows per page where that adds no page.
fn pages(
    panels: usize,
    geometry: &draw::Geometry,
    spec: &FigureSpec,
) -> Vec<std::ops::Range<usize>> {
    if panels == 0 {
        return std::iter::once(0..0).collect();
    }
    let mut most = geometry.rows_per_page() * geometry.columns;
    if let Some(limit) = &spec.max_panels_per_page {
        most = most.min(limit.value.max(1) as usize);
    }
    let most = most.max(1);
    let count = panels.div_ceil(most);
    let mut per_page = panels.div_ceil(count);
    let whole_rows = per_page.div_ceil(geometry.columns) * geometry.columns;
    if whole_rows <= most && panels.div_ceil(whole_rows) == count {
        per_page = whole_rows;
    }
    (0..panels.div_ceil(per_page))
        .map(|page| page * per_page..((page + 1) * per_page).min(panels))
        .collect()
}

/// The figure's data, grouped into panels and series.
struct FigureData {
    panels: Vec<Panel>,
    /// Whether some panel has a model line or a simulation marker (for the legend).
    has_model: bool,
    has_simulation: bool,
    /// Some simulation point has a confidence interval.
    has_ci: bool,
    /// Series labels in colour order (empty when there is a single unlabelled series).
    legend: Vec<String>,
    /// The most points a series keeps, when some series had more (see [`MAX_FIGURE_POINTS`]).
    thinned: Option<usize>,
    /// The most model points a series has.
    model_points: usize,
}

struct Panel {
    title: String,
    series: Vec<Series>,
}

struct Series {
    /// The legend label (empty for a single unlabelled series).
    label: String,
    style_index: usize,
    /// The scenario columns of the series (for the CSV).
    scenario: Value,
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
    /// The most replications of a plotted point with faults (each its own fault map, so its
    /// interval spans the maps as well as the noise); `None` without such a point.
    fault_maps: Option<u32>,
}

/// What a page shows, for its caption.
#[derive(Default)]
struct Flags {
    has_model: bool,
    has_simulation: bool,
    has_ci: bool,
    has_saturation: bool,
    has_saturated_simulation: bool,
    has_deadlock: bool,
    has_imprecise: bool,
    /// The most fault maps behind a plotted interval (`Series::fault_maps`).
    fault_maps: Option<u32>,
    /// The latency cap or the `ylim` cut off data.
    clipped: bool,
    /// Some confidence bar runs past the axis.
    clipped_bar: bool,
}

impl Flags {
    fn of(panels: &[Panel], ranges: &[Ranges]) -> Flags {
        let mut flags = Flags::default();
        for (panel, ranges) in panels.iter().zip(ranges) {
            flags.clipped |= ranges.clipped;
            for series in &panel.series {
                flags.has_model |= !series.model.is_empty();
                flags.has_simulation |= !series.simulation.is_empty()
                    || !series.simulation_saturated.is_empty()
                    || !series.simulation_deadlocked.is_empty()
                    || !series.simulation_imprecise.is_empty();
                flags.has_saturated_simulation |= !series.simulation_saturated.is_empty();
                flags.has_deadlock |= !series.simulation_deadlocked.is_empty();
                flags.has_imprecise |= !series.simulation_imprecise.is_empty();
                flags.has_ci |= series.simulation.iter().any(|point| point.2.is_some());
                flags.fault_maps = flags.fault_maps.max(series.fault_maps);
                flags.has_saturation |= series.saturation_x.is_some();
                flags.clipped_bar |= series.simulation.iter().any(|&(x, y, ci)| {
                    let Some(ci) = ci.filter(|ci| *ci > 0.0) else { return false };
                    ranges.x_contains(x)
                        && y >= ranges.y.0
                        && y <= ranges.cap
                        && (y + ci > ranges.y.1 || y - ci < ranges.y.0)
                });
            }
        }
        flags
    }
}

/// Series key (line label values, scenario id) to its rows.
type SeriesMap<'r, 'a> = BTreeMap<(Vec<String>, String), Vec<&'r PlotRow<'a>>>;
/// Panel key to (panel title, series).
type PanelMap<'r, 'a> = BTreeMap<Vec<SortKey>, (String, SeriesMap<'r, 'a>)>;

/// Reads a figure axis from a row: a column, an intermediate, or a derived load
/// ([`columns::DERIVED_COLUMNS`], and `fraction_of_saturation` where the row lacks it).
struct Reader {
    /// The model saturation rate of each scenario, from its rows.
    saturation: HashMap<String, f64>,
}

impl Reader {
    fn new(rows: &[PlotRow<'_>]) -> Reader {
        let mut saturation = HashMap::new();
        for plot_row in rows {
            let row = plot_row.row;
            if let Some(rate) = row.saturation_rate.filter(|rate| rate.is_finite() && *rate > 0.0)
                && (row.method == "model" || !saturation.contains_key(&row.scenario_id))
            {
                saturation.insert(row.scenario_id.clone(), rate);
            }
        }
        Reader { saturation }
    }

    fn saturation_rate(&self, row: &Row) -> Option<f64> {
        self.saturation.get(&row.scenario_id).copied()
    }

    fn value(&self, plot_row: &PlotRow<'_>, name: &str) -> Option<f64> {
        let row = plot_row.row;
        let value = match name {
            // A trace's exact flit load (its lengths vary; `message_length` is their rounded mean).
            "flit_rate" => {
                Some(row.trace_flit_load.unwrap_or(row.rate * f64::from(row.message_length)))
            }
            "fraction_of_saturation" => plot_row
                .number(name)
                .or_else(|| self.saturation_rate(row).map(|saturation| row.rate / saturation)),
            _ => plot_row.number(name),
        };
        value.filter(|value| value.is_finite())
    }

    /// The model's saturation point on an x axis of `name`, when it is a load.
    fn saturation_x(&self, row: &Row, name: &str) -> Option<f64> {
        let saturation = row.saturation_rate.filter(|rate| rate.is_finite() && *rate > 0.0);
        match name {
            "rate" => saturation,
            "flit_rate" => saturation.map(|rate| rate * f64::from(row.message_length)),
            "fraction_of_saturation" => saturation.map(|_| 1.0),
            _ => None,
        }
    }
}

fn prepare(spec: &FigureSpec, rows: &[PlotRow<'_>]) -> FigureData {
    let reader = Reader::new(rows);
    let plotted: Vec<&PlotRow<'_>> = rows
        .iter()
        // The model's rows, and one row per load point of every other method: the built-in
        // simulation's and external simulations' aggregates, external models' evaluations.
        .filter(|plot_row| plot_row.row.method == "model" || plot_row.row.replication.is_none())
        // A dense model curve runs over the load; against a scenario column (one value per
        // scenario) it would be a column of points, not a line.
        .filter(|plot_row| {
            !(plot_row.row.is_dense() && columns::SCENARIO_COLUMNS.contains(&spec.x.as_str()))
        })
        .filter(|plot_row| reader.value(plot_row, &spec.x).is_some())
        .collect();
    let varying = legend_columns(spec, &plotted);
    // An external method (`methods.external`) is a series of its own, named in the legend,
    // beside the built-in methods' (then named `runner`).
    let external = |row: &Row| row.method != "model" && row.method != "simulation";
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
            line_values.push(if external(row) { row.method.clone() } else { "runner".into() });
        }
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
        legend: if single_unlabelled { Vec::new() } else { labels.clone() },
        thinned: None,
        model_points: 0,
    };
    for (_, (title, series_map)) in panels {
        let mut panel = Panel { title, series: Vec::new() };
        for ((values, _), members) in series_map {
            let label = values.join(", ");
            let style_index = labels.iter().position(|known| *known == label).unwrap_or(0);
            let series = build_series(spec, &reader, label, style_index, &members);
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
    style_index: usize,
    members: &[&PlotRow<'_>],
) -> Series {
    let mut series = Series {
        label,
        style_index,
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
        let y = if spec.y == "latency" && row.method == "model" {
            columns::comparable_model_latency(row)
        } else {
            reader.value(plot_row, &spec.y)
        };
        // The built-in model and an external model (`kind: model`: one evaluation per load
        // point, no replications) are lines; simulations are markers.
        let drawn_as_line = row.method == "model"
            || (row.method != "simulation"
                && row.replication.is_none()
                && row.replications.is_none());
        if drawn_as_line {
            match y {
                Some(y) if row.status == "ok" => series.model.push((x, y)),
                _ if row.status == "saturated" => {
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
                Some(y) if row.status == "ok" || measured_past_saturation(row) => {
                    let ci = if spec.y == "latency" {
                        row.latency_ci95.filter(|ci| ci.is_finite() && *ci >= 0.0)
                    } else {
                        None
                    };
                    if ci.is_some() && row.fault_rate > 0.0 {
                        let maps = row.replications.unwrap_or(1);
                        series.fault_maps = series.fault_maps.max(Some(maps));
                    }
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
#[derive(Clone, Debug)]
struct Ranges {
    x: (f64, f64),
    y: (f64, f64),
    /// Points above this y are drawn on the top edge as beyond the axis.
    cap: f64,
    /// Whether the latency cap or `ylim` cut off data, or a simulation saturated or deadlocked.
    clipped: bool,
}

impl Ranges {
    fn x_contains(&self, x: f64) -> bool {
        x >= self.x.0 * (1.0 - 1e-12) && x <= self.x.1 * (1.0 + 1e-12)
    }
}

/// The automatic ranges of a panel with the spec's limits applied.
fn ranges(panel: &Panel, spec: &FigureSpec) -> Ranges {
    let [x_low, x_high] = spec.xlim.as_ref().map_or([None, None], |limits| limits.value);
    let [y_low, y_high] = spec.ylim.as_ref().map_or([None, None], |limits| limits.value);
    let usable_x = |x: &f64| x.is_finite() && (!spec.log_x || *x > 0.0);
    let xs: Vec<f64> = panel
        .series
        .iter()
        .flat_map(|series| {
            series
                .model
                .iter()
                .map(|point| point.0)
                .chain(series.simulation.iter().map(|point| point.0))
                .chain(series.simulation_saturated.iter().copied())
                .chain(series.simulation_deadlocked.iter().copied())
                .chain(series.simulation_imprecise.iter().map(|point| point.0))
        })
        .filter(usable_x)
        .collect();
    let saturations = panel.series.iter().filter_map(|series| series.saturation_x).filter(usable_x);
    // A saturation point far beyond the data would squash the curves; it is then left out.
    let (x_min, x_max) = match min_max(xs.iter().copied()) {
        Some((x_min, x_max)) => {
            let limit = x_max + 0.25 * x_max.abs();
            let reachable = saturations.filter(|x| *x <= limit).fold(x_max, f64::max);
            (x_min, reachable)
        }
        None => min_max(saturations).unwrap_or((if spec.log_x { 0.1 } else { 0.0 }, 1.0)),
    };
    let (mut x_lo, mut x_hi) = if spec.log_x {
        (x_min / 1.15, x_max * 1.15)
    } else {
        let lo = if x_min >= 0.0 { 0.0 } else { x_min };
        (lo, x_max + 0.04 * (x_max - lo))
    };
    if let Some(low) = x_low {
        x_lo = low;
    }
    if let Some(high) = x_high {
        x_hi = high;
    }
    if x_hi.partial_cmp(&x_lo) != Some(std::cmp::Ordering::Greater) {
        if x_high.is_some() && x_low.is_none() {
            x_lo = if spec.log_x { x_hi / 10.0 } else { x_hi - 1.0 };
        } else {
            x_hi = if spec.log_x { x_lo * 10.0 } else { x_lo + 1.0 };
        }
    }
    let in_x = |x: f64| x >= x_lo * (1.0 - 1e-12) && x <= x_hi * (1.0 + 1e-12);

    let usable_y = |y: &f64| y.is_finite() && (!spec.log_y || *y > 0.0);
    let model_ys: Vec<f64> = panel
        .series
        .iter()
        .flat_map(|series| series.model.iter().filter(|p| in_x(p.0)).map(|point| point.1))
        .filter(usable_y)
        .collect();
    let sim_points: Vec<(f64, Option<f64>)> = panel
        .series
        .iter()
        .flat_map(|series| {
            series.simulation.iter().filter(|p| in_x(p.0)).map(|&(_, y, ci)| (y, ci)).chain(
                series.simulation_imprecise.iter().filter(|p| in_x(p.0)).map(|p| (p.1, None)),
            )
        })
        .filter(|(y, _)| usable_y(y))
        .collect();
    let all_ys: Vec<f64> =
        model_ys.iter().copied().chain(sim_points.iter().map(|point| point.0)).collect();
    let (y_min, y_max) =
        min_max(all_ys.iter().copied()).unwrap_or(if spec.log_y { (0.1, 1.0) } else { (0.0, 1.0) });
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
            let sim_max = sim_points.iter().map(|point| point.0).fold(0.0, f64::max);
            cap = cap.min((ZERO_LOAD_FACTOR * zero_load).max(sim_max));
        }
    }
    // Confidence bars may widen the range a little; longer ones are clipped and marked.
    let bar_top = sim_points
        .iter()
        .filter(|(y, _)| *y <= cap)
        .filter_map(|(y, ci)| ci.map(|ci| y + ci))
        .fold(f64::NEG_INFINITY, f64::max);
    let widened = if spec.log_y { cap * 1.15 } else { cap + 0.15 * (cap - y_min.min(0.0)).abs() };
    if bar_top.is_finite() && bar_top > cap {
        cap = bar_top.min(widened);
    }
    let (mut lo, mut hi) = if spec.log_y {
        let lo = y_min / 1.25;
        let hi = if cap > lo { cap * 1.25 } else { lo * 10.0 };
        (lo, hi)
    } else {
        let below = (y_min - 0.05 * (cap - y_min)).max(if y_min >= 0.0 { 0.0 } else { f64::MIN });
        let from_zero = match spec.y_from_zero {
            Some(from_zero) => from_zero,
            None => y_min <= cap / 3.0,
        };
        let lo = if y_min < 0.0 {
            y_min - 0.05 * (cap - y_min)
        } else if from_zero {
            0.0
        } else {
            below
        };
        let lo = if cap > lo {
            lo
        } else if cap > 0.0 {
            0.0
        } else {
            cap - 1.0
        };
        (lo, cap + 0.05 * (cap - lo))
    };
    if let Some(low) = y_low {
        lo = low;
    }
    if let Some(high) = y_high {
        hi = high;
        cap = high;
    } else if cap > hi {
        cap = hi;
    }
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        hi = if spec.log_y { lo * 10.0 } else { lo + 1.0 };
        cap = hi;
    }
    let clipped = all_ys.iter().any(|y| *y > cap * (1.0 + 1e-9))
        || panel.series.iter().any(|series| {
            series.simulation_saturated.iter().any(|x| in_x(*x))
                || series.simulation_deadlocked.iter().any(|x| in_x(*x))
        });
    Ranges { x: (x_lo, x_hi), y: (lo, hi), cap, clipped }
}

/// One y range for every panel (`shared_y`): the union of the panels' ranges.
fn share_y(ranges: &mut [Ranges], spec: &FigureSpec) {
    let lo = ranges.iter().map(|r| r.y.0).fold(f64::INFINITY, f64::min);
    let hi = ranges.iter().map(|r| r.y.1).fold(f64::NEG_INFINITY, f64::max);
    let cap = ranges.iter().map(|r| r.cap).fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return;
    }
    let cap = if spec.ylim.as_ref().and_then(|l| l.value[1]).is_some() { hi } else { cap };
    for range in ranges {
        range.y = (lo, hi);
        range.cap = cap;
    }
}

/// What the interval of a point with faults shows (`exec::evaluate::latency_interval`).
fn fault_map_sentence(maps: u32) -> String {
    if maps > 1 {
        format!(
            "With faults each replication draws its own fault map: the intervals are across up \
             to {maps} maps and include how the latency varies from map to map, not only the \
             simulation noise (the two parts: intermediates.latency_ci95_noise and \
             intermediates.fault_map_sd)."
        )
    } else {
        "With faults the intervals are the simulation noise given one fault map; the map-to-map \
         variation needs more replications."
            .to_owned()
    }
}

fn caption(spec: &FigureSpec, data: &FigureData, flags: &Flags) -> String {
    let mut sentences = Vec::new();
    let model = if data.model_points > 0 {
        format!("Lines: model, {} points per scenario", data.model_points)
    } else {
        "Lines: model".to_owned()
    };
    match (flags.has_model, flags.has_simulation) {
        (true, true) if flags.has_ci => sentences
            .push(format!("{model}; markers: simulation mean with 95% confidence interval.")),
        (true, true) => sentences.push(format!("{model}; markers: simulation.")),
        (true, false) => sentences.push(format!("{model} (no simulation results).")),
        (false, true) => sentences.push("Markers: simulation (no model results).".to_owned()),
        (false, false) => sentences.push("No finite results to plot.".to_owned()),
    }
    if let Some(maps) = flags.fault_maps.filter(|_| flags.has_ci) {
        sentences.push(fault_map_sentence(maps));
    }
    if flags.has_saturation {
        sentences.push("Dashed vertical lines: model saturation point.".to_owned());
    }
    let ylim_top = spec.ylim.as_ref().and_then(|limits| limits.value[1]).is_some();
    if flags.clipped && ylim_top {
        sentences.push(
            "Open triangles on the top edge mark simulation points above the axis or saturated."
                .to_owned(),
        );
    } else if flags.clipped && columns::is_latency(&spec.y) {
        sentences.push(format!(
            "The y axis is capped at {ZERO_LOAD_FACTOR}\u{d7} the zero-load latency of each panel \
             or the largest finite simulated value, whichever is larger; open triangles on the \
             top edge mark simulation points beyond the cap or saturated."
        ));
    } else if flags.has_saturated_simulation {
        sentences
            .push("Open triangles on the top edge mark saturated simulation points.".to_owned());
    }
    if flags.has_deadlock {
        sentences.push("Crosses on the top edge mark simulations that deadlocked.".to_owned());
    }
    if flags.has_imprecise {
        sentences.push(
            "Open circles mark simulation points that stopped short of their target precision \
             (estimates)."
                .to_owned(),
        );
    }
    if flags.clipped_bar {
        sentences.push(
            "Confidence bars that run past the axis are cut there and end in an arrowhead."
                .to_owned(),
        );
    }
    match (spec.log_x, spec.log_y) {
        (true, true) => sentences.push("Logarithmic axes.".to_owned()),
        (true, false) => sentences.push("Logarithmic x axis.".to_owned()),
        (false, true) => sentences.push("Logarithmic y axis.".to_owned()),
        (false, false) => {}
    }
    if spec.shared_y {
        sentences.push("All panels share the y axis range.".to_owned());
    }
    if let Some(cap) = data.thinned {
        sentences.push(format!(
            "Series of more than {cap} points show {cap} evenly spaced ones; every point is in results.parquet."
        ));
    }
    sentences.join(" ")
}

/// The tidy CSV of one page: one line per plotted point, saturation line, or simulation point
/// drawn as a marker on the axis edge, with the figure, the panel, the series label, the
/// method, what the point is drawn as (`line`, `marker`, `imprecise`, `saturated`, `deadlock`,
/// `saturation_line`), x, y, the CI half-width and the scenario columns of the series.
fn csv(
    number: usize,
    spec: &FigureSpec,
    data: &FigureData,
    page: std::ops::Range<usize>,
) -> String {
    use super::tables::csv_field;
    let mut header: Vec<String> = ["figure", "panel", "panel_title", "series", "method", "kind"]
        .iter()
        .map(|name| (*name).to_owned())
        .collect();
    let x_name = spec.x.clone();
    let y_name = if spec.y == spec.x { format!("{}_y", spec.y) } else { spec.y.clone() };
    header.extend([x_name, y_name, "ci95".to_owned()]);
    header.extend(columns::SCENARIO_COLUMNS.iter().map(|name| (*name).to_owned()));
    let mut out = header.iter().map(|field| csv_field(field)).collect::<Vec<_>>().join(",");
    out.push('\n');
    let number_text = |value: Option<f64>| value.map(|v| format!("{v}")).unwrap_or_default();
    for (index, panel) in data.panels.iter().enumerate().skip(page.start).take(page.len()) {
        let letter = panel_letter(index);
        for series in &panel.series {
            let scenario: Vec<String> = columns::SCENARIO_COLUMNS
                .iter()
                .map(|name| csv_field(&columns::text(&series.scenario, name).unwrap_or_default()))
                .collect();
            let mut line = |method: &str, kind: &str, x: f64, y: Option<f64>, ci: Option<f64>| {
                let fields = [
                    number.to_string(),
                    letter.clone(),
                    csv_field(&panel.title),
                    csv_field(&series.label),
                    method.to_owned(),
                    kind.to_owned(),
                    format!("{x}"),
                    number_text(y),
                    number_text(ci),
                ];
                out.push_str(&fields.join(","));
                for field in &scenario {
                    out.push(',');
                    out.push_str(field);
                }
                out.push('\n');
            };
            for &(x, y) in &series.model {
                line("model", "line", x, Some(y), None);
            }
            if let Some(x) = series.saturation_x {
                line("model", "saturation_line", x, None, None);
            }
            for &(x, y, ci) in &series.simulation {
                line("simulation", "marker", x, Some(y), ci);
            }
            for &(x, y) in &series.simulation_imprecise {
                line("simulation", "imprecise", x, Some(y), None);
            }
            for &x in &series.simulation_saturated {
                line("simulation", "saturated", x, None, None);
            }
            for &x in &series.simulation_deadlocked {
                line("simulation", "deadlock", x, None, None);
            }
        }
    }
    out
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

/// `V = 2` for numeric columns, the value in the field's words for text columns (`torus`,
/// `Duato`, `uniform traffic`).
fn label_part(column: &str, value: Option<String>) -> String {
    let value = value.unwrap_or_else(|| "none".to_owned());
    match columns::kind(column) {
        Some(columns::Kind::Text) => columns::value_label(column, &value),
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

/// The width a figure spec asks for, or the default: one column for a single panel, the page
/// for more.
fn width_of(spec: &FigureSpec, panels: usize) -> FigureWidth {
    spec.width.unwrap_or(if panels > 1 { FigureWidth::Page } else { FigureWidth::Column })
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
