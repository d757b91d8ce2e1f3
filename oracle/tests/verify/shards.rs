//! A stage played as sharded rounds (`--shard`, `--no-play`): rounds merged into a verdict, a
//! killed shard rerun without a pair counted twice, and forged shards refused.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{Fixture, SERIAL, assert_bound_before_games, counted_pairs};
use crate::support::ORACLE;

#[test]
fn sharded_rounds_merged_between_rounds_reach_the_verdict() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let stronger = fixture.stronger_than_its_predecessor();
    let out = tempfile::tempdir().unwrap();
    let smoke = ["--profile", "smoke"];

    // The prepare job: steps 1-5 and the binding, no game; the first stage asks for a round.
    let (code, first, stderr) = fixture.verify_with(
        &stronger,
        out.path(),
        &[&smoke[..], &["--no-play"]].concat(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(first["status"], "continue", "{first:#}");
    let mut rounds = 0;
    let last = loop {
        rounds += 1;
        assert!(rounds <= 10, "no decision after 10 rounds");
        // The matrix: two shards play their pairs of this round.
        for shard in ["1/2", "2/2"] {
            let (code, played, stderr) = fixture.verify_with(
                &stronger,
                out.path(),
                &[&smoke[..], &["--shard", shard]].concat(),
            );
            assert_eq!(code, 0, "{stderr}");
            assert!(
                ["shard_done", "continue"].contains(&played["status"].as_str().unwrap()),
                "{played:#}"
            );
        }
        // The merge job: combine the shard files, apply the SPRT at the round boundary.
        let (code, merged, stderr) = fixture.verify_with(
            &stronger,
            out.path(),
            &[&smoke[..], &["--no-play"]].concat(),
        );
        if merged["status"] != "continue" {
            assert_eq!(code, 0, "{stderr}");
            break merged;
        }
    };
    assert_eq!(last["status"], "accepted", "{last:#}");
    assert_eq!(last["verdict"], "gewinn");
    assert_eq!(
        last["binding"], first["binding"],
        "bound once, before the first round"
    );
    let stages = last["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    for stage in stages {
        assert_eq!(stage["record"]["state"], "accept_h1");
    }
    assert_bound_before_games(&last, out.path());
    for shard in ["shard-1-of-2.json", "shard-2-of-2.json"] {
        assert!(out.path().join("shards/stage-1-short").join(shard).exists());
        assert!(out.path().join("shards/stage-2-long").join(shard).exists());
    }
}

/// A Slurm array task cancelled mid-round (SIGKILL, as a pre-empted task may get) and a second
/// copy of the same task: the copy is refused while the first plays, the rerun plays only what
/// the round lacks, a rerun of a finished task plays nothing, and the merge plans the next round
/// only once every shard has finished this one. No pair is counted twice.
#[test]
fn a_shard_killed_mid_round_is_rerun_without_a_pair_counted_twice() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let stronger = fixture.stronger_than_its_predecessor();
    let out = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| fixture.verify_smoke_with(&stronger, out.path(), extra);
    // Planned to one minute a shard: at the fixture's node limit, all pairs of each half.
    let (code, planned, stderr) = run(&["--no-play", "--round-minutes", "1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        planned["reason"]
            .as_str()
            .unwrap()
            .contains("round 1: every shard plays to its"),
        "{planned:#}"
    );
    let shards = out.path().join("shards/stage-1-short");
    let round = || fs::read(shards.join("round.json")).unwrap();
    let planned_round = round();
    let state = shards.join("shard-1-of-2.state.json");
    // A second copy of the task while the first holds the shard is refused.
    let held = oracle::verify::round::lock_shard(&shards.join("shard-1-of-2.lock")).unwrap();
    let (code, twice, stderr) = run(&["--shard", "1/2"]);
    assert_eq!(code, 2, "{stderr}\n{twice:#}");
    assert!(
        twice["reason"]
            .as_str()
            .unwrap()
            .contains("another process is playing this shard"),
        "{twice:#}"
    );
    drop(held);
    let mut child = Command::new(ORACLE)
        .args([
            "verify",
            &stronger,
            "--profile",
            "smoke",
            "--shard",
            "1/2",
            "--repo",
        ])
        .arg(fixture.path())
        .arg("--out")
        .arg(out.path())
        .arg("--cache-dir")
        .arg(&fixture.cache)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while counted_pairs(&state).len() < 3 {
        assert!(std::time::Instant::now() < deadline, "no pairs in time");
        assert!(child.try_wait().unwrap().is_none(), "the shard ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = counted_pairs(&state);
    assert!(
        !shards.join("shard-1-of-2.json").exists(),
        "a killed task publishes nothing"
    );

    // Shard 2 finishes; the merge sees shard 1 missing and plans the same round again.
    let (code, _, stderr) = run(&["--shard", "2/2"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, merged, stderr) = run(&["--no-play", "--round-minutes", "1"]);
    assert_eq!(
        (code, merged["status"].as_str()),
        (0, Some("continue")),
        "{stderr}"
    );
    assert_eq!(
        round(),
        planned_round,
        "an unfinished round is played again"
    );

    // The rerun keeps the killed task's pairs and plays the rest once; another rerun plays none.
    let (code, _, stderr) = run(&["--shard", "1/2"]);
    assert_eq!(code, 0, "{stderr}");
    let after = counted_pairs(&state);
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "finished pairs are kept"
    );
    let published = shards.join("shard-1-of-2.json");
    let first = fs::read(&published).unwrap();
    let (code, _, stderr) = run(&["--shard", "1/2"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        counted_pairs(&state),
        after,
        "a finished round plays nothing more"
    );
    let shard: Value = serde_json::from_slice(&fs::read(&published).unwrap()).unwrap();
    let first: Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(shard["pairs"], first["pairs"]);
    let mut indices: Vec<u64> = shard["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    let count = indices.len();
    indices.dedup();
    assert_eq!(indices.len(), count, "no pair twice");
    let stage_pairs = shard["fingerprint"]["pairs"].as_u64().unwrap();
    assert_eq!(
        indices,
        (0..stage_pairs).step_by(2).collect::<Vec<u64>>(),
        "all of shard 1's pairs, the round being longer than the stage"
    );

    // Now every shard has finished the round: the merge decides the stage or plans round 2.
    let (code, merged, stderr) = run(&["--no-play", "--round-minutes", "1"]);
    assert!(code == 0 || code == 1, "{stderr}");
    let stage = &merged["stages"][0]["record"];
    if !stage.is_null() {
        assert!(stage["pairs"].as_u64().unwrap() <= 200, "{merged:#}");
    }
}

/// Plays the stronger candidate's first smoke stage as the only shard, lets `forge` rewrite the
/// shard's result file, and merges, which must be refused (exit 2); why.
fn merge_refusal_after(forge: impl FnOnce(&Path)) -> String {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let stronger = fixture.stronger_than_its_predecessor();
    let out = tempfile::tempdir().unwrap();
    fixture.play_one_shard(&stronger, out.path());
    forge(&out.path().join("shards/stage-1-short/shard-1-of-1.json"));
    let (code, result, stderr) = fixture.verify_smoke_with(&stronger, out.path(), &["--no-play"]);
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    result["failure"]["why"].as_str().unwrap().to_owned()
}

#[test]
fn a_forged_shard_is_refused_naming_file_and_field() {
    // Another match's shard, consistent in itself (its tally recomputes from its pairs): other
    // book, other seed. The merge used to check shards only against each other.
    let why = merge_refusal_after(|file| {
        let mut shard: Value = serde_json::from_slice(&fs::read(file).unwrap()).unwrap();
        shard["fingerprint"]["book_sha256"] = Value::from("0".repeat(64));
        shard["fingerprint"]["seed"] = Value::from(4);
        fs::write(file, serde_json::to_vec_pretty(&shard).unwrap()).unwrap();
    });
    assert!(
        why.contains("shard-1-of-1.json was not played under the plan: its book differs"),
        "{why}"
    );
}

/// Issue 46, "a forged shard": the plan's real fingerprint (the shard's own), invented double wins
/// in every pair of the stage and the tally recomputed from them. It used to decide the stage (exit 0, accept H1); the
/// shard's PGN, with the pairs really played, refuses it, naming the file, pair and field.
#[test]
fn a_shard_claiming_pairs_its_pgn_does_not_show_is_refused() {
    use oracle::play::game::{GameResult, Termination};
    use oracle::play::shard::ShardResult;
    use oracle::play::tally::{PairOutcome, Tally};

    let why = merge_refusal_after(|file| {
        let mut shard: ShardResult = serde_json::from_slice(&fs::read(file).unwrap()).unwrap();
        let mut won = shard.pairs[0];
        won.games[0].result = GameResult::WhiteWins;
        won.games[1].result = GameResult::BlackWins;
        for game in &mut won.games {
            (game.termination, game.faulted_engine) = (Termination::Normal, None);
        }
        won.identical_games = false;
        // As many as the stage may count (the attack on the smoke profile claimed 200).
        shard.pairs = (0..shard.fingerprint.pairs)
            .map(|index| PairOutcome { index, ..won })
            .collect();
        shard.tally = Tally::of(&shard.pairs);
        shard.games_played = 2 * shard.fingerprint.pairs;
        fs::write(file, serde_json::to_vec_pretty(&shard).unwrap()).unwrap();
    });
    assert!(
        why.contains("shard-1-of-1.json: pair ") && why.contains("the shard claims"),
        "{why}"
    );
}
