//! The tidy CSV of a figure page ([`csv`]): one line per plotted point, saturation line or
//! marker on the axis edge, with the scenario columns of its series.

use super::data::FigureData;
use super::labels::panel_letter;
use crate::report::columns;
use crate::spec::report::FigureSpec;

/// The tidy CSV of one page: one line per plotted point, saturation line, or simulation point
/// drawn as a marker on the axis edge, with the figure, the panel, the series label, the
/// method, what the point is drawn as (`line`, `marker`, `imprecise`, `saturated`, `deadlock`,
/// `saturation_line`), x, y, the CI half-width and the scenario columns of the series.
pub(super) fn csv(
    number: usize,
    spec: &FigureSpec,
    data: &FigureData,
    page: std::ops::Range<usize>,
) -> String {
    use crate::report::tables::csv_field;
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
            for &(x, y, ci) in &series.simulation_imprecise {
                line("simulation", "imprecise", x, Some(y), ci);
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
