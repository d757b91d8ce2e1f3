//! One register entry (docs/architecture.md): the fixed struct the canonical
//! YAML is written from, and its consistency rules.
//!
//! `id`, `prev_sha256` and `recorded_at` may be `null` in a draft (the entry
//! `oracle verify` writes before it knows where it will land); `register
//! append` fills them under the register's lock. In the register they are set.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::governance::text::deserialize_via_try_from;
use thiserror::Error;

use crate::governance::canonical::{CanonicalError, to_canonical_yaml};
use crate::governance::confirmation::ConfirmationRecord;
use crate::governance::constitution::LossBooking;
use crate::governance::hash::{GitId, Sha256Hex};
use crate::governance::timestamp::Timestamp;
use crate::play::clock::TimeControl;
use crate::play::tally::FaultCounts;
use crate::stats::SprtParams;

/// A register entry as stored in `register/T-NNNN.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// `T-NNNN`, equal to the file name.
    pub id: Option<EntryId>,
    /// sha256 of the previous entry file's exact bytes; 64 zeros at genesis.
    pub prev_sha256: Option<Sha256Hex>,
    /// When the entry was appended.
    pub recorded_at: Option<Timestamp>,
    /// The constitution profile measured under; `null` at genesis.
    pub profile: Option<String>,
    /// Genesis, Standard or Randfall.
    pub path: PathKind,
    /// The decision.
    pub verdict: Verdict,
    /// Stage-2 nElo estimate for a Gewinn, 0 otherwise.
    pub claimed_gain_nelo: f64,
    /// sha256 of the constitution file that judged the change.
    pub constitution_sha256: Sha256Hex,
    /// The oracle that judged.
    pub oracle: OracleRecord,
    /// `rustc -V` of the toolchain both engines were built with.
    pub toolchain: String,
    /// The change under test.
    pub candidate: BinaryRecord,
    /// What it is measured against; `null` at genesis.
    pub predecessor: Option<BinaryRecord>,
    /// When both binaries' hashes were fixed, before any measurement.
    pub bound_at: Timestamp,
    /// The build-shape gate on the candidate; `null` at genesis.
    pub gate: Option<GateRecord>,
    /// The Randfall proof; `null` on the other paths.
    pub proof: Option<ProofRecord>,
    /// The independent confirmation of a Randfall change (Annex A3.3); absent on the other
    /// paths and in entries written before the oracle checked it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<ConfirmationRecord>,
    /// Every stage of the profile, in order (`not_run` after a stage that failed).
    pub stages: Vec<StageRecord>,
    /// The cumulative loss tolerance before and after this entry.
    pub loss_budget: LossBudget,
    /// How the builds and the engines were isolated; absent in entries written before the
    /// oracle recorded it (T-0001).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<IsolationRecord>,
}

/// The isolation actually used, in words that name the tool, its version and what it cut off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsolationRecord {
    /// Both builds (the candidate's `build.rs` and proc-macros run here).
    pub build: String,
    /// Every engine process: bench, proof players, match games.
    pub play: String,
}

/// Faults of both engines in one stage: evidence, counted apart from the results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageFaults {
    /// The candidate's (they are also its lost games).
    pub candidate: FaultCounts,
    /// The predecessor's (a registered binary: the constitution's limit voids the stage).
    pub predecessor: FaultCounts,
}

/// The path a change took (docs/architecture.md, "The path of a change").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// The first entry: the engine as it stood when the register began; no test.
    Genesis,
    /// A change that lands only with a found gain.
    Standard,
    /// Annex A3: a documented bug fix or a clearly delimited rare position class.
    Randfall,
}

/// The oracle's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The genesis entry's verdict: recorded, not tested.
    Genesis,
    /// Standard path: both stages found the gain.
    Gewinn,
    /// Randfall path: proof, non-regression and loss tolerance all hold; claimed gain 0.
    Korrektur,
    /// Standard path, constitution version 3 on (Article 2.4): the candidate's binary is
    /// bit-identical to its predecessor's, so no game is played; it lands with a claimed gain of 0.
    Gleich,
    /// Anything else.
    Abgelehnt,
}

impl Verdict {
    /// The verdict as entries, JSON and CSS classes spell it (`gewinn`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Genesis => "genesis",
            Self::Gewinn => "gewinn",
            Self::Korrektur => "korrektur",
            Self::Gleich => "gleich",
            Self::Abgelehnt => "abgelehnt",
        }
    }

    /// The verdict as reports and pages title it (`Gewinn`).
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            Self::Genesis => "Genesis",
            Self::Gewinn => "Gewinn",
            Self::Korrektur => "Korrektur",
            Self::Gleich => "Gleich",
            Self::Abgelehnt => "Abgelehnt",
        }
    }

    /// Whether the candidate lands: the register's current engine becomes it.
    #[must_use]
    pub fn lands(self) -> bool {
        self != Self::Abgelehnt
    }
}

/// Version and provenance of the oracle binary that judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleRecord {
    /// The oracle crate's version.
    pub version: String,
    /// The commit the oracle was built from, as embedded at build time; `unknown` when the build
    /// could not tell (never a guess).
    pub commit: OracleCommit,
    /// Whether the oracle's sources had uncommitted changes when it was built (so the binary is
    /// not exactly `commit`'s); absent when unknown and in entries written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
    /// sha256 of the oracle executable that judged, read from the running process; absent in
    /// entries written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_sha256: Option<Sha256Hex>,
}

/// The commit an oracle binary was built from: a full id, or `unknown` when its build had no git.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub enum OracleCommit {
    /// Embedded at build time (`ORACLE_BUILD_COMMIT` or the work tree's `HEAD`).
    Known(GitId),
    /// The build could not tell; the entry's `oracle.binary_sha256` still names the binary.
    Unknown,
}

impl OracleCommit {
    /// The spelling of [`OracleCommit::Unknown`] in entries.
    pub const UNKNOWN: &str = "unknown";

    /// The commit id, if known.
    #[must_use]
    pub fn known(&self) -> Option<&GitId> {
        match self {
            Self::Known(id) => Some(id),
            Self::Unknown => None,
        }
    }

    /// The id, or `unknown`, as entries write it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        self.known().map_or(Self::UNKNOWN, GitId::as_str)
    }
}

impl TryFrom<String> for OracleCommit {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        if text == Self::UNKNOWN {
            return Ok(Self::Unknown);
        }
        GitId::try_from(text)
            .map(Self::Known)
            .map_err(|e| format!("{e}, nor `{}`", Self::UNKNOWN))
    }
}

impl From<OracleCommit> for String {
    fn from(commit: OracleCommit) -> Self {
        commit.as_str().to_owned()
    }
}

impl fmt::Display for OracleCommit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One engine binary, bound to its sources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BinaryRecord {
    /// The commit.
    pub commit: GitId,
    /// Its tree.
    pub tree: GitId,
    /// sha256 of the binary built from it.
    pub binary_sha256: Sha256Hex,
    /// Its bench signature (nodes).
    pub bench_nodes: u64,
}

/// The gate's findings on the candidate's evaluation code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateRecord {
    /// POPCNT instructions are present.
    pub popcnt_in_eval: bool,
    /// The software popcount sequence is present.
    pub software_popcount_in_eval: bool,
}

/// The machine-checkable proof of a Randfall change, run by the oracle on both binaries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofRecord {
    /// The proof spec file named by the `Oracle-Proof:` trailer.
    pub spec: String,
    /// sha256 of the spec's bytes.
    pub spec_sha256: Sha256Hex,
    /// Outcome on the predecessor (must be `fail`).
    pub predecessor: ProofOutcome,
    /// Outcome on the candidate (must be `pass`).
    pub candidate: ProofOutcome,
    /// One line per position and repetition, as the proof runner reports them.
    pub detail: Vec<String>,
}

/// Whether a proof passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProofOutcome {
    /// Every criterion held.
    Pass,
    /// At least one did not.
    Fail,
}

/// One SPRT stage as measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageRecord {
    /// The stage's name in the profile.
    pub name: String,
    /// Clock or node limit, in the constitution's text form.
    #[serde(with = "crate::governance::time_control")]
    pub tc: TimeControl,
    /// Opening book path.
    pub book: String,
    /// The book's sha256 as checked before the stage.
    pub book_sha256: Sha256Hex,
    /// H0 in nElo.
    pub elo0: f64,
    /// H1 in nElo.
    pub elo1: f64,
    /// Type I error rate.
    pub alpha: f64,
    /// Type II error rate.
    pub beta: f64,
    /// Game pairs per SPRT look.
    pub batch_size: u32,
    /// Pairs per look when they differ from `batch_size`: a sharded stage looks once per round,
    /// one pair per shard. It limits the overshoot correction a replay accepts; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look_pairs: Option<u64>,
    /// Games after which the stage ends undecided.
    pub max_games: u64,
    /// Pentanomial pair counts `[LL, LD+DL, DD+WL+LW, WD+DW, WW]` from the candidate's side.
    pub pentanomial: [u64; 5],
    /// Game pairs played.
    pub pairs: u64,
    /// Games played (twice the pairs).
    pub games: u64,
    /// Log-likelihood ratio at the end.
    pub llr: f64,
    /// Lower decision bound at the final look (accept H0 below): Wald's, raised by the overshoot
    /// correction in force then.
    pub lower: f64,
    /// Upper decision bound at the final look (accept H1 above): Wald's, lowered by the overshoot
    /// correction in force then.
    pub upper: f64,
    /// How the stage ended.
    pub state: StageState,
    /// nElo estimate.
    pub nelo: f64,
    /// Its 95% interval.
    pub nelo_ci95: [f64; 2],
    /// sha256 of the stage's PGN; `null` when the stage did not run.
    pub pgn_sha256: Option<Sha256Hex>,
    /// Engine faults of the stage; absent when it did not run and in entries written before
    /// the oracle recorded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<StageFaults>,
    /// The stage's first pairs when earlier runs of the same match played them and this run
    /// took them over (`oracle verify --games-from`); absent when this run played every pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<AdoptedPairs>,
}

/// Pairs of a stage played by earlier runs of the same match: the same two bound binaries, book,
/// seed, clock and SPRT, so the same games, under another candidate commit (a change submitted
/// again) or another oracle invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdoptedPairs {
    /// Pairs taken over: the stage's first ones, counted in `pentanomial` like the rest.
    pub pairs: u64,
    /// Games those runs played, including those of a pair cut off before it was counted.
    pub games_played: u64,
    /// The runs that played them, oldest first, with the pairs each added.
    pub runs: Vec<EarlierRun>,
}

/// One earlier run whose pairs a stage took over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EarlierRun {
    /// The candidate commit that run verified.
    pub candidate: GitId,
    /// Its predecessor commit.
    pub predecessor: GitId,
    /// When that run bound the binaries (before its first game).
    pub bound_at: Timestamp,
    /// The pairs of the stage that run played.
    pub pairs: u64,
}

/// How a stage ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageState {
    /// The SPRT accepted H1: passed.
    AcceptH1,
    /// The SPRT accepted H0: not passed.
    AcceptH0,
    /// `max_games` were played without a decision: not passed.
    Undecided,
    /// Not played because an earlier stage did not pass.
    NotRun,
    /// At a node limit, every pair from the minimum games on repeated its first game in its
    /// second: the engines play alike there, so the stage cannot tell them apart (Article 2.5).
    /// Passed, but it finds no gain: a later stage must accept H1.
    Indistinguishable,
    /// The candidate faulted more often than the profile's `fault_limits` allow (Article 6.6,
    /// version 6): not passed, whatever the SPRT said; its faulted games are its losses.
    CandidateFaulted,
}

impl StageState {
    /// Whether a stage that ended so lets the next stage run (accepted H1, or indistinguishable).
    #[must_use]
    pub fn passed(self) -> bool {
        matches!(self, Self::AcceptH1 | Self::Indistinguishable)
    }
}

/// The cumulative loss tolerance around this entry, in nElo.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossBudget {
    /// The booking rule in force.
    pub booking: LossBooking,
    /// Loss booked by this entry.
    pub booked: f64,
    /// Total booked by all earlier entries.
    pub used_before: f64,
    /// `used_before + booked`.
    pub used_after: f64,
    /// The constitution's limit in force.
    pub limit: f64,
}

/// An entry number, written `T-0001`, `T-0002`, … (more digits after `T-9999`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "String")]
pub struct EntryId(u32);

impl EntryId {
    /// The id of entry number `number` (1 is genesis).
    #[must_use]
    pub fn new(number: u32) -> Self {
        Self(number)
    }

    /// The entry's number.
    #[must_use]
    pub fn number(self) -> u32 {
        self.0
    }

    /// The entry's file name inside `register/`.
    #[must_use]
    pub fn file_name(self) -> String {
        format!("{self}.yaml")
    }

    /// The id named by a register file name, if it is one.
    #[must_use]
    pub fn from_file_name(name: &str) -> Option<Self> {
        name.strip_suffix(".yaml")
            .and_then(|stem| Self::try_from(stem.to_owned()).ok())
    }
}

impl TryFrom<String> for EntryId {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        let parsed = text
            .strip_prefix("T-")
            .filter(|digits| digits.len() >= 4 && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u32>().ok())
            .filter(|&number| number > 0)
            .map(Self);
        // Only the canonical spelling is an id: `T-00001` would alias `T-0001`.
        match parsed {
            Some(id) if id.to_string() == text => Ok(id),
            _ => Err(format!("`{text}` is not an entry id (T-0001, T-0002, …)")),
        }
    }
}

impl From<EntryId> for String {
    fn from(id: EntryId) -> Self {
        id.to_string()
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T-{:04}", self.0)
    }
}

/// An entry that cannot be read.
#[derive(Debug, Error)]
pub enum EntryError {
    /// YAML syntax, a type mismatch, a missing or unknown field.
    #[error("line {line}, column {column}: {message}")]
    Schema {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message with the field path.
        message: String,
    },
    /// The entry has no canonical form.
    #[error(transparent)]
    Canonical(#[from] CanonicalError),
}

impl Entry {
    /// Parses entry YAML (register file or draft).
    ///
    /// # Errors
    /// [`EntryError::Schema`] with the position and field.
    pub fn parse(bytes: &[u8]) -> Result<Self, EntryError> {
        serde_norway::from_slice(bytes).map_err(|error| {
            let (line, column) = error
                .location()
                .map_or((0, 0), |at| (at.line(), at.column()));
            EntryError::Schema {
                line,
                column,
                message: error.to_string(),
            }
        })
    }

    /// The entry's canonical bytes: what the register stores and hashes.
    ///
    /// # Errors
    /// [`EntryError::Canonical`] for a non-finite statistic.
    pub fn to_canonical(&self) -> Result<String, EntryError> {
        Ok(to_canonical_yaml(self)?)
    }

    /// The last stage, whose nElo is the claimed gain and the booked loss.
    #[must_use]
    pub fn final_stage(&self) -> Option<&StageRecord> {
        self.stages.last()
    }
}

/// Most pairs a stage may record: the statistics compute in `f64`, exact up to 2^53, and a
/// hostile entry's counts must not overflow the sums.
pub const MAX_STAGE_PAIRS: u64 = 1 << 53;

impl StageRecord {
    /// The record of a stage that was not played (an earlier stage did not pass): its setup and
    /// SPRT bounds, no games, state `not_run`.
    #[must_use]
    pub fn not_run(
        name: String,
        tc: TimeControl,
        book: String,
        book_sha256: Sha256Hex,
        params: &SprtParams,
        batch_size: u32,
        max_games: u64,
    ) -> Self {
        Self {
            name,
            tc,
            book,
            book_sha256,
            elo0: params.elo0,
            elo1: params.elo1,
            alpha: params.alpha,
            beta: params.beta,
            batch_size,
            look_pairs: None,
            max_games,
            pentanomial: [0; 5],
            pairs: 0,
            games: 0,
            llr: 0.0,
            lower: params.lower_bound(),
            upper: params.upper_bound(),
            state: StageState::NotRun,
            nelo: 0.0,
            nelo_ci95: [0.0, 0.0],
            pgn_sha256: None,
            faults: None,
            adopted: None,
        }
    }

    /// The pairs the pentanomial counts add up to; `None` past [`MAX_STAGE_PAIRS`].
    #[must_use]
    pub fn counted_pairs(&self) -> Option<u64> {
        self.pentanomial
            .iter()
            .try_fold(0u64, |sum, &n| sum.checked_add(n))
            .filter(|&pairs| pairs <= MAX_STAGE_PAIRS)
    }

    /// Pairs per SPRT look: `look_pairs` when the stage was sharded, else `batch_size`.
    #[must_use]
    pub fn pairs_per_look(&self) -> u64 {
        self.look_pairs
            .unwrap_or_else(|| u64::from(self.batch_size))
    }
}

impl fmt::Display for PathKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Self::Genesis => "genesis",
            Self::Standard => "standard",
            Self::Randfall => "randfall",
        })
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl fmt::Display for ProofOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
        })
    }
}

impl fmt::Display for StageState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Self::AcceptH1 => "accept_h1",
            Self::AcceptH0 => "accept_h0",
            Self::Undecided => "undecided",
            Self::NotRun => "not_run",
            Self::Indistinguishable => "indistinguishable",
            Self::CandidateFaulted => "candidate_faulted",
        })
    }
}

deserialize_via_try_from!(EntryId, OracleCommit);

#[cfg(test)]
mod tests {
    use super::*;

    /// serde_norway stops at 128 levels wherever it descends without a schema (an untyped value),
    /// and a typed entry refuses the first value of the wrong shape: a deeply nested document is
    /// an error, not a stack overflow.
    #[test]
    fn a_deeply_nested_entry_is_refused_not_a_stack_overflow() {
        for depth in [200, 5_000] {
            let nested = format!("{}{}\n", "[".repeat(depth), "]".repeat(depth));
            let error = serde_norway::from_str::<serde_norway::Value>(&nested).unwrap_err();
            assert!(error.to_string().contains("recursion limit"), "{error}");
            let entry = format!("id: {nested}");
            assert!(Entry::parse(entry.as_bytes()).is_err());
        }
    }

    #[test]
    fn the_oracle_record_reads_old_entries_and_says_unknown_rather_than_guess() {
        let old: OracleRecord =
            serde_norway::from_str(&format!("version: 0.1.0\ncommit: {}\n", "a".repeat(40)))
                .unwrap();
        assert_eq!((old.dirty, &old.binary_sha256), (None, &None));
        assert_eq!(
            old.commit.known().map(GitId::as_str),
            Some("a".repeat(40).as_str())
        );
        let judge = OracleRecord {
            version: "0.1.0".into(),
            commit: OracleCommit::Unknown,
            dirty: None,
            binary_sha256: Some(Sha256Hex::of(b"oracle")),
        };
        let text = to_canonical_yaml(&judge).unwrap();
        assert_eq!(
            text,
            format!(
                "version: \"0.1.0\"\ncommit: unknown\nbinary_sha256: \"{}\"\n",
                Sha256Hex::of(b"oracle")
            )
        );
        assert_eq!(
            serde_norway::from_str::<OracleRecord>(&text).unwrap(),
            judge
        );
        let guess = serde_norway::from_str::<OracleRecord>("version: 0.1.0\ncommit: main\n");
        assert!(guess.unwrap_err().to_string().contains("nor `unknown`"));
    }

    /// Entries written before the CPU rule have no `cpu_outside_turn`: they read and write back
    /// byte for byte, and the count appears only when an engine was caught.
    #[test]
    fn stage_faults_keep_their_bytes_and_name_cpu_outside_turn_only_when_counted() {
        let block = "disconnect: 0\nstall: 0\nillegal_move: 0\ntime_forfeit: 1\n";
        let old = format!(
            "candidate:\n{}predecessor:\n{}",
            block
                .lines()
                .map(|l| format!("  {l}\n"))
                .collect::<String>(),
            block
                .lines()
                .map(|l| format!("  {l}\n"))
                .collect::<String>()
        );
        let mut faults: StageFaults = serde_norway::from_str(&old).unwrap();
        assert_eq!(faults.candidate.cpu_outside_turn, 0);
        assert_eq!(to_canonical_yaml(&faults).unwrap(), old);
        faults.candidate.cpu_outside_turn = 2;
        let new = to_canonical_yaml(&faults).unwrap();
        assert!(
            new.starts_with("candidate:\n  disconnect: 0\n  stall: 0\n  illegal_move: 0\n  time_forfeit: 1\n  cpu_outside_turn: 2\npredecessor:\n"),
            "{new}"
        );
        assert_eq!(serde_norway::from_str::<StageFaults>(&new).unwrap(), faults);
    }

    #[test]
    fn entry_ids_have_one_spelling() {
        assert_eq!(EntryId::new(7).to_string(), "T-0007");
        assert_eq!(EntryId::new(12_345).file_name(), "T-12345.yaml");
        assert_eq!(
            EntryId::from_file_name("T-0187.yaml"),
            Some(EntryId::new(187))
        );
        for bad in ["T-187", "T-00187", "T-0000", "t-0001", "T-0001.yml"] {
            assert_eq!(
                EntryId::from_file_name(&format!("{bad}.yaml")),
                None,
                "{bad}"
            );
        }
    }
}
