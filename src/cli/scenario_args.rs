//! `key=value` scenario arguments of `runner solve` and `runner simulate`.
//!
//! Keys are the scenario's field names, as in specs and result columns.

use super::InputError;
use crate::scenario::bounds::Within;
use crate::scenario::fields::Named;
use crate::scenario::{
    BroadcastOrder, Dateline, GlobalArrangement, InjectionProcess, MessageLengths, RouterPreset,
    Routing, Scenario, Switching, TieBreak, Topology, TopologyKind, Traffic,
};
use crate::suggest::did_you_mean;

/// The keys applied in this order: the scenario's sweep axes, as in specs (with the key-only
/// fields of the scenario table, `hotspot_nodes`, also accepted).
pub use crate::scenario::fields::SWEPT as KEYS;

/// Applies `key=value` pairs to `scenario`.
///
/// A key given twice is refused rather than letting the last one win silently, and so are keys
/// that contradict each other (`traffic=tornado hotspot_nodes=1`, `switching=wormhole
/// scouting_distance=2`, `topology=torus processors=64`). The pairs are applied in the order
/// of [`KEYS`] (`topology` before `radix`, `traffic` before `hotspot_fraction`), so the order
/// they are written in never matters. Numbers must be finite and within
/// [`crate::scenario::bounds`], the bounds specs apply; so must the whole scenario.
pub fn apply(scenario: &mut Scenario, pairs: &[String]) -> Result<(), InputError> {
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    let mut preset: Option<(RouterPreset, &str)> = None;
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(InputError(format!(
                "`{pair}` is not key=value; keys: {}",
                KEYS.join(", ")
            )));
        };
        let key = key.trim();
        if let Some((_, _, first)) = seen.iter().find(|(k, _, _)| *k == key) {
            return Err(InputError(format!(
                "`{key}` is given twice (`{first}` and `{pair}`); give it once"
            )));
        }
        if key == "router" {
            // A router preset: its knobs apply where no pair gives the key (below).
            if let Some((_, first)) = preset {
                return Err(InputError(format!(
                    "`router` is given twice (`{first}` and `{pair}`); give it once"
                )));
            }
            preset = Some((RouterPreset::parse(key, value.trim())?, pair.as_str()));
            continue;
        }
        if rank(key).is_none() {
            let hint = did_you_mean(key, KEYS.iter().copied().chain(["hotspot_nodes"]))
                .map(|k| format!("did you mean `{k}`?"))
                .unwrap_or_else(|| format!("keys: {}, hotspot_nodes", KEYS.join(", ")));
            return Err(InputError(format!("unknown key `{key}`; {hint}")));
        }
        seen.push((key, value.trim(), pair));
    }
    if let Some((preset, pair)) = preset {
        for &(key, value) in preset.knobs() {
            if !seen.iter().any(|(k, _, _)| *k == key) {
                seen.push((key, value, pair));
            }
        }
    }
    conflicts(&seen)?;
    seen.sort_by_key(|(key, _, _)| rank(key));
    for (key, value, _) in &seen {
        set(scenario, key, value)?;
    }
    if seen.iter().any(|(k, v, _)| *k == "topology" && *v == "graph")
        && scenario.topology.graph().is_none()
    {
        return Err(InputError("`topology=graph` needs `graph=<file>`, the file describing the network (docs/graph.md)".into()));
    }
    crate::scenario::bounds::check(scenario).map_err(InputError)?;
    // The second moment a length distribution implies, as specs record it.
    scenario.message_length_second_moment = scenario.length_second_moment();
    Ok(())
}

/// Where `key` is applied: its position in [`KEYS`], `hotspot_nodes` with `hotspot_fraction`.
fn rank(key: &str) -> Option<usize> {
    let key = if key == "hotspot_nodes" { "hotspot_fraction" } else { key };
    KEYS.iter().position(|k| *k == key)
}

/// Refuses keys that contradict each other: a later one would silently override the other.
fn conflicts(pairs: &[(&str, &str, &str)]) -> Result<(), InputError> {
    let given = |key: &str| pairs.iter().find(|(k, _, _)| *k == key);
    let rules: [(&str, &[&str], &[&str]); 5] = [
        ("traffic", &["hotspot"], &["hotspot_fraction", "hotspot_nodes"]),
        ("injection_process", &["on_off"], &["burst_length"]),
        (
            "message_length_distribution",
            &["bimodal", "uniform"],
            &["message_length_min", "message_length_max"],
        ),
        ("switching", &["scouting"], &["scouting_distance"]),
        ("topology", &["dragonfly"], &["global_arrangement"]),
    ];
    for (key, fits, dependants) in rules {
        let Some((_, value, pair)) = given(key) else { continue };
        if fits.contains(value) {
            continue;
        }
        if let Some((dependant, _, other)) = dependants.iter().find_map(|d| given(d)) {
            let needs: Vec<String> = fits.iter().map(|f| format!("{key}={f}")).collect();
            return Err(conflict(pair, other, dependant, &needs));
        }
    }
    // A topology key that the family given does not read.
    if let Some((_, value, pair)) = given("topology")
        && let Some(kind) = TopologyKind::ALL.into_iter().find(|k| k.as_str() == *value)
    {
        for (dependant, _, other) in pairs {
            let families: Vec<String> = TopologyKind::reading(dependant)
                .map(|k| format!("topology={}", k.as_str()))
                .collect();
            if !families.is_empty() && !kind.parameters().contains(dependant) {
                return Err(conflict(pair, other, dependant, &families));
            }
        }
    }
    Ok(())
}

/// `pair` and `other` conflict: `dependant` (set by `other`) applies to the settings `needs`
/// only (`topology=torus or topology=mesh`).
fn conflict(pair: &str, other: &str, dependant: &str, needs: &[String]) -> InputError {
    InputError(format!(
        "`{pair}` and `{other}` conflict: `{dependant}` applies to {} only; give one of them",
        needs.join(" or ")
    ))
}

/// A number for `key`: an integer within the key's bounds, or a finite real within them
/// ([`Within`], the bounds specs apply).
fn number<T: std::str::FromStr + Within>(key: &str, value: &str) -> Result<T, InputError> {
    let parsed: T = value.parse().map_err(|_| {
        InputError(format!("`{key}={value}`: `{value}` is not a valid number for `{key}`"))
    })?;
    parsed.within(key).map_err(|message| InputError(format!("`{key}={value}`: {message}")))?;
    Ok(parsed)
}

/// What a `copy` key of the scenario table takes: a number within its bounds, or a word of
/// its vocabulary.
trait Arg: Sized {
    fn parse(key: &str, value: &str) -> Result<Self, InputError>;
}

impl Arg for u32 {
    fn parse(key: &str, value: &str) -> Result<u32, InputError> {
        number(key, value)
    }
}

impl Arg for f64 {
    fn parse(key: &str, value: &str) -> Result<f64, InputError> {
        number(key, value)
    }
}

impl<T: Named> Arg for T {
    fn parse(key: &str, value: &str) -> Result<T, InputError> {
        T::ALL.iter().copied().find(|v| v.as_str() == value).ok_or_else(|| {
            let names: Vec<&str> = T::ALL.iter().map(|v| v.as_str()).collect();
            choice(key, value, &names)
        })
    }
}

/// Defines `set_copy_key`, which applies a `copy` key of `scenario::fields::each_scenario_key`.
macro_rules! set_copy_key {
    ($( $(#[$meta:meta])* $name:ident: $ty:ty $(= $default:expr)?, $use:ident; )*) => {
        /// Applies `key=value` when `key` is a `copy` key of the scenario table; `None` for
        /// every other key.
        fn set_copy_key(s: &mut Scenario, key: &str, value: &str) -> Option<Result<(), InputError>> {
            $( set_copy_key!(@$use s, key, value, $name: $ty $(= $default)?); )*
            None
        }
    };
    (@own $($ignored:tt)*) => {};
    (@copy $s:ident, $key:ident, $value:ident, $name:ident: $ty:ty = $default:expr) => {
        if $key == stringify!($name) {
            return Some(<$ty as Arg>::parse($key, $value).map(|v| $s.$name = v));
        }
    };
    (@copy $s:ident, $key:ident, $value:ident, $name:ident: $ty:ty) => {
        if $key == stringify!($name) {
            return Some(<$ty as Arg>::parse($key, $value).map(|v| $s.$name = Some(v)));
        }
    };
}
crate::scenario::fields::each_scenario_key!(set_copy_key);

/// Applies one `key=value` pair, by the part of the scenario it sets.
fn set(s: &mut Scenario, key: &str, value: &str) -> Result<(), InputError> {
    if let Some(applied) = set_copy_key(s, key, value) {
        return applied;
    }
    match key {
        "topology" | "graph" | "global_arrangement" => set_topology(s, key, value),
        _ if TopologyKind::reading(key).next().is_some() => set_topology(s, key, value),
        "message_length_distribution" | "message_length_min" | "message_length_max" => {
            set_lengths(s, key, value)
        }
        "traffic" | "injection_process" | "burst_length" | "hotspot_fraction" | "hotspot_nodes" => {
            set_traffic(s, key, value)
        }
        _ => set_router(s, key, value),
    }
}

/// The unknown-key error, with every key.
fn unknown(key: &str) -> InputError {
    InputError(format!("unknown key `{key}`; keys: {}", KEYS.join(", ")))
}

/// The network: its family and the keys its family reads.
fn set_topology(s: &mut Scenario, key: &str, value: &str) -> Result<(), InputError> {
    match key {
        "topology" => {
            let Some(kind) = TopologyKind::ALL.into_iter().find(|k| k.as_str() == value) else {
                let names: Vec<&str> = TopologyKind::ALL.iter().map(|k| k.as_str()).collect();
                return Err(choice(key, value, &names));
            };
            // A graph's file is the `graph` key, applied next.
            if let Some(topology) = Topology::example(kind, &s.topology) {
                s.topology = topology;
            }
        }
        "graph" => {
            // A graph file, relative to the working directory, read and parsed as a spec's.
            let graph = crate::spec::validate::read_graph(std::path::Path::new("."), value)
                .map_err(|problems| {
                    InputError(format!("`graph={value}`: {}", problems.join("; ")))
                })?;
            s.topology = Topology::Graph { graph: std::sync::Arc::new(graph) };
        }
        "global_arrangement" => {
            let arrangement = GlobalArrangement::parse(key, value)?;
            // The current dragonfly, else the command line's starting one.
            let start = match &s.topology {
                Topology::Dragonfly { .. } => Some(s.topology.clone()),
                other => Topology::example(TopologyKind::Dragonfly, other),
            };
            let Some(dragonfly @ Topology::Dragonfly { .. }) = start else {
                return Err(InputError(
                    "`global_arrangement` applies to topology=dragonfly".into(),
                ));
            };
            s.topology = dragonfly.with_global_arrangement(arrangement);
        }
        _ if TopologyKind::reading(key).next().is_some() => {
            let value: u32 = number(key, value)?;
            // The current family when it reads the key, else the one family that does.
            let families: Vec<TopologyKind> = TopologyKind::reading(key).collect();
            let start = match families[..] {
                _ if families.contains(&s.topology.family()) => Some(s.topology.clone()),
                [only] => Topology::example(only, &s.topology),
                _ => None,
            };
            let Some(topology) = start.and_then(|t| t.with_count(key, value)) else {
                let names: Vec<&str> = families.iter().map(|k| k.as_str()).collect();
                let names = crate::console::alternatives(&names);
                return Err(InputError(format!("`{key}` applies to topology={names}")));
            };
            s.topology = topology;
        }
        _ => return Err(unknown(key)),
    }
    Ok(())
}

/// Switching, routing, escape channels, the circuit's settings, message length, broadcasts
/// and the routing conventions (the `copy` keys of the scenario table: `set_copy_key`).
fn set_router(s: &mut Scenario, key: &str, value: &str) -> Result<(), InputError> {
    match key {
        "switching" => {
            let k = s.switching.scouting_distance().unwrap_or(0);
            s.switching = match value {
                "wormhole" => Switching::Wormhole,
                "scouting" => Switching::Scouting { scouting_distance: k },
                "circuit" => Switching::Circuit,
                "virtual_cut_through" => Switching::VirtualCutThrough,
                _ => {
                    return Err(choice(
                        key,
                        value,
                        &["wormhole", "scouting", "circuit", "virtual_cut_through"],
                    ));
                }
            }
        }
        "scouting_distance" => {
            s.switching = Switching::Scouting { scouting_distance: number(key, value)? };
        }
        "routing" => {
            let names: Vec<&str> = Routing::ALL.iter().map(|r| r.as_str()).collect();
            s.routing = Routing::ALL
                .into_iter()
                .find(|r| r.as_str() == value)
                .ok_or_else(|| choice(key, value, &names))?;
        }
        "escape_channels" => s.escape_channels = Some(number(key, value)?),
        "circuit_backoff" => s.circuit_backoff = Some(number(key, value)?),
        "circuit_retry_limit" => s.circuit_retry_limit = Some(number(key, value)?),
        "message_length" => s.message_length = number(key, value)?,
        "message_length_second_moment" => {
            s.message_length_second_moment = Some(number(key, value)?)
        }
        "broadcast_fraction" => s.broadcast_fraction = number(key, value)?,
        "startup_latency" => s.startup_latency = number(key, value)?,
        "broadcast_order" => {
            s.broadcast_order = match value {
                "random" => BroadcastOrder::Random,
                "round_robin" => BroadcastOrder::RoundRobin,
                _ => return Err(choice(key, value, &["random", "round_robin"])),
            }
        }
        "dateline" => {
            s.dateline = Some(match value {
                "per_traversal" => Dateline::PerTraversal,
                "switch" => Dateline::Switch,
                _ => return Err(choice(key, value, &["per_traversal", "switch"])),
            })
        }
        "tie_break" => {
            s.tie_break = Some(match value {
                "random" => TieBreak::Random,
                "positive" => TieBreak::Positive,
                _ => return Err(choice(key, value, &["random", "positive"])),
            })
        }
        _ => return Err(unknown(key)),
    }
    Ok(())
}

/// The message-length distribution and its bounds.
fn set_lengths(s: &mut Scenario, key: &str, value: &str) -> Result<(), InputError> {
    match key {
        "message_length_distribution" => {
            s.message_length_distribution =
                MessageLengths::from_parts(value, s.message_length, None, None)
                    .ok_or_else(|| choice(key, value, &MessageLengths::NAMES))?
        }
        "message_length_min" | "message_length_max" => {
            let bound: u32 = number(key, value)?;
            let (name, mut min, mut max) = match s.message_length_distribution {
                MessageLengths::Bimodal { min, max } => ("bimodal", min, max),
                MessageLengths::Uniform { min, max } => ("uniform", min, max),
                _ => {
                    return Err(InputError(format!(
                        "`{key}` applies to message_length_distribution=bimodal or uniform"
                    )));
                }
            };
            if key == "message_length_min" {
                min = bound;
            } else {
                max = bound;
            }
            // A uniform distribution given one bound: the other follows from the mean.
            let given = |b: u32| (b != 0).then_some(b);
            s.message_length_distribution =
                MessageLengths::from_parts(name, s.message_length, given(min), given(max))
                    .unwrap_or(s.message_length_distribution);
        }
        _ => return Err(unknown(key)),
    }
    Ok(())
}

/// The traffic pattern, its hotspot, and the injection process.
fn set_traffic(s: &mut Scenario, key: &str, value: &str) -> Result<(), InputError> {
    match key {
        "traffic" => {
            let (fraction, nodes) = hotspot(s);
            let patterns = Traffic::every(fraction, nodes);
            let names: Vec<&str> = patterns.iter().map(|p| p.as_str()).collect();
            s.traffic = patterns
                .into_iter()
                .find(|p| p.as_str() == value)
                .ok_or_else(|| choice(key, value, &names))?;
        }
        "injection_process" => {
            let burst_length = s.injection_process.burst_length().unwrap_or(1.0);
            s.injection_process = match value {
                "poisson" => InjectionProcess::Poisson,
                "bernoulli" => InjectionProcess::Bernoulli,
                "on_off" => InjectionProcess::OnOff { burst_length },
                _ => return Err(choice(key, value, &["poisson", "bernoulli", "on_off"])),
            }
        }
        "burst_length" => {
            s.injection_process = InjectionProcess::OnOff { burst_length: number(key, value)? };
        }
        "hotspot_fraction" => {
            let (_, nodes) = hotspot(s);
            s.traffic = Traffic::Hotspot { fraction: number(key, value)?, nodes };
        }
        "hotspot_nodes" => {
            let (fraction, _) = hotspot(s);
            let nodes = value
                .split(',')
                .map(|node| number(key, node.trim()))
                .collect::<Result<Vec<u32>, _>>()?;
            s.traffic = Traffic::Hotspot { fraction, nodes };
        }
        _ => return Err(unknown(key)),
    }
    Ok(())
}

fn choice(key: &str, value: &str, names: &[&str]) -> InputError {
    let hint = did_you_mean(value, names.iter().copied())
        .map(|k| format!("did you mean `{k}`?"))
        .unwrap_or_else(|| format!("expected one of: {}", names.join(", ")));
    InputError(format!("`{key}={value}`: {hint}"))
}

/// The hotspot fraction and nodes set so far (0 and none when the traffic is not hotspot).
fn hotspot(s: &Scenario) -> (f64, Vec<u32>) {
    match &s.traffic {
        Traffic::Hotspot { fraction, nodes } => (*fraction, nodes.clone()),
        _ => (0.0, Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(pairs: &[&str]) -> Result<Scenario, String> {
        let mut scenario = Scenario::new(Topology::Torus { radix: 8, dimensions: 2 });
        let pairs: Vec<String> = pairs.iter().map(|p| p.to_string()).collect();
        apply(&mut scenario, &pairs).map(|()| scenario).map_err(|e| e.0)
    }

    #[test]
    fn a_dragonfly_takes_its_global_arrangement_and_keeps_it_when_sized() {
        let pairs =
            ["topology=dragonfly", "global_arrangement=circulant", "terminals_per_router=3"];
        let s = applied(&[&pairs[..], &["routing=minimal"]].concat()).expect("a dragonfly");
        assert_eq!(s.topology.global_arrangement(), Some(GlobalArrangement::Circulant));
        assert_eq!(s.topology.count("terminals_per_router"), Some(3));
        assert_eq!(s.topology.label(), "dragonfly p=3 a=6 h=3 circulant");
        let error = applied(&["topology=torus", "global_arrangement=relative"]).unwrap_err();
        assert!(error.contains("applies to topology=dragonfly only"), "{error}");
        let error = applied(&["topology=dragonfly", "global_arrangement=relativ"]).unwrap_err();
        assert!(error.contains("did you mean `relative`?"), "{error}");
        // The default arrangement is left out of the serialized form (task ids unchanged).
        let absolute = applied(&["topology=dragonfly", "routing=minimal"]).expect("a dragonfly");
        let json = serde_json::to_string(&absolute.topology).unwrap_or_default();
        assert!(!json.contains("global_arrangement"), "{json}");
        assert!(serde_json::to_string(&s.topology).unwrap_or_default().contains("circulant"));
    }

    /// `graph=<file>` reads a graph file relative to the working directory, with the spec's
    /// checks; `topology=graph` needs it, and another topology refuses it.
    #[test]
    fn a_graph_comes_from_its_file() {
        let file = "graph=experiments/graphs/mesh4x4.txt";
        let s = applied(&["topology=graph", file, "routing=minimal", "virtual_channels=2"]);
        let s = s.expect("a graph");
        assert_eq!(s.topology.kind(), "graph");
        assert_eq!(s.nodes(), 16);
        assert!(crate::sim::check(&s).is_ok());
        assert_eq!(applied(&[file]).expect("graph alone").nodes(), 16);
        let error = applied(&["topology=graph"]).expect_err("no file");
        assert!(error.contains("needs `graph=<file>`"), "{error}");
        let error = applied(&["topology=torus", file]).expect_err("conflict");
        assert!(error.contains("conflict"), "{error}");
        let error = applied(&["graph=experiments/graphs/none.txt"]).expect_err("missing");
        assert!(error.contains("does not exist"), "{error}");
    }

    /// Issue 19: `traffic=tornado hotspot_nodes=1` simulated hotspot traffic.
    #[test]
    fn conflicting_keys_are_refused_in_either_order() {
        for pairs in [
            ["traffic=tornado", "hotspot_nodes=1"],
            ["hotspot_nodes=1", "traffic=tornado"],
            ["traffic=uniform", "hotspot_fraction=0.5"],
            ["switching=wormhole", "scouting_distance=2"],
            ["scouting_distance=2", "switching=circuit"],
            ["topology=torus", "processors=64"],
            ["radix=4", "topology=hypercube"],
        ] {
            let error = applied(&pairs).expect_err("conflict");
            assert!(error.contains("conflict"), "{pairs:?}: {error}");
        }
    }

    #[test]
    fn keys_apply_in_field_order_whatever_the_order_written() {
        let a = applied(&["hotspot_nodes=1,5", "hotspot_fraction=0.2", "traffic=hotspot"]);
        let b = applied(&["traffic=hotspot", "hotspot_fraction=0.2", "hotspot_nodes=1,5"]);
        assert_eq!(a, b);
        let s = a.expect("valid");
        assert_eq!(s.traffic, Traffic::Hotspot { fraction: 0.2, nodes: vec![1, 5] });
        let s = applied(&["dimensions=3", "radix=4", "topology=mesh"]).expect("valid");
        assert_eq!(s.topology, Topology::Mesh { radix: 4, dimensions: 3 });
        let s = applied(&["routers_per_group=6", "terminals_per_router=3", "topology=dragonfly"]);
        let dragonfly = Topology::Dragonfly {
            terminals_per_router: 3,
            routers_per_group: 6,
            global_links_per_router: 3,
            global_arrangement: crate::scenario::GlobalArrangement::Absolute,
        };
        assert_eq!(s.expect("valid").topology, dragonfly, "balanced h = p, a as given");
        let s = applied(&["scouting_distance=3", "switching=scouting"]).expect("valid");
        assert_eq!(s.switching, Switching::Scouting { scouting_distance: 3 });
    }

    /// Issue 19: NaN and infinities were accepted; the bounds were the spec's only.
    #[test]
    fn numbers_are_finite_and_within_the_shared_bounds() {
        for pair in [
            "message_length_second_moment=nan",
            "startup_latency=inf",
            "fault_rate=-inf",
            "hotspot_fraction=NaN",
            "buffer_depth=1048577",
            "input_speedup=4294967295",
            "router_delay=1048577",
            "circuit_backoff=4294967295",
            "scouting_distance=4294967295",
            "message_length=0",
        ] {
            let error = applied(&[pair]).expect_err("out of range");
            assert!(error.starts_with(&format!("`{pair}`: ")), "{pair}: {error}");
        }
        let error = applied(&["traffic=hotspot", "hotspot_fraction=0.5", "hotspot_nodes=3,3"])
            .expect_err("duplicate node");
        assert!(error.contains("lists node 3 twice"), "{error}");
        assert!(applied(&["buffer_depth=1048576", "router_delay=1048576"]).is_ok());
    }

    /// Issue 19: `escape_channels=4294967295` overflowed into "needs virtual_channels >= 0".
    #[test]
    fn escape_channels_messages_do_not_overflow() {
        let s = applied(&["routing=duato", "virtual_channels=4", "escape_channels=4294967295"])
            .expect("within the bounds");
        let error = crate::sim::check(&s).expect_err("too many escape channels").0;
        assert!(error.contains("virtual_channels >= 4294967296"), "{error}");
        let error = applied(&["routing=adaptive", "escape_channels=2"]).expect_err("ignored");
        assert!(error.contains("duato or nbc only"), "{error}");
    }
}
