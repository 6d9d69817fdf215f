//! Network families with their own numbering and routing cases, one file each, behind the
//! small interface the engine asks (`topology::Geometry`'s ports and neighbour table, and the
//! candidate output ports of `routing::Router`).
//!
//! `dragonfly` (Kim, Dally, Scott and Abts, ISCA 2008) is the first: its numbering of terminals
//! and routers, its global-link arrangement, and its minimal, Valiant and UGAL routing cases
//! with their virtual-channel classes live in one file. Tori and meshes are numbered in
//! `torus`, hypercubes in `hypercube` (both routed in `routing`); the butterfly fat-tree's
//! numbering and wiring are `fat_tree`, the k-ary n-tree's `kary_ntree` (their `up_down` cases are in
//! `routing`). `graph` is any network read from a file: its numbering, up*/down* route tables
//! and the `up_down` and `minimal` (with an up*/down* escape) routing cases.

use crate::scenario::{Scenario, Switching};

use super::SimError;

/// The checks a family with its own routing cases shares: wormhole switching only, and no
/// `escape_channels` (its routings fix their own VC use). `network` names it in messages
/// (`the dragonfly`), `no_escape` says why the routing has no such setting.
pub(crate) fn wormhole_without_escape_channels(
    scenario: &Scenario,
    network: &str,
    no_escape: &str,
) -> Result<(), SimError> {
    if scenario.switching != Switching::Wormhole {
        return Err(SimError(format!(
            "{network} is simulated with wormhole switching, got {}",
            scenario.switching.kind()
        )));
    }
    if let Some(e) = scenario.escape_channels {
        return Err(SimError(format!(
            "{} routing {no_escape}: leave escape_channels unset, got {e}",
            scenario.routing.as_str()
        )));
    }
    Ok(())
}

pub(crate) mod dragonfly;
pub(crate) mod fat_tree;
pub(crate) mod graph;
pub(crate) mod hypercube;
pub(crate) mod kary_ntree;
pub(crate) mod torus;
