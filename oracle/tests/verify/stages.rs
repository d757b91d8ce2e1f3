//! Step 6 of `oracle verify`, the stages: a change only a clock can see is judged at the clock,
//! and the faults of either engine decide what a stage is worth (void or Abgelehnt).

use std::fs;
use std::path::Path;

use serde_json::Value;

use super::{Fixture, SERIAL};

/// The line of the engine's UCI loop where a `go` is parsed.
const PARSE_GO: &str = "        let limits = parse_go(args);";

/// Put before [`PARSE_GO`]: the engine exits at its seventh search.
const QUIT_AT_SEVENTH_GO: &str = "        static GOES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);\n        \
     if GOES.fetch_add(1, Ordering::Relaxed) == 6 {\n            std::process::exit(0);\n        }\n";

/// The first stage's `stage.json` in `out`.
fn first_stage(out: &Path) -> Value {
    serde_json::from_slice(&fs::read(out.join("stage-1-short/stage.json")).unwrap()).unwrap()
}

/// Commits the work tree as `subject` with its bench and verifies it, which must be Abgelehnt
/// (exit 1); the result and the first stage's `stage.json`.
fn abgelehnt(fixture: &Fixture, subject: &str) -> (Value, Value) {
    let (bench, _) = fixture.bench_of_worktree();
    let candidate = fixture.commit(&format!("{subject}\n\nBench: {bench}\n"));
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
    assert_eq!(code, 1, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "abgelehnt", "{result:#}");
    (result, first_stage(out.path()))
}

/// Article 2.5: a change to time management plays the same games as its predecessor at every
/// node limit. Both node stages end `indistinguishable` at their first look, and the verdict
/// rests on the clock stage, which finds the gain: Gewinn, appended, and `register verify` and
/// `register replay` accept the new state. The same change under a profile of node stages only
/// is Abgelehnt: no stage could tell the engines apart.
#[test]
fn a_time_management_change_is_judged_at_the_clock() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !oracle::builder::sandbox::cpu_account::CpuAccount::available() {
        // A binding profile with a clock stage plays only with CPU accounts (Article 6.7).
        eprintln!("SKIPPED: no writable cgroup2 mount here (not root?): no CPU accounts");
        return;
    }
    let fixture = Fixture::new();
    let repo = fixture.path().display().to_string();
    fixture.cripple_clock();
    let (bench, crippled_sha256) = fixture.bench_of_worktree();
    fixture.commit(&format!(
        "time: a fiftieth of the budget\n\nBench: {bench}\n"
    ));
    fixture.register_genesis(&crippled_sha256, bench);
    fixture.restore_clock();
    let (restored_bench, restored_sha256) = fixture.bench_of_worktree();
    assert_eq!(
        restored_bench, bench,
        "a node-limited bench does not see the clock"
    );
    assert_ne!(restored_sha256, crippled_sha256);
    let restored = fixture
        .commit(&format!("time: the full budget again\n\nBench: {bench}\n"))
        .to_string();
    let dir = tempfile::tempdir().unwrap();

    let (code, result, stderr) = fixture.verify(&restored, &dir.path().join("nodes-only"));
    assert_eq!(code, 1, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "abgelehnt");
    let states: Vec<&str> = result["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stage| stage["record"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["indistinguishable", "indistinguishable"]);
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("no stage accepted H1"),
        "{result:#}"
    );

    let out = dir.path().join("clock");
    let (code, result, stderr) =
        fixture.verify_with(&restored, &out, &["--profile", "clock", "--append"]);
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "gewinn");
    let stages = result["stages"].as_array().unwrap();
    let states: Vec<&str> = stages
        .iter()
        .map(|stage| stage["record"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["indistinguishable", "indistinguishable", "accept_h1"]
    );
    for stage in &stages[..2] {
        // Stopped at the first look from the minimum: 8 games, the same game twice per pair.
        assert_eq!(
            stage["record"]["pentanomial"],
            serde_json::json!([0, 0, 4, 0, 0])
        );
    }
    assert!(
        stages[2]["record"]["nelo"].as_f64().unwrap() > 150.0,
        "{result:#}"
    );
    assert_eq!(result["appended"], "T-0002");
    let verified = fixture
        .oracle(&["register", "verify", "--repo", &repo, "--json"])
        .json();
    assert_eq!(verified["ok"], true, "{verified}");
    let replay = fixture
        .oracle(&["register", "replay", "T-0002", "--repo", &repo, "--json"])
        .json();
    assert_eq!(replay["ok"], true, "{replay:#}");
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("indistinguishable: the engines played alike"),
        "{report}"
    );
}

/// Issue 12: a predecessor that disconnects (here it exits at its seventh `go`, as if killed)
/// makes the stage void: exit 2, the reason in the step line, result.json and the report, no
/// entry; the faults are counted by kind in stage.json.
#[test]
fn a_predecessor_disconnect_voids_the_stage() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let (bench, _) = fixture.bench_of_worktree();
    fixture.edit(
        "engine/src/uci.rs",
        PARSE_GO,
        &format!("{QUIT_AT_SEVENTH_GO}{PARSE_GO}"),
    );
    fixture.commit("uci: the predecessor dies at its seventh search");
    fixture.edit("engine/src/uci.rs", QUIT_AT_SEVENTH_GO, "");
    let candidate = fixture.commit(&format!("uci: search as before\n\nBench: {bench}\n"));
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "error");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("stage void") && why.contains("the predecessor disconnected"),
        "{why}"
    );
    assert!(stderr.contains("stage void"), "{stderr}");
    let report = fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(report.contains("stage void"), "{report}");
    assert!(!out.path().join("entry.yaml").exists());
    let stage = first_stage(out.path());
    let faults = &stage["record"]["faults"];
    assert!(
        faults["predecessor"]["disconnect"].as_u64().unwrap() > 0,
        "{stage}"
    );
    assert_eq!(faults["candidate"]["disconnect"], 0, "{stage}");
}

/// Issue 46, void instead of Abgelehnt: a candidate that ends its own games (here it exits at its
/// seventh search of every game, as one that quits when it is losing would) fails its stage and
/// is Abgelehnt; before, its faults voided the stage and it could start over until lucky.
#[test]
fn a_candidate_that_faults_past_the_limit_is_abgelehnt_not_void() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.edit(
        "engine/src/uci.rs",
        PARSE_GO,
        &format!("{QUIT_AT_SEVENTH_GO}{PARSE_GO}"),
    );
    let (result, stage) = abgelehnt(&fixture, "uci: quit at the seventh search");
    let reason = result["reason"].as_str().unwrap();
    assert!(reason.contains("candidate_faulted"), "{reason}");
    assert_eq!(stage["record"]["state"], "candidate_faulted", "{stage}");
    assert!(
        stage["record"]["faults"]["candidate"]["disconnect"]
            .as_u64()
            .unwrap()
            > 0,
        "{stage}"
    );
}

/// Issue 46, searching more than told: a candidate that searches a hundred times the nodes of
/// `go nodes N` (and says so in its `info`) is faulted by the CPU its own bench says those
/// nodes cost, loses those games, and is Abgelehnt.
#[test]
fn a_candidate_that_searches_more_than_told_is_faulted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let faults = faulted_for_searching(&fixture, 100, "uci: search deeper than told");
    assert_eq!(
        faults["predecessor"]["cpu_over_node_limit"]
            .as_u64()
            .unwrap_or(0),
        0,
        "{faults}"
    );
}

/// Review of issue 46's fixes: the setup's wall time counted as the engine's own time, so a
/// candidate that waited two seconds before `uciok` could search sixty times its nodes in
/// every move of the game. The setup now earns no CPU for the game.
#[test]
fn a_candidate_that_waits_in_its_setup_to_search_more_is_faulted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.edit(
        "engine/src/uci.rs",
        "                say(\"uciok\");",
        "                std::thread::sleep(std::time::Duration::from_secs(2));\n                say(\"uciok\");",
    );
    faulted_for_searching(&fixture, 60, "uci: wait, then search deeper than told");
}

/// Makes the fixture's engine search `factor` times the nodes of every `go nodes N`, commits it
/// as `subject` and verifies it: Abgelehnt, with the candidate faulted for searching more than
/// told. The first stage's faults.
fn faulted_for_searching(fixture: &Fixture, factor: u64, subject: &str) -> Value {
    fixture.edit(
        "engine/src/uci.rs",
        PARSE_GO,
        &format!(
            "        let mut limits = parse_go(args);\n        limits.nodes = limits.nodes.map(|n| n * {factor});"
        ),
    );
    let (_, stage) = abgelehnt(fixture, subject);
    let faults = stage["record"]["faults"].clone();
    assert!(
        faults["candidate"]["cpu_over_node_limit"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "{stage}"
    );
    faults
}
