//! A figure page's caption: what the page shows ([`Flags`]), in sentences that explain the
//! encoding (lines, markers, caps, intervals, axes).

use super::ZERO_LOAD_FACTOR;
use super::data::{FigureData, Panel};
use super::ranges::Ranges;
use crate::report::columns;
use crate::spec::report::FigureSpec;

/// What a page shows, for its caption.
#[derive(Default)]
pub(super) struct Flags {
    has_model: bool,
    has_simulation: bool,
    has_ci: bool,
    has_saturation: bool,
    has_saturated_simulation: bool,
    has_deadlock: bool,
    has_imprecise: bool,
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
    if let Some(maps) = flags.fault_maps.filter(|_| flags.has_ci) {
        sentences.push(fault_map_sentence(maps));
    }
    if flags.has_saturation {
        sentences.push("Dashed vertical lines: model saturation point.".to_owned());
    }
    let ylim_top = spec.ylim.as_ref().and_then(|limits| limits.value[1]).is_some();
    if flags.clipped && ylim_top {
        sentences.push(
            "Open triangles on the top edge mark simulation points above the axis or saturated."
                .to_owned(),
        );
    } else if flags.clipped && columns::is_latency(&spec.y) {
        sentences.push(format!(
            "The y axis is capped at {ZERO_LOAD_FACTOR}\u{d7} the zero-load latency of each panel \
             or the largest finite simulated value, whichever is larger; open triangles on the \
             top edge mark simulation points beyond the cap or saturated."
        ));
    } else if flags.has_saturated_simulation {
        sentences
            .push("Open triangles on the top edge mark saturated simulation points.".to_owned());
    }
    if flags.has_deadlock {
        sentences.push("Crosses on the top edge mark simulations that deadlocked.".to_owned());
    }
    if flags.has_imprecise {
        sentences.push(
            "Open circles mark simulation points that stopped short of their target precision \
             (estimates)."
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
