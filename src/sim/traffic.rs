//! Traffic: when messages are generated (the process) and where they go (the pattern).
//!
//! The process is Poisson at `rate` messages per node per cycle by default. Independent Poisson
//! sources superpose to one Poisson stream of rate `nodes * rate` whose arrivals pick their
//! source uniformly, which is what [`Traffic::next_arrival`] draws: exact exponential gaps, any
//! number of arrivals in one cycle, and cost proportional to the arrivals only. Bernoulli and
//! on/off sources keep per-node state on a calendar (`injection`); the pattern then picks the
//! destination of each source's message the same way. The pattern
//! ([`crate::scenario::Traffic`]) picks the destination: uniform over the other nodes (the
//! papers'), uniform including the source, a hotspot mix, or a permutation (transpose, bit
//! complement, bit reverse, tornado, neighbour) precomputed as a table. Permutations address
//! nodes by digits: coordinates of a torus or mesh, bits of a hypercube, base-4 digits of a
//! fat-tree processor, the coordinates of a HyperX terminal's router (the terminal keeping its index
//! there; tornado needs a torus or mesh). With static node faults, uniform traffic
//! becomes [`Pattern::Served`]: healthy sources only (so the network-wide rate is `rate` times
//! the healthy nodes), each sending uniformly to the destinations it reaches over a fault-free minimal
//! path (see `faults`). Later issues add patterns (broadcast trees) as new
//! [`Pattern`] variants; the engine only asks for the next (cycle, source, destination).

use crate::scenario::Traffic as Spec;

use std::sync::Arc;

use super::SimError;
use super::faults::FaultMap;
use super::injection::Sources;
use super::rng::Rng;
use super::topology::{Family, Geometry};
use crate::scenario::InjectionProcess;

/// Where a new message goes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Pattern {
    /// Uniform over all nodes except the source.
    Uniform,
    /// Uniform over all nodes.
    UniformWithSelf,
    /// A fixed destination per source.
    Permutation(Vec<u32>),
    /// With probability `fraction` one of `nodes` (not the source), else uniform.
    Hotspot { fraction: f64, nodes: Vec<u32> },
    /// Uniform among the pairs of healthy nodes with a fault-free minimal path.
    Served(Arc<FaultMap>),
    /// Dragonfly `group_shift`: uniform over the `group` terminals of the next group.
    GroupShift { group: u32 },
    /// Slim Fly `worst_case`: uniform over the `per_router` terminals of router `next[r]`
    /// for a source at router `r`.
    RouterShift { per_router: u32, next: Vec<u32> },
}

impl Pattern {
    /// The pattern of `spec` on `geometry`, or why the network cannot serve it.
    pub(crate) fn new(spec: &Spec, geometry: &Geometry) -> Result<Pattern, SimError> {
        let nodes = geometry.nodes;
        let (radix, dims) = (geometry.size.radix, geometry.size.dims);
        let name = spec.as_str();
        let power_of_two = || {
            if nodes.is_power_of_two() {
                Ok(nodes.trailing_zeros())
            } else {
                Err(SimError(format!(
                    "traffic `{name}` needs a power-of-two number of nodes, this network has \
                     {nodes}"
                )))
            }
        };
        // The coordinates the patterns move: a node's own, or on the HyperX those of its
        // router (`per_router` terminals each), the terminal keeping its index there.
        let per_router = match &geometry.family {
            Family::HyperX(hyperx) => hyperx.terminals_per_router(),
            _ => 1,
        };
        let digits = |node: u32| -> Vec<u32> {
            (0..dims).map(|d| geometry.coord(node / per_router, d)).collect()
        };
        let number =
            |digits: &[u32]| -> u32 { digits.iter().rev().fold(0, |n, &digit| n * radix + digit) };
        let table = |f: &dyn Fn(u32) -> u32| Pattern::Permutation((0..nodes).map(f).collect());
        // A permutation of the coordinates: `f` gives the destination's router (or node).
        let moved =
            |f: &dyn Fn(u32) -> u32| table(&|node| f(node) * per_router + node % per_router);
        let coordinates = matches!(spec, Spec::Transpose | Spec::Tornado | Spec::Neighbor);
        if coordinates && matches!(geometry.family, Family::Dragonfly(_)) {
            return Err(SimError(format!(
                "traffic `{name}` moves coordinates, and the dragonfly's terminals have none: use \
                 uniform, group_shift, hotspot, bit_complement or bit_reverse"
            )));
        }
        if coordinates && matches!(geometry.family, Family::SlimFly(_)) {
            return Err(SimError(format!(
                "traffic `{name}` moves coordinates, and the Slim Fly's terminals have none: use \
                 uniform, uniform_with_self, hotspot, bit_complement or bit_reverse"
            )));
        }
        if coordinates && matches!(geometry.family, Family::Graph(_)) {
            return Err(SimError(format!(
                "traffic `{name}` moves coordinates, and a graph's terminals have none: use \
                 uniform, uniform_with_self, hotspot, bit_complement or bit_reverse"
            )));
        }
        Ok(match spec {
            Spec::GroupShift => match &geometry.family {
                Family::Dragonfly(dragonfly) => {
                    Pattern::GroupShift { group: dragonfly.group_size() }
                }
                _ => {
                    return Err(SimError(
                        "traffic `group_shift` sends every terminal of a dragonfly group to the \
                         next group: it needs topology dragonfly"
                            .into(),
                    ));
                }
            },
            Spec::WorstCase => match &geometry.family {
                Family::SlimFly(slim_fly) => Pattern::RouterShift {
                    per_router: slim_fly.terminals_per_router(),
                    next: slim_fly.column_shift(),
                },
                _ => {
                    return Err(SimError(
                        "traffic `worst_case` sends every terminal of a Slim Fly router (s, a, b) \
                         to router (s, a + 1, b): it needs topology slim_fly"
                            .into(),
                    ));
                }
            },
            Spec::Uniform => Pattern::Uniform,
            // A replayed trace names its own destinations (`trace`); the engine generates
            // nothing of its own then (rate 0), so the pattern is never asked.
            Spec::Trace(_) => Pattern::Uniform,
            Spec::UniformWithSelf => Pattern::UniformWithSelf,
            Spec::Transpose => {
                if dims % 2 != 0 {
                    return Err(SimError(format!(
                        "traffic `transpose` needs an even number of dimensions (a square node \
                         array), this network has {dims}"
                    )));
                }
                let half = dims as usize / 2;
                moved(&|node| {
                    let mut d = digits(node);
                    d.rotate_left(half);
                    number(&d)
                })
            }
            Spec::BitComplement => {
                power_of_two()?;
                table(&|node| !node & (nodes - 1))
            }
            Spec::BitReverse => {
                let bits = power_of_two()?;
                table(&|node| if bits == 0 { 0 } else { node.reverse_bits() >> (32 - bits) })
            }
            Spec::Tornado => {
                if matches!(
                    geometry.family,
                    Family::Hypercube(_)
                        | Family::FatTree(_)
                        | Family::KaryNTree(_)
                        | Family::HyperX(_)
                ) || radix < 3
                {
                    return Err(SimError(
                        "traffic `tornado` needs a torus or mesh with radix k >= 3 (each \
                         coordinate moves ceil(k/2) - 1 places)"
                            .into(),
                    ));
                }
                let shift = radix.div_ceil(2) - 1;
                moved(&|node| {
                    let d: Vec<u32> = digits(node).iter().map(|&x| (x + shift) % radix).collect();
                    number(&d)
                })
            }
            Spec::Neighbor => moved(&|node| {
                let d: Vec<u32> = digits(node).iter().map(|&x| (x + 1) % radix).collect();
                number(&d)
            }),
            Spec::Hotspot { fraction, nodes: hot } => {
                if !(fraction.is_finite() && (0.0..=1.0).contains(fraction)) {
                    return Err(SimError(format!(
                        "hotspot fraction must lie in [0, 1], got {fraction}"
                    )));
                }
                if hot.is_empty() {
                    return Err(SimError(
                        "traffic `hotspot` needs at least one hotspot node".into(),
                    ));
                }
                if let Some(bad) = hot.iter().find(|&&n| n >= nodes) {
                    return Err(SimError(format!(
                        "hotspot node {bad} does not exist: the network has nodes 0 to {}",
                        nodes - 1
                    )));
                }
                let mut hot = hot.clone();
                hot.sort_unstable();
                hot.dedup();
                Pattern::Hotspot { fraction: *fraction, nodes: hot }
            }
        })
    }
}

/// The message sources of the whole network: Poisson (one superposed stream), or per-node
/// Bernoulli or on/off sources (`injection`).
#[derive(Clone, Debug)]
pub(crate) struct Traffic {
    nodes: u32,
    pattern: Pattern,
    /// Mean gap between network-wide arrivals in cycles; infinite at rate 0.
    mean_gap: f64,
    /// Time of the next arrival (continuous cycles).
    next_time: f64,
    /// The per-node sources of a process other than Poisson; `None`: Poisson.
    sources: Option<Box<Sources>>,
}

impl Traffic {
    /// A source of `rate` messages per node per cycle on `nodes >= 2` nodes.
    pub(crate) fn new(nodes: u32, rate: f64, pattern: Pattern, rng: &mut Rng) -> Traffic {
        let senders = match &pattern {
            Pattern::Served(faults) => faults.healthy_count(),
            _ => nodes,
        };
        let total = rate * f64::from(senders);
        let mean_gap = if total > 0.0 { 1.0 / total } else { f64::INFINITY };
        let mut traffic = Traffic { nodes, pattern, mean_gap, next_time: 0.0, sources: None };
        traffic.next_time = traffic.gap(rng);
        traffic
    }

    /// Per-node sources of `process` instead of the Poisson stream (no faults: `sim::check`).
    pub(crate) fn with_process(
        mut self,
        process: InjectionProcess,
        rate: f64,
        rng: &mut Rng,
    ) -> Traffic {
        self.sources = Sources::new(process, rate, self.nodes, rng).map(Box::new);
        self
    }

    fn gap(&self, rng: &mut Rng) -> f64 {
        if self.mean_gap.is_finite() { rng.exponential(self.mean_gap) } else { f64::INFINITY }
    }

    /// A node other than `source`, uniformly.
    #[inline]
    fn other(&self, source: u32, rng: &mut Rng) -> u32 {
        let other = rng.below(u64::from(self.nodes - 1)) as u32;
        if other >= source { other + 1 } else { other }
    }

    /// The next message generated before time `until`, as (source, destination), if any.
    #[inline]
    pub(crate) fn next_arrival(&mut self, until: u64, rng: &mut Rng) -> Option<(u32, u32)> {
        let source = match &mut self.sources {
            Some(sources) => sources.next(until, rng)?,
            None => {
                if self.next_time >= until as f64 {
                    return None;
                }
                self.next_time += self.gap(rng);
                if let Pattern::Served(faults) = &self.pattern {
                    return Some(faults.arrival(rng));
                }
                rng.below(u64::from(self.nodes)) as u32
            }
        };
        Some((source, self.destination(source, rng)))
    }

    /// The destination of a message from `source`, by the pattern.
    #[inline]
    fn destination(&self, source: u32, rng: &mut Rng) -> u32 {
        match &self.pattern {
            Pattern::Uniform => self.other(source, rng),
            Pattern::UniformWithSelf => rng.below(u64::from(self.nodes)) as u32,
            Pattern::Permutation(table) => table[source as usize],
            Pattern::Hotspot { fraction, nodes } => {
                let hot = rng.open_unit() < *fraction;
                // Hotspot nodes other than the source; uniform when the source is the only one.
                let source_at = nodes.binary_search(&source).ok();
                let others = nodes.len() - usize::from(source_at.is_some());
                if hot && others > 0 {
                    let mut pick = rng.below(others as u64) as usize;
                    if source_at.is_some_and(|at| pick >= at) {
                        pick += 1;
                    }
                    nodes[pick]
                } else {
                    self.other(source, rng)
                }
            }
            Pattern::Served(faults) => faults.arrival(rng).1,
            Pattern::GroupShift { group } => {
                let next = (source / group + 1) * group % self.nodes;
                next + rng.below(u64::from(*group)) as u32
            }
            Pattern::RouterShift { per_router, next } => {
                let router = next[(source / per_router) as usize];
                router * per_router + rng.below(u64::from(*per_router)) as u32
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Topology;

    fn table(spec: &Spec, topology: Topology) -> Result<Vec<u32>, SimError> {
        match Pattern::new(spec, &Geometry::new(&topology)?)? {
            Pattern::Permutation(table) => Ok(table),
            other => panic!("{other:?} is not a permutation"),
        }
    }

    #[test]
    fn permutations_map_the_textbook_examples() {
        let t44 = Topology::Torus { radix: 4, dimensions: 2 };
        // (x, y) = (1, 2) is node 9; transposed (2, 1) is node 6.
        assert_eq!(table(&Spec::Transpose, t44.clone()).unwrap()[9], 6);
        assert_eq!(table(&Spec::Transpose, t44.clone()).unwrap()[5], 5, "diagonal sends to itself");
        assert_eq!(table(&Spec::BitComplement, t44.clone()).unwrap()[9], 6);
        let cube = Topology::Hypercube { dimensions: 3 };
        assert_eq!(table(&Spec::BitReverse, cube.clone()).unwrap()[1], 4);
        assert_eq!(table(&Spec::BitReverse, cube).unwrap()[6], 3);
        assert_eq!(table(&Spec::Transpose, Topology::Hypercube { dimensions: 4 }).unwrap()[1], 4);
        let ring = Topology::Torus { radix: 8, dimensions: 1 };
        assert_eq!(table(&Spec::Tornado, ring).unwrap(), vec![3, 4, 5, 6, 7, 0, 1, 2]);
        assert_eq!(table(&Spec::Neighbor, t44.clone()).unwrap()[15], 0);
        assert_eq!(table(&Spec::Neighbor, t44.clone()).unwrap()[0], 5);
        for spec in [Spec::Transpose, Spec::BitComplement, Spec::BitReverse, Spec::Neighbor] {
            let mut t = table(&spec, t44.clone()).unwrap();
            t.sort_unstable();
            assert_eq!(t, (0..16).collect::<Vec<u32>>(), "{spec:?} is a permutation");
        }
    }

    #[test]
    fn networks_a_pattern_cannot_serve_are_refused() {
        let t33 = Topology::Torus { radix: 3, dimensions: 2 };
        let error = table(&Spec::BitComplement, t33.clone()).unwrap_err().0;
        assert!(error.contains("power-of-two number of nodes, this network has 9"), "{error}");
        assert!(table(&Spec::BitReverse, t33).is_err());
        let ring = Topology::Torus { radix: 8, dimensions: 1 };
        assert!(
            table(&Spec::Transpose, ring.clone())
                .unwrap_err()
                .0
                .contains("even number of dimensions")
        );
        assert!(table(&Spec::Tornado, Topology::Hypercube { dimensions: 3 }).is_err());
        let g = Geometry::new(&ring).unwrap();
        for (fraction, nodes) in [(1.5, vec![0]), (0.5, vec![]), (0.5, vec![8])] {
            assert!(Pattern::new(&Spec::Hotspot { fraction, nodes }, &g).is_err());
        }
    }

    #[test]
    fn hotspot_nodes_receive_their_fraction() {
        let g = Geometry::new(&Topology::Torus { radix: 4, dimensions: 2 }).unwrap();
        let pattern =
            Pattern::new(&Spec::Hotspot { fraction: 0.5, nodes: vec![3, 3] }, &g).unwrap();
        let mut rng = Rng::new(4);
        let mut traffic = Traffic::new(16, 0.05, pattern, &mut rng);
        let (mut total, mut hot, mut self_sent) = (0u32, 0u32, 0u32);
        for cycle in 1..=20_000u64 {
            while let Some((s, d)) = traffic.next_arrival(cycle, &mut rng) {
                total += 1;
                hot += u32::from(d == 3);
                self_sent += u32::from(s == d);
            }
        }
        assert_eq!(self_sent, 0);
        // 15/16 of the sources send half their messages to node 3, and 1/15 of the rest.
        let expected = f64::from(total) * (15.0 / 16.0) * (0.5 + 0.5 / 15.0);
        assert!((f64::from(hot) - expected).abs() < 0.05 * expected, "{hot} vs {expected}");
    }

    #[test]
    fn rate_and_destinations_are_right() {
        let mut rng = Rng::new(3);
        let mut traffic = Traffic::new(4, 0.05, Pattern::Uniform, &mut rng);
        let (mut count, mut self_sent) = (0u32, 0u32);
        let mut per_dest = [0u32; 4];
        for cycle in 1..=100_000u64 {
            while let Some((s, d)) = traffic.next_arrival(cycle, &mut rng) {
                count += 1;
                self_sent += u32::from(s == d);
                per_dest[d as usize] += 1;
            }
        }
        assert_eq!(self_sent, 0);
        assert!((19_400..20_600).contains(&count), "{count}");
        assert!(per_dest.iter().all(|&c| c > 4_600), "{per_dest:?}");
        let mut silent = Traffic::new(4, 0.0, Pattern::Uniform, &mut rng);
        assert_eq!(silent.next_arrival(1_000_000, &mut rng), None);
    }
}
