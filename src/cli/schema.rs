//! `runner schema`: print the JSON Schema of the spec format, or of one direction of the
//! external evaluator protocol.

/// Arguments of `runner schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the schema of the external protocol's `request` (runner to program) or `response`
    /// (program to runner) instead of the spec's.
    #[arg(long, value_enum)]
    external: Option<Direction>,
}

/// One direction of the external evaluator protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Direction {
    /// What runner writes to the program's standard input.
    Request,
    /// What the program prints on its standard output.
    Response,
}

/// Prints the schema that `schemas/experiment.schema.json` holds (or, with `--external`,
/// `schemas/external-request.schema.json` or `schemas/external-response.schema.json`).
pub fn run(args: Args) -> anyhow::Result<super::Outcome> {
    let schema = match args.external {
        None => crate::spec::json_schema(),
        Some(Direction::Request) => crate::exec::external::request_schema(),
        Some(Direction::Response) => crate::exec::external::response_schema(),
    };
    out!("{schema}")?;
    Ok(super::Outcome::Success)
}
