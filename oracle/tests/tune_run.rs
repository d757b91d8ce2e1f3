//! `oracle tune run` and `tune pair` through the real binary with a real UCI engine
//! (Stockfish, installed on the build machine, tuned on two of its own UCI options):
//! a killed run resumes to the same state as an uninterrupted one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::ORACLE;

const STOCKFISH: &str = "/usr/games/stockfish";

/// A tiny book of balanced openings.
const BOOK: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n\
rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n\
rnbqkb1r/pppppppp/5n2/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq -\n\
rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -\n";

/// Stockfish's own spin options, in the tunables format.
const PARAMS: &str = "MultiPV, int, 2, 1, 4, 1, 0.002\nnodestime, int, 5, 0, 10, 2, 0.002\n";

fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let (book, params) = (dir.join("book.epd"), dir.join("params.txt"));
    std::fs::write(&book, BOOK).unwrap();
    std::fs::write(&params, PARAMS).unwrap();
    (book, params)
}

fn tune(dir: &Path, sub: &str, games: u64, seed: u64, extra: &[&str]) -> Command {
    let (book, params) = setup(dir);
    let mut cmd = Command::new(ORACLE);
    cmd.args(["tune", sub, "--engine", STOCKFISH, "--params"])
        .arg(params)
        .arg("--book")
        .arg(book)
        .args(["--games", &games.to_string(), "--seed", &seed.to_string()])
        .args([
            "--nodes",
            "300",
            "--pairs-per-duel",
            "2",
            "--bundle",
            "2",
            "--concurrency",
            "2",
        ])
        .args(extra);
    cmd
}

/// Runs `command`, which must succeed; its output.
fn succeeded(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The JSON document in the file at `path`.
fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn killed_run_resumes_to_the_uninterrupted_result() {
    let whole_dir = tempfile::tempdir().unwrap();
    let whole_state = whole_dir.path().join("state.json");
    let out =
        succeeded(tune(whole_dir.path(), "run", 16, 7, &["--json", "--state"]).arg(&whole_state));
    let whole: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(whole["duels"], 4);

    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let mut child = tune(dir.path(), "run", 16, 7, &["--state"])
        .arg(&state)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill as soon as the first bundle is checkpointed.
    let started = Instant::now();
    while !state.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "no checkpoint");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let partial = json_file(&state);
    let done = partial["duels"].as_array().unwrap().len();
    assert!(done < 4, "killed after {done} duels");

    let out = succeeded(tune(dir.path(), "run", 16, 7, &["--json", "--state"]).arg(&state));
    assert!(String::from_utf8_lossy(&out.stderr).contains("resuming"));
    let resumed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(resumed, whole);
    assert_eq!(
        json_file(&state),
        json_file(&whole_state),
        "state files differ"
    );
}

#[test]
fn pair_writes_table_patch_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = succeeded(tune(dir.path(), "pair", 8, 7, &["--json", "--out"]).arg(&out_dir));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rule"], "seed_mean_t1");
    assert_ne!(v["seeds"][0], v["seeds"][1]);
    let rows = v["params"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        for key in [
            "start",
            "run1",
            "run2",
            "t",
            "filter",
            "seed_mean",
            "seed_mean_t1",
        ] {
            assert!(row[key].is_f64(), "{key} in {row}");
        }
    }
    let patch = std::fs::read_to_string(out_dir.join("tunables-seed_mean_t1.txt")).unwrap();
    assert_eq!(patch.lines().count(), 2);
    assert!(patch.starts_with("MultiPV, int, "));
    for file in [
        "run-1.json",
        "run-2.json",
        "table.json",
        "table.md",
        "theta.svg",
    ] {
        assert!(out_dir.join(file).exists(), "{file} missing");
    }
}

#[test]
fn a_state_of_another_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    succeeded(tune(dir.path(), "run", 4, 7, &["--state"]).arg(&state));
    let out = tune(dir.path(), "run", 4, 8, &["--state"])
        .arg(&state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("seed differs"), "{err}");
}
