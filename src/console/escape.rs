//! Showing control characters instead of sending them: the one escaping function for text a
//! user or a program supplied, wherever it reaches a terminal, a page or a log.
//!
//! A control character is shown as `\e` (escape), `\r`, `\n`, `\t`, `\xHH` (the other C0
//! controls and DEL) or `\uHHHH` (C1 controls and the invisible format characters of
//! [`is_invisible_format`], which reorder or hide text). These are the escapes of a POSIX
//! shell's `$'...'` quoting, so a command shown with [`shell_quote`] is exactly the command
//! that runs. Backslashes are left as they are: text (a LaTeX label, a Windows
//! path) reads as written.

use std::borrow::Cow;

/// Whether `c` is a bidirectional control (U+202A-U+202E, U+2066-U+2069, the marks U+200E,
/// U+200F and U+061C) or another invisible format character (zero-width space, word joiner,
/// invisible operators, byte-order mark, interlinear annotation, tag characters, soft
/// hyphen): text that reorders or hides what a reader sees. The zero-width (non-)joiners
/// U+200C and U+200D stay: scripts and emoji need them and they reorder nothing.
pub fn is_invisible_format(c: char) -> bool {
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

/// Whether [`escape`] shows `c` as an escape: a control character (C0, DEL, C1) or an
/// invisible format character.
pub fn needs_escape(c: char) -> bool {
    c.is_control() || is_invisible_format(c)
}

/// `text` with every control and invisible format character shown as an escape (`\e`, `\r`,
/// `\n`, `\t`, `\x07`, `\u202e`): for one value (a word of a command, a name, an error or a
/// `detail`), which then stays on one line.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_with(text, false)
}

/// [`escape`] for text with lines (a message, a page, a table): line feeds and tabs, and a
/// carriage return right before a line feed, stay as they are; every other control character
/// is shown.
pub fn escape_text(text: &str) -> Cow<'_, str> {
    escape_with(text, true)
}

/// A word as a POSIX shell reads it: as it is when it is plain, else in single quotes, or in
/// `$'...'` with [`escape`]'s escapes when it holds a control or invisible character, so that
/// what is shown is exactly the word and nothing of it acts on the terminal.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        word.to_owned()
    } else if !word.chars().any(needs_escape) {
        format!("'{}'", word.replace('\'', "'\\''"))
    } else {
        format!("$'{}'", escape(&word.replace('\\', "\\\\").replace('\'', "\\'")))
    }
}

fn escape_with(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let kept = |c: char, next: Option<char>| {
        keep_lines && (c == '\n' || c == '\t' || (c == '\r' && next == Some('\n')))
    };
    let mut chars = text.chars().peekable();
    let mut clean = true;
    while let Some(c) = chars.next() {
        if needs_escape(c) && !kept(c, chars.peek().copied()) {
            clean = false;
            break;
        }
    }
    if clean {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !needs_escape(c) || kept(c, chars.peek().copied()) {
            out.push(c);
            continue;
        }
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x80 => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c if u32::from(c) <= 0xFFFF => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08x}", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line-erasing argument of a spoofed command, and every other kind of control or
    /// invisible character, come out visible and on one line.
    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(escape("ok \r\u{1b}[2Kharmless"), "ok \\r\\e[2Kharmless");
        assert_eq!(escape("bell\u{7} del\u{7f} nul\0"), "bell\\x07 del\\x7f nul\\x00");
        assert_eq!(escape("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(
            escape("c1\u{85} rlo\u{202e} tag\u{e0041}"),
            "c1\\u0085 rlo\\u202e tag\\U000e0041"
        );
        assert_eq!(
            escape("caf\u{e9} \\e 10 \u{b5}s \u{200d}"),
            "caf\u{e9} \\e 10 \u{b5}s \u{200d}"
        );
        assert!(matches!(escape("plain text"), Cow::Borrowed(_)));
    }

    /// Text with lines keeps its line feeds, tabs and CRLF endings; a lone carriage return,
    /// which moves the cursor back over what was printed, is shown.
    #[test]
    fn text_with_lines_keeps_its_layout_and_shows_the_rest() {
        assert!(matches!(escape_text("a\n\tb\r\nc"), Cow::Borrowed(_)));
        assert_eq!(escape_text("done\rfake\n\u{1b}[31m"), "done\\rfake\n\\e[31m");
        assert_eq!(escape_text("end\r"), "end\\r");
    }

    /// A quoted word reads back in a shell as exactly the word: plain, single-quoted, or in
    /// `$'...'` with its control characters, backslashes and quotes escaped.
    #[test]
    fn shell_quoting_shows_exactly_the_word() {
        assert_eq!(shell_quote("adapters/md1.py"), "adapters/md1.py");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("x\r\u{1b}[2Kls"), "$'x\\r\\e[2Kls'");
        assert_eq!(shell_quote("it's\\e\u{7}"), "$'it\\'s\\\\e\\x07'");
    }
}
