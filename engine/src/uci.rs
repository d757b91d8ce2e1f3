//! The UCI front end (and the extra commands `bench`, `perft`, `eval`, `tunables`, `buildinfo`).
//! The search runs on its own thread so `isready` and `stop` are answered while it thinks.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crate::bench;
use crate::chess::fen::START_FEN;
use crate::chess::movegen::parse_uci_move;
use crate::chess::perft::divide;
use crate::chess::position::Position;
use crate::eval;
use crate::search::time::Limits;
use crate::search::tt::TranspositionTable;
use crate::search::{DEFAULT_HASH_MB, DEFAULT_MOVE_OVERHEAD_MS, Searcher};
use crate::tune::Tunables;

/// Engine name reported to GUIs.
pub const NAME: &str = concat!("Coherent ", env!("CARGO_PKG_VERSION"));

/// Largest accepted Hash in MiB.
const MAX_HASH_MB: usize = 4096;

/// Print one line to stdout and flush (GUIs read line by line).
pub fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The UCI session state.
pub struct Engine {
    pos: Position,
    game_hashes: Vec<u64>,
    searcher: Option<Searcher>,
    worker: Option<JoinHandle<Searcher>>,
    stop: Arc<AtomicBool>,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    /// A session at the start position with default options.
    #[must_use]
    pub fn new() -> Engine {
        crate::chess::attacks::init();
        let searcher = Searcher::new(DEFAULT_HASH_MB);
        let stop = searcher.stop_handle();
        Engine {
            pos: Position::from_fen(START_FEN).expect("start position FEN is valid"),
            game_hashes: Vec::new(),
            searcher: Some(searcher),
            worker: None,
            stop,
        }
    }

    /// Wait for a running search (after asking it to stop if `stop`), and take the searcher back.
    fn finish_search(&mut self, stop: bool) -> &mut Searcher {
        if let Some(worker) = self.worker.take() {
            if stop {
                self.stop.store(true, Ordering::Relaxed);
            }
            let searcher = worker
                .join()
                .unwrap_or_else(|_| Searcher::new(DEFAULT_HASH_MB));
            self.stop = searcher.stop_handle();
            self.searcher = Some(searcher);
        }
        self.searcher
            .get_or_insert_with(|| Searcher::new(DEFAULT_HASH_MB))
    }

    /// Handle one input line; false means quit.
    pub fn handle(&mut self, line: &str) -> bool {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&cmd) = words.first() else {
            return true;
        };
        let args = &words[1..];
        match cmd {
            "uci" => {
                say(&format!("id name {NAME}"));
                say("id author the Coherent authors");
                say(&format!(
                    "option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"
                ));
                say("option name Clear Hash type button");
                say("option name Threads type spin default 1 min 1 max 1");
                say(&format!(
                    "option name Move Overhead type spin default {DEFAULT_MOVE_OVERHEAD_MS} min 0 max 5000"
                ));
                print!("{}", Tunables::uci_options());
                say("uciok");
            }
            "isready" => say("readyok"),
            "ucinewgame" => self.finish_search(true).clear(),
            "position" => self.position(args),
            "go" => self.go(args),
            "stop" => {
                self.finish_search(true);
            }
            "ponderhit" => {}
            "quit" => {
                self.finish_search(true);
                return false;
            }
            "setoption" => self.setoption(args),
            "bench" => {
                self.finish_search(true);
                let depth = args
                    .first()
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(bench::BENCH_DEPTH);
                let params = self.finish_search(false).params.clone();
                run_bench(depth.clamp(1, 64), &params);
            }
            "perft" => {
                self.finish_search(true);
                run_perft(
                    &self.pos,
                    args.first().and_then(|d| d.parse().ok()).unwrap_or(1),
                );
            }
            "eval" => print!("{}", eval::report(&self.pos)),
            "tunables" => print!("{}", self.finish_search(true).params.spsa_lines()),
            "buildinfo" => print!("{}", buildinfo()),
            "d" => say(&format!("fen {}", self.pos.to_fen())),
            _ => {}
        }
        let _ = std::io::stdout().flush();
        true
    }

    fn position(&mut self, args: &[&str]) {
        match parse_position(args) {
            Ok((pos, hashes)) => {
                self.pos = pos;
                self.game_hashes = hashes;
            }
            Err(e) => say(&format!(
                "info string error {e}; keeping the previous position"
            )),
        }
    }

    fn setoption(&mut self, args: &[&str]) {
        let value_at = args.iter().position(|&w| w.eq_ignore_ascii_case("value"));
        let name_end = value_at.unwrap_or(args.len());
        if args.first().is_none_or(|w| !w.eq_ignore_ascii_case("name")) || name_end < 2 {
            say("info string error setoption needs: setoption name <name> [value <value>]");
            return;
        }
        let name = args[1..name_end].join(" ");
        let value = value_at
            .map(|v| args[v + 1..].join(" "))
            .unwrap_or_default();
        let searcher = self.finish_search(true);
        let number = value.trim().parse::<i64>();
        match name.to_ascii_lowercase().as_str() {
            "hash" => match number {
                Ok(mb) => {
                    searcher.tt = TranspositionTable::new(mb.clamp(1, MAX_HASH_MB as i64) as usize)
                }
                Err(_) => say(&format!(
                    "info string error Hash value '{value}' is not a number"
                )),
            },
            "clear hash" => searcher.clear(),
            "threads" => {}
            "move overhead" => match number {
                Ok(ms) => searcher.move_overhead = ms.clamp(0, 5000) as u64,
                Err(_) => say(&format!(
                    "info string error Move Overhead value '{value}' is not a number"
                )),
            },
            _ => {
                if let Err(e) = searcher.params.set(&name, &value) {
                    say(&format!("info string error {e}"));
                }
            }
        }
    }

    fn go(&mut self, args: &[&str]) {
        if args.first() == Some(&"perft") {
            self.finish_search(true);
            run_perft(
                &self.pos,
                args.get(1).and_then(|d| d.parse().ok()).unwrap_or(1),
            );
            return;
        }
        let limits = parse_go(args);
        // A `go` during a search (a GUI error) first ends the old search.
        self.finish_search(true);
        let mut searcher = self
            .searcher
            .take()
            .unwrap_or_else(|| Searcher::new(DEFAULT_HASH_MB));
        self.stop = searcher.stop_handle();
        self.stop.store(false, Ordering::Relaxed);
        let (pos, hashes, stop) = (self.pos, self.game_hashes.clone(), Arc::clone(&self.stop));
        let spawned = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || {
                let result = searcher.search(&pos, &hashes, &limits, true);
                // In infinite mode the GUI expects the best move only after it says stop.
                while limits.infinite && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                say(&format!("bestmove {}", result.best.to_uci()));
                searcher
            });
        match spawned {
            Ok(handle) => self.worker = Some(handle),
            Err(e) => say(&format!(
                "info string error cannot start the search thread: {e}"
            )),
        }
    }
}

/// Parse the arguments of `position`: the position and the hashes of the positions before it.
pub fn parse_position(args: &[&str]) -> Result<(Position, Vec<u64>), String> {
    let moves_at = args.iter().position(|&w| w == "moves");
    let setup = &args[..moves_at.unwrap_or(args.len())];
    let mut pos = match setup.first() {
        Some(&"startpos") if setup.len() == 1 => {
            Position::from_fen(START_FEN).map_err(|e| e.to_string())?
        }
        Some(&"fen") => Position::from_fen(&setup[1..].join(" ")).map_err(|e| e.to_string())?,
        _ => return Err("position needs 'startpos' or 'fen <FEN>'".to_string()),
    };
    let mut hashes = Vec::new();
    if let Some(at) = moves_at {
        for text in &args[at + 1..] {
            let m = parse_uci_move(&pos, text)
                .ok_or_else(|| format!("illegal move '{text}' in {}", pos.to_fen()))?;
            hashes.push(pos.hash);
            pos = pos.make_move(m);
        }
    }
    Ok((pos, hashes))
}

/// Parse the arguments of `go`; unknown or malformed tokens are ignored. Without any limit the
/// search runs to the maximum depth or until `stop`.
#[must_use]
pub fn parse_go(args: &[&str]) -> Limits {
    let mut l = Limits::default();
    let num = |i: usize| {
        args.get(i + 1)
            .and_then(|v| v.parse::<i64>().ok())
            .map(|v| v.max(0) as u64)
    };
    for (i, &w) in args.iter().enumerate() {
        match w {
            "wtime" => l.time[0] = num(i),
            "btime" => l.time[1] = num(i),
            "winc" => l.inc[0] = num(i).unwrap_or(0),
            "binc" => l.inc[1] = num(i).unwrap_or(0),
            "movestogo" => l.movestogo = num(i).filter(|&m| m > 0),
            "movetime" => l.movetime = num(i),
            "depth" => l.depth = num(i).map(|d| d.clamp(1, 124) as i32),
            "nodes" => l.nodes = num(i).map(|n| n.max(1)),
            "infinite" => l.infinite = true,
            _ => {}
        }
    }
    l
}

/// Run `bench` and print its summary, the last line being `<N> nodes <M> nps`.
pub fn run_bench(depth: i32, params: &Tunables) {
    let r = bench::run(depth, params);
    say(&format!(
        "bench: {} positions, depth {depth}, hash {} MiB, {:.3} s",
        bench::POSITIONS.len(),
        bench::BENCH_HASH_MB,
        r.seconds
    ));
    say(&format!("{} nodes {} nps", r.nodes, r.nps()));
}

/// Run perft with divide output on `pos`.
pub fn run_perft(pos: &Position, depth: u32) {
    let start = std::time::Instant::now();
    let mut total = 0;
    let mut out = String::new();
    for (m, n) in divide(pos, depth.max(1)) {
        out.push_str(&format!("{m}: {n}\n"));
        total += n;
    }
    let secs = start.elapsed().as_secs_f64();
    print!("{out}");
    say(&format!("\nNodes searched: {total}"));
    say(&format!(
        "time {:.3} s, {} nps",
        secs,
        (total as f64 / secs.max(1e-9)) as u64
    ));
}

/// What this binary is and which evaluation path this CPU takes.
#[must_use]
pub fn buildinfo() -> String {
    format!(
        "name {NAME}\ntarget_arch {}\nprofile {}\ncpu_popcnt {}\neval_path {}\nfast_eval_symbol coherent_evaluate_popcnt\nfallback_eval_symbol coherent_evaluate_generic\n",
        std::env::consts::ARCH,
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        if eval::popcnt::has_hardware_popcnt() {
            "yes"
        } else {
            "no"
        },
        eval::path_name()
    )
}

/// Read UCI commands from stdin until `quit` or end of input (bytes that are not UTF-8 are
/// replaced, never fatal).
pub fn run_loop(mut engine: Engine) {
    let mut stdin = std::io::stdin().lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match stdin.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if !engine.handle(&String::from_utf8_lossy(&buf)) {
                    return;
                }
            }
        }
    }
    engine.handle("quit");
}
