//! Duels through the oracle's own match runner: engine "+" and engine "−" are the same
//! binary configured with `setoption`, playing pairs with colours swapped.

use std::path::PathBuf;
use std::time::Duration;

use super::params::format_value;
use super::run::{DuelPlan, DuelPlayer, DuelScore};
use super::schedule::Param;
use crate::play::book::{BookFormat, BookOrder};
use crate::play::clock::ClockRules;
use crate::play::game::Adjudication;
use crate::play::runner::{MatchConfig, run_match};
use crate::play::shard::Shard;
use crate::play::uci::EngineConfig;

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
            concurrency: self.concurrency,
            pgn_out: None,
            state: None,
            event: format!("SPSA duel {}", duel.index),
        };
        let report = run_match(config, None, &mut |_| {})?;
        Ok(DuelScore {
            wins: report.tally.wins,
            draws: report.tally.draws,
            losses: report.tally.losses,
        })
    }
}
