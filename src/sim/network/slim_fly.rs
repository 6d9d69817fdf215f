//! The Slim Fly: the MMS graph over a finite field, its numbering and wiring, and its routing
//! cases, `minimal` and `valiant`, with their virtual-channel classes.
//!
//! The network is the one of M. Besta and T. Hoefler, "Slim Fly: A Cost Effective Low-Diameter
//! Network Topology", Proc. SC 2014: the McKay-Miller-Širáň (MMS) graphs of diameter 2 (B. D.
//! McKay, M. Miller and J. Širáň, "A note on large graphs of diameter two and given maximum
//! degree", J. Combin. Theory B, 1998), as Hafner constructs them.
//!
//! # The MMS graph
//!
//! `q` is a prime power (the spec's `prime_power`) with `q = 4 w + δ`, `δ ∈ {-1, 0, 1}` (every
//! prime power but 2), and `ξ` a primitive element of the field `F_q`. The generator sets are
//! (exponents of `ξ`):
//!
//! - `δ = 1`: `X` the even exponents `0, 2, .., q - 3`, `X'` the odd ones `1, 3, .., q - 2`;
//! - `δ = -1`: `X` the even exponents `0, 2, .., 2w - 2` and the odd ones `2w - 1, 2w + 1, ..,
//!   4w - 3`; `X'` the odd exponents `1, 3, .., 2w - 1` and the even ones `2w, 2w + 2, ..,
//!   4w - 2`;
//! - `δ = 0`: `X` the even exponents `0, 2, .., q - 2`, `X'` the odd ones `1, 3, .., q - 1`.
//!
//! The routers are `(0, x, y)` and `(1, m, c)` for `x, y, m, c ∈ F_q`, `2 q²` of them; `(0, x,
//! y) ~ (0, x, y')` iff `y - y' ∈ X`, `(1, m, c) ~ (1, m, c') iff c - c' ∈ X'`, and `(0, x, y) ~
//! (1, m, c)` iff `y = m x + c`. Each router has `k' = (3 q - δ) / 2` router links (`|X|` or
//! `|X'|` within its subgraph and `q` across), the graph has diameter 2 (the tests check both
//! for every `q` up to 13), and each router has `p` terminals: by default `p = ceil(k' / 2)`,
//! the paper's balanced choice (full global bandwidth), so `q = 5` is 50 routers of network
//! radix 7 with 4 terminals each (200 terminals) and `q = 7` 98 routers of radix 11 with 6
//! (588). `F_q` for `q = p^n` is built as the polynomials over `F_p` modulo the first monic
//! polynomial of degree `n` for which some element's powers reach every non-zero element
//! (that polynomial is irreducible and the element primitive).
//!
//! # Terminals, routers and ports
//!
//! As on the dragonfly and the HyperX, every endpoint and every router is a router of the
//! engine. Ids `0..N` are the terminals, `N = p R` with `R = 2 q²` routers; router `r` has id
//! `N + r` and serves terminals `r p ..= r p + p - 1`. Router `(s, a, b)` is `r = s q² + a q +
//! b` with field elements numbered `0..q` (the integers below `p` for a prime, the
//! polynomials' base-`p` digits for a power). Every engine router has `p + k'` output ports:
//! a terminal's port 0 is its link to its router; a router's port `i < p` leads to its
//! terminal `r p + i`, port `p + j` to its `j`-th neighbouring router in increasing order.
//!
//! # Routes and virtual-channel classes
//!
//! A message's class is the number of router-to-router hops it has taken (the routing state
//! `level`); a router-to-router hop takes the VCs of its class, `v mod C = class` for `C`
//! classes; terminal links take every VC.
//!
//! - `minimal`: one hop to a neighbouring router, else two, through any common neighbour: every
//!   such port is offered (adaptive among the minimal routes). `C = 2`, V >= 2.
//! - `valiant` (Valiant and Brebner, STOC 1981; Besta and Hoefler's adversarial-traffic
//!   routing): each message draws an intermediate router uniformly among all `R` when it is
//!   generated (kept in the header's `ties`), goes there minimally, then minimally to its
//!   destination: up to 4 router hops. `C = 4`, V >= 4. The message has reached its
//!   intermediate router once it has taken as many hops as the distance from its source's
//!   router to it (its route to it is minimal), so no more state is kept.
//!
//! A route's classes strictly increase hop by hop and terminal links only begin or end one, so
//! the channel-dependency graph is acyclic (a test builds it over every pair and intermediate
//! of small instances, and finds a cycle when all hops share one class).
//!
//! # Traffic: `worst_case`
//!
//! Every terminal of router `(s, a, b)` sends to a uniformly random terminal of router
//! `(s, a + 1, b)` ([`SlimFly::column_shift`]): a router permutation at distance 2 with one
//! common neighbour per pair, so minimal routing has one path per pair, and the link from
//! `(1, 0, b)` to `(0, 0, b)` (likewise from `(0, 0, b)` to `(1, 0, b)`) relays two routers'
//! traffic: minimal routing saturates at `1/(2p)` flits per terminal and cycle, where Valiant
//! spreads the load (a test checks the pairing and the busiest link on six q, and both
//! verdicts).
//!
//! # Zero-load latency
//!
//! A route from terminal `s` to `d != s` crosses `hops = 2 + H` links, `H` the router-to-router
//! hops (the distance between their routers, 0 to 2; via an intermediate router the sum of
//! the two distances). In the engine's conventions (module `sim`) the zero-load latency is
//! exactly `hops + M + router_delay (hops - 1)`, as on the other families whose terminals are
//! not routers (the tests check it for every pair, and every intermediate, of small networks).

use crate::scenario::{Routing, Scenario};

use super::super::SimError;
use super::super::rng::Rng;
use super::Network;
use super::hop::{Candidate, Header, NO_LINK, Step};

/// The largest `q` simulated (20,000 routers).
pub(crate) const MAX_PRIME_POWER: u32 = 100;

/// The finite field `F_q`: addition and multiplication tables over the elements `0..q`.
struct Field {
    q: u32,
    add: Vec<u32>,
    mul: Vec<u32>,
    /// A primitive element.
    primitive: u32,
}

impl Field {
    /// `F_q`, or `None` when `q` is not a prime power (or is 1).
    fn new(q: u32) -> Option<Field> {
        let (p, n) = prime_power(q)?;
        let q_us = q as usize;
        // Element e is the polynomial whose base-p digits are its coefficients.
        let digits = |e: u32| -> Vec<u32> { (0..n).map(|i| (e / p.pow(i)) % p).collect() };
        let number = |d: &[u32]| -> u32 { d.iter().rev().fold(0, |acc, &c| acc * p + c) };
        let mut add = vec![0; q_us * q_us];
        for a in 0..q {
            for b in 0..q {
                let (da, db) = (digits(a), digits(b));
                let sum: Vec<u32> = da.iter().zip(&db).map(|(x, y)| (x + y) % p).collect();
                add[(a * q + b) as usize] = number(&sum);
            }
        }
        // Monic moduli of degree n: x^n + (lower coefficients given by `low`).
        for low in 0..q {
            let modulus = digits(low);
            let mul = Field::multiplication(p, n, &modulus, &digits, &number);
            let field = Field { q, add: add.clone(), mul, primitive: 0 };
            if let Some(primitive) = (2..q).chain(1..2).find(|&g| field.generates(g)) {
                return Some(Field { primitive, ..field });
            }
        }
        None
    }

    /// The multiplication table of the polynomials over `F_p` of degree below `n` modulo
    /// `x^n + modulus` (coefficients lowest first).
    fn multiplication(
        p: u32,
        n: u32,
        modulus: &[u32],
        digits: &impl Fn(u32) -> Vec<u32>,
        number: &impl Fn(&[u32]) -> u32,
    ) -> Vec<u32> {
        let q = p.pow(n);
        let n = n as usize;
        let mut mul = vec![0; (q * q) as usize];
        for a in 0..q {
            for b in 0..q {
                let (da, db) = (digits(a), digits(b));
                let mut product = vec![0u32; 2 * n];
                for (i, x) in da.iter().enumerate() {
                    for (j, y) in db.iter().enumerate() {
                        product[i + j] = (product[i + j] + x * y) % p;
                    }
                }
                // x^n = -modulus.
                for top in (n..2 * n).rev() {
                    let c = product[top];
                    if c != 0 {
                        product[top] = 0;
                        for (i, m) in modulus.iter().enumerate() {
                            let minus = (p - (c * m) % p) % p;
                            product[top - n + i] = (product[top - n + i] + minus) % p;
                        }
                    }
                }
                mul[(a * q + b) as usize] = number(&product[..n]);
            }
        }
        mul
    }

    /// Whether the powers of `g` reach every non-zero element (so the table is a field's and
    /// `g` is primitive).
    fn generates(&self, g: u32) -> bool {
        let mut seen = vec![false; self.q as usize];
        let mut e = 1;
        for _ in 0..self.q - 1 {
            if e == 0 || seen[e as usize] {
                return false;
            }
            seen[e as usize] = true;
            e = self.times(e, g);
        }
        e == 1
    }

    fn plus(&self, a: u32, b: u32) -> u32 {
        self.add[(a * self.q + b) as usize]
    }

    fn times(&self, a: u32, b: u32) -> u32 {
        self.mul[(a * self.q + b) as usize]
    }

    /// `-a`.
    fn negative(&self, a: u32) -> u32 {
        (0..self.q).find(|&b| self.plus(a, b) == 0).unwrap_or(0)
    }

    /// `ξ^e`.
    fn power(&self, e: u32) -> u32 {
        (0..e).fold(1, |acc, _| self.times(acc, self.primitive))
    }
}

/// `(p, n)` with `q = p^n`, `p` prime, or `None`.
fn prime_power(q: u32) -> Option<(u32, u32)> {
    if q < 2 {
        return None;
    }
    let p = (2..=q).find(|d| q.is_multiple_of(*d))?;
    let (mut rest, mut n) = (q, 0);
    while rest.is_multiple_of(p) {
        rest /= p;
        n += 1;
    }
    (rest == 1).then_some((p, n))
}

/// A built Slim Fly: its sizes and neighbour lists.
#[derive(Clone, Debug)]
pub(crate) struct SlimFly {
    /// The prime power q.
    q: u32,
    /// Terminals per router p.
    p: u32,
    /// Router-to-router links per router k'.
    degree: u32,
    /// Routers R = 2 q².
    routers: u32,
    /// Terminals N = p R (the first router id).
    terminals: u32,
    /// Router r's neighbouring routers, `degree` each, increasing (`r * degree ..`).
    adjacent: Vec<u32>,
    /// `a + 1` in `F_q` for each field element `a` (the `worst_case` pattern's shift).
    plus_one: Vec<u32>,
}

impl SlimFly {
    /// Checks `q` and `p` and returns the network radix `k' = (3 q - δ) / 2`, the routers
    /// `2 q²` and the engine's ports per router `p + k'`, without building the graph.
    pub(crate) fn sizes(q: u32, p: u32) -> Result<(u32, u32, u32), SimError> {
        if !(3..=MAX_PRIME_POWER).contains(&q) || prime_power(q).is_none() {
            return Err(SimError(format!(
                "the Slim Fly needs prime_power q, a prime power from 3 to {MAX_PRIME_POWER} \
                 (the MMS graphs: q = 4w + δ with δ in -1, 0, 1), got {q}"
            )));
        }
        if p == 0 || p > 1024 {
            return Err(SimError(format!(
                "the Slim Fly needs terminals_per_router p from 1 to 1024, got {p}"
            )));
        }
        let degree = crate::scenario::slim_fly_network_radix(q);
        Ok((degree, 2 * q * q, p + degree))
    }

    /// Builds the MMS graph for `q` with `p` terminals per router.
    pub(crate) fn new(q: u32, p: u32) -> Result<SlimFly, SimError> {
        let (degree, _, _) = SlimFly::sizes(q, p)?;
        let field = Field::new(q)
            .ok_or_else(|| SimError(format!("no field of order {q}: not a prime power")))?;
        let w = q / 4;
        let (x, x_prime): (Vec<u32>, Vec<u32>) = match q % 4 {
            1 => ((0..q - 1).step_by(2).collect(), (1..q - 1).step_by(2).collect()),
            3 => {
                let w = w + 1; // q = 4w - 1
                let x = (0..2 * w - 1).step_by(2).chain((2 * w - 1..4 * w - 2).step_by(2));
                let xp = (1..2 * w).step_by(2).chain((2 * w..4 * w - 1).step_by(2));
                (x.collect(), xp.collect())
            }
            _ => ((0..q - 1).step_by(2).collect(), (1..q).step_by(2).collect()),
        };
        let x: Vec<u32> = x.into_iter().map(|e| field.power(e)).collect();
        let x_prime: Vec<u32> = x_prime.into_iter().map(|e| field.power(e)).collect();
        let qq = q * q;
        let routers = 2 * qq;
        let negative: Vec<u32> = (0..q).map(|a| field.negative(a)).collect();
        let mut adjacent = Vec::with_capacity((routers * degree) as usize);
        for r in 0..routers {
            let (side, a, b) = (r / qq, (r % qq) / q, r % q);
            let mut list: Vec<u32> = Vec::with_capacity(degree as usize);
            let generators = if side == 0 { &x } else { &x_prime };
            for &g in generators {
                // Same subgraph, same first coordinate, second coordinate b - g... b + g
                // (the sets are symmetric: -g is in them too).
                list.push(side * qq + a * q + field.plus(b, g));
            }
            for other in 0..q {
                // (0, x, y) ~ (1, m, c) iff y = m x + c.
                let peer = if side == 0 {
                    // For each m: c = y - m x.
                    let c = field.plus(b, negative[field.times(other, a) as usize]);
                    qq + other * q + c
                } else {
                    // For each x: y = m x + c.
                    let y = field.plus(field.times(a, other), b);
                    other * q + y
                };
                list.push(peer);
            }
            list.sort_unstable();
            list.dedup();
            if list.len() != degree as usize || list.contains(&r) {
                return Err(SimError(format!(
                    "internal error: the MMS graph for q = {q} is not {degree}-regular at router \
                     {r}"
                )));
            }
            adjacent.extend(list);
        }
        let terminals = p * routers;
        let plus_one = (0..q).map(|a| field.plus(a, 1)).collect();
        Ok(SlimFly { q, p, degree, routers, terminals, adjacent, plus_one })
    }

    /// Routers `R = 2 q²`.
    #[cfg(test)]
    pub(crate) fn router_count(&self) -> u32 {
        self.routers
    }

    /// Router-to-router links per router k'.
    #[cfg(test)]
    pub(crate) fn degree(&self) -> u32 {
        self.degree
    }

    /// Terminals per router p.
    pub(crate) fn terminals_per_router(&self) -> u32 {
        self.p
    }

    /// The `worst_case` pattern's router map: router `(s, a, b)` to `(s, a + 1, b)`. For
    /// `s = 0` the two are never adjacent (routers of subgraph 0 link only within a column
    /// `a`) and share exactly one neighbour, `(1, 0, b)` (`b = m a + c` and `b = m (a + 1) + c`
    /// give `m = 0`, `c = b`); for `s = 1` likewise through `(0, 0, b)`. So router `(1, 0, b)`
    /// relays the `q` pairs `(0, a, b) -> (0, a + 1, b)`, and its link to `(0, 0, b)` carries
    /// both the second hop of the pair ending there and the first hop of its own pair
    /// `(1, 0, b) -> (1, 1, b)`: with minimal routing `2 p` terminals' traffic shares one link,
    /// at most `1/(2p)` flits per terminal and cycle.
    pub(crate) fn column_shift(&self) -> Vec<u32> {
        let (q, qq) = (self.q, self.q * self.q);
        (0..self.routers)
            .map(|r| {
                let (side, a, b) = (r / qq, (r % qq) / q, r % q);
                side * qq + self.plus_one[a as usize] * q + b
            })
            .collect()
    }

    /// The neighbouring routers of router index `r`.
    #[inline]
    fn neighbours(&self, r: u32) -> &[u32] {
        let start = (r * self.degree) as usize;
        &self.adjacent[start..start + self.degree as usize]
    }

    /// The port of router index `r` towards its neighbour `to`, if adjacent.
    #[inline]
    fn port_to(&self, r: u32, to: u32) -> Option<u32> {
        self.neighbours(r).binary_search(&to).ok().map(|j| self.p + j as u32)
    }

    /// The router index a terminal or an engine router belongs to.
    #[inline]
    fn router_of(&self, id: u32) -> u32 {
        if id < self.terminals { id / self.p } else { id - self.terminals }
    }

    /// Router-to-router distance (0, 1 or 2) between router indices.
    #[inline]
    pub(crate) fn distance(&self, a: u32, b: u32) -> u32 {
        if a == b {
            0
        } else if self.port_to(a, b).is_some() {
            1
        } else {
            2
        }
    }

    /// Calls `visit` with every port of router index `r` that starts a minimal route to router
    /// index `target != r`.
    #[inline]
    fn minimal_ports(&self, r: u32, target: u32, mut visit: impl FnMut(u32)) {
        if let Some(port) = self.port_to(r, target) {
            visit(port);
            return;
        }
        let far = self.neighbours(target);
        for (j, &n) in self.neighbours(r).iter().enumerate() {
            if far.binary_search(&n).is_ok() {
                visit(self.p + j as u32);
            }
        }
    }
}

/// The Slim Fly's routing: `minimal` or `valiant`, and the VCs of each class.
#[derive(Clone, Debug)]
pub(crate) struct Routes {
    /// Whether messages detour through an intermediate router.
    valiant: bool,
    /// The VCs of hop class c (`c < classes`).
    class: [u64; 4],
    /// Every VC (terminal links).
    all: u64,
}

impl Routes {
    /// The routing of `scenario` if the topology is the Slim Fly (`None` otherwise), or why it
    /// cannot run.
    pub(crate) fn new(scenario: &Scenario) -> Result<Option<Routes>, SimError> {
        if !matches!(scenario.topology, crate::scenario::Topology::SlimFly { .. }) {
            return Ok(None);
        }
        let name = scenario.routing.as_str();
        let valiant = match scenario.routing {
            Routing::Minimal => false,
            Routing::Valiant => true,
            _ => {
                return Err(SimError(format!(
                    "the Slim Fly routes minimal or valiant (VC classes by hops taken), got \
                     routing {name}"
                )));
            }
        };
        super::flit_buffered_without_escape_channels(
            scenario,
            "the Slim Fly",
            "has no escape channels (its VC classes by hops taken are deadlock-free)",
        )?;
        let v = scenario.virtual_channels;
        let classes = if valiant { 4 } else { 2 };
        if v < classes {
            return Err(SimError(format!(
                "{name} routing on the Slim Fly needs virtual_channels >= {classes} (a VC class \
                 per router-to-router hop of its longest route), got {v}"
            )));
        }
        let bits = |c: u32| (0..v).filter(|i| i % classes == c).fold(0u64, |mask, i| mask | 1 << i);
        let mut class = [0; 4];
        for (c, mask) in class.iter_mut().enumerate().take(classes as usize) {
            *mask = bits(c as u32);
        }
        Ok(Some(Routes { valiant, class, all: (0..v).fold(0, |m, i| m | 1 << i) }))
    }

    /// Whether messages draw an intermediate router.
    pub(crate) fn draws_intermediate(&self) -> bool {
        self.valiant
    }

    /// The per-message draw: the intermediate router, uniform among all `R`.
    pub(crate) fn draw(&self, sf: &SlimFly, rng: &mut Rng) -> u32 {
        rng.below(u64::from(sf.routers)) as u32
    }

    /// Fills `out` (cleared by the caller) with the minimal steps from `cur` towards
    /// `header.dest != cur`, towards the intermediate router first (`valiant`, until as many
    /// hops as its distance from the source's router are taken), on the VCs of the hop's class.
    #[inline]
    pub(crate) fn candidates(
        &self,
        sf: &SlimFly,
        cur: u32,
        header: Header,
        out: &mut Vec<Candidate>,
    ) {
        let Header { source, dest, level: hops, ties: intermediate } = header;
        if cur < sf.terminals {
            out.push(Candidate { port: 0, mask: self.all, fallback: 0 });
            return;
        }
        let r = sf.router_of(cur);
        let target = sf.router_of(dest);
        let towards = if self.valiant && hops < sf.distance(sf.router_of(source), intermediate) {
            intermediate
        } else {
            target
        };
        if r == towards {
            out.push(Candidate { port: dest % sf.p, mask: self.all, fallback: 0 });
            return;
        }
        let mask = self.class[hops.min(3) as usize];
        sf.minimal_ports(r, towards, |port| out.push(Candidate { port, mask, fallback: 0 }));
    }

    /// The routing state after a hop from `cur` through `port`: one more router-to-router hop.
    #[inline]
    pub(crate) fn after_hop(&self, sf: &SlimFly, cur: u32, port: u32, level: u32) -> u32 {
        level + u32::from(cur >= sf.terminals && port >= sf.p)
    }
}

impl Network for SlimFly {
    /// `p + k'`.
    fn ports(&self) -> u32 {
        self.p + self.degree
    }

    /// The downstream router of each channel `router * ports + port`, `NO_LINK` where none.
    fn neighbors(&self) -> Vec<u32> {
        let ports = self.ports();
        let total = self.terminals + self.routers;
        let mut neighbor = vec![NO_LINK; total as usize * ports as usize];
        for t in 0..self.terminals {
            let router = self.terminals + t / self.p;
            neighbor[(t * ports) as usize] = router;
            neighbor[(router * ports + t % self.p) as usize] = t;
        }
        for r in 0..self.routers {
            let base = (self.terminals + r) * ports + self.p;
            for (j, &n) in self.neighbours(r).iter().enumerate() {
                neighbor[base as usize + j] = self.terminals + n;
            }
        }
        neighbor
    }

    /// Every minimal step from `cur` towards terminal `dest != cur`, and the remaining
    /// distance in links.
    fn minimal_steps(&self, cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
        let target = self.router_of(dest);
        if cur < self.terminals {
            visit(Step { port: 0, wraps: false });
            return 2 + self.distance(cur / self.p, target);
        }
        let r = self.router_of(cur);
        if r == target {
            visit(Step { port: dest % self.p, wraps: false });
            return 1;
        }
        self.minimal_ports(r, target, |port| visit(Step { port, wraps: false }));
        1 + self.distance(r, target)
    }

    /// Not bipartite (the MMS graphs have triangles): 0; no routing asks.
    fn parity(&self, _router: u32) -> u32 {
        0
    }

    /// `T(t)` for a terminal, `R(s,a,b)` for router `(s, a, b)`.
    fn describe(&self, id: u32) -> String {
        if id < self.terminals {
            return format!("T({id})");
        }
        let r = id - self.terminals;
        let qq = self.q * self.q;
        format!("R({},{},{})", r / qq, (r % qq) / self.q, r % self.q)
    }

    /// `terminal_i` or `router_j` (the `j`-th neighbouring router).
    fn describe_port(&self, port: u32) -> String {
        if port < self.p { format!("terminal_{port}") } else { format!("router_{}", port - self.p) }
    }

    /// `terminal-router`, `router-terminal`, or `intra` (within a subgraph) / `inter` (across).
    fn link_class(&self, router: u32, _port: u32, downstream: u32) -> String {
        if router < self.terminals {
            "terminal-router".into()
        } else if downstream < self.terminals {
            "router-terminal".into()
        } else {
            let qq = self.q * self.q;
            let side = |id: u32| (id - self.terminals) / qq;
            if side(router) == side(downstream) { "intra".into() } else { "inter".into() }
        }
    }
}

#[cfg(test)]
mod tests;
