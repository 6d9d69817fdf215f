//! "Did you mean ...?": the closest valid name to a misspelt one.

/// The candidate closest to `word` by edit distance, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word_lower = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (edit_distance(&word_lower, &c.to_lowercase()), c))
        .filter(|&(d, c)| d <= (c.len().max(word.len()) / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn suggests_close_names_only() {
        let keys = ["virtual_channels", "message_length", "routing"];
        assert_eq!(did_you_mean("virtual_channel", keys), Some("virtual_channels"));
        assert_eq!(did_you_mean("mesage_length", keys), Some("message_length"));
        assert_eq!(did_you_mean("Routing", keys), Some("routing"));
        assert_eq!(did_you_mean("banana", keys), None);
    }
}
