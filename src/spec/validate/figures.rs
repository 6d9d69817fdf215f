//! Figure bounds known before anything runs: how many panels and lines each figure of the
//! report will draw, so that an unreadable figure is refused at validation.

use super::*;

/// Upper bounds, known before anything runs, on the panels and lines a figure will draw.
///
/// Scenario columns are counted exactly over the expanded scenarios (zipped fields included);
/// the other columns by what can vary: `method` over the methods, `rate` over the load points,
/// `replication` and `seed` over the replications, and per-row columns (`task_id`, `latency`,
/// ...) over the rows.
pub(super) struct FigureBounds {
    /// Each scenario's columns as JSON (`scenario::fields`), for the scenario columns.
    pub(super) scenarios: Vec<serde_json::Value>,
    pub(super) loads: usize,
    pub(super) methods: usize,
    pub(super) replications: usize,
    pub(super) fractions: bool,
}

impl FigureBounds {
    pub(super) fn new(
        scenarios: &[ScenarioPoint],
        load: &Load,
        model: bool,
        simulation: Option<&SimulationChoice>,
        external: &[crate::spec::external::ExternalChoice],
    ) -> FigureBounds {
        FigureBounds {
            scenarios: scenarios
                .iter()
                .map(|p| {
                    let columns = fields::columns()
                        .map(|f| (f.name.to_owned(), (f.of)(&p.scenario).to_json()));
                    serde_json::Value::Object(columns.collect())
                })
                .collect(),
            loads: load.len(),
            methods: usize::from(model) + usize::from(simulation.is_some()) + external.len(),
            replications: simulation
                .map(|s| s.replications as usize)
                .into_iter()
                .chain(external.iter().map(|e| e.replications as usize))
                .max()
                .unwrap_or(0),
            fractions: matches!(load, Load::FractionOfSaturation(_)),
        }
    }

    /// How many values a non-scenario column can take over the whole run.
    pub(super) fn values(&self, column: &str) -> usize {
        let scenarios = self.scenarios.len();
        let rows = scenarios * self.loads * (self.methods + self.replications);
        match column {
            "experiment" | "replications" => 1,
            "method" | "evaluator" => self.methods,
            "rate" if self.fractions => scenarios * self.loads,
            "rate" | "fraction_of_saturation" | "trace_time_scale" | "trace_flit_load" => {
                self.loads
            }
            "saturation_rate" => scenarios,
            "replication" | "seed" => self.replications + 1,
            "status" => 4,
            _ => rows.max(1),
        }
    }

    /// The panel key of a scenario: its values of the scenario columns among `columns`.
    pub(super) fn key(row: &serde_json::Value, columns: &[String]) -> String {
        columns
            .iter()
            .filter(|c| fields::SHOWN.contains(&c.as_str()))
            .map(|c| row[c.as_str()].to_string())
            .collect::<Vec<_>>()
            .join("\u{1f}")
    }

    /// The scenarios of each panel (by the scenario columns among `panels`).
    pub(super) fn panels(&self, panels: &[String]) -> Vec<Vec<&serde_json::Value>> {
        let mut groups: std::collections::BTreeMap<String, Vec<&serde_json::Value>> =
            std::collections::BTreeMap::new();
        for row in &self.scenarios {
            groups.entry(Self::key(row, panels)).or_default().push(row);
        }
        groups.into_values().collect()
    }

    /// The most panels, and the most lines within one panel. A figure draws one series per
    /// scenario (and per combination of the non-scenario `lines` columns): a scenario column
    /// in neither `panels` nor `lines` that varies within a panel is folded into the lines
    /// (the legend names it), so the lines of a panel are its scenarios, not only the
    /// combinations of the `lines` columns.
    pub(super) fn counts(&self, panels: &[String], lines: &[String]) -> (usize, usize) {
        let other = |columns: &[String]| {
            columns
                .iter()
                .filter(|c| !fields::SHOWN.contains(&c.as_str()))
                .fold(1usize, |acc, c| acc.saturating_mul(self.values(c)))
        };
        let groups = self.panels(panels);
        let lines_per_panel = groups.iter().map(Vec::len).max().unwrap_or(1).max(1);
        (
            groups.len().max(1).saturating_mul(other(panels)),
            lines_per_panel.saturating_mul(other(lines)),
        )
    }

    /// The scenario columns in neither `panels` nor `lines` that vary within some panel,
    /// with the most values one panel has of each.
    pub(super) fn folded(
        &self,
        figure: &crate::spec::report::FigureSpec,
    ) -> Vec<(&'static str, usize)> {
        let groups = self.panels(&figure.panels);
        fields::SHOWN
            .iter()
            .copied()
            .filter(|c| !figure.panels.iter().chain(&figure.lines).any(|named| named == c))
            .filter_map(|c| {
                let most = groups
                    .iter()
                    .map(|group| {
                        group
                            .iter()
                            .map(|row| row[c].to_string())
                            .collect::<std::collections::BTreeSet<_>>()
                            .len()
                    })
                    .max()
                    .unwrap_or(0);
                (most > 1).then_some((c, most))
            })
            .collect()
    }

    /// The problem with a figure's `select`, when a value it gives matches no scenario.
    fn check_select(&self, figure: &crate::spec::report::FigureSpec) -> Result<(), String> {
        let Some(select) = &figure.select else { return Ok(()) };
        for (column, selection) in &select.value {
            for value in selection.values() {
                if !self
                    .scenarios
                    .iter()
                    .any(|scenario| value.matches(column, &scenario[column.as_str()]))
                {
                    let mut present: Vec<&serde_json::Value> =
                        self.scenarios.iter().map(|scenario| &scenario[column.as_str()]).collect();
                    present.sort_by(|a, b| match (a.as_f64(), b.as_f64()) {
                        (Some(a), Some(b)) => a.total_cmp(&b),
                        _ => a.to_string().cmp(&b.to_string()),
                    });
                    present.dedup();
                    let present: Vec<String> = present
                        .iter()
                        .map(|value| match value {
                            serde_json::Value::String(text) => text.clone(),
                            serde_json::Value::Null => {
                                fields::null_is(column).unwrap_or("null").to_owned()
                            }
                            other => other.to_string(),
                        })
                        .collect();
                    return Err(format!(
                        "`select: {{{column}: {value}}}` matches no scenario; the scenarios' `{column}` is {}",
                        present.join(", ")
                    ));
                }
            }
        }
        Ok(())
    }

    pub(super) fn check(&self, figure: &crate::spec::report::FigureSpec) -> Result<(), String> {
        use crate::spec::report::{MAX_LINES, MAX_PANELS};
        self.check_select(figure)?;
        // The panels and lines of the scenarios the figure draws.
        let selected;
        let this = if figure.select.is_some() {
            selected = FigureBounds {
                scenarios: self
                    .scenarios
                    .iter()
                    .filter(|scenario| figure.selects(scenario))
                    .cloned()
                    .collect(),
                ..*self
            };
            &selected
        } else {
            self
        };
        let (panels, lines) = this.counts(&figure.panels, &figure.lines);
        if panels > MAX_PANELS {
            return Err(format!(
                "`panels: [{}]` makes up to {panels} panels; at most {MAX_PANELS} are allowed (panel by columns with fewer values, or split the figure)",
                figure.panels.join(", ")
            ));
        }
        if lines > MAX_LINES {
            let mut folded: Vec<(&str, usize)> = this.folded(figure);
            // The node count follows from radix and dimensions; the legend leaves it out.
            if folded.iter().any(|(c, _)| matches!(*c, "radix" | "dimensions")) {
                folded.retain(|(c, _)| *c != "nodes");
            }
            let because = if folded.is_empty() {
                String::new()
            } else {
                let named: Vec<String> =
                    folded.iter().map(|(c, n)| format!("`{c}` ({n} values)")).collect();
                format!(
                    "; every scenario gets its own line, and {} {} within a panel without being in `panels` or `lines`, so {} folded into the lines",
                    named.join(" and "),
                    if folded.len() == 1 { "varies" } else { "vary" },
                    if folded.len() == 1 { "it is" } else { "they are" },
                )
            };
            return Err(format!(
                "`lines: [{}]` makes up to {lines} lines in one panel; at most {MAX_LINES} are allowed{because} (move a column to `panels`, or split the figure)",
                figure.lines.join(", ")
            ));
        }
        Ok(())
    }
}
