//! Message lengths: how they vary around their mean M, and the second moment E[M^2] the
//! models receive.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::bounds;

/// How message lengths vary around their mean M (`message_length`). The simulator draws each
/// message's length from it; the models receive the second moment E[M^2] it implies
/// ([`MessageLengths::second_moment`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MessageLengths {
    /// Every message is M flits (the papers'; the default).
    #[default]
    Fixed,
    /// Two lengths: `max` flits with probability (M - min) / (max - min), else `min` flits, so
    /// that the mean is M (min <= M <= max, min < max).
    Bimodal {
        /// The short length in flits, at least 1.
        min: u32,
        /// The long length in flits.
        max: u32,
    },
    /// Geometric on 1, 2, 3, ... flits with mean M: P(L = l) = (1 - 1/M)^(l-1) / M.
    Geometric,
    /// Every length from `min` to `max` flits equally likely; their midpoint is M.
    Uniform {
        /// The shortest length in flits, at least 1.
        min: u32,
        /// The longest length in flits.
        max: u32,
    },
}

/// The message-length distributions by name: `message_length_distribution` in a spec and a
/// result row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LengthDistributionKind {
    /// Every message `message_length` flits.
    Fixed,
    /// `message_length_min` or `message_length_max` flits, with mean `message_length`.
    Bimodal,
    /// Geometric on 1, 2, 3, ... flits with mean `message_length`.
    Geometric,
    /// Uniform from `message_length_min` to `message_length_max`.
    Uniform,
}

impl LengthDistributionKind {
    /// The name used in specs, rows and on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            LengthDistributionKind::Fixed => "fixed",
            LengthDistributionKind::Bimodal => "bimodal",
            LengthDistributionKind::Geometric => "geometric",
            LengthDistributionKind::Uniform => "uniform",
        }
    }
}

impl MessageLengths {
    /// The distribution, without its bounds.
    pub fn shape(&self) -> LengthDistributionKind {
        match self {
            MessageLengths::Fixed => LengthDistributionKind::Fixed,
            MessageLengths::Bimodal { .. } => LengthDistributionKind::Bimodal,
            MessageLengths::Geometric => LengthDistributionKind::Geometric,
            MessageLengths::Uniform { .. } => LengthDistributionKind::Uniform,
        }
    }

    /// The distribution's name, as in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        self.shape().as_str()
    }

    /// Whether this is the default fixed length, left out of serialized scenarios (cache keys).
    pub fn is_fixed(&self) -> bool {
        *self == MessageLengths::Fixed
    }

    /// The bounds (`message_length_min`, `message_length_max`) of a bimodal or uniform
    /// distribution; `None` for the others.
    pub fn bounds(&self) -> Option<(u32, u32)> {
        match *self {
            MessageLengths::Bimodal { min, max } | MessageLengths::Uniform { min, max } => {
                Some((min, max))
            }
            _ => None,
        }
    }

    /// The distribution named `name` with the bounds given (`None`: left out) around the mean
    /// `mean`: a uniform distribution's missing bound follows from the other (their midpoint is
    /// the mean); a missing bound is 0 otherwise, which [`MessageLengths::check`] refuses.
    /// `None` for an unknown name.
    pub fn from_parts(
        name: &str,
        mean: u32,
        min: Option<u32>,
        max: Option<u32>,
    ) -> Option<MessageLengths> {
        let twice = 2 * i64::from(mean);
        let derived = |other: u32| u32::try_from((twice - i64::from(other)).max(0)).unwrap_or(0);
        Some(match name {
            "fixed" => MessageLengths::Fixed,
            "geometric" => MessageLengths::Geometric,
            "bimodal" => MessageLengths::Bimodal { min: min.unwrap_or(0), max: max.unwrap_or(0) },
            "uniform" => match (min, max) {
                (Some(min), None) => MessageLengths::Uniform { min, max: derived(min) },
                (None, Some(max)) => MessageLengths::Uniform { min: derived(max), max },
                (min, max) => {
                    MessageLengths::Uniform { min: min.unwrap_or(0), max: max.unwrap_or(0) }
                }
            },
            _ => return None,
        })
    }

    /// The names of the distributions, fixed first.
    pub const NAMES: [&str; 4] = [
        LengthDistributionKind::Fixed.as_str(),
        LengthDistributionKind::Bimodal.as_str(),
        LengthDistributionKind::Geometric.as_str(),
        LengthDistributionKind::Uniform.as_str(),
    ];

    /// Checks the distribution against its mean `mean` (M >= 1); `Err` says what is wrong in
    /// the fields' words.
    pub fn check(&self, mean: u32) -> Result<(), String> {
        let Some((min, max)) = self.bounds() else {
            return Ok(());
        };
        let name = self.as_str();
        if min < 1 || max < 1 {
            return Err(format!(
                "a {name} distribution needs message_length_min and message_length_max, at \
                 least 1 flit each, found {min} and {max}"
            ));
        }
        if max > bounds::MAX_COUNT {
            return Err(format!(
                "message_length_max must be at most {}, found {max}",
                bounds::MAX_COUNT
            ));
        }
        match self {
            MessageLengths::Bimodal { .. } if !(min < max && (min..=max).contains(&mean)) => {
                Err(format!(
                    "a {name} distribution needs message_length_min < message_length_max with the \
                     mean message_length between them, found {min}, {max} and mean {mean}"
                ))
            }
            MessageLengths::Uniform { .. }
                if min > max || u64::from(min) + u64::from(max) != 2 * u64::from(mean) =>
            {
                Err(format!(
                    "a {name} distribution from message_length_min = {min} to \
                     message_length_max = {max} has mean {}, but message_length (the mean) is \
                     {mean}: the bounds' midpoint must be the mean (for these, \
                     message_length_max = {})",
                    (f64::from(min) + f64::from(max)) / 2.0,
                    (2 * i64::from(mean) - i64::from(min)).max(0)
                ))
            }
            _ => Ok(()),
        }
    }

    /// E[M^2] in flits^2 of lengths with this distribution and mean `mean`.
    pub fn second_moment(&self, mean: u32) -> f64 {
        let m = f64::from(mean);
        match *self {
            MessageLengths::Fixed => m * m,
            MessageLengths::Bimodal { min, max } => {
                let (lo, hi) = (f64::from(min), f64::from(max));
                if hi <= lo {
                    return m * m;
                }
                let p = (m - lo) / (hi - lo);
                (1.0 - p) * lo * lo + p * hi * hi
            }
            // Variance (1 - q) / q^2 with q = 1/M: M^2 - M.
            MessageLengths::Geometric => 2.0 * m * m - m,
            MessageLengths::Uniform { min, max } => {
                let n = f64::from(max.saturating_sub(min)) + 1.0;
                m * m + (n * n - 1.0) / 12.0
            }
        }
    }
}
