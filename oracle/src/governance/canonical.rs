//! The register's canonical YAML: one byte sequence per value, read alike by
//! YAML 1.1 readers (PyYAML) and YAML 1.2 readers (serde_norway).
//!
//! The value is first turned into a `serde_norway::Value`, whose mappings keep
//! the struct's field order, and then written by the rules below rather than by
//! a general emitter whose quoting could change between versions:
//! - mappings in block style, two spaces per level; a sequence of scalars in
//!   flow style `[a, b]`, any other sequence in block style `- …`;
//! - a string is plain only if it starts with a letter, holds only
//!   `A-Za-z0-9_-./`, and is not a YAML 1.1 boolean or null word
//!   (`y n yes no on off true false null`, any case); every other string is
//!   double-quoted with every byte outside printable ASCII escaped, so
//!   numbers-looking text, timestamps, `~` and the empty string stay strings;
//! - integers in decimal; floats by Rust's shortest round-trip formatting with
//!   a `.0` added when it has no point (so 1.1 readers see a float), never an
//!   exponent; NaN and infinities are refused.

use std::fmt::Write as _;

use serde::Serialize;
use serde_norway::{Mapping, Number, Value};
use thiserror::Error;

/// Why a value has no canonical form.
#[derive(Debug, Error)]
pub enum CanonicalError {
    /// The value could not be turned into a YAML tree.
    #[error("cannot serialize: {0}")]
    Serialize(#[from] serde_norway::Error),
    /// A float is NaN or infinite; entries only record finite statistics.
    #[error("field `{0}` is not a finite number")]
    NonFinite(String),
    /// A shape the register never uses (tagged values, non-string keys, nested block sequences).
    #[error("field `{0}` has a shape the canonical form does not cover")]
    Unsupported(String),
}

/// Serializes `value` to canonical YAML (see the module documentation).
///
/// # Errors
/// A non-finite float or a shape outside the register's (see [`CanonicalError`]).
pub fn to_canonical_yaml<T: Serialize>(value: &T) -> Result<String, CanonicalError> {
    let tree = serde_norway::to_value(value)?;
    let mut out = String::new();
    match &tree {
        Value::Mapping(map) if !map.is_empty() => write_mapping(&mut out, map, 0, "")?,
        _ => {
            out.push_str(&scalar_or_flow(&tree, "")?);
            out.push('\n');
        }
    }
    Ok(out)
}

/// Writes a non-empty mapping whose keys start at column `indent`.
fn write_mapping(
    out: &mut String,
    map: &Mapping,
    indent: usize,
    path: &str,
) -> Result<(), CanonicalError> {
    let pad = " ".repeat(indent);
    for (key, value) in map {
        let Value::String(key) = key else {
            return Err(CanonicalError::Unsupported(path.to_owned()));
        };
        let here = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        let key_text = string(key);
        match value {
            Value::Mapping(inner) if !inner.is_empty() => {
                let _ = writeln!(out, "{pad}{key_text}:");
                write_mapping(out, inner, indent + 2, &here)?;
            }
            Value::Sequence(items) if !is_flow(items) => {
                let _ = writeln!(out, "{pad}{key_text}:");
                write_block_sequence(out, items, indent + 2, &here)?;
            }
            _ => {
                let _ = writeln!(out, "{pad}{key_text}: {}", scalar_or_flow(value, &here)?);
            }
        }
    }
    Ok(())
}

/// Writes a block sequence whose dashes sit at column `indent`.
fn write_block_sequence(
    out: &mut String,
    items: &[Value],
    indent: usize,
    path: &str,
) -> Result<(), CanonicalError> {
    let pad = " ".repeat(indent);
    for (index, item) in items.iter().enumerate() {
        let here = format!("{path}[{index}]");
        match item {
            Value::Mapping(map) if !map.is_empty() => {
                let mut nested = String::new();
                write_mapping(&mut nested, map, indent + 2, &here)?;
                // The first key shares the dash's line: replace its indentation by "- ".
                out.push_str(&pad);
                out.push_str("- ");
                out.push_str(&nested[indent + 2..]);
            }
            Value::Sequence(inner) if !is_flow(inner) => {
                return Err(CanonicalError::Unsupported(here));
            }
            _ => {
                let _ = writeln!(out, "{pad}- {}", scalar_or_flow(item, &here)?);
            }
        }
    }
    Ok(())
}

/// Whether a sequence is written in flow style: empty, or scalars only.
fn is_flow(items: &[Value]) -> bool {
    items.iter().all(|item| {
        !matches!(
            item,
            Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_)
        )
    })
}

/// A scalar, an empty mapping or a flow sequence of scalars, as one line of text.
fn scalar_or_flow(value: &Value, path: &str) -> Result<String, CanonicalError> {
    match value {
        Value::Null => Ok("null".to_owned()),
        Value::Bool(flag) => Ok(flag.to_string()),
        Value::Number(number) => number_text(number, path),
        Value::String(text) => Ok(string(text)),
        Value::Mapping(map) if map.is_empty() => Ok("{}".to_owned()),
        Value::Sequence(items) if is_flow(items) => {
            let parts = items
                .iter()
                .enumerate()
                .map(|(index, item)| scalar_or_flow(item, &format!("{path}[{index}]")))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(format!("[{}]", parts.join(", ")))
        }
        _ => Err(CanonicalError::Unsupported(path.to_owned())),
    }
}

/// A number in the canonical notation.
fn number_text(number: &Number, path: &str) -> Result<String, CanonicalError> {
    if number.is_f64() {
        let value = number.as_f64().unwrap_or(f64::NAN);
        if !value.is_finite() {
            return Err(CanonicalError::NonFinite(path.to_owned()));
        }
        let mut text = format!("{value}");
        if !text.contains('.') {
            text.push_str(".0");
        }
        Ok(text)
    } else {
        Ok(number.to_string())
    }
}

/// A string, plain when every YAML reader must see a string, otherwise double-quoted.
#[must_use]
pub fn string(text: &str) -> String {
    if is_plain_safe(text) {
        return text.to_owned();
    }
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            ' '..='~' => quoted.push(c),
            c if u32::from(c) <= 0xFFFF => {
                let _ = write!(quoted, "\\u{:04x}", u32::from(c));
            }
            c => {
                let _ = write!(quoted, "\\U{:08x}", u32::from(c));
            }
        }
    }
    quoted.push('"');
    quoted
}

/// Whether `text` reads as this very string, unquoted, in YAML 1.1 and 1.2.
fn is_plain_safe(text: &str) -> bool {
    const YAML11_WORDS: [&str; 9] = ["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !YAML11_WORDS
            .iter()
            .any(|word| word.eq_ignore_ascii_case(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ambiguous_strings_are_quoted_and_plain_words_are_not() {
        for ambiguous in [
            "yes", "No", "ON", "off", "y", "N", "null", "~", "", "0123", "1e5", "12:30", ".inf",
        ] {
            assert!(string(ambiguous).starts_with('"'), "{ambiguous}");
        }
        for plain in [
            "gewinn",
            "T-0002",
            "books/book-a.epd",
            "accept_h1",
            "e3b0c4",
        ] {
            assert_eq!(string(plain), plain);
        }
        assert_eq!(
            string("L\u{e4}ufer \"x\"\\"),
            "\"L\\u00e4ufer \\\"x\\\"\\\\\""
        );
        assert_eq!(string("\u{1f600}"), "\"\\U0001f600\"");
    }

    #[test]
    fn floats_always_carry_a_point_and_round_trip() {
        #[derive(Serialize)]
        struct Floats {
            values: Vec<f64>,
        }
        let values = vec![
            0.0,
            -0.0,
            2.0,
            0.1,
            1e-7,
            123_456_789.125,
            -4.676_820_181_575_474,
        ];
        let text = to_canonical_yaml(&Floats {
            values: values.clone(),
        })
        .unwrap();
        assert_eq!(
            text,
            "values: [0.0, -0.0, 2.0, 0.1, 0.0000001, 123456789.125, -4.676820181575474]\n"
        );
        let back: serde_norway::Value = serde_norway::from_str(&text).unwrap();
        let read: Vec<f64> = back["values"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(
            read.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn random_strings_and_floats_read_back_identically() {
        use rand::{Rng, SeedableRng};
        #[derive(Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Sample {
            text: Vec<String>,
            numbers: Vec<f64>,
        }
        const ALPHABET: &[char] = &[
            'a',
            'Y',
            'n',
            'o',
            'e',
            'E',
            '0',
            '1',
            '9',
            '.',
            '-',
            '+',
            '_',
            ':',
            '/',
            ' ',
            '#',
            '~',
            '"',
            '\\',
            '\'',
            ',',
            '[',
            '{',
            '&',
            '*',
            '!',
            '%',
            '@',
            '`',
            '|',
            '>',
            '?',
            '=',
            '<',
            '\t',
            '\n',
            '\r',
            '\u{0}',
            '\u{85}',
            '\u{a0}',
            '\u{2028}',
            '\u{feff}',
            '\u{e4}',
            '\u{1f600}',
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
        for _ in 0..300 {
            let text = (0..8)
                .map(|_| {
                    let len = rng.random_range(0..7);
                    (0..len)
                        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
                        .collect()
                })
                .collect();
            let numbers = (0..8)
                .map(|_| f64::from_bits(rng.random::<u64>()))
                .filter(|x| x.is_finite())
                .collect();
            let sample = Sample { text, numbers };
            let yaml = to_canonical_yaml(&sample).unwrap();
            let back: Sample = serde_norway::from_str(&yaml).unwrap();
            assert_eq!(back, sample, "{yaml}");
            assert!(yaml.is_ascii());
            assert_eq!(to_canonical_yaml(&back).unwrap(), yaml);
        }
    }

    #[test]
    fn non_finite_floats_are_refused_by_name() {
        #[derive(Serialize)]
        struct Stage {
            llr: f64,
        }
        let error = to_canonical_yaml(&Stage { llr: f64::NAN }).unwrap_err();
        assert_eq!(error.to_string(), "field `llr` is not a finite number");
    }
}
