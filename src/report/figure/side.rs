//! The figures drawn from a bundle's side tables rather than from `results.parquet`:
//! `kind: histogram` (`histograms.parquet`) and `kind: link_heatmap` (`links.parquet`), one
//! page per point that `point` selects (`points`).

use std::collections::HashMap;
use std::path::Path;

use super::labels::panel_letter;
use super::{Figure, conditions, heatmap, histogram, points};
use crate::report::ReportError;
use crate::spec::report::{FigureKind, FigureSpec, PointName, PointSelector};
use crate::store::histograms::{self, HistogramRow};
use crate::store::links::{self, LinkRow};
use crate::store::row::Row;

/// The side tables of a bundle, read when a figure needs them.
#[derive(Default)]
pub(crate) struct SideTables {
    links: Option<Vec<LinkRow>>,
    histograms: Option<Vec<HistogramRow>>,
}

impl SideTables {
    /// Reads the tables the figures of `specs` draw from `bundle_dir` (regular files only; a
    /// table no figure needs is not read).
    pub(crate) fn read(bundle_dir: &Path, specs: &[FigureSpec]) -> Result<SideTables, ReportError> {
        let needs = |kind| specs.iter().any(|spec| spec.kind == kind);
        let read_links = needs(FigureKind::LinkHeatmap);
        let read_histograms = needs(FigureKind::Histogram);
        let present = |file: &str| {
            std::fs::symlink_metadata(bundle_dir.join(file)).is_ok_and(|m| m.is_file())
        };
        let failed = |file: &str| {
            let path = bundle_dir.join(file);
            move |error: crate::store::parquet::StoreError| ReportError::Read {
                path,
                source: std::io::Error::other(error.to_string()),
            }
        };
        Ok(SideTables {
            links: match read_links && present(links::FILE) {
                true => {
                    Some(links::read(&bundle_dir.join(links::FILE)).map_err(failed(links::FILE))?)
                }
                false => None,
            },
            histograms: match read_histograms && present(histograms::FILE) {
                true => Some(
                    histograms::read(&bundle_dir.join(histograms::FILE))
                        .map_err(failed(histograms::FILE))?,
                ),
                false => None,
            },
        })
    }
}

/// A one-panel page of the column width, as the side figures draw them.
pub(super) fn page(
    stem: String,
    title: String,
    caption: String,
    svg: String,
    csv: String,
) -> Figure {
    Figure {
        stem,
        title,
        caption,
        svg,
        csv,
        width_pt: super::COLUMN_WIDTH_PT,
        layout: super::Layout::default(),
    }
}

/// A page with nothing to draw: the title and, in the figure and its caption, a note saying
/// why. A figure without data is still a figure, so the bundle is never refused for it.
pub(super) fn note_page(stem: String, title: String, note: String, csv_header: &str) -> Figure {
    use super::svg::{Anchor, LABEL_FONT_PT, Svg, TICK_FONT_PT};
    let width = super::COLUMN_WIDTH_PT;
    let lines = super::draw::wrap(&note, width - 24.0, TICK_FONT_PT);
    let height = 40.0 + 10.0 * lines.len() as f64;
    let mut svg = Svg::new(width, height);
    svg.text(width / 2.0, 11.0, LABEL_FONT_PT, Anchor::Middle, &title);
    for (index, line) in lines.iter().enumerate() {
        svg.text(width / 2.0, 32.0 + 10.0 * index as f64, TICK_FONT_PT, Anchor::Middle, line);
    }
    page(stem, title, note, svg.finish(), csv_header.to_owned())
}

/// Why `selector` picks no point of `rows`: the note of a side figure with nothing to draw.
fn no_point_note(rows: &[Row], spec: &FigureSpec) -> String {
    let simulated: Vec<&Row> = rows
        .iter()
        .filter(|row| row.method == "simulation" && row.replication.is_none() && !row.is_dense())
        .collect();
    if simulated.is_empty() {
        return "Nothing to draw: the bundle has no simulation results.".to_owned();
    }
    let mut statuses: Vec<(&str, usize)> = Vec::new();
    for row in &simulated {
        match statuses.iter_mut().find(|(status, _)| *status == row.status) {
            Some((_, count)) => *count += 1,
            None => statuses.push((&row.status, 1)),
        }
    }
    let statuses: Vec<String> =
        statuses.iter().map(|(status, count)| format!("{count} {status}")).collect();
    let chosen = match spec.point {
        None | Some(PointSelector::Named(PointName::HighestStable)) => {
            ": `point: all` or `point: <rate>` draws them anyway"
        }
        _ => "",
    };
    format!(
        "Nothing to draw: no simulated point finished ok (of {} simulated points: {}){chosen}.",
        simulated.len(),
        statuses.join(", ")
    )
}

/// Why a selected point has no data in its side table (`file`, which `missing` says the bundle
/// lacks): the note of its page.
fn no_data_note(point: &Row, what: &str, file: &str, missing: bool, get_it: &str) -> String {
    if point.status != "ok" {
        format!(
            "Nothing to draw: the bundle holds no {what} for this point; its simulation is {}.",
            point.status
        )
    } else if missing {
        format!("Nothing to draw: the bundle has no {file}; {get_it}.")
    } else {
        format!("Nothing to draw: {file} holds no {what} for this point.")
    }
}

/// Figure `number` of kind `histogram` or `link_heatmap`: one [`Figure`] per selected point
/// (`fig<N>_...` for one, `fig<N>a_...`, `fig<N>b_...` for several). A figure with nothing to
/// draw (no point selected, no side table, no data for a point) is a page with a note.
pub(crate) fn build(
    number: usize,
    spec: &FigureSpec,
    rows: &[Row],
    tables: &SideTables,
) -> Result<Vec<Figure>, ReportError> {
    let error = |message: String| ReportError::Figure { number, message };
    crate::report::columns::check_figure(spec).map_err(error)?;
    // The rows of the scenarios `select` keeps.
    let kept: Vec<Row>;
    let rows = if spec.select.is_some() {
        kept =
            rows.iter().filter(|row| spec.selects(&super::scenario_json(row))).cloned().collect();
        &kept[..]
    } else {
        rows
    };
    let selected = points::select(rows, spec.point);
    let stem_of = |index: usize, what: &str| {
        let letter = if selected.len() > 1 { panel_letter(index) } else { String::new() };
        format!("fig{number}{letter}_{what}")
    };
    let mut figures = Vec::with_capacity(selected.len().max(1));
    match spec.kind {
        FigureKind::Lines => return Ok(Vec::new()),
        FigureKind::LinkHeatmap => {
            let what = "link_utilization";
            if selected.is_empty() {
                let title = spec.title.clone().unwrap_or_else(|| "Link utilisation".to_owned());
                let note = no_point_note(rows, spec);
                return Ok(vec![note_page(stem_of(0, what), title, note, heatmap::CSV_HEADER)]);
            }
            let mut by_task: HashMap<&str, Vec<&LinkRow>> = HashMap::new();
            for link in tables.links.iter().flatten().filter(|link| link.virtual_channel.is_none())
            {
                by_task.entry(&link.key.task_id).or_default().push(link);
            }
            for (index, point) in selected.iter().enumerate() {
                let links = by_task.get(point.task_id.as_str()).cloned().unwrap_or_default();
                let title = spec.title.clone().unwrap_or_else(|| points::title(point, &selected));
                figures.push(if links.is_empty() {
                    let note = no_data_note(
                        point,
                        "link loads",
                        links::FILE,
                        tables.links.is_none(),
                        "set `methods.simulation.link_loads: true` and run the spec again",
                    );
                    note_page(stem_of(index, what), title, note, heatmap::CSV_HEADER)
                } else {
                    heatmap::point_figure(stem_of(index, what), title, point, &links)
                });
            }
        }
        FigureKind::Histogram => {
            let quantity = spec.y.as_str();
            let what = format!("{quantity}_histogram");
            if selected.is_empty() {
                let title = spec
                    .title
                    .clone()
                    .unwrap_or_else(|| format!("Distribution of the {}", columns_name(quantity)));
                let note = no_point_note(rows, spec);
                return Ok(vec![note_page(stem_of(0, &what), title, note, histogram::CSV_HEADER)]);
            }
            let mut by_task: HashMap<&str, Vec<&HistogramRow>> = HashMap::new();
            for bin in tables.histograms.iter().flatten().filter(|bin| bin.quantity == quantity) {
                by_task.entry(&bin.key.task_id).or_default().push(bin);
            }
            for (index, point) in selected.iter().enumerate() {
                let mut bins = by_task.get(point.task_id.as_str()).cloned().unwrap_or_default();
                bins.sort_by_key(|bin| bin.bin_lower);
                let title = spec.title.clone().unwrap_or_else(|| points::title(point, &selected));
                figures.push(if bins.is_empty() {
                    let note = no_data_note(
                        point,
                        &format!("{} histogram", columns_name(quantity)),
                        histograms::FILE,
                        tables.histograms.is_none(),
                        "run the spec again to write it",
                    );
                    note_page(stem_of(index, &what), title, note, histogram::CSV_HEADER)
                } else {
                    histogram::point_figure(stem_of(index, &what), title, point, quantity, &bins)
                });
            }
        }
    }
    for (figure, point) in figures.iter_mut().zip(&selected) {
        if let Some(sentence) = conditions::sentence(std::iter::once(*point)) {
            figure.caption = format!("{} {sentence}", figure.caption);
        }
    }
    Ok(figures)
}

/// A quantity's name in running text: `latency`, `network latency`.
fn columns_name(quantity: &str) -> String {
    let label = crate::report::columns::axis_label(quantity);
    label.split(" (").next().unwrap_or(quantity).to_lowercase()
}
