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
//! - **Whether a move empties its source buffer for good** is tested right after the move
//!   where the range holds the buffer, as the one thread tests it, and once every count is in
//!   where another range does: both give the same answer, because a buffer that has received
//!   its tail receives no flit this cycle, and a buffer that receives one has not received
//!   its tail before it, so it is not emptied for good in either order (`Engine::apply`).
//! - **The events** (a header arrived, an input emptied) are sorted by the channel's position
//!   in `active` and the event's kind (`radix`), as the one walk's are, and applied on this
//!   thread.
//!
//! Only the untimed wormhole engine on the networks that walk the bitmap splits (`traverse`,
//! [`eligible`]); any other run ignores the threads and starts none. Of its cycles, those with
//! enough active channels split ([`Split::pays`]) where the clock finds split cycles the
//! faster ones on this run (`tuner`): the choice cannot move a result, only the time. The run
//! itself is one of the pool's N threads (`Engine::run`): each split phase is then a `join`
//! that this thread takes part in. (Handed to the pool from outside, as at first, each phase
//! woke N threads beside the waiting one: on two cores the 64 x 64 torus ran 1.5x slower on
//! two threads than on one, and the 512 x 512 gained 1.3x instead of 1.6x;
//! docs/performance.md, "One network on several threads".) The pool's other N - 1 threads
//! poll for the phases' jobs between them instead of sleeping ([`with_helpers`]), so that a
//! phase does not wait for a thread to wake.

use crate::scenario::{Scenario, SwitchAllocator};

use super::super::topology::Geometry;
use super::build::{input_ports, walks_bitmap};
use super::switching::{WORMHOLE, wormhole::technique};
use super::traverse::Sendable;
use super::{Engine, Message, radix, timing};
use crate::sim::prefetch::{Ahead, FAR, NEAR, prefetch};
use rayon::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod tuner;

/// The threads of one engine and their scratch lists, one per range.
pub(crate) struct Split {
    pool: Arc<rayon::ThreadPool>,
    /// Set while the tuner runs cycles on one thread: the helpers nap between their polls at
    /// once ([`with_helpers`]).
    resting: Arc<AtomicBool>,
    /// Bitmap words per range (the last range may have fewer).
    words: usize,
    /// Per range: its moves and what phase B found in them.
    ranges: Vec<Range>,
    /// The fewest active channels for which a cycle splits ([`Split::pays`]).
    min_active: usize,
    /// Above that bound, whether a cycle splits: the faster kind by the clock
    /// ([`tuner::Tuner`]), timed from `started`.
    tuner: tuner::Tuner,
    started: Instant,
    /// Test builds: split every other cycle whatever the active channels, to hold the two
    /// paths' mix to one thread's results; and the cycles asked and split so far.
    #[cfg(test)]
    pub(super) every_other: bool,
    #[cfg(test)]
    pub(super) asked: u64,
    #[cfg(test)]
    pub(super) split: u64,
}

/// One range's scratch lists. Each only grows, to the most the range has needed: its first
/// `n_*` entries are this cycle's. Written by index with the count in a register (through
/// `Vec::push`, the two threads of the 256 x 256 torus ran 3% more instructions).
#[derive(Clone, Default)]
struct Range {
    /// The moves (`position << 32 | output VC`, in channel order).
    moves: Vec<u64>,
    n_moves: usize,
    /// The header events of its moves.
    headers: Vec<u64>,
    n_headers: usize,
    /// The indices of its moves whose source VC belongs to another range.
    deferred: Vec<u32>,
    n_deferred: usize,
    /// The indices of its moves from its own buffers that emptied their source buffer for
    /// good.
    tails: Vec<u32>,
    n_tails: usize,
}

/// Active channels per thread below which a cycle runs on one thread: the walk and the
/// counts of 4,096 channels take tens of microseconds, and the threads' cores then trade the
/// lines that the one thread would have kept in its cache. Measured on two cores: a 64 x 64
/// torus (2,000 to 4,000 active channels) ran 1.1-1.6x slower split every cycle, a 128 x 128
/// one (14,000) 1.35x faster (docs/performance.md, "One network on several threads"). With
/// the helpers ([`with_helpers`]) a split from 1,024 ran the 64 x 64 torus at 0.0005 in
/// 0.6 s in most runs against 0.8 s on one thread, but in a third of them in 1.1-1.4 s
/// ("Threads that stay awake"). Test builds split from 64, so that the tests' networks take
/// both paths.
const MIN_ACTIVE_PER_THREAD: usize = if cfg!(test) { 64 } else { 4096 };

impl Split {
    /// `threads` threads (at least 2) of their own, for a bitmap of `bitmap_words` words,
    /// splitting the cycles with at least [`MIN_ACTIVE_PER_THREAD`] active channels per thread.
    pub(crate) fn new(threads: usize, bitmap_words: usize) -> Result<Split, String> {
        Split::splitting_from(threads, bitmap_words, MIN_ACTIVE_PER_THREAD * threads)
    }

    /// [`Split::new`], splitting the cycles with at least `min_active` active channels.
    pub(crate) fn splitting_from(
        threads: usize,
        bitmap_words: usize,
        min_active: usize,
    ) -> Result<Split, String> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|k| format!("runner-sim-{k}"))
            .build()
            .map_err(|e| format!("cannot start {threads} simulator threads: {e}"))?
            .into();
        Ok(Split {
            pool,
            resting: Arc::new(AtomicBool::new(false)),
            words: bitmap_words.div_ceil(threads).max(1),
            ranges: vec![Range::default(); threads],
            min_active,
            tuner: tuner::Tuner::new(),
            started: Instant::now(),
            #[cfg(test)]
            every_other: false,
            #[cfg(test)]
            asked: 0,
            #[cfg(test)]
            split: 0,
        })
    }

    /// Whether a cycle with `active` active channels splits: not below the bound, and above
    /// it where the clock says split cycles are the faster ones on this run
    /// ([`tuner::Tuner`]). Either way the cycle's results are the same; only its time differs.
    /// Test builds split every cycle above the bound (or every other cycle), so that the
    /// tests take both paths whatever the clock says.
    pub(crate) fn pays(&mut self, active: usize) -> bool {
        #[cfg(test)]
        {
            self.asked += 1;
            let pays = match self.every_other {
                true => self.asked.is_multiple_of(2),
                false => active >= self.min_active,
            };
            self.split += u64::from(pays);
            pays
        }
        #[cfg(not(test))]
        {
            self.timed(active)
        }
    }

    /// [`Split::pays`] as the clock decides it.
    #[cfg_attr(test, allow(dead_code))]
    fn timed(&mut self, active: usize) -> bool {
        if active < self.min_active {
            self.tuner.skipped();
            return false;
        }
        let now = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let split = self.tuner.split_next(now);
        let resting = self.tuner.resting();
        if resting != self.resting.load(Ordering::Relaxed) {
            self.resting.store(resting, Ordering::Relaxed);
        }
        split
    }

    /// The pool, for a run to start on it, and the flag its helpers rest by (`Engine::run`).
    pub(crate) fn pool(&self) -> (Arc<rayon::ThreadPool>, Arc<AtomicBool>) {
        (Arc::clone(&self.pool), Arc::clone(&self.resting))
    }
}

/// Runs `run` on the calling thread, one of a pool's, with the pool's other threads kept
/// awake for it ([`help`]) until it returns (or panics); while `resting` is set (the run's
/// cycles are on its own thread for a while, `tuner`), they nap between their polls.
///
/// Left to themselves, the pool's threads sleep as soon as a split phase is over, and the
/// next phase has to wake them: on this 2-core virtual machine a phase then cost 28-58 us
/// more than its work (a loop of a serial and a split phase, two threads, 150 us each),
/// against 3-8 us with helpers (docs/performance.md, "Threads that stay awake"). The
/// 256 x 256 torus splits two phases per cycle of about a millisecond.
///
/// Only where each of the pool's threads can have a core: with more threads than cores, a
/// polling helper would take the core the run's serial part needs.
pub(crate) fn with_helpers<R: Send>(resting: &AtomicBool, run: impl FnOnce() -> R + Send) -> R {
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    if rayon::current_num_threads() > cores {
        return run();
    }
    let stop = &AtomicBool::new(false);
    rayon::scope(|scope| {
        // The run's own thread (this one, in a pool): its copy of the helper returns at once.
        let own = rayon::current_thread_index();
        // One helper per thread, in the thread's own queue: no thread takes two.
        scope.spawn_broadcast(move |_, context| {
            if Some(context.index()) != own {
                help(stop, resting);
            }
        });
        // Stops the helpers however `run` ends, so that the scope's wait for them ends.
        let _stop = Stop(stop);
        run()
    })
}

/// Sets the flag that stops the helpers when dropped ([`with_helpers`]).
struct Stop<'a>(&'a AtomicBool);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// How long a helper polls without finding work before it naps between polls: longer than
/// the serial part of a cycle where a hand-over counts (under a millisecond at 256 x 256, a
/// few at 512 x 512), so that it naps only while the run is not splitting or where a cycle
/// is long (tens of milliseconds at 1024 x 1024, against a nap of a fraction of one).
const AWAKE: Duration = Duration::from_millis(5);

/// A helper's nap between polls once it has found no work for [`AWAKE`].
const NAP: Duration = Duration::from_micros(200);

/// A helper: runs the split phases' jobs as they come, polling for them in between, until
/// `stop` is set. Polls with a spin hint, yielding the core now and then to whatever else
/// wants it; naps once it has found no work for a while, or at once while `resting` is set.
/// (Resting saves the CPU time a helper would spend polling through a run of one-thread
/// cycles; no change in wall time was measurable, docs/performance.md.)
fn help(stop: &AtomicBool, resting: &AtomicBool) {
    let mut last_work = Instant::now();
    let mut polls = 0u32;
    while !stop.load(Ordering::Acquire) {
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => {
                last_work = Instant::now();
                polls = 0;
            }
            Some(rayon::Yield::Idle) => {
                polls = polls.wrapping_add(1);
                if resting.load(Ordering::Relaxed) {
                    std::thread::sleep(NAP);
                } else if !polls.is_multiple_of(64) {
                    std::hint::spin_loop();
                } else if last_work.elapsed() < AWAKE {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(NAP);
                }
            }
            None => return,
        }
    }
}

impl Engine {
    /// Phase A on the split's threads: each walks its range of the bitmap's words (see
    /// `Engine::choose`, whose untimed wormhole walk this is); the moves go to each range's
    /// list, in channel order, and `n_moves` counts them all.
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
        let hint = self.prefetching;
        let Split { pool, words, ranges, .. } = split;
        let words = *words;
        pool.install(|| {
            self.active_bits
                .par_chunks(words)
                .zip(ch_rr.par_chunks_mut(words * 64))
                .zip(ranges.par_iter_mut())
                .enumerate()
                .for_each(|(k, ((bits, ch_rr), range))| {
                    // At most one move per active channel of the range's.
                    let most = bits.iter().map(|w| w.count_ones() as usize).sum();
                    if range.moves.len() < most {
                        range.moves.resize(most, 0);
                    }
                    let walk = Walk { ch_busy, ch_pos, sendable, v };
                    // The hinted walk is a monomorphisation of its own, as in `traverse`.
                    range.n_moves = match hint {
                        true => walk.range::<true>(bits, k * words, ch_rr, &mut range.moves),
                        false => walk.range::<false>(bits, k * words, ch_rr, &mut range.moves),
                    };
                });
        });
        // Phase B reads each range's own moves; only the test builds' port count reads them
        // from `moves`.
        self.n_moves = ranges.iter().map(|r| r.n_moves).sum();
        #[cfg(test)]
        {
            let mut n = 0;
            for range in ranges.iter() {
                let moves = &range.moves[..range.n_moves];
                self.moves[n..n + moves.len()].copy_from_slice(moves);
                n += moves.len();
            }
        }
    }

    /// Phase B on the split's threads (see `Engine::apply`, whose untimed wormhole case this
    /// is, walking the bitmap): the flit counts by ranges, each range testing the moves from
    /// its own buffers for a tail that left for good; the moves from another range's buffers
    /// are tested once every count is in, and the events are applied in `active` order on
    /// this thread.
    pub(super) fn apply_split<const S: u8>(&mut self) {
        let Some(mut split) = self.split.take() else { return };
        #[cfg(test)]
        self.count_move_ports();
        let counting = self.window.open;
        let hint = self.prefetching;
        let vcs = split.words * 64 * self.v as usize;
        let vc_src: &[u32] = &self.vc_src;
        let vc_owner: &[u32] = &self.vc_owner;
        let messages: &[Message] = &self.messages;
        let Split { pool, ranges, .. } = &mut *split;
        let counts = Counts { vc_src, vc_owner, messages, counting };
        pool.install(|| {
            self.vc_count
                .par_chunks_mut(vcs)
                .zip(self.vc_received.par_chunks_mut(vcs))
                .zip(self.window.vc_flits.par_chunks_mut(vcs))
                .zip(ranges.par_iter_mut())
                .enumerate()
                .for_each(|(k, (((count, received), flits), range))| {
                    let buffers = Buffers { first: k * vcs, count, received, flits };
                    match hint {
                        true => counts.range::<true>(buffers, range),
                        false => counts.range::<false>(buffers, range),
                    }
                });
        });
        let (vc_count, vc_received) = (&mut self.vc_count, &self.vc_received);
        let events = &mut self.events;
        events.clear();
        for range in ranges.iter() {
            let moves = &range.moves[..range.n_moves];
            let tail = |j: u32| {
                let packed = moves[j as usize];
                packed >> 32 << 33 | 1 << 32 | u64::from(packed as u32)
            };
            events.extend_from_slice(&range.headers[..range.n_headers]);
            events.extend(range.tails[..range.n_tails].iter().map(|&j| tail(j)));
            // The moves from another range's buffers, now that its thread's counts are in:
            // the flit out of the buffer taken, then tested as `Counts::range` tests its own.
            for &j in &range.deferred[..range.n_deferred] {
                let out = moves[j as usize] as u32 as usize;
                let src = vc_src[out] as usize;
                vc_count[src] -= 1;
                if vc_count[src] == 0 && vc_received[src] == messages[vc_owner[out] as usize].length
                {
                    events.push(tail(j));
                }
            }
        }
        self.split = Some(split);
        // In `active` order (`Engine::apply`): the tails came out of order.
        if !self.events.is_sorted() {
            radix::sort_events(&mut self.events, &mut self.events_scratch, &mut self.event_counts);
        }
        self.apply_events::<S, false>(self.events.len(), counting);
    }
}

/// What phase B's counts read on every range's thread (`Engine::apply_split`).
struct Counts<'a> {
    vc_src: &'a [u32],
    vc_owner: &'a [u32],
    messages: &'a [Message],
    /// Whether the window is open (`vc_flits` counts).
    counting: bool,
}

/// A range's own per-VC counts, from VC `first` on.
struct Buffers<'a> {
    first: usize,
    count: &'a mut [u32],
    received: &'a mut [u32],
    flits: &'a mut [u64],
}

impl Counts<'_> {
    /// Applies the flit counts of `range`'s moves to the buffers of the range, and finds the
    /// header events and the moves that emptied their source buffer for good (`range`'s
    /// `headers`, `tails` and, where the buffer is another range's, `deferred`). `H`: hint the
    /// misses ahead (`Engine::prefetching`).
    fn range<const H: bool>(&self, buffers: Buffers<'_>, range: &mut Range) {
        let Counts { vc_src, vc_owner, messages, counting } = *self;
        let Buffers { first, count, received, flits } = buffers;
        let n = range.n_moves;
        for list in [&mut range.deferred, &mut range.tails] {
            if list.len() < n {
                list.resize(n, 0);
            }
        }
        if range.headers.len() < n {
            range.headers.resize(n, 0);
        }
        let moves: &[u64] = &range.moves[..n];
        let (headers, deferred, tails) =
            (&mut range.headers, &mut range.deferred, &mut range.tails);
        let (mut n_headers, mut n_deferred, mut n_tails) = (0, 0, 0);
        for (j, &packed) in moves.iter().enumerate() {
            // The moves ahead, as in `Engine::apply` (`prefetch`).
            if H && let Some(&far) = moves.get(j + FAR) {
                let o = (far as u32 as usize).saturating_sub(first);
                prefetch(vc_src, far as u32 as usize);
                prefetch(count, o);
                prefetch(received, o);
                if counting {
                    prefetch(flits, o);
                }
            }
            if H && let Some(&near) = moves.get(j + NEAR) {
                let src = vc_src[near as u32 as usize] as usize;
                // Only this range's: a line of another thread's is its to write.
                if let Some(s) = src.checked_sub(first)
                    && s < count.len()
                {
                    prefetch(count, s);
                }
                prefetch(messages, vc_owner[near as u32 as usize] as usize);
            }
            let out = packed as u32 as usize;
            let src = vc_src[out] as usize;
            let o = out - first;
            count[o] += 1;
            if counting {
                flits[o] += 1;
            }
            if received[o] == 0 {
                headers[n_headers] = packed >> 32 << 33 | out as u64;
                n_headers += 1;
            }
            received[o] += 1;
            // Whether the move emptied its source buffer for good: tested at once where the
            // buffer is this range's, as the one thread tests it (a buffer that has received
            // its tail receives no flit this cycle, so no later move changes the answer);
            // after the join where it is another range's, once its count is in.
            match src.checked_sub(first) {
                Some(s) if s < count.len() => {
                    count[s] -= 1;
                    if count[s] == 0 && received[s] == messages[vc_owner[out] as usize].length {
                        tails[n_tails] = j as u32;
                        n_tails += 1;
                    }
                }
                _ => {
                    deferred[n_deferred] = j as u32;
                    n_deferred += 1;
                }
            }
        }
        (range.n_headers, range.n_deferred, range.n_tails) = (n_headers, n_deferred, n_tails);
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
    /// own buffer has room; returns how many of `moves` it wrote. `H`: hint the misses ahead
    /// (`Engine::prefetching`).
    fn range<const H: bool>(
        &self,
        bits: &[u64],
        first_word: usize,
        ch_rr: &mut [u32],
        moves: &mut [u64],
    ) -> usize {
        let Walk { ch_busy, ch_pos, sendable, v } = *self;
        let mut n = 0;
        let first = first_word * 64;
        // The cursors ahead, as in `Engine::choose` (`prefetch`).
        let (mut far, mut near) = match H {
            true => (Ahead::after(bits, FAR), Ahead::after(bits, NEAR)),
            false => (Ahead::default(), Ahead::default()),
        };
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let ch = (first_word + w) * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if H && let Some(c) = far.advance(bits) {
                    let c = first + c as usize;
                    prefetch(ch_busy, c);
                    prefetch(ch_rr, c - first);
                    prefetch(ch_pos, c);
                    sendable.prefetch_channel(c * v as usize);
                }
                if H && let Some(c) = near.advance(bits) {
                    let c = first + c as usize;
                    sendable.prefetch_sources(c * v as usize, ch_busy[c]);
                }
                let start = ch_rr[ch - first];
                let mut rest = ch_busy[ch].rotate_right(start);
                let base = ch * v as usize;
                while rest != 0 {
                    let vv = (rest.trailing_zeros() + start) & 63;
                    rest &= rest - 1;
                    let out = base + vv as usize;
                    if sendable.source::<WORMHOLE, false>(out).is_some() {
                        moves[n] = u64::from(ch_pos[ch]) << 32 | out as u64;
                        n += 1;
                        ch_rr[ch - first] = if vv + 1 == v { 0 } else { vv + 1 };
                        break;
                    }
                }
            }
        }
        n
    }
}

/// Whether a run with these settings splits: the untimed wormhole engine walking the bitmap.
pub(super) const fn splits(s: u8, bitmap: bool, timed: bool) -> bool {
    s == WORMHOLE && bitmap && !timed
}

/// Whether `scenario`'s run on `geometry` splits given threads: what [`splits`] asks of the
/// monomorphised walk, asked of the scenario before the engine is built (`Engine::new` starts
/// the threads only then, and `sim::uses_threads` asks it for the pipeline). The walk is the
/// bitmap's (not the ports' or the separable allocator's) on a large network, the switching
/// wormhole or virtual cut-through, every link and credit one cycle long.
pub(super) fn eligible(scenario: &Scenario, geometry: &Geometry) -> bool {
    let (_, ports) = input_ports(scenario, geometry);
    let allocated = scenario.switch_allocator == SwitchAllocator::Islip;
    let bitmap = walks_bitmap(geometry, scenario.virtual_channels);
    splits(technique(scenario.switching), bitmap && !ports && !allocated, timing::timed(scenario))
}

#[cfg(test)]
mod tests {
    use super::with_helpers;
    use rayon::prelude::*;
    use std::sync::atomic::AtomicBool;

    /// The run's result comes back, its split phases run on the pool, and the helpers stop
    /// when it ends, whether it returns or panics (the scope waits for them, so a helper
    /// left polling would hang the test).
    #[test]
    fn the_helpers_stop_when_the_run_returns_or_panics() {
        // Two threads: more than the cores would run without helpers (`with_helpers`).
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let awake = AtomicBool::new(false);
        let sum = pool.install(|| {
            with_helpers(&awake, || {
                (0..100).map(|_| (0..10_000u64).into_par_iter().sum::<u64>()).sum::<u64>()
            })
        });
        assert_eq!(sum, 100 * (10_000 * 9_999 / 2));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| with_helpers(&awake, || -> u64 { panic!("the run failed") }))
        }));
        assert!(panicked.is_err());
        // Outside a pool, the run goes to the global one.
        assert_eq!(with_helpers(&AtomicBool::new(true), || 7), 7);
    }
}
