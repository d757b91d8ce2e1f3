//! The `--out` directory across runs: a killed run resumes without replaying finished pairs,
//! `--games-from` takes over another run's games of the same match, and an `--out` that is not
//! UTF-8 is refused before any build.

use std::fs;
use std::path::Path;

use serde_json::Value;

use super::{
    CRIPPLE_SUBJECT, Fixture, SERIAL, assert_bound_before_games, copy_tree, counted_pairs,
};

#[test]
fn killed_verify_resumes_without_replaying_finished_pairs() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    fixture.commit(&format!("{CRIPPLE_SUBJECT}\n\nBench: 1\n"));
    fixture.restore();
    let (normal_bench, _) = fixture.bench_of_worktree();
    let stronger = fixture
        .commit(&format!(
            "eval: restore queen and rook values\n\nBench: {normal_bench}\n"
        ))
        .to_string();
    let out = tempfile::tempdir().unwrap();
    let state = out.path().join("stage-1-short/state.json");
    let before = fixture.verify_killed(&stronger, out.path(), 4);
    let binding: Value =
        serde_json::from_slice(&fs::read(out.path().join("binding.json")).unwrap()).unwrap();
    assert!(
        !out.path().join("result.json").exists(),
        "a killed run leaves no result"
    );

    let (code, result, stderr) =
        fixture.verify_with(&stronger, out.path(), &["--profile", "long-minimum"]);
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "gewinn");
    assert_eq!(
        result["binding"]["bound_at"], binding["bound_at"],
        "the binding is kept"
    );
    assert!(stderr.contains("resuming: the binding"), "{stderr}");
    let after = counted_pairs(&state);
    assert!(after.len() >= 20 && after.len() > before.len());
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "finished pairs are kept, not replayed"
    );
    assert_eq!(
        result["stages"][0]["record"]["pairs"].as_u64().unwrap(),
        after.len() as u64
    );
    assert_bound_before_games(&result, out.path());
}

/// A change withdrawn from main and submitted again under a new commit has the same engine tree,
/// so the same binaries and the same match: `--games-from` takes over the games its first run
/// played instead of playing them again, and its entry names the run that played them. A state
/// file of another match (its seed edited), a binding of another constitution, --out itself and
/// a directory that is no verify --out are refused, naming why.
#[test]
fn games_of_the_same_match_are_taken_over_from_another_run() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let crippled = fixture.commit(&format!("{CRIPPLE_SUBJECT}\n\nBench: 1\n"));
    fixture.restore();
    let (normal_bench, _) = fixture.bench_of_worktree();
    let message = format!("eval: restore queen and rook values\n\nBench: {normal_bench}\n");
    let first = fixture.commit(&message);
    let tree = fixture.repo.find_commit(first).unwrap().tree_id();
    let again = fixture
        .commit_on(crippled, tree, &format!("again: {message}"))
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let first_out = dir.path().join("first");
    let before = fixture.verify_killed(&first.to_string(), &first_out, 4);
    fn from(other: &Path) -> [&str; 4] {
        [
            "--profile",
            "long-minimum",
            "--games-from",
            other.to_str().unwrap(),
        ]
    }

    let (code, result, stderr) = fixture.verify_with(
        &again,
        &dir.path().join("nowhere"),
        &from(&dir.path().join("none")),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("no run.json there names the run"),
        "{result:#}"
    );

    let forged = dir.path().join("forged");
    copy_tree(&first_out, &forged);
    let forged_state = forged.join("stage-1-short/state.json");
    let mut state: Value = serde_json::from_slice(&fs::read(&forged_state).unwrap()).unwrap();
    state["fingerprint"]["seed"] = Value::from(state["fingerprint"]["seed"].as_u64().unwrap() ^ 1);
    fs::write(&forged_state, serde_json::to_vec(&state).unwrap()).unwrap();
    let refused = dir.path().join("refused");
    let (code, result, stderr) = fixture.verify_with(&again, &refused, &from(&forged));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("its games are of another match (seed differs)"),
        "{result:#}"
    );
    assert!(
        !refused.join("stage-1-short/state.json").exists(),
        "nothing is taken over"
    );

    // A binding of another constitution is another match, even with the same binaries.
    let other_rules = dir.path().join("other-rules");
    copy_tree(&first_out, &other_rules);
    let binding_file = other_rules.join("binding.json");
    let mut binding: Value = serde_json::from_slice(&fs::read(&binding_file).unwrap()).unwrap();
    binding["constitution_sha256"] = Value::from("0".repeat(64));
    fs::write(&binding_file, serde_json::to_vec(&binding).unwrap()).unwrap();
    let (code, result, stderr) =
        fixture.verify_with(&again, &dir.path().join("other-out"), &from(&other_rules));
    assert_eq!(code, 2, "{stderr}");
    let reason = result["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("constitution sha256 is {} there", "0".repeat(64))),
        "{reason}"
    );
    // --games-from naming --out itself is refused before anything is built (--fresh would empty it).
    let (code, result, stderr) = fixture.verify_with(
        &again,
        &first_out,
        &[&from(&first_out)[..], &["--fresh"]].concat(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("it is this run's --out"),
        "{result:#}"
    );
    assert_eq!(
        counted_pairs(&first_out.join("stage-1-short/state.json")),
        before
    );

    let again_out = dir.path().join("again");
    let (code, result, stderr) = fixture.verify_with(&again, &again_out, &from(&first_out));
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "gewinn");
    assert!(
        stderr.contains(&format!("{} pairs", before.len())),
        "{stderr}"
    );
    let after = counted_pairs(&again_out.join("stage-1-short/state.json"));
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "the first run's pairs are kept"
    );
    let adopted = &result["stages"][0]["record"]["adopted"];
    assert_eq!(adopted["pairs"], before.len() as u64, "{result:#}");
    let runs = adopted["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["candidate"], first.to_string());
    assert_eq!(runs[0]["pairs"], before.len() as u64);
    assert!(
        result["stages"][1]["record"].get("adopted").is_none(),
        "stage 2 was not reached before"
    );
    // This run's own games still start after its own binding; the entry names the adoption.
    assert_bound_before_games(&result, &again_out);
    let entry =
        oracle::governance::entry::Entry::parse(&fs::read(again_out.join("entry.yaml")).unwrap())
            .unwrap();
    let recorded = entry.stages[0]
        .adopted
        .as_ref()
        .expect("the entry names it");
    assert_eq!(recorded.runs[0].candidate.as_str(), first.to_string());

    // An adoption killed before its state was renamed into place leaves no record behind: the
    // next invocation without --games-from plays every pair and names no adoption.
    let stage_dir = refused.join("stage-1-short");
    fs::create_dir_all(&stage_dir).unwrap();
    fs::copy(
        again_out.join("stage-1-short/adopted.json"),
        stage_dir.join("adopted.json"),
    )
    .unwrap();
    let (code, result, stderr) =
        fixture.verify_with(&again, &refused, &["--profile", "long-minimum"]);
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert!(
        result["stages"][0]["record"].get("adopted").is_none(),
        "{result:#}"
    );
    assert!(!stage_dir.join("adopted.json").exists());
}

#[test]
fn an_out_dir_that_is_not_utf8_is_refused_before_any_build() {
    use std::os::unix::ffi::OsStrExt;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let candidate = fixture.commit("eval: cheaper pieces\n\nBench: 1\n");
    let parent = tempfile::tempdir().unwrap();
    let out = parent.path().join(std::ffi::OsStr::from_bytes(b"out-\xff"));
    let (code, result, stderr) = fixture.verify_in(
        &candidate.to_string(),
        &out,
        &fixture.cache,
        &["--profile", "smoke"],
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(why.contains("is not valid UTF-8"), "{why}");
    assert!(!out.exists(), "nothing is written, nothing is built");
}

/// Adoption checks every stage before it writes any: a source whose second stage is of another
/// match (its seed edited) is refused naming stage 2, and leaves nothing of its first stage in
/// `--out`, so a retry without `--games-from` names no source the log called refused. A source
/// that counts a pair beyond the stage's maximum, which no run of the match plays, is refused
/// naming the pair, as a shard holding one is. The untouched source is taken over at both stages.
#[test]
fn a_source_refused_at_any_stage_leaves_nothing_taken_over() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let (stronger, again) = fixture.stronger_and_reworded();
    let dir = tempfile::tempdir().unwrap();
    let first_out = dir.path().join("first");
    let (code, first, stderr) = fixture.verify_smoke_with(&stronger, &first_out, &[]);
    assert_eq!(code, 0, "{stderr}\n{first:#}");
    let second_stage = first_out.join("stage-2-long/state.json");
    assert!(!counted_pairs(&second_stage).is_empty(), "{first:#}");

    let edited = |name: &str, file: &str, edit: &dyn Fn(&mut Value)| {
        let source = dir.path().join(name);
        copy_tree(&first_out, &source);
        let path = source.join(file);
        let mut json: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        edit(&mut json);
        fs::write(&path, serde_json::to_vec_pretty(&json).unwrap()).unwrap();
        source
    };
    let other_seed = edited("other-seed", "stage-2-long/state.json", &|state| {
        state["fingerprint"]["seed"] =
            Value::from(state["fingerprint"]["seed"].as_u64().unwrap() ^ 1);
    });
    // The smoke stages play at most 80 games: pairs 0 to 39. The forged pair 40 is the last pair
    // renumbered, in the state and in its games' Round tags, so that its games bear it out.
    let beyond = edited("beyond", "stage-1-short/state.json", &|state| {
        let pairs = state["pairs"].as_array_mut().unwrap();
        let last = pairs.last_mut().unwrap();
        let round = last["index"].as_u64().unwrap() + 1;
        last["index"] = Value::from(40);
        let pgn_file = dir.path().join("beyond/stage-1-short/games.pgn");
        let pgn = fs::read_to_string(&pgn_file).unwrap();
        let renumbered = (1..=2).fold(pgn.clone(), |pgn, game| {
            pgn.replace(
                &format!("[Round \"{round}.{game}\"]"),
                &format!("[Round \"41.{game}\"]"),
            )
        });
        assert_ne!(pgn, renumbered, "the last pair's games are renumbered");
        let grown = (renumbered.len() - pgn.len()) as u64;
        state["pgn_bytes"] = Value::from(state["pgn_bytes"].as_u64().unwrap() + grown);
        fs::write(&pgn_file, renumbered).unwrap();
    });
    for (source, why) in [
        (&other_seed, "its games are of another match (seed differs)"),
        (&beyond, "stage 1: pair 40 is beyond the stage's 40 pairs"),
    ] {
        let refused = dir.path().join("refused");
        let (code, result, stderr) = fixture.verify_smoke_with(
            &again,
            &refused,
            &["--games-from", source.to_str().unwrap()],
        );
        assert_eq!(code, 2, "{stderr}\n{result:#}");
        let reason = result["reason"].as_str().unwrap();
        assert!(reason.contains(why), "{why}: {reason}");
        for file in [
            "stage-1-short/state.json",
            "stage-1-short/adopted.json",
            "stage-1-short/stage.json",
            "stage-1-short/adopted-stage.json",
            "stage-2-long/state.json",
            "stage-2-long/adopted.json",
            "stage-2-long/stage.json",
            "stage-2-long/adopted-stage.json",
        ] {
            assert!(
                !refused.join(file).exists(),
                "{file}: nothing is taken over from {}",
                source.display()
            );
        }
        fs::remove_dir_all(&refused).unwrap();
    }

    let taken = dir.path().join("taken");
    let (code, result, stderr) = fixture.verify_smoke_with(
        &again,
        &taken,
        &["--games-from", first_out.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], first["verdict"]);
    for stage in 0..2 {
        assert_eq!(
            result["stages"][stage]["record"]["adopted"]["pairs"],
            first["stages"][stage]["record"]["pairs"],
            "stage {}: {result:#}",
            stage + 1
        );
    }
}
