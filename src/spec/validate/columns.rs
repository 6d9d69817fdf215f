//! Reading a spec's scenario fields: each sweepable field's values with their locations,
//! checked against the scenario table's bounds, and the graph and trace files they name.

use super::*;

/// Every field's values, each with the location it was written at.
pub(super) struct Columns {
    pub(super) topology: Values<TopologyKind>,
    /// The count keys of `topology:`.
    pub(super) counts: Counts,
    pub(super) graph: Values<Arc<Graph>>,
    pub(super) global_arrangement: Values<GlobalArrangement>,
    pub(super) switching: Values<SwitchingKind>,
    pub(super) scouting_distance: Values<u32>,
    pub(super) routing: Values<Routing>,
    /// The keys written directly under `scenario:`.
    pub(super) keys: Keys,
    pub(super) broadcast_fraction: Values<f64>,
    pub(super) startup_latency: Values<f64>,
    pub(super) traffic: Values<TrafficPattern>,
    pub(super) hotspot_fraction: Values<f64>,
    pub(super) hotspot_nodes: Vec<u32>,
    pub(super) injection_process: Values<InjectionProcessKind>,
    pub(super) burst_length: Values<f64>,
    pub(super) broadcast_order: Values<BroadcastOrder>,
    pub(super) circuit_backoff: Values<u32>,
    pub(super) circuit_retry_limit: Values<u32>,
    /// `traffic.trace` (as written) and `traffic.trace_flit_bytes`, for `pattern: trace`.
    pub(super) trace: Option<String>,
    pub(super) trace_flit_bytes: Option<u32>,
    /// Every point replays a trace (`pattern: trace`).
    pub(super) replays: bool,
    /// Where each field was written (`None`: left out, default used or not applicable), by
    /// its index in [`FIELDS`].
    pub(super) written: [Option<Location>; FIELDS.len()],
    /// How many values each field takes, by its index in [`FIELDS`].
    pub(super) lens: [usize; FIELDS.len()],
}

impl Columns {
    pub(super) fn len(&self, field: usize) -> usize {
        self.lens[field]
    }
}

/// Defines [`Keys`], the values of each key of `scenario::fields::each_scenario_key`, and
/// their reading.
macro_rules! keys {
    ($( $(#[$meta:meta])* $name:ident: $ty:ty $(= $default:expr)?, $use:ident; )*) => {
        /// The values of the keys written directly under `scenario:`, each with its location.
        pub(super) struct Keys {
            $( pub(super) $name: Values<$ty>, )*
        }

        impl Keys {
            /// Reads each key in turn; when it is left out, the router preset's value
            /// (`router:`), else its default.
            fn read(r: &mut Reader<'_>, s: &ScenarioSpec) -> Keys {
                let preset = s.router.unwrap_or_default();
                Keys {
                    $(
                        $name: r.read(
                            const { fields::swept_index(stringify!($name)) },
                            s.$name.as_deref(),
                            keys!(@preset $use, preset, $name).or(keys!(@default $($default)?)),
                        ),
                    )*
                }
            }
        }
    };
    (@default) => { None };
    (@default $default:expr) => { Some($default) };
    // A preset sets `copy` keys only (the knobs a router has).
    (@preset own, $preset:ident, $name:ident) => { None };
    (@preset copy, $preset:ident, $name:ident) => { $preset.value(stringify!($name)) };
}
fields::each_scenario_key!(keys);

/// Defines [`Counts`], the values of each count key of `scenario::each_topology_count`, and
/// their reading.
macro_rules! counts {
    ($( $(#[$meta:meta])* $name:ident; )*) => {
        /// The values of the count keys written under `topology:`, each with its location.
        pub(super) struct Counts {
            $( pub(super) $name: Values<u32>, )*
        }

        impl Counts {
            /// Reads each key in turn.
            fn read(r: &mut Reader<'_>, t: &TopologySpec) -> Counts {
                Counts {
                    $(
                        $name: r.read(
                            const { fields::swept_index(stringify!($name)) },
                            t.$name.as_ref(),
                            None,
                        ),
                    )*
                }
            }

            /// The field index (in [`FIELDS`]) and the values of count key `key`.
            pub(super) fn get(&self, key: &str) -> Option<(usize, &Values<u32>)> {
                $(
                    if key == stringify!($name) {
                        return Some((const { fields::swept_index(stringify!($name)) }, &self.$name));
                    }
                )*
                None
            }
        }
    };
}
crate::scenario::each_topology_count!(counts);

/// Reads a spec's sweepable fields one by one, recording where each was written and how many
/// values it takes.
struct Reader<'d> {
    diags: &'d mut Diags,
    written: [Option<Location>; FIELDS.len()],
    lens: [usize; FIELDS.len()],
}

impl Reader<'_> {
    /// The values of field `field` (its index in [`FIELDS`]), each checked against the
    /// field's bounds in the scenario table; the default when it is left out.
    fn read<T: SweepValue>(
        &mut self,
        field: usize,
        spec: Option<&Spanned<Sweep<T>>>,
        default: Option<T>,
    ) -> Values<T> {
        self.written[field] = spec.map(|f| f.referenced);
        let values = column(self.diags, spec, default, |v| T::check(FIELDS[field], v));
        self.lens[field] = values.len();
        values
    }

    /// The graphs of `topology.graph`, each read and parsed.
    fn graphs(&mut self, spec: Option<&Field<String>>, spec_dir: &Path) -> Values<Arc<Graph>> {
        self.written[GRAPH] = spec.map(|f| f.referenced);
        let values = graphs(self.diags, spec, spec_dir);
        self.lens[GRAPH] = values.len();
        values
    }
}

/// The check of a value with no bounds.
pub(super) fn any<T>(_: &T) -> Result<(), String> {
    Ok(())
}

/// Reads one sweepable field: its values (or the default), checking each value.
pub(super) fn column<T: SweepValue>(
    diags: &mut Diags,
    field: Option<&Spanned<Sweep<T>>>,
    default: Option<T>,
    check: impl Fn(&T) -> Result<(), String>,
) -> Values<T> {
    let Some(field) = field else {
        return default.map(|d| vec![(d, Location::UNKNOWN)]).unwrap_or_default();
    };
    match field.value.values(field.referenced) {
        Ok(values) => {
            let mut ok = Vec::with_capacity(values.len());
            for (value, location) in values {
                match check(&value) {
                    Ok(()) => ok.push((value, location)),
                    Err(message) => diags.error(location, message, None),
                }
            }
            ok
        }
        Err(message) => {
            diags.error(field.referenced, message, None);
            Vec::new()
        }
    }
}

/// `traffic.pattern: trace` and the fields it needs and excludes; whether every point replays
/// a trace.
pub(super) fn trace_fields(s: &ScenarioSpec, diags: &mut Diags) -> bool {
    let traffic = s.traffic.as_ref();
    let patterns = traffic.and_then(|t| t.pattern.as_ref());
    let values = patterns.and_then(|p| p.value.values(p.referenced).ok()).unwrap_or_default();
    let traces = values.iter().filter(|v| v.0 == TrafficPattern::Trace).count();
    let file = traffic.and_then(|t| t.trace.as_ref());
    let flit_bytes = traffic.and_then(|t| t.trace_flit_bytes.as_ref());
    if traces == 0 {
        if let Some(file) = file {
            diags.error(
                file.referenced,
                "`trace` needs `pattern: trace`",
                Some("set `traffic.pattern: trace`, or remove `trace`".into()),
            );
        }
        if let Some(bytes) = flit_bytes {
            diags.error(
                bytes.referenced,
                "`trace_flit_bytes` applies to `pattern: trace` only",
                Some("remove `trace_flit_bytes`".into()),
            );
        }
        return false;
    }
    let Some(patterns) = patterns else { return false };
    if traces < values.len() {
        diags.error(
            patterns.referenced,
            "`pattern: trace` cannot be swept beside other patterns: a trace offers its own load \
             (`load.trace_time_scale`), the others take `load.rates`",
            Some("split the spec: one for the trace, one for the generated traffic".into()),
        );
    }
    if file.is_none() {
        diags.error(
            patterns.referenced,
            "`pattern: trace` needs `traffic.trace`, the trace file",
            Some("for example `trace: traces/poisson_8x8.csv` (docs/traces.md)".into()),
        );
    }
    if let Some(bytes) = flit_bytes
        && bytes.value == 0
    {
        diags.error(bytes.referenced, "`trace_flit_bytes` must be at least 1 byte", None);
    }
    let gives = "the trace gives every message's time, endpoints and length";
    let excluded = [
        ("message_length", s.message_length.as_ref().map(|f| f.referenced)),
        (
            "message_length_second_moment",
            s.message_length_second_moment.as_ref().map(|f| f.referenced),
        ),
        (
            "message_length_distribution",
            s.message_length_distribution.as_ref().map(|f| f.referenced),
        ),
        ("message_length_min", s.message_length_min.as_ref().map(|f| f.referenced)),
        ("message_length_max", s.message_length_max.as_ref().map(|f| f.referenced)),
        ("fault_rate", s.fault_rate.as_ref().map(|f| f.referenced)),
        (
            "injection_process",
            traffic.and_then(|t| t.injection_process.as_ref()).map(|f| f.referenced),
        ),
        ("burst_length", traffic.and_then(|t| t.burst_length.as_ref()).map(|f| f.referenced)),
        (
            "hotspot_fraction",
            traffic.and_then(|t| t.hotspot_fraction.as_ref()).map(|f| f.referenced),
        ),
        ("hotspot_nodes", traffic.and_then(|t| t.hotspot_nodes.as_ref()).map(|f| f.referenced)),
        (
            "broadcast_fraction",
            traffic.and_then(|t| t.broadcast_fraction.as_ref()).map(|f| f.referenced),
        ),
    ];
    for (field, location) in excluded {
        if let Some(location) = location {
            diags.error(
                location,
                format!("`{field}` does not apply to trace traffic: {gives}"),
                Some(format!("remove `{field}`")),
            );
        }
    }
    traces == values.len()
}

pub(super) fn columns(s: &ScenarioSpec, spec_dir: &Path, diags: &mut Diags) -> Columns {
    let replays = trace_fields(s, diags);
    let topology = &s.topology;
    let switching = s.switching.as_ref();
    let traffic = s.traffic.as_ref();
    if let Some(traffic) = traffic
        && let Some(pattern) = &traffic.pattern
        && !matches!(pattern.value.values(pattern.referenced), Ok(values) if values.iter().any(|v| v.0 == TrafficPattern::BroadcastMix))
        && let Some(field) = &traffic.broadcast_fraction
    {
        diags.error(
            field.referenced,
            "`broadcast_fraction` needs `pattern: broadcast_mix`",
            Some("remove `broadcast_fraction`, or set `pattern: broadcast_mix`".into()),
        );
    }
    if let Some(traffic) = traffic
        && let Some(nodes) = &traffic.hotspot_nodes
        && let Err(message) = bounds::hotspot_nodes(&nodes.value)
    {
        diags.error(nodes.referenced, message, None);
    }
    let mut r = Reader { diags, written: [None; FIELDS.len()], lens: [0; FIELDS.len()] };
    Columns {
        topology: r.read(TOPOLOGY, Some(&topology.kind), None),
        counts: Counts::read(&mut r, topology),
        graph: r.graphs(topology.graph.as_ref(), spec_dir),
        global_arrangement: r.read(
            GLOBAL_ARRANGEMENT,
            topology.global_arrangement.as_ref(),
            Some(GlobalArrangement::Absolute),
        ),
        switching: r.read(SWITCHING, switching.map(|s| &s.kind), Some(SwitchingKind::Wormhole)),
        scouting_distance: r.read(
            SCOUTING,
            switching.and_then(|s| s.scouting_distance.as_ref()),
            None,
        ),
        routing: r.read(ROUTING, Some(&s.routing), None),
        keys: Keys::read(&mut r, s),
        broadcast_fraction: r.read(
            BROADCAST,
            traffic.and_then(|t| t.broadcast_fraction.as_ref()),
            Some(DEFAULT_BROADCAST_FRACTION),
        ),
        startup_latency: r.read(
            STARTUP,
            traffic.and_then(|t| t.startup_latency.as_ref()),
            Some(DEFAULT_STARTUP_LATENCY),
        ),
        traffic: r.read(
            TRAFFIC,
            traffic.and_then(|t| t.pattern.as_ref()),
            Some(TrafficPattern::Uniform),
        ),
        hotspot_fraction: r.read(HOTSPOT, traffic.and_then(|t| t.hotspot_fraction.as_ref()), None),
        hotspot_nodes: traffic
            .and_then(|t| t.hotspot_nodes.as_ref())
            .map(|n| n.value.clone())
            .unwrap_or_default(),
        injection_process: r.read(
            INJECTION,
            traffic.and_then(|t| t.injection_process.as_ref()),
            Some(InjectionProcessKind::Poisson),
        ),
        burst_length: r.read(BURST, traffic.and_then(|t| t.burst_length.as_ref()), None),
        broadcast_order: r.read(
            BROADCAST_ORDER,
            traffic.and_then(|t| t.broadcast_order.as_ref()),
            Some(BroadcastOrder::Random),
        ),
        circuit_backoff: r.read(
            CIRCUIT_BACKOFF,
            switching.and_then(|f| f.circuit_backoff.as_ref()),
            None,
        ),
        circuit_retry_limit: r.read(
            CIRCUIT_RETRY_LIMIT,
            switching.and_then(|f| f.circuit_retry_limit.as_ref()),
            None,
        ),
        trace: traffic.and_then(|t| t.trace.as_ref()).map(|t| t.value.clone()),
        trace_flit_bytes: traffic.and_then(|t| t.trace_flit_bytes.as_ref()).map(|b| b.value),
        replays,
        // Last: every field above has been read, so these are complete.
        written: r.written,
        lens: r.lens,
    }
}

/// The graph files of `topology.graph`, each read (through `crate::files`, relative to the
/// spec's directory), hashed and parsed; every problem located at the value that names the
/// file, with the file's own line and column.
pub(super) fn graphs(
    diags: &mut Diags,
    field: Option<&Field<String>>,
    spec_dir: &Path,
) -> Values<Arc<Graph>> {
    let mut out = Vec::new();
    for (path, location) in column(diags, field, None, any) {
        match read_graph(spec_dir, &path) {
            Ok(graph) => out.push((Arc::new(graph), location)),
            Err(messages) => {
                for message in messages {
                    diags.error(
                        location,
                        message,
                        Some("the graph format is in docs/graph.md; paths are relative to the spec file's directory".into()),
                    );
                }
            }
        }
    }
    out
}

/// Reads and parses one graph file, or says what is wrong (`file:line:column: ...`); `path`
/// is relative to `spec_dir` (the command line's `graph=` key: to the working directory).
pub fn read_graph(spec_dir: &Path, path: &str) -> Result<Graph, Vec<String>> {
    if path.trim().is_empty() || path.contains('\0') {
        return Err(vec!["`graph` names no file; give the path of a graph file".into()]);
    }
    let full = spec_dir.join(path);
    let bytes = crate::files::read_regular(&full, graph::MAX_FILE_BYTES).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "does not exist".to_string(),
            _ => e.to_string(),
        };
        vec![format!("graph file {} {why}", full.display())]
    })?;
    let blake3 = blake3::hash(&bytes).to_hex().to_string();
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        vec![format!("{}:{line}: the graph file is not UTF-8 text", full.display())]
    })?;
    graph::parse(path, &text, blake3).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| format!("{}:{}:{}: {}", full.display(), e.line, e.column, e.message))
            .collect()
    })
}
