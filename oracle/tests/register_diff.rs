//! `scripts/check-register-diff.sh`: a change to `register/` may only add the next entries.

use std::path::Path;
use std::process::{Command, Output};

use oracle::governance::entry::Entry;
use oracle::governance::hash::Sha256Hex;

use crate::support::register_fixture::{Repo, chain, sample_entries, stdout};
use crate::support::{ORACLE, repository_root};

/// Runs the script against the commit tagged `base`.
fn check(repo: &Path) -> Output {
    Command::new("bash")
        .arg(repository_root().join("scripts/check-register-diff.sh"))
        .arg("base")
        .env("ORACLE", ORACLE)
        .current_dir(repo)
        .output()
        .unwrap()
}

/// A git repository whose commit `base` holds the first `n` sample entries.
fn repo_at_base(n: usize) -> Repo {
    let repo = Repo::new();
    repo.write_register(&sample_entries()[..n]);
    repo.commit_all("base");
    repo.git(&["tag", "base"]);
    repo
}

/// Commits everything in the work tree.
fn commit_all(repo: &Repo) {
    repo.commit_all("change");
}

#[test]
fn adding_the_next_entries_passes() {
    let repo = repo_at_base(3);
    repo.write_register(&sample_entries());
    commit_all(&repo);
    let output = check(repo.path());
    assert!(output.status.success(), "{}", stdout(&output));
    assert!(stdout(&output).ends_with(" n=5\n"));
}

#[test]
fn modifying_or_deleting_an_entry_fails() {
    let repo = repo_at_base(3);
    let path = repo.entry_path("T-0002.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("verdict: gewinn", "verdict: abgelehnt")).unwrap();
    commit_all(&repo);
    let output = check(repo.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("register: register/T-0002.yaml: status M"),
        "{}",
        stdout(&output)
    );

    let repo = repo_at_base(3);
    std::fs::remove_file(repo.entry_path("T-0003.yaml")).unwrap();
    commit_all(&repo);
    let output = check(repo.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("register: register/T-0003.yaml: status D"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn adding_an_entry_that_does_not_chain_or_a_stray_file_fails() {
    let repo = repo_at_base(3);
    let files = chain(&sample_entries());
    // T-0004 chained to T-0002, as if T-0003 had never been written.
    let mut entry = Entry::parse(&files[3].1).unwrap();
    entry.prev_sha256 = Some(Sha256Hex::of(&files[1].1));
    std::fs::write(
        repo.entry_path("T-0004.yaml"),
        entry.to_canonical().unwrap(),
    )
    .unwrap();
    std::fs::write(repo.entry_path("notes.txt"), "hello").unwrap();
    commit_all(&repo);
    let output = check(repo.path());
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains("register/notes.txt: added file is not a register entry"),
        "{text}"
    );
    assert!(text.contains("T-0004.yaml: chain broken"), "{text}");
    assert!(
        text.contains("register: the chain does not verify from genesis"),
        "{text}"
    );
}
