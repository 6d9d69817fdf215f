//! Circuit switching (the model of Safaei et al., "Performance modeling of fault-tolerant
//! circuit-switched communication networks", PARELEC 2006, Section 3.1): probe, acknowledgement,
//! streaming, teardown and retry.
//!
//! - **Set-up.** The probe reserves one VC per hop, one hop per cycle (plus `router_delay`),
//!   chosen at random among the free VCs of the minimal outputs the routing allows (the engine's
//!   own routing step, so a fault filter applies). At the destination it takes the ejection port
//!   (with `ejection: single` it waits for it, holding the circuit: the paper consumes messages
//!   on arrival, `ejection: unlimited`); that completes the circuit.
//! - **Acknowledgement.** From the cycle `E` the ejection port is granted, an acknowledgement
//!   returns to the source over the `H` reserved channels, one hop per cycle: the data may
//!   enter position `p` from cycle `E + H - p + 1`. The data then streams at one flit per
//!   cycle, and each channel is released as the tail leaves it (the engine's `release`).
//! - **The source.** A message holds its injection VC from its first attempt until its tail
//!   leaves the source (the model's service time `T_n` covers the whole set-up); `t_n` is
//!   measured as exactly that holding time.
//! - **Blocking at hop j** (every candidate VC busy, or no candidate: `j - 1` channels held):
//!   a release signal tears the partial path down to the source, freeing one channel per cycle,
//!   starting with the last one in the blocking cycle; the attempt that began at `g` is back at
//!   the source at the end of `g + 2(j - 1) - 1` and retries `circuit_backoff` cycles later
//!   (default 0: at once, the paper's `T_Fj = 2(j - 1)`). Blocked at the first hop, it retries
//!   in the next cycle (plus the back-off).
//! - **Retry limit.** After `circuit_retry_limit` retries (default
//!   [`super::DEFAULT_RETRY_LIMIT`]) one more failure drops the message: it leaves the network,
//!   counted in `drops` and named in the row's detail; it is never retried forever.
//!
//! Measured: `p_s` (fraction of attempts that set up a circuit), `p_f`, `p_f_j` (fraction of
//! attempts that failed at hop j, the model's `P_Fj`), `retries_per_message`,
//! `teardown_hops_per_message`, `ack_hops_per_message`, `mean_c00` (probe's cycles from the
//! source's injection VC to its last successful arrival at the destination) and `setup_time`
//! (network latency minus M).
//!
//! # Exact zero-load latency
//!
//! A lone message over `H` hops, length `M`, router delay `d`: the probe is granted position
//! `j` at `R_j = g + (j - 1)(1 + d)`, reaches the destination at the end of `R_H` and takes the
//! ejection port at `E = R_H + 1 + d = g + H(1 + d)`. The first data flit enters position 1 at
//! `E + H` and crosses `H` links, ejection starts at `E + 2H` and the tail is ejected `M - 1`
//! cycles later: latency `H(3 + d) + M`. With `d = 0` that is the model's `M + 3d` (errata
//! E-CS-8) for a path of `H` hops: here the ejection cycle coincides with the probe's routing
//! step at the destination, so there is no extra cycle.

use super::{Engine, Pending};

/// `Engine::step_with` parameter of circuit switching.
pub(in crate::sim::engine) const CIRCUIT: u8 = 2;

impl Engine {
    /// The probe of message `id`, in `vc` at the destination, has the ejection port: the
    /// acknowledgement opens the whole circuit.
    pub(super) fn circuit_up(&mut self, id: u32, vc: u32) {
        let now = self.now;
        let reserved = self.switching.probes[id as usize].reserved;
        let mut at = vc;
        for p in (1..=reserved).rev() {
            self.switching.gate[at as usize] = now + u64::from(reserved - p) + 1;
            at = self.vc_src[at as usize];
        }
        self.switching.schedule(now + u64::from(reserved));
        if self.messages[id as usize].measured {
            let c = &mut self.switching.counts;
            c.circuits += 1;
            c.ack_hops += u64::from(reserved);
        }
    }

    /// The tail of message `id` left its injection VC in this cycle: the source's service
    /// time (the model's `T_n`) ends.
    pub(in crate::sim::engine) fn source_released(&mut self, id: u32) {
        let message = &self.messages[id as usize];
        if message.measured {
            self.switching.counts.source_service += self.now + 1 - message.injected;
        }
    }

    /// The probe of message `id` in `p.vc` (not at the destination) found no free VC: the
    /// attempt failed at hop `reserved + 1`.
    pub(super) fn circuit_blocked(&mut self, id: u32, p: Pending) -> Option<Pending> {
        let probe = &mut self.switching.probes[id as usize];
        let hop = probe.reserved as usize;
        probe.failures += 1;
        let measured = self.messages[id as usize].measured;
        if measured && let Some(f) = self.switching.counts.failures_at.get_mut(hop) {
            *f += 1;
        }
        if hop == 0 {
            return self.attempt_failed(id, p.vc);
        }
        self.switching.probes[id as usize].teardown = true;
        self.tear_down_hop(id, p.vc)
    }

    /// One cycle of teardown: the release signal frees the channel in `vc` and moves back.
    pub(super) fn tear_down_hop(&mut self, id: u32, vc: u32) -> Option<Pending> {
        let prev = self.unreserve(vc);
        self.switching.probes[id as usize].reserved -= 1;
        let message = &mut self.messages[id as usize];
        message.head_vc = prev;
        if message.measured {
            self.switching.counts.teardown_hops += 1;
        }
        if prev >= self.network_vcs {
            self.switching.probes[id as usize].teardown = false;
            return self.attempt_failed(id, prev);
        }
        let ready = self.now + 1;
        self.switching.schedule(ready);
        Some(Pending::new(prev, ready))
    }

    /// The probe of message `id` is back at the source, in injection VC `vc`, after a failed
    /// attempt: retry after the back-off, or drop the message past the retry limit.
    fn attempt_failed(&mut self, id: u32, vc: u32) -> Option<Pending> {
        let probe = &mut self.switching.probes[id as usize];
        if probe.failures > self.switching.retry_limit {
            self.drop_message(id, vc);
            return None;
        }
        probe.furthest = 0;
        // The routing state restarts with the route (Nbc's escape level is 0 at the source).
        self.messages[id as usize].level = 0;
        let ready = self.now + 1 + self.switching.backoff;
        self.switching.schedule(ready);
        Some(Pending::new(vc, ready))
    }
}
