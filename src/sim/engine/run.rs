//! The run: warm-up, measurement window and drain with their stopping rules (saturation,
//! deadlock, precision, cancellation), and one cycle's phases in order (`step`).

use super::super::network::hop::NO_LINK;
use super::switching::{CIRCUIT, SCOUTING, WORMHOLE};
use super::{ACTIVE, BITMAP, Engine, Outcome, PORTS, RunPlan};

impl Engine {
    /// Runs warm-up, window and drain; `progress` is called every 4096 cycles.
    pub(crate) fn run(
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
                        let precise = elapsed > 0
                            && elapsed.is_multiple_of(self.batches.length())
                            && self.precise_enough(elapsed, target, plan);
                        if now >= planned && !precise {
                            self.stopped_short = Some((target, planned));
                        }
                        precise || now >= planned
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
        match self.batches.trend(self.batches.len()) {
            Some(trend) if trend.unstable() => Outcome::Saturated(format!(
                "the latency grew steadily over the measurement window, from {:.0} to {:.0} \
                 cycles ({:.3} cycles per cycle, t = {:.1}): the source queues keep growing, \
                 the offered load exceeds what the network accepts",
                trend.first, trend.last, trend.slope, trend.t
            )),
            _ => match self.stopped_short {
                Some((target, max_cycles)) => {
                    let reached = match self.batches.confidence(self.batches.len()) {
                        Some((mean, half, _)) if mean > 0.0 => format!(
                            "the 95% half-width was {:.2}% of the mean latency",
                            100.0 * half / mean
                        ),
                        _ => "fewer than 2 batches held a delivered message".to_string(),
                    };
                    Outcome::Imprecise(format!(
                        "stopped at max_cycles = {max_cycles} short of target_precision \
                         {target}: {reached}"
                    ))
                }
                None => Outcome::Ok,
            },
        }
    }

    /// Precision mode's stopping rule: at least `plan.cycles` measured, at least
    /// `plan.batches` complete batches holding a message, and a 95% half-width of at most
    /// `target` times the mean. The minimum window keeps a lucky early run of small batch
    /// means from stopping a heavily loaded point after a few correlated batches.
    fn precise_enough(&self, elapsed: u64, target: f64, plan: &RunPlan) -> bool {
        if elapsed < plan.cycles {
            return false;
        }
        let complete = self.batches.complete(elapsed);
        match self.batches.confidence(complete) {
            Some((mean, half, used)) => used as u64 >= plan.batches && half <= target * mean,
            None => false,
        }
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

    fn close_window(&mut self) {
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
        let mut moved = match (self.speedup.is_some(), self.walk_bitmap) {
            (true, _) => self.traverse::<S, PORTS>(),
            (false, true) => self.traverse::<S, BITMAP>(),
            (false, false) => self.traverse::<S, ACTIVE>(),
        };
        if S != WORMHOLE {
            moved |=
                std::mem::take(&mut self.switching.moved) || self.switching.busy_until > self.now;
        }
        self.now += 1;
        moved
    }

    /// Mean number of messages per node waiting in source queues.
    pub(crate) fn backlog_per_node(&self) -> f64 {
        self.queued as f64 / f64::from(self.geometry.nodes)
    }
}
