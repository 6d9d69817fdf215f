//! The separable VC allocator (`vc_allocator: islip`): the routing phase as a router with a
//! real VC allocator does it.
//!
//! By default (`sequential`) the waiting headers are routed one after another, oldest first,
//! each taking a free allowed output VC drawn at random, so a header never loses a VC that it
//! could have had to a conflict. BookSim's router allocates VCs with an iSLIP allocator over
//! all its waiting heads at once (McKeown, IEEE/ACM ToN 1999), which this reproduces:
//! - **requests**: every header whose routing delay has passed asks for every free VC the
//!   routing function allows it (its preferred VCs, or, when none of those is free, its
//!   fallback ones);
//! - **grant**: every output VC grants one requesting header, the first in round-robin order
//!   (by input VC id) from its grant pointer;
//! - **accept**: every header accepts one of its grants, the first in round-robin order (by
//!   output VC id) from its accept pointer; the pointers move past the match.
//!
//! A header whose grants all went to others waits a cycle, although another free VC was
//! there: the allocator's inefficiency, and no random draw decides a VC. Headers at their
//! destination take the ejection port as before. One iteration, BookSim's default.

use super::switching::WORMHOLE;
use super::{Engine, NONE, UNBLOCKED, before, past};

/// One request: the header waiting as `pending[index]` asks for the VCs in `mask` of
/// `channel`.
#[derive(Clone, Copy, Debug)]
struct Request {
    index: u32,
    channel: u32,
    mask: u64,
}

/// The allocator's pointers and this cycle's scratch space.
pub(super) struct Separable {
    /// Per network VC (an output): the input VC its grant arbiter considers first.
    grant_ptr: Vec<u32>,
    /// Per VC (an input): the output VC its accept arbiter considers first.
    accept_ptr: Vec<u32>,
    /// Per output VC: the request it grants this cycle, or `NONE`; the outputs set.
    best_grant: Vec<u32>,
    granted: Vec<u32>,
    /// Per input VC: the output VC it accepts this cycle (and the request), or `NONE`; the
    /// inputs set.
    best_accept: Vec<u32>,
    accept_request: Vec<u32>,
    accepted: Vec<u32>,
    requests: Vec<Request>,
    /// Per pending header considered this cycle: its routing state, and whether it is done
    /// (granted a VC or the ejection port).
    levels: Vec<u32>,
    done: Vec<bool>,
}

impl Separable {
    pub(super) fn new(network_vcs: usize, total_vcs: usize) -> Separable {
        Separable {
            grant_ptr: vec![0; network_vcs],
            accept_ptr: vec![0; total_vcs],
            best_grant: vec![NONE; network_vcs],
            granted: Vec::new(),
            best_accept: vec![NONE; total_vcs],
            accept_request: vec![NONE; total_vcs],
            accepted: Vec::new(),
            requests: Vec::new(),
            levels: Vec::new(),
            done: Vec::new(),
        }
    }
}

impl Engine {
    /// The routing phase with the separable VC allocator (wormhole switching): requests from
    /// every ready header, one round of grant and accept, the matches granted in the order
    /// the outputs were first requested, the rest left waiting in order.
    pub(super) fn route_separable(&mut self) {
        let Some(mut va) = self.vc_allocator.take() else {
            return;
        };
        let n = self.pending.len();
        va.requests.clear();
        va.levels.clear();
        va.levels.resize(n, NONE);
        va.done.clear();
        va.done.resize(n, false);
        for i in 0..n {
            let p = self.pending[i];
            if p.ready > self.now {
                continue;
            }
            // It would request nothing (`route`).
            if self.still_blocked(p) {
                continue;
            }
            let id = self.vc_owner[p.vc as usize];
            let header = self.messages[id as usize].header();
            let cur = self.node_of(p.vc);
            if cur == header.dest {
                va.done[i] = self.route_to_ejection(p.vc, cur);
                continue;
            }
            va.levels[i] = self.prepare_candidates::<WORMHOLE>(p.vc, id, cur, header);
            let base = self.geometry.first_channel(cur);
            let before = va.requests.len();
            for fallback in [false, true] {
                let first = va.requests.len();
                for c in &self.candidates {
                    let channel = base + c.port;
                    let allowed = if fallback { c.fallback } else { c.mask };
                    let free = allowed & !self.ch_busy[channel as usize];
                    if free != 0 {
                        va.requests.push(Request { index: i as u32, channel, mask: free });
                    }
                }
                if va.requests.len() > first {
                    break;
                }
            }
            self.pending[i].blocked = match va.requests.len() > before {
                true => UNBLOCKED,
                false => self.blocked_at(cur, id),
            };
        }
        // Grant: each requested output VC picks the input first from its pointer.
        for (k, r) in va.requests.iter().enumerate() {
            let input = self.pending[r.index as usize].vc;
            let mut bits = r.mask;
            while bits != 0 {
                let out = (r.channel * self.v + bits.trailing_zeros()) as usize;
                bits &= bits - 1;
                let best = va.best_grant[out];
                if best == NONE {
                    va.granted.push(out as u32);
                    va.best_grant[out] = k as u32;
                } else {
                    let other = self.pending[va.requests[best as usize].index as usize].vc;
                    if before(input, other, va.grant_ptr[out]) {
                        va.best_grant[out] = k as u32;
                    }
                }
            }
        }
        // Accept: each input picks the grant first from its pointer.
        for g in 0..va.granted.len() {
            let out = va.granted[g];
            let k = std::mem::replace(&mut va.best_grant[out as usize], NONE);
            let input = self.pending[va.requests[k as usize].index as usize].vc as usize;
            let best = va.best_accept[input];
            if best == NONE {
                va.accepted.push(input as u32);
            } else if !before(out, best, va.accept_ptr[input]) {
                continue;
            }
            va.best_accept[input] = out;
            va.accept_request[input] = k;
        }
        va.granted.clear();
        let (network_vcs, total_vcs) = (va.grant_ptr.len() as u32, va.accept_ptr.len() as u32);
        for a in 0..va.accepted.len() {
            let input = va.accepted[a] as usize;
            let out = std::mem::replace(&mut va.best_accept[input], NONE);
            let i = va.requests[va.accept_request[input] as usize].index as usize;
            va.grant_ptr[out as usize] = past(input as u32, total_vcs);
            va.accept_ptr[input] = past(out, network_vcs);
            let p = self.pending[i];
            let id = self.vc_owner[p.vc as usize];
            let cur = self.node_of(p.vc);
            let (channel, index) = self.per_channel.div_rem(out);
            self.grant_output(p, id, cur, channel, index, va.levels[i]);
            va.done[i] = true;
        }
        va.accepted.clear();
        let mut keep = 0;
        for i in 0..n {
            if !va.done[i] {
                self.pending[keep] = self.pending[i];
                keep += 1;
            }
        }
        self.pending.truncate(keep);
        self.vc_allocator = Some(va);
    }
}
