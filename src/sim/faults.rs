//! Static node faults: the fault map of one run, and the table the routing and the traffic
//! consult.
//!
//! Each node is faulty with probability θ = `fault_rate`, independently (the circuit-switching
//! paper's assumption 6: F. Safaei, A. Khonsari, M. Fathy, N. Alzeidi, M. Ould-Khaoua,
//! "Performance modeling of fault-tolerant circuit-switched communication networks", PARELEC
//! 2006, Section 3.1). The draw has its own random stream, seeded by the *fault seed*: the
//! planner derives it from the spec seed, the scenario and the replication index but not the
//! load, so every load point of a scenario sees the same map and each replication its own. A
//! map is redrawn (from the same stream) until the healthy nodes are connected and at least two
//! ("faults ... do not disconnect the network"), at most [`MAX_DRAWS`] times.
//!
//! Minimal routing cannot reach every healthy pair around the faults: a healthy pair whose
//! minimal paths all cross a faulty node has no fault-free minimal path. The policy
//! (`docs/faults.md` gives the numbers and the reasons) is:
//! - faulty nodes neither send, receive nor forward;
//! - a message goes only to a destination reachable from its source over a fault-free minimal
//!   path ([`FaultMap::arrival`]: uniform over those destinations);
//! - routing keeps only the outputs whose next node is healthy and still has a fault-free
//!   minimal path to the destination ([`FaultMap::retain`], the one hook in the engine's
//!   routing), so a header never enters a faulty node and never reaches a dead end.
//!
//! The table "node `n` has a fault-free minimal path to node `t`" is a bitset of N² bits (one
//! row of N bits per node; 2 MB at the largest supported network, [`MAX_FAULT_NODES`] nodes),
//! built once per run by dynamic programming over the distance to each destination.

use std::sync::Arc;

use super::SimError;
use super::network::hop::{Candidate, NO_LINK};
use super::rng::Rng;
use super::topology::Geometry;
use crate::scenario::{Routing, Scenario, Topology};

/// Draws before giving up on a map whose healthy nodes are connected.
pub(crate) const MAX_DRAWS: u32 = 1000;

/// Largest network with faults (the table has N² bits).
pub(crate) const MAX_FAULT_NODES: u64 = 4096;

/// Added to the run seed when no fault seed is given, so the fault stream differs from the
/// traffic stream of the same seed.
const FAULT_STREAM: u64 = 0x6A09_E667_F3BC_C909;

/// Checks the fault settings of a scenario (cheap: nothing is drawn). Which switching
/// techniques tolerate faults is `sim::check`'s business.
pub(crate) fn check(scenario: &Scenario) -> Result<(), SimError> {
    let fault_rate = scenario.fault_rate;
    let nodes = scenario.nodes();
    if !(fault_rate.is_finite() && (0.0..1.0).contains(&fault_rate)) {
        return Err(SimError(format!("fault_rate must lie in [0, 1), got {fault_rate}")));
    }
    if fault_rate == 0.0 {
        return Ok(());
    }
    if nodes > MAX_FAULT_NODES {
        return Err(SimError(format!(
            "faults are simulated on networks of at most {MAX_FAULT_NODES} nodes (the table of \
             fault-free minimal paths has N² bits), this one has {nodes}"
        )));
    }
    if let Topology::FatTree { .. }
    | Topology::Dragonfly { .. }
    | Topology::KaryNTree { .. }
    | Topology::HyperX { .. }
    | Topology::SlimFly { .. }
    | Topology::Graph { .. } = scenario.topology
    {
        return Err(SimError(format!(
            "fault_rate > 0 is simulated on tori, meshes and hypercubes (the fault papers' \
             networks), not on the {}: leave fault_rate at 0",
            match scenario.topology {
                Topology::Dragonfly { .. } => "dragonfly",
                Topology::KaryNTree { .. } => "k-ary n-tree",
                Topology::HyperX { .. } => "HyperX",
                Topology::SlimFly { .. } => "Slim Fly",
                Topology::Graph { .. } => "graph",
                _ => "butterfly fat-tree",
            }
        )));
    }
    if scenario.routing == Routing::DimensionOrder {
        return Err(SimError(
            "fault_rate > 0 needs a routing with every minimal output (adaptive, duato or nbc): \
             dimension_order has one path per pair, and a fault on it would leave the pair \
             with no route for ever"
                .into(),
        ));
    }
    if matches!(scenario.routing, Routing::WestFirst | Routing::OddEven) {
        return Err(SimError(format!(
            "fault_rate > 0 needs a routing with every minimal output (adaptive, duato or nbc): \
             {} forbids some turns, so a fault-free minimal path may exist that it may not take",
            scenario.routing.as_str()
        )));
    }
    if !scenario.traffic.is_uniform() {
        return Err(SimError(
            "fault_rate > 0 needs `uniform` traffic: destinations are drawn uniformly among the \
             nodes the source reaches over a fault-free minimal path"
                .into(),
        ));
    }
    Ok(())
}

/// The faults of one run and what follows from them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FaultMap {
    /// The seed of the fault stream.
    pub(crate) seed: u64,
    /// Maps drawn until one had connected healthy nodes (1 = the first).
    pub(crate) draws: u32,
    /// Bit `n` set: node `n` is faulty.
    faulty: Vec<u64>,
    /// The healthy nodes, ascending.
    healthy: Vec<u32>,
    /// u64 words per row of `reach`.
    words: usize,
    /// Row `n`, bit `t`: `n` and `t` are healthy and a minimal path from `n` to `t` avoids
    /// every faulty node (`n` reaches itself).
    reach: Vec<u64>,
    /// Per node: destinations other than itself it reaches (0 for a faulty node).
    served: Vec<u32>,
    /// Links with a faulty end (never used).
    pub(crate) dead_links: u64,
}

impl FaultMap {
    /// The map of a run: `None` when `fault_rate` is 0. `fault_seed` defaults to a stream
    /// derived from the run seed.
    pub(crate) fn for_run(
        geometry: &Geometry,
        fault_rate: f64,
        fault_seed: Option<u64>,
        seed: u64,
    ) -> Result<Option<Arc<FaultMap>>, SimError> {
        if fault_rate == 0.0 {
            return Ok(None);
        }
        let seed = fault_seed.unwrap_or(seed.wrapping_add(FAULT_STREAM));
        FaultMap::draw(geometry, fault_rate, seed).map(|map| Some(Arc::new(map)))
    }

    /// Draws node faults with probability `fault_rate` from `seed` until the healthy nodes
    /// (at least two) are connected, then builds the reachability table.
    pub(crate) fn draw(
        geometry: &Geometry,
        fault_rate: f64,
        seed: u64,
    ) -> Result<FaultMap, SimError> {
        let nodes = geometry.nodes as usize;
        let words = nodes.div_ceil(64);
        let mut rng = Rng::new(seed);
        let mut faulty = vec![0u64; words];
        for draw in 1..=MAX_DRAWS {
            faulty.fill(0);
            for node in 0..nodes {
                if rng.open_unit() <= fault_rate {
                    faulty[node / 64] |= 1 << (node % 64);
                }
            }
            if connected(geometry, &faulty) {
                return Ok(FaultMap::build(geometry, seed, draw, faulty));
            }
        }
        Err(SimError(format!(
            "fault_rate {fault_rate} on {nodes} nodes: none of {MAX_DRAWS} fault maps drawn left \
             at least two healthy nodes, all connected (fault seed {seed}); lower fault_rate"
        )))
    }

    /// A map with the given faulty nodes (tests and measurements build their own maps).
    #[cfg(test)]
    pub(crate) fn with_faults(geometry: &Geometry, faulty_nodes: &[u32]) -> FaultMap {
        let mut faulty = vec![0u64; (geometry.nodes as usize).div_ceil(64)];
        for &n in faulty_nodes {
            faulty[n as usize / 64] |= 1 << (n % 64);
        }
        FaultMap::build(geometry, 0, 1, faulty)
    }

    fn build(geometry: &Geometry, seed: u64, draws: u32, faulty: Vec<u64>) -> FaultMap {
        let nodes = geometry.nodes;
        let n = nodes as usize;
        let words = n.div_ceil(64);
        let is_faulty = |node: u32| faulty[node as usize / 64] >> (node % 64) & 1 == 1;
        let healthy: Vec<u32> = (0..nodes).filter(|&node| !is_faulty(node)).collect();
        let mut reach = vec![0u64; n * words];
        // Per destination: nodes bucketed by distance, then "reaches t" in increasing distance
        // (every minimal step leads one hop closer, to a node already decided).
        let levels = geometry.size.diameter as usize + 1;
        let mut bucket_start = vec![0usize; levels + 1];
        let mut order = vec![0u32; n];
        let mut distance = vec![0u32; n];
        let mut reaches = vec![false; n];
        for &t in &healthy {
            bucket_start.fill(0);
            for node in 0..nodes {
                let d = geometry.minimal_steps(node, t, |_| {});
                distance[node as usize] = d;
                bucket_start[d as usize + 1] += 1;
            }
            for level in 0..levels {
                bucket_start[level + 1] += bucket_start[level];
            }
            for node in 0..nodes {
                let slot = &mut bucket_start[distance[node as usize] as usize];
                order[*slot] = node;
                *slot += 1;
            }
            for &node in &order {
                let ok = !is_faulty(node)
                    && (node == t || {
                        let mut any = false;
                        geometry.minimal_steps(node, t, |step| {
                            let next = geometry.downstream(geometry.channel(node, step.port));
                            any |= next != NO_LINK && reaches[next as usize];
                        });
                        any
                    });
                reaches[node as usize] = ok;
                if ok {
                    reach[node as usize * words + t as usize / 64] |= 1 << (t % 64);
                }
            }
        }
        let served = (0..n)
            .map(|node| {
                let row = &reach[node * words..(node + 1) * words];
                row.iter().map(|w| w.count_ones()).sum::<u32>().saturating_sub(1)
            })
            .collect();
        let dead_links = (0..geometry.channel_slots() as u32)
            .filter(|&ch| {
                let down = geometry.downstream(ch);
                down != NO_LINK && (is_faulty(geometry.router_of(ch)) || is_faulty(down))
            })
            .count() as u64;
        FaultMap { seed, draws, faulty, healthy, words, reach, served, dead_links }
    }

    /// Whether `node` is faulty.
    pub(crate) fn is_faulty(&self, node: u32) -> bool {
        self.faulty[node as usize / 64] >> (node % 64) & 1 == 1
    }

    /// Number of faulty nodes.
    pub(crate) fn fault_count(&self) -> u64 {
        self.faulty.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Number of healthy nodes (the senders).
    pub(crate) fn healthy_count(&self) -> u32 {
        self.healthy.len() as u32
    }

    /// Whether a minimal path from `node` to `dest` avoids every faulty node (`NO_LINK`: no).
    #[inline]
    pub(crate) fn reaches(&self, node: u32, dest: u32) -> bool {
        node != NO_LINK
            && self.reach[node as usize * self.words + dest as usize / 64] >> (dest % 64) & 1 == 1
    }

    /// The routing hook: keeps the candidates from `cur` whose next node is healthy and has a
    /// fault-free minimal path to `dest`.
    #[inline]
    pub(crate) fn retain(
        &self,
        geometry: &Geometry,
        cur: u32,
        dest: u32,
        candidates: &mut Vec<Candidate>,
    ) {
        let base = geometry.first_channel(cur);
        candidates.retain(|c| self.reaches(geometry.downstream(base + c.port), dest));
    }

    /// The next message of uniform traffic: a healthy source, uniformly, and a destination
    /// uniformly among those it reaches over a fault-free minimal path. With no faulty node
    /// this draws exactly what uniform traffic without faults draws, value for value.
    #[inline]
    pub(crate) fn arrival(&self, rng: &mut Rng) -> (u32, u32) {
        let source = self.healthy[rng.below(self.healthy.len() as u64) as usize];
        let served = self.served[source as usize];
        let mut pick = rng.below(u64::from(served)) as u32;
        let row = &self.reach[source as usize * self.words..(source as usize + 1) * self.words];
        for (i, &word) in row.iter().enumerate() {
            let mut bits =
                if i == source as usize / 64 { word & !(1 << (source % 64)) } else { word };
            let n = bits.count_ones();
            if pick < n {
                for _ in 0..pick {
                    bits &= bits - 1;
                }
                return (source, i as u32 * 64 + bits.trailing_zeros());
            }
            pick -= n;
        }
        // `served` counts the bits of the row, so the loop always returns.
        unreachable!("destination {pick} beyond the {served} served by node {source}")
    }

    /// Ordered pairs of distinct healthy nodes, and those without a fault-free minimal path.
    pub(crate) fn unserved_pairs(&self) -> (u64, u64) {
        let h = self.healthy.len() as u64;
        let pairs = h * h.saturating_sub(1);
        let served: u64 = self.healthy.iter().map(|&n| u64::from(self.served[n as usize])).sum();
        (pairs, pairs - served)
    }

    /// A short hash of the map (which nodes are faulty): 16 hex digits of blake3.
    pub(crate) fn hash(&self) -> String {
        let bytes: Vec<u8> = self.faulty.iter().flat_map(|w| w.to_le_bytes()).collect();
        blake3::hash(&bytes).to_hex()[..16].to_string()
    }

    /// Records the map in a measurement: `fault_count`, `fault_map`, and the intermediates
    /// `fault_draws` and `unserved_pair_fraction` (healthy pairs no message goes between).
    pub(crate) fn annotate(&self, m: &mut crate::measurement::Measurement) {
        m.fault_count = Some(self.fault_count());
        m.fault_map = Some(self.hash());
        let (pairs, unserved) = self.unserved_pairs();
        m.intermediates.push(("fault_draws".into(), f64::from(self.draws)));
        let fraction = if pairs > 0 { unserved as f64 / pairs as f64 } else { 0.0 };
        m.intermediates.push(("unserved_pair_fraction".into(), fraction));
    }
}

/// Whether the healthy nodes (at least two) form one connected component.
fn connected(geometry: &Geometry, faulty: &[u64]) -> bool {
    let is_faulty = |node: u32| faulty[node as usize / 64] >> (node % 64) & 1 == 1;
    let healthy = (0..geometry.nodes).filter(|&n| !is_faulty(n)).count();
    let Some(start) = (0..geometry.nodes).find(|&n| !is_faulty(n)) else {
        return false;
    };
    if healthy < 2 {
        return false;
    }
    let mut seen = vec![false; geometry.nodes as usize];
    let mut stack = vec![start];
    seen[start as usize] = true;
    let mut count = 1;
    while let Some(node) = stack.pop() {
        for port in 0..geometry.ports_at(node) {
            let next = geometry.downstream(geometry.channel(node, port));
            if next != NO_LINK && !is_faulty(next) && !seen[next as usize] {
                seen[next as usize] = true;
                count += 1;
                stack.push(next);
            }
        }
    }
    count == healthy
}

#[cfg(test)]
mod tests;
