//! Rendering a table as GitHub-flavoured Markdown, and escaping text for Markdown
//! ([`md_escape`]).

use std::fmt::Write as _;

use super::invisible::is_invisible_format;
use super::model::Table;

/// The table as GitHub-flavoured Markdown (note as a paragraph below); a key cell that repeats
/// the row above is left blank ([`Table::repeats`], as in the LaTeX).
pub(crate) fn to_markdown(table: &Table) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        if let Some(note) = &table.note {
            let _ = writeln!(out, "{}", md_escape(note));
        }
        return out;
    }
    let headers: Vec<String> =
        table.columns.iter().map(|column| md_escape(&column.header)).collect();
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let rules: Vec<&str> =
        table.columns.iter().map(|column| if column.numeric { "---:" } else { ":---" }).collect();
    let _ = writeln!(out, "| {} |", rules.join(" | "));
    let all: Vec<usize> = (0..table.columns.len()).collect();
    for (row, blanks) in table.rows.iter().zip(table.repeats(&all)) {
        let cells: Vec<String> = row
            .iter()
            .zip(blanks)
            .map(|(cell, repeat)| match (cell.text.is_empty(), cell.blank || repeat) {
                (_, true) => String::new(),
                (true, false) => "\u{2013}".to_owned(),
                (false, false) => md_escape(&cell.text),
            })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if let Some(note) = &table.note {
        let _ = writeln!(out, "\n{}", md_escape(note));
    }
    out
}

/// Escapes text for a Markdown paragraph or table cell (inline markup, pipes, HTML).
pub(crate) fn md_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // `$` starts inline math in GitHub's and most renderers' Markdown.
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '$' => {
                out.push('\\');
                out.push(c);
            }
            // Backslash escapes, not entities, so the raw file reads as it renders (`(> 10%)`,
            // not `(&gt; 10%)`); `>` matters only where a line starts (a block quote).
            '<' | '&' => {
                out.push('\\');
                out.push(c);
            }
            '>' if out.is_empty() => out.push_str("\\>"),
            '\n' | '\r' => out.push(' '),
            _ if is_invisible_format(c) => {}
            _ => out.push(c),
        }
    }
    out
}
