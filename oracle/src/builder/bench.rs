//! The bench signature: `coherent bench` prints `<N> nodes <M> nps` last (Stockfish prints
//! `Nodes searched  : N` and `Nodes/second    : M`; both are read); N identifies the engine's
//! search (Stockfish's `Bench: N` discipline) and must not vary between runs. An engine
//! contract names its own bench arguments, the line patterns its output is read with
//! (`OVERALL: {nodes} nodes {nps} nps` for Ethereal) and the trailer form of its commits
//! (`BENCH : 5,089,147`).

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::sandbox::engine::{EngineIsolation, EngineLimits};
use super::sandbox::{self, SandboxError};
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
    /// No line of the output matches the contract's patterns.
    #[error(
        "no line of the `bench` output matches {patterns:?} with a node count; last line: {line:?}"
    )]
    NoPatternMatched {
        /// The contract's patterns.
        patterns: Vec<String>,
        /// The output's last non-empty line.
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
    /// The commit carries a bench trailer that is not one number, or several that disagree.
    #[error("commit {commit} has an invalid bench trailer: {reason}")]
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

/// How `bench` is run, its output read and its signature declared: the engine contract's
/// `bench`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchRules {
    /// The arguments after the binary (`[bench]`; Stockfish 11: `[bench, "16", "1", "13"]`).
    pub args: Vec<String>,
    /// Line patterns the node count is read with, from stdout and stderr together: `{nodes}`
    /// (and `{nps}`) stand for a number, digits grouped by commas allowed; a space stands for any
    /// run of blanks, or none; letters match without regard to case; a pattern matches a whole
    /// line. The last line that matches gives the figure. Coherent: `{nodes} nodes {nps} nps`;
    /// Stockfish: `Nodes searched : {nodes}` and `Nodes/second : {nps}`; Ethereal:
    /// `OVERALL: {nodes} nodes {nps} nps`. Empty: Coherent's last line or Stockfish's lines, as
    /// read before engine contracts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<String>,
    /// The form of the commit-message trailer that declares the signature.
    pub trailer: TrailerForm,
}

impl BenchRules {
    /// `bench`, read as before engine contracts, declared by `Bench: N`: the Cargo kind's bench
    /// under today's constitution.
    #[must_use]
    pub fn standard() -> Self {
        Self {
            args: vec!["bench".to_owned()],
            output: Vec::new(),
            trailer: TrailerForm::standard(),
        }
    }

    /// The run's figures from its output (nps 0 when the output has none).
    pub fn read(&self, output: &str) -> Result<BenchRun, BenchError> {
        if self.output.is_empty() {
            return parse_bench_output(output);
        }
        let (mut nodes, mut nps) = (None, None);
        for line in output.lines() {
            for pattern in &self.output {
                if let Some(found) = match_line(pattern, line) {
                    nodes = found.nodes.or(nodes);
                    nps = found.nps.or(nps);
                }
            }
        }
        match nodes {
            Some(nodes) => Ok(BenchRun {
                nodes,
                nps: nps.unwrap_or(0),
                spent: std::time::Duration::ZERO,
            }),
            None => Err(BenchError::NoPatternMatched {
                patterns: self.output.clone(),
                line: output
                    .lines()
                    .rev()
                    .find(|line| !line.trim().is_empty())
                    .unwrap_or("")
                    .to_owned(),
            }),
        }
    }
}

/// The figures one line gives by a pattern.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LineFigures {
    nodes: Option<u64>,
    nps: Option<u64>,
}

/// Matches `line` against `pattern` (see [`BenchRules::output`]); the figures it holds.
fn match_line(pattern: &str, line: &str) -> Option<LineFigures> {
    let (mut pattern, mut line) = (pattern.trim(), line.trim());
    let mut figures = LineFigures::default();
    while !pattern.is_empty() {
        if let Some(rest) = pattern.strip_prefix(' ') {
            pattern = rest.trim_start();
            line = line.trim_start();
        } else if let Some((slot, rest)) = ["{nodes}", "{nps}"]
            .iter()
            .find_map(|slot| pattern.strip_prefix(slot).map(|rest| (*slot, rest)))
        {
            let (value, after) = grouped_number(line)?;
            match slot {
                "{nodes}" => figures.nodes = Some(value),
                _ => figures.nps = Some(value),
            }
            pattern = rest;
            line = after;
        } else {
            let expected = pattern.chars().next()?;
            let found = line.chars().next()?;
            if !expected.eq_ignore_ascii_case(&found) {
                return None;
            }
            pattern = &pattern[expected.len_utf8()..];
            line = &line[found.len_utf8()..];
        }
    }
    line.is_empty().then_some(figures)
}

/// A number at the start of `text`, its digits optionally grouped by commas in threes
/// (`5,089,147`), and the text after it.
fn grouped_number(text: &str) -> Option<(u64, &str)> {
    let bytes = text.as_bytes();
    let mut end = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if end == 0 {
        return None;
    }
    let mut digits: String = text[..end].to_owned();
    while bytes.get(end) == Some(&b',')
        && bytes.len() >= end + 4
        && bytes[end + 1..end + 4].iter().all(u8::is_ascii_digit)
        && !bytes.get(end + 4).is_some_and(u8::is_ascii_digit)
    {
        digits.push_str(&text[end + 1..end + 4]);
        end += 4;
    }
    Some((digits.parse().ok()?, &text[end..]))
}

/// The bench output formats the oracle knows, with the engine that prints each: the patterns
/// `oracle init` tries, in this order, on an engine's bench output to choose `bench.output`.
pub const KNOWN_OUTPUTS: [(&str, &[&str]); 3] = [
    ("Coherent", &["{nodes} nodes {nps} nps"]),
    (
        "Stockfish",
        &["Nodes searched : {nodes}", "Nodes/second : {nps}"],
    ),
    ("Ethereal", &["OVERALL: {nodes} nodes {nps} nps"]),
];

/// Runs `<binary> <args…>` once in its own engine sandbox (the players' confinement with a
/// CPU-time limit), its log at `log`: the output (stdout and stderr together) and what the run
/// cost, its CPU where the engine has an account, else its wall time.
fn run_once(
    binary: &Path,
    args: &[String],
    isolation: EngineIsolation,
    log: &Path,
) -> Result<(String, std::time::Duration), BenchError> {
    let mut confined = isolation
        .confine(binary, args, &[], EngineLimits::BENCH)
        .map_err(BenchError::Scratch)?;
    confined.command.stdin(std::process::Stdio::null());
    let started = std::time::Instant::now();
    let ending = sandbox::run_logged(&mut confined.command, log, BENCH_WALL_TIME)?;
    let spent = confined
        .account
        .as_ref()
        .and_then(|account| account.cpu_time())
        .unwrap_or_else(|| started.elapsed());
    let output = std::fs::read_to_string(log).unwrap_or_default();
    if !ending.succeeded() {
        let lines: Vec<&str> = output.lines().collect();
        return Err(BenchError::Failed {
            binary: binary.to_owned(),
            ending: sandbox::describe(&ending),
            tail: lines[lines.len().saturating_sub(10)..].join("\n"),
        });
    }
    Ok((output, spent))
}

/// The output of one run of `<binary> <args…>` in the engine sandbox, for reading a bench whose
/// format is not known yet.
pub fn run_output(
    binary: &Path,
    args: &[String],
    isolation: EngineIsolation,
) -> Result<String, BenchError> {
    let logs = tempfile::tempdir().map_err(BenchError::Scratch)?;
    run_once(binary, args, isolation, &logs.path().join("run.log")).map(|(output, _)| output)
}

/// Runs `<binary> <bench.args…>` `runs` times, each in its own engine sandbox (the players'
/// confinement with a CPU-time limit), reads each output as `bench` says, and requires the
/// same node count each time.
pub fn measure(
    binary: &Path,
    bench: &BenchRules,
    isolation: EngineIsolation,
    runs: usize,
) -> Result<BenchSignature, BenchError> {
    let logs = tempfile::tempdir().map_err(BenchError::Scratch)?;
    let mut results = Vec::with_capacity(runs);
    for index in 0..runs {
        let log = logs.path().join(format!("run-{index}.log"));
        let (output, spent) = run_once(binary, &bench.args, isolation, &log)?;
        let read = bench.read(&output)?;
        // An engine that prints no speed gets the one the oracle measured.
        let nps = match read.nps {
            0 => u64::try_from(u128::from(read.nodes) * 1_000_000 / spent.as_micros().max(1))
                .unwrap_or(u64::MAX),
            nps => nps,
        };
        results.push(BenchRun { spent, nps, ..read });
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

/// The form of the trailer that carries a commit's bench signature: the engine contract's
/// `bench.trailer`. Coherent: `Bench: 953905`; Stockfish: `Bench: 5156767` and, in older
/// commits, `BENCH : 5,089,147` (key `Bench`, digit groups allowed), sometimes above a closing
/// paragraph rather than in the trailer block (`anywhere`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrailerForm {
    /// The trailer's key, matched without regard to case (git's trailer reader allows blanks
    /// before the colon, so `BENCH : N` has the key `BENCH`).
    pub key: String,
    /// Whether the number may group its digits with commas (`5,089,147`).
    #[serde(default)]
    pub digit_groups: bool,
    /// Whether the declaration may stand on any line of the message, alone on it, instead of
    /// only in the trailer block: Stockfish's own bench check reads it wherever it is, and some
    /// of its commits continue with a paragraph after the `Bench:` line. Written only when set,
    /// so that contracts from before the option read and hash as they did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anywhere: bool,
}

impl TrailerForm {
    /// `Bench: N`, plain digits: the form before engine contracts.
    #[must_use]
    pub fn standard() -> Self {
        Self {
            key: "Bench".to_owned(),
            digit_groups: false,
            anywhere: false,
        }
    }

    /// The value of one trailer in this form, if it is a node count.
    fn nodes(&self, text: &str) -> Option<u64> {
        if self.digit_groups {
            grouped_number(text).and_then(|(nodes, rest)| rest.is_empty().then_some(nodes))
        } else {
            text.parse().ok()
        }
    }
}

/// The commit's bench trailer in `form`, if it has one (several must agree).
pub fn bench_trailer(
    repo: &Repository,
    commit: Oid,
    form: &TrailerForm,
) -> Result<Option<u64>, BenchError> {
    let commit_error = |source| BenchError::Commit {
        commit: commit.to_string(),
        source,
    };
    let found = repo.find_commit(commit).map_err(commit_error)?;
    let message = String::from_utf8_lossy(found.message_bytes()).into_owned();
    declared_bench(&message, form).map_err(|reason| BenchError::BadTrailer {
        commit: commit.to_string(),
        reason,
    })
}

/// The bench signature a commit message declares in `form`, if any (several must agree): from
/// its trailer block, or, when the form allows it `anywhere`, from every line that is
/// `KEY: VALUE` alone.
pub fn declared_bench(message: &str, form: &TrailerForm) -> Result<Option<u64>, String> {
    if form.anywhere {
        let lines: Vec<(String, String)> = message.lines().filter_map(key_value_line).collect();
        bench_in_trailers(&lines, form)
    } else {
        bench_in_trailers(&message_trailers(message)?, form)
    }
}

/// A line that is one trailer-like `KEY: VALUE` and nothing else, as (key, value): the key a
/// word of letters, digits and hyphens from the line's start, blanks allowed before the colon
/// as git allows them in trailers.
fn key_value_line(line: &str) -> Option<(String, String)> {
    let (key, value) = line.split_once(':')?;
    let key = key.trim_end_matches([' ', '\t']);
    let word = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    word.then(|| (key.to_owned(), value.trim().to_owned()))
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

/// The bench value among parsed trailers in `form`, if any (several must agree).
fn bench_in_trailers(
    trailers: &[(String, String)],
    form: &TrailerForm,
) -> Result<Option<u64>, String> {
    let mut value = None;
    for (key, text) in trailers {
        if !key.eq_ignore_ascii_case(&form.key) {
            continue;
        }
        let nodes = form
            .nodes(text)
            .ok_or_else(|| format!("`{key}: {text}` is not a node count"))?;
        if value.is_some_and(|seen| seen != nodes) {
            return Err(format!(
                "several `{}:` trailers disagree ({} and {nodes})",
                form.key,
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
        let signature = measure(
            stockfish,
            &BenchRules::standard(),
            EngineIsolation::detect(),
            1,
        )
        .unwrap();
        assert!(
            signature.nodes > 0 && signature.runs[0].nps > 0,
            "{signature:?}"
        );
    }

    #[test]
    fn reads_the_bench_trailer() {
        let message =
            "eval: KBNK corner term\n\nLonger text.\n\nBench: 695\nSigned-off-by: A <a@b>\n";
        assert_eq!(
            declared_bench(message, &TrailerForm::standard()),
            Ok(Some(695))
        );
        assert_eq!(
            declared_bench("subject\n\nno trailers here\n", &TrailerForm::standard()),
            Ok(None)
        );
        assert!(declared_bench("s\n\nBench: many\n", &TrailerForm::standard()).is_err());
        assert!(declared_bench("s\n\nBench: 1\nBench: 2\n", &TrailerForm::standard()).is_err());
    }

    #[test]
    fn a_script_with_a_moving_signature_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("engine");
        // Nodes depend on the nanoseconds of the clock: different on (almost) every run.
        std::fs::write(&script, "#!/bin/sh\necho \"$(date +%N) nodes 1 nps\"\n").unwrap();
        // Owner-only, in a private temp dir: the sandbox must still be able to run it.
        set_mode(&script, 0o700).unwrap();
        let result = measure(
            &script,
            &BenchRules::standard(),
            EngineIsolation::detect(),
            2,
        );
        assert!(
            matches!(result, Err(BenchError::NonDeterministic { .. })),
            "{result:?}"
        );
    }

    fn patterns(output: &[&str]) -> BenchRules {
        BenchRules {
            output: output.iter().map(|p| (*p).to_owned()).collect(),
            ..BenchRules::standard()
        }
    }

    #[test]
    fn each_engine_is_read_by_its_own_patterns() {
        let ethereal = patterns(&["OVERALL: {nodes} nodes {nps} nps"]);
        let output = "Bench [# 1]  4 cp  Best:e2e4\nOVERALL:       5080279 nodes     1234567 nps\n";
        let run = ethereal.read(output).unwrap();
        assert_eq!((run.nodes, run.nps), (5_080_279, 1_234_567));
        let stockfish = patterns(&["Nodes searched : {nodes}", "Nodes/second : {nps}"]);
        let output = "Total time (ms) : 1234\nNodes searched  : 5156767\nNodes/second    : 4178\n";
        let run = stockfish.read(output).unwrap();
        assert_eq!((run.nodes, run.nps), (5_156_767, 4178));
        let coherent = patterns(&["{nodes} nodes {nps} nps"]);
        assert_eq!(
            coherent
                .read("1 nodes 2 nps\n953905 nodes 1000 nps\nbye\n")
                .unwrap()
                .nodes,
            953_905
        );
        assert!(matches!(
            ethereal.read("953905 nodes 1000 nps\n"),
            Err(BenchError::NoPatternMatched { .. })
        ));
        assert!(
            coherent.read("x953905 nodes 1000 nps").is_err(),
            "a pattern matches a whole line"
        );
    }

    #[test]
    fn numbers_may_group_their_digits_and_letters_ignore_case() {
        assert_eq!(
            grouped_number("5,089,147 nodes"),
            Some((5_089_147, " nodes"))
        );
        assert_eq!(grouped_number("12,34"), Some((12, ",34")));
        assert_eq!(grouped_number("1,2345"), Some((1, ",2345")));
        assert_eq!(grouped_number("x"), None);
        let figures = match_line("bench : {nodes}", "BENCH: 5,089,147").unwrap();
        assert_eq!(figures.nodes, Some(5_089_147));
    }

    #[test]
    fn each_trailer_form_is_read_and_others_refused() {
        let stockfish = TrailerForm {
            key: "Bench".into(),
            digit_groups: true,
            anywhere: false,
        };
        for (message, nodes) in [
            ("s\n\nBench: 5156767\n", 5_156_767),
            ("s\n\nBENCH : 5,089,147\n", 5_089_147),
            ("s\n\nbench: 123\n", 123),
        ] {
            assert_eq!(
                declared_bench(message, &stockfish),
                Ok(Some(nodes)),
                "{message:?}"
            );
        }
        let standard = TrailerForm::standard();
        assert!(declared_bench("s\n\nBENCH : 5,089,147\n", &standard).is_err());
        assert!(declared_bench("s\n\nBench: 5,08\n", &stockfish).is_err());
        let other = TrailerForm {
            key: "Nodes".into(),
            digit_groups: false,
            anywhere: false,
        };
        assert_eq!(
            declared_bench("s\n\nNodes: 7\nBench: 9\n", &other),
            Ok(Some(7))
        );
    }

    /// Stockfish `cff61c35fd`, shortened: its `Bench:` line is followed by a closing paragraph,
    /// so git's trailer block is that paragraph, not the line.
    const BENCH_ABOVE_A_PARAGRAPH: &str = "Scale down complexity for almost unwinnable endgames

passed LTC
LLR: 2.96 (-2.94,2.94) [0.00,3.50]

Closes https://github.com/official-stockfish/Stockfish/pull/2298

Bench: 3954190

==========================

How to continue from there?
";

    #[test]
    fn anywhere_reads_a_bench_line_outside_the_trailer_block() {
        let in_trailers = TrailerForm::standard();
        let anywhere = TrailerForm {
            anywhere: true,
            ..TrailerForm::standard()
        };
        assert_eq!(
            declared_bench(BENCH_ABOVE_A_PARAGRAPH, &in_trailers),
            Ok(None)
        );
        assert_eq!(
            declared_bench(BENCH_ABOVE_A_PARAGRAPH, &anywhere),
            Ok(Some(3_954_190))
        );
        // The line must be the declaration alone, from its start.
        for message in [
            "Allow RQ through pieces. Bench: 3415326 (#2153)\n",
            "s\n\n    Bench: 3415326\n",
            "s\n\nsee Bench: 3415326\n",
        ] {
            assert_eq!(declared_bench(message, &anywhere), Ok(None), "{message:?}");
        }
        assert!(declared_bench("s\n\nBench: 1\n\nmore\n\nBench: 2\n", &anywhere).is_err());
        assert!(declared_bench("s\n\nBench: soon\n\nmore\n", &anywhere).is_err());
    }
}
