//! The binary n-cube: node `i`'s port `d` leads to `i` with bit `d` flipped; the minimal steps
//! flip the differing bits, and the dimension-order (e-cube) step the lowest of them.

use super::Network;
use super::hop::Step;

/// A binary n-cube of `2^dims` nodes.
#[derive(Clone, Debug)]
pub(crate) struct Hypercube {
    pub(crate) dims: u32,
}

impl Network for Hypercube {
    fn ports(&self) -> u32 {
        self.dims
    }

    /// Port `d` of `node` leads to `node` with bit `d` flipped.
    fn neighbors(&self) -> Vec<u32> {
        let nodes = 1u32 << self.dims;
        let mut neighbor = Vec::with_capacity(nodes as usize * self.dims as usize);
        for node in 0..nodes {
            for port in 0..self.dims {
                neighbor.push(node ^ (1 << port));
            }
        }
        neighbor
    }

    /// One step per differing bit.
    #[inline]
    fn minimal_steps(&self, cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
        let mut distance = 0;
        let mut diff = cur ^ dest;
        while diff != 0 {
            visit(Step { port: diff.trailing_zeros(), wraps: false });
            diff &= diff - 1;
            distance += 1;
        }
        distance
    }

    /// The e-cube step: the lowest differing bit, and that dimension.
    #[inline]
    fn dimension_order_step(&self, cur: u32, dest: u32, _ties: u32) -> Option<(Step, u32)> {
        let diff = cur ^ dest;
        let d = diff.trailing_zeros();
        (diff != 0).then_some((Step { port: d, wraps: false }, d))
    }

    /// The parity of the number of set bits.
    #[inline]
    fn parity(&self, node: u32) -> u32 {
        node.count_ones() % 2
    }

    /// The bits as coordinates, e.g. `(1,0,1)` (bit 0 first).
    fn describe(&self, node: u32) -> String {
        let bits: Vec<String> = (0..self.dims).map(|d| ((node >> d) & 1).to_string()).collect();
        format!("({})", bits.join(","))
    }

    /// The dimension of a port, e.g. `x3`.
    fn describe_port(&self, port: u32) -> String {
        format!("x{port}")
    }

    /// The dimension, `x0`, `x1`, ...
    fn link_class(&self, _router: u32, port: u32, _downstream: u32) -> String {
        format!("x{port}")
    }
}
