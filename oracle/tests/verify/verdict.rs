//! Step 7 of `oracle verify`, the verdict: Gewinn, Abgelehnt, Korrektur (with step 5, the
//! Randfall proof) and Gleich, the entry appended with `--append`, and the appended entry's
//! games replayed move for move by `oracle register replay --games`.

use std::fs;
use std::path::Path;
use std::process::Command;

use oracle::integrity::sha256_hex;
use serde_json::Value;

use super::{
    CRIPPLE_SUBJECT, Fixture, PROOF, REVIEWER, SERIAL, assert_bound_before_games,
    confirmation_text, step_names,
};
use crate::support::{ORACLE, oracle};

#[test]
fn much_stronger_candidate_is_a_gewinn_and_much_weaker_is_abgelehnt() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let (crippled_bench, crippled_sha256) = fixture.bench_of_worktree();
    let weaker = fixture.commit(&format!("{CRIPPLE_SUBJECT}\n\nBench: {crippled_bench}\n"));
    let out = tempfile::tempdir().unwrap();
    let repo = fixture.path().display().to_string();
    // The crippled engine is the register's current engine (chain of custody: a binding run
    // judges a change against it), registered on main before the change that restores it.
    let registered = fixture.register_genesis(&crippled_sha256, crippled_bench);
    fixture.restore();
    let (normal_bench, _) = fixture.bench_of_worktree();
    let stronger = fixture.commit(&format!(
        "eval: restore queen and rook values\n\nBench: {normal_bench}\n"
    ));
    let restored_tree = fixture.repo.revparse_single("HEAD^{tree}").unwrap().id();

    // Much stronger than its predecessor (the crippled engine): Gewinn, exit 0, appended under
    // the binding fixture profile.
    let gewinn_out = out.path().join("gewinn");
    let (code, result, stderr) = fixture.verify_with(
        &stronger.to_string(),
        &gewinn_out,
        &["--profile", "fixture", "--append"],
    );
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "accepted");
    assert_eq!(result["verdict"], "gewinn");
    assert_eq!(result["predecessor"]["commit"], registered.to_string());
    assert_eq!(result["binding"]["predecessor"]["sha256"], crippled_sha256);
    let stages = result["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    for stage in stages {
        assert_eq!(stage["record"]["state"], "accept_h1");
        assert!(stage["record"]["nelo"].as_f64().unwrap() > 150.0);
    }
    assert_bound_before_games(&result, &gewinn_out);
    let entry = fs::read_to_string(gewinn_out.join("entry.yaml")).unwrap();
    assert!(entry.contains("verdict: gewinn"), "{entry}");
    let report = fs::read_to_string(gewinn_out.join("report.md")).unwrap();
    assert!(report.starts_with("# oracle verify: Gewinn"), "{report}");
    assert!(
        fs::read_to_string(gewinn_out.join("report.svg"))
            .unwrap()
            .contains("<polyline")
    );
    for line in ["[1/7]", "[3/7]", "[4/7]", "[6/7]", "[7/7]"] {
        assert!(stderr.contains(line), "step {line} not reported:\n{stderr}");
    }
    assert_eq!(result["appended"], "T-0002");
    let verified = fixture
        .oracle(&["register", "verify", "--repo", &repo, "--json"])
        .json();
    assert_eq!(verified["ok"], true, "{verified}");
    assert_eq!(verified["n"], 2);

    // The auditor's replay rebuilds both recorded commits, re-gates, re-benches and
    // recomputes every statistic: every check passes.
    let replay = fixture
        .oracle(&["register", "replay", "T-0002", "--repo", &repo, "--json"])
        .json();
    assert_eq!(replay["ok"], true, "{replay:#}");
    let names: Vec<&str> = replay["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in [
        "rebuild candidate",
        "rebuild predecessor",
        "gate",
        "bench candidate",
        "bench predecessor",
        "verdict",
    ] {
        assert!(names.contains(&name), "replay lacks `{name}`: {names:?}");
    }

    // Much weaker than its predecessor: stage 1 accepts H0, stage 2 is not run; Abgelehnt, exit 1.
    let abgelehnt_out = out.path().join("abgelehnt");
    let (code, result, stderr) = fixture.verify(&weaker.to_string(), &abgelehnt_out);
    assert_eq!(code, 1, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "rejected");
    assert_eq!(result["verdict"], "abgelehnt");
    let stages = result["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 1);
    assert_eq!(stages[0]["record"]["state"], "accept_h0");
    assert!(stages[0]["record"]["nelo"].as_f64().unwrap() < -150.0);
    assert_bound_before_games(&result, &abgelehnt_out);
    let entry = fs::read_to_string(abgelehnt_out.join("entry.yaml")).unwrap();
    assert!(
        entry.contains("verdict: abgelehnt") && entry.contains("state: not_run"),
        "{entry}"
    );

    // The same restoration declared as a Randfall: the proof fails on the crippled predecessor
    // and passes on the candidate, non-regression holds, the loss tolerance holds: Korrektur.
    let randfall = fixture.commit_on(
        registered,
        restored_tree,
        &format!(
            "eval: a queen is worth more than a knight\n\nBench: {normal_bench}\nOracle-Path: randfall\nOracle-Proof: engine/proofs/hanging-queen.yaml\n"
        ),
    );
    // A reviewer other than the author confirms it (Annex A3.3); the entry records it.
    let korrektur_out = out.path().join("korrektur");
    let confirmation = out.path().join("confirmation.yaml");
    fs::write(
        &confirmation,
        confirmation_text(
            &randfall.to_string(),
            &sha256_hex(PROOF.as_bytes()),
            REVIEWER,
        ),
    )
    .unwrap();
    let (code, korrektur, stderr) = fixture.verify_with(
        &randfall.to_string(),
        &korrektur_out,
        &[
            "--profile",
            "smoke",
            "--confirmation",
            confirmation.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}\n{korrektur:#}");
    assert_eq!(korrektur["verdict"], "korrektur");
    assert_eq!(korrektur["path"], "randfall");
    assert_eq!(korrektur["confirmation"]["confirmed_by"], REVIEWER);
    let entry = fs::read_to_string(korrektur_out.join("entry.yaml")).unwrap();
    assert!(
        entry.contains("predecessor: fail") && entry.contains("candidate: pass"),
        "{entry}"
    );
    let confirmation_bytes = fs::read(&confirmation).unwrap();
    let recorded = oracle::governance::entry::Entry::parse(entry.as_bytes())
        .unwrap()
        .confirmation
        .unwrap_or_else(|| panic!("no confirmation in the entry:\n{entry}"));
    assert_eq!(recorded.confirmed_by, REVIEWER);
    assert_eq!(recorded.proof_sha256.as_str(), sha256_hex(PROOF.as_bytes()));
    assert_eq!(
        recorded.file_sha256.as_str(),
        sha256_hex(&confirmation_bytes)
    );
    assert_eq!(
        recorded.statements.named().map(|(_, text)| text.to_owned()),
        [
            "The predecessor takes the knight with its queen; the candidate does not.",
            "Hanging-queen captures defended by a pawn.",
            "A documented bug: the queen was valued like a pawn.",
        ]
    );
    assert_eq!(
        fs::read(korrektur_out.join("inputs/confirmation.yaml")).unwrap(),
        confirmation_bytes
    );
    let report = fs::read_to_string(korrektur_out.join("report.md")).unwrap();
    assert!(
        report.contains("## Independent confirmation (Annex A3.3)"),
        "{report}"
    );
    assert!(entry.contains("claimed_gain_nelo: 0.0"), "{entry}");
    assert_bound_before_games(&korrektur, &korrektur_out);

    // Verifying again from the same --out replays nothing: the binding and the stage are kept.
    let (code, again, _) = fixture.verify(&weaker.to_string(), &abgelehnt_out);
    assert_eq!(code, 1);
    assert_eq!(again["binding"], result["binding"]);
    assert_eq!(again["stages"][0]["record"], result["stages"][0]["record"]);

    land_then_withdraw(&fixture, &registered.to_string(), &gewinn_out);
}

/// After the Gewinn of [`much_stronger_candidate_is_a_gewinn_and_much_weaker_is_abgelehnt`]
/// (HEAD the candidate, `register/T-0002.yaml` appended to the work tree, the run in `out`),
/// `oracle register landing` (docs/ci-trust.md, "How an entry lands") judges the pushes to main
/// that follow: the landing of the candidate with its entry and evidence, a stray engine change
/// without an entry, and the withdrawals that take it out again.
fn land_then_withdraw(fixture: &Fixture, before_landing: &str, out: &Path) {
    let repo = fixture.path().display().to_string();
    let cache = fixture.cache.display().to_string();
    let landing = |before: &str| {
        let run = oracle(&[
            "register",
            "landing",
            "--before",
            before,
            "--repo",
            &repo,
            "--cache-dir",
            &cache,
            "--json",
        ]);
        let json = run.json();
        let last = json["checks"].as_array().unwrap().last().unwrap().clone();
        (run.code, json, last)
    };

    // The landing: the register verifies, the added entry replays, the tree is the candidate's
    // plus the entry and its evidence.
    fixture.keep_evidence(out, "T-0002");
    fixture.commit("register: T-0002 with its evidence");
    let landed = fixture.repo.head().unwrap().target().unwrap().to_string();
    let (code, json, last) = landing(before_landing);
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(json["kind"]["kind"], "engine_landing", "{json:#}");
    let names: Vec<&str> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| check["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["paths", "register", "replay T-0002", "landed tree"]);
    assert_eq!(last["pass"], true, "{json:#}");

    // A stray engine change reaches main without an entry: it does not rebuild to the
    // register's current engine (T-0002's candidate), so it is no withdrawal.
    fixture.cripple();
    fixture.commit("eval: a stray push");
    let stray = fixture.repo.head().unwrap().target().unwrap().to_string();
    let (code, json, last) = landing(&landed);
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(json["kind"]["kind"], "withdrawal", "{json:#}");
    let detail = last["detail"].as_str().unwrap();
    assert!(
        detail.contains("not to the register's current engine T-0002"),
        "{json:#}"
    );

    // A "withdrawal" that restores the engine and brings a build script along: a build hook no
    // candidate may add, refused before anything is built, whatever the binary would be.
    fixture.restore();
    fixture.write("engine/build.rs", "fn main() {}\n");
    fixture.commit("revert: the stray push, and a build script");
    let (code, json, last) = landing(&stray);
    assert_eq!(code, 1, "{json:#}");
    let detail = last["detail"].as_str().unwrap();
    assert!(
        detail.contains("engine/build.rs (a build script runs at build time"),
        "{json:#}"
    );

    // The withdrawal proper rebuilds to the registered binary.
    fs::remove_file(fixture.path().join("engine/build.rs")).unwrap();
    fixture.commit("revert: the stray push");
    let (code, json, last) = landing(&stray);
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(last["name"], "withdrawal", "{json:#}");
}

/// Article 2.4: a comment-only engine change builds to the predecessor's exact binary; it plays
/// no game, its verdict is Gleich (exit 0), and the register takes it: `register verify` and
/// `register replay` check that both recorded binaries are the same and rebuild to it.
#[test]
fn a_bit_identical_engine_change_is_gleich_without_games() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let repo = fixture.path().display().to_string();
    let (bench, sha256) = fixture.bench_of_worktree();
    fixture.register_genesis(&sha256, bench);
    // At the end of the file: a comment that moved later lines would change the panic locations
    // compiled into the binary.
    let lib = fs::read_to_string(fixture.path().join("engine/src/lib.rs")).unwrap();
    fixture.write(
        "engine/src/lib.rs",
        &format!("{lib}\n// The engine's modules, as the crate root lists them.\n"),
    );
    let comment = fixture
        .commit(&format!("lib: a comment\n\nBench: {bench}\n"))
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    for (profile, out) in [
        ("smoke", dir.path().join("smoke")),
        ("fixture", dir.path().join("fixture")),
    ] {
        let mut args = vec!["--profile", profile];
        if profile == "fixture" {
            args.push("--append");
        }
        let (code, result, stderr) = fixture.verify_with(&comment, &out, &args);
        assert_eq!(code, 0, "{stderr}\n{result:#}");
        assert_eq!(result["status"], "accepted");
        assert_eq!(result["verdict"], "gleich");
        assert!(
            result["reason"]
                .as_str()
                .unwrap()
                .starts_with("Gleich: the candidate's binary is bit-identical"),
            "{result:#}"
        );
        assert_eq!(result["binding"]["candidate"]["sha256"], sha256);
        assert_eq!(result["binding"]["predecessor"]["sha256"], sha256);
        assert!(result["stages"].as_array().unwrap().is_empty());
        let skipped: Vec<String> = step_names(&result)
            .into_iter()
            .filter(|(_, status)| status == "skipped")
            .map(|(step, _)| step)
            .collect();
        assert_eq!(skipped, ["proof", r#"{"stage":1}"#, r#"{"stage":2}"#]);
        assert!(
            stderr.contains("plan: no games, the binaries are bit-identical"),
            "{stderr}"
        );
        assert!(!out.join("stage-1-short").exists(), "no game was played");
        let entry =
            oracle::governance::entry::Entry::parse(&fs::read(out.join("entry.yaml")).unwrap())
                .unwrap();
        assert_eq!(entry.verdict.name(), "gleich");
        assert_eq!(entry.claimed_gain_nelo, 0.0);
        assert_eq!(entry.candidate.binary_sha256.as_str(), sha256);
        assert_eq!(
            entry.predecessor.as_ref().unwrap().binary_sha256.as_str(),
            sha256
        );
        assert!(
            entry
                .stages
                .iter()
                .all(|stage| stage.state.to_string() == "not_run" && stage.games == 0)
        );
        let report = fs::read_to_string(out.join("report.md")).unwrap();
        assert!(report.starts_with("# oracle verify: Gleich"), "{report}");
    }
    let verified = fixture
        .oracle(&["register", "verify", "--repo", &repo, "--json"])
        .json();
    assert_eq!(
        (&verified["ok"], &verified["n"]),
        (&Value::from(true), &Value::from(2)),
        "{verified}"
    );
    let replay = fixture
        .oracle(&["register", "replay", "T-0002", "--repo", &repo, "--json"])
        .json();
    assert_eq!(replay["ok"], true, "{replay:#}");
    let checks = replay["checks"].as_array().unwrap();
    let verdict = checks.iter().find(|c| c["name"] == "verdict").unwrap();
    assert!(
        verdict["detail"]
            .as_str()
            .unwrap()
            .starts_with("recorded gleich, recomputed gleich"),
        "{verdict}"
    );
    assert!(
        checks
            .iter()
            .any(|c| c["name"] == "rebuild candidate" && c["pass"] == true)
    );
}

/// Runs gzip with `args` on `input`; its output.
fn gzip(args: &[&str], input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new("gzip")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    output.stdout
}

/// The games of an appended entry, kept by `scripts/keep-evidence.sh`, are played again by
/// `oracle register replay --games` with the rebuilt binaries and match move for move; a PGN
/// that is not the entry's is named by its hash, one with a move changed (and the entry's
/// `pgn_sha256` changed with it) by the ply, and a missing one by its file name.
#[test]
fn an_entrys_games_replay_move_for_move_and_a_changed_move_is_named() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let (stronger, crippled_sha256) = fixture.stronger_than_the_registered_engine();
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify_with(
        &stronger.to_string(),
        out.path(),
        &["--profile", "fixture", "--append"],
    );
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["appended"], "T-0002");
    fixture.keep_evidence(out.path(), "T-0002");

    // A measured point of the progress chart: both entries' engines rebuilt to the sha256 the
    // register records, a fixed-length match, and the games hashed into the file.
    let measure = Command::new(ORACLE)
        .args([
            "register",
            "measure",
            "T-0002",
            "T-0001",
            "--tc",
            "nodes=2000",
        ])
        .args(["--games", "4", "--profile", "fixture", "--json", "--repo"])
        .arg(fixture.path())
        .arg("--cache-dir")
        .arg(&fixture.cache)
        .output()
        .unwrap();
    assert!(measure.status.success(), "{measure:?}");
    let measured: Value = serde_json::from_slice(&measure.stdout).unwrap();
    let point = &measured["measurement"];
    assert_eq!(
        point["measured"]["binary_sha256"],
        result["binding"]["candidate"]["sha256"]
    );
    assert_eq!(point["baseline"]["binary_sha256"], crippled_sha256.as_str());
    assert_eq!(point["games"], 4);
    let pgn = fs::read(measured["pgn"].as_str().unwrap()).unwrap();
    assert_eq!(point["pgn_sha256"], sha256_hex(&pgn).as_str());
    assert!(
        fs::read_to_string(measured["file"].as_str().unwrap())
            .unwrap()
            .contains("id: T-0002")
    );

    // Faithful evidence: both node stages, two pairs each, every game identical.
    let (code, stdout, _) = fixture.replay_games(true, Some("7"));
    assert_eq!(code, 0, "{stdout}");
    let replay: Value = serde_json::from_str(&stdout).unwrap();
    let stages = replay["replay"]["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    for stage in stages {
        assert_eq!(stage["status"], "replayed", "{stage:#}");
        assert_eq!(stage["pairs"].as_array().unwrap().len(), 2);
        let games = stage["games"].as_array().unwrap();
        assert_eq!(games.len(), 4);
        assert!(games.iter().all(|g| g["difference"].is_null()), "{stage:#}");
    }
    // Without --seed the choice is drawn afresh (round seven: a choice derived from the entry
    // was known to whoever wrote it), and named so that another auditor can repeat it.
    let (code, text, _) = fixture.replay_games(false, None);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("replay T-0002 --games: 8 of 8 games identical\n"),
        "{text}"
    );
    let seed_of = |text: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix("seed "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("the seed is named: {text}"))
    };
    let pairs = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("stage "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let seed = seed_of(&text);
    let (_, other, _) = fixture.replay_games(false, None);
    assert_ne!(seed, seed_of(&other), "each audit draws its own seed");
    assert_eq!(
        pairs(&text),
        pairs(&fixture.replay_games(false, Some(&seed)).1),
        "the named seed repeats the choice"
    );

    // One engine move changed: the last move of the first chosen game of stage 1.
    let evidence = fixture.path().join("evidence/T-0002/stage-1-short.pgn.gz");
    let original = fs::read(&evidence).unwrap();
    let pgn = String::from_utf8(gzip(&["-dc"], &original)).unwrap();
    let pair = stages[0]["pairs"][0].as_u64().unwrap();
    let games = oracle::verify::recorded::parse_games(&pgn, &evidence).unwrap();
    let game = games
        .iter()
        .find(|g| g.pair == pair && g.game == 0)
        .unwrap();
    let ply = game.moves.len();
    let mut pos = match &game.fen {
        Some(fen) => oracle::play::book::parse_fen(fen).unwrap(),
        None => shakmaty::Chess::default(),
    };
    pos = oracle::play::book::play_uci_moves(pos, &game.moves[..ply - 1]).unwrap();
    use shakmaty::Position;
    let other = pos
        .legal_moves()
        .into_iter()
        .map(|m| shakmaty::san::SanPlus::from_move(pos.clone(), m).to_string())
        .find(|san| *san != game.san[ply - 1])
        .expect("another legal move");
    let round = format!("[Round \"{}.1\"]", pair + 1);
    let start = pgn.find(&round).unwrap();
    let end = pgn[start..].find("\n\n[").map_or(pgn.len(), |e| start + e);
    let block = &pgn[start..end];
    let last = &game.san[ply - 1];
    let at = block
        .match_indices(last.as_str())
        .map(|(i, _)| i)
        .filter(|&i| {
            let before = block[..i].chars().last().unwrap();
            let after = block[i + last.len()..].chars().next().unwrap();
            (before.is_whitespace() || before == '.') && after.is_whitespace()
        })
        .last()
        .unwrap();
    let tampered = format!(
        "{}{other}{}",
        &pgn[..start + at],
        &pgn[start + at + last.len()..]
    );
    fs::write(&evidence, gzip(&["-9", "-n", "-c"], tampered.as_bytes())).unwrap();

    // Under the entry's pgn_sha256 the file is not the recorded one: named by its hash.
    let (code, text, _) = fixture.replay_games(false, Some("7"));
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("stage short (nodes=600): FAIL")
            && text.contains("stage-1-short.pgn.gz hashes to")
            && text.contains("the entry records pgn_sha256"),
        "{text}"
    );

    // The entry's pgn_sha256 changed with it: the game is played again and the ply is named.
    let file = fixture.path().join("register/T-0002.yaml");
    let mut entry = oracle::governance::entry::Entry::parse(&fs::read(&file).unwrap()).unwrap();
    entry.stages[0].pgn_sha256 = Some(sha256_hex(tampered.as_bytes()).try_into().unwrap());
    fs::write(&file, entry.to_canonical().unwrap()).unwrap();
    let (code, text, _) = fixture.replay_games(false, Some("7"));
    assert!(
        text.starts_with("pass register: "),
        "the edited entry still chains: {text}"
    );
    assert_eq!(code, 1, "{text}");
    let expected = format!(
        "  round {}.1: DIFFERS at ply {ply}: expected {other}, played {last}\n",
        pair + 1
    );
    assert!(text.contains(&expected), "{expected}\n{text}");

    // One result changed, every move kept (and the entry's pgn_sha256 changed with it): the
    // games no longer give the entry's pentanomial, and the replay fails before playing.
    let tag = pgn.find("[Result \"").unwrap() + "[Result \"".len();
    let was = &pgn[tag..tag + pgn[tag..].find('"').unwrap()];
    let now = if was == "1/2-1/2" { "1-0" } else { "1/2-1/2" };
    let token = tag + pgn[tag..].find(&format!(" {was}\n")).unwrap();
    let changed = format!(
        "{}{now}{} {now}\n{}",
        &pgn[..tag],
        &pgn[tag + was.len()..token],
        &pgn[token + was.len() + 2..]
    );
    fs::write(&evidence, gzip(&["-9", "-n", "-c"], changed.as_bytes())).unwrap();
    entry.stages[0].pgn_sha256 = Some(sha256_hex(changed.as_bytes()).try_into().unwrap());
    fs::write(&file, entry.to_canonical().unwrap()).unwrap();
    let (code, text, _) = fixture.replay_games(false, Some("7"));
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("give the pentanomial") && text.contains("the entry records ["),
        "{text}"
    );

    // Missing evidence is bad input: exit 2, naming the file, before anything is built.
    fs::remove_file(&evidence).unwrap();
    let (code, _, stderr) = fixture.replay_games(false, Some("7"));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("evidence/T-0002/stage-1-short.pgn.gz: missing"),
        "{stderr}"
    );
}
