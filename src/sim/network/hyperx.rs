//! The HyperX: router numbering, wiring, the minimal steps that `dimension_order`,
//! `adaptive` and `duato` routing offer, and its own routing case, `valiant`.
//!
//! The network is the one of J. H. Ahn, N. Binkert, A. Davis, M. McLaren and R. S. Schreiber,
//! "HyperX: Topology, Routing, and Packaging of Efficient Large-Scale Networks", Proc. SC
//! 2009, with one link between each pair of neighbouring routers (their trunking `K = 1`):
//! `R = S^L` routers sit at the points of an `L`-dimensional array of side `S`, and each is
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
//! router has [`HyperX::ports`] `= T + L (S - 1)` output ports:
//!
//! - a terminal's port 0 is its link to its router (its other ports have no link);
//! - a router's port `i < T` leads to its terminal `r T + i`;
//! - port `T + d (S - 1) + j`, `j = 0..S - 1`, leads to the router whose coordinate `d` is `j`
//!   if `j < c_d`, else `j + 1` (every other router of the dimension, in order), its other
//!   coordinates the same.
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
//! small HyperX networks).

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
    /// R = S^L routers.
    routers: u32,
    /// N = T R terminals.
    terminals: u32,
}

impl HyperX {
    /// Checks `S >= 2`, `L >= 1`, `T >= 1` and the size, and returns the network.
    pub(crate) fn new(s: u32, l: u32, t: u32) -> Result<HyperX, SimError> {
        if s < 2 || l < 1 || t < 1 {
            return Err(SimError(format!(
                "the HyperX needs radix (routers per dimension) S >= 2, dimensions L >= 1 and \
                 terminals_per_router T >= 1, got S = {s}, L = {l}, T = {t}"
            )));
        }
        let too_large = || {
            SimError(format!(
                "the HyperX S = {s}, L = {l}, T = {t} is too large for the simulator (32-bit \
                 router ids)"
            ))
        };
        let routers = s.checked_pow(l).ok_or_else(too_large)?;
        let terminals = routers.checked_mul(t).ok_or_else(too_large)?;
        let ports = u64::from(t) + u64::from(l) * u64::from(s - 1);
        let ids = u64::from(terminals) + u64::from(routers);
        if ids.saturating_mul(ports) >= u64::from(u32::MAX) {
            return Err(too_large());
        }
        Ok(HyperX { s, l, t, routers, terminals })
    }

    /// Engine routers: the terminals plus the `S^L` routers.
    pub(crate) fn routers(&self) -> u32 {
        self.terminals + self.routers
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

    /// The port of router index `r` towards the router whose coordinate `d` is `to`
    /// (`to != c_d`).
    #[inline]
    fn port_to(&self, r: u32, d: u32, to: u32) -> u32 {
        let own = self.coordinate(r, d);
        self.t + d * (self.s - 1) + if to < own { to } else { to - 1 }
    }

    /// The dimension and target coordinate of router port `port >= T`.
    #[inline]
    fn hop_of(&self, r: u32, port: u32) -> (u32, u32) {
        let (d, j) = ((port - self.t) / (self.s - 1), (port - self.t) % (self.s - 1));
        let own = self.coordinate(r, d);
        (d, if j < own { j } else { j + 1 })
    }
}

/// The HyperX's own routing case, `valiant` (the others are `routing`'s dimension-order,
/// adaptive and Duato cases): the VCs of its two phases.
#[derive(Clone, Debug)]
pub(crate) struct Routes {
    /// The even VCs (phase 0, towards the intermediate router) and the odd ones (phase 1).
    phase: [u64; 2],
}

impl Routes {
    /// The routing of `scenario` if it is the HyperX's `valiant` (`None` for every other
    /// routing or topology), or why it cannot run.
    pub(crate) fn new(scenario: &Scenario) -> Result<Option<Routes>, SimError> {
        if scenario.routing != Routing::Valiant
            || !matches!(scenario.topology, crate::scenario::Topology::HyperX { .. })
        {
            return Ok(None);
        }
        super::flit_buffered_without_escape_channels(
            scenario,
            "the HyperX with valiant routing",
            "has no escape channels (its two phases on VCs of their own are deadlock-free)",
        )?;
        let v = scenario.virtual_channels;
        if v < 2 {
            return Err(SimError(format!(
                "valiant routing on the HyperX needs virtual_channels >= 2 (the even VCs on the \
                 way to the intermediate router, the odd ones after it), got {v}"
            )));
        }
        let parity = |p: u32| (0..v).filter(|i| i % 2 == p).fold(0u64, |mask, i| mask | 1 << i);
        Ok(Some(Routes { phase: [parity(0), parity(1)] }))
    }

    /// The per-message draw: the intermediate router, uniform among all `S^L`.
    pub(crate) fn draw(&self, hx: &HyperX, rng: &mut Rng) -> u32 {
        rng.below(u64::from(hx.routers)) as u32
    }

    /// Fills `out` (cleared by the caller) with the one step from `cur` towards
    /// `header.dest != cur`: in dimension order towards the intermediate router (`ties`) in
    /// phase 0, then towards the destination's router, on the VCs of the phase.
    pub(crate) fn candidates(
        &self,
        hx: &HyperX,
        cur: u32,
        header: Header,
        out: &mut Vec<Candidate>,
    ) {
        let Header { dest, level, ties: intermediate, .. } = header;
        let target = dest / hx.t;
        if cur < hx.terminals {
            let phase = usize::from(level == 1 || cur / hx.t == intermediate);
            out.push(Candidate { port: 0, mask: self.phase[phase], fallback: 0 });
            return;
        }
        let r = hx.router_of(cur);
        let phase = usize::from(level == 1 || r == intermediate);
        let towards = if phase == 0 { intermediate } else { target };
        let port = match (0..hx.l).find(|&d| hx.coordinate(r, d) != hx.coordinate(towards, d)) {
            Some(d) => hx.port_to(r, d, hx.coordinate(towards, d)),
            // At the destination's router in phase 1: the ejection link.
            None => dest % hx.t,
        };
        out.push(Candidate { port, mask: self.phase[phase], fallback: 0 });
    }

    /// The routing state after a hop on VC `vc`: the phase it was taken in.
    pub(crate) fn after_hop(&self, vc: u32) -> u32 {
        vc % 2
    }
}

impl Network for HyperX {
    /// `T + L (S - 1)`.
    fn ports(&self) -> u32 {
        self.t + self.l * (self.s - 1)
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
    /// differs from the destination router's, lowest dimension first; the ejection link at
    /// the destination's router) and returns the remaining distance in links.
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
            visit(Step { port: self.port_to(r, d, self.coordinate(target, d)), wraps: false });
            hops += 1;
        }
        hops
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
    /// router) or `x<d>_<j>` (the `j`-th other router of dimension `d`).
    fn describe_port(&self, port: u32) -> String {
        if port < self.t {
            format!("t_{port}")
        } else {
            let (d, j) = ((port - self.t) / (self.s - 1), (port - self.t) % (self.s - 1));
            format!("x{d}_{j}")
        }
    }

    /// `terminal-router`, `router-terminal`, or the dimension of a router link (`x0`, `x1`).
    fn link_class(&self, router: u32, port: u32, downstream: u32) -> String {
        if router < self.terminals {
            "terminal-router".into()
        } else if downstream < self.terminals {
            "router-terminal".into()
        } else {
            format!("x{}", (port - self.t) / (self.s - 1))
        }
    }
}

#[cfg(test)]
mod tests;
