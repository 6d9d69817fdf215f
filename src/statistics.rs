//! The few distribution quantiles the statistics policy needs (`docs/statistics.md`), in one
//! place: Student t's 0.975 quantile for every 95% interval (the simulator's batch means,
//! the pipeline's replications, the report's coverage), and the chi-square test of whether
//! replications agree.

/// Two-sided 95% Student t quantiles t_{0.975, df} for df = 1..30.
const T_975: [f64; 30] = [
    12.706204736,
    4.302652730,
    3.182446305,
    2.776445105,
    2.570581836,
    2.446911851,
    2.364624252,
    2.306004135,
    2.262157163,
    2.228138852,
    2.200985160,
    2.178812830,
    2.160368656,
    2.144786688,
    2.131449546,
    2.119905299,
    2.109815578,
    2.100922040,
    2.093024054,
    2.085963447,
    2.079613845,
    2.073873068,
    2.068657610,
    2.063898562,
    2.059538553,
    2.055529439,
    2.051830516,
    2.048407142,
    2.045229642,
    2.042272456,
];

/// The standard normal 0.975 quantile.
pub const Z_975: f64 = 1.959_963_984_540_054;

/// t_{0.975, df}: the table up to 30 degrees of freedom, then the Cornish-Fisher expansion
/// to the n^-3 term (within 1e-5 of the exact quantile from df = 31); infinite for df = 0.
pub fn t_quantile_975(df: u64) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    if let Some(&t) = usize::try_from(df - 1).ok().and_then(|i| T_975.get(i)) {
        return t;
    }
    let z = Z_975;
    let n = df as f64;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * n)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n * n * n)
}

/// The standard normal 0.995 quantile: the consistency test's level.
const Z_995: f64 = 2.575_829_303_548_901;

/// Whether a chi-square statistic `q` with `df >= 1` degrees of freedom exceeds its 0.995
/// quantile (Wilson and Hilferty's cube-root normal approximation, within 0.3% of the exact
/// quantile from df = 1: 7.90 against 7.88). At df = 1 this is two 95% intervals of equal
/// width failing to overlap, about 0.56% of the time when they are right.
pub fn chi_square_exceeds_995(q: f64, df: u64) -> bool {
    if df == 0 || !q.is_finite() {
        return q.is_infinite();
    }
    let k = df as f64;
    let spread = (2.0 / (9.0 * k)).sqrt();
    let z = ((q / k).cbrt() - (1.0 - 2.0 / (9.0 * k))) / spread;
    z > Z_995
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        assert!((t_quantile_975(1) - 12.7062).abs() < 1e-4);
        assert!((t_quantile_975(9) - 2.2622).abs() < 1e-4);
        // Beyond the table: t_{0.975, 31} = 2.0395, 60: 2.0003, 120: 1.9799; continuous.
        assert!((t_quantile_975(31) - 2.039513).abs() < 1e-5);
        assert!((t_quantile_975(60) - 2.000298).abs() < 1e-5);
        assert!((t_quantile_975(120) - 1.979930).abs() < 1e-5);
        assert!(t_quantile_975(30) > t_quantile_975(31));
        assert!(t_quantile_975(0).is_infinite());
    }

    #[test]
    fn chi_square_quantiles_match_tables() {
        // chi2_{0.995}: df 1: 7.879, df 2: 10.597, df 9: 23.589, df 100: 140.169.
        for (df, quantile) in [(1, 7.879), (2, 10.597), (9, 23.589), (100, 140.169)] {
            assert!(!chi_square_exceeds_995(quantile * 0.99, df), "df {df}");
            assert!(chi_square_exceeds_995(quantile * 1.01, df), "df {df}");
        }
    }
}
