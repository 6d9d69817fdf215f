//! Hypercube broadcast along the spanning binomial tree (Shahrabi, Ould-Khaoua and Mackenzie,
//! "Unicast-based broadcast: an analysis for the hypercube with adaptive routing", ACM SAC
//! 2001, Sections 2 and 3).
//!
//! With `broadcast_fraction` beta > 0 each generated message is a broadcast with probability
//! beta (one uniform draw per arrival, made only when beta > 0, so beta = 0 leaves every random
//! stream, and so every result, bit-identical to the unicast simulation), else a unicast.
//!
//! - The tree is recursive doubling rooted at the source, with the dimensions taken in a
//!   rotated order `base, base + 1, ..., base + n - 1 (mod n)`: position `p` is dimension
//!   `(base + p) mod n`. The base is drawn uniformly per broadcast (`broadcast_order: random`,
//!   the default) or taken round-robin per source node (`round_robin`: 0, 1, 2, ...), Abraham
//!   and Padmanabhan's balancing.
//! - Multi-port: the source sends n copies, one per position in order; a node that received
//!   its copy over position `p` forwards one copy over each position after `p`. A node whose
//!   address differs from the source's in positions `p1 < ... < pm` receives exactly one copy,
//!   over `pm`, from the node differing in `p1 .. p(m-1)`: every node once, in at most n steps.
//! - Every copy is a one-hop message routed by the scenario's routing. Copies are created in
//!   the sending node's local queue (the source's at generation, a forwarding node's in the
//!   cycle after it received its copy, as a message generated then) and injected like any
//!   message: FIFO behind the node's other messages, over one of its V injection VCs.
//! - Start-up latency Delta: a copy holds its injection VC Delta cycles before its header may
//!   request the output channel (the start-up of each send; unicasts have none).
//!
//! Latency. The paper's broadcast latency runs from the source sending its first copy (the
//! cycle the first copy takes an injection VC, the start-up included) until the last node has
//! received its copy (the end of the cycle in which that copy's tail flit is ejected). A copy
//! received in cycle t is forwarded from cycle t + 1, and a lone one-hop copy takes
//! `Delta + 1 + router_delay + M` cycles from taking its injection VC to delivery (the header
//! waits Delta, crosses the link, waits router_delay, and the M flits are ejected one per
//! cycle, the unicast convention). The last node to receive is the one opposite the source,
//! at the end of the chain of first copies (positions 0, 1, ..., n - 1, each forwarded at
//! once); every other node is reached no later, since a copy queued behind its siblings at a
//! node waits a multiple of `Delta + M` only. So with no other traffic the broadcast latency is
//! exactly `n (M + Delta + 1 + router_delay)` from any source, whatever V, the order and the
//! base (derived here, tested per source in `broadcast/tests.rs`). The model's zero-load
//! figure `n (M + Delta)` (eq. 1, errata E-BC-3) omits the per-step link and ejection cycle,
//! as its unicast figure omits the ejection cycle.
//!
//! Measured, for broadcasts generated in the window (followed until their last copy is
//! received): `latency` (from the first send), `broadcast_latency_from_generation` (the first
//! copy's source-queue wait included); `unicast_latency` for the unicasts; `source_wait` and
//! `network_latency` are those of the copies, one-hop messages (the model's per-step `W_s`
//! and, less Delta + 1 + router_delay, `S_b`); channel rates by message class over the window
//! under the model's keys `lambda_cu` (unicasts), `lambda_cb` (the sources' copies),
//! `lambda_cr` (replicated copies), and the replications per receiving node `omega_bar`.
//! The percentiles follow the means: `latency_p50` ... `latency_max` are those of the broadcast
//! latency, `network_latency_*` and `source_wait_*` those of the copies, and
//! `unicast_latency_p50` ... `unicast_latency_max` those of the unicasts (whose mean is
//! `unicast_latency`).

use crate::measurement::{Measurement, Status};
use crate::scenario::{BroadcastOrder, Scenario};

use super::super::percentiles::Histogram;
use super::{Engine, Message, NONE, slab_insert};

#[cfg(test)]
mod tests;

/// `Record::started` of a broadcast whose first copy has not taken an injection VC yet.
const NOT_STARTED: u64 = u64::MAX;

/// The broadcast state of a run with `broadcast_fraction > 0`.
pub(crate) struct Broadcasts {
    /// beta: probability that a generated message is a broadcast.
    fraction: f64,
    /// Delta in cycles.
    pub(super) startup: u64,
    order: BroadcastOrder,
    /// n, and N - 1 receptions per broadcast.
    dims: u32,
    receivers: u32,
    /// Round-robin order: the next base dimension per source node.
    next_base: Vec<u32>,
    /// Broadcast slab and its free list (`Message::broadcast` indexes it).
    records: Vec<Record>,
    free: Vec<u32>,
    pub(super) counts: Counts,
    /// Test builds: every reception as (broadcast serial, node), and every completed
    /// broadcast as (serial, source, latency from the first send).
    #[cfg(test)]
    pub(crate) receptions: Vec<(u64, u32)>,
    #[cfg(test)]
    pub(crate) completed: Vec<(u64, u32, u64)>,
    #[cfg(test)]
    serials: u64,
}

/// One broadcast in progress.
#[derive(Clone, Copy, Debug)]
struct Record {
    source: u32,
    base: u32,
    /// Copies still to be received.
    remaining: u32,
    measured: bool,
    generated: u64,
    started: u64,
    #[cfg(test)]
    serial: u64,
}

/// Counters over the measurement window.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counts {
    /// Broadcasts generated in the window, and those not yet received everywhere.
    pub(crate) measured: u64,
    pub(crate) outstanding: u64,
    /// Sums over completed measured broadcasts: latency from the first send, from generation.
    latency_sum: f64,
    generation_sum: f64,
    /// Copies delivered in the window: their number, latency and source-queue wait sums.
    copies: u64,
    copy_latency_sum: f64,
    copy_wait_sum: f64,
    /// Exact distributions (`sim::percentiles`) of the completed measured broadcasts' latency
    /// (from the first send), and of the network latency and source wait of the copies
    /// delivered in the window: the quantities whose means `latency`, `network_latency` and
    /// `source_wait` report.
    latencies: Histogram,
    copy_network_latencies: Histogram,
    copy_waits: Histogram,
    /// Link traversals of the messages delivered in the window, by class.
    unicast_hops: u64,
    source_copy_hops: u64,
    replica_hops: u64,
    /// Copies received in the window, and the copies their receivers forwarded.
    receptions: u64,
    replications: u64,
}

impl Broadcasts {
    /// The broadcast state for `scenario`, or `None` when it has no broadcasts (`check` has
    /// accepted it: a hypercube, an integral Delta).
    pub(super) fn new(scenario: &Scenario, dims: u32, nodes: u32) -> Option<Box<Broadcasts>> {
        (scenario.broadcast_fraction > 0.0).then(|| {
            Box::new(Broadcasts {
                fraction: scenario.broadcast_fraction,
                startup: scenario.startup_latency as u64,
                order: scenario.broadcast_order,
                dims,
                receivers: nodes - 1,
                next_base: vec![0; nodes as usize],
                records: Vec::with_capacity(nodes as usize),
                free: Vec::new(),
                counts: Counts {
                    latencies: Histogram::new(),
                    copy_network_latencies: Histogram::new(),
                    copy_waits: Histogram::new(),
                    ..Counts::default()
                },
                #[cfg(test)]
                receptions: Vec::new(),
                #[cfg(test)]
                completed: Vec::new(),
                #[cfg(test)]
                serials: 0,
            })
        })
    }

    /// Dimension of tree position `p` of broadcast `b`.
    #[inline]
    fn dimension(&self, b: u32, p: u32) -> u32 {
        let d = self.records[b as usize].base + p;
        if d >= self.dims { d - self.dims } else { d }
    }
}

impl Engine {
    /// Whether the next generated message is a broadcast (draws only when beta > 0).
    #[inline]
    pub(super) fn next_is_broadcast(&mut self) -> bool {
        match &self.broadcasts {
            Some(b) => self.rng.open_unit() <= b.fraction,
            None => false,
        }
    }

    /// Copies one broadcast produces: the network messages it offers (throughput mode's
    /// offered load counts a dropped broadcast as these).
    pub(super) fn copies_per_broadcast(&self) -> u64 {
        self.broadcasts.as_ref().map_or(1, |b| u64::from(b.receivers))
    }

    /// Broadcasts generated in the window and not yet received everywhere.
    pub(crate) fn broadcasts_outstanding(&self) -> u64 {
        self.broadcasts.as_ref().map_or(0, |b| b.counts.outstanding)
    }

    /// A broadcast generated at `source` in the current cycle: its n copies join the source's
    /// local queue in tree order.
    pub(crate) fn broadcast(&mut self, source: u32) {
        let now = self.now;
        let measured = self.window.open;
        let Some(b) = self.broadcasts.as_deref_mut() else {
            return;
        };
        let base = match b.order {
            BroadcastOrder::Random => self.rng.below(u64::from(b.dims)) as u32,
            BroadcastOrder::RoundRobin => {
                let base = b.next_base[source as usize];
                b.next_base[source as usize] = if base + 1 == b.dims { 0 } else { base + 1 };
                base
            }
        };
        let record = Record {
            source,
            base,
            remaining: b.receivers,
            measured,
            generated: now,
            started: NOT_STARTED,
            #[cfg(test)]
            serial: {
                b.serials += 1;
                b.serials
            },
        };
        let id = slab_insert(&mut b.records, &mut b.free, record);
        if measured {
            b.counts.measured += 1;
            b.counts.outstanding += 1;
            self.batches.generated(now - self.window.start);
        }
        for p in 0..b.dims {
            self.send_copy(source, id, p, now);
        }
    }

    /// A copy of broadcast `b` from `node` over tree position `p`, generated at cycle `at`.
    fn send_copy(&mut self, node: u32, b: u32, p: u32, at: u64) {
        let Some(state) = self.broadcasts.as_deref() else {
            return;
        };
        let dest = node ^ (1 << state.dimension(b, p));
        if self.window.open {
            self.window.generated += 1;
        }
        self.generated_total += 1;
        let ties = if self.router.random_ties() { self.rng.next_u64() as u32 } else { u32::MAX };
        let id = self.allocate(Message {
            broadcast: b,
            position: p,
            ..Message::new(node, dest, ties, self.length, at, false)
        });
        self.enqueue(node, id, at);
    }

    /// A copy of broadcast `message.broadcast` took an injection VC at cycle `at`: the
    /// broadcast's first send starts then if none has.
    pub(super) fn copy_started(&mut self, b: u32, at: u64) {
        if let Some(state) = self.broadcasts.as_deref_mut() {
            let record = &mut state.records[b as usize];
            if record.started == NOT_STARTED {
                record.started = at;
            }
        }
    }

    /// `message` was delivered in the current cycle: counts it by class; a broadcast copy is
    /// received and forwarded (from the next cycle) over the positions after its own.
    pub(super) fn delivered_with_broadcasts(&mut self, message: &Message) {
        let now = self.now;
        let counting = self.window.open;
        let Some(state) = self.broadcasts.as_deref_mut() else {
            return;
        };
        let b = message.broadcast;
        if b == NONE {
            if counting {
                state.counts.unicast_hops += u64::from(message.hops);
            }
            return;
        }
        let record = state.records[b as usize];
        let forwards = state.dims - 1 - message.position;
        if counting {
            let c = &mut state.counts;
            c.copies += 1;
            let (cycles, waited) =
                (now + 1 - message.generated, message.injected - message.generated);
            c.copy_network_latencies.record(cycles - waited);
            c.copy_waits.record(waited);
            c.copy_latency_sum += cycles as f64;
            c.copy_wait_sum += waited as f64;
            if message.source == record.source {
                c.source_copy_hops += u64::from(message.hops);
            } else {
                c.replica_hops += u64::from(message.hops);
            }
            c.receptions += 1;
            c.replications += u64::from(forwards);
        }
        #[cfg(test)]
        state.receptions.push((record.serial, message.dest));
        for p in message.position + 1..state.dims {
            self.send_copy(message.dest, b, p, now + 1);
        }
        let Some(state) = self.broadcasts.as_deref_mut() else {
            return;
        };
        let record = &mut state.records[b as usize];
        record.remaining -= 1;
        if record.remaining > 0 {
            return;
        }
        let record = *record;
        state.free.push(b);
        let latency = now + 1 - record.started;
        #[cfg(test)]
        state.completed.push((record.serial, record.source, latency));
        if self.window.end.is_none_or(|end| record.generated < end) {
            self.transient.delivered(record.generated, latency as f64);
        }
        if record.measured {
            let c = &mut state.counts;
            c.latencies.record(latency);
            c.latency_sum += latency as f64;
            c.generation_sum += (now + 1 - record.generated) as f64;
            c.outstanding -= 1;
            self.batches.delivered(record.generated - self.window.start, latency as f64);
            self.sections.delivered(record.generated - self.window.start, latency);
        }
    }

    /// With broadcasts: `latency` becomes the broadcast latency and the unicasts' moves to
    /// `unicast_latency`; adds the broadcast intermediates (rates over `span` cycles and
    /// `links` channels). `unicasts` is the number of delivered measured unicasts.
    pub(crate) fn add_broadcast_measurements(
        &self,
        m: &mut Measurement,
        unicasts: u64,
        span: f64,
        links: f64,
    ) {
        let Some(state) = self.broadcasts.as_deref() else {
            return;
        };
        let c = &state.counts;
        let done = c.measured - c.outstanding;
        m.messages_measured = Some(done);
        m.unicast_latency = m.latency.take();
        m.network_latency = None;
        m.source_wait = None;
        // The unicasts' percentiles go with their mean (`unicast_latency_p50` ...); the
        // broadcasts' replace them, and the histograms follow the percentile columns.
        m.unicast_latency_percentiles = m.latency_percentiles.take();
        m.histograms = None;
        m.network_latency_percentiles = None;
        m.source_wait_percentiles = None;
        crate::sim::stats::set_interval(m, None);
        m.latency_percentiles_ci95 = [None; 4];
        let valid = matches!(m.status, Status::Ok | Status::Imprecise);
        if valid && done > 0 {
            m.latency = Some(c.latency_sum / done as f64);
            m.latency_percentiles = c.latencies.percentiles();
            let end = self.window.end.unwrap_or(self.now);
            crate::sim::stats::set_latency_intervals(m, self, end);
        }
        if valid && c.copies > 0 {
            let copies = c.copies as f64;
            m.source_wait = Some(c.copy_wait_sum / copies);
            m.network_latency = Some((c.copy_latency_sum - c.copy_wait_sum) / copies);
            m.network_latency_percentiles = c.copy_network_latencies.percentiles();
            m.source_wait_percentiles = c.copy_waits.percentiles();
        }
        if valid && (done > 0 || c.copies > 0) {
            m.histograms = Some(crate::measurement::LatencyHistograms {
                latency: if done > 0 { c.latencies.binned() } else { None },
                network_latency: c.copy_network_latencies.binned(),
                source_wait: c.copy_waits.binned(),
            });
        }
        let ratio = |a: f64, b: u64| if b > 0 { a / b as f64 } else { 0.0 };
        let rate = |hops: u64| hops as f64 / (links * span);
        let mut add = |key: &str, value: f64| m.intermediates.push((key.to_string(), value));
        if valid && done > 0 {
            add("broadcast_latency_from_generation", c.generation_sum / done as f64);
        }
        add("broadcasts_measured", done as f64);
        add("unicasts_measured", unicasts as f64);
        add("copy_latency", ratio(c.copy_latency_sum, c.copies));
        add("w_s", ratio(c.copy_wait_sum, c.copies));
        add("omega_bar", ratio(c.replications as f64, c.receptions));
        add("lambda_cu", rate(c.unicast_hops));
        add("lambda_cb", rate(c.source_copy_hops));
        add("lambda_cr", rate(c.replica_hops));
        add("lambda_c", rate(c.unicast_hops + c.source_copy_hops + c.replica_hops));
        if let Some(p_v) = m.blocking_probability {
            add("p_v", p_v);
        }
        if let Some(v_bar) = m.multiplexing_degree {
            add("v_bar", v_bar);
        }
    }
}
