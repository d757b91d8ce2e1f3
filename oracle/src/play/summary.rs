//! What a match says: the fastchess-style summary block, the JSON object shared by
//! `oracle match` and `oracle merge`, the progress bar's status line, and the live log of a
//! run whose output is not a terminal (a line per finished game, a periodic summary).

use serde_json::json;

use super::game::GameResult;
use super::runner::FinishedGame;
use super::tally::{FaultCounts, PairOutcome, Tally};
use crate::stats::{
    Model, PentanomialCounts, SequentialSprt, SprtParams, SprtStatus, StatsError, fixed_games_elo,
    normalized_elo, sprt_status,
};

/// The `oracle sprt status --json` object for `tally`, with the sequential test's decision.
pub fn sprt_json_status(
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

/// The JSON keys shared by `match` and `merge`.
pub fn summary_json(
    tally: &Tally,
    games_played: u64,
    status: Option<&SprtStatus>,
) -> serde_json::Value {
    let counts = PentanomialCounts(tally.pentanomial);
    let nelo = normalized_elo(&counts);
    let elo = fixed_games_elo(&counts);
    json!({
        "games_played": games_played,
        "games_counted": 2 * tally.pairs,
        "pairs_counted": tally.pairs,
        "identical_pairs": tally.identical_pairs,
        "wins": tally.wins,
        "draws": tally.draws,
        "losses": tally.losses,
        "pentanomial": tally.pentanomial,
        "terminations": tally.terminations,
        "faults": { "first": tally.faults[0].total(), "second": tally.faults[1].total() },
        "faults_by_kind": { "first": tally.faults[0], "second": tally.faults[1] },
        "nelo": finite_or_null(nelo.nelo),
        "nelo_ci95": nelo.ci95.map(finite_or_null),
        "elo": finite_or_null(elo.elo),
        "elo_ci95": elo.ci95.map(finite_or_null),
        "los": finite_or_null(elo.los),
        "sprt": status,
    })
}

/// JSON has no infinities or NaN: they become null.
fn finite_or_null(v: f64) -> serde_json::Value {
    if v.is_finite() {
        json!(v)
    } else {
        serde_json::Value::Null
    }
}

/// The fastchess-style summary block.
pub fn summary_block(
    title: &str,
    tally: &Tally,
    pairs: &[PairOutcome],
    games_played: u64,
    status: Option<&SprtStatus>,
    names: [&str; 2],
) -> String {
    let counts = PentanomialCounts(tally.pentanomial);
    let nelo = normalized_elo(&counts);
    let elo = fixed_games_elo(&counts);
    let games = 2 * tally.pairs;
    let points = tally.wins as f64 + tally.draws as f64 / 2.0;
    let p = tally.pentanomial;
    let pairs_ratio = (p[3] + p[4]) as f64 / (p[0] + p[1]).max(1) as f64;
    let wl = pairs
        .iter()
        .filter(|pair| pair.bucket() == 2 && pair.games[0].result != GameResult::Draw)
        .count();
    let dd = p[2] as usize - wl;
    let t = &tally.terminations;
    let line = "-".repeat(60);
    let mut out = format!("{line}\nResults of {title}:\n");
    out += &format!(
        "Elo: {:.2} +/- {:.2}, nElo: {:.2} +/- {:.2}\n",
        elo.elo,
        (elo.ci95[1] - elo.ci95[0]) / 2.0,
        nelo.nelo,
        (nelo.ci95[1] - nelo.ci95[0]) / 2.0
    );
    out += &format!(
        "LOS: {:.2} %, DrawRatio: {:.2} %, PairsRatio: {:.2}\n",
        100.0 * elo.los,
        100.0 * p[2] as f64 / tally.pairs.max(1) as f64,
        pairs_ratio
    );
    out += &format!(
        "Games: {games}, Wins: {}, Losses: {}, Draws: {}, Points: {points:.1} ({:.2} %)\n",
        tally.wins,
        tally.losses,
        tally.draws,
        100.0 * points / games.max(1) as f64
    );
    out += &format!(
        "Ptnml(0-2): [{}, {}, {}, {}, {}], WL/DD Ratio: {:.2}\n",
        p[0],
        p[1],
        p[2],
        p[3],
        p[4],
        wl as f64 / dd.max(1) as f64
    );
    if let Some(s) = status {
        out += &format!(
            "LLR: {:.2} ({:.1}%) ({:.2}, {:.2}) state: {}\n",
            s.llr,
            100.0 * s.llr / s.upper_bound,
            s.lower_bound,
            s.upper_bound,
            s.state.name()
        );
    }
    out += &format!(
        "Played {games_played} games, counted {games}; terminations: normal {}, adjudication {}, time forfeit {}, illegal move {}, disconnect {}, stall {}, cpu outside turn {}, cpu over node limit {}\n",
        t.normal,
        t.adjudication,
        t.time_forfeit,
        t.illegal_move,
        t.disconnect,
        t.stall,
        t.cpu_outside_turn,
        t.cpu_over_node_limit
    );
    let faults = |f: &FaultCounts| format!("{} ({})", f.total(), f.kinds_text());
    out += &format!(
        "Faults: {} {}, {} {}\n{line}\n",
        names[0],
        faults(&tally.faults[0]),
        names[1],
        faults(&tally.faults[1])
    );
    out
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
pub fn percentile_ms(values: &mut [i64], q: f64) -> f64 {
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
