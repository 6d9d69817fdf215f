//! Test builds: the switching techniques' bookkeeping invariants (no VC leaks).

use super::{EJECT, Engine, NONE, WORMHOLE};

impl Engine {
    /// Test builds: no VC leaks. Every owned VC lies on its owner's chain from the header back
    /// (`vc_src`), every owner is a live message, and a header's position matches its chain.
    pub(crate) fn check_switching_invariants(&self) {
        let mut on_chain = vec![false; self.vc_owner.len()];
        let free: std::collections::HashSet<u32> = self.free.iter().copied().collect();
        for (id, message) in self.messages.iter().enumerate() {
            if free.contains(&(id as u32)) || message.head_vc == NONE {
                continue;
            }
            // The front of the chain: the header's VC, or (wormhole) the VC granted to a
            // header flit that has not crossed yet.
            // With `tail_sent` reallocation a message may wait behind another in the VC of
            // its header (whose `vc_out` is the other's) and have others behind it in the VC
            // of its tail (whose `vc_src` is theirs): the chain stops there.
            let id = id as u32;
            let mut at = message.head_vc;
            while self.vc_owner[at as usize] == id && self.vc_out[at as usize] < EJECT {
                at = self.vc_out[at as usize];
            }
            let (mut network, mut tail) = (0, at);
            while at != NONE {
                let owner = self.vc_owner[at as usize];
                let queued = self.queues.as_deref().map_or(Vec::new(), |q| q.behind_of(at, owner));
                assert!(owner == id || queued.contains(&id), "chain of message {id}");
                if owner == id {
                    assert!(!on_chain[at as usize], "VC {at} on two chains");
                    on_chain[at as usize] = true;
                }
                network += u32::from(at < self.network_vcs);
                tail = at;
                at = if self.receiving(at) == id { self.vc_src[at as usize] } else { NONE };
            }
            if self.switching.kind != WORMHOLE {
                let probe = self.switching.probes[id as usize];
                // Before the first data flit leaves the source the chain is whole: the
                // header's position is the number of network VCs on it.
                if tail >= self.network_vcs && self.vc_count[tail as usize] == message.length {
                    assert_eq!(probe.reserved, network, "header position of message {id}");
                }
                assert!(probe.reserved <= probe.furthest);
            }
        }
        for (vc, &owner) in self.vc_owner.iter().enumerate() {
            if owner != NONE {
                assert!(on_chain[vc], "VC {vc} leaked: held by message {owner} off its chain");
            }
        }
        if self.switching.kind == WORMHOLE {
            assert_eq!(self.switching.dropped, 0);
        }
    }

    /// Whether no VC (network or injection) is held: nothing leaked once the network drained.
    pub(crate) fn vc_free_everywhere(&self) -> bool {
        self.vc_owner.iter().all(|&owner| owner == NONE)
            && self.ch_busy.iter().all(|&busy| busy == 0)
            && self.active.is_empty()
            && self.inj_busy.iter().all(|&busy| busy == 0)
    }
}
