//! What a push to the main branch may change (docs/ci-trust.md, "How an entry lands"), judged from what
//! it changed; the caller reads git, the register and the builds. The same rule serves every
//! repository the oracle gates: the engine is the constitution's scope, the records are
//! [`REGISTER_DIR`] and [`EVIDENCE_DIR`].
//!
//! - The records only grow: under `register/` a push adds `T-NNNN.yaml` files and changes
//!   nothing else; under `evidence/` it adds files for the entries it adds and changes none.
//!   Every added record is a plain file.
//! - A push that leaves the engine's scope as it was is not an engine landing (a governance or
//!   documentation change, or an entry with the documents about it): its paths pass, the
//!   constitution's amendment article is what reviews a governance change, and the branch's
//!   engine must still be the register's current engine ([`judge_current_engine`]), so an
//!   engine that reached the branch unjudged shows at the next push.
//! - A push that changes the scope either lands a verdict — it adds entries, the newest of them
//!   lands its candidate, that candidate is in the branch's history, and the branch's tree is the
//!   candidate's plus the added entries and their evidence, nothing else — or withdraws a change
//!   that should not have landed: it adds no entry, changes nothing outside the scope, and the
//!   branch, held to the rules of an engine change against the register's current engine,
//!   rebuilds to that engine's binary (checks the caller runs: [`judge_current_engine`]).

use std::collections::BTreeSet;

use serde::Serialize;

use super::store::{EVIDENCE_DIR, REGISTER_DIR};
use crate::governance::entry::{EntryId, Verdict};

/// One path a push changed, relative to the repository's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    /// The path.
    pub path: String,
    /// Whether the push added it (not modified, deleted or renamed away).
    pub added: bool,
    /// Whether it is, after the push, a plain file (mode 100644): a record is never a link, an
    /// executable or a submodule, whose content could change without its path changing.
    pub plain: bool,
}

/// What a lawful push is, judged from its paths alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PushKind {
    /// The engine's scope is as it was; `entries` are the register entries the push adds.
    EngineUnchanged {
        /// Added entry ids, oldest first.
        entries: Vec<EntryId>,
    },
    /// The engine changes with its entries; the newest of them must land it
    /// ([`judge_engine_landing`]).
    EngineLanding {
        /// Added entry ids, oldest first.
        entries: Vec<EntryId>,
    },
    /// The engine changes without an entry: only a withdrawal to the register's current engine
    /// may do that ([`judge_current_engine`]).
    Withdrawal,
}

/// Why a push may not land, naming what it changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LandingRefusal {
    /// A register or evidence file was changed or deleted, or a register file added under
    /// another name than an entry's.
    #[error("the records only grow, by added {REGISTER_DIR}/T-NNNN.yaml files and files added under {EVIDENCE_DIR}/: {}", .paths.join(", "))]
    RecordsRewritten {
        /// Each path with what was wrong with it.
        paths: Vec<String>,
    },
    /// An engine landing or a withdrawal also changed paths outside the scope.
    #[error("{what} changes the engine's scope ({scope}){also} and nothing else; it also changes: {}", .paths.join(", "))]
    OutsideTheScope {
        /// The kind of push.
        what: &'static str,
        /// The scope as people read it.
        scope: String,
        /// What else it may change, if anything.
        also: &'static str,
        /// The paths outside.
        paths: Vec<String>,
    },
    /// The newest added entry does not land its candidate.
    #[error(
        "the engine changed, but the newest added entry {id} is {verdict}: only Gewinn, Korrektur and Gleich land"
    )]
    NotLanded {
        /// The entry's id.
        id: String,
        /// Its verdict, as people read it.
        verdict: &'static str,
    },
    /// The newest added entry's candidate is not in the branch's history.
    #[error(
        "{id}'s candidate {candidate} is not in the branch's history (land with a merge commit: a squash or a rebase makes another commit)"
    )]
    CandidateNotInHistory {
        /// The entry's id.
        id: String,
        /// The candidate commit.
        candidate: String,
    },
    /// The landed tree differs from the verified candidate's.
    #[error("the landed tree is not {id}'s verified candidate {candidate}; it differs in: {}", .paths.join(", "))]
    NotTheCandidate {
        /// The entry's id.
        id: String,
        /// The candidate commit.
        candidate: String,
        /// The paths that differ, beyond the added records.
        paths: Vec<String>,
    },
    /// The branch's engine rebuilds to another binary than the register's current engine.
    #[error(
        "the branch's engine rebuilds to sha256 {rebuilt}, not to the register's current engine {current} ({registered})"
    )]
    NotTheCurrentEngine {
        /// The register's current engine's entry id.
        current: String,
        /// Its sha256.
        registered: String,
        /// What the branch rebuilds to.
        rebuilt: String,
    },
}

/// The entry id of a path that is a register entry (`register/T-0042.yaml` -> `T-0042`).
fn entry_id(path: &str) -> Option<EntryId> {
    EntryId::from_file_name(path.strip_prefix(REGISTER_DIR)?.strip_prefix('/')?)
}

/// The entry id whose evidence directory holds `path` (`evidence/T-0042/…` -> `T-0042`).
fn evidence_of(path: &str) -> Option<EntryId> {
    let (id, file) = path
        .strip_prefix(EVIDENCE_DIR)?
        .strip_prefix('/')?
        .split_once('/')?;
    if file.is_empty() {
        return None;
    }
    EntryId::try_from(id.to_owned()).ok()
}

/// Whether `change` is one of the push's added records: an added plain file that is an entry,
/// or one under the evidence directory of an entry in `entries` (`evidence/T-0042/…`).
fn is_added_record(change: &PathChange, entries: &BTreeSet<EntryId>) -> bool {
    change.added
        && change.plain
        && (entry_id(&change.path).is_some()
            || evidence_of(&change.path).is_some_and(|id| entries.contains(&id)))
}

/// Whether `path` lies under one of the record directories.
fn is_record_path(path: &str) -> bool {
    [REGISTER_DIR, EVIDENCE_DIR].iter().any(|dir| {
        path.strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// What is wrong with `change` as a change to the records, if it is one and may not be made
/// (`entries`: the entries the push adds): anything but an added plain file that is an entry or
/// the evidence of an added entry.
fn record_rewrite(change: &PathChange, entries: &BTreeSet<EntryId>) -> Option<String> {
    let path = &change.path;
    if !is_record_path(path) || is_added_record(change, entries) {
        return None;
    }
    Some(if !change.added {
        format!("{path} (changed or removed)")
    } else if !change.plain {
        format!("{path} (not a plain file)")
    } else if path.starts_with(REGISTER_DIR) {
        format!("{path} (added, not an entry)")
    } else {
        format!("{path} (evidence of no entry this push adds)")
    })
}

/// Judges a push by its changed paths: the records only grow, and an engine change adds its
/// entries and records and nothing else, or is a withdrawal that changes nothing else.
pub fn judge_paths(
    changes: &[PathChange],
    in_scope: impl Fn(&str) -> bool,
    scope: &str,
) -> Result<PushKind, LandingRefusal> {
    let mut entries: Vec<EntryId> = changes
        .iter()
        .filter(|change| change.added && change.plain)
        .filter_map(|change| entry_id(&change.path))
        .collect();
    entries.sort_unstable();
    let ids: BTreeSet<EntryId> = entries.iter().copied().collect();
    let rewritten: Vec<String> = changes
        .iter()
        .filter_map(|change| record_rewrite(change, &ids))
        .collect();
    if !rewritten.is_empty() {
        return Err(LandingRefusal::RecordsRewritten { paths: rewritten });
    }
    if !changes.iter().any(|change| in_scope(&change.path)) {
        return Ok(PushKind::EngineUnchanged { entries });
    }
    let outside: Vec<String> = changes
        .iter()
        .filter(|change| !in_scope(&change.path) && !is_record_path(&change.path))
        .map(|change| change.path.clone())
        .collect();
    let (what, also) = if entries.is_empty() {
        ("a withdrawal", "")
    } else {
        (
            "an engine landing",
            ", adds its register entries and their evidence,",
        )
    };
    if !outside.is_empty() {
        return Err(LandingRefusal::OutsideTheScope {
            what,
            scope: scope.to_owned(),
            also,
            paths: outside,
        });
    }
    Ok(if entries.is_empty() {
        PushKind::Withdrawal
    } else {
        PushKind::EngineLanding { entries }
    })
}

/// The newest entry an engine landing adds, as the register holds it.
#[derive(Debug, Clone)]
pub struct NewestEntry<'a> {
    /// Its id.
    pub id: EntryId,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its candidate commit.
    pub candidate: &'a str,
}

/// Judges an engine landing against its newest added entry: the entry lands its candidate, the
/// candidate is in the branch's history, and `differences` (the paths in which the branch's
/// tree differs from the candidate's) are the push's added records only.
pub fn judge_engine_landing(
    newest: &NewestEntry<'_>,
    candidate_in_history: bool,
    differences: &[PathChange],
    entries: &[EntryId],
) -> Result<(), LandingRefusal> {
    // Genesis lands too, but only as the register's first entry, never with an engine change.
    if !matches!(
        newest.verdict,
        Verdict::Gewinn | Verdict::Korrektur | Verdict::Gleich
    ) {
        return Err(LandingRefusal::NotLanded {
            id: newest.id.to_string(),
            verdict: newest.verdict.title(),
        });
    }
    if !candidate_in_history {
        return Err(LandingRefusal::CandidateNotInHistory {
            id: newest.id.to_string(),
            candidate: newest.candidate.to_owned(),
        });
    }
    let ids: BTreeSet<EntryId> = entries.iter().copied().collect();
    let extra: Vec<String> = differences
        .iter()
        .filter(|change| !is_added_record(change, &ids))
        .map(|change| change.path.clone())
        .collect();
    if extra.is_empty() {
        Ok(())
    } else {
        Err(LandingRefusal::NotTheCandidate {
            id: newest.id.to_string(),
            candidate: newest.candidate.to_owned(),
            paths: extra,
        })
    }
}

/// Judges the branch's engine by its rebuild: it is the register's current engine's binary
/// (`current` is that entry's id and sha256). A withdrawal, and every push that lands no
/// verdict, is held to it.
pub fn judge_current_engine(current: (&str, &str), rebuilt: &str) -> Result<(), LandingRefusal> {
    let (id, registered) = current;
    if rebuilt == registered {
        Ok(())
    } else {
        Err(LandingRefusal::NotTheCurrentEngine {
            current: id.to_owned(),
            registered: registered.to_owned(),
            rebuilt: rebuilt.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn added(path: &str) -> PathChange {
        PathChange {
            path: path.to_owned(),
            added: true,
            plain: true,
        }
    }

    fn changed(path: &str) -> PathChange {
        PathChange {
            path: path.to_owned(),
            added: false,
            plain: true,
        }
    }

    fn linked(path: &str) -> PathChange {
        PathChange {
            plain: false,
            ..added(path)
        }
    }

    fn engine(path: &str) -> bool {
        path.starts_with("engine/")
    }

    fn judge(changes: &[PathChange]) -> Result<PushKind, LandingRefusal> {
        judge_paths(changes, engine, "engine/")
    }

    #[test]
    fn the_records_only_grow() {
        for (change, named) in [
            (
                changed("register/T-0001.yaml"),
                "register/T-0001.yaml (changed or removed)",
            ),
            (
                added("register/notes.txt"),
                "register/notes.txt (added, not an entry)",
            ),
            (
                added("register/T-12.yaml"),
                "register/T-12.yaml (added, not an entry)",
            ),
            (
                changed("evidence/T-0001/report.md"),
                "evidence/T-0001/report.md (changed or removed)",
            ),
            (
                added("evidence/T-0001/extra.md"),
                "evidence/T-0001/extra.md (evidence of no entry this push adds)",
            ),
            (
                added("evidence/T-0050/games.pgn.gz"),
                "evidence/T-0050/games.pgn.gz (evidence of no entry this push adds)",
            ),
            (
                linked("register/T-0002.yaml"),
                "register/T-0002.yaml (not a plain file)",
            ),
            (
                added("evidence/T-0002"),
                "evidence/T-0002 (evidence of no entry this push adds)",
            ),
        ] {
            let refusal = judge(&[change]).unwrap_err();
            assert!(refusal.to_string().contains(named), "{refusal}");
        }
        assert_eq!(
            judge(&[added("register/T-0002.yaml"), changed("docs/results.md")]),
            Ok(PushKind::EngineUnchanged {
                entries: vec![EntryId::new(2)]
            })
        );
        assert_eq!(
            judge(&[changed("registers.md")]),
            Ok(PushKind::EngineUnchanged { entries: vec![] }),
            "a path that only begins like the register's is not in it"
        );
    }

    #[test]
    fn an_engine_landing_adds_its_entries_and_their_evidence_only() {
        let landing = [
            changed("engine/src/eval.rs"),
            added("register/T-0003.yaml"),
            added("register/T-0002.yaml"),
            added("evidence/T-0003/report.md"),
        ];
        assert_eq!(
            judge(&landing),
            Ok(PushKind::EngineLanding {
                entries: vec![EntryId::new(2), EntryId::new(3)]
            })
        );
        let refusal = judge(&[&landing[..], &[changed("docs/results.md")]].concat()).unwrap_err();
        assert!(
            matches!(&refusal, LandingRefusal::OutsideTheScope { paths, .. } if paths == &["docs/results.md".to_owned()]),
            "{refusal}"
        );
        for stray in [
            added("evidence/T-0001/report.md"),
            added("evidence/T-0003"),
            linked("evidence/T-0003/binding.json"),
        ] {
            let refusal =
                judge(&[&landing[..], std::slice::from_ref(&stray)].concat()).unwrap_err();
            assert!(
                matches!(&refusal, LandingRefusal::RecordsRewritten { paths } if paths.len() == 1 && paths[0].starts_with(&stray.path)),
                "{refusal}"
            );
        }
        let refusal = judge(&[changed("engine/src/eval.rs"), changed("Cargo.lock")]).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "a withdrawal changes the engine's scope (engine/) and nothing else; it also changes: Cargo.lock"
        );
        assert_eq!(
            judge(&[changed("engine/src/eval.rs")]),
            Ok(PushKind::Withdrawal)
        );
    }

    #[test]
    fn the_newest_entry_lands_its_candidate_and_the_tree_is_its_own() {
        let entries = [EntryId::new(4)];
        let newest = |verdict| NewestEntry {
            id: EntryId::new(4),
            verdict,
            candidate: "abc",
        };
        let records = [
            added("register/T-0004.yaml"),
            added("evidence/T-0004/binding.json"),
        ];
        assert_eq!(
            judge_engine_landing(&newest(Verdict::Gewinn), true, &records, &entries),
            Ok(())
        );
        for verdict in [Verdict::Abgelehnt, Verdict::Genesis] {
            assert!(matches!(
                judge_engine_landing(&newest(verdict), true, &records, &entries),
                Err(LandingRefusal::NotLanded { .. })
            ));
        }
        assert!(matches!(
            judge_engine_landing(&newest(Verdict::Gleich), false, &records, &entries),
            Err(LandingRefusal::CandidateNotInHistory { .. })
        ));
        let refusal = judge_engine_landing(
            &newest(Verdict::Korrektur),
            true,
            &[&records[..], &[changed("engine/src/search.rs")]].concat(),
            &entries,
        )
        .unwrap_err();
        assert!(
            refusal
                .to_string()
                .ends_with("it differs in: engine/src/search.rs"),
            "{refusal}"
        );
    }

    #[test]
    fn the_branch_rebuilds_to_the_current_engine() {
        assert_eq!(judge_current_engine(("T-0035", "ec5e"), "ec5e"), Ok(()));
        let refusal = judge_current_engine(("T-0035", "ec5e"), "10f4").unwrap_err();
        assert!(
            refusal
                .to_string()
                .contains("sha256 10f4, not to the register's current engine T-0035 (ec5e)"),
            "{refusal}"
        );
    }
}
