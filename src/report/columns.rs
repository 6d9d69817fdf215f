//! Row columns by name, for the report: their values, labels, units and display.
//!
//! A figure spec names columns as strings (`x: rate`, `lines: [virtual_channels]`). The names
//! and kinds of the columns, and the check of a figure's columns, are the spec's
//! (`spec::columns`, re-exported here), so a spec error ("unknown column `ratee`; did you mean
//! `rate`?") and an axis label ("Traffic generation rate (messages/node/cycle)") name the same
//! columns. Values are read through `serde_json`, so the lookup follows the `Row` field names
//! exactly; a test checks that [`COLUMNS`] lists every field in order.

use serde::Serialize;
use serde_json::Value;

use crate::scenario::{TopologyKind, fields};
pub use crate::spec::columns::{COLUMNS, INTERMEDIATE_PREFIX, Kind, check_figure, kind};
use crate::store::row::Row;

/// The columns that describe a scenario (the system evaluated), in display order: the shown
/// fields of the scenario table ([`fields::SHOWN`]).
pub(crate) const SCENARIO_COLUMNS: &[&str] = &fields::SHOWN;

/// The scenario columns that describe a system in prose, in display order
/// ([`fields::DESCRIBED`]).
pub(crate) const DESCRIBE_COLUMNS: &[&str] = &fields::DESCRIBED;

/// Where a row's columns are read by name: its JSON object ([`to_json`], [`pick_json`]), or
/// the few columns a figure keeps of each plotted row (`figure::PlotRow`). A column the
/// source does not hold reads as absent (`None`), one it holds as null as `Value::Null`.
pub(crate) trait Lookup {
    /// The value of column `name`.
    fn get(&self, name: &str) -> Option<&Value>;
}

impl Lookup for Value {
    fn get(&self, name: &str) -> Option<&Value> {
        Value::get(self, name)
    }
}

/// The value of column `name` in `row` as a number (`None` for null, text or unknown names);
/// `intermediates.<key>` reads that key of the row's `intermediates` object.
pub(crate) fn number(row_json: &(impl Lookup + ?Sized), name: &str) -> Option<f64> {
    let value = match name.strip_prefix(INTERMEDIATE_PREFIX) {
        Some(key) => {
            let text = row_json.get("intermediates").and_then(Value::as_str)?;
            serde_json::from_str::<Value>(text).ok()?.get(key).and_then(Value::as_f64)
        }
        None => row_json.get(name).and_then(Value::as_f64),
    };
    value.filter(|value| value.is_finite())
}

/// [`text`] as figures and tables show it: a null cell of a field whose default the rows leave
/// null ([`fields::Field::null_is`]) reads as the default's name where the field is a
/// parameter of the row's system ([`is_parameter`]): a dragonfly's `absolute` arrangement, a
/// router's `drained` reallocation, where [`text`] gives nothing (and a legend said `none`);
/// a torus row still has no arrangement.
pub(crate) fn shown_text(row_json: &(impl Lookup + ?Sized), name: &str) -> Option<String> {
    text(row_json, name).or_else(|| {
        let applies = row_json.get(name).is_some() && is_parameter(row_json, name);
        fields::null_is(name).filter(|_| applies).map(str::to_owned)
    })
}

/// The value of column `name` in `row` as display text (`None` for null).
pub(crate) fn text(row_json: &(impl Lookup + ?Sized), name: &str) -> Option<String> {
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

/// The columns `names` of a row as a JSON object: [`to_json`] restricted to them, without
/// building the rest (a figure of many points reads a few columns of each row).
pub(crate) fn pick_json(row: &Row, names: &[&str]) -> Value {
    row.serialize(Pick { names, map: serde_json::Map::new() }).unwrap_or(Value::Null)
}

/// The serializer behind [`pick_json`]: takes a struct's fields named in `names` (each through
/// `serde_json::to_value`, so a picked column is exactly what [`to_json`] gives) and refuses
/// anything but a struct.
struct Pick<'a> {
    names: &'a [&'a str],
    map: serde_json::Map<String, Value>,
}

impl serde::ser::SerializeStruct for Pick<'_> {
    type Ok = Value;
    type Error = serde_json::Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Self::Error> {
        if self.names.contains(&key) {
            self.map.insert(key.to_string(), serde_json::to_value(value)?);
        }
        Ok(())
    }

    fn end(self) -> Result<Value, Self::Error> {
        Ok(Value::Object(self.map))
    }
}

/// Everything but a struct is refused.
macro_rules! refuse {
    ($($name:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $name(self, $(_: $arg),*) -> Result<Value, serde_json::Error> {
            Err(serde::ser::Error::custom("not a row"))
        })*
    };
}

impl<'a> serde::Serializer for Pick<'a> {
    type Ok = Value;
    type Error = serde_json::Error;
    type SerializeSeq = serde::ser::Impossible<Value, serde_json::Error>;
    type SerializeTuple = serde::ser::Impossible<Value, serde_json::Error>;
    type SerializeTupleStruct = serde::ser::Impossible<Value, serde_json::Error>;
    type SerializeTupleVariant = serde::ser::Impossible<Value, serde_json::Error>;
    type SerializeMap = serde::ser::Impossible<Value, serde_json::Error>;
    type SerializeStruct = Pick<'a>;
    type SerializeStructVariant = serde::ser::Impossible<Value, serde_json::Error>;

    refuse!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<Value, Self::Error> {
        Err(serde::ser::Error::custom("not a row"))
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<Value, Self::Error> {
        Err(serde::ser::Error::custom("not a row"))
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Value, Self::Error> {
        Err(serde::ser::Error::custom("not a row"))
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Self::Error> {
        Err(serde::ser::Error::custom("not a row"))
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Self::Error> {
        Err(serde::ser::Error::custom("not a row"))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Self::Error> {
        Err(serde::ser::Error::custom("not a row"))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Self::Error> {
        Err(serde::ser::Error::custom("not a row"))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Self::Error> {
        Err(serde::ser::Error::custom("not a row"))
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Self::Error> {
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Self::Error> {
        Err(serde::ser::Error::custom("not a row"))
    }
}

/// One display entry: key, the papers' symbol (`""` when they have none), what it is, and its
/// unit (`""` for a pure number).
pub(crate) type DisplayEntry = (&'static str, &'static str, &'static str, &'static str);

/// Display name and unit of every numeric column but the scenario's (those are in their
/// row of [`fields::FIELDS`]), every derived axis ([`DERIVED_COLUMNS`](crate::spec::columns::DERIVED_COLUMNS)) and every
/// intermediate key the models and the simulator report. A key ending in `_{i}` stands
/// for the indexed family (`pb_0`, `pb_1`, ...). Tests check that every numeric [`COLUMNS`]
/// entry and every key an evaluator emits is here.
pub(crate) const DISPLAY: &[DisplayEntry] = &[
    // Load and measured quantities.
    ("rate", "\u{3bb}_g", "traffic generation rate", "messages/node/cycle"),
    ("flit_rate", "", "offered load", "flits/node/cycle"),
    ("fraction_of_saturation", "", "load", "fraction of the model saturation rate"),
    ("trace_time_scale", "", "trace time scale", ""),
    ("trace_flit_load", "", "offered load of the trace", "flits/node/cycle"),
    ("saturation_rate", "", "model saturation rate", "messages/node/cycle"),
    ("latency", "", "latency", "cycles"),
    ("latency_ci95", "", "95% CI half-width", "cycles"),
    ("network_latency", "", "network latency", "cycles"),
    ("source_wait", "W_s", "source-queue wait", "cycles"),
    ("unicast_latency", "", "unicast latency", "cycles"),
    ("round_trip_latency", "", "round-trip latency", "cycles"),
    ("latency_p50", "", "latency, median", "cycles"),
    ("latency_p90", "", "latency, 90th percentile", "cycles"),
    ("latency_p95", "", "latency, 95th percentile", "cycles"),
    ("latency_p99", "", "latency, 99th percentile", "cycles"),
    ("latency_max", "", "latency, maximum", "cycles"),
    ("latency_p50_ci95", "", "95% CI half-width of the latency median", "cycles"),
    ("latency_p90_ci95", "", "95% CI half-width of the latency 90th percentile", "cycles"),
    ("latency_p95_ci95", "", "95% CI half-width of the latency 95th percentile", "cycles"),
    ("latency_p99_ci95", "", "95% CI half-width of the latency 99th percentile", "cycles"),
    ("network_latency_p50", "", "network latency, median", "cycles"),
    ("network_latency_p90", "", "network latency, 90th percentile", "cycles"),
    ("network_latency_p95", "", "network latency, 95th percentile", "cycles"),
    ("network_latency_p99", "", "network latency, 99th percentile", "cycles"),
    ("network_latency_max", "", "network latency, maximum", "cycles"),
    ("source_wait_p50", "", "source-queue wait, median", "cycles"),
    ("source_wait_p90", "", "source-queue wait, 90th percentile", "cycles"),
    ("source_wait_p95", "", "source-queue wait, 95th percentile", "cycles"),
    ("source_wait_p99", "", "source-queue wait, 99th percentile", "cycles"),
    ("source_wait_max", "", "source-queue wait, maximum", "cycles"),
    ("unicast_latency_p50", "", "unicast latency, median", "cycles"),
    ("unicast_latency_p90", "", "unicast latency, 90th percentile", "cycles"),
    ("unicast_latency_p95", "", "unicast latency, 95th percentile", "cycles"),
    ("unicast_latency_p99", "", "unicast latency, 99th percentile", "cycles"),
    ("unicast_latency_max", "", "unicast latency, maximum", "cycles"),
    ("multiplexing_degree", "V\u{304}", "multiplexing degree", ""),
    ("channel_rate", "\u{3bb}_c", "channel arrival rate", "messages/channel/cycle"),
    ("blocking_probability", "P_V", "blocking probability", ""),
    ("throughput", "", "accepted throughput", "messages/node/cycle"),
    ("throughput_ci95", "", "95% CI half-width of the throughput", "messages/node/cycle"),
    ("hops", "", "mean hops", "hops"),
    ("replication", "", "replication", ""),
    ("replications", "", "replications", ""),
    ("seed", "", "seed", ""),
    ("cycles", "", "simulated cycles", "cycles"),
    ("flit_hops", "", "flit hops", "flit hops"),
    ("messages_measured", "", "messages measured", "messages"),
    ("wall_seconds", "", "wall-clock time", "s"),
    ("fault_seed", "", "fault seed", ""),
    ("fault_count", "", "faulty nodes", "nodes"),
    ("offered_throughput", "", "offered throughput", "messages/node/cycle"),
    ("throughput_min", "", "accepted throughput, least-served node", "messages/node/cycle"),
    ("throughput_max", "", "accepted throughput, best-served node", "messages/node/cycle"),
    ("flit_throughput", "", "accepted throughput", "flits/node/cycle"),
    ("flit_throughput_min", "", "accepted throughput, least-served node", "flits/node/cycle"),
    ("flit_throughput_max", "", "accepted throughput, best-served node", "flits/node/cycle"),
    ("source_drops", "", "messages dropped at the source", "messages"),
    ("throttled_requests", "", "requests held back by the closed loop", "messages"),
    // Intermediates shared by several models and the simulator.
    ("p_v", "P_V", "all-VCs-busy probability", ""),
    ("v_bar", "V\u{304}", "multiplexing degree", ""),
    ("w_s", "W_s", "source wait", "cycles"),
    ("lambda_c", "\u{3bb}_c", "channel rate", "messages/channel/cycle"),
    ("iterations", "", "fixed-point iterations", ""),
    ("service_time", "S", "mean service time", "cycles"),
    // scouting_torus.
    ("setup_time", "C", "path set-up time", "cycles"),
    ("mean_c00", "C_00", "mean header time to the first hop", "cycles"),
    ("s_min", "S_min", "minimum service time", "cycles"),
    ("pb_{i}", "Pb_i", "blocking probability at hop i", ""),
    // broadcast_hypercube.
    ("p_a", "P_A", "adaptive-channel-busy probability", ""),
    ("lambda_cu", "\u{3bb}_cu", "unicast messages", "messages/channel/cycle"),
    ("lambda_cb", "\u{3bb}_cb", "broadcast source copies", "copies/channel/cycle"),
    ("lambda_cr", "\u{3bb}_cr", "replicated copies", "copies/channel/cycle"),
    ("lambda_s", "\u{3bb}_s", "source-queue arrival rate", "messages/node/cycle"),
    ("omega_bar", "\u{3c9}\u{304}", "mean replications per reception", ""),
    ("s_b", "S_b", "broadcast step service time", "cycles"),
    ("s_u", "S_u", "unicast service time", "cycles"),
    ("s_s", "S_s", "source service time", "cycles"),
    ("w_c", "W_c", "channel wait", "cycles"),
    ("one_step_latency", "L_b", "one-step broadcast latency", "cycles"),
    // circuit_torus_faults.
    ("p_s", "P_S", "set-up success probability", ""),
    ("p_f", "P_F", "set-up failure probability", ""),
    ("p_f_{i}", "P_F,i", "set-up failure probability at hop i", ""),
    ("lambda_e", "\u{3bb}_e", "effective generation rate", "messages/node/cycle"),
    ("t_n", "E[T_n]", "mean source service time", "cycles"),
    ("t_n2", "E[T_n\u{b2}]", "second moment of the source service time", "cycles\u{b2}"),
    ("t_r", "T_r", "mean retry time", "cycles"),
    ("xi_{i}", "\u{3be}_i", "exponent of hop i", ""),
    // nbc_torus.
    ("s_c", "S_c", "traffic-weighted service time", "cycles"),
    ("s_bar", "S\u{304}", "mean service time", "cycles"),
    ("v1", "V_1", "adaptive virtual channels", ""),
    ("v2", "V_2", "escape virtual channels", ""),
    ("pblock_base_{i}", "Pblock_i", "blocking base of escape class i", ""),
    ("s_h_{i}", "S_H,i", "service time at distance i", "cycles"),
    // fat_tree.
    ("max_throughput", "", "maximum throughput (Sec. 3.5)", "messages/node/cycle"),
    ("levels", "n", "levels", ""),
    ("lambda_up_{i}", "\u{3bb}_up,i", "up-channel rate at level i", "messages/channel/cycle"),
    ("x_up_{i}", "x_up,i", "up-channel service time at level i", "cycles"),
    ("w_up_{i}", "W_up,i", "up-channel wait at level i", "cycles"),
    ("r_up_{i}", "R_i", "probability of going up from level i", ""),
    ("lambda_down_{i}", "\u{3bb}_down,i", "down-channel rate at level i", "messages/channel/cycle"),
    ("x_down_{i}", "x_down,i", "down-channel service time at level i", "cycles"),
    ("w_down_{i}", "W_down,i", "down-channel wait at level i", "cycles"),
    // The simulator's own.
    ("ack_hops_per_message", "", "acknowledgement hops per message", "hops"),
    ("backtracks_per_message", "", "backtracks per message", ""),
    ("retries_per_message", "", "set-up retries per message", ""),
    ("teardown_hops_per_message", "", "teardown hops per message", "hops"),
    ("drops", "", "dropped messages", "messages"),
    ("channel_utilization", "", "channel utilisation", "flits/channel/cycle"),
    ("max_channel_utilization", "", "busiest channel's utilisation", "flits/cycle"),
    ("blocking_per_hop", "", "blocked hop requests", "fraction"),
    ("blocked_cycles_per_hop", "", "blocked cycles per hop", "cycles"),
    ("escape_hop_fraction", "", "hops on escape channels", "fraction"),
    ("mean_busy_vcs", "", "busy VCs of a busy channel", ""),
    ("p_busy_{i}", "P_i", "probability that i VCs are busy", ""),
    ("source_backlog", "", "source-queue backlog", "messages/node"),
    ("credit_loop_cycles", "", "longest credit loop (buffer depth to stream)", "cycles"),
    ("window_cycles", "", "measurement window", "cycles"),
    ("batches", "", "batches", ""),
    ("latency_batches", "", "interval batches with a delivered message", ""),
    ("latency_batch_mean", "", "mean of the batch latency means", "cycles"),
    ("latency_batch_sd", "", "standard deviation of the batch latency means", "cycles"),
    ("latency_batch_cycles", "", "interval batch length", "cycles"),
    ("latency_batch_test", "C", "von Neumann statistic of the quarter-length batches", ""),
    ("latency_batches_independent", "", "batch means independent by the von Neumann test", ""),
    ("latency_batch_autocorrelation", "φ", "lag-1 autocorrelation of correlated batch means", ""),
    ("latency_batch_adjustment", "A", "correlation adjustment of the latency variance", ""),
    ("throughput_batch_adjustment", "", "correlation adjustment of the throughput variance", ""),
    ("planned_window_cycles", "", "planned window of the last look", "cycles"),
    ("replication_q", "Q", "Cochran's Q of the replication means", ""),
    ("replications_consistent", "", "replications consistent by Cochran's Q", ""),
    ("mser_truncation_cycles", "", "MSER truncation point", "cycles"),
    ("latency_ci95_noise", "", "95% CI half-width of the simulation noise", "cycles"),
    ("fault_map_sd", "", "standard deviation from fault map to fault map", "cycles"),
    ("broadcast_latency_from_generation", "", "broadcast latency from generation", "cycles"),
    ("broadcasts_measured", "", "broadcasts measured", "broadcasts"),
    ("unicasts_measured", "", "unicasts measured", "messages"),
    ("copy_latency", "", "copy latency", "cycles"),
    ("source_queue_capacity", "", "source-queue capacity", "messages"),
    ("fault_draws", "", "fault-map draws", ""),
    ("unserved_pair_fraction", "", "unserved source-destination pairs", "fraction"),
];

/// The display entry of `key` (a scenario field's from its row of [`fields::FIELDS`], any other
/// from [`DISPLAY`]; an indexed key `pb_3` finds `pb_{i}`) and the index.
pub(crate) fn display(key: &str) -> Option<(DisplayEntry, Option<&str>)> {
    if let Some(field) = fields::get(key) {
        return field.display.map(|d| ((field.name, d.symbol, d.meaning, d.unit), None));
    }
    if let Some(entry) = DISPLAY.iter().find(|entry| entry.0 == key) {
        return Some((*entry, None));
    }
    let (stem, index) = key.rsplit_once('_')?;
    if index.is_empty() || !index.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    DISPLAY
        .iter()
        .find(|entry| entry.0.strip_suffix("_{i}") == Some(stem))
        .map(|entry| (*entry, Some(index)))
}

/// Axis label with unit for a numeric column, a derived axis or `intermediates.<key>`, as the
/// papers write it: `Latency (cycles)`, `P_S, set-up success probability`,
/// `λ_cr, replicated copies (copies/channel/cycle)`. An unknown key reads as itself.
pub(crate) fn axis_label(name: &str) -> String {
    let key = name.strip_prefix(INTERMEDIATE_PREFIX);
    let Some(((_, symbol, what, unit), index)) = display(key.unwrap_or(name)) else {
        return key.unwrap_or(name).replace('_', " ");
    };
    // `i` in an indexed entry's symbol and words is the key's index.
    let indexed = |text: &str| match index {
        Some(index) => text
            .split(' ')
            .map(|word| match word {
                "i" => index.to_owned(),
                _ => word.replace("_i", &format!("_{index}")).replace(",i", &format!(",{index}")),
            })
            .collect::<Vec<_>>()
            .join(" "),
        None => text.to_owned(),
    };
    let what = indexed(what);
    // Intermediates lead with the papers' symbol; columns read as words.
    let text = if key.is_some() && !symbol.is_empty() {
        format!("{}, {what}", indexed(symbol))
    } else {
        upper_first(&what)
    };
    match unit {
        "" => text,
        unit => format!("{text} ({unit})"),
    }
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Short symbol for a scenario column in legends, panel titles and table headers (`V`, `M`,
/// `k`, `θ`, ...); any other column reads as its name in words.
pub(crate) fn symbol(name: &str) -> String {
    match display(name) {
        Some(((_, symbol, _, _), None))
            if !symbol.is_empty() && SCENARIO_COLUMNS.contains(&name) =>
        {
            symbol.to_owned()
        }
        _ => name.replace('_', " "),
    }
}

/// Display names of categorical values as the papers write them, `(column, value, name)`: the
/// one vocabulary of legends, panel titles and table cells. A value not listed reads in the
/// field's words ([`value_label`]).
const VALUE_NAMES: &[(&str, &str, &str)] = &[
    ("routing", "dimension_order", "DOR"),
    ("routing", "duato", "Duato"),
    ("routing", "nbc", "Duato-Nbc"),
    ("routing", "up_down", "up*/down*"),
    ("routing", "up_down_random", "up*/down*, random up port"),
    ("routing", "d_mod_k", "d-mod-k"),
    ("routing", "west_first", "west-first"),
    ("routing", "odd_even", "odd-even"),
    ("routing", "minimal", "MIN"),
    ("routing", "valiant", "VAL"),
    ("routing", "ugal", "UGAL-L"),
    ("routing", "ugal_global", "UGAL-G"),
    ("routing", "dal", "DAL"),
    ("routing", "par", "PAR"),
    ("routing", "ugal_booksim", "UGAL (BookSim)"),
    ("routing", "table", "routing table"),
    ("topology", "fat_tree", "fat tree"),
    ("topology", "kary_ntree", "k-ary n-tree"),
    ("topology", "hyperx", "HyperX"),
    ("topology", "slim_fly", "Slim Fly"),
    ("vc_reallocation", "tail_sent", "tail sent"),
    ("switch_allocator", "islip", "iSLIP"),
    ("vc_allocator", "islip", "iSLIP"),
];

/// A text column's value as the papers write it, for legends, panel titles and table cells:
/// `DOR`, `Duato`, `UGAL-L`, `bit-complement traffic`, `dateline per traversal`
/// ([`VALUE_NAMES`]; other values in the field's words).
pub(crate) fn value_label(column: &str, value: &str) -> String {
    if let Some((_, _, name)) =
        VALUE_NAMES.iter().find(|(named, raw, _)| *named == column && *raw == value)
    {
        return (*name).to_owned();
    }
    let words = value.replace('_', "-");
    match column {
        "routing" | "switching" | "topology" => value.replace('_', " "),
        "traffic" => format!("{words} traffic"),
        "ejection" => format!("{words} ejection"),
        "dateline" => format!("dateline {}", value.replace('_', " ")),
        "tie_break" => format!("{words} tie-break"),
        "broadcast_order" => format!("{words} broadcast order"),
        "hotspot_nodes" => format!("hot spots {value}"),
        _ => value.to_owned(),
    }
}

/// `torus, k = 8, n = 2, wormhole, V = 2` from the given columns of a row, text values in the
/// field's words ([`value_label`]: `dimension order`, `uniform traffic`). Left out: nulls,
/// a zero fault rate, broadcast or hotspot fraction, the start-up latency Δ where there are no
/// broadcasts (it applies to broadcasts only), and a topology key the row's family does not
/// read ([`not_a_parameter`]: a hypercube's radix, always 2; a dragonfly's router radix and
/// two levels; a graph's zero dimensions).
pub(crate) fn describe(row_json: &Value, names: &[&str]) -> String {
    let no_broadcasts = number(row_json, "broadcast_fraction").is_none_or(|beta| beta == 0.0);
    let family = family(row_json);
    names
        .iter()
        .filter_map(|name| {
            let value = text(row_json, name)?;
            let zero_default =
                matches!(*name, "fault_rate" | "broadcast_fraction" | "hotspot_fraction");
            if zero_default && number(row_json, name) == Some(0.0) {
                return None;
            }
            if (*name == "startup_latency" && no_broadcasts) || not_a_parameter(family, name) {
                return None;
            }
            Some(match kind(name) {
                Some(Kind::Text) => value_label(name, &value),
                _ => format!("{} = {value}", family_symbol(family, name)),
            })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The symbol of column `name` for a row of `family`: the field's own ([`symbol`]), except
/// where the family's paper writes its keys otherwise: the HyperX's `S`, `L` and `T` (Ahn et
/// al.) for the radix, dimensions and terminals per router that read `k`, `n` and `p`
/// elsewhere.
fn family_symbol(family: Option<TopologyKind>, name: &str) -> String {
    match (family, name) {
        (Some(TopologyKind::HyperX), "radix") => "S".into(),
        (Some(TopologyKind::HyperX), "dimensions") => "L".into(),
        (Some(TopologyKind::HyperX), "terminals_per_router") => "T".into(),
        _ => symbol(name),
    }
}

/// The network family of a row (`None` for an unknown or missing topology).
fn family(row_json: &(impl Lookup + ?Sized)) -> Option<TopologyKind> {
    text(row_json, "topology")
        .and_then(|name| TopologyKind::ALL.into_iter().find(|kind| kind.as_str() == name))
}

/// Whether column `name` is a parameter of the row's system: false for a topology key its
/// family does not read ([`not_a_parameter`]: a dragonfly's router radix, a graph's zero
/// dimensions), which a table shows as a dash and leaves out of its scenario columns.
pub(crate) fn is_parameter(row_json: &(impl Lookup + ?Sized), name: &str) -> bool {
    !not_a_parameter(family(row_json), name)
}

/// Whether column `name` is a topology key that `family` does not read, so that its value in a
/// row is derived, not chosen: the radix and dimensions the result columns give every family.
/// The fat-tree is the exception: its one parameter, the processor count, is no column, and its
/// k = 4 and n levels say its size.
fn not_a_parameter(family: Option<TopologyKind>, name: &str) -> bool {
    let Some(family) = family else { return false };
    let reads = |kind: TopologyKind| {
        kind.parameters().contains(&name) || kind.named_parameters().contains(&name)
    };
    family != TopologyKind::FatTree && TopologyKind::ALL.into_iter().any(reads) && !reads(family)
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
    let mut split = ConstantAndVarying::default();
    for row in rows {
        split.push(row);
    }
    split.finish()
}

/// [`constant_and_varying_rows`] taking the rows as they come ([`ConstantAndVarying::push`]).
#[derive(Debug, Default)]
pub(crate) struct ConstantAndVarying {
    /// The first row's JSON and its text of each described column.
    first: Option<(Value, Vec<Option<String>>)>,
    varies: Vec<bool>,
    /// The scenario of the row last compared.
    previous: Option<String>,
}

impl ConstantAndVarying {
    /// Takes the next row.
    pub(crate) fn push(&mut self, row: &Row) {
        let Some((_, first_values)) = &self.first else {
            let first = to_json(row);
            let values = DESCRIBE_COLUMNS.iter().map(|name| text(&first, name)).collect();
            self.first = Some((first, values));
            self.varies = vec![false; DESCRIBE_COLUMNS.len()];
            return;
        };
        // The described columns are scenario columns: a row of the scenario just read (equal
        // `scenario_id`, a content hash of the scenario) has the same values.
        if self.previous.as_deref() == Some(row.scenario_id.as_str()) {
            return;
        }
        self.previous = Some(row.scenario_id.clone());
        let json = pick_json(row, DESCRIBE_COLUMNS);
        for (index, name) in DESCRIBE_COLUMNS.iter().enumerate() {
            if !self.varies[index] && text(&json, name) != first_values[index] {
                self.varies[index] = true;
            }
        }
    }

    /// The columns with one value over the rows, those that vary, and the first row's JSON.
    pub(crate) fn finish(self) -> (Vec<&'static str>, Vec<&'static str>, Option<Value>) {
        let Some((first, _)) = self.first else {
            return (DESCRIBE_COLUMNS.to_vec(), Vec::new(), None);
        };
        let pick = |vary: bool| -> Vec<&'static str> {
            DESCRIBE_COLUMNS
                .iter()
                .zip(&self.varies)
                .filter(|(_, varies)| **varies == vary)
                .map(|(name, _)| *name)
                .collect()
        };
        (pick(false), pick(true), Some(first))
    }
}

/// The latency percentile columns (simulation only; `sim::percentiles`).
pub(crate) const LATENCY_PERCENTILES: &[&str] = &[
    "latency_p50",
    "latency_p90",
    "latency_p95",
    "latency_p99",
    "latency_max",
    "network_latency_p50",
    "network_latency_p90",
    "network_latency_p95",
    "network_latency_p99",
    "network_latency_max",
    "source_wait_p50",
    "source_wait_p90",
    "source_wait_p95",
    "source_wait_p99",
    "source_wait_max",
    "unicast_latency_p50",
    "unicast_latency_p90",
    "unicast_latency_p95",
    "unicast_latency_p99",
    "unicast_latency_max",
];

/// Whether a column is a latency whose values explode near saturation (so the y axis is capped;
/// the percentile columns too: their zero-load reference is the series' own lowest-load value).
pub(crate) fn is_latency(name: &str) -> bool {
    matches!(
        name,
        "latency" | "network_latency" | "source_wait" | "unicast_latency" | "round_trip_latency"
    ) || LATENCY_PERCENTILES.contains(&name)
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

/// The model latency to compare with (and plot against) a simulated one. With no broadcasts in
/// the traffic (`broadcast_fraction = 0`) the simulator measures unicasts only, so a model that
/// reports unicasts separately (`broadcast_hypercube`: `latency` is its broadcast latency,
/// eq. (1)) is compared through its `unicast_latency`.
pub(crate) fn comparable_model_latency(model_row: &Row) -> Option<f64> {
    comparable_latency(model_row.broadcast_fraction, model_row.unicast_latency, model_row.latency)
}

/// [`comparable_model_latency`] of a row's `broadcast_fraction`, `unicast_latency` and
/// `latency` (a figure keeps only these of a row, `figure::PlotFields`).
pub(crate) fn comparable_latency(
    broadcast_fraction: f64,
    unicast_latency: Option<f64>,
    latency: Option<f64>,
) -> Option<f64> {
    if broadcast_fraction == 0.0 && unicast_latency.is_some() { unicast_latency } else { latency }
}

#[cfg(test)]
mod tests {
    use super::{DESCRIBE_COLUMNS, describe, to_json, value_label};
    use crate::scenario::{Scenario, Topology};
    use crate::store::row::Row;

    /// The description of a scenario's rows, from every described column.
    fn described(topology: Topology) -> String {
        describe(&to_json(&Row::of_scenario(&Scenario::new(topology))), DESCRIBE_COLUMNS)
    }

    #[test]
    fn a_topology_is_described_by_the_keys_its_family_reads() {
        let torus = described(Topology::Torus { radix: 8, dimensions: 2 });
        assert!(torus.contains("k = 8, n = 2"), "{torus}");
        let hypercube = described(Topology::Hypercube { dimensions: 6 });
        assert!(hypercube.contains("n = 6") && !hypercube.contains("k = "), "{hypercube}");
        // The dragonfly's router radix (p + a - 1 + h = 7) and two levels are not its
        // parameters; p, a and h are.
        let dragonfly = described(Topology::Dragonfly {
            terminals_per_router: 2,
            routers_per_group: 4,
            global_links_per_router: 2,
            global_arrangement: crate::scenario::GlobalArrangement::Absolute,
        });
        assert!(dragonfly.contains("p = 2") && dragonfly.contains("h = 2"), "{dragonfly}");
        assert!(!dragonfly.contains("k = ") && !dragonfly.contains("n = "), "{dragonfly}");
        // The fat-tree's processor count is no column: k = 4 and its levels say its size.
        let fat_tree = described(Topology::FatTree { processors: 64 });
        assert!(fat_tree.contains("k = 4, n = 3"), "{fat_tree}");
        // The HyperX in its paper's letters, its trunking K beside them.
        let hyperx = described(Topology::HyperX {
            radix: 4,
            dimensions: 2,
            terminals_per_router: 8,
            trunking: Some(2),
        });
        assert!(hyperx.contains("S = 4, L = 2, T = 8, K = 2"), "{hyperx}");
        assert!(!hyperx.contains("k = ") && !hyperx.contains("p = "), "{hyperx}");
    }

    #[test]
    fn routing_and_topology_values_read_in_the_field_s_words() {
        assert_eq!(value_label("routing", "up_down"), "up*/down*");
        assert_eq!(value_label("routing", "up_down_random"), "up*/down*, random up port");
        assert_eq!(value_label("routing", "dimension_order"), "DOR");
        assert_eq!(value_label("routing", "minimal"), "MIN");
        assert_eq!(value_label("routing", "valiant"), "VAL");
        assert_eq!(value_label("routing", "ugal"), "UGAL-L");
        assert_eq!(value_label("routing", "adaptive"), "adaptive");
        assert_eq!(value_label("switching", "wormhole"), "wormhole");
        assert_eq!(value_label("topology", "kary_ntree"), "k-ary n-tree");
        assert_eq!(value_label("traffic", "bit_complement"), "bit-complement traffic");
    }
}
