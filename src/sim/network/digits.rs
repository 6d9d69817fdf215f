//! Node ids as `n` digits in radix `k` (mixed radix, digit 0 varying fastest): the coordinates
//! of tori, meshes and hypercubes, and the digits that the coordinate traffic patterns
//! (`transpose`, `tornado`, `neighbor`) move on any family numbered that way.
//!
//! A coordinate is a division (by a multiplication, `sim::divisor`), never stored per
//! message.

use super::super::divisor::Divisor;

/// The radix-`k` digits of node ids, with `k^d` precomputed for each digit `d`.
#[derive(Clone, Debug)]
pub(crate) struct Digits {
    /// k.
    pub(crate) radix: u32,
    /// n, the number of digits.
    pub(crate) dims: u32,
    /// k^d for each digit d (saturating at `u32::MAX` beyond the largest id).
    strides: Vec<u32>,
    /// `strides` as divisors.
    stride_divisors: Vec<Divisor>,
    /// `radix` as a divisor.
    radix_divisor: Divisor,
}

impl Digits {
    /// The `dims` digits of radix `radix`.
    pub(crate) fn new(radix: u32, dims: u32) -> Digits {
        let mut strides = Vec::with_capacity(dims as usize);
        let mut stride = 1u32;
        for _ in 0..dims {
            strides.push(stride);
            stride = stride.saturating_mul(radix);
        }
        let stride_divisors = strides.iter().map(|&stride| Divisor::new(stride)).collect();
        Digits { radix, dims, strides, stride_divisors, radix_divisor: Divisor::new(radix) }
    }

    /// Digit `d` of `node` (its coordinate in dimension `d`).
    #[inline]
    pub(crate) fn coord(&self, node: u32, d: u32) -> u32 {
        self.radix_divisor.rem(self.stride_divisors[d as usize].div(node))
    }

    /// `k^d`, the id distance between neighbours in dimension `d`.
    #[inline]
    pub(crate) fn stride(&self, d: u32) -> u32 {
        self.strides[d as usize]
    }
}
