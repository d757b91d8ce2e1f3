//! Handcrafted tapered evaluation (middlegame/endgame), compiled twice: once as
//! `coherent_evaluate_popcnt` with hardware POPCNT enabled, once generically.
//!
//! # The stable fast-path symbol
//! `coherent_evaluate_popcnt` is `#[unsafe(no_mangle)]` and `#[inline(never)]`, so the build-shape
//! gate can find it in the release binary and disassemble it and its callees: it must contain POPCNT
//! and no software popcount (the 0x5555…/0x3333…/0x0f0f…/0x0101… masks). Everything the evaluation
//! calls is `#[inline(always)]` so that it is compiled inside that symbol with the POPCNT feature.
//! `evaluate` picks the path once per process (`has_hardware_popcnt`).

pub mod king;
pub mod pawns;
pub mod popcnt;
pub mod scale;
pub mod terms;

use crate::chess::position::Position;
use crate::chess::types::Color;

/// A middlegame/endgame score pair.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Score {
    /// Middlegame part.
    pub mg: i32,
    /// Endgame part.
    pub eg: i32,
}

/// Shorthand constructor for a score pair.
#[must_use]
#[inline(always)]
pub const fn s(mg: i32, eg: i32) -> Score {
    Score { mg, eg }
}

impl std::ops::Add for Score {
    type Output = Score;
    #[inline(always)]
    fn add(self, o: Score) -> Score {
        s(self.mg + o.mg, self.eg + o.eg)
    }
}

impl std::ops::AddAssign for Score {
    #[inline(always)]
    fn add_assign(&mut self, o: Score) {
        self.mg += o.mg;
        self.eg += o.eg;
    }
}

impl std::ops::Sub for Score {
    type Output = Score;
    #[inline(always)]
    fn sub(self, o: Score) -> Score {
        s(self.mg - o.mg, self.eg - o.eg)
    }
}

impl std::ops::Mul<i32> for Score {
    type Output = Score;
    #[inline(always)]
    fn mul(self, k: i32) -> Score {
        s(self.mg * k, self.eg * k)
    }
}

/// The evaluation's terms, for the `eval` command's breakdown.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Term {
    /// Material and piece-square tables.
    Psqt,
    /// Mobility from popcounts of attack sets.
    Mobility,
    /// Doubled, isolated and backward pawns.
    PawnStructure,
    /// Passed pawns.
    Passed,
    /// King safety: attackers on the king zone, pawn shield.
    KingSafety,
    /// Bishop pair.
    BishopPair,
    /// Rooks on open and half-open files and on the seventh rank.
    Rooks,
    /// Threats against pieces.
    Threats,
    /// Knight and bishop outposts, minors behind pawns, pawns on the bishop's colour.
    MinorPieces,
}

/// Number of `Term` variants.
pub const TERM_COUNT: usize = 9;

/// Term names in `Term` order.
pub const TERM_NAMES: [&str; TERM_COUNT] = [
    "psqt",
    "mobility",
    "pawn structure",
    "passed pawns",
    "king safety",
    "bishop pair",
    "rooks",
    "threats",
    "minor pieces",
];

/// Receives each term as it is computed; the search uses `NoTrace`, which compiles to nothing.
pub trait Trace {
    /// Record `score` for `color` under `term`.
    fn add(&mut self, term: Term, color: Color, score: Score);
}

/// The tracer used by search: does nothing.
pub struct NoTrace;

impl Trace for NoTrace {
    #[inline(always)]
    fn add(&mut self, _: Term, _: Color, _: Score) {}
}

/// The tracer used by the `eval` command: sums every term per colour.
#[derive(Default)]
pub struct TermTrace {
    /// Per term, per colour.
    pub terms: [[Score; 2]; TERM_COUNT],
}

impl Trace for TermTrace {
    fn add(&mut self, term: Term, color: Color, score: Score) {
        self.terms[term as usize][color as usize] += score;
    }
}

/// Side-to-move bonus (middlegame, endgame).
pub const TEMPO: Score = s(20, 10);

/// Everything before tapering: white-relative score, game phase (0..=24) and endgame scale (0..=64).
pub struct Breakdown {
    /// White-relative middlegame/endgame sum of all terms.
    pub score: Score,
    /// 24 = full middlegame material, 0 = bare kings and pawns.
    pub phase: i32,
    /// Endgame scale in 64ths (drawish material pulls toward 0).
    pub scale: i32,
}

/// The whole evaluation as white-relative score pair, phase and scale.
#[inline(always)]
pub fn breakdown<T: Trace>(pos: &Position, trace: &mut T) -> Breakdown {
    let mut info = terms::EvalInfo::new(pos);
    let mut score = s(0, 0);
    score += pawns::evaluate(pos, &mut info, trace);
    score += terms::evaluate(pos, &mut info, trace);
    score += pawns::safe_pushes(pos, &info, trace);
    score += king::evaluate(pos, &info, trace);
    let phase = terms::phase(pos);
    let scale = scale::scale_factor(pos, score.eg);
    Breakdown {
        score,
        phase,
        scale,
    }
}

/// Taper a breakdown into centipawns from the side to move's point of view, tempo included.
#[inline(always)]
#[must_use]
pub fn taper(pos: &Position, b: &Breakdown) -> i32 {
    let eg = b.score.eg * b.scale / 64;
    let v = (b.score.mg * b.phase + eg * (24 - b.phase)) / 24;
    let tempo = (TEMPO.mg * b.phase + TEMPO.eg * (24 - b.phase)) / 24;
    (if pos.side == Color::White { v } else { -v }) + tempo
}

#[inline(always)]
fn evaluate_inline(pos: &Position) -> i32 {
    taper(pos, &breakdown(pos, &mut NoTrace))
}

/// The fast evaluation entry, compiled with hardware POPCNT. Stable symbol for the build-shape gate.
///
/// # Safety
/// Only sound on a CPU with POPCNT; `evaluate` checks that once before calling.
#[unsafe(no_mangle)]
#[inline(never)]
#[target_feature(enable = "popcnt")]
pub fn coherent_evaluate_popcnt(pos: &Position) -> i32 {
    evaluate_inline(pos)
}

/// The portable evaluation entry (software popcount) for CPUs without POPCNT.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn coherent_evaluate_generic(pos: &Position) -> i32 {
    evaluate_inline(pos)
}

/// Static evaluation in centipawns from the side to move's point of view.
#[must_use]
#[inline]
pub fn evaluate(pos: &Position) -> i32 {
    if popcnt::has_hardware_popcnt() {
        // SAFETY: the CPU was checked for POPCNT, the only feature this entry is compiled with.
        unsafe { coherent_evaluate_popcnt(pos) }
    } else {
        coherent_evaluate_generic(pos)
    }
}

/// The evaluation path this CPU takes, for `buildinfo`.
#[must_use]
pub fn path_name() -> &'static str {
    if popcnt::has_hardware_popcnt() {
        "coherent_evaluate_popcnt (hardware POPCNT)"
    } else {
        "coherent_evaluate_generic (software popcount)"
    }
}

/// A human-readable breakdown of the evaluation (the `eval` command).
#[must_use]
pub fn report(pos: &Position) -> String {
    let mut trace = TermTrace::default();
    let b = breakdown(pos, &mut trace);
    let mut out = String::from("term               white mg/eg    black mg/eg    total mg/eg\n");
    for (i, name) in TERM_NAMES.iter().enumerate() {
        let [w, bl] = trace.terms[i];
        let t = w - bl;
        out.push_str(&format!(
            "{name:<16} {:>6} {:>6}  {:>6} {:>6}  {:>6} {:>6}\n",
            w.mg, w.eg, bl.mg, bl.eg, t.mg, t.eg
        ));
    }
    out.push_str(&format!(
        "sum (white)      {:>6} {:>6}\nphase {} / 24, endgame scale {} / 64, tempo {} {}\n",
        b.score.mg, b.score.eg, b.phase, b.scale, TEMPO.mg, TEMPO.eg
    ));
    out.push_str(&format!(
        "final evaluation (side to move): {} cp\n",
        evaluate(pos)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::POSITIONS;

    /// The same position with colours swapped and the board mirrored top to bottom.
    fn mirror(fen: &str) -> String {
        let f: Vec<&str> = fen.split_whitespace().collect();
        let swap = |s: &str| {
            s.chars()
                .map(|c| {
                    if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect::<String>()
        };
        let board = f[0]
            .split('/')
            .rev()
            .map(swap)
            .collect::<Vec<_>>()
            .join("/");
        let side = if f[1] == "w" { "b" } else { "w" };
        let mut castling: Vec<char> = swap(f[2]).chars().collect();
        castling.sort_by_key(|c| (c.is_ascii_lowercase(), *c == 'q' || *c == 'Q'));
        let castling: String = castling.into_iter().collect();
        let ep = if f[3] == "-" {
            "-".to_string()
        } else {
            let b = f[3].as_bytes();
            format!("{}{}", b[0] as char, (b'1' + b'8' - b[1]) as char)
        };
        format!("{board} {side} {castling} {ep} 0 1")
    }

    #[test]
    fn symmetric_and_both_paths_agree() {
        for fen in POSITIONS {
            let pos = Position::from_fen(fen).unwrap();
            let mirrored = Position::from_fen(&mirror(fen)).unwrap();
            assert_eq!(evaluate(&pos), evaluate(&mirrored), "{fen}");
            if popcnt::has_hardware_popcnt() {
                // SAFETY: the CPU has POPCNT.
                let fast = unsafe { coherent_evaluate_popcnt(&pos) };
                assert_eq!(fast, coherent_evaluate_generic(&pos), "{fen}");
            }
            let traced = taper(&pos, &breakdown(&pos, &mut TermTrace::default()));
            assert_eq!(traced, evaluate(&pos), "tracing must not change the value");
        }
    }

    #[test]
    fn drawish_material_scales_to_zero() {
        for fen in [
            "8/8/4k3/8/8/3KB3/8/8 w - - 0 1",
            "8/8/4k3/8/8/3KN3/8/8 w - - 0 1",
            "8/8/4k3/8/8/2NKN3/8/8 w - - 0 1",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let b = breakdown(&pos, &mut NoTrace);
            assert_eq!(b.scale, 0, "{fen}");
        }
        // K+B+N v K is a win: full scale (no term of its own, that is a later change).
        let kbnk = Position::from_fen("8/8/4k3/8/8/3KBN2/8/8 w - - 0 1").unwrap();
        assert_eq!(breakdown(&kbnk, &mut NoTrace).scale, scale::SCALE_NORMAL);
    }
}
