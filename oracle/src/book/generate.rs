//! `oracle book generate`: random legal openings of a few plies, kept when a short
//! engine search scores them near equality, deduplicated by position.
//!
//! Reproducible: candidates come from one ChaCha stream keyed by the seed, every
//! search starts from `ucinewgame` with a node limit, and candidates are accepted
//! in their drawn order however many engines score them in parallel.

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use sha2::{Digest, Sha256};
use shakmaty::{Chess, Position};

use super::position::key;
use crate::play::uci::{Engine, EngineConfig, GoLimits, Score, UciError};

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Positions wanted.
    pub count: usize,
    /// Random plies from the start position.
    pub plies: usize,
    /// Largest |score| in centipawns, from the side to move, that is kept.
    pub window_cp: i32,
    /// Seed of the candidate stream.
    pub seed: u64,
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The scoring engine failed.
    #[error("scoring engine: {0}")]
    Engine(#[from] UciError),
    /// Too few candidates pass the window.
    #[error(
        "only {found} of {wanted} positions found within the window after {tried} candidates; widen --window or add --plies"
    )]
    Exhausted {
        /// Positions accepted.
        found: usize,
        /// Positions asked for.
        wanted: usize,
        /// Candidates drawn.
        tried: usize,
    },
}

/// Scores one position (EPD) for the side to move; `None` for a mate score.
pub trait Scorer: Send {
    /// The score in centipawns, or `None` when the search reports a mate.
    fn score(&mut self, epd: &str) -> Result<Option<i32>, UciError>;
}

/// A UCI engine searching each candidate from a fresh game to a node limit.
pub struct UciScorer {
    engine: Engine,
    nodes: u64,
}

/// How long one node-limited search may take before the engine counts as hung.
const SEARCH_DEADLINE: Duration = Duration::from_secs(60);

impl UciScorer {
    /// Starts `command` (UCI options `options`) for searches of `nodes` nodes.
    pub fn start(
        command: &PathBuf,
        options: &[(String, String)],
        nodes: u64,
    ) -> Result<Self, UciError> {
        let mut config = EngineConfig::new(command);
        for (name, value) in options {
            config.set_option(name, value);
        }
        let engine = Engine::start(&config, SEARCH_DEADLINE)?;
        Ok(Self { engine, nodes })
    }
}

impl Scorer for UciScorer {
    fn score(&mut self, epd: &str) -> Result<Option<i32>, UciError> {
        // A fresh game per position: hash contents must not depend on what was searched before.
        self.engine.new_game(SEARCH_DEADLINE)?;
        let out = self.engine.search(
            Some(&format!("{epd} 0 1")),
            &[],
            &GoLimits::nodes(self.nodes),
            SEARCH_DEADLINE,
            SEARCH_DEADLINE,
        )?;
        Ok(match out.info.score {
            Some(Score::Cp(cp)) => Some(cp),
            Some(Score::Mate(_)) | None => None,
        })
    }
}

/// The candidate stream of a seed: the same seed draws the same openings.
pub struct Candidates {
    rng: ChaCha8Rng,
    plies: usize,
}

impl Candidates {
    /// The stream for `seed`, drawing openings of `plies` random legal plies.
    #[must_use]
    pub fn new(seed: u64, plies: usize) -> Self {
        let mut h = Sha256::new();
        h.update(b"coherent book generate v1");
        h.update(seed.to_le_bytes());
        Self {
            rng: ChaCha8Rng::from_seed(h.finalize().into()),
            plies,
        }
    }

    /// The next opening, or `None` when the random game ended before its last ply.
    pub fn draw(&mut self) -> Option<Chess> {
        let mut pos = Chess::default();
        for _ in 0..self.plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                return None;
            }
            let m = moves[self.rng.random_range(0..moves.len())];
            pos.play_unchecked(m);
        }
        (!pos.is_game_over()).then_some(pos)
    }
}

/// Candidates scored per round: enough to keep every engine busy between the in-order merges.
const ROUND_PER_ENGINE: usize = 32;

/// What `oracle book generate` reports: the book written and what it took.
#[derive(Debug, Clone, Serialize)]
pub struct Generated {
    /// Positions in the book.
    pub positions: usize,
    /// Candidate positions scored to find them.
    pub candidates: usize,
    /// sha256 of the book file.
    pub sha256: String,
    /// The book file.
    pub out: String,
}

impl fmt::Display for Generated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} positions from {} candidates  sha256 {}  {}",
            self.positions, self.candidates, self.sha256, self.out
        )
    }
}

/// Generates `spec.count` positions not in `exclude`, scoring with `scorers` in
/// parallel; `progress(accepted, tried)` is called after every round.
pub fn generate<S: Scorer>(
    spec: &Spec,
    exclude: &HashSet<String>,
    scorers: &mut [S],
    mut progress: impl FnMut(usize, usize),
) -> Result<Vec<String>, GenerateError> {
    let mut candidates = Candidates::new(spec.seed, spec.plies);
    let mut seen: HashSet<String> = exclude.clone();
    let mut accepted = Vec::with_capacity(spec.count);
    let mut tried = 0usize;
    let limit = 1_000 * spec.count.max(1) + 10_000;
    let workers = scorers.len().max(1);
    while accepted.len() < spec.count {
        if tried >= limit {
            return Err(GenerateError::Exhausted {
                found: accepted.len(),
                wanted: spec.count,
                tried,
            });
        }
        let mut round = Vec::new();
        while round.len() < ROUND_PER_ENGINE * workers && tried < limit {
            tried += 1;
            if let Some(pos) = candidates.draw() {
                let k = key(&pos);
                if seen.insert(k.clone()) {
                    round.push(k);
                }
            }
        }
        let scores = score_round(&round, scorers)?;
        for (epd, score) in round.into_iter().zip(scores) {
            let within = score.is_some_and(|cp| cp.abs() <= spec.window_cp);
            if within && accepted.len() < spec.count {
                accepted.push(epd);
            }
        }
        progress(accepted.len(), tried);
    }
    Ok(accepted)
}

/// A candidate's index in its round and its score.
type Scored = (usize, Option<i32>);

/// Scores `round` with the engines in parallel: engine w takes positions w, w + W, …
fn score_round<S: Scorer>(
    round: &[String],
    scorers: &mut [S],
) -> Result<Vec<Option<i32>>, UciError> {
    let workers = scorers.len();
    let mut scores = vec![None; round.len()];
    let per_worker: Vec<Result<Vec<Scored>, UciError>> = std::thread::scope(|s| {
        let handles: Vec<_> = scorers
            .iter_mut()
            .enumerate()
            .map(|(w, scorer)| {
                s.spawn(move || {
                    (w..round.len())
                        .step_by(workers)
                        .map(|i| scorer.score(&round[i]).map(|sc| (i, sc)))
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("scoring thread does not panic"))
            .collect()
    });
    for part in per_worker {
        for (i, sc) in part? {
            scores[i] = sc;
        }
    }
    Ok(scores)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::book::parse_fen;

    fn parse_epd(epd: &str) -> Result<Chess, String> {
        parse_fen(&format!("{epd} 0 1"))
    }

    /// Scores by material balance: deterministic and engine-free.
    struct Material;

    impl Scorer for Material {
        fn score(&mut self, epd: &str) -> Result<Option<i32>, UciError> {
            let pos = parse_epd(epd).expect("generated positions are legal");
            let value = |c| {
                let b = pos.board();
                let side = b.by_color(c);
                [(1, 100), (2, 300), (3, 300), (4, 500), (5, 900)]
                    .iter()
                    .map(|&(r, v)| {
                        let role = shakmaty::Role::ALL[r - 1];
                        (b.by_role(role) & side).count() as i32 * v
                    })
                    .sum::<i32>()
            };
            Ok(Some(value(pos.turn()) - value(!pos.turn())))
        }
    }

    fn spec(count: usize, seed: u64) -> Spec {
        Spec {
            count,
            plies: 6,
            window_cp: 0,
            seed,
        }
    }

    #[test]
    fn same_seed_same_book_whatever_the_parallelism() {
        let one = generate(&spec(60, 4), &HashSet::new(), &mut [Material], |_, _| {}).unwrap();
        let three = generate(
            &spec(60, 4),
            &HashSet::new(),
            &mut [Material, Material, Material],
            |_, _| {},
        )
        .unwrap();
        assert_eq!(one, three);
        assert_eq!(one.len(), 60);
        let other = generate(&spec(60, 5), &HashSet::new(), &mut [Material], |_, _| {}).unwrap();
        assert_ne!(one, other);
    }

    #[test]
    fn positions_are_unique_legal_within_window_and_not_excluded() {
        let a = generate(&spec(80, 1), &HashSet::new(), &mut [Material], |_, _| {}).unwrap();
        let exclude: HashSet<String> = a.iter().cloned().collect();
        let b = generate(&spec(80, 1), &exclude, &mut [Material, Material], |_, _| {}).unwrap();
        let unique: HashSet<&String> = a.iter().chain(&b).collect();
        assert_eq!(
            unique.len(),
            160,
            "A and B are disjoint and each free of repeats"
        );
        for epd in a.iter().chain(&b) {
            let pos = parse_epd(epd).unwrap();
            assert_eq!(&key(&pos), epd);
            assert_eq!(Material.score(epd).unwrap(), Some(0));
            assert!(!pos.is_game_over());
        }
    }

    #[test]
    fn an_impossible_window_is_reported() {
        struct Lopsided;
        impl Scorer for Lopsided {
            fn score(&mut self, _: &str) -> Result<Option<i32>, UciError> {
                Ok(Some(500))
            }
        }
        let err = generate(&spec(1, 0), &HashSet::new(), &mut [Lopsided], |_, _| {}).unwrap_err();
        assert!(matches!(err, GenerateError::Exhausted { found: 0, .. }));
    }
}
