//! The independent confirmation of a Randfall change (constitution Annex A3.3) as a register
//! entry records it, and the checks that need no git history: the confirmer is written
//! `Name <email>`, each statement is one non-empty paragraph, and the confirmed proof spec is the
//! one the oracle ran. That the confirmer is not the change's author is checked where the
//! commits can be read (`oracle verify`, `oracle register replay`).

use serde::{Deserialize, Serialize};

use crate::governance::entry::ProofRecord;
use crate::governance::hash::Sha256Hex;

/// Who confirmed a Randfall change, what they confirmed and which file said so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmationRecord {
    /// The confirmer as `Name <email>`; never the candidate's author or committer.
    pub confirmed_by: String,
    /// sha256 of the proof spec the confirmer read; equal to the entry's `proof.spec_sha256`.
    pub proof_sha256: Sha256Hex,
    /// The three reasons Annex A3.3 asks for.
    pub statements: Statements,
    /// sha256 of the confirmation file's bytes as the maintainer handed it to `oracle verify`.
    pub file_sha256: Sha256Hex,
}

/// The confirmer's three reasons, each one non-empty paragraph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Statements {
    /// Why the proof shows what the change claims (it fails before and passes after for the
    /// right reason).
    pub proof_meaningful: String,
    /// Why the class of positions the change affects is rare.
    pub class_rare: String,
    /// Why the change belongs on the Randfall path (a documented bug or a delimited class).
    pub classification_right: String,
}

impl Statements {
    /// Each statement with its field name, in the file's order.
    #[must_use]
    pub fn named(&self) -> [(&'static str, &str); 3] {
        [
            ("proof_meaningful", &self.proof_meaningful),
            ("class_rare", &self.class_rare),
            ("classification_right", &self.classification_right),
        ]
    }

    /// The first statement that is not one non-empty paragraph, with why.
    #[must_use]
    pub fn first_problem(&self) -> Option<(&'static str, &'static str)> {
        self.named().into_iter().find_map(|(name, text)| {
            if text.trim().is_empty() {
                Some((name, "is empty; give the reason in one paragraph"))
            } else if text.trim().lines().any(|line| line.trim().is_empty()) {
                Some((name, "has more than one paragraph; give one"))
            } else {
                None
            }
        })
    }
}

impl ConfirmationRecord {
    /// Everything wrong with the record on its own and against the entry's proof, as
    /// `field …: why` messages.
    #[must_use]
    pub fn problems(&self, proof: Option<&ProofRecord>) -> Vec<String> {
        let mut problems = Vec::new();
        if let Err(why) = confirmer_email(&self.confirmed_by) {
            problems.push(format!("field `confirmation.confirmed_by` {why}"));
        }
        if let Some((name, why)) = self.statements.first_problem() {
            problems.push(format!("field `confirmation.statements.{name}` {why}"));
        }
        match proof {
            Some(proof) if proof.spec_sha256 != self.proof_sha256 => problems.push(format!(
                "field `confirmation.proof_sha256` is {}, but the proof run ({}) has spec_sha256 {}",
                self.proof_sha256, proof.spec, proof.spec_sha256
            )),
            Some(_) => {}
            None => problems.push("field `confirmation` without a proof to confirm".to_owned()),
        }
        problems
    }
}

/// The email of `Name <email>`, or why the text is not of that form.
///
/// # Errors
/// A message completing "field … ": no name, no `<…>` at the end, or not an address.
pub fn confirmer_email(confirmed_by: &str) -> Result<&str, String> {
    let malformed = || format!("is `{confirmed_by}`, not `Name <email>`");
    let (name, rest) = confirmed_by.split_once('<').ok_or_else(malformed)?;
    let email = rest.strip_suffix('>').ok_or_else(malformed)?;
    let address = email.split_once('@').filter(|(local, domain)| {
        !local.is_empty()
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
    });
    let clean = |text: &str| !text.contains(['<', '>']) && !text.chars().any(char::is_whitespace);
    if name.trim().is_empty() || name.contains('>') || address.is_none() || !clean(email) {
        return Err(malformed());
    }
    Ok(email)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governance::entry::ProofOutcome;

    fn record() -> ConfirmationRecord {
        ConfirmationRecord {
            confirmed_by: "Ada Reviewer <ada@reviewer.example>".into(),
            proof_sha256: Sha256Hex::of(b"spec"),
            statements: Statements {
                proof_meaningful: "It fails before and passes after.".into(),
                class_rare: "KBNK is rare.".into(),
                classification_right: "A delimited class.".into(),
            },
            file_sha256: Sha256Hex::of(b"file"),
        }
    }

    fn proof(spec: &[u8]) -> ProofRecord {
        ProofRecord {
            spec: "engine/proofs/kbnk.yaml".into(),
            spec_sha256: Sha256Hex::of(spec),
            predecessor: ProofOutcome::Fail,
            candidate: ProofOutcome::Pass,
            detail: Vec::new(),
        }
    }

    #[test]
    fn confirmer_must_be_name_and_email() {
        assert_eq!(
            confirmer_email("Ada Reviewer <ada@reviewer.example>"),
            Ok("ada@reviewer.example")
        );
        for bad in [
            "ada@reviewer.example",
            "<ada@reviewer.example>",
            "  <ada@reviewer.example>",
            "Ada <ada>",
            "Ada <@reviewer.example>",
            "Ada <ada@example>",
            "Ada <ada @reviewer.example>",
            "Ada <ada@reviewer.example> trailing",
            "Ada <<ada@reviewer.example>>",
        ] {
            assert!(confirmer_email(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_sound_record_has_no_problems_and_each_fault_is_named() {
        assert!(record().problems(Some(&proof(b"spec"))).is_empty());
        let problems = record().problems(Some(&proof(b"other spec")));
        assert!(
            problems[0].starts_with("field `confirmation.proof_sha256`"),
            "{problems:?}"
        );
        assert_eq!(record().problems(None).len(), 1);
        let mut empty = record();
        empty.statements.class_rare = " \n".into();
        empty.confirmed_by = "ada@reviewer.example".into();
        let problems = empty.problems(Some(&proof(b"spec")));
        assert!(problems[0].contains("confirmed_by"), "{problems:?}");
        assert!(
            problems[1].contains("statements.class_rare` is empty"),
            "{problems:?}"
        );
        let mut two = record();
        two.statements.proof_meaningful = "One.\n\nTwo.".into();
        assert!(two.problems(Some(&proof(b"spec")))[0].contains("more than one paragraph"));
    }
}
