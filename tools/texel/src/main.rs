//! `texel`: self-play data generation and Texel tuning for Coherent's hand-crafted evaluation.
//!
//! `texel gen --out FILE [--nodes N] [--games N] [--seconds S] [--seed S]` plays games;
//! `texel tune --data FILE [...]` fits the evaluation weights and writes Rust tables;
//! `texel openings --out FILE [--count N] [--seed S]` writes random openings for a check match.
//! See docs/texel.md.

mod selfplay;
mod tune;

use std::collections::HashMap;

fn args() -> (String, HashMap<String, String>) {
    let mut it = std::env::args().skip(1);
    let cmd = it.next().unwrap_or_default();
    let mut map = HashMap::new();
    while let Some(k) = it.next() {
        let v = it.next().unwrap_or_default();
        map.insert(k.trim_start_matches("--").to_string(), v);
    }
    (cmd, map)
}

fn get<T: std::str::FromStr>(m: &HashMap<String, String>, k: &str, d: T) -> T {
    m.get(k).and_then(|v| v.parse().ok()).unwrap_or(d)
}

fn main() {
    let (cmd, m) = args();
    match cmd.as_str() {
        "gen" => selfplay::run(&selfplay::GenOptions {
            nodes: get(&m, "nodes", 5000),
            games: get(&m, "games", u64::MAX),
            seconds: get(&m, "seconds", 2400),
            seed: get(&m, "seed", 1),
            out: get(&m, "out", "data/selfplay.txt".to_string()),
        }),
        "openings" => selfplay::openings(
            get(&m, "count", 1000),
            get(&m, "seed", 12345),
            &get(&m, "out", "data/openings.epd".to_string()),
        ),
        "tune" => tune::run(&tune::TuneOptions {
            data: get(&m, "data", "data/selfplay.txt".to_string()),
            lambda: get(&m, "lambda", 0.5),
            iterations: get(&m, "iterations", 1000),
            lr: get(&m, "lr", 1.0),
            l2: get(&m, "l2", 0.0),
            min_count: get(&m, "min-count", 1000),
            out: get(&m, "out", "data/tables.rs".to_string()),
            apply: m.get("apply").cloned(),
        }),
        _ => {
            eprintln!("usage: texel gen|tune [--key value ...] (see docs/texel.md)");
            std::process::exit(2);
        }
    }
}
