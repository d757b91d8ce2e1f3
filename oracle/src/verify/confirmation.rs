//! Step 2 of a Randfall run: the independent confirmation of constitution Annex A3.3, read from
//! the file the maintainer passes with `--confirmation` and held to the candidate it confirms.
//!
//! Every field is checked against what the oracle itself reads from git: the candidate commit,
//! the `Oracle-Proof` trailer, the spec's bytes at the candidate, and the emails of the people
//! who made the change (the confirmer must not be one of them).

use crate::governance::contract::EngineContract;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};
use serde::Deserialize;
use thiserror::Error;

use crate::governance::confirmation::{ConfirmationRecord, Statements, confirmer_email};
use crate::governance::hash::Sha256Hex;
use crate::integrity::{MAX_RECORD_BYTES, read_bounded};

use super::resolve::{self, ResolvedCommit};

/// The confirmation file as the maintainer writes it (docs/randfall.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmationFile {
    candidate: String,
    proof: String,
    proof_sha256: String,
    confirmed_by: String,
    statements: Statements,
}

/// A confirmation file that cannot be read, or that does not confirm this candidate.
#[derive(Debug, Error)]
pub enum ConfirmationError {
    /// The file cannot be read.
    #[error("--confirmation {}: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// YAML syntax, a missing or unknown field, a value of the wrong type.
    #[error("--confirmation {}: {message}", file.display())]
    Schema {
        /// The file.
        file: PathBuf,
        /// The parser's message with the position.
        message: String,
    },
    /// A field that does not hold for this candidate.
    #[error("--confirmation {}: field `{field}` {message}", file.display())]
    Field {
        /// The file.
        file: PathBuf,
        /// The field at fault (dotted for the statements).
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The commits the confirmer is compared with cannot be read.
    #[error("--confirmation {}: {message}", file.display())]
    Git {
        /// The file.
        file: PathBuf,
        /// What could not be read.
        message: String,
    },
}

/// A checked confirmation: the record for the entry and the file's exact bytes for `--out`.
#[derive(Debug, Clone)]
pub struct Confirmation {
    /// What the entry records.
    pub record: ConfirmationRecord,
    /// The file as given.
    pub bytes: Vec<u8>,
}

/// Reads `file` and checks it confirms `candidate`, whose `Oracle-Proof` trailer is `proof`.
///
/// # Errors
/// [`ConfirmationError`] naming the file and, where one is at fault, the field.
pub fn read(
    file: &Path,
    repo: &Repository,
    candidate: &ResolvedCommit,
    proof: &str,
    contract: &EngineContract,
) -> Result<Confirmation, ConfirmationError> {
    let bytes = read_bounded(file, MAX_RECORD_BYTES).map_err(|error| ConfirmationError::Read {
        file: file.to_owned(),
        source: error.reason,
    })?;
    let parsed: ConfirmationFile =
        serde_norway::from_slice(&bytes).map_err(|e| ConfirmationError::Schema {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
    let field = |field: &str, message: String| ConfirmationError::Field {
        file: file.to_owned(),
        field: field.to_owned(),
        message,
    };
    if parsed.candidate != candidate.commit {
        return Err(field(
            "candidate",
            format!(
                "is `{}`, but the candidate verified is {} (the full 40-hex commit id)",
                parsed.candidate, candidate.commit
            ),
        ));
    }
    if parsed.proof != proof {
        return Err(field(
            "proof",
            format!(
                "is `{}`, but the candidate's trailer is `Oracle-Proof: {proof}`",
                parsed.proof
            ),
        ));
    }
    let spec = resolve::read_file(repo, candidate, proof).map_err(|e| ConfirmationError::Git {
        file: file.to_owned(),
        message: e.to_string(),
    })?;
    let spec_sha256 = Sha256Hex::of(&spec);
    if parsed.proof_sha256 != spec_sha256.as_str() {
        return Err(field(
            "proof_sha256",
            format!(
                "is `{}`, but {proof} at the candidate hashes to {spec_sha256}; confirm the spec \
                 the oracle will run",
                parsed.proof_sha256
            ),
        ));
    }
    let email = confirmer_email(&parsed.confirmed_by).map_err(|why| field("confirmed_by", why))?;
    if let Some(role) =
        change_role(repo, candidate, email, contract).map_err(|message| ConfirmationError::Git {
            file: file.to_owned(),
            message,
        })?
    {
        return Err(field(
            "confirmed_by",
            format!(
                "<{email}> is the {role}; Annex A3.3 needs someone independent of the change's author"
            ),
        ));
    }
    if let Some((name, why)) = parsed.statements.first_problem() {
        return Err(field(&format!("statements.{name}"), why.to_owned()));
    }
    Ok(Confirmation {
        record: ConfirmationRecord {
            confirmed_by: parsed.confirmed_by,
            proof_sha256: spec_sha256,
            statements: parsed.statements,
            file_sha256: Sha256Hex::of(&bytes),
        },
        bytes,
    })
}

/// Whether `email` made the change `candidate`: the author or committer (compared without
/// regard to case) of the candidate commit, or of the commit that declares its trailers (for a
/// merge, the branch commit). `Some` names the role and the commit.
///
/// # Errors
/// A message when a commit cannot be read.
pub fn change_role(
    repo: &Repository,
    candidate: &ResolvedCommit,
    email: &str,
    contract: &EngineContract,
) -> Result<Option<String>, String> {
    let declaring =
        resolve::declaring_commit(repo, candidate, contract).map_err(|e| e.to_string())?;
    for id in [&candidate.commit, &declaring.commit] {
        let commit = Oid::from_str(id)
            .and_then(|oid| repo.find_commit(oid))
            .map_err(|e| format!("read commit {id}: {e}"))?;
        for (role, signature) in [
            ("author", commit.author()),
            ("committer", commit.committer()),
        ] {
            let same = signature
                .email()
                .is_some_and(|other| other.eq_ignore_ascii_case(email));
            if same {
                return Ok(Some(format!(
                    "{role} of commit {}",
                    id.get(..12).unwrap_or(id)
                )));
            }
        }
    }
    Ok(None)
}
