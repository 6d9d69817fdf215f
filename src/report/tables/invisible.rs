//! Text the report writes, made safe to show: invisible format characters (bidirectional
//! controls, zero-width and other hidden characters, [`is_invisible_format`]) stripped, and
//! control characters shown as escapes ([`sanitize`]).

pub(crate) use crate::console::is_invisible_format;

/// `text` without [`is_invisible_format`] characters and with its control characters shown
/// (`console::escape_text`: `\e`, `\x07`, ...; line feeds, tabs and CRLF endings stay): every
/// page, figure and table goes through this before it is written, so user text (titles,
/// labels, captions, cells, an external program's `detail`) can neither reorder or hide what a
/// reader of the HTML, Markdown, LaTeX or SVG sees, nor send escape sequences to a terminal
/// that shows the file.
pub(crate) fn sanitize(text: String) -> String {
    let text = if text.chars().any(is_invisible_format) {
        text.chars().filter(|&c| !is_invisible_format(c)).collect()
    } else {
        text
    };
    match crate::console::escape_text(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}
