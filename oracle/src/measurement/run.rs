//! `oracle register measure`: rebuild two entries' candidates bit-identically from their
//! recorded commits, play a fixed number of games between them with the oracle's runner, and
//! write the measurement file (and the games' PGN) into `measurements/`.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use thiserror::Error;

use super::{MEASUREMENTS_DIR, MeasuredEngine, Measurement, MeasurementError, Runner};
use crate::builder::BuildError;
use crate::governance::constitution::{Constitution, ConstitutionError};
use crate::governance::entry::{Entry, EntryId};
use crate::governance::hash::Sha256Hex;
use crate::governance::register::{self, AppendError, Audit};
use crate::governance::timestamp::Timestamp;
use crate::integrity::{FileError, write_atomically};
use crate::play::book::{BookFormat, BookOrder};
use crate::play::clock::{ClockRules, TimeControl};
use crate::play::runner::{MatchConfig, MatchProgress, RunError, run_match};
use crate::play::shard::Shard;
use crate::play::uci::EngineConfig;
use crate::stats::PentanomialCounts;
use crate::verify::provenance::this_oracle;
use crate::verify::replay::{rebuild, recorded_constitution};
use crate::verify::resolve;

/// What to measure, and how.
#[derive(Debug, Clone)]
pub struct MeasureRequest {
    /// The repository: its `register/`, history, books and `measurements/`.
    pub repo: PathBuf,
    /// The entry whose engine is measured.
    pub measured: EntryId,
    /// The entry whose engine it plays against.
    pub baseline: EntryId,
    /// Both engines' clock (or node limit).
    pub tc: TimeControl,
    /// Games to play: an even number, every opening twice with colours swapped.
    pub games: u64,
    /// The opening book, relative to the repository.
    pub book: String,
    /// Seed of the opening order.
    pub seed: u64,
    /// Games at once.
    pub concurrency: usize,
    /// The constitution profile (of the work tree's constitution) whose adjudication and
    /// engine options the games use.
    pub profile: String,
    /// Build cache directory.
    pub cache_dir: PathBuf,
}

/// What `oracle register measure` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// The measurement file.
    pub file: PathBuf,
    /// The games, beside it.
    pub pgn: PathBuf,
    /// What it records.
    pub measurement: Measurement,
}

impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.measurement;
        writeln!(
            f,
            "{} vs {} at {}: {} games, +{} ={} -{}, pentanomial {:?}",
            m.measured.id, m.baseline.id, m.tc, m.games, m.wins, m.draws, m.losses, m.pentanomial.0
        )?;
        if let Some(estimate) = m.estimate() {
            writeln!(f, "{estimate}")?;
        }
        writeln!(
            f,
            "written: {} and {} (pgn sha256 {})",
            self.file.display(),
            self.pgn.display(),
            m.pgn_sha256
        )
    }
}

/// Why no measurement was written.
#[derive(Debug, Error)]
pub enum MeasureError {
    /// The register could not be read.
    #[error(transparent)]
    Register(#[from] AppendError),
    /// The register does not verify: nothing is measured against an unsound register.
    #[error("the register does not verify ({0}); run `oracle register verify`")]
    Unsound(String),
    /// An argument names nothing usable.
    #[error("{argument}: {message}")]
    Argument {
        /// The argument (`--games`, `MEASURED`, …).
        argument: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The work tree's constitution could not be read.
    #[error(transparent)]
    Constitution(#[from] ConstitutionError),
    /// An entry's candidate could not be rebuilt, or not to its recorded sha256.
    #[error("rebuilding {id}'s candidate {commit}: {message}")]
    Rebuild {
        /// The entry.
        id: EntryId,
        /// Its candidate commit.
        commit: String,
        /// What went wrong.
        message: String,
    },
    /// The match could not be played.
    #[error("the match: {0}")]
    Match(#[from] RunError),
    /// The match was interrupted; nothing is recorded.
    #[error("the match was interrupted after {0} games; nothing was recorded")]
    Interrupted(u64),
    /// A file could not be read or written.
    #[error(transparent)]
    File(#[from] FileError),
    /// The measurement could not be written.
    #[error(transparent)]
    Measurement(#[from] MeasurementError),
}

/// Plays the match `request` describes and writes `measurements/<name>.yaml` and the games
/// beside it as `<name>.pgn`. `observer` sees every finished game and counted pair.
///
/// # Errors
/// [`MeasureError`]; nothing is written into `measurements/` then.
pub fn measure(
    request: &MeasureRequest,
    observer: &mut dyn FnMut(&MatchProgress),
) -> Result<Measured, MeasureError> {
    let argument =
        |argument: &'static str, message: String| MeasureError::Argument { argument, message };
    if request.games < 2 || !request.games.is_multiple_of(2) {
        return Err(argument(
            "--games",
            format!(
                "{} is not an even number of at least 2: every opening is played twice",
                request.games
            ),
        ));
    }
    if request.measured == request.baseline {
        return Err(argument(
            "BASELINE",
            format!("{} is the measured entry itself", request.baseline),
        ));
    }
    let audit = register::verify(&request.repo)?;
    if !audit.ok() {
        return Err(MeasureError::Unsound(audit.state_line()));
    }
    let (constitution, _) = Constitution::load(&request.repo)?;
    let profile = constitution
        .profile(&request.profile)
        .map_err(|message| argument("--profile", message))?;
    let book_path = request.repo.join(&request.book);
    let book_sha256 =
        file_sha256(&book_path).map_err(|error| argument("--book", error.to_string()))?;

    let measured = registered_binary(request, &audit, request.measured, "MEASURED")?;
    let baseline = registered_binary(request, &audit, request.baseline, "BASELINE")?;

    let dir = request.repo.join(MEASUREMENTS_DIR);
    fs::create_dir_all(&dir).map_err(|error| FileError {
        path: dir.clone(),
        reason: error,
    })?;
    // The games go to a hidden directory first, so that a failed match leaves nothing that
    // looks like a measurement.
    let staging = tempfile::Builder::new()
        .prefix(".measure-")
        .tempdir_in(&dir)
        .map_err(|error| FileError {
            path: dir.clone(),
            reason: error,
        })?;
    let staged_pgn = staging.path().join("games.pgn");
    let options = constitution.contract().option_pairs();
    let engine = |id: EntryId, binary: &Path| {
        let mut config = EngineConfig::new(binary);
        config.name = id.to_string();
        for (option, value) in &options {
            config.set_option(option, value);
        }
        config
    };
    let config = MatchConfig {
        engines: [
            engine(request.measured, &measured.1),
            engine(request.baseline, &baseline.1),
        ],
        clock: ClockRules {
            tc: request.tc,
            second_engine_tc: None,
            margin: Duration::from_millis(100),
            slack: Duration::from_millis(200),
            move_timeout: Duration::from_secs(60),
        },
        adjudication: profile.adjudication,
        start_timeout: Duration::from_secs(10),
        ready_timeout: Duration::from_secs(10),
        book_path: Some(book_path.clone()),
        book_order: BookOrder::Random,
        book_format: BookFormat::from_path(&book_path),
        plies: 8,
        seed: request.seed,
        opening_offset: 0,
        pairs: request.games / 2,
        shard: Shard::WHOLE,
        pairs_below: None,
        counted_elsewhere: Vec::new(),
        concurrency: request.concurrency,
        pgn_out: Some(staged_pgn.clone()),
        state: None,
        event: format!(
            "oracle register measure {} vs {}",
            request.measured, request.baseline
        ),
        node_pace: [None, None],
    };
    let report = run_match(config, None, observer)?;
    if report.interrupted {
        return Err(MeasureError::Interrupted(report.games_played));
    }
    let pgn_sha256 = file_sha256(&staged_pgn)?;
    let tally = report.tally;
    let counts = PentanomialCounts(tally.pentanomial);
    let mut measurement = Measurement {
        measured: measured.0,
        baseline: baseline.0,
        tc: request.tc,
        book: request.book.clone(),
        book_sha256,
        seed: request.seed,
        games: 2 * counts.pairs(),
        wins: tally.wins,
        draws: tally.draws,
        losses: tally.losses,
        pentanomial: counts,
        nelo: None,
        nelo_ci95: None,
        nelo_at_least: None,
        nelo_at_most: None,
        runner: Runner::OracleMatch,
        oracle: this_oracle(),
        date: Timestamp::now(),
        pgn_sha256,
    };
    measurement.record_estimate(super::Estimate::of(&counts));
    let name = measurement.file_name();
    let path = dir.join(&name);
    if path.exists() {
        return Err(argument(
            "MEASURED",
            format!(
                "{} exists; a measurement is written once",
                Path::new(MEASUREMENTS_DIR).join(&name).display()
            ),
        ));
    }
    let text = measurement.to_yaml(&path)?;
    // Checked as every reader checks it, before it is written.
    Measurement::parse(&path, text.as_bytes())?;
    let pgn = path.with_extension("pgn");
    fs::rename(&staged_pgn, &pgn).map_err(|error| FileError {
        path: pgn.clone(),
        reason: error,
    })?;
    write_atomically(&path, text.as_bytes())?;
    Ok(Measured {
        file: path,
        pgn,
        measurement,
    })
}

/// The sha256 of the file at `path`.
fn file_sha256(path: &Path) -> Result<Sha256Hex, FileError> {
    fs::read(path)
        .map(|bytes| Sha256Hex::of(&bytes))
        .map_err(|reason| FileError {
            path: path.to_owned(),
            reason,
        })
}

/// The candidate of entry `id` rebuilt from its recorded commit with the recipe of the
/// constitution it was judged under, checked against the sha256 the entry records.
fn registered_binary(
    request: &MeasureRequest,
    audit: &Audit,
    id: EntryId,
    argument: &'static str,
) -> Result<(MeasuredEngine, PathBuf), MeasureError> {
    let entry: &Entry =
        audit
            .find(id)
            .map(|(entry, _)| entry)
            .ok_or_else(|| MeasureError::Argument {
                argument,
                message: format!("{id} is not an entry of the register"),
            })?;
    let engine = MeasuredEngine::of(entry).ok_or_else(|| MeasureError::Argument {
        argument,
        message: format!("{id} has no id"),
    })?;
    let fail = |message: String| MeasureError::Rebuild {
        id,
        commit: engine.commit.to_string(),
        message,
    };
    let repository = resolve::open(&request.repo).map_err(|error| fail(error.to_string()))?;
    let (constitution, _) = recorded_constitution(&repository, entry).map_err(fail)?;
    let outcome = rebuild(
        &request.repo,
        &entry.candidate,
        &constitution,
        &request.cache_dir,
    )
    .map_err(|error: BuildError| fail(error.to_string()))?;
    if outcome.sha256 != engine.binary_sha256.as_str() {
        return Err(fail(format!(
            "rebuilt sha256 {}, the entry records {}",
            outcome.sha256, engine.binary_sha256
        )));
    }
    Ok((engine, outcome.binary))
}
