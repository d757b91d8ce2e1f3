//! Step 4 of `oracle verify`, the checks before the first game: the bench against the `Bench:`
//! trailer, and `--checks-only`, which stops there.

use std::fs;
use std::process::Command;

use serde_json::Value;

use super::{Fixture, SERIAL, step_names};
use crate::support::ORACLE;

#[test]
fn wrong_bench_trailer_is_an_error_before_any_game() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let candidate = fixture.commit("eval: cheaper pieces\n\nBench: 12345\n");
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "error");
    assert_eq!(result["failure"]["step"], "bench");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(why.contains("`Bench: 12345`"), "{why}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("step 4 (bench) failed")
    );
    assert!(
        out.path().join("binding.json").exists(),
        "bound before the bench"
    );
    assert!(result["stages"].as_array().unwrap().is_empty());
    let played: Vec<_> = fs::read_dir(out.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("stage-"))
        .collect();
    assert!(played.is_empty(), "no stage may start after a bench error");
    assert!(!out.path().join("entry.yaml").exists());
    let steps = step_names(&result);
    assert_eq!(
        steps.last().unwrap(),
        &("bench".to_owned(), "failed".to_owned())
    );

    // Another candidate in the same --out is refused before anything of it is written there,
    // naming what differs; `--fresh` discards the first run's evidence and starts over.
    let report = fs::read(out.path().join("report.md")).unwrap();
    fixture.restore();
    let other = fixture.commit("eval: the pieces as they were\n\nBench: 54321\n");
    let (code, refused, stderr) = fixture.verify(&other.to_string(), out.path());
    assert_eq!(code, 2, "{stderr}\n{refused:#}");
    let why = refused["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("holds the evidence of another run")
            && why.contains(&format!("candidate is {candidate} there, {other} here"))
            && why.contains("--fresh"),
        "{why}"
    );
    assert!(refused["report"].is_null(), "{refused:#}");
    assert_eq!(fs::read(out.path().join("report.md")).unwrap(), report);
    let (code, fresh, stderr) = fixture.verify_with(
        &other.to_string(),
        out.path(),
        &["--profile", "smoke", "--fresh"],
    );
    assert_eq!(code, 2, "{stderr}\n{fresh:#}");
    assert_eq!(fresh["failure"]["step"], "bench", "{fresh:#}");
    assert_eq!(fresh["candidate"]["commit"], other.to_string());
    let binding: Value =
        serde_json::from_slice(&fs::read(out.path().join("binding.json")).unwrap()).unwrap();
    assert_eq!(binding["candidate"]["commit"], other.to_string());
}

/// `--checks-only` runs every check before the first game on a real change (both built twice and
/// bound, the gate, the bench against the trailer) and stops: no stage, no verdict, no entry;
/// with `--append` it is refused.
#[test]
fn checks_only_stops_before_the_first_game() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let (bench, _) = fixture.bench_of_worktree();
    let candidate = fixture
        .commit(&format!("eval: cheaper pieces\n\nBench: {bench}\n"))
        .to_string();
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify_with(
        &candidate,
        out.path(),
        &["--profile", "fixture", "--checks-only"],
    );
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "checked", "{result:#}");
    assert!(result["verdict"].is_null(), "{result:#}");
    let reason = result["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("bench ({bench} nodes")) && reason.contains("no game played"),
        "{reason}"
    );
    let steps = step_names(&result);
    assert!(
        steps.contains(&("bench".to_owned(), "ok".to_owned())),
        "{steps:?}"
    );
    assert!(
        !steps.iter().any(|(step, _)| step.starts_with("stage")),
        "{steps:?}"
    );
    assert!(out.path().join("binding.json").exists());
    assert!(!out.path().join("entry.yaml").exists());
    assert!(result["stages"].as_array().unwrap().is_empty());
    let stages = fs::read_dir(out.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("stage-"))
        .count();
    assert_eq!(stages, 0, "no stage may start under --checks-only");
    assert_eq!(result["profile_binding"], true, "{result:#}");

    // Under a profile that does not bind, the last lines say what the run is worth.
    let smoke_out = tempfile::tempdir().unwrap();
    let text = Command::new(ORACLE)
        .args(["verify", &candidate, "--profile", "smoke", "--checks-only"])
        .arg("--repo")
        .arg(fixture.path())
        .arg("--out")
        .arg(smoke_out.path())
        .arg("--cache-dir")
        .arg(&fixture.cache)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.status.code(), Some(0), "{text:?}");
    assert!(
        stdout.contains("\nnot binding: profile `smoke` shows that the pipeline runs"),
        "{stdout}"
    );

    let refused = Command::new(ORACLE)
        .args([
            "verify",
            &candidate,
            "--profile",
            "fixture",
            "--checks-only",
            "--append",
        ])
        .arg("--repo")
        .arg(fixture.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--checks-only") && stderr.contains("--append"),
        "{stderr}"
    );
}
