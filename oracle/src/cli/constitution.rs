//! `oracle constitution check`: load the constitution as the oracle enforces it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;

use super::output::outln;
use oracle::governance::Constitution;
use oracle::governance::constitution::CONSTITUTION_PATH;

/// Arguments of `oracle constitution`.
#[derive(Debug, Args)]
pub struct ConstitutionArgs {
    #[command(subcommand)]
    command: ConstitutionCommand,
}

/// The constitution's subcommands.
#[derive(Debug, Subcommand)]
enum ConstitutionCommand {
    /// Parse and check a constitution; errors name the file, line, column and field (exit 2).
    Check {
        /// The file [default: constitution/constitution.yaml under --repo].
        file: Option<PathBuf>,
        /// Repository whose constitution is checked.
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(from_global)]
        json: bool,
    },
}

/// Runs `oracle constitution …`.
///
/// # Errors
/// A constitution that cannot be read or does not hold (exit 2).
pub fn run(args: ConstitutionArgs) -> anyhow::Result<ExitCode> {
    let ConstitutionCommand::Check { file, repo, json } = args.command;
    let file = file.unwrap_or_else(|| repo.join(CONSTITUTION_PATH));
    let (constitution, sha256) = Constitution::load_file(&file)?;
    let profiles: Vec<_> = constitution
        .profiles
        .iter()
        .map(|(name, profile)| {
            let stages: Vec<String> = profile
                .stages
                .iter()
                .map(|stage| format!("{} {}", stage.name, stage.tc))
                .collect();
            (name, profile.binding, stages)
        })
        .collect();
    if json {
        let profiles: Vec<_> = profiles
            .iter()
            .map(|(name, binding, stages)| json!({ "name": name, "binding": binding, "stages": stages }))
            .collect();
        let unpinned = unpinned_books(&constitution);
        outln!(
            "{}",
            json!({ "ok": true, "file": file, "sha256": sha256, "version": constitution.version, "profiles": profiles, "unpinned_books": unpinned })
        );
    } else {
        outln!(
            "{}: version {} sha256={sha256}",
            file.display(),
            constitution.version
        );
        for (name, binding, stages) in &profiles {
            outln!(
                "  {name:<12} {:<11} {}",
                if *binding { "binding" } else { "not binding" },
                stages.join(", ")
            );
        }
        for stage in unpinned_books(&constitution) {
            outln!("  unpinned: {stage} (book_sha256 is null: the stage refuses to run)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `profiles.P.stages[i].book_sha256` for every stage whose book is not pinned yet.
fn unpinned_books(constitution: &Constitution) -> Vec<String> {
    constitution
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
        .collect()
}
