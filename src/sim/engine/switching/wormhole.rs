//! Wormhole switching: the engine's own code path, and which scenarios take it.
//!
//! The answers to the switching questions are the engine's defaults, so there is no code for
//! them here: the header is the first data flit and advances as soon as a VC is free; data
//! follows it without acknowledgements; a blocked header waits in its buffer (retrying every
//! cycle); a VC is released when the tail flit leaves it. Scouting switching with K = 0 is
//! exactly this (the paper: "when K = 0, no acknowledgements are sent ... equivalent to WS"),
//! so it is mapped here to the wormhole path and its results are bit-identical to wormhole's.

use crate::scenario::Switching;

use super::{CIRCUIT, SCOUTING};

/// `Engine::step_with` parameter of the wormhole path.
pub(in crate::sim::engine) const WORMHOLE: u8 = 0;

/// The code path a switching technique runs.
pub(crate) fn technique(switching: Switching) -> u8 {
    match switching {
        // Virtual cut-through is wormhole with a stricter VC grant (`Engine::cut_through`).
        Switching::Wormhole
        | Switching::VirtualCutThrough
        | Switching::Scouting { scouting_distance: 0 } => WORMHOLE,
        Switching::Scouting { .. } => SCOUTING,
        Switching::Circuit => CIRCUIT,
    }
}
