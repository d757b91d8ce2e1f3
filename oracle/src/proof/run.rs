//! Running a proof spec on one binary, and the fail → pass check that `oracle verify` calls.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::ProofError;
use super::game::GameOutcome;
use super::player::EnginePlayer;
use super::spec::{BestmoveSpec, ConversionSpec, Spec};
use super::study::{conversion_game, fen_of};
use super::unchanged::{Answer, Comparison, compare};
use crate::integrity::sha256_file;
use crate::tablebase::Tablebase;

/// One conversion position: its games (one per repetition).
#[derive(Clone, Debug, Serialize)]
pub struct ConversionResult {
    /// The start position.
    pub fen: String,
    /// Games converted out of `games.len()`.
    pub converted: usize,
    /// The games.
    pub games: Vec<GameOutcome>,
}

/// One best-move test.
#[derive(Clone, Debug, Serialize)]
pub struct BestmoveResult {
    /// The position.
    pub fen: String,
    /// Accepted moves (`bm`, UCI).
    pub best: Vec<String>,
    /// Refused moves (`am`, UCI).
    pub avoid: Vec<String>,
    /// What the engine said.
    pub answer: Answer,
    /// The move is a `bm` (if any) and no `am`.
    pub passed: bool,
}

/// Per-position results of one run.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "positions")]
pub enum Detail {
    /// Conversion games.
    Conversion(Vec<ConversionResult>),
    /// Control comparisons against the baseline.
    Unchanged(Vec<Comparison>),
    /// Best-move tests.
    Bestmove(Vec<BestmoveResult>),
}

/// A spec run on one binary.
#[derive(Clone, Debug, Serialize)]
pub struct ProofRun {
    /// The binary.
    pub engine: PathBuf,
    /// Its sha256, bound before the first search.
    pub sha256: String,
    /// The baseline of an `unchanged` run.
    pub baseline: Option<PathBuf>,
    /// Whether the spec passed.
    pub passed: bool,
    /// Per-position results.
    pub detail: Detail,
}

/// Runs `spec` on `engine` (`baseline` is required by `unchanged` specs and ignored otherwise).
pub fn run_spec(
    spec: &Spec,
    engine: &Path,
    baseline: Option<&Path>,
    tb: &Tablebase,
) -> Result<ProofRun, ProofError> {
    let sha256 = sha256_file(engine)?;
    let (detail, baseline) = match spec {
        Spec::Conversion(s) => (Detail::Conversion(conversion(s, engine, tb)?), None),
        Spec::Bestmove(s) => (Detail::Bestmove(bestmove(s, engine)), None),
        Spec::Unchanged(s) => {
            let base = baseline.ok_or(ProofError::NeedsBaseline)?;
            sha256_file(base)?;
            let mut a = EnginePlayer::new(engine, s.nodes);
            let mut b = EnginePlayer::new(base, s.nodes);
            let comparisons = compare(&mut a, &mut b, &s.positions);
            a.quit();
            b.quit();
            (Detail::Unchanged(comparisons), Some(base.to_owned()))
        }
    };
    let passed = match &detail {
        Detail::Conversion(r) => r.iter().all(|p| p.converted == p.games.len()),
        Detail::Unchanged(r) => r.iter().all(|c| c.unchanged),
        Detail::Bestmove(r) => r.iter().all(|t| t.passed),
    };
    Ok(ProofRun {
        engine: engine.to_owned(),
        sha256,
        baseline,
        passed,
        detail,
    })
}

/// Plays every position `repetitions` times.
fn conversion(
    spec: &ConversionSpec,
    engine: &Path,
    tb: &Tablebase,
) -> Result<Vec<ConversionResult>, ProofError> {
    let mut player = EnginePlayer::new(engine, spec.nodes);
    let mut results = Vec::new();
    for pos in &spec.positions {
        let games = (0..spec.repetitions)
            .map(|_| conversion_game(&mut player, pos, tb))
            .collect::<Result<Vec<_>, _>>()?;
        results.push(ConversionResult {
            fen: fen_of(pos),
            converted: games.iter().filter(|g| g.converted()).count(),
            games,
        });
    }
    player.quit();
    Ok(results)
}

/// Searches every EPD test once.
fn bestmove(spec: &BestmoveSpec, engine: &Path) -> Vec<BestmoveResult> {
    let mut player = EnginePlayer::new(engine, spec.nodes);
    let results = spec
        .positions
        .iter()
        .map(|epd| {
            let fen = fen_of(&epd.position);
            let answer = Answer::of(player.new_game().and_then(|()| player.search(&fen, &[])));
            let m = &answer.bestmove;
            let passed = (epd.best.is_empty() || epd.best.contains(m)) && !epd.avoid.contains(m);
            BestmoveResult {
                fen,
                best: epd.best.clone(),
                avoid: epd.avoid.clone(),
                answer,
                passed,
            }
        })
        .collect();
    player.quit();
    results
}

/// The proof step of `oracle verify`: both binaries' runs and the verdict.
#[derive(Clone, Debug, Serialize)]
pub struct ProofVerdict {
    /// The spec's kind.
    pub kind: &'static str,
    /// sha256 of the spec file.
    pub spec_sha256: String,
    /// The predecessor's run (absent for `unchanged`, which compares the candidate with it).
    pub predecessor: Option<ProofRun>,
    /// The candidate's run.
    pub candidate: ProofRun,
    /// `conversion`/`bestmove`: the predecessor fails and the candidate passes;
    /// `unchanged`: the candidate answers exactly as the predecessor does.
    pub accepted: bool,
}

/// Runs the spec at `spec_path` on `predecessor` and `candidate` and requires fail → pass
/// (for an `unchanged` spec: the candidate unchanged against the predecessor).
pub fn verify_proof(
    spec_path: &Path,
    predecessor: &Path,
    candidate: &Path,
    tb: &Tablebase,
) -> Result<ProofVerdict, ProofError> {
    let spec = Spec::read(spec_path)?;
    let spec_sha256 = sha256_file(spec_path)?;
    if let Spec::Unchanged(_) = spec {
        let run = run_spec(&spec, candidate, Some(predecessor), tb)?;
        return Ok(ProofVerdict {
            kind: spec.kind(),
            spec_sha256,
            predecessor: None,
            accepted: run.passed,
            candidate: run,
        });
    }
    let before = run_spec(&spec, predecessor, None, tb)?;
    let after = run_spec(&spec, candidate, None, tb)?;
    Ok(ProofVerdict {
        kind: spec.kind(),
        spec_sha256,
        accepted: !before.passed && after.passed,
        predecessor: Some(before),
        candidate: after,
    })
}
