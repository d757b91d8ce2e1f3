//! Whether an entry follows the rules it was judged under: the constitution that binds it
//! (profile, stages, α, β, bounds, batch, game limits, loss tolerance) and the chain of custody
//! (its predecessor is the register's current engine).
//!
//! One check serves both sides of the register: `append` refuses an entry that breaks a rule or
//! that it cannot check, and `verify` runs the same check on every entry, with each entry's
//! constitution read from the git tree of the commit it was judged at. A hand-committed entry
//! therefore gains nothing by skipping `append`.

use std::path::Path;

use git2::{Commit, ObjectType, Oid, Repository};

use crate::governance::constitution::{CONSTITUTION_PATH, Constitution, Profile};
use crate::governance::entry::{BinaryRecord, Entry, PathKind, StageRecord};
use crate::governance::hash::{GitId, Sha256Hex};

/// The constitution an entry is checked against, and where it was read (for messages).
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// The parsed constitution.
    pub constitution: &'a Constitution,
    /// sha256 of its bytes, compared with the entry's `constitution_sha256`.
    pub sha256: &'a Sha256Hex,
    /// Where it came from: "the one in force", "constitution/constitution.yaml at 1a2b3c4d5e6f".
    pub origin: &'a str,
}

/// What the check found about one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleFinding {
    /// The entry breaks a rule; the message names the field.
    Broken(String),
    /// A rule could not be checked with what the repository holds (a shallow clone, no git);
    /// the message says which and why.
    Unchecked(String),
}

impl RuleFinding {
    /// The message, whichever kind it is.
    #[must_use]
    pub fn message(&self) -> &str {
        match self {
            Self::Broken(message) | Self::Unchecked(message) => message,
        }
    }
}

/// Checks `entry` against `rules` (none: the caller could not find them and says so itself) and
/// against the register's current engine before it; `history` answers whether the predecessor
/// commit descends from the current engine's commit.
#[must_use]
pub fn check_entry(
    entry: &Entry,
    current_engine: Option<&Entry>,
    rules: Option<&Rules<'_>>,
    history: Option<&Repository>,
) -> Vec<RuleFinding> {
    let mut findings = Vec::new();
    if let Some(rules) = rules {
        check_constitution(entry, rules, &mut findings);
    }
    if entry.path != PathKind::Genesis {
        check_custody(entry, current_engine, history, &mut findings);
    }
    findings
}

/// The entry names this constitution, and its profile, stages and loss tolerance are its.
fn check_constitution(entry: &Entry, rules: &Rules<'_>, findings: &mut Vec<RuleFinding>) {
    let mut broken = |message: String| findings.push(RuleFinding::Broken(message));
    if entry.constitution_sha256 != *rules.sha256 {
        // Another constitution's rules say nothing about this entry: stop here.
        return broken(format!(
            "field `constitution_sha256`: the entry was judged under constitution {}, {} is {}",
            entry.constitution_sha256, rules.origin, rules.sha256
        ));
    }
    let tolerance = &rules.constitution.loss_tolerance;
    if entry.loss_budget.booking != tolerance.booking {
        broken(
            "field `loss_budget.booking` is not the constitution's loss_tolerance.booking".into(),
        );
    }
    if entry.loss_budget.limit.to_bits() != tolerance.limit_nelo.to_bits() {
        broken(format!(
            "field `loss_budget.limit` is {}, the constitution's loss_tolerance.limit_nelo is {}",
            entry.loss_budget.limit, tolerance.limit_nelo
        ));
    }
    if entry.path == PathKind::Genesis {
        return;
    }
    let Some(name) = &entry.profile else {
        return broken("field `profile` is null: only genesis has no profile".into());
    };
    let profile = match rules.constitution.profile(name) {
        Ok(profile) => profile,
        Err(message) => return broken(format!("field `profile`: {message}")),
    };
    if !profile.binding {
        broken(format!(
            "field `profile`: profile `{name}` is not binding: its verdicts are not registered"
        ));
    }
    if entry.stages.len() != profile.stages.len() {
        return broken(format!(
            "field `stages`: the entry has {} stages, profile `{name}` has {}",
            entry.stages.len(),
            profile.stages.len()
        ));
    }
    for (recorded, index) in entry.stages.iter().zip(0..) {
        for (field, found, expected) in stage_differences(entry.path, recorded, profile, index) {
            broken(format!(
                "stage `{}`: field `{field}` is {found}, profile `{name}` stage `{}` has {expected}",
                recorded.name, profile.stages[index].name
            ));
        }
    }
}

/// The fields of `recorded` that differ from stage `index` of `profile` on `path`:
/// (field, recorded value, the profile's value).
fn stage_differences(
    path: PathKind,
    recorded: &StageRecord,
    profile: &Profile,
    index: usize,
) -> Vec<(&'static str, String, String)> {
    let rule = &profile.stages[index];
    let bounds = if path == PathKind::Randfall {
        rule.bounds.randfall
    } else {
        rule.bounds.standard
    };
    let pinned = rule
        .book_sha256
        .as_ref()
        .map_or_else(|| "no pinned sha256".to_owned(), ToString::to_string);
    // Floats compare by bits: the oracle copies them from the constitution, never computes them.
    let numbers = [
        ("elo0", recorded.elo0, bounds.elo0),
        ("elo1", recorded.elo1, bounds.elo1),
        ("alpha", recorded.alpha, profile.alpha.get()),
        ("beta", recorded.beta, profile.beta.get()),
    ];
    let mut differences: Vec<(&'static str, String, String)> = numbers
        .into_iter()
        .filter(|(_, found, expected)| found.to_bits() != expected.to_bits())
        .map(|(field, found, expected)| (field, found.to_string(), expected.to_string()))
        .collect();
    let texts = [
        ("name", recorded.name.clone(), rule.name.clone()),
        ("tc", recorded.tc.to_string(), rule.tc.to_string()),
        (
            "book",
            recorded.book.clone(),
            rule.book.display().to_string(),
        ),
        ("book_sha256", recorded.book_sha256.to_string(), pinned),
        (
            "batch_size",
            recorded.batch_size.to_string(),
            profile.batch_size.to_string(),
        ),
        (
            "max_games",
            recorded.max_games.to_string(),
            rule.max_games.to_string(),
        ),
    ];
    differences.extend(texts.into_iter().filter(|(field, found, expected)| {
        if *field == "book" {
            Path::new(found) != Path::new(expected)
        } else {
            found != expected
        }
    }));
    differences
}

/// The entry's predecessor is the register's current engine: the same binary (by sha256), built
/// from the current engine's commit or from a descendant of it (main may have moved by commits
/// that leave the binary as it is).
fn check_custody(
    entry: &Entry,
    current_engine: Option<&Entry>,
    history: Option<&Repository>,
    findings: &mut Vec<RuleFinding>,
) {
    let Some(current) = current_engine else {
        return findings.push(RuleFinding::Broken(
            "the register has no current engine before this entry".into(),
        ));
    };
    let Some(predecessor) = &entry.predecessor else {
        return findings.push(RuleFinding::Broken(
            "field `predecessor` is null: only genesis has none".into(),
        ));
    };
    let engine = &current.candidate;
    let id = current.id.map_or_else(String::new, |id| id.to_string());
    if predecessor.binary_sha256 != engine.binary_sha256 {
        findings.push(RuleFinding::Broken(format!(
            "field `predecessor.binary_sha256`: the predecessor's binary {} is not the register's \
             current engine {id} (binary {}): a change is judged against the engine that landed last",
            predecessor.binary_sha256, engine.binary_sha256
        )));
    }
    if predecessor.commit == engine.commit {
        return;
    }
    let field = "field `predecessor.commit`";
    let (commit, ancestor, git) = match (
        find_commit(history, &predecessor.commit),
        find_commit(history, &engine.commit),
    ) {
        (Lookup::Found(commit, git), Lookup::Found(ancestor, _)) => (commit, ancestor, git),
        (Lookup::Absent(why), _) | (_, Lookup::Absent(why)) => {
            return findings.push(RuleFinding::Broken(format!("{field}: {why}")));
        }
        (Lookup::Unavailable(why), _) | (_, Lookup::Unavailable(why)) => {
            return findings.push(RuleFinding::Unchecked(format!(
                "{field}: {} is not the current engine's commit {} ({id}), and whether it \
                 descends from it is unknown: {why}",
                predecessor.commit, engine.commit
            )));
        }
    };
    let descends = git.graph_descendant_of(commit.id(), ancestor.id());
    if !descends.unwrap_or(false) {
        findings.push(RuleFinding::Broken(format!(
            "{field}: {} is neither the current engine's commit {} ({id}) nor a descendant of it",
            predecessor.commit, engine.commit
        )));
    }
}

/// A commit the check needs, looked up in the repository's history.
pub enum Lookup<'r> {
    /// The commit, and the repository that has it.
    Found(Commit<'r>, &'r Repository),
    /// Not at hand, through no fault of the entry (no repository, a shallow clone): why, without
    /// the commit's id (the caller names it).
    Unavailable(String),
    /// Absent from a full history: the entry names a commit the repository never had.
    Absent(String),
}

/// Looks up `id` in `history`.
#[must_use]
pub fn find_commit<'r>(history: Option<&'r Repository>, id: &GitId) -> Lookup<'r> {
    let Some(git) = history else {
        return Lookup::Unavailable("there is no git repository at --repo".into());
    };
    let found = Oid::from_str(id.as_str()).and_then(|oid| git.find_commit(oid));
    match found {
        Ok(commit) => Lookup::Found(commit, git),
        Err(_) if git.is_shallow() => Lookup::Unavailable(
            "this shallow clone does not have it (fetch the whole history to check it)".into(),
        ),
        Err(_) => Lookup::Absent(format!(
            "commit {id} is not in the repository, whose history is complete"
        )),
    }
}

/// The entry's judge: the predecessor it was measured against (the candidate itself at genesis),
/// whose tree holds the rules it was judged under.
#[must_use]
pub fn judge(entry: &Entry) -> Option<&BinaryRecord> {
    match entry.path {
        PathKind::Genesis => Some(&entry.candidate),
        _ => entry.predecessor.as_ref(),
    }
}

/// The constitution in `commit`'s tree, with the sha256 of its bytes; the message of a
/// [`RuleFinding::Broken`] when the tree has none that parses (no honest run was judged there).
///
/// # Errors
/// The reason, naming the commit and the file.
pub fn constitution_at(
    git: &Repository,
    commit: &Commit<'_>,
) -> Result<(Constitution, Sha256Hex), String> {
    let label = format!("{CONSTITUTION_PATH} at commit {}", commit.id());
    let blob = commit
        .tree()
        .and_then(|tree| tree.get_path(Path::new(CONSTITUTION_PATH)))
        .ok()
        .filter(|item| item.kind() == Some(ObjectType::Blob))
        .and_then(|item| git.find_blob(item.id()).ok())
        .ok_or_else(|| format!("{label}: no such file"))?;
    let constitution =
        Constitution::parse(blob.content(), Path::new(&label)).map_err(|e| e.to_string())?;
    Ok((constitution, Sha256Hex::of(blob.content())))
}
