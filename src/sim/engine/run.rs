//! The run: warm-up, measurement window and drain with their stopping rules (saturation,
//! deadlock, precision, cancellation), and one cycle's phases in order (`step`).

use super::super::network::hop::NO_LINK;
use super::super::stats::Trend;
use super::switching::{CIRCUIT, SCOUTING, WORMHOLE};
use super::{ACTIVE, ALLOC, BITMAP, Engine, Outcome, PORTS, RunPlan};

impl Engine {
    /// Runs warm-up, window and drain; `progress` is called every 4096 cycles.
    pub(crate) fn run(
        &mut self,
        plan: &RunPlan,
        progress: Option<super::super::Progress<'_>>,
    ) -> Outcome {
        // With threads (`split`), the whole run is one of the pool's threads: each cycle's
        // split phases then run on the pool with this thread taking a range of its own, and
        // the pool's other threads poll for their jobs between them (`split::with_helpers`).
        // Handed to the pool from outside each time, the phases would wake threads that then
        // compete for the cores with the one left waiting here (`split`'s module docs).
        if let Some((pool, resting)) = self.split.as_ref().map(|split| split.pool()) {
            return pool.install(|| {
                super::split::with_helpers(&resting, || self.run_on_this_thread(plan, progress))
            });
        }
        self.run_on_this_thread(plan, progress)
    }

    /// [`Engine::run`] on the calling thread.
    fn run_on_this_thread(
        &mut self,
        plan: &RunPlan,
        progress: Option<super::super::Progress<'_>>,
    ) -> Outcome {
        let outcome = self.run_until_stop(plan, progress);
        if self.window.open {
            // Stopped early: account the channel occupancy up to now.
            self.close_window();
        }
        outcome
    }

    fn run_until_stop(
        &mut self,
        plan: &RunPlan,
        progress: Option<super::super::Progress<'_>>,
    ) -> Outcome {
        let planned = match plan.precision {
            None => plan.warmup.saturating_add(plan.cycles),
            Some(_) => plan.max_cycles.max(plan.warmup.saturating_add(1)),
        };
        loop {
            let now = self.now;
            if now == plan.warmup && !self.window.open && self.window.end.is_none() {
                self.open_window();
            }
            if self.window.open {
                let elapsed = now - self.window.start;
                let close = match (self.fixed_end, plan.precision) {
                    (Some(end), _) => now >= end,
                    (None, Some(target)) => {
                        let done = self.planned_looks(elapsed, target, plan);
                        if now >= planned && !done {
                            self.stopped_short = Some((target, planned));
                        }
                        done || now >= planned
                    }
                    (None, None) => now >= planned,
                };
                if close {
                    self.close_window();
                    let w = &self.window;
                    // Throughput mode: the messages dropped at full source queues were offered.
                    let dropped = self.throughput.as_ref().map_or(0, |t| t.window_drops);
                    let offered = w.generated + dropped;
                    let deficit = offered.saturating_sub(w.delivered);
                    if deficit as f64 > 0.02 * offered as f64
                        && deficit > 5 * u64::from(self.geometry.nodes)
                    {
                        let detail = match &self.throughput {
                            None => format!(
                                "the network accepted {} of the {} messages generated in the \
                                 measurement window",
                                w.delivered, w.generated
                            ),
                            Some(t) => t.shortfall_detail(w.generated, w.delivered, elapsed),
                        };
                        return self.saturated_unless_deadlocked(detail);
                    }
                }
            }
            if let Some(end) = self.window.end {
                if self.window.outstanding == 0 && self.broadcasts_outstanding() == 0 {
                    return self.verdict();
                }
                let drain_limit = (end - self.window.start).max(50_000);
                if now - end >= drain_limit {
                    let detail = format!(
                        "{} messages generated in the measurement window were still undelivered \
                         {drain_limit} cycles after it ended",
                        self.window.outstanding + self.broadcasts_outstanding()
                    );
                    return self.saturated_unless_deadlocked(detail);
                }
            }
            let moved = self.step();
            if let Some(error) = &self.trace_error {
                return Outcome::Failed(error.clone());
            }
            if moved {
                self.last_move = now;
            } else if self.in_network > 0 && now - self.last_move >= plan.deadlock_cycles {
                let idle = now - self.last_move;
                let detail = match self.describe_deadlock() {
                    Some(cycle) => format!("no flit moved for {idle} cycles: {cycle}"),
                    None => format!(
                        "no flit moved for {idle} cycles with {} messages in the network",
                        self.in_network
                    ),
                };
                return Outcome::Deadlock(detail);
            }
            if self.queued > self.backlog_limit {
                let detail = format!(
                    "source queues grew to {} messages ({:.1} per node) by cycle {}: the offered \
                     load exceeds what the network accepts",
                    self.queued,
                    self.queued as f64 / f64::from(self.geometry.nodes),
                    self.now
                );
                return self.saturated_unless_deadlocked(detail);
            }
            if let Some(report) = progress
                && self.now.is_multiple_of(4096)
                && report(self.now.min(planned), planned).is_break()
            {
                return Outcome::Cancelled;
            }
        }
    }

    /// The verdict once every message of the window is delivered: `Ok` unless the latency
    /// batch means grow steadily with generation time (the source backlog grows: the run
    /// is unstable, whatever its absolute backlog).
    fn verdict(&self) -> Outcome {
        let end = self.window.end.unwrap_or(self.now);
        match Trend::of(&self.batches, self.ended_batches(end)) {
            Some(trend) if trend.unstable() => Outcome::Saturated(format!(
                "the latency grew steadily over the measurement window, from {:.0} to {:.0} \
                 cycles ({:.3} cycles per cycle, t = {:.1}): the source queues keep growing, \
                 the offered load exceeds what the network accepts",
                trend.first, trend.last, trend.slope, trend.t
            )),
            _ => match self.stopped_short {
                Some((target, max_cycles)) => Outcome::Imprecise(format!(
                    "stopped at max_cycles = {max_cycles} short of target_precision {target}: {}",
                    self.precision_reached(end)
                )),
                None => Outcome::Ok,
            },
        }
    }

    /// What precision the latency interval reached by window end `end`, in words.
    fn precision_reached(&self, end: u64) -> String {
        match self.batches.latency(self.ended_batches(end)) {
            Some(e) if e.mean > 0.0 => {
                let test = match e.independent {
                    true => String::new(),
                    false => format!(
                        "; the batch means were correlated (von Neumann C = {:.2} over {} \
                         batches of {} cycles), and the half-width includes the correlation \
                         adjustment (variance times {:.2})",
                        e.statistic, e.tested, e.tested_cycles, e.adjustment
                    ),
                };
                format!(
                    "the 95% half-width was {:.2}% of the mean latency{test}",
                    100.0 * e.half / e.mean
                )
            }
            _ => "fewer than 2 batches held a delivered message".to_string(),
        }
    }

    /// The raw batches that ended by cycle `end` (all complete once the window's messages are
    /// delivered): the ones the intervals use.
    pub(crate) fn ended_batches(&self, end: u64) -> usize {
        (end.saturating_sub(self.window.start) / self.batches.length()) as usize
    }

    /// Precision mode's stopping rule: the interval is looked at only at planned window
    /// lengths (`docs/statistics.md`, "Run length"):
    ///
    /// 1. the first look is once the minimum window of `plan.cycles` has passed and its raw
    ///    batches are complete;
    /// 2. at a look, the window closes if the interval meets `target` (a half-width of at
    ///    most `target` times the mean) and its batch means passed the independence test;
    /// 3. otherwise the next look is planned from this one, at the window so far times
    ///    `1.25 (h / (target mean))^2`, and at least twice it.
    ///
    /// Looking at planned, at least doubling lengths (a handful of looks from the minimum
    /// window to `max_cycles`) instead of at every batch boundary keeps the sequential
    /// bias small: a run whose batch means happen to agree for a while cannot stop at that
    /// moment, only at the next planned look, and most of its data are then new.
    fn planned_looks(&mut self, elapsed: u64, target: f64, plan: &RunPlan) -> bool {
        let next = self.planned_window.unwrap_or(plan.cycles);
        let length = self.batches.length();
        if elapsed < next || !elapsed.is_multiple_of(length) {
            return false;
        }
        let complete = self.batches.complete(elapsed);
        if (complete as u64) * length < next {
            return false;
        }
        let factor = match self.batches.latency(complete) {
            Some(e) if e.independent && e.batch_half <= target * e.mean => return true,
            Some(e) if e.mean > 0.0 => {
                let ratio = e.batch_half / (target * e.mean);
                (1.25 * ratio * ratio).max(2.0)
            }
            _ => 2.0,
        };
        let planned = ((elapsed as f64 * factor).ceil() as u64).div_ceil(length) * length;
        self.planned_window = Some(planned);
        false
    }

    /// Starts the measurement window at the current cycle.
    pub(crate) fn open_window(&mut self) {
        self.window.open = true;
        self.window.start = self.now;
        self.ch_since.fill(self.now);
        self.count_ejections_in_progress(true);
    }

    /// Throughput mode: tells the tracker how far the ejections in progress are when the window
    /// opens or closes (per-node flit counts without per-flit work).
    fn count_ejections_in_progress(&mut self, opening: bool) {
        if let Some(t) = &mut self.throughput {
            for &vc in &self.ejecting {
                let message = &self.messages[self.vc_owner[vc as usize] as usize];
                t.ejection_in_progress(message.dest, message.delivered, opening);
            }
        }
    }

    pub(crate) fn close_window(&mut self) {
        let now = self.now;
        for ch in 0..self.ch_busy.len() {
            if self.geometry.downstream(ch as u32) != NO_LINK {
                let busy = self.ch_busy[ch].count_ones() as usize;
                self.window.busy_time[busy] += now - self.ch_since[ch];
            }
        }
        self.count_ejections_in_progress(false);
        self.window.open = false;
        self.window.end = Some(now);
    }

    /// Simulates one cycle; returns whether any flit moved (or, with a separate header, the
    /// header moved or an acknowledgement, teardown or back-off is under way).
    pub(crate) fn step(&mut self) -> bool {
        match self.switching.kind {
            WORMHOLE => self.step_with::<WORMHOLE>(),
            SCOUTING => self.step_with::<SCOUTING>(),
            _ => self.step_with::<CIRCUIT>(),
        }
    }

    /// One cycle of switching technique `S` (monomorphised: the wormhole loop has no trace of
    /// the others).
    fn step_with<const S: u8>(&mut self) -> bool {
        self.generate();
        self.route::<S>();
        // `injection: channel`: the sources choose what they feed their routers' local
        // ports this cycle (`source`); it enters the buffers after the traversal.
        let fed = self.source.is_some() && self.feed();
        let mut moved = match (self.walk, self.timing.is_some()) {
            (ALLOC, timed) => match timed {
                false => self.traverse_allocated::<S, false>(),
                true => self.traverse_allocated::<S, true>() | self.advance_timing(),
            },
            (PORTS, false) => self.traverse::<S, PORTS, false>(),
            (BITMAP, false) => self.traverse::<S, BITMAP, false>(),
            (_, false) => self.traverse::<S, ACTIVE, false>(),
            (PORTS, true) => self.traverse::<S, PORTS, true>() | self.advance_timing(),
            (BITMAP, true) => self.traverse::<S, BITMAP, true>() | self.advance_timing(),
            (_, true) => self.traverse::<S, ACTIVE, true>() | self.advance_timing(),
        };
        if fed {
            self.feed_due();
            moved = true;
        }
        if S != WORMHOLE {
            moved |=
                std::mem::take(&mut self.switching.moved) || self.switching.busy_until > self.now;
        }
        self.now += 1;
        moved
    }

    /// Traversal with the separable switch allocator (`allocator`), kept out of line so that
    /// `step_with` inlines the other walks as it did before the allocator existed (inlined,
    /// the two extra arms cost the default engine 1-3% more instructions, callgrind).
    #[inline(never)]
    fn traverse_allocated<const S: u8, const T: bool>(&mut self) -> bool {
        self.traverse::<S, ALLOC, T>()
    }

    /// Mean number of messages per node waiting in source queues.
    pub(crate) fn backlog_per_node(&self) -> f64 {
        self.queued as f64 / f64::from(self.geometry.nodes)
    }
}
