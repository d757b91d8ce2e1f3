//! Duels through the oracle's own match runner: engine "+" and engine "−" are the same
//! binary configured with `setoption`, playing pairs with colours swapped.

use std::path::PathBuf;
use std::time::Duration;

use super::params::format_value;
use super::run::{DuelPlan, DuelPlayer, DuelScore};
use super::schedule::Param;
use crate::integrity::{self, FileError};
use crate::play::book::{BookFormat, BookOrder};
use crate::play::clock::{ClockRules, TimeControl};
use crate::play::game::Adjudication;
use crate::play::runner::{MatchConfig, run_match};
use crate::play::shard::Shard;
use crate::play::uci::EngineConfig;

/// What a tuning run chooses about its duels; everything else is fixed by [`MatchDuels::new`].
#[derive(Clone, Debug)]
pub struct DuelSettings {
    /// The engine binary (both "+" and "−").
    pub engine: PathBuf,
    /// Clock or node limit.
    pub tc: TimeControl,
    /// Hash size (MiB) of both engines.
    pub hash: u32,
    /// The opening book (EPD or PGN).
    pub book: PathBuf,
    /// Plies taken from PGN games.
    pub plies: usize,
    /// Games played at once.
    pub concurrency: usize,
}

/// Why the duels cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum DuelSetupError {
    /// No game could be played at once.
    #[error("--concurrency must be at least 1")]
    NoConcurrency,
    /// The engine or the book could not be hashed.
    #[error("{flag}: {source}")]
    Unreadable {
        /// The argument naming the file (`--engine`, `--book`).
        flag: &'static str,
        /// The file and the reason.
        source: FileError,
    },
}

/// How every duel of a run is played: everything but the two engines' parameter values.
#[derive(Clone, Debug)]
pub struct MatchDuels {
    /// The engine with its fixed options (Threads, Hash, …).
    pub engine: EngineConfig,
    /// Clock or node limit.
    pub clock: ClockRules,
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// Deadline for `uciok`/`readyok`.
    pub ready_timeout: Duration,
    /// The opening book.
    pub book: PathBuf,
    /// Its format.
    pub book_format: BookFormat,
    /// Plies taken from PGN games.
    pub plies: usize,
    /// Seed of the opening order (duels read it from their first pair on).
    pub opening_seed: u64,
    /// Games played at once.
    pub concurrency: usize,
}

impl MatchDuels {
    /// The duels of `settings`, with the tuner's fixed rules: one thread per engine,
    /// Fishtest's adjudication, a 100 ms margin and 200 ms slack on the clock, 30 s for a
    /// node search and 10 s for `readyok`. Also returns the context string that binds a
    /// state file to these duels (the engine's and the book's sha256, the limit, the hash).
    pub fn new(
        settings: &DuelSettings,
        opening_seed: u64,
    ) -> Result<(MatchDuels, String), DuelSetupError> {
        if settings.concurrency == 0 {
            return Err(DuelSetupError::NoConcurrency);
        }
        let sha256 = |flag, path| {
            integrity::sha256_file(path)
                .map_err(|source| DuelSetupError::Unreadable { flag, source })
        };
        let context = format!(
            "engine sha256 {}; {}; hash {}; book sha256 {}; plies {}; Fishtest adjudication",
            sha256("--engine", &settings.engine)?,
            settings.tc,
            settings.hash,
            sha256("--book", &settings.book)?,
            settings.plies
        );
        let duels = MatchDuels {
            engine: EngineConfig::new(&settings.engine)
                .with_option("Threads", "1")
                .with_option("Hash", &settings.hash.to_string()),
            clock: ClockRules {
                tc: settings.tc,
                second_engine_tc: None,
                margin: Duration::from_millis(100),
                slack: Duration::from_millis(200),
                move_timeout: Duration::from_secs(30),
            },
            adjudication: Adjudication::FISHTEST,
            ready_timeout: Duration::from_secs(10),
            book: settings.book.clone(),
            book_format: BookFormat::from_path(&settings.book),
            plies: settings.plies,
            opening_seed,
            concurrency: settings.concurrency,
        };
        Ok((duels, context))
    }

    /// The engine of one side with the duel's values set as UCI options.
    fn side(&self, name: &str, params: &[Param], values: &[f64]) -> EngineConfig {
        let mut config = self.engine.clone();
        config.name = name.to_string();
        for (p, &v) in params.iter().zip(values) {
            config.set_option(&p.name, &format_value(p, v));
        }
        config
    }
}

impl DuelPlayer for MatchDuels {
    fn play(
        &mut self,
        params: &[Param],
        duel: &DuelPlan,
    ) -> Result<DuelScore, Box<dyn std::error::Error + Send + Sync>> {
        let config = MatchConfig {
            engines: [
                self.side("plus", params, &duel.plus),
                self.side("minus", params, &duel.minus),
            ],
            clock: self.clock,
            adjudication: self.adjudication,
            start_timeout: self.ready_timeout,
            ready_timeout: self.ready_timeout,
            book_path: Some(self.book.clone()),
            book_order: BookOrder::Random,
            book_format: self.book_format,
            plies: self.plies,
            seed: self.opening_seed,
            opening_offset: usize::try_from(duel.first_pair)?,
            pairs: duel.pairs,
            shard: Shard::WHOLE,
            pairs_below: None,
            counted_elsewhere: Vec::new(),
            concurrency: self.concurrency,
            pgn_out: None,
            state: None,
            event: format!("SPSA duel {}", duel.index),
            node_pace: [None, None],
        };
        let report = run_match(config, None, &mut |_| {})?;
        Ok(DuelScore {
            wins: report.tally.wins,
            draws: report.tally.draws,
            losses: report.tally.losses,
        })
    }
}
