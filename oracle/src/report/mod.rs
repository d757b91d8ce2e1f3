//! The report of one `oracle verify` run: plain data in, Markdown and SVG out.
//!
//! Pure rendering (no I/O): the pipeline fills a [`RunReport`] from its steps' results and the
//! command writes `report.md` and `report.svg` into `--out` (and the Markdown to
//! `$GITHUB_STEP_SUMMARY` on GitHub).

mod markdown;
mod svg;

pub use markdown::render_markdown;
use serde::{Deserialize, Serialize};
pub use svg::{render_calculator_svg, render_stage_svg, render_svg};

use crate::governance::confirmation::ConfirmationRecord;
use crate::governance::entry::{AdoptedPairs, IsolationRecord, StageFaults, StageRecord, Verdict};

/// Everything a report shows about one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunReport {
    /// Candidate commit (full id).
    pub candidate: String,
    /// First line of the candidate's message.
    pub candidate_summary: String,
    /// Predecessor commit (full id).
    pub predecessor: String,
    /// Profile name and whether it is binding.
    pub profile: String,
    /// True when the profile's entries may be appended to the register.
    pub binding: bool,
    /// Declared path: `standard` or `randfall` (empty before the trailers were read).
    pub path: String,
    /// Binding record: time and hashes (empty before binding).
    pub bound_at: String,
    /// sha256 of the candidate binary.
    pub candidate_sha256: String,
    /// sha256 of the predecessor binary.
    pub predecessor_sha256: String,
    /// The build-shape gate on the candidate, once run.
    pub gate: Option<GateSummary>,
    /// Bench signatures, once measured.
    pub bench: Option<BenchReport>,
    /// The Randfall proof, once run.
    pub proof: Option<ProofReport>,
    /// The independent confirmation of a Randfall change, once checked.
    pub confirmation: Option<ConfirmationRecord>,
    /// How builds and engines were isolated, once known.
    pub isolation: Option<IsolationRecord>,
    /// The stages played so far, in order.
    pub stages: Vec<StageReport>,
    /// The verdict, once decided.
    pub verdict: Option<Verdict>,
    /// One sentence: the outcome, or which step failed and why.
    pub outcome: String,
}

/// The gate's counts (docs/architecture.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateSummary {
    /// PASS or FAIL.
    pub pass: bool,
    /// Evaluation symbols that were scanned.
    pub symbols: Vec<String>,
    /// Functions disassembled (symbols and their callees).
    pub functions_scanned: usize,
    /// Scalar POPCNT instructions found.
    pub popcnt: usize,
    /// Software popcount sequences found.
    pub software_popcount: usize,
}

/// Bench signatures of both binaries and the candidate's declared one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Nodes the candidate's bench searched.
    pub candidate: u64,
    /// Nodes the predecessor's bench searched.
    pub predecessor: u64,
    /// The candidate's `Bench:` trailer.
    pub trailer: u64,
}

/// The Randfall proof on both binaries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProofReport {
    /// The spec's path in the candidate's tree.
    pub spec: String,
    /// Whether the predecessor passed (it must not).
    pub predecessor_pass: bool,
    /// Whether the candidate passed (it must).
    pub candidate_pass: bool,
    /// One line per position or check, as the proof reports them.
    pub detail: Vec<String>,
}

/// One SPRT stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageReport {
    /// Stage name from the profile (`short`, `long`, …).
    pub name: String,
    /// Time control or node limit, as the constitution writes it.
    pub limit: String,
    /// Book path.
    pub book: String,
    /// Lower nElo bound of the test.
    pub elo0: f64,
    /// Upper nElo bound of the test.
    pub elo1: f64,
    /// The lower LLR bound the decision was taken against (Wald's, overshoot-corrected).
    pub lower: f64,
    /// The upper LLR bound the decision was taken against (Wald's, overshoot-corrected).
    pub upper: f64,
    /// (pairs counted, LLR) after each batch or pair, in order.
    pub llr_path: Vec<(u64, f64)>,
    /// Pentanomial counts [LL, LD, DD+WL, WD, WW] from the candidate's side.
    pub pentanomial: [u64; 5],
    /// nElo estimate.
    pub nelo: f64,
    /// 95% interval of the nElo estimate.
    pub nelo_ci95: (f64, f64),
    /// `accept_h1`, `accept_h0`, `undecided` or `indistinguishable`.
    pub state: String,
    /// Faults of the candidate and the predecessor in this stage.
    #[serde(default)]
    pub faults: StageFaults,
    /// The first pairs, when earlier runs of the same match played them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<AdoptedPairs>,
}

impl StageReport {
    /// The report's view of a recorded stage, with the LLR path where one was kept (the register
    /// keeps only the final LLR: then the path is that one point).
    #[must_use]
    pub fn from_record(record: &StageRecord, llr_path: Vec<(u64, f64)>) -> Self {
        Self {
            name: record.name.clone(),
            limit: record.tc.to_string(),
            book: record.book.clone(),
            elo0: record.elo0,
            elo1: record.elo1,
            lower: record.lower,
            upper: record.upper,
            llr_path,
            pentanomial: record.pentanomial,
            nelo: record.nelo,
            nelo_ci95: (record.nelo_ci95[0], record.nelo_ci95[1]),
            state: record.state.to_string(),
            faults: record.faults.unwrap_or_default(),
            adopted: record.adopted.clone(),
        }
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.pentanomial.iter().sum()
    }
}

/// Escapes text for HTML or SVG content and double-quoted attribute values.
#[must_use]
pub fn escape_markup(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Shortens a commit id for display.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    /// A finished two-stage run for snapshot tests.
    pub fn accepted() -> RunReport {
        RunReport {
            candidate: "a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0".into(),
            candidate_summary: "search: history-based LMR".into(),
            predecessor: "0123456789abcdef0123456789abcdef01234567".into(),
            profile: "smoke".into(),
            binding: false,
            path: "standard".into(),
            bound_at: "2026-11-29T11:00:00.000Z".into(),
            candidate_sha256: "c".repeat(64),
            predecessor_sha256: "d".repeat(64),
            gate: Some(GateSummary {
                pass: true,
                symbols: vec!["coherent_evaluate_popcnt".into()],
                functions_scanned: 3,
                popcnt: 14,
                software_popcount: 0,
            }),
            bench: Some(BenchReport {
                candidate: 695_001,
                predecessor: 712_345,
                trailer: 695_001,
            }),
            proof: None,
            confirmation: None,
            isolation: Some(IsolationRecord {
                build: "bubblewrap 0.8.0: pid, ipc, uts, net namespaces".into(),
                play: "bubblewrap 0.8.0: each engine in its own namespaces".into(),
            }),
            stages: vec![
                StageReport {
                    name: "short".into(),
                    limit: "nodes=2000".into(),
                    book: "books/book-a.epd".into(),
                    elo0: 0.0,
                    elo1: 2.0,
                    lower: -2.944,
                    upper: 2.944,
                    llr_path: vec![(0, 0.0), (8, 0.9), (16, 1.7), (24, 3.1)],
                    pentanomial: [0, 2, 6, 9, 7],
                    nelo: 210.5,
                    nelo_ci95: (120.25, 300.75),
                    state: "accept_h1".into(),
                    faults: StageFaults::default(),
                    adopted: Some(crate::governance::entry::AdoptedPairs {
                        pairs: 8,
                        games_played: 17,
                        runs: vec![crate::governance::entry::EarlierRun {
                            candidate: "a".repeat(40).try_into().unwrap(),
                            predecessor: "b".repeat(40).try_into().unwrap(),
                            bound_at: crate::governance::timestamp::Timestamp::from_unix(
                                1_796_214_093,
                            ),
                            pairs: 8,
                        }],
                    }),
                },
                StageReport {
                    name: "long".into(),
                    limit: "nodes=8000".into(),
                    book: "books/book-b.epd".into(),
                    elo0: 0.5,
                    elo1: 2.5,
                    lower: -2.944,
                    upper: 2.944,
                    llr_path: vec![(0, 0.0), (8, -0.4), (16, 1.2), (24, 3.0)],
                    pentanomial: [1, 3, 8, 8, 4],
                    nelo: 150.0,
                    nelo_ci95: (40.0, 260.0),
                    state: "accept_h1".into(),
                    faults: StageFaults {
                        candidate: crate::play::tally::FaultCounts {
                            time_forfeit: 1,
                            ..Default::default()
                        },
                        predecessor: Default::default(),
                    },
                    adopted: None,
                },
            ],
            verdict: Some(Verdict::Gewinn),
            outcome: "Gewinn: both stages accepted H1 on the standard bounds".into(),
        }
    }
}
