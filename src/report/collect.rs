//! What a report keeps of a run's rows, taken one at a time as they stream past
//! ([`Collector`]): of each row only what the report's figures and summary read, and whole rows
//! only for the parts that read whole rows (the tables, the histograms and link heat maps),
//! when the spec asks for them.
//!
//! A 1,000,000-point sweep's rows take 4 GB (a row is 2 KB inline and more on the heap); what a
//! figure of them needs is a few hundred bytes per point (`figure::PlotFields`), so the bundle
//! is written, `results.parquet` and report together, without ever holding the rows
//! (`bundle::write_bundle`).

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::columns::{self, ConstantAndVarying};
use super::figure::{self, Interner, PlotFields, PlotRow};
use super::pages;
use crate::spec::report::{FigureKind, ReportSpec};
use crate::store::row::Row;

/// A run's rows as the report reads them ([`Collector::finish`], or [`Collected::of`]).
#[derive(Debug)]
pub struct Collected {
    /// The names of the values each plotted row keeps (`figure::plot_columns`).
    plot_columns: Vec<String>,
    /// The rows a figure may plot (no saturation search's), with their scenario's index in
    /// `scenarios`; empty when the spec has no figure.
    plot: Vec<(PlotFields, usize)>,
    /// Per scenario, in the order of its first row: that row and its scenario columns as JSON.
    scenarios: Vec<(Row, Value)>,
    /// Every row, when a histogram or link heat map reads them.
    rows: Option<Vec<Row>>,
    /// The rows of the spec's load grid (no dense model curve's), when a table reads them.
    grid_rows: Option<Vec<Row>>,
    /// The summary of the load points (the grid's rows but the saturation searches').
    summary: pages::Summary,
    /// The distinct seeds of the simulation replications.
    seeds: BTreeSet<u64>,
}

impl Collected {
    /// `rows` collected for the report of `spec`.
    pub fn of(spec: &ReportSpec, rows: &[Row]) -> Collected {
        let mut collector = Collector::new(spec);
        for row in rows {
            collector.push(row);
        }
        collector.finish()
    }

    /// The plotted rows, each with its scenario's columns and first row.
    pub(crate) fn plot_rows(&self) -> Vec<PlotRow<'_>> {
        self.plot
            .iter()
            .map(|(row, scenario)| {
                let (scenario_row, scenario) = &self.scenarios[*scenario];
                PlotRow { row, columns: &self.plot_columns, scenario, scenario_row }
            })
            .collect()
    }

    /// Every row (for a histogram or a link heat map; empty when the spec has none).
    pub(crate) fn rows(&self) -> &[Row] {
        self.rows.as_deref().unwrap_or_default()
    }

    /// The rows of the spec's load grid (for the tables; empty when the spec has none).
    pub(crate) fn grid_rows(&self) -> &[Row] {
        self.grid_rows.as_deref().unwrap_or_default()
    }

    pub(crate) fn summary(&self) -> &pages::Summary {
        &self.summary
    }

    pub(crate) fn seeds(&self) -> &BTreeSet<u64> {
        &self.seeds
    }
}

/// Takes a run's rows one at a time ([`Collector::push`]) into a [`Collected`].
#[derive(Debug)]
pub struct Collector {
    collected: Collected,
    /// `collected.scenarios`' index of each scenario id.
    scenario_index: HashMap<String, usize>,
    interner: Interner,
    summary: Summary,
    figures: bool,
}

impl Collector {
    /// A collector for the report of `spec`.
    pub fn new(spec: &ReportSpec) -> Collector {
        let side_figures = spec.figures.iter().any(|figure| figure.kind != FigureKind::Lines);
        Collector {
            collected: Collected {
                plot_columns: figure::plot_columns(&spec.figures),
                plot: Vec::new(),
                scenarios: Vec::new(),
                rows: side_figures.then(Vec::new),
                grid_rows: (!spec.tables.is_empty()).then(Vec::new),
                summary: pages::Summary::default(),
                seeds: BTreeSet::new(),
            },
            scenario_index: HashMap::new(),
            interner: Interner::default(),
            summary: Summary::default(),
            figures: !spec.figures.is_empty(),
        }
    }

    /// Takes the next row (in plan order). The report reads rows as `results.parquet` holds
    /// them: without their link loads and histograms, which it reads from their own files.
    pub fn push(&mut self, row: &Row) {
        let collected = &mut self.collected;
        let scenario = match self.scenario_index.get(row.scenario_id.as_str()) {
            Some(&index) => index,
            None => {
                let index = collected.scenarios.len();
                collected.scenarios.push((plain(row), figure::scenario_json(row)));
                self.scenario_index.insert(row.scenario_id.clone(), index);
                index
            }
        };
        if let Some(seed) = row.seed.filter(|_| row.method == "simulation") {
            collected.seeds.insert(seed);
        }
        if self.figures && !row.is_saturation_search() {
            let fields = PlotFields::of(row, &collected.plot_columns, &mut self.interner);
            collected.plot.push((fields, scenario));
        }
        if let Some(rows) = &mut collected.rows {
            rows.push(plain(row));
        }
        if !row.is_dense() {
            if let Some(grid_rows) = &mut collected.grid_rows {
                grid_rows.push(plain(row));
            }
            if !row.is_saturation_search() {
                self.summary.push(row);
            }
        }
    }

    /// The rows taken.
    pub fn finish(mut self) -> Collected {
        self.collected.summary = self.summary.finish();
        self.collected
    }
}

/// `row` without its link loads and histograms.
fn plain(row: &Row) -> Row {
    if row.link_loads.is_none() && row.histograms.is_none() {
        return row.clone();
    }
    let mut plain = row.clone();
    plain.link_loads = None;
    plain.histograms = None;
    plain
}

/// The summary of the load points ([`pages::Summary`]), taking them one at a time.
#[derive(Debug, Default)]
struct Summary {
    rows: usize,
    model_rows: usize,
    simulation_points: usize,
    replication_rows: usize,
    scenarios: BTreeSet<String>,
    /// The lowest and highest finite rate.
    rates: Option<(f64, f64)>,
    /// Rows per status, in the order of each status's first row.
    statuses: Vec<pages::StatusCount>,
    described: ConstantAndVarying,
    evaluators: BTreeSet<String>,
}

impl Summary {
    fn push(&mut self, row: &Row) {
        self.rows += 1;
        match (row.method.as_str(), row.replication) {
            ("model", _) => self.model_rows += 1,
            ("simulation", None) => self.simulation_points += 1,
            ("simulation", Some(_)) => self.replication_rows += 1,
            _ => {}
        }
        if !self.scenarios.contains(&row.scenario_id) {
            self.scenarios.insert(row.scenario_id.clone());
        }
        if row.rate.is_finite() {
            let rate = row.rate;
            self.rates =
                Some(self.rates.map_or((rate, rate), |(lo, hi)| (lo.min(rate), hi.max(rate))));
        }
        match self.statuses.iter_mut().find(|entry| entry.status == row.status) {
            Some(entry) => entry.count += 1,
            None => self.statuses.push(pages::StatusCount { status: row.status.clone(), count: 1 }),
        }
        self.described.push(row);
        if !self.evaluators.contains(&row.evaluator) {
            self.evaluators.insert(row.evaluator.clone());
        }
    }

    fn finish(self) -> pages::Summary {
        let rate_range = match self.rates {
            Some((lo, hi)) if lo == hi => columns::format_number(lo),
            Some((lo, hi)) => {
                format!("{} to {}", columns::format_number(lo), columns::format_number(hi))
            }
            None => String::new(),
        };
        let mut statuses = self.statuses;
        statuses.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.status.cmp(&b.status)));
        let (constant, varying, first) = self.described.finish();
        let common = first.map(|first| columns::describe(&first, &constant)).unwrap_or_default();
        let varying: Vec<String> = varying.iter().map(|name| columns::symbol(name)).collect();
        pages::Summary {
            rows: self.rows,
            model_rows: self.model_rows,
            simulation_points: self.simulation_points,
            replication_rows: self.replication_rows,
            scenarios: self.scenarios.len(),
            rate_range,
            statuses,
            common,
            varying: varying.join(", "),
            evaluators: self.evaluators.into_iter().filter(|name| !name.is_empty()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::report::{FigureSpec, TableKind};
    use crate::store::row::{DENSE_GRID, SATURATION_SEARCH};

    /// Model rows of two scenarios: a load point, a dense curve's point and a saturation
    /// search's row each, then a simulation replication.
    fn rows() -> Vec<Row> {
        let mut rows = Vec::new();
        for (scenario, rate) in [("s1", 0.01), ("s2", 0.02)] {
            let row = |load_grid: Option<&str>, measure: Option<&str>| Row {
                scenario_id: scenario.into(),
                method: "model".into(),
                status: "ok".into(),
                rate,
                latency: Some(30.0),
                load_grid: load_grid.map(String::from),
                measure: measure.map(String::from),
                ..Row::default()
            };
            rows.push(row(None, None));
            rows.push(row(Some(DENSE_GRID), None));
            rows.push(row(None, Some(SATURATION_SEARCH)));
        }
        rows.push(Row {
            scenario_id: "s1".into(),
            method: "simulation".into(),
            status: "ok".into(),
            replication: Some(0),
            seed: Some(7),
            rate: 0.03,
            ..Row::default()
        });
        rows
    }

    fn spec(figures: bool, tables: bool) -> ReportSpec {
        let figure = FigureSpec { x: "rate".into(), y: "latency".into(), ..FigureSpec::default() };
        ReportSpec {
            template_dir: None,
            figures: if figures { vec![figure] } else { Vec::new() },
            tables: if tables { vec![TableKind::Results] } else { Vec::new() },
        }
    }

    /// A spec with a figure and no table keeps no whole row, only what the figure reads of
    /// every row but the saturation searches'; a table keeps the grid's rows whole.
    #[test]
    fn whole_rows_are_kept_only_for_what_reads_them() {
        let rows = rows();
        let figure_only = Collected::of(&spec(true, false), &rows);
        assert!(figure_only.rows().is_empty());
        assert!(figure_only.grid_rows().is_empty());
        let plotted = figure_only.plot_rows();
        assert_eq!(plotted.len(), 5);
        assert!(plotted.iter().all(|plot_row| plot_row.row.measure.is_none()));
        assert!(plotted[1].row.dense);
        assert_eq!(plotted[4].scenario_row.scenario_id, "s1", "the scenario's first row");
        assert_eq!(plotted[0].number("latency"), Some(30.0));
        assert_eq!(plotted[0].number("rate"), Some(0.01));
        // Shared, not copied per row.
        assert!(std::sync::Arc::ptr_eq(&plotted[0].row.method, &plotted[2].row.method));

        let tables_only = Collected::of(&spec(false, true), &rows);
        assert!(tables_only.plot_rows().is_empty());
        let grid: Vec<&str> =
            tables_only.grid_rows().iter().map(|row| row.scenario_id.as_str()).collect();
        assert_eq!(grid, ["s1", "s1", "s2", "s2", "s1"], "every row but the dense curves'");
    }

    /// The summary counts the load points: neither the dense curves' rows nor the saturation
    /// searches'; the seeds are the simulation's, from every row.
    #[test]
    fn the_summary_counts_the_load_points() {
        let collected = Collected::of(&spec(false, false), &rows());
        let summary = collected.summary();
        assert_eq!(summary.rows, 3);
        assert_eq!((summary.model_rows, summary.replication_rows), (2, 1));
        assert_eq!(summary.scenarios, 2);
        assert_eq!(summary.rate_range, "0.01 to 0.03");
        assert_eq!(collected.seeds().iter().copied().collect::<Vec<_>>(), [7]);
    }
}
