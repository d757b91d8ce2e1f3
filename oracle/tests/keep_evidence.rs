//! `scripts/keep-evidence.sh`: the evidence of a run is copied next to its register entry once,
//! whole, with each stage's games compressed, and without binaries or inputs that git already holds.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::repository_root;

fn keep(repo: &Path, out: &str, id: &str) -> Output {
    Command::new("bash")
        .arg(repository_root().join("scripts/keep-evidence.sh"))
        .args([out, id])
        .current_dir(repo)
        .output()
        .unwrap()
}

/// A repository with entry T-0002 and the finished `--out` of the run that produced it.
fn finished_run() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    fs::create_dir_all(root.join("register")).unwrap();
    fs::write(root.join("register/T-0002.yaml"), "id: T-0002\n").unwrap();
    for (path, text) in [
        ("out/binding.json", "{}"),
        ("out/result.json", "{}"),
        ("out/report.md", "# report"),
        ("out/report.svg", "<svg/>"),
        ("out/engines/candidate", "binary"),
        ("out/stage-1-short/stage.json", "{\"stage\": 1}"),
        ("out/stage-1-short/games.pgn", "1. e4"),
        ("out/inputs/confirmation.yaml", "confirmed"),
        ("out/inputs/books/book-a.epd", "8/8/8/8/8/8/8/8 w - -"),
    ] {
        let file = root.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }
    repo
}

#[test]
fn the_evidence_lands_beside_its_entry_with_its_games_but_without_binaries_or_books() {
    let repo = finished_run();
    let output = keep(repo.path(), "out", "T-0002");
    assert!(output.status.success(), "{output:?}");
    let dest = repo.path().join("evidence/T-0002");
    let mut kept: Vec<String> = fs::read_dir(&dest)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    kept.sort();
    assert_eq!(
        kept,
        [
            "binding.json",
            "confirmation.yaml",
            "report.md",
            "report.svg",
            "result.json",
            "stage-1-short.json",
            "stage-1-short.pgn.gz"
        ]
    );
    let games = Command::new("gzip")
        .arg("-dc")
        .arg(dest.join("stage-1-short.pgn.gz"))
        .output()
        .unwrap();
    assert_eq!(
        games.stdout, b"1. e4",
        "the stage's games.pgn, byte for byte"
    );
    assert_eq!(
        fs::read_to_string(dest.join("stage-1-short.json")).unwrap(),
        "{\"stage\": 1}"
    );
}

#[test]
fn evidence_is_written_once_and_only_for_an_entry_that_exists() {
    let repo = finished_run();
    assert!(keep(repo.path(), "out", "T-0002").status.success());
    for (id, out, says) in [
        ("T-0002", "out", "evidence/T-0002 exists"),
        ("T-0003", "out", "register/T-0003.yaml does not exist"),
        ("T-2", "out", "'T-2' is not an entry id"),
        (
            "T-0002",
            "elsewhere",
            "elsewhere is not a finished oracle --out",
        ),
    ] {
        let output = keep(repo.path(), out, id);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{id} {out}: {stderr}");
        assert!(stderr.contains(says), "{id} {out}: {stderr}");
    }
    let leftovers = fs::read_dir(repo.path().join("evidence")).unwrap().count();
    assert_eq!(leftovers, 1, "no staging directory is left behind");
}
