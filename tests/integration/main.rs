//! End-to-end tests of the `runner` binary: one integration-test binary, modules by topic.

mod booksim;
mod bundle;
mod cli;
mod cli_properties;
mod common;
mod external;
mod figures_without_data;
mod files;
mod inputs;
mod layers;
mod reader_properties;
mod reproductions;
mod route_table_properties;
mod router_preset;
mod searches;
mod slurm;
mod spec_errors;
mod spec_properties;
mod tables;
mod timeline;
mod traces;
mod untrusted_text;
mod validation;
mod verdicts;
