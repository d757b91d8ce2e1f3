//! Machine-checkable proofs of the Randfall path: conversion games against the exact solver,
//! control comparisons, best-move tests, their YAML specs, and the KBNK study
//! protocol (docs/randfall.md).

mod game;
mod player;
mod positions;
mod run;
mod sign_test;
mod spec;
mod study;
mod unchanged;

use std::path::PathBuf;

pub use game::{GameEnding, GameOutcome, play_conversion};
pub use player::EnginePlayer;
pub use positions::{EpdLine, parse_epd, read_positions};
pub use run::{
    BestmoveResult, ConversionResult, Detail, ProofRun, ProofVerdict, run_spec, verify_proof,
};
pub use sign_test::sign_test_p;
pub use spec::{BestmoveSpec, ConversionSpec, Defender, Spec, SpecError, UnchangedSpec};
pub use study::{
    EngineRun, Paired, Study, StudyReport, conversion_game, fen_of, run_study, won_positions,
};
pub use unchanged::{Answer, Comparison, compare};

use crate::tablebase::TablebaseError;

/// What can stop a proof or a study (engine faults are results, not errors).
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// The solver failed (a table could not be built or read).
    #[error(transparent)]
    Tablebase(#[from] TablebaseError),
    /// The solver had no move in a position the game had not ended in (a solver bug).
    #[error("the solver found no defence in a position that is not over")]
    DefenderHasNoMove,
    /// The ending has fewer won positions than asked for.
    #[error("{ending} has fewer than {wanted} won positions with White to move")]
    TooFewWins {
        /// The ending.
        ending: String,
        /// Positions asked for.
        wanted: usize,
    },
    /// An `unchanged` spec was run without a baseline binary.
    #[error("an `unchanged` spec compares against a baseline: pass --baseline BIN")]
    NeedsBaseline,
    /// The spec file is unreadable or invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A line of a position file that is not a legal FEN/EPD.
    #[error("{}:{line}: {reason}", path.display())]
    BadPositionFile {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl From<crate::integrity::FileError> for ProofError {
    fn from(error: crate::integrity::FileError) -> Self {
        Self::Io {
            path: error.path,
            source: error.reason,
        }
    }
}
