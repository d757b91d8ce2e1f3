//! The build cache: one reproduced binary per (build procedure, sources id, toolchain, recipe
//! hash); the sources id is `source::sources_id`, the tree a build is given.
//!
//! Entries are written to a temporary directory and renamed into place, so a reader sees a
//! complete entry or none; each entry records the binary's sha256, re-checked on every hit.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::integrity::{self, hex};

/// What a cache entry records about its binary (`entry.json` beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheEntry {
    /// The commit the binary was first built from (other commits may share its sources).
    pub commit: String,
    /// The tree id of the commit it was first built from (its sources are the tree less the
    /// register's records).
    pub tree: String,
    /// First line of `rustc -vV`.
    pub toolchain: String,
    /// sha256 of the recipe's canonical form.
    pub recipe_sha256: String,
    /// sha256 of the binary, equal in both builds.
    pub sha256: String,
}

/// Why the cache could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// A file or directory of the cache could not be read or written.
    #[error("build cache {path}: {source}")]
    Io {
        /// The path at fault.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An entry's record is unreadable.
    #[error("build cache entry {path} is corrupt: {reason}; delete it to rebuild")]
    Corrupt {
        /// The entry record.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

impl From<integrity::FileError> for CacheError {
    fn from(error: integrity::FileError) -> Self {
        Self::Io {
            path: error.path,
            source: error.reason,
        }
    }
}

/// A build cache rooted at one directory.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CacheError + '_ {
    move |source| CacheError::Io {
        path: path.to_owned(),
        source,
    }
}

impl Cache {
    /// `$XDG_CACHE_HOME/coherent-oracle`, else `$HOME/.cache/coherent-oracle`, else a directory
    /// under the system temp dir.
    #[must_use]
    pub fn default_root() -> PathBuf {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("coherent-oracle")
    }

    /// Opens (creating if needed) the cache at `root`.
    pub fn open(root: &Path) -> Result<Self, CacheError> {
        for dir in [root.to_owned(), root.join("builds"), root.join("work")] {
            if dir.is_dir() {
                continue;
            }
            fs::create_dir_all(&dir).map_err(io(&dir))?;
            // Bubblewrap runs builds as `nobody`, who must reach the work dirs under the cache;
            // directories the user made are left as they are.
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).map_err(io(&dir))?;
        }
        Ok(Self {
            root: root.to_owned(),
        })
    }

    /// The cache root.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The key of a build: sha256 over the version of the oracle's build procedure
    /// ([`super::cargo::BUILD_PROCEDURE`], [`super::native::BUILD_PROCEDURE`]), the sources id
    /// ([`super::source::sources_id`]), the toolchain (the full `rustc -vV`; each C or C++
    /// compiler's version and sha256) and the recipe (its hash).
    #[must_use]
    pub fn key(
        procedure: &str,
        sources: &str,
        toolchain_verbose: &str,
        recipe_sha256: &str,
    ) -> String {
        let mut hasher = Sha256::new();
        for part in [procedure, sources, toolchain_verbose, recipe_sha256] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        hex(&hasher.finalize())
    }

    /// A fresh private directory for the two build copies, removed when dropped.
    pub fn work_dir(&self) -> Result<tempfile::TempDir, CacheError> {
        let parent = self.root.join("work");
        let dir = tempfile::Builder::new()
            .prefix("build-")
            .tempdir_in(&parent)
            .map_err(io(&parent))?;
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755))
            .map_err(io(dir.path()))?;
        Ok(dir)
    }

    /// Copies a failed build's log out of its work directory (deleted afterwards) to
    /// `logs/<label>.log` in the cache; returns where it now is (the original when it cannot).
    #[must_use]
    pub fn keep_log(&self, log: &Path, label: &str) -> PathBuf {
        let logs = self.root.join("logs");
        let kept = logs.join(format!("{label}.log"));
        match fs::create_dir_all(&logs).and_then(|()| fs::copy(log, &kept)) {
            Ok(_) => kept,
            Err(_) => log.to_owned(),
        }
    }

    /// The cached binary and its record for `key`, if present and its bytes still hash right.
    pub fn lookup(
        &self,
        key: &str,
        binary_name: &str,
    ) -> Result<Option<(PathBuf, CacheEntry)>, CacheError> {
        let dir = self.root.join("builds").join(key);
        let record = dir.join("entry.json");
        let text = match fs::read_to_string(&record) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(CacheError::Io {
                    path: record,
                    source,
                });
            }
        };
        let entry: CacheEntry =
            serde_json::from_str(&text).map_err(|error| CacheError::Corrupt {
                path: record.clone(),
                reason: error.to_string(),
            })?;
        let binary = dir.join(binary_name);
        let actual = integrity::sha256_file(&binary)?;
        if actual != entry.sha256 {
            return Err(CacheError::Corrupt {
                path: record,
                reason: format!("binary hashes to {actual}, record says {}", entry.sha256),
            });
        }
        Ok(Some((binary, entry)))
    }

    /// Stores `binary` under `key` atomically; returns the cached binary's path. If another
    /// process stored the same key meanwhile, its (identical by construction) entry is kept.
    pub fn store(
        &self,
        key: &str,
        binary_name: &str,
        binary: &Path,
        entry: &CacheEntry,
    ) -> Result<PathBuf, CacheError> {
        let builds = self.root.join("builds");
        let staging = tempfile::Builder::new()
            .prefix(".staging-")
            .tempdir_in(&builds)
            .map_err(io(&builds))?;
        let staged_binary = staging.path().join(binary_name);
        fs::copy(binary, &staged_binary).map_err(io(&staged_binary))?;
        fs::set_permissions(&staged_binary, fs::Permissions::from_mode(0o555))
            .map_err(io(&staged_binary))?;
        fs::File::open(&staged_binary)
            .and_then(|file| file.sync_all())
            .map_err(io(&staged_binary))?;
        let record = staging.path().join("entry.json");
        let mut file = fs::File::create(&record).map_err(io(&record))?;
        let json = serde_json::to_string_pretty(entry).expect("a cache entry always serialises");
        file.write_all(json.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(io(&record))?;
        fs::set_permissions(staging.path(), fs::Permissions::from_mode(0o755))
            .map_err(io(staging.path()))?;
        let final_dir = builds.join(key);
        let staged = staging.keep();
        if fs::rename(&staged, &final_dir).is_err() {
            // Another build stored the same key first: keep it only if it is this build's binary.
            let same = matches!(
                self.lookup(key, binary_name),
                Ok(Some((_, ref found))) if found.sha256 == entry.sha256
            );
            if !same {
                // An altered entry (or a stale one): the fresh build replaces it.
                fs::remove_dir_all(&final_dir).map_err(io(&final_dir))?;
                fs::rename(&staged, &final_dir).map_err(io(&final_dir))?;
            }
            let _ = fs::remove_dir_all(&staged);
        }
        Ok(final_dir.join(binary_name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(sha256: &str) -> CacheEntry {
        CacheEntry {
            commit: "c".into(),
            tree: "t".into(),
            toolchain: "rustc".into(),
            recipe_sha256: "r".into(),
            sha256: sha256.into(),
        }
    }

    #[test]
    fn store_then_lookup_and_detect_tampering() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("cache")).unwrap();
        let binary = dir.path().join("bin");
        fs::write(&binary, b"engine bytes").unwrap();
        let sha = integrity::sha256_file(&binary).unwrap();
        let key = Cache::key("1", "tree", "rustc 1.95.0", "recipe");
        assert!(cache.lookup(&key, "coherent").unwrap().is_none());
        let stored = cache
            .store(&key, "coherent", &binary, &entry(&sha))
            .unwrap();
        let (found, record) = cache.lookup(&key, "coherent").unwrap().unwrap();
        assert_eq!((found.clone(), record), (stored, entry(&sha)));
        fs::set_permissions(&found, fs::Permissions::from_mode(0o644)).unwrap();
        fs::write(&found, b"tampered").unwrap();
        let error = cache.lookup(&key, "coherent").unwrap_err();
        assert!(error.to_string().contains("corrupt"), "{error}");
    }

    #[test]
    fn keys_separate_their_parts() {
        assert_ne!(
            Cache::key("1", "ab", "c", "d"),
            Cache::key("1", "a", "bc", "d")
        );
        assert_ne!(
            Cache::key("1", "t", "rustc 1.95.0", "r"),
            Cache::key("1", "t", "rustc 1.96.0", "r")
        );
    }

    #[test]
    fn a_new_build_procedure_never_reuses_an_old_binary() {
        assert_ne!(
            Cache::key("1", "t", "rustc 1.95.0", "r"),
            Cache::key("2", "t", "rustc 1.95.0", "r")
        );
    }
}
