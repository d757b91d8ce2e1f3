//! Step 1: which two commits are judged, and what the judge reads from the predecessor's side.
//!
//! Everything here works on git objects (`git2`), never on the user's work tree: a dirty or
//! hostile checkout cannot change which rules, books or register entries
//! apply (docs/architecture.md).

use std::path::Path;

use git2::{DiffOptions, ObjectType, Oid, Repository, Tree};
use serde::Serialize;
use thiserror::Error;

use super::scope;
use crate::builder::source::{self, SourceError};
use crate::governance::contract::EngineContract;
use crate::governance::register::landing::PathChange;

/// One resolved commit: full ids, so that every later record names it unambiguously.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedCommit {
    /// Full 40-hex commit id.
    pub commit: String,
    /// Full 40-hex id of the commit's root tree.
    pub tree: String,
    /// The first line of the commit message, for reports.
    pub summary: String,
    /// The whole commit message (trailers are read from it).
    #[serde(skip)]
    pub message: String,
}

/// Candidate and predecessor, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitPair {
    /// The change being judged.
    pub candidate: ResolvedCommit,
    /// What it is judged against: its first parent, or `--base`.
    pub predecessor: ResolvedCommit,
}

/// A path the candidate changed that belongs to governance, how it changed, and why it is not
/// an engine change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GovernanceTouch {
    /// Repository-relative path.
    pub path: String,
    /// `added`, `modified`, `deleted`, `renamed`, … as git reports it.
    pub change: String,
    /// Which rule of [`scope`] it breaks.
    pub reason: String,
}

/// Why step 1 could not resolve or accept the candidate.
#[derive(Debug, Error)]
pub enum ResolveError {
    /// The repository or a revision could not be resolved.
    #[error("{what}: {source}")]
    Source {
        /// `--repo`, `candidate`, `--base`, or `tree` (a file read from a commit's tree).
        what: &'static str,
        /// The builder module's reason (ambiguous, missing, not a commit).
        source: SourceError,
    },
    /// No commit given and no commit in HEAD's first-parent history changed the scope.
    #[error("no commit given and no commit in HEAD's first-parent history changes {scope}")]
    NoEngineChange {
        /// The contract's scope.
        scope: String,
    },
    /// No commit given, and HEAD's constitution cannot say which paths are the engine.
    #[error("no commit given, and HEAD's constitution cannot say which paths are the engine: {0}")]
    HeadContract(String),
    /// The candidate is a root commit and no `--base` was given.
    #[error("candidate {0} has no parent; name the predecessor with --base")]
    NoParent(String),
    /// The candidate changes nothing in the scope: there is no engine change to judge.
    #[error(
        "candidate {candidate} is not an engine change: it changes nothing under {scope}{}; \
         the oracle judges engine changes only",
        list_changed(.changed)
    )]
    NotAnEngineChange {
        /// The candidate commit.
        candidate: String,
        /// The contract's scope.
        scope: String,
        /// What it changes instead (empty: nothing at all).
        changed: Vec<String>,
    },
    /// The candidate changes governance paths: it is not an engine change.
    #[error(
        "candidate {candidate} is not an engine change: {}; \
         a candidate may change {scope} only, and a Cargo engine std-only and without build hooks — everything else reaches the build or the judge \
         and is a governance change under the constitution's amendment article (human review)",
        list_touches(.touched)
    )]
    TouchesGovernance {
        /// The candidate commit.
        candidate: String,
        /// The contract's scope.
        scope: String,
        /// Every offending path.
        touched: Vec<GovernanceTouch>,
    },
    /// A file the judge needs is missing from the predecessor's tree.
    #[error("`{path}` is not a file in the predecessor's tree {tree}")]
    MissingFile {
        /// Repository-relative path.
        path: String,
        /// Tree id of the predecessor.
        tree: String,
    },
    /// Any other git failure, with what was being done.
    #[error("git: {doing}: {source}")]
    Git {
        /// What the oracle was doing.
        doing: String,
        /// What libgit2 said.
        source: git2::Error,
    },
}

fn list_touches(touched: &[GovernanceTouch]) -> String {
    touched
        .iter()
        .map(|t| format!("{} ({}): {}", t.path, t.change, t.reason))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Names the paths a non-engine commit changes (the first few; all of them can be many).
fn list_changed(changed: &[String]) -> String {
    const SHOWN: usize = 5;
    match changed.len() {
        0 => " (it changes no file at all)".to_owned(),
        n if n <= SHOWN => format!(" (it changes {})", changed.join(", ")),
        n => format!(
            " (it changes {} and {} more)",
            changed[..SHOWN].join(", "),
            n - SHOWN
        ),
    }
}

fn git<T>(doing: impl Into<String>, result: Result<T, git2::Error>) -> Result<T, ResolveError> {
    result.map_err(|source| ResolveError::Git {
        doing: doing.into(),
        source,
    })
}

/// Opens the repository at `path` (bare or not; the work tree is never read).
pub fn open(path: &Path) -> Result<Repository, ResolveError> {
    source::open_repository(path).map_err(|source| ResolveError::Source {
        what: "--repo",
        source,
    })
}

/// Resolves candidate and predecessor to full ids.
///
/// No candidate: the commit on HEAD's first-parent line that brought in HEAD's scope (the
/// contract of HEAD's constitution, which `head_contract` reads when it is needed). No base: the
/// candidate's first parent.
pub fn resolve_pair(
    repo: &Repository,
    candidate: Option<&str>,
    base: Option<&str>,
    head_contract: impl FnOnce() -> Result<EngineContract, String>,
) -> Result<CommitPair, ResolveError> {
    let candidate_id = match candidate {
        Some(rev) => peel_commit(repo, "candidate", rev)?,
        None => {
            let contract = head_contract().map_err(ResolveError::HeadContract)?;
            current_engine_change(repo, &contract)?
        }
    };
    let candidate_commit = git("read candidate", repo.find_commit(candidate_id))?;
    let predecessor_id = match base {
        Some(rev) => peel_commit(repo, "--base", rev)?,
        None => candidate_commit
            .parent_id(0)
            .map_err(|_| ResolveError::NoParent(candidate_id.to_string()))?,
    };
    Ok(CommitPair {
        candidate: describe(repo, candidate_id)?,
        predecessor: describe(repo, predecessor_id)?,
    })
}

fn peel_commit(repo: &Repository, what: &'static str, rev: &str) -> Result<Oid, ResolveError> {
    source::resolve(repo, rev)
        .map(|resolved| resolved.commit)
        .map_err(|source| ResolveError::Source { what, source })
}

/// One revision resolved to a full commit with its tree and message.
pub fn commit(
    repo: &Repository,
    what: &'static str,
    rev: &str,
) -> Result<ResolvedCommit, ResolveError> {
    describe(repo, peel_commit(repo, what, rev)?)
}

fn describe(repo: &Repository, id: Oid) -> Result<ResolvedCommit, ResolveError> {
    let commit = git(format!("read commit {id}"), repo.find_commit(id))?;
    let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
    Ok(ResolvedCommit {
        commit: id.to_string(),
        tree: commit.tree_id().to_string(),
        summary: message.lines().next().unwrap_or_default().to_owned(),
        message,
    })
}

/// The commit on HEAD's first-parent line that brought in the scope HEAD has: the oldest one
/// whose scope differs from its first parent's and equals HEAD's. On a main branch this is the
/// merge (or the commit) that landed the current engine; a withdrawal, which restores an
/// earlier engine's tree without trailers of its own, is not taken for the change it undoes.
pub fn current_engine_change(
    repo: &Repository,
    contract: &EngineContract,
) -> Result<Oid, ResolveError> {
    let head = git("read HEAD", repo.head().and_then(|h| h.peel_to_commit()))?;
    let current = scope_ids(&git("read tree", head.tree())?, contract);
    let mut walk = git("walk history", repo.revwalk())?;
    git("walk history from HEAD", walk.push_head())?;
    git("walk first parents", walk.simplify_first_parent())?;
    let mut found = None;
    for id in walk {
        let id = git("walk history", id)?;
        if changes_engine(repo, id, contract)? {
            let commit = git(format!("read commit {id}"), repo.find_commit(id))?;
            if scope_ids(&git("read tree", commit.tree())?, contract) == current {
                found = Some(id);
            }
        }
    }
    found.ok_or_else(|| ResolveError::NoEngineChange {
        scope: contract.scope_text(),
    })
}

/// Whether commit `id`'s scope differs from its first parent's.
fn changes_engine(
    repo: &Repository,
    id: Oid,
    contract: &EngineContract,
) -> Result<bool, ResolveError> {
    let commit = git(format!("read commit {id}"), repo.find_commit(id))?;
    let engine_here = scope_ids(&git("read tree", commit.tree())?, contract);
    let engine_before = match commit.parent(0) {
        Ok(parent) => scope_ids(&git("read tree", parent.tree())?, contract),
        Err(_) => vec![None; contract.scope.len()],
    };
    Ok(engine_here.iter().any(Option::is_some) && engine_here != engine_before)
}

/// The commit whose message declares the candidate's trailers: the candidate itself, unless it
/// is a merge without a bench trailer — then the newest non-merge commit that the merge brings
/// in and that changed the scope (where the change was authored and benched).
pub fn declaring_commit(
    repo: &Repository,
    candidate: &ResolvedCommit,
    contract: &EngineContract,
) -> Result<ResolvedCommit, ResolveError> {
    let id = git("parse commit id", Oid::from_str(&candidate.commit))?;
    let commit = git(format!("read commit {id}"), repo.find_commit(id))?;
    let declares =
        crate::builder::bench::declared_bench(&candidate.message, &contract.bench.trailer)
            .is_ok_and(|bench| bench.is_some());
    if commit.parent_count() < 2 || declares {
        return Ok(candidate.clone());
    }
    let mut walk = git("walk the merged commits", repo.revwalk())?;
    git("walk the merged commits", walk.push(id))?;
    git(
        "walk the merged commits",
        walk.hide(commit.parent_id(0).expect("a merge has parents")),
    )?;
    git(
        "sort the merged commits",
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME),
    )?;
    for merged in walk {
        let merged = git("walk the merged commits", merged)?;
        let is_merge =
            git(format!("read commit {merged}"), repo.find_commit(merged))?.parent_count() > 1;
        if !is_merge && changes_engine(repo, merged, contract)? {
            return describe(repo, merged);
        }
    }
    Ok(candidate.clone())
}

/// The git id of each scope entry in `tree` (`None` where it is absent).
fn scope_ids(tree: &Tree<'_>, contract: &EngineContract) -> Vec<Option<Oid>> {
    contract
        .scope
        .iter()
        .map(|entry| {
            tree.get_path(Path::new(entry.trim_end_matches('/')))
                .ok()
                .map(|found| found.id())
        })
        .collect()
}

/// Every changed path of the candidate relative to the predecessor, and every change that is not
/// an engine change under `contract`: paths outside its scope, build hooks inside a Cargo
/// engine's scope, refused keys in the manifests it changes (`engine/Cargo.toml`) and packages from
/// outside the repository that the lock files it changes pin anew or no longer.
pub fn changes(
    repo: &Repository,
    pair: &CommitPair,
    contract: &EngineContract,
) -> Result<Changes, ResolveError> {
    let old = tree_of(repo, &pair.predecessor)?;
    let new = tree_of(repo, &pair.candidate)?;
    let mut options = DiffOptions::new();
    options.include_typechange(true);
    let diff = git(
        "diff predecessor and candidate",
        repo.diff_tree_to_tree(Some(&old), Some(&new), Some(&mut options)),
    )?;
    let mut touched = Vec::new();
    let mut changed = Vec::new();
    for delta in diff.deltas() {
        let change = format!("{:?}", delta.status()).to_lowercase();
        let paths: Vec<String> = [delta.old_file().path(), delta.new_file().path()]
            .iter()
            .flatten()
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .collect();
        changed.extend(paths.iter().cloned());
        let found = paths
            .into_iter()
            .find_map(|path| scope::path_violation(&path, contract).map(|reason| (path, reason)));
        if let Some((path, reason)) = found {
            touched.push(GovernanceTouch {
                path,
                change,
                reason,
            });
        }
    }
    // A manifest the candidate leaves as it was is the predecessor's, which the register
    // accepted: it changes nothing Cargo reads (a crate at a repository's root keeps its
    // `[profile]` and its dependencies). One it changes is read whole, as Cargo reads it. A
    // missing manifest has no keys to refuse; one that cannot be read (past the bound) is
    // refused, not skipped.
    let read_text = |commit: &ResolvedCommit, path: &str| -> Result<Option<String>, ResolveError> {
        match read_file(repo, commit, path) {
            Err(ResolveError::MissingFile { .. }) => Ok(None),
            read => Ok(Some(String::from_utf8_lossy(&read?).into_owned())),
        }
    };
    let content_touch = |path: &str, reason: String| GovernanceTouch {
        path: path.to_owned(),
        change: "content".to_owned(),
        reason,
    };
    for path in scope::manifests(contract)
        .into_iter()
        .filter(|path| changed.contains(path))
    {
        if let Some(text) = read_text(&pair.candidate, &path)? {
            touched.extend(
                scope::manifest_violations(&text)
                    .into_iter()
                    .map(|reason| content_touch(&path, reason)),
            );
        }
    }
    // A lock file the candidate changes may change the repository's own crates only: what it
    // pins from outside is a dependency's code, not the candidate's.
    for path in scope::lock_files(contract)
        .into_iter()
        .filter(|path| changed.contains(path))
    {
        let before = read_text(&pair.predecessor, &path)?.unwrap_or_default();
        let after = read_text(&pair.candidate, &path)?.unwrap_or_default();
        touched.extend(
            scope::lock_violations(&before, &after)
                .into_iter()
                .map(|reason| content_touch(&path, reason)),
        );
    }
    changed.dedup();
    Ok(Changes { changed, touched })
}

/// What the candidate changes relative to the predecessor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    /// Every changed path (both sides of a rename), in git's order.
    pub changed: Vec<String>,
    /// The changes that are not an engine change (empty: an engine change, if any path is one).
    pub touched: Vec<GovernanceTouch>,
}

/// Step 1's refusal: an error unless the candidate is an engine change — one that changes
/// something in the contract's scope and only what an engine change may.
pub fn refuse_governance_changes(
    repo: &Repository,
    pair: &CommitPair,
    contract: &EngineContract,
) -> Result<(), ResolveError> {
    let Changes { changed, touched } = changes(repo, pair, contract)?;
    if !changed.iter().any(|path| contract.in_scope(path)) {
        return Err(ResolveError::NotAnEngineChange {
            candidate: pair.candidate.commit.clone(),
            scope: contract.scope_text(),
            changed,
        });
    }
    if touched.is_empty() {
        Ok(())
    } else {
        Err(ResolveError::TouchesGovernance {
            candidate: pair.candidate.commit.clone(),
            scope: contract.scope_text(),
            touched,
        })
    }
}

/// Every path in which `new`'s tree differs from `old`'s, each marked added when `old` lacks it
/// (renames are a removal and an addition) and plain when `new` holds it as a file of mode
/// 100644.
pub fn changed_paths(
    repo: &Repository,
    old: &ResolvedCommit,
    new: &ResolvedCommit,
) -> Result<Vec<PathChange>, ResolveError> {
    let (old_tree, new_tree) = (tree_of(repo, old)?, tree_of(repo, new)?);
    let mut options = DiffOptions::new();
    options.include_typechange(true);
    let diff = git(
        format!("diff {} and {}", old.commit, new.commit),
        repo.diff_tree_to_tree(Some(&old_tree), Some(&new_tree), Some(&mut options)),
    )?;
    Ok(diff
        .deltas()
        .filter_map(|delta| {
            let file = delta
                .new_file()
                .path()
                .or_else(|| delta.old_file().path())?;
            Some(PathChange {
                path: file.to_string_lossy().into_owned(),
                added: delta.status() == git2::Delta::Added,
                plain: delta.new_file().mode() == git2::FileMode::Blob,
            })
        })
        .collect())
}

fn tree_of<'r>(repo: &'r Repository, commit: &ResolvedCommit) -> Result<Tree<'r>, ResolveError> {
    let id = git("parse tree id", Oid::from_str(&commit.tree))?;
    git(format!("read tree {id}"), repo.find_tree(id))
}

/// The bytes of one file in the commit's tree (the judge reads rules from the predecessor this way).
pub fn read_file(
    repo: &Repository,
    commit: &ResolvedCommit,
    path: &str,
) -> Result<Vec<u8>, ResolveError> {
    let missing = || ResolveError::MissingFile {
        path: path.to_owned(),
        tree: commit.tree.clone(),
    };
    let tree = tree_of(repo, commit)?;
    let entry = tree.get_path(Path::new(path)).map_err(|_| missing())?;
    if entry.kind() != Some(ObjectType::Blob) {
        return Err(missing());
    }
    read_blob(repo, entry.id(), path)
}

/// The bytes of blob `id` (tree entry `path`), refused by its size before it is inflated when it
/// is larger than a file of an export may be.
fn read_blob(repo: &Repository, id: Oid, path: &str) -> Result<Vec<u8>, ResolveError> {
    let odb = git(format!("read {path}"), repo.odb())?;
    source::read_blob(&odb, id, path).map_err(|source| ResolveError::Source {
        what: "tree",
        source,
    })
}

/// Every file directly under `dir` in the commit's tree, by name (empty when `dir` is absent).
pub fn read_dir(
    repo: &Repository,
    commit: &ResolvedCommit,
    dir: &str,
) -> Result<Vec<(String, Vec<u8>)>, ResolveError> {
    let tree = tree_of(repo, commit)?;
    let Ok(entry) = tree.get_path(Path::new(dir)) else {
        return Ok(Vec::new());
    };
    let sub = git(format!("read {dir}"), repo.find_tree(entry.id()))?;
    let mut files = Vec::new();
    for item in sub.iter() {
        if item.kind() == Some(ObjectType::Blob) {
            let name = String::from_utf8_lossy(item.name_bytes()).into_owned();
            let bytes = read_blob(repo, item.id(), &format!("{dir}/{name}"))?;
            files.push((name, bytes));
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use git2::Signature;

    use super::*;

    fn no_head_contract() -> Result<EngineContract, String> {
        Ok(EngineContract::coherent())
    }

    struct Scratch {
        _dir: tempfile::TempDir,
        repo: Repository,
    }

    impl Scratch {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let repo = Repository::init(dir.path()).unwrap();
            Self { _dir: dir, repo }
        }

        /// Commits `files` (path, content; `None` deletes) on `parents`, moving no branch.
        fn commit(&self, parents: &[Oid], files: &[(&str, Option<&str>)], message: &str) -> Oid {
            let mut builder = git2::build::TreeUpdateBuilder::new();
            for (path, content) in files {
                match content {
                    Some(text) => {
                        let blob = self.repo.blob(text.as_bytes()).unwrap();
                        builder.upsert(*path, blob, git2::FileMode::Blob);
                    }
                    None => {
                        builder.remove(*path);
                    }
                }
            }
            let base = match parents.first() {
                Some(parent) => self.repo.find_commit(*parent).unwrap().tree().unwrap(),
                None => {
                    let empty = self.repo.treebuilder(None).unwrap().write().unwrap();
                    self.repo.find_tree(empty).unwrap()
                }
            };
            let tree = builder.create_updated(&self.repo, &base).unwrap();
            let tree = self.repo.find_tree(tree).unwrap();
            let parents: Vec<git2::Commit<'_>> = parents
                .iter()
                .map(|p| self.repo.find_commit(*p).unwrap())
                .collect();
            let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
            let sig = Signature::new("t", "t@example.invalid", &git2::Time::new(1_700_000_000, 0))
                .unwrap();
            self.repo
                .commit(None, &sig, &sig, message, &tree, &parents)
                .unwrap()
        }

        fn head(&self, id: Oid) {
            self.repo.set_head_detached(id).unwrap();
        }

        fn pair(&self, candidate: Oid) -> CommitPair {
            resolve_pair(
                &self.repo,
                Some(&candidate.to_string()),
                None,
                no_head_contract,
            )
            .unwrap()
        }
    }

    #[test]
    fn current_engine_change_follows_first_parents_and_merges_declare_through_their_branch() {
        let s = Scratch::new();
        let root = s.commit(
            &[],
            &[("engine/src/lib.rs", Some("v1")), ("README.md", Some("a"))],
            "root",
        );
        let change = s.commit(
            &[root],
            &[("engine/src/lib.rs", Some("v2"))],
            "engine change\n\nBench: 1\n",
        );
        let docs = s.commit(&[change], &[("README.md", Some("b"))], "docs");
        let side = s.commit(&[root], &[("notes.txt", Some("n"))], "side");
        let merge = s.commit(
            &[side, docs],
            &[("engine/src/lib.rs", Some("v2")), ("README.md", Some("b"))],
            "merge",
        );
        s.head(merge);
        assert_eq!(
            current_engine_change(&s.repo, &EngineContract::coherent()).unwrap(),
            merge
        );
        let pair = resolve_pair(&s.repo, None, None, no_head_contract).unwrap();
        assert_eq!(pair.candidate.commit, merge.to_string());
        assert_eq!(pair.predecessor.commit, side.to_string());
        let declared =
            declaring_commit(&s.repo, &pair.candidate, &EngineContract::coherent()).unwrap();
        assert_eq!(
            declared.commit,
            change.to_string(),
            "the merge's trailers come from its branch"
        );
        let plain = s.pair(change);
        assert_eq!(
            declaring_commit(&s.repo, &plain.candidate, &EngineContract::coherent()).unwrap(),
            plain.candidate
        );
        let based = resolve_pair(&s.repo, None, Some(&root.to_string()), no_head_contract).unwrap();
        assert_eq!(based.predecessor.commit, root.to_string());
        s.head(side);
        assert_eq!(
            current_engine_change(&s.repo, &EngineContract::coherent()).unwrap(),
            root
        );

        // A change withdrawn (engine/ restored, no trailers) leaves the change it undid out and
        // the one before it current.
        let tried = s.commit(
            &[docs],
            &[("engine/src/lib.rs", Some("v3"))],
            "engine change tried\n\nBench: 2\n",
        );
        let withdrawal = s.commit(&[tried], &[("engine/src/lib.rs", Some("v2"))], "withdraw");
        let later_docs = s.commit(&[withdrawal], &[("README.md", Some("c"))], "docs");
        s.head(later_docs);
        assert_eq!(
            current_engine_change(&s.repo, &EngineContract::coherent()).unwrap(),
            change
        );
        s.head(tried);
        assert_eq!(
            current_engine_change(&s.repo, &EngineContract::coherent()).unwrap(),
            tried
        );
    }

    #[test]
    fn anything_but_an_engine_change_is_refused() {
        let s = Scratch::new();
        let root = s.commit(
            &[],
            &[
                ("engine/src/lib.rs", Some("v1")),
                (
                    "engine/Cargo.toml",
                    Some("[package]\nname = \"coherent\"\n"),
                ),
                ("register/T-0001.yaml", Some("genesis")),
                ("constitution/constitution.yaml", Some("rules")),
                ("Cargo.toml", Some("[workspace]\n")),
            ],
            "root",
        );
        let engine_only = s.commit(&[root], &[("engine/src/lib.rs", Some("v2"))], "e");
        assert!(
            changes(&s.repo, &s.pair(engine_only), &EngineContract::coherent())
                .unwrap()
                .touched
                .is_empty()
        );
        refuse_governance_changes(&s.repo, &s.pair(engine_only), &EngineContract::coherent())
            .unwrap();
        for (path, content, change) in [
            ("register/T-0002.yaml", Some("next"), "added"),
            ("register/T-0001.yaml", Some("edited"), "modified"),
            ("register/T-0001.yaml", None, "deleted"),
            ("constitution/constitution.yaml", Some("looser"), "modified"),
            ("books/book-a.epd", Some("x"), "added"),
            ("oracle/src/main.rs", Some("x"), "added"),
            (".github/workflows/verify.yml", Some("x"), "added"),
            (
                "rust-toolchain.toml",
                Some("[toolchain]\npath = \"/x\"\n"),
                "added",
            ),
            ("Cargo.toml", Some("[patch.crates-io]\n"), "modified"),
            ("engine/build.rs", Some("fn main() {}"), "added"),
            (
                "engine/Cargo.toml",
                Some("[package]\nname = \"coherent\"\n[dependencies]\nlibc = \"0.2\"\n"),
                "content",
            ),
        ] {
            let candidate = s.commit(
                &[root],
                &[("engine/src/lib.rs", Some("v2")), (path, content)],
                "e",
            );
            let error =
                refuse_governance_changes(&s.repo, &s.pair(candidate), &EngineContract::coherent())
                    .unwrap_err();
            let text = error.to_string();
            assert!(text.contains(&format!("{path} ({change})")), "{text}");
            assert!(text.contains("is not an engine change"), "{text}");
        }
    }

    #[test]
    fn a_commit_that_changes_nothing_under_engine_is_not_an_engine_change() {
        let s = Scratch::new();
        let root = s.commit(
            &[],
            &[("engine/src/lib.rs", Some("v1")), ("README.md", Some("a"))],
            "root",
        );
        let readme = s.commit(&[root], &[("README.md", Some("b"))], "docs");
        let error =
            refuse_governance_changes(&s.repo, &s.pair(readme), &EngineContract::coherent())
                .unwrap_err();
        assert!(
            matches!(&error, ResolveError::NotAnEngineChange { changed, .. } if changed == &["README.md"]),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .ends_with("is not an engine change: it changes nothing under engine/ (it changes README.md); the oracle judges engine changes only"),
            "{error}"
        );
        let empty = s.commit(&[root], &[], "nothing");
        let error = refuse_governance_changes(&s.repo, &s.pair(empty), &EngineContract::coherent())
            .unwrap_err();
        assert!(
            error.to_string().contains("(it changes no file at all)"),
            "{error}"
        );
    }

    #[test]
    fn files_are_read_from_the_tree_not_the_work_tree() {
        let s = Scratch::new();
        let root = s.commit(
            &[],
            &[
                ("constitution/constitution.yaml", Some("in git")),
                ("register/T-0001.yaml", Some("g")),
            ],
            "root",
        );
        let pair = s.pair(s.commit(&[root], &[("engine/x", Some("1"))], "c"));
        assert_eq!(
            read_file(&s.repo, &pair.predecessor, "constitution/constitution.yaml").unwrap(),
            b"in git"
        );
        assert!(matches!(
            read_file(&s.repo, &pair.predecessor, "constitution"),
            Err(ResolveError::MissingFile { .. })
        ));
        let register = read_dir(&s.repo, &pair.predecessor, "register").unwrap();
        assert_eq!(register, vec![("T-0001.yaml".to_owned(), b"g".to_vec())]);
        assert!(
            read_dir(&s.repo, &pair.predecessor, "books")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_manifest_past_the_file_bound_is_refused_before_it_is_inflated() {
        let s = Scratch::new();
        let root = s.commit(&[], &[("engine/Cargo.toml", Some("[package]\n"))], "root");
        let huge = " ".repeat(usize::try_from(source::MAX_FILE_BYTES).unwrap() + 1);
        let pair = s.pair(s.commit(&[root], &[("engine/Cargo.toml", Some(&huge))], "c"));
        let error = changes(&s.repo, &pair, &EngineContract::coherent()).unwrap_err();
        assert!(
            matches!(error, ResolveError::Source { source: SourceError::FileTooLarge { ref path, .. }, .. } if path == "engine/Cargo.toml"),
            "{error}"
        );
    }
}
