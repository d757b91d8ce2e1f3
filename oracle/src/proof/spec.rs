//! Proof specs: YAML files naming the kind of proof, its positions and its node budget.
//!
//! ```yaml
//! kind: conversion        # or: unchanged, bestmove
//! nodes: 50000            # per engine move / per search
//! repetitions: 3          # conversion only: games per position (fresh `ucinewgame` each)
//! defender: solver        # conversion only: the exact solver defends
//! positions:
//!   - "8/8/8/3k4/8/8/8/KBN5 w - - 0 1"
//! ```
//!
//! `bestmove` positions are EPD lines with `bm`/`am` operations. Every field is checked while
//! parsing, so an error names its line and field.

use std::path::Path;

use serde::Deserialize;
use shakmaty::Chess;

use super::positions::{EpdLine, parse_epd};

/// A parsed proof spec.
#[derive(Clone, Debug)]
pub enum Spec {
    /// Conversion games against the solver; passes when every game converts.
    Conversion(ConversionSpec),
    /// Control positions; passes when best move and score equal the baseline's.
    Unchanged(UnchangedSpec),
    /// EPD best-move tests; passes when every position's move is a `bm` and no `am`.
    Bestmove(BestmoveSpec),
}

/// Who defends in a conversion proof (the only choice is the exact solver).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Defender {
    /// The project's exact solver: longest resistance, any draw first.
    Solver,
}

/// The `kind` tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Conversion,
    Unchanged,
    Bestmove,
}

/// A spec of kind `conversion`.
#[derive(Clone, Debug)]
pub struct ConversionSpec {
    /// Nodes per engine move.
    pub nodes: u64,
    /// Games per position.
    pub repetitions: u32,
    /// The defender.
    pub defender: Defender,
    /// Start positions, strong side to move.
    pub positions: Vec<Chess>,
}

/// A spec of kind `unchanged`.
#[derive(Clone, Debug)]
pub struct UnchangedSpec {
    /// Nodes per search (the same for engine and baseline).
    pub nodes: u64,
    /// Control positions.
    pub positions: Vec<Chess>,
}

/// A spec of kind `bestmove`.
#[derive(Clone, Debug)]
pub struct BestmoveSpec {
    /// Nodes per search.
    pub nodes: u64,
    /// EPD tests with `bm` and/or `am`.
    pub positions: Vec<EpdLine>,
}

/// The YAML document as written; positions are checked afterwards so errors can name the line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    kind: Kind,
    nodes: u64,
    repetitions: Option<u32>,
    defender: Option<Defender>,
    positions: Vec<String>,
}

/// Why a spec could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The spec file.
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The YAML does not fit the spec (the message names the field, line and column).
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The spec file.
        path: std::path::PathBuf,
        /// serde's message with the location.
        message: String,
    },
}

impl Spec {
    /// Parses spec text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Spec, SpecError> {
        let invalid = |message: String| SpecError::Invalid {
            path: path.to_owned(),
            message,
        };
        let raw: RawSpec = serde_norway::from_str(text).map_err(|e| invalid(e.to_string()))?;
        // serde places errors inside a list at the list's start; find the item's own line.
        let line_of = |needle: &str| {
            let start = text.find("positions").unwrap_or(0);
            let at = start + text[start..].find(needle).unwrap_or(0);
            text[..at].matches('\n').count() + 1
        };
        let mut epds = Vec::with_capacity(raw.positions.len());
        for (i, line) in raw.positions.iter().enumerate() {
            let at = |reason: String| {
                invalid(format!(
                    "positions[{i}] at line {}: {reason}",
                    line_of(line)
                ))
            };
            let epd = parse_epd(line).map_err(at)?;
            let has_ops = !(epd.best.is_empty() && epd.avoid.is_empty());
            if has_ops != (raw.kind == Kind::Bestmove) {
                return Err(at(if has_ops {
                    "bm/am belong in bestmove specs only".to_owned()
                } else {
                    "a bestmove test needs bm or am".to_owned()
                }));
            }
            epds.push(epd);
        }
        if raw.nodes == 0 || epds.is_empty() || raw.repetitions == Some(0) {
            return Err(invalid(
                "nodes, repetitions and positions must be non-zero/non-empty".to_owned(),
            ));
        }
        for (field, present) in [
            ("repetitions", raw.repetitions.is_some()),
            ("defender", raw.defender.is_some()),
        ] {
            if present && raw.kind != Kind::Conversion {
                return Err(invalid(format!(
                    "field `{field}` belongs to conversion specs only"
                )));
            }
        }
        let positions = || epds.iter().map(|e| e.position.clone()).collect();
        Ok(match raw.kind {
            Kind::Conversion => Spec::Conversion(ConversionSpec {
                nodes: raw.nodes,
                repetitions: raw.repetitions.unwrap_or(1),
                defender: raw.defender.ok_or_else(|| {
                    invalid("conversion specs need `defender: solver`".to_owned())
                })?,
                positions: positions(),
            }),
            Kind::Unchanged => Spec::Unchanged(UnchangedSpec {
                nodes: raw.nodes,
                positions: positions(),
            }),
            Kind::Bestmove => Spec::Bestmove(BestmoveSpec {
                nodes: raw.nodes,
                positions: epds,
            }),
        })
    }

    /// Reads and parses a spec file.
    pub fn read(path: &Path) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Io {
            path: path.to_owned(),
            source,
        })?;
        Spec::parse(&text, path)
    }

    /// `conversion`, `unchanged` or `bestmove`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Spec::Conversion(_) => "conversion",
            Spec::Unchanged(_) => "unchanged",
            Spec::Bestmove(_) => "bestmove",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Spec, SpecError> {
        Spec::parse(text, Path::new("spec.yaml"))
    }

    #[test]
    fn parses_each_kind() {
        let s = parse(
            "kind: conversion\nnodes: 5000\nrepetitions: 3\ndefender: solver\npositions:\n  - 8/8/8/3k4/8/8/8/KBN5 w - - 0 1\n",
        )
        .unwrap();
        let Spec::Conversion(c) = s else { panic!() };
        assert_eq!((c.nodes, c.repetitions, c.positions.len()), (5000, 3, 1));
        let s = parse("kind: bestmove\nnodes: 10\npositions:\n  - '6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id \"mate\";'\n").unwrap();
        let Spec::Bestmove(b) = s else { panic!() };
        assert_eq!(b.positions[0].best, vec!["a1a8".to_owned()]);
        assert!(matches!(
            parse("kind: unchanged\nnodes: 1\npositions: ['8/8/8/3k4/8/8/8/KQ6 w - - 0 1']\n")
                .unwrap(),
            Spec::Unchanged(_)
        ));
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = parse(
            "kind: conversion\nnodes: 5000\ndefender: solver\nrepetition: 3\npositions: []\n",
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("repetition") && msg.contains("line 4"),
            "{msg}"
        );
        let e = parse("kind: conversion\nnodes: 5000\ndefender: solver\npositions:\n  - 8/8/8/3k4/8/8/8/KBN5 w - - 0 1\n  - not a fen\n").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("positions[1]") && msg.contains("line 6"),
            "{msg}"
        );
        let e = parse("kind: unchanged\nnodes: 5\nrepetitions: 2\npositions: ['8/8/8/3k4/8/8/8/KQ6 w - - 0 1']\n").unwrap_err();
        assert!(e.to_string().contains("repetitions"), "{e}");
        let e =
            parse("kind: conversion\nnodes: many\ndefender: solver\npositions: []\n").unwrap_err();
        assert!(
            e.to_string().contains("nodes") && e.to_string().contains("line 2"),
            "{e}"
        );
        assert!(
            parse("kind: proof\n")
                .unwrap_err()
                .to_string()
                .contains("kind")
        );
    }
}
