//! Which simulated points a `histogram` or `link_heatmap` figure draws (`FigureSpec::point`),
//! and how each is named in its title.

use crate::report::columns;
use crate::spec::report::{PointName, PointSelector};
use crate::store::row::Row;

/// The aggregate simulation rows of the spec's load grid that `selector` picks, in row order:
/// per scenario the highest `ok` load (the default), every point, or the point nearest a rate.
pub(super) fn select<'a>(rows: &'a [Row], selector: Option<PointSelector>) -> Vec<&'a Row> {
    let simulated: Vec<&Row> = rows
        .iter()
        .filter(|row| row.method == "simulation" && row.replication.is_none() && !row.is_dense())
        .collect();
    let mut scenarios: Vec<&str> = Vec::new();
    for row in &simulated {
        if !scenarios.contains(&row.scenario_id.as_str()) {
            scenarios.push(&row.scenario_id);
        }
    }
    let pick = |scenario: &str| -> Vec<&'a Row> {
        let of = simulated.iter().copied().filter(|row| row.scenario_id == scenario);
        match selector.unwrap_or(PointSelector::Named(PointName::HighestStable)) {
            PointSelector::Named(PointName::All) => of.collect(),
            PointSelector::Named(PointName::HighestStable) => of
                .filter(|row| row.status == "ok")
                .max_by(|a, b| a.rate.total_cmp(&b.rate))
                .into_iter()
                .collect(),
            PointSelector::Rate(rate) => of
                .min_by(|a, b| (a.rate - rate).abs().total_cmp(&(b.rate - rate).abs()))
                .into_iter()
                .collect(),
        }
    };
    scenarios.iter().flat_map(|scenario| pick(scenario)).collect()
}

/// The title of a point's figure: the scenario columns that vary among `points` (or the
/// topology when none does) and the load.
pub(super) fn title(point: &Row, points: &[&Row]) -> String {
    let (_, varying, _) = columns::constant_and_varying_rows(points.iter().copied());
    let json = columns::to_json(point);
    let varying: Vec<&str> = varying.into_iter().filter(|name| *name != "rate").collect();
    let scenario = if varying.is_empty() {
        columns::describe(&json, &["topology", "radix", "dimensions"])
    } else {
        columns::describe(&json, &varying)
    };
    let load = match point.fraction_of_saturation {
        Some(fraction) => format!(
            "{} = {} ({:.0}% of saturation)",
            columns::symbol("rate"),
            columns::format_number(point.rate),
            fraction * 100.0
        ),
        None => format!("{} = {}", columns::symbol("rate"), columns::format_number(point.rate)),
    };
    if scenario.is_empty() { load } else { format!("{scenario}, {load}") }
}
