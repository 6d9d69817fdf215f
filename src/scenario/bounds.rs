//! One set of bounds on the numbers a researcher writes, applied by specs
//! (`spec::validate`) and by the command line (`runner solve`, `runner simulate`) alike, so that
//! neither path accepts what the other refuses. The evaluators check what only they know
//! (`sim::check`, `model::check`); these are the bounds every path shares. Each one is far
//! beyond any network a researcher simulates on purpose, and low enough that nothing
//! downstream overflows or allocates without limit. The README's Limits section lists them.
//! The bounds of each scenario field are in its row of [`fields::FIELDS`].

use super::Routing;
use super::fields::{self, Value};
use crate::number::compact;

/// The most flits per buffer, cycles of router delay or circuit back-off, links of
/// scouting distance, flits per input port and cycle, and flits per message: 2^20.
pub const MAX_COUNT: u32 = super::fields::MAX_COUNT;

/// The most cycles of a simulation setting (`cycles`, `warmup_cycles`, `max_cycles`,
/// `deadlock_cycles`): 10^10, days of simulation on the smallest network.
pub const MAX_CYCLES: u64 = 10_000_000_000;

/// The most messages one node's source queue may hold in throughput mode.
pub const MAX_SOURCE_QUEUE_CAPACITY: u32 = 1_000_000;

/// The most messages all source queues together may hold in throughput mode (nodes x
/// `source_queue_capacity`): 2^26, a few GB of queued messages at most.
pub const MAX_QUEUED_MESSAGES: u64 = 1 << 26;

/// Every bounded integer field a spec or the command line sets: (name, least, most), from the
/// scenario table.
pub fn integer_fields() -> impl Iterator<Item = (&'static str, u32, u32)> {
    fields::FIELDS.iter().filter(|f| f.swept).filter_map(|f| match f.value {
        Value::Count { least, most } => Some((f.name, least, most)),
        _ => None,
    })
}

/// Every bounded real field a spec or the command line sets: (name, least, most, whether the
/// most is allowed), from the scenario table. NaN and infinities are refused everywhere.
pub fn real_fields() -> impl Iterator<Item = (&'static str, f64, f64, bool)> {
    fields::FIELDS.iter().filter(|f| f.swept).filter_map(|f| match f.value {
        Value::Real { least, most, most_included } => Some((f.name, least, most, most_included)),
        _ => None,
    })
}

/// Checks an integer field; `Err` says what is wrong (the caller adds where).
pub fn integer(field: &str, value: u32) -> Result<(), String> {
    let Some(Value::Count { least, most }) = fields::get(field).map(|f| f.value) else {
        return Ok(());
    };
    if value < least {
        return Err(format!("{field} must be at least {least}, found {value}"));
    }
    if value > most {
        return Err(format!("{field} must be at most {most}, found {value}"));
    }
    if field == "processors"
        && !(value.is_power_of_two() && value.trailing_zeros().is_multiple_of(2))
    {
        return Err(format!("processors must be a power of 4 (4, 16, 64, ...), found {value}"));
    }
    Ok(())
}

/// Checks a real field: finite and within its range.
pub fn real(field: &str, value: f64) -> Result<(), String> {
    let Some(Value::Real { least: low, most: high, most_included: inclusive }) =
        fields::get(field).map(|f| f.value)
    else {
        return if value.is_finite() {
            Ok(())
        } else {
            Err(format!("{field} must be a finite number, found {}", compact(value)))
        };
    };
    let found = compact(value);
    let ok =
        value.is_finite() && value >= low && if inclusive { value <= high } else { value < high };
    if ok {
        Ok(())
    } else if high == f64::MAX {
        Err(format!("{field} must be a finite number >= {}, found {found}", compact(low)))
    } else {
        let bracket = if inclusive { "]" } else { ")" };
        Err(format!(
            "{field} must lie in [{}, {}{bracket}, found {found}",
            compact(low),
            compact(high)
        ))
    }
}

/// The message-length distribution against its mean, and the second moment it implies
/// against `message_length_second_moment` when both are given.
pub fn message_lengths(s: &super::Scenario) -> Result<(), String> {
    let lengths = s.message_length_distribution;
    lengths.check(s.message_length)?;
    if let (false, Some(given)) = (lengths.is_fixed(), s.message_length_second_moment) {
        let implied = lengths.second_moment(s.message_length);
        if (given - implied).abs() > 1e-9 * implied {
            return Err(format!(
                "message_length_second_moment = {given} contradicts the {} \
                 message_length_distribution with mean {}, whose E[M^2] is {implied}: leave \
                 message_length_second_moment out (the distribution implies it)",
                lengths.as_str(),
                s.message_length
            ));
        }
    }
    Ok(())
}

/// Hotspot nodes: each node at most once.
pub fn hotspot_nodes(nodes: &[u32]) -> Result<(), String> {
    for (i, node) in nodes.iter().enumerate() {
        if nodes[..i].contains(node) {
            return Err(format!("hotspot_nodes lists node {node} twice; list each node once"));
        }
    }
    Ok(())
}

/// `escape_channels` applies to the routings with escape channels only.
pub fn escape_channels(routing: Routing, escape: Option<u32>) -> Result<(), String> {
    match (routing, escape) {
        (Routing::Duato | Routing::Nbc, _) | (_, None) => Ok(()),
        (other, Some(e)) => Err(format!(
            "escape_channels applies to routing duato or nbc only; routing {} has no escape \
             channels, so escape_channels = {e} would be ignored: leave it unset",
            other.as_str()
        )),
    }
}

/// A cycle count of a simulation (`cycles`, `warmup_cycles`, `max_cycles`,
/// `deadlock_cycles`): at most [`MAX_CYCLES`], and at least 1 except the warm-up.
pub fn cycles(field: &str, value: u64) -> Result<(), String> {
    let least = u64::from(field != "warmup_cycles");
    if value < least {
        Err(format!("{field} must be at least {least}, found {value}"))
    } else if value > MAX_CYCLES {
        Err(format!("{field} must be at most {MAX_CYCLES} (10^10), found {value}"))
    } else {
        Ok(())
    }
}

/// Throughput mode's source-queue capacity on a network of `nodes` nodes.
pub fn source_queue_capacity(capacity: u32, nodes: u64) -> Result<(), String> {
    if capacity == 0 {
        return Err("source_queue_capacity must be at least 1 message, found 0".into());
    }
    if capacity > MAX_SOURCE_QUEUE_CAPACITY {
        return Err(format!(
            "source_queue_capacity must be at most {MAX_SOURCE_QUEUE_CAPACITY} messages, \
             found {capacity}"
        ));
    }
    let total = nodes.saturating_mul(u64::from(capacity));
    if total > MAX_QUEUED_MESSAGES {
        return Err(format!(
            "source_queue_capacity {capacity} on {nodes} nodes lets the source queues hold \
             {total} messages, more than the {MAX_QUEUED_MESSAGES} the simulator allows; \
             use at most {} per node",
            (MAX_QUEUED_MESSAGES / nodes.max(1)).max(1)
        ));
    }
    Ok(())
}

/// A value of scenario field `field`, checked against the field's bounds: a count by
/// [`integer`], a real by [`real`]; a word of a vocabulary has none. The bounds check of the
/// `copy` keys and the command line's numbers go through it.
pub trait Within {
    /// `Err` says what is wrong (the caller adds where).
    fn within(&self, field: &str) -> Result<(), String>;
}

impl Within for u32 {
    fn within(&self, field: &str) -> Result<(), String> {
        integer(field, *self)
    }
}

impl Within for f64 {
    fn within(&self, field: &str) -> Result<(), String> {
        real(field, *self)
    }
}

/// A word of a vocabulary has no bounds.
impl<T: fields::Named> Within for T {
    fn within(&self, _field: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Defines `copy_keys`, which checks the `copy` keys of `fields::each_scenario_key`.
macro_rules! copy_keys {
    ($( $(#[$meta:meta])* $name:ident: $ty:ty $(= $default:expr)?, $use:ident; )*) => {
        /// Checks each `copy` key of a scenario against its field's bounds.
        fn copy_keys(s: &super::Scenario) -> Result<(), String> {
            $( copy_keys!(@$use s, $name $(= $default)?); )*
            Ok(())
        }
    };
    (@own $($ignored:tt)*) => {};
    (@copy $s:ident, $name:ident = $default:expr) => {
        $s.$name.within(stringify!($name))?;
    };
    (@copy $s:ident, $name:ident) => {
        if let Some(value) = &$s.$name {
            value.within(stringify!($name))?;
        }
    };
}
fields::each_scenario_key!(copy_keys);

/// Every bound a scenario must satisfy, whatever path built it: its integer and real
/// fields, its hotspot nodes and its escape channels.
pub fn check(s: &super::Scenario) -> Result<(), String> {
    use super::{Switching, Traffic};
    // A graph's bounds are checked when its file is parsed (`scenario::graph`).
    for (key, value) in s.topology.counts() {
        integer(key, value)?;
    }
    if let Switching::Scouting { scouting_distance } = s.switching {
        integer("scouting_distance", scouting_distance)?;
    }
    copy_keys(s)?;
    let optional = [
        ("escape_channels", s.escape_channels),
        ("circuit_backoff", s.circuit_backoff),
        ("circuit_retry_limit", s.circuit_retry_limit),
    ];
    for (field, value) in optional {
        if let Some(value) = value {
            integer(field, value)?;
        }
    }
    integer("message_length", s.message_length)?;
    if let Some(m2) = s.message_length_second_moment {
        real("message_length_second_moment", m2)?;
    }
    message_lengths(s)?;
    real("broadcast_fraction", s.broadcast_fraction)?;
    real("startup_latency", s.startup_latency)?;
    if let Traffic::Hotspot { fraction, nodes } = &s.traffic {
        real("hotspot_fraction", *fraction)?;
        hotspot_nodes(nodes)?;
    }
    if let Some(burst_length) = s.injection_process.burst_length() {
        real("burst_length", burst_length)?;
    }
    escape_channels(s.routing, s.escape_channels)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rejected_reals_are_echoed_in_their_shortest_form() {
        let message = super::real("fault_rate", 1e300).expect_err("out of range");
        assert!(message.ends_with("found 1e300"), "{message}");
        let message = super::real("startup_latency", -1e-300).expect_err("negative");
        assert!(message.ends_with("found -1e-300"), "{message}");
    }
}
