//! `Sweep<T>`: a spec value that is one value, a list of values, or a range.
//!
//! Every scenario field and the load accept any of these forms:
//!
//! ```yaml
//! virtual_channels: 2                          # one value
//! virtual_channels: [1, 2, 6]                  # a list: swept as a grid axis
//! fault_rate: {from: 0, to: 0.1, points: 5}    # a range by number of points
//! message_length: {from: 16, to: 64, step: 16} # a range by step
//! ```
//!
//! The deserializer is hand-written rather than `#[serde(untagged)]` so that the
//! YAML deserializer is never buffered: each list item keeps its own source
//! location for error messages.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserialize, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Location, Spanned};

/// One value, a list, or a range of values of a scenario field.
#[derive(Clone, Debug, PartialEq)]
pub enum Sweep<T> {
    /// A single value.
    One(T),
    /// Explicit values, each with its location.
    List(Vec<Spanned<T>>),
    /// `{from, to, points}` or `{from, to, step}`.
    Range(Range),
}

/// A numeric range as written in the spec.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// First value.
    pub from: f64,
    /// Last value (inclusive, when the step lands on it).
    pub to: f64,
    /// How the range is divided.
    pub by: RangeBy,
}

/// How a range is divided.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RangeBy {
    /// This many evenly spaced points, both ends included.
    Points(u64),
    /// Values `from, from + step, ...` up to `to`.
    Step(f64),
}

/// The largest number of values one range may produce.
pub const MAX_RANGE_POINTS: u64 = 1_000_000;

impl Range {
    /// The values of the range, or why there are none.
    pub fn values(&self) -> Result<Vec<f64>, String> {
        if !self.from.is_finite() || !self.to.is_finite() {
            return Err("range ends must be finite numbers".into());
        }
        if self.from >= self.to {
            return Err(format!(
                "a range needs `from < to`, found from = {} and to = {}",
                crate::number::compact(self.from),
                crate::number::compact(self.to)
            ));
        }
        match self.by {
            RangeBy::Points(points) => {
                if points == 0 {
                    return Err("`points` must be at least 1".into());
                }
                if points > MAX_RANGE_POINTS {
                    return Err(format!("`points` must be at most {MAX_RANGE_POINTS}"));
                }
                if points == 1 {
                    return Ok(vec![self.from]);
                }
                let span = self.to - self.from;
                let last = (points - 1) as f64;
                Ok((0..points).map(|i| self.from + span * (i as f64) / last).collect())
            }
            RangeBy::Step(step) => {
                if !(step.is_finite() && step > 0.0) {
                    return Err(format!(
                        "`step` must be a positive number, found {}",
                        crate::number::compact(step)
                    ));
                }
                let count = ((self.to - self.from) / step + 1e-9).floor() + 1.0;
                if count > MAX_RANGE_POINTS as f64 {
                    return Err(format!(
                        "the range would produce {count} values; at most {MAX_RANGE_POINTS} are allowed"
                    ));
                }
                Ok((0..count as u64).map(|i| self.from + step * i as f64).collect())
            }
        }
    }
}

/// A value type that may be swept over: converts range points into values.
pub trait SweepValue: Sized + Clone {
    /// Converts one point of a numeric range, or says why it cannot.
    fn from_range_point(x: f64) -> Result<Self, String>;

    /// Checks a value of scenario field `field` against the field's bounds
    /// (`scenario::bounds`, from the scenario table); names and files have none.
    fn check(_field: &str, _value: &Self) -> Result<(), String> {
        Ok(())
    }
}

impl SweepValue for f64 {
    fn from_range_point(x: f64) -> Result<f64, String> {
        Ok(x)
    }

    fn check(field: &str, value: &f64) -> Result<(), String> {
        crate::scenario::bounds::real(field, *value)
    }
}

impl SweepValue for u32 {
    fn from_range_point(x: f64) -> Result<u32, String> {
        let rounded = x.round();
        if (x - rounded).abs() > 1e-9 || rounded < 0.0 || rounded > u32::MAX as f64 {
            return Err(format!(
                "this field takes whole numbers, but the range produces {x}; use `step` with a whole number"
            ));
        }
        Ok(rounded as u32)
    }

    fn check(field: &str, value: &u32) -> Result<(), String> {
        crate::scenario::bounds::integer(field, *value)
    }
}

impl SweepValue for String {
    fn from_range_point(_: f64) -> Result<String, String> {
        Err("this field takes file names; a range {from, to, ...} only applies to numbers".into())
    }
}

impl<T: SweepValue> Sweep<T> {
    /// The values with their locations (`fallback` for a single value or a range).
    pub fn values(&self, fallback: Location) -> Result<Vec<(T, Location)>, String> {
        match self {
            Sweep::One(v) => Ok(vec![(v.clone(), fallback)]),
            Sweep::List(items) => {
                if items.is_empty() {
                    return Err("an empty list sweeps over nothing; give at least one value".into());
                }
                Ok(items.iter().map(|s| (s.value.clone(), s.referenced)).collect())
            }
            Sweep::Range(range) => range
                .values()?
                .into_iter()
                .map(|x| T::from_range_point(x).map(|v| (v, fallback)))
                .collect(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Sweep<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SweepVisitor(PhantomData))
    }
}

struct SweepVisitor<T>(PhantomData<T>);

macro_rules! forward_scalar {
    ($($method:ident: $ty:ty),*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            T::deserialize(v.into_deserializer()).map(Sweep::One)
        }
    )*};
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for SweepVisitor<T> {
    type Value = Sweep<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value, a list of values, or a range {from, to, points} / {from, to, step}")
    }

    forward_scalar!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        T::deserialize(v.into_deserializer()).map(Sweep::One)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<T>>()? {
            items.push(item);
        }
        Ok(Sweep::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        const FIELDS: &[&str] = &["from", "to", "points", "step"];
        let (mut from, mut to, mut points, mut step) = (None, None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "from" => from = Some(map.next_value::<f64>()?),
                "to" => to = Some(map.next_value::<f64>()?),
                "points" => points = Some(map.next_value::<u64>()?),
                "step" => step = Some(map.next_value::<f64>()?),
                other => return Err(de::Error::unknown_field(other, FIELDS)),
            }
        }
        let from = from.ok_or_else(|| de::Error::missing_field("from"))?;
        let to = to.ok_or_else(|| de::Error::missing_field("to"))?;
        let by = match (points, step) {
            (Some(p), None) => RangeBy::Points(p),
            (None, Some(s)) => RangeBy::Step(s),
            (Some(_), Some(_)) => {
                return Err(de::Error::custom("a range takes `points` or `step`, not both"));
            }
            (None, None) => {
                return Err(de::Error::custom("a range needs `points` or `step`"));
            }
        };
        Ok(Sweep::Range(Range { from, to, by }))
    }
}

impl<T: JsonSchema> JsonSchema for Sweep<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("Sweep_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let one = generator.subschema_for::<T>();
        json_schema!({
            "description": "One value, a list of values (swept), or a range {from, to, points} / {from, to, step}.",
            "anyOf": [
                one,
                {"type": "array", "items": one, "minItems": 1},
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["from", "to"],
                    "properties": {
                        "from": {"type": "number", "description": "First value."},
                        "to": {"type": "number", "description": "Last value."},
                        "points": {"type": "integer", "minimum": 1, "description": "Evenly spaced points, both ends included."},
                        "step": {"type": "number", "exclusiveMinimum": 0, "description": "Distance between consecutive values."}
                    }
                }
            ]
        })
    }
}
