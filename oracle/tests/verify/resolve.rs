//! Step 1 of `oracle verify`, resolve: what is not an engine change (a README, the constitution,
//! the root build files, a build hook in the engine's manifest) and a run without a profile are
//! refused before anything is built or written.

use std::fs;
use std::process::Command;

use serde_json::Value;

use super::{Fixture, SERIAL, step_names};
use crate::support::ORACLE;

/// A commit that changes nothing under `engine/` is not an engine change (exit 2, step 1), not a
/// candidate without a `Bench:` trailer; `--out` is not even created, and no report is named.
#[test]
fn a_readme_only_commit_is_not_an_engine_change() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.write("README.md", "Coherent, a chess engine.\n");
    let readme = fixture.commit("docs: a README").to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, result, stderr) = fixture.verify(&readme, &out);
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    assert_eq!(result["failure"]["step"], "resolve");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.ends_with(&format!(
            "candidate {readme} is not an engine change: it changes nothing under engine/ \
             (it changes README.md); the oracle judges engine changes only"
        )),
        "{why}"
    );
    assert!(!why.contains("Bench"), "{why}");
    assert!(!out.exists(), "a step-1 failure leaves no half-made --out");
    assert!(result["report"].is_null());
    let output = Command::new(ORACLE)
        .args(["verify", &readme, "--profile", "smoke", "--repo"])
        .arg(fixture.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    // An error goes to standard error as every command's does; standard output stays empty
    // (issue 49: it went to standard output).
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(
        stderr.contains("error: ") && stderr.contains("is not an engine change"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("report:"),
        "a report that does not exist is named: {stderr}"
    );
}

/// A bare `oracle verify` names no profile: refused (exit 2) instead of starting `official`.
#[test]
fn verify_without_a_profile_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(ORACLE)
        .current_dir(dir.path())
        .args(["verify", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--profile <NAME>"), "{stderr}");
    assert!(!dir.path().join("out").exists());
}

#[test]
fn candidate_editing_the_constitution_is_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    fixture.edit(
        "constitution/constitution.yaml",
        "standard: [0.0, 150.0]",
        "standard: [-500.0, -400.0]",
    );
    let candidate = fixture.commit("eval: cheaper pieces, easier rules\n\nBench: 1\n");
    let result = refused_at_step_1(&fixture, &candidate.to_string());
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("is not an engine change")
            && why.contains("constitution/constitution.yaml (modified)")
            && why.contains("amendment"),
        "{why}"
    );
    assert_eq!(
        step_names(&result),
        [("resolve".to_owned(), "failed".to_owned())]
    );
}

#[test]
fn root_build_files_and_engine_build_hooks_are_refused_at_step_1() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let candidates: [(&str, &str, &[&str]); 4] = [
        (
            "rust-toolchain.toml",
            "[toolchain]\npath = \"/tmp/evil-toolchain\"\n",
            &["rust-toolchain.toml (modified)"],
        ),
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"engine\"]\n\n[patch.crates-io]\nlibc = { path = \"vendor/libc\" }\n",
            &["Cargo.toml (modified)"],
        ),
        (
            "engine/Cargo.toml",
            "[package]\nname = \"coherent\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nlibc = \"0.2\"\n",
            &["engine/Cargo.toml (content)", "`dependencies.libc`"],
        ),
        (
            "engine/build.rs",
            "fn main() {}\n",
            &["engine/build.rs (added)", "a build script"],
        ),
    ];
    // Each rides along with a real engine change: a commit with nothing under engine/ is refused
    // before its paths are weighed (not an engine change at all).
    let lib = fs::read_to_string(fixture.path().join("engine/src/lib.rs")).unwrap();
    let engine_change = format!("{lib}\n// faster\n");
    for (path, text, expected) in candidates {
        let candidate = on_genesis(
            &fixture,
            &[("engine/src/lib.rs", engine_change.as_str()), (path, text)],
        );
        let result = refused_at_step_1(&fixture, &candidate);
        let why = result["failure"]["why"].as_str().unwrap();
        assert!(why.contains("is not an engine change"), "{why}");
        for text in expected {
            assert!(why.contains(text), "`{text}` missing: {why}");
        }
    }
}

/// Issue 46: `"bui\u006cd"` is `package.build` to Cargo; a line scan read it as another key.
#[test]
fn a_build_script_key_spelled_with_an_escape_is_refused_at_step_1() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let manifest = fs::read_to_string(fixture.path().join("engine/Cargo.toml")).unwrap();
    let hooked = manifest.replacen(
        "[package]\n",
        "[package]\n\"bui\\u006cd\" = \"src/hook.rs\"\n",
        1,
    );
    assert_ne!(
        hooked, manifest,
        "the fixture's manifest has a [package] table"
    );
    let candidate = on_genesis(
        &fixture,
        &[
            ("engine/Cargo.toml", hooked.as_str()),
            ("engine/src/hook.rs", "fn main() {}\n"),
        ],
    );
    let result = refused_at_step_1(&fixture, &candidate);
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(why.contains("`package.build`"), "{why}");
}

/// Review of issue 46's fixes: Cargo builds `crate-type = ["proc-macro"]` as a proc-macro too,
/// whose code runs inside the compiler; a list of refused keys did not name it. The manifest is
/// now held to keys known to be harmless.
#[test]
fn a_proc_macro_by_crate_type_is_refused_at_step_1() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let manifest = fs::read_to_string(fixture.path().join("engine/Cargo.toml")).unwrap();
    let hooked = format!("{manifest}\n[lib]\ncrate-type = [\"proc-macro\"]\n");
    let hooked = if manifest.contains("[lib]") {
        manifest.replacen("[lib]\n", "[lib]\ncrate-type = [\"proc-macro\"]\n", 1)
    } else {
        hooked
    };
    let candidate = on_genesis(&fixture, &[("engine/Cargo.toml", hooked.as_str())]);
    let result = refused_at_step_1(&fixture, &candidate);
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(why.contains("`lib.crate-type`: `proc-macro`"), "{why}");
}

/// A commit on HEAD (the fixture's genesis here) that writes `files` (path, text), with a
/// `Bench:` trailer; HEAD stays where it is. Its id.
fn on_genesis(fixture: &Fixture, files: &[(&str, &str)]) -> String {
    let genesis = fixture.repo.head().unwrap().peel_to_commit().unwrap();
    let mut update = git2::build::TreeUpdateBuilder::new();
    for (path, text) in files {
        let blob = fixture.repo.blob(text.as_bytes()).unwrap();
        update.upsert(path, blob, git2::FileMode::Blob);
    }
    let tree = update
        .create_updated(&fixture.repo, &genesis.tree().unwrap())
        .unwrap();
    fixture
        .commit_on(genesis.id(), tree, "engine: faster\n\nBench: 1\n")
        .to_string()
}

/// Verifies `candidate`, which must be refused at step 1 (exit 2) before any build; the result.
fn refused_at_step_1(fixture: &Fixture, candidate: &str) -> Value {
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(candidate, out.path());
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    assert_eq!(result["failure"]["step"], "resolve", "{result:#}");
    assert!(
        !out.path().join("binding.json").exists(),
        "refused before any build"
    );
    result
}
