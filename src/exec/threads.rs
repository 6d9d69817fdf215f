//! How many threads a task runs on: one, or for a simulation of a large network, what
//! `methods.simulation.threads` asks or the run's own choice.
//!
//! A simulation of a large network under untimed wormhole or virtual cut-through switching can
//! run on several threads with the results of one thread, bit for bit
//! ([`crate::sim::uses_threads`]); every other task takes one. The pool counts a task's threads
//! as busy workers from its start to its end, so `-j N` never runs more than N threads.
//!
//! Left to the run, a task gets the idle workers in proportion to its estimated cost among
//! the ready tasks (its own and theirs, [`super::estimate`]), rounded: a spec with one large
//! network and a few quick model tasks gives the network every idle worker, a sweep of many
//! simulations gives each one thread as before, and two large networks on four idle workers
//! take two each. A task that would get more than one thread is asked whether it uses them
//! first, so that no worker is held for a thread that would never run.

/// The threads for a task that may use several, given `chosen` (the spec's
/// `methods.simulation.threads`; `None`: the run's choice), the `idle` workers (at least 1),
/// the task's estimated `cost` and the summed estimated cost of the `other` ready tasks, both
/// in seconds (a cost that is not finite is unknown: one thread). `uses_threads` says whether
/// the task would use more than one; it is asked only when the answer matters.
pub(crate) fn threads(
    chosen: Option<u32>,
    idle: usize,
    cost: f64,
    other: f64,
    uses_threads: impl FnOnce() -> bool,
) -> usize {
    let wanted = match chosen {
        Some(count) => usize::try_from(count).unwrap_or(usize::MAX),
        None if cost.is_finite() && cost > 0.0 && other.is_finite() => {
            (idle as f64 * cost / (cost + other.max(0.0))).round() as usize
        }
        None => 1,
    };
    match wanted.min(idle) {
        n if n > 1 && uses_threads() => n,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::threads;

    #[test]
    fn a_large_network_alone_takes_every_idle_worker_and_one_among_many_takes_one() {
        let yes = || true;
        // Alone, or beside quick model tasks: every idle worker.
        assert_eq!(threads(None, 16, 100.0, 0.0, yes), 16);
        assert_eq!(threads(None, 16, 100.0, 0.5, yes), 16);
        // Among many of its like: one each, as without threads.
        assert_eq!(threads(None, 2, 10.0, 90.0, yes), 1);
        assert_eq!(threads(None, 16, 10.0, 990.0, yes), 1);
        // Two alike on four idle workers: two each.
        assert_eq!(threads(None, 4, 10.0, 10.0, yes), 2);
        assert_eq!(threads(None, 2, 10.0, 0.0, yes), 2);
        // Ten alike on sixteen: two for the first (1.6 rounded).
        assert_eq!(threads(None, 16, 10.0, 90.0, yes), 2);
        // Unknown costs: one.
        assert_eq!(threads(None, 8, f64::NAN, 0.0, yes), 1);
        assert_eq!(threads(None, 8, 10.0, f64::INFINITY, yes), 1);
        assert_eq!(threads(None, 8, 0.0, 0.0, yes), 1);
    }

    #[test]
    fn the_spec_s_count_is_held_to_the_idle_workers() {
        let yes = || true;
        assert_eq!(threads(Some(4), 16, 1.0, 1000.0, yes), 4);
        assert_eq!(threads(Some(4), 3, 1.0, 0.0, yes), 3);
        assert_eq!(threads(Some(1), 16, 100.0, 0.0, yes), 1);
        assert_eq!(threads(Some(u32::MAX), 2, 1.0, 0.0, yes), 2);
    }

    #[test]
    fn a_task_that_cannot_use_threads_takes_one_and_is_asked_only_when_it_matters() {
        assert_eq!(threads(None, 16, 100.0, 0.0, || false), 1);
        assert_eq!(threads(Some(8), 16, 100.0, 0.0, || false), 1);
        // One idle worker, or a share of one: nothing to ask.
        let never = || panic!("asked needlessly");
        assert_eq!(threads(None, 1, 100.0, 0.0, never), 1);
        assert_eq!(threads(None, 4, 1.0, 100.0, never), 1);
        assert_eq!(threads(Some(1), 4, 1.0, 0.0, never), 1);
    }
}
