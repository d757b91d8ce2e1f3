//! A commit's sources: resolve a revision to one full commit id and export its tree with `git2`.
//!
//! The export walks the tree itself (no checkout, so the user's index and work tree are never
//! touched) and refuses what would let a candidate reach outside its own bytes or change the
//! oracle's build configuration: symlinks, submodules and `.cargo/config` files.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use git2::{ErrorCode, ObjectType, Oid, Repository, Tree};

/// A revision resolved to exactly one commit: the git ids of the commit and of its root tree
/// (`verify::resolve::CommitIds` adds the message for reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitIds {
    /// The full commit id.
    pub commit: Oid,
    /// The id of the commit's root tree (what the build depends on).
    pub tree: Oid,
}

/// Why a revision could not be resolved or its tree not exported.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The repository could not be opened.
    #[error("cannot open git repository {path}: {source}")]
    OpenRepository {
        /// Path given by the user.
        path: PathBuf,
        /// libgit2's reason.
        source: git2::Error,
    },
    /// A short id matches more than one object.
    #[error("revision `{rev}` is ambiguous: give the full 40-character commit id")]
    Ambiguous {
        /// The revision as given.
        rev: String,
    },
    /// The revision names nothing, or nothing that is a commit.
    #[error("revision `{rev}` does not name a commit: {reason}")]
    NotACommit {
        /// The revision as given.
        rev: String,
        /// libgit2's reason.
        reason: String,
    },
    /// The tree contains a symbolic link.
    #[error("tree entry `{path}` is a symbolic link; the oracle builds only regular files")]
    Symlink {
        /// Path inside the tree.
        path: String,
    },
    /// The tree contains a submodule (gitlink).
    #[error(
        "tree entry `{path}` is a submodule; the oracle builds only sources stored in the commit"
    )]
    Submodule {
        /// Path inside the tree.
        path: String,
    },
    /// The tree carries a Cargo configuration file that would change the oracle's build.
    #[error(
        "tree entry `{path}` is a Cargo configuration file; the oracle owns the build configuration"
    )]
    CargoConfig {
        /// Path inside the tree.
        path: String,
    },
    /// An entry name that cannot be written safely (`..`, a slash, not UTF-8).
    #[error("tree entry `{path}` has a name the oracle will not write")]
    BadName {
        /// Path inside the tree, lossily decoded.
        path: String,
    },
    /// Reading an object from the repository failed.
    #[error("reading `{path}` from the repository: {source}")]
    Git {
        /// Path inside the tree (empty for the root).
        path: String,
        /// libgit2's reason.
        source: git2::Error,
    },
    /// Writing the exported file failed.
    #[error("writing {path}: {source}")]
    Write {
        /// Destination on disk.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Opens the repository at `path` (the directory itself or any directory inside a work tree).
pub fn open_repository(path: &Path) -> Result<Repository, SourceError> {
    Repository::discover(path).map_err(|source| SourceError::OpenRepository {
        path: path.to_owned(),
        source,
    })
}

/// Resolves any revision (`HEAD`, a branch, a full or unambiguous short id) to one commit.
pub fn resolve(repo: &Repository, rev: &str) -> Result<CommitIds, SourceError> {
    let object = repo.revparse_single(rev).map_err(|error| {
        if error.code() == ErrorCode::Ambiguous {
            SourceError::Ambiguous {
                rev: rev.to_owned(),
            }
        } else {
            SourceError::NotACommit {
                rev: rev.to_owned(),
                reason: error.message().to_owned(),
            }
        }
    })?;
    let commit = object
        .peel_to_commit()
        .map_err(|error| SourceError::NotACommit {
            rev: rev.to_owned(),
            reason: error.message().to_owned(),
        })?;
    Ok(CommitIds {
        commit: commit.id(),
        tree: commit.tree_id(),
    })
}

/// Writes the tree `tree` into the empty or missing directory `dest`, file by file.
pub fn export_tree(repo: &Repository, tree: Oid, dest: &Path) -> Result<(), SourceError> {
    let root = repo.find_tree(tree).map_err(|source| SourceError::Git {
        path: String::new(),
        source,
    })?;
    create_dir(dest)?;
    export_dir(repo, &root, "", dest)
}

fn export_dir(
    repo: &Repository,
    tree: &Tree<'_>,
    prefix: &str,
    dest: &Path,
) -> Result<(), SourceError> {
    for entry in tree.iter() {
        let name = entry.name().unwrap_or("");
        let path = format!("{prefix}{}", String::from_utf8_lossy(entry.name_bytes()));
        if name.is_empty()
            || name == "."
            || name == ".."
            || name.contains('/')
            || name.contains('\0')
        {
            return Err(SourceError::BadName { path });
        }
        let mode = entry.filemode();
        match entry.kind() {
            Some(ObjectType::Tree) => {
                let subtree = repo
                    .find_tree(entry.id())
                    .map_err(|source| SourceError::Git {
                        path: path.clone(),
                        source,
                    })?;
                let sub_dest = dest.join(name);
                create_dir(&sub_dest)?;
                export_dir(repo, &subtree, &format!("{path}/"), &sub_dest)?;
            }
            Some(ObjectType::Commit) => return Err(SourceError::Submodule { path }),
            Some(ObjectType::Blob) if mode == 0o120_000 => {
                return Err(SourceError::Symlink { path });
            }
            Some(ObjectType::Blob) => {
                if is_cargo_config(prefix, name) {
                    return Err(SourceError::CargoConfig { path });
                }
                let blob = repo
                    .find_blob(entry.id())
                    .map_err(|source| SourceError::Git {
                        path: path.clone(),
                        source,
                    })?;
                let executable = mode & 0o111 != 0;
                write_file(&dest.join(name), blob.content(), executable)?;
            }
            _ => return Err(SourceError::BadName { path }),
        }
    }
    Ok(())
}

/// Cargo reads `.cargo/config` and `.cargo/config.toml` from the build directory and its
/// parents; refusing them anywhere in the tree keeps every directory of it safe to build in.
fn is_cargo_config(prefix: &str, name: &str) -> bool {
    let in_dot_cargo = prefix == ".cargo/" || prefix.ends_with("/.cargo/");
    in_dot_cargo && (name == "config" || name == "config.toml")
}

fn create_dir(path: &Path) -> Result<(), SourceError> {
    fs::create_dir_all(path).map_err(|source| SourceError::Write {
        path: path.to_owned(),
        source,
    })?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).map_err(|source| {
        SourceError::Write {
            path: path.to_owned(),
            source,
        }
    })
}

fn write_file(path: &Path, content: &[u8], executable: bool) -> Result<(), SourceError> {
    let mode = if executable { 0o755 } else { 0o644 };
    let wrap = |source| SourceError::Write {
        path: path.to_owned(),
        source,
    };
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(wrap)?;
    file.write_all(content).map_err(wrap)?;
    // The umask may have narrowed the mode; the sandboxed builder needs to read every file.
    file.set_permissions(fs::Permissions::from_mode(mode))
        .map_err(wrap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_with(files: &[(&str, &[u8], i32)]) -> (tempfile::TempDir, Repository, Oid) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let oid = {
            let mut index = repo.index().unwrap();
            for (path, content, mode) in files {
                let blob = repo.blob(content).unwrap();
                let entry = git2::IndexEntry {
                    ctime: git2::IndexTime::new(0, 0),
                    mtime: git2::IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: *mode as u32,
                    uid: 0,
                    gid: 0,
                    file_size: content.len() as u32,
                    id: blob,
                    flags: 0,
                    flags_extended: 0,
                    path: path.as_bytes().to_vec(),
                };
                index.add(&entry).unwrap();
            }
            let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
            let sig =
                git2::Signature::new("t", "t@example.invalid", &git2::Time::new(0, 0)).unwrap();
            repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
                .unwrap()
        };
        (dir, repo, oid)
    }

    #[test]
    fn exports_files_with_their_modes_and_leaves_the_index_alone() {
        let (dir, repo, commit) = repo_with(&[
            ("a.txt", b"alpha", 0o100_644),
            ("bin/run.sh", b"#!/bin/sh\n", 0o100_755),
        ]);
        let resolved = resolve(&repo, "HEAD").unwrap();
        assert_eq!(resolved.commit, commit);
        let out = dir.path().join("out");
        export_tree(&repo, resolved.tree, &out).unwrap();
        assert_eq!(fs::read(out.join("a.txt")).unwrap(), b"alpha");
        let mode = fs::metadata(out.join("bin/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert!(
            !dir.path().join("a.txt").exists(),
            "the work tree was not checked out"
        );
    }

    #[test]
    fn refuses_symlinks_submodules_and_cargo_config() {
        let cases: [(&str, i32, &str); 3] = [
            ("link", 0o120_000, "symbolic link"),
            (
                "engine/.cargo/config.toml",
                0o100_644,
                "Cargo configuration",
            ),
            (".cargo/config", 0o100_644, "Cargo configuration"),
        ];
        for (path, mode, message) in cases {
            let (dir, repo, _) = repo_with(&[(path, b"target", mode)]);
            let tree = resolve(&repo, "HEAD").unwrap().tree;
            let error = export_tree(&repo, tree, &dir.path().join("out")).unwrap_err();
            assert!(error.to_string().contains(message), "{path}: {error}");
            assert!(error.to_string().contains(path), "{error}");
        }
    }

    #[test]
    fn refuses_a_submodule_gitlink() {
        let (dir, repo, _) = repo_with(&[("a", b"x", 0o100_644)]);
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        let mut builder = repo.treebuilder(Some(&head.tree().unwrap())).unwrap();
        builder.insert("vendor", head.id(), 0o160_000).unwrap();
        let tree = builder.write().unwrap();
        let error = export_tree(&repo, tree, &dir.path().join("out")).unwrap_err();
        assert!(
            matches!(error, SourceError::Submodule { ref path } if path == "vendor"),
            "{error}"
        );
    }

    #[test]
    fn unknown_and_non_commit_revisions_are_refused() {
        let (_dir, repo, _) = repo_with(&[("a", b"x", 0o100_644)]);
        assert!(matches!(
            resolve(&repo, "no-such-branch"),
            Err(SourceError::NotACommit { .. })
        ));
        let tree = resolve(&repo, "HEAD").unwrap().tree.to_string();
        assert!(matches!(
            resolve(&repo, &tree),
            Err(SourceError::NotACommit { .. })
        ));
    }
}
