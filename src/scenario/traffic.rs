//! Traffic: where messages go (the pattern, or a replayed trace) and when each node
//! generates them (the injection process).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where messages go (the traffic pattern). Permutations address nodes by their digits: the
/// coordinates of a torus or mesh (radix k), the bits of a hypercube (radix 2).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "pattern", rename_all = "snake_case")]
pub enum Traffic {
    /// Uniform over all other nodes (the papers' traffic; the default).
    #[default]
    Uniform,
    /// Uniform over all nodes, the source included (a self-addressed message is ejected at
    /// its source without crossing a link).
    UniformWithSelf,
    /// Digit `i` of the destination is digit `i + n/2` of the source (matrix transpose; needs
    /// an even number of dimensions). Nodes on the diagonal send to themselves.
    Transpose,
    /// Every bit of the node number complemented (needs a power-of-two node count).
    BitComplement,
    /// The bits of the node number reversed (needs a power-of-two node count).
    BitReverse,
    /// Each coordinate moved `ceil(k/2) - 1` places forward (torus or mesh with k >= 3).
    Tornado,
    /// Each coordinate moved one place forward, modulo k.
    Neighbor,
    /// Dragonfly only: every terminal of group i sends to a uniformly random terminal of group
    /// i + 1 (mod g), the adversarial pattern of Kim et al. (2008).
    GroupShift,
    /// Slim Fly only: every terminal of router `(s, a, b)` sends to a uniformly random terminal
    /// of router `(s, a + 1, b)`, at distance 2 through exactly one common neighbour; minimal
    /// routing then carries at most `1/(2p)` flits per terminal and cycle (`docs/slim_fly.md`).
    WorstCase,
    /// With probability `fraction` the destination is one of `nodes` (uniformly, not the
    /// source), otherwise uniform over the other nodes.
    Hotspot {
        /// Probability that a message goes to a hotspot node, 0 <= fraction <= 1.
        fraction: f64,
        /// The hotspot node numbers (dimension 0 varies fastest).
        nodes: Vec<u32>,
    },
    /// A recorded trace replayed with open-loop timing (simulator only; `docs/traces.md`): it
    /// gives every message's cycle, source, destination and length, so it replaces both the
    /// pattern and the injection process.
    Trace(TraceFile),
}

/// The trace file of `Traffic::Trace`: identified by its content, not its path.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceFile {
    /// Where the file is (absolute once the spec is loaded). Not serialized: a renamed copy is
    /// the same trace, so task ids hold the content hash instead.
    #[serde(skip)]
    pub path: std::path::PathBuf,
    /// blake3 of the file's content (hex); part of every task id.
    pub blake3: String,
    /// Bytes per flit, for a trace whose length column is `length_bytes`; `None` otherwise.
    /// Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flit_bytes: Option<u32>,
    /// What the loader's scan of the whole file found (derived from the content, so not
    /// serialized).
    #[serde(skip)]
    pub summary: TraceSummary,
}

/// What a trace holds, from one streaming scan of the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TraceSummary {
    /// Messages (records).
    pub messages: u64,
    /// Flits over all messages.
    pub flits: u64,
    /// Cycle of the last record (recorded time, before any time scale).
    pub last_cycle: u64,
    /// The highest node number a record names (source or destination).
    pub max_node: u32,
}

impl TraceFile {
    /// The simulated cycle of a record made at recorded cycle `cycle` under time scale
    /// `scale`: `round(cycle * scale)`, halves away from zero (`scale < 1` compresses time,
    /// a higher load).
    pub fn scaled_cycle(cycle: u64, scale: f64) -> u64 {
        // `as` saturates: a huge product becomes u64::MAX, never wraps.
        (cycle as f64 * scale).round() as u64
    }

    /// The simulated cycles the trace spans under `scale`: from 0 to its last scaled cycle.
    pub fn duration(&self, scale: f64) -> f64 {
        TraceFile::scaled_cycle(self.summary.last_cycle, scale) as f64 + 1.0
    }

    /// The load the trace offers under `scale` in messages per node per cycle: messages /
    /// nodes / duration.
    pub fn offered_rate(&self, scale: f64, nodes: u64) -> f64 {
        self.summary.messages as f64 / (nodes.max(1) as f64 * self.duration(scale))
    }

    /// The load the trace offers under `scale` in flits per node per cycle: messages x mean
    /// length / nodes / duration.
    pub fn offered_flit_load(&self, scale: f64, nodes: u64) -> f64 {
        self.summary.flits as f64 / (nodes.max(1) as f64 * self.duration(scale))
    }

    /// The mean message length in flits (0 for an empty trace).
    pub fn mean_length(&self) -> f64 {
        if self.summary.messages == 0 {
            0.0
        } else {
            self.summary.flits as f64 / self.summary.messages as f64
        }
    }
}

impl Traffic {
    /// The pattern's name, as in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            Traffic::Uniform => "uniform",
            Traffic::UniformWithSelf => "uniform_with_self",
            Traffic::Transpose => "transpose",
            Traffic::BitComplement => "bit_complement",
            Traffic::BitReverse => "bit_reverse",
            Traffic::Tornado => "tornado",
            Traffic::Neighbor => "neighbor",
            Traffic::GroupShift => "group_shift",
            Traffic::WorstCase => "worst_case",
            Traffic::Hotspot { .. } => "hotspot",
            Traffic::Trace(_) => "trace",
        }
    }

    /// The trace of trace traffic; `None` for a pattern.
    pub fn trace(&self) -> Option<&TraceFile> {
        match self {
            Traffic::Trace(trace) => Some(trace),
            _ => None,
        }
    }

    /// Every pattern, uniform first; a hotspot one with the given fraction and nodes.
    pub fn every(fraction: f64, nodes: Vec<u32>) -> [Traffic; 10] {
        [
            Traffic::Uniform,
            Traffic::UniformWithSelf,
            Traffic::Transpose,
            Traffic::BitComplement,
            Traffic::BitReverse,
            Traffic::Tornado,
            Traffic::Neighbor,
            Traffic::GroupShift,
            Traffic::WorstCase,
            Traffic::Hotspot { fraction, nodes },
        ]
    }

    /// Whether this is the default uniform pattern.
    pub fn is_uniform(&self) -> bool {
        *self == Traffic::Uniform
    }
}

/// When each node generates its messages (the injection process); the offered load is `rate`
/// messages per node per cycle whatever the process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InjectionProcess {
    /// Poisson arrivals at each node (the papers'; the default).
    #[default]
    Poisson,
    /// One message with probability `rate` in each cycle at each node (BookSim's), so at most
    /// one per node and cycle: `rate <= 1`.
    Bernoulli,
    /// Two-state on/off (Markov-modulated) source per node: on, it generates one message per
    /// cycle and turns off after each with probability 1 / `burst_length`; off, it turns on
    /// after each cycle with the probability that makes the mean rate `rate`. Bursts have a
    /// geometric number of messages with mean `burst_length`: `rate <= B / (B + 1)`.
    OnOff {
        /// B, the mean number of messages in a burst (consecutive cycles with a message), >= 1.
        burst_length: f64,
    },
}

/// The injection processes by name: `traffic.injection_process` in a spec, the
/// `injection_process` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InjectionProcessKind {
    /// Poisson arrivals at each node.
    Poisson,
    /// One message with probability `rate` per node and cycle.
    Bernoulli,
    /// Two-state on/off bursts with mean `burst_length` messages.
    OnOff,
}

impl InjectionProcessKind {
    /// The name used in specs, rows and on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            InjectionProcessKind::Poisson => "poisson",
            InjectionProcessKind::Bernoulli => "bernoulli",
            InjectionProcessKind::OnOff => "on_off",
        }
    }
}

impl InjectionProcess {
    /// The process, without its parameters.
    pub fn process(&self) -> InjectionProcessKind {
        match self {
            InjectionProcess::Poisson => InjectionProcessKind::Poisson,
            InjectionProcess::Bernoulli => InjectionProcessKind::Bernoulli,
            InjectionProcess::OnOff { .. } => InjectionProcessKind::OnOff,
        }
    }

    /// The process's name, as in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        self.process().as_str()
    }

    /// Whether this is the default Poisson process, left out of serialized scenarios.
    pub fn is_poisson(&self) -> bool {
        *self == InjectionProcess::Poisson
    }

    /// The mean burst length B of an on/off source.
    pub fn burst_length(&self) -> Option<f64> {
        match *self {
            InjectionProcess::OnOff { burst_length } => Some(burst_length),
            _ => None,
        }
    }

    /// The highest rate (messages per node per cycle) the process can offer: none for
    /// Poisson, 1 for Bernoulli, B / (B + 1) for on/off (each burst is followed by at least
    /// one silent cycle).
    pub fn max_rate(&self) -> Option<f64> {
        match *self {
            InjectionProcess::Poisson => None,
            InjectionProcess::Bernoulli => Some(1.0),
            InjectionProcess::OnOff { burst_length } => Some(burst_length / (burst_length + 1.0)),
        }
    }

    /// Checks `rate` against [`InjectionProcess::max_rate`]; `Err` says why and what to do.
    pub fn check_rate(&self, rate: f64) -> Result<(), String> {
        match self.max_rate() {
            Some(most) if rate > most => Err(match self {
                InjectionProcess::Bernoulli => format!(
                    "injection_process bernoulli generates at most one message per node and \
                     cycle: rate must be at most 1, found {rate}"
                ),
                _ => format!(
                    "an on_off source with burst_length {} offers at most B / (B + 1) = {most} \
                     messages per node and cycle (a burst sends one per cycle and is followed \
                     by at least one silent cycle), found rate {rate}: lower the rate or \
                     lengthen the bursts",
                    self.burst_length().unwrap_or(1.0)
                ),
            }),
            _ => Ok(()),
        }
    }
}
