//! UCI protocol behaviour of the real binary.

mod common;

use common::{Engine, run};

#[test]
fn handshake_lists_every_option() {
    let mut e = Engine::start();
    e.send("uci");
    let lines = e.read_until("uciok");
    assert!(lines.iter().any(|l| l.starts_with("id name Coherent")));
    for opt in [
        "Hash",
        "Clear Hash",
        "Threads",
        "Move Overhead",
        "asp_delta",
        "tm_max_pct",
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("option name {opt} type"))),
            "{opt}"
        );
    }
    let tunables = run(&["tunables"]).lines().count();
    let spins = lines.iter().filter(|l| l.contains(" type spin ")).count();
    assert_eq!(spins, tunables + 3, "every tunable is a spin option");
    e.send("isready");
    e.read_until("readyok");
    e.quit();
}

#[test]
fn searches_and_answers_while_searching() {
    let mut e = Engine::start();
    e.send("position startpos moves e2e4 e7e5");
    e.send("go infinite");
    e.read_until("info depth 2");
    e.send("isready");
    let lines = e.read_until("readyok");
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "no bestmove before stop in infinite mode"
    );
    e.send("stop");
    let lines = e.read_until("bestmove");
    let best = lines.last().unwrap();
    assert!(best != "bestmove 0000", "{best}");
    let info = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .expect("an info line");
    for field in [
        "seldepth", "score", "nodes", "nps", "hashfull", "time", "pv",
    ] {
        assert!(
            info.contains(&format!(" {field} ")),
            "{field} missing in {info}"
        );
    }
    e.send("go wtime 1000 btime 1000 winc 10 binc 10 movestogo 5");
    let best = e.read_until("bestmove").pop().unwrap();
    assert!(best.len() >= 13 && best != "bestmove 0000", "{best}");
    e.send("go movetime 50");
    e.read_until("bestmove");
    e.quit();
}

#[test]
fn malformed_input_keeps_position_and_never_crashes() {
    let mut e = Engine::start();
    e.send("position startpos moves e2e4");
    e.send("d");
    let before = e.read_until("fen").pop().unwrap();
    for bad in [
        "position fen 8/8/8/8 w - - 0 1",
        "position startpos moves e2e5",
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "position",
        "position banana",
    ] {
        e.send(bad);
        let line = e.read_until("info string error").pop().unwrap();
        assert!(line.len() > 18, "{line}");
    }
    e.send("d");
    assert_eq!(e.read_until("fen").pop().unwrap(), before);
    for junk in [
        "",
        "   ",
        "foo bar",
        "go depth x",
        "setoption name Hash value lots",
        "go nodes -5 depth -1",
    ] {
        e.send(junk);
    }
    e.read_until("bestmove");
    e.send("isready");
    e.read_until("readyok");
    e.quit();
}

#[test]
fn mate_and_stalemate_and_single_node() {
    let mut e = Engine::start();
    // Checkmated side: no legal move, so 0000 is the only honest answer.
    e.send("position fen rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
    e.send("go depth 3");
    assert_eq!(e.read_until("bestmove").pop().unwrap(), "bestmove 0000");
    // Mate in one is found and reported as a mate score.
    e.send("position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    e.send("go depth 4");
    let lines = e.read_until("bestmove");
    assert_eq!(lines.last().unwrap(), "bestmove a1a8");
    assert!(lines.iter().any(|l| l.contains("score mate 1")));
    // Even a one-node budget yields a real move.
    e.send("position startpos");
    e.send("go nodes 1");
    assert_ne!(e.read_until("bestmove").pop().unwrap(), "bestmove 0000");
    e.quit();
}

#[test]
fn perft_divide_and_side_commands() {
    let out = run(&["perft", "3"]);
    assert!(out.contains("Nodes searched: 8902"), "{out}");
    let divide: Vec<&str> = out
        .lines()
        .filter(|l| l.len() <= 14 && l.as_bytes().get(4) == Some(&b':'))
        .collect();
    assert_eq!(
        divide.len(),
        20,
        "one divide line per root move: {divide:?}"
    );
    let info = run(&["buildinfo"]);
    assert!(info.contains("eval_path coherent_evaluate_"), "{info}");
    let eval = run(&["eval"]);
    assert!(
        eval.contains("output buckets") && eval.contains("final evaluation"),
        "{eval}"
    );
    let mut e = Engine::start();
    e.send("position startpos moves e2e4");
    e.send("go perft 2");
    assert_eq!(
        e.read_until("Nodes searched").pop().unwrap(),
        "Nodes searched: 600"
    );
    e.quit();
}

#[test]
fn random_command_soup_does_not_crash() {
    const WORDS: &[&str] = &[
        "position",
        "fen",
        "startpos",
        "moves",
        "go",
        "depth",
        "nodes",
        "movetime",
        "wtime",
        "btime",
        "winc",
        "movestogo",
        "-1",
        "0",
        "3",
        "99999999999999999999",
        "e2e4",
        "e7e5",
        "a7a8q",
        "g1f3",
        "setoption",
        "name",
        "value",
        "Move",
        "Overhead",
        "Clear",
        "Threads",
        "rfp_margin",
        "stop",
        "isready",
        "ucinewgame",
        "8/8/8",
        "k7/8/8/8/8/8/8/K7",
        "w",
        "b",
        "-",
        "KQkq",
        "d",
        "eval",
        "uci",
    ];
    let mut e = Engine::start();
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..300 {
        let n = 1 + (state >> 60) as usize % 7;
        let mut line = Vec::new();
        for _ in 0..n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            line.push(WORDS[(state % WORDS.len() as u64) as usize]);
        }
        e.send(&line.join(" "));
    }
    e.send("stop");
    e.send("isready");
    e.read_until("readyok");
    e.quit();
}
