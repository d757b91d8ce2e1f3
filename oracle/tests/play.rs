//! End-to-end tests of `oracle match` and `oracle merge` over real engines: the workspace's
//! `coherent` (built with `cargo build -p coherent` into this target directory) and a scripted
//! fault engine (`tests/fixtures/play/fault_engine.rs`, compiled here with `rustc`) that wraps
//! coherent and crashes, hangs, plays an illegal move, answers late or stalls on cue.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{ORACLE, Run, oracle};

/// The book of the tests (64 random 4-ply openings).
fn book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/play/openings.epd")
}

/// The `coherent` binary of this workspace, freshly built (`cargo build --release -p coherent`)
/// in this target directory.
fn coherent() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        // Tests run from target/<profile>/deps/. The release profile is what the oracle
        // measures, and its engine is the one without debug assertions.
        let target_dir = std::env::current_exe()
            .unwrap()
            .ancestors()
            .nth(3)
            .unwrap()
            .to_path_buf();
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "--release",
                "-p",
                "coherent",
                "--target-dir",
            ])
            .arg(&target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build -p coherent");
        assert!(status.success(), "cargo build -p coherent failed");
        target_dir.join("release/coherent")
    })
}

/// Compiles the fixture engine `tests/fixtures/play/NAME.rs` with rustc into the test's
/// temporary directory; its path.
fn compile_fixture_engine(name: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/play")
        .join(format!("{name}.rs"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("play_{name}"));
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let status = Command::new(rustc)
        .args(["--edition", "2024", "-O", "-o"])
        .arg(&out)
        .arg(&source)
        .status()
        .expect("run rustc");
    assert!(status.success(), "compiling {} failed", source.display());
    out
}

/// The fault engine, compiled once per test run.
fn fault_engine() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| compile_fixture_engine("fault_engine"))
}

/// The hostile engine of issue 12 (`tests/fixtures/play/killer_engine.rs`), compiled once.
fn killer_engine() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| compile_fixture_engine("killer_engine"))
}

/// An `--engine` spec for coherent.
fn coherent_spec(name: &str) -> String {
    format!("cmd={},name={name},option.Hash=8", coherent().display())
}

/// An `--engine` spec for the fault engine wrapping coherent.
fn fault_spec(name: &str, fault: &str, k: u32, extra: &str) -> String {
    // The wrapped engine must be visible inside the fault engine's sandbox.
    let mut spec = format!(
        "cmd={},name={name},bind={coherent},arg={coherent},arg={fault},arg={k}",
        fault_engine().display(),
        coherent = coherent().display()
    );
    if !extra.is_empty() {
        spec.push_str(",arg=");
        spec.push_str(extra);
    }
    spec
}

/// Runs `oracle match --json` and returns the summary.
fn match_json(engines: [&str; 2], extra: &[&str]) -> (Value, Run) {
    let book = book();
    let mut args = vec![
        "match",
        "--engine",
        engines[0],
        "--engine",
        engines[1],
        "--book",
        book.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    let output = oracle(&args);
    let json = serde_json::from_str(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}): stdout {} stderr {}",
            output.stdout, output.stderr
        )
    });
    (json, output)
}

/// Runs `oracle match --json`, which must succeed; the summary.
fn played_match(engines: [&str; 2], extra: &[&str]) -> Value {
    let (json, output) = match_json(engines, extra);
    assert_eq!(output.code, 0, "{}", output.stderr);
    json
}

/// The values of PGN tag `name` in file order.
fn pgn_tags(pgn: &Path, name: &str) -> Vec<String> {
    let prefix = format!("[{name} \"");
    std::fs::read_to_string(pgn)
        .unwrap()
        .lines()
        .filter_map(|l| {
            l.strip_prefix(&prefix)
                .map(|v| v.trim_end_matches("\"]").to_string())
        })
        .collect()
}

#[test]
fn coherent_plays_a_clean_match_with_tags_and_comments() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let (json, output) = match_json(
        [&coherent_spec("c1"), &coherent_spec("c2")],
        &[
            "--nodes",
            "1500",
            "--pairs",
            "2",
            "--concurrency",
            "2",
            "--adjudicate-fishtest",
            "--pgn-out",
            pgn.to_str().unwrap(),
        ],
    );
    assert_eq!(output.code, 0);
    assert_eq!(json["games_played"], 4);
    assert_eq!(json["pairs_counted"], 2);
    let penta: Vec<u64> = serde_json::from_value(json["pentanomial"].clone()).unwrap();
    assert_eq!(penta.iter().sum::<u64>(), 2);
    let wdl = json["wins"].as_u64().unwrap()
        + json["draws"].as_u64().unwrap()
        + json["losses"].as_u64().unwrap();
    assert_eq!(wdl, 4);
    let t = &json["terminations"];
    assert_eq!(
        t["normal"].as_u64().unwrap() + t["adjudication"].as_u64().unwrap(),
        4,
        "{json}"
    );
    assert!(json["sprt"].is_null());
    assert_eq!(json["pgn"], pgn.to_str().unwrap());
    let text = std::fs::read_to_string(&pgn).unwrap();
    for tag in [
        "Event",
        "Site",
        "Date",
        "Round",
        "White",
        "Black",
        "Result",
        "SetUp",
        "FEN",
        "TimeControl",
        "Termination",
        "PlyCount",
        "GameStartTime",
        "GameDuration",
    ] {
        assert_eq!(pgn_tags(&pgn, tag).len(), 4, "tag {tag}");
    }
    let mut rounds = pgn_tags(&pgn, "Round");
    rounds.sort();
    assert_eq!(rounds, ["1.1", "1.2", "2.1", "2.2"]);
    // Engine moves carry {score/depth time}.
    assert!(text.contains("s}"), "{text}");
    assert!(text.lines().any(|l| l.contains('/') && l.contains('{')));
}

/// Runs a match of coherent against itself at 1,500 nodes with `extra`, writing `pgn`; returns
/// the summary and the games' White and FEN tags.
fn node_match_games(pgn: &Path, extra: &[&str]) -> (Value, Vec<String>, Vec<String>) {
    let (c1, c2) = (coherent_spec("c1"), coherent_spec("c2"));
    let mut args = vec![
        "match",
        "--engine",
        &c1,
        "--engine",
        &c2,
        "--nodes",
        "1500",
        "--concurrency",
        "1",
        "--json",
        "--pgn-out",
        pgn.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = oracle(&args);
    assert_eq!(output.code, 0, "{}", output.stderr);
    let json = serde_json::from_str(&output.stdout).unwrap();
    (json, pgn_tags(pgn, "White"), pgn_tags(pgn, "FEN"))
}

#[test]
fn without_a_book_every_pair_starts_from_the_start_position_with_colours_swapped() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let (json, white, fen) = node_match_games(&pgn, &["--pairs", "2"]);
    assert_eq!(json["games_played"], 4);
    assert!(json["book"].is_null(), "{json}");
    assert!(
        fen.is_empty(),
        "no SetUp/FEN for the start position: {fen:?}"
    );
    assert_eq!(white, ["c1", "c2", "c1", "c2"]);
}

#[test]
fn a_sequential_book_order_plays_the_file_from_the_top() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let book = book();
    let (json, white, fen) = node_match_games(
        &pgn,
        &[
            "--pairs",
            "3",
            "--book",
            book.to_str().unwrap(),
            "--book-order",
            "sequential",
        ],
    );
    assert_eq!(json["book_order"], "sequential");
    assert_eq!(white, ["c1", "c2", "c1", "c2", "c1", "c2"]);
    let lines: Vec<String> = std::fs::read_to_string(&book)
        .unwrap()
        .lines()
        .take(3)
        .map(str::to_string)
        .collect();
    for (game, fen) in fen.iter().enumerate() {
        assert!(
            fen.starts_with(&lines[game / 2]),
            "game {game}: {fen} is not {}",
            lines[game / 2]
        );
    }
    assert_eq!(fen.len(), 6);
}

#[test]
fn log_writes_each_engine_processes_uci_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let pgn = dir.path().join("games.pgn");
    node_match_games(&pgn, &["--pairs", "1", "--log", logs.to_str().unwrap()]);
    for name in ["c1", "c2"] {
        let files: Vec<PathBuf> = std::fs::read_dir(&logs)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                let file = path.file_name().unwrap().to_str().unwrap();
                file.starts_with(&format!("{name}-")) && file.ends_with(".log")
            })
            .collect();
        assert!(!files.is_empty(), "no log for {name}");
        let text: String = files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect();
        assert!(text.lines().any(|l| l.ends_with("> uci")), "{text}");
        assert!(text.lines().any(|l| l.ends_with("< uciok")), "{text}");
        assert!(text.lines().any(|l| l.contains("< bestmove ")), "{text}");
    }
}

/// Runs a one-pair match with `first` against coherent and returns its exit code and stderr.
fn refused_match(first: &str, extra: &[&str]) -> (i32, String) {
    let book = book();
    let second = coherent_spec("good");
    let mut args = vec![
        "match",
        "--engine",
        first,
        "--engine",
        &second,
        "--nodes",
        "500",
        "--book",
        book.to_str().unwrap(),
        "--start-timeout",
        "2",
    ];
    args.extend_from_slice(extra);
    let output = oracle(&args);
    assert!(output.stdout.is_empty(), "no game is scored");
    (output.code, output.stderr)
}

#[test]
fn an_engine_without_a_handshake_is_refused_before_the_first_game() {
    // `cat` repeats `uci` and would never say `uciok`: refused at once, not after the
    // start-up deadline (issue 49); `true` exits at once.
    let started = std::time::Instant::now();
    let (code, stderr) = refused_match("cmd=/bin/cat", &["--pairs", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("start-up check failed: engine `cat` sent a malformed line")
            && stderr.contains("not a UCI engine"),
        "{stderr}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let (code, stderr) = refused_match("cmd=/bin/true", &["--pairs", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("engine `true` disconnected while waiting for uciok"),
        "{stderr}"
    );
}

#[test]
fn an_option_the_engine_does_not_declare_is_refused() {
    let spec = format!("cmd={},name=typo,option.NoSuchOpt=3", coherent().display());
    let (code, stderr) = refused_match(&spec, &["--pairs", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("engine `typo`: option.NoSuchOpt=3: the engine declares no option"),
        "{stderr}"
    );
}

#[test]
fn an_option_value_of_the_wrong_type_or_range_is_refused() {
    for (value, reason) in [("abc", "is not an integer"), ("0", "is out of range")] {
        let spec = format!("cmd={},name=bad,option.Hash={value}", coherent().display());
        let (code, stderr) = refused_match(&spec, &["--pairs", "1"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!("engine `bad`: option.Hash={value}: "))
                && stderr.contains(reason)
                && stderr.contains("Hash: spin 1..="),
            "{stderr}"
        );
    }
}

#[test]
fn zero_pairs_are_refused() {
    let (code, stderr) = refused_match(&coherent_spec("c1"), &["--pairs", "0"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--pairs must be at least 1"), "{stderr}");
}

#[test]
fn time_odds_give_each_engine_its_own_clock_in_go_the_pgn_and_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (pgn, logs) = (dir.path().join("games.pgn"), dir.path().join("logs"));
    let fast = format!("{},tc=1+0.01", coherent_spec("fast"));
    let slow = format!("{},tc=2+0.02", coherent_spec("slow"));
    let (json, output) = match_json(
        [&fast, &slow],
        &[
            "--pairs",
            "1",
            "--concurrency",
            "1",
            "--maxmoves",
            "10",
            "--pgn-out",
            pgn.to_str().unwrap(),
            "--log",
            logs.to_str().unwrap(),
        ],
    );
    assert_eq!(output.code, 0, "{json}");
    assert_eq!(json["tc"], "1+0.01");
    assert_eq!(json["time_controls"], json!(["1+0.01", "2+0.02"]));
    // Colours swap within the pair, and each engine's clock goes with it (cutechess's tags).
    assert_eq!(pgn_tags(&pgn, "WhiteTimeControl"), ["1+0.01", "2+0.02"]);
    assert_eq!(pgn_tags(&pgn, "BlackTimeControl"), ["2+0.02", "1+0.01"]);
    assert!(pgn_tags(&pgn, "TimeControl").is_empty());
    // What the engines were told: both clocks and both increments, each side its own.
    let traffic: String = std::fs::read_dir(&logs)
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    for first_move in [
        "> go wtime 1010 btime 2020 winc 10 binc 20",
        "> go wtime 2020 btime 1010 winc 20 binc 10",
    ] {
        assert!(
            traffic.lines().any(|l| l.ends_with(first_move)),
            "{first_move}: {traffic}"
        );
    }

    // The same match written with --tc for one of them, in the human summary's title.
    let book = book();
    let plain = coherent_spec("slow");
    let output = oracle(&[
        "match",
        "--engine",
        &fast,
        "--engine",
        &plain,
        "--tc",
        "2+0.02",
        "--pairs",
        "1",
        "--concurrency",
        "1",
        "--maxmoves",
        "10",
        "--book",
        book.to_str().unwrap(),
    ]);
    let text = &output.stdout;
    assert_eq!(output.code, 0, "{text}");
    assert!(text.contains("fast vs slow (1+0.01 vs 2+0.02, "), "{text}");
}

#[test]
fn time_odds_need_a_clock_for_each_engine() {
    let with_tc = |tc: &str| format!("{},name=odds,tc={tc}", coherent_spec("c1"));
    // Against the other engine's `--nodes 500`: a clock and a node limit cannot share `go`.
    let (code, stderr) = refused_match(&with_tc("1+0.01"), &["--pairs", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the engines' time controls differ (1+0.01 against nodes=500)"),
        "{stderr}"
    );
    let (code, stderr) = refused_match(&with_tc("fast"), &["--pairs", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("tc: invalid time control `fast`"),
        "{stderr}"
    );
    // No limit for the second engine at all.
    let (first, second) = (with_tc("1+0.01"), coherent_spec("c2"));
    let output = oracle(&["match", "--engine", &first, "--engine", &second]);
    let stderr = &output.stderr;
    assert_eq!(output.code, 2, "{stderr}");
    assert!(
        stderr.contains("the second engine has no time control"),
        "{stderr}"
    );
}

/// Plays one pair with `faulty` as the first engine and checks both games are lost its way.
fn assert_fault(faulty: &str, limit: &[&str], termination: &str, pgn_termination: &str) {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let mut extra = vec![
        "--pairs",
        "1",
        "--concurrency",
        "1",
        "--pgn-out",
        pgn.to_str().unwrap(),
    ];
    extra.extend_from_slice(limit);
    let json = played_match([faulty, &coherent_spec("good")], &extra);
    assert_eq!(json["games_played"], 2, "{json}");
    assert_eq!(json["losses"], 2, "{json}");
    assert_eq!(json["pentanomial"], serde_json::json!([1, 0, 0, 0, 0]));
    assert_eq!(json["terminations"][termination], 2, "{json}");
    assert_eq!(json["faults"]["first"], 2);
    assert_eq!(json["faults"]["second"], 0);
    // Both games ended in a fault: none is left to score the play by.
    assert_eq!(
        json["fault_free_wdl"],
        serde_json::json!([0, 0, 0]),
        "{json}"
    );
    assert_eq!(
        pgn_tags(&pgn, "Termination"),
        [pgn_termination, pgn_termination]
    );
    assert_eq!(pgn_tags(&pgn, "Result"), ["0-1", "1-0"]);
}

#[test]
fn crash_at_move_k_is_a_disconnect_and_the_engine_is_restarted() {
    assert_fault(
        &fault_spec("crasher", "crash", 3, ""),
        &["--nodes", "1000"],
        "disconnect",
        "disconnect",
    );
}

#[test]
fn hang_is_a_time_forfeit_at_the_read_deadline() {
    let started = Instant::now();
    assert_fault(
        &fault_spec("hanger", "hang", 2, ""),
        &["--nodes", "1000", "--move-timeout", "1"],
        "time_forfeit",
        "time forfeit",
    );
    // Two deadlines of 1 s plus two stop drains of at most 1 s each, and engine start-ups.
    assert!(started.elapsed() < Duration::from_secs(25));
}

#[test]
fn illegal_move_loses() {
    assert_fault(
        &fault_spec("cheat", "illegal", 2, ""),
        &["--nodes", "1000"],
        "illegal_move",
        "illegal move",
    );
}

#[test]
fn an_overlong_line_is_a_malformed_line_that_loses() {
    // 4 MiB without a newline, then a real search: an oracle without a bound on a line reads it
    // all (and would read 1.5 GB as well) and lets the game go on.
    assert_fault(
        &fault_spec("flooder", "flood", 2, ""),
        &["--nodes", "1000"],
        "illegal_move",
        "illegal move",
    );
}

#[test]
fn late_answer_loses_on_time() {
    // Answers 1.5 s after a 1 s clock: past the clock and the 100 ms margin.
    assert_fault(
        &fault_spec("slow", "late", 2, "1500"),
        &["--tc", "1+0"],
        "time_forfeit",
        "time forfeit",
    );
}

#[test]
fn late_answer_in_a_node_game_hits_the_read_deadline() {
    // The deadline (1 s) fires first; `stop` then drains the answer at 1.5 s.
    assert_fault(
        &fault_spec("slow", "late", 1, "1500"),
        &["--nodes", "1000", "--move-timeout", "1"],
        "time_forfeit",
        "time forfeit",
    );
}

#[test]
fn cpu_burnt_in_the_opponents_turn_loses_a_timed_game() {
    // From its second move on, four threads of the engine spin whenever coherent thinks. At
    // time odds coherent thinks six times longer, so the spinning shows even when other work
    // leaves them little of the machine.
    assert_fault(
        &format!("{},tc=0.5+0.005", fault_spec("burner", "burn", 2, "")),
        &["--tc", "3+0.03"],
        "cpu_outside_turn",
        "cpu outside turn",
    );
}

/// Article 6.7 where the oracle can make cgroups: CPU burnt by processes that exit unreaped
/// (their parent ignores `SIGCHLD`), which the `/proc` tree never sees, still loses the game.
#[test]
fn cpu_burnt_by_unreaped_children_loses_a_timed_game() {
    if !oracle::builder::sandbox::cpu_account::CpuAccount::available() {
        eprintln!("SKIPPED: no writable cgroup2 mount here (not root?): no CPU accounts");
        return;
    }
    // The spinner runs from each of the burner's answers to its next `go`, in the opponent's
    // turns; at time odds those are six times longer than its own, so it shows in both games
    // even when other work leaves it little of the machine.
    let json = played_match(
        [
            &format!(
                "{},tc=0.5+0.005",
                fault_spec("burner", "burn-unreaped", 2, "")
            ),
            &coherent_spec("good"),
        ],
        &["--pairs", "1", "--concurrency", "1", "--tc", "3+0.03"],
    );
    // Where the account can be frozen, the spinner is frozen with its engine in the opponent's
    // turn and takes nothing from it: the burner wins nothing and only starves itself (its
    // processes may pile up frozen until it can start no search thread, a fault of its own).
    // Elsewhere the account catches the CPU its unreaped children used.
    if oracle::builder::sandbox::cpu_account::CpuAccount::freezer_available() {
        assert_eq!(
            (&json["wins"], &json["faults"]["second"]),
            (&serde_json::json!(0), &serde_json::json!(0)),
            "{json}"
        );
    } else {
        assert_eq!(
            (
                &json["losses"],
                &json["faults_by_kind"]["first"]["cpu_outside_turn"]
            ),
            (&serde_json::json!(2), &serde_json::json!(2)),
            "{json}"
        );
    }
}

/// The leaky engine of `tests/fixtures/play/leaky_engine.rs`, compiled once.
fn leaky_engine() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| compile_fixture_engine("leaky_engine"))
}

/// Issue 45: an engine that reserves a search thread's stack at every `go` and never releases
/// it (Ethereal 12) reserves gigabytes of address space in one game while its resident memory
/// stays small. Under the address-space limit it lost on time once a thread could no longer
/// be made; with memory bounded by what is resident, it plays every game to its end.
#[test]
fn an_engine_that_never_joins_its_search_threads_plays_its_games_out() {
    let leaky = format!(
        "cmd={},name=leaky,bind={coherent},arg={coherent}",
        leaky_engine().display(),
        coherent = coherent().display()
    );
    let json = played_match(
        [&leaky, &coherent_spec("good")],
        &["--tc", "2+0.02", "--pairs", "2", "--concurrency", "1"],
    );
    assert_eq!(json["games_counted"], 4, "{json}");
    assert_eq!(
        (&json["faults"]["first"], &json["faults"]["second"]),
        (&serde_json::json!(0), &serde_json::json!(0)),
        "{json}"
    );
}

/// Issue 46, memory across a pair: an engine that plays its second game in a process unlike
/// its first (here it searches four times the nodes) could replay a lost game and deviate from
/// a won one. With a fresh process for every game it never has a second game, so at a node
/// limit each pair repeats its first game, as two copies of the same engine must.
#[test]
fn no_engine_remembers_a_game_in_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let json = played_match(
        [
            &fault_spec("rememberer", "remember", 4, ""),
            &coherent_spec("good"),
        ],
        &[
            "--nodes",
            "2000",
            "--pairs",
            "3",
            "--concurrency",
            "1",
            "--book-order",
            "sequential",
            "--pgn-out",
            pgn.to_str().unwrap(),
        ],
    );
    assert_eq!(json["games_counted"], 6, "{json}");
    // The move text of each game (tags and comments aside), in file order: pair by pair.
    let text = std::fs::read_to_string(&pgn).unwrap();
    let games: Vec<String> = text
        .split("\n\n[Event ")
        .map(|game| {
            let moves = game.split("\n\n").nth(1).unwrap_or_default();
            let mut plain = String::new();
            let mut depth = 0;
            for c in moves.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ if depth == 0 => plain.push(c),
                    _ => {}
                }
            }
            plain.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect();
    assert_eq!(games.len(), 6, "{text}");
    for pair in games.chunks(2) {
        assert_eq!(
            pair[0], pair[1],
            "a pair's second game deviates from its first"
        );
    }
}

/// Issue 46, thinking before `readyok`: the runner's pings before `go` are off the clock, so an
/// engine that thinks there, knowing the position, must pay for it: where the engine can be
/// frozen its CPU in the pings is charged to its clock (it loses on time), elsewhere it is CPU
/// outside its turn.
#[test]
fn thinking_in_a_ping_is_charged() {
    let json = played_match(
        [
            &fault_spec("thinker", "think", 150, ""),
            &coherent_spec("good"),
        ],
        &["--tc", "1+0.01", "--pairs", "1", "--concurrency", "1"],
    );
    assert_eq!(json["faults"]["first"], 2, "{json}");
    let kinds = &json["faults_by_kind"]["first"];
    assert_eq!(
        kinds["time_forfeit"].as_u64().unwrap() + kinds["cpu_outside_turn"].as_u64().unwrap(),
        2,
        "{json}"
    );
}

#[test]
fn honest_engines_at_a_fast_clock_use_no_cpu_outside_their_turn() {
    // Both cores busy with two games at once, as in a stage; each engine is single-threaded.
    let json = played_match(
        [&coherent_spec("c1"), &coherent_spec("c2")],
        &["--tc", "1+0.01", "--pairs", "4", "--concurrency", "2"],
    );
    assert_eq!(json["games_counted"], 8, "{json}");
    assert_eq!(json["terminations"]["cpu_outside_turn"], 0, "{json}");
}

#[test]
fn no_readyok_is_a_stall() {
    assert_fault(
        &fault_spec("staller", "stall", 1, ""),
        &["--nodes", "1000", "--ready-timeout", "1"],
        "stall",
        "stall",
    );
}

#[test]
fn runner_failure_stops_the_run_without_counting() {
    let dir = tempfile::tempdir().unwrap();
    let not_executable = dir.path().join("engine");
    std::fs::write(&not_executable, "not a program").unwrap();
    let state = dir.path().join("state.json");
    let spec = format!("cmd={}", not_executable.display());
    let book = book();
    let output = oracle(&[
        "match",
        "--engine",
        &spec,
        "--engine",
        &coherent_spec("good"),
        "--nodes",
        "500",
        "--pairs",
        "2",
        "--book",
        book.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    assert_eq!(output.code, 2);
    let stderr = &output.stderr;
    // The start-up check meets the unusable binary before any pair is played.
    assert!(
        stderr.contains("start-up check failed: cannot start engine"),
        "{stderr}"
    );
    assert!(
        !state.exists()
            || std::fs::read_to_string(&state)
                .unwrap()
                .contains("\"pairs\":[]")
    );
}

#[test]
fn live_sprt_stops_early_and_reports_played_versus_counted() {
    // The first engine crashes on its first move of every game: H0 is accepted quickly.
    let (json, output) = match_json(
        [
            &fault_spec("crasher", "crash", 1, ""),
            &coherent_spec("good"),
        ],
        &[
            "--nodes",
            "500",
            "--pairs",
            "200",
            "--concurrency",
            "2",
            "--sprt",
            "elo0=0,elo1=50",
        ],
    );
    assert_eq!(output.code, 1, "accept_h0 exits 1");
    assert_eq!(json["stopped_early"], true);
    assert_eq!(json["sprt"]["state"], "accept_h0");
    let counted = json["pairs_counted"].as_u64().unwrap();
    assert!(counted < 200);
    assert_eq!(json["sprt"]["pairs"], counted);
    assert!(json["games_played"].as_u64().unwrap() >= 2 * counted);
    assert_eq!(json["pentanomial"][0], counted);
}

#[test]
fn killed_run_resumes_without_losing_or_repeating_a_pair() {
    let dir = tempfile::tempdir().unwrap();
    let (state, pgn) = (dir.path().join("state.json"), dir.path().join("games.pgn"));
    let book = book();
    let (first, second) = (coherent_spec("c1"), coherent_spec("c2"));
    let args = [
        "match",
        "--engine",
        &first,
        "--engine",
        &second,
        "--nodes",
        "800",
        "--pairs",
        "8",
        "--concurrency",
        "2",
        "--seed",
        "11",
        "--adjudicate-fishtest",
        "--book",
        book.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--pgn-out",
        pgn.to_str().unwrap(),
        "--json",
    ];
    let mut child = Command::new(ORACLE)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill as soon as at least two pairs are recorded, mid-match.
    wait_for_counted_pairs(&state, 2);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let at_kill: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let killed_pairs = at_kill["pairs"].as_array().unwrap().len();
    assert!(killed_pairs < 8, "the run finished before the kill");

    let resumed = oracle(&args);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let json: Value = serde_json::from_str(&resumed.stdout).unwrap();
    assert_eq!(json["pairs_counted"], 8);
    let mut rounds = pgn_tags(&pgn, "Round");
    rounds.sort();
    let mut expected: Vec<String> = (1..=8)
        .flat_map(|p| [format!("{p}.1"), format!("{p}.2")])
        .collect();
    expected.sort();
    assert_eq!(rounds, expected, "every pair exactly once in the PGN");
    let state: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let mut indices: Vec<u64> = state["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    // The pairs recorded before the kill are kept as they were.
    assert_eq!(
        state["pairs"].as_array().unwrap()[..killed_pairs],
        at_kill["pairs"].as_array().unwrap()[..]
    );
    indices.sort_unstable();
    assert_eq!(indices, (0..8).collect::<Vec<_>>());
}

/// `oracle match` arguments for two Coherents `c1` and `c2` at `nodes` per move, one worker,
/// the test book, then `extra`.
fn coherent_match_args(nodes: &str, pairs: &str, extra: &[&str]) -> Vec<String> {
    let book = book();
    let mut args: Vec<String> = [
        "match",
        "--engine",
        &coherent_spec("c1"),
        "--engine",
        &coherent_spec("c2"),
        "--nodes",
        nodes,
        "--pairs",
        pairs,
        "--concurrency",
        "1",
        "--book",
        book.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

/// The pair numbers of the live log's `Finished game N (pair P, game G)` lines.
fn logged_pairs(log: &str) -> Vec<u64> {
    log.lines()
        .filter_map(|l| l.split_once("(pair ")?.1.split_once(',')?.0.parse().ok())
        .collect()
}

#[test]
fn a_piped_run_logs_every_game_and_periodic_summaries_with_the_sprt_bounds() {
    let args = coherent_match_args(
        "300",
        "4",
        &["--elo0", "0", "--elo1", "5", "--report-every", "4"],
    );
    let output = Run::from(Command::new(ORACLE).args(&args).output().unwrap());
    let log = &output.stdout;
    assert_eq!(output.code, 0, "{log}");
    let games: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("Finished game "))
        .collect();
    assert_eq!(games.len(), 8, "{log}");
    assert!(
        games[0].starts_with("Finished game 1 (pair 1, game 1): c1 vs c2: "),
        "{log}"
    );
    assert!(
        games[1].starts_with("Finished game 2 (pair 1, game 2): c2 vs c1: "),
        "{log}"
    );
    assert!(games.iter().all(|l| l.ends_with(" plies")), "{log}");
    let summaries: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("Summary after "))
        .collect();
    assert_eq!(summaries.len(), 2, "{log}");
    assert!(
        summaries[0].starts_with("Summary after 4 games: W-D-L "),
        "{log}"
    );
    assert!(log.contains("in [-2.94, 2.94] for [0, 5] nElo"), "{log}");
    assert!(log.contains("nElo") && log.contains("(95%)"), "{log}");
}

#[test]
fn a_log_line_to_a_closed_standard_output_stops_the_match_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    // The reader is gone before the first game's line (`| head -c0`).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = Run::from(
        Command::new(ORACLE)
            .args(coherent_match_args(
                "300",
                "50",
                &["--state", state.to_str().unwrap()],
            ))
            .current_dir(dir.path())
            .stdout(writer)
            .output()
            .unwrap(),
    );
    let stderr = &output.stderr;
    assert_eq!(output.code, 141, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Stopped as on SIGINT, not played to the end: the state holds what was counted.
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert!(saved["pairs"].as_array().unwrap().len() < 50, "{saved}");
}

#[test]
fn an_interrupted_run_prints_its_resume_command_which_finishes_without_replaying_a_pair() {
    let dir = tempfile::tempdir().unwrap();
    let (state, pgn) = (dir.path().join("state.json"), dir.path().join("games.pgn"));
    let child = Command::new(ORACLE)
        .args(coherent_match_args(
            "2000",
            "6",
            &[
                "--pgn-out",
                pgn.to_str().unwrap(),
                "--state",
                state.to_str().unwrap(),
            ],
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_counted_pairs(&state, 1);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let interrupted = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&interrupted.stdout).to_string();
    assert_eq!(
        interrupted.status.code(),
        Some(130),
        "{log}{}",
        String::from_utf8_lossy(&interrupted.stderr)
    );
    assert!(
        log.contains("Results of c1 vs c2"),
        "the partial summary: {log}"
    );
    let (_, command) = log.split_once("resume with:\n").expect("a resume command");
    let command = command.lines().next().unwrap();
    let at_interrupt: Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let counted_before: Vec<u64> = at_interrupt["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_u64().unwrap() + 1)
        .collect();
    assert!(
        !counted_before.is_empty() && counted_before.len() < 6,
        "{log}"
    );

    let resumed = Command::new("sh").args(["-c", command]).output().unwrap();
    let resumed_log = String::from_utf8_lossy(&resumed.stdout);
    assert!(resumed.status.success(), "{resumed_log}");
    let replayed: Vec<u64> = logged_pairs(&resumed_log)
        .into_iter()
        .filter(|p| counted_before.contains(p))
        .collect();
    assert!(
        replayed.is_empty(),
        "pairs played twice: {replayed:?}\n{resumed_log}"
    );
    let mut rounds = pgn_tags(&pgn, "Round");
    rounds.sort();
    let mut expected: Vec<String> = (1..=6)
        .flat_map(|p| [format!("{p}.1"), format!("{p}.2")])
        .collect();
    expected.sort();
    assert_eq!(rounds, expected, "every pair exactly once in the PGN");
}

#[test]
fn two_shards_merged_equal_one_run_and_bad_merges_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (coherent_spec("c1"), coherent_spec("c2"));
    let common = [
        "--nodes",
        "600",
        "--pairs",
        "6",
        "--seed",
        "5",
        "--concurrency",
        "2",
        "--adjudicate-fishtest",
    ];
    let state = dir.path().join("whole.json");
    let mut whole_args = common.to_vec();
    whole_args.extend(["--state", state.to_str().unwrap()]);
    let (whole, _) = match_json([&first, &second], &whole_args);

    let shard_files: Vec<PathBuf> = (1..=2)
        .map(|k| dir.path().join(format!("s{k}.json")))
        .collect();
    for (k, file) in shard_files.iter().enumerate() {
        let shard = format!("{}/2", k + 1);
        let mut args = common.to_vec();
        args.extend(["--shard", &shard, "--shard-out", file.to_str().unwrap()]);
        let (json, output) = match_json([&first, &second], &args);
        assert_eq!(output.code, 0);
        assert_eq!(json["pairs_counted"], 3);
    }
    let files: Vec<&str> = shard_files.iter().map(|f| f.to_str().unwrap()).collect();
    // The merger played shard 1 and takes its fingerprint as the plan.
    let merged = oracle(&["merge", "--plan", files[0], files[0], files[1], "--json"]);
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    let merged: Value = serde_json::from_str(&merged.stdout).unwrap();
    for key in [
        "pairs_counted",
        "wins",
        "draws",
        "losses",
        "pentanomial",
        "terminations",
    ] {
        assert_eq!(merged[key], whole[key], "{key}");
    }
    // Pair by pair, too: coherent's node-limited search is deterministic.
    let whole_state: Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let mut whole_pairs = whole_state["pairs"].as_array().unwrap().clone();
    whole_pairs.sort_by_key(|p| p["index"].as_u64());
    let mut shard_pairs: Vec<Value> = shard_files
        .iter()
        .flat_map(|f| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            v["pairs"].as_array().unwrap().clone()
        })
        .collect();
    shard_pairs.sort_by_key(|p| p["index"].as_u64());
    assert_eq!(shard_pairs, whole_pairs);

    let with_sprt = oracle(&[
        "merge",
        "--plan",
        files[0],
        files[0],
        files[1],
        "--sprt",
        "elo0=-50,elo1=50",
        "--json",
    ]);
    let with_sprt: Value = serde_json::from_str(&with_sprt.stdout).unwrap();
    assert!(with_sprt["sprt"]["llr"].is_number());

    let overlap = oracle(&["merge", "--plan", files[0], files[0], files[0]]);
    assert_eq!(overlap.code, 2);
    assert!(overlap.stderr.contains("both are shard 1/2"));

    // The plan is not optional: shards that only agree with each other prove nothing.
    let unbound = oracle(&["merge", files[0], files[1]]);
    assert_eq!(unbound.code, 2);
    assert!(
        unbound.stderr.contains("--plan <FILE>"),
        "{}",
        unbound.stderr
    );
}

/// Issue 12, attack 3 on `oracle merge`: a forged shard — its tally still recomputing from its
/// pairs, but with another engine hash, time control, book, seed, pair count, cut or
/// adjudication — is refused against the plan, naming the file and the field; so is a shard
/// whose tally was edited. The honest shards merge.
#[test]
fn merge_refuses_forged_shards_naming_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (coherent_spec("c1"), coherent_spec("c2"));
    let args = [
        "--nodes",
        "300",
        "--pairs",
        "4",
        "--seed",
        "9",
        "--concurrency",
        "2",
    ];
    let honest: Vec<PathBuf> = (1..=2)
        .map(|k| {
            let file = dir.path().join(format!("honest-{k}.json"));
            let shard = format!("{k}/2");
            let mut args = args.to_vec();
            args.extend(["--shard", &shard, "--shard-out", file.to_str().unwrap()]);
            let (_, output) = match_json([&first, &second], &args);
            assert_eq!(output.code, 0);
            file
        })
        .collect();
    let plan = dir.path().join("plan.json");
    let played: Value = serde_json::from_slice(&std::fs::read(&honest[0]).unwrap()).unwrap();
    std::fs::write(&plan, played["fingerprint"].to_string()).unwrap();
    let merge = |files: &[&Path]| {
        let mut args = vec!["merge", "--json", "--plan", plan.to_str().unwrap()];
        args.extend(files.iter().map(|f| f.to_str().unwrap()));
        oracle(&args)
    };
    // A shard merged with an honest one is refused with exit 2 and a JSON error that `says`.
    let refused = |shard: &Path, says: &str| {
        let output = merge(&[&honest[0], shard]);
        let error = json_error(&output.stdout);
        assert_eq!(output.code, 2, "{error}");
        assert!(error.contains(says), "`{says}` missing: {error}");
    };
    let merged = merge(&[&honest[0], &honest[1]]);
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    let merged: Value = serde_json::from_str(&merged.stdout).unwrap();
    assert_eq!(merged["pairs_counted"], 4, "{merged}");

    let forgeries: [(&str, &str, Value); 7] = [
        ("engines", "sha256", Value::from("0".repeat(64))),
        ("clock", "tc", json!({"nodes": 301})),
        ("book", "book_sha256", Value::from("0".repeat(64))),
        ("seed", "seed", Value::from(10)),
        ("pairs", "pairs", Value::from(6)),
        ("shard count", "shards", Value::from(4)),
        (
            "adjudication",
            "adjudication",
            json!({"draw": null, "resign": null, "max_moves": 20}),
        ),
    ];
    for (field, key, value) in forgeries {
        let forged = dir.path().join(format!("forged-{key}.json"));
        let mut shard: Value = serde_json::from_slice(&std::fs::read(&honest[1]).unwrap()).unwrap();
        match key {
            "sha256" => shard["fingerprint"]["engines"][1]["sha256"] = value,
            "tc" => shard["fingerprint"]["clock"]["tc"] = value,
            _ => shard["fingerprint"][key] = value,
        }
        std::fs::write(&forged, shard.to_string()).unwrap();
        refused(
            &forged,
            &format!(
                "{} was not played under the plan: its {field} differs",
                forged.display()
            ),
        );
    }

    let edited = dir.path().join("edited.json");
    let mut shard: Value = serde_json::from_slice(&std::fs::read(&honest[1]).unwrap()).unwrap();
    shard["tally"]["wins"] = Value::from(shard["tally"]["wins"].as_u64().unwrap() + 1);
    std::fs::write(&edited, shard.to_string()).unwrap();
    refused(
        &edited,
        &format!(
            "{} is inconsistent: its tally does not match its pairs",
            edited.display()
        ),
    );
}

/// Issue 46, "a forged shard": the plan's real fingerprint, invented results and the tally
/// recomputed from them. The merge holds each shard against its PGN (next to it, `FILE.pgn`):
/// results, terminations, plies, identical-game flags, one game per claimed game and no other,
/// and the PGN's sha256. Each forgery is refused with exit 2, naming the file, pair, game and
/// field.
#[test]
fn merge_refuses_a_shard_whose_pgn_does_not_show_its_pairs() {
    use oracle::play::game::{GameResult, Termination};
    use oracle::play::shard::ShardResult;
    use oracle::play::tally::Tally;

    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (coherent_spec("c1"), coherent_spec("c2"));
    let honest: Vec<PathBuf> = (1..=2)
        .map(|k| {
            let file = dir.path().join(format!("honest-{k}.json"));
            let shard = format!("{k}/2");
            let pgn = file.with_extension("pgn");
            let mut args = vec!["--nodes", "300", "--pairs", "4", "--seed", "9"];
            args.extend(["--concurrency", "2", "--shard", &shard]);
            args.extend(["--shard-out", file.to_str().unwrap()]);
            args.extend(["--pgn-out", pgn.to_str().unwrap()]);
            let (_, output) = match_json([&first, &second], &args);
            assert_eq!(output.code, 0);
            file
        })
        .collect();
    let plan = honest[0].to_str().unwrap();
    let merge = |files: &[&Path]| {
        let mut args = vec!["merge", "--json", "--plan", plan];
        args.extend(files.iter().map(|f| f.to_str().unwrap()));
        oracle(&args)
    };
    let merged = merge(&[&honest[0], &honest[1]]);
    assert_eq!(merged.code, 0, "{}", json_error(&merged.stdout));
    let refused = |shard: &Path, says: &str| {
        let output = merge(&[&honest[0], shard]);
        let stdout = &output.stdout;
        assert_eq!(output.code, 2, "merged: {stdout}");
        let error = json_error(&output.stdout);
        assert!(error.contains(says), "`{says}` missing: {error}");
    };
    let real: ShardResult = serde_json::from_slice(&std::fs::read(&honest[1]).unwrap()).unwrap();
    let real_pgn = std::fs::read_to_string(honest[1].with_extension("pgn")).unwrap();
    // A forged shard file `name`, its tally recomputed, next to a copy of the real PGN.
    let forge = |name: &str, edit: &dyn Fn(&mut ShardResult)| {
        let mut shard = real.clone();
        edit(&mut shard);
        shard.tally = Tally::of(&shard.pairs);
        let file = dir.path().join(format!("forged-{name}.json"));
        std::fs::write(&file, serde_json::to_vec(&shard).unwrap()).unwrap();
        std::fs::write(file.with_extension("pgn"), &real_pgn).unwrap();
        file
    };
    let pair = real.pairs[0];
    let at = |game: usize| format!("pair {} game {}", pair.index + 1, game + 1);

    // The attack: every pair a double win for the first engine.
    let forged = forge("double-wins", &|shard| {
        for pair in &mut shard.pairs {
            pair.games[0].result = GameResult::WhiteWins;
            pair.games[1].result = GameResult::BlackWins;
        }
    });
    // The first forged game in the PGN's order (the order the pairs finished in) is named.
    let claimed = [GameResult::WhiteWins, GameResult::BlackWins];
    // The pair number of each game in the PGN (`Round` is `PAIR.GAME`).
    let rounds: Vec<u64> = pgn_tags(&honest[1].with_extension("pgn"), "Round")
        .iter()
        .map(|round| round.split_once('.').unwrap().0.parse().unwrap())
        .collect();
    let (first_forged, game) = rounds
        .iter()
        .step_by(2)
        .map(|&number| real.pairs.iter().find(|p| p.index + 1 == number).unwrap())
        .find_map(|pair| {
            let game = (0..2).find(|&g| pair.games[g].result != claimed[g])?;
            Some((pair, game))
        })
        .expect("a pair that was no double win");
    refused(
        &forged,
        &format!(
            "{}: pair {} game {}: result: the PGN says {}, the shard claims {}",
            forged.display(),
            first_forged.index + 1,
            game + 1,
            first_forged.games[game].result.pgn(),
            claimed[game].pgn()
        ),
    );

    let other = match pair.games[1].termination {
        Termination::Normal => Termination::Adjudication,
        _ => Termination::Normal,
    };
    let forged = forge("termination", &|shard| {
        shard.pairs[0].games[1].termination = other;
    });
    refused(
        &forged,
        &format!(
            "{}: {}: termination: the PGN says {}, the shard claims {}",
            forged.display(),
            at(1),
            pair.games[1].termination.pgn_tag(),
            other.pgn_tag()
        ),
    );

    let forged = forge("plies", &|shard| shard.pairs[0].games[0].plies += 1);
    refused(
        &forged,
        &format!(
            "{}: {}: plies: the PGN says {}, the shard claims {}",
            forged.display(),
            at(0),
            pair.games[0].plies,
            pair.games[0].plies + 1
        ),
    );

    let forged = forge("identical", &|shard| {
        shard.pairs[0].identical_games = !pair.identical_games;
    });
    let yes_no = |yes: bool| if yes { "yes" } else { "no" };
    refused(
        &forged,
        &format!(
            "{}: pair {}: identical games: the PGN says {}, the shard claims {}",
            forged.display(),
            pair.index + 1,
            yes_no(pair.identical_games),
            yes_no(!pair.identical_games)
        ),
    );

    // A pair left out of the claims (its games stay in the PGN), and games left out of the PGN.
    let last = real.pairs.last().unwrap().index + 1;
    let forged = forge("fewer-pairs", &|shard| {
        shard.pairs.pop();
    });
    refused(
        &forged,
        &format!(
            "{}: pair {last}: games: the PGN says 2, the shard claims none",
            forged.display()
        ),
    );
    // The PGN without its last pair's games, its digest in the shard.
    let cut = real_pgn.match_indices("[Event ").nth(2).unwrap().0;
    let fewer_games = &real_pgn[..cut];
    let forged = forge("fewer-games", &|shard| {
        shard.pgn_sha256 = Some(oracle::integrity::sha256_hex(fewer_games.as_bytes()));
    });
    std::fs::write(forged.with_extension("pgn"), fewer_games).unwrap();
    refused(
        &forged,
        &format!(
            "{}: pair {}: games: the PGN says none, the shard claims 2",
            forged.display(),
            rounds[2]
        ),
    );

    // The PGN must be the one the shard was written with, and be there.
    let forged = forge("edited-pgn", &|_| {});
    std::fs::write(forged.with_extension("pgn"), format!("{real_pgn}\n")).unwrap();
    refused(
        &forged,
        &format!("{}: its sha256 is ", forged.with_extension("pgn").display()),
    );
    let forged = forge("no-pgn", &|_| {});
    std::fs::remove_file(forged.with_extension("pgn")).unwrap();
    refused(
        &forged,
        &format!("{}: ", forged.with_extension("pgn").display()),
    );
    let forged = forge("no-digest", &|shard| shard.pgn_sha256 = None);
    refused(&forged, &format!("{}: no games recorded", forged.display()));
}

/// Issue 12, attack 1: a candidate that kills (or stops) its opponent and overwrites the
/// opponent's binary. In its sandbox it sees neither the process nor the file: the opponent
/// plays every game without a fault, its binary is unchanged, and the attacker wins nothing
/// by it.
#[test]
fn a_candidate_cannot_kill_stop_or_overwrite_its_opponent() {
    let probe = Command::new("bwrap").arg("--version").output();
    if probe.is_err() {
        eprintln!("SKIPPED: bubblewrap is not installed; .ci/run installs it");
        return;
    }
    for mode in ["kill", "stop", "overwrite"] {
        let dir = tempfile::tempdir().unwrap();
        let engines = dir.path().join("engines");
        std::fs::create_dir(&engines).unwrap();
        let predecessor = engines.join("predecessor");
        std::fs::copy(coherent(), &predecessor).unwrap();
        let before = std::fs::read(&predecessor).unwrap();
        let attacker = format!(
            "cmd={},name=candidate,bind={coherent},arg={coherent},arg={},arg={mode},option.Hash=8",
            killer_engine().display(),
            predecessor.display(),
            coherent = coherent().display()
        );
        let opponent = format!(
            "cmd={},name=predecessor,option.Hash=8",
            predecessor.display()
        );
        let (json, output) = match_json(
            [&attacker, &opponent],
            &[
                "--nodes",
                "500",
                "--pairs",
                "4",
                "--concurrency",
                "1",
                "--seed",
                "3",
            ],
        );
        assert_eq!(output.code, 0, "{mode}: {}", output.stderr);
        assert!(
            json["isolation"]
                .as_str()
                .unwrap()
                .starts_with("bubblewrap"),
            "{json}"
        );
        let faults = &json["faults_by_kind"]["second"];
        for kind in ["disconnect", "stall", "illegal_move", "time_forfeit"] {
            assert_eq!(faults[kind], 0, "{mode}: the opponent faulted: {json}");
        }
        assert_eq!(json["games_counted"], 8, "{json}");
        assert!(
            json["wins"].as_u64().unwrap() < 8,
            "{mode}: the attacker won every game: {json}"
        );
        assert_eq!(
            std::fs::read(&predecessor).unwrap(),
            before,
            "{mode}: the opponent's binary was overwritten"
        );
    }
}

/// A compiled engine that tries to become a chess engine installed on the host (Debian's
/// Stockfish): its sandbox holds no such program, so it stays itself.
#[test]
fn an_engine_cannot_hand_its_games_to_a_program_of_the_host() {
    let helper = Path::new("/usr/games/stockfish");
    if Command::new("bwrap").arg("--version").output().is_err() || !helper.is_file() {
        eprintln!(
            "SKIPPED: bubblewrap or Debian's stockfish is not installed; .ci/run installs both"
        );
        return;
    }
    let delegate = compile_fixture_engine("delegate_engine");
    let run = oracle(&[
        "check-engine",
        delegate.to_str().unwrap(),
        "--arg",
        helper.to_str().unwrap(),
        "--timeout",
        "1",
    ]);
    assert!(run.stdout.contains("id name: confined"), "{run:?}");
    assert!(!run.stdout.contains("Stockfish"), "{run:?}");
}

/// Waits (at most a minute) until the match's state file counts at least `pairs` pairs.
fn wait_for_counted_pairs(state: &Path, pairs: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let counted = std::fs::read_to_string(state)
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .map_or(0, |v| v["pairs"].as_array().map_or(0, Vec::len));
        if counted >= pairs {
            return;
        }
        assert!(Instant::now() < deadline, "no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The `error` of the JSON object a command prints on stdout under `--json` when it fails.
fn json_error(stdout: &str) -> String {
    let object: Value = serde_json::from_str(stdout).expect("a JSON error object on stdout");
    object["error"]
        .as_str()
        .expect("an `error` string")
        .to_owned()
}
