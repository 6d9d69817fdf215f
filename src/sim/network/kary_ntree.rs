//! The k-ary n-tree (folded Clos) fat-tree: router numbering, wiring, and the minimal steps
//! that `up_down` and `up_down_random` routing offer.
//!
//! The network is the one of F. Petrini and M. Vanneschi, "k-ary n-trees: high performance
//! networks for massively parallel architectures", Proc. IPPS 1997: `N = k^n` terminals and
//! `n` levels of `k^(n-1)` switches; every switch has `k` links down and (below the top level)
//! `k` links up, so each level has full bisection bandwidth.
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

/// A built k-ary n-tree: its sizes, plus per-router level and block.
#[derive(Clone, Debug)]
pub(crate) struct KaryNTree {
    /// k: up and down ports per switch.
    k: u32,
    /// n: levels of switches.
    n: u32,
    /// Terminals N = k^n.
    terminals: u32,
    /// Switches per level, k^(n-1).
    per_level: u32,
}

impl KaryNTree {
    /// Checks `k >= 2`, `n >= 1` and the size, and returns the tree.
    pub(crate) fn new(k: u32, n: u32) -> Result<KaryNTree, SimError> {
        if k < 2 || n < 1 {
            return Err(SimError(format!(
                "the k-ary n-tree needs radix k >= 2 and dimensions (levels) n >= 1, got k = {k}, \
                 n = {n}"
            )));
        }
        let too_large = || {
            SimError(format!(
                "the {k}-ary {n}-tree is too large for the simulator (32-bit router ids)"
            ))
        };
        let terminals = k.checked_pow(n).ok_or_else(too_large)?;
        let per_level = terminals / k;
        let routers = u64::from(terminals) + u64::from(n) * u64::from(per_level);
        if routers.saturating_mul(2 * u64::from(k)) >= u64::from(u32::MAX) {
            return Err(too_large());
        }
        Ok(KaryNTree { k, n, terminals, per_level })
    }

    /// Whether a port of a switch leads up (ports `0..k`).
    #[inline]
    pub(crate) fn is_up(&self, port: u32) -> bool {
        port < self.k
    }

    /// Routers: the terminals plus `n k^(n-1)` switches.
    pub(crate) fn routers(&self) -> u32 {
        self.terminals + self.n * self.per_level
    }

    /// The id of switch `(level, word)`, `level` in `1..=n`.
    #[inline]
    fn switch(&self, level: u32, word: u32) -> u32 {
        self.terminals + (level - 1) * self.per_level + word
    }

    /// `(level, word)` of a router (level 0 and the terminal's id for a terminal).
    #[inline]
    pub(crate) fn position(&self, router: u32) -> (u32, u32) {
        if router < self.terminals {
            return (0, router);
        }
        let offset = router - self.terminals;
        (offset / self.per_level + 1, offset % self.per_level)
    }

    /// `d_mod_k`'s up port from switch `cur` (climbing) towards terminal `dest`: the
    /// destination's base-k digit of the switch's level, `floor(dest / k^(l-1)) mod k` at
    /// level `l`. Every message to `dest` climbs through the same switches, so the route
    /// depends on the destination alone (D-mod-k of Zahavi et al.).
    #[inline]
    pub(crate) fn d_mod_k(&self, cur: u32, dest: u32) -> u32 {
        let (level, _) = self.position(cur);
        (dest / self.power(level.saturating_sub(1))) % self.k
    }

    /// `k^e`.
    #[inline]
    fn power(&self, e: u32) -> u32 {
        self.k.pow(e)
    }
}

impl Network for KaryNTree {
    /// `2k`.
    fn ports(&self) -> u32 {
        2 * self.k
    }

    /// The downstream router of each channel `router * ports + port`, `NO_LINK` where none.
    fn neighbors(&self) -> Vec<u32> {
        let (k, ports) = (self.k, self.ports());
        let mut neighbor = vec![NO_LINK; self.routers() as usize * ports as usize];
        let mut link = |from: u32, port: u32, to: u32| {
            let slot = &mut neighbor[(from * ports + port) as usize];
            debug_assert_eq!(*slot, NO_LINK, "port {port} of router {from} wired twice");
            *slot = to;
        };
        for t in 0..self.terminals {
            let leaf = self.switch(1, t / k);
            link(t, 0, leaf);
            link(leaf, k + t % k, t);
        }
        for l in 1..self.n {
            let stride = self.power(l - 1);
            for w in 0..self.per_level {
                let digit = (w / stride) % k;
                let child = self.switch(l, w);
                for j in 0..k {
                    let parent = self.switch(l + 1, w - digit * stride + j * stride);
                    link(child, j, parent);
                    link(parent, k + digit, child);
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
        let mut block = if l == 0 { word } else { word / self.power(l - 1) };
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
                visit(Step { port: self.k + digit, wraps: false });
            }
            return l;
        }
        if l == 0 {
            visit(Step { port: 0, wraps: false });
        } else {
            for port in 0..self.k {
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
        if self.is_up(port) { format!("up_{port}") } else { format!("down_{}", port - self.k) }
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
mod tests;
