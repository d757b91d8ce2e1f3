//! A stage played as sharded rounds (`--shard`, `--no-play`): rounds merged into a verdict, a
//! killed shard rerun without a pair counted twice, forged shards refused, and the pairs of
//! another run of the same binaries taken over in rounds (`--no-play --games-from`).

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{Fixture, SERIAL, assert_bound_before_games, copy_tree, counted_pairs};
use crate::support::ORACLE;

/// Rounds of two shards, merged between rounds, reach the verdict; the merge that ends a stage
/// leaves the games it holds in its `games.pgn`, the file its `pgn_sha256` names, so the
/// appended entry's games replay move for move as a local run's do.
#[test]
fn sharded_rounds_merged_between_rounds_reach_the_verdict_and_replay() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let (stronger, _) = fixture.stronger_than_the_registered_engine();
    let stronger = stronger.to_string();
    let out = tempfile::tempdir().unwrap();
    let binding = ["--profile", "fixture"];
    // The merge that reaches the verdict appends it.
    let merge = ["--profile", "fixture", "--no-play", "--append"];

    // The prepare job: steps 1-5 and the binding, no game; the first stage asks for a round.
    let (code, first, stderr) = fixture.verify_with(&stronger, out.path(), &merge);
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
                &[&binding[..], &["--shard", shard]].concat(),
            );
            assert_eq!(code, 0, "{stderr}");
            assert!(
                ["shard_done", "continue"].contains(&played["status"].as_str().unwrap()),
                "{played:#}"
            );
        }
        // The merge job: combine the shard files, apply the SPRT at the round boundary.
        let (code, merged, stderr) = fixture.verify_with(&stronger, out.path(), &merge);
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
    assert_eq!(last["appended"], "T-0002", "{last:#}");
    for (stage, dir) in stages.iter().zip(["stage-1-short", "stage-2-long"]) {
        let games = fs::read(out.path().join(dir).join("games.pgn")).unwrap();
        assert_eq!(
            stage["record"]["pgn_sha256"],
            oracle::integrity::sha256_hex(&games).as_str()
        );
        // Every game the stage holds, those past the deciding look too; the record counts the
        // lowest pairs of them (the replay below checks their pentanomial).
        let rounds = String::from_utf8(games).unwrap().matches("[Round ").count();
        assert!(Some(rounds as u64) >= stage["record"]["games"].as_u64());
    }
    fixture.keep_evidence(out.path(), "T-0002");
    let (code, stdout, _) = fixture.replay_games(true, None);
    assert_eq!(code, 0, "{stdout}");
    let replay: Value = serde_json::from_str(&stdout).unwrap();
    for stage in replay["replay"]["stages"].as_array().unwrap() {
        assert_eq!(stage["status"], "replayed", "{stage:#}");
        let games = stage["games"].as_array().unwrap();
        assert_eq!(games.len(), 4, "{stage:#}");
        assert!(games.iter().all(|g| g["difference"].is_null()), "{stage:#}");
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

/// The pair indices a JSON file (a runner state or a shard result) counts.
fn indices(file: &Path) -> Vec<u64> {
    let json: Value = serde_json::from_slice(&fs::read(file).unwrap()).unwrap();
    json["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect()
}

/// A commit that changed only its message (the same tree on the same parent) is the same two
/// binaries: its run in rounds (`--no-play --games-from`, as the CI's `prepare` does) takes over
/// the pairs the earlier commit's run played in rounds — from its shard files, there being no
/// whole-stage state there — applies the SPRT to them at once (deciding the stage as the earlier
/// run did, if it did), else plans round 1 from the first pair not taken over; its shards play
/// none of them again, and the entry names the run that played them. A source of another match
/// (a shard of another seed, a binding of another candidate binary) is refused, naming what
/// differs, and nothing is taken over; a shard never takes pairs over.
#[test]
fn rounds_continue_the_pairs_of_another_commit_of_the_same_binaries() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let (stronger, again) = fixture.stronger_and_reworded();
    let dir = tempfile::tempdir().unwrap();
    let first_out = dir.path().join("first");

    // The earlier commit's run: bound, one round of two shards (two pairs each), merged.
    let (code, _, stderr) = fixture.verify_smoke_with(&stronger, &first_out, &["--no-play"]);
    assert_eq!(code, 0, "{stderr}");
    for shard in ["1/2", "2/2"] {
        let (code, _, stderr) =
            fixture.verify_smoke_with(&stronger, &first_out, &["--shard", shard]);
        assert_eq!(code, 0, "{stderr}");
    }
    let (code, earlier, stderr) = fixture.verify_smoke_with(&stronger, &first_out, &["--no-play"]);
    assert_eq!(
        (code, earlier["status"].as_str()),
        (0, Some("continue")),
        "{stderr}"
    );
    assert!(
        !first_out.join("stage-1-short/state.json").exists(),
        "a run in rounds has no whole-stage state"
    );

    // Another match: a shard of another seed, and a binding of another candidate binary.
    let forged = dir.path().join("forged");
    copy_tree(&first_out, &forged);
    let shard_file = forged.join("shards/stage-1-short/shard-1-of-2.json");
    let mut shard: Value = serde_json::from_slice(&fs::read(&shard_file).unwrap()).unwrap();
    shard["fingerprint"]["seed"] = Value::from(shard["fingerprint"]["seed"].as_u64().unwrap() ^ 1);
    fs::write(&shard_file, serde_json::to_vec_pretty(&shard).unwrap()).unwrap();
    let other_binary = dir.path().join("other-binary");
    copy_tree(&first_out, &other_binary);
    let binding_file = other_binary.join("binding.json");
    let mut binding: Value = serde_json::from_slice(&fs::read(&binding_file).unwrap()).unwrap();
    binding["candidate"]["sha256"] = Value::from("0".repeat(64));
    fs::write(&binding_file, serde_json::to_vec(&binding).unwrap()).unwrap();
    for (source, why) in [
        (
            &forged,
            "shard-1-of-2.json was not played under the plan: its seed differs".to_owned(),
        ),
        (
            &other_binary,
            format!("candidate sha256 is {} there", "0".repeat(64)),
        ),
    ] {
        let refused = dir.path().join("refused");
        let (code, result, stderr) = fixture.verify_smoke_with(
            &again,
            &refused,
            &["--no-play", "--games-from", source.to_str().unwrap()],
        );
        assert_eq!(code, 2, "{stderr}\n{result:#}");
        let reason = result["reason"].as_str().unwrap();
        assert!(reason.contains(&why), "{why}: {reason}");
        for file in ["stage-1-short/state.json", "stage-1-short/adopted.json"] {
            assert!(
                !refused.join(file).exists(),
                "{file}: nothing is taken over"
            );
        }
        assert!(
            !refused.join("shards/stage-1-short/round.json").exists(),
            "no round is planned"
        );
        fs::remove_dir_all(&refused).unwrap();
    }

    // A shard never takes pairs over: the command line refuses it.
    let output = Command::new(ORACLE)
        .args([
            "verify",
            &again,
            "--profile",
            "smoke",
            "--shard",
            "1/2",
            "--games-from",
        ])
        .arg(&first_out)
        .arg("--repo")
        .arg(fixture.path())
        .arg("--out")
        .arg(dir.path().join("shard"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for part in ["--games-from <DIR>", "cannot be used with", "--shard <K/N>"] {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }

    // The reworded commit's prepare: the earlier run's four pairs become the stage's state.
    let out = dir.path().join("again");
    let first_pairs = [
        indices(&first_out.join("shards/stage-1-short/shard-1-of-2.json")),
        indices(&first_out.join("shards/stage-1-short/shard-2-of-2.json")),
    ]
    .concat();
    let (code, prepared, stderr) = fixture.verify_smoke_with(
        &again,
        &out,
        &["--no-play", "--games-from", first_out.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}\n{prepared:#}");
    assert_eq!(prepared["status"], "continue", "{prepared:#}");
    assert!(
        stderr.contains(&format!(
            "{} pairs ({} games) of the same match: {} by the run of {}",
            first_pairs.len(),
            2 * first_pairs.len(),
            first_pairs.len(),
            &stronger[..12]
        )),
        "{stderr}"
    );
    let mut taken = indices(&out.join("stage-1-short/state.json"));
    taken.sort_unstable();
    assert_eq!(taken, (0..first_pairs.len() as u64).collect::<Vec<_>>());
    // As a local run would, the first merge applies the SPRT to the pairs taken over: it decides
    // the stage at once where the earlier run's merge decided it; otherwise round 1 starts after
    // them.
    let decided_before = &earlier["stages"][0]["record"];
    if decided_before.is_object() {
        let decided_now = &prepared["stages"][0]["record"];
        for field in ["state", "pairs", "pentanomial", "llr"] {
            assert_eq!(
                decided_now[field], decided_before[field],
                "{field}: {prepared:#}"
            );
        }
    } else {
        let round: Value =
            serde_json::from_slice(&fs::read(out.join("shards/stage-1-short/round.json")).unwrap())
                .unwrap();
        assert_eq!(round["first_pair"], first_pairs.len() as u64, "{round}");
    }

    // The rounds go on to the verdict; no shard plays a pair taken over.
    let mut rounds = 0;
    let last = loop {
        rounds += 1;
        assert!(rounds <= 10, "no decision after 10 rounds");
        for shard in ["1/2", "2/2"] {
            let (code, _, stderr) = fixture.verify_smoke_with(&again, &out, &["--shard", shard]);
            assert_eq!(code, 0, "{stderr}");
        }
        let (code, merged, stderr) = fixture.verify_smoke_with(&again, &out, &["--no-play"]);
        if merged["status"] != "continue" {
            assert_eq!(code, 0, "{stderr}");
            break merged;
        }
    };
    // The verdict is the other sharded test's subject: on a machine loaded by other work a game
    // of the candidate can exceed its CPU budget at the node limit, which ends the stage
    // candidate_faulted. What this test holds is which pairs were counted, and by whom.
    assert!(
        last["verdict"] == "gewinn" || last["stages"][0]["record"]["state"] == "candidate_faulted",
        "{last:#}"
    );
    for shard in ["shard-1-of-2.json", "shard-2-of-2.json"] {
        let file = out.join("shards/stage-1-short").join(shard);
        if file.exists() {
            let played = indices(&file);
            assert!(
                played.iter().all(|pair| !taken.contains(pair)),
                "{played:?}"
            );
        }
    }
    let adopted = &last["stages"][0]["record"]["adopted"];
    assert_eq!(adopted["pairs"], first_pairs.len() as u64, "{last:#}");
    let runs = adopted["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{adopted}");
    assert_eq!(runs[0]["candidate"], stronger.as_str());
    assert_eq!(runs[0]["pairs"], first_pairs.len() as u64);
    assert!(
        last["stages"][0]["record"]["pairs"].as_u64().unwrap() >= first_pairs.len() as u64,
        "{last:#}"
    );
    assert_bound_before_games(&last, &out);
}

/// A run cancelled after a round's shards published their files but before the merge that would
/// have looked at them: the run that takes those pairs over looks on that run's grid from its
/// start, so it makes the looks that merge would have made, inside them, and decides (or goes on)
/// exactly as that merge would have, with the same overshoot-corrected bounds; a local run that
/// takes them over makes the same looks before it plays. Before, it looked
/// only after the pairs it took over: an author who saw a published round cross H0 could cancel
/// the run and have that crossing never looked at. Two cancellations: before the first merge,
/// and after one merge (when that merge leaves the stage open), before the second.
#[test]
fn a_round_published_but_never_merged_is_looked_at_by_the_run_that_takes_it_over() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let (stronger, again) = fixture.stronger_and_reworded();
    for merges_before_cancel in [0, 1] {
        let dir = tempfile::tempdir().unwrap();
        let cancelled = dir.path().join("cancelled");
        let round = |fixture: &Fixture| {
            for shard in ["1/2", "2/2"] {
                let (code, _, stderr) =
                    fixture.verify_smoke_with(&stronger, &cancelled, &["--shard", shard]);
                assert_eq!(code, 0, "{stderr}");
            }
        };
        // Bound and round 1 planned; rounds played and merged; the last round's shards
        // publish their pairs, and the merge never runs.
        let (code, _, stderr) = fixture.verify_smoke_with(&stronger, &cancelled, &["--no-play"]);
        assert_eq!(code, 0, "{stderr}");
        for _ in 0..merges_before_cancel {
            round(&fixture);
            let (code, merged, stderr) =
                fixture.verify_smoke_with(&stronger, &cancelled, &["--no-play"]);
            assert_eq!(code, 0, "{stderr}");
            if merged["stages"][0]["record"].is_object() {
                // Decided at that merge: the end is taken over as it stands (tested above).
                continue;
            }
        }
        round(&fixture);

        // The reworded commit's run takes the pairs over and looks where that merge would have.
        let out = dir.path().join("again");
        let (code, taken, stderr) = fixture.verify_smoke_with(
            &again,
            &out,
            &["--no-play", "--games-from", cancelled.to_str().unwrap()],
        );
        assert_eq!(code, 0, "{stderr}\n{taken:#}");
        // A local run that takes them over looks on the same grid before it plays.
        let local = dir.path().join("local");
        let (code, local_run, stderr) = fixture.verify_smoke_with(
            &again,
            &local,
            &["--games-from", cancelled.to_str().unwrap()],
        );
        assert!(code == 0 || code == 1, "{stderr}\n{local_run:#}");
        // What the merge would have said, run now that the pairs are taken over.
        let (code, merge, stderr) =
            fixture.verify_smoke_with(&stronger, &cancelled, &["--no-play"]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(taken["status"], merge["status"], "{taken:#}\n{merge:#}");
        let decided = &merge["stages"][0]["record"];
        if decided.is_object() {
            for field in ["state", "pairs", "pentanomial", "llr", "lower", "upper"] {
                for run in [&taken, &local_run] {
                    assert_eq!(
                        run["stages"][0]["record"][field], decided[field],
                        "{field}: {run:#}"
                    );
                }
            }
        } else {
            // "LLR x in [lower, upper]": the bounds with the overshoot correction of the path.
            let looks = |result: &Value| {
                let reason = result["reason"].as_str().unwrap().to_owned();
                let at = reason.find("LLR ").expect("the merge names its LLR");
                reason[at..].split(':').next().unwrap().to_owned()
            };
            assert!(!looks(&merge).starts_with("LLR 0.00 "), "{merge:#}");
            assert_eq!(looks(&taken), looks(&merge), "{taken:#}");
        }
        // The record that carried it: the cancelled run's grid, from pair 0, once a round.
        let looks_from: Value =
            serde_json::from_slice(&fs::read(out.join("stage-1-short/looks-from.json")).unwrap())
                .unwrap();
        assert_eq!(looks_from["after"], 0, "{looks_from}");
        assert_eq!(looks_from["every"], 2, "{looks_from}");
    }
}

/// A stage the source finished stays decided as it was. The source played in rounds of three
/// shards, so its SPRT looked once per round, every three pairs; a local run deciding the same
/// pairs again would look every two (the batch) and could read them otherwise, a second chance
/// for a match already judged. The run of the reworded commit takes over each stage's end with
/// the pairs it counts and their games (a round's shards may have played on past the deciding
/// look): the same state, pairs, LLR and looks, and it plays no game. An adoption interrupted
/// before its end was put in place is completed by the next invocation, and its end is taken
/// over by a run that adopts from it meanwhile.
#[test]
fn a_stage_the_source_finished_stays_decided_as_it_was() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let (stronger, again) = fixture.stronger_and_reworded();
    let dir = tempfile::tempdir().unwrap();
    let first_out = dir.path().join("first");
    let mut rounds = 0;
    let earlier = loop {
        rounds += 1;
        assert!(rounds <= 20, "no verdict after 20 rounds");
        // Rounds of an hour: the shards play on past the look that decides.
        let (code, merged, stderr) = fixture.verify_smoke_with(
            &stronger,
            &first_out,
            &["--no-play", "--round-minutes", "60"],
        );
        assert_eq!(code, 0, "{stderr}");
        if merged["status"] != "continue" {
            break merged;
        }
        for shard in ["1/3", "2/3", "3/3"] {
            let (code, _, stderr) =
                fixture.verify_smoke_with(&stronger, &first_out, &["--shard", shard]);
            assert_eq!(code, 0, "{stderr}");
        }
    };
    assert_eq!(earlier["verdict"], "gewinn", "{earlier:#}");

    let from = |source: &Path| ["--games-from", source.to_str().unwrap()].map(str::to_owned);
    let out = dir.path().join("again");
    let (code, result, stderr) = fixture.verify_smoke_with(
        &again,
        &out,
        &from(&first_out).each_ref().map(String::as_str),
    );
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "gewinn");
    assert!(stderr.contains("and that stands"), "{stderr}");
    for (index, name) in [(0, "stage-1-short"), (1, "stage-2-long")] {
        let theirs = &earlier["stages"][index]["record"];
        let ours = &result["stages"][index]["record"];
        assert_eq!(theirs["look_pairs"], 3, "{theirs:#}");
        for field in [
            "state",
            "pairs",
            "pentanomial",
            "llr",
            "lower",
            "upper",
            "look_pairs",
        ] {
            assert_eq!(ours[field], theirs[field], "{name}: {field}");
        }
        assert_eq!(ours["adopted"]["pairs"], ours["pairs"], "{ours:#}");
        let taken = counted_pairs(&out.join(name).join("state.json")).len() as u64;
        assert_eq!(ours["pairs"], taken, "{ours:#}");
        // Its games are the source's games of the pairs its end counts, and no other: no game
        // is played here.
        let played_there: String = fs::read_dir(first_out.join("shards").join(name))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pgn"))
            .filter(|p| !p.to_string_lossy().ends_with(".state.pgn"))
            .map(|p| fs::read_to_string(p).unwrap())
            .collect();
        let ours_games = fs::read_to_string(out.join(name).join("games.pgn")).unwrap();
        assert!(
            played_there.matches("[Event ").count() as u64 > 2 * taken,
            "{name}: the shards played on past the deciding look"
        );
        let starts: Vec<usize> = ours_games
            .match_indices("[Event ")
            .map(|(i, _)| i)
            .collect();
        assert_eq!(starts.len() as u64, 2 * taken, "{name}: two games a pair");
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(ours_games.len());
            let game = ours_games[start..end].trim_end();
            assert!(
                played_there.contains(game),
                "{name}: a game not played there:\n{game}"
            );
        }
    }

    // Killed between putting the first stage's state and its end in place.
    let interrupted = dir.path().join("interrupted");
    copy_tree(&out, &interrupted);
    let stage = interrupted.join("stage-1-short");
    fs::rename(stage.join("stage.json"), stage.join("adopted-stage.json")).unwrap();
    let (code, third, stderr) = fixture.verify_smoke_with(
        &again,
        &dir.path().join("third"),
        &from(&interrupted).each_ref().map(String::as_str),
    );
    assert_eq!(code, 0, "{stderr}\n{third:#}");
    assert_eq!(third["stages"][0]["record"]["look_pairs"], 3, "{third:#}");
    // The run itself, killed there, completes the adoption when it resumes.
    let stage = out.join("stage-1-short");
    fs::rename(stage.join("stage.json"), stage.join("adopted-stage.json")).unwrap();
    let (code, resumed, stderr) = fixture.verify_smoke_with(&again, &out, &[]);
    assert_eq!(code, 0, "{stderr}\n{resumed:#}");
    assert!(stage.join("stage.json").exists() && !stage.join("adopted-stage.json").exists());
    assert_eq!(resumed["stages"], result["stages"]);
}
