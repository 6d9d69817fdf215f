//! The `load:` section: rates, ranges, fractions of saturation and trace time scales.

use super::*;

/// `load.saturation`: whose saturation the fractions are of. `simulation` needs the loads as
/// fractions, the simulator with at least one saturation search, and no model (the model's
/// rows would need their own identities at the simulator's loads: not built).
pub(super) fn saturation_of(
    load: &Spanned<LoadSpec>,
    model: Option<&ModelChoice>,
    simulation: Option<&SimulationChoice>,
    diags: &mut Diags,
) -> SaturationOf {
    let Some(of) = &load.value.saturation else { return SaturationOf::Model };
    if of.value.is_model() {
        return SaturationOf::Model;
    }
    if load.value.fraction_of_saturation.is_none() {
        diags.error(
            of.referenced,
            "`saturation` says whose saturation `fraction_of_saturation` is a fraction of, \
             and the load gives no fractions",
            Some("give the load as `fraction_of_saturation: [...]`, or remove `saturation`".into()),
        );
    }
    match simulation {
        Some(simulation) if simulation.saturation_searches > 0 => {}
        _ => diags.error(
            of.referenced,
            "`saturation: simulation` takes the simulator's saturation throughput, which \
             `methods.simulation.saturation_searches` finds, and no search is planned",
            Some("add `saturation_searches: 3` to `methods.simulation`".into()),
        ),
    }
    if let Some(model) = model {
        diags.error(
            model.location,
            "the model cannot be evaluated at fractions of the simulator's saturation \
             (`load.saturation: simulation`): not supported yet",
            Some(
                "run the model in a spec of its own, or give the loads as fractions of the \
                 model's saturation (`saturation: model`)"
                    .into(),
            ),
        );
    }
    SaturationOf::Simulation
}

/// The load points. `saturation_known`: whether a method computes the saturation the
/// fractions are of (a model, or the simulator's searches).
pub(super) fn load(
    load: &Spanned<LoadSpec>,
    saturation_known: bool,
    replays: bool,
    diags: &mut Diags,
) -> Option<Load> {
    let spec = &load.value;
    match (&spec.trace_time_scale, replays) {
        (Some(scales), true) => {
            for (other, name) in
                [(&spec.rates, "rates"), (&spec.fraction_of_saturation, "fraction_of_saturation")]
            {
                if let Some(other) = other {
                    diags.error(
                        other.referenced,
                        format!("`{name}` does not apply to trace traffic: the trace offers its own load"),
                        Some(format!("remove `{name}`; `trace_time_scale` sweeps the trace's load")),
                    );
                }
            }
            let before = diags.0.len();
            let values = column(diags, Some(scales), None, |v: &f64| {
                if v.is_finite() && *v > 0.0 && *v <= 1e9 {
                    Ok(())
                } else {
                    Err(format!(
                        "a time scale must be a positive, finite number up to 1e9, found {}",
                        crate::number::compact(*v)
                    ))
                }
            });
            return (diags.0.len() == before)
                .then(|| Load::TraceTimeScale(values.into_iter().map(|v| v.0).collect()));
        }
        (Some(scales), false) => {
            diags.error(
                scales.referenced,
                "`trace_time_scale` applies to `traffic.pattern: trace` only",
                Some("give the load as `rates:`, or replay a trace".into()),
            );
            return None;
        }
        (None, true) => {
            let at = spec.rates.as_ref().or(spec.fraction_of_saturation.as_ref());
            diags.error(
                at.map_or(load.referenced, |f| f.referenced),
                "trace traffic offers its own load: give `load.trace_time_scale`, the time scale \
                 factors of the replay, instead of rates",
                Some("e.g. `trace_time_scale: [2, 1.5, 1, 0.8]` (below 1: higher load)".into()),
            );
            return None;
        }
        (None, false) => {}
    }
    let positive = |what: &'static str| {
        move |v: &f64| {
            if v.is_finite() && *v > 0.0 {
                Ok(())
            } else {
                Err(format!(
                    "{what} must be a positive, finite number, found {}",
                    crate::number::compact(*v)
                ))
            }
        }
    };
    match (&spec.rates, &spec.fraction_of_saturation) {
        (Some(rates), None) => {
            let before = diags.0.len();
            let values = column(diags, Some(rates), None, positive("a rate"));
            (diags.0.len() == before)
                .then(|| Load::Rates(values.into_iter().map(|v| v.0).collect()))
        }
        (None, Some(fractions)) => {
            if !saturation_known {
                diags.error(
                    fractions.referenced,
                    "`fraction_of_saturation` needs a model to compute the saturation rate, or \
                     the simulator's saturation searches",
                    Some(
                        "add `methods.model`, or `saturation: simulation` with \
                         `methods.simulation.saturation_searches`, or give the load as `rates:`"
                            .into(),
                    ),
                );
                return None;
            }
            let before = diags.0.len();
            let values = column(diags, Some(fractions), None, positive("a fraction of saturation"));
            (diags.0.len() == before)
                .then(|| Load::FractionOfSaturation(values.into_iter().map(|v| v.0).collect()))
        }
        (Some(_), Some(f)) => {
            diags.error(f.referenced, "give `rates` or `fraction_of_saturation`, not both", None);
            None
        }
        (None, None) => {
            diags.error(
                load.referenced,
                "`load` needs `rates` or `fraction_of_saturation`",
                Some("e.g. `rates: {from: 0.001, to: 0.01, points: 10}`".into()),
            );
            None
        }
    }
}
