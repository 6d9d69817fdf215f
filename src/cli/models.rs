//! `runner models`: the analytical models, their parameters and papers.

use crate::model::{self, ModelName};

/// Arguments of `runner models`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// Lists every model.
pub fn run(args: Args) -> anyhow::Result<super::Outcome> {
    let infos: Vec<model::ModelInfo> = ModelName::ALL.iter().map(|&m| model::info(m)).collect();
    if args.json {
        let value: Vec<serde_json::Value> = infos
            .iter()
            .map(|i| {
                serde_json::json!({
                    "name": i.name.as_str(),
                    "paper": i.paper,
                    "scenario": i.scenario,
                    "ejection": i.ejection.as_str(),
                    "ejection_quote": i.ejection_quote,
                    "parameters": i.params.iter().map(|p| serde_json::json!({
                        "key": p.key, "default": p.default, "unit": p.unit, "doc": p.doc,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&value)?)?;
        return Ok(super::Outcome::Success);
    }
    for info in infos {
        outln!("{}", info.name.as_str())?;
        outln!("  {}", info.scenario)?;
        outln!("  paper: {}", info.paper)?;
        outln!("  ejection: {} (\"{}\")", info.ejection.as_str(), info.ejection_quote)?;
        outln!("  parameters:")?;
        for p in info.params {
            let unit = if p.unit.is_empty() { String::new() } else { format!(" [{}]", p.unit) };
            outln!("    {:<28} default {:<10}{unit}  {}", p.key, p.default, p.doc)?;
        }
        outln!()?;
    }
    Ok(super::Outcome::Success)
}
