//! The k-ary n-tree (folded Clos) fat-tree: router numbering, wiring, and the minimal steps
//! that `up_down` and `up_down_random` routing offer.
//!
//! The network is the one of F. Petrini and M. Vanneschi, "k-ary n-trees: high performance
//! networks for massively parallel architectures", Proc. IPPS 1997: `N = k^n` terminals and
//! `n` levels of `k^(n-1)` switches; every switch has `k` links down and (below the top level)
//! `k` links up, so each level has full bisection bandwidth.
//!
//! With `u < k` links up per switch (`up_links_per_switch`) the tree is tapered: the extended
//! generalised fat-tree XGFT(n; k, ..., k; 1, u, ..., u) of Öhring, Ibel, Das and Kumar
//! (IPPS 1995), with `k^(n-l) u^(l-1)` switches at level `l`. What follows is written for the
//! full tree (`u = k`); the tapered wiring generalises it (below, "Tapered trees"), and the
//! routes, the zero-load latency and the deadlock argument hold unchanged with `u` up ports.
//!
//! # Routers and ports
//!
//! As on the butterfly fat-tree (`network::fat_tree`), terminals and switches are all routers
//! of the engine. Router ids `0..N` are the terminals, so the traffic endpoints keep ids `0..N`
//! (`Geometry::nodes` is `N`); the switches of level `l = 1..=n` follow level by level, switch
//! `(l, w)` with its word `w = 0..k^(n-1)` at id `N + (l - 1) k^(n-1) + w`. Every router has
//! `2k` output ports: `0..k` are the up ports `up_j`, `k..2k` the down ports `down_i`
//! (`k + i`). A terminal's one link, to its switch, leaves through its port 0 (`up_0`); its
//! other ports and the up ports of the level-`n` switches have no link. Every link is a pair of
//! channels, one per direction, each with V virtual channels.
//!
//! # Wiring
//!
//! Write a terminal `t` in base `k` as digits `t_0` (least significant) to `t_(n-1)`, and a
//! word `w` as digits `w_0..w_(n-2)`. Then (Petrini and Vanneschi's definition, with the levels
//! counted from the terminals up):
//! - terminal `t` is connected to `down_(t_0)` of the level-1 switch with word `floor(t / k)`;
//! - `up_j` of switch `(l, w)`, `l < n`, is connected to `down_(w_(l-1))` of switch
//!   `(l + 1, w')`, where `w'` is `w` with digit `l - 1` replaced by `j`.
//!
//! Two switches of adjacent levels are therefore connected exactly when their words differ at
//! most in digit `l - 1`, and `down_i` of `(l + 1, w')` leads to `(l, w')` with digit `l - 1`
//! set to `i`.
//!
//! # Tapered trees
//!
//! A level-`l` switch's word is `w = b + u^(l-1) a`: `a` the block of `k^l` terminals below
//! it, `b` (digits `b_2 .. b_l` in base `u`) the up ports taken above the leaves. Up port `j`
//! of `(l, w)` leads to `(l + 1, b + j u^(l-1) + u^l floor(a / k))`, reached back through
//! `down_(a mod k)`; so a level-`l` and a level-`(l + 1)` switch are linked exactly when
//! their labels `(a_(l+1) .. a_n; b_2 .. b_l)` agree but for digit `l + 1`, Öhring et al.'s
//! definition. With `u = k`, `w = b + k^(l-1) a` is the word above and the wiring is the same
//! to the port. Ports are `u` up, then `k` down; the block below `(l, w)` is `a`.
//!
//! # Subtrees and routes
//!
//! Going down, switch `(l, w)` reaches exactly the `k^l` terminals of block
//! `b = floor(w / k^(l-1))`, terminals `b k^l ..= (b + 1) k^l - 1` (no down step changes a
//! word digit `>= l - 1`, and below level `l` every digit `< l - 1` can be set), and its
//! `down_i` leads to the terminals whose digit `t_(l-1)` is `i`. A test checks the blocks
//! against the wiring for every switch. So a message from terminal `s` to terminal `d != s`
//! climbs to the level of their nearest common ancestors, the smallest `h >= 1` with
//! `floor(s / k^h) = floor(d / k^h)`, and then descends: a minimal path has `2h` links, `h` up
//! (terminal to level 1, then `h - 1` switch links) and `h` down. Climbing, the first link has
//! no alternative and each of the next `h - 1` may take any of the `k` up ports (each keeps the
//! path minimal: every switch of level `h` above the source's level-1 switch is a nearest
//! common ancestor); descending, the down port at level `l` is `d_(l-1)`, so descent is
//! deterministic. [`KaryNTree::minimal_steps`] lists exactly these steps.
//!
//! # Zero-load latency
//!
//! With no contention a message of `M` flits from `s` to `d` takes `2h` hops; the engine's
//! zero-load latency for a route of `H` hops is the one of every other family (the tests
//! compare it with the torus formula through `sim::tests`), `H + M` with no router delay.
//!
//! # Routing and deadlock freedom
//!
//! `up_down` offers every VC of every minimal step (the engine picks uniformly among the free
//! VCs of all up ports: an adaptive choice that follows the free links), `up_down_random` one
//! up port per hop, drawn per message (a hash of the message's draw and the router id, so a
//! message's route is fixed when it is generated and does not change when its header waits).
//! Every route is a climb followed by a descent; a channel dependency goes from an up channel
//! to an up channel one level higher, from an up channel to a down channel, or from a down
//! channel to a down channel one level lower. Order the channels as (up channels by level
//! ascending, then down channels by level descending): every dependency goes forward, so the
//! channel-dependency graph is acyclic with any V and no escape channels are needed
//! (`tests::channel_dependencies_are_acyclic` builds the graph on small trees).

use super::super::SimError;
use super::Network;
use super::hop::{NO_LINK, Step};

/// A built k-ary n-tree, full or tapered: its sizes.
#[derive(Clone, Debug)]
pub(crate) struct KaryNTree {
    /// k: down ports per switch.
    k: u32,
    /// u: up ports per switch below the top level (`k` for the full tree).
    u: u32,
    /// n: levels of switches.
    n: u32,
    /// Terminals N = k^n.
    terminals: u32,
    /// The first switch id of each level `l = 1..=n` at index `l - 1`, and one past the last
    /// switch at index `n`.
    level_start: Vec<u32>,
    /// Switches per level of the full tree (`u = k`), `k^(n-1)`; 0 for a tapered one.
    full_level: u32,
}

impl KaryNTree {
    /// Checks `k >= 2`, `n >= 1`, `1 <= u <= k` and the size, and returns the tree.
    pub(crate) fn new(k: u32, n: u32, u: u32) -> Result<KaryNTree, SimError> {
        if k < 2 || n < 1 {
            return Err(SimError(format!(
                "the k-ary n-tree needs radix k >= 2 and dimensions (levels) n >= 1, got k = {k}, \
                 n = {n}"
            )));
        }
        if !(1..=k).contains(&u) {
            return Err(SimError(format!(
                "the k-ary n-tree needs 1 <= up_links_per_switch <= radix (k = {k} links down, \
                 u up: k for the full tree, fewer to taper it), got u = {u}"
            )));
        }
        let too_large = || {
            SimError(format!(
                "the {k}-ary {n}-tree with {u} up links per switch is too large for the \
                 simulator (32-bit router ids)"
            ))
        };
        let terminals = k.checked_pow(n).ok_or_else(too_large)?;
        // Level l has k^(n-l) u^(l-1) switches.
        let mut level_start = Vec::with_capacity(n as usize + 1);
        let mut next = u64::from(terminals);
        for l in 1..=n {
            level_start.push(u32::try_from(next).map_err(|_| too_large())?);
            let count = u64::from(k).pow(n - l) * u64::from(u).pow(l - 1);
            next += count;
        }
        level_start.push(u32::try_from(next).map_err(|_| too_large())?);
        if next.saturating_mul(u64::from(k + u)) >= u64::from(u32::MAX) {
            return Err(too_large());
        }
        let full_level = if u == k { terminals / k } else { 0 };
        Ok(KaryNTree { k, u, n, terminals, level_start, full_level })
    }

    /// Whether a port of a switch leads up (ports `0..u`).
    #[inline]
    pub(crate) fn is_up(&self, port: u32) -> bool {
        port < self.u
    }

    /// Routers: the terminals plus every level's switches.
    pub(crate) fn routers(&self) -> u32 {
        self.level_start[self.n as usize]
    }

    /// The id of switch `(level, word)`, `level` in `1..=n`.
    #[inline]
    fn switch(&self, level: u32, word: u32) -> u32 {
        self.level_start[level as usize - 1] + word
    }

    /// `(level, word)` of a router (level 0 and the terminal's id for a terminal).
    #[inline]
    pub(crate) fn position(&self, router: u32) -> (u32, u32) {
        if router < self.terminals {
            return (0, router);
        }
        let offset = router - self.terminals;
        if let Some(level) = offset.checked_div(self.full_level) {
            return (level + 1, offset % self.full_level);
        }
        // Levels are few (n <= 31): a scan from the top.
        let mut l = self.n;
        while self.level_start[l as usize - 1] > router {
            l -= 1;
        }
        (l, router - self.level_start[l as usize - 1])
    }

    /// `d_mod_k`'s up port from switch `cur` (climbing) towards terminal `dest`: at level `l`,
    /// `floor(dest / u^(l-1)) mod u`, the D-mod-k rule of the extended generalised fat-tree
    /// (`floor(d / (w_1 ... w_l)) mod w_(l+1)` with `w_1 = 1` and `w_j = u`; Zahavi et al.),
    /// which on the full tree (`u = k`) is the destination's base-k digit `l - 1`. Every
    /// message to `dest` climbs through the same switches, so the route depends on the
    /// destination alone.
    #[inline]
    pub(crate) fn d_mod_k(&self, cur: u32, dest: u32) -> u32 {
        let (level, _) = self.position(cur);
        (dest / self.u.pow(level.saturating_sub(1))) % self.u
    }

    /// `k^e`.
    #[inline]
    fn power(&self, e: u32) -> u32 {
        self.k.pow(e)
    }
}

impl Network for KaryNTree {
    /// `u + k`: up ports `0..u`, down ports `u..u + k`.
    fn ports(&self) -> u32 {
        self.u + self.k
    }

    /// The downstream router of each channel `router * ports + port`, `NO_LINK` where none.
    fn neighbors(&self) -> Vec<u32> {
        let (k, u, ports) = (self.k, self.u, self.ports());
        let mut neighbor = vec![NO_LINK; self.routers() as usize * ports as usize];
        let mut link = |from: u32, port: u32, to: u32| {
            let slot = &mut neighbor[(from * ports + port) as usize];
            debug_assert_eq!(*slot, NO_LINK, "port {port} of router {from} wired twice");
            *slot = to;
        };
        for t in 0..self.terminals {
            let leaf = self.switch(1, t / k);
            link(t, 0, leaf);
            link(leaf, u + t % k, t);
        }
        for l in 1..self.n {
            // A level-l word is `b + u^(l-1) a`: `b` the up ports taken above the leaves,
            // `a` the block of terminals below.
            let lower = u.pow(l - 1);
            let count = self.level_start[l as usize] - self.level_start[l as usize - 1];
            for w in 0..count {
                let (b, a) = (w % lower, w / lower);
                let child = self.switch(l, w);
                for j in 0..u {
                    let parent = self.switch(l + 1, b + j * lower + lower * u * (a / k));
                    link(child, j, parent);
                    link(parent, u + a % k, child);
                }
            }
        }
        neighbor
    }

    /// Calls `visit` with every minimal step from router `cur` towards terminal `dest` (every
    /// up port while climbing, except from a terminal; the one down port while descending)
    /// and returns the remaining distance in links.
    #[inline]
    fn minimal_steps(&self, cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
        let (l, word) = self.position(cur);
        // The block of terminals below `cur`, and the level of the nearest common ancestors:
        // each level up divides the block by k.
        let mut block = if l == 0 { word } else { word / self.u.pow(l - 1) };
        let mut h = l;
        let mut scale = self.power(l);
        while block != dest / scale {
            block /= self.k;
            scale *= self.k;
            h += 1;
        }
        if h == l {
            if l > 0 {
                let digit = (dest / self.power(l - 1)) % self.k;
                visit(Step { port: self.u + digit, wraps: false });
            }
            return l;
        }
        if l == 0 {
            visit(Step { port: 0, wraps: false });
        } else {
            for port in 0..self.u {
                visit(Step { port, wraps: false });
            }
        }
        2 * h - l
    }

    /// Colour of a bipartite labelling: the level's parity (links join adjacent levels).
    #[inline]
    fn parity(&self, router: u32) -> u32 {
        self.position(router).0 % 2
    }

    /// `T(t)` for a terminal, `S(l,w)` for a switch.
    fn describe(&self, router: u32) -> String {
        match self.position(router) {
            (0, t) => format!("T({t})"),
            (l, w) => format!("S({l},{w})"),
        }
    }

    /// `up_j` or `down_i` (a terminal's port 0 is its link to its switch).
    fn describe_port(&self, port: u32) -> String {
        if self.is_up(port) { format!("up_{port}") } else { format!("down_{}", port - self.u) }
    }

    /// The levels the link joins and its direction, `up 0-1`, `down 2-1` (level 0: the
    /// terminals).
    fn link_class(&self, router: u32, port: u32, _downstream: u32) -> String {
        let level = self.position(router).0;
        if self.is_up(port) {
            format!("up {level}-{}", level + 1)
        } else {
            format!("down {level}-{}", level.saturating_sub(1))
        }
    }
}

#[cfg(test)]
mod taper_tests;
#[cfg(test)]
mod tests;
