//! k-ary n-cubes (tori) and k-ary n-meshes: the neighbour of each port, the minimal steps
//! and the dimension-order step, on the mixed-radix numbering of `topology::Geometry`.
//!
//! Nodes are numbered in mixed radix, dimension 0 varying fastest, so a coordinate is a
//! division (`Geometry::coord`), never stored per message. Every node is a router with
//! `2 n` ports: `2 d` leaves in the + direction of dimension `d`, `2 d + 1` in the -
//! direction. A torus wraps around (the + neighbour of coordinate `k - 1` is 0); a mesh has no
//! link at its borders (`NO_LINK`). At distance exactly `k / 2` on a torus both directions are
//! minimal; `Step::wraps` says whether the rest of the route in that dimension crosses the
//! wrap-around link, which the dateline classes of `routing` read.

use super::super::topology::{Geometry, NO_LINK, Shape, Step};

/// The node that `port` of `node` leads to, `NO_LINK` at a mesh border.
pub(crate) fn neighbor(g: &Geometry, node: u32, port: u32) -> u32 {
    let k = g.radix;
    let d = port / 2;
    let stride = g.stride(d);
    let c = g.coord(node, d);
    let plus = port.is_multiple_of(2);
    let target = match (g.shape, plus) {
        (Shape::Mesh, true) if c + 1 == k => return NO_LINK,
        (Shape::Mesh, false) if c == 0 => return NO_LINK,
        (_, true) => (c + 1) % k,
        (_, false) => (c + k - 1) % k,
    };
    node - c * stride + target * stride
}

/// Calls `visit` with every minimal step from `cur` towards `dest` on a torus (both
/// directions of a dimension at distance exactly k/2) and returns the distance in hops.
#[inline]
pub(crate) fn torus_minimal_steps(
    g: &Geometry,
    cur: u32,
    dest: u32,
    mut visit: impl FnMut(Step),
) -> u32 {
    let k = g.radix;
    let mut distance = 0;
    for d in 0..g.dims {
        let (c, t) = (g.coord(cur, d), g.coord(dest, d));
        if c == t {
            continue;
        }
        let delta = (t + k - c) % k;
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

/// Calls `visit` with every minimal step from `cur` towards `dest` on a mesh and returns the
/// distance in hops.
#[inline]
pub(crate) fn mesh_minimal_steps(
    g: &Geometry,
    cur: u32,
    dest: u32,
    mut visit: impl FnMut(Step),
) -> u32 {
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

/// The dimension-order step of a torus or mesh: lowest differing dimension first; on a torus
/// at distance k/2 in dimension `d`, the + direction if bit `d` of `ties` is set and the -
/// direction otherwise. Also returns the dimension.
#[inline]
pub(crate) fn dimension_order_step(
    g: &Geometry,
    cur: u32,
    dest: u32,
    ties: u32,
) -> Option<(Step, u32)> {
    let k = g.radix;
    for d in 0..g.dims {
        let (c, t) = (g.coord(cur, d), g.coord(dest, d));
        if c == t {
            continue;
        }
        let step = match g.shape {
            Shape::Torus => {
                let twice = 2 * ((t + k - c) % k);
                let plus = twice < k || (twice == k && (ties >> (d % 32)) & 1 == 1);
                if plus {
                    Step { port: 2 * d, wraps: t < c }
                } else {
                    Step { port: 2 * d + 1, wraps: t > c }
                }
            }
            _ => Step { port: 2 * d + u32::from(t < c), wraps: false },
        };
        return Some((step, d));
    }
    None
}

/// Checkerboard colour: the parity of the coordinate sum.
#[inline]
pub(crate) fn parity(g: &Geometry, node: u32) -> u32 {
    (0..g.dims).map(|d| g.coord(node, d)).sum::<u32>() % 2
}

/// Coordinates, e.g. `(3,0)`.
pub(crate) fn describe(g: &Geometry, node: u32) -> String {
    let coords: Vec<String> = (0..g.dims).map(|d| g.coord(node, d).to_string()).collect();
    format!("({})", coords.join(","))
}

/// The direction of a port, e.g. `+x0` or `-x1`.
pub(crate) fn describe_port(port: u32) -> String {
    format!("{}x{}", if port.is_multiple_of(2) { '+' } else { '-' }, port / 2)
}
