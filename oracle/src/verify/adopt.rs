//! `--games-from`: a stage starts from the pairs earlier runs of the same match played. A change
//! withdrawn from main because its run could not finish, and submitted again under a new commit
//! (or only its message changed), has the same engine tree: the same two bound binaries, hence
//! the same stage seeds and the same games. The source is checked once before any stage (its
//! binding binds the same sha256 under the same profile and constitution, and its candidate
//! declares the same path, so every stage has the same SPRT), each stage's pairs once more — its
//! state and its shard files — by the runner's fingerprint and their games; the register entry
//! names the runs that played the adopted pairs (`AdoptedPairs`). Adoption is the same whether
//! this run plays locally or in rounds (`--no-play`): the adopted pairs are the stage's state.
//! A stage the source finished is taken over with its end, which stands as it was decided: the
//! same pairs decided again at other looks could read otherwise.
//! A stage it had not finished is looked at on the source's grid of looks, from its start
//! (`looks-from.json`): the source's looks come out as they did, and a round whose shards
//! published before the merge that would have looked at them is looked at here.
//!
//! The directory is trusted as a run's own `--out` is when it resumes: it must be one the
//! maintainer's oracle wrote.

use crate::governance::contract::EngineContract;
use std::path::{Path, PathBuf};

use git2::Repository;

use super::binding::BindingRecord;
use super::out::OutDir;
use super::resolve;
use super::stage::{LookGrid, StageError, StageOutcome, StagePlan, carry_end, fail, read_optional};
use super::{short, trailers};
use crate::errln;
use crate::governance::entry::{AdoptedPairs, EarlierRun, PathKind};
use crate::governance::hash::GitId;
use crate::governance::timestamp::Timestamp;
use crate::play::shard::Shard;
use crate::play::state::{CountedGames, write_counted_games};
use crate::play::tally::Tally;

/// An earlier run's `--out` checked to be of the same match as this run.
#[derive(Debug, Clone)]
pub struct GamesSource {
    out: OutDir,
    run: EarlierRun,
}

/// Why `--games-from DIR` cannot be used, before anything is built: DIR names no run, or it is
/// this run's own `--out` (which `--fresh` would empty before anything could be taken over).
pub fn refuse_early(dir: &Path, out: &Path) -> Option<String> {
    let same = match (dir.canonicalize(), out.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Some(format!(
            "--games-from {}: it is this run's --out; pass the earlier run's directory",
            dir.display()
        ));
    }
    OutDir::at(dir).recorded_commits().is_none().then(|| {
        format!(
            "--games-from {}: no run.json there names the run that played its games; it is not an oracle verify --out",
            dir.display()
        )
    })
}

/// Checks that `dir` holds a run of the same match as this one: the same bound sha256 of both
/// binaries, profile and constitution (its `binding.json`), and the same declared path (its
/// candidate's trailers in `repo`).
pub fn check(
    repo: &Repository,
    dir: &Path,
    binding: &BindingRecord,
    path: PathKind,
    contract: &EngineContract,
) -> Result<GamesSource, String> {
    let out = OutDir::at(dir);
    let refuse = |why: String| format!("--games-from {}: {why}", dir.display());
    let (candidate, predecessor) = out
        .recorded_commits()
        .ok_or_else(|| refuse("no run.json names its run".into()))?;
    let theirs: BindingRecord = read_optional(&out.binding())
        .map_err(|e| refuse(e.to_string()))?
        .ok_or_else(|| refuse("no binding.json: that run bound no binaries".into()))?;
    let differences: Vec<String> = [
        (
            "candidate sha256",
            &theirs.candidate.sha256,
            &binding.candidate.sha256,
        ),
        (
            "predecessor sha256",
            &theirs.predecessor.sha256,
            &binding.predecessor.sha256,
        ),
        ("profile", &theirs.profile, &binding.profile),
        (
            "constitution sha256",
            &theirs.constitution_sha256,
            &binding.constitution_sha256,
        ),
    ]
    .into_iter()
    .filter(|(_, a, b)| a != b)
    .map(|(field, a, b)| format!("{field} is {a} there, {b} here"))
    .collect();
    if !differences.is_empty() {
        return Err(refuse(format!(
            "another match ({}); only games of the same binaries, profile and constitution can be taken over",
            differences.join("; ")
        )));
    }
    let their_path = resolve::commit(repo, "candidate", &candidate)
        .and_then(|commit| resolve::declaring_commit(repo, &commit, contract))
        .map_err(|e| refuse(format!("its candidate {candidate}: {e}")))
        .and_then(|declaring| {
            trailers::parse(&declaring.message, &contract.bench.trailer)
                .map_err(|e| refuse(format!("its candidate {candidate}: {e}")))
        })?
        .path;
    if their_path != path {
        return Err(refuse(format!(
            "its candidate declares the {their_path} path, this one the {path} path: other SPRT bounds"
        )));
    }
    let run = EarlierRun {
        candidate: GitId::try_from(candidate).map_err(|e| refuse(e.to_string()))?,
        predecessor: GitId::try_from(predecessor).map_err(|e| refuse(e.to_string()))?,
        bound_at: Timestamp::from_unix(theirs.bound_at_unix_ms / 1000),
        pairs: 0,
    };
    Ok(GamesSource { out, run })
}

/// Before this run begins its stages (once, before the first stage is played or planned, in
/// local and in `--no-play` mode): for every stage, removes what an interrupted adoption left,
/// then takes over every pair the source holds of it — its state's (a local run's, or the pairs
/// it took over itself) and its shard files' (a run played in rounds) — if there is a source and
/// it holds any. They become the stage's state, from which a local run resumes and which every
/// merge counts first, once; no shard plays them again. A stage the source finished keeps its
/// end, recorded as this run's. This run's own play comes first: a stage
/// it has begun (a state, a planned round, an end) is not adopted into. Every stage's pairs are
/// checked before any is written, so a source refused at one stage leaves nothing of it in `--out`.
/// On an error, the index of the stage it concerns comes with it.
pub fn adopt_all(
    plans: &[StagePlan],
    source: Option<&GamesSource>,
) -> Result<(), (usize, StageError)> {
    let mut taken = Vec::new();
    for plan in plans {
        if let Some(adoption) = take_over(plan, source).map_err(|e| (plan.index, e))? {
            taken.push((plan, adoption));
        }
    }
    for (plan, adoption) in taken {
        adoption.write(plan).map_err(|e| (plan.index, e))?;
    }
    Ok(())
}

/// The pairs of one stage a source holds, checked and ready to be written as the stage's state,
/// with the stage's end if the source finished it.
struct Adoption {
    counted: CountedGames,
    adopted: AdoptedPairs,
    looks_from: Option<LookGrid>,
    end: Option<StageOutcome>,
    from: PathBuf,
}

/// Removes what an interrupted adoption of `plan`'s stage left, then checks the pairs the source
/// holds of it; `None` when there is nothing to take over.
fn take_over(
    plan: &StagePlan,
    source: Option<&GamesSource>,
) -> Result<Option<Adoption>, StageError> {
    if plan.state().exists() {
        // An adoption interrupted after its state was put in place: its end follows it.
        if plan.adopted_end().exists() {
            std::fs::rename(plan.adopted_end(), plan.outcome_file())
                .map_err(|e| fail(format!("{}: {e}", plan.outcome_file().display())))?;
        }
        return Ok(None);
    }
    for stale in [
        plan.adopted_file(),
        plan.looks_from_file(),
        plan.adopted_state(),
        plan.adopted_end(),
    ] {
        match std::fs::remove_file(&stale) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(fail(format!("{}: {e}", stale.display())));
            }
            _ => {}
        }
    }
    let Some(source) = source else {
        return Ok(None);
    };
    if plan.begun() {
        return Ok(None);
    }
    let from = StagePlan::dir_in(&source.out, plan.index, &plan.stage.name);
    let from_shards = StagePlan::shards_dir_in(&source.out, plan.index, &plan.stage.name);
    let refuse = |error: StageError| {
        fail(format!(
            "--games-from {}: {error}",
            source.out.root().display()
        ))
    };
    let held = plan.held(&from, &from_shards).map_err(refuse)?;
    // The source's grid of looks: a round it published but never merged is looked at here.
    let looks_from = plan.looks_of(&from, &held).map_err(refuse)?;
    if held.is_empty() {
        errln!(
            "      games from {}: none of this stage there; every pair is played here",
            source.out.root().display()
        );
        return Ok(None);
    }
    // Every pair once, each of this stage's match and shown by its games: exactly the games this
    // run would play.
    let counted = held.counted_games().map_err(refuse)?;
    // As a shard's: no pair beyond the stage's maximum, which no run of this match plays.
    if let Some(pair) = counted.pairs.iter().find(|p| p.index >= plan.max_pairs) {
        return Err(refuse(fail(format!(
            "stage {}: pair {} is beyond the stage's {} pairs",
            plan.index, pair.index, plan.max_pairs
        ))));
    }
    // A stage the source finished stays decided as it was, at the source's looks: deciding the
    // same pairs again at other looks (a run in rounds looks once per round) could read them
    // otherwise, a second chance for a match already judged. Its pairs are the ones its end
    // counts, the lowest indices (a round's shards may have played on past the deciding look),
    // with their games. An end the source's own adoption had not yet put in place is its end too.
    let end_file = [StagePlan::OUTCOME, StagePlan::ADOPTED_END]
        .map(|name| from.join(name))
        .into_iter()
        .find(|file| file.exists());
    let end = match end_file {
        Some(file) => plan.finished_in(&file).map_err(refuse)?,
        None => None,
    };
    let counted = match &end {
        None => counted,
        Some(end) => {
            let kept = counted
                .first_pairs(end.record.pairs)
                .map_err(|e| refuse(fail(format!("stage {}: its end: {e}", plan.index))))?;
            let pentanomial = Tally::of(&kept.pairs).pentanomial;
            if pentanomial != end.record.pentanomial {
                return Err(refuse(fail(format!(
                    "stage {}: its end counts the pairs {:?}, its first {} pairs are {:?}",
                    plan.index, end.record.pentanomial, end.record.pairs, pentanomial
                ))));
            }
            kept
        }
    };
    let earlier: Option<AdoptedPairs> =
        read_optional(&from.join(StagePlan::ADOPTED)).map_err(refuse)?;
    let pairs = counted.pairs.len() as u64;
    let mut runs = earlier.map(|e| e.runs).unwrap_or_default();
    let before: u64 = runs.iter().map(|r| r.pairs).sum();
    runs.push(EarlierRun {
        pairs: pairs.saturating_sub(before),
        ..source.run.clone()
    });
    let adopted = AdoptedPairs {
        pairs,
        games_played: counted.games_played,
        runs,
    };
    Ok(Some(Adoption {
        counted,
        adopted,
        looks_from,
        end,
        from,
    }))
}

impl Adoption {
    /// Writes the pairs as `plan`'s stage state, with the record of the runs that played them.
    fn write(self, plan: &StagePlan) -> Result<(), StageError> {
        let Adoption {
            counted,
            adopted,
            looks_from,
            end,
            from,
        } = self;
        std::fs::create_dir_all(&plan.dir)
            .map_err(|e| fail(format!("{}: {e}", plan.dir.display())))?;
        let fingerprint = plan.fingerprint()?;
        // The state goes to a side file and is renamed last: until then this run has no state,
        // so an interrupted adoption is cleaned up and done again (or not at all) by the next
        // invocation.
        write_counted_games(
            (&plan.adopted_state(), &plan.pgn()),
            &fingerprint,
            Shard::WHOLE,
            &counted,
        )
        .map_err(|e| fail(format!("--games-from: {e}")))?;
        let json = serde_json::to_vec_pretty(&adopted).expect("adopted pairs serialize");
        crate::integrity::write_atomically(&plan.adopted_file(), &json)
            .map_err(|e| fail(e.to_string()))?;
        if let Some(grid) = looks_from {
            let json = serde_json::to_vec_pretty(&grid).expect("looks serialize");
            crate::integrity::write_atomically(&plan.looks_from_file(), &json)
                .map_err(|e| fail(e.to_string()))?;
        }
        let decided = end.as_ref().map(|end| end.record.state);
        if let Some(end) = end {
            carry_end(plan, end, &adopted, &counted)?;
        }
        std::fs::rename(plan.adopted_state(), plan.state())
            .map_err(|e| fail(format!("{}: {e}", plan.state().display())))?;
        if decided.is_some() {
            std::fs::rename(plan.adopted_end(), plan.outcome_file())
                .map_err(|e| fail(format!("{}: {e}", plan.outcome_file().display())))?;
        }
        let played_by: Vec<String> = adopted
            .runs
            .iter()
            .map(|r| format!("{} by the run of {}", r.pairs, short(r.candidate.as_str())))
            .collect();
        let ended = decided.map_or_else(String::new, |state| {
            format!("; the stage ended there ({state}), and that stands")
        });
        errln!(
            "      games from {}: {} pairs ({} games) of the same match: {}{ended}",
            from.display(),
            adopted.pairs,
            adopted.games_played,
            played_by.join(", ")
        );
        Ok(())
    }
}
