//! How a series looks: its colour, the dash pattern of its line and the shape and fill of its
//! marker ([`SeriesStyle`]). Two series of a figure never differ by colour alone: every series
//! gets its own dash pattern (model lines and the lines joining simulation markers) and its own
//! marker, so a figure stays readable printed in greyscale.
//!
//! Series are styled by a configuration index (the series label less its method) and a method
//! index (`runner` and each external method, when a figure has external methods): the series
//! of one configuration share a colour and a marker shape, and differ by fill and dash
//! (runner's markers filled and lines solid, an external method's open and dashed), so a
//! cross-check pairs each configuration's two simulators at a glance. Without external methods
//! every series is a configuration of its own: colour, dash and marker all follow its index.

use plotters::style::RGBColor;

/// Okabe-Ito colours (safe for colour-blind readers), ordered for contrast on white. Its
/// yellow is left out: a thin yellow line or a small yellow marker vanishes on white paper.
pub(super) const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
];

/// The grey of the legend's entries that explain an encoding rather than name a series.
pub(super) const NEUTRAL: RGBColor = RGBColor(0x44, 0x44, 0x44);

/// Dash patterns (on, off, on, off, ... lengths in pt; empty is solid), each of a period short
/// enough to show twice in a legend sample.
pub(super) const DASHES: [&[f64]; 6] = [
    &[],
    &[3.5, 1.5],
    &[0.9, 1.2],
    &[3.5, 1.2, 0.9, 1.2],
    &[6.0, 2.0],
    &[3.5, 1.0, 0.9, 1.0, 0.9, 1.0],
];

/// A marker's outline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
}

/// The shapes in the order series take them.
const SHAPES: [Shape; 5] =
    [Shape::Circle, Shape::Square, Shape::TriangleUp, Shape::Diamond, Shape::TriangleDown];

/// A series' marker: a shape, filled or open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Marker {
    pub(crate) shape: Shape,
    pub(crate) filled: bool,
}

/// The markers of series without external methods, in order: the five shapes filled, then
/// three open. An open circle and an open upward triangle are left out: they read as the
/// status markers of imprecise and saturated points.
const MARKERS: [Marker; 8] = [
    Marker { shape: Shape::Circle, filled: true },
    Marker { shape: Shape::Square, filled: true },
    Marker { shape: Shape::TriangleUp, filled: true },
    Marker { shape: Shape::Diamond, filled: true },
    Marker { shape: Shape::TriangleDown, filled: true },
    Marker { shape: Shape::Square, filled: false },
    Marker { shape: Shape::Diamond, filled: false },
    Marker { shape: Shape::TriangleDown, filled: false },
];

/// How one series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SeriesStyle {
    pub(crate) colour: RGBColor,
    /// On/off lengths in pt (empty: solid).
    pub(crate) dash: &'static [f64],
    pub(crate) marker: Marker,
}

/// Which series a style is for: its configuration and its method, and how many methods the
/// figure has (1 without external methods).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct StyleKey {
    pub(crate) configuration: usize,
    pub(crate) method: usize,
    pub(crate) methods: usize,
}

impl StyleKey {
    /// The series' style (see the module comment). Distinct keys of one figure (at most
    /// `MAX_LINES` = 24 series) differ in dash pattern or marker.
    pub(crate) fn style(self) -> SeriesStyle {
        let StyleKey { configuration, method, methods } = self;
        let colour = PALETTE[configuration % PALETTE.len()];
        if methods <= 1 {
            return SeriesStyle {
                colour,
                dash: DASHES[configuration % DASHES.len()],
                marker: MARKERS[configuration % MARKERS.len()],
            };
        }
        // Configurations that share a shape (every fifth) are told apart by dash.
        let cycle = configuration / SHAPES.len();
        SeriesStyle {
            colour,
            dash: DASHES[(method + cycle) % DASHES.len()],
            marker: Marker {
                shape: SHAPES[configuration % SHAPES.len()],
                filled: method.is_multiple_of(2),
            },
        }
    }
}

/// Relative luminance (ITU-R BT.709 weights on the sRGB values, 0 black to 1 white): the grey
/// a colour prints as.
#[cfg(test)]
pub(crate) fn luminance(colour: RGBColor) -> f64 {
    let RGBColor(r, g, b) = colour;
    (0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b)) / 255.0
}

#[cfg(test)]
mod tests {
    use super::{StyleKey, luminance};
    use crate::spec::report::MAX_LINES;

    /// Up to `MAX_LINES` series, with and without external methods, differ pairwise in dash
    /// or marker: colour is never all that tells two apart.
    #[test]
    fn no_two_series_differ_by_colour_alone() {
        let mut figures: Vec<Vec<StyleKey>> = Vec::new();
        figures.push(
            (0..MAX_LINES)
                .map(|configuration| StyleKey { configuration, method: 0, methods: 1 })
                .collect(),
        );
        for methods in 2..=3 {
            figures.push(
                (0..MAX_LINES / methods)
                    .flat_map(|configuration| {
                        (0..methods).map(move |method| StyleKey { configuration, method, methods })
                    })
                    .collect(),
            );
        }
        for keys in figures {
            for (i, a) in keys.iter().enumerate() {
                for b in &keys[i + 1..] {
                    let (sa, sb) = (a.style(), b.style());
                    assert!(sa.dash != sb.dash || sa.marker != sb.marker, "{a:?} and {b:?}");
                }
            }
        }
        // A configuration's two simulators share a colour and differ in fill and dash.
        let runner = StyleKey { configuration: 2, method: 0, methods: 2 }.style();
        let booksim = StyleKey { configuration: 2, method: 1, methods: 2 }.style();
        assert_eq!(runner.colour, booksim.colour);
        assert_eq!(runner.marker.shape, booksim.marker.shape);
        assert!(runner.marker.filled && !booksim.marker.filled);
        assert_ne!(runner.dash, booksim.dash);
        // No palette colour is too light to see on white.
        for colour in super::PALETTE {
            assert!(luminance(colour) < 0.7, "{colour:?}");
        }
    }
}
