//! `scripts/check-landing.sh paths`: what a push to main may change, checked from git alone
//! before the `register` workflow builds anything (docs/ci-trust.md).

use std::process::{Command, Output};

use crate::support::fixture_repo::FixtureRepo;
use crate::support::repository_root;

/// The tree of main before the push: an engine, a root build file, the genesis entry.
const BEFORE: &[(&str, &str)] = &[
    ("Cargo.toml", "[workspace]\n"),
    ("engine/src/main.rs", "fn main() {}\n"),
    ("register/T-0001.yaml", "id: T-0001\n"),
];

/// Runs the script at HEAD of `repo` against `before`.
fn check(repo: &FixtureRepo, before: &str) -> Output {
    Command::new("bash")
        .arg(repository_root().join("scripts/check-landing.sh"))
        .args(["paths", before])
        .current_dir(repo.path())
        .output()
        .unwrap()
}

/// A repository whose main was `BEFORE` and is now `after`; the script's output.
fn push(after: &[(&str, &str)]) -> Output {
    let repo = FixtureRepo::new();
    let before = repo.commit(BEFORE, "before").to_string();
    repo.commit(after, "push");
    check(&repo, &before)
}

/// `BEFORE` with `changes` applied (same path: replaced; new path: added).
fn before_with(changes: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut files: Vec<(&str, &str)> = BEFORE
        .iter()
        .filter(|(path, _)| !changes.iter().any(|(changed, _)| changed == path))
        .copied()
        .collect();
    files.extend_from_slice(changes);
    files
}

/// Exit code and stderr.
fn outcome(output: &Output) -> (Option<i32>, String) {
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

const NEW_ENGINE: (&str, &str) = ("engine/src/main.rs", "fn main() { println!(); }\n");
const NEW_ENTRY: (&str, &str) = ("register/T-0002.yaml", "id: T-0002\n");

#[test]
fn an_engine_change_with_its_entry_lands() {
    let output = push(&before_with(&[NEW_ENGINE, NEW_ENTRY]));
    assert_eq!(output.status.code(), Some(0), "{:?}", outcome(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("register/T-0002.yaml"));
}

#[test]
fn an_engine_change_lands_with_its_entrys_evidence_but_not_with_another_entrys() {
    let report = ("evidence/T-0002/report.md", "# report\n");
    let output = push(&before_with(&[NEW_ENGINE, NEW_ENTRY, report]));
    assert_eq!(output.status.code(), Some(0), "{:?}", outcome(&output));
    let foreign = ("evidence/T-0009/report.md", "# report\n");
    let (code, stderr) = outcome(&push(&before_with(&[NEW_ENGINE, NEW_ENTRY, foreign])));
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("it also changes:\nevidence/T-0009/report.md"),
        "{stderr}"
    );
}

#[test]
fn an_engine_change_without_an_entry_is_refused() {
    let (code, stderr) = outcome(&push(&before_with(&[NEW_ENGINE])));
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("engine/ changed without a register entry"),
        "{stderr}"
    );
}

#[test]
fn an_engine_change_that_also_touches_a_root_build_file_is_refused_naming_it() {
    let patch = ("Cargo.toml", "[workspace]\n[patch.crates-io]\n");
    let (code, stderr) = outcome(&push(&before_with(&[NEW_ENGINE, NEW_ENTRY, patch])));
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("nothing else; it also changes:\nCargo.toml"),
        "{stderr}"
    );
}

#[test]
fn an_engine_change_that_rewrites_an_entry_is_refused_naming_it() {
    let rewritten = ("register/T-0001.yaml", "id: T-0001\nverdict: gewinn\n");
    let (code, stderr) = outcome(&push(&before_with(&[NEW_ENGINE, NEW_ENTRY, rewritten])));
    assert_eq!(code, Some(1));
    assert!(stderr.contains("register/T-0001.yaml"), "{stderr}");
}

#[test]
fn a_governance_change_leaves_engine_alone_and_passes_to_review() {
    let output = push(&before_with(&[("oracle/src/lib.rs", "//! reviewed\n")]));
    assert_eq!(output.status.code(), Some(0), "{:?}", outcome(&output));
}

#[test]
fn an_unknown_previous_head_is_refused() {
    let repo = FixtureRepo::new();
    repo.commit(BEFORE, "before");
    let (code, stderr) = outcome(&check(&repo, &"0".repeat(40)));
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("is not a commit of this repository"),
        "{stderr}"
    );
}

/// The rejected-change history of a withdrawal: main had the genesis engine `A` and its entry,
/// then a change the oracle rejected reached main (engine `B` with an Abgelehnt entry).
/// Returns the repository and the head before the push.
fn rejected_change_on_main() -> (FixtureRepo, String) {
    let repo = FixtureRepo::new();
    let engine_a = ("engine/src/main.rs", "fn main() {}\n");
    let genesis = repo.commit(
        &[("Cargo.toml", "[workspace]\n"), engine_a],
        "genesis engine",
    );
    let genesis_entry =
        format!("id: T-0001\nverdict: genesis\ncandidate:\n  commit: \"{genesis}\"\n");
    repo.commit(
        &[
            ("Cargo.toml", "[workspace]\n"),
            engine_a,
            ("register/T-0001.yaml", &genesis_entry),
        ],
        "register: T-0001",
    );
    let rejected_entry = "id: T-0002\nverdict: abgelehnt\ncandidate:\n  commit: \"0\"\n";
    let before = repo.commit(
        &[
            ("Cargo.toml", "[workspace]\n"),
            NEW_ENGINE,
            ("engine/proofs/spec.yaml", "positions: []\n"),
            ("register/T-0001.yaml", &genesis_entry),
            ("register/T-0002.yaml", rejected_entry),
        ],
        "a rejected change and its entry",
    );
    (repo, before.to_string())
}

#[test]
fn a_withdrawal_restores_the_current_engine_without_an_entry_and_nothing_else() {
    let (repo, before) = rejected_change_on_main();
    let entry = |path: &str| {
        let spec = format!("{before}:{path}");
        let output = Command::new("git")
            .args(["show", &spec])
            .current_dir(repo.path())
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let (genesis, rejected) = (entry("register/T-0001.yaml"), entry("register/T-0002.yaml"));
    // Pushes the tree with `engine` as engine/src/main.rs, the proof spec and both entries kept.
    let push_engine = |engine: &str, extra: &[(&str, &str)]| {
        let mut files = vec![
            ("Cargo.toml", "[workspace]\n"),
            ("engine/src/main.rs", engine),
            ("engine/proofs/spec.yaml", "positions: []\n"),
            ("register/T-0001.yaml", genesis.as_str()),
            ("register/T-0002.yaml", rejected.as_str()),
        ];
        files.extend_from_slice(extra);
        repo.commit(&files, "push");
        outcome(&check(&repo, &before))
    };

    let (code, stderr) = push_engine("fn main() {}\n", &[]);
    assert_eq!(code, Some(0), "back to the genesis engine: {stderr}");

    let (code, stderr) = push_engine("fn main() { loop {} }\n", &[]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("so it is no withdrawal"), "{stderr}");

    // A build script comes with the "withdrawal": cargo would run it, so it is an engine change.
    let (code, stderr) = push_engine("fn main() {}\n", &[("engine/build.rs", "fn main() {}\n")]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("so it is no withdrawal"), "{stderr}");

    let (code, stderr) = push_engine("fn main() {}\n", &[("README.md", "changed\n")]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("it also changes:\nREADME.md"), "{stderr}");
}
