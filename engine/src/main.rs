//! `coherent`: UCI engine binary. `coherent bench [depth] | perft <depth> | tunables | buildinfo |
//! eval` run one command and exit; anything else (or nothing) starts the UCI loop.

use coherent::uci::{Engine, run_loop};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut engine = Engine::new();
    match args.first().map(String::as_str) {
        Some("bench" | "perft" | "tunables" | "buildinfo" | "eval") => {
            engine.handle(&args.join(" "));
            engine.handle("quit");
        }
        _ => run_loop(engine),
    }
}
