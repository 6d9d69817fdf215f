//! `runner solve`: one model at one load, every intermediate quantity printed.

use super::{InputError, Outcome, scenario_args};
use crate::measurement::Measurement;
use crate::model::{self, ModelName, ModelOptions};

/// Arguments of `runner solve`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  runner solve fat_tree processors=256 message_length=32 --rate 0.002
  runner solve scouting_torus radix=16 scouting_distance=6 virtual_channels=2 --rate 0.004 --json
  runner solve nbc_torus radix=8 virtual_channels=8 --saturation --json")]
pub struct Args {
    /// The model (see `runner models`).
    model: String,
    /// Scenario parameters as key=value (keys as in specs: radix, virtual_channels, ...); keys
    /// the model does not read (the simulator's buffer_depth, router_delay, ...) are refused.
    params: Vec<String>,
    /// Offered load in messages/node/cycle.
    #[arg(long, required_unless_present = "saturation")]
    rate: Option<f64>,
    /// Print the saturation rate instead of solving at one load.
    #[arg(long)]
    saturation: bool,
    /// fat_tree: read eq. (22) literally instead of erratum E-BFT-3.
    #[arg(long)]
    literal_eq22: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Solves and prints.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let names: Vec<&str> = ModelName::ALL.iter().map(|m| m.as_str()).collect();
    let model = ModelName::from_name(&args.model).ok_or_else(|| {
        let hint = crate::suggest::did_you_mean(&args.model, names.iter().copied())
            .map(|m| format!("did you mean `{m}`?"))
            .unwrap_or_else(|| format!("models: {}", names.join(", ")));
        InputError(format!("unknown model `{}`; {hint}", args.model))
    })?;
    refuse_unused(model, &args.params)?;
    let mut scenario = model::paper_scenario(model);
    scenario_args::apply(&mut scenario, &args.params)?;
    let options = ModelOptions { literal_eq22: args.literal_eq22 };
    model::check(model, &scenario).map_err(|e| InputError(e.to_string()))?;
    if args.saturation {
        let rate = model::saturation_rate(model, &scenario, &options)
            .map_err(|e| InputError(e.to_string()))?;
        let mechanism = model::saturation_mechanism(model, &scenario, &options, rate)
            .map_err(|e| InputError(e.to_string()))?;
        if args.json {
            outln!(
                "{}",
                serde_json::json!({
                    "model": model.as_str(),
                    "saturation_rate": rate,
                    "mechanism": mechanism,
                })
            )?;
        } else {
            outln!("saturation_rate = {rate} messages/node/cycle")?;
            if let Some(mechanism) = mechanism {
                outln!("mechanism: {mechanism}")?;
            }
        }
        return Ok(Outcome::Success);
    }
    let rate = args.rate.ok_or_else(|| InputError("--rate is required".into()))?;
    let measurement =
        model::solve(model, &scenario, rate, &options).map_err(|e| InputError(e.to_string()))?;
    print_measurement(model.as_str(), rate, &measurement, args.json)?;
    Ok(Outcome::Success)
}

/// Refuses keys `model` would silently ignore: the simulator's settings (the fields the
/// scenario table marks `Evaluators::Simulator`), and
/// `startup_latency` for models without broadcasts. (Keys a model checks, such as `routing`,
/// `fault_rate` or `traffic`, reach `model::check`, which refuses values it cannot evaluate.)
fn refuse_unused(model: ModelName, pairs: &[String]) -> Result<(), InputError> {
    let reads: Vec<&str> = model::info(model).params.iter().map(|p| p.key).collect();
    for pair in pairs {
        let key = pair.split_once('=').map_or(pair.as_str(), |(k, _)| k).trim();
        if reads.contains(&key) {
            continue;
        }
        let why = if crate::scenario::fields::simulator_only().any(|only| only == key) {
            "it is a simulator setting; use `runner simulate` to vary it"
        } else if key == "startup_latency" {
            "it applies to broadcasts, which only broadcast_hypercube models"
        } else {
            continue;
        };
        return Err(InputError(format!(
            "`{pair}`: model `{}` does not use `{key}` ({why}); it reads {}: leave `{key}` out",
            model.as_str(),
            reads.join(", ")
        )));
    }
    Ok(())
}

/// Prints a measurement as JSON (stable keys) or as aligned text.
pub fn print_measurement(
    evaluator: &str,
    rate: f64,
    m: &Measurement,
    json: bool,
) -> anyhow::Result<()> {
    let mut map = serde_json::Map::new();
    map.insert("evaluator".into(), evaluator.into());
    map.insert("rate".into(), serde_json::json!(rate));
    map.insert("status".into(), m.status.as_str().into());
    if let Some(detail) = &m.detail {
        map.insert("detail".into(), detail.clone().into());
    }
    let named = [
        ("latency", m.latency),
        ("latency_ci95", m.latency_ci95),
        ("network_latency", m.network_latency),
        ("source_wait", m.source_wait),
        ("unicast_latency", m.unicast_latency),
        ("round_trip_latency", m.round_trip_latency),
        ("multiplexing_degree", m.multiplexing_degree),
        ("channel_rate", m.channel_rate),
        ("blocking_probability", m.blocking_probability),
        ("throughput", m.throughput),
        ("throughput_ci95", m.throughput_ci95),
        ("hops", m.hops),
    ];
    for (key, value) in named {
        map.insert(key.into(), value.map_or(serde_json::Value::Null, |v| serde_json::json!(v)));
    }
    // The simulator's latency percentiles (it always reports `cycles`; the models never do,
    // and measure no distribution): `latency_p50` ... `source_wait_max`, null when not measured;
    // with broadcasts also the unicasts' `unicast_latency_p50` ... `unicast_latency_max`.
    if m.cycles.is_some() {
        let unicasts = m.unicast_latency_percentiles.map(|p| ("unicast_latency", Some(p)));
        for (stem, percentiles) in [
            ("latency", m.latency_percentiles),
            ("network_latency", m.network_latency_percentiles),
            ("source_wait", m.source_wait_percentiles),
        ]
        .into_iter()
        .chain(unicasts)
        {
            let values = percentiles.map(|p| [p.p50, p.p90, p.p95, p.p99, p.max]);
            for (index, name) in ["p50", "p90", "p95", "p99", "max"].into_iter().enumerate() {
                let value = values.map_or(serde_json::Value::Null, |v| v[index].into());
                map.insert(format!("{stem}_{name}"), value);
            }
        }
        // The intervals of the latency percentiles: `latency_p50_ci95` ... `latency_p99_ci95`.
        let halves = m.latency_percentiles_ci95;
        for (index, name) in ["p50", "p90", "p95", "p99"].into_iter().enumerate() {
            let value = halves[index]
                .and_then(serde_json::Number::from_f64)
                .map_or(serde_json::Value::Null, serde_json::Value::Number);
            map.insert(format!("latency_{name}_ci95"), value);
        }
    }
    for (key, value) in [
        ("cycles", m.cycles),
        ("flit_hops", m.flit_hops),
        ("messages_measured", m.messages_measured),
        ("fault_count", m.fault_count),
    ] {
        if let Some(v) = value {
            map.insert(key.into(), v.into());
        }
    }
    if let Some(hash) = &m.fault_map {
        map.insert("fault_map".into(), hash.clone().into());
    }
    for (key, value) in &m.intermediates {
        map.entry(key.clone()).or_insert(
            serde_json::Number::from_f64(*value)
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
        );
    }
    // The per-node spread of the accepted throughput in latency mode (throughput mode's
    // intermediates, above, keep their exact values).
    if let Some(spread) = m.node_throughput {
        for (key, value) in
            ["throughput_min", "throughput_max", "flit_throughput_min", "flit_throughput_max"]
                .into_iter()
                .zip(spread)
        {
            let number = serde_json::Number::from_f64(value);
            map.entry(key)
                .or_insert(number.map_or(serde_json::Value::Null, serde_json::Value::Number));
        }
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&serde_json::Value::Object(map))?)?;
    } else {
        for (key, value) in &map {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            outln!("{key:<28} {text}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(model: ModelName, pair: &str) -> Option<String> {
        refuse_unused(model, &[pair.to_string()]).err().map(|e| e.0)
    }

    /// Issue 19: `runner solve` silently ignored keys the model does not read.
    #[test]
    fn keys_the_model_does_not_read_are_refused() {
        for pair in ["buffer_depth=0", "router_delay=5", "input_speedup=1", "ejection=unlimited"] {
            let error = refused(ModelName::NbcTorus, pair).expect("refused");
            assert!(error.contains("does not use") && error.contains("simulator"), "{error}");
        }
        let error = refused(ModelName::ScoutingTorus, "startup_latency=nan").expect("refused");
        assert!(error.contains("broadcast_hypercube"), "{error}");
        // What the model reads, or checks (and refuses when it cannot evaluate), passes here.
        assert_eq!(refused(ModelName::BroadcastHypercube, "startup_latency=2"), None);
        assert_eq!(refused(ModelName::NbcTorus, "escape_channels=5"), None);
        assert_eq!(refused(ModelName::ScoutingTorus, "fault_rate=0.1"), None);
    }
}
