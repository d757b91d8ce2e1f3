//! Runs and pairs played end to end, as `oracle tune run` and `tune pair` play them: the duels
//! set up from the settings, the state file resumed and saved, and the pair's files written.

use std::path::{Path, PathBuf};

use super::duel::{DuelSettings, DuelSetupError, MatchDuels};
use super::pair::{PairError, PairReport, run_seed};
use super::params;
use super::patch::{self, PatchError};
use super::plot;
use super::rules::EndRule;
use super::run::{self, RunSpec, RunState, TuneError};
use super::schedule::Param;
use crate::integrity::{FileError, write_atomically};

/// A run's size and shape besides how its duels are played.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// How the duels are played.
    pub duels: DuelSettings,
    /// Games per run G (N = G/2 pairs).
    pub games: u64,
    /// Game pairs per duel.
    pub pairs_per_duel: u64,
    /// Duels whose steps are applied together.
    pub bundle: usize,
}

/// What a run being played reports, for progress lines.
#[derive(Clone, Copy, Debug)]
pub enum RunEvent<'a> {
    /// The duels are set up (their engine shows its isolation).
    Ready(&'a MatchDuels),
    /// The run resumes from this state file.
    Resumed(&'a Path, &'a RunState),
    /// A bundle was applied and saved.
    Bundle(&'a RunState),
}

/// Why a run or a pair stopped.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The duels could not be set up.
    #[error(transparent)]
    Setup(#[from] DuelSetupError),
    /// The run could not go on.
    #[error(transparent)]
    Run(#[from] TuneError),
    /// The two runs cannot be compared.
    #[error(transparent)]
    Pair(#[from] PairError),
    /// The output directory could not be made.
    #[error("--out {}: {source}", path.display())]
    Out {
        /// The directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// An output file could not be written.
    #[error(transparent)]
    Write(#[from] FileError),
    /// The engine's tunables table could not be read.
    #[error("--table {}: {source}", path.display())]
    TableRead {
        /// The table's source file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The engine's tunables table could not be patched.
    #[error("--table {}: {source}", path.display())]
    Table {
        /// The table's source file.
        path: PathBuf,
        /// Why.
        source: PatchError,
    },
}

/// Plays (or resumes from `state_file`) one run with `seed` to its end.
pub fn play_run(
    settings: &RunSettings,
    params: &[Param],
    seed: u64,
    state_file: Option<&Path>,
    observer: &mut dyn FnMut(RunEvent<'_>),
) -> Result<RunState, SessionError> {
    let (mut player, context) = MatchDuels::new(&settings.duels, seed)?;
    observer(RunEvent::Ready(&player));
    let spec = RunSpec {
        games: settings.games,
        pairs_per_duel: settings.pairs_per_duel,
        bundle: settings.bundle,
        seed,
        context,
    };
    let (mut state, resumed) = run::start_or_resume(spec, params, state_file)?;
    if let (true, Some(path)) = (resumed, state_file) {
        observer(RunEvent::Resumed(path, &state));
    }
    run::play_to_end(&mut state, &mut player, state_file, &mut |s| {
        observer(RunEvent::Bundle(s));
    })?;
    Ok(state)
}

/// The files of a pair in its directory (besides the runs' states `run-1.json`, `run-2.json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairFiles {
    /// The report as pretty JSON.
    pub report: PathBuf,
    /// The table as Markdown.
    pub table: PathBuf,
    /// The tunables listing with the adopted values.
    pub listing: PathBuf,
    /// θ of both runs as SVG.
    pub plot: PathBuf,
    /// The `git apply` diff of the engine's table, when one was given.
    pub diff: Option<PathBuf>,
}

impl PairFiles {
    /// The file names in `out` for `rule`.
    #[must_use]
    pub fn in_dir(out: &Path, rule: EndRule, diff: bool) -> PairFiles {
        PairFiles {
            report: out.join("table.json"),
            table: out.join("table.md"),
            listing: out.join(format!("tunables-{}.txt", rule.key())),
            plot: out.join("theta.svg"),
            diff: diff.then(|| out.join(format!("tunables-{}.patch", rule.key()))),
        }
    }
}

/// Two independent runs from the same start (seeds derived from `seed`, each resumable from
/// its state in `out`), judged by the end rules; writes the report, the table, the listing
/// `rule` adopts, the plot and, with the engine's tunables `table`, a diff of it into `out`.
/// `observer` hears each run's events with its number (1 or 2).
pub fn play_pair(
    settings: &RunSettings,
    params: &[Param],
    seed: u64,
    out: &Path,
    rule: EndRule,
    table: Option<&Path>,
    observer: &mut dyn FnMut(u64, RunEvent<'_>),
) -> Result<(PairReport, PairFiles), SessionError> {
    std::fs::create_dir_all(out).map_err(|source| SessionError::Out {
        path: out.to_owned(),
        source,
    })?;
    let seeds = [run_seed(seed, 1), run_seed(seed, 2)];
    let mut runs = Vec::with_capacity(2);
    for (r, seed) in (1..).zip(seeds) {
        let state_file = out.join(format!("run-{r}.json"));
        runs.push(play_run(
            settings,
            params,
            seed,
            Some(&state_file),
            &mut |e| {
                observer(r, e);
            },
        )?);
    }
    let (run1, run2) = (&runs[0], &runs[1]);
    let report = PairReport::of(run1, run2, seeds, rule)?;
    let files = PairFiles::in_dir(out, rule, table.is_some());
    let json = serde_json::to_string_pretty(&report).expect("the report serializes");
    write_atomically(&files.report, json.as_bytes())?;
    write_atomically(&files.table, report.markdown().as_bytes())?;
    write_atomically(&files.listing, report.patch.as_bytes())?;
    write_atomically(&files.plot, plot::theta_svg(run1, run2).as_bytes())?;
    if let (Some(table), Some(diff_file)) = (table, &files.diff) {
        let source = std::fs::read_to_string(table).map_err(|source| SessionError::TableRead {
            path: table.to_owned(),
            source,
        })?;
        let defaults: Vec<(&str, String)> = run1
            .params
            .iter()
            .zip(&report.params)
            .map(|(p, row)| (p.name.as_str(), params::format_value(p, row.adopted(rule))))
            .collect();
        let diff = patch::table_diff(&source, &table.display().to_string(), &defaults).map_err(
            |source| SessionError::Table {
                path: table.to_owned(),
                source,
            },
        )?;
        write_atomically(diff_file, diff.as_bytes())?;
    }
    Ok((report, files))
}
