//! Escaping text for LaTeX that a plain `pdflatex` compiles ([`tex_escape`]): the specials as
//! commands, Greek letters and the report's math signs as math, anything else it cannot
//! typeset as `?`. The table cells and headers and the report's other LaTeX go through it.

use super::invisible::is_invisible_format;

/// Escapes text for LaTeX so that it compiles with a plain `pdflatex` (its default UTF-8 input
/// and OT1 fonts): the ten specials (`\ & % $ # _ { } ~ ^`) and `< > |` as commands, Greek
/// letters and the math signs the report writes (`≤ ≥ − ± × ∞ ≈ ≠`, a combining macron as
/// in `V̄`, subscript digits) as math, control characters as spaces; Latin letters with
/// accents and typographic punctuation pass through as they are, and any other character,
/// which pdflatex cannot typeset without further packages, becomes `?` (the CSV keeps it).
pub(crate) fn tex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if chars.peek() == Some(&'\u{304}') {
            // A combining macron over the character: `V̄` is $\bar{V}$.
            chars.next();
            let base = match tex_math(c) {
                Some(math) => math.to_owned(),
                None if c.is_ascii_alphanumeric() => c.to_string(),
                None => String::new(),
            };
            if !base.is_empty() {
                out.push_str(&format!("$\\bar{{{base}}}$"));
                continue;
            }
        }
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            '|' => out.push_str("\\textbar{}"),
            '\u{a0}' => out.push('~'),
            _ if is_invisible_format(c) || c == '\u{304}' => {}
            _ if c.is_control() => out.push(' '),
            _ if c.is_ascii() || tex_passes(c) => out.push(c),
            _ => match tex_math(c) {
                Some(math) => {
                    out.push('$');
                    out.push_str(math);
                    out.push('$');
                }
                None => out.push('?'),
            },
        }
    }
    out
}

/// The math-mode form of a Greek letter or one of the signs the report writes.
fn tex_math(c: char) -> Option<&'static str> {
    const GREEK_LOWER: [&str; 25] = [
        "\\alpha",
        "\\beta",
        "\\gamma",
        "\\delta",
        "\\varepsilon",
        "\\zeta",
        "\\eta",
        "\\theta",
        "\\iota",
        "\\kappa",
        "\\lambda",
        "\\mu",
        "\\nu",
        "\\xi",
        "o",
        "\\pi",
        "\\rho",
        "\\varsigma",
        "\\sigma",
        "\\tau",
        "\\upsilon",
        "\\varphi",
        "\\chi",
        "\\psi",
        "\\omega",
    ];
    const GREEK_UPPER: [&str; 25] = [
        "A",
        "B",
        "\\Gamma",
        "\\Delta",
        "E",
        "Z",
        "H",
        "\\Theta",
        "I",
        "K",
        "\\Lambda",
        "M",
        "N",
        "\\Xi",
        "O",
        "\\Pi",
        "P",
        "",
        "\\Sigma",
        "T",
        "\\Upsilon",
        "\\Phi",
        "X",
        "\\Psi",
        "\\Omega",
    ];
    const SUBSCRIPTS: [&str; 10] = ["_0", "_1", "_2", "_3", "_4", "_5", "_6", "_7", "_8", "_9"];
    let math = match c {
        '\u{3b1}'..='\u{3c9}' => GREEK_LOWER[(c as u32 - 0x3b1) as usize],
        '\u{391}'..='\u{3a9}' => GREEK_UPPER[(c as u32 - 0x391) as usize],
        '\u{2080}'..='\u{2089}' => SUBSCRIPTS[(c as u32 - 0x2080) as usize],
        '\u{3d5}' => "\\phi",
        '\u{3f5}' => "\\epsilon",
        '\u{2264}' => "\\le",
        '\u{2265}' => "\\ge",
        '\u{2212}' => "-",
        '\u{b1}' => "\\pm",
        '\u{d7}' => "\\times",
        '\u{221e}' => "\\infty",
        '\u{2248}' => "\\approx",
        '\u{2260}' => "\\ne",
        '\u{2032}' => "'",
        '\u{2033}' => "''",
        _ => "",
    };
    (!math.is_empty()).then_some(math)
}

/// Whether pdflatex's default UTF-8 input typesets `c` as it is (checked against TeX Live
/// 2022): Latin-1 and Latin Extended-A letters and signs, less a few, and typographic
/// punctuation. `±` and `×` are set as math instead, to match the math around them.
fn tex_passes(c: char) -> bool {
    match c {
        '\u{b1}' | '\u{d7}' => false,
        '\u{a1}'..='\u{ff}' => true,
        '\u{100}'..='\u{17e}' => !matches!(
            c,
            '\u{126}'
                | '\u{127}'
                | '\u{138}'
                | '\u{13f}'
                | '\u{140}'
                | '\u{149}'
                | '\u{166}'
                | '\u{167}'
        ),
        '\u{2010}'..='\u{2016}' | '\u{2018}'..='\u{201a}' | '\u{201c}'..='\u{201e}' => true,
        '\u{2020}' | '\u{2021}' | '\u{2022}' | '\u{2026}' | '\u{2030}' | '\u{2039}'
        | '\u{203a}' | '\u{20ac}' | '\u{2122}' | '\u{2190}' | '\u{2192}' => true,
        _ => false,
    }
}
