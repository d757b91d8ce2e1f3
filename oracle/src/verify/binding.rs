//! Step 3's second half: the binding record — which exact binaries will be measured, fixed
//! before any measurement (docs/randfall.md: a study was refused because its hashes were bound
//! afterwards).
//!
//! The record is written to `--out` before the gate, the bench, the proof or any game; before each
//! later step the bound files are hashed again and must still match.

use crate::governance::entry::IsolationRecord;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::governance::timestamp::Timestamp;
use crate::integrity::{self, sha256_file, write_atomically};

/// One bound binary: the commit it was built from and the exact bytes that will be measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundBinary {
    /// Full commit id.
    pub commit: String,
    /// Full tree id of that commit.
    pub tree: String,
    /// sha256 of the binary, equal for both reproducible builds.
    pub sha256: String,
    /// The bound copy inside `--out` that every later step runs.
    pub path: PathBuf,
}

/// The binding record (`binding.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BindingRecord {
    /// When the hashes were fixed (RFC 3339, UTC, milliseconds).
    pub bound_at: String,
    /// The same instant in milliseconds since the Unix epoch, for comparisons.
    pub bound_at_unix_ms: u64,
    /// The toolchain both were built with (`rustc -V` of the pinned toolchain).
    pub toolchain: String,
    /// The profile this run measures under.
    pub profile: String,
    /// sha256 of the constitution file that pins the rules (read from the predecessor's tree).
    pub constitution_sha256: String,
    /// The change being judged.
    pub candidate: BoundBinary,
    /// What it is judged against.
    pub predecessor: BoundBinary,
    /// How the builds ran and how the engines will play.
    pub isolation: IsolationRecord,
}

/// A bound file that changed, vanished, or a record that cannot be written or read.
#[derive(Debug, Error)]
pub enum BindingError {
    /// The bound binary's bytes are no longer the bound ones.
    #[error("{role} binary {path} changed after binding: sha256 {actual}, bound {bound}")]
    Changed {
        /// `candidate` or `predecessor`.
        role: &'static str,
        /// The bound file.
        path: String,
        /// What it hashes to now.
        actual: String,
        /// What was bound.
        bound: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file at fault.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// `binding.json` exists but does not parse.
    #[error("{path}: not a binding record: {source}")]
    Parse {
        /// The file at fault.
        path: String,
        /// What serde said.
        source: serde_json::Error,
    },
}

impl From<integrity::FileError> for BindingError {
    fn from(error: integrity::FileError) -> Self {
        Self::Io {
            path: error.path.display().to_string(),
            source: error.reason,
        }
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> BindingError + '_ {
    move |source| BindingError::Io {
        path: path.display().to_string(),
        source,
    }
}

impl BindingRecord {
    /// Writes the record atomically; after this returns, the binding is on disk.
    pub fn write(&self, path: &Path) -> Result<(), BindingError> {
        let mut json = serde_json::to_vec_pretty(self).expect("a binding record serializes");
        json.push(b'\n');
        Ok(write_atomically(path, &json)?)
    }

    /// Reads an earlier run's record (`None` when there is none).
    pub fn read(path: &Path) -> Result<Option<Self>, BindingError> {
        match std::fs::read(path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|source| BindingError::Parse {
                        path: path.display().to_string(),
                        source,
                    })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(path)(e)),
        }
    }

    /// Hashes both bound files again; an error if either differs from what was bound.
    pub fn rehash(&self) -> Result<(), BindingError> {
        for (role, bound) in [
            ("candidate", &self.candidate),
            ("predecessor", &self.predecessor),
        ] {
            let actual = sha256_file(&bound.path)?;
            if actual != bound.sha256 {
                return Err(BindingError::Changed {
                    role,
                    path: bound.path.display().to_string(),
                    actual,
                    bound: bound.sha256.clone(),
                });
            }
        }
        Ok(())
    }

    /// True when this record binds the same commits, profile and rules as `other` (a resumable run).
    pub fn same_run(&self, other: &Self) -> bool {
        self.profile == other.profile
            && self.constitution_sha256 == other.constitution_sha256
            && self.candidate.commit == other.candidate.commit
            && self.predecessor.commit == other.predecessor.commit
            && self.candidate.sha256 == other.candidate.sha256
            && self.predecessor.sha256 == other.predecessor.sha256
    }
}

/// An instant as RFC 3339 UTC with milliseconds, and as milliseconds since the epoch.
///
/// The register keeps whole seconds ([`Timestamp`]); the binding record adds milliseconds so
/// that "bound before the first game" can be checked even within one second.
pub fn timestamp(now: SystemTime) -> (String, u64) {
    let ms = now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let seconds = Timestamp::from_unix(ms / 1000);
    let text = seconds.as_str().trim_end_matches('Z');
    (format!("{text}.{:03}Z", ms % 1000), ms)
}

/// The whole-second register form of a binding time.
pub fn register_timestamp(bound_at_unix_ms: u64) -> Timestamp {
    Timestamp::from_unix(bound_at_unix_ms / 1000)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = UNIX_EPOCH + Duration::from_millis(1_792_142_531_042);
        assert_eq!(timestamp(t).0, "2026-10-16T09:22:11.042Z");
        assert_eq!(timestamp(UNIX_EPOCH).0, "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(timestamp(leap).0, "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn rehash_detects_a_changed_binary() {
        let dir = tempfile::tempdir().unwrap();
        let bin = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            BoundBinary {
                commit: "c".repeat(40),
                tree: "t".repeat(40),
                sha256: sha256_file(&path).unwrap(),
                path,
            }
        };
        let record = BindingRecord {
            bound_at: timestamp(SystemTime::now()).0,
            bound_at_unix_ms: 1,
            toolchain: "rustc 1.95.0".into(),
            profile: "smoke".into(),
            constitution_sha256: "0".repeat(64),
            candidate: bin("cand", b"new engine"),
            predecessor: bin("pred", b"old engine"),
            isolation: IsolationRecord {
                build: "bubblewrap 0.8.0: …".into(),
                play: "bubblewrap 0.8.0: …".into(),
            },
        };
        let file = dir.path().join("binding.json");
        record.write(&file).unwrap();
        assert_eq!(BindingRecord::read(&file).unwrap(), Some(record.clone()));
        record.rehash().unwrap();
        std::fs::write(&record.candidate.path, b"swapped").unwrap();
        let err = record.rehash().unwrap_err().to_string();
        assert!(
            err.contains("candidate binary") && err.contains("changed after binding"),
            "{err}"
        );
    }
}
