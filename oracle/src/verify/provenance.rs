//! Who judged: the oracle binary's own provenance for the entry (`oracle:`).
//!
//! `build.rs` embeds the commit the oracle was built from and whether its sources were dirty;
//! the running executable's sha256 is read from `/proc/self/exe`, the file the kernel is running,
//! so that even a binary whose commit is `unknown` is named exactly.

use std::path::Path;

use crate::governance::entry::{OracleCommit, OracleRecord};
use crate::governance::hash::{GitId, Sha256Hex};

use crate::integrity::sha256_file;

/// The file the kernel is executing for this process.
const RUNNING_EXECUTABLE: &str = "/proc/self/exe";

/// The embedded commit; `unknown` when the build had no git and no `ORACLE_BUILD_COMMIT`.
#[must_use]
pub fn built_from() -> OracleCommit {
    GitId::try_from(env!("ORACLE_GIT_COMMIT").to_owned())
        .map_or(OracleCommit::Unknown, OracleCommit::Known)
}

/// Whether the oracle's sources had uncommitted changes at build time; `None` when unknown.
#[must_use]
pub fn built_dirty() -> Option<bool> {
    match env!("ORACLE_GIT_DIRTY") {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// The record of this oracle binary: version, commit, dirtiness and its own sha256 (absent only
/// where `/proc` cannot be read).
#[must_use]
pub fn this_oracle() -> OracleRecord {
    OracleRecord {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        commit: built_from(),
        dirty: built_dirty(),
        binary_sha256: sha256_file(Path::new(RUNNING_EXECUTABLE))
            .ok()
            .and_then(|hex| Sha256Hex::try_from(hex).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_binary_is_named_by_its_bytes() {
        let record = this_oracle();
        let expected = sha256_file(&std::env::current_exe().unwrap()).unwrap();
        assert_eq!(
            record.binary_sha256.map(|sha| sha.to_string()),
            Some(expected)
        );
    }

    #[test]
    fn the_embedded_commit_is_the_work_tree_head_it_was_built_from() {
        let head = std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("the tests run in a git checkout");
        let head = String::from_utf8(head.stdout).unwrap();
        let expected = option_env!("ORACLE_BUILD_COMMIT")
            .filter(|commit| !commit.is_empty())
            .unwrap_or(head.trim());
        assert_eq!(built_from().as_str(), expected);
        assert!(built_dirty().is_some());
    }
}
