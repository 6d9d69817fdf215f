//! Throughput mode: the accepted rate against the offered load, past saturation too.
//!
//! In latency mode (the default, [`Measure::Latency`]) a run stops as soon as the offered load
//! exceeds what the network accepts: its source queues grow without bound and the latency it
//! measures would be transient. In throughput mode ([`Measure::Throughput`]):
//!
//! - Each node's source queue holds at most `source_queue_capacity` messages (messages
//!   waiting for an injection virtual channel; the V messages holding one are not counted). A
//!   message the traffic generator produces for a node whose queue is full is dropped and
//!   counted (`source_drops`). Only the generator's messages are dropped (`Engine::generate`):
//!   a message produced inside the simulation (a broadcast copy, a retry) always joins its
//!   queue. Memory therefore stays bounded at any load.
//! - The run never stops for a growing backlog: it always simulates the whole window and
//!   measures the accepted rate there (messages whose tail flit reached its destination in the
//!   window, per node and cycle, as in latency mode), and per destination node its minimum and
//!   maximum (as BookSim reports them), in messages and in flits. The offered rate counts the
//!   dropped messages too.
//! - Status: `ok` when the network accepted what was offered (the same test as latency mode:
//!   the window's accepted messages fall short of its offered ones, drops included, by at most
//!   2% or 5 per node; the window's messages are then followed until delivered and their
//!   latency is reported as in latency mode). Otherwise `saturated`, with every throughput
//!   quantity measured over the full window and valid (the accepted rate past saturation is
//!   the point of the mode), `latency` empty (it would only measure the queue cap), and a
//!   detail giving offered, accepted and dropped. `deadlock` stays `deadlock`.
//!
//! The accepted rate per node counts the flits ejected at the node in the window exactly (a
//! message whose ejection straddles a window boundary counts with its flits inside), at no cost
//! per flit: completions add the message length, and the ejections in progress are corrected
//! once when the window opens and once when it closes.

use serde::Serialize;

/// Default `source_queue_capacity` in throughput mode (messages per node).
pub const DEFAULT_SOURCE_QUEUE_CAPACITY: u32 = 100;

/// What a simulation measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Measure {
    /// Latency at a stable load; the run stops early as `saturated` past saturation.
    #[default]
    Latency,
    /// Accepted throughput over the whole window at any load, with capped source queues.
    Throughput {
        /// Messages one node's source queue holds at most; further ones are dropped.
        source_queue_capacity: u32,
    },
}

impl Measure {
    /// Throughput mode with the default source-queue capacity.
    pub const THROUGHPUT: Measure =
        Measure::Throughput { source_queue_capacity: DEFAULT_SOURCE_QUEUE_CAPACITY };

    /// Whether this is latency mode (the default, left out of cache keys).
    pub fn is_latency(&self) -> bool {
        *self == Measure::Latency
    }

    /// `latency` or `throughput`, as in specs and result rows.
    pub fn as_str(&self) -> &'static str {
        match self {
            Measure::Latency => "latency",
            Measure::Throughput { .. } => "throughput",
        }
    }

    /// The source-queue capacity in throughput mode.
    pub fn source_queue_capacity(&self) -> Option<u32> {
        match self {
            Measure::Latency => None,
            Measure::Throughput { source_queue_capacity } => Some(*source_queue_capacity),
        }
    }
}

/// Throughput mode's per-node state in the engine.
#[derive(Clone, Debug)]
pub(crate) struct Tracker {
    capacity: u32,
    /// Messages waiting in each node's source queue.
    queue_len: Vec<u32>,
    /// The longest any source queue has been (tests check the cap).
    pub(crate) longest_queue: u32,
    /// Messages dropped at full source queues over the run, and in the window.
    pub(crate) drops: u64,
    pub(crate) window_drops: u64,
    /// Messages delivered to each node in the window.
    node_messages: Vec<u64>,
    /// Flits ejected at each node in the window, offset by `i64` corrections at the window's
    /// boundaries (see the module documentation).
    node_flits: Vec<i64>,
}

impl Tracker {
    pub(crate) fn new(nodes: usize, capacity: u32) -> Tracker {
        Tracker {
            capacity,
            queue_len: vec![0; nodes],
            longest_queue: 0,
            drops: 0,
            window_drops: 0,
            node_messages: vec![0; nodes],
            node_flits: vec![0; nodes],
        }
    }

    /// Whether a generated message for `source` is dropped (its queue is full); counts it.
    #[inline]
    pub(crate) fn drops(&mut self, source: u32, in_window: bool) -> bool {
        if self.queue_len[source as usize] < self.capacity {
            return false;
        }
        self.drops += 1;
        self.window_drops += u64::from(in_window);
        true
    }

    /// A message joined `node`'s source queue.
    #[inline]
    pub(crate) fn enqueued(&mut self, node: u32) {
        let len = &mut self.queue_len[node as usize];
        *len += 1;
        self.longest_queue = self.longest_queue.max(*len);
    }

    /// A message left `node`'s source queue for an injection VC.
    #[inline]
    pub(crate) fn dequeued(&mut self, node: u32) {
        let len = &mut self.queue_len[node as usize];
        *len = len.saturating_sub(1);
    }

    /// A message was delivered to `node` during the window (its flits are counted by
    /// [`Tracker::delivered_flits`], packet by packet).
    #[inline]
    pub(crate) fn delivered(&mut self, node: u32) {
        self.node_messages[node as usize] += 1;
    }

    /// A packet of `length` flits (a whole message unless it was split) was delivered to
    /// `node` during the window.
    #[inline]
    pub(crate) fn delivered_flits(&mut self, node: u32, length: u32) {
        self.node_flits[node as usize] += i64::from(length);
    }

    /// A message being ejected at `node` had `delivered` flits ejected when the window
    /// opened (`opening`) or closed: those before the opening are not the window's, those of
    /// an unfinished message at the closing are.
    pub(crate) fn ejection_in_progress(&mut self, node: u32, delivered: u32, opening: bool) {
        let flits = i64::from(delivered);
        self.node_flits[node as usize] += if opening { -flits } else { flits };
    }

    /// The saturation detail of a window whose accepted messages fell short of the offered
    /// ones (`generated` entered the network or a queue; the drops come on top).
    pub(crate) fn shortfall_detail(&self, generated: u64, delivered: u64, span: u64) -> String {
        format!(
            "throughput mode: the network accepted {delivered} of the {} messages offered in \
             the {span}-cycle measurement window ({} dropped at full source queues of {} \
             messages): the offered load exceeds what the network accepts; the throughput \
             columns are measured over the full window",
            generated + self.window_drops,
            self.window_drops,
            self.capacity
        )
    }

    /// Appends throughput mode's intermediates (rates over a window of `span` cycles).
    pub(crate) fn add_intermediates(&self, add: &mut impl FnMut(&str, f64), span: f64) {
        let range = |values: &mut dyn Iterator<Item = f64>| {
            values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
        };
        let (min, max) = range(&mut self.node_messages.iter().map(|&n| n as f64 / span));
        let (flit_min, flit_max) =
            range(&mut self.node_flits.iter().map(|&n| n.max(0) as f64 / span));
        add("source_queue_capacity", f64::from(self.capacity));
        add("source_drops", self.window_drops as f64);
        add("throughput_min", min);
        add("throughput_max", max);
        add("flit_throughput_min", flit_min);
        add("flit_throughput_max", flit_max);
    }
}

#[cfg(test)]
mod tests;
