//! The figures drawn from a bundle's side tables rather than from `results.parquet`:
//! `kind: histogram` (`histograms.parquet`) and `kind: link_heatmap` (`links.parquet`), one
//! page per point that `point` selects (`points`).

use std::collections::HashMap;
use std::path::Path;

use super::labels::panel_letter;
use super::{Figure, conditions, heatmap, histogram, points};
use crate::report::ReportError;
use crate::spec::report::{FigureKind, FigureSpec};
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

/// Figure `number` of kind `histogram` or `link_heatmap`: one [`Figure`] per selected point
/// (`fig<N>_...` for one, `fig<N>a_...`, `fig<N>b_...` for several).
pub(crate) fn build(
    number: usize,
    spec: &FigureSpec,
    rows: &[Row],
    tables: &SideTables,
) -> Result<Vec<Figure>, ReportError> {
    let error = |message: String| ReportError::Figure { number, message };
    crate::report::columns::check_figure(spec).map_err(error)?;
    let selected = points::select(rows, spec.point);
    let stem_of = |index: usize, what: &str| {
        let letter = if selected.len() > 1 { panel_letter(index) } else { String::new() };
        format!("fig{number}{letter}_{what}")
    };
    let mut figures = Vec::with_capacity(selected.len());
    match spec.kind {
        FigureKind::Lines => return Ok(Vec::new()),
        FigureKind::LinkHeatmap => {
            let table = tables.links.as_deref().ok_or_else(|| {
                error(
                    "a link_heatmap needs the bundle's links.parquet: set \
                     `methods.simulation.link_loads: true` and run the spec again"
                        .into(),
                )
            })?;
            let mut by_task: HashMap<&str, Vec<&LinkRow>> = HashMap::new();
            for link in table.iter().filter(|link| link.virtual_channel.is_none()) {
                by_task.entry(&link.key.task_id).or_default().push(link);
            }
            for (index, point) in selected.iter().enumerate() {
                let links = by_task.get(point.task_id.as_str()).cloned().unwrap_or_default();
                let title = spec.title.clone().unwrap_or_else(|| points::title(point, &selected));
                figures.push(heatmap::point_figure(
                    stem_of(index, "link_utilization"),
                    title,
                    point,
                    &links,
                ));
            }
        }
        FigureKind::Histogram => {
            let table = tables.histograms.as_deref().ok_or_else(|| {
                error(
                    "a histogram needs the bundle's histograms.parquet; run the spec again".into(),
                )
            })?;
            let quantity = spec.y.as_str();
            let mut by_task: HashMap<&str, Vec<&HistogramRow>> = HashMap::new();
            for bin in table.iter().filter(|bin| bin.quantity == quantity) {
                by_task.entry(&bin.key.task_id).or_default().push(bin);
            }
            for (index, point) in selected.iter().enumerate() {
                let mut bins = by_task.get(point.task_id.as_str()).cloned().unwrap_or_default();
                bins.sort_by_key(|bin| bin.bin_lower);
                let title = spec.title.clone().unwrap_or_else(|| points::title(point, &selected));
                figures.push(histogram::point_figure(
                    stem_of(index, &format!("{quantity}_histogram")),
                    title,
                    point,
                    quantity,
                    &bins,
                ));
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
