//! The figures: per stage, the LLR path against its bounds, the nElo estimate with its 95%
//! interval against the test's bounds, and the pentanomial bars. One self-contained SVG
//! (no scripts, no external fonts or images).

use std::fmt::Write;

use super::markdown::state_text;
use super::{RunReport, StageReport, escape_markup as escape, short};
use crate::governance::entry::Verdict;
use crate::stats::CurvePoint;

const WIDTH: f64 = 760.0;
const PANEL: f64 = 230.0;
const HEADER: f64 = 40.0;
const LLR_BOX: Box2 = Box2 {
    x: 75.0,
    y: 30.0,
    w: 355.0,
    h: 170.0,
};
const NELO_BOX: Box2 = Box2 {
    x: 470.0,
    y: 30.0,
    w: 270.0,
    h: 40.0,
};
const PENTA_BOX: Box2 = Box2 {
    x: 470.0,
    y: 100.0,
    w: 270.0,
    h: 100.0,
};

#[derive(Debug, Clone, Copy)]
struct Box2 {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

/// A linear map from a data interval onto a pixel interval.
#[derive(Debug, Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Scale {
    fn new(lo: f64, hi: f64, from: f64, to: f64) -> Self {
        let hi = if hi - lo < 1e-9 { lo + 1.0 } else { hi };
        Self { lo, hi, from, to }
    }
    fn at(self, v: f64) -> f64 {
        self.from + (v - self.lo) / (self.hi - self.lo) * (self.to - self.from)
    }
}

/// Renders the whole report's figures as one SVG document.
pub fn render_svg(report: &RunReport) -> String {
    let height = HEADER + PANEL * report.stages.len().max(1) as f64;
    let mut svg = open_svg(height);
    let verdict = report.verdict.map_or("no verdict", Verdict::name);
    let _ = writeln!(
        svg,
        r#"<text x="10" y="22" font-size="14" font-weight="bold">{} vs {} · {} · {} · {}</text>"#,
        short(&report.candidate),
        short(&report.predecessor),
        escape(&report.profile),
        escape(&report.path),
        escape(verdict)
    );
    if report.stages.is_empty() {
        let _ = writeln!(
            svg,
            r#"<text x="10" y="{}">no stage was played</text>"#,
            HEADER + 20.0
        );
    }
    for (index, stage) in report.stages.iter().enumerate() {
        let top = HEADER + PANEL * index as f64;
        let _ = writeln!(svg, r#"<g transform="translate(0,{top})">"#);
        stage_panel(&mut svg, index + 1, stage);
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    svg
}

/// Renders one stage's panel (LLR against its bounds, nElo interval, pentanomial bars) as a
/// standalone SVG document, for pages that show stages one by one.
pub fn render_stage_svg(number: usize, stage: &StageReport) -> String {
    let mut svg = open_svg(PANEL);
    stage_panel(&mut svg, number, stage);
    svg.push_str("</svg>\n");
    svg
}

/// The opening tag and white background of an SVG document `height` pixels tall.
fn open_svg(height: f64) -> String {
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    svg
}

fn stage_panel(svg: &mut String, number: usize, s: &StageReport) {
    let _ = writeln!(
        svg,
        r#"<text x="10" y="16" font-weight="bold">stage {number}: {} · {} · {} · [{}, {}] nElo · {}</text>"#,
        escape(&s.name),
        escape(&s.limit),
        escape(&s.book),
        s.elo0,
        s.elo1,
        escape(state_text(&s.state))
    );
    llr_chart(svg, s);
    nelo_chart(svg, s);
    penta_chart(svg, s);
}

fn llr_chart(svg: &mut String, s: &StageReport) {
    let b = LLR_BOX;
    let max_pairs = s.llr_path.iter().map(|p| p.0).max().unwrap_or(0).max(1) as f64;
    let (mut lo, mut hi) = (s.lower, s.upper);
    for &(_, llr) in &s.llr_path {
        lo = lo.min(llr);
        hi = hi.max(llr);
    }
    let pad = (hi - lo) * 0.08;
    let x = Scale::new(0.0, max_pairs, b.x, b.x + b.w);
    let y = Scale::new(lo - pad, hi + pad, b.y + b.h, b.y);
    frame(svg, b);
    for (bound, label) in [(s.upper, "H1"), (s.lower, "H0"), (0.0, "")] {
        let yy = y.at(bound);
        let dash = if label.is_empty() { "2,3" } else { "6,3" };
        let _ = writeln!(
            svg,
            r##"<line x1="{}" y1="{yy:.1}" x2="{}" y2="{yy:.1}" stroke="#888" stroke-dasharray="{dash}"/>"##,
            b.x,
            b.x + b.w
        );
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{label} {bound:.2}</text>"#,
            b.x - 4.0,
            yy + 4.0
        );
    }
    // A single point is a final LLR without the looks that led to it (the register keeps only
    // the end): drawn as a dot, never as a line that would invent a path.
    let caption = if let [(pairs, llr)] = s.llr_path[..] {
        let _ = writeln!(
            svg,
            r##"<circle cx="{:.1}" cy="{:.1}" r="4" fill="#1f5fbf"/>"##,
            x.at(pairs as f64),
            y.at(llr)
        );
        format!("final LLR {llr:.2} after {pairs} pairs (no path recorded)")
    } else {
        let points: Vec<String> = s
            .llr_path
            .iter()
            .map(|&(pairs, llr)| format!("{:.1},{:.1}", x.at(pairs as f64), y.at(llr)))
            .collect();
        let _ = writeln!(
            svg,
            r##"<polyline points="{}" fill="none" stroke="#1f5fbf" stroke-width="2"/>"##,
            points.join(" ")
        );
        format!("LLR over {} pairs", s.pairs())
    };
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{caption}</text>"#,
        b.x + b.w / 2.0,
        b.y + b.h + 16.0,
    );
}

fn nelo_chart(svg: &mut String, s: &StageReport) {
    let b = NELO_BOX;
    let lo = s.nelo_ci95.0.min(s.elo0).min(s.nelo);
    let hi = s.nelo_ci95.1.max(s.elo1).max(s.nelo);
    let pad = (hi - lo).max(1.0) * 0.1;
    let x = Scale::new(lo - pad, hi + pad, b.x, b.x + b.w);
    let mid = b.y + b.h / 2.0;
    let _ = writeln!(
        svg,
        r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ccc"/>"##,
        b.x,
        b.y + b.h,
        b.x + b.w,
        b.y + b.h
    );
    let ends = (x.at(lo - pad), x.at(hi + pad));
    for (value, anchor) in [(lo - pad, "start"), (0.0, "middle"), (hi + pad, "end")] {
        let at = x.at(value);
        let crowded = anchor == "middle" && (at - ends.0 < 30.0 || ends.1 - at < 30.0);
        if crowded {
            continue;
        }
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{}" text-anchor="{anchor}" fill="#666">{value:+.0}</text>"##,
            x.at(value),
            b.y + b.h + 12.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<rect x="{:.1}" y="{}" width="{:.1}" height="{}" fill="#cfe3c0"/>"##,
        x.at(s.elo0),
        b.y,
        (x.at(s.elo1) - x.at(s.elo0)).max(1.0),
        b.h
    );
    let _ = writeln!(
        svg,
        r##"<line x1="{:.1}" y1="{mid}" x2="{:.1}" y2="{mid}" stroke="#333" stroke-width="2"/>"##,
        x.at(s.nelo_ci95.0),
        x.at(s.nelo_ci95.1)
    );
    let _ = writeln!(
        svg,
        r##"<circle cx="{:.1}" cy="{mid}" r="4" fill="#1f5fbf"/>"##,
        x.at(s.nelo)
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}">nElo {:+.1} [{:+.1}, {:+.1}] (shaded: [{}, {}])</text>"#,
        b.x,
        b.y + b.h + 26.0,
        s.nelo,
        s.nelo_ci95.0,
        s.nelo_ci95.1,
        s.elo0,
        s.elo1
    );
}

fn penta_chart(svg: &mut String, s: &StageReport) {
    let b = PENTA_BOX;
    let labels = ["LL", "LD", "DD+WL", "WD", "WW"];
    let max = s.pentanomial.iter().copied().max().unwrap_or(0).max(1) as f64;
    let slot = b.w / 5.0;
    for (i, (&count, label)) in s.pentanomial.iter().zip(labels).enumerate() {
        let h = count as f64 / max * (b.h - 14.0);
        let left = b.x + slot * i as f64 + slot * 0.15;
        let _ = writeln!(
            svg,
            r##"<rect x="{left:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="#7a9cc6"/>"##,
            b.y + b.h - h,
            slot * 0.7
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{count}</text>"#,
            left + slot * 0.35,
            b.y + b.h - h - 3.0
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
            left + slot * 0.35,
            b.y + b.h + 14.0
        );
    }
}

fn frame(svg: &mut String, b: Box2) {
    let _ = writeln!(
        svg,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#ccc"/>"##,
        b.x, b.y, b.w, b.h
    );
}

/// The SPRT calculator's two curves against true logistic Elo, as Fishtest's calculator draws
/// them: pass probability (top) and expected number of games (bottom), the design's bounds
/// `[elo0, elo1]` (logistic Elo) marked; `title` names the design.
pub fn render_calculator_svg(title: &str, curve: &[CurvePoint], bounds: [f64; 2]) -> String {
    const PASS_BOX: Box2 = Box2 {
        x: 75.0,
        y: 50.0,
        w: 640.0,
        h: 200.0,
    };
    const GAMES_BOX: Box2 = Box2 {
        x: 75.0,
        y: 310.0,
        w: 640.0,
        h: 200.0,
    };
    let mut svg = open_svg(560.0);
    let _ = writeln!(
        svg,
        r#"<text x="10" y="22" font-size="14" font-weight="bold">{}</text>"#,
        escape(title)
    );
    let (first, last) = match (curve.first(), curve.last()) {
        (Some(first), Some(last)) => (first.elo, last.elo),
        _ => (bounds[0], bounds[1]),
    };
    let most_games = curve.iter().map(|p| p.expected_games).fold(0.0, f64::max);
    let panels = [
        (PASS_BOX, "pass probability", 1.0),
        (GAMES_BOX, "expected games", most_games),
    ];
    for (index, (b, name, top)) in panels.into_iter().enumerate() {
        let x = Scale::new(first, last, b.x, b.x + b.w);
        let y = Scale::new(0.0, top, b.y + b.h, b.y);
        frame(&mut svg, b);
        for (bound, label) in bounds.iter().zip(["elo0", "elo1"]) {
            let xx = x.at(*bound);
            let _ = writeln!(
                svg,
                r##"<line x1="{xx:.1}" y1="{}" x2="{xx:.1}" y2="{}" stroke="#e69500" stroke-dasharray="6,3"/>"##,
                b.y,
                b.y + b.h
            );
            let _ = writeln!(
                svg,
                r##"<text x="{xx:.1}" y="{}" text-anchor="middle" fill="#e69500">{label} {bound:.2}</text>"##,
                b.y - 4.0
            );
        }
        let value = |p: &CurvePoint| {
            if index == 0 {
                p.pass_probability
            } else {
                p.expected_games
            }
        };
        let points: Vec<String> = curve
            .iter()
            .map(|p| format!("{:.1},{:.1}", x.at(p.elo), y.at(value(p))))
            .collect();
        let _ = writeln!(
            svg,
            r##"<polyline points="{}" fill="none" stroke="#1f5fbf" stroke-width="2"/>"##,
            points.join(" ")
        );
        let top_text = if index == 0 {
            "100%".to_owned()
        } else {
            format!("{top:.0}")
        };
        for (v, text) in [(0.0, "0".to_owned()), (top, top_text)] {
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{:.1}" text-anchor="end">{text}</text>"#,
                b.x - 4.0,
                y.at(v) + 4.0
            );
        }
        for (v, anchor) in [(first, "start"), (last, "end")] {
            let _ = writeln!(
                svg,
                r##"<text x="{:.1}" y="{}" text-anchor="{anchor}" fill="#666">{v:+.2}</text>"##,
                x.at(v),
                b.y + b.h + 14.0
            );
        }
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">{name} against true logistic Elo</text>"#,
            b.x + b.w / 2.0,
            b.y + b.h + 28.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    #[test]
    fn accepted_run() {
        insta::assert_snapshot!(render_svg(&fixtures::accepted()));
    }

    #[test]
    fn bounds_and_path_are_placed_on_the_scale() {
        let stage = &fixtures::accepted().stages[0];
        let b = LLR_BOX;
        let pad = (3.1 - -2.944) * 0.08;
        let y = Scale::new(-2.944 - pad, 3.1 + pad, b.y + b.h, b.y);
        // The path ends above the upper bound: it crossed H1.
        assert!(y.at(3.1) < y.at(stage.upper));
        assert!((y.at(-2.944 - pad) - (b.y + b.h)).abs() < 1e-9);
    }

    #[test]
    fn a_final_llr_alone_is_a_dot_not_a_path() {
        let mut stage = fixtures::accepted().stages[0].clone();
        stage.llr_path = vec![(24, 3.1)];
        let svg = render_stage_svg(1, &stage);
        assert!(
            svg.contains("<circle") && !svg.contains("<polyline"),
            "{svg}"
        );
        assert!(svg.contains("final LLR 3.10 after 24 pairs"), "{svg}");
        assert!(svg.contains(r#"height="230""#), "{svg}");
    }

    #[test]
    fn text_is_escaped() {
        let mut report = fixtures::accepted();
        report.profile = "<script>&".into();
        let svg = render_svg(&report);
        assert!(svg.contains("&lt;script&gt;&amp;") && !svg.contains("<script>"));
    }
}
