//! The constitution as the oracle enforces it: `constitution/constitution.yaml`.
//!
//! Every field is typed and unknown fields are errors, so a misspelt rule can
//! never be silently ignored. Parse errors carry the file, line, column and
//! the field's path; rules that relate two fields (game limits, unique stage
//! names) are checked after parsing and name the file and the field's path.

use std::collections::BTreeMap;
use std::fmt;
use std::num::{NonZeroU32, NonZeroU64};
use std::path::{Path, PathBuf};

use serde::de::{self, Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use thiserror::Error;

use crate::builder::BuildRecipe;
use crate::governance::contract::EngineContract;
use crate::governance::entry::StageFaults;
use crate::governance::hash::Sha256Hex;
use crate::play::clock::TimeControl;
use crate::play::game::Adjudication;
use crate::play::tally::FaultCounts;

/// Where the constitution lives inside a repository.
pub const CONSTITUTION_PATH: &str = "constitution/constitution.yaml";

/// The machine-readable rules: the engine contract (or Coherent's build and gate), profiles,
/// loss tolerance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constitution {
    /// Version of these rules; raised by every amendment.
    pub version: NonZeroU32,
    /// How both engines are built (toolchain, flags), bit-identically, when there is no
    /// `engine:` contract (then it is required; with one it must be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildRecipe>,
    /// The build-shape gate applied to the candidate binary, when there is no `engine:`
    /// contract (then it is required; with one it must be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateRules>,
    /// Named measurement profiles (`official`, `workstation`, `smoke`, …).
    pub profiles: BTreeMap<String, Profile>,
    /// The cumulative loss tolerance of the Randfall path (Annex A3).
    pub loss_tolerance: LossTolerance,
    /// What a Standard candidate whose binary is bit-identical to its predecessor's gets
    /// (Article 2.4, version 3); absent before version 3: its games are played like any other's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identical_binaries: Option<IdenticalBinaries>,
    /// The engine contract: build, scope, bench, gate and options of any UCI engine
    /// (docs/engine-contract.md). Absent: the Cargo kind of `build:` and `gate:`
    /// ([`Constitution::contract`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineContract>,
}

/// The rule for a candidate whose binary is bit-identical to its predecessor's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdenticalBinaries {
    /// No game is played; the verdict is Gleich (it lands, claimed gain 0, nothing booked).
    Gleich,
}

/// What the gate inspects in the candidate binary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateRules {
    /// Evaluation symbols whose code must use hardware POPCNT.
    pub symbols: Vec<String>,
    /// How many levels of direct callees of those symbols are inspected too.
    pub callee_depth: u32,
}

impl GateRules {
    /// Coherent's gate: `coherent_evaluate_popcnt` and its callees to depth 2.
    #[must_use]
    pub fn standard() -> Self {
        Self {
            symbols: vec![crate::gate::DEFAULT_SYMBOL.to_owned()],
            callee_depth: crate::gate::DEFAULT_CALLEE_DEPTH,
        }
    }
}

/// A measurement profile: its stages, error rates and whether its verdicts bind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Whether verdicts under this profile may enter the register.
    pub binding: bool,
    /// What the profile is for, for people choosing one.
    pub description: String,
    /// Probability of accepting H1 when H0 holds, per stage.
    pub alpha: Probability,
    /// Probability of accepting H0 when H1 holds, per stage.
    pub beta: Probability,
    /// Game pairs between two looks of the SPRT (Fishtest's batch).
    pub batch_size: NonZeroU32,
    /// When games are ended early by score (the constitution's form: `governance::adjudication`).
    #[serde(with = "super::adjudication")]
    pub adjudication: Adjudication,
    /// The stages, run in order; all must pass.
    pub stages: Vec<Stage>,
    /// Engine faults a stage may contain before it is void; required from version 2 on
    /// (version 1 had no limit, and older constitutions must still load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_limits: Option<FaultLimits>,
}

/// Article 6a: how many engine faults a stage may contain and still be evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultLimits {
    /// Disconnects and stalls of the predecessor per stage. The predecessor is a registered
    /// binary that played cleanly before; its crashes and hangs point at interference, so more
    /// than this voids the stage.
    pub predecessor_crashes: u64,
    /// All faults of the predecessor (time forfeits, illegal moves and CPU used outside its
    /// turn too), per 1000 games.
    pub predecessor_per_mille: u32,
    /// All faults of the candidate, per 1000 games. They stay its lost games; more than this
    /// fails the stage (version 6; it voided the stage before, which let a candidate that was
    /// losing end its own run by faulting and start over).
    pub candidate_per_mille: u32,
}

impl FaultLimits {
    /// Why a stage of `games` games with `faults` is void (the predecessor, a registered binary,
    /// faulted past its limits: a sign of interference), or `None` when it is evidence.
    #[must_use]
    pub fn void_reason(&self, faults: &StageFaults, games: u64) -> Option<String> {
        let crashes = faults.predecessor.disconnect + faults.predecessor.stall;
        if crashes > self.predecessor_crashes {
            return Some(format!(
                "the predecessor disconnected {} and stalled {} times (the constitution allows \
                 {} per stage)",
                faults.predecessor.disconnect, faults.predecessor.stall, self.predecessor_crashes
            ));
        }
        if over_per_mille(
            faults.predecessor.total(),
            self.predecessor_per_mille,
            games,
        ) {
            return Some(format!(
                "the predecessor faulted {} (the constitution allows {}‰)",
                fault_text(&faults.predecessor, games),
                self.predecessor_per_mille
            ));
        }
        None
    }

    /// Why the candidate of a stage of `games` games with `faults` failed it by faulting more
    /// often than allowed (Article 6.6), or `None`: its faults are its own, and its lost games
    /// a measurement of it, never a reason to measure again.
    #[must_use]
    pub fn candidate_failure(&self, faults: &StageFaults, games: u64) -> Option<String> {
        over_per_mille(faults.candidate.total(), self.candidate_per_mille, games).then(|| {
            format!(
                "the candidate faulted {} (the constitution allows {}‰)",
                fault_text(&faults.candidate, games),
                self.candidate_per_mille
            )
        })
    }
}

/// Whether `count` faults in `games` games are more than `per_mille` per 1000 games.
fn over_per_mille(count: u64, per_mille: u32, games: u64) -> bool {
    count * 1000 > u64::from(per_mille) * games
}

/// `N in G games: kinds…`.
fn fault_text(faults: &FaultCounts, games: u64) -> String {
    format!(
        "{} in {games} games: {}",
        faults.total(),
        faults.kinds_text()
    )
}

/// One SPRT stage of a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stage {
    /// Name of the stage (`short`, `long`, …), unique within its profile.
    pub name: String,
    /// Clock per game or fixed node limit per move, in the constitution's text form.
    #[serde(with = "crate::governance::time_control")]
    pub tc: TimeControl,
    /// Opening book, relative to the repository root.
    pub book: PathBuf,
    /// The book's sha256; `null` until the book is pinned, and then no stage may run.
    pub book_sha256: Option<Sha256Hex>,
    /// Games played at once on one machine (a hint; shards may differ).
    pub concurrency: NonZeroU32,
    /// Games before the SPRT may stop (even: games come in pairs).
    pub min_games: u64,
    /// Games after which an undecided stage ends as not passed (even).
    pub max_games: NonZeroU64,
    /// SPRT bounds of this stage for each path.
    pub bounds: PathBounds,
}

/// The nElo bounds of a stage for each path (standard and Randfall, docs/architecture.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathBounds {
    /// Gain test of the Standard path.
    pub standard: NeloBounds,
    /// Non-regression test of the Randfall path.
    pub randfall: NeloBounds,
}

/// SPRT hypotheses `[elo0, elo1]` in normalized Elo, `elo0 < elo1`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(into = "[f64; 2]")]
pub struct NeloBounds {
    /// H0: nElo = elo0.
    pub elo0: f64,
    /// H1: nElo = elo1.
    pub elo1: f64,
}

impl TryFrom<[f64; 2]> for NeloBounds {
    type Error = String;

    fn try_from([elo0, elo1]: [f64; 2]) -> Result<Self, Self::Error> {
        if elo0.is_finite() && elo1.is_finite() && elo0 < elo1 {
            Ok(Self { elo0, elo1 })
        } else {
            Err(format!(
                "bounds [{elo0}, {elo1}] must be finite with elo0 < elo1"
            ))
        }
    }
}

impl From<NeloBounds> for [f64; 2] {
    fn from(bounds: NeloBounds) -> Self {
        [bounds.elo0, bounds.elo1]
    }
}

/// A probability strictly between 0 and 1 (an SPRT error rate).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(into = "f64")]
pub struct Probability(f64);

impl Probability {
    /// The probability as a number.
    #[must_use]
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Probability {
    type Error = String;

    fn try_from(value: f64) -> Result<Self, Self::Error> {
        if value > 0.0 && value < 1.0 {
            Ok(Self(value))
        } else {
            Err(format!(
                "{value} is not a probability strictly between 0 and 1"
            ))
        }
    }
}

impl From<Probability> for f64 {
    fn from(probability: Probability) -> Self {
        probability.0
    }
}

/// How the loss of each accepted Randfall change is booked, and the cumulative limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossTolerance {
    /// The booking rule applied to each Korrektur.
    pub booking: LossBooking,
    /// The most nElo that all Korrektur entries together may have booked.
    pub limit_nelo: f64,
}

/// Rules for the loss a Korrektur books against the tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossBooking {
    /// `max(0, −nElo estimate of the last stage)`: the measured deficit, never a credit.
    FinalStageNeloDeficit,
}

impl LossBooking {
    /// The loss booked for a change whose last stage estimated `final_stage_nelo`.
    #[must_use]
    pub fn booked(self, final_stage_nelo: f64) -> f64 {
        match self {
            Self::FinalStageNeloDeficit => (-final_stage_nelo).max(0.0),
        }
    }
}

/// A constitution that cannot be used, naming the file and the place.
#[derive(Debug, Error)]
pub enum ConstitutionError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// YAML syntax, a type mismatch or an unknown field, with its position.
    #[error("{file}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message, including the field path.
        message: String,
    },
    /// A rule relating several fields does not hold.
    #[error("{file}: field `{field}`: {message}")]
    Invalid {
        /// The file.
        file: PathBuf,
        /// Dotted path of the field at fault.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A stage's book does not match its pinned sha256, or is not pinned yet.
    #[error("profile `{profile}`, stage `{stage}`: book {book}: {message}")]
    Book {
        /// The profile.
        profile: String,
        /// The stage.
        stage: String,
        /// The book's path.
        book: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl Constitution {
    /// Reads and checks `constitution/constitution.yaml` under `repo`.
    ///
    /// # Errors
    /// [`ConstitutionError`] naming the file and the field at fault.
    pub fn load(repo: &Path) -> Result<(Self, Sha256Hex), ConstitutionError> {
        Self::load_file(&repo.join(CONSTITUTION_PATH))
    }

    /// Reads and checks a constitution file; returns it with the sha256 of its bytes.
    ///
    /// # Errors
    /// [`ConstitutionError`] naming the file and the field at fault.
    pub fn load_file(file: &Path) -> Result<(Self, Sha256Hex), ConstitutionError> {
        let bytes = std::fs::read(file).map_err(|source| ConstitutionError::Read {
            file: file.to_owned(),
            source,
        })?;
        let constitution = Self::parse(&bytes, file)?;
        Ok((constitution, Sha256Hex::of(&bytes)))
    }

    /// Parses and checks constitution text; `file` is only used in messages.
    ///
    /// # Errors
    /// [`ConstitutionError::Parse`] or [`ConstitutionError::Invalid`].
    pub fn parse(bytes: &[u8], file: &Path) -> Result<Self, ConstitutionError> {
        let constitution: Self = serde_norway::from_slice(bytes).map_err(|error| {
            let (line, column) = error
                .location()
                .map_or((0, 0), |at| (at.line(), at.column()));
            ConstitutionError::Parse {
                file: file.to_owned(),
                line,
                column,
                message: error.to_string(),
            }
        })?;
        constitution
            .check()
            .map_err(|(field, message)| ConstitutionError::Invalid {
                file: file.to_owned(),
                field,
                message,
            })?;
        Ok(constitution)
    }

    /// The engine contract in force: the `engine:` section, or the Cargo kind that `build:` and
    /// `gate:` state (checked on load: one or the other is there).
    #[must_use]
    pub fn contract(&self) -> EngineContract {
        match (&self.engine, &self.build, &self.gate) {
            (Some(contract), _, _) => contract.clone(),
            (None, Some(recipe), Some(gate)) => EngineContract::cargo(recipe, gate),
            // Not reached for a loaded constitution; the standard recipe is Coherent's own.
            (None, recipe, gate) => EngineContract::cargo(
                &recipe.clone().unwrap_or_else(BuildRecipe::standard),
                &gate.clone().unwrap_or_else(GateRules::standard),
            ),
        }
    }

    /// The named profile.
    ///
    /// # Errors
    /// The name of a profile that does not exist, with the ones that do.
    pub fn profile(&self, name: &str) -> Result<&Profile, String> {
        self.profiles.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
            format!(
                "no profile `{name}` in the constitution (profiles: {})",
                known.join(", ")
            )
        })
    }

    /// Rules between fields; `Err((field path, message))` for the first that fails.
    fn check(&self) -> Result<(), (String, String)> {
        if self.profiles.is_empty() {
            return Err(("profiles".into(), "at least one profile is required".into()));
        }
        if !self.loss_tolerance.limit_nelo.is_finite() || self.loss_tolerance.limit_nelo < 0.0 {
            return Err((
                "loss_tolerance.limit_nelo".into(),
                "must be a finite number ≥ 0".into(),
            ));
        }
        match (&self.engine, &self.build, &self.gate) {
            (Some(contract), None, None) => contract
                .check()
                .map_err(|(field, message)| (format!("engine.{field}"), message))?,
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err((
                    if self.build.is_some() {
                        "build"
                    } else {
                        "gate"
                    }
                    .into(),
                    "the `engine:` contract states the build and the gate; leave the top-level \
                     `build:` and `gate:` out"
                        .into(),
                ));
            }
            (None, None, _) | (None, _, None) => {
                return Err((
                    if self.build.is_none() {
                        "build"
                    } else {
                        "gate"
                    }
                    .into(),
                    "required unless an `engine:` contract is given".into(),
                ));
            }
            (None, Some(_), Some(gate)) if gate.symbols.is_empty() => {
                return Err((
                    "gate.symbols".into(),
                    "at least one evaluation symbol is required".into(),
                ));
            }
            (None, Some(_), Some(_)) => {}
        }
        if self.version.get() >= 3 && self.identical_binaries.is_none() {
            return Err((
                "identical_binaries".into(),
                "required from constitution version 3 on".into(),
            ));
        }
        for (name, profile) in &self.profiles {
            if self.version.get() >= 2 && profile.fault_limits.is_none() {
                return Err((
                    format!("profiles.{name}.fault_limits"),
                    "required from constitution version 2 on".into(),
                ));
            }
            if profile.stages.is_empty() {
                return Err((
                    format!("profiles.{name}.stages"),
                    "at least one stage is required".into(),
                ));
            }
            for (index, stage) in profile.stages.iter().enumerate() {
                let field = format!("profiles.{name}.stages[{index}]");
                if profile.stages[..index]
                    .iter()
                    .any(|earlier| earlier.name == stage.name)
                {
                    return Err((
                        format!("{field}.name"),
                        format!("stage name `{}` is used twice", stage.name),
                    ));
                }
                if stage.min_games % 2 != 0 || stage.max_games.get() % 2 != 0 {
                    return Err((
                        field,
                        "min_games and max_games must be even (games come in pairs)".into(),
                    ));
                }
                if stage.min_games > stage.max_games.get() {
                    return Err((field, "min_games must not exceed max_games".into()));
                }
            }
        }
        Ok(())
    }
}

/// A profile as `oracle constitution check` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileLine {
    /// The profile's name.
    pub name: String,
    /// Whether its entries may enter the register.
    pub binding: bool,
    /// Its stages, `NAME TC` each, in order.
    pub stages: Vec<String>,
}

/// What `oracle constitution check` reports: the constitution as loaded, its profiles and the
/// stages whose book is not pinned yet.
#[derive(Debug, Clone, Serialize)]
pub struct ConstitutionCheck {
    /// Always true: a constitution that does not load is an error.
    pub ok: bool,
    /// The file checked.
    pub file: PathBuf,
    /// sha256 of its bytes.
    pub sha256: Sha256Hex,
    /// Its version.
    pub version: NonZeroU32,
    /// Its profiles, by name.
    pub profiles: Vec<ProfileLine>,
    /// `profiles.P.stages[i].book_sha256` of every stage whose book is not pinned (such a stage
    /// refuses to run).
    pub unpinned_books: Vec<String>,
}

impl ConstitutionCheck {
    /// Loads and checks the constitution in `file`.
    ///
    /// # Errors
    /// See [`Constitution::load_file`].
    pub fn load(file: &Path) -> Result<ConstitutionCheck, ConstitutionError> {
        let (constitution, sha256) = Constitution::load_file(file)?;
        let profiles = constitution
            .profiles
            .iter()
            .map(|(name, profile)| ProfileLine {
                name: name.clone(),
                binding: profile.binding,
                stages: profile
                    .stages
                    .iter()
                    .map(|stage| format!("{} {}", stage.name, stage.tc))
                    .collect(),
            })
            .collect();
        let unpinned_books = constitution
            .profiles
            .iter()
            .flat_map(|(name, profile)| {
                profile
                    .stages
                    .iter()
                    .enumerate()
                    .filter(|(_, stage)| stage.book_sha256.is_none())
                    .map(move |(index, _)| format!("profiles.{name}.stages[{index}].book_sha256"))
            })
            .collect();
        Ok(ConstitutionCheck {
            ok: true,
            file: file.to_owned(),
            sha256,
            version: constitution.version,
            profiles,
            unpinned_books,
        })
    }
}

impl fmt::Display for ConstitutionCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: version {} sha256={}",
            self.file.display(),
            self.version,
            self.sha256
        )?;
        for profile in &self.profiles {
            writeln!(
                f,
                "  {:<12} {:<11} {}",
                profile.name,
                if profile.binding {
                    "binding"
                } else {
                    "not binding"
                },
                profile.stages.join(", ")
            )?;
        }
        for stage in &self.unpinned_books {
            writeln!(
                f,
                "  unpinned: {stage} (book_sha256 is null: the stage refuses to run)"
            )?;
        }
        Ok(())
    }
}

impl Stage {
    /// Checks, before the stage is run, that its book under `repo` has the pinned sha256.
    ///
    /// # Errors
    /// [`ConstitutionError::Book`] when the book is unpinned, unreadable or different.
    pub fn check_book(&self, repo: &Path, profile: &str) -> Result<Sha256Hex, ConstitutionError> {
        let bytes = std::fs::read(repo.join(&self.book))
            .map_err(|error| self.book_error(profile, format!("cannot read: {error}")))?;
        self.check_book_bytes(&bytes, profile)
    }

    /// The error naming this stage's book.
    fn book_error(&self, profile: &str, message: String) -> ConstitutionError {
        ConstitutionError::Book {
            profile: profile.to_owned(),
            stage: self.name.clone(),
            book: self.book.clone(),
            message,
        }
    }

    /// Checks the book's bytes (as read from a tree) against the pinned sha256.
    ///
    /// # Errors
    /// [`ConstitutionError::Book`] when the book is unpinned or different.
    pub fn check_book_bytes(
        &self,
        bytes: &[u8],
        profile: &str,
    ) -> Result<Sha256Hex, ConstitutionError> {
        let fail = |message: String| self.book_error(profile, message);
        let pinned = self
            .book_sha256
            .as_ref()
            .ok_or_else(|| fail("book_sha256 is not pinned in the constitution yet".into()))?;
        let actual = Sha256Hex::of(bytes);
        if &actual == pinned {
            Ok(actual)
        } else {
            Err(fail(format!(
                "sha256 is {actual}, the constitution pins {pinned}"
            )))
        }
    }
}

impl<'de> Deserialize<'de> for NeloBounds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Reads `[elo0, elo1]` and checks it while the parser still points at it.
        struct Pair;

        impl<'de> Visitor<'de> for Pair {
            type Value = NeloBounds;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bounds [elo0, elo1]")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NeloBounds, A::Error> {
                let elo0 = seq
                    .next_element()?
                    .ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let elo1 = seq
                    .next_element()?
                    .ok_or_else(|| A::Error::invalid_length(1, &self))?;
                if seq.next_element::<f64>()?.is_some() {
                    return Err(A::Error::invalid_length(3, &self));
                }
                NeloBounds::try_from([elo0, elo1]).map_err(A::Error::custom)
            }
        }

        deserializer.deserialize_seq(Pair)
    }
}

impl<'de> Deserialize<'de> for Probability {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Reads a number and checks it while the parser still points at it.
        struct Number;

        impl Visitor<'_> for Number {
            type Value = Probability;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a probability strictly between 0 and 1")
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Probability, E> {
                Probability::try_from(value).map_err(E::custom)
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Probability, E> {
                Err(E::custom(format!(
                    "{value} is not a probability strictly between 0 and 1"
                )))
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Probability, E> {
                Err(E::custom(format!(
                    "{value} is not a probability strictly between 0 and 1"
                )))
            }
        }

        deserializer.deserialize_f64(Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booking_never_credits_a_gain() {
        assert_eq!(LossBooking::FinalStageNeloDeficit.booked(-1.25), 1.25);
        assert_eq!(LossBooking::FinalStageNeloDeficit.booked(0.75), 0.0);
    }

    #[test]
    fn cpu_used_outside_the_turn_counts_against_the_fault_limits() {
        let limits = FaultLimits {
            predecessor_crashes: 0,
            predecessor_per_mille: 10,
            candidate_per_mille: 10,
        };
        let mut faults = StageFaults::default();
        faults.candidate.cpu_outside_turn = 1;
        assert_eq!(limits.candidate_failure(&faults, 100), None);
        faults.candidate.cpu_outside_turn = 2;
        // The candidate's faults fail its stage; they never void it (a void stage is run again).
        assert_eq!(limits.void_reason(&faults, 100), None);
        let reason = limits.candidate_failure(&faults, 100).unwrap();
        assert!(
            reason.starts_with("the candidate faulted 2 in 100 games: ")
                && reason.ends_with(
                    "cpu outside turn 2, cpu over node limit 0 (the constitution allows 10‰)"
                ),
            "{reason}"
        );
        faults.candidate = FaultCounts::default();
        faults.predecessor.cpu_outside_turn = 2;
        assert!(
            limits
                .void_reason(&faults, 100)
                .unwrap()
                .starts_with("the predecessor faulted 2")
        );
    }

    /// Today's constitution has no `engine:`: it reads as the Cargo kind with the rules it always
    /// had, and it serialises with the keys it always had, in their order.
    #[test]
    fn the_repository_constitution_reads_as_the_cargo_kind() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../constitution/constitution.yaml");
        let (constitution, _) = Constitution::load_file(&file).unwrap();
        assert!(constitution.engine.is_none());
        let contract = constitution.contract();
        assert_eq!(contract.build.kind(), "cargo");
        assert_eq!(contract.scope, ["engine/"]);
        assert_eq!(
            contract.bench,
            crate::builder::bench::BenchRules::standard()
        );
        assert!(contract.options.is_empty());
        assert_eq!(
            contract.gate,
            crate::governance::contract::GateContract::Symbols(GateRules {
                symbols: vec!["coherent_evaluate_popcnt".into()],
                callee_depth: 2,
            })
        );
        let yaml = serde_norway::to_string(&constitution).unwrap();
        let keys: Vec<&str> = yaml
            .lines()
            .filter(|line| !line.starts_with([' ', '-']))
            .filter_map(|line| line.split(':').next())
            .collect();
        assert_eq!(
            keys,
            [
                "version",
                "build",
                "gate",
                "profiles",
                "loss_tolerance",
                "identical_binaries"
            ]
        );
        assert_eq!(
            Constitution::parse(yaml.as_bytes(), &file).unwrap(),
            constitution
        );
    }

    #[test]
    fn the_engine_contract_replaces_build_and_gate_and_is_checked() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../constitution/constitution.yaml");
        let text = std::fs::read_to_string(&file).unwrap();
        let contract = "engine:\n  build:\n    kind: make\n    command: make EXE={out}\n    \
                        compiler: cc\n  scope: [src/]\n  bench:\n    args: [bench]\n    \
                        output: [\"OVERALL: {nodes} nodes {nps} nps\"]\n    trailer: {key: Bench}\n  \
                        gate: none\n  options: {Hash: 16}\n";
        let both = format!("{text}{contract}");
        let error = Constitution::parse(both.as_bytes(), &file)
            .unwrap_err()
            .to_string();
        assert!(error.contains("field `build`"), "{error}");
        let start = text.find("# Article 5: how both engines").unwrap();
        let end = text.find("# Annex A3 (4)").unwrap();
        let replaced = format!("{}{}{contract}", &text[..start], &text[end..]);
        let constitution = Constitution::parse(replaced.as_bytes(), &file).unwrap();
        assert_eq!(constitution.contract().build.kind(), "make");
        let broken = replaced.replace("command: make EXE={out}", "command: make");
        let error = Constitution::parse(broken.as_bytes(), &file)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("field `engine.build`") && error.contains("{out}"),
            "{error}"
        );
        let without = format!("{}{}", &text[..start], &text[end..]);
        let error = Constitution::parse(without.as_bytes(), &file)
            .unwrap_err()
            .to_string();
        assert!(error.contains("field `build`: required unless"), "{error}");
    }
}
