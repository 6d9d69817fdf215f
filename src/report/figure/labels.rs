//! Naming and ordering panels and series: panel letters, panel titles and series labels in the
//! fields' words, and an order of labels in which embedded numbers sort numerically
//! ([`SortKey`], [`natural_cmp`]).

use crate::report::columns;

pub(super) fn panel_letter(index: usize) -> String {
    let letters = b"abcdefghijklmnopqrstuvwxyz";
    match letters.get(index) {
        Some(letter) => char::from(*letter).to_string(),
        None => (index + 1).to_string(),
    }
}

pub(super) fn panel_title(columns_: &[String], values: &[Option<String>]) -> String {
    columns_
        .iter()
        .zip(values)
        .map(|(column, value)| label_part(column, value.clone()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `V = 2` for numeric columns, the value in the field's words for text columns (`torus`,
/// `Duato`, `uniform traffic`).
pub(super) fn label_part(column: &str, value: Option<String>) -> String {
    let value = value.unwrap_or_else(|| "none".to_owned());
    match columns::kind(column) {
        Some(columns::Kind::Text) => columns::value_label(column, &value),
        _ => format!("{} = {value}", columns::symbol(column)),
    }
}

pub(super) fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Sort key that orders numbers numerically and text alphabetically (missing, numbers, text).
#[derive(Clone, Debug)]
pub(super) enum SortKey {
    Missing,
    Number(f64),
    Text(String),
}

impl SortKey {
    pub(super) fn new(value: Option<&str>) -> Self {
        match value {
            None => SortKey::Missing,
            Some(text) => match text.parse::<f64>() {
                Ok(number) if number.is_finite() => SortKey::Number(number),
                _ => SortKey::Text(text.to_owned()),
            },
        }
    }

    fn rank(&self) -> u8 {
        match self {
            SortKey::Missing => 0,
            SortKey::Number(_) => 1,
            SortKey::Text(_) => 2,
        }
    }
}

impl Ord for SortKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (SortKey::Number(a), SortKey::Number(b)) => a.total_cmp(b),
            (SortKey::Text(a), SortKey::Text(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for SortKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for SortKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for SortKey {}

/// Compares labels like `V = 2, M = 16` so that embedded numbers sort numerically.
pub(super) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |text: &str| -> Vec<SortKey> {
        text.split(", ")
            .map(|part| SortKey::new(Some(part.rsplit(" = ").next().unwrap_or(part))))
            .collect()
    };
    split(a).cmp(&split(b)).then_with(|| a.cmp(b))
}
