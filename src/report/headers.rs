//! Table column headers: the one place that names every column a table shows, in the field's
//! words with its unit.
//!
//! Each header has a plain form for the HTML page and Markdown (`Message length M (flits)`)
//! and a LaTeX form of two lines, a name (`$M$`, math for the papers' symbols) and a second
//! line, usually the unit (`(flits)`), so that a paper's table stays narrow. The tables
//! (`tables.rs`, `saturation.rs`) look headers up here by key: a scenario field's key is its
//! column name in `results.parquet` (`message_length`), the other keys name what the table
//! computes (`simulation_latency_ci`, `bias`).

use super::tables::Column;

/// How a table names one column.
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

/// Every header, by key.
const HEADERS: &[Header] = &[
    // Scenario fields (column names of `results.parquet`).
    header("topology", "Topology", "", "Topology", ""),
    header("radix", "Radix k", "", "$k$", ""),
    header("dimensions", "Dimensions n", "", "$n$", ""),
    header("nodes", "Nodes N", "", "$N$", ""),
    header("terminals_per_router", "Terminals per router p", "", "$p$", ""),
    header("routers_per_group", "Routers per group a", "", "$a$", ""),
    header("global_links_per_router", "Global links per router h", "", "$h$", ""),
    header("graph", "Graph", "", "Graph", ""),
    header("graph_blake3", "Graph blake3", "", "Graph blake3", ""),
    header("switching", "Switching", "", "Switching", ""),
    header("scouting_distance", "Scouting distance K", "", "$K$", ""),
    header("routing", "Routing", "", "Routing", ""),
    header("virtual_channels", "Virtual channels V", "", "$V$", ""),
    header("escape_channels", "Escape channels V\u{2082}", "", "$V_2$", ""),
    header("buffer_depth", "Buffer depth B", "flits", "$B$", "(flits)"),
    header("router_delay", "Router delay", "cycles", "Router delay", "(cycles)"),
    header("input_speedup", "Input speed-up", "", "Speed-up", ""),
    header("message_length", "Message length M", "flits", "$M$", "(flits)"),
    header(
        "message_length_second_moment",
        "Second moment of M",
        "flits\u{b2}",
        "$\\overline{M^2}$",
        "(flits$^2$)",
    ),
    header("message_length_distribution", "Message lengths", "", "Lengths", ""),
    header("message_length_min", "Shortest message", "flits", "$M_{\\min}$", "(flits)"),
    header("message_length_max", "Longest message", "flits", "$M_{\\max}$", "(flits)"),
    header("fault_rate", "Node-failure probability \u{3b8}", "", "$\\theta$", ""),
    header("broadcast_fraction", "Broadcast fraction \u{3b2}", "", "$\\beta$", ""),
    header("startup_latency", "Start-up latency \u{394}", "cycles", "$\\Delta$", "(cycles)"),
    header("ejection", "Ejection", "", "Ejection", ""),
    header("dateline", "Dateline", "", "Dateline", ""),
    header("tie_break", "Tie break", "", "Tie break", ""),
    header("traffic", "Traffic", "", "Traffic", ""),
    header("hotspot_fraction", "Hotspot fraction h", "", "$h$", ""),
    header("hotspot_nodes", "Hotspot nodes", "", "Hotspot", "nodes"),
    header("injection_process", "Injection process", "", "Injection", ""),
    header("burst_length", "Mean burst length B", "messages", "$B$", "(messages)"),
    header("broadcast_order", "Broadcast order", "", "Broadcast", "order"),
    header("circuit_backoff", "Retry back-off", "cycles", "Back-off", "(cycles)"),
    header("circuit_retry_limit", "Retry limit", "", "Retry", "limit"),
    header("trace_blake3", "Trace (blake3)", "", "Trace", "(blake3)"),
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
    header("bias", "Bias", "%", "Bias", "(\\%)"),
    header("mean_abs_error", "Mean |error|", "%", "Mean $|e|$", "(\\%)"),
    header("max_abs_error", "Max |error|", "%", "Max $|e|$", "(\\%)"),
    header("simulation_unstable", "Sim. unstable", "", "Sim.", "unstable"),
    header("model_unstable", "Model unstable", "", "Model", "unstable"),
    header("compared", "Compared", "", "Compared", ""),
    header("not_compared", "Not compared", "", "Not", "compared"),
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
    header("throughput_points", "Points", "", "Points", ""),
    header("saturated_points", "Saturated points", "", "Saturated", "points"),
];

/// The column `key` of a table, numeric or not: its plain header with the unit in
/// parentheses and its two LaTeX header lines. An unknown key (a programming error, caught by
/// a test) gets the key in words.
pub(crate) fn column(key: &str, numeric: bool) -> Column {
    match HEADERS.iter().find(|header| header.key == key) {
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
        },
        None => Column {
            header: key.replace('_', " "),
            tex: super::tables::tex_escape(&key.replace('_', " ")),
            tex_second: String::new(),
            numeric,
            in_tex: true,
        },
    }
}

/// Whether `key` has a header here.
#[cfg(test)]
pub(crate) fn is_known(key: &str) -> bool {
    HEADERS.iter().any(|header| header.key == key)
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
                HEADERS[index + 1..].iter().all(|other| other.key != header.key),
                "duplicate header `{}`",
                header.key
            );
        }
    }
}
