//! `texel gen` (this module): self-play games of the current engine at a fixed node count, written as labelled
//! quiet positions `FEN;result;score` (result 1/0.5/0 and search score in cp, both white-relative).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use coherent::chess::movegen::legal_moves;
use coherent::chess::position::Position;
use coherent::chess::types::{Color, Move};
use coherent::search::Searcher;
use coherent::search::time::Limits;

const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// Xorshift64*: a tiny deterministic generator, so a seed reproduces the data set.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (never zero internally).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in 0..n.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Options of one generation run (`texel gen`).
#[derive(clap::Args, Debug)]
pub struct GenOptions {
    /// Node limit per move.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: u64,
    /// Stop after this many games (default: no limit, only `--seconds`).
    #[arg(long)]
    pub games: Option<u64>,
    /// Stop after this many seconds of wall time (the game in flight finishes).
    #[arg(long, default_value_t = 2400)]
    pub seconds: u64,
    /// Random seed for the openings.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output file (appended to).
    #[arg(long, default_value = "data/selfplay.txt")]
    pub out: PathBuf,
}

/// Options of `texel openings`.
#[derive(clap::Args, Debug)]
pub struct OpeningsOptions {
    /// Number of distinct openings.
    #[arg(long, default_value_t = 1000)]
    pub count: usize,
    /// Random seed (its own, apart from `gen`'s).
    #[arg(long, default_value_t = 12345)]
    pub seed: u64,
    /// Output file (EPD, overwritten).
    #[arg(long, default_value = "data/openings.epd")]
    pub out: PathBuf,
}

fn repeated(hashes: &[u64], pos: &Position) -> usize {
    let n = hashes.len();
    let lookback = (pos.halfmove as usize).min(n);
    (1..=lookback)
        .filter(|&i| hashes[n - i] == pos.hash)
        .count()
}

/// 8..=11 random legal plies from the start position, kept only if a quick search scores it
/// within `margin` cp; returns the position, the hashes before it and the ply count.
fn random_opening(
    rng: &mut Rng,
    searcher: &mut Searcher,
    margin: i32,
) -> Option<(Position, Vec<u64>, u64)> {
    let mut pos = Position::from_fen(START_FEN).unwrap();
    let mut hashes: Vec<u64> = Vec::new();
    let plies = 8 + rng.below(4);
    for _ in 0..plies {
        let moves = legal_moves(&pos);
        if moves.is_empty() {
            return None;
        }
        let m = moves.as_slice()[rng.below(moves.len() as u64) as usize];
        hashes.push(pos.hash);
        pos = pos.make_move(m);
    }
    if legal_moves(&pos).is_empty() {
        return None;
    }
    let quick = Limits {
        nodes: Some(2000),
        ..Limits::default()
    };
    searcher.clear();
    if searcher.search(&pos, &hashes, &quick, false).score.abs() > margin {
        return None;
    }
    Some((pos, hashes, plies))
}

/// Write `count` distinct random openings (EPD) for a self-check match, from a seed of its own.
pub fn openings(o: &OpeningsOptions) -> Result<(), String> {
    coherent::chess::attacks::init();
    let mut rng = Rng::new(o.seed);
    let mut searcher = Searcher::new(16);
    let mut seen = std::collections::HashSet::new();
    let mut lines = Vec::new();
    while lines.len() < o.count {
        if let Some((pos, _, _)) = random_opening(&mut rng, &mut searcher, 100) {
            let fen = pos.to_fen();
            let epd = fen.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
            if seen.insert(epd.clone()) {
                lines.push(epd);
            }
        }
    }
    std::fs::write(&o.out, lines.join("\n") + "\n")
        .map_err(|e| format!("{}: cannot write: {e}", o.out.display()))
}

/// Play games until the game or time budget runs out, appending to `o.out`.
pub fn run(o: &GenOptions) -> Result<(), String> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&o.out)
        .map_err(|e| format!("{}: cannot open for appending: {e}", o.out.display()))?;
    let mut out = std::io::BufWriter::new(file);
    play(o, &mut out).map_err(|e| format!("{}: cannot write: {e}", o.out.display()))
}

/// The games themselves, written to `out` game by game (so an interrupted run keeps whole games).
fn play(o: &GenOptions, out: &mut impl Write) -> std::io::Result<()> {
    coherent::chess::attacks::init();
    let mut rng = Rng::new(o.seed);
    let mut searcher = Searcher::new(16);
    let limits = Limits {
        nodes: Some(o.nodes),
        ..Limits::default()
    };
    let max_games = o.games.unwrap_or(u64::MAX);
    let start = Instant::now();
    let (mut games, mut positions) = (0u64, 0u64);
    let mut tally = [0u64; 3];
    while games < max_games && start.elapsed().as_secs() < o.seconds {
        let Some((mut pos, mut hashes, plies)) = random_opening(&mut rng, &mut searcher, 200)
        else {
            continue;
        };
        searcher.clear();
        let mut records: Vec<(String, i32)> = Vec::new();
        let mut ply = plies;
        let (mut win_run, mut draw_run) = (0i32, 0i32);
        let result: f32 = loop {
            let moves = legal_moves(&pos);
            if moves.is_empty() {
                break if pos.in_check() {
                    if pos.side == Color::White { 0.0 } else { 1.0 }
                } else {
                    0.5
                };
            }
            if pos.halfmove >= 100 || pos.insufficient_material() || repeated(&hashes, &pos) >= 2 {
                break 0.5;
            }
            if ply >= 400 {
                break 0.5;
            }
            let r = searcher.search(&pos, &hashes, &limits, false);
            let white = if pos.side == Color::White {
                r.score
            } else {
                -r.score
            };
            // Adjudication: a decisive score held for 8 plies, or a dead level score for 16.
            win_run = if white >= 1000 {
                win_run.max(0) + 1
            } else if white <= -1000 {
                win_run.min(0) - 1
            } else {
                0
            };
            if win_run.abs() >= 8 {
                break if win_run > 0 { 1.0 } else { 0.0 };
            }
            draw_run = if ply >= 80 && white.abs() <= 8 {
                draw_run + 1
            } else {
                0
            };
            if draw_run >= 16 {
                break 0.5;
            }
            let quiet = !pos.in_check() && !r.best.is_noisy() && r.best != Move::NONE;
            if ply >= 16 && quiet && white.abs() < 3000 {
                records.push((pos.to_fen(), white));
            }
            hashes.push(pos.hash);
            pos = pos.make_move(r.best);
            ply += 1;
        };
        for (fen, score) in &records {
            writeln!(out, "{fen};{result};{score}")?;
        }
        out.flush()?;
        games += 1;
        positions += records.len() as u64;
        tally[(result * 2.0) as usize] += 1;
        if games % 100 == 0 {
            eprintln!(
                "games {games} positions {positions} (white wins {} draws {} black wins {}) {:.0}s",
                tally[2],
                tally[1],
                tally[0],
                start.elapsed().as_secs_f64()
            );
        }
    }
    eprintln!("done: games {games} positions {positions}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_games(seed: u64) -> Vec<u8> {
        let o = GenOptions {
            nodes: 200,
            games: Some(2),
            seconds: 600,
            seed,
            out: PathBuf::new(),
        };
        let mut out = Vec::new();
        play(&o, &mut out).unwrap();
        out
    }

    #[test]
    fn gen_is_deterministic_for_a_seed() {
        let a = two_games(7);
        assert_eq!(a, two_games(7));
        let text = String::from_utf8(a).unwrap();
        let positions = text.lines().count();
        assert!(positions > 0, "two games record some positions");
        for line in text.lines() {
            let f: Vec<&str> = line.split(';').collect();
            assert_eq!(f.len(), 3, "{line}");
            assert!(Position::from_fen(f[0]).is_ok(), "{line}");
            assert!(["1", "0.5", "0"].contains(&f[1]), "{line}");
            assert!(f[2].parse::<i32>().is_ok(), "{line}");
        }
    }
}
