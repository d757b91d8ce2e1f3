//! The register on disk: reading it, and appending under an exclusive lock.
//!
//! An append is: lock `register/.lock`, audit, build the entry, write it to a
//! hidden temp file, fsync, hard-link the temp file to the next entry's name
//! (which fails rather than overwrite), fsync the directory. A process killed
//! at any point leaves at most a hidden temp file, which the next append
//! removes while it holds the lock.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use thiserror::Error;

use git2::Repository;

use crate::governance::constitution::{CONSTITUTION_PATH, Constitution};
use crate::governance::entry::{
    BinaryRecord, Entry, EntryError, EntryId, LossBudget, OracleCommit, OracleRecord, PathKind,
    Verdict,
};
use crate::governance::hash::{GitId, Sha256Hex};
use crate::governance::register::audit::{
    Audit, Finding, RegisterFile, audit, current_engine, decide_recorded,
};
use crate::governance::register::rules::{
    Lookup, RuleFinding, Rules, check_entry, constitution_at, find_commit, judge,
};
use crate::governance::replay::replay_statistics;
use crate::governance::timestamp::Timestamp;
use crate::integrity::{MAX_RECORD_BYTES, read_bounded};

/// The register's directory inside a repository.
pub const REGISTER_DIR: &str = "register";

/// The directory of the entries' kept evidence (`evidence/T-NNNN/`: report, binding, games).
pub const EVIDENCE_DIR: &str = "evidence";

/// The directories of the register's records: they grow with every entry and no build may read
/// them, so a build is given the tree without them (`builder::source`).
pub const RECORD_DIRS: [&str; 2] = [REGISTER_DIR, EVIDENCE_DIR];

/// Environment variable of the fault-injection hook between the temp file's
/// fsync and its link: `abort` aborts the process, `pause` sleeps for ten
/// minutes (a test kills it). Used by the crash-safety tests.
pub const FAULT_HOOK_ENV: &str = "ORACLE_REGISTER_APPEND_FAULT";

/// Prefix of the hidden temp files an append writes before linking.
const TEMP_PREFIX: &str = ".tmp-";

/// Why an append or genesis was refused.
#[derive(Debug, Error)]
pub enum AppendError {
    /// Reading or writing the register failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The register does not verify; nothing is appended to a broken chain.
    #[error("the register does not verify ({count} problems, first: {first})")]
    Broken {
        /// Number of findings.
        count: usize,
        /// The first finding.
        first: String,
    },
    /// The entry is not acceptable as the next one.
    #[error("{0}")]
    Refused(String),
    /// There is no register to verify: a wrong `--repo`, or a checkout without its entries.
    #[error("{}: {}; there is no register to verify", dir.display(), if *exists { "holds no entries" } else { "does not exist" })]
    NoRegister {
        /// The `register/` directory.
        dir: PathBuf,
        /// Whether it exists (and holds no entries).
        exists: bool,
    },
    /// The entry could not be serialized.
    #[error(transparent)]
    Entry(#[from] EntryError),
}

/// What `oracle register genesis` records: the engine as it stands.
#[derive(Debug, Clone)]
pub struct GenesisRecord {
    /// The engine as built by `oracle build`.
    pub engine: BinaryRecord,
    /// `rustc -V` of the toolchain it was built with.
    pub toolchain: String,
    /// The commit the judging oracle was built from.
    pub oracle_commit: GitId,
}

/// Reads every non-hidden file of `repo/register` (none if the directory does not exist).
///
/// # Errors
/// [`AppendError::Io`] when the directory or a file cannot be read, or a file is a link.
pub fn read_files(repo: &Path) -> Result<Vec<RegisterFile>, AppendError> {
    let dir = repo.join(REGISTER_DIR);
    let listing = match fs::read_dir(&dir) {
        Ok(listing) => listing,
        // A repository without a register is an empty register; a repository that does not
        // exist is a mistyped path, which must not verify as an empty register.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound && repo.is_dir() => {
            return Ok(Vec::new());
        }
        Err(source) => return Err(AppendError::Io { path: dir, source }),
    };
    let mut files = Vec::new();
    for item in listing {
        let item = item.map_err(|source| AppendError::Io {
            path: dir.clone(),
            source,
        })?;
        let name = item.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = item.path();
        // An entry is the bytes in the register, not a link to bytes elsewhere that could change
        // while the register's own files do not.
        if item.file_type().is_ok_and(|kind| kind.is_symlink()) {
            return Err(AppendError::Io {
                path,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "a link; a register entry is a plain file",
                ),
            });
        }
        let bytes = read_bounded(&path, MAX_RECORD_BYTES).map_err(|error| AppendError::Io {
            path,
            source: error.reason,
        })?;
        files.push(RegisterFile { name, bytes });
    }
    Ok(files)
}

/// Audits the register of `repo` and checks every entry against the rules it was judged under
/// (see [`verify_files`]).
///
/// # Errors
/// [`AppendError::Io`] when it cannot be read.
pub fn verify(repo: &Path) -> Result<Audit, AppendError> {
    Ok(verify_files(repo, &read_files(repo)?))
}

/// Audits `files` as the register of `repo`, and runs on every entry the check `append` runs
/// ([`check_entry`]): each entry's constitution is read from the git tree of the commit it was
/// judged at (its predecessor; the candidate at genesis) in the repository at `repo`.
///
/// Where that commit is not at hand — `repo` is not a git repository, or a shallow clone lacks
/// it — the rules are taken from the work tree's constitution when it has the recorded sha256,
/// and what could not be checked is listed in [`Audit::unchecked`]. A commit missing from a
/// complete history is a finding: the entry names a commit the repository never had.
#[must_use]
pub fn verify_files(repo: &Path, files: &[RegisterFile]) -> Audit {
    let mut audit = audit(files);
    let history = Repository::open(repo).ok();
    let work_tree = Constitution::load(repo).ok();
    for (index, (entry, _)) in audit.entries.iter().enumerate() {
        let file = entry
            .id
            .map_or_else(|| format!("entry {}", index + 1), |id| id.file_name());
        let (judged, mut found) = judged_under(entry, history.as_ref(), work_tree.as_ref());
        let rules = judged.as_ref().map(|(constitution, sha256, origin)| Rules {
            constitution,
            sha256,
            origin,
        });
        found.extend(check_entry(
            entry,
            current_engine(&audit.entries[..index]),
            rules.as_ref(),
            history.as_ref(),
        ));
        for finding in found {
            let (list, message) = match finding {
                RuleFinding::Broken(message) => (&mut audit.findings, message),
                RuleFinding::Unchecked(message) => (&mut audit.unchecked, message),
            };
            let finding = Finding {
                file: file.clone(),
                message,
            };
            // A commit missing from the history is named once, not by every check that needs it.
            if !list.contains(&finding) {
                list.push(finding);
            }
        }
    }
    // Each file's problems together, in numbering order (a stable sort keeps their order).
    audit.findings.sort_by(|a, b| a.file.cmp(&b.file));
    audit
}

/// The constitution `entry` is held to, with the sha256 of its bytes and where it was read: the
/// one in the tree of the commit it was judged at, or where the history lacks that commit, the
/// work tree's if it has the recorded sha256. Also what the lookup found wrong or left unchecked.
fn judged_under(
    entry: &Entry,
    history: Option<&Repository>,
    work_tree: Option<&(Constitution, Sha256Hex)>,
) -> (Option<(Constitution, Sha256Hex, String)>, Vec<RuleFinding>) {
    let Some(judge) = judge(entry) else {
        return (None, Vec::new());
    };
    let role = judge_role(entry);
    let broken = |why: String| vec![RuleFinding::Broken(format!("field `{role}.commit`: {why}"))];
    match find_commit(history, &judge.commit) {
        Lookup::Found(commit, git) => match constitution_at(git, &commit) {
            Ok((constitution, sha256)) => {
                let origin = format!("{CONSTITUTION_PATH} at the {role} commit {}", judge.commit);
                (Some((constitution, sha256, origin)), Vec::new())
            }
            Err(why) => (None, broken(why)),
        },
        Lookup::Absent(why) => (None, broken(why)),
        Lookup::Unavailable(why) => {
            match work_tree.filter(|(_, sha256)| *sha256 == entry.constitution_sha256) {
                Some((constitution, sha256)) => (
                    Some((
                        constitution.clone(),
                        sha256.clone(),
                        format!("the work tree's {CONSTITUTION_PATH}"),
                    )),
                    vec![RuleFinding::Unchecked(format!(
                        "rules taken from the work tree's {CONSTITUTION_PATH}, which has the \
                         recorded sha256; that it was the one at the {role} commit {} is \
                         unchecked: {why}",
                        judge.commit
                    ))],
                ),
                None => (
                    None,
                    vec![RuleFinding::Unchecked(format!(
                        "the constitution it was judged under ({}) is not at hand, so its \
                         profile, stages, α, β, bounds and loss tolerance are unchecked: the \
                         {role} commit {}: {why}",
                        entry.constitution_sha256, judge.commit
                    ))],
                ),
            }
        }
    }
}

/// Which side of an entry it was judged at: its predecessor (its candidate at genesis).
fn judge_role(entry: &Entry) -> &'static str {
    if entry.path == PathKind::Genesis {
        "candidate"
    } else {
        "predecessor"
    }
}

/// Appends a (draft) entry as the next one and returns it as written.
///
/// Fills `id`, `prev_sha256`, `recorded_at` (with `now`) where the draft has
/// `null`, refuses them where they are not the next id, the head, or not
/// after the newest entry, carries the loss budget over from the head, and
/// refuses what the check `verify` also runs finds ([`check_entry`] against
/// the constitution in force: a profile that is not binding, stages off the
/// profile, a predecessor that is not the current engine), including what it
/// cannot check.
///
/// # Errors
/// [`AppendError`]; the register is unchanged in every case.
pub fn append(
    repo: &Path,
    draft: Entry,
    constitution: &Constitution,
    constitution_sha256: &Sha256Hex,
    now: Timestamp,
) -> Result<Entry, AppendError> {
    write_next(repo, |audit| {
        let last = audit
            .last()
            .ok_or_else(|| refuse("the register is empty: create its genesis entry first"))?;
        complete_draft(
            draft,
            audit,
            last,
            repo,
            constitution,
            constitution_sha256,
            now,
        )
    })
}

/// Writes the genesis entry `T-0001` into an empty register.
///
/// # Errors
/// [`AppendError::Refused`] unless the register is empty.
pub fn genesis(
    repo: &Path,
    record: GenesisRecord,
    constitution: &Constitution,
    constitution_sha256: &Sha256Hex,
    now: Timestamp,
) -> Result<Entry, AppendError> {
    write_next(repo, |audit| {
        if audit.count > 0 {
            return Err(refuse(
                "the register already has entries: genesis is only the first",
            ));
        }
        Ok(Entry {
            id: Some(EntryId::new(1)),
            prev_sha256: Some(Sha256Hex::zero()),
            recorded_at: Some(now.clone()),
            profile: None,
            path: PathKind::Genesis,
            verdict: Verdict::Genesis,
            claimed_gain_nelo: 0.0,
            constitution_sha256: constitution_sha256.clone(),
            oracle: OracleRecord {
                version: env!("CARGO_PKG_VERSION").to_owned(),
                commit: OracleCommit::Known(record.oracle_commit),
                dirty: None,
                binary_sha256: None,
            },
            toolchain: record.toolchain,
            candidate: record.engine,
            predecessor: None,
            bound_at: now,
            gate: None,
            proof: None,
            confirmation: None,
            stages: Vec::new(),
            loss_budget: LossBudget {
                booking: constitution.loss_tolerance.booking,
                booked: 0.0,
                used_before: 0.0,
                used_after: 0.0,
                limit: constitution.loss_tolerance.limit_nelo,
            },
            isolation: None,
        })
    })
}

/// A refusal with `message`.
fn refuse(message: &str) -> AppendError {
    AppendError::Refused(message.to_owned())
}

/// Turns a draft into the next entry after `last`, or says why it cannot be one.
fn complete_draft(
    mut entry: Entry,
    audit: &Audit,
    last: &Entry,
    repo: &Path,
    constitution: &Constitution,
    constitution_sha256: &Sha256Hex,
    now: Timestamp,
) -> Result<Entry, AppendError> {
    let next = EntryId::new(u32::try_from(audit.count + 1).unwrap_or(u32::MAX));
    let head_name = last.id.map_or_else(String::new, |id| format!(" ({id})"));
    if entry.path == PathKind::Genesis {
        return Err(refuse(
            "a genesis entry is written by `oracle register genesis`, not appended",
        ));
    }
    match entry.id {
        Some(id) if id != next => {
            return Err(AppendError::Refused(format!(
                "entry id is {id}, the next entry is {next}"
            )));
        }
        _ => entry.id = Some(next),
    }
    match &entry.prev_sha256 {
        Some(prev) if *prev != audit.head => {
            return Err(AppendError::Refused(format!(
                "stale prev_sha256 {prev}: the head is {}{head_name}",
                audit.head
            )));
        }
        _ => entry.prev_sha256 = Some(audit.head.clone()),
    }
    // `now` was read before the lock: an append that landed meanwhile may be newer, and the
    // clock read under the lock is not older than it.
    let now = match &last.recorded_at {
        Some(head) if now < *head => Timestamp::now(),
        _ => now,
    };
    let recorded = entry.recorded_at.get_or_insert(now).clone();
    if let Some(newest) = last
        .recorded_at
        .as_ref()
        .filter(|newest| recorded < **newest)
    {
        return Err(AppendError::Refused(format!(
            "recorded_at {recorded} is before the head's {newest}{head_name}"
        )));
    }
    // The loss budget is a ledger position like prev_sha256: carried from the head.
    entry.loss_budget.used_before = last.loss_budget.used_after;
    entry.loss_budget.booking = constitution.loss_tolerance.booking;
    entry.loss_budget.limit = constitution.loss_tolerance.limit_nelo;
    let rules = Rules {
        constitution,
        sha256: constitution_sha256,
        origin: "the one in force",
    };
    let history = Repository::open(repo).ok();
    // `verify` runs the same check on every entry; here anything it cannot check is refused too.
    if let Some(finding) = check_entry(
        &entry,
        audit.current_engine(),
        Some(&rules),
        history.as_ref(),
    )
    .first()
    {
        return Err(AppendError::Refused(finding.message().to_owned()));
    }
    if let Some(failed) = replay_statistics(&entry, entry.loss_budget.used_before)
        .into_iter()
        .find(|check| !check.pass && check.name.starts_with("stage "))
    {
        return Err(AppendError::Refused(format!(
            "the recorded statistics do not follow from the recorded counts: {}: {}",
            failed.name, failed.detail
        )));
    }
    let decision = decide_recorded(&entry, entry.loss_budget.used_before);
    if decision.verdict != entry.verdict {
        return Err(AppendError::Refused(format!(
            "verdict {} does not follow from the evidence after {}: it gives {} ({})",
            entry.verdict,
            head_name.trim(),
            decision.verdict,
            decision.reason
        )));
    }
    entry.loss_budget.booked = decision.loss_booked;
    entry.loss_budget.used_after = decision.loss_used_after;
    Ok(entry)
}

/// Under the lock: audit, build the next entry with `make`, and link it into place.
fn write_next(
    repo: &Path,
    make: impl FnOnce(&Audit) -> Result<Entry, AppendError>,
) -> Result<Entry, AppendError> {
    let dir = repo.join(REGISTER_DIR);
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| AppendError::Io { path, source }
    };
    fs::create_dir_all(&dir).map_err(io(&dir))?;
    let lock_path = dir.join(".lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io(&lock_path))?;
    lock.lock().map_err(io(&lock_path))?;
    remove_stale_temp_files(&dir)?;

    let files = read_files(repo)?;
    let before = verify_files(repo, &files);
    if let Some(first) = before.findings.first() {
        return Err(AppendError::Broken {
            count: before.findings.len(),
            first: format!("{}: {}", first.file, first.message),
        });
    }
    let entry = make(&before)?;
    let id = entry.id.ok_or_else(|| refuse("the entry has no id"))?;
    let bytes = entry.to_canonical()?.into_bytes();
    let mut after_files = files;
    after_files.push(RegisterFile {
        name: id.file_name(),
        bytes: bytes.clone(),
    });
    // The register as `verify` will see it, the rules of the new entry read from its
    // predecessor's tree this time.
    let after = verify_files(repo, &after_files);
    if let Some(first) = after.findings.first() {
        return Err(AppendError::Refused(format!(
            "{}: {}",
            first.file, first.message
        )));
    }

    let mut temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(&dir)
        .map_err(io(&dir))?;
    temp.write_all(&bytes).map_err(io(temp.path()))?;
    temp.as_file().sync_all().map_err(io(temp.path()))?;
    fault_hook();
    let target = dir.join(id.file_name());
    fs::hard_link(temp.path(), &target).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            AppendError::Refused(format!(
                "{} already exists: the register is never overwritten",
                target.display()
            ))
        } else {
            AppendError::Io {
                path: target.clone(),
                source,
            }
        }
    })?;
    drop(temp);
    File::open(&dir)
        .and_then(|handle| handle.sync_all())
        .map_err(io(&dir))?;
    Ok(entry)
}

/// Deletes temp files left by appends that were killed (only called under the lock).
fn remove_stale_temp_files(dir: &Path) -> Result<(), AppendError> {
    let listing = fs::read_dir(dir).map_err(|source| AppendError::Io {
        path: dir.to_owned(),
        source,
    })?;
    for item in listing.flatten() {
        if item.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            let path = item.path();
            fs::remove_file(&path).map_err(|source| AppendError::Io { path, source })?;
        }
    }
    Ok(())
}

/// The fault-injection point between fsync and link (see [`FAULT_HOOK_ENV`]).
fn fault_hook() {
    match std::env::var(FAULT_HOOK_ENV).as_deref() {
        Ok("abort") => std::process::abort(),
        Ok("pause") => std::thread::sleep(std::time::Duration::from_secs(600)),
        _ => {}
    }
}
