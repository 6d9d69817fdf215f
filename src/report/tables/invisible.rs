//! Invisible format characters (bidirectional controls, zero-width and other hidden
//! characters): which they are ([`is_invisible_format`]), and stripping them from everything
//! the report writes ([`strip_invisible`]).

/// Whether `c` is a bidirectional control (U+202A-U+202E, U+2066-U+2069, the marks U+200E,
/// U+200F and U+061C) or another invisible format character (zero-width space, word joiner,
/// invisible operators, byte-order mark, interlinear annotation, tag characters, soft
/// hyphen): text that reorders or hides what a reader sees. The zero-width (non-)joiners
/// U+200C and U+200D stay: scripts and emoji need them and they reorder nothing.
pub(crate) fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

/// `text` without [`is_invisible_format`] characters: every page, figure and table goes
/// through this before it is written, so user text (titles, labels, captions, cells) cannot
/// reorder or hide what a reader of the HTML, Markdown, LaTeX or SVG sees.
pub(crate) fn strip_invisible(text: String) -> String {
    if text.chars().any(is_invisible_format) {
        text.chars().filter(|&c| !is_invisible_format(c)).collect()
    } else {
        text
    }
}
