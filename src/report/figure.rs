//! Figures as SVG: model lines, simulation markers with 95% CI bars, one panel per configuration.
//!
//! The layout follows Fig. 1 of the papers, styled for an IEEE journal: a figure is one column
//! (3.5 in, one panel per row) or the page width (7.16 in, two panels per row); lines are thin,
//! there is no grid or frame, the palette is Okabe-Ito without its yellow (safe for colour-blind
//! readers) and every series also has its own dash pattern and marker (`figure/style.rs`), so
//! no two series differ by colour alone and the figure survives greyscale printing; with
//! external methods a configuration's simulators share a colour and differ by fill and dash. A
//! series with simulation markers and no model line (throughput mode) has its markers joined by
//! a thin line. One legend per figure sits in a strip below the panels, never over data, names
//! series only by the scenario columns that vary independently
//! ([`legend_columns`](data::legend_columns)) in the papers' words (`columns::value_label`:
//! DOR, MIN, VAL, UGAL-L), and explains every status marker the figure holds. A figure whose panels do not
//! fit a 10 in page is split into pages `fig<N>a_...`, `fig<N>b_...` ([`pages`]). Drawing uses
//! plotters' SVG backend only, so no system font library is involved; text stays `<text>` with
//! the generic family `sans-serif`, which the PDF step maps to the bundled DejaVu Sans.
//!
//! Latencies explode near saturation, so for latency columns (means and the simulator's
//! percentiles, `columns::is_latency`) the y axis is capped at [`ZERO_LOAD_FACTOR`] times the
//! panel's zero-load value of the column (a percentile's is the simulation's lowest-load one:
//! the models have no percentiles) or at the largest finite simulated value, whichever is
//! larger. Where a series' simulation leaves the axis (a point beyond the cap or saturated) one
//! open triangle on the top edge marks it, not one per load beyond; deadlocked simulations are
//! crosses there; a simulation short of its target precision keeps its series' marker and its
//! interval at its estimate, with a ring around the marker (markers of several series that
//! meet at one x on the top edge stack downwards, so none hides another); a confidence bar that
//! runs past the axis ends in an arrowhead; the legend and the caption say which of these a
//! figure holds. Tick labels of an axis share one number of decimals (`0.0025, 0.0050`), or a
//! scaled form past four; a grid titles its outer axes only (the y title by the left column,
//! the x title under the lowest panel of each column). The y axis starts at 0 when the data
//! come near it and a little below the data otherwise; the spec's `xlim`, `ylim`, `log_x`,
//! `log_y`, `shared_y`, `y_from_zero`, `width`, `max_panels_per_page` and the label fields
//! override the defaults. A spec's `select` keeps only the scenarios whose columns hold the
//! values it gives (`FigureSpec::selects`): the panels, legend, CSV and caption see only those.
//!
//! Every page also gets a tidy CSV of exactly what it plots (`figures/<stem>.csv`, [`csv`](csv::csv)).
//!
//! Coordinates are in units of 1/[`UNITS_PER_PT`] pt: plotters works in integer pixels, and
//! a quarter point keeps curves smooth in print.
//!
//! This file builds a figure's pages ([`build`]) and splits the panels into pages ([`pages`]);
//! `figure/plot_row.rs` holds the rows a figure reads, `figure/data.rs` groups them into panels
//! and series (reading each axis through `figure/reader.rs`), `figure/ranges.rs` picks the axis
//! ranges, `figure/style.rs` gives each series its colour, dash and marker, `figure/draw.rs`
//! lays out and draws a page, `figure/caption.rs` and `figure/csv.rs`
//! write its caption and CSV, and `figure/labels.rs` names and orders panels and series. The
//! `histogram` and `link_heatmap` kinds are drawn from the side tables (`figure/side.rs`).

mod caption;
mod conditions;
mod csv;
mod data;
mod draw;
mod heatmap;
mod histogram;
mod labels;
mod plot_row;
mod points;
mod ranges;
mod reader;
pub(crate) mod side;
mod style;
mod svg;
#[cfg(test)]
mod tests;

use super::ReportError;
use super::columns;
use crate::spec::report::{FigureSpec, FigureWidth, MAX_LINES, MAX_PANELS};

use caption::{Flags, caption};
#[cfg(test)]
pub(crate) use data::MAX_FIGURE_POINTS;
use data::prepare;
pub(crate) use draw::Layout;
#[cfg(test)]
pub(crate) use histogram::MAX_BARS as MAX_HISTOGRAM_BARS;
use labels::{lower_first, panel_letter};
pub(crate) use plot_row::{Interner, PlotFields, PlotRow, plot_columns, scenario_json};
use ranges::{Ranges, ranges, share_y};

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
    // The legend explains the status markers of every page (it is the same on all of them).
    let geometry = draw::Geometry::new(spec, &data, &Flags::of(&data.panels, &ranges));
    let pages = pages(data.panels.len(), &geometry, spec);
    let conditions = conditions::sentence(
        rows.iter()
            .filter(|plot_row| spec.selects(plot_row.scenario))
            .map(|plot_row| plot_row.scenario_row),
    );
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
            csv: csv::csv(number, spec, &data, page.clone()),
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

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The width a figure spec asks for, or the default: one column for a single panel, the page
/// for more.
fn width_of(spec: &FigureSpec, panels: usize) -> FigureWidth {
    spec.width.unwrap_or(if panels > 1 { FigureWidth::Page } else { FigureWidth::Column })
}
