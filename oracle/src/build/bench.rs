//! The bench signature: `coherent bench` prints `<N> nodes <M> nps` last (Stockfish prints
//! `Nodes searched  : N` and `Nodes/second    : M`; both are read); N identifies the engine's
//! search (Stockfish's `Bench: N` discipline) and must not vary between runs.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};
use serde::Serialize;

use super::sandbox::engine::{EngineIsolation, EngineLimits};
use super::sandbox::{self, ProcessEnding, SandboxError};
use crate::play::cpu_guard::NodePace;

/// Wall-clock limit of one `bench` run (its CPU limit is [`EngineLimits::BENCH`]'s).
const BENCH_WALL_TIME: std::time::Duration = std::time::Duration::from_secs(600);

/// One run of `bench`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BenchRun {
    /// Nodes searched: the signature.
    pub nodes: u64,
    /// Nodes per second: a speed figure, expected to vary.
    pub nps: u64,
    /// What the run cost as the oracle measured it, start-up included: its CPU where the
    /// engine has an account, else its wall time (zero where only output was parsed). The
    /// engine's pace, which its own `nps` does not prove.
    #[serde(skip)]
    pub spent: std::time::Duration,
}

/// Why the signature could not be measured or read.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The engine could not be run.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The engine failed or a limit stopped it.
    #[error("`{binary} bench` failed ({ending}); last lines:\n{tail}")]
    Failed {
        /// The binary.
        binary: PathBuf,
        /// How it ended.
        ending: String,
        /// The end of its output.
        tail: String,
    },
    /// The output is in neither bench format.
    #[error(
        "`bench` output neither ends with `<N> nodes <M> nps` nor has Stockfish's `Nodes searched : N` and `Nodes/second : M` lines; last line: {line:?}"
    )]
    Unparsable {
        /// The offending line.
        line: String,
    },
    /// Two runs searched different node counts.
    #[error("non-deterministic bench signature: {first} nodes, then {second} nodes")]
    NonDeterministic {
        /// Nodes of the first run.
        first: u64,
        /// Nodes of the second run.
        second: u64,
    },
    /// A scratch directory could not be made.
    #[error("preparing a scratch directory: {0}")]
    Scratch(std::io::Error),
    /// The commit or its message could not be read.
    #[error("reading commit {commit}: {source}")]
    Commit {
        /// The commit id.
        commit: String,
        /// libgit2's reason.
        source: git2::Error,
    },
    /// The commit carries a `Bench:` trailer that is not one number, or several that disagree.
    #[error("commit {commit} has an invalid `Bench:` trailer: {reason}")]
    BadTrailer {
        /// The commit id.
        commit: String,
        /// What is wrong.
        reason: String,
    },
}

/// The deterministic signature: node count and the runs it was seen in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BenchSignature {
    /// Nodes, equal in every run.
    pub nodes: u64,
    /// Each run's figures.
    pub runs: Vec<BenchRun>,
}

/// Parses `output` in either common bench format: Coherent's last non-empty line
/// `<N> nodes <M> nps`, or Stockfish's `Nodes searched  : N` and `Nodes/second    : M` lines
/// (the last of each).
pub fn parse_bench_output(output: &str) -> Result<BenchRun, BenchError> {
    let line = output
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("");
    let unparsable = || BenchError::Unparsable {
        line: line.to_owned(),
    };
    if let [nodes, "nodes", nps, "nps"] = line.split_whitespace().collect::<Vec<_>>()[..] {
        return Ok(BenchRun {
            nodes: nodes.parse().map_err(|_| unparsable())?,
            nps: nps.parse().map_err(|_| unparsable())?,
            spent: std::time::Duration::ZERO,
        });
    }
    let field = |key: &str| {
        output.lines().rev().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            (name.trim() == key).then(|| value.trim().parse::<u64>().ok())?
        })
    };
    match (field("Nodes searched"), field("Nodes/second")) {
        (Some(nodes), Some(nps)) => Ok(BenchRun {
            nodes,
            nps,
            spent: std::time::Duration::ZERO,
        }),
        _ => Err(unparsable()),
    }
}

/// Runs `<binary> bench` `runs` times, each in its own engine sandbox (the players' confinement
/// with a CPU-time limit), and requires the same node count each time.
pub fn measure(
    binary: &Path,
    isolation: EngineIsolation,
    runs: usize,
) -> Result<BenchSignature, BenchError> {
    let logs = tempfile::tempdir().map_err(BenchError::Scratch)?;
    let mut results = Vec::with_capacity(runs);
    for index in 0..runs {
        let mut confined = isolation
            .confine(binary, &["bench".to_string()], &[], EngineLimits::BENCH)
            .map_err(BenchError::Scratch)?;
        confined.command.stdin(std::process::Stdio::null());
        let log = logs.path().join(format!("run-{index}.log"));
        let started = std::time::Instant::now();
        let ending = sandbox::run_logged(&mut confined.command, &log, BENCH_WALL_TIME)?;
        let spent = confined
            .account
            .as_ref()
            .and_then(|account| account.cpu_time())
            .unwrap_or_else(|| started.elapsed());
        let output = std::fs::read_to_string(&log).unwrap_or_default();
        if !matches!(ending, ProcessEnding::Exited(status) if status.success()) {
            let lines: Vec<&str> = output.lines().collect();
            return Err(BenchError::Failed {
                binary: binary.to_owned(),
                ending: sandbox::describe(&ending),
                tail: lines[lines.len().saturating_sub(10)..].join("\n"),
            });
        }
        results.push(BenchRun {
            spent,
            ..parse_bench_output(&output)?
        });
    }
    let nodes = results.first().map_or(0, |run| run.nodes);
    if let Some(other) = results.iter().find(|run| run.nodes != nodes) {
        return Err(BenchError::NonDeterministic {
            first: nodes,
            second: other.nodes,
        });
    }
    Ok(BenchSignature {
        nodes,
        runs: results,
    })
}

impl BenchSignature {
    /// The engine's CPU per node, from its cheapest run: what bounds its searches at a node
    /// limit; `None` when no run was timed.
    #[must_use]
    pub fn node_pace(&self) -> Option<NodePace> {
        let fastest = self.runs.iter().map(|run| run.spent).min()?;
        NodePace::measured(self.nodes, fastest)
    }
}

/// The commit's `Bench: N` trailer, if it has one (several must agree).
pub fn bench_trailer(repo: &Repository, commit: Oid) -> Result<Option<u64>, BenchError> {
    let commit_error = |source| BenchError::Commit {
        commit: commit.to_string(),
        source,
    };
    let found = repo.find_commit(commit).map_err(commit_error)?;
    let message = String::from_utf8_lossy(found.message_bytes()).into_owned();
    trailer_in_message(&message).map_err(|reason| BenchError::BadTrailer {
        commit: commit.to_string(),
        reason,
    })
}

/// The `Bench:` trailer value of a commit message, if any.
pub fn trailer_in_message(message: &str) -> Result<Option<u64>, String> {
    bench_in_trailers(&message_trailers(message)?)
}

/// Every trailer of a commit message as (key, value), in order: the one trailer reader that
/// `Bench:`, `Oracle-Path:` and `Oracle-Proof:` are all read through (libgit2's parser, so the
/// oracle agrees with `git interpret-trailers` about what a trailer is).
pub fn message_trailers(message: &str) -> Result<Vec<(String, String)>, String> {
    let trailers =
        git2::message_trailers_strs(message).map_err(|error| error.message().to_owned())?;
    Ok(trailers
        .iter()
        .map(|(key, value)| (key.to_owned(), value.trim().to_owned()))
        .collect())
}

/// The `Bench:` value among parsed trailers, if any (several must agree).
pub fn bench_in_trailers(trailers: &[(String, String)]) -> Result<Option<u64>, String> {
    let mut value = None;
    for (key, text) in trailers {
        if !key.eq_ignore_ascii_case("bench") {
            continue;
        }
        let nodes: u64 = text
            .parse()
            .map_err(|_| format!("`Bench: {text}` is not a node count"))?;
        if value.is_some_and(|seen| seen != nodes) {
            return Err(format!(
                "several `Bench:` trailers disagree ({} and {nodes})",
                value.unwrap_or(0)
            ));
        }
        value = Some(nodes);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }

    #[test]
    fn parses_the_last_line_only() {
        let output = "info depth 5\n123 nodes 9 nps\n\n4567890 nodes 1234567 nps\n";
        assert_eq!(
            parse_bench_output(output).unwrap(),
            BenchRun {
                nodes: 4_567_890,
                nps: 1_234_567,
                spent: std::time::Duration::ZERO,
            }
        );
        assert!(matches!(
            parse_bench_output("4567890 nodes 1234567 nps\nbye\n"),
            Err(BenchError::Unparsable { line }) if line == "bye"
        ));
        assert!(parse_bench_output("").is_err());
        assert!(parse_bench_output("-3 nodes 5 nps").is_err());
    }

    #[test]
    fn parses_stockfish_bench_output() {
        let output = "info depth 13 nodes 70000\nbestmove e2e4\n\n===========================\nTotal time (ms) : 1234\nNodes searched  : 2353693\nNodes/second    : 1907369\n";
        assert_eq!(
            parse_bench_output(output).unwrap(),
            BenchRun {
                nodes: 2_353_693,
                nps: 1_907_369,
                spent: std::time::Duration::ZERO,
            }
        );
        assert!(parse_bench_output("Nodes searched  : 12\n").is_err());
        assert!(parse_bench_output("Nodes searched  : x\nNodes/second : 3\n").is_err());
    }

    #[test]
    fn measures_stockfish_in_its_own_format() {
        // Stockfish prints its bench on stderr; the sandbox log holds both streams.
        let stockfish = Path::new("/usr/games/stockfish");
        if !stockfish.is_file() {
            return;
        }
        let signature = measure(stockfish, EngineIsolation::detect(), 1).unwrap();
        assert!(
            signature.nodes > 0 && signature.runs[0].nps > 0,
            "{signature:?}"
        );
    }

    #[test]
    fn reads_the_bench_trailer() {
        let message =
            "eval: KBNK corner term\n\nLonger text.\n\nBench: 695\nSigned-off-by: A <a@b>\n";
        assert_eq!(trailer_in_message(message), Ok(Some(695)));
        assert_eq!(
            trailer_in_message("subject\n\nno trailers here\n"),
            Ok(None)
        );
        assert!(trailer_in_message("s\n\nBench: many\n").is_err());
        assert!(trailer_in_message("s\n\nBench: 1\nBench: 2\n").is_err());
    }

    #[test]
    fn a_script_with_a_moving_signature_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("engine");
        // Nodes depend on the nanoseconds of the clock: different on (almost) every run.
        std::fs::write(&script, "#!/bin/sh\necho \"$(date +%N) nodes 1 nps\"\n").unwrap();
        // Owner-only, in a private temp dir: the sandbox must still be able to run it.
        set_mode(&script, 0o700).unwrap();
        let result = measure(&script, EngineIsolation::detect(), 2);
        assert!(
            matches!(result, Err(BenchError::NonDeterministic { .. })),
            "{result:?}"
        );
    }
}
