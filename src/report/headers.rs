//! Table column headers: how a table names every column it shows, in the field's words with
//! its unit. A scenario field's header is in its row of the scenario table
//! (`scenario::fields::FIELDS`); this file holds the others and looks both up by key.
//!
//! Each header has a plain form for the HTML page and Markdown (`Message length M (flits)`)
//! and a LaTeX form of two lines, a name (`$M$`, math for the papers' symbols) and a second
//! line, usually the unit (`(flits)`), so that a paper's table stays narrow. The tables
//! (`tables.rs`, `saturation.rs`) look headers up here by key: a scenario field's key is its
//! column name in `results.parquet` (`message_length`), the other keys name what the table
//! computes (`simulation_latency_ci`, `bias`).

use super::tables::Column;
use crate::scenario::fields;

/// How a table names one column.
#[derive(Clone, Copy)]
struct Header {
    /// The column name or computed quantity.
    key: &'static str,
    /// The plain name, in words, with the symbol where the papers use one.
    text: &'static str,
    /// The unit, or empty for a dimensionless quantity or text.
    unit: &'static str,
    /// The LaTeX name (math for symbols).
    tex: &'static str,
    /// The LaTeX second header line (the unit in parentheses, or the rest of a long name).
    tex_second: &'static str,
}

const fn header(
    key: &'static str,
    text: &'static str,
    unit: &'static str,
    tex: &'static str,
    tex_second: &'static str,
) -> Header {
    Header { key, text, unit, tex, tex_second }
}

/// Every header but the scenario fields' (those are in their row of [`fields::FIELDS`]), by
/// key.
const HEADERS: &[Header] = &[
    // Load and results.
    header("method", "Method", "", "Method", ""),
    header("rate", "Rate \u{3bb}", "msg/node/cycle", "$\\lambda$", "(msg/node/cycle)"),
    header(
        "fraction_of_saturation",
        "Load",
        "fraction of saturation",
        "Load",
        "($\\lambda/\\lambda_{\\mathrm{sat}}$)",
    ),
    header("trace_time_scale", "Time scale", "", "Time", "scale"),
    header("trace_flit_load", "Offered load", "flits/node/cycle", "Load", "(flits/node/cycle)"),
    header("latency", "Latency", "cycles", "Latency", "(cycles)"),
    header("latency_ci", "Latency \u{b1} 95% CI", "cycles", "Latency", "(cycles)"),
    header("throughput", "Throughput", "msg/node/cycle", "Throughput", "(msg/node/cycle)"),
    header("replications", "Replications", "", "Reps.", ""),
    header("status", "Status", "", "Status", ""),
    header("note", "Note", "", "Note", ""),
    // The per-load comparison.
    header("model_latency", "Model latency", "cycles", "Model", "(cycles)"),
    header("simulation_latency_ci", "Simulation \u{b1} 95% CI", "cycles", "Simulation", "(cycles)"),
    header("signed_error", "Error", "%", "Error", "(\\%)"),
    // The agreement table.
    header("scenario", "Scenario", "", "Scenario", ""),
    header("load_band", "Load", "of saturation", "Load", "(of sat.)"),
    header("points", "Points", "", "Points", ""),
    header("imprecise_points", "Of which imprecise", "", "Of which", "imprecise"),
    header("bias", "Bias", "%", "Bias", "(\\%)"),
    header("mean_abs_error", "Mean |error|", "%", "Mean $|e|$", "(\\%)"),
    header("max_abs_error", "Max |error|", "%", "Max $|e|$", "(\\%)"),
    header("within_tolerance", "Within tolerance", "95% conf.", "Within", "tol."),
    header("outside_tolerance", "Outside tolerance", "95% conf.", "Outside", "tol."),
    header("undecided", "Undecided", "", "Unde-", "cided"),
    header("simulation_unstable", "Sim. unstable", "", "Sim.", "unstable"),
    header("model_unstable", "Model unstable", "", "Model", "unstable"),
    header("compared", "Compared", "", "Compared", ""),
    header("not_compared", "Not compared", "", "Not", "compared"),
    // The coverage table.
    header("estimate", "Estimate", "", "Estimate", ""),
    header("replications_with_interval", "Replications", "with interval", "Reps.", ""),
    header("covered", "Covered", "", "Covered", ""),
    header("coverage", "Coverage [95% CI]", "%", "Coverage", "[95\\% CI] (\\%)"),
    header("sd_ratio", "SD ratio", "observed / implied", "SD", "ratio"),
    header("pairs", "Pairs", "", "Pairs", ""),
    header("pairs_apart", "Pairs apart", "", "Pairs", "apart"),
    header("pairs_apart_fraction", "Apart [95% CI]", "%", "Apart", "[95\\% CI] (\\%)"),
    // The saturation table.
    header(
        "model_saturation_rate",
        "Model saturation rate",
        "msg/node/cycle",
        "Model sat.",
        "(msg/node/cycle)",
    ),
    header(
        "simulated_max_throughput",
        "Simulated max. accepted",
        "msg/node/cycle",
        "Sim. max.",
        "(msg/node/cycle)",
    ),
    header("simulated_over_model", "Simulated / model", "", "Sim./model", ""),
    header("offered_at_max", "Offered at max.", "msg/node/cycle", "Offered", "(msg/node/cycle)"),
    header(
        "flit_throughput_at_max",
        "Accepted at max.",
        "flits/node/cycle",
        "Flits",
        "(flits/node/cycle)",
    ),
    header("knee_rate", "Knee (largest stable)", "msg/node/cycle", "Knee", "(msg/node/cycle)"),
    header("saturation_searches", "Searches", "", "Searches", ""),
    header("throughput_points", "Points", "", "Points", ""),
    header("saturated_points", "Saturated points", "", "Saturated", "points"),
];

/// The column `key` of a table, numeric or not: its plain header with the unit in
/// parentheses and its two LaTeX header lines. An unknown key (a programming error, caught by
/// a test) gets the key in words.
pub(crate) fn column(key: &str, numeric: bool) -> Column {
    match lookup(key) {
        Some(header) => Column {
            header: if header.unit.is_empty() {
                header.text.to_owned()
            } else {
                format!("{} ({})", header.text, header.unit)
            },
            tex: header.tex.to_owned(),
            tex_second: header.tex_second.to_owned(),
            numeric,
            in_tex: true,
            unit: header.unit,
            sweep: fields::get(key).is_some() || matches!(key, "rate" | "fraction_of_saturation"),
        },
        None => Column {
            header: key.replace('_', " "),
            tex: super::tables::tex_escape(&key.replace('_', " ")),
            tex_second: String::new(),
            numeric,
            in_tex: true,
            unit: "",
            sweep: false,
        },
    }
}

/// The header of `key`: a scenario field's from its table row, any other from [`HEADERS`].
fn lookup(key: &str) -> Option<Header> {
    if let Some(field) = fields::get(key) {
        return field.header.map(|h| header(field.name, h.text, h.unit, h.tex, h.tex_second));
    }
    HEADERS.iter().find(|header| header.key == key).copied()
}

/// Whether `key` has a header here.
#[cfg(test)]
pub(crate) fn is_known(key: &str) -> bool {
    lookup(key).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_column_has_a_header_with_its_unit() {
        for name in super::super::columns::SCENARIO_COLUMNS {
            assert!(is_known(name), "no table header for scenario column `{name}`");
        }
        assert_eq!(column("message_length", true).header, "Message length M (flits)");
        assert_eq!(column("throughput", true).header, "Throughput (msg/node/cycle)");
        assert_eq!(column("latency", true).header, "Latency (cycles)");
        let rate = column("rate", true);
        assert_eq!(
            (rate.tex.as_str(), rate.tex_second.as_str()),
            ("$\\lambda$", "(msg/node/cycle)")
        );
        assert_eq!(column("fault_rate", true).tex, "$\\theta$");
    }

    #[test]
    fn keys_are_unique() {
        for (index, header) in HEADERS.iter().enumerate() {
            assert!(
                HEADERS[index + 1..].iter().all(|other| other.key != header.key)
                    && fields::get(header.key).is_none(),
                "duplicate header `{}`",
                header.key
            );
        }
    }
}
