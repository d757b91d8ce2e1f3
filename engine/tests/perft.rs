//! Data-driven perft: every `tests/data/*.perft` case up to a node budget (the deep counts run in
//! `benches/perft.sh`).

use coherent::chess::{perft::perft, position::Position};

/// Cases above this many leaves are left to the benchmark script to keep `cargo test` quick.
const NODE_BUDGET: u64 = 5_000_000;

#[test]
fn perft_suites() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/data exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "perft"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "perft data files present");
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable perft file");
        let (mut id, mut pos) = (String::new(), None);
        for (n, line) in text.lines().enumerate() {
            let at = format!("{}:{}", file.display(), n + 1);
            let mut words = line.split_whitespace();
            match words.next() {
                Some("id") => id = words.collect::<Vec<_>>().join(" "),
                Some("epd") => {
                    let fen = words.collect::<Vec<_>>().join(" ");
                    pos = Some(Position::from_fen(&fen).unwrap_or_else(|e| panic!("{at}: {e}")));
                }
                Some("perft") => {
                    let depth: u32 = words.next().and_then(|w| w.parse().ok()).expect("depth");
                    let expected: u64 = words.next().and_then(|w| w.parse().ok()).expect("count");
                    if expected <= NODE_BUDGET {
                        let p = pos.as_ref().expect("epd before perft");
                        assert_eq!(perft(p, depth), expected, "{at}: {id} depth {depth}");
                        checked += 1;
                    }
                }
                _ => {}
            }
        }
    }
    assert!(checked >= 40, "only {checked} perft cases ran");
}
