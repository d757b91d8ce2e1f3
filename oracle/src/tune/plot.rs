//! An SVG of θ per parameter over the duels of both runs of a pair.

use std::fmt::Write as _;

use super::run::RunState;

/// Width and height of one parameter's panel, in pixels.
const PANEL: (f64, f64) = (360.0, 140.0);
/// Panels per row.
const COLUMNS: usize = 3;
/// Inner margin of a panel.
const MARGIN: f64 = 24.0;

/// θ trajectories of both runs, one panel per parameter, with the start value dashed.
#[must_use]
pub fn theta_svg(run1: &RunState, run2: &RunState) -> String {
    let n = run1.params.len();
    let rows = n.div_ceil(COLUMNS).max(1);
    let (w, h) = (PANEL.0 * COLUMNS as f64, PANEL.1 * rows as f64 + 20.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n\
         <text x=\"4\" y=\"14\">θ over duels: run 1 blue, run 2 orange, start dashed</text>\n"
    );
    for (i, p) in run1.params.iter().enumerate() {
        let x0 = PANEL.0 * (i % COLUMNS) as f64;
        let y0 = 20.0 + PANEL.1 * (i / COLUMNS) as f64;
        let (xs1, xs2) = (duel_axis(run1), duel_axis(run2));
        let values = run1.trajectory.iter().chain(&run2.trajectory).map(|t| t[i]);
        let (lo, hi) = values.fold((p.start, p.start), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let span = if hi > lo { hi - lo } else { 1.0 };
        let last = run1.total_duels().max(1) as f64;
        let px = |d: f64| x0 + MARGIN + d / last * (PANEL.0 - 2.0 * MARGIN);
        let py = |v: f64| y0 + PANEL.1 - MARGIN - (v - lo) / span * (PANEL.1 - 2.0 * MARGIN);
        let _ = writeln!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#ccc\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{} [{:.2}, {:.2}]</text>\
             <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>",
            x0 + 4.0,
            y0 + 4.0,
            PANEL.0 - 8.0,
            PANEL.1 - 8.0,
            x0 + 10.0,
            y0 + 18.0,
            escape(&p.name),
            lo,
            hi,
            px(0.0),
            px(last),
            py(p.start),
            py(p.start)
        );
        for (run, xs, colour) in [(run1, &xs1, "#1f77b4"), (run2, &xs2, "#ff7f0e")] {
            let points: Vec<String> = xs
                .iter()
                .zip(&run.trajectory)
                .map(|(&d, t)| format!("{:.1},{:.1}", px(d), py(t[i])))
                .collect();
            let _ = writeln!(
                svg,
                "<polyline fill=\"none\" stroke=\"{colour}\" points=\"{}\"/>",
                points.join(" ")
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// Duels finished at each trajectory point: 0, then the end of every bundle.
fn duel_axis(run: &RunState) -> Vec<f64> {
    let bundle = run.spec.bundle as f64;
    let total = run.duels.len() as f64;
    (0..run.trajectory.len())
        .map(|b| (b as f64 * bundle).min(total))
        .collect()
}

/// Parameter names are engine-supplied: escape them for XML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::run::{DuelRecord, DuelScore, RunSpec};
    use crate::tune::schedule::{Kind, Param};

    #[test]
    fn one_panel_and_two_lines_per_parameter() {
        let params: Vec<Param> = ["A<1>", "B"]
            .iter()
            .map(|n| Param {
                name: (*n).into(),
                kind: Kind::Float,
                start: 0.0,
                min: -10.0,
                max: 10.0,
                c_end: 1.0,
                r_end: 0.002,
            })
            .collect();
        let spec = RunSpec {
            games: 40,
            pairs_per_duel: 5,
            bundle: 2,
            seed: 1,
            context: String::new(),
        };
        let mut run = RunState::new(spec, params).unwrap();
        while !run.is_finished() {
            let bundle = run
                .next_bundle()
                .unwrap()
                .into_iter()
                .map(|plan| DuelRecord {
                    plan,
                    score: DuelScore {
                        wins: 6,
                        draws: 2,
                        losses: 2,
                    },
                })
                .collect();
            run.apply(bundle).unwrap();
        }
        let svg = theta_svg(&run, &run);
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert_eq!(svg.matches("<rect").count(), 2);
        assert!(svg.contains("A&lt;1&gt;"));
        // Start plus 2 bundles of 2 duels: three points per line.
        let line = svg.lines().find(|l| l.starts_with("<polyline")).unwrap();
        assert_eq!(line.matches(',').count(), 3);
    }
}
