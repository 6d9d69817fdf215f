//! A figure page's caption: what the page shows ([`Flags`]), in sentences that explain the
//! encoding (lines, markers, caps, intervals, axes).

use super::ZERO_LOAD_FACTOR;
use super::data::{FigureData, Panel};
use super::ranges::Ranges;
use crate::report::columns;
use crate::spec::report::FigureSpec;

/// What a page shows, for its caption and its legend's status entries.
#[derive(Default)]
pub(super) struct Flags {
    has_model: bool,
    has_simulation: bool,
    has_ci: bool,
    has_saturation: bool,
    pub(super) has_saturated_simulation: bool,
    /// Some simulation point lies above the axis (past the latency cap or the `ylim`).
    pub(super) has_beyond_axis: bool,
    pub(super) has_deadlock: bool,
    pub(super) has_imprecise: bool,
    /// Some series has simulation markers and no model line: a thin line joins its markers.
    pub(super) has_joined: bool,
    /// The most fault maps behind a plotted interval (`Series::fault_maps`).
    fault_maps: Option<u32>,
    /// The latency cap or the `ylim` cut off data.
    clipped: bool,
    /// Some confidence bar runs past the axis.
    clipped_bar: bool,
}

impl Flags {
    pub(super) fn of(panels: &[Panel], ranges: &[Ranges]) -> Flags {
        let mut flags = Flags::default();
        for (panel, ranges) in panels.iter().zip(ranges) {
            flags.clipped |= ranges.clipped;
            for series in &panel.series {
                flags.has_model |= !series.model.is_empty();
                flags.has_simulation |= !series.simulation.is_empty()
                    || !series.simulation_saturated.is_empty()
                    || !series.simulation_deadlocked.is_empty()
                    || !series.simulation_imprecise.is_empty();
                flags.has_saturated_simulation |= !series.simulation_saturated.is_empty();
                flags.has_deadlock |= !series.simulation_deadlocked.is_empty();
                flags.has_imprecise |= !series.simulation_imprecise.is_empty();
                flags.has_beyond_axis |= series
                    .simulation
                    .iter()
                    .map(|point| (point.0, point.1))
                    .chain(series.simulation_imprecise.iter().map(|point| (point.0, point.1)))
                    .any(|(x, y)| ranges.x_contains(x) && y > ranges.cap * (1.0 + 1e-9));
                flags.has_joined |= series.model.is_empty()
                    && series.simulation.len() + series.simulation_imprecise.len() > 1;
                flags.has_ci |= series.simulation.iter().any(|point| point.2.is_some());
                flags.fault_maps = flags.fault_maps.max(series.fault_maps);
                flags.has_saturation |= series.saturation_x.is_some();
                flags.clipped_bar |= series.simulation.iter().any(|&(x, y, ci)| {
                    let Some(ci) = ci.filter(|ci| *ci > 0.0) else { return false };
                    ranges.x_contains(x)
                        && y >= ranges.y.0
                        && y <= ranges.cap
                        && (y + ci > ranges.y.1 || y - ci < ranges.y.0)
                });
            }
        }
        flags
    }
}

/// What the interval of a point with faults shows (`exec::evaluate::latency_interval`).
fn fault_map_sentence(maps: u32) -> String {
    if maps > 1 {
        format!(
            "With faults each replication draws its own fault map: the intervals are across up \
             to {maps} maps and include how the latency varies from map to map, not only the \
             simulation noise (the two parts: intermediates.latency_ci95_noise and \
             intermediates.fault_map_sd)."
        )
    } else {
        "With faults the intervals are the simulation noise given one fault map; the map-to-map \
         variation needs more replications."
            .to_owned()
    }
}

pub(super) fn caption(spec: &FigureSpec, data: &FigureData, flags: &Flags) -> String {
    let mut sentences = Vec::new();
    let model = if data.model_points > 0 {
        format!("Lines: model, {} points per scenario", data.model_points)
    } else {
        "Lines: model".to_owned()
    };
    match (flags.has_model, flags.has_simulation) {
        (true, true) if flags.has_ci => sentences
            .push(format!("{model}; markers: simulation mean with 95% confidence interval.")),
        (true, true) => sentences.push(format!("{model}; markers: simulation.")),
        (true, false) => sentences.push(format!("{model} (no simulation results).")),
        (false, true) => sentences.push("Markers: simulation (no model results).".to_owned()),
        (false, false) => sentences.push("No finite results to plot.".to_owned()),
    }
    if flags.has_joined {
        sentences.push(
            "Thin lines join the simulation markers of a series without a model line.".to_owned(),
        );
    }
    if !data.legend.is_empty() {
        sentences.push("Each series has its own colour, dash pattern and marker shape.".to_owned());
    }
    if let Some(maps) = flags.fault_maps.filter(|_| flags.has_ci) {
        sentences.push(fault_map_sentence(maps));
    }
    if flags.has_saturation {
        sentences.push("Dashed vertical lines: model saturation point.".to_owned());
    }
    let ylim_top = spec.ylim.as_ref().and_then(|limits| limits.value[1]).is_some();
    // One triangle per series where it leaves the axis, not one per load beyond.
    let where_it_leaves = "where a series' simulation leaves the axis";
    if flags.clipped && ylim_top {
        sentences.push(format!(
            "An open triangle on the top edge marks {where_it_leaves} (points above the axis or saturated)."
        ));
    } else if flags.clipped && columns::is_latency(&spec.y) {
        sentences.push(format!(
            "The y axis is capped at {ZERO_LOAD_FACTOR}\u{d7} the zero-load latency of each panel \
             or the largest finite simulated value, whichever is larger; an open triangle on the \
             top edge marks {where_it_leaves} (points beyond the cap or saturated)."
        ));
    } else if flags.has_saturated_simulation || flags.has_beyond_axis {
        sentences.push(format!(
            "An open triangle on the top edge marks {where_it_leaves} (saturated points)."
        ));
    }
    if flags.has_deadlock {
        sentences.push("Crosses on the top edge mark simulations that deadlocked.".to_owned());
    }
    if flags.has_imprecise {
        sentences.push(
            "A ring around a marker flags a simulation point that stopped short of its target \
             precision (an estimate, with its interval)."
                .to_owned(),
        );
    }
    if flags.clipped_bar {
        sentences.push(
            "Confidence bars that run past the axis are cut there and end in an arrowhead."
                .to_owned(),
        );
    }
    match (spec.log_x, spec.log_y) {
        (true, true) => sentences.push("Logarithmic axes.".to_owned()),
        (true, false) => sentences.push("Logarithmic x axis.".to_owned()),
        (false, true) => sentences.push("Logarithmic y axis.".to_owned()),
        (false, false) => {}
    }
    if spec.shared_y {
        sentences.push("All panels share the y axis range.".to_owned());
    }
    if let Some(cap) = data.thinned {
        sentences.push(format!(
            "Series of more than {cap} points show {cap} evenly spaced ones; every point is in results.parquet."
        ));
    }
    sentences.join(" ")
}
