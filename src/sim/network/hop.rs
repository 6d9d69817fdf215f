//! The vocabulary of one hop, shared by the network families (`network/*`), the geometry
//! (`topology`), the routing functions (`routing`) and the engine: a step out of a router, the
//! mark of a missing link, a routing candidate, and what routing knows about a message.
//!
//! A leaf: it imports nothing, so every family can name these types without depending on the
//! modules that dispatch to it.

/// Marks a missing link (a mesh border, an unused port of a fat-tree or graph router).
pub(crate) const NO_LINK: u32 = u32::MAX;

/// One direction out of a node: a port plus what the routing functions need to know about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) port: u32,
    /// Torus only: the rest of the route in this dimension crosses the wrap-around link
    /// (including this hop). Used for the dateline virtual-channel classes.
    pub(crate) wraps: bool,
}

/// An output port and the virtual channels a header may request on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) port: u32,
    pub(crate) mask: u64,
    /// VCs requested only when none in `mask` (on any candidate port) is free.
    pub(crate) fallback: u64,
}

/// What the routing function knows about a message.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub(crate) source: u32,
    pub(crate) dest: u32,
    /// Routing state (Nbc's escape level; the dragonfly's global hops and UGAL's choice; a
    /// graph's escape and down bits).
    pub(crate) level: u32,
    /// Tie-break bits, one per dimension: bit `d` set = + at distance k/2 in dimension `d`;
    /// `up_down_random`'s draw; on the dragonfly, the message's intermediate group
    /// (`NO_GROUP`: none).
    pub(crate) ties: u32,
}
