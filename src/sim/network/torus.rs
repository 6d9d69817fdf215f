//! k-ary n-cubes (tori) and k-ary n-meshes: the neighbour of each port, the minimal steps
//! and the dimension-order step, on the mixed-radix numbering of `digits`.
//!
//! Nodes are numbered in mixed radix, dimension 0 varying fastest, so a coordinate is a
//! division (`Digits::coord`), never stored per message. Every node is a router with
//! `2 n` ports: `2 d` leaves in the + direction of dimension `d`, `2 d + 1` in the -
//! direction. A torus wraps around (the + neighbour of coordinate `k - 1` is 0); a mesh has no
//! link at its borders (`NO_LINK`). At distance exactly `k / 2` on a torus both directions are
//! minimal; `Step::wraps` says whether the rest of the route in that dimension crosses the
//! wrap-around link, which the dateline classes of `routing` read.

use super::Network;
use super::digits::Digits;
use super::hop::{NO_LINK, Step};

/// A k-ary n-cube: its digits (k = `radix`, n = `dims`).
#[derive(Clone, Debug)]
pub(crate) struct Torus(pub(crate) Digits);

/// A k-ary n-mesh: its digits (k = `radix`, n = `dims`).
#[derive(Clone, Debug)]
pub(crate) struct Mesh(pub(crate) Digits);

/// The node that `port` of `node` leads to, `NO_LINK` at a mesh border (`wrap` false).
fn neighbor(g: &Digits, wrap: bool, node: u32, port: u32) -> u32 {
    let k = g.radix;
    let d = port / 2;
    let stride = g.stride(d);
    let c = g.coord(node, d);
    let plus = port.is_multiple_of(2);
    let target = match (wrap, plus) {
        (false, true) if c + 1 == k => return NO_LINK,
        (false, false) if c == 0 => return NO_LINK,
        (_, true) => (c + 1) % k,
        (_, false) => (c + k - 1) % k,
    };
    node - c * stride + target * stride
}

/// Hops from coordinate `c` to `t` in the + direction around a ring of `k` (both below `k`):
/// `(t + k - c) % k` without the division.
#[inline(always)]
fn forward(c: u32, t: u32, k: u32) -> u32 {
    if t >= c { t - c } else { t + k - c }
}

/// The neighbour table of the `k^n` nodes with `2 n` ports each.
fn neighbors(g: &Digits, wrap: bool) -> Vec<u32> {
    let (nodes, ports) = (g.radix.pow(g.dims), 2 * g.dims);
    let mut neighbor = Vec::with_capacity(nodes as usize * ports as usize);
    for node in 0..nodes {
        for port in 0..ports {
            neighbor.push(self::neighbor(g, wrap, node, port));
        }
    }
    neighbor
}

/// Checkerboard colour: the parity of the coordinate sum.
#[inline]
fn parity(g: &Digits, node: u32) -> u32 {
    (0..g.dims).map(|d| g.coord(node, d)).sum::<u32>() % 2
}

/// Coordinates, e.g. `(3,0)`.
pub(crate) fn describe(g: &Digits, node: u32) -> String {
    let coords: Vec<String> = (0..g.dims).map(|d| g.coord(node, d).to_string()).collect();
    format!("({})", coords.join(","))
}

/// The direction of a port, e.g. `+x0` or `-x1`.
fn describe_port(port: u32) -> String {
    format!("{}x{}", if port.is_multiple_of(2) { '+' } else { '-' }, port / 2)
}

impl Network for Torus {
    fn ports(&self) -> u32 {
        2 * self.0.dims
    }

    fn neighbors(&self) -> Vec<u32> {
        neighbors(&self.0, true)
    }

    /// Every minimal step (both directions of a dimension at distance exactly k/2).
    #[inline]
    fn minimal_steps(&self, cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
        let g = &self.0;
        let k = g.radix;
        let mut distance = 0;
        for d in 0..g.dims {
            let (c, t) = (g.coord(cur, d), g.coord(dest, d));
            if c == t {
                continue;
            }
            let delta = forward(c, t, k);
            if 2 * delta <= k {
                visit(Step { port: 2 * d, wraps: t < c });
            }
            if 2 * delta >= k {
                visit(Step { port: 2 * d + 1, wraps: t > c });
            }
            distance += delta.min(k - delta);
        }
        distance
    }

    /// Lowest differing dimension first; at distance k/2 in dimension `d`, the + direction if
    /// bit `d` of `ties` is set and the - direction otherwise.
    #[inline]
    fn dimension_order_step(&self, cur: u32, dest: u32, ties: u32) -> Option<(Step, u32)> {
        let g = &self.0;
        let k = g.radix;
        for d in 0..g.dims {
            let (c, t) = (g.coord(cur, d), g.coord(dest, d));
            if c == t {
                continue;
            }
            let twice = 2 * forward(c, t, k);
            let plus = twice < k || (twice == k && (ties >> (d % 32)) & 1 == 1);
            let step = if plus {
                Step { port: 2 * d, wraps: t < c }
            } else {
                Step { port: 2 * d + 1, wraps: t > c }
            };
            return Some((step, d));
        }
        None
    }

    #[inline]
    fn parity(&self, node: u32) -> u32 {
        parity(&self.0, node)
    }

    fn describe(&self, node: u32) -> String {
        describe(&self.0, node)
    }

    fn describe_port(&self, port: u32) -> String {
        describe_port(port)
    }

    /// The dimension, `x0`, `x1`, ...
    fn link_class(&self, _router: u32, port: u32, _downstream: u32) -> String {
        format!("x{}", port / 2)
    }
}

impl Network for Mesh {
    fn ports(&self) -> u32 {
        2 * self.0.dims
    }

    fn neighbors(&self) -> Vec<u32> {
        neighbors(&self.0, false)
    }

    #[inline]
    fn minimal_steps(&self, cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
        let g = &self.0;
        let mut distance = 0;
        for d in 0..g.dims {
            let (c, t) = (g.coord(cur, d), g.coord(dest, d));
            if c != t {
                visit(Step { port: 2 * d + u32::from(t < c), wraps: false });
                distance += c.abs_diff(t);
            }
        }
        distance
    }

    /// Lowest differing dimension first.
    #[inline]
    fn dimension_order_step(&self, cur: u32, dest: u32, _ties: u32) -> Option<(Step, u32)> {
        let g = &self.0;
        for d in 0..g.dims {
            let (c, t) = (g.coord(cur, d), g.coord(dest, d));
            if c == t {
                continue;
            }
            return Some((Step { port: 2 * d + u32::from(t < c), wraps: false }, d));
        }
        None
    }

    #[inline]
    fn parity(&self, node: u32) -> u32 {
        parity(&self.0, node)
    }

    fn describe(&self, node: u32) -> String {
        describe(&self.0, node)
    }

    fn describe_port(&self, port: u32) -> String {
        describe_port(port)
    }

    /// The dimension, `x0`, `x1`, ...
    fn link_class(&self, _router: u32, port: u32, _downstream: u32) -> String {
        format!("x{}", port / 2)
    }
}
