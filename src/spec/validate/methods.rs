//! The `methods:` section: the model, the simulator's settings and whether each requested
//! evaluator covers every scenario.

use super::*;

/// Points of the dense model curve per scenario unless the spec says otherwise.
pub const DEFAULT_CURVE_POINTS: u32 = 100;
/// The most points a dense model curve may have.
pub const MAX_CURVE_POINTS: u32 = 1000;

pub(super) fn model_choice(methods: &MethodsSpec, diags: &mut Diags) -> Option<ModelChoice> {
    let method = methods.model.as_ref()?;
    let curve_points = match &method.curve_points {
        None => DEFAULT_CURVE_POINTS,
        Some(points) if points.value > MAX_CURVE_POINTS => {
            diags.error(
                points.referenced,
                format!(
                    "`curve_points: {}` asks for more than {MAX_CURVE_POINTS} points per curve",
                    points.value
                ),
                Some(format!("{DEFAULT_CURVE_POINTS} points draw a smooth curve; use 0 for none")),
            );
            DEFAULT_CURVE_POINTS
        }
        Some(points) => points.value,
    };
    let name = method.name.value;
    Some(ModelChoice {
        name,
        options: ModelOptions { literal_eq22: method.literal_eq22 },
        curve_points,
        location: method.name.referenced,
    })
}

pub(super) fn simulation_choice(
    methods: &MethodsSpec,
    diags: &mut Diags,
) -> Option<SimulationChoice> {
    let method = methods.simulation.as_ref()?;
    let cycles = method.cycles.as_ref().map_or(DEFAULT_CYCLES, |c| c.value);
    if let Some(c) = &method.cycles
        && c.value == 0
    {
        diags.error(c.referenced, "`cycles` must be at least 1", None);
    }
    // At most 10^10 cycles each (`scenario::bounds`, as on the command line): the plan's
    // estimates and the simulator's counters stay finite.
    for (field, value) in [
        ("cycles", &method.cycles),
        ("warmup_cycles", &method.warmup_cycles),
        ("max_cycles", &method.max_cycles),
        ("deadlock_cycles", &method.deadlock_cycles),
    ] {
        if let Some(v) = value
            && v.value > bounds::MAX_CYCLES
            && let Err(message) = bounds::cycles(field, v.value)
        {
            diags.error(
                v.referenced,
                format!("`{field}`: {message}"),
                Some("a simulation that long would not end; simulate fewer cycles".into()),
            );
        }
    }
    let warmup_cycles = method.warmup_cycles.as_ref().map_or(DEFAULT_WARMUP_CYCLES, |w| w.value);
    let measure = measure(method, diags);
    // Throughput mode's fixed window has no precision target: its interval needs replications.
    let default_replications = match measure.is_latency() {
        true => DEFAULT_REPLICATIONS,
        false => DEFAULT_THROUGHPUT_REPLICATIONS,
    };
    let replications = method.replications.as_ref().map_or(default_replications, |r| r.value);
    if let Some(r) = &method.replications
        && !(1..=10_000).contains(&r.value)
    {
        diags.error(
            r.referenced,
            format!("`replications` must be 1 to 10000, found {}", r.value),
            None,
        );
    }
    if let Some(p) = &method.target_precision
        && let Err(message) = check_target_precision(p.value)
    {
        diags.error(
            p.referenced,
            format!("`target_precision` {message}"),
            Some("for example 0.02: stop when the 95% CI is within 2% of the mean".into()),
        );
    }
    let deadlock_cycles =
        method.deadlock_cycles.as_ref().map_or(DEFAULT_DEADLOCK_CYCLES, |d| d.value);
    if let Some(d) = &method.deadlock_cycles
        && d.value == 0
    {
        diags.error(d.referenced, "`deadlock_cycles` must be at least 1", None);
    }
    if method.target_precision.is_some()
        && let Some(max_cycles) = method.max_cycles.as_ref().map(|m| m.value)
        && max_cycles <= warmup_cycles
    {
        let location = method.target_precision.as_ref().map_or(Location::UNKNOWN, |p| p.referenced);
        diags.error(
            location,
            format!("`max_cycles` = {max_cycles} leaves no cycles after the warm-up"),
            Some("raise `max_cycles` above `warmup_cycles`".into()),
        );
    }
    let saturation_searches = method.saturation_searches.as_ref().map_or(0, |n| n.value);
    if let Some(n) = &method.saturation_searches
        && let Err(message) = check_saturation_searches(n.value)
    {
        diags.error(n.referenced, message, None);
    }
    if let Some(t) = &method.threads
        && !(1..=MAX_THREADS).contains(&t.value)
    {
        diags.error(
            t.referenced,
            format!("`threads` must be 1 to {MAX_THREADS}, found {}", t.value),
            Some("leave `threads` out to let the run give each task its threads".into()),
        );
    }
    let defaults = SimOptions::default();
    Some(SimulationChoice {
        options: SimOptions {
            warmup_cycles,
            cycles,
            target_precision: method.target_precision.as_ref().map(|p| p.value),
            max_cycles: method
                .max_cycles
                .as_ref()
                .map_or(defaults.max_cycles.max(cycles), |m| m.value),
            deadlock_cycles,
            measure,
            link_loads: method.link_loads || method.link_loads_per_vc,
            link_loads_per_vc: method.link_loads_per_vc,
            ..defaults
        },
        replications,
        saturation_searches,
        threads: method.threads.as_ref().map(|t| t.value),
    })
}

/// The most threads `methods.simulation.threads` may ask for.
pub const MAX_THREADS: u32 = 256;

/// The most saturation searches per scenario and method.
pub const MAX_SATURATION_SEARCHES: u32 = 100;

/// The one rule for `saturation_searches`, of the simulator and of external simulations.
pub fn check_saturation_searches(searches: u32) -> Result<(), String> {
    if searches <= MAX_SATURATION_SEARCHES {
        Ok(())
    } else {
        Err(format!(
            "`saturation_searches` must be 0 to {MAX_SATURATION_SEARCHES}, found {searches} \
             (three give a 95% interval)"
        ))
    }
}

/// `methods.simulation.measure` and its `source_queue_capacity`.
pub(super) fn measure(method: &SimulationMethod, diags: &mut Diags) -> sim::Measure {
    let capacity = method.source_queue_capacity.as_ref();
    if let Some(c) = capacity
        && c.value == 0
    {
        diags.error(c.referenced, "`source_queue_capacity` must be at least 1 message", None);
    }
    if let Some(c) = capacity
        && c.value > bounds::MAX_SOURCE_QUEUE_CAPACITY
        && let Err(message) = bounds::source_queue_capacity(c.value, 1)
    {
        diags.error(c.referenced, message, None);
    }
    match method.measure.as_ref().map(|m| m.value) {
        None | Some(MeasureName::Latency) => {
            if let Some(c) = capacity {
                diags.error(
                    c.referenced,
                    "`source_queue_capacity` applies to `measure: throughput` only",
                    Some("add `measure: throughput`, or leave `source_queue_capacity` out".into()),
                );
            }
            sim::Measure::Latency
        }
        Some(MeasureName::Throughput) => {
            if let Some(p) = &method.target_precision {
                diags.error(
                    p.referenced,
                    "`target_precision` applies to `measure: latency` only: throughput mode \
                     measures a fixed window of `cycles`",
                    Some("leave `target_precision` out, or use `measure: latency`".into()),
                );
            }
            sim::Measure::Throughput {
                source_queue_capacity: capacity
                    .map_or(DEFAULT_SOURCE_QUEUE_CAPACITY, |c| c.value.max(1)),
            }
        }
    }
}

/// The one rule for a target precision, in specs and on `runner simulate`'s command line.
pub fn check_target_precision(precision: f64) -> Result<(), String> {
    if precision.is_finite() && precision > 0.0 && precision < 1.0 {
        Ok(())
    } else {
        Err(format!(
            "is a relative half-width in (0, 1), found {}",
            crate::number::compact(precision)
        ))
    }
}

/// Asks each requested evaluator whether it covers the scenario.
pub(super) fn check_methods(
    point: &ScenarioPoint,
    columns: &Columns,
    methods: &Spanned<MethodsSpec>,
    model: Option<&ModelChoice>,
    simulate: bool,
    diags: &mut Diags,
) {
    if let Some(model) = model
        && let Err(error) = model::check(model.name, &point.scenario)
    {
        diags.error(
            model.location,
            format!("model `{}` cannot evaluate {}: {error}", model.name.as_str(), point.label),
            Some("see `runner models` for what each model covers".into()),
        );
    }
    if simulate && let Err(error) = sim::check(&point.scenario) {
        let location = columns.written[ROUTING].unwrap_or(methods.referenced);
        diags.error(location, format!("the simulator cannot run {}: {error}", point.label), None);
    }
    // Throughput mode: what all source queues may hold together (nodes x capacity).
    if simulate
        && let Some(simulation) = &methods.value.simulation
        && matches!(simulation.measure.as_ref().map(|m| m.value), Some(MeasureName::Throughput))
    {
        let capacity = simulation.source_queue_capacity.as_ref();
        let value = capacity.map_or(DEFAULT_SOURCE_QUEUE_CAPACITY, |c| c.value);
        if (1..=bounds::MAX_SOURCE_QUEUE_CAPACITY).contains(&value)
            && let Err(message) = bounds::source_queue_capacity(value, point.scenario.nodes())
        {
            let location = capacity
                .map(|c| c.referenced)
                .or(simulation.measure.as_ref().map(|m| m.referenced))
                .unwrap_or(methods.referenced);
            diags.error(location, format!("{}: {message}", point.label), None);
        }
    }
}
