//! The progress chart: the engine's cumulative accepted nElo over the register's entries, a
//! Gewinn stepping up by its claimed gain and a Korrektur stepping down by the loss it booked.

use std::fmt::Write as _;

use crate::governance::entry::Verdict;
use crate::report::escape_markup;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 40.0;
/// Above this many entries only every n-th id is written under the axis.
const MAX_LABELS: usize = 16;

/// One entry as the chart sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The entry id, e.g. `T-0002`.
    pub id: String,
    /// Its verdict; `None` when the entry cannot be read.
    pub verdict: Option<Verdict>,
    /// What it adds to the engine's strength: claimed gain minus booked loss, in nElo.
    pub change: f64,
    /// Whether `register verify` found nothing wrong with it.
    pub verified: bool,
}

/// The verdict's CSS class and colour name on the site.
#[must_use]
pub fn verdict_class(verdict: Option<Verdict>) -> &'static str {
    verdict.map_or("unreadable", Verdict::name)
}

/// The chart as an inline SVG element (colours follow the page's CSS classes).
#[must_use]
pub fn render_progress(steps: &[Step]) -> String {
    let totals: Vec<f64> = steps
        .iter()
        .scan(0.0, |total, step| {
            *total += step.change;
            Some(*total)
        })
        .collect();
    let lo = totals.iter().copied().fold(0.0_f64, f64::min);
    let hi = totals.iter().copied().fold(0.0_f64, f64::max);
    let span = if hi - lo < 1e-9 { 1.0 } else { hi - lo };
    let (lo, hi) = (lo - span * 0.08, hi + span * 0.08);
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y = |value: f64| TOP + (hi - value) / (hi - lo) * plot_h;
    let slot = (WIDTH - LEFT - RIGHT) / steps.len().max(1) as f64;
    let x = |index: usize| LEFT + slot * index as f64;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg class="progress" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="progress-title"><title id="progress-title">Cumulative accepted nElo over {} entries</title>"#,
        steps.len()
    );
    for (value, class) in [(hi, "tick"), (0.0, "zero"), (lo, "tick")] {
        let _ = writeln!(
            svg,
            r#"<line class="{class}" x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}"/><text class="label" x="{:.1}" y="{:.1}" text-anchor="end">{value:+.1}</text>"#,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y(value) + 4.0,
            yy = y(value),
        );
    }
    // A step plot: each entry holds its total across its slot, so a booking is a step down.
    let mut path = format!("M{:.1},{:.1}", x(0), y(0.0));
    for (index, total) in totals.iter().enumerate() {
        let _ = write!(
            path,
            " L{:.1},{:.1} L{:.1},{:.1}",
            x(index),
            y(*total),
            x(index + 1),
            y(*total)
        );
    }
    let _ = writeln!(svg, r#"<path class="line" d="{path}"/>"#);
    let every = steps.len().div_ceil(MAX_LABELS).max(1);
    for (index, (step, total)) in steps.iter().zip(&totals).enumerate() {
        let cx = x(index) + slot / 2.0;
        let fill = if step.verified { "" } else { " broken" };
        let _ = writeln!(
            svg,
            r#"<circle class="mark {}{fill}" cx="{cx:.1}" cy="{:.1}" r="4.5"><title>{} {}: {:+.2} nElo, total {total:+.2}{}</title></circle>"#,
            verdict_class(step.verdict),
            y(*total),
            escape_markup(&step.id),
            verdict_class(step.verdict),
            step.change,
            if step.verified {
                ""
            } else {
                " (fails verification)"
            }
        );
        if index % every == 0 {
            let _ = writeln!(
                svg,
                r#"<text class="label" x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                HEIGHT - BOTTOM + 16.0,
                escape_markup(&step.id)
            );
        }
    }
    let _ = writeln!(
        svg,
        r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">register entries, oldest first; nElo accepted so far</text>"#,
        LEFT + (WIDTH - LEFT - RIGHT) / 2.0,
        HEIGHT - 6.0
    );
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(id: &str, verdict: Verdict, change: f64) -> Step {
        Step {
            id: id.into(),
            verdict: Some(verdict),
            change,
            verified: true,
        }
    }

    #[test]
    fn a_booking_is_a_step_down_and_a_rejection_is_flat() {
        let svg = render_progress(&[
            step("T-0001", Verdict::Genesis, 0.0),
            step("T-0002", Verdict::Gewinn, 4.0),
            step("T-0003", Verdict::Korrektur, -1.0),
            step("T-0004", Verdict::Abgelehnt, 0.0),
        ]);
        let path = svg
            .lines()
            .find_map(|line| line.strip_prefix(r#"<path class="line" d=""#))
            .unwrap();
        let ys: Vec<f64> = path
            .split(' ')
            .map(|point| {
                point.trim_end_matches(r#""/>"#)[1..]
                    .split(',')
                    .nth(1)
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        // Start, then two points per entry: 0, 0, +4, +4, +3, +3, +3, +3 (SVG y grows downwards).
        assert_eq!(ys.len(), 9);
        assert!(ys[3] < ys[1], "a gain goes up: {ys:?}");
        assert!(ys[5] > ys[3], "a booking steps down: {ys:?}");
        assert!((ys[7] - ys[5]).abs() < 1e-9, "a rejection is flat: {ys:?}");
        assert!(svg.contains("T-0003 korrektur: -1.00 nElo, total +3.00"));
    }

    #[test]
    fn ids_are_escaped_and_broken_entries_marked() {
        let mut odd = step("<T>", Verdict::Gewinn, 1.0);
        odd.verified = false;
        let svg = render_progress(&[odd]);
        assert!(svg.contains("&lt;T&gt;") && !svg.contains("<T>"));
        assert!(svg.contains(r#"class="mark gewinn broken""#));
    }
}
