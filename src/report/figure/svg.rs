//! A small SVG writer for the figures drawn without plotters (`heatmap`, `histogram`): text in
//! the generic family `sans-serif` (which the PDF step maps to the bundled DejaVu Sans), shapes
//! in SVG units of 1/`UNITS_PER_PT` pt, and the sequential colour scale of the heat maps.

use std::fmt::Write as _;

use super::UNITS_PER_PT;

/// Tick and label font sizes (pt), as the line figures use.
pub(super) const TICK_FONT_PT: f64 = 7.5;
pub(super) const LABEL_FONT_PT: f64 = 8.0;

/// An SVG document being written, sized in points.
pub(super) struct Svg {
    body: String,
    width_pt: f64,
    height_pt: f64,
}

/// Horizontal text anchor.
#[derive(Clone, Copy)]
pub(super) enum Anchor {
    Start,
    Middle,
    End,
}

fn u(points: f64) -> f64 {
    (points * UNITS_PER_PT * 100.0).round() / 100.0
}

/// `text` with `&`, `<`, `>` and `"` escaped.
pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

impl Svg {
    /// An empty page `width_pt` x `height_pt` points.
    pub(super) fn new(width_pt: f64, height_pt: f64) -> Svg {
        Svg { body: String::new(), width_pt, height_pt }
    }

    /// Text at (`x`, `y`) pt, `y` its baseline.
    pub(super) fn text(&mut self, x: f64, y: f64, size_pt: f64, anchor: Anchor, text: &str) {
        let anchor = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        };
        let _ = writeln!(
            self.body,
            r#"<text x="{}" y="{}" font-family="sans-serif" font-size="{}" text-anchor="{anchor}" fill="black">{}</text>"#,
            u(x),
            u(y),
            u(size_pt),
            escape(text)
        );
    }

    /// Text rotated a quarter turn anticlockwise, centred on (`x`, `y`) pt (a y axis label).
    pub(super) fn vertical_text(&mut self, x: f64, y: f64, size_pt: f64, text: &str) {
        let _ = writeln!(
            self.body,
            r#"<text x="{0}" y="{1}" font-family="sans-serif" font-size="{2}" text-anchor="middle" fill="black" transform="rotate(-90 {0} {1})">{3}</text>"#,
            u(x),
            u(y),
            u(size_pt),
            escape(text)
        );
    }

    /// A filled rectangle (pt), with an optional outline.
    pub(super) fn rect(
        &mut self,
        x: f64,
        y: f64,
        w: f64,
        h: f64,
        fill: &str,
        stroke: Option<&str>,
    ) {
        let stroke = stroke.map_or(String::new(), |colour| {
            format!(r#" stroke="{colour}" stroke-width="{}""#, u(0.4))
        });
        let _ = writeln!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"{stroke}/>"#,
            u(x),
            u(y),
            u(w.max(0.0)),
            u(h.max(0.0))
        );
    }

    /// A straight line (pt) of `width_pt`.
    pub(super) fn line(&mut self, from: (f64, f64), to: (f64, f64), colour: &str, width_pt: f64) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="{}"/>"#,
            u(from.0),
            u(from.1),
            u(to.0),
            u(to.1),
            u(width_pt)
        );
    }

    /// A dashed vertical line at `x` from `top` to `bottom` (pt).
    pub(super) fn dashed_vertical(&mut self, x: f64, (top, bottom): (f64, f64), colour: &str) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{colour}" stroke-width="{3}" stroke-dasharray="{4} {5}"/>"#,
            u(x),
            u(top),
            u(bottom),
            u(0.75),
            u(3.0),
            u(2.0)
        );
    }

    /// A filled polygon (pt).
    pub(super) fn polygon(&mut self, points: &[(f64, f64)], fill: &str) {
        let points: Vec<String> =
            points.iter().map(|(x, y)| format!("{},{}", u(*x), u(*y))).collect();
        let _ = writeln!(self.body, r#"<polygon points="{}" fill="{fill}"/>"#, points.join(" "));
    }

    /// A horizontal colour-scale bar from `lo` to `hi` with ticks below, at (`x`, `y`) pt.
    pub(super) fn colour_bar(&mut self, x: f64, y: f64, w: f64, (lo, hi): (f64, f64), label: &str) {
        let steps = 64;
        for i in 0..steps {
            let t = (f64::from(i) + 0.5) / f64::from(steps);
            let step = w / f64::from(steps);
            self.rect(x + f64::from(i) * step, y, step + 0.05, 6.0, &colour(t), None);
        }
        self.rect(x, y, w, 6.0, "none", Some("black"));
        for (value, text) in super::draw::linear_ticks(lo, hi, 4) {
            let fraction = if hi > lo { (value - lo) / (hi - lo) } else { 0.0 };
            if !(-1e-9..=1.0 + 1e-9).contains(&fraction) {
                continue;
            }
            let tx = x + fraction * w;
            self.line((tx, y + 6.0), (tx, y + 8.5), "black", 0.5);
            self.text(tx, y + 15.5, TICK_FONT_PT, Anchor::Middle, &text);
        }
        self.text(x + w / 2.0, y + 26.0, LABEL_FONT_PT, Anchor::Middle, label);
    }

    /// The finished document.
    pub(super) fn finish(self) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n{}</svg>\n",
            self.body,
            w = u(self.width_pt),
            h = u(self.height_pt)
        )
    }
}

/// The colour of `t` in [0, 1] on the sequential scale (viridis, interpolated between nine of
/// its colours: dark blue for idle links, yellow for busy ones; readable in greyscale, safe
/// for colour-blind readers).
pub(super) fn colour(t: f64) -> String {
    const STOPS: [(u8, u8, u8); 9] = [
        (0x44, 0x01, 0x54),
        (0x47, 0x2c, 0x7a),
        (0x3b, 0x51, 0x8b),
        (0x2c, 0x71, 0x8e),
        (0x21, 0x90, 0x8d),
        (0x27, 0xad, 0x81),
        (0x5c, 0xc8, 0x63),
        (0xaa, 0xdc, 0x32),
        (0xfd, 0xe7, 0x25),
    ];
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let position = t * (STOPS.len() - 1) as f64;
    let index = (position.floor() as usize).min(STOPS.len() - 2);
    let f = position - index as f64;
    let (a, b) = (STOPS[index], STOPS[index + 1]);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}
