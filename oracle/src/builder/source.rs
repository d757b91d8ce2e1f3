//! A commit's sources: resolve a revision to one full commit id and export its tree with `git2`.
//!
//! The export walks the tree itself (no checkout, so the user's index and work tree are never
//! touched) and refuses what would let a candidate reach outside its own bytes or change the
//! oracle's build configuration: symlinks, submodules and `.cargo/config` files. A blob's size is
//! read from its header before it is inflated, so a small object that inflates to gigabytes is
//! refused by its size ([`MAX_FILE_BYTES`], [`MAX_TREE_BYTES`]), and each file is streamed to
//! disk where the object database allows (loose objects; a packed one is read whole, within the
//! bound).
//!
//! A build is given the commit's tree without the register's record directories
//! ([`RECORD_DIRS`]): the entries and their evidence grow with every verdict (the evidence is most
//! of the repository's bytes), no build may depend on them, and a commit that only adds an entry
//! then builds from the same sources as its parent ([`sources_id`]), so the build cache holds.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use git2::{ErrorCode, ObjectType, Odb, Oid, Repository, Tree};
use sha2::{Digest, Sha256};

use crate::governance::register::RECORD_DIRS;
use crate::integrity::hex;

/// The largest file an export writes, in bytes. The largest file in the tree today is under
/// 0.5 MB (the engine's network is 0.4 MB); 64 MiB leaves room for a network 150 times larger.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The most bytes a whole export writes: Coherent's sources are under 1 MB (the register's
/// records, which grow by about 1.5 MB an entry, are not exported), so 256 MiB is room for a far
/// larger engine, and it bounds the disk a hostile tree can fill.
pub const MAX_TREE_BYTES: u64 = 256 << 20;

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
    /// A file larger than [`MAX_FILE_BYTES`] (refused before it is inflated).
    #[error("tree entry `{path}` is {size} bytes; a file may have at most {limit} bytes")]
    FileTooLarge {
        /// Path inside the tree.
        path: String,
        /// Its size, from the object's header.
        size: u64,
        /// The bound.
        limit: u64,
    },
    /// The files up to and including this one exceed [`MAX_TREE_BYTES`].
    #[error(
        "tree entry `{path}` ({size} bytes) brings the tree to {total} bytes; a tree may have at most {limit} bytes"
    )]
    TreeTooLarge {
        /// Path inside the tree.
        path: String,
        /// Its size, from the object's header.
        size: u64,
        /// The tree's bytes up to and including it.
        total: u64,
        /// The bound.
        limit: u64,
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

/// The time every build is given, in seconds since 1970: C and C++ builds' `SOURCE_DATE_EPOCH`
/// (so `__DATE__` and `__TIME__`) and every exported file's time (`__TIMESTAMP__`, `make`'s
/// view). 1980-01-01 00:00:00 UTC, the earliest time every archive format can store. It is a
/// constant, not the commit's time, so that a binary is a function of its sources: a merge that
/// lands a verified change, a commit that only adds a register entry and a reworded commit all
/// rebuild the binary the register holds, even for an engine that prints `__DATE__`.
pub const SOURCE_EPOCH: i64 = 315_532_800;

/// The id of the sources a build of root tree `tree` is given: the sha256 of its root entries
/// (mode, name, object id) less the record directories. Two commits that differ only in their
/// register and evidence have the same id, and every byte an export writes is fixed by it.
pub fn sources_id(repo: &Repository, tree: Oid) -> Result<String, SourceError> {
    let root = repo.find_tree(tree).map_err(|source| SourceError::Git {
        path: String::new(),
        source,
    })?;
    let mut digest = Sha256::new();
    for entry in root.iter().filter(|entry| !is_record_dir(entry)) {
        digest.update(format!("{:o} ", entry.filemode()));
        digest.update(entry.name_bytes());
        digest.update([0]);
        digest.update(entry.id().as_bytes());
    }
    Ok(hex(&digest.finalize()))
}

/// Whether a root tree entry is one of the register's record directories.
fn is_record_dir(entry: &git2::TreeEntry<'_>) -> bool {
    entry.kind() == Some(ObjectType::Tree)
        && entry.name().is_some_and(|name| RECORD_DIRS.contains(&name))
}

/// Writes the tree `tree` less its record directories into the empty or missing directory
/// `dest`, file by file, each file modified at [`SOURCE_EPOCH`]: a build that reads its sources'
/// times (`__TIMESTAMP__`) reads the same time in every build of them, not the moment of the
/// export, which would make a later rebuild another binary.
pub fn export_tree(repo: &Repository, tree: Oid, dest: &Path) -> Result<(), SourceError> {
    let modified = std::time::UNIX_EPOCH
        + std::time::Duration::from_secs(u64::try_from(SOURCE_EPOCH).unwrap_or_default());
    let root = repo.find_tree(tree).map_err(|source| SourceError::Git {
        path: String::new(),
        source,
    })?;
    let odb = repo.odb().map_err(|source| SourceError::Git {
        path: String::new(),
        source,
    })?;
    create_dir(dest)?;
    let mut total = 0;
    export_dir(repo, &odb, &root, "", dest, modified, &mut total)
}

/// Exports `tree` into `dest`, adding the bytes written to `total`.
fn export_dir(
    repo: &Repository,
    odb: &Odb<'_>,
    tree: &Tree<'_>,
    prefix: &str,
    dest: &Path,
    modified: SystemTime,
    total: &mut u64,
) -> Result<(), SourceError> {
    for entry in tree.iter() {
        if prefix.is_empty() && is_record_dir(&entry) {
            continue;
        }
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
                export_dir(
                    repo,
                    odb,
                    &subtree,
                    &format!("{path}/"),
                    &sub_dest,
                    modified,
                    total,
                )?;
            }
            Some(ObjectType::Commit) => return Err(SourceError::Submodule { path }),
            Some(ObjectType::Blob) if mode == 0o120_000 => {
                return Err(SourceError::Symlink { path });
            }
            Some(ObjectType::Blob) => {
                if is_cargo_config(prefix, name) {
                    return Err(SourceError::CargoConfig { path });
                }
                let executable = mode & 0o111 != 0;
                let target = dest.join(name);
                let file = ExportedFile {
                    executable,
                    modified,
                };
                export_blob(odb, entry.id(), path, &target, file, total)?;
            }
            _ => return Err(SourceError::BadName { path }),
        }
    }
    Ok(())
}

/// Writes blob `id` (tree entry `path`) to `dest` after checking its size, from its header,
/// against [`MAX_FILE_BYTES`] and, with `total`, against [`MAX_TREE_BYTES`].
fn export_blob(
    odb: &Odb<'_>,
    id: Oid,
    path: String,
    dest: &Path,
    file: ExportedFile,
    total: &mut u64,
) -> Result<(), SourceError> {
    let size = checked_size(odb, id, &path)?;
    *total = total.saturating_add(size);
    if *total > MAX_TREE_BYTES {
        return Err(SourceError::TreeTooLarge {
            path,
            size,
            total: *total,
            limit: MAX_TREE_BYTES,
        });
    }
    match odb.reader(id) {
        // `take`: the stream holds to the size checked, whatever the object inflates to.
        Ok((reader, _, _)) => write_file(dest, &mut reader.take(size), file),
        // Packed objects cannot be streamed; reading one whole is bounded by the check above.
        Err(_) => {
            let object = odb
                .read(id)
                .map_err(|source| SourceError::Git { path, source })?;
            write_file(dest, &mut object.data(), file)
        }
    }
}

/// The bytes of blob `id` (tree entry `path`), refused by the size in its header, before it is
/// inflated, when it exceeds [`MAX_FILE_BYTES`].
pub fn read_blob(odb: &Odb<'_>, id: Oid, path: &str) -> Result<Vec<u8>, SourceError> {
    checked_size(odb, id, path)?;
    let object = odb.read(id).map_err(|source| SourceError::Git {
        path: path.to_owned(),
        source,
    })?;
    Ok(object.data().to_vec())
}

/// The size of blob `id` from its header, if within [`MAX_FILE_BYTES`].
fn checked_size(odb: &Odb<'_>, id: Oid, path: &str) -> Result<u64, SourceError> {
    let (size, _) = odb.read_header(id).map_err(|source| SourceError::Git {
        path: path.to_owned(),
        source,
    })?;
    let size = u64::try_from(size).unwrap_or(u64::MAX);
    if size > MAX_FILE_BYTES {
        return Err(SourceError::FileTooLarge {
            path: path.to_owned(),
            size,
            limit: MAX_FILE_BYTES,
        });
    }
    Ok(size)
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

/// What an exported file carries besides its bytes.
#[derive(Clone, Copy)]
struct ExportedFile {
    /// Whether the tree entry is executable.
    executable: bool,
    /// Its modification time: the commit's.
    modified: SystemTime,
}

/// Copies `content` into the new file `path` with the mode of a tree entry and its time.
fn write_file(
    path: &Path,
    content: &mut impl Read,
    exported: ExportedFile,
) -> Result<(), SourceError> {
    let mode = if exported.executable { 0o755 } else { 0o644 };
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
    io::copy(content, &mut file).map_err(wrap)?;
    file.set_modified(exported.modified).map_err(wrap)?;
    // The umask may have narrowed the mode; the sandboxed builder needs to read every file.
    file.set_permissions(fs::Permissions::from_mode(mode))
        .map_err(wrap)
}

/// Writes `bytes` as a blob and adds it to `index` at `path` with `mode` (e.g. `0o100_644`); the
/// entry's file-system fields are zero, so the same content gives the same entry anywhere.
pub fn add_to_index(
    repo: &Repository,
    index: &mut git2::Index,
    path: &str,
    bytes: &[u8],
    mode: u32,
) -> Result<(), git2::Error> {
    let entry = git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        id: repo.blob(bytes)?,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    };
    index.add(&entry)
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
                add_to_index(&repo, &mut index, path, content, *mode as u32).unwrap();
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
        for file in ["a.txt", "bin/run.sh"] {
            let modified = fs::metadata(out.join(file)).unwrap().modified().unwrap();
            assert_eq!(
                modified,
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(315_532_800),
                "{file} carries the fixed time, not the commit's or the export's"
            );
        }
        assert!(
            !dir.path().join("a.txt").exists(),
            "the work tree was not checked out"
        );
    }

    #[test]
    fn a_build_is_given_the_tree_without_the_registers_records() {
        let file = |path, content: &'static str| (path, content.as_bytes(), 0o100_644);
        let engine = file("engine/src/main.rs", "fn main() {}");
        let own = file("engine/register/table.rs", "// the engine's own");
        let genesis = file("register/T-0001.yaml", "id: T-0001");
        let evidence = file("evidence/T-0001/report.md", "# T-0001");
        let entry = file("register/T-0002.yaml", "id: T-0002");
        let (dir, repo, _) = repo_with(&[engine, genesis, evidence, own]);
        let (_other_dir, other, _) = repo_with(&[engine, genesis, entry, own]);
        let (_changed_dir, changed, _) =
            repo_with(&[file("engine/src/main.rs", "fn main() { }"), own]);
        let sources =
            |repo: &Repository| sources_id(repo, resolve(repo, "HEAD").unwrap().tree).unwrap();
        assert_eq!(
            sources(&repo),
            sources(&other),
            "records differ, sources do not"
        );
        assert_ne!(sources(&repo), sources(&changed));
        let out = dir.path().join("out");
        export_tree(&repo, resolve(&repo, "HEAD").unwrap().tree, &out).unwrap();
        assert!(out.join("engine/src/main.rs").exists());
        assert!(
            out.join("engine/register/table.rs").exists(),
            "only the root's record directories are left out"
        );
        for record in RECORD_DIRS {
            assert!(!out.join(record).exists(), "{record} was exported");
        }
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
    fn a_blob_past_the_bounds_is_refused_by_its_size_naming_it() {
        // Zeros compress a thousandfold: the object is small, its content is not.
        let big = vec![0u8; usize::try_from(MAX_FILE_BYTES).unwrap() + 1];
        let (dir, repo, _) =
            repo_with(&[("a.txt", b"alpha", 0o100_644), ("net.bin", &big, 0o100_644)]);
        let tree = resolve(&repo, "HEAD").unwrap().tree;
        let error = export_tree(&repo, tree, &dir.path().join("out")).unwrap_err();
        assert!(
            matches!(error, SourceError::FileTooLarge { ref path, size, .. } if path == "net.bin" && size == MAX_FILE_BYTES + 1),
            "{error}"
        );
        assert!(!dir.path().join("out/net.bin").exists(), "nothing written");

        let half = vec![0u8; usize::try_from(MAX_FILE_BYTES).unwrap()];
        let files: Vec<(String, &[u8], i32)> = (0..5)
            .map(|i| (format!("part{i}.bin"), half.as_slice(), 0o100_644))
            .collect();
        let files: Vec<(&str, &[u8], i32)> =
            files.iter().map(|(p, c, m)| (p.as_str(), *c, *m)).collect();
        let (dir, repo, _) = repo_with(&files);
        let tree = resolve(&repo, "HEAD").unwrap().tree;
        let error = export_tree(&repo, tree, &dir.path().join("out")).unwrap_err();
        assert!(
            matches!(error, SourceError::TreeTooLarge { ref path, total, .. } if path == "part4.bin" && total == 5 * MAX_FILE_BYTES),
            "{error}"
        );
        assert!(error.to_string().contains("part4.bin"), "{error}");
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
