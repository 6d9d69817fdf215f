//! The butterfly fat-tree: router numbering, the parent/child wiring and the minimal steps
//! that `up_down` routing offers.
//!
//! The network is the one of R. I. Greenberg and L. Guan, "An improved analytical model for
//! wormhole routed networks with application to butterfly fat-trees", Proc. ICPP 1997,
//! pp. 44-48, Section 3.1, with `N = 4^n` processors.
//!
//! # Routers and ports
//!
//! Processors and switches are all routers of the engine (a router is what `topology` calls a
//! node: it owns output ports and the buffers of the channels that enter it). Router ids
//! `0..N` are the processors `P(0, a)`, so the traffic endpoints keep ids `0..N` as on every
//! other topology (`Geometry::nodes` is `N`); the switches `S(l, a)` follow level by level:
//! level `l = 1..=n` has `N / 2^(l+1)` switches with addresses `a = 0..N / 2^(l+1)`.
//! Every router has [`PORTS`] = 6 output ports named as in the paper: 0 = `parent_0`,
//! 1 = `parent_1`, `2 + i` = `child_i`. A processor's one link, to its level-1 switch, leaves
//! through its port 0; its other ports and the parent ports of the level-`n` switches have no
//! link. Every link is a pair of channels, one per direction, each with V virtual channels.
//!
//! # Wiring (Sec. 3.1, verbatim)
//!
//! - `P(0, a)` is connected to `child_{a mod 4}` of `S(1, floor(a / 4))`;
//! - `parent_0` of `S(l, a)` is connected to `child_i` of
//!   `S(l + 1, floor(a / 2^(l+1)) 2^l + a mod 2^l)`, and `parent_1` to `child_i` of
//!   `S(l + 1, floor(a / 2^(l+1)) 2^l + (a + 2^(l-1)) mod 2^l)`, where
//!   `i = floor((a mod 2^(l+1)) / 2^(l-1))`.
//!
//! # Subtrees and routes
//!
//! Going down, `S(l, a)` reaches exactly the `4^l` processors of block `b = floor(a / 2^(l-1))`,
//! processors `b 4^l ..= (b + 1) 4^l - 1`, and its `child_i` leads to the processors whose
//! base-4 digit `l - 1` is `i` (both parents of `S(l, a)` have block `floor(b / 4)`: the two
//! parent formulas differ only in `a mod 2^l`). A test checks the blocks against the wiring for
//! every switch. Hence a message from `s` to `d != s` must climb to the level of their least
//! common ancestors, the smallest `h` with `floor(s / 4^h) = floor(d / 4^h)`, and may then
//! descend: a minimal path has `2h` links, `h` up and `h` down. Climbing, the first link
//! (`P -> S(1)`) has no alternative and each of the next `h - 1` offers both parent links,
//! either of which keeps the path minimal; descending, the child port is the destination's
//! base-4 digit `l - 1`, so down routes are deterministic. [`FatTree::minimal_steps`] lists
//! exactly these steps, and `up_down` routing offers every VC of them (see `routing`).

use super::super::SimError;
use super::Network;
use super::hop::{NO_LINK, Step};

/// Output ports per router: `parent_0`, `parent_1`, `child_0..child_3`.
pub(crate) const PORTS: u32 = 6;
/// Port of `child_0`; `child_i` is `CHILD + i`.
const CHILD: u32 = 2;

/// The number of levels `n` of a butterfly fat-tree with `processors = 4^n`, `n >= 1`.
pub(crate) fn levels(processors: u32) -> Result<u32, SimError> {
    let power_of_4 = processors.is_power_of_two() && processors.trailing_zeros().is_multiple_of(2);
    if processors < 4 || !power_of_4 {
        return Err(SimError(format!(
            "the butterfly fat-tree needs N = 4^n processors with n >= 1 (4, 16, 64, 256, \
             1024, ...), got {processors}"
        )));
    }
    Ok(processors.trailing_zeros() / 2)
}

/// Routers (processors plus switches) of a fat-tree with `processors = 4^n`.
pub(crate) fn routers(processors: u32) -> u64 {
    let n = processors.trailing_zeros() / 2;
    u64::from(processors) + (1..=n).map(|l| u64::from(processors >> (l + 1))).sum::<u64>()
}

/// The switch and child port that `parent_p` of `S(level, address)` is connected to, by the
/// formulas of Sec. 3.1 (`level >= 1`, `p` in 0..2): returns `(address at level + 1, i)`.
pub(crate) fn parent(level: u32, address: u32, p: u32) -> (u32, u32) {
    let half = 1u32 << (level - 1); // 2^(l-1)
    let full = 1u32 << level; // 2^l
    let group = (address >> (level + 1)) << level; // floor(a / 2^(l+1)) 2^l
    let within = if p == 0 { address % full } else { (address + half) % full };
    let i = (address % (full << 1)) / half;
    (group + within, i)
}

/// A built fat-tree: per-router level and block, plus the first id of each level.
#[derive(Clone, Debug)]
pub(crate) struct FatTree {
    /// First router id of level `l`, `l = 0..=n + 1` (the last entry is the router count).
    first: Vec<u32>,
    /// Level of each router (0 for processors).
    level: Vec<u8>,
    /// Block of processors each router reaches going down (at level 0: the processor).
    block: Vec<u32>,
}

impl FatTree {
    /// Builds the tree for `processors = 4^n` (checked by [`levels`]).
    pub(crate) fn new(processors: u32) -> Result<FatTree, SimError> {
        let n = levels(processors)?;
        let mut first = vec![0, processors];
        for l in 1..=n {
            first.push(first[l as usize] + (processors >> (l + 1)));
        }
        let total = first[n as usize + 1];
        let mut level = Vec::with_capacity(total as usize);
        let mut block = Vec::with_capacity(total as usize);
        for l in 0..=n {
            for a in 0..first[l as usize + 1] - first[l as usize] {
                level.push(l as u8);
                block.push(if l == 0 { a } else { a >> (l - 1) });
            }
        }
        Ok(FatTree { first, level, block })
    }

    /// The number of processors N.
    fn processors(&self) -> u32 {
        self.first[1]
    }

    /// The number of switch levels n.
    fn top(&self) -> u32 {
        self.first.len() as u32 - 2
    }

    /// The router id of `S(level, address)` (`P(0, address)` at level 0).
    #[inline]
    pub(crate) fn router(&self, level: u32, address: u32) -> u32 {
        self.first[level as usize] + address
    }

    /// `(level, address)` of a router.
    pub(crate) fn position(&self, router: u32) -> (u32, u32) {
        let level = u32::from(self.level[router as usize]);
        (level, router - self.first[level as usize])
    }

    /// The number of levels `n`.
    #[cfg(test)]
    pub(crate) fn levels(&self) -> u32 {
        self.top()
    }
}

impl Network for FatTree {
    fn ports(&self) -> u32 {
        PORTS
    }

    /// The downstream router of each channel `router * PORTS + port`, `NO_LINK` where none,
    /// wired by the formulas of Sec. 3.1.
    fn neighbors(&self) -> Vec<u32> {
        let (processors, n) = (self.processors(), self.top());
        let total = self.first[n as usize + 1];
        let mut neighbor = vec![NO_LINK; total as usize * PORTS as usize];
        let mut link = |from: u32, port: u32, to: u32| {
            let slot = &mut neighbor[(from * PORTS + port) as usize];
            debug_assert_eq!(*slot, NO_LINK, "port {port} of router {from} wired twice");
            *slot = to;
        };
        for a in 0..processors {
            let switch = self.router(1, a / 4);
            link(a, 0, switch);
            link(switch, CHILD + a % 4, a);
        }
        for l in 1..n {
            for a in 0..processors >> (l + 1) {
                let child = self.router(l, a);
                for p in 0..2 {
                    let (address, i) = parent(l, a, p);
                    let up = self.router(l + 1, address);
                    link(child, p, up);
                    link(up, CHILD + i, child);
                }
            }
        }
        neighbor
    }

    /// Calls `visit` with every minimal step from router `cur` towards processor `dest`
    /// (both parent ports while climbing, except from a processor; the one child port while
    /// descending) and returns the remaining distance in links.
    #[inline]
    fn minimal_steps(&self, cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
        let l = u32::from(self.level[cur as usize]);
        let mut block = self.block[cur as usize];
        // The level of the lowest common ancestors: each level up divides the block by 4.
        let mut h = l;
        while block != dest >> (2 * h) {
            block >>= 2;
            h += 1;
        }
        if h == l {
            if l > 0 {
                visit(Step { port: CHILD + ((dest >> (2 * (l - 1))) & 3), wraps: false });
            }
            return l;
        }
        visit(Step { port: 0, wraps: false });
        if l > 0 {
            visit(Step { port: 1, wraps: false });
        }
        2 * h - l
    }

    /// Colour of a bipartite labelling: the level's parity (links join adjacent levels).
    #[inline]
    fn parity(&self, router: u32) -> u32 {
        u32::from(self.level[router as usize]) % 2
    }

    /// `P(a)` for a processor, `S(l,a)` for a switch.
    fn describe(&self, router: u32) -> String {
        match self.position(router) {
            (0, a) => format!("P({a})"),
            (l, a) => format!("S({l},{a})"),
        }
    }

    /// The paper's port names (a processor's port 0 is its link to its switch).
    fn describe_port(&self, port: u32) -> String {
        match port {
            0 | 1 => format!("parent_{port}"),
            _ => format!("child_{}", port - CHILD),
        }
    }

    /// The levels the link joins and its direction, `up 0-1`, `down 2-1`.
    fn link_class(&self, router: u32, port: u32, _downstream: u32) -> String {
        let level = self.position(router).0;
        if port < 2 {
            format!("up {level}-{}", level + 1)
        } else {
            format!("down {level}-{}", level.saturating_sub(1))
        }
    }
}

#[cfg(test)]
mod tests;
