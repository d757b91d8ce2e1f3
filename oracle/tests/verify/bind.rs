//! Step 3 of `oracle verify`, build and bind: a binding profile needs a working sandbox before it
//! builds, and a build cache poisoned by another build is detected and never used.

use std::fs;
use std::path::Path;
use std::process::Command;

use oracle::integrity::sha256_hex;

use super::{Fixture, SERIAL, copy_tree};
use crate::support::ORACLE;

/// Issue 12: a binding profile without a working sandbox stops before building, exit 2,
/// saying what is missing (here bubblewrap is not on `PATH`).
#[test]
fn a_binding_profile_without_a_sandbox_stops_before_building() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.register_placeholder_genesis();
    // An engine change (anything else is refused at step 1, before the sandbox matters).
    fixture.cripple();
    let candidate = fixture.commit("eval: cheaper pieces\n\nBench: 1\n");
    let out = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify_in(
        &candidate.to_string(),
        out.path(),
        empty.path(),
        &["--profile", "fixture"],
        &[("PATH", empty.path())],
    );
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(result["failure"]["step"], "build");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("needs a working bubblewrap sandbox") && why.contains("nothing was built"),
        "{why}"
    );
    assert!(!out.path().join("binding.json").exists());
    assert_eq!(
        fs::read_dir(empty.path()).unwrap().count(),
        0,
        "the cache was touched"
    );
}

/// A directory for `PATH` with the toolchain and `unshare`, and a `bwrap` that does not work
/// (leaving it out is not enough: a bare program name is still found in `/usr/bin` by `execvp`'s
/// default search path when a job's environment is cleared).
fn path_without_bubblewrap() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("bwrap");
    fs::write(&broken, "#!/bin/sh\nexit 1\n").unwrap();
    fs::set_permissions(&broken, fs::Permissions::from_mode(0o755)).unwrap();
    for tool in ["rustc", "cargo", "rustup", "unshare", "setpriv"] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|d| d.join(tool))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{tool} is not installed"));
        std::os::unix::fs::symlink(found, dir.path().join(tool)).unwrap();
    }
    dir
}

/// A build script that rewrites every cached binary under `builds` into a wrapper and its
/// `entry.json` to the wrapper's sha256, so that the cache's own check still passes.
fn poisoning_build_script(builds: &Path) -> String {
    r##"use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

fn main() {
    let wrapper = "#!/bin/sh\nwhile read line; do case $line in uci) echo uciok;; isready) echo readyok;; go*) echo 'bestmove 0000';; quit) exit 0;; esac; done\n";
    for dir in fs::read_dir("BUILDS").into_iter().flatten().flatten() {
        let binary = dir.path().join("coherent");
        let record = dir.path().join("entry.json");
        let Ok(text) = fs::read_to_string(&record) else { continue };
        let _ = fs::set_permissions(&binary, fs::Permissions::from_mode(0o755));
        if fs::write(&binary, wrapper).is_err() {
            continue;
        }
        let sum = Command::new("sha256sum").arg(&binary).output().unwrap();
        let sha = String::from_utf8_lossy(&sum.stdout)[..64].to_owned();
        let key = "\"sha256\": \"";
        if let Some(at) = text.find(key) {
            let start = at + key.len();
            let forged = format!("{}{}{}", &text[..start], sha, &text[start + 64..]);
            let _ = fs::write(&record, forged);
        }
    }
    panic!("the build script has done its work");
}
"##
    .replace("BUILDS", &builds.display().to_string())
}

#[test]
fn a_poisoned_build_cache_is_detected_and_never_used() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let repo = fixture.path().display().to_string();
    let (bench, registered_sha256) = fixture.bench_of_worktree();
    let registered = fixture.register_genesis(&registered_sha256, bench);
    // The predecessor's build, taken from the shared cache into a private one that may be poisoned.
    let built = fixture
        .build(&registered.to_string(), &fixture.cache)
        .json();
    let shared_entry = Path::new(built["binary"].as_str().unwrap())
        .parent()
        .unwrap();
    let attacker_tree = |builds: &Path| {
        let script = poisoning_build_script(builds);
        let blob = fixture.repo.blob(script.as_bytes()).unwrap();
        let mut update = git2::build::TreeUpdateBuilder::new();
        update.upsert("engine/build.rs", blob, git2::FileMode::Blob);
        update
            .create_updated(
                &fixture.repo,
                &fixture
                    .repo
                    .find_commit(registered)
                    .unwrap()
                    .tree()
                    .unwrap(),
            )
            .unwrap()
    };
    let no_bwrap = path_without_bubblewrap();
    for bubblewrap in [true, false] {
        let cache = tempfile::tempdir().unwrap();
        let cached = cache
            .path()
            .join("builds")
            .join(shared_entry.file_name().unwrap());
        copy_tree(shared_entry, &cached);
        let attacker = fixture.commit_on(
            registered,
            attacker_tree(&cache.path().join("builds")),
            "engine: a build script",
        );
        // Any build of the attacker's commit (here `oracle build`, not refused: it judges nothing).
        let mut build = Command::new(ORACLE);
        build
            .args([
                "build",
                &attacker.to_string(),
                "--repo",
                &repo,
                "--cache-dir",
            ])
            .arg(cache.path())
            .arg("--recipe")
            .arg(&fixture.recipe);
        if !bubblewrap {
            build.env("PATH", no_bwrap.path());
        }
        let output = build.output().unwrap();
        assert!(!output.status.success(), "the build script fails the build");
        let cached_sha256 = sha256_hex(&fs::read(cached.join("coherent")).unwrap());
        if bubblewrap {
            assert_eq!(
                cached_sha256, registered_sha256,
                "under bubblewrap the build script cannot write to the cache"
            );
            continue;
        }
        assert_ne!(
            cached_sha256,
            registered_sha256,
            "without bubblewrap the build script rewrote the cached predecessor: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        // A binding run on an honest candidate: the poisoned predecessor is detected (its sha256
        // is not the register's), rebuilt, and the binding holds the register's binary.
        fixture.write(
            "engine/src/lib.rs",
            &format!(
                "{}\n// A comment: the binary stays the same.\n",
                fs::read_to_string(fixture.path().join("engine/src/lib.rs")).unwrap()
            ),
        );
        let candidate = fixture.commit(&format!("engine: a comment\n\nBench: {bench}\n"));
        let out = tempfile::tempdir().unwrap();
        let (code, result, stderr) = fixture.verify_in(
            &candidate.to_string(),
            out.path(),
            cache.path(),
            &["--no-play", "--profile", "fixture"],
            &[],
        );
        assert_eq!(
            result["binding"]["predecessor"]["sha256"], registered_sha256,
            "{stderr}\n{result:#}"
        );
        assert!(
            stderr.contains("is not the register's") && stderr.contains("rebuilding it"),
            "{stderr}"
        );
        assert_eq!(code, 0, "{stderr}\n{result:#}");
        assert_eq!(
            sha256_hex(&fs::read(cached.join("coherent")).unwrap()),
            registered_sha256,
            "the fresh build replaced the poisoned cache entry"
        );
    }
}
