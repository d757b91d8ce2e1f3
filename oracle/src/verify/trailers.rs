//! Step 2: what the candidate commit declares about itself in its trailers.
//!
//! `Bench: N` (Stockfish's signature), `Oracle-Path: standard|randfall` and
//! `Oracle-Proof: PATH`. The trailer block is parsed by libgit2's own trailer parser
//! (`git interpret-trailers` rules), so the oracle agrees with git about what is a trailer.

use serde::Serialize;
use thiserror::Error;

/// The path a change declares (ARCHITECTURE §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OraclePath {
    /// A change that lands only with a found gain (→ Gewinn).
    Standard,
    /// Annex A3: a bug fix or rare position class, with a proof (→ Korrektur).
    Randfall,
}

/// The candidate's declarations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trailers {
    /// `Bench: N`, the node count `coherent bench` must print.
    pub bench: u64,
    /// `Oracle-Path`, `standard` when absent.
    pub path: OraclePath,
    /// `Oracle-Proof`, the proof spec's path in the candidate's tree.
    pub proof: Option<String>,
}

/// A trailer that is missing, repeated, malformed or inconsistent.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TrailerError {
    /// libgit2 could not parse the message.
    #[error("cannot parse the commit message's trailers: {0}")]
    Parse(String),
    /// Every candidate must carry its bench signature.
    #[error("the candidate has no `Bench: N` trailer (the node count printed by `coherent bench`)")]
    MissingBench,
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

const BENCH: &str = "Bench";
const PATH: &str = "Oracle-Path";
const PROOF: &str = "Oracle-Proof";

/// Reads the candidate's trailers from its full commit message.
pub fn parse(message: &str) -> Result<Trailers, TrailerError> {
    let trailers =
        git2::message_trailers_strs(message).map_err(|e| TrailerError::Parse(e.to_string()))?;
    let mut bench = None;
    let mut path = None;
    let mut proof = None;
    for (key, value) in trailers.iter() {
        let value = value.trim();
        if key.eq_ignore_ascii_case(BENCH) {
            let nodes = value.parse::<u64>().map_err(|_| TrailerError::Invalid {
                key: BENCH,
                value: value.to_owned(),
                expected: "a node count (digits only)",
            })?;
            set_once(&mut bench, BENCH, nodes)?;
        } else if key.eq_ignore_ascii_case(PATH) {
            let declared = match value.to_ascii_lowercase().as_str() {
                "standard" => OraclePath::Standard,
                "randfall" => OraclePath::Randfall,
                _ => {
                    return Err(TrailerError::Invalid {
                        key: PATH,
                        value: value.to_owned(),
                        expected: "`standard` or `randfall`",
                    });
                }
            };
            set_once(&mut path, PATH, declared)?;
        } else if key.eq_ignore_ascii_case(PROOF) {
            if value.is_empty() || value.starts_with('/') || value.split('/').any(|c| c == "..") {
                return Err(TrailerError::Invalid {
                    key: PROOF,
                    value: value.to_owned(),
                    expected: "a relative path inside the candidate's tree",
                });
            }
            set_once(&mut proof, PROOF, value.to_owned())?;
        }
    }
    let bench = bench.ok_or(TrailerError::MissingBench)?;
    let path = path.unwrap_or(OraclePath::Standard);
    match (path, &proof) {
        (OraclePath::Randfall, None) => Err(TrailerError::Inconsistent(
            "`Oracle-Path: randfall` needs `Oracle-Proof: PATH` (Annex A3: a machine-checkable proof)",
        )),
        (OraclePath::Standard, Some(_)) => Err(TrailerError::Inconsistent(
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
        let t = parse("eval: tweak\n\nBody.\n\nBench: 1234567\n").unwrap();
        assert_eq!(t.bench, 1_234_567);
        assert_eq!(t.path, OraclePath::Standard);
        assert_eq!(t.proof, None);
    }

    #[test]
    fn randfall_with_proof() {
        let t = parse(
            "eval: KBNK corner\n\nBench: 695\nOracle-Path: randfall\nOracle-Proof: engine/proofs/kbnk.yaml\n",
        )
        .unwrap();
        assert_eq!(t.path, OraclePath::Randfall);
        assert_eq!(t.proof.as_deref(), Some("engine/proofs/kbnk.yaml"));
    }

    #[test]
    fn bench_in_body_is_not_a_trailer() {
        assert_eq!(
            parse("x\n\nBench: 5 was measured\n\nSigned-off-by: a <b@c>\n"),
            Err(TrailerError::MissingBench)
        );
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            parse("x\n\nBench: 12a\n"),
            Err(TrailerError::Invalid { key: "Bench", .. })
        ));
        assert_eq!(
            parse("x\n\nBench: 1\nBench: 2\n"),
            Err(TrailerError::Repeated("Bench"))
        );
        assert!(matches!(
            parse("x\n\nBench: 1\nOracle-Path: randfall\n"),
            Err(TrailerError::Inconsistent(_))
        ));
        assert!(matches!(
            parse("x\n\nBench: 1\nOracle-Path: randfall\nOracle-Proof: ../etc/passwd\n"),
            Err(TrailerError::Invalid {
                key: "Oracle-Proof",
                ..
            })
        ));
        assert!(matches!(
            parse("x\n\nBench: 1\nOracle-Path: maybe\n"),
            Err(TrailerError::Invalid {
                key: "Oracle-Path",
                ..
            })
        ));
    }
}
