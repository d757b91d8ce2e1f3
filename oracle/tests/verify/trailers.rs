//! Step 2 of `oracle verify`, the candidate's trailers: a Randfall candidate's independent
//! confirmation is checked against the candidate, its proof and its author before any build.

use std::fs;

use oracle::integrity::sha256_hex;

use super::{Fixture, PROOF, REVIEWER, SERIAL, confirmation_text};

#[test]
fn randfall_confirmation_is_checked_before_any_build() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    // A binding profile: only there is a missing confirmation an error (smoke runs without).
    fixture.register_placeholder_genesis();
    fixture.cripple();
    let candidate = fixture
        .commit(
            "eval: cheaper pieces\n\nBench: 1\nOracle-Path: randfall\nOracle-Proof: engine/proofs/hanging-queen.yaml\n",
        )
        .to_string();
    let spec_sha256 = sha256_hex(PROOF.as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let good = confirmation_text(&candidate, &spec_sha256, REVIEWER);
    let wrong_sha256 = format!("field `proof_sha256` is `{}`", sha256_hex(b"another spec"));
    let cases: Vec<(String, Option<String>, &str)> = vec![
        ("missing".into(), None, "needs `--confirmation FILE`"),
        (
            "by the author".into(),
            Some(confirmation_text(
                &candidate,
                &spec_sha256,
                "The Same Person <FIXTURE@example.invalid>",
            )),
            "field `confirmed_by` <FIXTURE@example.invalid> is the author of commit",
        ),
        (
            "wrong sha256".into(),
            Some(confirmation_text(
                &candidate,
                &sha256_hex(b"another spec"),
                REVIEWER,
            )),
            &wrong_sha256,
        ),
        (
            "another candidate".into(),
            Some(good.replace(&candidate, &"e".repeat(40))),
            "field `candidate` is `eeee",
        ),
        (
            "another proof".into(),
            Some(good.replace("hanging-queen.yaml", "kbnk.yaml")),
            "field `proof` is `engine/proofs/kbnk.yaml`",
        ),
        (
            "malformed confirmer".into(),
            Some(confirmation_text(
                &candidate,
                &spec_sha256,
                "ada@reviewer.invalid",
            )),
            "field `confirmed_by` is `ada@reviewer.invalid`, not `Name <email>`",
        ),
        (
            "empty statement".into(),
            Some(good.replace(
                "class_rare: Hanging-queen captures defended by a pawn.",
                "class_rare: \"\"",
            )),
            "field `statements.class_rare` is empty",
        ),
        (
            "unknown field".into(),
            Some(format!("{good}approved: yes\n")),
            "unknown field `approved`",
        ),
    ];
    for (name, text, message) in &cases {
        let out = dir.path().join(name.replace(' ', "-"));
        let file = dir.path().join(format!("{}.yaml", name.replace(' ', "-")));
        let mut args = vec!["--profile", "fixture"];
        if let Some(text) = text {
            fs::write(&file, text).unwrap();
            args.extend(["--confirmation", file.to_str().unwrap()]);
        }
        let (code, result, stderr) = fixture.verify_with(&candidate, &out, &args);
        assert_eq!(code, 2, "{name}: {stderr}\n{result:#}");
        assert_eq!(result["failure"]["step"], "trailers", "{name}");
        let why = result["failure"]["why"].as_str().unwrap();
        assert!(why.contains(message), "{name}: {why}");
        if text.is_some() {
            assert!(why.contains(file.to_str().unwrap()), "{name}: {why}");
        }
        assert!(!out.join("binding.json").exists(), "{name}: built");
    }

    // A Standard candidate has nothing to confirm: a confirmation is refused, not ignored.
    fixture.restore();
    let standard = fixture
        .commit("eval: the pieces as they were\n\nBench: 1\n")
        .to_string();
    let file = dir.path().join("standard.yaml");
    fs::write(&file, confirmation_text(&standard, &spec_sha256, REVIEWER)).unwrap();
    let out = dir.path().join("standard");
    let (code, result, _) = fixture.verify_with(
        &standard,
        &out,
        &[
            "--profile",
            "smoke",
            "--confirmation",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{result:#}");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("takes the standard path; a confirmation only belongs to a Randfall change"),
        "{why}"
    );
    assert!(!out.join("binding.json").exists());
}
