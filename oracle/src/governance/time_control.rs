//! The constitution's text form of a time control: `B+I` seconds with at most three decimals
//! (`8+0.08`) or `nodes=N`. Stages and register entries are written in it (`#[serde(with =
//! "time_control")]`); the value is the runner's own [`TimeControl`], whose derived serde form
//! (state files, shard fingerprints) is another and stays as it is. For the clocks and node
//! limits admitted here the text is the type's `Display`, so the two cannot drift apart.

use std::time::Duration;

use serde::{Deserializer, Serializer, ser::Error as _};

use super::text::deserialize_parsed;
use crate::play::clock::TimeControl;

/// Reads the constitution's text form.
///
/// # Errors
/// A message quoting `text` when it is not `B+I` (base above zero, at most three decimals each)
/// or `nodes=N` (N ≥ 1).
pub fn parse(text: &str) -> Result<TimeControl, String> {
    let bad = || format!("`{text}` is not a time control (`8+0.08` seconds or `nodes=25000`)");
    if let Some(nodes) = text.strip_prefix("nodes=") {
        return nodes.parse().map(TimeControl::Nodes).map_err(|_| bad());
    }
    let (base, increment) = text.split_once('+').ok_or_else(bad)?;
    match (milliseconds(base), milliseconds(increment)) {
        (Some(base_ms), Some(increment_ms)) if base_ms > 0 => Ok(TimeControl::Clock {
            base: Duration::from_millis(base_ms),
            increment: Duration::from_millis(increment_ms),
            moves: None,
        }),
        _ => Err(bad()),
    }
}

/// Writes `tc` in the constitution's text form.
///
/// # Errors
/// A time control the form cannot hold (moves per period, a depth or movetime limit, a time
/// finer than a millisecond): it never came from a constitution.
pub fn serialize<S: Serializer>(tc: &TimeControl, serializer: S) -> Result<S::Ok, S::Error> {
    let whole_ms = |d: &Duration| d.subsec_nanos().is_multiple_of(1_000_000);
    let admitted = match tc {
        TimeControl::Clock {
            base,
            increment,
            moves: None,
        } => !base.is_zero() && whole_ms(base) && whole_ms(increment),
        TimeControl::Nodes(_) => true,
        TimeControl::Clock { .. } | TimeControl::Depth(_) | TimeControl::Movetime(_) => false,
    };
    if !admitted {
        return Err(S::Error::custom(format!(
            "the constitution's form holds `B+I` seconds or `nodes=N`, not `{tc}`"
        )));
    }
    serializer.serialize_str(&tc.to_string())
}

/// Reads the constitution's text form, failing at the string's position.
///
/// # Errors
/// As [`parse`].
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<TimeControl, D::Error> {
    deserialize_parsed(deserializer, parse)
}

/// Parses decimal seconds with at most three decimals (`0.08`) into milliseconds.
fn milliseconds(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || fraction.len() > 3 || !digits(fraction) {
        return None;
    }
    let fraction_ms = format!("{fraction:0<3}").parse::<u64>().ok()?;
    whole
        .parse::<u64>()
        .ok()?
        .checked_mul(1000)?
        .checked_add(fraction_ms)
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU64;

    use super::*;

    /// A record holding one time control in the constitution's form.
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Stage {
        #[serde(with = "super")]
        tc: TimeControl,
    }

    #[test]
    fn time_controls_round_trip_through_text() {
        for text in [
            "8+0.08",
            "40+0.4",
            "10+0.1",
            "60+0",
            "1.5+0.015",
            "nodes=25000",
        ] {
            let tc = parse(text).unwrap();
            assert_eq!(tc.to_string(), text);
            let stage: Stage = serde_norway::from_str(&format!("tc: {text}\n")).unwrap();
            assert_eq!(stage.tc, tc);
            let json = serde_json::to_string(&stage).unwrap();
            assert_eq!(json, format!(r#"{{"tc":"{text}"}}"#));
        }
        assert_eq!(
            parse("8+0.08").unwrap(),
            TimeControl::Clock {
                base: Duration::from_millis(8000),
                increment: Duration::from_millis(80),
                moves: None
            }
        );
        assert_eq!(
            parse("nodes=8000").unwrap(),
            TimeControl::Nodes(NonZeroU64::new(8000).unwrap())
        );
        for bad in [
            "8",
            "8+",
            "+0.1",
            "8+0.0001",
            "0+0.1",
            "nodes=0",
            "nodes=x",
            "8+-1",
            "40/8+0.08",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_what_the_constitution_admits_is_written() {
        for tc in ["40/8+0.08", "8+0.0805"] {
            let stage = Stage {
                tc: tc.parse().unwrap(),
            };
            let error = serde_norway::to_string(&stage).unwrap_err().to_string();
            assert!(error.contains("the constitution's form"), "{tc}: {error}");
        }
        let depth = Stage {
            tc: TimeControl::Depth(8),
        };
        assert!(serde_json::to_string(&depth).is_err());
    }

    #[test]
    fn a_bad_time_control_is_reported_at_its_position() {
        let error = serde_norway::from_str::<Stage>("tc: 8+0.0001\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`8+0.0001` is not a time control"),
            "{error}"
        );
        assert!(error.contains("line 1"), "{error}");
    }
}
