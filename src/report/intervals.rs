//! The simulated estimates that carry a 95% confidence half-width of their own, and the one
//! place that reads those half-widths from a row.
//!
//! A simulation row reports `latency ± latency_ci95`; the throughput and the latency
//! percentiles get half-widths of their own (`throughput_ci95`, `latency_p50_ci95` ...
//! `latency_p99_ci95`). [`Estimate::half_width`] is the only code that names those members, and
//! [`Estimate::of_column`] with [`Estimate::half_width_column`] the only map from a value
//! column to its half-width column (a figure's error bars, `figure::PlotRow::half_width`, the
//! coverage table).
//!
//! A row without a half-width (a model, a file written before the columns existed, an
//! evaluator that does not fill them yet) gives `None`: no error bar, an empty cell.

use crate::store::row::Row;

/// Degrees of freedom of a replication's interval when its row does not say how many batches
/// it had: the simulator's 20 batches to start (`docs/statistics.md`).
pub(crate) const DEFAULT_DEGREES_OF_FREEDOM: u32 = 19;

/// A simulated estimate with a 95% half-width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Estimate {
    /// Mean latency, `latency ± latency_ci95`.
    Latency,
    /// Accepted throughput, `throughput ± throughput_ci95`.
    Throughput,
    /// Latency percentiles, `latency_pNN ± latency_pNN_ci95`.
    LatencyP50,
    LatencyP90,
    LatencyP95,
    LatencyP99,
}

impl Estimate {
    /// Every estimate, in column order.
    pub(crate) const ALL: [Estimate; 6] = [
        Estimate::Latency,
        Estimate::Throughput,
        Estimate::LatencyP50,
        Estimate::LatencyP90,
        Estimate::LatencyP95,
        Estimate::LatencyP99,
    ];

    /// The value's column in `results.parquet`.
    pub(crate) fn column(self) -> &'static str {
        match self {
            Estimate::Latency => "latency",
            Estimate::Throughput => "throughput",
            Estimate::LatencyP50 => "latency_p50",
            Estimate::LatencyP90 => "latency_p90",
            Estimate::LatencyP95 => "latency_p95",
            Estimate::LatencyP99 => "latency_p99",
        }
    }

    /// The half-width's column in `results.parquet`.
    pub(crate) fn half_width_column(self) -> &'static str {
        match self {
            Estimate::Latency => "latency_ci95",
            Estimate::Throughput => "throughput_ci95",
            Estimate::LatencyP50 => "latency_p50_ci95",
            Estimate::LatencyP90 => "latency_p90_ci95",
            Estimate::LatencyP95 => "latency_p95_ci95",
            Estimate::LatencyP99 => "latency_p99_ci95",
        }
    }

    /// The estimate of `column`, if it has a half-width.
    pub(crate) fn of_column(column: &str) -> Option<Estimate> {
        Estimate::ALL.into_iter().find(|estimate| estimate.column() == column)
    }

    /// The row's value, when finite.
    pub(crate) fn value(self, row: &Row) -> Option<f64> {
        let value = match self {
            Estimate::Latency => row.latency,
            Estimate::Throughput => row.throughput,
            Estimate::LatencyP50 => row.latency_p50,
            Estimate::LatencyP90 => row.latency_p90,
            Estimate::LatencyP95 => row.latency_p95,
            Estimate::LatencyP99 => row.latency_p99,
        };
        value.filter(|value| value.is_finite())
    }

    /// The row's 95% half-width, when finite and not negative.
    pub(crate) fn half_width(self, row: &Row) -> Option<f64> {
        let half_width = match self {
            Estimate::Latency => row.latency_ci95,
            Estimate::Throughput => row.throughput_ci95,
            Estimate::LatencyP50 => row.latency_p50_ci95,
            Estimate::LatencyP90 => row.latency_p90_ci95,
            Estimate::LatencyP95 => row.latency_p95_ci95,
            Estimate::LatencyP99 => row.latency_p99_ci95,
        };
        usable(half_width)
    }

    /// Degrees of freedom of the row's Student t interval: the batch count less one where the
    /// row says it (`intermediates.latency_batches` for the latency), else
    /// [`DEFAULT_DEGREES_OF_FREEDOM`].
    pub(crate) fn degrees_of_freedom(self, row: &Row) -> u32 {
        let batches = match self {
            Estimate::Latency => row.intermediate("latency_batches"),
            _ => None,
        };
        batches
            .filter(|batches| *batches >= 2.0 && *batches <= f64::from(u32::MAX))
            .map_or(DEFAULT_DEGREES_OF_FREEDOM, |batches| batches as u32 - 1)
    }
}

/// A half-width as a row holds it, where it is one: finite and not negative (a figure's
/// plotted rows keep the column's value, `figure::PlotRow::half_width`).
pub(crate) fn usable(half_width: Option<f64>) -> Option<f64> {
    half_width.filter(|half| half.is_finite() && *half >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The half-width of column `column`'s value in `row`.
    fn half_width(column: &str, row: &Row) -> Option<f64> {
        Estimate::of_column(column).and_then(|estimate| estimate.half_width(row))
    }

    #[test]
    fn each_value_column_maps_to_its_half_width_column() {
        let column = |name: &str| Estimate::of_column(name).map(Estimate::half_width_column);
        assert_eq!(column("latency"), Some("latency_ci95"));
        assert_eq!(column("throughput"), Some("throughput_ci95"));
        assert_eq!(column("latency_p99"), Some("latency_p99_ci95"));
        assert_eq!(column("hops"), None);
        let row = Row {
            latency: Some(40.0),
            latency_ci95: Some(1.5),
            throughput_ci95: Some(0.001),
            intermediates: r#"{"latency_batches": 24}"#.into(),
            ..Row::default()
        };
        assert_eq!(half_width("latency", &row), Some(1.5));
        assert_eq!(half_width("throughput", &row), Some(0.001));
        assert_eq!(Estimate::Latency.degrees_of_freedom(&row), 23);
        assert_eq!(Estimate::Throughput.degrees_of_freedom(&row), DEFAULT_DEGREES_OF_FREEDOM);
        assert_eq!(half_width("latency_p50", &row), None);
        let bare = Row { latency_ci95: Some(f64::NAN), ..Row::default() };
        assert_eq!(half_width("latency", &bare), None);
        assert_eq!(Estimate::Latency.degrees_of_freedom(&bare), DEFAULT_DEGREES_OF_FREEDOM);
    }
}
