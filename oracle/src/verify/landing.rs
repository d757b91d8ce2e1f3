//! `oracle register landing --before REV`: the landing rule (`governance::register::landing`)
//! applied to a push, from the branch's previous head `REV` (an ancestor of `HEAD`: a rewritten
//! branch is not judged) to the repository's `HEAD`. The paths the push changed are judged under
//! the scope of the constitution in force before it (a push cannot widen the scope it is judged
//! by); unless only the paths are asked for, the register at `HEAD` must verify from genesis,
//! each entry the push adds must replay, an engine landing's tree must be its newest entry's
//! verified candidate plus the added records, and any other push must leave the branch with the
//! register's current engine: the same sources, or the same binary rebuilt in the sandbox (a
//! withdrawal also changing nothing a candidate could not).

use std::fmt;
use std::path::Path;

use git2::Oid;
use serde::Serialize;

use super::replay::replay_entry;
use super::resolve::{self, CommitPair, ResolveError, ResolvedCommit};
use crate::builder::{self, BuildRequest, Isolation, Limits, Sandbox, source};
use crate::governance::constitution::{CONSTITUTION_PATH, Constitution};
use crate::governance::contract::EngineContract;
use crate::governance::entry::EntryId;
use crate::governance::register::landing::{
    LandingRefusal, NewestEntry, PushKind, judge_current_engine, judge_engine_landing, judge_paths,
};
use crate::governance::register::{self, AppendError, Audit};
use crate::governance::replay::Check;

/// What `oracle register landing` is asked.
#[derive(Debug, Clone)]
pub struct LandingRequest<'a> {
    /// The repository, checked out at the pushed commit.
    pub repo: &'a Path,
    /// The branch's head before the push.
    pub before: &'a str,
    /// Judge the paths only: nothing is built or replayed (git alone, before anything of the push
    /// is trusted).
    pub paths_only: bool,
    /// The build cache for the replays and a withdrawal's rebuild.
    pub cache_dir: &'a Path,
}

/// What the check found: each check in order, and what the push is.
#[derive(Debug, Clone, Serialize)]
pub struct LandingReport {
    /// Whether the push may stand.
    pub ok: bool,
    /// What the push is, once its paths are lawful.
    pub kind: Option<PushKind>,
    /// The checks, in the order they ran; the first failure ends them.
    pub checks: Vec<Check>,
}

/// Why the check could not be made (the repository's fault or the caller's, not the push's).
#[derive(Debug, thiserror::Error)]
pub enum LandingError {
    /// A commit or file could not be read.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The constitution in force before the push does not parse.
    #[error("{CONSTITUTION_PATH} at {commit}: {reason}")]
    Constitution {
        /// The previous head.
        commit: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The register could not be read.
    #[error(transparent)]
    Register(#[from] AppendError),
}

impl LandingReport {
    fn record(&mut self, name: impl Into<String>, pass: bool, detail: impl Into<String>) -> bool {
        self.checks.push(Check {
            name: name.into(),
            pass,
            detail: detail.into(),
        });
        self.ok &= pass;
        pass
    }

    fn judged(&mut self, name: &str, verdict: Result<(), LandingRefusal>, held: String) -> bool {
        match verdict {
            Ok(()) => self.record(name, true, held),
            Err(refusal) => self.record(name, false, refusal.to_string()),
        }
    }
}

/// Judges the push from `request.before` to `HEAD`.
///
/// # Errors
/// The repository, the constitution before the push or the register cannot be read.
pub fn check_landing(request: &LandingRequest<'_>) -> Result<LandingReport, LandingError> {
    let repo = resolve::open(request.repo)?;
    let head = resolve::commit(&repo, "HEAD", "HEAD")?;
    let mut report = LandingReport {
        ok: true,
        kind: None,
        checks: Vec::new(),
    };
    let Ok(before) = resolve::commit(&repo, "--before", request.before) else {
        report.record(
            "previous head",
            false,
            format!(
                "{} is not a commit of this repository (a rewritten branch?): nothing is judged against it",
                request.before
            ),
        );
        return Ok(report);
    };
    if !is_ancestor(&repo, &before, &head) {
        report.record(
            "previous head",
            false,
            format!(
                "{} is not an ancestor of HEAD {}: the branch was rewritten, and a rewritten history is not judged",
                before.commit, head.commit
            ),
        );
        return Ok(report);
    }
    let Some(contract) = contract_at(&repo, &before)? else {
        // Nothing says what the engine is: the push installs the oracle (`oracle init`), a
        // governance change like any other outside a scope.
        report.record(
            "paths",
            true,
            format!(
                "no {CONSTITUTION_PATH} before the push: it installs the oracle, a governance change for review"
            ),
        );
        if !request.paths_only {
            let audit = register::verify(request.repo)?;
            report.record("register", audit.ok(), audit.state_line());
        }
        return Ok(report);
    };
    let changes = resolve::changed_paths(&repo, &before, &head)?;
    let kind = match judge_paths(
        &changes,
        |path| contract.in_scope(path),
        &contract.scope_text(),
    ) {
        Ok(kind) => kind,
        Err(refusal) => {
            report.record("paths", false, refusal.to_string());
            return Ok(report);
        }
    };
    report.record("paths", true, describe(&kind, &contract));
    report.kind = Some(kind.clone());
    if request.paths_only {
        return Ok(report);
    }

    let audit = register::verify(request.repo)?;
    if !report.record("register", audit.ok(), audit.state_line()) {
        return Ok(report);
    }
    let entries = match &kind {
        PushKind::EngineUnchanged { entries } | PushKind::EngineLanding { entries } => {
            entries.clone()
        }
        PushKind::Withdrawal => Vec::new(),
    };
    for &id in &entries {
        let up_to = register::verify_up_to(request.repo, id)?;
        let replayed = replay_entry(request.repo, &up_to, id, false, request.cache_dir);
        let (pass, detail) = replayed.map_or_else(
            || (false, "the entry does not parse".to_owned()),
            |replay| {
                let failed: Vec<String> = replay
                    .checks
                    .iter()
                    .filter(|check| !check.pass)
                    .map(|check| format!("{}: {}", check.name, check.detail))
                    .collect();
                if failed.is_empty() {
                    (true, format!("{} checks passed", replay.checks.len()))
                } else {
                    (false, failed.join("; "))
                }
            },
        );
        if !report.record(format!("replay {id}"), pass, detail) {
            return Ok(report);
        }
    }
    match kind {
        PushKind::EngineUnchanged { .. } => {
            let engine = HeadEngine::new(request, &repo, &head, &contract);
            engine.check("current engine", &audit, false, &mut report)?;
        }
        PushKind::EngineLanding { entries } => {
            check_engine_landing(&repo, &audit, &head, &entries, &mut report)?;
        }
        PushKind::Withdrawal => {
            let engine = HeadEngine::new(request, &repo, &head, &contract);
            engine.check("withdrawal", &audit, true, &mut report)?;
        }
    }
    Ok(report)
}

/// Whether `head` is `before` or descends from it.
fn is_ancestor(repo: &git2::Repository, before: &ResolvedCommit, head: &ResolvedCommit) -> bool {
    before.commit == head.commit
        || match (Oid::from_str(&head.commit), Oid::from_str(&before.commit)) {
            (Ok(head), Ok(before)) => repo.graph_descendant_of(head, before).unwrap_or(false),
            _ => false,
        }
}

/// The engine contract of the constitution at `commit`; `None` when the commit has none.
fn contract_at(
    repo: &git2::Repository,
    commit: &ResolvedCommit,
) -> Result<Option<EngineContract>, LandingError> {
    let bytes = match resolve::read_file(repo, commit, CONSTITUTION_PATH) {
        Err(ResolveError::MissingFile { .. }) => return Ok(None),
        read => read?,
    };
    let label = format!("{}:{CONSTITUTION_PATH}", commit.commit);
    Constitution::parse(&bytes, Path::new(&label))
        .map(|constitution| Some(constitution.contract()))
        .map_err(|error| LandingError::Constitution {
            commit: commit.commit.clone(),
            reason: error.to_string(),
        })
}

/// What the paths showed, as people read it.
fn describe(kind: &PushKind, contract: &EngineContract) -> String {
    let ids = |entries: &[EntryId]| {
        entries
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    match kind {
        PushKind::EngineUnchanged { entries } if entries.is_empty() => {
            format!("{} unchanged", contract.scope_text())
        }
        PushKind::EngineUnchanged { entries } => {
            format!("{} unchanged; adds {}", contract.scope_text(), ids(entries))
        }
        PushKind::EngineLanding { entries } => format!(
            "{} changed with its entries {} and their evidence, nothing else",
            contract.scope_text(),
            ids(entries)
        ),
        PushKind::Withdrawal => format!(
            "{} changed without an entry, nothing else: a withdrawal",
            contract.scope_text()
        ),
    }
}

/// The engine landing's newest entry lands its candidate, which is in `head`'s history, and
/// `head`'s tree is the candidate's plus the added records.
fn check_engine_landing(
    repo: &git2::Repository,
    audit: &Audit,
    head: &ResolvedCommit,
    entries: &[EntryId],
    report: &mut LandingReport,
) -> Result<(), LandingError> {
    let Some(&newest_id) = entries.last() else {
        return Ok(());
    };
    let Some((entry, _)) = audit.find(newest_id) else {
        report.record(
            "landed tree",
            false,
            format!("{newest_id} is not in the register"),
        );
        return Ok(());
    };
    let candidate_id = entry.candidate.commit.as_str();
    let candidate = resolve::commit(repo, "candidate", candidate_id).ok();
    let in_history = candidate
        .as_ref()
        .is_some_and(|candidate| is_ancestor(repo, candidate, head));
    let differences = match (&candidate, in_history) {
        (Some(candidate), true) => resolve::changed_paths(repo, candidate, head)?,
        _ => Vec::new(),
    };
    let newest = NewestEntry {
        id: newest_id,
        verdict: entry.verdict,
        candidate: candidate_id,
    };
    report.judged(
        "landed tree",
        judge_engine_landing(&newest, in_history, &differences, entries),
        format!("{newest_id}'s verified candidate {candidate_id} plus the added records"),
    );
    Ok(())
}

/// The engine at the branch's head, to be held to the register's current engine.
struct HeadEngine<'a> {
    request: &'a LandingRequest<'a>,
    repo: &'a git2::Repository,
    head: &'a ResolvedCommit,
    contract: &'a EngineContract,
}

impl<'a> HeadEngine<'a> {
    fn new(
        request: &'a LandingRequest<'a>,
        repo: &'a git2::Repository,
        head: &'a ResolvedCommit,
        contract: &'a EngineContract,
    ) -> Self {
        Self {
            request,
            repo,
            head,
            contract,
        }
    }

    /// Records under `name` whether the head's engine is the register's current engine: the
    /// same sources (the tree less the records), or else the same binary, built twice in the
    /// sandbox and never from the cache. Checked on every push that lands no verdict, so an
    /// engine that reached the branch unjudged (a run skipped, a file outside the scope that
    /// the build reads, an entry added without its engine) shows at the next push. A
    /// `withdrawal` is also held to an engine change's rules against that engine: it is judged
    /// as an engine change is, not trusted for being one.
    fn check(
        &self,
        name: &str,
        audit: &Audit,
        withdrawal: bool,
        report: &mut LandingReport,
    ) -> Result<(), LandingError> {
        let Some(current) = audit.current_engine() else {
            report.record(
                name,
                !withdrawal,
                "the register has no current engine to hold the branch's to",
            );
            return Ok(());
        };
        let id = current.id.map(|id| id.to_string()).unwrap_or_default();
        let Ok(engine) = resolve::commit(
            self.repo,
            "current engine",
            current.candidate.commit.as_str(),
        ) else {
            report.record(
                name,
                false,
                format!(
                    "the register's current engine {id} names commit {}, which this repository lacks",
                    current.candidate.commit
                ),
            );
            return Ok(());
        };
        if withdrawal {
            let refused = self.refused_changes(&engine)?;
            if !refused.is_empty() {
                report.record(
                    name,
                    false,
                    format!(
                        "against the register's current engine {id}, the branch changes what no engine change may: {}",
                        refused.join("; ")
                    ),
                );
                return Ok(());
            }
        }
        let sources = |commit: &ResolvedCommit| {
            Oid::from_str(&commit.tree)
                .ok()
                .and_then(|tree| source::sources_id(self.repo, tree).ok())
        };
        if let (Some(here), Some(there)) = (sources(self.head), sources(&engine))
            && here == there
        {
            report.record(
                name,
                true,
                format!("the sources are those of the register's current engine {id}"),
            );
            return Ok(());
        }
        let registered = current.candidate.binary_sha256.as_str();
        let sandbox = Sandbox::detect(Limits::build());
        if sandbox.isolation != Isolation::Bubblewrap {
            report.record(
                name,
                false,
                format!(
                    "the sources differ from the register's current engine {id}'s, and only a build in the sandbox could show the same binary: builds are {}",
                    sandbox.isolation.describe()
                ),
            );
            return Ok(());
        }
        let built = builder::build_commit(&BuildRequest {
            repo: self.request.repo.to_path_buf(),
            rev: self.head.commit.clone(),
            build: self.contract.build.clone(),
            fetch: self.contract.fetch.clone(),
            cache_dir: self.request.cache_dir.to_path_buf(),
            registry: builder::host_registry(),
            sandbox,
            // Built twice, never served from the cache: a cache entry that held the registered
            // binary under these sources would pass any tree as the current engine.
            fresh: true,
        });
        match built {
            Ok(outcome) => {
                report.judged(
                    name,
                    judge_current_engine((&id, registered), &outcome.sha256),
                    format!("rebuilds to the register's current engine {id} ({registered})"),
                );
            }
            Err(error) => {
                report.record(name, false, format!("the engine does not build: {error}"));
            }
        }
        Ok(())
    }

    /// What the head changes, against the current engine's commit `engine`, that no engine
    /// change may (a build hook, a refused manifest key, a package pinned from outside), inside
    /// the scope: outside it the two differ by everything that landed since (records,
    /// documents), which no step-1 rule is about.
    fn refused_changes(&self, engine: &ResolvedCommit) -> Result<Vec<String>, LandingError> {
        let pair = CommitPair {
            candidate: self.head.clone(),
            predecessor: engine.clone(),
        };
        Ok(resolve::changes(self.repo, &pair, self.contract)?
            .touched
            .into_iter()
            .filter(|touch| self.contract.in_scope(&touch.path))
            .map(|touch| format!("{} ({})", touch.path, touch.reason))
            .collect())
    }
}

impl fmt::Display for LandingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for check in &self.checks {
            writeln!(f, "{check}")?;
        }
        writeln!(f, "landing: {}", if self.ok { "lawful" } else { "refused" })
    }
}
