//! `runner`: a declarative experiment-pipeline runner for interconnection-network research.
//!
//! The data flows one way:
//!
//! ```text
//! experiments/*.yaml --spec::load--> Experiment (scenarios x loads x methods)
//!   --plan::build--> Plan (petgraph DAG of tasks, content-hashed)
//!   --exec::Pool::run--> task outputs (cached under .runner/cache/) --exec::Gather--> rows,
//!   one at a time --bundle::write_bundle--> reports/<name>/results.parquet + the report
//! ```
//!
//! [`model`] (the published analytical models) and [`sim`] (the flit-level
//! simulator) are pure libraries: they take a [`scenario::Scenario`] and a load
//! and return a [`measurement::Measurement`], and know nothing of specs, files
//! or the pipeline. A module names only the modules below it (the layers, checked by
//! `tests/integration/layers.rs`). See ARCHITECTURE.md for the map.

// `deny`, not `forbid`: `sim::prefetch` alone allows `unsafe`, for a cache hint.
#![deny(unsafe_code)]

pub mod bundle;
pub mod cli;
pub mod console;
pub mod exec;
pub mod files;
pub mod measurement;
pub mod model;
pub mod number;
pub mod plan;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod spec;
pub mod statistics;
pub mod store;
pub mod suggest;
pub mod trace;
