//! The separable switch allocator (`switch_allocator: islip`): phase A of `traverse` as a
//! router with a real allocator does it, losing matches under load.
//!
//! By default (`greedy`) each output channel serves its VCs round-robin and passes over a VC
//! whose input port has no slot left to its next one, so every output that can be served is
//! (a maximal matching). A separable allocator decides in two arbitration steps that do not
//! see each other's choices, which is what a router built in a cycle's logic can do:
//! - **requests**: every VC that can send (its oldest flit has arrived, the downstream buffer
//!   has room, its header's allocation is over) asks for its output on behalf of its input
//!   port; of one input's VCs asking for one output, only the first in round-robin order from
//!   the input's VC pointer is kept (BookSim's `_SWAllocAddReq`);
//! - **grant**: every output grants one requesting input, the first in round-robin order from
//!   its grant pointer;
//! - **accept**: every input accepts one of its grants, the first in round-robin order from
//!   its accept pointer; on an acceptance in the first iteration the output's grant pointer
//!   moves past the input and the input's accept pointer past the output (iSLIP, McKeown,
//!   "The iSLIP scheduling algorithm for input-queued switches", IEEE/ACM ToN 7(2), 1999), and
//!   the input's VC pointer past the VC sent;
//! - further iterations (`switch_allocator_iterations`) repeat grant and accept among the
//!   inputs and outputs still unmatched.
//!
//! An input whose grants all went to other inputs' accepted outputs sends nothing this cycle,
//! although one of its other VCs could have used a free output: the matching inefficiency.
//! The inputs are the input ports (the VCs of one incoming channel, or a node's injection
//! VCs), each split into `input_speedup` inputs by VC (`vc % s`, as BookSim expands them; an
//! unset input speedup makes every VC its own input, an injection channel makes a node's
//! injection VCs one input). The outputs are the channels and each node's ejection port (one
//! flit per cycle, so interleaved ejection only). Pointers order inputs and outputs by their
//! ids; a round-robin over a router's ports in a fixed order is a round-robin all the same.
//! Matched moves are emitted in `active` order, so phase B applies them as the `active` walk
//! does; a matched ejection becomes its node's pick (`eject_pick`).
//!
//! With one iteration (BookSim's default) the grant is folded into the walk
//! (`allocate_once`): an output's grant is decided as its requests are found, so nothing per
//! request is stored; more iterations go through the full request list (`allocate`), and a
//! test holds the two to the same results bit for bit.

use super::{Engine, NONE, before, past};

/// One request: `input` asks for `output` to send the flit of VC `src` (into output VC `out`
/// for a channel, `NONE` for an ejection port).
#[derive(Clone, Copy, Debug)]
struct Request {
    output: u32,
    input: u32,
    src: u32,
    out: u32,
    /// `src % V`, the VC the input's round-robin orders.
    vc: u32,
}

/// The allocator's pointers and this cycle's scratch space (nothing grows after warm-up).
pub(super) struct Allocator {
    /// Inputs per input port (the input speedup, or V when unlimited).
    speedup: u32,
    iterations: u32,
    /// Channel slots: outputs `0..slots` are channels, `slots + node` a node's ejection port.
    slots: u32,
    /// Per output: the input the grant arbiter considers first.
    grant_ptr: Vec<u32>,
    /// Per input: the output the accept arbiter considers first, and the VC (`src % V`) the
    /// request arbiter considers first. The grant and accept pointers may be one past the
    /// last id (`allocate_once` does not wrap them), which orders the ids as 0 does.
    accept_ptr: Vec<u32>,
    vc_ptr: Vec<u32>,
    /// Per input and per output: the output or input matched this cycle, or `NONE`.
    input_match: Vec<u32>,
    output_match: Vec<u32>,
    /// Per output / input: the best request granted / accepted in this iteration (an index
    /// into `requests`), or `NONE`; the ids set are in `granted` / `accepted`.
    best_grant: Vec<u32>,
    best_accept: Vec<u32>,
    granted: Vec<u32>,
    accepted: Vec<u32>,
    /// Per input: the index of its ejection request this cycle, or `NONE`.
    eject_request: Vec<u32>,
    /// Per VC (network VCs, then injection VCs): the input it sends from, its port split by
    /// VC into the port's inputs.
    input_of: Vec<u32>,
    /// Per VC: its index in its channel or node (`vc % V`, kept to spare a division).
    vc_of: Vec<u8>,
    requests: Vec<Request>,
    /// One iteration's grants (`allocate_once`): room for one per active channel and per
    /// ejecting VC, grown as needed; this cycle's are the first ones.
    grants: Vec<Request>,
    /// Runs one iteration through the full request list (`allocate`) rather than the folded
    /// grant (`allocate_once`): more than one iteration, or a test comparing the two.
    pub(super) all_requests: bool,
}

impl Allocator {
    /// The allocator of a network with `slots` channel slots, `nodes` nodes and `v` VCs per
    /// channel.
    pub(super) fn new(
        slots: u32,
        nodes: u32,
        v: u32,
        speedup: Option<u32>,
        injection_channel: bool,
        iterations: u32,
    ) -> Allocator {
        let speedup = speedup.unwrap_or(v).clamp(1, v);
        let inputs = ((slots + nodes) * speedup) as usize;
        let outputs = (slots + nodes) as usize;
        let injection_speedup = if injection_channel { 1 } else { speedup };
        let input_of = (0..(slots + nodes) * v)
            .map(|vc| {
                let port = vc / v;
                let split = if port >= slots { injection_speedup } else { speedup };
                port * speedup + (vc % v) % split
            })
            .collect();
        Allocator {
            speedup,
            iterations: iterations.max(1),
            slots,
            grant_ptr: vec![0; outputs],
            accept_ptr: vec![0; inputs],
            vc_ptr: vec![0; inputs],
            input_match: vec![NONE; inputs],
            output_match: vec![NONE; outputs],
            best_grant: vec![NONE; outputs],
            best_accept: vec![NONE; inputs],
            granted: Vec::new(),
            accepted: Vec::new(),
            eject_request: vec![NONE; inputs],
            input_of,
            vc_of: (0..(slots + nodes) * v).map(|vc| (vc % v) as u8).collect(),
            requests: Vec::new(),
            grants: Vec::new(),
            all_requests: iterations > 1,
        }
    }

    /// One request of `input` for `output`, kept only if its VC comes first in the input's
    /// round-robin order among the input's requests for that output (`same`: the index of the
    /// input's earlier request for the output, if any).
    fn request(&mut self, request: Request, same: Option<usize>) {
        match same {
            Some(k) => {
                let ptr = self.vc_ptr[request.input as usize];
                if before(request.vc, self.requests[k].vc, ptr) {
                    self.requests[k] = request;
                }
            }
            None => self.requests.push(request),
        }
    }

    /// Grant and accept for `iterations` rounds over this cycle's requests; returns nothing,
    /// the matches are in `input_match` / `output_match`.
    fn allocate(&mut self, v: u32) {
        let inputs = self.accept_ptr.len() as u32;
        let outputs = self.grant_ptr.len() as u32;
        for iteration in 0..self.iterations {
            // Grant: each unmatched output picks the unmatched input first from its pointer
            // (in the first iteration nothing is matched yet).
            for (k, r) in self.requests.iter().enumerate() {
                let (o, i) = (r.output as usize, r.input as usize);
                if iteration > 0 && (self.output_match[o] != NONE || self.input_match[i] != NONE) {
                    continue;
                }
                let best = self.best_grant[o];
                if best == NONE {
                    self.granted.push(r.output);
                    self.best_grant[o] = k as u32;
                } else {
                    let ptr = self.grant_ptr[o];
                    let other = self.requests[best as usize].input;
                    if before(r.input, other, ptr) {
                        self.best_grant[o] = k as u32;
                    }
                }
            }
            if self.granted.is_empty() {
                break;
            }
            // Accept: each input picks the grant first from its pointer.
            for &o in &self.granted {
                let k = std::mem::replace(&mut self.best_grant[o as usize], NONE);
                let i = self.requests[k as usize].input as usize;
                let best = self.best_accept[i];
                if best == NONE {
                    self.accepted.push(i as u32);
                    self.best_accept[i] = k;
                } else {
                    let ptr = self.accept_ptr[i];
                    let other = self.requests[best as usize].output;
                    if before(o, other, ptr) {
                        self.best_accept[i] = k;
                    }
                }
            }
            self.granted.clear();
            for &i in &self.accepted {
                let k = std::mem::replace(&mut self.best_accept[i as usize], NONE);
                let r = self.requests[k as usize];
                self.input_match[i as usize] = r.output;
                self.output_match[r.output as usize] = i;
                if iteration == 0 {
                    self.grant_ptr[r.output as usize] = past(i, inputs);
                    self.accept_ptr[i as usize] = past(r.output, outputs);
                }
                let next = r.vc + self.speedup;
                self.vc_ptr[i as usize] = if next >= v { next - v } else { next };
            }
            self.accepted.clear();
        }
    }
}

impl Engine {
    /// Phase A with the separable allocator: requests from every active channel (in `active`
    /// order) and every ejecting VC that can send, `iterations` rounds of grant and accept,
    /// then the matched moves into `moves[..n_moves]` in `active` order and the matched
    /// ejections into each node's pick. `T`: links or credits take more than one cycle.
    pub(super) fn allocate_switch<const S: u8, const T: bool>(&mut self) {
        let Some(mut alloc) = self.allocator.take() else {
            return;
        };
        if !alloc.all_requests {
            self.allocate_once::<S, T>(&mut alloc);
            self.allocator = Some(alloc);
            return;
        }
        let v = self.v;
        let sendable = self.sendable::<T>();
        alloc.requests.clear();
        for k in 0..self.active.len() {
            let channel = self.active[k];
            let first = alloc.requests.len();
            let mut busy = self.ch_busy[channel as usize];
            while busy != 0 {
                let vv = busy.trailing_zeros();
                busy &= busy - 1;
                let out = channel * v + vv;
                let Some(src) = sendable.source::<S, T>(out as usize) else { continue };
                let input = alloc.input_of[src as usize];
                let vc = u32::from(alloc.vc_of[src as usize]);
                let same =
                    (first..alloc.requests.len()).find(|&j| alloc.requests[j].input == input);
                alloc.request(Request { output: channel, input, src, out, vc }, same);
            }
        }
        let ejections = alloc.requests.len();
        for k in 0..self.ejecting.len() {
            let Some(request) = self.ejection_request::<T>(&alloc, self.ejecting[k]) else {
                continue;
            };
            let same = alloc.eject_request[request.input as usize];
            if same == NONE {
                alloc.eject_request[request.input as usize] = alloc.requests.len() as u32;
            }
            alloc.request(request, (same != NONE).then_some(same as usize));
        }
        alloc.allocate(v);
        let mut n = 0;
        for k in 0..alloc.requests.len() {
            let r = alloc.requests[k];
            if k >= ejections {
                alloc.eject_request[r.input as usize] = NONE;
            }
            if alloc.input_match[r.input as usize] != r.output {
                continue;
            }
            alloc.input_match[r.input as usize] = NONE;
            alloc.output_match[r.output as usize] = NONE;
            if k < ejections {
                self.moves[n] = u64::from(r.out);
                n += 1;
            } else {
                let node = r.output - alloc.slots;
                self.eject_pick[node as usize] = r.src;
                self.eject_picked.push(node);
            }
        }
        self.n_moves = n;
        self.allocator = Some(alloc);
    }

    /// One iteration of grant and accept (BookSim's `alloc_iters = 1`), with the grant folded
    /// into the walk: an output's grant goes to the input first from its grant pointer, and of
    /// that input's VCs asking for it, to the first from the input's VC pointer (the request
    /// the full list would keep), so each active channel yields at most one grant and nothing
    /// per request is stored. The matches, pointers and emitted moves are those of the full
    /// allocation (`allocate`) exactly; a test runs both.
    fn allocate_once<const S: u8, const T: bool>(&mut self, alloc: &mut Allocator) {
        let v = self.v;
        let sendable = self.sendable::<T>();
        // Room for a grant per active channel and per ejecting VC, made when it grows: the
        // grants are written by index with their count in a register (pushed, each `Vec`'s
        // length went through memory per grant, and the engine's vectors were reloaded
        // after each store).
        let room = self.active.len() + self.ejecting.len();
        if alloc.grants.len() < room {
            alloc.grants.resize(room, Request { output: 0, input: NONE, src: 0, out: 0, vc: 0 });
        }
        let active: &[u32] = &self.active;
        let ch_busy: &[u64] = &self.ch_busy;
        let Allocator {
            grant_ptr, vc_ptr, input_of, vc_of, grants, best_accept, accept_ptr, ..
        } = alloc;
        // `input_of` and `vc_of` cut to the length of `vc_src`, which they equal, so that the
        // bounds check of a source VC in `Sendable::source` covers them too.
        let vcs = self.vc_src.len();
        let (grant_ptr, vc_ptr, input_of, vc_of): (&[u32], &[u32], &[u32], &[u8]) =
            (grant_ptr, vc_ptr, &input_of[..vcs], &vc_of[..vcs]);
        let grants: &mut [Request] = grants;
        let best_accept: &mut [u32] = best_accept;
        let accept_ptr: &[u32] = accept_ptr;
        let mut n_grants = 0;
        for &channel in active {
            let ptr = grant_ptr[channel as usize];
            let mut best = Request { output: channel, input: NONE, src: 0, out: 0, vc: 0 };
            let mut busy = ch_busy[channel as usize];
            let base = channel * v;
            while busy != 0 {
                let out = base + busy.trailing_zeros();
                busy &= busy - 1;
                let Some(src) = sendable.source::<S, T>(out as usize) else { continue };
                let (input, vc) = (input_of[src as usize], u32::from(vc_of[src as usize]));
                if best.input == NONE
                    || before(input, best.input, ptr)
                    || (input == best.input && before(vc, best.vc, vc_ptr[input as usize]))
                {
                    best = Request { output: channel, input, src, out, vc };
                }
            }
            if best.input != NONE {
                // Accept, as the grant is made: the input takes the grant first from its
                // accept pointer (each output grants once, so the order the grants come in
                // does not matter); the ejections' grants are final only after their loop.
                let i = best.input as usize;
                let taken = best_accept[i];
                if taken == NONE || before(channel, grants[taken as usize].output, accept_ptr[i]) {
                    best_accept[i] = n_grants as u32;
                }
                grants[n_grants] = best;
                n_grants += 1;
            }
        }
        let channel_grants = n_grants;
        // Ejection ports: the best request of each node's so far is at `best_grant[output]`.
        for k in 0..self.ejecting.len() {
            let Some(request) = self.ejection_request::<T>(alloc, self.ejecting[k]) else {
                continue;
            };
            let (input, output) = (request.input, request.output);
            match alloc.best_grant[output as usize] {
                NONE => {
                    alloc.best_grant[output as usize] = n_grants as u32;
                    alloc.grants[n_grants] = request;
                    n_grants += 1;
                }
                k => {
                    let best = alloc.grants[k as usize];
                    let ptr = alloc.grant_ptr[output as usize];
                    if before(input, best.input, ptr)
                        || (input == best.input
                            && before(request.vc, best.vc, alloc.vc_ptr[input as usize]))
                    {
                        alloc.grants[k as usize] = request;
                    }
                }
            }
        }
        let Allocator {
            speedup,
            slots,
            grant_ptr,
            accept_ptr,
            vc_ptr,
            best_grant,
            best_accept,
            grants,
            ..
        } = alloc;
        let (speedup, slots) = (*speedup, *slots);
        // Slices, taken once: a store through a `Vec` could alias the `Vec`s' own fields as
        // far as the compiler can tell, so it reloaded their addresses after every store.
        let grants: &[Request] = &grants[..n_grants];
        let best_accept: &mut [u32] = best_accept;
        let best_grant: &mut [u32] = best_grant;
        let grant_ptr: &mut [u32] = grant_ptr;
        let accept_ptr: &mut [u32] = accept_ptr;
        let vc_ptr: &mut [u32] = vc_ptr;
        let eject_pick: &mut [u32] = &mut self.eject_pick;
        // Accept the ejections' grants: each input takes the grant first from its accept
        // pointer (the channels' were taken as they were made).
        for (k, r) in grants.iter().enumerate().skip(channel_grants) {
            let i = r.input as usize;
            let best = best_accept[i];
            if best == NONE || before(r.output, grants[best as usize].output, accept_ptr[i]) {
                best_accept[i] = k as u32;
            }
        }
        // The accepted grants, channels in `active` order, then the ejections; the pointers
        // move past them (each input and output is matched once, so in any order). Two
        // loops, so that the channels' holds none of the ejections' vectors in its registers.
        let mut accepted = |k: usize, r: &Request| {
            let i = r.input as usize;
            if best_accept[i] != k as u32 {
                return false;
            }
            best_accept[i] = NONE;
            // Past the input and the output, unwrapped: a pointer one past the last id orders
            // the ids as 0 does (`before` compares differences that wrap).
            grant_ptr[r.output as usize] = r.input + 1;
            accept_ptr[i] = r.output + 1;
            let next = r.vc + speedup;
            vc_ptr[i] = if next >= v { next - v } else { next };
            true
        };
        let mut n = 0;
        let moves: &mut [u64] = &mut self.moves;
        for (k, r) in grants[..channel_grants].iter().enumerate() {
            if accepted(k, r) {
                moves[n] = u64::from(r.out);
                n += 1;
            }
        }
        self.n_moves = n;
        for (k, r) in grants.iter().enumerate().skip(channel_grants) {
            best_grant[r.output as usize] = NONE;
            if accepted(k, r) {
                let node = r.output - slots;
                eject_pick[node as usize] = r.src;
                self.eject_picked.push(node);
            }
        }
    }

    /// The request of ejecting VC `vc` for its node's ejection port, if it can eject a flit
    /// this cycle (`can_eject`).
    #[inline(always)]
    fn ejection_request<const T: bool>(&self, alloc: &Allocator, vc: u32) -> Option<Request> {
        self.can_eject::<T>(vc).then(|| Request {
            output: alloc.slots + self.node_of(vc),
            input: alloc.input_of[vc as usize],
            src: vc,
            out: NONE,
            vc: u32::from(alloc.vc_of[vc as usize]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An allocator of two inputs and two outputs (one channel slot and one node, one VC, an
    /// input speedup of 1), with `requests` as (input, output) pairs.
    fn round(alloc: &mut Allocator, requests: &[(u32, u32)]) -> Vec<(u32, u32)> {
        alloc.requests.clear();
        for &(input, output) in requests {
            alloc.requests.push(Request { output, input, src: input, out: NONE, vc: 0 });
        }
        alloc.allocate(1);
        let matches: Vec<(u32, u32)> = (0..2)
            .filter(|&i| alloc.input_match[i as usize] != NONE)
            .map(|i| (i, alloc.input_match[i as usize]))
            .collect();
        for &(i, o) in &matches {
            alloc.input_match[i as usize] = NONE;
            alloc.output_match[o as usize] = NONE;
        }
        matches
    }

    /// Both inputs want both outputs. In the first cycle both outputs grant input 0, which
    /// accepts output 0: one match of two (the separable allocator's inefficiency); a second
    /// iteration finds the other. The pointers then desynchronise the outputs, and from the
    /// next cycle on one iteration matches both (iSLIP's property).
    #[test]
    fn islip_loses_a_match_then_desynchronises() {
        let all = [(0, 0), (0, 1), (1, 0), (1, 1)];
        let mut one = Allocator::new(1, 1, 1, Some(1), false, 1);
        assert_eq!(round(&mut one, &all), vec![(0, 0)]);
        assert_eq!(round(&mut one, &all), vec![(0, 1), (1, 0)]);
        assert_eq!(round(&mut one, &all), vec![(0, 0), (1, 1)]);
        let mut two = Allocator::new(1, 1, 1, Some(1), false, 2);
        assert_eq!(round(&mut two, &all), vec![(0, 0), (1, 1)]);
        // A pointer moves only on an acceptance in the first iteration: output 1, matched in
        // the second, still grants input 0 first, and output 0 now input 1.
        assert_eq!((two.grant_ptr[0], two.grant_ptr[1]), (1, 0));
    }

    /// An input's VCs asking for one output make one request, the VC first in round-robin
    /// order from the input's VC pointer; a send moves the pointer past the VC.
    #[test]
    fn one_request_per_input_and_output_in_vc_round_robin_order() {
        let mut alloc = Allocator::new(1, 1, 4, Some(1), false, 1);
        alloc.vc_ptr[0] = 2;
        alloc.requests.clear();
        for src in [0, 1, 3] {
            let same = (!alloc.requests.is_empty()).then_some(0);
            alloc.request(Request { output: 0, input: 0, src, out: 10 + src, vc: src }, same);
        }
        assert_eq!(alloc.requests.len(), 1);
        assert_eq!(alloc.requests[0].src, 3);
        alloc.allocate(4);
        assert_eq!(alloc.input_match[0], 0);
        assert_eq!(alloc.vc_ptr[0], 0);
    }
}
