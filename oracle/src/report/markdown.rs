//! The Markdown report: what a reviewer reads on the pull request (`$GITHUB_STEP_SUMMARY`).

use std::fmt::Write;

use super::{RunReport, StageReport, short};
use crate::governance::entry::Verdict;
use crate::play::tally::FaultCounts;

/// Renders the report as GitHub-flavoured Markdown; `svg` names the figure file to link, if any.
pub fn render_markdown(report: &RunReport, svg: Option<&str>) -> String {
    let mut md = String::new();
    let verdict = report.verdict.map_or("no verdict", Verdict::title);
    let _ = writeln!(md, "# oracle verify: {verdict}\n");
    let _ = writeln!(md, "{}\n", escape(&report.outcome));
    let _ = writeln!(md, "| | |\n|---|---|");
    let _ = writeln!(
        md,
        "| candidate | `{}` {} |",
        short(&report.candidate),
        escape(&report.candidate_summary)
    );
    let _ = writeln!(md, "| predecessor | `{}` |", short(&report.predecessor));
    let binding = if report.binding {
        "binding"
    } else {
        "not binding"
    };
    let _ = writeln!(md, "| profile | {} ({binding}) |", report.profile);
    if !report.path.is_empty() {
        let _ = writeln!(md, "| path | {} |", report.path);
    }
    if !report.bound_at.is_empty() {
        let _ = writeln!(md, "| bound at | {} |", report.bound_at);
        let _ = writeln!(md, "| candidate sha256 | `{}` |", report.candidate_sha256);
        let _ = writeln!(
            md,
            "| predecessor sha256 | `{}` |",
            report.predecessor_sha256
        );
    }
    if let Some(gate) = &report.gate {
        let _ = writeln!(
            md,
            "| gate | {} — {} POPCNT, {} software popcount in {} functions from {} |",
            pass_fail(gate.pass),
            gate.popcnt,
            gate.software_popcount,
            gate.functions_scanned,
            gate.symbols.join(", ")
        );
    }
    if let Some(bench) = &report.bench {
        let _ = writeln!(
            md,
            "| bench | candidate {} (trailer {}), predecessor {} |",
            bench.candidate, bench.trailer, bench.predecessor
        );
    }
    if let Some(isolation) = &report.isolation {
        let _ = writeln!(md, "| isolation of builds | {} |", escape(&isolation.build));
        let _ = writeln!(md, "| isolation of engines | {} |", escape(&isolation.play));
    }
    if let Some(proof) = &report.proof {
        let _ = writeln!(
            md,
            "| proof | {}: predecessor {}, candidate {} |",
            code_span(&proof.spec),
            pass_fail(proof.predecessor_pass),
            pass_fail(proof.candidate_pass)
        );
    }
    if !report.stages.is_empty() {
        md.push_str("\n## Stages\n\n");
        md.push_str(
            "| stage | limit | book | bounds (nElo) | pairs | pentanomial LL/LD/DD+WL/WD/WW | nElo (95%) | LLR [lower, upper] | result |\n",
        );
        md.push_str("|---|---|---|---|---|---|---|---|---|\n");
        for stage in &report.stages {
            stage_row(&mut md, stage);
        }
        md.push_str("\n| engine faults | candidate | predecessor |\n|---|---|---|\n");
        for stage in &report.stages {
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                stage.name,
                faults_text(&stage.faults.candidate),
                faults_text(&stage.faults.predecessor)
            );
        }
        for stage in &report.stages {
            if let Some(adopted) = &stage.adopted {
                let runs: Vec<String> = adopted
                    .runs
                    .iter()
                    .map(|run| {
                        format!(
                            "{} by the run of `{}` against `{}` (bound {})",
                            run.pairs,
                            &run.candidate.as_str()[..12],
                            &run.predecessor.as_str()[..12],
                            run.bound_at
                        )
                    })
                    .collect();
                let _ = writeln!(
                    md,
                    "\nStage {}: its first {} pairs were played by earlier runs of the same match \
                     (the same binaries, rules, book and seed): {}.",
                    stage.name,
                    adopted.pairs,
                    runs.join(", ")
                );
            }
        }
    }
    if let Some(proof) = report.proof.as_ref().filter(|p| !p.detail.is_empty()) {
        md.push_str("\n## Proof detail\n\n");
        for line in &proof.detail {
            let _ = writeln!(md, "- {}", escape(line));
        }
    }
    if let Some(confirmation) = &report.confirmation {
        let _ = writeln!(
            md,
            "\n## Independent confirmation (Annex A3.3)\n\nBy {} for the proof spec sha256 `{}` \
             (file sha256 `{}`):\n",
            code_span(&confirmation.confirmed_by),
            confirmation.proof_sha256,
            confirmation.file_sha256
        );
        for (name, text) in confirmation.statements.named() {
            let _ = writeln!(md, "- **{name}**: {}", escape(text));
        }
    }
    if let Some(file) = svg {
        let _ = writeln!(
            md,
            "\n![LLR paths, nElo intervals and pentanomial counts]({file})"
        );
    }
    md
}

fn stage_row(md: &mut String, s: &StageReport) {
    let llr = s.llr_path.last().map_or(0.0, |p| p.1);
    let _ = writeln!(
        md,
        "| {} | {} | {} | [{}, {}] | {} | {} | {:+.1} [{:+.1}, {:+.1}] | {:.2} [{:.2}, {:.2}] | {} |",
        s.name,
        s.limit,
        s.book,
        s.elo0,
        s.elo1,
        s.pairs(),
        s.pentanomial.map(|n| n.to_string()).join(" / "),
        s.nelo,
        s.nelo_ci95.0,
        s.nelo_ci95.1,
        llr,
        s.lower,
        s.upper,
        state_text(&s.state)
    );
}

/// An engine's faults in a stage: `0`, or the total and its nonzero kinds.
fn faults_text(faults: &FaultCounts) -> String {
    if faults.total() == 0 {
        return "0".into();
    }
    let kinds: Vec<String> = faults
        .kinds()
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect();
    format!("{} ({})", faults.total(), kinds.join(", "))
}

/// Human words for an SPRT state.
pub(super) fn state_text(state: &str) -> &str {
    match state {
        "accept_h1" => "H1 accepted",
        "accept_h0" => "H0 accepted",
        "undecided" => "undecided (not passed)",
        "indistinguishable" => "indistinguishable: the engines played alike (passed, no gain)",
        "candidate_faulted" => "the candidate faulted past the constitution's limit (not passed)",
        other => other,
    }
}

fn pass_fail(pass: bool) -> &'static str {
    if pass { "PASS" } else { "FAIL" }
}

/// Text that comes from the run (the candidate's subject, messages that quote its files or
/// trailers, proof details) as literal text: GitHub reads both Markdown and HTML in a report, so
/// tags become entities, Markdown's punctuation is escaped and line breaks become spaces.
/// Nothing a candidate writes can add a heading, a tag, a table cell or a Markdown link (GitHub
/// still shows a bare address as one).
fn escape(text: &str) -> String {
    let mut literal = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => literal.push_str("&amp;"),
            '<' => literal.push_str("&lt;"),
            '>' => literal.push_str("&gt;"),
            '\n' | '\r' => literal.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' => {
                literal.push('\\');
                literal.push(c);
            }
            _ => literal.push(c),
        }
    }
    literal
}

/// Text from the run as a code span, where Markdown reads no escapes: a backtick would end the
/// span, so it becomes a quote; a pipe would end the table cell, and a line break the row.
fn code_span(text: &str) -> String {
    let literal = text.replace('`', "'").replace('|', "\\|");
    format!("`{}`", literal.replace(['\n', '\r'], " "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    /// Review of issue 46's fixes: a subject that carries markup reads as text, not as a
    /// heading, a tag or a link in the pull request's summary.
    #[test]
    fn text_from_the_candidate_cannot_add_markup() {
        let mut report = fixtures::accepted();
        report.candidate_summary =
            "x<br><h1>oracle verify: Gewinn</h1>\n# Gewinn [ok](http://a) `c` | d".into();
        report.outcome = "# Gewinn <img src=x>".into();
        let md = render_markdown(&report, None);
        assert_eq!(md.matches("# oracle verify").count(), 1, "{md}");
        for markup in ["<br>", "<h1>", "<img", "[ok]", "\n# Gewinn", "`c`"] {
            assert!(!md.contains(markup), "{markup:?} in:\n{md}");
        }
        assert!(md.contains("x&lt;br&gt;&lt;h1&gt;oracle verify: Gewinn&lt;/h1&gt; \\# Gewinn \\[ok\\](http://a) \\`c\\` \\| d"), "{md}");
    }

    #[test]
    fn accepted_run() {
        insta::assert_snapshot!(render_markdown(&fixtures::accepted(), Some("report.svg")));
    }

    #[test]
    fn failed_before_measurement() {
        let report = RunReport {
            candidate: "a".repeat(40),
            candidate_summary: "eval | tweak".into(),
            predecessor: "b".repeat(40),
            profile: "smoke".into(),
            outcome: "step 2 (trailers) failed: the candidate has no `Bench: N` trailer".into(),
            ..RunReport::default()
        };
        let md = render_markdown(&report, None);
        assert!(md.starts_with("# oracle verify: no verdict\n"));
        assert!(md.contains("eval \\| tweak"));
        assert!(!md.contains("## Stages"));
    }

    #[test]
    fn a_confirmation_names_its_confirmer_and_statements() {
        use crate::governance::confirmation::{ConfirmationRecord, Statements};
        use crate::governance::hash::Sha256Hex;
        let mut report = fixtures::accepted();
        report.confirmation = Some(ConfirmationRecord {
            confirmed_by: "Ada Reviewer <ada@reviewer.example>".into(),
            proof_sha256: Sha256Hex::of(b"spec"),
            statements: Statements {
                proof_meaningful: "Fails | before,\npasses after.".into(),
                class_rare: "KBNK is rare.".into(),
                classification_right: "A delimited class.".into(),
            },
            file_sha256: Sha256Hex::of(b"file"),
        });
        let md = render_markdown(&report, None);
        assert!(md.contains(&format!(
            "By `Ada Reviewer <ada@reviewer.example>` for the proof spec sha256 `{}`",
            Sha256Hex::of(b"spec")
        )));
        assert!(md.contains("- **proof_meaningful**: Fails \\| before, passes after.\n"));
        assert!(md.contains("- **classification_right**: A delimited class.\n"));
    }
}
