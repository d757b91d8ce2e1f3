//! Reproducibility: bench signature and `go nodes` are identical run to run.

mod common;

use common::{Engine, bench_nodes, run};

#[test]
fn bench_signature_is_stable() {
    let a = bench_nodes(&run(&["bench", "7"]));
    let b = bench_nodes(&run(&["bench", "7"]));
    assert_eq!(a, b);
    assert!(a > 10_000, "bench searched {a} nodes");
}

fn search_nodes(commands: &[&str]) -> (String, String) {
    let mut e = Engine::start();
    for c in commands {
        e.send(c);
    }
    let lines = e.read_until("bestmove");
    e.quit();
    let info = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .expect("info line")
        .clone();
    let nodes = info
        .split_whitespace()
        .skip_while(|w| *w != "nodes")
        .nth(1)
        .expect("nodes")
        .to_string();
    (lines.last().unwrap().clone(), nodes)
}

#[test]
fn go_nodes_is_reproducible() {
    let cmds = [
        "setoption name Hash value 8",
        "ucinewgame",
        "position fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 moves e2a6",
        "go nodes 30000",
    ];
    let first = search_nodes(&cmds);
    assert_eq!(first.1, "30000", "the node limit is exact");
    assert_eq!(first, search_nodes(&cmds));
}

#[test]
fn ucinewgame_resets_within_a_session() {
    let mut e = Engine::start();
    let mut results = Vec::new();
    for _ in 0..2 {
        e.send("ucinewgame");
        e.send("position startpos moves d2d4 g8f6 c2c4");
        e.send("go nodes 20000");
        let lines = e.read_until("bestmove");
        let info = lines
            .iter()
            .rev()
            .find(|l| l.starts_with("info depth"))
            .expect("info")
            .clone();
        let nodes = info
            .split_whitespace()
            .skip_while(|w| *w != "nodes")
            .nth(1)
            .unwrap()
            .to_string();
        results.push((lines.last().unwrap().clone(), nodes));
    }
    e.quit();
    assert_eq!(results[0], results[1]);
}
