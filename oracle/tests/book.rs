//! `oracle book check` through the real binary: exit status, JSON, errors naming the line.

use crate::support::{Run, oracle};

const E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -";
const D4: &str = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -";

fn check(text: &str, json: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.epd");
    std::fs::write(&path, text).unwrap();
    let mut args = vec!["book", "check", path.to_str().unwrap()];
    if json {
        args.push("--json");
    }
    oracle(&args)
}

#[test]
fn a_valid_book_exits_zero_with_counts() {
    let out = check(&format!("{E4}\n{D4}\n"), true);
    assert_eq!(out.code, 0);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["positions"], 2);
    assert_eq!(v["unique"], 2);
    assert_eq!(v["black_to_move"], 2);
    assert_eq!(v["sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn duplicates_and_bad_lines_exit_one_naming_the_place() {
    let out = check(&format!("{E4}\n{D4}\n{E4} 0 1\n"), false);
    assert_eq!(out.code, 1);
    let text = &out.stdout;
    assert!(text.contains("at lines 1, 3"), "{text}");
    let out = check(&format!("{E4}\nnot a position\n"), false);
    assert_eq!(out.code, 1);
    let text = &out.stdout;
    assert!(text.contains("book.epd:2:"), "{text}");
    assert!(text.contains("\nline 2    not a position\n"), "{text}");
}

#[test]
fn a_missing_file_is_an_error() {
    let out = oracle(&["book", "check", "/nonexistent/book.epd"]);
    assert_eq!(out.code, 2);
    let stderr = &out.stderr;
    assert!(stderr.contains("/nonexistent/book.epd"), "{stderr}");
    // The operating system's reason once, not once per level of the error chain.
    assert_eq!(stderr.matches("(os error 2)").count(), 1, "{stderr}");
    // Under --json the same error is one JSON object on standard output, same exit status.
    let out = oracle(&["book", "check", "/nonexistent/book.epd", "--json"]);
    assert_eq!(out.code, 2);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["exit_code"], 2);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/book.epd"),
        "{v}"
    );
    assert!(out.stderr.is_empty());
}
