//! Measured points of the progress line: a fixed-length match between two registered engines,
//! kept in `measurements/` beside the register (not in `register/`, whose every file must be an
//! entry of the hash chain).
//!
//! An SPRT that stops early reads high, so the sum of the register's claimed gains overstates
//! the engine's progress; a match of a fixed number of games between two registered binaries
//! has no such bias. Each file names both engines by entry id with the commit and binary sha256
//! their entries record, the conditions of the match, its counts and the nElo estimate the
//! oracle's statistics give for them. Reading is strict: the counts must agree with each other,
//! the estimate with the counts, both engines with the register, and the games beside the file
//! (its sha256 and its results) with the counts.

mod run;

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use shakmaty::Color;
use thiserror::Error;

pub use run::{MeasureError, MeasureRequest, Measured, measure};

use crate::governance::canonical::to_canonical_yaml;
use crate::governance::entry::{Entry, EntryId, MAX_STAGE_PAIRS, OracleRecord};
use crate::governance::hash::{GitId, Sha256Hex};
use crate::governance::register::Audit;
use crate::governance::time_control;
use crate::governance::timestamp::Timestamp;
use crate::integrity::read_bounded;
use crate::play::clock::TimeControl;
use crate::play::game::GameResult;
use crate::play::pgn::PgnReader;
use crate::play::shard_games::{MAX_GAME_BYTES, round};
use crate::stats::{PentanomialCounts, normalized_elo, sweep_nelo_bound};

/// The directory of measurement files, at the top of the repository.
pub const MEASUREMENTS_DIR: &str = "measurements";

/// A measurement file is a few hundred bytes; anything far larger is not one.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// How closely a recorded estimate must agree with the one recomputed from its counts.
const TOLERANCE: f64 = 1e-9;

/// One engine of a measurement, as its register entry records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredEngine {
    /// The register entry whose candidate this engine is.
    pub id: EntryId,
    /// The candidate commit the entry records.
    pub commit: GitId,
    /// The sha256 of the candidate binary the entry records (and the match played).
    pub binary_sha256: Sha256Hex,
}

impl MeasuredEngine {
    /// The candidate of `entry`; `None` for a draft without an id.
    #[must_use]
    pub fn of(entry: &Entry) -> Option<Self> {
        Some(Self {
            id: entry.id?,
            commit: entry.candidate.commit.clone(),
            binary_sha256: entry.candidate.binary_sha256.clone(),
        })
    }
}

/// The program that played the games.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Runner {
    /// The oracle's own runner, as `oracle match` and `oracle register measure` use it.
    #[serde(rename = "oracle match")]
    OracleMatch,
    /// fastchess, for a cross-check of the oracle's runner (docs/runner-parity.md).
    #[serde(rename = "fastchess")]
    Fastchess,
}

impl fmt::Display for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::OracleMatch => "oracle match",
            Self::Fastchess => "fastchess",
        })
    }
}

/// What the counts say about the measured engine against the baseline, in nElo.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Estimate {
    /// The estimate with its 95% interval.
    Interval {
        /// nElo of the measured engine over the baseline.
        nelo: f64,
        /// Its 95% interval.
        ci95: [f64; 2],
    },
    /// The measured engine won every pair: the score is 100% and nElo has no finite estimate;
    /// the difference is at least this.
    AtLeast(f64),
    /// The measured engine lost every pair: at most this.
    AtMost(f64),
}

impl Estimate {
    /// The oracle's nElo ± 95% ([`normalized_elo`]) of `counts`, or a bound when every pair went
    /// the same way.
    ///
    /// A sweep makes the estimate unbounded (the regularized counts give a finite number that
    /// only reflects the regularization); the bound is then [`sweep_nelo_bound`]: an engine
    /// weaker than that wins every one of that many pairs with a chance below 5%.
    #[must_use]
    pub fn of(counts: &PentanomialCounts) -> Self {
        let [ll, .., ww] = counts.0;
        let pairs = counts.pairs();
        if pairs > 0 && ww == pairs {
            return Self::AtLeast(sweep_nelo_bound(pairs));
        }
        if pairs > 0 && ll == pairs {
            return Self::AtMost(-sweep_nelo_bound(pairs));
        }
        let estimate = normalized_elo(counts);
        Self::Interval {
            nelo: estimate.nelo,
            ci95: estimate.ci95,
        }
    }

    /// The file's fields for this estimate: (nelo, nelo_ci95, nelo_at_least, nelo_at_most).
    fn fields(self) -> (Option<f64>, Option<[f64; 2]>, Option<f64>, Option<f64>) {
        match self {
            Self::Interval { nelo, ci95 } => (Some(nelo), Some(ci95), None, None),
            Self::AtLeast(bound) => (None, None, Some(bound), None),
            Self::AtMost(bound) => (None, None, None, Some(bound)),
        }
    }
}

impl fmt::Display for Estimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Interval { nelo, ci95 } => {
                write!(f, "{nelo:+.1} nElo [{:+.1}, {:+.1}]", ci95[0], ci95[1])
            }
            Self::AtLeast(bound) => write!(f, "at least {bound:+.1} nElo (won every pair)"),
            Self::AtMost(bound) => write!(f, "at most {bound:+.1} nElo (lost every pair)"),
        }
    }
}

/// One measurement file: a fixed-length match of a registered engine against another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurement {
    /// The engine measured (usually the newer entry).
    pub measured: MeasuredEngine,
    /// The engine it was measured against.
    pub baseline: MeasuredEngine,
    /// The time control both engines played at.
    #[serde(with = "time_control")]
    pub tc: TimeControl,
    /// The opening book, relative to the repository.
    pub book: String,
    /// sha256 of the book's bytes.
    pub book_sha256: Sha256Hex,
    /// Seed of the opening order.
    pub seed: u64,
    /// Games played (every opening twice, colours swapped).
    pub games: u64,
    /// Games the measured engine won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games the measured engine lost.
    pub losses: u64,
    /// Pairs by the measured engine's result: [LL, LD, DD+WL, WD, WW].
    pub pentanomial: PentanomialCounts,
    /// nElo of the measured engine over the baseline; null when it won or lost every pair.
    pub nelo: Option<f64>,
    /// The 95% interval of `nelo`; null with it.
    pub nelo_ci95: Option<[f64; 2]>,
    /// When the measured engine won every pair: nElo is at least this (see [`Estimate::of`]).
    pub nelo_at_least: Option<f64>,
    /// When it lost every pair: nElo is at most this.
    pub nelo_at_most: Option<f64>,
    /// The program that played the games.
    pub runner: Runner,
    /// The oracle that played (or, for another runner, wrote the file).
    pub oracle: OracleRecord,
    /// When the match finished.
    pub date: Timestamp,
    /// sha256 of the games' PGN (uncompressed).
    pub pgn_sha256: Sha256Hex,
}

/// Why a measurement file was not accepted.
#[derive(Debug, Error)]
pub enum MeasurementError {
    /// The file or the directory could not be read.
    #[error("{path}: {message}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The reason.
        message: String,
    },
    /// The file is not a measurement (YAML or a field's type or value).
    #[error("{path}: {message}")]
    Schema {
        /// The file.
        path: PathBuf,
        /// The parser's message, which names the field and its position.
        message: String,
    },
    /// A field disagrees with another or with the register.
    #[error("{path}: field `{field}`: {message}")]
    Field {
        /// The file.
        path: PathBuf,
        /// The field, dotted (`measured.binary_sha256`).
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The measurement cannot be written as YAML (a non-finite statistic).
    #[error("{path}: {message}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The reason.
        message: String,
    },
}

impl Measurement {
    /// The measurement in `bytes`, read from `path` (named in errors), checked in itself.
    ///
    /// # Errors
    /// [`MeasurementError::Schema`] or [`MeasurementError::Field`].
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Self, MeasurementError> {
        let measurement: Self =
            serde_norway::from_slice(bytes).map_err(|error| MeasurementError::Schema {
                path: path.to_owned(),
                message: error.to_string(),
            })?;
        measurement
            .check()
            .map_err(|(field, message)| MeasurementError::Field {
                path: path.to_owned(),
                field,
                message,
            })?;
        Ok(measurement)
    }

    /// The file's text: the register's canonical YAML.
    ///
    /// # Errors
    /// [`MeasurementError::Write`] for a non-finite statistic.
    pub fn to_yaml(&self, path: &Path) -> Result<String, MeasurementError> {
        to_canonical_yaml(self).map_err(|error| MeasurementError::Write {
            path: path.to_owned(),
            message: error.to_string(),
        })
    }

    /// The estimate the file records.
    #[must_use]
    pub fn estimate(&self) -> Option<Estimate> {
        match (
            self.nelo,
            self.nelo_ci95,
            self.nelo_at_least,
            self.nelo_at_most,
        ) {
            (Some(nelo), Some(ci95), None, None) => Some(Estimate::Interval { nelo, ci95 }),
            (None, None, Some(bound), None) => Some(Estimate::AtLeast(bound)),
            (None, None, None, Some(bound)) => Some(Estimate::AtMost(bound)),
            _ => None,
        }
    }

    /// The file name a measurement is written under:
    /// `T-0031-vs-T-0001-1+0.01-2026-12-06.yaml`.
    #[must_use]
    pub fn file_name(&self) -> String {
        format!(
            "{}-vs-{}-{}-{}.yaml",
            self.measured.id,
            self.baseline.id,
            self.tc,
            self.date.as_str().get(..10).unwrap_or(self.date.as_str())
        )
    }

    /// Sets the estimate fields from `estimate`.
    fn record_estimate(&mut self, estimate: Estimate) {
        (
            self.nelo,
            self.nelo_ci95,
            self.nelo_at_least,
            self.nelo_at_most,
        ) = estimate.fields();
    }

    /// The checks within the file: counts against each other, the estimate against the counts.
    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.measured.id == self.baseline.id {
            return Err((
                "baseline.id",
                format!("{} is the measured entry itself", self.baseline.id),
            ));
        }
        let pairs = self
            .pentanomial
            .0
            .iter()
            .try_fold(0_u64, |sum, &count| sum.checked_add(count))
            .filter(|&pairs| pairs <= MAX_STAGE_PAIRS)
            .ok_or(("pentanomial", "too many pairs".to_owned()))?;
        if pairs == 0 {
            return Err(("pentanomial", "no pairs: a match of no games".to_owned()));
        }
        if self.games != 2 * pairs {
            return Err((
                "games",
                format!(
                    "{} games, but the pentanomial counts {pairs} pairs",
                    self.games
                ),
            ));
        }
        let counted = u128::from(self.wins) + u128::from(self.draws) + u128::from(self.losses);
        if counted != u128::from(self.games) {
            return Err((
                "wins",
                format!(
                    "wins + draws + losses = {counted}, but {} games",
                    self.games
                ),
            ));
        }
        // Half-points of the measured engine, once from the games and once from the pairs.
        let from_games = 2 * u128::from(self.wins) + u128::from(self.draws);
        let from_pairs: u128 = (0_u128..)
            .zip(self.pentanomial.0)
            .map(|(half_points, count)| half_points * u128::from(count))
            .sum();
        if from_games != from_pairs {
            return Err((
                "pentanomial",
                format!("scores {from_pairs} half-points, but wins and draws score {from_games}"),
            ));
        }
        self.check_estimate(Estimate::of(&self.pentanomial))
    }

    /// The recorded estimate must be the one the counts give.
    fn check_estimate(&self, expected: Estimate) -> Result<(), (&'static str, String)> {
        let (nelo, ci95, at_least, at_most) = expected.fields();
        let close = |a: f64, b: f64| (a - b).abs() <= TOLERANCE * b.abs().max(1.0);
        let same = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => close(a, b),
            (None, None) => true,
            _ => false,
        };
        let show = |value: Option<f64>| value.map_or("null".to_owned(), |v| v.to_string());
        let fields: [(&'static str, Option<f64>, Option<f64>); 5] = [
            ("nelo", self.nelo, nelo),
            (
                "nelo_ci95",
                self.nelo_ci95.map(|c| c[0]),
                ci95.map(|c| c[0]),
            ),
            (
                "nelo_ci95",
                self.nelo_ci95.map(|c| c[1]),
                ci95.map(|c| c[1]),
            ),
            ("nelo_at_least", self.nelo_at_least, at_least),
            ("nelo_at_most", self.nelo_at_most, at_most),
        ];
        for (field, recorded, computed) in fields {
            if !same(recorded, computed) {
                return Err((
                    field,
                    format!(
                        "recorded {}, the pentanomial counts give {} ({expected})",
                        show(recorded),
                        show(computed)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The games `pgn` (the file's PGN, uncompressed) must be the ones it records: their
    /// sha256 is `pgn_sha256`, they are pairs 1 to N at its time control, each pair's two games
    /// between the two entries with colours swapped, and their results give the file's wins,
    /// draws, losses and pentanomial. This binds the counts to one games file; that the
    /// binaries played those games only `oracle register measure` played again can show.
    fn check_games(&self, pgn: &[u8]) -> Result<(), (&'static str, String)> {
        let digest = Sha256Hex::of(pgn);
        if digest != self.pgn_sha256 {
            return Err((
                "pgn_sha256",
                format!("recorded {}, its games file has {digest}", self.pgn_sha256),
            ));
        }
        let names = [self.measured.id.to_string(), self.baseline.id.to_string()];
        let time_control = self.tc.pgn_value();
        let unreadable = |reason: String| ("pgn_sha256", format!("its games: {reason}"));
        // Per pair, the measured engine's half-points in game 1 (White) and game 2 (Black).
        let mut pairs: BTreeMap<u64, [Option<u8>; 2]> = BTreeMap::new();
        for game in PgnReader::new(pgn, MAX_GAME_BYTES) {
            let game = game.map_err(|error| unreadable(error.to_string()))?;
            let (pair, number) = round(&game).map_err(unreadable)?;
            let (index, measured_color) = match number {
                "1" => (0, Color::White),
                "2" => (1, Color::Black),
                other => return Err(unreadable(format!("pair {pair} has a game {other}"))),
            };
            let place = format!("game {pair}.{number}");
            let [white, black] = if index == 0 {
                [&names[0], &names[1]]
            } else {
                [&names[1], &names[0]]
            };
            let players = [game.tag("White"), game.tag("Black")];
            if players != [Some(white.as_str()), Some(black.as_str())] {
                return Err(unreadable(format!(
                    "{place} is {} against {}, not {white} against {black}",
                    players[0].unwrap_or("?"),
                    players[1].unwrap_or("?"),
                )));
            }
            if game.tag("TimeControl") != Some(time_control.as_str()) {
                return Err(unreadable(format!(
                    "{place} was played at {}, not at {time_control}",
                    game.tag("TimeControl").unwrap_or("no time control")
                )));
            }
            let result = game
                .tag("Result")
                .and_then(GameResult::from_pgn)
                .ok_or_else(|| unreadable(format!("{place} has no result")))?;
            let slot = &mut pairs.entry(pair).or_default()[index];
            if slot.replace(result.half_points(measured_color)).is_some() {
                return Err(unreadable(format!("{place} appears twice")));
            }
        }
        if let Some((expected, found)) = (1..).zip(pairs.keys()).find(|(n, pair)| n != *pair) {
            return Err(unreadable(format!(
                "pair {expected} is missing (the next is {found}): the pairs are 1 to N"
            )));
        }
        let mut pentanomial = [0_u64; 5];
        let mut wdl = [0_u64; 3];
        for (pair, games) in pairs {
            let [Some(first), Some(second)] = games else {
                return Err(unreadable(format!("pair {pair} lacks one of its games")));
            };
            pentanomial[usize::from(first + second)] += 1;
            for half_points in [first, second] {
                wdl[usize::from(2 - half_points)] += 1;
            }
        }
        if pentanomial != self.pentanomial.0 {
            return Err((
                "pentanomial",
                format!(
                    "recorded {:?}, its games give {pentanomial:?}",
                    self.pentanomial.0
                ),
            ));
        }
        let recorded = [self.wins, self.draws, self.losses];
        if wdl != recorded {
            return Err((
                "wins",
                format!("recorded W-D-L {recorded:?}, its games give {wdl:?}"),
            ));
        }
        Ok(())
    }

    /// Both engines must be the candidates of their entries in `audit`, as recorded there.
    fn check_against(&self, audit: &Audit) -> Result<(), (&'static str, String)> {
        for (role, engine) in [("measured", &self.measured), ("baseline", &self.baseline)] {
            let field = |name: &'static str| -> &'static str {
                match (role, name) {
                    ("measured", "id") => "measured.id",
                    ("measured", "commit") => "measured.commit",
                    ("measured", _) => "measured.binary_sha256",
                    (_, "id") => "baseline.id",
                    (_, "commit") => "baseline.commit",
                    _ => "baseline.binary_sha256",
                }
            };
            let Some((entry, _)) = audit.find(engine.id) else {
                return Err((
                    field("id"),
                    format!("{} is not an entry of the register", engine.id),
                ));
            };
            if entry.candidate.commit != engine.commit {
                return Err((
                    field("commit"),
                    format!(
                        "{} records candidate commit {}, not {}",
                        engine.id, entry.candidate.commit, engine.commit
                    ),
                ));
            }
            if entry.candidate.binary_sha256 != engine.binary_sha256 {
                return Err((
                    field("binary_sha256"),
                    format!(
                        "{} records binary sha256 {}, not {}",
                        engine.id, entry.candidate.binary_sha256, engine.binary_sha256
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The games of the measurement file `yaml` (`NAME.yaml`): `NAME.pgn.gz` as committed or
/// `NAME.pgn` as `oracle register measure` writes it, not both (one would go unread).
fn games_file(yaml: &Path) -> Result<PathBuf, String> {
    let found: Vec<PathBuf> = ["pgn.gz", "pgn"]
        .into_iter()
        .map(|extension| yaml.with_extension(extension))
        .filter(|path| path.is_file())
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err("no games beside it (the same name ending in .pgn.gz or .pgn)".to_owned()),
        _ => Err("two games files beside it (.pgn.gz and .pgn): keep one".to_owned()),
    }
}

/// Reads every `measurements/*.yaml` of the repository at `repo`, oldest name first, and checks
/// each in itself, against the register `audit` and against its games; no directory means no
/// measurements.
///
/// # Errors
/// The first file that cannot be read or is not a sound measurement, named with its field.
pub fn read_all(repo: &Path, audit: &Audit) -> Result<Vec<Measurement>, MeasurementError> {
    let dir = repo.join(MEASUREMENTS_DIR);
    let listing = match fs::read_dir(&dir) {
        Ok(listing) => listing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(MeasurementError::Io {
                path: dir,
                message: error.to_string(),
            });
        }
    };
    let mut paths = Vec::new();
    for item in listing {
        let item = item.map_err(|error| MeasurementError::Io {
            path: dir.clone(),
            message: error.to_string(),
        })?;
        let name = item.file_name().to_string_lossy().into_owned();
        // The PGNs and any notes beside the files are not measurements.
        if !name.starts_with('.') && name.ends_with(".yaml") {
            paths.push(item.path());
        }
    }
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let shown = Path::new(MEASUREMENTS_DIR).join(path.file_name().unwrap_or_default());
            let bytes =
                read_bounded(path, MAX_FILE_BYTES).map_err(|error| MeasurementError::Io {
                    path: shown.clone(),
                    message: error.reason.to_string(),
                })?;
            let measurement = Measurement::parse(&shown, &bytes)?;
            let field_error = |(field, message)| MeasurementError::Field {
                path: shown.clone(),
                field,
                message,
            };
            measurement.check_against(audit).map_err(field_error)?;
            let games = games_file(path).map_err(|message| field_error(("pgn_sha256", message)))?;
            let pgn = crate::verify::recorded::read_pgn(&games).map_err(|error| {
                MeasurementError::Io {
                    path: games.clone(),
                    message: error.to_string(),
                }
            })?;
            measurement.check_games(&pgn).map_err(field_error)?;
            Ok(measurement)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "af5ebbce71ba9a992edd27cae53d710c5af6ba432f028878918cef55fa94e21b";
    const COMMIT: &str = "6908b2978b0b0b3d57879ddbc9bcdf1327b4ef70";

    fn engine(number: u32) -> MeasuredEngine {
        MeasuredEngine {
            id: EntryId::new(number),
            commit: GitId::try_from(COMMIT.to_owned()).unwrap(),
            binary_sha256: Sha256Hex::try_from(SHA.to_owned()).unwrap(),
        }
    }

    fn measurement(pentanomial: [u64; 5], wdl: [u64; 3]) -> Measurement {
        let counts = PentanomialCounts(pentanomial);
        let mut measurement = Measurement {
            measured: engine(31),
            baseline: engine(1),
            tc: time_control::parse("1+0.01").unwrap(),
            book: "books/book-a.epd".into(),
            book_sha256: Sha256Hex::try_from(SHA.to_owned()).unwrap(),
            seed: 0,
            games: 2 * counts.pairs(),
            wins: wdl[0],
            draws: wdl[1],
            losses: wdl[2],
            pentanomial: counts,
            nelo: None,
            nelo_ci95: None,
            nelo_at_least: None,
            nelo_at_most: None,
            runner: Runner::OracleMatch,
            oracle: crate::verify::provenance::this_oracle(),
            date: Timestamp::from_unix(0),
            pgn_sha256: Sha256Hex::try_from(SHA.to_owned()).unwrap(),
        };
        measurement.record_estimate(Estimate::of(&counts));
        measurement
    }

    #[test]
    fn a_written_measurement_reads_back_and_names_its_file() {
        let written = measurement([1, 2, 3, 4, 5], [4 + 10, 2 + 6 + 4, 2 + 2]);
        let path = Path::new("measurements/x.yaml");
        let text = written.to_yaml(path).unwrap();
        assert_eq!(Measurement::parse(path, text.as_bytes()).unwrap(), written);
        assert_eq!(
            written.file_name(),
            "T-0031-vs-T-0001-1+0.01-1970-01-01.yaml"
        );
        assert!(matches!(
            written.estimate(),
            Some(Estimate::Interval { nelo, .. }) if nelo > 0.0
        ));
    }

    #[test]
    fn a_sweep_is_a_bound_not_an_estimate() {
        let sweep = Estimate::of(&PentanomialCounts([0, 0, 0, 0, 200]));
        let Estimate::AtLeast(bound) = sweep else {
            panic!("{sweep:?}");
        };
        assert!((bound - sweep_nelo_bound(200)).abs() < 1e-12 && bound > 0.0);
        assert!(matches!(
            Estimate::of(&PentanomialCounts([50, 0, 0, 0, 0])),
            Estimate::AtMost(bound) if (bound + sweep_nelo_bound(50)).abs() < 1e-12
        ));
        let written = measurement([0, 0, 0, 0, 200], [400, 0, 0]);
        assert_eq!((written.nelo, written.nelo_at_least), (None, Some(bound)));
        assert_eq!(written.estimate(), Some(sweep));
        assert!(sweep.to_string().starts_with("at least +"));
    }

    #[test]
    fn counts_that_disagree_name_the_field() {
        let path = Path::new("measurements/x.yaml");
        let check = |edit: fn(&mut Measurement)| {
            let mut bad = measurement([1, 2, 3, 4, 5], [14, 12, 4]);
            edit(&mut bad);
            let text = bad.to_yaml(path).unwrap();
            Measurement::parse(path, text.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert!(check(|m| m.games = 28).contains("field `games`"));
        assert!(check(|m| m.wins = 15).contains("field `wins`"));
        assert!(
            check(|m| {
                m.wins = 15;
                m.losses = 3;
            })
            .contains("field `pentanomial`")
        );
        assert!(check(|m| m.nelo = Some(1.0)).contains("field `nelo`"));
        assert!(check(|m| m.nelo_at_least = Some(1.0)).contains("field `nelo_at_least`"));
        assert!(check(|m| m.baseline.id = EntryId::new(31)).contains("field `baseline.id`"));
        let unknown = format!(
            "{}extra: 1\n",
            measurement([1, 2, 3, 4, 5], [14, 12, 4])
                .to_yaml(path)
                .unwrap()
        );
        let error = Measurement::parse(path, unknown.as_bytes()).unwrap_err();
        assert!(error.to_string().contains("extra"), "{error}");
    }
}
