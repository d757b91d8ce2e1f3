//! `oracle proof run|study` and `oracle tb` end to end, with scripted UCI engines: a perfect one
//! that asks the solver (`oracle tb probe --moves`) and a broken one that only sends `0000`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{ORACLE, oracle};

/// A UCI engine as a shell script; `go` runs `answer` with `$fen` and `$moves` set.
fn script_engine(dir: &Path, name: &str, answer: &str) -> PathBuf {
    let path = dir.join(name);
    let text = format!(
        r#"#!/bin/sh
while read -r line; do
  case "$line" in
    uci) echo "id name {name}"; echo uciok ;;
    isready) echo readyok ;;
    position*)
      set -- $line; shift 2
      fen="$1 $2 $3 $4 $5 $6"; shift 6
      [ "$1" = moves ] && shift
      moves="$*" ;;
    go*) echo "info depth 1 score cp 100 nodes 1"; echo "bestmove $({answer})" ;;
    quit) exit 0 ;;
  esac
done
"#
    );
    std::fs::write(&path, text).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
    path
}

/// A temp dir with a table cache, the perfect engine and the broken engine.
struct Fixture {
    dir: tempfile::TempDir,
    perfect: PathBuf,
    broken: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("tb");
    let probe = format!(
        r#"{ORACLE} tb --cache-dir {} probe "$fen" --moves $moves --json | sed 's/.*"best_move":"\([a-h1-8qrbn]*\)".*/\1/'"#,
        cache.display()
    );
    let perfect = script_engine(dir.path(), "perfect", &probe);
    let broken = script_engine(dir.path(), "broken", "echo 0000");
    Fixture {
        dir,
        perfect,
        broken,
    }
}

impl Fixture {
    /// Runs `oracle proof` with the fixture's table cache; (exit code, stdout, stderr).
    fn oracle(&self, args: &[&str]) -> (i32, String, String) {
        // The perfect engine asks the oracle's solver: it must run outside the sandbox.
        let cache = self.dir.path().join("tb");
        let run = oracle(
            &[
                &[
                    "proof",
                    "--no-sandbox",
                    "--cache-dir",
                    cache.to_str().unwrap(),
                ],
                args,
            ]
            .concat(),
        );
        (run.code, run.stdout, run.stderr)
    }

    fn spec(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }
}

const CONVERSION: &str = "kind: conversion\nnodes: 1000\nrepetitions: 2\ndefender: solver\npositions:\n  - 8/8/8/3k4/8/8/8/K1Q5 w - - 0 1\n  - 8/8/8/8/8/2k5/8/KR6 w - - 0 1\n";

#[test]
fn conversion_passes_for_a_perfect_engine_and_fails_for_a_broken_one() {
    let f = fixture();
    let spec = f.spec("conversion.yaml", CONVERSION);
    let perfect = f.perfect.display().to_string();
    let broken = f.broken.display().to_string();

    let (code, out, _) = f.oracle(&["run", &spec, "--engine", &perfect, "--json"]);
    assert_eq!(code, 0, "{out}");
    let run: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(run["passed"], true);
    assert_eq!(run["detail"]["positions"][0]["converted"], 2);
    assert_eq!(
        run["detail"]["positions"][1]["games"][0]["ending"],
        "converted"
    );

    let (code, out, _) = f.oracle(&["run", &spec, "--engine", &broken, "--json"]);
    assert_eq!(code, 1);
    let run: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        run["detail"]["positions"][0]["games"][0]["ending"]["illegal_move"],
        "0000"
    );

    // The check `oracle verify` makes: fail on the predecessor, pass on the candidate.
    let (code, out, _) = f.oracle(&["run", &spec, "--engine", &perfect, "--baseline", &broken]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fail -> pass: yes"), "{out}");
    let (code, out, _) = f.oracle(&["run", &spec, "--engine", &broken, "--baseline", &perfect]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn unchanged_and_bestmove_specs() {
    let f = fixture();
    let perfect = f.perfect.display().to_string();
    let broken = f.broken.display().to_string();
    let unchanged = f.spec(
        "control.yaml",
        "kind: unchanged\nnodes: 1000\npositions:\n  - 8/8/8/8/8/2k5/8/KR6 w - - 0 1\n",
    );
    let (code, out, _) = f.oracle(&[
        "run",
        &unchanged,
        "--engine",
        &perfect,
        "--baseline",
        &perfect,
    ]);
    assert_eq!(code, 0, "{out}");
    let (code, _, _) = f.oracle(&[
        "run",
        &unchanged,
        "--engine",
        &perfect,
        "--baseline",
        &broken,
    ]);
    assert_eq!(code, 1);
    let (code, _, err) = f.oracle(&["run", &unchanged, "--engine", &perfect]);
    assert_eq!(code, 2);
    assert!(err.contains("--baseline"), "{err}");

    let bestmove = f.spec(
        "bm.yaml",
        "kind: bestmove\nnodes: 1000\npositions:\n  - 'k7/8/1K6/8/8/8/8/6Q1 w - - bm Qg8#; id \"mate in one\";'\n",
    );
    let (code, out, _) = f.oracle(&["run", &bestmove, "--engine", &perfect, "--json"]);
    assert_eq!(code, 0, "{out}");
    let run: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(run["detail"]["positions"][0]["answer"]["bestmove"], "g1g8");
    let (code, _, _) = f.oracle(&["run", &bestmove, "--engine", &broken]);
    assert_eq!(code, 1);
}

#[test]
fn bad_specs_are_refused_with_their_line() {
    let f = fixture();
    let spec = f.spec(
        "bad.yaml",
        "kind: conversion\nnodes: 10\ndefender: solver\npositions:\n  - 8/8/8/3k4/8/8/8/K1Q5 w - - 0 1\n  - 8/8/8/3k4/8/8/8/K1Q5 x - - 0 1\n",
    );
    let (code, _, err) = f.oracle(&["run", &spec, "--engine", &f.perfect.display().to_string()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.yaml") && err.contains("positions[1] at line 6"),
        "{err}"
    );
}

#[test]
fn study_reports_counts_paired_table_and_sign_test() {
    let f = fixture();
    let perfect = f.perfect.display().to_string();
    let broken = f.broken.display().to_string();
    let control = f.dir.path().join("control.epd");
    std::fs::write(&control, "# other endings\n8/8/8/8/8/2k5/8/KR6 w - -\n").unwrap();
    let control = control.display().to_string();
    let args = [
        "study",
        "--ending",
        "KQK",
        "--positions",
        "5",
        "--nodes",
        "1",
        "--seed",
        "7",
        "--engine",
        &perfect,
        "--engine2",
        &broken,
        "--control",
        &control,
        "--json",
    ];
    let (code, out, err) = f.oracle(&args);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["engines"][0]["converted"], 5);
    assert_eq!(report["engines"][1]["converted"], 0);
    assert_eq!(report["paired"]["only_first"], 5);
    assert_eq!(report["paired"]["both"], 0);
    assert!((report["paired"]["sign_test_p"].as_f64().unwrap() - 0.0625).abs() < 1e-12);
    assert_eq!(report["control"][0]["unchanged"], false, "{out}");
    assert_eq!(report["control"][0]["engine"]["score"], "cp 100");
    let positions = report["positions"].as_array().unwrap();
    assert_eq!(positions.len(), 5);
    assert!(
        positions
            .iter()
            .all(|p| p.as_str().unwrap().ends_with(" w - - 0 1"))
    );
    // The same seed draws the same positions.
    let (_, again, _) = f.oracle(&args);
    let again: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["positions_sha256"], report["positions_sha256"]);
}

#[test]
fn tb_probe_and_generate() {
    let dir = tempfile::tempdir().unwrap();
    let tb = |args: &[&str]| {
        let cache = dir.path().to_str().unwrap();
        let run = oracle(&[&["tb", "--cache-dir", cache], args].concat());
        (run.code, run.stdout)
    };
    // Black takes the loose queen: a draw.
    let (code, out) = tb(&["probe", "8/8/8/8/8/8/2k5/K2Q4 b - - 0 1", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ending"], "KQK");
    assert_eq!(
        (&v["wdl"], &v["dtm_plies"], &v["best_move"]),
        (&"draw".into(), &0.into(), &"c2d1".into())
    );
    let (_, out) = tb(&["probe", "8/8/8/8/8/2k5/8/KQ6 w - - 0 1", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["wdl"], "win");
    assert!(v["dtm_plies"].as_i64().unwrap() > 0);
    let file = dir.path().join("krk.ctb");
    let (code, out) = tb(&["generate", "KRK", "--out", file.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["header"]["max_dtm_moves"], 16);
    assert!(
        std::fs::read(&file)
            .unwrap()
            .starts_with(b"COHERENT-TB 1\n")
    );
    let (code, _) = tb(&["generate", "KPK"]);
    assert_eq!(code, 2);
}
