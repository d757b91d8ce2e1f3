//! `oracle register append`: locking, refusals, crash safety.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use oracle::governance::entry::{Entry, PathKind, StageRecord, StageState};
use oracle::stats::{Model, PentanomialCounts, SequentialSprt, SprtDecision, SprtParams};

use crate::support::register_fixture::{
    Repo, at, binary, engine, genesis_entry, git_id, sample_entries, stage, tested_entry,
};
use crate::support::{ORACLE, Run};

/// A draft Gewinn of the fixture's binding profile: id, prev_sha256 and recorded_at null.
fn draft() -> Entry {
    draft_with_short_stage(stage(0, PathKind::Standard, Some([80, 240, 720, 400, 160])))
}

/// A draft of the fixture's binding profile with stage `short` as given and stage `long` a pass;
/// its verdict is what the evidence gives.
fn draft_with_short_stage(short: StageRecord) -> Entry {
    let mut entry = tested_entry(
        PathKind::Standard,
        vec![
            short,
            stage(1, PathKind::Standard, Some([72, 256, 704, 408, 160])),
        ],
        None,
        at(10, 0),
    );
    entry.recorded_at = None;
    entry
}

/// Stage `short` as an honest run in 8 shards records it: the SPRT looked after every round of
/// 8 pairs (one from each shard), each round `[0, 1, 4, 3, 0]`, and accepted H1 once the LLR
/// passed Wald's bound narrowed by the overshoot correction; the entry records those bounds.
fn sharded_stage() -> StageRecord {
    const ROUND: [u64; 5] = [0, 1, 4, 3, 0];
    let shards = ROUND.iter().sum::<u64>();
    let unplayed = stage(0, PathKind::Standard, None);
    let params = SprtParams::new(
        unplayed.elo0,
        unplayed.elo1,
        unplayed.alpha,
        unplayed.beta,
        Model::Normalized,
    )
    .unwrap();
    let mut sprt = SequentialSprt::new(params, shards).unwrap();
    let mut counts = PentanomialCounts([0; 5]);
    while sprt.decision() == SprtDecision::Continue {
        for (count, added) in counts.0.iter_mut().zip(ROUND) {
            *count += added;
        }
        sprt.update(&counts).unwrap();
    }
    assert_eq!(sprt.decision(), SprtDecision::AcceptH1);
    let mut record = stage(0, PathKind::Standard, Some(counts.0));
    (record.lower, record.upper) = sprt.decision_bounds();
    record.look_pairs = Some(shards);
    record.state = StageState::AcceptH1;
    record
}

/// A draft Korrektur of the fixture (the register sample's T-0003, with its confirmation), judged
/// against the genesis engine.
fn korrektur_draft() -> Entry {
    let mut entry = sample_entries()[2].clone();
    assert_eq!(entry.verdict, oracle::governance::entry::Verdict::Korrektur);
    entry.recorded_at = None;
    entry.predecessor = Some(engine('1'));
    entry.candidate = engine('3');
    entry
}

/// Writes `entry` as YAML to `name` in the repo's root and returns the path as text.
fn write_draft(repo: &Repo, name: &str, entry: &Entry) -> String {
    let path = repo.path().join(name);
    std::fs::write(&path, entry.to_canonical().unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// Stage `short` accepted at an LLR far below Wald's bound, its recorded bounds shrunk to
/// ±0.05 so that the recorded LLR lies outside them.
fn weakened_stage() -> StageRecord {
    let mut weakened = stage(0, PathKind::Standard, Some([10, 30, 90, 50, 20]));
    assert!(
        0.05 < weakened.llr && weakened.llr < 2.5,
        "the fixture needs an LLR between the forged and the real bound: {}",
        weakened.llr
    );
    weakened.lower = -0.05;
    weakened.upper = 0.05;
    weakened.state = StageState::AcceptH1;
    weakened
}

/// A change made to a valid draft.
type Change = Box<dyn Fn(&mut Entry)>;

/// A repository whose register holds only the fixture's genesis entry.
fn repo_with_genesis() -> Repo {
    let repo = Repo::new();
    repo.write_register(&[genesis_entry()]);
    repo
}

#[test]
fn a_draft_is_completed_and_appended_as_the_next_entry() {
    let repo = repo_with_genesis();
    let file = write_draft(&repo, "draft.yaml", &draft());
    let output = repo.oracle(&["register", "append", &file]);
    assert_eq!(output.code, 0, "{}{}", output.stdout, output.stderr);
    assert!(
        output.stdout.starts_with("appended T-0002\nhead="),
        "{}",
        output.stdout
    );
    let written = Entry::parse(&std::fs::read(repo.entry_path("T-0002.yaml")).unwrap()).unwrap();
    let genesis_hash = oracle::governance::hash::Sha256Hex::of(
        &std::fs::read(repo.entry_path("T-0001.yaml")).unwrap(),
    );
    assert_eq!(written.prev_sha256, Some(genesis_hash));
    assert!(written.recorded_at.is_some());
    // Verified in full: its rules read from its predecessor commit, its custody checked.
    let report: serde_json::Value = repo.oracle(&["register", "verify", "--json"]).json();
    assert_eq!(
        (&report["ok"], &report["unchecked"]),
        (&serde_json::json!(true), &serde_json::json!([])),
        "{report}"
    );
    assert_eq!(
        repo.register_listing(),
        [".lock", "T-0001.yaml", "T-0002.yaml"]
    );
}

/// Issue 12's honest bug: a sharded Gewinn decided at an LLR between the overshoot-corrected
/// bound and Wald's (2.932 in [2.890, 2.944)) is appended, verified and replayed.
#[test]
fn a_sharded_gewinn_accepted_below_walds_bound_is_appended_verified_and_replayed() {
    let short = sharded_stage();
    let wald = SprtParams::new(
        short.elo0,
        short.elo1,
        short.alpha,
        short.beta,
        Model::Normalized,
    )
    .unwrap()
    .upper_bound();
    assert!(
        short.upper <= short.llr && short.llr < wald,
        "the fixture needs an LLR between the corrected bound {} and Wald's {wald}: {}",
        short.upper,
        short.llr
    );
    let repo = repo_with_genesis();
    let file = write_draft(&repo, "sharded.yaml", &draft_with_short_stage(short));
    for args in [
        &["register", "append", &file][..],
        &["register", "verify"],
        &["register", "replay", "T-0002", "--statistics-only"],
    ] {
        let output = repo.oracle(args);
        assert_eq!(
            output.code, 0,
            "{args:?}: {}{}",
            output.stdout, output.stderr
        );
    }
    let written = Entry::parse(&std::fs::read(repo.entry_path("T-0002.yaml")).unwrap()).unwrap();
    assert_eq!(written.verdict, oracle::governance::entry::Verdict::Gewinn);
    assert_eq!(written.stages[0].look_pairs, Some(8));
}

#[test]
fn append_with_a_stale_head_is_refused_naming_the_head() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    let stale = oracle::governance::hash::Sha256Hex::of(
        &std::fs::read(repo.entry_path("T-0004.yaml")).unwrap(),
    );
    let mut entry = draft();
    entry.prev_sha256 = Some(stale.clone());
    let file = write_draft(&repo, "stale.yaml", &entry);
    let before = repo.register_listing();
    let output = repo.oracle(&["register", "append", &file]);
    assert_eq!(output.code, 1);
    let text = &output.stdout;
    assert!(
        text.contains(&format!(
            "refused: {file}: stale prev_sha256 {stale}: the head is "
        )),
        "{text}"
    );
    assert!(text.contains("(T-0005)"), "{text}");
    assert_eq!(
        repo.register_listing()
            .into_iter()
            .filter(|n| n != ".lock")
            .collect::<Vec<_>>(),
        before
    );
}

#[test]
fn append_refuses_what_does_not_belong_in_the_register() {
    let repo = repo_with_genesis();
    let cases: Vec<(Change, &str)> = vec![
        (
            Box::new(|e| e.profile = Some("smoke".into())),
            "profile `smoke` is not binding",
        ),
        (
            Box::new(|e| e.profile = Some("fleet".into())),
            "no profile `fleet` in the constitution (profiles: bound, smoke)",
        ),
        (
            Box::new(|e| e.id = Some(oracle::governance::entry::EntryId::new(7))),
            "entry id is T-0007, the next entry is T-0002",
        ),
        (
            Box::new(|e| e.verdict = oracle::governance::entry::Verdict::Abgelehnt),
            "verdict abgelehnt does not follow from the evidence",
        ),
        (
            Box::new(|e| e.stages[1].elo1 = 2.0),
            "stage `long`: field `elo1` is 2, profile `bound` stage `long` has 10",
        ),
        (
            Box::new(|e| e.stages.truncate(1)),
            "the entry has 1 stages, profile `bound` has 2",
        ),
        (
            Box::new(|e| e.recorded_at = Some(at(8, 59))),
            "recorded_at 2026-10-16T08:59:00Z is before the head's 2026-10-16T09:00:00Z (T-0001)",
        ),
        (
            Box::new(|e| {
                e.constitution_sha256 = oracle::governance::hash::Sha256Hex::of(b"older rules")
            }),
            "the entry was judged under constitution",
        ),
        (
            Box::new(|e| e.path = PathKind::Genesis),
            "a genesis entry is written by `oracle register genesis`",
        ),
        (
            // A forged entry: judged against an engine that never landed.
            Box::new(|e| e.predecessor = Some(binary('5', 695))),
            "is not the register's current engine T-0001",
        ),
        (
            // A predecessor commit the repository never had.
            Box::new(|e| e.predecessor.as_mut().unwrap().commit = git_id('f')),
            "field `predecessor.commit`: commit ffffffffffffffffffffffffffffffffffffffff is not \
             in the repository",
        ),
        (
            // The weakened entry: an LLR short of Wald's bound, passed by bounds of ±0.05.
            Box::new(|e| e.stages[0] = weakened_stage()),
            "do not follow from the recorded counts: stage short: bounds",
        ),
        (
            // Hostile counts: their sum overflows u64 (it used to panic, exit 101).
            Box::new(|e| e.stages[0].pentanomial[4] = u64::MAX),
            "stage short: pairs and games: pentanomial [80, 240, 720, 400, 18446744073709551615] \
             sums to more than 9007199254740992 pairs",
        ),
        (
            // A look of no pairs, and one larger than any shard count (it used to panic).
            Box::new(|e| e.stages[0].look_pairs = Some(0)),
            "stage short: pairs per look: 0 pairs per look, not 1 to 4294967295",
        ),
        (
            Box::new(|e| e.stages[0].look_pairs = Some(u64::MAX)),
            "stage short: pairs per look: 18446744073709551615 pairs per look",
        ),
        (
            // A Korrektur nobody independent confirmed (Annex A3.3).
            Box::new(|e| {
                *e = korrektur_draft();
                e.confirmation = None;
            }),
            "verdict korrektur without field `confirmation`",
        ),
        (
            // A confirmation of another proof spec than the one the oracle ran.
            Box::new(|e| {
                *e = korrektur_draft();
                e.confirmation.as_mut().unwrap().proof_sha256 =
                    oracle::governance::hash::Sha256Hex::of(b"another spec");
            }),
            "field `confirmation.proof_sha256` is",
        ),
    ];
    for (index, (change, message)) in cases.iter().enumerate() {
        let mut entry = draft();
        change(&mut entry);
        let file = write_draft(&repo, &format!("case{index}.yaml"), &entry);
        let output = repo.oracle(&["register", "append", &file]);
        assert_eq!(output.code, 1, "case {index}: {}", output.stderr);
        assert!(
            output.stdout.contains(message),
            "case {index}: {}",
            output.stdout
        );
    }
    assert_eq!(repo.register_listing(), [".lock", "T-0001.yaml"]);
}

#[test]
fn append_needs_genesis_and_a_sound_register_and_names_bad_input() {
    let empty = Repo::new();
    let file = write_draft(&empty, "draft.yaml", &draft());
    let output = empty.oracle(&["register", "append", &file]);
    assert_eq!(output.code, 1);
    assert!(
        output
            .stdout
            .contains("the register is empty: create its genesis entry first")
    );

    let broken = Repo::new();
    broken.write_register(&sample_entries());
    std::fs::remove_file(broken.entry_path("T-0002.yaml")).unwrap();
    let file = write_draft(&broken, "draft.yaml", &draft());
    let output = broken.oracle(&["register", "append", &file]);
    assert_eq!(output.code, 2);
    assert!(output.stderr.contains("the register does not verify"));

    let repo = repo_with_genesis();
    let bad = repo.path().join("bad.yaml");
    std::fs::write(
        &bad,
        draft()
            .to_canonical()
            .unwrap()
            .replace("verdict: gewinn", "verdict: maybe"),
    )
    .unwrap();
    let output = repo.oracle(&["register", "append", &bad.to_string_lossy()]);
    assert_eq!(output.code, 2);
    let error = &output.stderr;
    assert!(
        error.contains("bad.yaml: line 6, column 10: verdict: unknown variant `maybe`"),
        "{error}"
    );
}

#[test]
fn sixteen_concurrent_appends_make_sixteen_contiguous_entries() {
    let repo = repo_with_genesis();
    // Abgelehnt drafts: they leave the current engine as it is, so every one of them is judged
    // against it (sixteen Gewinn drafts against one predecessor cannot all land).
    let mut rejected = tested_entry(
        PathKind::Standard,
        vec![
            stage(0, PathKind::Standard, Some([40, 100, 180, 60, 20])),
            stage(1, PathKind::Standard, None),
        ],
        None,
        at(10, 0),
    );
    rejected.recorded_at = None;
    let file = write_draft(&repo, "draft.yaml", &rejected);
    let children: Vec<_> = (0..16)
        .map(|_| {
            Command::new(ORACLE)
                .args(["register", "append", &file, "--repo"])
                .arg(repo.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut appended: Vec<String> = children
        .into_iter()
        .map(|child| {
            let output = Run::from(child.wait_with_output().unwrap());
            assert_eq!(output.code, 0, "{}", output.stderr);
            output.stdout.lines().next().unwrap().to_owned()
        })
        .collect();
    appended.sort();
    let expected: Vec<String> = (2..=17).map(|n| format!("appended T-{n:04}")).collect();
    assert_eq!(appended, expected);
    let verify = repo.oracle(&["register", "verify", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&verify.stdout).unwrap();
    assert_eq!(
        (report["ok"].as_bool(), report["n"].as_u64()),
        (Some(true), Some(17)),
        "{report}"
    );
}

/// Starts an append that stops at the fault hook with `mode`.
fn append_with_fault(repo: &Repo, file: &str, mode: &str) -> std::process::Child {
    Command::new(ORACLE)
        .args(["register", "append", file, "--repo"])
        .arg(repo.path())
        .env(oracle::governance::register::store::FAULT_HOOK_ENV, mode)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn kill_during_append_leaves_no_partial_entry() {
    let repo = repo_with_genesis();
    let file = write_draft(&repo, "draft.yaml", &draft());
    let mut child = append_with_fault(&repo, &file, "pause");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !repo
        .register_listing()
        .iter()
        .any(|name| name.starts_with(".tmp-"))
    {
        assert!(
            Instant::now() < deadline,
            "the append never reached its fault hook"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    let listing = repo.register_listing();
    assert!(!listing.contains(&"T-0002.yaml".to_owned()), "{listing:?}");
    let temp: Vec<_> = listing
        .iter()
        .filter(|name| name.starts_with(".tmp-"))
        .collect();
    assert_eq!(
        temp.len(),
        1,
        "the written temp file stays hidden: {listing:?}"
    );
    assert!(
        repo.oracle(&["register", "verify"])
            .stdout
            .ends_with(" n=1\n")
    );

    let mut aborted = append_with_fault(&repo, &file, "abort");
    assert!(!aborted.wait().unwrap().success());
    assert!(!repo.register_listing().contains(&"T-0002.yaml".to_owned()));

    let output = repo.oracle(&["register", "append", &file]);
    assert_eq!(output.code, 0, "{}", output.stderr);
    assert_eq!(
        repo.register_listing(),
        [".lock", "T-0001.yaml", "T-0002.yaml"],
        "stale temp files are removed under the lock"
    );
    assert_eq!(repo.oracle(&["register", "verify"]).code, 0);
}
