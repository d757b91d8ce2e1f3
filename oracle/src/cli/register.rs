//! `oracle register verify | show | append | replay | measure | genesis | site`: the audit tools.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use super::output::{Summary, outln, render};
use crate::cli::EXIT_REJECTED;
use oracle::builder::EngineBuild;
use oracle::errln;
use oracle::governance::Constitution;
use oracle::governance::entry::{BinaryRecord, Entry, EntryId};
use oracle::governance::hash::{GitId, Sha256Hex};
use oracle::governance::register::{
    self, AppendError, Appended, Audit, GenesisRecord, Listing, Refused, ShownEntry, VerifySummary,
};
use oracle::governance::time_control;
use oracle::governance::timestamp::Timestamp;
use oracle::measurement::{MeasureRequest, Measured};
use oracle::play::clock::TimeControl;
use oracle::play::cpus::Cpus;
use oracle::play::runner::MatchProgress;
use oracle::site::{SiteOptions, SiteSummary};
use oracle::verify::games::{EntryGamesReplay, GamesRequest, replay_games as replay_entry_games};
use oracle::verify::landing::{LandingReport, LandingRequest, check_landing};
use oracle::verify::replay::{EntryReplay, replay_entry};

/// Arguments of `oracle register`.
#[derive(Debug, Args)]
pub struct RegisterArgs {
    #[command(subcommand)]
    command: RegisterCommand,
}

/// The register's subcommands.
#[derive(Debug, Subcommand)]
enum RegisterCommand {
    /// Check the whole chain, and every entry against the constitution in its predecessor
    /// commit's tree and the chain of custody; prints `head=<sha256> n=<count>` (exit 0 only
    /// when sound; what a shallow clone cannot answer is listed as `unchecked`; exit 2 when
    /// `register/` is missing or empty).
    Verify {
        #[command(flatten)]
        repo: RepoArgs,
        /// Also require this head sha256 (pinned by an auditor outside the chain).
        #[arg(long, value_name = "SHA256")]
        expect_head: Option<String>,
    },
    /// List the entries, or show one.
    Show {
        /// Entry id (`T-0002`); all entries when omitted.
        id: Option<String>,
        #[command(flatten)]
        repo: RepoArgs,
    },
    /// Append an entry (or draft with null id/prev_sha256/recorded_at) as the next one.
    Append {
        /// The entry file, e.g. the one `oracle verify --out DIR` wrote.
        file: PathBuf,
        #[command(flatten)]
        repo: RepoArgs,
    },
    /// Replay an entry: rebuild both recorded commits and compare their sha256, re-run gate,
    /// bench and proof, recompute its statistics from its counts and check its verdict; with
    /// `--games K`, play K recorded pairs of each node stage again and compare them move by move
    /// with the stage PGNs in `evidence/T-NNNN/` (exit 1 when a game differs).
    Replay {
        /// Entry id (`T-0002`).
        id: String,
        /// Only recompute the statistics and the verdict (no rebuild, no engine runs).
        #[arg(long, conflicts_with = "games")]
        statistics_only: bool,
        /// Replay K pairs chosen at random from each node-limited stage, move by move.
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
        games: Option<u64>,
        /// Seed of the choice of pairs [default: drawn afresh from the operating system, and
        /// printed, so that no one who wrote the evidence could have known the choice].
        #[arg(long, requires = "games")]
        seed: Option<u64>,
        /// Build cache directory [default: $XDG_CACHE_HOME/coherent-oracle or ~/.cache/coherent-oracle].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        #[command(flatten)]
        repo: RepoArgs,
    },
    /// Judge a push to the main branch (docs/ci-trust.md, "How an entry lands"): the records only grow;
    /// a push that changes the engine's scope adds the entries that land it and their evidence,
    /// nothing else, and the branch's tree is the newest entry's verified candidate plus those
    /// records, or it withdraws a change and rebuilds to the register's current engine. Exit 0
    /// when the push may stand, 1 when it may not.
    Landing {
        /// The branch's head before the push (GitHub's `github.event.before`).
        #[arg(long, value_name = "REV")]
        before: String,
        /// Judge the changed paths only, with git alone: nothing is built or replayed.
        #[arg(long)]
        paths_only: bool,
        /// Build cache directory [default: $XDG_CACHE_HOME/coherent-oracle or ~/.cache/coherent-oracle].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        #[command(flatten)]
        repo: RepoArgs,
    },
    /// Write the register as a static web site (index, progress chart, a page per entry);
    /// exit 1 when the register does not verify (the site is written all the same).
    Site {
        /// Directory of the site; replaced as a whole when it holds an earlier site.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// URL the site is served at, for canonical links (links between pages stay relative).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        #[command(flatten)]
        repo: RepoArgs,
    },
    /// Measure one entry's engine against another's (docs/progress.md): rebuild both from their
    /// recorded commits, play a fixed number of games, and write the measured point of the
    /// progress chart into `measurements/` (with the games beside it).
    Measure(Box<MeasureArgs>),
    /// Write the genesis entry T-0001 into an empty register.
    Genesis {
        /// Engine commit (full id).
        #[arg(long)]
        commit: String,
        /// Its tree id.
        #[arg(long)]
        tree: String,
        /// sha256 of the binary `oracle build` made from it.
        #[arg(long, value_name = "SHA256")]
        binary_sha256: String,
        /// Its bench signature (nodes).
        #[arg(long, value_name = "NODES")]
        bench: u64,
        /// `rustc -V` of the build toolchain [default: asked from the constitution's toolchain].
        #[arg(long)]
        toolchain: Option<String>,
        /// Commit the oracle was built from [default: --commit].
        #[arg(long)]
        oracle_commit: Option<String>,
        #[command(flatten)]
        repo: RepoArgs,
    },
}

/// Arguments of `oracle register measure`.
#[derive(Debug, Args)]
struct MeasureArgs {
    /// The entry whose engine is measured (`T-0031`).
    measured: String,
    /// The entry whose engine it plays against (`T-0001`).
    baseline: String,
    /// Clock of both engines, `BASE+INC` seconds (or `nodes=N` for a smoke run).
    #[arg(long, value_parser = parse_tc)]
    tc: TimeControl,
    /// Games to play, even: every opening twice, colours swapped.
    #[arg(long, default_value_t = 400)]
    games: u64,
    /// Opening book, relative to the repository.
    #[arg(long, default_value = "books/book-a.epd")]
    book: String,
    /// Seed of the opening order.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Games at once [default: the physical cores for a clock, the logical CPUs for nodes].
    #[arg(long)]
    concurrency: Option<usize>,
    /// Profile of the work tree's constitution whose adjudication and engine options are used.
    #[arg(long, default_value = "workstation")]
    profile: String,
    /// Build cache directory [default: $XDG_CACHE_HOME/coherent-oracle or ~/.cache/coherent-oracle].
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    #[command(flatten)]
    repo: RepoArgs,
}

/// Reads a time control in the constitution's form.
fn parse_tc(text: &str) -> Result<TimeControl, String> {
    time_control::parse(text)
}

/// Options every register subcommand takes.
#[derive(Debug, Args)]
struct RepoArgs {
    /// Repository whose `register/` and `constitution/` are used.
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(from_global)]
    json: bool,
}

/// Runs `oracle register …`.
///
/// # Errors
/// Unreadable files, unknown ids and bad arguments (exit 2).
pub fn run(args: RegisterArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        RegisterCommand::Verify { repo, expect_head } => verify(&repo, expect_head.as_deref()),
        RegisterCommand::Show { id, repo } => show(&repo, id.as_deref()),
        RegisterCommand::Append { file, repo } => append(&repo, &file),
        RegisterCommand::Replay {
            id,
            statistics_only,
            games,
            seed,
            cache_dir,
            repo,
        } => {
            let cache_dir = cache_dir.unwrap_or_else(oracle::builder::Cache::default_root);
            match games {
                Some(pairs) => replay_games(&repo, &id, pairs, seed, &cache_dir),
                None => replay(&repo, &id, statistics_only, &cache_dir),
            }
        }
        RegisterCommand::Landing {
            before,
            paths_only,
            cache_dir,
            repo,
        } => {
            let cache_dir = cache_dir.unwrap_or_else(oracle::builder::Cache::default_root);
            let report = check_landing(&LandingRequest {
                repo: &repo.repo,
                before: &before,
                paths_only,
                cache_dir: &cache_dir,
            })?;
            render(&report, repo.json)?;
            Ok(status(report.ok))
        }
        RegisterCommand::Site {
            out,
            base_url,
            repo,
        } => site(&repo, out, base_url),
        RegisterCommand::Measure(args) => measure(&args),
        RegisterCommand::Genesis {
            commit,
            tree,
            binary_sha256,
            bench,
            toolchain,
            oracle_commit,
            repo,
        } => {
            let engine = BinaryRecord {
                commit: GitId::try_from(commit.clone())
                    .map_err(|e| anyhow::anyhow!("--commit: {e}"))?,
                tree: GitId::try_from(tree).map_err(|e| anyhow::anyhow!("--tree: {e}"))?,
                binary_sha256: Sha256Hex::try_from(binary_sha256)
                    .map_err(|e| anyhow::anyhow!("--binary-sha256: {e}"))?,
                bench_nodes: bench,
            };
            let oracle_commit = GitId::try_from(oracle_commit.unwrap_or(commit))
                .map_err(|e| anyhow::anyhow!("--oracle-commit: {e}"))?;
            genesis(&repo, engine, toolchain, oracle_commit)
        }
    }
}

/// Exit status for a sound (0) or unsound (1) result.
fn status(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    }
}

impl Summary for VerifySummary {
    const SORTED_KEYS: bool = true;
}
impl Summary for Listing<'_> {
    const SORTED_KEYS: bool = true;
}
impl Summary for ShownEntry<'_> {}
impl Summary for Appended {
    const SORTED_KEYS: bool = true;
}
impl Summary for Refused {
    const SORTED_KEYS: bool = true;
}
impl Summary for LandingReport {}

impl Summary for EntryReplay {
    const SORTED_KEYS: bool = true;
}
impl Summary for EntryGamesReplay {
    const SORTED_KEYS: bool = true;
}
impl Summary for Measured {}
impl Summary for SiteSummary {
    const SORTED_KEYS: bool = true;
}

/// `register verify`.
fn verify(repo: &RepoArgs, expect_head: Option<&str>) -> anyhow::Result<ExitCode> {
    let summary = register::verify_register(&repo.repo, expect_head)?;
    render(&summary, repo.json)?;
    Ok(status(summary.ok))
}

/// `register show [ID]`.
fn show(repo: &RepoArgs, id: Option<&str>) -> anyhow::Result<ExitCode> {
    let audit = register::verify(&repo.repo)?;
    if !audit.ok() {
        errln!("warning: the register does not verify; run `oracle register verify`");
    }
    match id {
        None => render(&Listing::of(&audit), repo.json)?,
        Some(id) => {
            let (entry, sha256) = find(&audit, parse_id(id)?)?;
            render(&ShownEntry { entry, sha256 }, repo.json)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `register append FILE`.
fn append(repo: &RepoArgs, file: &Path) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(file).with_context(|| format!("{}: cannot read", file.display()))?;
    let draft = Entry::parse(&bytes).with_context(|| format!("{}", file.display()))?;
    let (constitution, constitution_sha256) = Constitution::load(&repo.repo)?;
    match register::append(
        &repo.repo,
        draft,
        &constitution,
        &constitution_sha256,
        Timestamp::now(),
    ) {
        Ok(entry) => {
            let id = entry.id.map(|id| id.to_string()).unwrap_or_default();
            render(&Appended::read_back(&repo.repo, id, false)?, repo.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(AppendError::Refused(reason)) => {
            let refused = Refused {
                ok: false,
                refused: reason,
                file: file.to_owned(),
            };
            render(&refused, repo.json)?;
            Ok(ExitCode::from(EXIT_REJECTED))
        }
        Err(error) => Err(error.into()),
    }
}

/// `register replay ID`.
fn replay(
    repo: &RepoArgs,
    id: &str,
    statistics_only: bool,
    cache_dir: &Path,
) -> anyhow::Result<ExitCode> {
    let wanted = parse_id(id)?;
    let audit = register::verify_up_to(&repo.repo, wanted)?;
    let summary = replay_entry(&repo.repo, &audit, wanted, statistics_only, cache_dir)
        .ok_or_else(|| not_found(&audit, wanted))?;
    render(&summary, repo.json)?;
    Ok(status(summary.ok))
}

/// `register replay ID --games K`.
fn replay_games(
    repo: &RepoArgs,
    id: &str,
    pairs: u64,
    seed: Option<u64>,
    cache_dir: &Path,
) -> anyhow::Result<ExitCode> {
    let audit = register::verify(&repo.repo)?;
    let (entry, _) = find(&audit, parse_id(id)?)?;
    let seed = match seed {
        Some(seed) => seed,
        None => fresh_seed()?,
    };
    // Named before any work, so that an audit that stops half-way can still be repeated.
    errln!("replay {id} --games {pairs}: seed {seed}");
    let replay = replay_entry_games(&GamesRequest {
        repo: &repo.repo,
        entry,
        pairs,
        seed,
        cache_dir,
    })?;
    let summary = EntryGamesReplay::new(&audit, id.to_owned(), replay);
    render(&summary, repo.json)?;
    Ok(status(summary.ok))
}

/// A seed from the operating system's entropy: an audit's random choice must be unknown to
/// the audited party when the evidence was fixed.
fn fresh_seed() -> anyhow::Result<u64> {
    let mut bytes = [0; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut source| std::io::Read::read_exact(&mut source, &mut bytes))
        .map_err(|error| anyhow::anyhow!("/dev/urandom: {error}"))?;
    Ok(u64::from_le_bytes(bytes))
}

/// `register site`.
fn site(repo: &RepoArgs, out: PathBuf, base_url: Option<String>) -> anyhow::Result<ExitCode> {
    let summary = oracle::site::build(&SiteOptions {
        repo: repo.repo.clone(),
        out,
        base_url,
    })?;
    render(&summary, repo.json)?;
    Ok(status(summary.ok))
}

/// `register measure MEASURED BASELINE`.
fn measure(args: &MeasureArgs) -> anyhow::Result<ExitCode> {
    let measured = EntryId::try_from(args.measured.clone())
        .map_err(|error| anyhow::anyhow!("argument MEASURED: {error}"))?;
    let baseline = EntryId::try_from(args.baseline.clone())
        .map_err(|error| anyhow::anyhow!("argument BASELINE: {error}"))?;
    let request = MeasureRequest {
        repo: args.repo.repo.clone(),
        measured,
        baseline,
        tc: args.tc,
        games: args.games,
        book: args.book.clone(),
        seed: args.seed,
        concurrency: args
            .concurrency
            .unwrap_or_else(|| Cpus::detect().max_games(args.tc.is_timed())),
        profile: args.profile.clone(),
        cache_dir: args
            .cache_dir
            .clone()
            .unwrap_or_else(oracle::builder::Cache::default_root),
    };
    let quiet = args.repo.json;
    let mut observer = |progress: &MatchProgress| {
        if !quiet && progress.game.is_some() {
            let [wins, draws, losses] = progress.finished_wdl;
            errln!(
                "game {}/{}: +{wins} ={draws} -{losses}",
                progress.games_played,
                progress.games_total
            );
        }
    };
    let measured = oracle::measurement::measure(&request, &mut observer)?;
    render(&measured, args.repo.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `register genesis`.
fn genesis(
    repo: &RepoArgs,
    engine: BinaryRecord,
    toolchain: Option<String>,
    oracle_commit: GitId,
) -> anyhow::Result<ExitCode> {
    let (constitution, constitution_sha256) = Constitution::load(&repo.repo)?;
    let toolchain = match toolchain {
        Some(toolchain) => toolchain,
        None => match constitution.contract().build {
            EngineBuild::Cargo(recipe) => rustc_version(&recipe.toolchain)?,
            EngineBuild::Make(native)
            | EngineBuild::Cmake(native)
            | EngineBuild::Command(native) => {
                oracle::builder::native::Compiler::locate(&native.compiler)?.identity()
            }
        },
    };
    let record = GenesisRecord {
        engine,
        toolchain,
        oracle_commit,
    };
    match register::genesis(
        &repo.repo,
        record,
        &constitution,
        &constitution_sha256,
        Timestamp::now(),
    ) {
        Ok(_) => {
            let appended = Appended::read_back(&repo.repo, "T-0001".to_owned(), true)?;
            render(&appended, repo.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(AppendError::Refused(reason)) => {
            outln!("refused: {reason}");
            Ok(ExitCode::from(EXIT_REJECTED))
        }
        Err(error) => Err(error.into()),
    }
}

/// `rustc -V` of the pinned toolchain.
fn rustc_version(toolchain: &str) -> anyhow::Result<String> {
    let output = std::process::Command::new("rustc")
        .arg("-V")
        .env("RUSTUP_TOOLCHAIN", toolchain)
        .output()
        .with_context(|| {
            format!("running `rustc -V` for toolchain {toolchain} (or pass --toolchain)")
        })?;
    if !output.status.success() {
        bail!(
            "`rustc -V` failed for toolchain {toolchain}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Parses an entry id given on the command line.
fn parse_id(id: &str) -> anyhow::Result<EntryId> {
    EntryId::try_from(id.to_owned()).map_err(|error| anyhow::anyhow!("argument ID: {error}"))
}

/// The entry `id` among the audited ones.
fn find(audit: &Audit, id: EntryId) -> anyhow::Result<(&Entry, &Sha256Hex)> {
    audit.find(id).ok_or_else(|| not_found(audit, id))
}

/// The error for an entry `id` the audited register does not hold.
fn not_found(audit: &Audit, id: EntryId) -> anyhow::Error {
    anyhow::anyhow!(
        "argument ID: no readable entry {id} in the register ({} entries)",
        audit.count
    )
}
