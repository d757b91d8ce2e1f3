//! `texel gen` (this module): self-play games of the current engine at a fixed node count, written as labelled
//! quiet positions `FEN;result;score` (result 1/0.5/0 and search score in cp, both white-relative).

use std::io::Write;
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

/// Options of one generation run.
pub struct GenOptions {
    /// Node limit per move.
    pub nodes: u64,
    /// Stop after this many games.
    pub games: u64,
    /// Stop after this many seconds (games in flight finish).
    pub seconds: u64,
    /// Random seed for the openings.
    pub seed: u64,
    /// Output file (appended).
    pub out: String,
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
pub fn openings(count: usize, seed: u64, out: &str) {
    coherent::chess::attacks::init();
    let mut rng = Rng::new(seed);
    let mut searcher = Searcher::new(16);
    let mut seen = std::collections::HashSet::new();
    let mut lines = Vec::new();
    while lines.len() < count {
        if let Some((pos, _, _)) = random_opening(&mut rng, &mut searcher, 100) {
            let fen = pos.to_fen();
            let epd = fen.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
            if seen.insert(epd.clone()) {
                lines.push(epd);
            }
        }
    }
    std::fs::write(out, lines.join("\n") + "\n").expect("write openings");
}

/// Play games until the game or time budget runs out.
pub fn run(o: &GenOptions) {
    coherent::chess::attacks::init();
    let mut rng = Rng::new(o.seed);
    let mut searcher = Searcher::new(16);
    let limits = Limits {
        nodes: Some(o.nodes),
        ..Limits::default()
    };
    let mut out = std::io::BufWriter::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&o.out)
            .expect("open output"),
    );
    let start = Instant::now();
    let (mut games, mut positions) = (0u64, 0u64);
    let mut tally = [0u64; 3];
    while games < o.games && start.elapsed().as_secs() < o.seconds {
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
            writeln!(out, "{fen};{result};{score}").unwrap();
        }
        out.flush().unwrap();
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
}
