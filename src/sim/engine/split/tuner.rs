//! Whether splitting a cycle pays on this run, found by timing cycles of both kinds.
//!
//! A split cycle has the same results as one on one thread (the module docs of `split`), so
//! which kind a cycle is may depend on anything, the clock included, without any result
//! moving. The bound on active channels (`Split::pays`) says where a split cannot pay; above
//! it, whether it does depends on the network and on the machine. On two cores the
//! 256 x 256 torus runs 1.3-1.5x faster split, and the p = 8 dragonfly, whose cycle is
//! mostly routing on the run's thread, 1.05-1.23x slower (docs/performance.md, "A large
//! dragonfly"). So the run times both: a trial of four blocks of [`BLOCK`] cycles, one thread,
//! split, one thread, split (alternated, so that a load that grows or a machine that slows
//! down weighs on both kinds), then the faster kind by the medians of the blocks' cycles for a
//! run of [`FIRST_RUN`] cycles, then another trial. A run doubles while the same kind keeps
//! winning, up to [`LONGEST_RUN`] cycles, so that the slower kind's share of a long
//! simulation falls below 1%; a trial that changes the winner starts the runs over.
//!
//! A cycle's time is the clock between two consecutive questions (one per cycle, from
//! phase 3 to phase 3), which takes in the serial part, where the lines that a split moved to
//! another core miss. The first [`SETTLE`] cycles of each block are not timed (the lines move
//! back then), nor is a cycle after which a cycle below the bound came (`Tuner::skipped`).

/// Cycles per block of a trial.
const BLOCK: u32 = 16;
/// The first cycles of each block, not timed.
const SETTLE: u32 = 2;
/// A trial's blocks: one thread, split, one thread, split.
const BLOCKS: u32 = 4;
/// Cycles of the first run of a trial's winner, and the most a run doubles to.
const FIRST_RUN: u32 = 256;
const LONGEST_RUN: u32 = 8192;

/// Where the tuner stands: in a trial's block `block` or in a run of the winner, with the
/// cycles left in either.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Trial { block: u32, left: u32 },
    Run { split: bool, left: u32 },
}

/// The timing of cycles of both kinds, and the choice of the next cycle's kind.
pub(crate) struct Tuner {
    stage: Stage,
    /// The clock (nanoseconds) when the last cycle was asked for, and its kind, where its
    /// time is to be taken.
    timing: Option<(u64, bool)>,
    /// This trial's cycle times, in nanoseconds: one thread's, then split ones.
    samples: [Vec<u64>; 2],
    /// The length of the next run, and the last trial's winner.
    run: u32,
    winner: Option<bool>,
}

impl Tuner {
    /// A tuner that starts with a trial.
    pub(crate) fn new() -> Tuner {
        let room = (BLOCKS / 2 * BLOCK) as usize;
        Tuner {
            stage: Stage::Trial { block: 0, left: BLOCK },
            timing: None,
            samples: [Vec::with_capacity(room), Vec::with_capacity(room)],
            run: FIRST_RUN,
            winner: None,
        }
    }

    /// Whether the cycle asked for at `now` (nanoseconds from any fixed origin) splits: the
    /// cycle since the last question is timed if it was to be, then the stage moves on.
    pub(crate) fn split_next(&mut self, now: u64) -> bool {
        if let Some((then, split)) = self.timing.take() {
            self.samples[usize::from(split)].push(now.saturating_sub(then));
        }
        if self.stage == (Stage::Trial { block: BLOCKS, left: BLOCK }) {
            self.decide();
        }
        match &mut self.stage {
            Stage::Trial { block, left } => {
                let split = *block % 2 == 1;
                if *left <= BLOCK - SETTLE {
                    self.timing = Some((now, split));
                }
                *left -= 1;
                if *left == 0 {
                    (*block, *left) = (*block + 1, BLOCK);
                }
                split
            }
            Stage::Run { split, left } => {
                let split = *split;
                *left -= 1;
                if *left == 0 {
                    self.stage = Stage::Trial { block: 0, left: BLOCK };
                }
                split
            }
        }
    }

    /// Whether the tuner is in a run of one-thread cycles, until the next trial.
    pub(crate) fn resting(&self) -> bool {
        matches!(self.stage, Stage::Run { split: false, .. })
    }

    /// A cycle below the bound ran on one thread: the cycle before it is not timed.
    pub(crate) fn skipped(&mut self) {
        self.timing = None;
    }

    /// The trial is over: its faster kind runs next, for twice as long as last time if it
    /// won last time too. Without times of both kinds (cycles below the bound all along), the
    /// cycles split.
    fn decide(&mut self) {
        let [one, split] = &mut self.samples;
        let split_wins = match (median(one), median(split)) {
            (Some(one), Some(split)) => split < one,
            _ => true,
        };
        self.run = match self.winner == Some(split_wins) {
            true => (self.run * 2).min(LONGEST_RUN),
            false => FIRST_RUN,
        };
        self.winner = Some(split_wins);
        self.stage = Stage::Run { split: split_wins, left: self.run };
        one.clear();
        split.clear();
    }
}

/// The median of `times` (the upper one of an even count), `None` if empty; sorts them.
fn median(times: &mut [u64]) -> Option<u64> {
    times.sort_unstable();
    times.get(times.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `cycles` cycles, each taking `one` or `split` nanoseconds by its kind; returns
    /// the kinds.
    fn drive(tuner: &mut Tuner, clock: &mut u64, cycles: u32, one: u64, split: u64) -> Vec<bool> {
        (0..cycles)
            .map(|_| {
                let kind = tuner.split_next(*clock);
                *clock += if kind { split } else { one };
                kind
            })
            .collect()
    }

    /// A trial alternates blocks of both kinds; the faster one then runs, for twice as long
    /// each time it wins again, up to the longest run.
    #[test]
    fn the_faster_kind_runs_longer_each_time_it_wins() {
        let (mut tuner, mut clock) = (Tuner::new(), 0);
        let trial = BLOCKS * BLOCK;
        let kinds = drive(&mut tuner, &mut clock, trial, 2_000, 1_000);
        let blocks: Vec<bool> = kinds.chunks(BLOCK as usize).map(|b| b[0]).collect();
        assert_eq!(blocks, [false, true, false, true]);
        assert!(kinds.chunks(BLOCK as usize).all(|b| b.iter().all(|&k| k == b[0])));
        let mut run = FIRST_RUN;
        for _ in 0..8 {
            assert!(drive(&mut tuner, &mut clock, run, 2_000, 1_000).iter().all(|&k| k));
            drive(&mut tuner, &mut clock, trial, 2_000, 1_000);
            run = (run * 2).min(LONGEST_RUN);
        }
        assert_eq!(run, LONGEST_RUN);
        // The trial is decided at the next question: the longest run, split.
        assert!(tuner.split_next(clock));
        assert_eq!(tuner.stage, Stage::Run { split: true, left: LONGEST_RUN - 1 });
    }

    /// Where split cycles are slower, the runs are on one thread; a trial that changes the
    /// winner starts the runs over.
    #[test]
    fn a_slower_split_runs_on_one_thread_and_a_new_winner_starts_over() {
        let (mut tuner, mut clock) = (Tuner::new(), 0);
        let trial = BLOCKS * BLOCK;
        drive(&mut tuner, &mut clock, trial, 1_000, 1_200);
        assert!(!tuner.resting());
        // The helpers rest through a run on one thread, and wake for the next trial.
        assert!(!tuner.split_next(clock) && tuner.resting());
        clock += 1_000;
        assert!(drive(&mut tuner, &mut clock, FIRST_RUN - 1, 1_000, 1_200).iter().all(|&k| !k));
        assert!(!tuner.resting());
        drive(&mut tuner, &mut clock, trial, 1_000, 1_200);
        // The trial is decided at the next question.
        let run = drive(&mut tuner, &mut clock, 2 * FIRST_RUN, 1_000, 1_200);
        assert!(run.iter().all(|&k| !k));
        assert_eq!(tuner.run, 2 * FIRST_RUN);
        // The machine changed: now the split is faster.
        drive(&mut tuner, &mut clock, trial, 1_000, 800);
        assert!(tuner.split_next(clock));
        assert_eq!(tuner.stage, Stage::Run { split: true, left: FIRST_RUN - 1 });
    }

    /// The settling cycles of a block and a cycle followed by one below the bound are not
    /// timed: a slow cycle there changes nothing.
    #[test]
    fn untimed_cycles_do_not_count() {
        let (mut tuner, mut clock) = (Tuner::new(), 0);
        for block in 0..BLOCKS {
            for k in 0..BLOCK {
                let split = tuner.split_next(clock);
                assert_eq!(split, block % 2 == 1);
                // The split cycles are faster, but for the untimed ones, which take forever.
                clock += match (split, k < SETTLE, k == BLOCK - 1) {
                    (true, false, false) => 1_000,
                    (true, _, _) => 1_000_000,
                    (false, _, _) => 2_000,
                };
                if k == BLOCK - 1 {
                    tuner.skipped();
                }
            }
        }
        // Per kind, two blocks less their settling cycles and the one before a skip.
        let timed = (BLOCKS / 2 * (BLOCK - SETTLE - 1)) as usize;
        assert_eq!(tuner.samples[0], vec![2_000; timed]);
        assert_eq!(tuner.samples[1], vec![1_000; timed]);
        assert!(tuner.split_next(clock));
        // Cycles below the bound all along: no times, the cycles split.
        let mut blind = Tuner::new();
        for _ in 0..BLOCKS * BLOCK {
            blind.split_next(0);
            blind.skipped();
        }
        assert!(blind.split_next(0));
    }

    #[test]
    fn median_takes_the_middle() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [5, 1, 3]), Some(3));
        assert_eq!(median(&mut [4, 1, 3, 2]), Some(3));
    }
}
