//! The caption sentence naming the traffic's message-length distribution and injection process
//! when they are not the papers' defaults (fixed lengths, Poisson arrivals): a reader of a
//! figure of bimodal or bursty traffic must not take it for the usual workload.

use crate::report::columns::format_number;
use crate::store::row::Row;

/// "Message lengths: bimodal, 4 or 64 flits (mean 32). Injection: on/off sources, bursts of
/// 8 messages on average." for the non-default conditions of `rows`, or `None` when every
/// row has fixed lengths and Poisson arrivals (or says nothing, as older files).
pub(super) fn sentence<'a>(rows: impl Iterator<Item = &'a Row>) -> Option<String> {
    let mut lengths: Vec<String> = Vec::new();
    let mut injections: Vec<String> = Vec::new();
    for row in rows {
        let length = length_text(row);
        if let Some(length) = length
            && !lengths.contains(&length)
        {
            lengths.push(length);
        }
        let injection = injection_text(row);
        if let Some(injection) = injection
            && !injections.contains(&injection)
        {
            injections.push(injection);
        }
    }
    let mut sentences = Vec::new();
    if !lengths.is_empty() {
        sentences.push(format!("Message lengths: {}.", lengths.join("; ")));
    }
    if !injections.is_empty() {
        sentences.push(format!("Injection: {}.", injections.join("; ")));
    }
    (!sentences.is_empty()).then(|| sentences.join(" "))
}

fn length_text(row: &Row) -> Option<String> {
    let distribution = row.message_length_distribution.as_deref()?;
    let mean = row.message_length;
    let (min, max) = (row.message_length_min, row.message_length_max);
    Some(match (distribution, min, max) {
        ("fixed", ..) => return None,
        ("bimodal", Some(min), Some(max)) => {
            format!("bimodal, {min} or {max} flits (mean {mean})")
        }
        ("uniform", Some(min), Some(max)) => {
            format!("uniform, {min} to {max} flits (mean {mean})")
        }
        ("geometric", ..) => format!("geometric, mean {mean} flits"),
        (other, ..) => format!("{other}, mean {mean} flits"),
    })
}

fn injection_text(row: &Row) -> Option<String> {
    Some(match (row.injection_process.as_deref()?, row.burst_length) {
        ("poisson", _) => return None,
        ("bernoulli", _) => "Bernoulli sources (one message per node and cycle with probability \
                             the rate)"
            .to_owned(),
        ("on_off", Some(burst)) => {
            format!("on/off sources, bursts of {} messages on average", format_number(burst))
        }
        (other, _) => format!("{} sources", other.replace('_', "/")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_say_nothing_and_others_are_named() {
        let fixed = Row {
            message_length: 32,
            message_length_distribution: Some("fixed".into()),
            injection_process: Some("poisson".into()),
            ..Row::default()
        };
        assert_eq!(sentence([&fixed, &Row::default()].into_iter()), None);
        let bimodal = Row {
            message_length_distribution: Some("bimodal".into()),
            message_length_min: Some(4),
            message_length_max: Some(64),
            injection_process: Some("on_off".into()),
            burst_length: Some(8.0),
            ..fixed.clone()
        };
        assert_eq!(
            sentence([&fixed, &bimodal, &bimodal].into_iter()).as_deref(),
            Some(
                "Message lengths: bimodal, 4 or 64 flits (mean 32). Injection: on/off sources, \
                 bursts of 8 messages on average."
            )
        );
    }
}
