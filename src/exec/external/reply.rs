//! An external program's reply: the [`Response`] it prints, read with every key unique
//! ([`parse`]), every number checked against its domain (`docs/external.md`, "Domains"), and
//! copied into the task's row.

use super::*;

/// How the evaluation ended, in the vocabulary of the `status` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResponseStatus {
    /// A finite, stable result: `latency` is required.
    Ok,
    /// The load is at or past saturation; latency is unbounded (`latency` may be null).
    Saturated,
    /// The network deadlocked.
    Deadlock,
    /// An estimate only (the run stopped short of its precision target): `latency` is required.
    Imprecise,
    /// The program cannot evaluate this scenario: `detail` says why. A result, not a failure.
    Unsupported,
}

/// What the program prints on standard output: one JSON object. Fields other than these are
/// refused (a misspelt column would otherwise vanish); every measurement is optional except
/// `latency` when `status` is `ok` or `imprecise`, and `detail` when it is `unsupported`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "runner external evaluator response")]
pub struct Response {
    /// How the evaluation ended.
    pub status: ResponseStatus,
    /// Why it is saturated, deadlocked, imprecise or unsupported, in a sentence (also accepted
    /// as `reason`); the row's `error` column.
    #[serde(default, alias = "reason")]
    pub detail: Option<String>,
    /// Mean message latency (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency: Option<f64>,
    /// 95% confidence half-width of `latency` (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_ci95: Option<f64>,
    /// Mean network latency without the source wait (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency: Option<f64>,
    /// Mean source-queue wait (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait: Option<f64>,
    /// Mean unicast latency, where broadcasts are reported separately (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub unicast_latency: Option<f64>,
    /// Request-reply traffic: mean round trip of a request (cycles).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub round_trip_latency: Option<f64>,
    /// Average multiplexing degree of a physical channel.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub multiplexing_degree: Option<f64>,
    /// Message arrival rate at one channel (messages/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub channel_rate: Option<f64>,
    /// Probability that all virtual channels of a channel are busy.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub blocking_probability: Option<f64>,
    /// Accepted throughput (messages/node/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub throughput: Option<f64>,
    /// 95% confidence half-width of `throughput` (messages/node/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub throughput_ci95: Option<f64>,
    /// Mean hops per message.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub hops: Option<f64>,
    /// Offered load generated in the measurement window (messages/node/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub offered_throughput: Option<f64>,
    /// Accepted throughput of the least-served node (messages/node/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub throughput_min: Option<f64>,
    /// Accepted throughput of the best-served node (messages/node/cycle).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub throughput_max: Option<f64>,
    /// Accepted throughput in flits/node/cycle.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub flit_throughput: Option<f64>,
    /// Accepted flits/node/cycle of the least-served node.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub flit_throughput_min: Option<f64>,
    /// Accepted flits/node/cycle of the best-served node.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub flit_throughput_max: Option<f64>,
    /// Cycles simulated.
    #[serde(default)]
    #[schemars(range(max = 9_007_199_254_740_992u64))]
    pub cycles: Option<u64>,
    /// Flit-link traversals simulated.
    #[serde(default)]
    #[schemars(range(max = 9_007_199_254_740_992u64))]
    pub flit_hops: Option<u64>,
    /// Messages whose latency entered the mean.
    #[serde(default)]
    #[schemars(range(max = 9_007_199_254_740_992u64))]
    pub messages_measured: Option<u64>,
    /// Messages dropped at full source queues.
    #[serde(default)]
    #[schemars(range(max = 9_007_199_254_740_992u64))]
    pub source_drops: Option<u64>,
    /// The median of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_p50: Option<f64>,
    /// The 90th percentile of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_p90: Option<f64>,
    /// The 99th percentile of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_p99: Option<f64>,
    /// The largest value of the message latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub latency_max: Option<f64>,
    /// The median of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency_p50: Option<f64>,
    /// The 90th percentile of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency_p90: Option<f64>,
    /// The 99th percentile of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency_p99: Option<f64>,
    /// The largest value of the network latency (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub network_latency_max: Option<f64>,
    /// The median of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait_p50: Option<f64>,
    /// The 90th percentile of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait_p90: Option<f64>,
    /// The 99th percentile of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait_p99: Option<f64>,
    /// The largest value of the source wait (cycles; `schemas/results.md`, "Latency percentiles").
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e100))]
    pub source_wait_max: Option<f64>,
    /// Every other named quantity, as numbers (figures plot them as `intermediates.<key>`).
    #[serde(default)]
    pub intermediates: BTreeMap<String, f64>,
}

/// Reads the program's standard output as one [`Response`] and checks what serde cannot: no
/// key twice in one object, and every number in its domain ([`check_domains`]).
pub fn parse(stdout: &[u8]) -> Result<Response, String> {
    let text = String::from_utf8_lossy(stdout);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("printed nothing on standard output; one JSON object is expected".into());
    }
    let value = match serde_json::from_str::<UniqueKeys>(trimmed) {
        Ok(UniqueKeys(value)) => value,
        // Only `UniqueKeys` raises a data error: a key given twice.
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            return Err(format!("printed a response in which {e}"));
        }
        Err(e) => {
            return Err(format!(
                "printed output that is not one JSON object ({e}); it begins {:?}",
                excerpt(trimmed, 80)
            ));
        }
    };
    let Some(object) = value.as_object() else {
        return Err(format!(
            "printed JSON that is not an object; it begins {:?}",
            excerpt(trimmed, 80)
        ));
    };
    check_domains(object)?;
    let response: Response = serde_json::from_value(value)
        .map_err(|e| format!("printed a response that {}", serde_problem(&e)))?;
    let status = response.status;
    let needs_latency = matches!(status, ResponseStatus::Ok | ResponseStatus::Imprecise);
    if needs_latency && response.latency.is_none() {
        return Err(format!(
            "printed `status: {}` without the required field `latency` (a number of cycles)",
            status_name(status)
        ));
    }
    if status == ResponseStatus::Unsupported
        && response.detail.as_deref().is_none_or(|d| d.trim().is_empty())
    {
        return Err("printed `status: unsupported` without the required `detail` saying why".into());
    }
    Ok(response)
}

/// A JSON value read with every object's keys unique: serde_json keeps the last of two equal
/// keys, so a reply giving `latency` twice would lose one of them silently.
struct UniqueKeys(serde_json::Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeysVisitor)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_str<E>(self, v: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_string<E>(self, v: String) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }

    fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(serde_json::Value::Null))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(UniqueKeys(serde_json::Value::Array(items)))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{}` appears twice in one object; give each key once",
                    excerpt(&key, 64)
                )));
            }
            let UniqueKeys(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(UniqueKeys(serde_json::Value::Object(object)))
    }
}

/// The largest magnitude a reply's number may have: far beyond any latency, rate or count,
/// and small enough that the sums, squares and products of aggregating up to
/// `MAX_REPLICATIONS` replications stay finite (a reply of 1e308 would average to `inf`).
pub const MAX_MAGNITUDE: f64 = 1e100;

/// The largest count a reply may give: 2^53, exact in a double (as JSON readers keep numbers).
pub const MAX_COUNT: u64 = 1 << 53;

/// What values a number of the protocol may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Domain {
    /// A finite number >= 0 (at most [`MAX_MAGNITUDE`]).
    NonNegative,
    /// A probability: 0 to 1.
    Probability,
    /// A non-negative integer (at most [`MAX_COUNT`]).
    Count,
    /// A whole number from 0 to [`MAX_COUNT`], which may be written as a fraction (`10.0`):
    /// an intermediate, a number like every other.
    Whole,
    /// Any finite number of magnitude at most [`MAX_MAGNITUDE`] (a free-form intermediate).
    Real,
}

impl Domain {
    /// What the domain is, for a message.
    fn describe(self) -> String {
        match self {
            Domain::NonNegative => {
                format!("a non-negative number (at most {})", crate::number::compact(MAX_MAGNITUDE))
            }
            Domain::Probability => "a probability, from 0 to 1".into(),
            Domain::Count => {
                format!("a non-negative integer (at most 2^53 = {MAX_COUNT})")
            }
            Domain::Whole => format!("a whole number from 0 to 2^53 = {MAX_COUNT}"),
            Domain::Real => format!(
                "a finite number of magnitude at most {}",
                crate::number::compact(MAX_MAGNITUDE)
            ),
        }
    }

    /// Whether `value` lies in the domain.
    fn holds(self, value: &serde_json::Number) -> bool {
        match self {
            Domain::Count => value.as_u64().is_some_and(|n| n <= MAX_COUNT),
            _ => {
                let Some(x) = value.as_f64() else { return false };
                match self {
                    Domain::NonNegative => (0.0..=MAX_MAGNITUDE).contains(&x),
                    Domain::Probability => (0.0..=1.0).contains(&x),
                    Domain::Real => x.is_finite() && x.abs() <= MAX_MAGNITUDE,
                    Domain::Whole => x.fract() == 0.0 && (0.0..=MAX_COUNT as f64).contains(&x),
                    Domain::Count => false,
                }
            }
        }
    }
}

/// Every number of a response with its domain (`docs/external.md`, "Response"); a test keeps
/// it equal to [`Response`]'s numeric fields.
pub(super) const DOMAINS: &[(&str, Domain)] = &[
    ("latency", Domain::NonNegative),
    ("latency_ci95", Domain::NonNegative),
    ("network_latency", Domain::NonNegative),
    ("source_wait", Domain::NonNegative),
    ("unicast_latency", Domain::NonNegative),
    ("round_trip_latency", Domain::NonNegative),
    ("multiplexing_degree", Domain::NonNegative),
    ("channel_rate", Domain::NonNegative),
    ("blocking_probability", Domain::Probability),
    ("throughput", Domain::NonNegative),
    ("throughput_ci95", Domain::NonNegative),
    ("hops", Domain::NonNegative),
    ("offered_throughput", Domain::NonNegative),
    ("throughput_min", Domain::NonNegative),
    ("throughput_max", Domain::NonNegative),
    ("flit_throughput", Domain::NonNegative),
    ("flit_throughput_min", Domain::NonNegative),
    ("flit_throughput_max", Domain::NonNegative),
    ("cycles", Domain::Count),
    ("flit_hops", Domain::Count),
    ("messages_measured", Domain::Count),
    ("source_drops", Domain::Count),
    ("latency_p50", Domain::NonNegative),
    ("latency_p90", Domain::NonNegative),
    ("latency_p99", Domain::NonNegative),
    ("latency_max", Domain::NonNegative),
    ("network_latency_p50", Domain::NonNegative),
    ("network_latency_p90", Domain::NonNegative),
    ("network_latency_p99", Domain::NonNegative),
    ("network_latency_max", Domain::NonNegative),
    ("source_wait_p50", Domain::NonNegative),
    ("source_wait_p90", Domain::NonNegative),
    ("source_wait_p99", Domain::NonNegative),
    ("source_wait_max", Domain::NonNegative),
];

/// The intermediates with a meaning of their own (the batch statistics the aggregate pools);
/// any other intermediate is [`Domain::Real`].
const INTERMEDIATE_DOMAINS: &[(&str, Domain)] = &[
    ("latency_batches", Domain::Whole),
    ("latency_batch_mean", Domain::NonNegative),
    ("latency_batch_sd", Domain::NonNegative),
];

/// Fields that must not decrease along each list, where given: the percentiles, and the least-
/// and best-served nodes' throughputs.
const ORDERED: &[&[&str]] = &[
    &["latency_p50", "latency_p90", "latency_p99", "latency_max"],
    &["network_latency_p50", "network_latency_p90", "network_latency_p99", "network_latency_max"],
    &["source_wait_p50", "source_wait_p90", "source_wait_p99", "source_wait_max"],
    &["throughput_min", "throughput_max"],
    &["flit_throughput_min", "flit_throughput_max"],
];

/// A number of a reply as it was written, compactly (`1e300`, not 301 digits; `3.0` stays a
/// fraction, so that a count given as `3.0` is seen not to be an integer).
fn shown(number: &serde_json::Number) -> String {
    match number.as_f64() {
        Some(x) if number.is_f64() => {
            let text = crate::number::compact(x);
            if x.is_finite() && x.fract() == 0.0 && !text.contains(['.', 'e']) {
                format!("{text}.0")
            } else {
                text
            }
        }
        _ => number.to_string(),
    }
}

/// Checks every number of a response against its domain ([`DOMAINS`]), the intermediates,
/// and the order of the percentiles, naming the field and the value.
fn check_domains(object: &serde_json::Map<String, serde_json::Value>) -> Result<(), String> {
    let check = |name: &str, value: &serde_json::Value, domain: Domain| -> Result<(), String> {
        let found = match value {
            serde_json::Value::Null => return Ok(()),
            serde_json::Value::Number(number) if domain.holds(number) => return Ok(()),
            serde_json::Value::Number(number) => shown(number),
            serde_json::Value::Bool(_) => "a boolean".into(),
            serde_json::Value::String(_) => "a string".into(),
            serde_json::Value::Array(_) => "an array".into(),
            serde_json::Value::Object(_) => "an object".into(),
        };
        let wrong_type = if value.is_number() { "" } else { " (a value of the wrong type)" };
        Err(format!("printed `{name}` = {found}{wrong_type}; it must be {}", domain.describe()))
    };
    for (name, domain) in DOMAINS {
        if let Some(value) = object.get(*name) {
            check(name, value, *domain)?;
        }
    }
    if let Some(serde_json::Value::Object(intermediates)) = object.get("intermediates") {
        for (key, value) in intermediates {
            let domain = INTERMEDIATE_DOMAINS
                .iter()
                .find(|(name, _)| name == key)
                .map_or(Domain::Real, |(_, domain)| *domain);
            if value.is_null() {
                return Err(format!(
                    "printed `intermediates.{}` = null; it must be {}",
                    excerpt(key, 64),
                    domain.describe()
                ));
            }
            check(&format!("intermediates.{}", excerpt(key, 64)), value, domain)?;
        }
    }
    for list in ORDERED {
        let given: Vec<(&str, f64)> = list
            .iter()
            .filter_map(|name| {
                object.get(*name).and_then(serde_json::Value::as_f64).map(|v| (*name, v))
            })
            .collect();
        for pair in given.windows(2) {
            let [(low_name, low), (high_name, high)] = pair else { continue };
            if high < low {
                return Err(format!(
                    "printed `{high_name}` = {} below `{low_name}` = {}; they must be ordered {}",
                    crate::number::compact(*high),
                    crate::number::compact(*low),
                    list.join(" <= ")
                ));
            }
        }
    }
    Ok(())
}

/// A serde error in the words of the protocol: a missing field, an unknown one, or a value of
/// the wrong type, with the field's name when serde gives it.
fn serde_problem(error: &serde_json::Error) -> String {
    let text = error.to_string();
    // serde_json appends " at line L column C" to messages of `from_str`; a value has none.
    if let Some(field) = text.strip_prefix("unknown field ") {
        return format!("has an unknown field {field}");
    }
    if let Some(field) = text.strip_prefix("missing field ") {
        return format!("lacks the required field {field}");
    }
    format!("has a value of the wrong type: {text}")
}

fn status_name(status: ResponseStatus) -> &'static str {
    match status {
        ResponseStatus::Ok => "ok",
        ResponseStatus::Saturated => "saturated",
        ResponseStatus::Deadlock => "deadlock",
        ResponseStatus::Imprecise => "imprecise",
        ResponseStatus::Unsupported => "unsupported",
    }
}

/// Copies a response into a row (the row's scenario and load columns are already set).
pub(super) fn fill_row(row: &mut Row, r: &Response) {
    let status = match r.status {
        ResponseStatus::Saturated => Status::Saturated,
        ResponseStatus::Deadlock => Status::Deadlock,
        ResponseStatus::Imprecise => Status::Imprecise,
        ResponseStatus::Ok | ResponseStatus::Unsupported => Status::Ok,
    };
    let measurement = Measurement {
        status,
        detail: r.detail.clone(),
        latency: r.latency,
        latency_ci95: r.latency_ci95,
        network_latency: r.network_latency,
        source_wait: r.source_wait,
        unicast_latency: r.unicast_latency,
        round_trip_latency: r.round_trip_latency,
        multiplexing_degree: r.multiplexing_degree,
        channel_rate: r.channel_rate,
        blocking_probability: r.blocking_probability,
        throughput: r.throughput,
        throughput_ci95: r.throughput_ci95,
        hops: r.hops,
        cycles: r.cycles,
        flit_hops: r.flit_hops,
        messages_measured: r.messages_measured,
        intermediates: r.intermediates.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        fault_count: None,
        fault_map: None,
        latency_percentiles: None,
        latency_percentiles_ci95: [None; 4],
        network_latency_percentiles: None,
        source_wait_percentiles: None,
        unicast_latency_percentiles: None,
        node_throughput: None,
        link_loads: None,
        histograms: None,
    };
    fill(row, &measurement);
    if r.status == ResponseStatus::Unsupported {
        row.status = "unsupported".into();
    }
    row.offered_throughput = finite(r.offered_throughput);
    row.throughput_min = finite(r.throughput_min);
    row.throughput_max = finite(r.throughput_max);
    row.flit_throughput = finite(r.flit_throughput);
    row.flit_throughput_min = finite(r.flit_throughput_min);
    row.flit_throughput_max = finite(r.flit_throughput_max);
    row.source_drops = r.source_drops;
    row.latency_p50 = finite(r.latency_p50);
    row.latency_p90 = finite(r.latency_p90);
    row.latency_p99 = finite(r.latency_p99);
    row.latency_max = finite(r.latency_max);
    row.network_latency_p50 = finite(r.network_latency_p50);
    row.network_latency_p90 = finite(r.network_latency_p90);
    row.network_latency_p99 = finite(r.network_latency_p99);
    row.network_latency_max = finite(r.network_latency_max);
    row.source_wait_p50 = finite(r.source_wait_p50);
    row.source_wait_p90 = finite(r.source_wait_p90);
    row.source_wait_p99 = finite(r.source_wait_p99);
    row.source_wait_max = finite(r.source_wait_max);
}
