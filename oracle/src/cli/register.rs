//! `oracle register verify | show | append | replay | genesis | site`: the audit tools.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde_json::json;

use super::output::{out, outln};
use crate::cli::EXIT_REJECTED;
use oracle::build::EngineBuild;
use oracle::errln;
use oracle::governance::Constitution;
use oracle::governance::entry::{BinaryRecord, Entry, EntryId};
use oracle::governance::hash::{GitId, Sha256Hex};
use oracle::governance::register::{self, AppendError, Audit, GenesisRecord};
use oracle::governance::replay::replay_statistics;
use oracle::governance::timestamp::Timestamp;
use oracle::site::SiteOptions;
use oracle::verify::games::{
    GamesReplay, GamesRequest, StageOutcome, replay_games as replay_entry_games,
};

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
        /// Seed of the choice of pairs [default: the entry's sha256].
        #[arg(long, requires = "games")]
        seed: Option<u64>,
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
            let cache_dir = cache_dir.unwrap_or_else(oracle::build::Cache::default_root);
            match games {
                Some(pairs) => replay_games(&repo, &id, pairs, seed, &cache_dir),
                None => replay(&repo, &id, statistics_only, &cache_dir),
            }
        }
        RegisterCommand::Site {
            out,
            base_url,
            repo,
        } => site(&repo, out, base_url),
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

/// `register verify`.
fn verify(repo: &RepoArgs, expect_head: Option<&str>) -> anyhow::Result<ExitCode> {
    let files = register::read_files(&repo.repo)?;
    if files.is_empty() {
        // Nothing checked is no evidence of a sound register: a wrong `--repo` or a checkout
        // without its entries must not show a green check (exit 2, bad input, not 1: there is
        // no register to call unsound).
        let dir = repo.repo.join(register::REGISTER_DIR);
        let state = if dir.is_dir() {
            "holds no entries"
        } else {
            "does not exist"
        };
        bail!("{}: {state}; there is no register to verify", dir.display());
    }
    let mut audit = register::verify_files(&repo.repo, &files);
    if let Some(expected) = expect_head.filter(|expected| *expected != audit.head.as_str()) {
        let newest = audit
            .entries
            .last()
            .and_then(|(entry, _)| entry.id)
            .map_or_else(|| "the empty register".to_owned(), |id| id.file_name());
        audit.findings.push(register::Finding {
            file: newest,
            message: format!(
                "head is {}, expected {expected} (entries were removed or added)",
                audit.head
            ),
        });
    }
    if repo.json {
        let report = json!({
            "ok": audit.ok(),
            "n": audit.count,
            "head": audit.head,
            "errors": audit.findings,
            "unchecked": audit.unchecked,
        });
        outln!("{report}");
    } else {
        for finding in &audit.findings {
            outln!("{}: {}", finding.file, finding.message);
        }
        for note in &audit.unchecked {
            outln!("{}: unchecked: {}", note.file, note.message);
        }
        outln!("head={} n={}", audit.head, audit.count);
        if !audit.ok() {
            outln!("register verify: {} problem(s)", audit.findings.len());
        }
    }
    Ok(status(audit.ok()))
}

/// `register show [ID]`.
fn show(repo: &RepoArgs, id: Option<&str>) -> anyhow::Result<ExitCode> {
    let audit = register::verify(&repo.repo)?;
    if !audit.ok() {
        errln!("warning: the register does not verify; run `oracle register verify`");
    }
    let Some(id) = id else {
        if repo.json {
            let entries: Vec<&Entry> = audit.entries.iter().map(|(entry, _)| entry).collect();
            outln!(
                "{}",
                json!({ "n": audit.count, "head": audit.head, "entries": entries })
            );
        } else {
            out!("{}", render_table(&audit));
        }
        return Ok(ExitCode::SUCCESS);
    };
    let (entry, hash) = find(&audit, id)?;
    if repo.json {
        outln!("{}", serde_json::to_string(entry)?);
    } else {
        out!("{}", render_entry(entry, hash));
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
            let audit = register::verify(&repo.repo)?;
            let id = entry.id.map(|id| id.to_string()).unwrap_or_default();
            if repo.json {
                outln!(
                    "{}",
                    json!({ "ok": true, "id": id, "head": audit.head, "n": audit.count })
                );
            } else {
                outln!("appended {id}");
                outln!("head={} n={}", audit.head, audit.count);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(AppendError::Refused(reason)) => {
            if repo.json {
                outln!("{}", json!({ "ok": false, "refused": reason }));
            } else {
                outln!("refused: {}: {reason}", file.display());
            }
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
    let files: Vec<register::RegisterFile> = register::read_files(&repo.repo)?
        .into_iter()
        .filter(|file| EntryId::from_file_name(&file.name).is_some_and(|number| number <= wanted))
        .collect();
    let audit = register::verify_files(&repo.repo, &files);
    let (entry, _) = find(&audit, id)?;
    let used_before = audit
        .entries
        .iter()
        .rev()
        .nth(1)
        .map_or(0.0, |(previous, _)| previous.loss_budget.used_after);
    let mut checks = vec![oracle::governance::replay::Check {
        name: format!("chain up to {wanted}"),
        pass: audit.ok(),
        detail: audit.findings.first().map_or_else(
            || format!("head={} n={}", audit.head, audit.count),
            |f| format!("{}: {}", f.file, f.message),
        ),
    }];
    checks.extend(replay_statistics(entry, used_before));
    if !statistics_only {
        checks.extend(oracle::verify::replay::remeasure(
            &repo.repo, entry, cache_dir,
        ));
    }
    let ok = checks.iter().all(|check| check.pass);
    if repo.json {
        outln!(
            "{}",
            json!({ "ok": ok, "id": wanted.to_string(), "checks": checks })
        );
    } else {
        for check in &checks {
            outln!(
                "{} {}: {}",
                if check.pass { "pass" } else { "FAIL" },
                check.name,
                check.detail
            );
        }
        outln!(
            "replay {wanted}: {}",
            if ok { "every check passed" } else { "failed" }
        );
    }
    Ok(status(ok))
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
    let (entry, entry_sha256) = find(&audit, id)?;
    let replay = replay_entry_games(&GamesRequest {
        repo: &repo.repo,
        entry,
        entry_sha256,
        pairs,
        seed,
        cache_dir,
    })?;
    let ok = audit.ok() && replay.ok();
    if repo.json {
        outln!(
            "{}",
            json!({ "ok": ok, "id": id, "register_ok": audit.ok(), "replay": replay })
        );
    } else {
        out!("{}", render_games(&audit, id, &replay));
    }
    Ok(status(ok))
}

/// The games replay for people: the choice, then per stage each game's outcome.
fn render_games(audit: &Audit, id: &str, replay: &GamesReplay) -> String {
    let mut out = String::new();
    let mark = |pass: bool| if pass { "pass" } else { "FAIL" };
    let _ = writeln!(
        out,
        "{} register: {}",
        mark(audit.ok()),
        audit.findings.first().map_or_else(
            || format!("head={} n={}", audit.head, audit.count),
            |f| format!("{}: {}", f.file, f.message),
        )
    );
    let _ = writeln!(
        out,
        "seed {} (repeat the choice with the same --seed)",
        replay.seed
    );
    for check in &replay.rebuilds {
        let _ = writeln!(
            out,
            "{} rebuild {}: recorded {}, rebuilt {}",
            mark(check.pass),
            check.role,
            check.recorded,
            check.rebuilt
        );
    }
    let (mut identical, mut total) = (0, 0);
    for stage in &replay.stages {
        let _ = write!(out, "stage {} ({}): ", stage.name, stage.tc);
        match &stage.outcome {
            StageOutcome::Skipped { reason } => {
                let _ = writeln!(out, "skipped, {reason}");
            }
            StageOutcome::Failed { reason } => {
                let _ = writeln!(out, "FAIL {reason}");
            }
            StageOutcome::Replayed {
                pgn,
                seed,
                pairs,
                games,
            } => {
                let _ = writeln!(
                    out,
                    "{} matches pgn_sha256; pairs {pairs:?} (0-based, stage seed {seed})",
                    pgn.display()
                );
                for game in games {
                    total += 1;
                    let round = format!("round {}.{}", game.pair + 1, game.game);
                    match &game.difference {
                        None => {
                            identical += 1;
                            let _ = writeln!(out, "  {round}: identical ({} plies)", game.plies);
                        }
                        Some(d) => {
                            let _ = writeln!(
                                out,
                                "  {round}: DIFFERS at ply {}: expected {}, played {}",
                                d.ply, d.expected, d.played
                            );
                        }
                    }
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "replay {id} --games: {identical} of {total} games identical{}",
        if audit.ok() && replay.ok() {
            ""
        } else {
            "; failed"
        }
    );
    out
}

/// `register site`.
fn site(repo: &RepoArgs, out: PathBuf, base_url: Option<String>) -> anyhow::Result<ExitCode> {
    let summary = oracle::site::build(&SiteOptions {
        repo: repo.repo.clone(),
        out: out.clone(),
        base_url,
    })?;
    if repo.json {
        let report = json!({
            "ok": summary.verified(),
            "n": summary.count,
            "head": summary.head,
            "errors": summary.findings,
            "out": out,
            "files": summary.files,
        });
        outln!("{report}");
    } else {
        for finding in &summary.findings {
            outln!("{}: {}", finding.file, finding.message);
        }
        outln!(
            "site {}: {} files, head={} n={}{}",
            out.display(),
            summary.files,
            summary.head,
            summary.count,
            if summary.verified() {
                String::new()
            } else {
                format!(
                    " (register verify: {} problem(s), marked on the site)",
                    summary.findings.len()
                )
            }
        );
    }
    Ok(status(summary.verified()))
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
                oracle::build::native::Compiler::locate(&native.compiler)?.identity()
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
            let audit = register::verify(&repo.repo)?;
            if repo.json {
                outln!(
                    "{}",
                    json!({ "ok": true, "id": "T-0001", "head": audit.head, "n": audit.count })
                );
            } else {
                outln!("genesis T-0001");
                outln!("head={} n={}", audit.head, audit.count);
            }
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
fn find<'a>(audit: &'a Audit, id: &str) -> anyhow::Result<(&'a Entry, &'a Sha256Hex)> {
    let wanted = parse_id(id)?;
    audit
        .entries
        .iter()
        .find(|(entry, _)| entry.id == Some(wanted))
        .map(|(entry, hash)| (entry, hash))
        .with_context(|| {
            format!(
                "argument ID: no readable entry {wanted} in the register ({} entries)",
                audit.count
            )
        })
}

/// The first 12 digits of an id or hash, as people quote them.
fn short(text: &str) -> &str {
    &text[..text.len().min(12)]
}

/// The entry list as a fixed-width table.
fn render_table(audit: &Audit) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<7} {:<20} {:<11} {:<8} {:<9} {:>8} {:>8}  candidate",
        "id", "recorded_at", "profile", "path", "verdict", "gain", "loss"
    );
    for (entry, _) in &audit.entries {
        let _ = writeln!(
            out,
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
        );
    }
    let _ = writeln!(out, "head={} n={}", audit.head, audit.count);
    out
}

/// One entry for people: what was decided, on what evidence.
fn render_entry(entry: &Entry, hash: &Sha256Hex) -> String {
    let mut out = String::new();
    let id = entry.id.map(|id| id.to_string()).unwrap_or_default();
    let _ = writeln!(
        out,
        "{id}  {}  path {}  profile {}",
        entry.verdict,
        entry.path,
        entry.profile.as_deref().unwrap_or("-")
    );
    let _ = writeln!(out, "  sha256       {hash}");
    let _ = writeln!(
        out,
        "  prev_sha256  {}",
        entry
            .prev_sha256
            .as_ref()
            .map(Sha256Hex::as_str)
            .unwrap_or("-")
    );
    let _ = writeln!(
        out,
        "  recorded_at  {}",
        entry
            .recorded_at
            .as_ref()
            .map(Timestamp::as_str)
            .unwrap_or("-")
    );
    let _ = writeln!(out, "  bound_at     {}", entry.bound_at);
    let _ = writeln!(out, "  claimed gain {} nElo", entry.claimed_gain_nelo);
    let _ = writeln!(
        out,
        "  oracle       {} ({})",
        entry.oracle.version,
        short(entry.oracle.commit.as_str())
    );
    let _ = writeln!(out, "  toolchain    {}", entry.toolchain);
    let mut binary = |role: &str, record: &BinaryRecord| {
        let _ = writeln!(
            out,
            "  {role:<12} {} tree {} binary {} bench {}",
            short(record.commit.as_str()),
            short(record.tree.as_str()),
            short(record.binary_sha256.as_str()),
            record.bench_nodes
        );
    };
    binary("candidate", &entry.candidate);
    if let Some(predecessor) = &entry.predecessor {
        binary("predecessor", predecessor);
    }
    if let Some(gate) = entry.gate {
        let _ = writeln!(
            out,
            "  gate         popcnt {} software popcount {}",
            gate.popcnt_in_eval, gate.software_popcount_in_eval
        );
    }
    if let Some(proof) = &entry.proof {
        let _ = writeln!(
            out,
            "  proof        {} predecessor {} candidate {}",
            proof.spec, proof.predecessor, proof.candidate
        );
    }
    for stage in &entry.stages {
        let _ = writeln!(
            out,
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
        );
    }
    let budget = entry.loss_budget;
    let _ = writeln!(
        out,
        "  loss budget  {} + {} = {} of {} nElo",
        budget.used_before, budget.booked, budget.used_after, budget.limit
    );
    out
}
