//! The register end to end: verify, show, replay, genesis, and the tamper cases.

use oracle::governance::entry::{Entry, StageRecord, StageState, Verdict};
use oracle::stats::{Model, PentanomialCounts, SprtParams, sprt_status};

use crate::support::register_fixture::{self, Repo, measure, redecide, sample_entries};

#[test]
fn sample_register_has_the_intended_verdicts_and_verifies() {
    let entries = sample_entries();
    let states: Vec<Vec<StageState>> = entries
        .iter()
        .map(|e| e.stages.iter().map(|s| s.state).collect())
        .collect();
    let verdicts: Vec<Verdict> = entries.iter().map(|e| e.verdict).collect();
    assert_eq!(
        verdicts,
        [
            Verdict::Genesis,
            Verdict::Gewinn,
            Verdict::Korrektur,
            Verdict::Abgelehnt,
            Verdict::Abgelehnt
        ],
        "{states:?}"
    );
    let repo = Repo::new();
    repo.write_register(&entries);
    let output = repo.oracle(&["register", "verify"]);
    assert_eq!(output.code, 0, "{}", output.stdout);
    let head = oracle::governance::hash::Sha256Hex::of(
        &std::fs::read(repo.entry_path("T-0005.yaml")).unwrap(),
    );
    assert_eq!(output.stdout, format!("head={head} n=5\n"));
    let report: serde_json::Value = repo.oracle(&["register", "verify", "--json"]).json();
    assert_eq!(
        report,
        serde_json::json!({
            "ok": true,
            "n": 5,
            "head": head.to_string(),
            "errors": [],
            "unchecked": []
        })
    );
}

#[test]
fn korrektur_books_its_deficit_and_replay_recomputes_every_entry() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    let korrektur = Entry::parse(&std::fs::read(repo.entry_path("T-0003.yaml")).unwrap()).unwrap();
    let deficit = -korrektur.stages[1].nelo;
    assert!(
        deficit > 0.0,
        "the fixture's Randfall should cost a little: {deficit}"
    );
    assert_eq!(korrektur.loss_budget.booked, deficit);
    assert_eq!(korrektur.loss_budget.used_after, deficit);
    for id in ["T-0001", "T-0002", "T-0003", "T-0004", "T-0005"] {
        let output = repo.oracle(&["register", "replay", id, "--statistics-only"]);
        assert_eq!(output.code, 0, "{id}: {}", output.stdout);
    }
    let report = repo
        .oracle(&[
            "register",
            "replay",
            "T-0002",
            "--statistics-only",
            "--json",
        ])
        .json();
    let checks = report["checks"].as_array().unwrap();
    assert!(
        checks.len() >= 15 && checks.iter().all(|c| c["pass"] == true),
        "{report}"
    );
}

#[test]
fn replay_catches_a_statistic_that_does_not_follow_from_the_counts() {
    let repo = Repo::new();
    let mut entries = sample_entries();
    // Forged counts: losses and wins swapped (same number of pairs), the LLR and state of a pass kept.
    entries[1].stages[1].pentanomial = [160, 408, 704, 256, 72];
    repo.write_register(&entries);
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "verify recomputes the statistics too: {text}");
    assert!(
        text.contains("T-0002.yaml") && text.contains("recomputed stage long: llr"),
        "{text}"
    );
    let output = repo.oracle(&["register", "replay", "T-0002", "--statistics-only"]);
    assert_eq!(output.code, 1);
    let text = &output.stdout;
    assert!(
        text.contains("FAIL stage long: llr") && text.contains("FAIL verdict"),
        "{text}"
    );
}

#[test]
fn verify_and_replay_refuse_bounds_narrowed_beyond_any_overshoot() {
    let repo = Repo::new();
    let mut entries = sample_entries();
    let weakened = &mut entries[1].stages[0];
    weakened.pentanomial = [10, 30, 90, 50, 20];
    let status = sprt_status(
        &PentanomialCounts(weakened.pentanomial),
        &SprtParams::new(0.0, 10.0, 0.05, 0.05, Model::Normalized).unwrap(),
    )
    .unwrap();
    (weakened.pairs, weakened.games) = (status.pairs, status.games);
    (weakened.llr, weakened.nelo, weakened.nelo_ci95) = (status.llr, status.nelo, status.nelo_ci95);
    assert!(
        0.05 < weakened.llr && weakened.llr < 2.5,
        "{}",
        weakened.llr
    );
    (weakened.lower, weakened.upper) = (-0.05, 0.05);
    repo.write_register(&entries);
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("T-0002.yaml") && text.contains("recomputed stage short: bounds"),
        "{text}"
    );
    let output = repo.oracle(&["register", "replay", "T-0002", "--statistics-only"]);
    assert_eq!(output.code, 1);
    assert!(
        output.stdout.contains("FAIL stage short: bounds"),
        "{}",
        output.stdout
    );
}

/// Hostile numbers in a committed entry are findings, never a panic: counts whose sum overflows
/// u64 and a look of more pairs than any shard count.
#[test]
fn verify_and_replay_name_counts_and_looks_out_of_range() {
    let repo = Repo::new();
    let mut entries = sample_entries();
    entries[1].stages[0].pentanomial[0] = u64::MAX;
    entries[1].stages[1].look_pairs = Some(u64::MAX);
    repo.write_register(&entries);
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "{text}");
    for expected in [
        "T-0002.yaml: stage `short`: pentanomial sums to more than 9007199254740992 pairs",
        "T-0002.yaml: recomputed stage long: pairs per look: 18446744073709551615 pairs per look",
    ] {
        assert!(text.contains(expected), "`{expected}` missing: {text}");
    }
    let output = repo.oracle(&["register", "replay", "T-0002", "--statistics-only"]);
    assert_eq!(output.code, 1);
    let text = &output.stdout;
    assert!(
        text.contains("FAIL stage short: pairs and games")
            && text.contains("FAIL stage long: pairs per look"),
        "{text}"
    );
}

/// A mistyped `--repo` is bad input (exit 2, naming it), not an empty register that verifies.
#[test]
fn verify_of_a_repository_that_does_not_exist_is_bad_input() {
    let parent = tempfile::tempdir().unwrap();
    let missing = parent.path().join("no-such-repo");
    let output = register_fixture::oracle_at(&missing, &["register", "verify"]);
    assert_eq!(output.code, 2, "{}", output.stdout);
    assert!(
        output
            .stderr
            .contains(&missing.join("register").display().to_string()),
        "{}",
        output.stderr
    );
}

/// A repository without `register/`, or with one that holds no entry, has nothing to verify:
/// bad input (exit 2, naming the directory), not a sound register of zero entries.
#[test]
fn verify_with_nothing_to_verify_is_bad_input() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("register");
    for (case, expected) in [("missing", "does not exist"), ("empty", "holds no entries")] {
        if case == "empty" {
            std::fs::create_dir(&dir).unwrap();
            // Hidden files (the append lock) are no entries.
            std::fs::write(dir.join(".lock"), b"").unwrap();
        }
        let output = register_fixture::oracle_at(root.path(), &["register", "verify"]);
        let stderr = &output.stderr;
        assert_eq!(output.code, 2, "{case}: {}", output.stdout);
        assert!(output.stdout.is_empty(), "{case}: {}", output.stdout);
        assert!(
            stderr.contains(&dir.display().to_string()) && stderr.contains(expected),
            "{case}: {stderr}"
        );
    }
}

/// Issue 46: an entry file past the record bound is refused by its size, naming it, and never
/// read whole (the oracle used to read any file of `register/` into memory).
#[test]
fn verify_refuses_an_entry_file_past_the_record_bound() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    let path = repo.entry_path("T-0002.yaml");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.resize(bytes.len() + (64 << 20), b'\n');
    std::fs::write(&path, bytes).unwrap();
    let output = repo.oracle(&["register", "verify"]);
    let stderr = &output.stderr;
    assert_eq!(output.code, 2, "{}{stderr}", output.stdout);
    assert!(
        stderr.contains(&path.display().to_string()) && stderr.contains("larger than"),
        "{stderr}"
    );
}

/// An entry that is a link to bytes elsewhere (which could change while the register's own
/// files do not) is refused, naming it, even when the bytes it points to are the entry's.
#[test]
fn verify_refuses_an_entry_that_is_a_link() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    let path = repo.entry_path("T-0002.yaml");
    let elsewhere = repo.path().join("t2.yaml");
    std::fs::rename(&path, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    let output = repo.oracle(&["register", "verify"]);
    let stderr = &output.stderr;
    assert_eq!(output.code, 2, "{}{stderr}", output.stdout);
    assert!(
        stderr.contains(&path.display().to_string()) && stderr.contains("a link"),
        "{stderr}"
    );
}

/// Verifies and returns (exit code, stdout).
fn verify(repo: &Repo) -> (i32, String) {
    let output = repo.oracle(&["register", "verify"]);
    (output.code, output.stdout)
}

/// Replaces `from` by `to` in one register file.
fn edit(repo: &Repo, name: &str, from: &str, to: &str) {
    let path = repo.entry_path(name);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{name} has no `{from}`");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn tamper_edit_a_verdict() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    edit(
        &repo,
        "T-0002.yaml",
        "verdict: gewinn",
        "verdict: abgelehnt",
    );
    let (code, text) = verify(&repo);
    assert_eq!(code, 1);
    assert!(
        text.contains(
            "T-0002.yaml: verdict abgelehnt does not follow from the evidence, which gives gewinn"
        ),
        "{text}"
    );
    assert!(text.contains("T-0003.yaml: chain broken"), "{text}");
}

#[test]
fn tamper_edit_the_newest_verdict() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    edit(
        &repo,
        "T-0005.yaml",
        "verdict: abgelehnt",
        "verdict: korrektur",
    );
    let (code, text) = verify(&repo);
    assert_eq!(code, 1);
    assert!(
        text.contains("T-0005.yaml: verdict korrektur does not follow from the evidence"),
        "{text}"
    );
}

#[test]
fn tamper_requote_a_value() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    edit(&repo, "T-0005.yaml", "path: randfall", "path: \"randfall\"");
    let (code, text) = verify(&repo);
    assert_eq!(code, 1);
    assert!(
        text.contains("T-0005.yaml: not in canonical form: line 5 is `path: \"randfall\"`, canonical is `path: randfall`"),
        "{text}"
    );
}

#[test]
fn tamper_delete_a_middle_entry() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    std::fs::remove_file(repo.entry_path("T-0003.yaml")).unwrap();
    let (code, text) = verify(&repo);
    assert_eq!(code, 1);
    assert!(
        text.contains("T-0003.yaml: is missing: numbering jumps to T-0004.yaml"),
        "{text}"
    );
    assert!(text.contains("T-0004.yaml: chain broken"), "{text}");
}

#[test]
fn tamper_delete_the_newest_entry_is_caught_by_the_pinned_head() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    let (_, before) = verify(&repo);
    let head = before
        .trim()
        .strip_prefix("head=")
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    std::fs::remove_file(repo.entry_path("T-0005.yaml")).unwrap();
    let output = repo.oracle(&["register", "verify", "--expect-head", &head]);
    assert_eq!(output.code, 1);
    assert!(
        output.stdout.contains("T-0004.yaml: head is "),
        "{}",
        output.stdout
    );
    assert!(
        output.stdout.contains(&format!("expected {head}")),
        "{}",
        output.stdout
    );
}

#[test]
fn tamper_reorder_two_entries() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    let second = repo.entry_path("T-0002.yaml");
    let third = repo.entry_path("T-0003.yaml");
    let swap = repo.entry_path("swap");
    std::fs::rename(&second, &swap).unwrap();
    std::fs::rename(&third, &second).unwrap();
    std::fs::rename(&swap, &third).unwrap();
    let (code, text) = verify(&repo);
    assert_eq!(code, 1);
    assert!(
        text.contains("T-0002.yaml: field `id` is T-0003 but the file is T-0002"),
        "{text}"
    );
    assert!(
        text.contains("T-0003.yaml: field `id` is T-0002 but the file is T-0003"),
        "{text}"
    );
    assert!(text.contains("T-0003.yaml: recorded_at 2026-10-16T11:05:00Z is before the previous entry's 2026-10-16T17:19:00Z"), "{text}");
}

#[test]
fn tamper_duplicate_prev() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    let third = Entry::parse(&std::fs::read(repo.entry_path("T-0003.yaml")).unwrap()).unwrap();
    let fourth = Entry::parse(&std::fs::read(repo.entry_path("T-0004.yaml")).unwrap()).unwrap();
    let (old, new) = (fourth.prev_sha256.unwrap(), third.prev_sha256.unwrap());
    edit(&repo, "T-0004.yaml", old.as_str(), new.as_str());
    let (code, text) = verify(&repo);
    assert_eq!(code, 1);
    assert!(
        text.contains(&format!("T-0004.yaml: chain broken: prev_sha256 is {new}")),
        "{text}"
    );
    assert!(
        text.contains("it repeats the prev_sha256 of T-0003.yaml"),
        "{text}"
    );
}

#[test]
fn an_unknown_file_or_a_broken_schema_is_named() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    std::fs::write(repo.entry_path("T-0006.yml"), "id: T-0006\n").unwrap();
    edit(
        &repo,
        "T-0004.yaml",
        "claimed_gain_nelo: 0.0",
        "claimed_gain: 0.0",
    );
    let (code, text) = verify(&repo);
    assert_eq!(code, 1);
    assert!(
        text.contains("T-0006.yml: is not a register entry name (T-NNNN.yaml)"),
        "{text}"
    );
    assert!(
        text.contains("T-0004.yaml: schema: line 7, column 1: unknown field `claimed_gain`"),
        "{text}"
    );
}

#[test]
fn show_lists_entries_and_renders_one() {
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    let table = repo.oracle(&["register", "show"]);
    assert_eq!(table.code, 0);
    insta::assert_snapshot!("register_show_table", table.stdout);
    let one = repo.oracle(&["register", "show", "T-0003"]);
    assert_eq!(one.code, 0);
    insta::assert_snapshot!("register_show_t0003", one.stdout);
    let json = repo
        .oracle(&["register", "show", "T-0003", "--json"])
        .json();
    assert_eq!(json["verdict"], "korrektur");
    assert_eq!(json["stages"][1]["state"], "accept_h1");
    let list: serde_json::Value = repo.oracle(&["register", "show", "--json"]).json();
    assert_eq!(list["n"], 5);
    assert_eq!(list["entries"][4]["id"], "T-0005");
    let missing = repo.oracle(&["register", "show", "T-0009"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("no readable entry T-0009"));
}

#[test]
fn a_rendered_entry_is_canonical_yaml_with_ambiguous_strings_quoted() {
    let files = register_fixture::chain(&sample_entries());
    let (name, bytes) = &files[4];
    assert_eq!(name, "T-0005.yaml");
    insta::assert_snapshot!(
        "rendered_entry_t0005",
        String::from_utf8(bytes.clone()).unwrap()
    );
    let back = Entry::parse(bytes).unwrap();
    assert_eq!(
        back.proof.unwrap().detail,
        register_fixture::tricky_strings()
    );
}

#[test]
fn genesis_only_into_an_empty_register() {
    let repo = Repo::new();
    let engine = register_fixture::engine('1');
    let args = [
        "register",
        "genesis",
        "--commit",
        engine.commit.as_str(),
        "--tree",
        engine.tree.as_str(),
        "--binary-sha256",
        &"e".repeat(64),
        "--bench",
        "695",
        "--toolchain",
        "rustc 1.95.0 (59807616e 2026-04-14)",
    ];
    let first = repo.oracle(&args);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(first.stdout.starts_with("genesis T-0001\nhead="));
    let entry = Entry::parse(&std::fs::read(repo.entry_path("T-0001.yaml")).unwrap()).unwrap();
    assert_eq!(
        (entry.verdict, entry.candidate.bench_nodes),
        (Verdict::Genesis, 695)
    );
    assert_eq!(entry.prev_sha256.unwrap().as_str(), "0".repeat(64));
    assert_eq!(repo.oracle(&["register", "verify"]).code, 0);
    let again = repo.oracle(&args);
    assert_eq!(again.code, 1);
    assert!(
        again
            .stdout
            .contains("refused: the register already has entries"),
        "{}",
        again.stdout
    );
    let bad = repo.oracle(&[
        "register",
        "genesis",
        "--commit",
        "abc",
        "--tree",
        "d",
        "--binary-sha256",
        "e",
        "--bench",
        "1",
    ]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr
            .contains("--commit: `abc` is not a full git object id")
    );
}

#[test]
fn committed_fixture_repository_is_what_the_library_writes() {
    // `scripts/check-register-yaml11.py` reads this repository with PyYAML.
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/register-repo");
    let mut expected: Vec<(String, Vec<u8>)> = register_fixture::chain(&sample_entries())
        .into_iter()
        .map(|(name, bytes)| (format!("register/{name}"), bytes))
        .collect();
    expected.push((
        "constitution/constitution.yaml".into(),
        register_fixture::constitution_text().into_bytes(),
    ));
    expected.push((
        "books/book-a.epd".into(),
        register_fixture::BOOK_A.as_bytes().to_vec(),
    ));
    expected.push((
        "books/book-b.epd".into(),
        register_fixture::BOOK_B.as_bytes().to_vec(),
    ));
    let update = std::env::var_os("REGISTER_FIXTURE_UPDATE").is_some();
    for (name, bytes) in expected {
        let path = root.join(&name);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        let stored = std::fs::read(&path).unwrap_or_default();
        assert!(
            stored == bytes,
            "{name} is stale: rerun with REGISTER_FIXTURE_UPDATE=1"
        );
    }
    assert_eq!(
        register_fixture::oracle_at(&root, &["register", "verify"]).code,
        0
    );
}

/// Genesis and the sample Gewinn with `change` made to the Gewinn, written and committed by hand
/// (no `register append`); returns the repository.
fn hand_committed(change: impl FnOnce(&mut Entry)) -> Repo {
    let repo = Repo::new();
    let mut entries = sample_entries()[..2].to_vec();
    change(&mut entries[1]);
    repo.write_register(&entries);
    repo.commit_all("register: T-0002, written by hand");
    repo
}

/// Every stage of `entry` re-measured on its own counts after `change`, and its verdict
/// re-derived: the statistics hold, only the rules can tell.
fn remeasured(entry: &mut Entry, change: impl Fn(&mut StageRecord)) {
    for stage in &mut entry.stages {
        change(stage);
        *stage = measure(stage.clone(), stage.pentanomial);
    }
    redecide(entry);
}

#[test]
fn a_hand_committed_entry_with_weakened_bounds_is_named() {
    // The Randfall bounds [-10, 0] on a Standard change: "not worse by 10" passes as a gain.
    let repo =
        hand_committed(|entry| remeasured(entry, |stage| (stage.elo0, stage.elo1) = (-10.0, 0.0)));
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "{text}");
    for expected in [
        "T-0002.yaml: stage `short`: field `elo0` is -10, profile `bound` stage `short` has 0",
        "T-0002.yaml: stage `long`: field `elo1` is 0, profile `bound` stage `long` has 10",
    ] {
        assert!(text.contains(expected), "`{expected}` missing: {text}");
    }
    assert!(!text.contains("recomputed"), "the statistics hold: {text}");
}

#[test]
fn a_hand_committed_entry_with_another_alpha_is_named() {
    let repo = hand_committed(|entry| remeasured(entry, |stage| stage.alpha = 0.2));
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(
            "T-0002.yaml: stage `short`: field `alpha` is 0.2, profile `bound` stage `short` has 0.05"
        ),
        "{text}"
    );
    assert!(!text.contains("recomputed"), "the statistics hold: {text}");
}

#[test]
fn a_hand_committed_entry_with_a_forged_predecessor_binary_is_named() {
    // Engine 5's binary, from a commit that does descend from the current engine's.
    let repo = hand_committed(|entry| entry.predecessor = Some(register_fixture::engine('5')));
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "{text}");
    let current = register_fixture::engine('1').binary_sha256;
    assert!(
        text.contains(&format!(
            "T-0002.yaml: field `predecessor.binary_sha256`: the predecessor's binary {} is not \
             the register's current engine T-0001 (binary {current})",
            register_fixture::engine('5').binary_sha256
        )),
        "{text}"
    );
}

#[test]
fn a_hand_committed_entry_under_another_constitution_or_commit_is_named() {
    let weaker = oracle::governance::hash::Sha256Hex::of(b"alpha: 0.5");
    let claimed = weaker.clone();
    let repo = hand_committed(move |entry| entry.constitution_sha256 = claimed);
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "{text}");
    let at = register_fixture::engine('1').commit;
    assert!(
        text.contains(&format!(
            "T-0002.yaml: field `constitution_sha256`: the entry was judged under constitution \
             {weaker}, constitution/constitution.yaml at the predecessor commit {at} is {}",
            register_fixture::constitution_sha256()
        )),
        "{text}"
    );

    let repo = hand_committed(|entry| {
        entry.predecessor.as_mut().unwrap().commit = register_fixture::git_id('f');
    });
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(&format!(
            "T-0002.yaml: field `predecessor.commit`: commit {} is not in the repository, whose \
             history is complete",
            "f".repeat(40)
        )),
        "{text}"
    );
}

#[test]
fn a_predecessor_commit_older_than_the_current_engine_is_named() {
    let repo = Repo::new();
    let mut entries = sample_entries()[..3].to_vec();
    // The right binary, but built from the commit before the engine that landed last.
    let older = register_fixture::engine('1').commit;
    entries[2].predecessor.as_mut().unwrap().commit = older.clone();
    repo.write_register(&entries);
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(&format!(
            "T-0003.yaml: field `predecessor.commit`: {older} is neither the current engine's \
             commit {} (T-0002) nor a descendant of it",
            register_fixture::engine('3').commit
        )),
        "{text}"
    );
}

/// A shallow clone lacks the commits whose trees hold the rules: what it cannot check is listed,
/// what it can (custody by sha256, the work tree's constitution of the same sha256) still holds.
#[test]
fn a_shallow_clone_lists_what_it_cannot_check_and_still_checks_the_rest() {
    let clone = |repo: &Repo| {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}", repo.path().display());
        repo.git(&[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            dir.path().to_str().unwrap(),
        ]);
        dir
    };
    let repo = Repo::new();
    repo.write_register(&sample_entries());
    repo.commit_all("register: the sample entries");
    let shallow = clone(&repo);
    let output = register_fixture::oracle_at(shallow.path(), &["register", "verify"]);
    let text = &output.stdout;
    assert_eq!(output.code, 0, "{text}");
    assert!(
        text.contains(&format!(
            "T-0003.yaml: unchecked: rules taken from the work tree's constitution/constitution.yaml, \
             which has the recorded sha256; that it was the one at the predecessor commit {} is \
             unchecked: this shallow clone does not have it",
            register_fixture::engine('3').commit
        )),
        "{text}"
    );
    let report =
        register_fixture::oracle_at(shallow.path(), &["register", "verify", "--json"]).json();
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(
        report["unchecked"].as_array().map(Vec::len),
        Some(5),
        "{report}"
    );

    let forged = hand_committed(|entry| entry.predecessor = Some(register_fixture::engine('5')));
    let shallow = clone(&forged);
    let output = register_fixture::oracle_at(shallow.path(), &["register", "verify"]);
    assert_eq!(output.code, 1, "{}", output.stdout);
    assert!(
        output
            .stdout
            .contains("T-0002.yaml: field `predecessor.binary_sha256`"),
        "{}",
        output.stdout
    );
}

/// Article 2.4: a Gleich entry verifies and replays when its two recorded binaries are the same
/// and no stage was played; the same entry with different binaries is refused by both.
#[test]
fn gleich_verifies_only_with_bit_identical_binaries() {
    use oracle::governance::entry::PathKind::Standard;
    use register_fixture::{at, binary, stage, tested_entry};
    let repo = Repo::new();
    let mut entries = sample_entries();
    let mut gleich = tested_entry(
        Standard,
        vec![stage(0, Standard, None), stage(1, Standard, None)],
        None,
        at(19, 0),
    );
    // Judged against the register's current engine, whose binary it rebuilds bit-identically.
    let current = entries
        .iter()
        .rev()
        .find(|entry| entry.verdict.lands())
        .unwrap()
        .candidate
        .clone();
    gleich.predecessor = Some(current.clone());
    gleich.candidate = current;
    gleich.verdict = Verdict::Gleich;
    entries.push(gleich.clone());
    repo.write_register(&entries);
    let (code, text) = verify(&repo);
    assert_eq!(code, 0, "{text}");
    let replay = repo.oracle(&["register", "replay", "T-0006", "--statistics-only"]);
    assert_eq!(replay.code, 0, "{}", replay.stdout);

    gleich.candidate = binary('3', 695);
    *entries.last_mut().unwrap() = gleich;
    repo.write_register(&entries);
    let (code, text) = verify(&repo);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("T-0006.yaml: verdict gleich needs bit-identical binaries")
            && text.contains("T-0006.yaml: verdict gleich does not follow from the evidence, which gives abgelehnt"),
        "{text}"
    );
    let replay = repo.oracle(&["register", "replay", "T-0006", "--statistics-only"]);
    assert_eq!(replay.code, 1, "{}", replay.stdout);
    assert!(replay.stdout.contains("FAIL verdict"), "{}", replay.stdout);
}
