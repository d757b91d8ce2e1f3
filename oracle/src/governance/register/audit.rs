//! Checks a whole register from its files' bytes: numbering, hash chain,
//! schema, canonical form, timestamps, and that every verdict follows from
//! the entry's own evidence. Every finding names the entry file at fault.

use crate::governance::constitution::LossTolerance;
use crate::governance::entry::{
    Entry, EntryId, MAX_STAGE_PAIRS, PathKind, ProofOutcome, StageState, Verdict,
};
use crate::governance::hash::Sha256Hex;
use crate::governance::replay::replay_statistics;
use crate::governance::verdict::{Decision, Evidence, decide};

/// One file found in `register/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterFile {
    /// File name inside `register/`.
    pub name: String,
    /// Its exact bytes.
    pub bytes: Vec<u8>,
}

/// A problem with the register, attributed to one file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The entry file (or expected file) at fault.
    pub file: String,
    /// What is wrong.
    pub message: String,
}

/// The result of auditing a register.
#[derive(Debug, Clone)]
pub struct Audit {
    /// Entries that parsed, in numbering order, with their files' sha256.
    pub entries: Vec<(Entry, Sha256Hex)>,
    /// Entry files found (parsed or not).
    pub count: usize,
    /// sha256 of the newest entry file's bytes; 64 zeros for an empty register.
    pub head: Sha256Hex,
    /// Everything that is wrong; empty when the register is sound.
    pub findings: Vec<Finding>,
    /// Rules that could not be checked with what the repository holds (a shallow clone, no
    /// git); they do not make the register unsound, they limit what its verification showed.
    pub unchecked: Vec<Finding>,
}

impl Audit {
    /// Whether the register passed every check.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.findings.is_empty()
    }

    /// The newest entry that parsed, if the register is not empty.
    #[must_use]
    pub fn last(&self) -> Option<&Entry> {
        self.entries.last().map(|(entry, _)| entry)
    }

    /// The entry of the current engine: the newest whose verdict let its candidate land
    /// (genesis, Gewinn, Korrektur, Gleich); an Abgelehnt entry leaves the engine as it was.
    #[must_use]
    pub fn current_engine(&self) -> Option<&Entry> {
        current_engine(&self.entries)
    }
}

/// The current engine after `entries` (oldest first): the newest whose verdict let its candidate
/// land (genesis, Gewinn, Korrektur, Gleich).
#[must_use]
pub fn current_engine(entries: &[(Entry, Sha256Hex)]) -> Option<&Entry> {
    entries
        .iter()
        .rev()
        .map(|(entry, _)| entry)
        .find(|entry| entry.verdict.lands())
}

/// Audits the files of a register directory (hidden files are not passed in).
#[must_use]
pub fn audit(files: &[RegisterFile]) -> Audit {
    let mut findings = Vec::new();
    let mut numbered: Vec<(EntryId, &RegisterFile)> = Vec::new();
    for file in files {
        match EntryId::from_file_name(&file.name) {
            Some(id) => numbered.push((id, file)),
            None => findings.push(finding(
                &file.name,
                "is not a register entry name (T-NNNN.yaml)",
            )),
        }
    }
    numbered.sort_by_key(|(id, _)| *id);

    let mut entries: Vec<(Entry, Sha256Hex)> = Vec::new();
    let mut prev_hash = Sha256Hex::zero();
    let mut prev_name: Option<String> = None;
    let mut seen_prevs: Vec<(Sha256Hex, String)> = Vec::new();
    for (position, (id, file)) in numbered.iter().enumerate() {
        let expected = EntryId::new(u32::try_from(position + 1).unwrap_or(u32::MAX));
        if *id != expected {
            findings.push(finding(
                &expected.file_name(),
                &format!("is missing: numbering jumps to {}", file.name),
            ));
        }
        let hash = Sha256Hex::of(&file.bytes);
        let mut report = |message: String| {
            findings.push(Finding {
                file: file.name.clone(),
                message,
            })
        };
        match Entry::parse(&file.bytes) {
            Err(error) => report(format!("schema: {error}")),
            Ok(entry) => {
                check_canonical(&entry, &file.bytes, &mut report);
                check_chain(
                    &entry,
                    *id,
                    &prev_hash,
                    prev_name.as_deref(),
                    &seen_prevs,
                    &mut report,
                );
                check_times(&entry, entries.last().map(|(e, _)| e), &mut report);
                check_shape(&entry, *id, &mut report);
                check_stages(&entry, &mut report);
                let used_before = entries
                    .last()
                    .map_or(0.0, |(e, _)| e.loss_budget.used_after);
                check_verdict(&entry, used_before, &mut report);
                for check in replay_statistics(&entry, used_before) {
                    if !check.pass {
                        report(format!("recomputed {}: {}", check.name, check.detail));
                    }
                }
                if let Some(prev) = &entry.prev_sha256 {
                    seen_prevs.push((prev.clone(), file.name.clone()));
                }
                entries.push((entry, hash.clone()));
            }
        }
        prev_hash = hash;
        prev_name = Some(file.name.clone());
    }
    Audit {
        entries,
        count: numbered.len(),
        head: prev_hash,
        findings,
        unchecked: Vec::new(),
    }
}

/// A finding about `file`.
fn finding(file: &str, message: &str) -> Finding {
    Finding {
        file: file.to_owned(),
        message: message.to_owned(),
    }
}

/// The stored bytes must be exactly the canonical serialization of what they say.
fn check_canonical(entry: &Entry, bytes: &[u8], report: &mut impl FnMut(String)) {
    match entry.to_canonical() {
        Err(error) => report(format!("no canonical form: {error}")),
        Ok(canonical) if canonical.as_bytes() == bytes => {}
        Ok(canonical) => {
            let stored = String::from_utf8_lossy(bytes);
            let mut stored_lines = stored.lines();
            let mut canonical_lines = canonical.lines();
            let mut line = 1;
            loop {
                match (stored_lines.next(), canonical_lines.next()) {
                    (Some(a), Some(b)) if a == b => line += 1,
                    (found, expected) => {
                        report(format!(
                            "not in canonical form: line {line} is `{}`, canonical is `{}`",
                            found.unwrap_or("<end of file>"),
                            expected.unwrap_or("<end of file>")
                        ));
                        break;
                    }
                }
            }
        }
    }
}

/// The id must match the file, and `prev_sha256` the previous file's bytes.
fn check_chain(
    entry: &Entry,
    id: EntryId,
    prev_hash: &Sha256Hex,
    prev_name: Option<&str>,
    seen_prevs: &[(Sha256Hex, String)],
    report: &mut impl FnMut(String),
) {
    match entry.id {
        None => report("field `id` is null".into()),
        Some(recorded) if recorded != id => {
            report(format!("field `id` is {recorded} but the file is {id}"))
        }
        Some(_) => {}
    }
    let Some(prev) = &entry.prev_sha256 else {
        return report("field `prev_sha256` is null".into());
    };
    if prev == prev_hash {
        return;
    }
    let what = prev_name.map_or_else(
        || "64 zeros (genesis)".to_owned(),
        |name| format!("sha256 of {name} {prev_hash}"),
    );
    let duplicate = seen_prevs
        .iter()
        .find(|(seen, _)| seen == prev)
        .map(|(_, name)| format!("; it repeats the prev_sha256 of {name}"))
        .unwrap_or_default();
    report(format!(
        "chain broken: prev_sha256 is {prev}, expected {what}{duplicate}"
    ));
}

/// `recorded_at` never goes back, and hashes are bound before the entry is recorded.
fn check_times(entry: &Entry, previous: Option<&Entry>, report: &mut impl FnMut(String)) {
    let Some(recorded) = &entry.recorded_at else {
        return report("field `recorded_at` is null".into());
    };
    if entry.bound_at > *recorded {
        report(format!(
            "bound_at {} is after recorded_at {recorded}",
            entry.bound_at
        ));
    }
    if let Some(earlier) = previous.and_then(|p| p.recorded_at.as_ref())
        && recorded < earlier
    {
        report(format!(
            "recorded_at {recorded} is before the previous entry's {earlier}"
        ));
    }
}

/// Which parts each path must and must not have.
fn check_shape(entry: &Entry, id: EntryId, report: &mut impl FnMut(String)) {
    let genesis = entry.path == PathKind::Genesis;
    if genesis != (id.number() == 1) {
        report("path `genesis` belongs to T-0001 and only there".into());
    }
    let present = [
        ("profile", entry.profile.is_some()),
        ("predecessor", entry.predecessor.is_some()),
        ("gate", entry.gate.is_some()),
        ("stages", !entry.stages.is_empty()),
    ];
    for (field, is_present) in present {
        if is_present == genesis {
            let rule = if genesis {
                "must be empty at genesis"
            } else {
                "is required on a tested path"
            };
            report(format!("field `{field}` {rule}"));
        }
    }
    if entry.proof.is_some() != (entry.path == PathKind::Randfall) {
        report("field `proof` is required on the Randfall path and only there".into());
    }
    match &entry.confirmation {
        Some(_) if entry.path != PathKind::Randfall => {
            report("field `confirmation` belongs to the Randfall path only".into());
        }
        Some(confirmation) => {
            for problem in confirmation.problems(entry.proof.as_ref()) {
                report(problem);
            }
        }
        None if entry.verdict == Verdict::Korrektur => report(
            "verdict korrektur without field `confirmation`: Annex A3.3 needs the independent \
             confirmation, checked by `oracle verify --confirmation`"
                .into(),
        ),
        None => {}
    }
    if entry.verdict == Verdict::Gleich && !identical_binaries(entry) {
        report(format!(
            "verdict gleich needs bit-identical binaries, but the candidate is {} and the predecessor {}",
            entry.candidate.binary_sha256,
            entry
                .predecessor
                .as_ref()
                .map_or("absent".to_owned(), |p| p.binary_sha256.to_string())
        ));
    }
    let accepted = entry.verdict.lands() && entry.verdict != Verdict::Genesis;
    if let Some(gate) = entry.gate.filter(|_| accepted)
        && (!gate.popcnt_in_eval || gate.software_popcount_in_eval)
    {
        report(format!("verdict {} with a failed gate", entry.verdict));
    }
}

/// Each stage's counts agree with each other and with its state.
fn check_stages(entry: &Entry, report: &mut impl FnMut(String)) {
    // A Randfall change whose proof does not fail→pass is not measured at all.
    let proof_held = entry.proof.as_ref().is_none_or(|proof| {
        (proof.predecessor, proof.candidate) == (ProofOutcome::Fail, ProofOutcome::Pass)
    });
    // Bit-identical binaries whose games were skipped (Article 2.4, verdict Gleich).
    let skipped = identical_binaries(entry)
        && entry
            .stages
            .iter()
            .all(|stage| stage.state == StageState::NotRun);
    let mut stopped = !proof_held || skipped;
    for stage in &entry.stages {
        let name = &stage.name;
        match stage.counted_pairs() {
            Some(pairs) if stage.pairs == pairs && stage.games == 2 * pairs => {}
            Some(pairs) => report(format!(
                "stage `{name}`: pentanomial sums to {pairs} pairs, recorded {} pairs and {} games",
                stage.pairs, stage.games
            )),
            None => report(format!(
                "stage `{name}`: pentanomial sums to more than {MAX_STAGE_PAIRS} pairs"
            )),
        }
        let ran = stage.state != StageState::NotRun;
        if ran == stopped {
            report(format!(
                "stage `{name}`: ended {} but {}",
                stage.state,
                if stopped {
                    "an earlier step failed"
                } else {
                    "every earlier step passed"
                }
            ));
        }
        if ran != stage.pgn_sha256.is_some() || (!ran && stage.counted_pairs() != Some(0)) {
            report(format!(
                "stage `{name}`: a stage has a PGN and games exactly when it ran"
            ));
        }
        if stage.state == StageState::Undecided && stage.games < stage.max_games {
            report(format!(
                "stage `{name}`: undecided after {} of {} games",
                stage.games, stage.max_games
            ));
        }
        stopped |= !stage.state.passed();
    }
}

/// The recorded verdict, claimed gain and loss budget are what [`decide`] derives.
fn check_verdict(entry: &Entry, used_before: f64, report: &mut impl FnMut(String)) {
    let budget = entry.loss_budget;
    if budget.used_before.to_bits() != used_before.to_bits() {
        report(format!(
            "loss_budget.used_before is {}, the previous entry left {used_before}",
            budget.used_before
        ));
    }
    let decision = decide_recorded(entry, budget.used_before);
    if decision.verdict != entry.verdict {
        report(format!(
            "verdict {} does not follow from the evidence, which gives {} ({})",
            entry.verdict, decision.verdict, decision.reason
        ));
    }
    if decision.claimed_gain_nelo.to_bits() != entry.claimed_gain_nelo.to_bits() {
        report(format!(
            "claimed_gain_nelo is {}, the evidence gives {}",
            entry.claimed_gain_nelo, decision.claimed_gain_nelo
        ));
    }
    if decision.loss_booked.to_bits() != budget.booked.to_bits()
        || decision.loss_used_after.to_bits() != budget.used_after.to_bits()
    {
        report(format!(
            "loss_budget books {} to {}, the evidence gives {} to {}",
            budget.booked, budget.used_after, decision.loss_booked, decision.loss_used_after
        ));
    }
}

/// Whether the entry's candidate binary is bit-identical to its predecessor's.
#[must_use]
pub fn identical_binaries(entry: &Entry) -> bool {
    entry
        .predecessor
        .as_ref()
        .is_some_and(|predecessor| predecessor.binary_sha256 == entry.candidate.binary_sha256)
}

/// The decision that the entry's recorded evidence implies.
#[must_use]
pub fn decide_recorded(entry: &Entry, used_before: f64) -> Decision {
    let states: Vec<StageState> = entry.stages.iter().map(|stage| stage.state).collect();
    decide(&Evidence {
        path: entry.path,
        proof: entry
            .proof
            .as_ref()
            .map(|proof| (proof.predecessor, proof.candidate)),
        stages: &states,
        identical_binaries: identical_binaries(entry),
        final_stage_nelo: entry.final_stage().map_or(0.0, |stage| stage.nelo),
        loss_used_before: used_before,
        tolerance: LossTolerance {
            booking: entry.loss_budget.booking,
            limit_nelo: entry.loss_budget.limit,
        },
    })
}
