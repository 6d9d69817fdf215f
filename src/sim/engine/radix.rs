//! Phase B's events put in `active` order on the networks that walk the bitmap: a
//! least-significant-digit radix sort on the events' keys.
//!
//! An event is `key << 32 | VC` (`Engine::events`), and no two events of a cycle share a key
//! (the position of the move's channel in `active` and the event's kind), so ordering the
//! keys orders the events exactly as `sort_unstable` on the whole `u64` does: the results
//! cannot move. The bitmap walk yields the events in channel order, which `active` order
//! shuffles; the comparison sort cost about 11% of the 256 x 256 torus's instructions on one
//! thread, and ran on the calling thread of a split cycle (docs/performance.md, "The events'
//! order by counting").

/// Fewer events than this are sorted by comparison: the buckets' setup would cost more.
const SMALL: usize = 64;

/// The most bits a pass orders by (2,048 buckets, 8 KB of counts: within the first-level
/// cache beside the data streaming through).
const MAX_DIGIT: u32 = 11;

/// Sorts `events` ascending, where no two share their high 32 bits (their key); `scratch`
/// (space for the passes, as many events) and `counts` (the buckets) only grow.
pub(super) fn sort_events(events: &mut [u64], scratch: &mut Vec<u64>, counts: &mut Vec<u32>) {
    let n = events.len();
    if n < SMALL {
        events.sort_unstable();
        return;
    }
    let all = events.iter().fold(0u64, |all, &e| all | e >> 32);
    let bits = (u64::BITS - all.leading_zeros()).max(1);
    let passes = bits.div_ceil(MAX_DIGIT);
    let digit = bits.div_ceil(passes);
    let buckets = 1usize << digit;
    let mask = (buckets - 1) as u64;
    // Every pass's counts in one read of the events (keys have 32 bits, so at most three
    // passes; the counts of the passes not made stay unread).
    counts.clear();
    counts.resize(buckets * 3, 0);
    {
        let (first, rest) = counts.split_at_mut(buckets);
        let (second, third) = rest.split_at_mut(buckets);
        let (first, second, third) =
            (&mut first[..buckets], &mut second[..buckets], &mut third[..buckets]);
        let (two, three) = (digit + 32, 2 * digit + 32);
        for &e in events.iter() {
            first[(e >> 32 & mask) as usize] += 1;
            second[(e >> two & mask) as usize] += 1;
            third[(e >> three & mask) as usize] += 1;
        }
    }
    if scratch.len() < n {
        scratch.resize(n, 0);
    }
    let scratch = &mut scratch[..n];
    // Ping-pong between the two: `in_scratch` says where the events are now.
    let mut in_scratch = false;
    for p in 0..passes {
        let count = &mut counts[p as usize * buckets..(p as usize + 1) * buckets];
        // A digit every key shares orders nothing.
        if count.iter().any(|&c| c as usize == n) {
            continue;
        }
        let mut offset = 0;
        for c in count.iter_mut() {
            let k = *c;
            *c = offset;
            offset += k;
        }
        let (from, to): (&[u64], &mut [u64]) = match in_scratch {
            false => (&*events, &mut *scratch),
            true => (&*scratch, &mut *events),
        };
        let shift = p * digit + 32;
        for &e in from {
            let d = (e >> shift & mask) as usize;
            to[count[d] as usize] = e;
            count[d] += 1;
        }
        in_scratch = !in_scratch;
    }
    if in_scratch {
        events.copy_from_slice(scratch);
    }
    debug_assert!(events.is_sorted());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct keys in a scrambled order, with VCs in the low half, come out as
    /// `sort_unstable` leaves them, at every size and key width that picks one, two or three
    /// passes, and with keys sharing their low digit (a pass skipped).
    #[test]
    fn the_events_come_out_as_a_comparison_sort_leaves_them() {
        let mut scratch = Vec::new();
        let mut counts = Vec::new();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (n, spread, step) in [
            (10, 100, 1),
            (64, 1 << 8, 1),
            (700, 1 << 12, 1),
            (5_000, 1 << 19, 1),
            (40_000, 1 << 24, 1),
            (3_000, 1 << 20, 2048),
        ] {
            // Distinct keys: a shuffled run of `n` multiples of `step` spread over `spread`.
            let mut keys: Vec<u64> =
                (0..n as u64).map(|k| k * (spread / n as u64).max(1) * step).collect();
            for k in (1..keys.len()).rev() {
                let j = (next() % (k as u64 + 1)) as usize;
                keys.swap(k, j);
            }
            let mut events: Vec<u64> =
                keys.iter().map(|&k| k << 32 | (next() & 0xFFFF_FFFF)).collect();
            let mut expected = events.clone();
            expected.sort_unstable();
            sort_events(&mut events, &mut scratch, &mut counts);
            assert_eq!(events, expected, "{n} events over {spread} keys");
        }
    }
}
