//! The empty-row policy: the values of a row with no label relevant at the
//! evaluation's level ([`Empty`]).

use crate::core::error::{Error, Result};
use crate::core::metrics::query::is_rel;

/// The value of every metric on a row with no relevant label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Empty {
    Zero,
    One,
    /// NaN.
    Nan,
    /// NaN here; the caller drops the row (the empty flags say which).
    Skip,
}

impl Empty {
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "zero" => Empty::Zero,
            "one" => Empty::One,
            "nan" => Empty::Nan,
            "skip" => Empty::Skip,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "empty must be 'zero', 'nan', 'skip' or 'one', got {name:?}"
                )))
            }
        })
    }

    pub(super) fn value(self) -> f64 {
        match self {
            Empty::Zero => 0.0,
            Empty::One => 1.0,
            Empty::Nan | Empty::Skip => f64::NAN,
        }
    }
}

/// Whether the row has no relevant label: then `out` is filled by `empty`.
pub(super) fn empty_row(labels: &[f64], level: f64, empty: Empty, out: &mut [f64]) -> bool {
    if labels.iter().fold(false, |a, &l| a | is_rel(l, level)) {
        return false;
    }
    out.fill(empty.value());
    true
}
