//! Network families with their own numbering and routing cases, one file each, behind the
//! small interface the engine asks (`topology::Geometry`'s ports and neighbour table, and the
//! candidate output ports of `routing::Router`).
//!
//! `dragonfly` (Kim, Dally, Scott and Abts, ISCA 2008) is the first: its numbering of terminals
//! and routers, its global-link arrangement, and its minimal, Valiant and UGAL routing cases
//! with their virtual-channel classes live in one file. Tori, meshes and hypercubes are still
//! numbered in `topology` and routed in `routing`; the butterfly fat-tree's numbering and
//! wiring are `fat_tree`, the k-ary n-tree's `kary_ntree` (their `up_down` cases are in
//! `routing`).

pub(crate) mod dragonfly;
pub(crate) mod fat_tree;
pub(crate) mod kary_ntree;
