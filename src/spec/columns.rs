//! The result columns by name, with whether each is numeric: what a spec's figures and
//! tables may name, and the check of a figure's columns (so that a typo fails before any task
//! runs, "unknown column `ratee`; did you mean `rate`?").
//!
//! The list is the row's own columns, the scenario table's ([`fields::COLUMNS`]), then the load
//! and what was measured; a test in `report` holds it to `store::row::Row`, field by field.
//! It lives here, below `plan`, `store` and `report`, because validation needs it; `report`
//! reads it for its labels and tables.

use super::report::{FigureKind, FigureSpec};
use crate::scenario::fields;

/// Every column of a result row, in field (and CSV) order, with whether it is numeric: the
/// row's own columns, the scenario table's ([`fields::COLUMNS`]), then the load and what was
/// measured.
pub const COLUMNS: &[(&str, Kind)] = &all_columns();

/// The columns before the scenario's.
const LEADING: [(&str, Kind); 5] = [
    ("experiment", Kind::Text),
    ("task_id", Kind::Text),
    ("scenario_id", Kind::Text),
    ("method", Kind::Text),
    ("evaluator", Kind::Text),
];

/// The columns after the scenario's.
const TRAILING: [(&str, Kind); 63] = [
    ("rate", Kind::Number),
    ("fraction_of_saturation", Kind::Number),
    ("trace_time_scale", Kind::Number),
    ("trace_flit_load", Kind::Number),
    ("saturation_rate", Kind::Number),
    ("latency", Kind::Number),
    ("latency_ci95", Kind::Number),
    ("network_latency", Kind::Number),
    ("source_wait", Kind::Number),
    ("unicast_latency", Kind::Number),
    ("round_trip_latency", Kind::Number),
    ("latency_p50", Kind::Number),
    ("latency_p90", Kind::Number),
    ("latency_p95", Kind::Number),
    ("latency_p99", Kind::Number),
    ("latency_max", Kind::Number),
    ("latency_p50_ci95", Kind::Number),
    ("latency_p90_ci95", Kind::Number),
    ("latency_p95_ci95", Kind::Number),
    ("latency_p99_ci95", Kind::Number),
    ("network_latency_p50", Kind::Number),
    ("network_latency_p90", Kind::Number),
    ("network_latency_p95", Kind::Number),
    ("network_latency_p99", Kind::Number),
    ("network_latency_max", Kind::Number),
    ("source_wait_p50", Kind::Number),
    ("source_wait_p90", Kind::Number),
    ("source_wait_p95", Kind::Number),
    ("source_wait_p99", Kind::Number),
    ("source_wait_max", Kind::Number),
    ("unicast_latency_p50", Kind::Number),
    ("unicast_latency_p90", Kind::Number),
    ("unicast_latency_p95", Kind::Number),
    ("unicast_latency_p99", Kind::Number),
    ("unicast_latency_max", Kind::Number),
    ("multiplexing_degree", Kind::Number),
    ("channel_rate", Kind::Number),
    ("blocking_probability", Kind::Number),
    ("throughput", Kind::Number),
    ("throughput_ci95", Kind::Number),
    ("hops", Kind::Number),
    ("status", Kind::Text),
    ("error", Kind::Text),
    ("replication", Kind::Number),
    ("replications", Kind::Number),
    ("seed", Kind::Number),
    ("cycles", Kind::Number),
    ("flit_hops", Kind::Number),
    ("messages_measured", Kind::Number),
    ("wall_seconds", Kind::Number),
    ("intermediates", Kind::Text),
    ("fault_seed", Kind::Number),
    ("fault_count", Kind::Number),
    ("fault_map", Kind::Text),
    ("measure", Kind::Text),
    ("offered_throughput", Kind::Number),
    ("throughput_min", Kind::Number),
    ("throughput_max", Kind::Number),
    ("flit_throughput", Kind::Number),
    ("flit_throughput_min", Kind::Number),
    ("flit_throughput_max", Kind::Number),
    ("source_drops", Kind::Number),
    ("load_grid", Kind::Text),
];

const fn all_columns()
-> [(&'static str, Kind); LEADING.len() + fields::COLUMNS.len() + TRAILING.len()] {
    let mut out = [("", Kind::Text); LEADING.len() + fields::COLUMNS.len() + TRAILING.len()];
    let mut i = 0;
    while i < LEADING.len() {
        out[i] = LEADING[i];
        i += 1;
    }
    let mut f = 0;
    while f < fields::FIELDS.len() {
        let field = &fields::FIELDS[f];
        if field.column {
            out[i] = (field.name, if field.value.is_number() { Kind::Number } else { Kind::Text });
            i += 1;
        }
        f += 1;
    }
    let mut t = 0;
    while t < TRAILING.len() {
        out[i] = TRAILING[t];
        i += 1;
        t += 1;
    }
    out
}

/// Whether a column holds numbers or text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Integer or floating-point values (possibly null).
    Number,
    /// Strings (possibly null).
    Text,
}

/// Checks the column names of one figure spec: `x` and `y` must be numeric columns, `panels`
/// and `lines` any columns, and no column may appear twice.
///
/// The error names the offending field and column, suggests a close valid name ("did you
/// mean `rate`?") and lists the valid ones. The spec validator calls this early so that a
/// typo fails before any task runs.
pub fn check_figure(fig: &FigureSpec) -> Result<(), String> {
    match fig.kind {
        FigureKind::Lines => {}
        FigureKind::Histogram => {
            return match fig.y.as_str() {
                "latency" | "network_latency" | "source_wait" => Ok(()),
                other => Err(format!(
                    "a histogram draws `y: latency`, `network_latency` or `source_wait`, not \
                     `{other}`"
                )),
            };
        }
        FigureKind::LinkHeatmap => return Ok(()),
    }
    check_axis("x", &fig.x)?;
    check_axis("y", &fig.y)?;
    let mut seen: Vec<&str> = Vec::new();
    for (field, names) in [("panels", &fig.panels), ("lines", &fig.lines)] {
        for name in names {
            if kind(name).is_none() {
                return Err(unknown_message(field, name, &all_names(), "columns"));
            }
            if seen.contains(&name.as_str()) || *name == fig.x || *name == fig.y {
                return Err(format!(
                    "column `{name}` is used twice in the figure (in `{field}` and elsewhere); \
                     use each column in at most one of x, y, panels and lines"
                ));
            }
            seen.push(name);
        }
    }
    Ok(())
}

/// The kind of a column, or `None` when no such column exists.
pub fn kind(name: &str) -> Option<Kind> {
    COLUMNS.iter().find(|(column, _)| *column == name).map(|(_, kind)| *kind)
}

/// Prefix of a figure axis that reads one of a row's intermediates: `intermediates.p_s`.
pub const INTERMEDIATE_PREFIX: &str = "intermediates.";

/// The figure axes computed from a row's columns rather than stored in it: the offered load in
/// flits/node/cycle (`rate` times `message_length`, so that message lengths compare).
/// (`fraction_of_saturation` is a stored column; the figures fill it in from the scenario's model
/// saturation rate where a row lacks it.)
pub const DERIVED_COLUMNS: &[&str] = &["flit_rate"];

fn check_axis(field: &str, name: &str) -> Result<(), String> {
    if let Some(key) = name.strip_prefix(INTERMEDIATE_PREFIX) {
        let valid = !key.is_empty()
            && key.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        return if valid {
            Ok(())
        } else {
            Err(format!(
                "`{name}` in figure `{field}`: an intermediate is `intermediates.<key>` with a \
                 key of lowercase letters, digits and `_` (`runner solve` and `runner simulate` \
                 print each evaluator's keys), for example `intermediates.p_s`"
            ))
        };
    }
    if DERIVED_COLUMNS.contains(&name) {
        return Ok(());
    }
    match kind(name) {
        Some(Kind::Number) => Ok(()),
        Some(Kind::Text) => Err(format!(
            "column `{name}` in figure `{field}` is not numeric; `{field}` needs one of: {}",
            numeric_names().join(", ")
        )),
        None => Err(format!(
            "{}, or `intermediates.<key>` for one of the evaluator's intermediates",
            unknown_message(field, name, &numeric_names(), "numeric columns")
        )),
    }
}

fn unknown_message(field: &str, name: &str, valid: &[&str], what: &str) -> String {
    let hint = match suggest(name, valid) {
        Some(close) => format!("; did you mean `{close}`?"),
        None => ".".to_owned(),
    };
    format!("unknown column `{name}` in figure `{field}`{hint} Valid {what}: {}", valid.join(", "))
}

fn all_names() -> Vec<&'static str> {
    COLUMNS.iter().map(|(name, _)| *name).collect()
}

fn numeric_names() -> Vec<&'static str> {
    COLUMNS.iter().filter(|(_, kind)| *kind == Kind::Number).map(|(name, _)| *name).collect()
}

/// The valid name closest to `name` by edit distance, when it is close enough to be a typo.
fn suggest<'a>(name: &str, valid: &[&'a str]) -> Option<&'a str> {
    let lowered = name.to_lowercase().replace(['-', ' '], "_");
    valid
        .iter()
        .map(|candidate| (crate::suggest::edit_distance(&lowered, candidate), *candidate))
        .filter(|(distance, candidate)| {
            *distance <= 2.max(candidate.len() / 4) || candidate.starts_with(lowered.as_str())
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}
