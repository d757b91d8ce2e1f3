//! The progress chart: the engine's cumulative accepted nElo over the register's entries, a
//! Gewinn stepping up by its claimed gain and a Korrektur stepping down by the loss it booked;
//! beside that claimed line, the measured points of `measurements/` (docs/progress.md).
//!
//! A measured point stands at the measured engine's entry, at the claimed total of its baseline
//! plus the measured nElo: where the claimed line would be if the claims were exact.

use std::fmt::Write as _;

use crate::governance::entry::Verdict;
use crate::measurement::Estimate;
use crate::report::escape_markup;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 40.0;
/// Above this many entries only every n-th id is written under the axis.
const MAX_LABELS: usize = 16;
/// Length of the arrow that shows a bound, in pixels.
const ARROW: f64 = 18.0;
/// Marker shapes of the measured points, one per baseline in turn (CSS classes).
const SHAPES: [&str; 3] = ["diamond", "square", "triangle"];

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

/// One measured point as the chart sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPoint {
    /// The measured engine's entry id.
    pub measured: String,
    /// The baseline's entry id.
    pub baseline: String,
    /// What the match says about the difference.
    pub estimate: Estimate,
    /// Time control, games, runner and date, for the tooltip.
    pub conditions: String,
}

/// A measured point placed on the chart, in entry slots and nElo.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Placed {
    /// Its position in the points given.
    point: usize,
    /// The measured engine's slot.
    slot: usize,
    /// Which baseline (in order of first appearance), and so its marker shape.
    series: usize,
    /// The claimed total at the baseline's entry.
    base: f64,
    /// The marker's value: base plus the estimate, or plus the bound.
    value: f64,
    /// base plus the 95% interval, for an estimate.
    ci95: Option<[f64; 2]>,
    /// The direction the difference is open towards: +1 above a lower bound, −1 below an
    /// upper bound, 0 for an estimate.
    open: f64,
}

/// The claimed total after each entry.
fn claimed_totals(steps: &[Step]) -> Vec<f64> {
    steps
        .iter()
        .scan(0.0, |total, step| {
            *total += step.change;
            Some(*total)
        })
        .collect()
}

/// Places the points whose two entries are both among `steps`, and lists the baselines in
/// order of first appearance.
fn place(steps: &[Step], totals: &[f64], points: &[MeasuredPoint]) -> (Vec<Placed>, Vec<String>) {
    let slot_of = |id: &str| steps.iter().position(|step| step.id == id);
    let mut baselines: Vec<String> = Vec::new();
    let mut placed = Vec::new();
    for (index, point) in points.iter().enumerate() {
        let (Some(slot), Some(baseline)) = (slot_of(&point.measured), slot_of(&point.baseline))
        else {
            continue;
        };
        let series = match baselines.iter().position(|id| *id == point.baseline) {
            Some(series) => series,
            None => {
                baselines.push(point.baseline.clone());
                baselines.len() - 1
            }
        };
        let base = totals[baseline];
        let (value, ci95, open) = match point.estimate {
            Estimate::Interval { nelo, ci95 } => {
                (base + nelo, Some([base + ci95[0], base + ci95[1]]), 0.0)
            }
            Estimate::AtLeast(bound) => (base + bound, None, 1.0),
            Estimate::AtMost(bound) => (base + bound, None, -1.0),
        };
        placed.push(Placed {
            point: index,
            slot,
            series,
            base,
            value,
            ci95,
            open,
        });
    }
    (placed, baselines)
}

/// The verdict's CSS class and colour name on the site.
#[must_use]
pub fn verdict_class(verdict: Option<Verdict>) -> &'static str {
    verdict.map_or("unreadable", Verdict::name)
}

/// The chart as an inline SVG element (colours follow the page's CSS classes): the claimed line
/// over `steps` and the measured `points` beside it.
#[must_use]
pub fn render_progress(steps: &[Step], points: &[MeasuredPoint]) -> String {
    let totals = claimed_totals(steps);
    let (placed, baselines) = place(steps, &totals, points);
    let values = totals.iter().copied().chain(placed.iter().flat_map(|p| {
        let [low, high] = p.ci95.unwrap_or([p.value; 2]);
        [low, high]
    }));
    let (lo, hi) = values.fold((0.0_f64, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let span = if hi - lo < 1e-9 { 1.0 } else { hi - lo };
    let (lo, hi) = (lo - span * 0.08, hi + span * 0.08);
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y = |value: f64| TOP + (hi - value) / (hi - lo) * plot_h;
    let slot = (WIDTH - LEFT - RIGHT) / steps.len().max(1) as f64;
    let x = |index: usize| LEFT + slot * index as f64;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg class="progress" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="progress-title"><title id="progress-title">Cumulative accepted nElo over {} entries, {} measured point(s)</title>"#,
        steps.len(),
        placed.len()
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
    for placed in &placed {
        // Beside the entry's own mark, each baseline a little further right.
        let cx = x(placed.slot) + slot / 2.0 + 7.0 + 5.0 * placed.series as f64;
        measured_point(&mut svg, &points[placed.point], placed, cx, &y);
    }
    legend(&mut svg, &baselines);
    let _ = writeln!(
        svg,
        r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">register entries, oldest first; nElo accepted so far</text>"#,
        LEFT + (WIDTH - LEFT - RIGHT) / 2.0,
        HEIGHT - 6.0
    );
    svg.push_str("</svg>\n");
    svg
}

/// One measured point: its marker (open for a bound), its error bar or its arrow, its tooltip.
fn measured_point(
    svg: &mut String,
    point: &MeasuredPoint,
    placed: &Placed,
    cx: f64,
    y: &dyn Fn(f64) -> f64,
) {
    let cy = y(placed.value);
    let _ = write!(svg, r#"<g class="measured">"#);
    if let Some([low, high]) = placed.ci95 {
        let _ = write!(
            svg,
            r#"<line class="bar" x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}"/><line class="bar" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/><line class="bar" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/>"#,
            y(low),
            y(high),
            cx - 3.0,
            y(low),
            cx + 3.0,
            y(low),
            cx - 3.0,
            y(high),
            cx + 3.0,
            y(high),
        );
    } else {
        // The difference is unbounded on one side: an arrow from the bound towards it.
        let tip = cy - placed.open * ARROW;
        let head = tip + placed.open * 5.0;
        let _ = write!(
            svg,
            r#"<line class="bar" x1="{cx:.1}" y1="{cy:.1}" x2="{cx:.1}" y2="{tip:.1}"/><path class="arrow" d="M{:.1},{head:.1} L{cx:.1},{tip:.1} L{:.1},{head:.1}"/>"#,
            cx - 3.5,
            cx + 3.5,
        );
    }
    let shape = SHAPES[placed.series % SHAPES.len()];
    let open = if placed.open == 0.0 { "" } else { " bound" };
    let _ = writeln!(
        svg,
        r#"<path class="marker {shape}{open}" d="{}"><title>{} vs {}: {} at {}; plotted at {}'s claimed total {:+.1} plus the measurement</title></path></g>"#,
        marker_path(shape, cx, cy),
        escape_markup(&point.measured),
        escape_markup(&point.baseline),
        escape_markup(&point.estimate.to_string()),
        escape_markup(&point.conditions),
        escape_markup(&point.baseline),
        placed.base,
    );
}

/// The outline of a measured marker of `shape` centred at (`cx`, `cy`).
fn marker_path(shape: &str, cx: f64, cy: f64) -> String {
    let r = 5.0;
    match shape {
        "square" => format!(
            "M{:.1},{:.1} H{:.1} V{:.1} H{:.1} Z",
            cx - r * 0.8,
            cy - r * 0.8,
            cx + r * 0.8,
            cy + r * 0.8,
            cx - r * 0.8
        ),
        "triangle" => format!(
            "M{cx:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z",
            cy - r,
            cx + r,
            cy + r * 0.8,
            cx - r,
            cy + r * 0.8
        ),
        _ => format!(
            "M{cx:.1},{:.1} L{:.1},{cy:.1} L{cx:.1},{:.1} L{:.1},{cy:.1} Z",
            cy - r,
            cx + r,
            cy + r,
            cx - r
        ),
    }
}

/// The legend in the top left corner: the claimed line, then one row per baseline.
fn legend(svg: &mut String, baselines: &[String]) {
    let (x, mut y) = (LEFT + 10.0, TOP + 10.0);
    let _ = writeln!(
        svg,
        r#"<g class="legend"><line class="line" x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/><text class="label" x="{:.1}" y="{:.1}">claimed: sum of SPRT estimates</text>"#,
        x + 18.0,
        x + 24.0,
        y + 4.0
    );
    for (series, baseline) in baselines.iter().enumerate() {
        y += 15.0;
        let shape = SHAPES[series % SHAPES.len()];
        let _ = writeln!(
            svg,
            r#"<path class="marker {shape}" d="{}"/><text class="label" x="{:.1}" y="{:.1}">measured: fixed-length match vs {}</text>"#,
            marker_path(shape, x + 9.0, y),
            x + 24.0,
            y + 4.0,
            escape_markup(baseline)
        );
    }
    if !baselines.is_empty() {
        let _ = writeln!(
            svg,
            r#"<text class="label" x="{:.1}" y="{:.1}">open marker with arrow: a bound (every pair won or lost)</text>"#,
            x + 24.0,
            y + 19.0
        );
    }
    svg.push_str("</g>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The y coordinates of the claimed line's points, in order.
    fn line_ys(svg: &str) -> Vec<f64> {
        let path = svg
            .lines()
            .find_map(|line| line.strip_prefix(r#"<path class="line" d=""#))
            .unwrap();
        path.split(' ')
            .map(|point| {
                point.trim_end_matches(r#""/>"#)[1..]
                    .split(',')
                    .nth(1)
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect()
    }

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
        let svg = render_progress(
            &[
                step("T-0001", Verdict::Genesis, 0.0),
                step("T-0002", Verdict::Gewinn, 4.0),
                step("T-0003", Verdict::Korrektur, -1.0),
                step("T-0004", Verdict::Abgelehnt, 0.0),
            ],
            &[],
        );
        let ys = line_ys(&svg);
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
        let svg = render_progress(&[odd], &[]);
        assert!(svg.contains("&lt;T&gt;") && !svg.contains("<T>"));
        assert!(svg.contains(r#"class="mark gewinn broken""#));
    }

    fn point(measured: &str, baseline: &str, estimate: Estimate) -> MeasuredPoint {
        MeasuredPoint {
            measured: measured.into(),
            baseline: baseline.into(),
            estimate,
            conditions: "1+0.01, 400 games".into(),
        }
    }

    #[test]
    fn a_measured_point_stands_at_the_baselines_claimed_total_plus_the_measurement() {
        let steps = [
            step("T-0001", Verdict::Genesis, 0.0),
            step("T-0002", Verdict::Gewinn, 30.0),
            step("T-0003", Verdict::Gewinn, 20.0),
        ];
        let totals = claimed_totals(&steps);
        let points = [
            point(
                "T-0003",
                "T-0002",
                Estimate::Interval {
                    nelo: 12.0,
                    ci95: [4.0, 20.0],
                },
            ),
            point(
                "T-0003",
                "T-0001",
                Estimate::Interval {
                    nelo: 41.0,
                    ci95: [30.0, 52.0],
                },
            ),
            point("T-0003", "T-0009", Estimate::AtLeast(1.0)),
        ];
        let (placed, baselines) = place(&steps, &totals, &points);
        assert_eq!(
            baselines,
            ["T-0002", "T-0001"],
            "a point naming no entry is left out"
        );
        assert_eq!(placed.len(), 2);
        let against_second = placed[0];
        assert_eq!((against_second.slot, against_second.series), (2, 0));
        assert!((against_second.base - 30.0).abs() < 1e-12);
        assert!((against_second.value - 42.0).abs() < 1e-12);
        assert_eq!(against_second.ci95, Some([34.0, 50.0]));
        assert_eq!(against_second.open, 0.0);
        assert!((placed[1].value - 41.0).abs() < 1e-12);

        let svg = render_progress(&steps, &points);
        assert!(svg.contains("claimed: sum of SPRT estimates"));
        assert!(svg.contains("measured: fixed-length match vs T-0002"));
        assert!(svg.contains("measured: fixed-length match vs T-0001"));
        assert_eq!(
            svg.matches(r#"class="bar""#).count(),
            6,
            "a bar with two caps each"
        );
        assert!(
            svg.contains(r#"class="marker diamond""#) && svg.contains(r#"class="marker square""#)
        );
        assert!(!svg.contains("bound\""), "no bound among them");
        // The point sits at the height of +42 on the same scale as the line's +50 and +30.
        let marker_y = |svg: &str| -> f64 {
            let d = svg.split(r#"class="marker diamond" d="M"#).nth(1).unwrap();
            let y: f64 = d.split([',', ' ']).nth(1).unwrap().parse().unwrap();
            y + 5.0
        };
        let ys = line_ys(&svg);
        let (y30, y50) = (ys[3], ys[5]);
        let expected = y30 + (y50 - y30) * (42.0 - 30.0) / (50.0 - 30.0);
        assert!(
            (marker_y(&svg) - expected).abs() < 0.2,
            "{} vs {expected}",
            marker_y(&svg)
        );
    }

    #[test]
    fn a_sweep_is_drawn_as_an_open_marker_with_an_arrow() {
        let steps = [
            step("T-0001", Verdict::Genesis, 0.0),
            step("T-0002", Verdict::Gewinn, 300.0),
        ];
        let points = [point("T-0002", "T-0001", Estimate::AtLeast(250.0))];
        let (placed, _) = place(&steps, &claimed_totals(&steps), &points);
        assert_eq!(placed[0].open, 1.0);
        assert_eq!(placed[0].ci95, None);
        assert!((placed[0].value - 250.0).abs() < 1e-12);
        let svg = render_progress(&steps, &points);
        assert!(svg.contains(r#"class="marker diamond bound""#), "{svg}");
        assert!(svg.contains(r#"class="arrow""#));
        assert!(svg.contains("at least +250.0 nElo (won every pair)"));
        assert!(svg.contains("open marker with arrow: a bound"));
        // The arrow points up (SVG y grows downwards): its tip is above the marker.
        let arrow = svg.split(r#"<line class="bar" "#).nth(1).unwrap();
        let number = |key: &str| -> f64 {
            arrow
                .split(key)
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        assert!(number("y2=\"") < number("y1=\""), "{arrow}");

        let lost = [point("T-0002", "T-0001", Estimate::AtMost(-250.0))];
        let (placed, _) = place(&steps, &claimed_totals(&steps), &lost);
        assert_eq!(placed[0].open, -1.0);
    }

    #[test]
    fn measured_text_is_escaped() {
        let steps = [
            step("T-0001", Verdict::Genesis, 0.0),
            step("<b>", Verdict::Gewinn, 1.0),
        ];
        let mut odd = point("<b>", "T-0001", Estimate::AtMost(-3.0));
        odd.conditions = "<script>".into();
        let svg = render_progress(&steps, &[odd]);
        assert!(!svg.contains("<script>") && !svg.contains("<b>"));
        assert!(svg.contains("&lt;script&gt;"));
    }
}
