//! The results store: the result row ([`row::Row`]) and how rows are built ([`build`]),
//! `results.parquet` and the side tables, and the comparison of two sets of rows ([`diff`]).
//! Gathering a run's rows in plan order is `exec::gather`'s.
//!
//! **API boundary:** the Parquet columns are documented in `schemas/results.md`;
//! [`row::Row`] is the single definition both follow.

pub mod build;
pub mod diff;
pub mod histograms;
pub mod links;
pub mod parquet;
pub mod point_key;
pub mod provenance;
pub mod row;
