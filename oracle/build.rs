//! Embeds the provenance of the oracle binary: the commit it was built from and whether the
//! sources it was built from had uncommitted changes (docs/architecture.md, "The judge's
//! provenance"). Every register entry names the judge; a judge that cannot say where it came from
//! records `unknown` rather than a guess.
//!
//! `ORACLE_BUILD_COMMIT` (set by the workflows) names the commit; otherwise `git rev-parse HEAD`.
//! Without git (a source tarball) both stay empty and the oracle reports them unknown.

use std::path::Path;
use std::process::Command;

/// The paths whose uncommitted changes make the binary differ from its commit's sources.
const SOURCES: [&str; 6] = [
    "src",
    "build.rs",
    "Cargo.toml",
    "../Cargo.toml",
    "../Cargo.lock",
    "../rust-toolchain.toml",
];

fn main() {
    println!("cargo:rerun-if-env-changed=ORACLE_BUILD_COMMIT");
    for path in SOURCES {
        println!("cargo:rerun-if-changed={path}");
    }
    let head = git(&["rev-parse", "HEAD"]);
    let declared = std::env::var("ORACLE_BUILD_COMMIT")
        .ok()
        .filter(|commit| !commit.is_empty());
    let commit = declared
        .clone()
        .or_else(|| head.clone())
        .unwrap_or_default();
    // Whether the work tree matches is only known when it is the declared commit's work tree.
    let dirty = match (&declared, &head) {
        (Some(declared), Some(head)) if declared != head => None,
        (_, None) => None,
        _ => git(&[&["status", "--porcelain", "--"][..], &SOURCES[..]].concat())
            .map(|status| !status.is_empty()),
    };
    println!("cargo:rustc-env=ORACLE_GIT_COMMIT={commit}");
    println!(
        "cargo:rustc-env=ORACLE_GIT_DIRTY={}",
        dirty.map_or("", |dirty| if dirty { "true" } else { "false" })
    );
    // A new commit or a staged change must rerun this script: watch HEAD, its branch and the index.
    if head.is_some() {
        for name in ["HEAD", "index", "packed-refs"] {
            watch_git_path(name);
        }
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch_git_path(&branch);
        }
    } else if Path::new("../.git").exists() {
        // git failed in a git work tree (not installed, or the tree is someone else's and git
        // refuses it as unsafe): without a watch on it, this `unknown` would stick to every
        // later build, commits included. Any change under .git reruns the script.
        println!("cargo:rerun-if-changed=../.git");
    }
}

/// Asks cargo to rerun this script when the git file `name` (resolved by git) changes.
fn watch_git_path(name: &str) {
    if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", name])
        && Path::new(&path).exists()
    {
        println!("cargo:rerun-if-changed={path}");
    }
}

/// The trimmed output of a successful `git ARGS` in this crate's directory, or `None`.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
