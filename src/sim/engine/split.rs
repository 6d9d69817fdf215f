//! One large network on several threads (`SimOptions::threads`), with the results of one:
//! phase A's bitmap walk and phase B's flit counts are cut into contiguous ranges of the
//! bitmap's words, one per thread; everything else in the cycle stays on the calling thread.
//!
//! Why the results cannot change:
//! - **Phase A** only reads the network's state and writes each channel's own round-robin
//!   pointer, so each range's walk picks the moves the one walk would, and the ranges' moves
//!   concatenated in range order are the one walk's, in channel order, each with its
//!   channel's position in `active`.
//! - **Phase B's counts.** A move adds a flit to its output VC, which belongs to a channel of
//!   its range, and takes one from its source VC, which may belong to another range. A range
//!   applies the first, and the second where the source is its own; the others are applied
//!   after the threads join. Sums do not depend on the order. Whether a move carries a
//!   header into its output VC reads that VC's count of received flits before the move, which
//!   no other move changes.
//! - **Whether a move empties its source buffer for good** is tested once every count is in,
//!   which gives what the one thread's test right after the move gives. A buffer that also
//!   receives a flit this cycle has not received its tail before it, so it is not emptied for
//!   good in either order (`Engine::apply`).
//! - **The events** (a header arrived, an input emptied) are sorted by the channel's position
//!   in `active` and the event's kind, as the one walk's are, and applied on this thread.
//!
//! Only the untimed wormhole engine on the networks that walk the bitmap splits (`traverse`);
//! any other run ignores the threads. The threads pay where a cycle's walk is long enough to
//! hide the hand-over (docs/performance.md, "One network on several threads").

use super::switching::WORMHOLE;
use super::traverse::Sendable;
use super::{Engine, Message};
use rayon::prelude::*;

/// The threads of one engine and their scratch lists, one per range.
pub(crate) struct Split {
    pool: rayon::ThreadPool,
    /// Bitmap words per range (the last range may have fewer).
    words: usize,
    /// Per range: its moves (`position << 32 | output VC`, in channel order).
    moves: Vec<Vec<u64>>,
    /// Per range: the header events of its moves.
    headers: Vec<Vec<u64>>,
    /// Per range: the source VCs of its moves that belong to other ranges.
    deferred: Vec<Vec<u32>>,
    /// Per range: the indices of its moves that emptied their source buffer for good.
    tails: Vec<Vec<u32>>,
}

impl Split {
    /// `threads` threads (at least 2) of their own, for a bitmap of `bitmap_words` words.
    pub(crate) fn new(threads: usize, bitmap_words: usize) -> Result<Split, String> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|k| format!("runner-sim-{k}"))
            .build()
            .map_err(|e| format!("cannot start {threads} simulator threads: {e}"))?;
        Ok(Split {
            pool,
            words: bitmap_words.div_ceil(threads).max(1),
            moves: vec![Vec::new(); threads],
            headers: vec![Vec::new(); threads],
            deferred: vec![Vec::new(); threads],
            tails: vec![Vec::new(); threads],
        })
    }
}

impl Engine {
    /// Phase A on the split's threads: each walks its range of the bitmap's words (see
    /// `Engine::choose`, whose untimed wormhole walk this is); the moves go to
    /// `moves[..n_moves]` in channel order.
    pub(super) fn choose_split(&mut self) {
        let Some(split) = self.split.as_deref_mut() else { return };
        let v = self.v;
        let ch_busy: &[u64] = &self.ch_busy;
        let ch_pos: &[u32] = &self.ch_pos;
        let sendable = Sendable::new::<false>(
            &self.vc_src,
            &self.vc_count,
            &self.vc_received,
            &self.switching.gate,
            &self.timing,
            self.depth,
            self.now,
        );
        let ch_rr = &mut self.ch_rr[..ch_busy.len()];
        let Split { pool, words, moves, .. } = split;
        let words = *words;
        pool.install(|| {
            self.active_bits
                .par_chunks(words)
                .zip(ch_rr.par_chunks_mut(words * 64))
                .zip(moves.par_iter_mut())
                .enumerate()
                .for_each(|(k, ((bits, ch_rr), moves))| {
                    moves.clear();
                    let walk = Walk { ch_busy, ch_pos, sendable, v };
                    walk.range(bits, k * words, ch_rr, moves);
                });
        });
        let mut n = 0;
        for range in moves.iter() {
            self.moves[n..n + range.len()].copy_from_slice(range);
            n += range.len();
        }
        self.n_moves = n;
    }

    /// Phase B on the split's threads (see `Engine::apply`, whose untimed wormhole case this
    /// is, walking the bitmap): the flit counts by ranges, then the events in `active` order
    /// on this thread.
    pub(super) fn apply_split<const S: u8>(&mut self) {
        let Some(mut split) = self.split.take() else { return };
        #[cfg(test)]
        self.count_move_ports();
        let counting = self.window.open;
        let vcs = split.words * 64 * self.v as usize;
        let vc_src: &[u32] = &self.vc_src;
        let Split { pool, moves, headers, deferred, tails, .. } = &mut *split;
        pool.install(|| {
            self.vc_count
                .par_chunks_mut(vcs)
                .zip(self.vc_received.par_chunks_mut(vcs))
                .zip(self.window.vc_flits.par_chunks_mut(vcs))
                .zip(moves.par_iter())
                .zip(headers.par_iter_mut().zip(deferred.par_iter_mut()))
                .enumerate()
                .for_each(|(k, ((((count, received), flits), moves), (headers, deferred)))| {
                    let first = k * vcs;
                    headers.clear();
                    deferred.clear();
                    for &packed in moves {
                        let out = packed as u32 as usize;
                        let src = vc_src[out] as usize;
                        let o = out - first;
                        count[o] += 1;
                        if counting {
                            flits[o] += 1;
                        }
                        if received[o] == 0 {
                            headers.push(packed >> 32 << 33 | out as u64);
                        }
                        received[o] += 1;
                        match src.checked_sub(first) {
                            Some(s) if s < count.len() => count[s] -= 1,
                            _ => deferred.push(src as u32),
                        }
                    }
                });
        });
        for &src in deferred.iter().flatten() {
            self.vc_count[src as usize] -= 1;
        }
        // Whether each move emptied its source buffer for good, on the final counts.
        let (vc_count, vc_received, vc_owner): (&[u32], &[u32], &[u32]) =
            (&self.vc_count, &self.vc_received, &self.vc_owner);
        let messages: &[Message] = &self.messages;
        pool.install(|| {
            moves.par_iter().zip(tails.par_iter_mut()).for_each(|(moves, tails)| {
                tails.clear();
                for (k, &packed) in moves.iter().enumerate() {
                    let out = packed as u32 as usize;
                    let src = vc_src[out] as usize;
                    let length = messages[vc_owner[out] as usize].length;
                    if vc_count[src] == 0 && vc_received[src] == length {
                        tails.push(k as u32);
                    }
                }
            });
        });
        let events = &mut self.events;
        events.clear();
        for (moves, (headers, tails)) in moves.iter().zip(headers.iter().zip(tails.iter())) {
            events.extend_from_slice(headers);
            events.extend(tails.iter().map(|&k| {
                let packed = moves[k as usize];
                packed >> 32 << 33 | 1 << 32 | u64::from(packed as u32)
            }));
        }
        self.split = Some(split);
        // In `active` order (`Engine::apply`).
        if !self.events.is_sorted() {
            self.events.sort_unstable();
        }
        self.apply_events::<S, false>(self.events.len(), counting);
    }
}

/// What a range's walk reads: the channels' busy VCs and positions in `active`, and the
/// untimed wormhole test of whether a VC can send (`Sendable`).
struct Walk<'a> {
    ch_busy: &'a [u64],
    ch_pos: &'a [u32],
    sendable: Sendable<'a>,
    v: u32,
}

impl Walk<'_> {
    /// Walks the bitmap words `bits` (word `first_word` on), `ch_rr` their channels' pointers:
    /// each busy channel picks, round-robin, a VC whose upstream buffer has a flit and whose
    /// own buffer has room.
    fn range(&self, bits: &[u64], first_word: usize, ch_rr: &mut [u32], moves: &mut Vec<u64>) {
        let Walk { ch_busy, ch_pos, sendable, v } = *self;
        let first = first_word * 64;
        for (w, &word) in bits.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let ch = (first_word + w) * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let start = ch_rr[ch - first];
                let mut rest = ch_busy[ch].rotate_right(start);
                let base = ch * v as usize;
                while rest != 0 {
                    let vv = (rest.trailing_zeros() + start) & 63;
                    rest &= rest - 1;
                    let out = base + vv as usize;
                    if sendable.source::<WORMHOLE, false>(out).is_some() {
                        moves.push(u64::from(ch_pos[ch]) << 32 | out as u64);
                        ch_rr[ch - first] = if vv + 1 == v { 0 } else { vv + 1 };
                        break;
                    }
                }
            }
        }
    }
}

/// Whether a run with these settings splits: the untimed wormhole engine walking the bitmap.
pub(super) const fn splits(s: u8, bitmap: bool, timed: bool) -> bool {
    s == WORMHOLE && bitmap && !timed
}
