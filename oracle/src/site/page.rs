//! The site's pages: the index (status, progress chart, one row per entry, newest first) and
//! one page per entry. Every text that comes from an entry or a commit is escaped: commit
//! subjects are written by whoever proposes a change.

use std::fmt::Write as _;

use serde_norway::Value;

use super::progress::{MeasuredPoint, Step, render_progress, verdict_class};
use super::{EntryView, Site};
use crate::governance::entry::{BinaryRecord, Entry, OracleCommit, StageRecord, StageState};
use crate::report::{StageReport, escape_markup as esc, render_stage_svg};

/// The stylesheet: light and dark colours, tables that scroll sideways on a phone.
pub const STYLE: &str = include_str!("style.css");

/// Top-level entry fields the entry page shows in their own sections; any other field (one a
/// newer oracle records) is shown under "Further fields".
const SHOWN_FIELDS: &[&str] = &[
    "id",
    "prev_sha256",
    "recorded_at",
    "profile",
    "path",
    "verdict",
    "claimed_gain_nelo",
    "constitution_sha256",
    "oracle",
    "toolchain",
    "candidate",
    "predecessor",
    "bound_at",
    "gate",
    "proof",
    "stages",
    "loss_budget",
    // Shown in the binding section when an entry records it.
    "isolation",
];

/// Stage fields the stage table shows; others are listed after it.
const SHOWN_STAGE_FIELDS: &[&str] = &[
    "name",
    "tc",
    "book",
    "book_sha256",
    "elo0",
    "elo1",
    "alpha",
    "beta",
    "batch_size",
    "max_games",
    "pentanomial",
    "pairs",
    "games",
    "llr",
    "lower",
    "upper",
    "state",
    "nelo",
    "nelo_ci95",
    "pgn_sha256",
];

/// The index page.
pub fn index(site: &Site) -> String {
    let mut html = String::new();
    let audit = &site.audit;
    let _ = writeln!(html, "<h1>Coherent register</h1>");
    status(&mut html, site);
    let steps: Vec<Step> = site
        .views
        .iter()
        .map(|view| Step {
            id: view.id.to_string(),
            verdict: view.entry.as_ref().ok().map(|entry| entry.verdict),
            change: view.entry.as_ref().map_or(0.0, |entry| {
                entry.claimed_gain_nelo - entry.loss_budget.booked
            }),
            verified: view.findings.is_empty(),
        })
        .collect();
    let points: Vec<MeasuredPoint> = site
        .measurements
        .iter()
        .filter_map(|m| {
            Some(MeasuredPoint {
                measured: m.measured.id.to_string(),
                baseline: m.baseline.id.to_string(),
                estimate: m.estimate()?,
                conditions: format!(
                    "{}, {} games (+{} ={} -{}), {}, {}",
                    m.tc,
                    m.games,
                    m.wins,
                    m.draws,
                    m.losses,
                    m.runner,
                    m.date.as_str().get(..10).unwrap_or(m.date.as_str())
                ),
            })
        })
        .collect();
    let _ = writeln!(
        html,
        "<section><h2>Verdicts</h2><dl class=\"legend\">\
         <dt>Gewinn</dt><dd>every stage passed and one accepted H1: a gain was measured; it lands</dd>\
         <dt>Korrektur</dt><dd>Randfall path: the proof fails on the predecessor and passes on the \
         candidate, no stage found a regression; it lands, booking its loss</dd>\
         <dt>Gleich</dt><dd>the binary is the predecessor's, byte for byte; it lands without games</dd>\
         <dt>Abgelehnt</dt><dd>the evidence for landing was not found (H0, undecided, faults past \
         the limit, a failed proof); it does not land</dd>\
         <dt>Randfall</dt><dd>a path, not a verdict: a fix for a rare, delimited class of \
         positions, judged by a proof and non-regression</dd></dl></section>\
         <section><h2>Progress</h2><p>The engine's strength accepted so far, in nElo: a Gewinn \
         adds its claimed gain, a Korrektur (Randfall) books its loss as a step down. An SPRT \
         that stops early reads high, so this sum overstates the gain. The measured points are \
         fixed-length matches between two registered engines (<code>measurements/</code>), each \
         drawn at its baseline's claimed total plus the measured nElo, with its 95% interval; \
         where they sit below the line, the claims overstate.</p>\
         <figure>{}</figure></section>",
        render_progress(&steps, &points)
    );
    let _ = writeln!(
        html,
        "<section><h2>Entries</h2><div class=\"scroll\"><table class=\"entries\">\n<thead><tr>\
         <th>Entry</th><th>Recorded</th><th>Candidate</th><th>Path<br>profile</th>\
         <th>Verdict</th><th>Stages: nElo ± 95% · games</th><th>Loss booked<br>budget used</th>\
         <th>Chain</th></tr></thead>\n<tbody>"
    );
    for view in site.views.iter().rev() {
        index_row(&mut html, site, view);
    }
    let _ = writeln!(html, "</tbody></table></div></section>");
    page(
        site,
        "index.html",
        &format!("Coherent register: {} entries", audit.count),
        &html,
    )
}

/// The verification status at the top of the index.
fn status(html: &mut String, site: &Site) {
    let audit = &site.audit;
    if audit.ok() {
        let _ = writeln!(
            html,
            "<p class=\"status ok\" id=\"status\" data-verified=\"true\">✓ <code>oracle register \
             verify</code> passes: <code>head={} n={}</code></p>",
            audit.head, audit.count
        );
        return;
    }
    let _ = writeln!(
        html,
        "<div class=\"status broken\" id=\"status\" data-verified=\"false\"><p>✗ <code>oracle \
         register verify</code> fails with {} problem(s): <code>head={} n={}</code></p><ul>",
        audit.findings.len(),
        audit.head,
        audit.count
    );
    for finding in &audit.findings {
        let file = match site
            .views
            .iter()
            .find(|view| view.file.name == finding.file)
        {
            Some(view) => format!("<a href=\"{}\">{}</a>", view.page(), esc(&finding.file)),
            None => esc(&finding.file),
        };
        let _ = writeln!(html, "<li>{file}: {}</li>", esc(&finding.message));
    }
    let _ = writeln!(html, "</ul></div>");
}

/// One row of the entry table.
fn index_row(html: &mut String, site: &Site, view: &EntryView) {
    let verified = view.findings.is_empty();
    let _ = write!(
        html,
        "<tr id=\"row-{id}\" data-entry=\"{id}\" data-verified=\"{verified}\"{}><td><a href=\"{}\">{id}</a></td>",
        if verified { "" } else { " class=\"fails\"" },
        view.page(),
        id = view.id
    );
    match &view.entry {
        Ok(entry) => {
            // `2026-10-16T18:30:00Z` as date over time, to keep the column narrow.
            let recorded = entry.recorded_at.as_ref().map_or_else(
                || "—".to_owned(),
                |at| esc(at.as_str()).replacen('T', "<br>", 1),
            );
            let stages: Vec<String> = entry.stages.iter().map(stage_summary).collect();
            let budget = entry.loss_budget;
            let _ = write!(
                html,
                "<td class=\"when\">{recorded}</td><td>{}</td><td>{}<br>{}</td><td>{}</td>\
                 <td class=\"stages\">{}</td><td class=\"num\">{:.2}<br>{:.2} / {:.2}</td>",
                candidate_cell(site, &entry.candidate, view.subject.as_deref()),
                entry.path,
                esc(entry.profile.as_deref().unwrap_or("—")),
                verdict_badge(entry),
                if stages.is_empty() {
                    "—".to_owned()
                } else {
                    stages.join("<br>")
                },
                budget.booked,
                budget.used_after,
                budget.limit
            );
        }
        Err(_) => {
            let _ = write!(
                html,
                "<td colspan=\"6\">unreadable entry: see its page</td>"
            );
        }
    }
    let chain = if verified {
        "✓".to_owned()
    } else {
        let reasons: String = view
            .findings
            .iter()
            .map(|finding| format!("<li>{}</li>", esc(&finding.message)))
            .collect();
        format!("<strong>✗ fails</strong><ul class=\"reasons\">{reasons}</ul>")
    };
    let _ = writeln!(html, "<td class=\"chain\">{chain}</td></tr>");
}

/// `short +1.2 ± 3.4 · 800 g` for one stage.
fn stage_summary(stage: &StageRecord) -> String {
    if stage.state == StageState::NotRun {
        return format!("{}: not run", esc(&stage.name));
    }
    // Every pair repeated its game: the stage measured nothing, which a `+0.0 ± …` would hide.
    if stage.state == StageState::Indistinguishable {
        return format!(
            "{}: indistinguishable (the engines played alike) · {} games",
            esc(&stage.name),
            stage.games
        );
    }
    format!(
        "{}: {} · {} games",
        esc(&stage.name),
        nelo_interval(stage.nelo, stage.nelo_ci95),
        stage.games
    )
}

/// `+1.2 ± 3.4` when the interval is symmetric (to the shown precision), else `+1.2 [-2.0, +4.8]`.
fn nelo_interval(nelo: f64, [lo, hi]: [f64; 2]) -> String {
    let (below, above) = (nelo - lo, hi - nelo);
    if (below - above).abs() < 0.05 {
        format!("{nelo:+.1} ± {:.1}", (hi - lo) / 2.0)
    } else {
        format!("{nelo:+.1} [{lo:+.1}, {hi:+.1}]")
    }
}

/// The candidate's short id (linked to the forge when there is one) and its subject.
fn candidate_cell(site: &Site, candidate: &BinaryRecord, subject: Option<&str>) -> String {
    let mut cell = commit_link(site, candidate.commit.as_str());
    if let Some(subject) = subject {
        let _ = write!(cell, " <span class=\"subject\">{}</span>", esc(subject));
    }
    cell
}

/// A commit id, shortened and linked to its forge page when a forge is known.
fn commit_link(site: &Site, commit: &str) -> String {
    let short = esc(&commit[..commit.len().min(12)]);
    match &site.forge {
        Some(forge) => format!(
            "<a class=\"commit\" href=\"{}\" title=\"{}\"><code>{short}</code></a>",
            esc(&forge.commit_url(commit)),
            esc(commit)
        ),
        None => format!(
            "<code class=\"commit\" title=\"{}\">{short}</code>",
            esc(commit)
        ),
    }
}

/// The verdict as a coloured badge.
fn verdict_badge(entry: &Entry) -> String {
    let class = verdict_class(Some(entry.verdict));
    format!("<span class=\"verdict {class}\">{}</span>", entry.verdict)
}

/// The page of entry `index` (in numbering order).
pub fn entry(site: &Site, index: usize) -> String {
    let view = &site.views[index];
    let mut html = String::new();
    let mut nav = String::from("<nav class=\"entry-nav\"><a href=\"index.html\">↑ all entries</a>");
    if let Some(previous) = index.checked_sub(1).and_then(|i| site.views.get(i)) {
        let _ = write!(
            nav,
            " <a href=\"{}\">← {}</a>",
            previous.page(),
            previous.id
        );
    }
    if let Some(next) = site.views.get(index + 1) {
        let _ = write!(nav, " <a href=\"{}\">{} →</a>", next.page(), next.id);
    }
    nav.push_str("</nav>\n");
    html.push_str(&nav);
    let verified = view.findings.is_empty();
    match &view.entry {
        Ok(entry) => {
            let _ = writeln!(
                html,
                "<h1 data-verified=\"{verified}\">{} {}</h1>",
                view.id,
                verdict_badge(entry)
            );
            if let Some(subject) = &view.subject {
                let _ = writeln!(html, "<p class=\"lead\">{}</p>", esc(subject));
            }
        }
        Err(_) => {
            let _ = writeln!(
                html,
                "<h1 data-verified=\"false\">{} <span class=\"verdict unreadable\">unreadable</span></h1>",
                view.id
            );
        }
    }
    if !verified {
        let _ = writeln!(
            html,
            "<section class=\"status broken\" id=\"problems\"><h2>Fails verification</h2><ul>"
        );
        for finding in &view.findings {
            let _ = writeln!(html, "<li>{}</li>", esc(&finding.message));
        }
        let _ = writeln!(html, "</ul></section>");
    }
    match &view.entry {
        Ok(entry) => entry_sections(&mut html, site, view, entry),
        Err(error) => {
            let _ = writeln!(
                html,
                "<section><h2>Cannot be read</h2><p>{}</p></section>",
                esc(error)
            );
        }
    }
    let _ = writeln!(
        html,
        "<section><h2>Replay</h2><p>Rebuild both commits, re-run gate, bench and proof, and \
         recompute the statistics and the verdict:</p><pre><code>oracle register replay {id}</code></pre>\
         <p>Statistics and verdict only (no builds, no engine runs):</p>\
         <pre><code>oracle register replay {id} --statistics-only</code></pre></section>",
        id = view.id
    );
    let _ = writeln!(
        html,
        "<section><h2>The entry as recorded</h2><p><code>register/{}</code>, sha256 <code>{}</code></p>\
         <pre class=\"yaml\">{}</pre></section>",
        esc(&view.file.name),
        view.sha256,
        esc(&String::from_utf8_lossy(&view.file.bytes))
    );
    html.push_str(&nav);
    page(
        site,
        &view.page(),
        &format!("Coherent register {}", view.id),
        &html,
    )
}

/// The sections of a readable entry: summary, binding, gate, bench, proof, stages, budget.
fn entry_sections(html: &mut String, site: &Site, view: &EntryView, entry: &Entry) {
    let raw: Option<Value> = serde_norway::from_slice(&view.file.bytes).ok();
    let field = |name: &str| raw.as_ref().and_then(|value| value.get(name));
    let mut rows = vec![
        ("path", entry.path.to_string()),
        ("profile", esc(entry.profile.as_deref().unwrap_or("—"))),
        (
            "recorded at",
            esc(entry.recorded_at.as_ref().map_or("—", |at| at.as_str())),
        ),
        (
            "claimed gain",
            format!("{:+.2} nElo", entry.claimed_gain_nelo),
        ),
        (
            "previous entry",
            format!(
                "<code>{}</code>",
                entry.prev_sha256.as_ref().map_or("—", |hash| hash.as_str())
            ),
        ),
    ];
    table(html, "Summary", &rows);

    rows = vec![
        ("bound at", esc(entry.bound_at.as_str())),
        ("toolchain", esc(&entry.toolchain)),
        (
            "oracle",
            format!(
                "{} at {}",
                esc(&entry.oracle.version),
                entry.oracle.commit.known().map_or_else(
                    || esc(OracleCommit::UNKNOWN),
                    |id| commit_link(site, id.as_str())
                )
            ),
        ),
        (
            "constitution sha256",
            format!("<code>{}</code>", entry.constitution_sha256),
        ),
    ];
    rows.extend(binary_rows(
        site,
        [
            "candidate commit",
            "candidate tree",
            "candidate binary sha256",
        ],
        &entry.candidate,
    ));
    if let Some(predecessor) = &entry.predecessor {
        rows.extend(binary_rows(
            site,
            [
                "predecessor commit",
                "predecessor tree",
                "predecessor binary sha256",
            ],
            predecessor,
        ));
    }
    if let Some(isolation) = field("isolation") {
        rows.push(("isolation", value_html(isolation)));
    }
    table(html, "Binding", &rows);

    if let Some(gate) = entry.gate {
        let pass = gate.popcnt_in_eval && !gate.software_popcount_in_eval;
        table(
            html,
            "Build-shape gate",
            &[
                ("result", pass_fail(pass)),
                ("POPCNT in evaluation", yes_no(gate.popcnt_in_eval)),
                (
                    "software popcount in evaluation",
                    yes_no(gate.software_popcount_in_eval),
                ),
            ],
        );
    }
    if let Some(predecessor) = &entry.predecessor {
        table(
            html,
            "Bench",
            &[
                (
                    "candidate",
                    format!("{} nodes", entry.candidate.bench_nodes),
                ),
                ("predecessor", format!("{} nodes", predecessor.bench_nodes)),
            ],
        );
    }
    if let Some(proof) = &entry.proof {
        let detail: String = proof
            .detail
            .iter()
            .map(|line| format!("<li>{}</li>", esc(line)))
            .collect();
        table(
            html,
            "Randfall proof",
            &[
                ("spec", format!("<code>{}</code>", esc(&proof.spec))),
                ("spec sha256", format!("<code>{}</code>", proof.spec_sha256)),
                ("predecessor (must fail)", proof.predecessor.to_string()),
                ("candidate (must pass)", proof.candidate.to_string()),
                ("detail", format!("<ul class=\"detail\">{detail}</ul>")),
            ],
        );
    }
    let raw_stages = field("stages").and_then(Value::as_sequence);
    for (number, stage) in entry.stages.iter().enumerate() {
        let raw_stage = raw_stages.and_then(|stages| stages.get(number));
        stage_section(html, number + 1, stage, raw_stage);
    }
    let budget = entry.loss_budget;
    table(
        html,
        "Loss budget",
        &[
            (
                "booking",
                field("loss_budget")
                    .and_then(|budget| budget.get("booking"))
                    .map_or_else(|| "—".to_owned(), value_html),
            ),
            ("booked by this entry", format!("{:.4} nElo", budget.booked)),
            ("used before", format!("{:.4} nElo", budget.used_before)),
            ("used after", format!("{:.4} nElo", budget.used_after)),
            ("limit", format!("{:.4} nElo", budget.limit)),
        ],
    );
    let further = unshown_fields(raw.as_ref(), SHOWN_FIELDS);
    if !further.is_empty() {
        table(html, "Further fields", &further);
    }
}

/// Rows for one engine binary.
fn binary_rows(
    site: &Site,
    [commit, tree, sha256]: [&'static str; 3],
    binary: &BinaryRecord,
) -> [(&'static str, String); 3] {
    [
        (commit, commit_link(site, binary.commit.as_str())),
        (tree, format!("<code>{}</code>", binary.tree)),
        (sha256, format!("<code>{}</code>", binary.binary_sha256)),
    ]
}

/// One stage: its parameters and results, and the report's figure of it.
fn stage_section(html: &mut String, number: usize, stage: &StageRecord, raw: Option<&Value>) {
    let _ = writeln!(
        html,
        "<section class=\"stage\"><h2>Stage {number}: {} <span class=\"state {}\">{}</span></h2>",
        esc(&stage.name),
        stage.state,
        stage.state
    );
    if stage.state == StageState::NotRun {
        let _ = writeln!(html, "<p>Not run: an earlier step did not pass.</p>");
    } else {
        let figure = render_stage_svg(
            number,
            &StageReport::from_record(stage, vec![(stage.pairs, stage.llr)]),
        );
        let _ = writeln!(html, "<figure class=\"chart\">{figure}</figure>");
    }
    let rows = [
        ("time control", esc(&stage.tc.to_string())),
        (
            "book",
            format!(
                "<code>{}</code> (sha256 <code>{}</code>)",
                esc(&stage.book),
                stage.book_sha256
            ),
        ),
        (
            "test",
            format!(
                "H0 {} vs H1 {} nElo, α {}, β {}, batches of {} pairs, at most {} games",
                stage.elo0, stage.elo1, stage.alpha, stage.beta, stage.batch_size, stage.max_games
            ),
        ),
        (
            "LLR",
            format!(
                "{:.3} against bounds [{:.3}, {:.3}]",
                stage.llr, stage.lower, stage.upper
            ),
        ),
        (
            "nElo (95%)",
            format!(
                "{} = [{:+.2}, {:+.2}]",
                nelo_interval(stage.nelo, stage.nelo_ci95),
                stage.nelo_ci95[0],
                stage.nelo_ci95[1]
            ),
        ),
        (
            "pentanomial LL LD DD+WL WD WW",
            format!("{:?}", stage.pentanomial),
        ),
        ("games", format!("{} ({} pairs)", stage.games, stage.pairs)),
        (
            "PGN sha256",
            stage
                .pgn_sha256
                .as_ref()
                .map_or_else(|| "—".to_owned(), |hash| format!("<code>{hash}</code>")),
        ),
    ];
    let rows: Vec<(String, String)> = rows
        .into_iter()
        .map(|(label, value)| (label.to_owned(), value))
        .chain(unshown_fields(raw, SHOWN_STAGE_FIELDS))
        .collect();
    let _ = writeln!(html, "{}</section>", rows_table(&rows));
}

/// The fields of a mapping that no section shows (ones a newer oracle records), generically.
fn unshown_fields(value: Option<&Value>, shown: &[&str]) -> Vec<(String, String)> {
    value
        .and_then(Value::as_mapping)
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| {
            let key = key.as_str()?;
            (!shown.contains(&key)).then(|| (esc(key), value_html(value)))
        })
        .collect()
}

/// Any YAML value, generically: scalars as text, mappings as nested tables.
fn value_html(value: &Value) -> String {
    match value {
        Value::Null => "—".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => esc(text),
        Value::Sequence(items)
            if items
                .iter()
                .all(|item| !item.is_mapping() && !item.is_sequence()) =>
        {
            let parts: Vec<String> = items.iter().map(value_html).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Sequence(items) => {
            let parts: String = items
                .iter()
                .map(|item| format!("<li>{}</li>", value_html(item)))
                .collect();
            format!("<ol>{parts}</ol>")
        }
        Value::Mapping(map) => {
            let rows: Vec<(String, String)> = map
                .iter()
                .map(|(key, value)| {
                    (
                        key.as_str().map_or_else(|| value_html(key), esc),
                        value_html(value),
                    )
                })
                .collect();
            rows_table(&rows)
        }
        Value::Tagged(tagged) => format!(
            "{} {}",
            esc(&tagged.tag.to_string()),
            value_html(&tagged.value)
        ),
    }
}

/// A section with a heading and a two-column table (values are already HTML).
fn table(html: &mut String, title: &str, rows: &[(impl AsRef<str>, String)]) {
    let _ = writeln!(
        html,
        "<section><h2>{title}</h2>{}</section>",
        rows_table(rows)
    );
}

/// A two-column table of (label, HTML value).
fn rows_table(rows: &[(impl AsRef<str>, String)]) -> String {
    let mut table = String::from("<div class=\"scroll\"><table class=\"kv\">");
    for (label, value) in rows {
        let _ = write!(
            table,
            "<tr><th>{}</th><td>{value}</td></tr>",
            label.as_ref()
        );
    }
    table.push_str("</table></div>");
    table
}

fn pass_fail(pass: bool) -> String {
    if pass {
        "<span class=\"pass\">PASS</span>".to_owned()
    } else {
        "<span class=\"fail\">FAIL</span>".to_owned()
    }
}

fn yes_no(flag: bool) -> String {
    (if flag { "yes" } else { "no" }).to_owned()
}

/// A whole HTML document around `body` (links relative, so it works from `file://`).
fn page(site: &Site, name: &str, title: &str, body: &str) -> String {
    let canonical = site.base_url.as_ref().map_or_else(String::new, |base| {
        format!("<link rel=\"canonical\" href=\"{}/{name}\">\n", esc(base))
    });
    let forge = site.forge.as_ref().map_or_else(String::new, |forge| {
        format!(" · <a href=\"{}\">repository</a>", esc(forge.base()))
    });
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n<title>{title}</title>\n\
         <link rel=\"icon\" href=\"data:,\">\n<link rel=\"stylesheet\" href=\"style.css\">\n\
         {canonical}</head>\n<body>\n<main>\n{body}</main>\n<footer>Built by <code>oracle register site</code> \
         (oracle {}) from the register with head <code>{}</code>{forge}.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        site.audit.head
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_plus_minus_when_symmetric() {
        assert_eq!(nelo_interval(2.0, [-1.0, 5.0]), "+2.0 ± 3.0");
        assert_eq!(nelo_interval(2.0, [-1.0, 9.0]), "+2.0 [-1.0, +9.0]");
    }

    #[test]
    fn fields_no_section_shows_are_listed() {
        let value: Value =
            serde_norway::from_str("name: short\nfaults: [0, 2]\nllr: 1.5\nconfirmation: null")
                .unwrap();
        let further = unshown_fields(Some(&value), SHOWN_STAGE_FIELDS);
        assert_eq!(
            further,
            [
                ("faults".to_owned(), "[0, 2]".to_owned()),
                ("confirmation".to_owned(), "—".to_owned())
            ]
        );
        assert!(unshown_fields(None, SHOWN_FIELDS).is_empty());
    }

    #[test]
    fn unknown_fields_render_generically_and_escaped() {
        let value: Value =
            serde_norway::from_str("sandbox: {kind: \"<b>bwrap</b>\", faults: [0, 1]}\nnone: null")
                .unwrap();
        let html = value_html(&value);
        assert!(html.contains("&lt;b&gt;bwrap&lt;/b&gt;"), "{html}");
        assert!(
            html.contains("[0, 1]") && html.contains("<th>none</th><td>—</td>"),
            "{html}"
        );
    }
}
