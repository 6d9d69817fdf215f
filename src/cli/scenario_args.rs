//! `key=value` scenario arguments of `runner solve` and `runner simulate`.
//!
//! Keys are the scenario's field names, as in specs and result columns.

use super::InputError;
use crate::scenario::{
    BroadcastOrder, Dateline, Ejection, Routing, Scenario, Switching, TieBreak, Topology, Traffic,
};
use crate::spec::suggest::did_you_mean;

/// Every key accepted: the scenario fields, as in specs.
pub use crate::spec::validate::FIELDS as KEYS;

/// Applies `key=value` pairs to `scenario`, in order.
/// A key given twice is refused rather than letting the last one win silently.
pub fn apply(scenario: &mut Scenario, pairs: &[String]) -> Result<(), InputError> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(InputError(format!(
                "`{pair}` is not key=value; keys: {}",
                KEYS.join(", ")
            )));
        };
        let key = key.trim();
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            return Err(InputError(format!(
                "`{key}` is given twice (`{first}` and `{pair}`); give it once"
            )));
        }
        seen.push((key, pair));
        set(scenario, key, value.trim())?;
    }
    Ok(())
}

fn number<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, InputError> {
    value.parse().map_err(|_| {
        InputError(format!("`{key}={value}`: `{value}` is not a valid number for `{key}`"))
    })
}

fn set(s: &mut Scenario, key: &str, value: &str) -> Result<(), InputError> {
    let radix = s.topology.radix();
    let dimensions = s.topology.dimensions();
    match key {
        "topology" => {
            s.topology = match value {
                "torus" => Topology::Torus { radix: radix.max(2), dimensions: dimensions.max(1) },
                "mesh" => Topology::Mesh { radix: radix.max(2), dimensions: dimensions.max(1) },
                "hypercube" => Topology::Hypercube { dimensions: dimensions.max(1) },
                "fat_tree" => Topology::FatTree { processors: 4u32.pow(dimensions.clamp(1, 15)) },
                _ => return Err(choice(key, value, &["torus", "mesh", "hypercube", "fat_tree"])),
            }
        }
        "radix" => {
            let radix: u32 = number(key, value)?;
            s.topology = match s.topology {
                Topology::Torus { dimensions, .. } => Topology::Torus { radix, dimensions },
                Topology::Mesh { dimensions, .. } => Topology::Mesh { radix, dimensions },
                _ => return Err(InputError("`radix` applies to topology=torus or mesh".into())),
            }
        }
        "dimensions" => {
            let dimensions: u32 = number(key, value)?;
            s.topology = match s.topology {
                Topology::Torus { radix, .. } => Topology::Torus { radix, dimensions },
                Topology::Mesh { radix, .. } => Topology::Mesh { radix, dimensions },
                Topology::Hypercube { .. } => Topology::Hypercube { dimensions },
                Topology::FatTree { .. } => {
                    return Err(InputError(
                        "the fat-tree takes `processors`, not `dimensions`".into(),
                    ));
                }
            }
        }
        "processors" => {
            let processors: u32 = number(key, value)?;
            s.topology = Topology::FatTree { processors };
        }
        "switching" => {
            let k = s.switching.scouting_distance().unwrap_or(0);
            s.switching = match value {
                "wormhole" => Switching::Wormhole,
                "scouting" => Switching::Scouting { scouting_distance: k },
                "circuit" => Switching::Circuit,
                _ => return Err(choice(key, value, &["wormhole", "scouting", "circuit"])),
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
        "virtual_channels" => s.virtual_channels = number(key, value)?,
        "escape_channels" => s.escape_channels = Some(number(key, value)?),
        "buffer_depth" => s.buffer_depth = number(key, value)?,
        "router_delay" => s.router_delay = number(key, value)?,
        "input_speedup" => s.input_speedup = Some(number(key, value)?),
        "circuit_backoff" => s.circuit_backoff = Some(number(key, value)?),
        "circuit_retry_limit" => s.circuit_retry_limit = Some(number(key, value)?),
        "message_length" => s.message_length = number(key, value)?,
        "message_length_second_moment" => {
            s.message_length_second_moment = Some(number(key, value)?)
        }
        "fault_rate" => s.fault_rate = number(key, value)?,
        "broadcast_fraction" => s.broadcast_fraction = number(key, value)?,
        "startup_latency" => s.startup_latency = number(key, value)?,
        "broadcast_order" => {
            s.broadcast_order = match value {
                "random" => BroadcastOrder::Random,
                "round_robin" => BroadcastOrder::RoundRobin,
                _ => return Err(choice(key, value, &["random", "round_robin"])),
            }
        }
        "ejection" => {
            s.ejection = match value {
                "single" => Ejection::Single,
                "unlimited" => Ejection::Unlimited,
                _ => return Err(choice(key, value, &["single", "unlimited"])),
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
        "traffic" => {
            let (fraction, nodes) = hotspot(s);
            let patterns = Traffic::every(fraction, nodes);
            let names: Vec<&str> = patterns.iter().map(|p| p.as_str()).collect();
            s.traffic = patterns
                .into_iter()
                .find(|p| p.as_str() == value)
                .ok_or_else(|| choice(key, value, &names))?;
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
        _ => {
            let hint = did_you_mean(key, KEYS)
                .map(|k| format!("did you mean `{k}`?"))
                .unwrap_or_else(|| format!("keys: {}", KEYS.join(", ")));
            return Err(InputError(format!("unknown key `{key}`; {hint}")));
        }
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
