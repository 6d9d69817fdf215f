//! Cache hints for the large networks' passes over memory: a hint asks the core to start
//! loading the line that holds an element of a slice, without waiting for it, and a cursor
//! running ahead of a walk says which lines the walk will want next.
//!
//! A network of at least 2^20 VCs (`Engine::prefetching`; the 512 x 512 torus and up) holds
//! far more state than the caches, and each flit-hop reads a few counters at unrelated
//! addresses (its channel's, its upstream buffer's a row of the torus away, its message's).
//! The out-of-order core overlaps only the misses within reach of its window, and the walk's
//! chain of dependent loads (bitmap word, channel, VC, upstream count) keeps that reach short.
//! Each pass of a cycle therefore hints, [`FAR`] steps ahead, the lines it can name from the
//! step alone, and [`NEAR`] steps ahead, the lines named by values the far hint fetched (a
//! VC's upstream buffer, a message's record). A hint changes no value, so no result moves.
//! Routing hints its headers' lines on every network that walks the bitmap (2^15 VCs and up,
//! `Engine::hints_routing`): its misses are scattered even where the rest stays cached.
//!
//! This module is the crate's one exception to `#![forbid(unsafe_code)]`: `_mm_prefetch` is
//! an `unsafe` intrinsic, and no safe operation starts a load without waiting for it (a plain
//! read that misses holds the core's retirement until its line arrives: made of
//! `black_box(slice[i])`, the hints made the 512 x 512 torus 37% slower than none). With the
//! hints the 1024 x 1024 torus runs 17-22% faster and the 512 x 512 24% (docs/performance.md,
//! "Prefetching").
#![allow(unsafe_code)]

/// How many steps ahead of a walk its far hints run (lines named by the step itself).
pub(crate) const FAR: usize = 32;
/// How many steps ahead its near hints run (lines named by values at the far hint's lines).
pub(crate) const NEAR: usize = 16;

/// Starts loading the cache line of `slice[index]`. Never faults and changes no value: an
/// index out of bounds only wastes the hint.
#[inline(always)]
pub(crate) fn prefetch<T>(slice: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let address = slice.as_ptr().wrapping_add(index).cast::<i8>();
        // SAFETY: PREFETCHT0 is a hint. It never faults, whatever the address (Intel SDM
        // vol. 2B, PREFETCHh: "a prefetch to an invalid address is ignored"), and writes
        // nothing that safe code can observe. The address is computed with `wrapping_add`,
        // so no out-of-bounds pointer arithmetic happens either.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, index);
}

/// A cursor over the set bits of a bitmap (bit `c % 64` of word `c / 64` for item `c`), run
/// ahead of a walk of the same bitmap.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ahead {
    /// The next word to load.
    next: usize,
    /// The set bits of the current word not yet handed out.
    bits: u64,
}

impl Ahead {
    /// A cursor `steps` set bits into `words`: the walk's lead.
    #[inline(always)]
    pub(crate) fn after(words: &[u64], steps: usize) -> Ahead {
        let mut cursor = Ahead::default();
        for _ in 0..steps {
            cursor.advance(words);
        }
        cursor
    }

    /// The next set bit's item, or `None` past the bitmap's end.
    #[inline(always)]
    pub(crate) fn advance(&mut self, words: &[u64]) -> Option<u32> {
        while self.bits == 0 {
            self.bits = *words.get(self.next)?;
            self.next += 1;
        }
        let item = ((self.next - 1) as u32) << 6 | self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_hands_out_every_set_bit_in_order() {
        let words = [0b1010_u64, 0, 1 << 63 | 1];
        let mut cursor = Ahead::default();
        let items: Vec<u32> = std::iter::from_fn(|| cursor.advance(&words)).collect();
        assert_eq!(items, vec![1, 3, 128, 191]);
        assert_eq!(cursor.advance(&words), None);
        let mut ahead = Ahead::after(&words, 2);
        assert_eq!(ahead.advance(&words), Some(128));
        assert_eq!(Ahead::after(&words, 9).advance(&words), None);
    }

    #[test]
    fn a_hint_out_of_bounds_is_harmless() {
        let v = vec![7u32; 4];
        prefetch(&v, 0);
        prefetch(&v, 1 << 40);
        prefetch(&v, usize::MAX);
        let empty: [u64; 0] = [];
        prefetch(&empty, 3);
        assert_eq!(v, vec![7; 4]);
    }
}
