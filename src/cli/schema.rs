//! `runner schema`: print the JSON Schema of the spec format.

/// Arguments of `runner schema`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Prints the schema that `schemas/experiment.schema.json` holds.
pub fn run(_args: Args) -> anyhow::Result<super::Outcome> {
    out!("{}", crate::spec::json_schema())?;
    Ok(super::Outcome::Success)
}
