//! What `oracle register` says: one typed summary per subcommand, whose `Display` is the text
//! for people and whose `Serialize` is the `--json` object, so that the two cannot disagree.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::audit::{Audit, Finding};
use super::store::{AppendError, REGISTER_DIR, read_files, verify_files};
use crate::governance::entry::{BinaryRecord, Entry, EntryId};
use crate::governance::hash::Sha256Hex;
use crate::governance::timestamp::Timestamp;

impl Audit {
    /// The register's state in one line: its first finding, or `head=… n=…` when sound.
    #[must_use]
    pub fn state_line(&self) -> String {
        self.findings.first().map_or_else(
            || format!("head={} n={}", self.head, self.count),
            |finding| format!("{}: {}", finding.file, finding.message),
        )
    }

    /// The entry numbered `id` among those that parsed, with its file's sha256.
    #[must_use]
    pub fn find(&self, id: EntryId) -> Option<(&Entry, &Sha256Hex)> {
        self.entries
            .iter()
            .find(|(entry, _)| entry.id == Some(id))
            .map(|(entry, hash)| (entry, hash))
    }
}

/// Audits the register of `repo` as far as entry `last` (the later files are not read), as a
/// replay of `last` sees it.
///
/// # Errors
/// [`AppendError::Io`] when it cannot be read.
pub fn verify_up_to(repo: &Path, last: EntryId) -> Result<Audit, AppendError> {
    let files: Vec<_> = read_files(repo)?
        .into_iter()
        .filter(|file| EntryId::from_file_name(&file.name).is_some_and(|number| number <= last))
        .collect();
    Ok(verify_files(repo, &files))
}

/// What `oracle register verify` reports: whether the chain is sound, what is wrong with it and
/// what could not be checked.
#[derive(Debug, Clone, Serialize)]
pub struct VerifySummary {
    /// Whether the register passed every check.
    pub ok: bool,
    /// Entry files found.
    pub n: usize,
    /// sha256 of the newest entry file.
    pub head: Sha256Hex,
    /// Everything that is wrong.
    pub errors: Vec<Finding>,
    /// Rules the repository could not answer.
    pub unchecked: Vec<Finding>,
}

/// Verifies the register of `repo`; with `expect_head`, also that its head is that sha256
/// (pinned by an auditor outside the chain).
///
/// # Errors
/// [`AppendError::Io`] when the register cannot be read, [`AppendError::NoRegister`] when it
/// holds no entries: nothing checked is no evidence of a sound register.
pub fn verify_register(
    repo: &Path,
    expect_head: Option<&str>,
) -> Result<VerifySummary, AppendError> {
    let files = read_files(repo)?;
    if files.is_empty() {
        let dir = repo.join(REGISTER_DIR);
        return Err(AppendError::NoRegister {
            exists: dir.is_dir(),
            dir,
        });
    }
    let mut audit = verify_files(repo, &files);
    if let Some(expected) = expect_head.filter(|expected| *expected != audit.head.as_str()) {
        let newest = audit
            .entries
            .last()
            .and_then(|(entry, _)| entry.id)
            .map_or_else(|| "the empty register".to_owned(), |id| id.file_name());
        audit.findings.push(Finding {
            file: newest,
            message: format!(
                "head is {}, expected {expected} (entries were removed or added)",
                audit.head
            ),
        });
    }
    Ok(VerifySummary {
        ok: audit.ok(),
        n: audit.count,
        head: audit.head,
        errors: audit.findings,
        unchecked: audit.unchecked,
    })
}

impl fmt::Display for VerifySummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.errors {
            writeln!(f, "{}: {}", finding.file, finding.message)?;
        }
        for note in &self.unchecked {
            writeln!(f, "{}: unchecked: {}", note.file, note.message)?;
        }
        writeln!(f, "head={} n={}", self.head, self.n)?;
        if !self.ok {
            writeln!(f, "register verify: {} problem(s)", self.errors.len())?;
        }
        Ok(())
    }
}

/// What `oracle register show` reports without an id: every entry, as a table.
#[derive(Debug, Clone, Serialize)]
pub struct Listing<'a> {
    /// Entry files found.
    pub n: usize,
    /// sha256 of the newest entry file.
    pub head: &'a Sha256Hex,
    /// The entries that parsed, in numbering order.
    pub entries: Vec<&'a Entry>,
}

impl<'a> Listing<'a> {
    /// The listing of `audit`.
    #[must_use]
    pub fn of(audit: &'a Audit) -> Listing<'a> {
        Listing {
            n: audit.count,
            head: &audit.head,
            entries: audit.entries.iter().map(|(entry, _)| entry).collect(),
        }
    }
}

/// The first 12 digits of an id or hash, as people quote them.
fn short(text: &str) -> &str {
    &text[..text.len().min(12)]
}

/// The entry list as a fixed-width table.
impl fmt::Display for Listing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<7} {:<20} {:<11} {:<8} {:<9} {:>8} {:>8}  candidate",
            "id", "recorded_at", "profile", "path", "verdict", "gain", "loss"
        )?;
        for entry in &self.entries {
            writeln!(
                f,
                "{:<7} {:<20} {:<11} {:<8} {:<9} {:>8.2} {:>8.2}  {}",
                entry.id.map(|id| id.to_string()).unwrap_or_default(),
                entry
                    .recorded_at
                    .as_ref()
                    .map(Timestamp::as_str)
                    .unwrap_or_default(),
                entry.profile.as_deref().unwrap_or("-"),
                entry.path,
                entry.verdict,
                entry.claimed_gain_nelo,
                entry.loss_budget.used_after,
                short(entry.candidate.commit.as_str()),
            )?;
        }
        writeln!(f, "head={} n={}", self.head, self.n)
    }
}

/// What `oracle register show ID` reports: one entry; its JSON object is the entry itself.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct ShownEntry<'a> {
    /// The entry.
    pub entry: &'a Entry,
    /// Its file's sha256.
    #[serde(skip)]
    pub sha256: &'a Sha256Hex,
}

/// One entry for people: what was decided, on what evidence.
impl fmt::Display for ShownEntry<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entry = self.entry;
        let id = entry.id.map(|id| id.to_string()).unwrap_or_default();
        writeln!(
            f,
            "{id}  {}  path {}  profile {}",
            entry.verdict,
            entry.path,
            entry.profile.as_deref().unwrap_or("-")
        )?;
        writeln!(f, "  sha256       {}", self.sha256)?;
        writeln!(
            f,
            "  prev_sha256  {}",
            entry
                .prev_sha256
                .as_ref()
                .map(Sha256Hex::as_str)
                .unwrap_or("-")
        )?;
        writeln!(
            f,
            "  recorded_at  {}",
            entry
                .recorded_at
                .as_ref()
                .map(Timestamp::as_str)
                .unwrap_or("-")
        )?;
        writeln!(f, "  bound_at     {}", entry.bound_at)?;
        writeln!(f, "  claimed gain {} nElo", entry.claimed_gain_nelo)?;
        writeln!(
            f,
            "  oracle       {} ({})",
            entry.oracle.version,
            short(entry.oracle.commit.as_str())
        )?;
        writeln!(f, "  toolchain    {}", entry.toolchain)?;
        let binary = |f: &mut fmt::Formatter<'_>, role: &str, record: &BinaryRecord| {
            writeln!(
                f,
                "  {role:<12} {} tree {} binary {} bench {}",
                short(record.commit.as_str()),
                short(record.tree.as_str()),
                short(record.binary_sha256.as_str()),
                record.bench_nodes
            )
        };
        binary(f, "candidate", &entry.candidate)?;
        if let Some(predecessor) = &entry.predecessor {
            binary(f, "predecessor", predecessor)?;
        }
        if let Some(gate) = entry.gate {
            writeln!(
                f,
                "  gate         popcnt {} software popcount {}",
                gate.popcnt_in_eval, gate.software_popcount_in_eval
            )?;
        }
        if let Some(proof) = &entry.proof {
            writeln!(
                f,
                "  proof        {} predecessor {} candidate {}",
                proof.spec, proof.predecessor, proof.candidate
            )?;
        }
        for stage in &entry.stages {
            writeln!(
                f,
                "  stage {:<6} {:<12} [{}, {}] {} games penta {:?} llr {:.3} in [{:.3}, {:.3}] nElo {:.2} [{:.2}, {:.2}] → {}",
                stage.name,
                stage.tc.to_string(),
                stage.elo0,
                stage.elo1,
                stage.games,
                stage.pentanomial,
                stage.llr,
                stage.lower,
                stage.upper,
                stage.nelo,
                stage.nelo_ci95[0],
                stage.nelo_ci95[1],
                stage.state
            )?;
        }
        let budget = entry.loss_budget;
        writeln!(
            f,
            "  loss budget  {} + {} = {} of {} nElo",
            budget.used_before, budget.booked, budget.used_after, budget.limit
        )
    }
}

/// What `oracle register append` and `genesis` report when the entry went in.
#[derive(Debug, Clone, Serialize)]
pub struct Appended {
    /// Always true: the entry was appended.
    pub ok: bool,
    /// The new entry's id.
    pub id: String,
    /// The register's head after it.
    pub head: Sha256Hex,
    /// Entry files after it.
    pub n: usize,
    /// The text's verb: `appended` or `genesis`.
    #[serde(skip)]
    verb: &'static str,
}

impl Appended {
    /// The report of entry `id`, appended (`genesis`: the first entry) to the register of
    /// `repo`, read back as it now stands.
    ///
    /// # Errors
    /// [`AppendError::Io`] when the register cannot be read back.
    pub fn read_back(repo: &Path, id: String, genesis: bool) -> Result<Appended, AppendError> {
        let audit = super::store::verify(repo)?;
        Ok(Appended {
            ok: true,
            id,
            head: audit.head,
            n: audit.count,
            verb: if genesis { "genesis" } else { "appended" },
        })
    }
}

impl fmt::Display for Appended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} {}", self.verb, self.id)?;
        writeln!(f, "head={} n={}", self.head, self.n)
    }
}

/// What `oracle register append` reports when the entry was refused.
#[derive(Debug, Clone, Serialize)]
pub struct Refused {
    /// Always false: nothing was appended.
    pub ok: bool,
    /// Why.
    pub refused: String,
    /// The entry file given.
    #[serde(skip)]
    pub file: PathBuf,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "refused: {}: {}", self.file.display(), self.refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_register_without_entries_is_no_register_to_verify() {
        let repo = tempfile::tempdir().unwrap();
        let missing = verify_register(repo.path(), None).unwrap_err().to_string();
        assert!(
            missing.ends_with("register: does not exist; there is no register to verify"),
            "{missing}"
        );
        std::fs::create_dir(repo.path().join(REGISTER_DIR)).unwrap();
        let empty = verify_register(repo.path(), None).unwrap_err().to_string();
        assert!(
            empty.ends_with("register: holds no entries; there is no register to verify"),
            "{empty}"
        );
    }
}
