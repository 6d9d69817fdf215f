//! The dragonfly: numbering, wiring, routing cases and virtual-channel classes.
//!
//! The network is the one of J. Kim, W. J. Dally, S. Scott and D. Abts, "Technology-Driven,
//! Highly-Scalable Dragonfly Topology", Proc. ISCA 2008: `g = a h + 1` groups of `a` routers;
//! each router has `p` terminals, `a - 1` local links (the routers of a group are fully
//! connected) and `h` global links, and every pair of groups is joined by exactly one global
//! link. The balanced configuration is `a = 2p = 2h` (the spec's default when only `p` is
//! given). `N = p a g` terminals.
//!
//! # Terminals, routers and ports
//!
//! As on the fat-tree, every endpoint and every router is a router of the engine (it owns
//! output ports and the buffers of the channels that enter it). Ids `0..N` are the terminals,
//! the traffic endpoints (`Geometry::nodes` is `N`); router `r = 0..a g` has id `N + r`, sits
//! in group `G = floor(r / a)` at local index `x = r mod a`, and serves terminals
//! `r p ..= r p + p - 1`. Every engine router has [`Dragonfly::ports`] `= p + (a - 1) + h`
//! output ports:
//!
//! - a terminal's port 0 is its link to its router (its other ports have no link);
//! - a router's port `i < p` leads to its terminal `r p + i` (the ejection link);
//! - port `p + j`, `j = 0..a - 1`, is the local link to the router of local index `j` if
//!   `j < x`, else `j + 1` (every other router of the group, in order);
//! - port `p + a - 1 + j`, `j = 0..h`, is global link `j`.
//!
//! Every link is a pair of channels, one per direction, each with V virtual channels.
//!
//! # Global-link arrangements (`global_arrangement`)
//!
//! Group `G` numbers its `a h = g - 1` global links `l = x h + j` (router by router, port by
//! port); link `l` leaves router `x = floor(l / h)` through global port `l mod h`. Which
//! group it leads to is the arrangement (Hastings et al., Cluster 2015), and `l(G, T)` is the
//! link of group `G` that leads to group `T != G`:
//!
//! - `absolute` (the default): link `l` leads to group `T = l` if `l < G`, else `l + 1` (the
//!   other groups in increasing order, skipping `G`); `l(G, T) = T` if `T < G`, else `T - 1`.
//!   The link between groups `i < j` is link `j - 1` of `i` and link `i` of `j`.
//! - `relative`: link `l` leads to group `(G + l + 1) mod g`; `l(G, T) = (T - G - 1) mod g`.
//!   Link `l` of `G` is link `g - 2 - l` of the group it leads to.
//! - `circulant`: links in pairs, with `d = (T - G) mod g` the offset: `l(G, T) = 2 (d - 1)`
//!   when `d <= g - d`, else `2 (g - d - 1) + 1`; link `2m` leads `m + 1` groups on, link
//!   `2m + 1` as many back, so link `2m` of `G` is link `2m + 1` of the group it leads to (with
//!   `g` even, the last link, `2m = g - 2`, leads to the opposite group, whose own last link
//!   leads back).
//!
//! In each, every pair of groups is joined by exactly one link, and `l(G, T)` and `l(T, G)`
//! name its two ends, so each global link is one pair of channels (a test checks the wiring
//! of every arrangement for symmetry and for one link per pair of groups). Routes, VC classes
//! and the zero-load formula below are written with `l(G, T)` and hold for every arrangement;
//! what changes is which router of a group is the gateway to which group.
//!
//! # Routes
//!
//! A route towards group `T` from router `(G, x)`: if `G = T` it is done; otherwise take the
//! local link to the gateway `floor(l(G, T) / h)` unless `x` is the gateway, then the global
//! link. It lands in `T` at router `floor(l(T, G) / h)`. In the destination group the route
//! takes the local link to the destination's router unless it is there, then the ejection link.
//! [`Dragonfly::step`] gives that one port; there is no choice within a route.
//!
//! - `minimal`: towards the destination's group: at most local, global, local.
//! - `valiant`: towards an intermediate group `I` drawn per message at generation, uniformly
//!   among the groups other than the source's and the destination's (`g - 2` choices, `g - 1`
//!   when both are the same group), then on to the destination as `minimal`. Every message
//!   takes the detour, also within a group. Needs `g >= 3`.
//! - `ugal` (UGAL-L): the intermediate group is drawn as for `valiant`; at the source router the
//!   header compares the minimal and the Valiant first output port and takes the minimal route
//!   iff `q_min H_min <= q_val H_val + T`, where `q` is the occupancy of the port, the flits
//!   held in the V downstream buffers of that output channel (the credits the source router
//!   has used on it: what a router knows locally), `H` the number of router-to-router links of
//!   the route from here (terminal links excluded: both routes have the same two) and the
//!   threshold `T` is `ugal_threshold` flits, by default one message's flits on a hop
//!   (`message_length`, or `packet_size` when shorter, at most `buffer_depth`: what one buffer
//!   holds of one message), so that at low load one passing message does not tip a message
//!   onto the long route. `T` is in the units of `q`. (It was `buffer_depth` until the
//!   `ugal_threshold` field came, which with buffers deeper than the message the port's
//!   occupancy, at most `V M` flits with `drained` reallocation, hardly ever exceeded: UGAL
//!   then stayed minimal under adversarial traffic.) A header that waits re-evaluates every
//!   cycle until it is granted an output VC; from then on the choice is fixed.
//! - `ugal_global` (UGAL-G; N. Jiang, J. Kim and W. J. Dally, "Indirect Adaptive Routing on
//!   Large Scale Interconnection Networks", Proc. ISCA 2009): as `ugal`, but `q` of a route is
//!   what is queued on its way out of the source group, on its first channel and, when that is
//!   a local link, on the gateway router's global channel too (read wherever it is: the global
//!   information a real router would need side channels for). A channel's queue is the flits
//!   in its downstream buffers (as for `ugal`) plus the flits waiting at its router in the
//!   input buffers its VCs are allocated to: what an output-queued router holds in the
//!   channel's output queue. The downstream buffers alone do not show a saturated global
//!   link (its landing router drains them at once); the flits waiting for it do. Within the
//!   group, the minimal route's one channel.
//! - `par` (PAR, progressive adaptive routing, the same paper): UGAL-L at the source router;
//!   a message sent minimally whose first hop is local makes the choice once more at the next
//!   router (in its source group, bound for another group), from that router's ports, and may
//!   turn to its Valiant route there. Its second local hop in the source group needs a VC
//!   class of its own (below). V >= 4.
//! - `ugal_booksim`: BookSim 2's `ugal_dragonflynew` (commit 28f4329, `dragonfly.cpp`), for
//!   cross-checks. The intermediate is a terminal drawn uniformly among all `N` at generation
//!   (none, a minimal route, when the destination or that terminal lies in the source's group;
//!   kept in `ties`), and the detour heads for that terminal's router ([`REACHED`] set there),
//!   then minimally on. At the source router, at the header's first routing attempt and only
//!   then, the route is minimal iff `q_min <= 2 q_nonmin + 30` (BookSim's fixed weights and
//!   `adaptive_threshold`, `q` the occupancy as for `ugal`).
//!
//! # Virtual-channel classes (deadlock freedom)
//!
//! A message's class is the number of global hops it has taken (kept in the routing state
//! `level`, bits [`GLOBALS`]). Local hops use the VCs of the class `c`, global hops likewise,
//! terminal links every VC:
//!
//! - `minimal`: local classes 0 (before the global hop) and 1 (after it), the even and the
//!   odd VCs; the one global hop uses every VC. Needs V >= 2.
//! - `valiant`, `ugal` and `ugal_global`: local classes 0, 1, 2 (VC index mod 3), global
//!   classes 0 and 1 (VC index mod 2). Needs V >= 3.
//! - `par`: local classes 0 and 1 before the first global hop (the source router's local hop,
//!   and the second local hop of a message that turned), 2 and 3 after the first and the second
//!   global hop (VC index mod 4), global classes 0 and 1 (mod 2). Needs V >= 4.
//! - A route that UGAL (`ugal`, `ugal_global`, `par`) chose minimal uses more of the VCs, so
//!   that under uniform traffic UGAL loses little to `minimal`: its global hop any VC (both
//!   global classes), and its last local hop, which only the ejection link follows, the local
//!   class after its global hop's class and the one after that (only the latter when its
//!   global hop took a VC of global class 1). With one class per hop, UGAL's minimal routes
//!   had a third of the VCs per local hop and half per global hop, and UGAL accepted 22% less
//!   than `minimal` under uniform traffic (72 terminals, V = 4, 4-flit buffers: 0.60 against
//!   0.77 flits per terminal and cycle); now 8% less (0.71). Not with `one_per_class`.
//!
//! `ugal_booksim` has BookSim's VC phases instead: phase 0 on the detour up to the intermediate
//! router, 1 in the minimal phase up to its global hop, 2 from it on and within the source's
//! group (VCs `v mod 3 = phase`, or VC `phase` with `one_per_class`). Its detour keeps phase 0
//! over local, global and local hops, so its channel-dependency graph is cyclic (a test shows
//! it): as in BookSim, deadlock freedom is not by construction.
//!
//! With `vc_classes: one_per_class` (BookSim's dragonfly) each class has one VC instead: a
//! route's VC is the number of global hops it has started, local class c on VC c and global
//! class c on VC c + 1 (minimal: VC 0 before the global hop, VC 1 from it on; valiant and
//! ugal: VCs 0, 1, 2), and the VCs beyond them idle.
//!
//! Along every route the channel classes strictly increase in the order local 0 < global 0 <
//! local 1 < global 1 < local 2 (`par`: local 0 < local 1 < global 0 < local 2 < global 1 <
//! local 3; a route never takes two local hops in a row on one class within a group: the
//! group is fully connected, and PAR's turn moves to local class 1), terminal links only begin
//! or end a route, so the channel-dependency graph is acyclic. UGAL's minimal routes keep the
//! order: a global class after local 0, then a local class above it. A test builds the graph
//! on small instances over every route, intermediate group, choice and group of VCs that lead
//! to different states, finds no cycle, and finds one when all routes share one class.
//!
//! # Zero-load latency
//!
//! A route crosses `hops = 2 + H` links: the terminal's link to its router, the `H`
//! router-to-router links, and the ejection link. In the engine's conventions (module `sim`:
//! one cycle per link, `router_delay` at every router entered over a link, not at the
//! destination terminal, one ejection cycle, the tail `M - 1` cycles behind) the zero-load
//! latency is exactly `hops + M + router_delay (hops - 1)`. For `minimal` from terminal `s` at router
//! `(G_s, x_s)` to `d != s` at `(G_d, x_d)`: `H = 0` on the same router, `H = 1` in the same
//! group, and otherwise `H = [x_s != gw(G_s, G_d)] + 1 + [land(G_d, G_s) != x_d]` with
//! `gw(G, T) = land(G, T) = floor(l(G, T) / h)`. Via group `I`, `H` is the sum of the two
//! legs, `[x_s != gw(G_s, I)] + 1 + [land(I, G_s) != gw(I, G_d)] + 1 + [land(G_d, I) != x_d]`
//! (the tests check both for every pair and intermediate group of small dragonflies).

use crate::scenario::{GlobalArrangement, Routing, Scenario, VcClasses};

use super::super::SimError;
use super::super::divisor::Divisor;
use super::super::rng::Rng;
use super::Network;
use super::hop::{Candidate, Header, NO_LINK, Step};

/// No intermediate group (a minimal route).
pub(crate) const NO_GROUP: u32 = u32::MAX;
/// Routing state bits: global hops taken so far (0, 1 or 2).
pub(crate) const GLOBALS: u32 = 0b11;
/// Routing state bit: UGAL's choice is made (set when the source router grants the VC).
const DECIDED: u32 = 1 << 2;
/// Routing state bit: the route is minimal (UGAL's choice; the intermediate group is ignored).
const MINIMAL: u32 = 1 << 3;
/// Routing state bit (`ugal_booksim`): the detour has reached its intermediate router.
const REACHED: u32 = 1 << 4;
/// Routing state bit (`par`): the message has taken a local hop in its source group.
const LOCAL_HOP: u32 = 1 << 5;
/// Routing state bit (`par`): the second choice, at the router after the source, is made.
const REVISED: u32 = 1 << 6;
/// Routing state bit: UGAL's minimal route took its global hop on a VC of global class 1.
const LATE_GLOBAL: u32 = 1 << 7;
/// `ugal_booksim`: BookSim's `adaptive_threshold`, in flits.
const BOOKSIM_THRESHOLD: u64 = 30;

/// A built dragonfly: its sizes (the neighbour table is `Geometry`'s).
#[derive(Clone, Debug)]
pub(crate) struct Dragonfly {
    /// Terminals per router p.
    p: u32,
    /// Routers per group a.
    a: u32,
    /// Global links per router h.
    h: u32,
    /// Groups g = a h + 1.
    g: u32,
    /// Terminals N = p a g (the first router id).
    terminals: u32,
    /// Which global link leads to which group.
    arrangement: GlobalArrangement,
    /// p, a, h, g and p a as divisors (`sim::divisor`): a router's group and index, a
    /// terminal's router, a global link's router, on every hop.
    div_p: Divisor,
    div_a: Divisor,
    div_h: Divisor,
    div_g: Divisor,
    div_pa: Divisor,
}

impl Dragonfly {
    /// Validates (p, a, h) and returns the network's sizes.
    pub(crate) fn new(p: u32, a: u32, h: u32) -> Result<Dragonfly, SimError> {
        if p == 0 || a == 0 || h == 0 {
            return Err(SimError(format!(
                "the dragonfly needs terminals_per_router p >= 1, routers_per_group a >= 1 and \
                 global_links_per_router h >= 1, got p = {p}, a = {a}, h = {h}"
            )));
        }
        let groups = u64::from(a) * u64::from(h) + 1;
        let terminals = u64::from(p) * u64::from(a) * groups;
        let ports = u64::from(p) + u64::from(a) - 1 + u64::from(h);
        if terminals > u64::from(u32::MAX / 2) || ports > 64 * 1024 {
            return Err(SimError(format!(
                "dragonfly p = {p}, a = {a}, h = {h} is too large for the simulator ({terminals} \
                 terminals, routers of radix {ports})"
            )));
        }
        Ok(Dragonfly {
            p,
            a,
            h,
            g: groups as u32,
            terminals: terminals as u32,
            arrangement: GlobalArrangement::Absolute,
            div_p: Divisor::new(p),
            div_a: Divisor::new(a),
            div_h: Divisor::new(h),
            div_g: Divisor::new(groups as u32),
            div_pa: Divisor::new(p * a),
        })
    }

    /// The same dragonfly with its global links in `arrangement`.
    pub(crate) fn arranged(self, arrangement: GlobalArrangement) -> Dragonfly {
        Dragonfly { arrangement, ..self }
    }

    /// Routers `a g` (their ids follow the terminals').
    pub(crate) fn routers(&self) -> u32 {
        self.a * self.g
    }

    /// Number of groups g.
    pub(crate) fn groups(&self) -> u32 {
        self.g
    }

    /// Terminals per group, `p a`.
    pub(crate) fn group_size(&self) -> u32 {
        self.p * self.a
    }

    /// The group of a terminal.
    #[inline]
    pub(crate) fn group_of(&self, terminal: u32) -> u32 {
        self.div_pa.div(terminal)
    }

    /// The index of group `to`'s link among group `from`'s global links, `l(from, to)`
    /// (`to != from`; see the module docs).
    #[inline]
    fn link(&self, from: u32, to: u32) -> u32 {
        match self.arrangement {
            GlobalArrangement::Absolute => {
                if to < from {
                    to
                } else {
                    to - 1
                }
            }
            GlobalArrangement::Relative => self.div_g.rem(to + self.g - from - 1),
            GlobalArrangement::Circulant => {
                let d = self.div_g.rem(to + self.g - from);
                if d <= self.g - d { 2 * (d - 1) } else { 2 * (self.g - d - 1) + 1 }
            }
        }
    }

    /// The group that link `l` of group `from` leads to.
    #[inline]
    fn peer(&self, from: u32, l: u32) -> u32 {
        match self.arrangement {
            GlobalArrangement::Absolute => {
                if l < from {
                    l
                } else {
                    l + 1
                }
            }
            GlobalArrangement::Relative => self.div_g.rem(from + l + 1),
            GlobalArrangement::Circulant => {
                let m = l / 2 + 1;
                if l.is_multiple_of(2) {
                    self.div_g.rem(from + m)
                } else {
                    self.div_g.rem(from + self.g - m)
                }
            }
        }
    }

    /// The port of the local link from local index `x` to local index `y != x`.
    #[inline]
    fn local_port(&self, x: u32, y: u32) -> u32 {
        self.p + if y < x { y } else { y - 1 }
    }

    /// The first global port.
    #[inline]
    fn first_global(&self) -> u32 {
        self.p + self.a - 1
    }

    /// The one output port from `cur` (a terminal or a router id) on the route towards group
    /// `target` or, once in it, towards terminal `dest` (which must be in `target`).
    #[inline]
    pub(crate) fn step(&self, cur: u32, target: u32, dest: u32) -> u32 {
        if cur < self.terminals {
            return 0;
        }
        let r = cur - self.terminals;
        let (group, x) = self.div_a.div_rem(r);
        if group == target {
            let (router, port) = self.div_p.div_rem(dest);
            let y = self.div_a.rem(router);
            return if x == y { port } else { self.local_port(x, y) };
        }
        let l = self.link(group, target);
        let (gateway, global) = self.div_h.div_rem(l);
        if x == gateway { self.first_global() + global } else { self.local_port(x, gateway) }
    }

    /// Router-to-router links from router index `r` to group `target`, and the router index
    /// the route lands on there.
    fn leg(&self, r: u32, target: u32) -> (u32, u32) {
        let (group, x) = self.div_a.div_rem(r);
        if group == target {
            return (0, r);
        }
        let gateway = self.div_h.div(self.link(group, target));
        let landing = target * self.a + self.div_h.div(self.link(target, group));
        (u32::from(x != gateway) + 1, landing)
    }

    /// Router-to-router links `H` of the route from router id `cur` to terminal `dest`, via
    /// group `via` first unless it is [`NO_GROUP`].
    pub(crate) fn router_hops(&self, cur: u32, dest: u32, via: u32) -> u32 {
        let dest_router = self.div_p.div(dest);
        let mut r = cur - self.terminals;
        let mut hops = 0;
        if via != NO_GROUP {
            let (links, landing) = self.leg(r, via);
            hops += links;
            r = landing;
        }
        let (links, landing) = self.leg(r, self.div_a.div(dest_router));
        hops + links + u32::from(landing != dest_router)
    }

    /// Whether `port` of router or terminal `cur` is a global link.
    #[inline]
    pub(crate) fn is_global(&self, cur: u32, port: u32) -> bool {
        cur >= self.terminals && port >= self.first_global()
    }

    /// The intermediate group of a new message from `source` to `dest`: uniform among the
    /// groups other than theirs (one draw).
    pub(crate) fn intermediate(&self, source: u32, dest: u32, rng: &mut Rng) -> u32 {
        let (gs, gd) = (self.group_of(source), self.group_of(dest));
        let (lo, hi) = (gs.min(gd), gs.max(gd));
        let choices = self.g - 1 - u32::from(gs != gd);
        let mut pick = rng.below(u64::from(choices)) as u32;
        if pick >= lo {
            pick += 1;
        }
        if hi != lo && pick >= hi {
            pick += 1;
        }
        pick
    }
}

impl Network for Dragonfly {
    /// Output ports per engine router, `p + (a - 1) + h`.
    fn ports(&self) -> u32 {
        self.p + self.a - 1 + self.h
    }

    /// The neighbour table: the downstream router of each channel `router * ports + port`,
    /// `NO_LINK` where none, for the terminals and then the routers.
    fn neighbors(&self) -> Vec<u32> {
        let ports = self.ports();
        let total = self.terminals + self.routers();
        let mut neighbor = vec![NO_LINK; total as usize * ports as usize];
        for t in 0..self.terminals {
            let router = t / self.p;
            neighbor[(t * ports) as usize] = self.terminals + router;
            neighbor[((self.terminals + router) * ports + t % self.p) as usize] = t;
        }
        for r in 0..self.routers() {
            let (group, x) = (r / self.a, r % self.a);
            let base = (self.terminals + r) * ports;
            for y in (0..self.a).filter(|&y| y != x) {
                let to = self.terminals + group * self.a + y;
                neighbor[(base + self.local_port(x, y)) as usize] = to;
            }
            for j in 0..self.h {
                let to_group = self.peer(group, x * self.h + j);
                let back = self.link(to_group, group);
                let to = self.terminals + to_group * self.a + back / self.h;
                neighbor[(base + self.first_global() + j) as usize] = to;
            }
        }
        neighbor
    }

    /// The minimal step from `cur` to terminal `dest != cur` and the remaining distance in
    /// links (terminal links included).
    fn minimal_steps(&self, cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
        let port = self.step(cur, self.group_of(dest), dest);
        visit(Step { port, wraps: false });
        if cur < self.terminals {
            2 + self.router_hops(self.terminals + self.div_p.div(cur), dest, NO_GROUP)
        } else {
            1 + self.router_hops(cur, dest, NO_GROUP)
        }
    }

    /// Not bipartite (a group is a complete graph): 0; no routing asks.
    fn parity(&self, _router: u32) -> u32 {
        0
    }

    /// `T(t)` for a terminal, `R(G,x)` for router `x` of group `G`.
    fn describe(&self, id: u32) -> String {
        if id < self.terminals {
            format!("T({id})")
        } else {
            let r = id - self.terminals;
            format!("R({},{})", r / self.a, r % self.a)
        }
    }

    /// `terminal_i`, `local_j` or `global_j` (a terminal's port 0 is its link to its router).
    fn describe_port(&self, port: u32) -> String {
        if port < self.p {
            format!("terminal_{port}")
        } else if port < self.first_global() {
            format!("local_{}", port - self.p)
        } else {
            format!("global_{}", port - self.first_global())
        }
    }

    /// The link's kind: `terminal-router`, `router-terminal`, `local` or `global`.
    fn link_class(&self, router: u32, port: u32, _downstream: u32) -> String {
        let kind = self.describe_port(port);
        let kind = kind.split('_').next().unwrap_or_default();
        match kind {
            "terminal" if router < self.terminals => "terminal-router".to_owned(),
            "terminal" => "router-terminal".to_owned(),
            other => other.to_owned(),
        }
    }
}

/// Which dragonfly routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Minimal,
    Valiant,
    Ugal,
    /// UGAL-G (see the module docs).
    UgalGlobal,
    /// PAR (see the module docs).
    Par,
    /// BookSim's `ugal_dragonflynew` (see the module docs).
    UgalBooksim,
}

/// A configured dragonfly routing: its mode and VC classes (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Routes {
    mode: Mode,
    /// VCs of the local-hop classes 0, 1, 2 (class = global hops taken; `par`: 0, 1 before
    /// the first global hop, 2 and 3 after the first and the second).
    local: [u64; 4],
    /// VCs of the global-hop classes 0, 1.
    global: [u64; 2],
    /// Every VC (terminal links).
    all: u64,
    /// UGAL's threshold T in flits.
    threshold: u64,
    /// `vc_classes: spread`: UGAL's minimal routes take two classes on their last local hop.
    spread: bool,
}

/// The VCs `v < count` with `v mod classes = class`.
fn class_bits(count: u32, classes: u32, class: u32) -> u64 {
    (0..count).filter(|v| v % classes == class).fold(0, |mask, v| mask | 1 << v)
}

impl Routes {
    /// The routing of `scenario` if it is a dragonfly routing (`None` for the others), or why
    /// it cannot run; refuses the dragonfly routings elsewhere and the others on the dragonfly.
    pub(crate) fn new(scenario: &Scenario) -> Result<Option<Routes>, SimError> {
        let mode = match scenario.routing {
            Routing::Minimal => Some(Mode::Minimal),
            Routing::Valiant => Some(Mode::Valiant),
            Routing::Ugal => Some(Mode::Ugal),
            Routing::UgalGlobal => Some(Mode::UgalGlobal),
            Routing::Par => Some(Mode::Par),
            Routing::UgalBooksim => Some(Mode::UgalBooksim),
            _ => None,
        };
        let name = scenario.routing.as_str();
        let weighs = matches!(mode, Some(Mode::Ugal | Mode::UgalGlobal | Mode::Par));
        if let Some(threshold) = scenario.ugal_threshold
            && !weighs
        {
            return Err(SimError(format!(
                "ugal_threshold ({threshold}) is the threshold of the dragonfly's ugal, \
                 ugal_global and par routings and of the HyperX's ugal and dal, but the routing \
                 is {name}: leave it out"
            )));
        }
        if !scenario.vc_classes.is_spread() && scenario.topology.dragonfly().is_none() {
            return Err(SimError(format!(
                "vc_classes places the dragonfly's VC classes, but the topology is {}: leave it \
                 spread",
                scenario.topology.kind()
            )));
        }
        let Some((p, a, h)) = scenario.topology.dragonfly() else {
            return match mode {
                Some(_) => Err(SimError(format!(
                    "routing {name} is a dragonfly routing (local, global and local hops between \
                     groups of routers){}, got topology {}",
                    if mode == Some(Mode::Minimal) { " or a graph's" } else { "" },
                    scenario.topology.kind()
                ))),
                None => Ok(None),
            };
        };
        let Some(mode) = mode else {
            return Err(SimError(format!(
                "the dragonfly routes minimal, valiant, ugal, ugal_global, par or ugal_booksim, got \
                 routing {name}"
            )));
        };
        let dragonfly = Dragonfly::new(p, a, h)?;
        super::flit_buffered_without_escape_channels(
            scenario,
            "the dragonfly",
            "has no escape channels (its VC classes by global hops taken are deadlock-free)",
        )?;
        let v = scenario.virtual_channels;
        let (needed, why) = match mode {
            Mode::Minimal => {
                (2, "two VC classes for the local hops before and after the global hop")
            }
            Mode::UgalBooksim => {
                (3, "a VC class per phase: the detour, minimal, after its global hop")
            }
            Mode::Par => (
                4,
                "four VC classes for the local hops: one or two in the source group, one after \
                 each global hop",
            ),
            _ => (3, "three VC classes for the local hops and two for the global hops of a detour"),
        };
        if v < needed {
            return Err(SimError(format!(
                "{name} routing on the dragonfly needs virtual_channels >= {needed} ({why}), got {v}"
            )));
        }
        if mode != Mode::Minimal && dragonfly.groups() < 3 {
            return Err(SimError(format!(
                "{name} routing needs an intermediate group other than the source's and the \
                 destination's: g = a h + 1 >= 3 groups, got g = {}",
                dragonfly.groups()
            )));
        }
        if mode == Mode::Par && !scenario.vc_classes.is_spread() {
            return Err(SimError(
                "par routing has two local classes before the first global hop, which \
                 vc_classes: one_per_class (a route's VC is its global hops started) cannot \
                 place: leave vc_classes spread"
                    .into(),
            ));
        }
        let all = class_bits(v, 1, 0);
        let threshold = u64::from(super::ugal_threshold(scenario));
        let classes = scenario.vc_classes;
        let routes = match (mode, classes) {
            // A VC class per phase (`local`), the VCs `v mod 3 = phase` or one VC each.
            (Mode::UgalBooksim, classes) => Routes {
                mode,
                local: match classes {
                    VcClasses::Spread => [0, 1, 2, 3].map(|phase| class_bits(v, 3, phase)),
                    VcClasses::OnePerClass => [1, 2, 4, 0],
                },
                global: [0, 0],
                all,
                threshold: BOOKSIM_THRESHOLD,
                spread: false,
            },
            // A route's VC is the number of global hops it has started (BookSim's dragonfly):
            // local class c on VC c, global class c on VC c + 1.
            (_, VcClasses::OnePerClass) => Routes {
                mode,
                local: [1, 2, if mode == Mode::Minimal { 0 } else { 4 }, 0],
                global: [2, if mode == Mode::Minimal { 0 } else { 4 }],
                all,
                threshold,
                spread: classes.is_spread(),
            },
            (Mode::Minimal, VcClasses::Spread) => Routes {
                mode,
                local: [class_bits(v, 2, 0), class_bits(v, 2, 1), 0, 0],
                global: [all, all],
                all,
                threshold,
                spread: classes.is_spread(),
            },
            (Mode::Par, VcClasses::Spread) => Routes {
                mode,
                local: [0, 1, 2, 3].map(|class| class_bits(v, 4, class)),
                global: [class_bits(v, 2, 0), class_bits(v, 2, 1)],
                all,
                threshold,
                spread: classes.is_spread(),
            },
            (_, VcClasses::Spread) => Routes {
                mode,
                local: [class_bits(v, 3, 0), class_bits(v, 3, 1), class_bits(v, 3, 2), 0],
                global: [class_bits(v, 2, 0), class_bits(v, 2, 1)],
                all,
                threshold,
                spread: classes.is_spread(),
            },
        };
        Ok(Some(routes))
    }

    /// Whether messages draw an intermediate group when generated.
    pub(crate) fn draws_intermediate(&self) -> bool {
        self.mode != Mode::Minimal
    }

    /// Whether the routing decides per message at the source router (UGAL).
    pub(crate) fn decides_at_source(&self) -> bool {
        matches!(self.mode, Mode::Ugal | Mode::UgalGlobal | Mode::Par | Mode::UgalBooksim)
    }

    /// Whether the decision is kept from the first routing attempt (BookSim's UGAL; UGAL-L
    /// re-evaluates a waiting header every cycle).
    pub(crate) fn decides_once(&self) -> bool {
        self.mode == Mode::UgalBooksim
    }

    /// The per-message draw: the intermediate group (`valiant`, `ugal`), or for
    /// `ugal_booksim` an intermediate terminal uniform among all `N` (BookSim's
    /// `RandomInt(N - 1)`), drawn only when the destination is in another group, and
    /// `NO_GROUP` (a minimal route) when it lies in the source's group.
    pub(crate) fn draw(&self, df: &Dragonfly, source: u32, dest: u32, rng: &mut Rng) -> u32 {
        if self.mode != Mode::UgalBooksim {
            return df.intermediate(source, dest, rng);
        }
        let group = df.group_of(source);
        if df.group_of(dest) == group {
            return NO_GROUP;
        }
        let intermediate = rng.below(u64::from(df.terminals)) as u32;
        if df.group_of(intermediate) == group { NO_GROUP } else { intermediate }
    }

    /// `ugal_booksim`: whether the header at `cur` is on its detour to the intermediate router
    /// of terminal `via` and has not reached it (at that router it has, even before its
    /// state says so).
    #[inline]
    fn detouring(df: &Dragonfly, cur: u32, level: u32, via: u32) -> bool {
        level & DECIDED != 0
            && level & (MINIMAL | REACHED) == 0
            && via != NO_GROUP
            && cur != df.terminals + df.div_p.div(via)
    }

    /// `ugal_booksim`: the port from `cur` towards the intermediate router of terminal `via`.
    #[inline]
    fn towards_intermediate(df: &Dragonfly, cur: u32, via: u32) -> u32 {
        let router = df.div_p.div(via);
        // The first terminal of that router stands for it (`step` stops before its link).
        df.step(cur, df.div_a.div(router), router * df.p)
    }

    /// `ugal_booksim`: the VCs of the hop from `cur` through `port`: BookSim's phase, 0 on the
    /// detour, 2 in a minimal phase that has started its global hop (or stays in the source's
    /// group), 1 otherwise; every VC on a terminal link.
    #[inline]
    fn phase_mask(&self, df: &Dragonfly, cur: u32, port: u32, header: Header) -> u64 {
        let Header { dest, level, ties: via, .. } = header;
        if cur < df.terminals || port < df.p {
            return self.all;
        }
        if Routes::detouring(df, cur, level, via) {
            return self.local[0];
        }
        let detoured =
            level & REACHED != 0 || (level & (DECIDED | MINIMAL) == DECIDED && via != NO_GROUP);
        let globals = (level & GLOBALS) - u32::from(detoured);
        let group = df.div_a.div(cur - df.terminals);
        let stays = !detoured && level & GLOBALS == 0 && df.group_of(dest) == group;
        if df.is_global(cur, port) || globals >= 1 || stays { self.local[2] } else { self.local[1] }
    }

    /// The group the route from `cur` heads for next (`via` first unless the route is minimal
    /// or past its first global hop).
    #[inline]
    fn target(&self, df: &Dragonfly, dest: u32, level: u32, via: u32) -> u32 {
        if level & (GLOBALS | MINIMAL) == 0 && via != NO_GROUP { via } else { df.group_of(dest) }
    }

    /// The VCs allowed on `port` of `cur` for a message in routing state `level`: the class
    /// is the global hops taken (`par`: its local hops before the first global hop are classes
    /// 0 and 1, the later ones 2 and 3). With `vc_classes: spread` a route UGAL chose minimal
    /// takes more: its global hop both global classes, its last local hop the class after the
    /// global hop's and the one after it (only the latter after a global hop of class 1).
    #[inline]
    fn mask(&self, df: &Dragonfly, cur: u32, port: u32, level: u32) -> u64 {
        let globals = level & GLOBALS;
        let chose_minimal = self.spread && level & (DECIDED | MINIMAL) == DECIDED | MINIMAL;
        if cur < df.terminals || port < df.p {
            self.all
        } else if df.is_global(cur, port) {
            if chose_minimal {
                self.global[0] | self.global[1]
            } else {
                self.global[globals.min(1) as usize]
            }
        } else {
            let par = u32::from(self.mode == Mode::Par);
            let class = if globals == 0 {
                u32::from(level & LOCAL_HOP != 0)
            } else {
                (globals + par).min(self.local.len() as u32 - 1)
            } as usize;
            if chose_minimal && globals == 1 {
                // The last local hop: only ejection follows the class after a second global hop.
                let late = self.local[class + 1];
                if level & LATE_GLOBAL != 0 { late } else { self.local[class] | late }
            } else {
                self.local[class]
            }
        }
    }

    /// `par`: whether the header at `cur` is where a message sent minimally may still turn to
    /// its Valiant route: the router after its source router, in the source group, bound for
    /// another group, with that second choice not yet made.
    #[inline]
    fn revisable(&self, df: &Dragonfly, cur: u32, dest: u32, level: u32, via: u32) -> bool {
        self.mode == Mode::Par
            && level & (DECIDED | MINIMAL | LOCAL_HOP | REVISED | GLOBALS)
                == DECIDED | MINIMAL | LOCAL_HOP
            && via != NO_GROUP
            && cur >= df.terminals
            && df.group_of(dest) != df.div_a.div(cur - df.terminals)
    }

    /// Whether routing `header` at `cur` weighs occupancy (`decide`): UGAL's choice not yet
    /// made at the source router, or PAR's second choice not yet made. Anywhere else a
    /// header's candidates follow from its state and the router alone, so a blocked header's
    /// retry fails until a VC is released at its router (`engine::route`).
    pub(crate) fn weighs_occupancy(&self, df: &Dragonfly, cur: u32, header: Header) -> bool {
        let Header { dest, level, ties: via, .. } = header;
        self.decides_at_source()
            && cur >= df.terminals
            && (level & DECIDED == 0 || self.revisable(df, cur, dest, level, via))
    }

    /// Fills `out` (cleared by the caller) with the one allowed port and its VCs; with UGAL's
    /// choice not yet made (a header at its source router, as the deadlock analysis sees it),
    /// both the minimal and the Valiant first port.
    #[inline]
    pub(crate) fn candidates(
        &self,
        df: &Dragonfly,
        cur: u32,
        header: Header,
        out: &mut Vec<Candidate>,
    ) {
        let Header { dest, level, ties: via, .. } = header;
        if self.mode == Mode::UgalBooksim {
            let port = if Routes::detouring(df, cur, level, via) {
                Routes::towards_intermediate(df, cur, via)
            } else {
                df.step(cur, df.group_of(dest), dest)
            };
            out.push(Candidate { port, mask: self.phase_mask(df, cur, port, header), fallback: 0 });
            if level & DECIDED == 0 && via != NO_GROUP && cur >= df.terminals {
                // Undecided (as the deadlock analysis sees a header at its source router):
                // the detour's first port too.
                let detour = Routes::towards_intermediate(df, cur, via);
                let mask = self.local[0];
                match out.iter_mut().find(|c| c.port == detour) {
                    Some(candidate) => candidate.mask |= mask,
                    None => out.push(Candidate { port: detour, mask, fallback: 0 }),
                }
            }
            return;
        }
        let port = df.step(cur, self.target(df, dest, level, via), dest);
        out.push(Candidate { port, mask: self.mask(df, cur, port, level), fallback: 0 });
        let alternative = if self.decides_at_source() && level & DECIDED == 0 && cur >= df.terminals
        {
            // The choice at the source router not yet made: the minimal port too.
            Some(df.step(cur, df.group_of(dest), dest))
        } else if self.revisable(df, cur, dest, level, via) {
            // PAR's second choice not yet made: the Valiant port too.
            Some(df.step(cur, via, dest))
        } else {
            None
        };
        if let Some(other) = alternative {
            // The alternative's VCs as the state after that choice has them.
            let chosen = if level & DECIDED == 0 {
                level | DECIDED | MINIMAL
            } else {
                (level | REVISED) & !MINIMAL
            };
            let mask = self.mask(df, cur, other, chosen);
            match out.iter_mut().find(|c| c.port == other) {
                Some(candidate) => candidate.mask |= mask,
                None => out.push(Candidate { port: other, mask, fallback: 0 }),
            }
        }
    }

    /// The flits queued on the way out of the source group towards group `target` from router
    /// `cur` (UGAL-G): on the port the route leaves `cur` by and, when that is a local link, on
    /// the gateway's global channel too, wherever it is; a channel's queue is its downstream
    /// flits and the flits waiting for it at its router (`occupancy`'s two counts). Within the
    /// group (`target` is `cur`'s), on the route's one port.
    fn group_queue(
        df: &Dragonfly,
        cur: u32,
        target: u32,
        dest: u32,
        occupancy: &impl Fn(u32, u32) -> (u32, u32),
    ) -> u64 {
        let queue = |router, port| {
            let (held, waiting) = occupancy(router, port);
            u64::from(held) + u64::from(waiting)
        };
        let port = df.step(cur, target, dest);
        let mut queued = queue(cur, port);
        let group = df.div_a.div(cur - df.terminals);
        if group != target && !df.is_global(cur, port) {
            let l = df.link(group, target);
            let (gateway, global) = df.div_h.div_rem(l);
            let gateway = df.terminals + group * df.a + gateway;
            queued += queue(gateway, df.first_global() + global);
        }
        queued
    }

    /// UGAL at the source router: the routing state with the choice made, from `occupancy`,
    /// the flits held in the downstream buffers of output `port` of router `router` (see the
    /// module docs): UGAL-L weighs each port's occupancy at `cur` by its route's router hops,
    /// UGAL-G the queues of each route's way out of the source group likewise, BookSim's UGAL the
    /// minimal port's occupancy by 1 and the one towards the intermediate router by 2.
    /// BookSim's detour ends at its intermediate router; PAR's second choice is made at the
    /// router after the source. Other states and routings are returned unchanged.
    #[inline]
    pub(crate) fn decide(
        &self,
        df: &Dragonfly,
        cur: u32,
        header: Header,
        occupancy: impl Fn(u32, u32) -> (u32, u32),
    ) -> u32 {
        let Header { dest, level, ties: via, .. } = header;
        let booksim = self.mode == Mode::UgalBooksim;
        if !self.decides_at_source() || cur < df.terminals {
            return level;
        }
        let revising = self.revisable(df, cur, dest, level, via);
        if level & DECIDED != 0 && !revising {
            let reached = booksim
                && level & (MINIMAL | REACHED) == 0
                && cur == df.terminals + df.div_p.div(via);
            return if reached { level | REACHED } else { level };
        }
        if via == NO_GROUP {
            return level | DECIDED | MINIMAL;
        }
        let decided = if revising { level | REVISED } else { level | DECIDED };
        let hops = |via| u64::from(df.router_hops(cur, dest, via));
        let held = |port| u64::from(occupancy(cur, port).0);
        let minimal_port = df.step(cur, df.group_of(dest), dest);
        let (q_min, q_other, minimal_weight, other_weight) = match self.mode {
            Mode::UgalBooksim => {
                (held(minimal_port), held(Routes::towards_intermediate(df, cur, via)), 1, 2)
            }
            Mode::UgalGlobal => {
                let queued = |target| Routes::group_queue(df, cur, target, dest, &occupancy);
                (queued(df.group_of(dest)), queued(via), hops(NO_GROUP), hops(via))
            }
            _ => (held(minimal_port), held(df.step(cur, via, dest)), hops(NO_GROUP), hops(via)),
        };
        if q_min * minimal_weight <= q_other * other_weight + self.threshold {
            decided | MINIMAL
        } else {
            decided & !MINIMAL
        }
    }

    /// The routing state after a hop from `cur` through `port` on VC `vc`: one more global hop
    /// after a global link (marked [`LATE_GLOBAL`] when UGAL's minimal route took it on a VC
    /// of global class 1), PAR's local hop in the source group.
    #[inline]
    pub(crate) fn after_hop(
        &self,
        df: &Dragonfly,
        cur: u32,
        port: u32,
        vc: u32,
        level: u32,
    ) -> u32 {
        let global = df.is_global(cur, port);
        if global && self.spread && level & (DECIDED | MINIMAL) == DECIDED | MINIMAL {
            let late = if self.global[1] >> vc & 1 == 1 { LATE_GLOBAL } else { 0 };
            return (level + 1) | late;
        }
        if self.mode == Mode::Par && !global && cur >= df.terminals && port >= df.p {
            // A local hop; before the first global hop it moves PAR's local class on.
            return level | if level & GLOBALS == 0 { LOCAL_HOP } else { 0 };
        }
        level + u32::from(global)
    }
}

#[cfg(test)]
pub(crate) mod tests;
