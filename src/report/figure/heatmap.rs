//! `kind: link_heatmap` figures: the utilisation of every link at a chosen point, from
//! `links.parquet`. A 2-D torus or mesh is drawn as its router grid with each link a coloured
//! arrow between neighbours (two lanes per neighbouring pair, traffic keeping right; a torus's
//! wrap-around links as stubs leaving and entering the grid's edge), with a colour-scale bar
//! from 0 to the busiest link. Other topologies get a bar chart of the mean utilisation per
//! link class (dimension, fat-tree level and direction, dragonfly link kind) with the busiest
//! link of each class marked, which is what a tree's or a dragonfly's balance shows.
//! One page (SVG, PDF, CSV) per chosen point.

use std::fmt::Write as _;

use super::svg::{Anchor, LABEL_FONT_PT, Svg, TICK_FONT_PT, colour};
use super::{COLUMN_WIDTH_PT, Figure};
use crate::store::links::LinkRow;
use crate::store::row::Row;

/// Space for the title above the plot and the colour bar below it (pt).
const TITLE_PT: f64 = 16.0;
const BAR_AREA_PT: f64 = 40.0;
const MARGIN_PT: f64 = 10.0;

/// The figure of one point: `links` are that point's physical links (no per-VC rows).
pub(super) fn point_figure(stem: String, title: String, point: &Row, links: &[&LinkRow]) -> Figure {
    // A 2-ary torus has two links each way between neighbours: its grid would draw them over
    // each other, so it gets the per-class bars.
    let grid = crate::sim::links::is_grid(&topology_of(point)) && point.radix >= 3;
    let (svg, caption) = if grid && !links.is_empty() {
        (
            grid_svg(&title, point.radix, point.topology == "torus", links),
            grid_caption(point, links),
        )
    } else {
        (class_svg(&title, links), class_caption(links))
    };
    let csv = csv(&stem, links);
    super::side::page(stem, title, caption, svg, csv)
}

/// The topology of a row, as far as the heat map needs it (the grid shapes).
fn topology_of(row: &Row) -> crate::scenario::Topology {
    use crate::scenario::Topology;
    match row.topology.as_str() {
        "torus" => Topology::Torus { radix: row.radix, dimensions: row.dimensions },
        "mesh" => Topology::Mesh { radix: row.radix, dimensions: row.dimensions },
        _ => Topology::Hypercube { dimensions: row.dimensions.max(1) },
    }
}

fn busiest(links: &[&LinkRow]) -> f64 {
    links.iter().map(|l| l.utilization).fold(0.0, f64::max)
}

/// The colour scale's top: the busiest link, at least a little above 0.
fn scale_top(links: &[&LinkRow]) -> f64 {
    let top = busiest(links);
    if top > 0.0 { top } else { 1.0 }
}

/// The router grid of a k x k torus or mesh (k >= 3).
fn grid_svg(title: &str, k: u32, torus: bool, links: &[&LinkRow]) -> String {
    let width = COLUMN_WIDTH_PT;
    let side = width - 2.0 * MARGIN_PT - 12.0;
    let cell = side / f64::from(k.max(1));
    let left = MARGIN_PT + 12.0;
    let top = TITLE_PT + 4.0;
    let height = top + side + BAR_AREA_PT + 4.0;
    let mut svg = Svg::new(width, height);
    svg.text(width / 2.0, 11.0, LABEL_FONT_PT, Anchor::Middle, title);
    let centre = |id: u32| {
        let (x, y) = (id % k, id / k);
        (left + (f64::from(x) + 0.5) * cell, top + (f64::from(k - 1 - y) + 0.5) * cell)
    };
    let top_value = scale_top(links);
    let lane = cell * 0.1;
    let thickness = (cell * 0.07).clamp(0.5, 2.0);
    for link in links {
        let plus = link.direction.starts_with('+');
        let horizontal = link.direction.ends_with("x0");
        let (sx, sy) = centre(link.source);
        let (tx, ty) = centre(link.destination);
        let (ux, uy) = match (horizontal, plus) {
            (true, true) => (1.0, 0.0),
            (true, false) => (-1.0, 0.0),
            (false, true) => (0.0, -1.0),
            (false, false) => (0.0, 1.0),
        };
        // Keep right: the lane is offset to the right of the direction of travel.
        let (ox, oy) = (-uy * lane, ux * lane);
        let fill = colour(link.utilization / top_value);
        let wraps = torus && {
            let (a, b) = if horizontal {
                (link.source % k, link.destination % k)
            } else {
                (link.source / k, link.destination / k)
            };
            (plus && b < a) || (!plus && b > a)
        };
        if wraps {
            // Out of the source's edge, into the destination's from the other side.
            let from = (sx + ux * cell * 0.14 + ox, sy + uy * cell * 0.14 + oy);
            let out = (sx + ux * cell * 0.5 + ox, sy + uy * cell * 0.5 + oy);
            svg.line(from, out, &fill, thickness);
            let into = (tx - ux * cell * 0.5 + ox, ty - uy * cell * 0.5 + oy);
            let end = (tx - ux * cell * 0.14 + ox, ty - uy * cell * 0.14 + oy);
            arrow(&mut svg, into, end, (ux, uy), &fill, thickness);
        } else {
            let from = (sx + ux * cell * 0.14 + ox, sy + uy * cell * 0.14 + oy);
            let end = (tx - ux * cell * 0.14 + ox, ty - uy * cell * 0.14 + oy);
            arrow(&mut svg, from, end, (ux, uy), &fill, thickness);
        }
    }
    let router = (cell * 0.24).clamp(1.0, 12.0);
    for id in 0..k * k {
        let (x, y) = centre(id);
        svg.rect(x - router / 2.0, y - router / 2.0, router, router, "#d9d9d9", Some("#404040"));
    }
    svg.text(
        left + side / 2.0,
        top + side + 9.0,
        TICK_FONT_PT,
        Anchor::Middle,
        "dimension 0 \u{2192}",
    );
    svg.vertical_text(left - 6.0, top + side / 2.0, TICK_FONT_PT, "dimension 1 \u{2192}");
    let bar_width = side * 0.7;
    svg.colour_bar(
        left + (side - bar_width) / 2.0,
        top + side + 12.0,
        bar_width,
        (0.0, top_value),
        "link utilisation (flits/cycle)",
    );
    svg.finish()
}

/// A line from `from` to `to` ending in an arrowhead pointing along `(ux, uy)`.
fn arrow(
    svg: &mut Svg,
    from: (f64, f64),
    to: (f64, f64),
    (ux, uy): (f64, f64),
    fill: &str,
    thickness: f64,
) {
    let head = (thickness * 1.8).max(1.2);
    let base = (to.0 - ux * head, to.1 - uy * head);
    svg.line(from, base, fill, thickness);
    let (px, py) = (-uy * head * 0.6, ux * head * 0.6);
    svg.polygon(&[to, (base.0 + px, base.1 + py), (base.0 - px, base.1 - py)], fill);
}

/// Mean and max utilisation per link class, classes in natural order (`x0`, `x1`, ...).
fn classes<'a>(links: &[&'a LinkRow]) -> Vec<(&'a str, f64, f64, usize)> {
    let mut out: Vec<(&str, f64, f64, usize)> = Vec::new();
    for link in links {
        match out.iter_mut().find(|(class, ..)| *class == link.class) {
            Some(entry) => {
                entry.1 += link.utilization;
                entry.2 = entry.2.max(link.utilization);
                entry.3 += 1;
            }
            None => out.push((&link.class, link.utilization, link.utilization, 1)),
        }
    }
    for entry in &mut out {
        entry.1 /= entry.3 as f64;
    }
    out.sort_by(|a, b| super::labels::natural_cmp(a.0, b.0));
    out
}

/// Horizontal bars of the mean utilisation per class, a tick at each class's busiest link.
fn class_svg(title: &str, links: &[&LinkRow]) -> String {
    let width = COLUMN_WIDTH_PT;
    let classes = classes(links);
    let label_width = classes
        .iter()
        .map(|(class, ..)| super::draw::text_width(class, TICK_FONT_PT))
        .fold(20.0, f64::max);
    let left = MARGIN_PT + label_width + 4.0;
    let right = width - MARGIN_PT - 6.0;
    let row_height = 14.0;
    let top = TITLE_PT + 4.0;
    let plot_height = row_height * classes.len().max(1) as f64;
    let height = top + plot_height + 40.0;
    let mut svg = Svg::new(width, height);
    svg.text(width / 2.0, 11.0, LABEL_FONT_PT, Anchor::Middle, title);
    let ticks = super::draw::linear_ticks(0.0, scale_top(links), 4);
    let hi = ticks.last().map_or(1.0, |t| t.0).max(scale_top(links));
    let x = |value: f64| left + (right - left) * value / hi;
    for (i, (class, mean, max, _)) in classes.iter().enumerate() {
        let y = top + row_height * i as f64;
        svg.text(left - 4.0, y + row_height * 0.68, TICK_FONT_PT, Anchor::End, class);
        svg.rect(left, y + 3.0, x(*mean) - left, row_height - 6.0, "#0072b2", None);
        svg.line((x(*max), y + 1.5), (x(*max), y + row_height - 1.5), "black", 1.0);
    }
    let axis_y = top + plot_height;
    svg.line((left, axis_y), (right, axis_y), "black", 0.5);
    for (value, text) in ticks {
        svg.line((x(value), axis_y), (x(value), axis_y + 3.0), "black", 0.5);
        svg.text(x(value), axis_y + 11.0, TICK_FONT_PT, Anchor::Middle, &text);
    }
    svg.text(
        (left + right) / 2.0,
        axis_y + 24.0,
        LABEL_FONT_PT,
        Anchor::Middle,
        "link utilisation (flits/cycle)",
    );
    svg.finish()
}

fn grid_caption(point: &Row, links: &[&LinkRow]) -> String {
    let wrap = if point.topology == "torus" {
        " Wrap-around links leave one edge of the grid and enter at the other."
    } else {
        ""
    };
    format!(
        "Utilisation of every link (flits per cycle of the measurement window) at this point: \
         each arrow is one direction of a link, on the right-hand lane of its direction of \
         travel; the colour scale runs from 0 to the busiest link ({}).{wrap}",
        crate::report::columns::format_number(busiest(links))
    )
}

fn class_caption(links: &[&LinkRow]) -> String {
    format!(
        "Mean utilisation (flits per cycle of the measurement window) of the links of each \
         class (bars) and the busiest link of the class (ticks), over {} links.",
        links.len()
    )
}

/// The tidy CSV of a page: one line per link.
/// The header line of a heat map page's CSV.
pub(super) const CSV_HEADER: &str = "figure,task_id,rate,source,destination,source_name,destination_name,direction,class,flits,window_cycles,utilization\n";

fn csv(stem: &str, links: &[&LinkRow]) -> String {
    let mut out = String::from(CSV_HEADER);
    for l in links {
        let _ = writeln!(
            out,
            "{stem},{},{},{},{},\"{}\",\"{}\",{},{},{},{},{}",
            l.key.task_id,
            l.key.rate,
            l.source,
            l.destination,
            l.source_name,
            l.destination_name,
            l.direction,
            l.class,
            l.flits,
            l.window_cycles,
            l.utilization
        );
    }
    out
}
