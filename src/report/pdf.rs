//! Figures as PDF: the figure SVG converted by svg2pdf, text kept as text in a bundled font.
//!
//! The font is DejaVu Sans (Bitstream Vera license, `assets/fonts/LICENSE-DejaVu.txt`),
//! compiled into the binary and loaded into an otherwise empty usvg font database, so a PDF
//! is byte-identical on every machine and never depends on system fonts. Every generic
//! family is mapped to it explicitly: by default usvg maps `sans-serif` to Arial, and on a
//! machine without Arial all text would silently vanish from the PDF.

use svg2pdf::usvg;

use super::ReportError;
use super::figure::UNITS_PER_PT;

/// DejaVu Sans, the only font the PDFs use.
pub(crate) static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// The family name inside [`FONT`].
pub(crate) const FONT_FAMILY: &str = "DejaVu Sans";

/// Converts a figure SVG (in units of 1/[`UNITS_PER_PT`] pt) to a one-page PDF.
pub(crate) fn svg_to_pdf(svg: &str, stem: &str) -> Result<Vec<u8>, ReportError> {
    let options = usvg_options();
    let tree = usvg::Tree::from_str(svg, &options).map_err(|error| ReportError::Pdf {
        figure: stem.to_owned(),
        message: error.to_string(),
    })?;
    let page = svg2pdf::PageOptions { dpi: (72.0 * UNITS_PER_PT) as f32 };
    svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page)
        .map_err(|error| ReportError::Pdf { figure: stem.to_owned(), message: error.to_string() })
}

/// usvg options whose font database holds only the bundled font, under every generic family.
fn usvg_options() -> usvg::Options<'static> {
    let mut options = usvg::Options { font_family: FONT_FAMILY.to_owned(), ..Default::default() };
    let database = options.fontdb_mut();
    database.load_font_data(FONT.to_vec());
    database.set_sans_serif_family(FONT_FAMILY);
    database.set_serif_family(FONT_FAMILY);
    database.set_monospace_family(FONT_FAMILY);
    database.set_cursive_family(FONT_FAMILY);
    database.set_fantasy_family(FONT_FAMILY);
    options
}
