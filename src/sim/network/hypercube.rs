//! The binary n-cube: node `i`'s port `d` leads to `i` with bit `d` flipped; the minimal steps
//! flip the differing bits, and the dimension-order (e-cube) step the lowest of them.

use super::super::topology::Step;

/// The node that `port` of `node` leads to.
pub(crate) fn neighbor(node: u32, port: u32) -> u32 {
    node ^ (1 << port)
}

/// Calls `visit` with every minimal step from `cur` towards `dest` (one per differing bit)
/// and returns the distance in hops.
#[inline]
pub(crate) fn minimal_steps(cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
    let mut distance = 0;
    let mut diff = cur ^ dest;
    while diff != 0 {
        visit(Step { port: diff.trailing_zeros(), wraps: false });
        diff &= diff - 1;
        distance += 1;
    }
    distance
}

/// The e-cube step: the lowest differing bit, and that dimension. `None` when `cur == dest`.
#[inline]
pub(crate) fn dimension_order_step(cur: u32, dest: u32) -> Option<(Step, u32)> {
    let diff = cur ^ dest;
    let d = diff.trailing_zeros();
    (diff != 0).then_some((Step { port: d, wraps: false }, d))
}

/// Colour of the bipartite labelling: the parity of the number of set bits.
#[inline]
pub(crate) fn parity(node: u32) -> u32 {
    node.count_ones() % 2
}

/// The dimension of a port, e.g. `x3`.
pub(crate) fn describe_port(port: u32) -> String {
    format!("x{port}")
}
