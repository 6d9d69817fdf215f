//! Row columns by name: the vocabulary that figure specs use, with labels, units and checks.
//!
//! A figure spec names columns as strings (`x: rate`, `lines: [virtual_channels]`). This file
//! is the only place that maps those names to [`Row`] fields, so a spec error ("unknown
//! column `ratee`; did you mean `rate`?") and an axis label ("Traffic generation rate
//! (messages/node/cycle)") come from the same table. Values are read through `serde_json`, so
//! the lookup follows the `Row` field names exactly; a test checks that [`COLUMNS`] lists every
//! field in order.

use serde_json::Value;

use crate::spec::report::FigureSpec;
use crate::store::row::Row;

/// Every column of a result row, in field (and CSV) order, with whether it is numeric.
pub(crate) const COLUMNS: &[(&str, Kind)] = &[
    ("experiment", Kind::Text),
    ("task_id", Kind::Text),
    ("scenario_id", Kind::Text),
    ("method", Kind::Text),
    ("evaluator", Kind::Text),
    ("topology", Kind::Text),
    ("radix", Kind::Number),
    ("dimensions", Kind::Number),
    ("nodes", Kind::Number),
    ("switching", Kind::Text),
    ("scouting_distance", Kind::Number),
    ("routing", Kind::Text),
    ("virtual_channels", Kind::Number),
    ("escape_channels", Kind::Number),
    ("buffer_depth", Kind::Number),
    ("router_delay", Kind::Number),
    ("input_speedup", Kind::Number),
    ("message_length", Kind::Number),
    ("message_length_second_moment", Kind::Number),
    ("fault_rate", Kind::Number),
    ("broadcast_fraction", Kind::Number),
    ("startup_latency", Kind::Number),
    ("ejection", Kind::Text),
    ("dateline", Kind::Text),
    ("tie_break", Kind::Text),
    ("traffic", Kind::Text),
    ("hotspot_fraction", Kind::Number),
    ("hotspot_nodes", Kind::Text),
    ("broadcast_order", Kind::Text),
    ("circuit_backoff", Kind::Number),
    ("circuit_retry_limit", Kind::Number),
    ("rate", Kind::Number),
    ("fraction_of_saturation", Kind::Number),
    ("saturation_rate", Kind::Number),
    ("latency", Kind::Number),
    ("latency_ci95", Kind::Number),
    ("network_latency", Kind::Number),
    ("source_wait", Kind::Number),
    ("unicast_latency", Kind::Number),
    ("multiplexing_degree", Kind::Number),
    ("channel_rate", Kind::Number),
    ("blocking_probability", Kind::Number),
    ("throughput", Kind::Number),
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

/// The columns that describe a scenario (the system evaluated), in display order.
pub(crate) const SCENARIO_COLUMNS: &[&str] = &[
    "topology",
    "radix",
    "dimensions",
    "nodes",
    "switching",
    "scouting_distance",
    "routing",
    "virtual_channels",
    "escape_channels",
    "buffer_depth",
    "router_delay",
    "input_speedup",
    "message_length",
    "message_length_second_moment",
    "fault_rate",
    "broadcast_fraction",
    "startup_latency",
    "ejection",
    "dateline",
    "tie_break",
    "traffic",
    "hotspot_fraction",
    "hotspot_nodes",
    "broadcast_order",
    "circuit_backoff",
    "circuit_retry_limit",
];

/// The scenario columns that describe a system in prose, in display order.
pub(crate) const DESCRIBE_COLUMNS: &[&str] = &[
    "topology",
    "radix",
    "dimensions",
    "switching",
    "scouting_distance",
    "routing",
    "virtual_channels",
    "escape_channels",
    "message_length",
    "fault_rate",
    "broadcast_fraction",
    "startup_latency",
    "traffic",
    "hotspot_fraction",
];

/// Whether a column holds numbers or text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
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
pub(crate) fn kind(name: &str) -> Option<Kind> {
    COLUMNS.iter().find(|(column, _)| *column == name).map(|(_, kind)| *kind)
}

/// Prefix of a figure axis that reads one of a row's intermediates: `intermediates.p_s`.
pub(crate) const INTERMEDIATE_PREFIX: &str = "intermediates.";

/// The value of column `name` in `row` as a number (`None` for null, text or unknown names);
/// `intermediates.<key>` reads that key of the row's `intermediates` object.
pub(crate) fn number(row_json: &Value, name: &str) -> Option<f64> {
    let value = match name.strip_prefix(INTERMEDIATE_PREFIX) {
        Some(key) => {
            let text = row_json.get("intermediates").and_then(Value::as_str)?;
            serde_json::from_str::<Value>(text).ok()?.get(key).and_then(Value::as_f64)
        }
        None => row_json.get(name).and_then(Value::as_f64),
    };
    value.filter(|value| value.is_finite())
}

/// The value of column `name` in `row` as display text (`None` for null).
pub(crate) fn text(row_json: &Value, name: &str) -> Option<String> {
    match row_json.get(name)? {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(match number.as_f64() {
            Some(value) if number.is_f64() => format_number(value),
            _ => number.to_string(),
        }),
        other => Some(other.to_string()),
    }
}

/// A row as a JSON object keyed by column name (the generic accessor behind [`number`] and
/// [`text`]).
pub(crate) fn to_json(row: &Row) -> Value {
    // Serializing a struct of plain fields into a `Value` cannot fail; fall back to null.
    serde_json::to_value(row).unwrap_or(Value::Null)
}

/// Axis label with unit for a numeric column, as the papers write it.
pub(crate) fn axis_label(name: &str) -> String {
    let label = match name {
        "rate" => "Traffic generation rate (messages/node/cycle)",
        "latency" => "Latency (cycles)",
        "latency_ci95" => "95% CI half-width (cycles)",
        "network_latency" => "Network latency (cycles)",
        "source_wait" => "Source-queue wait (cycles)",
        "unicast_latency" => "Unicast latency (cycles)",
        "fraction_of_saturation" => "Load (fraction of saturation rate)",
        "saturation_rate" => "Saturation rate (messages/node/cycle)",
        "throughput" => "Accepted throughput (messages/node/cycle)",
        "channel_rate" => "Channel arrival rate (messages/cycle)",
        "multiplexing_degree" => "Multiplexing degree",
        "blocking_probability" => "Blocking probability",
        "hops" => "Mean hops",
        "message_length" => "Message length (flits)",
        "virtual_channels" => "Virtual channels per physical channel",
        "scouting_distance" => "Scouting distance K",
        "fault_rate" => "Node-failure probability",
        "broadcast_fraction" => "Broadcast fraction",
        "startup_latency" => "Start-up latency (cycles)",
        "wall_seconds" => "Wall-clock time (s)",
        "offered_throughput" => "Offered throughput (messages/node/cycle)",
        "throughput_min" => "Accepted throughput, least-served node (messages/node/cycle)",
        "throughput_max" => "Accepted throughput, best-served node (messages/node/cycle)",
        "flit_throughput" => "Accepted throughput (flits/node/cycle)",
        "flit_throughput_min" => "Accepted throughput, least-served node (flits/node/cycle)",
        "flit_throughput_max" => "Accepted throughput, best-served node (flits/node/cycle)",
        "source_drops" => "Messages dropped at the source",
        // An intermediate gets its symbol and meaning where the table below knows the key,
        // else the key itself.
        other => match other.strip_prefix(INTERMEDIATE_PREFIX) {
            Some(key) => {
                return INTERMEDIATE_LABELS
                    .iter()
                    .find(|(known, _)| *known == key)
                    .map_or_else(|| key.to_owned(), |(_, label)| (*label).to_owned());
            }
            None => return other.replace('_', " "),
        },
    };
    label.to_owned()
}

/// Axis labels of the intermediates figures plot most, by key: the papers' symbol, what it
/// is, and its unit. Keys both evaluators report mean the same thing in both (`docs/models.md`
/// lists every model's keys).
pub(crate) const INTERMEDIATE_LABELS: &[(&str, &str)] = &[
    ("p_s", "P_S, set-up success probability"),
    ("p_f", "P_F, set-up failure probability"),
    ("p_v", "P_V, all-VCs-busy probability"),
    ("v_bar", "V\u{304}, multiplexing degree"),
    ("w_s", "W_s, source wait (cycles)"),
    ("lambda_c", "\u{3bb}_c (messages/channel/cycle)"),
    ("lambda_cr", "\u{3bb}_cr, copies/channel/cycle"),
    ("setup_time", "C, path set-up time (cycles)"),
];

/// Short symbol for a column in legends and panel titles (`V`, `M`, `k`, ...).
pub(crate) fn symbol(name: &str) -> String {
    let symbol = match name {
        "radix" => "k",
        "dimensions" => "n",
        "nodes" => "N",
        "scouting_distance" => "K",
        "virtual_channels" => "V",
        "escape_channels" => "V2",
        "message_length" => "M",
        "fault_rate" => "θ",
        "broadcast_fraction" => "β",
        "startup_latency" => "Δ",
        "buffer_depth" => "B",
        other => return other.replace('_', " "),
    };
    symbol.to_owned()
}

/// `torus, k = 8, n = 2, wormhole, V = 2` from the given columns of a row. Left out: nulls,
/// a zero fault rate, broadcast or hotspot fraction, the start-up latency Δ where there are no
/// broadcasts (it applies to broadcasts only), and the radix of a hypercube (always 2).
pub(crate) fn describe(row_json: &Value, names: &[&str]) -> String {
    let no_broadcasts = number(row_json, "broadcast_fraction").is_none_or(|beta| beta == 0.0);
    let hypercube = text(row_json, "topology").as_deref() == Some("hypercube");
    names
        .iter()
        .filter_map(|name| {
            let value = text(row_json, name)?;
            let zero_default =
                matches!(*name, "fault_rate" | "broadcast_fraction" | "hotspot_fraction");
            if zero_default && number(row_json, name) == Some(0.0) {
                return None;
            }
            if (*name == "startup_latency" && no_broadcasts) || (*name == "radix" && hypercube) {
                return None;
            }
            Some(match (kind(name), *name) {
                (_, "traffic") => format!("{value} traffic"),
                (Some(Kind::Text), _) => value,
                _ => format!("{} = {value}", symbol(name)),
            })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Splits [`DESCRIBE_COLUMNS`] into those with one value over all rows and those that vary.
pub(crate) fn constant_and_varying(rows_json: &[Value]) -> (Vec<&'static str>, Vec<&'static str>) {
    DESCRIBE_COLUMNS.iter().partition(|name| {
        let mut values = rows_json.iter().map(|json| text(json, name));
        let first = values.next().flatten();
        values.all(|value| value == first)
    })
}

/// [`constant_and_varying`] over rows, one row's JSON at a time (a run of many load points
/// never holds them all); also returns the first row's JSON, for [`describe`].
pub(crate) fn constant_and_varying_rows<'a>(
    rows: impl IntoIterator<Item = &'a Row>,
) -> (Vec<&'static str>, Vec<&'static str>, Option<Value>) {
    let mut rows = rows.into_iter();
    let Some(first) = rows.next().map(to_json) else {
        return (DESCRIBE_COLUMNS.to_vec(), Vec::new(), None);
    };
    let first_values: Vec<Option<String>> =
        DESCRIBE_COLUMNS.iter().map(|name| text(&first, name)).collect();
    let mut varies = vec![false; DESCRIBE_COLUMNS.len()];
    for row in rows {
        let json = to_json(row);
        for (index, name) in DESCRIBE_COLUMNS.iter().enumerate() {
            if !varies[index] && text(&json, name) != first_values[index] {
                varies[index] = true;
            }
        }
    }
    let pick = |vary: bool| -> Vec<&'static str> {
        DESCRIBE_COLUMNS
            .iter()
            .zip(&varies)
            .filter(|(_, varies)| **varies == vary)
            .map(|(name, _)| *name)
            .collect()
    };
    (pick(false), pick(true), Some(first))
}

/// Whether a column is a latency whose values explode near saturation (so the y axis is capped).
pub(crate) fn is_latency(name: &str) -> bool {
    matches!(name, "latency" | "network_latency" | "source_wait" | "unicast_latency")
}

/// Formats a number compactly with four significant digits (`0.0125`, `123.4`, `18250`).
pub(crate) fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value == value.trunc() && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    if !(-4..=15).contains(&magnitude) {
        return format!("{value:.3e}");
    }
    let decimals = (3 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

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
        .map(|candidate| (edit_distance(&lowered, candidate), *candidate))
        .filter(|(distance, candidate)| {
            *distance <= 2.max(candidate.len() / 4) || candidate.starts_with(lowered.as_str())
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b_chars: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b_chars.len()).collect();
    for (i, a_char) in a.chars().enumerate() {
        let mut current = vec![i + 1; b_chars.len() + 1];
        for (j, b_char) in b_chars.iter().enumerate() {
            let substitution = previous[j] + usize::from(a_char != *b_char);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b_chars.len()]
}

/// The model latency to compare with (and plot against) a simulated one. With no broadcasts in
/// the traffic (`broadcast_fraction = 0`) the simulator measures unicasts only, so a model that
/// reports unicasts separately (`broadcast_hypercube`: `latency` is its broadcast latency,
/// eq. (1)) is compared through its `unicast_latency`.
pub(crate) fn comparable_model_latency(model_row: &Row) -> Option<f64> {
    if model_row.broadcast_fraction == 0.0 && model_row.unicast_latency.is_some() {
        model_row.unicast_latency
    } else {
        model_row.latency
    }
}
