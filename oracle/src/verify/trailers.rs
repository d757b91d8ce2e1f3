//! Step 2: what the candidate commit declares about itself in its trailers.
//!
//! `Bench: N` (Stockfish's signature), `Oracle-Path: standard|randfall` and
//! `Oracle-Proof: PATH`, all read through the builder module's one trailer reader.

use serde::Serialize;
use thiserror::Error;

use crate::builder::bench::{TrailerForm, declared_bench, message_trailers};
use crate::governance::entry::PathKind;

/// The candidate's declarations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trailers {
    /// `Bench: N`, the node count `coherent bench` must print.
    pub bench: u64,
    /// `Oracle-Path`: standard (the default) or randfall.
    pub path: PathKind,
    /// `Oracle-Proof`, the proof spec's path in the candidate's tree.
    pub proof: Option<String>,
}

/// A trailer that is missing, repeated, malformed or inconsistent.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TrailerError {
    /// The message's trailers do not parse, or `Bench:` is malformed.
    #[error("{0}")]
    Parse(String),
    /// Every candidate must carry its bench signature.
    #[error("the candidate has no `{0}: N` trailer (the node count its bench prints)")]
    MissingBench(String),
    /// The same trailer twice: ambiguous, so refused.
    #[error("trailer `{0}` appears more than once")]
    Repeated(&'static str),
    /// A value that does not parse.
    #[error("trailer `{key}: {value}` is invalid: {expected}")]
    Invalid {
        /// The trailer key.
        key: &'static str,
        /// The value as written.
        value: String,
        /// What it should be.
        expected: &'static str,
    },
    /// Randfall needs its proof, Standard must not name one.
    #[error("{0}")]
    Inconsistent(&'static str),
}

const PATH: &str = "Oracle-Path";
const PROOF: &str = "Oracle-Proof";

/// Where every proof spec lives: a fixed place, inside what a candidate may change and reviewed
/// with it, so that a trailer cannot point the proof at another file of the tree.
pub const PROOF_DIR: &str = "engine/proofs/";

/// Reads the candidate's trailers from its full commit message; the bench signature in the
/// engine contract's `form`.
pub fn parse(message: &str, form: &TrailerForm) -> Result<Trailers, TrailerError> {
    let trailers = message_trailers(message).map_err(TrailerError::Parse)?;
    let bench = declared_bench(message, form)
        .map_err(TrailerError::Parse)?
        .ok_or_else(|| TrailerError::MissingBench(form.key.clone()))?;
    let mut path = None;
    let mut proof = None;
    for (key, value) in &trailers {
        if key.eq_ignore_ascii_case(PATH) {
            let declared = match value.to_ascii_lowercase().as_str() {
                "standard" => PathKind::Standard,
                "randfall" => PathKind::Randfall,
                _ => {
                    return Err(TrailerError::Invalid {
                        key: PATH,
                        value: value.clone(),
                        expected: "`standard` or `randfall`",
                    });
                }
            };
            set_once(&mut path, PATH, declared)?;
        } else if key.eq_ignore_ascii_case(PROOF) {
            let inside = value.strip_prefix(PROOF_DIR).unwrap_or_default();
            if inside.is_empty() || inside.split('/').any(|c| c.is_empty() || c == "..") {
                return Err(TrailerError::Invalid {
                    key: PROOF,
                    value: value.clone(),
                    expected: "a proof spec under `engine/proofs/` (Annex A3.2: a fixed place)",
                });
            }
            set_once(&mut proof, PROOF, value.clone())?;
        }
    }
    let path = path.unwrap_or(PathKind::Standard);
    match (path, &proof) {
        (PathKind::Randfall, None) => Err(TrailerError::Inconsistent(
            "`Oracle-Path: randfall` needs `Oracle-Proof: PATH` (Annex A3: a machine-checkable proof)",
        )),
        (PathKind::Standard, Some(_)) => Err(TrailerError::Inconsistent(
            "`Oracle-Proof` is only read on the Randfall path; add `Oracle-Path: randfall` or drop it",
        )),
        _ => Ok(Trailers { bench, path, proof }),
    }
}

fn set_once<T>(slot: &mut Option<T>, key: &'static str, value: T) -> Result<(), TrailerError> {
    if slot.replace(value).is_some() {
        return Err(TrailerError::Repeated(key));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_with_bench() {
        let t = parse(
            "eval: tweak\n\nBody.\n\nBench: 1234567\n",
            &TrailerForm::standard(),
        )
        .unwrap();
        assert_eq!(t.bench, 1_234_567);
        assert_eq!(t.path, PathKind::Standard);
        assert_eq!(t.proof, None);
    }

    #[test]
    fn randfall_with_proof() {
        let t = parse(
            "eval: KBNK corner\n\nBench: 695\nOracle-Path: randfall\nOracle-Proof: engine/proofs/kbnk.yaml\n",
            &TrailerForm::standard(),
        )
        .unwrap();
        assert_eq!(t.path, PathKind::Randfall);
        assert_eq!(t.proof.as_deref(), Some("engine/proofs/kbnk.yaml"));
    }

    #[test]
    fn bench_in_body_is_not_a_trailer() {
        assert_eq!(
            parse(
                "x\n\nBench: 5 was measured\n\nSigned-off-by: a <b@c>\n",
                &TrailerForm::standard()
            ),
            Err(TrailerError::MissingBench("Bench".into()))
        );
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            parse("x\n\nBench: 12a\n", &TrailerForm::standard()),
            Err(TrailerError::Parse(_))
        ));
        assert!(matches!(
            parse("x\n\nBench: 1\nBench: 2\n", &TrailerForm::standard()),
            Err(TrailerError::Parse(_))
        ));
        assert_eq!(
            parse(
                "x\n\nBench: 1\nOracle-Path: standard\nOracle-Path: randfall\n",
                &TrailerForm::standard()
            ),
            Err(TrailerError::Repeated("Oracle-Path"))
        );
        assert!(matches!(
            parse(
                "x\n\nBench: 1\nOracle-Path: randfall\n",
                &TrailerForm::standard()
            ),
            Err(TrailerError::Inconsistent(_))
        ));
        assert!(matches!(
            parse(
                "x\n\nBench: 1\nOracle-Path: randfall\nOracle-Proof: ../etc/passwd\n",
                &TrailerForm::standard()
            ),
            Err(TrailerError::Invalid {
                key: "Oracle-Proof",
                ..
            })
        ));
        for elsewhere in [
            "books/book-a.epd",
            "engine/proofs/",
            "engine/proofs/../x.yaml",
        ] {
            assert!(
                matches!(
                    parse(
                        &format!(
                            "x\n\nBench: 1\nOracle-Path: randfall\nOracle-Proof: {elsewhere}\n"
                        ),
                        &TrailerForm::standard()
                    ),
                    Err(TrailerError::Invalid {
                        key: "Oracle-Proof",
                        ..
                    })
                ),
                "{elsewhere}"
            );
        }
        assert!(matches!(
            parse(
                "x\n\nBench: 1\nOracle-Path: maybe\n",
                &TrailerForm::standard()
            ),
            Err(TrailerError::Invalid {
                key: "Oracle-Path",
                ..
            })
        ));
    }
}
