//! `oracle register landing --paths-only`: what a push to the main branch may change, judged from
//! git alone before the register workflow builds anything (docs/ci-trust.md, "How an entry
//! lands"). The full check (the replays, the landed tree, a withdrawal's rebuild) runs in
//! `verify::verdict`, on a real entry.

use crate::support::fixture_repo::FixtureRepo;
use crate::support::register_fixture::constitution_text;
use crate::support::{Run, oracle};

/// Main before the push: a root build file, an engine, the genesis entry; the constitution is
/// added by [`before_with`] (its scope is `engine/`).
const BEFORE: &[(&str, &str)] = &[
    ("Cargo.toml", "[workspace]\n"),
    ("engine/src/main.rs", "fn main() {}\n"),
    ("register/T-0001.yaml", "id: T-0001\n"),
];

const NEW_ENGINE: (&str, &str) = ("engine/src/main.rs", "fn main() { println!(); }\n");
const NEW_ENTRY: (&str, &str) = ("register/T-0002.yaml", "id: T-0002\n");

/// `BEFORE` and the constitution, with `changes` applied (same path: replaced; new path: added).
fn before_with(constitution: &str, changes: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = BEFORE
        .iter()
        .chain(&[("constitution/constitution.yaml", constitution)])
        .filter(|(path, _)| !changes.iter().any(|(changed, _)| changed == path))
        .chain(changes)
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect();
    files.sort();
    files
}

/// Commits `files` on top of HEAD.
fn commit(repo: &FixtureRepo, files: &[(String, String)], message: &str) -> String {
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    repo.commit(&files, message).to_string()
}

/// `oracle register landing --paths-only` at HEAD of `repo` against `before`.
fn check(repo: &FixtureRepo, before: &str, json: bool) -> Run {
    let repo = repo.path().to_str().unwrap();
    let mut args = vec!["register", "landing", "--before", before, "--paths-only"];
    args.extend(["--repo", repo]);
    if json {
        args.push("--json");
    }
    oracle(&args)
}

/// A repository whose main was `BEFORE` and is now `BEFORE` with `changes`; the check's run.
fn push(changes: &[(&str, &str)]) -> Run {
    let repo = FixtureRepo::new();
    let constitution = constitution_text();
    let before = commit(&repo, &before_with(&constitution, &[]), "before");
    commit(&repo, &before_with(&constitution, changes), "push");
    check(&repo, &before, false)
}

#[test]
fn an_engine_change_with_its_entry_and_evidence_lands() {
    let report = ("evidence/T-0002/report.md", "# report\n");
    let repo = FixtureRepo::new();
    let constitution = constitution_text();
    let before = commit(&repo, &before_with(&constitution, &[]), "before");
    commit(
        &repo,
        &before_with(&constitution, &[NEW_ENGINE, NEW_ENTRY, report]),
        "push",
    );
    let run = check(&repo, &before, true);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["kind"]["kind"], "engine_landing", "{json}");
    assert_eq!(json["kind"]["entries"][0], "T-0002", "{json}");
    assert_eq!(
        json["checks"].as_array().unwrap().len(),
        1,
        "paths only: {json}"
    );
}

/// Evidence is added with its entry, in any push: never for an entry the push does not add,
/// which would let evidence be planted before its entry exists.
#[test]
fn evidence_is_added_only_with_its_entry() {
    let foreign = ("evidence/T-0009/report.md", "# report\n");
    for changes in [
        &[NEW_ENGINE, NEW_ENTRY, foreign][..],
        &[("README.md", "changed\n"), foreign][..],
    ] {
        let run = push(changes);
        assert_eq!(run.code, 1, "{run:?}");
        assert!(
            run.stdout
                .contains("evidence/T-0009/report.md (evidence of no entry this push adds)"),
            "{run:?}"
        );
    }
}

#[test]
fn an_engine_change_that_also_touches_a_root_build_file_is_refused_naming_it() {
    let patch = ("Cargo.toml", "[workspace]\n[patch.crates-io]\n");
    let run = push(&[NEW_ENGINE, NEW_ENTRY, patch]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("it also changes: Cargo.toml"),
        "{run:?}"
    );
    assert!(run.stdout.ends_with("landing: refused\n"), "{run:?}");
}

#[test]
fn a_push_that_rewrites_an_entry_is_refused_naming_it() {
    let rewritten = ("register/T-0001.yaml", "id: T-0001\nverdict: gewinn\n");
    let run = push(&[NEW_ENGINE, NEW_ENTRY, rewritten]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("register/T-0001.yaml (changed or removed)"),
        "{run:?}"
    );
}

/// A change to the engine without an entry is, by its paths, a withdrawal: it changes nothing
/// outside the scope, so nothing of it can reach the oracle's own build. Whether it is one is
/// decided by its rebuild, in the full check.
#[test]
fn an_engine_change_without_an_entry_is_a_withdrawal_for_its_rebuild_to_decide() {
    let run = push(&[NEW_ENGINE]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("a withdrawal"), "{run:?}");
    let run = push(&[NEW_ENGINE, ("README.md", "changed\n")]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("a withdrawal changes the engine's scope (engine/) and nothing else; it also changes: README.md"),
        "{run:?}"
    );
}

#[test]
fn a_governance_change_leaves_the_engine_alone_and_passes_to_review() {
    let run = push(&[("oracle/src/lib.rs", "//! reviewed\n")]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("engine/ unchanged"), "{run:?}");
}

/// The scope is the constitution's before the push: a push that rewrites the constitution to
/// take a root build file into the scope is judged under the old one, and refused.
#[test]
fn a_push_cannot_widen_the_scope_it_is_judged_by() {
    let widened = format!("{}scope: [engine/, Cargo.toml]\n", constitution_text());
    let patch = ("Cargo.toml", "[workspace]\n[patch.crates-io]\n");
    let run = push(&[
        NEW_ENGINE,
        NEW_ENTRY,
        patch,
        ("constitution/constitution.yaml", widened.as_str()),
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("Cargo.toml"), "{run:?}");
    assert!(
        run.stdout.contains("constitution/constitution.yaml"),
        "{run:?}"
    );
}

#[test]
fn an_unknown_previous_head_is_refused() {
    let repo = FixtureRepo::new();
    commit(&repo, &before_with(&constitution_text(), &[]), "before");
    let run = check(&repo, &"0".repeat(40), false);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("is not a commit of this repository"),
        "{run:?}"
    );
}

/// The push that installs the oracle (`oracle init`) has no constitution before it to say what
/// the engine is: a governance change, for review, like any other outside a scope.
#[test]
fn the_push_that_installs_the_oracle_is_a_governance_change() {
    let repo = FixtureRepo::new();
    let files: Vec<(String, String)> = BEFORE
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect();
    let before = commit(&repo, &files, "before");
    commit(
        &repo,
        &before_with(&constitution_text(), &[]),
        "oracle init",
    );
    let run = check(&repo, &before, false);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("no constitution/constitution.yaml before the push: it installs the oracle"),
        "{run:?}"
    );
}

/// A previous head that HEAD does not descend from is a rewritten branch: refused, not judged
/// by the difference of two trees.
#[test]
fn a_rewritten_branch_is_refused() {
    let repo = FixtureRepo::new();
    let constitution = constitution_text();
    let root = commit(&repo, &before_with(&constitution, &[]), "root");
    let before = commit(&repo, &before_with(&constitution, &[NEW_ENTRY]), "T-0002");
    let root = git2::Oid::from_str(&root).unwrap();
    repo.repo.set_head_detached(root).unwrap();
    commit(
        &repo,
        &before_with(&constitution, &[NEW_ENTRY]),
        "T-0002, rewritten",
    );
    let run = check(&repo, &before, false);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("is not an ancestor of HEAD"), "{run:?}");
}
