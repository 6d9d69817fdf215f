//! The HyperX: router numbering, wiring, the minimal steps that `dimension_order`,
//! `adaptive` and `duato` routing offer, and its own routing cases, `valiant`, `ugal` and
//! `dal`.
//!
//! The network is the one of J. H. Ahn, N. Binkert, A. Davis, M. McLaren and R. S. Schreiber,
//! "HyperX: Topology, Routing, and Packaging of Efficient Large-Scale Networks", Proc. SC
//! 2009, with `K` links between each pair of neighbouring routers (their trunking; 1 by
//! default): `R = S^L` routers sit at the points of an `L`-dimensional array of side `S`, and each is
//! linked to the `S - 1` routers that differ from it in exactly one coordinate, in each of the
//! `L` dimensions (every dimension is a complete graph, where a torus has a ring); each router
//! has `T` terminals, `N = T S^L` of them. `L = 1` is a fully connected network; `L = 2` with
//! `T = S` is the flattened butterfly of J. Kim, W. J. Dally and D. Abts ("Flattened Butterfly:
//! A Cost-Efficient Topology for High-Radix Networks", Proc. ISCA 2007), whose `k`-ary `n`-flat
//! is the HyperX with `S = k`, `L = n - 1`, `T = k`.
//!
//! # Routers and ports
//!
//! As on the k-ary n-tree and the dragonfly, terminals and routers are all routers of the
//! engine. Ids `0..N` are the terminals (the traffic endpoints; `Geometry::nodes` is `N`),
//! router `r = 0..R` has id `N + r` and coordinates `c_0 .. c_(L-1)`, the digits of `r` in base
//! `S` (dimension 0 varies fastest), and serves terminals `r T ..= r T + T - 1`. Every engine
//! router has [`HyperX::ports`] `= T + L (S - 1) K` output ports:
//!
//! - a terminal's port 0 is its link to its router (its other ports have no link);
//! - a router's port `i < T` leads to its terminal `r T + i`;
//! - ports `T + (d (S - 1) + j) K + i`, `j = 0..S - 1`, `i = 0..K`, lead to the router whose
//!   coordinate `d` is `j` if `j < c_d`, else `j + 1` (every other router of the dimension, in
//!   order), its other coordinates the same: the `K` links to one router are consecutive.
//!   Every routing offers a hop between two routers on all `K` of them (any free VC of any;
//!   `Geometry::parallel_at` tells this module's routings' dimension-order step), so the
//!   dependency arguments below hold link by link.
//!
//! Every link is a pair of channels, one per direction, each with V virtual channels.
//!
//! # Routes
//!
//! From router `a` to router `b` a minimal route takes one hop in each dimension where their
//! coordinates differ, straight to `b`'s coordinate, in any order: `H(a, b)` router-to-router
//! links, the number of differing coordinates. [`HyperX::minimal_steps`] offers the hop of
//! every differing dimension; the first one it offers, the lowest differing dimension, is the
//! dimension-order step.
//!
//! - `dimension_order`: the lowest differing dimension first, on every VC. A route's
//!   dimensions strictly increase and it crosses each at most once, so a channel of dimension
//!   `d` only ever waits for a channel of a higher dimension or an ejection link: the
//!   channel-dependency graph is acyclic with one VC (a test builds it).
//! - `adaptive`: every VC of every differing dimension; no deadlock avoidance (routes in two
//!   dimensions in both orders close cycles; a test finds one).
//! - `duato`: the adaptive VCs on every differing dimension, VC 0 (`escape_channels`, at
//!   least 1) the dimension-order escape. After an escape hop in dimension `d` the dimensions
//!   below `d` are already right, and adaptive hops only correct differing dimensions, so the
//!   next escape hop is in a higher dimension: the extended channel-dependency graph of the
//!   escape channels is acyclic too, Duato's condition.
//!
//! - `valiant` (L. G. Valiant and G. J. Brebner, "Universal schemes for parallel
//!   communication", STOC 1981): each message draws an intermediate router uniformly among
//!   all `S^L` when it is generated ([`Routes::draw`], kept in the header's `ties`), goes
//!   there in dimension order on the even VCs (phase 0), then on to its destination in
//!   dimension order on the odd VCs (phase 1); the terminal and ejection links use the VCs of
//!   their phase too, and the phase of a message is the parity of the VC it last took
//!   ([`Routes::after_hop`]). Each phase is dimension order on VCs of its own, and a message
//!   only ever moves from phase 0 to phase 1, so the channel-dependency graph is acyclic
//!   (a test builds it over every intermediate). Needs V >= 2. Its route has `2 + H(a, i) +
//!   H(i, b)` links, up to `2 + 2 L`: every message takes a detour, which halves what uniform
//!   traffic can carry and lifts an adversarial pattern to about one half.
//!
//! - `ugal` (UGAL-L, as Kim, Dally and Abts evaluate it on the flattened butterfly): each
//!   message draws an intermediate router as for `valiant`; at the source router the header
//!   takes the minimal route iff `q_min H_min <= q_val H_val + threshold`, where `q` is the
//!   least occupancy (flits held in the downstream buffers, the credits used) among the `K`
//!   links of each route's first hop, dimension order's, `H` each route's router-to-router
//!   links from here (`H(a, b)`, `H(a, i) + H(i, b)`) and the threshold `ugal_threshold` flits,
//!   by default one message's flits on a hop (as on the dragonfly). The minimal route is also
//!   taken when the intermediate router is the source's or the destination's, or both
//!   terminals share a router. A waiting header re-decides every cycle until it is granted a
//!   VC. A Valiant route uses `valiant`'s phases. A minimal route goes in dimension order on
//!   any VC until it takes an odd one, then on the odd ones (the routing state's phase bit is
//!   set by the first odd VC a router grants it): so under uniform traffic it has all the VCs
//!   dimension order has. Even channels only ever wait for even channels of higher
//!   dimensions (a minimal route, or a detour before its intermediate router) or for odd
//!   channels; odd channels only for odd channels of higher dimensions: acyclic (a test
//!   builds the graph over every pair, intermediate, choice and VC parity). Terminal and
//!   ejection links take every VC (nothing waits for a terminal link, and an ejection link
//!   waits for nothing). Needs V >= 2.
//! - `dal` (after the DAL of Ahn et al.: dimensionally adaptive, load-balanced): at every
//!   router a message may correct any dimension in which it differs from its destination's
//!   router (adaptive VCs `E..V` on all `K` links of each), or instead deroute: hop to another
//!   coordinate of such a dimension, neither its own nor the destination's, at most once per
//!   dimension (the routing state keeps a bit per dimension derouted in). The choice is made
//!   per hop from the occupancies, as UGAL makes it per message: with `H` the differing
//!   dimensions, `q_min` the least occupancy among the minimal links and `q_der` among the
//!   deroute links, the hop deroutes iff `q_min H > q_der (H + 1) + threshold` (the same
//!   `ugal_threshold`). Below the adaptive VCs, VCs `0..E` (`escape_channels`, default 1) are
//!   a dimension-order escape on the minimal route, requested only when no adaptive VC is
//!   free. After an escape hop in dimension `d` the dimensions up to `d` are right, and
//!   adaptive hops, minimal or deroutes, move only in differing dimensions, so the next
//!   escape hop is in a higher dimension: the escape channels' extended dependency graph is
//!   acyclic, Duato's condition (a test builds it over every pair and every choice, and finds
//!   the adaptive channels alone cyclic). Every route has at most `2 L` router links (no
//!   livelock). As for `duato`, the adaptive VCs are granted only with an empty buffer. At
//!   zero load no hop deroutes. Needs V >= E + 1. The paper's own DAL chooses among its
//!   options by queue lengths too; its exact rule, threshold and escape are not reproduced
//!   here, this is the rule above.
//!
//! A HyperX is not bipartite (three routers of one dimension form a triangle when `S >= 3`),
//! so `nbc` is refused.
//!
//! # Zero-load latency
//!
//! A route from terminal `s` to `d != s` crosses `hops = 2 + H(router(s), router(d))` links:
//! the terminal's link to its router, the router-to-router links and the ejection link. In
//! the engine's conventions (module `sim`: one cycle per link, `router_delay` at every router
//! entered over a link, not at the destination terminal, one ejection cycle, the tail `M - 1`
//! cycles behind) the zero-load latency is exactly `hops + M + router_delay (hops - 1)`, as on
//! the other families whose terminals are not routers (the tests check it for every pair of
//! small HyperX networks, with trunking and with `ugal` and `dal`, which route minimally in an
//! empty network).

use crate::scenario::{Routing, Scenario};

use super::super::SimError;
use super::super::rng::Rng;
use super::Network;
use super::hop::{Candidate, Header, NO_LINK, Step};

/// A built HyperX: its sizes.
#[derive(Clone, Debug)]
pub(crate) struct HyperX {
    /// S: routers per dimension.
    s: u32,
    /// L: dimensions.
    l: u32,
    /// T: terminals per router.
    t: u32,
    /// K: links between each pair of neighbouring routers (the paper's trunking).
    k: u32,
    /// R = S^L routers.
    routers: u32,
    /// N = T R terminals.
    terminals: u32,
}

impl HyperX {
    /// Checks `S >= 2`, `L >= 1`, `T >= 1`, `K >= 1` and the size, and returns the network.
    pub(crate) fn new(s: u32, l: u32, t: u32, k: u32) -> Result<HyperX, SimError> {
        if s < 2 || l < 1 || t < 1 || k < 1 {
            return Err(SimError(format!(
                "the HyperX needs radix (routers per dimension) S >= 2, dimensions L >= 1, \
                 terminals_per_router T >= 1 and trunking K >= 1, got S = {s}, L = {l}, T = {t}, \
                 K = {k}"
            )));
        }
        let too_large = || {
            SimError(format!(
                "the HyperX S = {s}, L = {l}, T = {t}, K = {k} is too large for the simulator \
                 (32-bit router and channel ids)"
            ))
        };
        let routers = s.checked_pow(l).ok_or_else(too_large)?;
        let terminals = routers.checked_mul(t).ok_or_else(too_large)?;
        let ports = u64::from(t) + u64::from(l) * u64::from(s - 1) * u64::from(k);
        let ids = u64::from(terminals) + u64::from(routers);
        if ids.saturating_mul(ports) >= u64::from(u32::MAX) {
            return Err(too_large());
        }
        Ok(HyperX { s, l, t, k, routers, terminals })
    }

    /// Engine routers: the terminals plus the `S^L` routers.
    pub(crate) fn routers(&self) -> u32 {
        self.terminals + self.routers
    }

    /// The links in parallel from engine router `id` through `port` onwards: `K` between two
    /// routers, 1 on a terminal's link and on an ejection link.
    pub(crate) fn parallel_at(&self, id: u32, port: u32) -> u32 {
        if id >= self.terminals && port >= self.t { self.k } else { 1 }
    }

    /// Terminals per router T.
    pub(crate) fn terminals_per_router(&self) -> u32 {
        self.t
    }

    /// Coordinate `d` of router index `r` (`0..R`).
    #[inline]
    pub(crate) fn coordinate(&self, r: u32, d: u32) -> u32 {
        (r / self.s.pow(d)) % self.s
    }

    /// The router index (`0..R`) a terminal or an engine router belongs to.
    #[inline]
    fn router_of(&self, id: u32) -> u32 {
        if id < self.terminals { id / self.t } else { id - self.terminals }
    }

    /// The first of the `K` ports of router index `r` towards the router whose coordinate `d`
    /// is `to` (`to != c_d`); the others follow it.
    #[inline]
    fn port_to(&self, r: u32, d: u32, to: u32) -> u32 {
        let own = self.coordinate(r, d);
        self.t + (d * (self.s - 1) + if to < own { to } else { to - 1 }) * self.k
    }

    /// The dimension and target coordinate of router port `port >= T`.
    #[inline]
    fn hop_of(&self, r: u32, port: u32) -> (u32, u32) {
        let link = (port - self.t) / self.k;
        let (d, j) = (link / (self.s - 1), link % (self.s - 1));
        let own = self.coordinate(r, d);
        (d, if j < own { j } else { j + 1 })
    }

    /// The dimensions in which router indices `a` and `b` differ, as bits.
    #[inline]
    fn differing(&self, a: u32, b: u32) -> u32 {
        (0..self.l)
            .filter(|&d| self.coordinate(a, d) != self.coordinate(b, d))
            .fold(0, |m, d| m | 1 << d)
    }

    /// The router-to-router links of a minimal route between router indices `a` and `b`.
    fn router_hops(&self, a: u32, b: u32) -> u64 {
        u64::from(self.differing(a, b).count_ones())
    }
}

/// The HyperX's own routing cases (the others are `routing`'s dimension-order, adaptive and
/// Duato cases): `valiant`, `ugal` and `dal`.
#[derive(Clone, Debug)]
pub(crate) struct Routes {
    mode: Mode,
    /// `valiant`, `ugal`: the even VCs (phase 0, towards the intermediate router) and the odd
    /// ones (phase 1). `dal`: the escape VCs and the adaptive ones.
    classes: [u64; 2],
    /// Every VC.
    all: u64,
    /// `ugal`, `dal`: the threshold in flits (see the module docs).
    threshold: u64,
}

/// Which of the HyperX's own routings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Valiant,
    Ugal,
    Dal,
}

/// Routing state bit: phase 1 (`valiant`, `ugal`: after the intermediate router, or a minimal
/// route that took an odd VC).
const PHASE: u32 = 1;
/// Routing state bit (`ugal`): the choice is made.
const DECIDED: u32 = 1 << 1;
/// Routing state bit (`ugal`): the choice is the minimal route.
const MINIMAL: u32 = 1 << 2;
/// Routing state bit (`dal`): the hop being routed is a deroute (set by [`Routes::decide`],
/// read back by [`Routes::after_hop`]); the bits below it, from bit 0, are the dimensions
/// already derouted in.
const DEROUTING: u32 = 1 << 31;

impl Routes {
    /// The routing of `scenario` if it is one of the HyperX's own (`None` for every other
    /// routing or topology), or why it cannot run.
    pub(crate) fn new(scenario: &Scenario) -> Result<Option<Routes>, SimError> {
        let crate::scenario::Topology::HyperX { dimensions, .. } = scenario.topology else {
            return Ok(None);
        };
        let mode = match scenario.routing {
            Routing::Valiant => Mode::Valiant,
            Routing::Ugal => Mode::Ugal,
            Routing::Dal => Mode::Dal,
            _ => return Ok(None),
        };
        let name = scenario.routing.as_str();
        if !scenario.switching.buffers_flits() {
            return Err(SimError(format!(
                "the HyperX with {name} routing is simulated with wormhole or virtual cut-through \
                 switching, got {}",
                scenario.switching.kind()
            )));
        }
        if let Some(threshold) = scenario.ugal_threshold
            && mode == Mode::Valiant
        {
            return Err(SimError(format!(
                "ugal_threshold ({threshold}) is the threshold of ugal and dal, but the routing \
                 is valiant: leave it out"
            )));
        }
        let v = scenario.virtual_channels;
        let all = if v >= 64 { u64::MAX } else { (1u64 << v) - 1 };
        let classes = if mode == Mode::Dal {
            let escape = scenario.escape_channels.unwrap_or(1);
            if escape < 1 || v < escape + 1 {
                return Err(SimError(format!(
                    "dal routing on the HyperX needs escape_channels E >= 1 (the dimension-order \
                     escape VCs) and virtual_channels >= E + 1 (adaptive VCs beside them), got \
                     E = {escape}, V = {v}"
                )));
            }
            if dimensions > 30 {
                return Err(SimError(format!(
                    "dal routing keeps one bit per dimension a message has derouted in: at most \
                     30 dimensions, got {dimensions}"
                )));
            }
            let escape_vcs = (1u64 << escape) - 1;
            [escape_vcs, all & !escape_vcs]
        } else {
            if let Some(e) = scenario.escape_channels {
                return Err(SimError(format!(
                    "{name} routing on the HyperX has no escape channels (its two phases on VCs \
                     of their own are deadlock-free): leave escape_channels unset, got {e}"
                )));
            }
            if v < 2 {
                return Err(SimError(format!(
                    "{name} routing on the HyperX needs virtual_channels >= 2 (the even VCs on the \
                     way to the intermediate router, the odd ones after it), got {v}"
                )));
            }
            let parity = |p: u32| (0..v).filter(|i| i % 2 == p).fold(0u64, |mask, i| mask | 1 << i);
            [parity(0), parity(1)]
        };
        let threshold = u64::from(super::ugal_threshold(scenario));
        Ok(Some(Routes { mode, classes, all, threshold }))
    }

    /// Whether [`Routes::decide`] must be asked before routing a header (`ugal`, `dal`).
    pub(crate) fn decides(&self) -> bool {
        self.mode != Mode::Valiant
    }

    /// The per-message draw: the intermediate router, uniform among all `S^L` (`valiant`,
    /// `ugal`); `dal` draws nothing (`None`).
    pub(crate) fn draw(&self, hx: &HyperX, rng: &mut Rng) -> Option<u32> {
        (self.mode != Mode::Dal).then(|| rng.below(u64::from(hx.routers)) as u32)
    }

    /// Fills `out` (cleared by the caller) with the steps from `cur` towards
    /// `header.dest != cur` (see the module docs).
    pub(crate) fn candidates(
        &self,
        hx: &HyperX,
        cur: u32,
        header: Header,
        out: &mut Vec<Candidate>,
    ) {
        match self.mode {
            Mode::Dal => self.dal_candidates(hx, cur, header, out),
            Mode::Valiant | Mode::Ugal => self.phased_candidates(hx, cur, header, out),
        }
    }

    /// `valiant` and `ugal`: in dimension order towards the intermediate router (`ties`) in
    /// phase 0, then towards the destination's router, on the VCs of the phase; a route `ugal`
    /// chose minimal goes straight to the destination's router on every VC until it takes an
    /// odd one, then on the odd ones. `ugal`'s terminal and ejection links take every VC.
    fn phased_candidates(&self, hx: &HyperX, cur: u32, header: Header, out: &mut Vec<Candidate>) {
        let Header { dest, level, ties: intermediate, .. } = header;
        let target = dest / hx.t;
        let ugal = self.mode == Mode::Ugal;
        if cur < hx.terminals {
            let phase = usize::from(level & PHASE != 0 || cur / hx.t == intermediate);
            let mask = if ugal { self.all } else { self.classes[phase] };
            out.push(Candidate { port: 0, mask, fallback: 0 });
            return;
        }
        let r = hx.router_of(cur);
        let minimal = ugal && level & MINIMAL != 0;
        let phase = usize::from(level & PHASE != 0 || minimal || r == intermediate);
        let towards = if phase == 0 { intermediate } else { target };
        let Some(d) = (0..hx.l).find(|&d| hx.coordinate(r, d) != hx.coordinate(towards, d)) else {
            // At the destination's router in phase 1: the ejection link.
            let mask = if ugal { self.all } else { self.classes[phase] };
            out.push(Candidate { port: dest % hx.t, mask, fallback: 0 });
            return;
        };
        let mask = if minimal && level & PHASE == 0 { self.all } else { self.classes[phase] };
        let first = hx.port_to(r, d, hx.coordinate(towards, d));
        out.extend((first..first + hx.k).map(|port| Candidate { port, mask, fallback: 0 }));
    }

    /// `dal`: the adaptive VCs on the `K` links of every differing dimension (or, on a
    /// deroute, of every other coordinate of each differing dimension not derouted in yet),
    /// and as the fallback the escape VCs on the dimension-order step's links.
    fn dal_candidates(&self, hx: &HyperX, cur: u32, header: Header, out: &mut Vec<Candidate>) {
        let Header { dest, level, .. } = header;
        let [escape, adaptive] = self.classes;
        if cur < hx.terminals {
            out.push(Candidate { port: 0, mask: self.all, fallback: 0 });
            return;
        }
        let (r, target) = (hx.router_of(cur), dest / hx.t);
        let differing = hx.differing(r, target);
        if differing == 0 {
            out.push(Candidate { port: dest % hx.t, mask: self.all, fallback: 0 });
            return;
        }
        for d in (0..hx.l).filter(|&d| differing >> d & 1 == 1) {
            let (own, to) = (hx.coordinate(r, d), hx.coordinate(target, d));
            if level & DEROUTING == 0 {
                let first = hx.port_to(r, d, to);
                out.extend((first..first + hx.k).map(|port| Candidate {
                    port,
                    mask: adaptive,
                    fallback: 0,
                }));
            } else if level >> d & 1 == 0 {
                for j in (0..hx.s).filter(|&j| j != own && j != to) {
                    let first = hx.port_to(r, d, j);
                    out.extend((first..first + hx.k).map(|port| Candidate {
                        port,
                        mask: adaptive,
                        fallback: 0,
                    }));
                }
            }
        }
        // The escape: dimension order, on the links of the lowest differing dimension.
        let d = differing.trailing_zeros();
        let first = hx.port_to(r, d, hx.coordinate(target, d));
        for port in first..first + hx.k {
            match out.iter_mut().find(|c| c.port == port) {
                Some(candidate) => candidate.fallback = escape,
                None => out.push(Candidate { port, mask: 0, fallback: escape }),
            }
        }
    }

    /// The least occupancy (flits held downstream, `occupancy`'s first count) among the `K`
    /// links of router index `r` towards coordinate `to` of dimension `d`.
    fn least_held(
        hx: &HyperX,
        r: u32,
        d: u32,
        to: u32,
        occupancy: &impl Fn(u32, u32) -> (u32, u32),
    ) -> u64 {
        let (id, first) = (hx.terminals + r, hx.port_to(r, d, to));
        (first..first + hx.k).map(|port| u64::from(occupancy(id, port).0)).min().unwrap_or(0)
    }

    /// `ugal` at the source router: the routing state with the choice between the minimal and
    /// the Valiant route made (minimal iff `q_min H_min <= q_val H_val + threshold`); `dal` at
    /// every router: whether this hop deroutes (iff `q_min H > q_der (H + 1) + threshold`).
    /// See the module docs; other states are returned unchanged.
    #[inline]
    pub(crate) fn decide(
        &self,
        hx: &HyperX,
        cur: u32,
        header: Header,
        occupancy: impl Fn(u32, u32) -> (u32, u32),
    ) -> u32 {
        let Header { dest, level, ties: intermediate, .. } = header;
        if cur < hx.terminals {
            return level;
        }
        let (r, target) = (hx.router_of(cur), dest / hx.t);
        let first_hop = |towards: u32| {
            let d = hx.differing(r, towards).trailing_zeros();
            Routes::least_held(hx, r, d, hx.coordinate(towards, d), &occupancy)
        };
        match self.mode {
            Mode::Valiant => level,
            Mode::Ugal => {
                if level & DECIDED != 0 {
                    return level;
                }
                if r == target || intermediate == r || intermediate == target {
                    return level | DECIDED | MINIMAL;
                }
                let (h_min, h_val) = (
                    hx.router_hops(r, target),
                    hx.router_hops(r, intermediate) + hx.router_hops(intermediate, target),
                );
                let (q_min, q_val) = (first_hop(target), first_hop(intermediate));
                if q_min * h_min <= q_val * h_val + self.threshold {
                    level | DECIDED | MINIMAL
                } else {
                    level | DECIDED
                }
            }
            Mode::Dal => {
                let differing = hx.differing(r, target);
                if differing == 0 {
                    return level & !DEROUTING;
                }
                let (mut q_min, mut q_der) = (u64::MAX, u64::MAX);
                for d in (0..hx.l).filter(|&d| differing >> d & 1 == 1) {
                    let (own, to) = (hx.coordinate(r, d), hx.coordinate(target, d));
                    q_min = q_min.min(Routes::least_held(hx, r, d, to, &occupancy));
                    if level >> d & 1 == 0 {
                        for j in (0..hx.s).filter(|&j| j != own && j != to) {
                            q_der = q_der.min(Routes::least_held(hx, r, d, j, &occupancy));
                        }
                    }
                }
                let h = u64::from(differing.count_ones());
                if q_der != u64::MAX && q_min * h > q_der * (h + 1) + self.threshold {
                    level | DEROUTING
                } else {
                    level & !DEROUTING
                }
            }
        }
    }

    /// The routing state after a hop from `cur` through `port` on VC `vc`: `valiant`, the
    /// phase the hop was taken in; `ugal`, phase 1 from the first odd VC a router gave it on;
    /// `dal`, the deroute's dimension marked when an adaptive VC took it.
    pub(crate) fn after_hop(&self, hx: &HyperX, cur: u32, port: u32, vc: u32, level: u32) -> u32 {
        match self.mode {
            Mode::Valiant => vc % 2,
            Mode::Ugal if cur < hx.terminals => level,
            Mode::Ugal => level | (vc % 2),
            Mode::Dal => {
                let adaptive = self.classes[1] >> vc & 1 == 1;
                if level & DEROUTING != 0 && adaptive && cur >= hx.terminals && port >= hx.t {
                    let (d, _) = hx.hop_of(hx.router_of(cur), port);
                    (level & !DEROUTING) | 1 << d
                } else {
                    level & !DEROUTING
                }
            }
        }
    }

    /// `dal`: the adaptive VCs, granted only with an empty buffer (Duato's condition; see
    /// `Router::atomic_vcs`); none for the phased routings.
    pub(crate) fn atomic_vcs(&self) -> u64 {
        if self.mode == Mode::Dal { self.classes[1] } else { 0 }
    }

    /// `dal`: whether `vc` is an escape VC.
    pub(crate) fn is_escape(&self, vc: u32) -> bool {
        self.mode == Mode::Dal && self.classes[0] >> vc & 1 == 1
    }
}

impl Network for HyperX {
    /// `T + L (S - 1) K`.
    fn ports(&self) -> u32 {
        self.t + self.l * (self.s - 1) * self.k
    }

    /// The downstream router of each channel `router * ports + port`, `NO_LINK` where none.
    fn neighbors(&self) -> Vec<u32> {
        let ports = self.ports();
        let mut neighbor = vec![NO_LINK; self.routers() as usize * ports as usize];
        for terminal in 0..self.terminals {
            let router = self.terminals + terminal / self.t;
            neighbor[(terminal * ports) as usize] = router;
            neighbor[(router * ports + terminal % self.t) as usize] = terminal;
        }
        for r in 0..self.routers {
            let id = self.terminals + r;
            for port in self.t..ports {
                let (d, to) = self.hop_of(r, port);
                let step = self.s.pow(d);
                let other = r - self.coordinate(r, d) * step + to * step;
                neighbor[(id * ports + port) as usize] = self.terminals + other;
            }
        }
        neighbor
    }

    /// Calls `visit` with every minimal step from router `cur` towards terminal `dest` (a
    /// terminal's link to its router; a router's hop in each dimension where its coordinate
    /// differs from the destination router's, lowest dimension first, over each of its `K`
    /// links; the ejection link at the destination's router) and returns the remaining
    /// distance in links.
    #[inline]
    fn minimal_steps(&self, cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
        let target = dest / self.t;
        let differing = |r: u32| {
            (0..self.l).filter(move |&d| self.coordinate(r, d) != self.coordinate(target, d))
        };
        if cur < self.terminals {
            visit(Step { port: 0, wraps: false });
            return 2 + differing(cur / self.t).count() as u32;
        }
        let r = self.router_of(cur);
        if r == target {
            visit(Step { port: dest % self.t, wraps: false });
            return 1;
        }
        let mut hops = 1;
        for d in differing(r) {
            let first = self.port_to(r, d, self.coordinate(target, d));
            for port in first..first + self.k {
                visit(Step { port, wraps: false });
            }
            hops += 1;
        }
        hops
    }

    /// The dimension-order step from `cur` towards `dest != cur`: the terminal's link, the
    /// first of the `K` links of the lowest differing dimension, or the ejection link (the
    /// first step [`Network::minimal_steps`] offers, found without listing the others).
    #[inline]
    fn dimension_order_step(&self, cur: u32, dest: u32, _ties: u32) -> Option<(Step, u32)> {
        if cur == dest {
            return None;
        }
        let step = |port| Step { port, wraps: false };
        if cur < self.terminals {
            return Some((step(0), 0));
        }
        let (r, target) = (self.router_of(cur), dest / self.t);
        match (0..self.l).find(|&d| self.coordinate(r, d) != self.coordinate(target, d)) {
            Some(d) => Some((step(self.port_to(r, d, self.coordinate(target, d))), d)),
            None => Some((step(dest % self.t), 0)),
        }
    }

    /// Not bipartite: no colouring (no routing asks it here).
    fn parity(&self, _router: u32) -> u32 {
        0
    }

    /// `T(t)` for a terminal, `R(c0,c1,..)` for a router.
    fn describe(&self, router: u32) -> String {
        if router < self.terminals {
            return format!("T({router})");
        }
        let r = self.router_of(router);
        let coordinates: Vec<String> =
            (0..self.l).map(|d| self.coordinate(r, d).to_string()).collect();
        format!("R({})", coordinates.join(","))
    }

    /// `t_i` (a router's link to its terminal `i`; a terminal's port 0 is its link to its
    /// router) or `x<d>_<j>` (the `j`-th other router of dimension `d`), `x<d>_<j>.<k>` with
    /// trunking (its `k`-th link).
    fn describe_port(&self, port: u32) -> String {
        if port < self.t {
            return format!("t_{port}");
        }
        let (link, k) = ((port - self.t) / self.k, (port - self.t) % self.k);
        let (d, j) = (link / (self.s - 1), link % (self.s - 1));
        if self.k == 1 { format!("x{d}_{j}") } else { format!("x{d}_{j}.{k}") }
    }

    /// `terminal-router`, `router-terminal`, or the dimension of a router link (`x0`, `x1`).
    fn link_class(&self, router: u32, port: u32, downstream: u32) -> String {
        if router < self.terminals {
            "terminal-router".into()
        } else if downstream < self.terminals {
            "router-terminal".into()
        } else {
            format!("x{}", (port - self.t) / self.k / (self.s - 1))
        }
    }
}

#[cfg(test)]
mod adaptive_tests;
#[cfg(test)]
mod tests;
