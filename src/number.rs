//! Numbers in messages: a value echoed back to the user (a rejected spec value, a
//! command-line argument, an external program's reply) in its shortest form.
//!
//! Rust's `Display` of an `f64` never uses an exponent, so `1e300` prints as 301 digits and
//! `1e-300` as 302 characters. [`compact`] prints the shortest text that reads back to the
//! same number, with an exponent for very large and very small magnitudes.

/// `value` as the shortest text that parses back to it: plain decimals from 1e-5 up to 1e16
/// (`0.25`, `3`, `-1`), an exponent outside that range (`1e300`, `-2.5e-7`), and `NaN`, `inf`
/// or `-inf` for the non-finite values.
pub fn compact(value: f64) -> String {
    let magnitude = value.abs();
    if value == 0.0 || (1e-5..1e16).contains(&magnitude) {
        // Display is the shortest round-trip form, without a trailing `.0`.
        format!("{value}")
    } else {
        // Debug is the shortest round-trip form too, with an exponent out of this range.
        format!("{value:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::compact;

    #[test]
    fn echoed_numbers_are_short_and_read_back_exactly() {
        let cases = [
            (1e300, "1e300"),
            (-1e300, "-1e300"),
            (1e-300, "1e-300"),
            (f64::MAX, "1.7976931348623157e308"),
            (2.5e-7, "2.5e-7"),
            (0.1, "0.1"),
            (3.0, "3"),
            (-1.0, "-1"),
            (0.0, "0"),
            (123456.789, "123456.789"),
            (1e16, "1e16"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (value, expected) in cases {
            assert_eq!(compact(value), expected);
            if value.is_finite() {
                assert_eq!(compact(value).parse::<f64>().ok(), Some(value));
            }
        }
    }
}
