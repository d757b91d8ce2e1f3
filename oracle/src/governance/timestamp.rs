//! UTC timestamps in the one form the register accepts: `YYYY-MM-DDTHH:MM:SSZ`.
//!
//! A single fixed-width form makes text order equal time order, so the
//! register's "non-decreasing" rule is a string comparison, and YAML readers
//! cannot disagree about it because entries always quote it.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::governance::text::deserialize_via_try_from;

/// A second-resolution UTC instant, `2026-10-16T17:19:00Z`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "String")]
pub struct Timestamp(String);

impl Timestamp {
    /// The current time from the system clock.
    #[must_use]
    pub fn now() -> Self {
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self::from_unix(seconds)
    }

    /// The instant `seconds` after 1970-01-01T00:00:00Z.
    #[must_use]
    pub fn from_unix(seconds: u64) -> Self {
        let days = i64::try_from(seconds / 86_400).unwrap_or(i64::MAX);
        let rest = seconds % 86_400;
        let (year, month, day) = civil_from_days(days);
        Self(format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
            rest / 3600,
            rest / 60 % 60,
            rest % 60
        ))
    }

    /// The timestamp as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Timestamp {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        if is_valid(&text) {
            Ok(Self(text))
        } else {
            Err(format!(
                "`{text}` is not a UTC timestamp of the form YYYY-MM-DDTHH:MM:SSZ"
            ))
        }
    }
}

impl From<Timestamp> for String {
    fn from(stamp: Timestamp) -> Self {
        stamp.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `text` is exactly `YYYY-MM-DDTHH:MM:SSZ` with a real calendar date.
fn is_valid(text: &str) -> bool {
    let b = text.as_bytes();
    let shape = b.len() == 20
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'Z',
            _ => c.is_ascii_digit(),
        });
    if !shape {
        return false;
    }
    let number = |range: std::ops::Range<usize>| text[range].parse::<u32>().unwrap_or(u32::MAX);
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && number(11..13) < 24
        && number(14..16) < 60
        && number(17..19) < 60
}

/// Days of `month` (1–12) in the proleptic Gregorian `year`.
fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Converts days since 1970-01-01 to (year, month, day); Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

deserialize_via_try_from!(Timestamp);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times_format_as_utc() {
        assert_eq!(Timestamp::from_unix(0).as_str(), "1970-01-01T00:00:00Z");
        assert_eq!(
            Timestamp::from_unix(951_782_400).as_str(),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            Timestamp::from_unix(1_792_171_140).as_str(),
            "2026-10-16T17:19:00Z"
        );
    }

    #[test]
    fn only_the_fixed_form_with_a_real_date_parses() {
        assert!(Timestamp::try_from("2026-10-16T17:19:00Z".to_owned()).is_ok());
        assert!(Timestamp::try_from("2024-02-29T23:59:59Z".to_owned()).is_ok());
        for bad in [
            "2026-10-16 17:19:00Z",
            "2026-10-16T17:19:00+00:00",
            "2025-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-10-16T24:00:00Z",
            "2026-10-16T17:19Z",
        ] {
            assert!(Timestamp::try_from(bad.to_owned()).is_err(), "{bad}");
        }
    }
}
