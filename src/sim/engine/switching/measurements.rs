//! What the separate header measures: the switching techniques' counters and the
//! intermediates they become, under the SS and CS models' keys where the quantity corresponds.

use crate::measurement::{Measurement, Status};

use super::{Engine, SCOUTING, WORMHOLE};

/// Counters over messages generated in the measurement window (and drops in the window).
#[derive(Clone, Debug, Default)]
pub(crate) struct Counts {
    /// Headers that reached their destination, and the cycles they took from the source.
    pub(super) arrivals: u64,
    pub(super) travel: u64,
    /// Scouting: backtracks (negative acknowledgements); both: positive acknowledgement hops.
    pub(super) backtracks: u64,
    pub(super) ack_hops: u64,
    /// Circuit: circuits set up, failed attempts by hop index j - 1, teardown hops.
    pub(super) circuits: u64,
    pub(super) failures_at: Vec<u64>,
    pub(super) teardown_hops: u64,
    /// Circuit: cycles the delivered messages held their injection VC.
    pub(super) source_service: u64,
    /// First routing attempts of a header after i hops, and those that were blocked.
    pub(super) requests_at: Vec<u64>,
    pub(super) blocked_at: Vec<u64>,
    /// Messages dropped (retry limit), generated in the window.
    pub(super) dropped: u64,
}

impl Engine {
    /// Messages dropped among those generated in the measurement window.
    pub(crate) fn dropped_measured(&self) -> u64 {
        self.switching.counts.dropped
    }

    /// Adds the switching technique's measurements to `m` (nothing for wormhole, so its
    /// results stay identical); `delivered` is the number of delivered measured messages.
    pub(crate) fn add_switching_measurements(&self, m: &mut Measurement, delivered: u64) {
        let kind = self.switching.kind;
        if kind == WORMHOLE {
            return;
        }
        let c = &self.switching.counts;
        let per = |x: u64| if delivered > 0 { x as f64 / delivered as f64 } else { 0.0 };
        let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
        let mut add = |key: String, value: f64| m.intermediates.push((key, value));
        if let Some(p_v) = m.blocking_probability {
            add("p_v".into(), p_v);
        }
        if let Some(v_bar) = m.multiplexing_degree {
            add("v_bar".into(), v_bar);
        }
        add("mean_c00".into(), ratio(c.travel, c.arrivals));
        if let (Some(network), true) = (m.network_latency, delivered > 0) {
            // The mean length of the measured messages (exactly M for fixed lengths).
            add("setup_time".into(), network - self.window.length_sum / delivered as f64);
        }
        add("ack_hops_per_message".into(), per(c.ack_hops));
        if kind == SCOUTING {
            add("backtracks_per_message".into(), per(c.backtracks));
        } else {
            let failures: u64 = c.failures_at.iter().sum();
            let attempts = failures + c.circuits;
            add("p_s".into(), ratio(c.circuits, attempts));
            add("p_f".into(), ratio(failures, attempts));
            add("retries_per_message".into(), per(failures));
            add("teardown_hops_per_message".into(), per(c.teardown_hops));
            add("t_n".into(), per(c.source_service));
            for (j, &f) in c.failures_at.iter().enumerate() {
                add(format!("p_f_{}", j + 1), ratio(f, attempts));
            }
        }
        add("drops".into(), c.dropped as f64);
        for (i, (&blocked, &requests)) in c.blocked_at.iter().zip(&c.requests_at).enumerate() {
            if requests > 0 {
                add(format!("pb_{i}"), ratio(blocked, requests));
            }
        }
        if c.dropped > 0 && matches!(m.status, Status::Ok | Status::Imprecise) {
            let note = format!(
                "{} messages generated in the measurement window were dropped after \
                 circuit_retry_limit = {} failed retries (not in the latency)",
                c.dropped, self.switching.retry_limit
            );
            m.detail = Some(match m.detail.take() {
                Some(detail) => format!("{detail}; {note}"),
                None => note,
            });
        }
    }
}

#[cfg(test)]
impl Counts {
    /// Failed circuit set-up attempts.
    pub(crate) fn failed(&self) -> u64 {
        self.failures_at.iter().sum()
    }

    /// Scouting backtracks.
    pub(crate) fn backtracked(&self) -> u64 {
        self.backtracks
    }
}
