//! What a match says: the typed summaries of `oracle match` and `oracle merge` (one value
//! each, whose `Display` is the fastchess-style text and whose `Serialize` is the `--json`
//! object), the progress bar's status line, and the live log of a run whose output is not a
//! terminal (a line per finished game, a periodic summary).

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use super::book::BookOrder;
use super::game::GameResult;
use super::runner::{FinishedGame, MatchConfig, MatchReport};
use super::shard::{Merged, ShardResult};
use super::tally::{FaultCounts, PairOutcome, Tally, TerminationCounts, fault_free_wdl};
use crate::stats::{
    Model, PentanomialCounts, SequentialSprt, SprtDecision, SprtParams, SprtStatus, StatsError,
    fixed_games_elo, normalized_elo, sprt_status,
};

/// A value for each engine of a match, the first engine's first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PerEngine<T> {
    /// The first engine's (the candidate's).
    pub first: T,
    /// The second engine's.
    pub second: T,
}

/// The counted results of a match or a merge with their Elo estimates and SPRT status: the
/// part of the summary (and of its JSON object) that `oracle match` and `oracle merge` share.
#[derive(Debug, Clone, Serialize)]
pub struct Standing {
    /// Games finished, including those of pairs not counted.
    pub games_played: u64,
    /// Games of the counted pairs.
    pub games_counted: u64,
    /// Pairs counted.
    pub pairs_counted: u64,
    /// Counted pairs whose two games were identical.
    pub identical_pairs: u64,
    /// Wins of the first engine.
    pub wins: u64,
    /// Draws.
    pub draws: u64,
    /// Losses of the first engine.
    pub losses: u64,
    /// Pentanomial counts [LL, LD, DD+WL, WD, WW].
    pub pentanomial: [u64; 5],
    /// How the counted games ended.
    pub terminations: TerminationCounts,
    /// Faults charged to each engine.
    pub faults: PerEngine<u64>,
    /// Faults charged to each engine, by kind.
    pub faults_by_kind: PerEngine<FaultCounts>,
    /// Normalized Elo of the counted pairs (null in JSON when not finite).
    pub nelo: f64,
    /// Its 95% interval.
    pub nelo_ci95: [f64; 2],
    /// Logistic Elo of the counted games as a fixed-games test reads them.
    pub elo: f64,
    /// Its 95% interval.
    pub elo_ci95: [f64; 2],
    /// Likelihood of superiority.
    pub los: f64,
    /// The SPRT's status on the counted pairs, when one was asked for.
    pub sprt: Option<SprtStatus>,
    /// Counted pairs that each engine won once (they count as DD+WL; the text's WL/DD ratio).
    #[serde(skip)]
    split_pairs: u64,
}

impl Standing {
    /// The standing of `tally` (whose counted pairs are `pairs`) after `games_played` games;
    /// with `params`, its SPRT status, decided by `sequential` when the test ran sequentially.
    ///
    /// # Errors
    /// The SPRT status cannot be computed.
    pub fn new(
        tally: &Tally,
        pairs: &[PairOutcome],
        games_played: u64,
        params: Option<&SprtParams>,
        sequential: Option<&SequentialSprt>,
    ) -> Result<Standing, StatsError> {
        let counts = PentanomialCounts(tally.pentanomial);
        let nelo = normalized_elo(&counts);
        let elo = fixed_games_elo(&counts);
        let split_pairs = pairs
            .iter()
            .filter(|pair| pair.bucket() == 2 && pair.games[0].result != GameResult::Draw)
            .count() as u64;
        Ok(Standing {
            games_played,
            games_counted: 2 * tally.pairs,
            pairs_counted: tally.pairs,
            identical_pairs: tally.identical_pairs,
            wins: tally.wins,
            draws: tally.draws,
            losses: tally.losses,
            pentanomial: tally.pentanomial,
            terminations: tally.terminations,
            faults: PerEngine {
                first: tally.faults[0].total(),
                second: tally.faults[1].total(),
            },
            faults_by_kind: PerEngine {
                first: tally.faults[0],
                second: tally.faults[1],
            },
            nelo: nelo.nelo,
            nelo_ci95: nelo.ci95,
            elo: elo.elo,
            elo_ci95: elo.ci95,
            los: elo.los,
            sprt: sprt_status_of(tally, params, sequential)?,
            split_pairs,
        })
    }

    /// Whether the SPRT accepted H0 (the change is rejected).
    #[must_use]
    pub fn accepted_h0(&self) -> bool {
        self.sprt
            .as_ref()
            .is_some_and(|status| status.state == SprtDecision::AcceptH0)
    }

    /// The fastchess-style summary block under `title`; `names` are the first and second
    /// engine.
    fn block(&self, f: &mut fmt::Formatter<'_>, title: &str, names: &[String; 2]) -> fmt::Result {
        let games = self.games_counted;
        let points = self.wins as f64 + self.draws as f64 / 2.0;
        let p = self.pentanomial;
        let pairs_ratio = (p[3] + p[4]) as f64 / (p[0] + p[1]).max(1) as f64;
        let both_drawn = p[2] - self.split_pairs;
        let t = &self.terminations;
        let line = "-".repeat(60);
        writeln!(f, "{line}\nResults of {title}:")?;
        writeln!(
            f,
            "Elo: {:.2} +/- {:.2}, nElo: {:.2} +/- {:.2}",
            self.elo,
            (self.elo_ci95[1] - self.elo_ci95[0]) / 2.0,
            self.nelo,
            (self.nelo_ci95[1] - self.nelo_ci95[0]) / 2.0
        )?;
        writeln!(
            f,
            "LOS: {:.2} %, DrawRatio: {:.2} %, PairsRatio: {:.2}",
            100.0 * self.los,
            100.0 * p[2] as f64 / self.pairs_counted.max(1) as f64,
            pairs_ratio
        )?;
        writeln!(
            f,
            "Games: {games}, Wins: {}, Losses: {}, Draws: {}, Points: {points:.1} ({:.2} %)",
            self.wins,
            self.losses,
            self.draws,
            100.0 * points / games.max(1) as f64
        )?;
        writeln!(
            f,
            "Ptnml(0-2): [{}, {}, {}, {}, {}], WL/DD Ratio: {:.2}",
            p[0],
            p[1],
            p[2],
            p[3],
            p[4],
            self.split_pairs as f64 / both_drawn.max(1) as f64
        )?;
        if let Some(s) = &self.sprt {
            writeln!(
                f,
                "LLR: {:.2} ({:.1}%) ({:.2}, {:.2}) state: {}",
                s.llr,
                100.0 * s.llr / s.upper_bound,
                s.lower_bound,
                s.upper_bound,
                s.state.name()
            )?;
        }
        writeln!(
            f,
            "Played {} games, counted {games}; terminations: normal {}, adjudication {}, time forfeit {}, illegal move {}, disconnect {}, stall {}, cpu outside turn {}, cpu over node limit {}",
            self.games_played,
            t.normal,
            t.adjudication,
            t.time_forfeit,
            t.illegal_move,
            t.disconnect,
            t.stall,
            t.cpu_outside_turn,
            t.cpu_over_node_limit
        )?;
        let faults = |counts: &FaultCounts| format!("{} ({})", counts.total(), counts.kinds_text());
        writeln!(
            f,
            "Faults: {} {}, {} {}\n{line}",
            names[0],
            faults(&self.faults_by_kind.first),
            names[1],
            faults(&self.faults_by_kind.second)
        )
    }
}

/// The status `oracle sprt status` gives for `tally`, with the sequential test's decision.
fn sprt_status_of(
    tally: &Tally,
    params: Option<&SprtParams>,
    sequential: Option<&SequentialSprt>,
) -> Result<Option<SprtStatus>, StatsError> {
    let Some(params) = params else {
        return Ok(None);
    };
    let mut status = sprt_status(&PentanomialCounts(tally.pentanomial), params)?;
    if let Some(sequential) = sequential {
        // The decision that stopped (or would stop) the run includes the overshoot correction.
        status.state = sequential.decision();
    }
    Ok(Some(status))
}

/// The runner's own cost per move, in milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct MoveOverhead {
    /// Moves measured.
    pub moves: usize,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// What `oracle match` reports: the standing, the match's settings, where its files went, and
/// what the run cost.
#[derive(Debug, Clone, Serialize)]
pub struct MatchSummary {
    /// The counted results.
    #[serde(flatten)]
    pub standing: Standing,
    /// The PGN file written.
    pub pgn: Option<PathBuf>,
    /// The `--state` file.
    pub state: Option<PathBuf>,
    /// Whether the stop rule (the SPRT) ended the match.
    pub stopped_early: bool,
    /// Whether SIGINT or SIGTERM ended the match before its last pair.
    pub interrupted: bool,
    /// The command line that resumes an interrupted match.
    pub resume_command: Option<String>,
    /// The engines' names, first engine first.
    pub engines: [String; 2],
    /// The match's time control.
    pub tc: String,
    /// Each engine's own time control (they differ under time odds).
    pub time_controls: [String; 2],
    /// How the engines were isolated.
    pub isolation: String,
    /// The opening book.
    pub book: Option<PathBuf>,
    /// The order the book was played in.
    pub book_order: BookOrder,
    /// Seed of the opening order.
    pub seed: u64,
    /// Games played at once.
    pub concurrency: usize,
    /// The slice played, `K/N`.
    pub shard: String,
    /// The shard result file written.
    pub shard_result: Option<PathBuf>,
    /// sha256 of the PGN file.
    pub pgn_sha256: Option<String>,
    /// Wall time of this run.
    pub wall_seconds: f64,
    /// CPU time of the engine processes.
    pub engine_cpu_seconds: f64,
    /// CPU time of the runner itself.
    pub runner_cpu_seconds: f64,
    /// Engine CPU as a share of wall time × concurrency.
    pub engine_cpu_share: f64,
    /// Games finished per minute of wall time.
    pub games_per_minute: f64,
    /// The runner's overhead per move.
    pub move_overhead_ms: MoveOverhead,
    /// W-D-L from the first engine's side over the pairs without a fault.
    pub fault_free_wdl: [u64; 3],
    /// Time forfeits per 1,000 counted games.
    pub time_forfeits_per_1000_games: f64,
    /// The text's heading: engines, clock and book.
    #[serde(skip)]
    title: String,
}

impl MatchSummary {
    /// The summary of `report`, the match `config` played (`params`: its live SPRT, decided by
    /// `sequential`), with the shard result file and the resume command written for it.
    ///
    /// # Errors
    /// The SPRT status cannot be computed.
    pub fn new(
        report: &MatchReport,
        config: &MatchConfig,
        params: Option<&SprtParams>,
        sequential: Option<&SequentialSprt>,
        shard_result: Option<PathBuf>,
        resume_command: Option<String>,
    ) -> Result<MatchSummary, StatsError> {
        let standing = Standing::new(
            &report.tally,
            &report.pairs,
            report.games_played,
            params,
            sequential,
        )?;
        let engines = config.engines.each_ref().map(|engine| engine.name.clone());
        let concurrency = config.concurrency as f64;
        let mut overheads = report.overhead_us.clone();
        let move_overhead_ms = MoveOverhead {
            moves: overheads.len(),
            p50: percentile_ms(&mut overheads, 0.50),
            p95: percentile_ms(&mut overheads, 0.95),
        };
        let wall = report.wall.as_secs_f64();
        let cpu = report.engine_cpu.as_secs_f64();
        let title = format!(
            "{} vs {} ({}, {})",
            engines[0],
            engines[1],
            config.clock.label(),
            config.book_path.as_deref().map_or_else(
                || "start position".into(),
                |path| path.display().to_string()
            )
        );
        Ok(MatchSummary {
            pgn: config.pgn_out.clone(),
            state: config.state.clone(),
            stopped_early: report.stopped_early,
            interrupted: report.interrupted,
            resume_command,
            tc: config.clock.tc.to_string(),
            time_controls: [0, 1].map(|slot| config.clock.of_engine(slot).to_string()),
            isolation: config.engines[0].isolation.describe(),
            book: config.book_path.clone(),
            book_order: config.book_order,
            seed: config.seed,
            concurrency: config.concurrency,
            shard: format!("{}/{}", config.shard.index, config.shard.count),
            shard_result,
            pgn_sha256: report.pgn_sha256.clone(),
            wall_seconds: wall,
            engine_cpu_seconds: cpu,
            runner_cpu_seconds: report.runner_cpu.as_secs_f64(),
            engine_cpu_share: if wall > 0.0 {
                cpu / (wall * concurrency)
            } else {
                0.0
            },
            games_per_minute: if wall > 0.0 {
                (report.games_played as f64) * 60.0 / wall
            } else {
                0.0
            },
            move_overhead_ms,
            fault_free_wdl: fault_free_wdl(&report.pairs),
            time_forfeits_per_1000_games: if standing.games_counted > 0 {
                report.tally.terminations.time_forfeit as f64 * 1000.0
                    / standing.games_counted as f64
            } else {
                0.0
            },
            engines,
            title,
            standing,
        })
    }
}

impl fmt::Display for MatchSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.standing.block(f, &self.title, &self.engines)?;
        let (wall, cpu) = (self.wall_seconds, self.engine_cpu_seconds);
        writeln!(
            f,
            "Wall: {wall:.1} s, engine CPU: {cpu:.1} s ({:.1}% of {} × wall), runner CPU: {:.1} s, runner overhead per move: p50 {:.3} ms, p95 {:.3} ms",
            if wall > 0.0 {
                100.0 * cpu / (wall * self.concurrency as f64)
            } else {
                0.0
            },
            self.concurrency,
            self.runner_cpu_seconds,
            self.move_overhead_ms.p50,
            self.move_overhead_ms.p95
        )?;
        let faulted = self.standing.terminations.faults();
        if faulted > 0 {
            let [wins, draws, losses] = self.fault_free_wdl;
            writeln!(
                f,
                "Without the {faulted} faulted games: {wins}-{draws}-{losses} from {}'s side",
                self.engines[0]
            )?;
        }
        writeln!(f, "Isolation: {}", self.isolation)?;
        if let Some(path) = &self.pgn {
            writeln!(f, "PGN: {}", path.display())?;
        }
        if let Some(path) = &self.shard_result {
            writeln!(f, "Shard result: {}", path.display())?;
        }
        if let Some(command) = &self.resume_command {
            writeln!(
                f,
                "Interrupted after {} games ({} pairs counted); resume with:\n{command}",
                self.standing.games_played, self.standing.pairs_counted
            )?;
        }
        Ok(())
    }
}

/// What `oracle merge` reports: the standing of the merged shards and which pairs they hold.
#[derive(Debug, Clone, Serialize)]
pub struct MergeSummary {
    /// The counted results.
    #[serde(flatten)]
    pub standing: Standing,
    /// Shards combined (1-based numbers).
    pub shards: Vec<u32>,
    /// Shards the match was cut into.
    pub shard_count: u32,
    /// Pairs of the whole match.
    pub pairs_total: u64,
    /// Pairs present in the shards.
    pub pairs_available: u64,
    /// Length of the gap-free prefix of pair indices.
    pub contiguous_pairs: u64,
    /// The engines' names, first engine first.
    pub engines: [String; 2],
    /// The match's time control.
    pub tc: String,
    /// Each engine's own time control.
    pub time_controls: [String; 2],
    /// Seed of the opening order.
    pub seed: u64,
    /// sha256 of the book.
    pub book_sha256: String,
    /// Always null: a merge writes no PGN (the key keeps match and merge objects alike).
    pub pgn: Option<PathBuf>,
    /// sha256 of each shard's PGN, in the order the shards were given.
    pub pgn_sha256: Vec<Option<String>>,
    /// The text's heading: engines, clock and shards.
    #[serde(skip)]
    title: String,
}

impl MergeSummary {
    /// The summary of `merged`, combined from `shards` (`params`: the SPRT applied at round
    /// boundaries).
    ///
    /// # Errors
    /// The SPRT status cannot be computed.
    pub fn new(
        merged: &Merged,
        shards: &[(PathBuf, ShardResult)],
        params: Option<&SprtParams>,
    ) -> Result<MergeSummary, StatsError> {
        let fingerprint = &merged.fingerprint;
        let engines = fingerprint
            .engines
            .each_ref()
            .map(|engine| engine.name.clone());
        let title = format!(
            "{} vs {} ({}, shards {:?} of {})",
            engines[0],
            engines[1],
            fingerprint.clock.label(),
            merged.shards,
            fingerprint.shards
        );
        Ok(MergeSummary {
            standing: Standing::new(
                &merged.tally,
                &merged.pairs,
                merged.games_played,
                params,
                merged.sprt.as_ref(),
            )?,
            shards: merged.shards.clone(),
            shard_count: fingerprint.shards,
            pairs_total: fingerprint.pairs,
            pairs_available: merged.pairs_available,
            contiguous_pairs: merged.contiguous_pairs,
            engines,
            tc: fingerprint.clock.tc.to_string(),
            time_controls: [0, 1].map(|slot| fingerprint.clock.of_engine(slot).to_string()),
            seed: fingerprint.seed,
            book_sha256: fingerprint.book_sha256.clone(),
            pgn: None,
            pgn_sha256: shards
                .iter()
                .map(|(_, shard)| shard.pgn_sha256.clone())
                .collect(),
            title,
        })
    }
}

impl fmt::Display for MergeSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.standing.block(f, &self.title, &self.engines)?;
        writeln!(
            f,
            "Pairs: {} of {} present, {} without gaps, {} counted",
            self.pairs_available,
            self.pairs_total,
            self.contiguous_pairs,
            self.standing.pairs_counted
        )
    }
}

/// The progress bar's status: W-D-L of the finished games, the counted pentanomial, nElo ±
/// and LLR.
pub fn status_line(finished_wdl: [u64; 3], tally: &Tally, params: Option<&SprtParams>) -> String {
    let counts = PentanomialCounts(tally.pentanomial);
    let nelo = normalized_elo(&counts);
    let mut line = format!(
        "W-D-L {}-{}-{}  ptnml {:?}  nElo {:.1} ± {:.1}",
        finished_wdl[0],
        finished_wdl[1],
        finished_wdl[2],
        tally.pentanomial,
        nelo.nelo,
        (nelo.ci95[1] - nelo.ci95[0]) / 2.0
    );
    if let Some(params) = params
        && let Ok(status) = sprt_status(&counts, params)
    {
        line += &format!(
            "  LLR {:.2} ({:.2}, {:.2})",
            status.llr, status.lower_bound, status.upper_bound
        );
    }
    line
}

/// The `q`-quantile of overheads (microseconds) in milliseconds.
fn percentile_ms(values: &mut [i64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_unstable();
    let rank = ((values.len() - 1) as f64 * q).round() as usize;
    values[rank] as f64 / 1000.0
}

/// The live log's line for a finished game: number, pair and game, engines, result,
/// termination and plies (`names` are the first and second engine).
pub fn game_line(number: u64, game: &FinishedGame, names: [&str; 2]) -> String {
    let (white, black) = if game.game == 0 {
        (names[0], names[1])
    } else {
        (names[1], names[0])
    };
    format!(
        "Finished game {number} (pair {}, game {}): {white} vs {black}: {} {}, {} plies",
        game.pair + 1,
        game.game + 1,
        game.summary.result.pgn(),
        game.summary.termination.pgn_tag(),
        game.summary.plies
    )
}

/// The live log's periodic summary: games, W-D-L of the finished games, the pentanomial of the
/// counted pairs, Elo and nElo with their 95% intervals, and with an SPRT its LLR, bounds and
/// hypotheses.
pub fn periodic_summary(
    games_played: u64,
    finished_wdl: [u64; 3],
    tally: &Tally,
    params: Option<&SprtParams>,
) -> String {
    let counts = PentanomialCounts(tally.pentanomial);
    let nelo = normalized_elo(&counts);
    let elo = fixed_games_elo(&counts);
    let [w, d, l] = finished_wdl;
    let mut out = format!(
        "Summary after {games_played} games: W-D-L {w}-{d}-{l}, {} pairs counted, Ptnml(0-2) {:?}\n",
        tally.pairs, tally.pentanomial
    );
    out += &format!(
        "  Elo {:.2} [{:.2}, {:.2}], nElo {:.2} [{:.2}, {:.2}] (95%)\n",
        elo.elo, elo.ci95[0], elo.ci95[1], nelo.nelo, nelo.ci95[0], nelo.ci95[1]
    );
    if let Some(params) = params
        && let Ok(status) = sprt_status(&counts, params)
    {
        out += &format!(
            "  LLR {:.2} in [{:.2}, {:.2}] for [{}, {}] {}\n",
            status.llr,
            status.lower_bound,
            status.upper_bound,
            params.elo0,
            params.elo1,
            match params.model {
                Model::Normalized => "nElo",
                Model::Logistic => "Elo",
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::game::Termination;
    use crate::play::tally::GameSummary;

    #[test]
    fn percentiles() {
        let mut v = vec![5000, 1000, 3000, 2000, 4000];
        assert_eq!(percentile_ms(&mut v, 0.5), 3.0);
        assert_eq!(percentile_ms(&mut v, 0.95), 5.0);
    }

    #[test]
    fn live_lines_name_the_engines_by_colour_and_show_the_bounds() {
        let game = FinishedGame {
            pair: 4,
            game: 1,
            summary: GameSummary {
                result: GameResult::WhiteWins,
                termination: Termination::Adjudication,
                plies: 57,
                faulted_engine: None,
            },
        };
        assert_eq!(
            game_line(10, &game, ["new", "old"]),
            "Finished game 10 (pair 5, game 2): old vs new: 1-0 adjudication, 57 plies"
        );
        let tally = Tally {
            pairs: 3,
            pentanomial: [0, 1, 1, 1, 0],
            ..Tally::default()
        };
        let params = SprtParams::new(0.0, 5.0, 0.05, 0.05, Model::Normalized).unwrap();
        let text = periodic_summary(7, [2, 3, 2], &tally, Some(&params));
        assert!(
            text.starts_with("Summary after 7 games: W-D-L 2-3-2, 3 pairs counted"),
            "{text}"
        );
        assert!(
            text.contains("  LLR ") && text.contains("in [-2.94, 2.94] for [0, 5] nElo"),
            "{text}"
        );
    }
}
