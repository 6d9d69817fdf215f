//! Deadlock analysis: which messages can never move again, and a readable waiting cycle.
//!
//! Used only when a run stops (watchdog, saturation), so it may allocate.

use std::collections::{HashMap, HashSet};

use super::{EJECT, Engine, NONE, Outcome};

/// A deadlocked message: (message, node of its header, [(port, VC, holder)] it may request).
type Stuck = (u32, u32, Vec<(u32, u32, u32)>);

impl Engine {
    /// Whether the message holding network VC `vc` can still move all its flits at or behind
    /// `vc` past it (into free buffer space further along its own path), releasing `vc` even
    /// if its header never advances.
    fn can_vacate(&self, vc: u32) -> bool {
        let mut behind = 0u64;
        let mut at = vc;
        while at != NONE {
            behind += u64::from(self.vc_count[at as usize]);
            at = self.vc_src[at as usize];
        }
        let mut room = 0u64;
        let mut at = self.vc_out[vc as usize];
        // With a separate header the data stops at the first channel not acknowledged.
        while at < EJECT && self.data_may_enter(at) {
            room += u64::from(self.depth - self.vc_count[at as usize]);
            at = self.vc_out[at as usize];
        }
        behind <= room
    }

    /// The messages that can never move again, each with the VCs it may request as
    /// (port, VC, holder): blocked headers all of whose allowed VCs are held by other such
    /// messages that cannot vacate them (greatest fixed point). A message whose header is not
    /// blocked drains through its ejection port, so it frees its VCs eventually and is never
    /// part of a deadlock.
    fn deadlocked(&mut self) -> Vec<Stuck> {
        let mut stuck = Vec::new();
        for i in 0..self.pending.len() {
            let p = self.pending[i];
            let id = self.vc_owner[p.vc as usize];
            let message = self.messages[id as usize];
            let cur = self.node_of(p.vc);
            if p.ready > self.now || cur == message.dest || !self.header_only_waits(id, p.vc) {
                continue;
            }
            self.router.candidates(&self.geometry, cur, message.header(), &mut self.candidates);
            if message.vc_base != 0 {
                self.shift_to_reply_class(message.vc_base);
            }
            let mut held = Vec::new();
            for c in &self.candidates {
                let mut mask = c.mask | c.fallback;
                while mask != 0 {
                    let v = mask.trailing_zeros();
                    mask &= mask - 1;
                    let out = self.geometry.channel(cur, c.port) * self.v + v;
                    held.push((c.port, v, self.grant_holder(out)));
                }
            }
            let base = self.geometry.first_channel(cur);
            let vacated = held.iter().any(|&(port, v, holder)| {
                holder == NONE || self.can_vacate((base + port) * self.v + v)
            });
            if !vacated {
                stuck.push((id, cur, held));
            }
        }
        loop {
            let ids: HashSet<u32> = stuck.iter().map(|s| s.0).collect();
            let before = stuck.len();
            stuck.retain(|(_, _, held)| held.iter().all(|(_, _, holder)| ids.contains(holder)));
            if stuck.len() == before {
                return stuck;
            }
        }
    }

    /// A short description of one waiting cycle, or `None` if no message is deadlocked.
    pub(super) fn describe_deadlock(&mut self) -> Option<String> {
        let stuck = self.deadlocked();
        let index: HashMap<u32, usize> = stuck.iter().enumerate().map(|(i, s)| (s.0, i)).collect();
        let mut at = 0;
        let mut path: Vec<usize> = Vec::new();
        let start = loop {
            let (_, _, held) = stuck.get(at)?;
            if let Some(pos) = path.iter().position(|&p| p == at) {
                break pos;
            }
            path.push(at);
            at = *index.get(&held.first()?.2)?;
        };
        let cycle = &path[start..];
        let steps: Vec<String> = cycle
            .iter()
            .take(6)
            .map(|&i| {
                let (id, cur, held) = &stuck[i];
                let message = &self.messages[*id as usize];
                let (port, v, holder) = held[0];
                format!(
                    "message {id} ({}->{}) at {} waits for {} VC {v} held by message {holder}",
                    self.geometry.describe(message.source),
                    self.geometry.describe(message.dest),
                    self.geometry.describe(*cur),
                    self.geometry.describe_port(port)
                )
            })
            .collect();
        let more = cycle.len().saturating_sub(steps.len());
        Some(format!(
            "{} messages deadlocked ({} routing); waiting cycle of {}: {}{}",
            stuck.len(),
            self.router.name,
            cycle.len(),
            steps.join("; "),
            if more > 0 { format!("; ... {more} more") } else { String::new() }
        ))
    }

    /// Deadlock if some messages can never move, else saturation with `detail`.
    pub(super) fn saturated_unless_deadlocked(&mut self, detail: String) -> Outcome {
        match self.describe_deadlock() {
            Some(deadlock) => Outcome::Deadlock(deadlock),
            None => Outcome::Saturated(detail),
        }
    }
}
