//! One scenario from one combination of field values: the network, the switching, the
//! routing and its fit to the network, message lengths, traffic and injection.

use super::*;

pub(super) fn get<T: Copy>(values: &Values<T>, index: usize) -> Option<T> {
    values.get(index).map(|v| v.0)
}

/// Defines `use_copy_keys` and `copy_keys` for the `copy` keys of
/// `scenario::fields::each_scenario_key`, which every point reads as they are.
macro_rules! copy_keys {
    ($( $(#[$meta:meta])* $name:ident: $ty:ty $(= $default:expr)?, $use:ident; )*) => {
        /// Marks the `copy` keys read.
        fn use_copy_keys(used: &mut [bool; FIELDS.len()]) {
            $( copy_keys!(@use $use, used, $name); )*
        }

        /// Sets the scenario's `copy` keys to the values of point `index`; `None` when a key
        /// with a default has no value (all of its values were refused).
        fn copy_keys(c: &Columns, index: &[usize], scenario: &mut Scenario) -> Option<()> {
            $( copy_keys!(@$use c, index, scenario, $name $(= $default)?); )*
            Some(())
        }
    };
    (@use own, $used:ident, $name:ident) => {};
    (@use copy, $used:ident, $name:ident) => {
        $used[const { fields::swept_index(stringify!($name)) }] = true;
    };
    (@own $($ignored:tt)*) => {};
    (@copy $c:ident, $index:ident, $scenario:ident, $name:ident = $default:expr) => {
        let field = const { fields::swept_index(stringify!($name)) };
        $scenario.$name = get(&$c.keys.$name, $index[field])?;
    };
    (@copy $c:ident, $index:ident, $scenario:ident, $name:ident) => {
        let field = const { fields::swept_index(stringify!($name)) };
        $scenario.$name = get(&$c.keys.$name, $index[field]);
    };
}
fields::each_scenario_key!(copy_keys);

/// One scenario from one combination of value indices: each part in turn, then the checks
/// that need the whole scenario. `used` records which fields the point read.
pub(super) fn build(
    c: &Columns,
    index: &[usize],
    used: &mut [bool; FIELDS.len()],
    diags: &mut Diags,
) -> Option<ScenarioPoint> {
    let kind_location = c.topology.get(index[TOPOLOGY])?.1;
    let topology = topology(c, index, used, diags, kind_location)?;
    used[TOPOLOGY] = true;
    used[SWITCHING] = true;
    let switching = switching(c, index, used, diags, kind_location)?;
    used[ROUTING] = true;
    let routing = routing(c, index, diags, &topology)?;
    // Only routings with escape channels read `escape_channels`; elsewhere it is left unset
    // (as the circuit parameters are), and a spec where no point reads it is refused below.
    let escape = matches!(routing, Routing::Duato | Routing::Nbc);
    used[ESCAPE] |= escape;
    use_copy_keys(used);
    for field in [MESSAGE_LENGTH, SECOND_MOMENT, LENGTH_DISTRIBUTION] {
        used[field] = true;
    }
    for field in [BROADCAST, STARTUP, TRAFFIC, INJECTION] {
        used[field] = true;
    }
    let message_length = get(&c.keys.message_length, index[MESSAGE_LENGTH])?;
    let second_moment = second_moment(c, index, diags, message_length)?;
    let message_length_distribution = lengths(c, index, used, diags, message_length)?;
    let injection_process = injection(c, index, used, diags, kind_location)?;
    let escape_channels = escape.then(|| get(&c.keys.escape_channels, index[ESCAPE])).flatten();
    let broadcast_fraction = get(&c.broadcast_fraction, index[BROADCAST])?;
    let startup_latency = get(&c.startup_latency, index[STARTUP])?;
    let broadcast_order = get(&c.broadcast_order, index[BROADCAST_ORDER])?;
    let traffic = traffic(c, index, used, diags, kind_location)?;
    let circuit = switching == Switching::Circuit;
    let mut scenario = Scenario {
        switching,
        routing,
        escape_channels,
        message_length,
        message_length_second_moment: second_moment,
        message_length_distribution,
        injection_process,
        broadcast_fraction,
        startup_latency,
        broadcast_order,
        dateline: get(&c.keys.dateline, index[DATELINE]),
        tie_break: get(&c.keys.tie_break, index[TIE_BREAK]),
        traffic,
        // Simulator-only circuit parameters, for circuit switching only; the defaults (no
        // back-off, the simulator's retry limit) are left unset, so that equal systems compare
        // (and hash) equal.
        circuit_backoff: circuit
            .then(|| get(&c.circuit_backoff, index[CIRCUIT_BACKOFF]))
            .flatten()
            .filter(|&b| b != 0),
        circuit_retry_limit: circuit
            .then(|| get(&c.circuit_retry_limit, index[CIRCUIT_RETRY_LIMIT]))
            .flatten()
            .filter(|&r| r != sim::DEFAULT_CIRCUIT_RETRY_LIMIT),
        // The `copy` keys of the scenario table, set just below.
        ..Scenario::new(topology)
    };
    copy_keys(c, index, &mut scenario)?;
    finish(scenario, c, index, used, diags, kind_location)
}

/// The network of one point (`topology.kind` and the fields its family reads), within
/// [`MAX_NODES`].
fn topology(
    c: &Columns,
    index: &[usize],
    used: &mut [bool; FIELDS.len()],
    diags: &mut Diags,
    kind_location: Location,
) -> Option<Topology> {
    let kind = get(&c.topology, index[TOPOLOGY])?;
    if kind == TopologyKind::Graph {
        used[GRAPH] = true;
        let Some((graph, _)) = c.graph.get(index[GRAPH]) else {
            diags.error(
                kind_location,
                "a graph needs `topology.graph`, the file describing it (docs/graph.md)",
                None,
            );
            return None;
        };
        return Some(Topology::Graph { graph: graph.clone() });
    }
    let built = Topology::from_counts(kind, |key| {
        let (field, values) = c.counts.get(key)?;
        used[field] = true;
        get(values, index[field])
    });
    let topology = match built {
        Ok(topology @ Topology::Dragonfly { .. }) => {
            used[GLOBAL_ARRANGEMENT] = true;
            topology.with_global_arrangement(get(&c.global_arrangement, index[GLOBAL_ARRANGEMENT])?)
        }
        Ok(topology) => topology,
        Err(missing) => {
            diags.error(
                kind_location,
                format!("a {} needs `topology.{missing}`", kind.as_str()),
                None,
            );
            return None;
        }
    };
    if topology.nodes() > MAX_NODES {
        diags.error(
            kind_location,
            format!("{} nodes is more than the {MAX_NODES} this tool supports", topology.nodes()),
            None,
        );
        return None;
    }
    Some(topology)
}

/// The switching technique of one point, with the scouting distance where it applies.
fn switching(
    c: &Columns,
    index: &[usize],
    used: &mut [bool; FIELDS.len()],
    diags: &mut Diags,
    kind_location: Location,
) -> Option<Switching> {
    let switching = match get(&c.switching, index[SWITCHING])? {
        SwitchingKind::Wormhole => Switching::Wormhole,
        SwitchingKind::Circuit => Switching::Circuit,
        SwitchingKind::VirtualCutThrough => Switching::VirtualCutThrough,
        SwitchingKind::Scouting => {
            used[SCOUTING] = true;
            match get(&c.scouting_distance, index[SCOUTING]) {
                Some(scouting_distance) => Switching::Scouting { scouting_distance },
                None => {
                    let location = c.written[SWITCHING].unwrap_or(kind_location);
                    diags.error(
                        location,
                        "scouting switching needs `switching.scouting_distance`",
                        None,
                    );
                    return None;
                }
            }
        }
    };
    Some(switching)
}

/// The routing of one point, refused where it does not fit the network.
fn routing(
    c: &Columns,
    index: &[usize],
    diags: &mut Diags,
    topology: &Topology,
) -> Option<Routing> {
    let routing = get(&c.routing, index[ROUTING])?;
    let routing_location = c.routing.get(index[ROUTING]).map_or(Location::UNKNOWN, |v| v.1);
    let on_graph = topology.graph().is_some();
    if on_graph && !matches!(routing, Routing::UpDown | Routing::Minimal | Routing::Table) {
        diags.error(
            routing_location,
            format!(
                "routing `{}` does not fit topology `graph`: a graph routes up_down (up*/down* on a spanning tree), minimal (shortest paths with an up*/down* escape channel) or table (the file's `route` lines)",
                routing.as_str()
            ),
            Some("use `routing: up_down`, `minimal` or `table` on a graph".into()),
        );
        return None;
    }
    if !on_graph && routing == Routing::Table {
        diags.error(
            routing_location,
            format!(
                "routing `table` does not fit topology `{}`: it follows the `route` lines of a graph file",
                topology.kind()
            ),
            Some("use `topology: {kind: graph, graph: <file>}` with `route` lines".into()),
        );
        return None;
    }
    let up_down = matches!(routing, Routing::UpDown | Routing::UpDownRandom | Routing::DModK);
    let tree = matches!(topology, Topology::FatTree { .. } | Topology::KaryNTree { .. });
    if !on_graph && up_down != tree {
        diags.error(
            routing_location,
            format!(
                "routing `{}` does not fit topology `{}`: up_down and up_down_random are for the fat-trees (fat_tree, kary_ntree; up_down also for graph), and the fat-trees route up_down or up_down_random",
                routing.as_str(),
                topology.kind()
            ),
            None,
        );
        return None;
    }
    if let Topology::SlimFly { .. } = topology {
        if !matches!(routing, Routing::Minimal | Routing::Valiant) {
            diags.error(
                routing_location,
                format!(
                    "routing `{}` does not fit topology `slim_fly`: the Slim Fly routes minimal or valiant (VC classes by hops taken)",
                    routing.as_str()
                ),
                Some("use `routing: minimal` or `valiant` on the Slim Fly".into()),
            );
            return None;
        }
        return Some(routing);
    }
    let dragonfly_routing = matches!(
        routing,
        Routing::Minimal
            | Routing::Valiant
            | Routing::Ugal
            | Routing::UgalGlobal
            | Routing::Par
            | Routing::UgalBooksim
    );
    let hyperx = matches!(topology, Topology::HyperX { .. });
    if routing == Routing::Dal && !hyperx {
        diags.error(
            routing_location,
            format!(
                "routing `dal` does not fit topology `{}`: dal (dimensionally adaptive, load-balanced routing) is the HyperX's",
                topology.kind()
            ),
            Some("use `topology.kind: hyperx`, or a routing of this topology".into()),
        );
        return None;
    }
    let hyperx_own = hyperx && matches!(routing, Routing::Valiant | Routing::Ugal);
    if !on_graph && !hyperx_own && dragonfly_routing != topology.dragonfly().is_some() {
        diags.error(
            routing_location,
            format!(
                "routing `{}` does not fit topology `{}`: minimal, valiant, ugal, ugal_global, par and ugal_booksim are the dragonfly's routings (valiant and ugal also the HyperX's, minimal and valiant the Slim Fly's), and the dragonfly routes with them only",
                routing.as_str(),
                topology.kind()
            ),
            Some(if dragonfly_routing {
                "use `topology.kind: dragonfly`, or a routing of this topology".into()
            } else {
                "use `routing: minimal`, `valiant`, `ugal`, `ugal_global`, `par` or `ugal_booksim` on the dragonfly".into()
            }),
        );
        return None;
    }
    Some(routing)
}

/// The second moment E[M^2] of one point, when given: at least the squared mean.
fn second_moment(
    c: &Columns,
    index: &[usize],
    diags: &mut Diags,
    message_length: u32,
) -> Option<Option<f64>> {
    let second_moment = get(&c.keys.message_length_second_moment, index[SECOND_MOMENT]);
    if let Some(m2) = second_moment {
        let mean = f64::from(message_length);
        if m2 < mean * mean * (1.0 - 1e-12) {
            let location = c
                .keys
                .message_length_second_moment
                .get(index[SECOND_MOMENT])
                .map_or(Location::UNKNOWN, |v| v.1);
            diags.error(
                location,
                format!(
                    "message_length_second_moment = {m2} is below message_length^2 = {}: a second moment is at least the squared mean",
                    mean * mean
                ),
                None,
            );
            return None;
        }
    }
    Some(second_moment)
}

/// The injection process of one point, with the burst length of an on/off source.
fn injection(
    c: &Columns,
    index: &[usize],
    used: &mut [bool; FIELDS.len()],
    diags: &mut Diags,
    kind_location: Location,
) -> Option<InjectionProcess> {
    let injection_process = match get(&c.injection_process, index[INJECTION])? {
        InjectionProcessKind::Poisson => InjectionProcess::Poisson,
        InjectionProcessKind::Bernoulli => InjectionProcess::Bernoulli,
        InjectionProcessKind::OnOff => {
            used[BURST] = true;
            let Some(burst_length) = get(&c.burst_length, index[BURST]) else {
                let location = c.written[INJECTION].unwrap_or(kind_location);
                diags.error(
                    location,
                    "injection_process `on_off` needs `traffic.burst_length`, the mean number of messages in a burst",
                    None,
                );
                return None;
            };
            InjectionProcess::OnOff { burst_length }
        }
    };
    Some(injection_process)
}

/// The traffic of one point: a pattern (with its hotspot fraction and nodes) or a trace.
fn traffic(
    c: &Columns,
    index: &[usize],
    used: &mut [bool; FIELDS.len()],
    diags: &mut Diags,
    kind_location: Location,
) -> Option<Traffic> {
    let traffic = match get(&c.traffic, index[TRAFFIC])? {
        TrafficPattern::Uniform | TrafficPattern::BroadcastMix => Traffic::Uniform,
        TrafficPattern::UniformWithSelf => Traffic::UniformWithSelf,
        TrafficPattern::Transpose => Traffic::Transpose,
        TrafficPattern::BitComplement => Traffic::BitComplement,
        TrafficPattern::BitReverse => Traffic::BitReverse,
        TrafficPattern::Tornado => Traffic::Tornado,
        TrafficPattern::Neighbor => Traffic::Neighbor,
        TrafficPattern::GroupShift => Traffic::GroupShift,
        TrafficPattern::WorstCase => Traffic::WorstCase,
        TrafficPattern::Trace => Traffic::Trace(crate::scenario::TraceFile {
            path: c.trace.clone().unwrap_or_default().into(),
            flit_bytes: c.trace_flit_bytes,
            ..crate::scenario::TraceFile::default()
        }),
        TrafficPattern::Hotspot => {
            used[HOTSPOT] = true;
            let Some(fraction) = get(&c.hotspot_fraction, index[HOTSPOT]) else {
                let location = c.written[TRAFFIC].unwrap_or(kind_location);
                diags.error(
                    location,
                    "traffic `hotspot` needs `traffic.hotspot_fraction` and `traffic.hotspot_nodes`",
                    None,
                );
                return None;
            };
            Traffic::Hotspot { fraction, nodes: c.hotspot_nodes.clone() }
        }
    };
    Some(traffic)
}

/// The checks and settings that need the whole scenario: which conventions the point read,
/// the broadcast order only with broadcasts, the length distribution against the second
/// moment, and the routing conventions resolved.
fn finish(
    scenario: Scenario,
    c: &Columns,
    index: &[usize],
    used: &mut [bool; FIELDS.len()],
    diags: &mut Diags,
    kind_location: Location,
) -> Option<ScenarioPoint> {
    let switching = scenario.switching;
    used[CIRCUIT_BACKOFF] |= switching == Switching::Circuit;
    used[CIRCUIT_RETRY_LIMIT] |= switching == Switching::Circuit;
    used[DATELINE] |= scenario.dateline.is_some() && scenario.dateline_convention().is_some();
    used[BROADCAST_ORDER] |= scenario.broadcast_fraction > 0.0;
    // Only broadcasts have a tree order: with beta = 0 the default stands for "none", so that
    // equal systems compare (and hash) equal.
    let scenario = Scenario {
        broadcast_order: if scenario.broadcast_fraction > 0.0 {
            scenario.broadcast_order
        } else {
            BroadcastOrder::Random
        },
        ..scenario
    };
    used[TIE_BREAK] |= scenario.tie_break.is_some() && scenario.tie_break_convention().is_some();
    if let Err(message) = bounds::message_lengths(&scenario) {
        let location = c
            .keys
            .message_length_second_moment
            .get(index[SECOND_MOMENT])
            .map_or(kind_location, |v| v.1);
        diags.error(
            location,
            message,
            Some("leave `message_length_second_moment` out: the distribution implies it".into()),
        );
        return None;
    }
    let scenario = scenario.with_conventions_resolved();
    Some(ScenarioPoint { label: label(&scenario), scenario })
}

/// The message-length distribution of one point around its mean `mean`, located errors for
/// missing or inconsistent bounds.
pub(super) fn lengths(
    c: &Columns,
    index: &[usize],
    used: &mut [bool; FIELDS.len()],
    diags: &mut Diags,
    mean: u32,
) -> Option<MessageLengths> {
    let name = get(&c.keys.message_length_distribution, index[LENGTH_DISTRIBUTION])?;
    let at = |values: &Values<u32>, field: usize| values.get(index[field]).map(|v| v.1);
    let location = at(&c.keys.message_length_min, LENGTH_MIN)
        .or(at(&c.keys.message_length_max, LENGTH_MAX))
        .or(c.keys.message_length_distribution.get(index[LENGTH_DISTRIBUTION]).map(|v| v.1))
        .unwrap_or(Location::UNKNOWN);
    let bounded = matches!(name, LengthDistributionKind::Bimodal | LengthDistributionKind::Uniform);
    used[LENGTH_MIN] |= bounded;
    used[LENGTH_MAX] |= bounded;
    let (min, max) = if bounded {
        (
            get(&c.keys.message_length_min, index[LENGTH_MIN]),
            get(&c.keys.message_length_max, index[LENGTH_MAX]),
        )
    } else {
        (None, None)
    };
    let missing = match name {
        LengthDistributionKind::Bimodal => min.is_none() || max.is_none(),
        LengthDistributionKind::Uniform => min.is_none() && max.is_none(),
        _ => false,
    };
    if missing {
        diags.error(
            location,
            format!(
                "message_length_distribution `{}` needs {} (flits)",
                name.as_str(),
                if name == LengthDistributionKind::Bimodal {
                    "`message_length_min` and `message_length_max`, its two lengths"
                } else {
                    "`message_length_min` or `message_length_max` (the other follows from the mean `message_length`)"
                }
            ),
            None,
        );
        return None;
    }
    let lengths = MessageLengths::from_parts(name.as_str(), mean, min, max)?;
    if let Err(message) = lengths.check(mean) {
        diags.error(location, message, None);
        return None;
    }
    Some(lengths)
}
