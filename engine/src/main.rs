//! `coherent`: UCI engine binary.

use coherent::chess::{fen::START_FEN, perft, position::Position};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let depth: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let fen = args.get(2).map_or(START_FEN, |s| s.as_str());
    let pos = Position::from_fen(fen).unwrap();
    let t = std::time::Instant::now();
    let n = perft::perft(&pos, depth);
    let e = t.elapsed().as_secs_f64();
    println!("{n} nodes {:.0} nps", n as f64 / e);
}
