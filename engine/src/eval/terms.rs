//! Piece terms: material with piece-square tables, mobility, bishop pair, rooks on files, threats.
//! Also the attack maps (`EvalInfo`) that king safety and threats read.

use super::popcnt::popcount;
use super::{Score, Term, Trace, s};
use crate::chess::attacks::{bishop_attacks, king_attacks, knight_attacks, rook_attacks};
use crate::chess::bitboard::{
    Bitboard, Squares, file_mask, forward, more_than_one, pawn_attacks_bb,
};
use crate::chess::position::Position;
use crate::chess::types::{BISHOP, Color, KING, KNIGHT, PAWN, QUEEN, ROOK, relative_square};

/// Material values (middlegame, endgame) per kind.
pub const MATERIAL: [Score; 6] = [
    s(82, 94),
    s(337, 281),
    s(365, 297),
    s(477, 512),
    s(1025, 936),
    s(0, 0),
];

/// How central a square is: 0 on the rim corners … 6 in the centre.
const fn centrality(sq: usize) -> i32 {
    let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
    let df = if f < 7 - f { f } else { 7 - f };
    let dr = if r < 7 - r { r } else { 7 - r };
    df + dr
}

/// Piece-square bonus for a white piece of `kind` on `sq` (black uses the mirrored square).
const fn pst_entry(kind: usize, sq: usize) -> Score {
    let c = centrality(sq);
    let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
    let fc = if f < 7 - f { f } else { 7 - f }; // 0 on the a/h files … 3 on d/e
    match kind {
        PAWN => {
            const MG: [i32; 8] = [0, -4, 0, 6, 14, 24, 45, 0];
            const EG: [i32; 8] = [0, 0, 4, 10, 22, 45, 80, 0];
            let centre = if r >= 2 && r <= 4 { fc * 4 } else { 0 };
            let home_centre = if r == 1 && fc == 3 { -8 } else { 0 };
            s(MG[r as usize] + centre + home_centre, EG[r as usize])
        }
        KNIGHT => {
            let outpost = if r >= 3 && r <= 5 && fc >= 2 { 8 } else { 0 };
            s(-38 + 9 * c + outpost, -32 + 8 * c)
        }
        BISHOP => {
            let back = if r == 0 { -8 } else { 0 };
            s(-12 + 5 * c + back, -12 + 4 * c)
        }
        ROOK => {
            let seventh = if r == 6 { 18 } else { 0 };
            let centre = if r == 0 && fc >= 2 { 6 } else { 0 };
            s(seventh + centre, if r == 6 { 10 } else { 0 })
        }
        QUEEN => s(-6 + 2 * c, -24 + 6 * c),
        _ => {
            const HOME: [i32; 4] = [18, 28, 8, -4];
            let mg = match r {
                0 => HOME[fc as usize],
                1 => [10, 12, -8, -14][fc as usize],
                _ => -30 - 12 * r,
            };
            s(mg, -44 + 12 * c)
        }
    }
}

const fn build_psqt() -> [[Score; 64]; 6] {
    let mut t = [[s(0, 0); 64]; 6];
    let mut k = 0;
    while k < 6 {
        let mut sq = 0;
        while sq < 64 {
            let p = pst_entry(k, sq);
            t[k][sq] = s(p.mg + MATERIAL[k].mg, p.eg + MATERIAL[k].eg);
            sq += 1;
        }
        k += 1;
    }
    t
}

/// Material plus piece-square value per kind and (white-relative) square.
pub const PSQT: [[Score; 64]; 6] = build_psqt();

/// Mobility weight per attacked square and the typical count it is centred on, per kind.
const MOBILITY: [(Score, i32); 4] = [(s(4, 4), 4), (s(5, 5), 6), (s(2, 4), 7), (s(1, 2), 13)];
/// Bishop pair bonus.
const BISHOP_PAIR: Score = s(30, 50);
/// Rook on a file without pawns.
const ROOK_OPEN: Score = s(25, 10);
/// Rook on a file without own pawns.
const ROOK_SEMI_OPEN: Score = s(12, 6);
/// A minor or major piece attacked by a pawn.
const THREAT_BY_PAWN: Score = s(50, 30);
/// A rook or queen attacked by a minor piece.
const THREAT_BY_MINOR: Score = s(30, 20);
/// A queen attacked by a rook.
const THREAT_BY_ROOK: Score = s(30, 20);
/// An enemy piece attacked and not defended at all.
const HANGING: Score = s(20, 12);

/// Attack maps gathered while scoring pieces, read by later terms.
pub struct EvalInfo {
    /// Squares attacked by each colour's pieces of each kind.
    pub attacked_by: [[Bitboard; 6]; 2],
    /// Squares attacked by each colour.
    pub attacked: [Bitboard; 2],
    /// Squares around each king.
    pub king_zone: [Bitboard; 2],
    /// Number of pieces of each colour attacking the enemy king zone.
    pub king_attackers: [i32; 2],
    /// Weighted attacks of each colour on the enemy king zone.
    pub king_attack_weight: [i32; 2],
}

impl EvalInfo {
    /// Start the maps with pawn and king attacks.
    #[inline(always)]
    pub fn new(pos: &Position) -> EvalInfo {
        let mut info = EvalInfo {
            attacked_by: [[0; 6]; 2],
            attacked: [0; 2],
            king_zone: [0; 2],
            king_attackers: [0; 2],
            king_attack_weight: [0; 2],
        };
        for c in [Color::White, Color::Black] {
            let ci = c as usize;
            let ksq = pos.king_square(c);
            let pawns = pawn_attacks_bb(c, pos.pieces(c, PAWN));
            let king = king_attacks(ksq);
            info.attacked_by[ci][PAWN] = pawns;
            info.attacked_by[ci][KING] = king;
            info.attacked[ci] = pawns | king;
            info.king_zone[ci] = king | forward(c, king) | (1u64 << ksq);
        }
        info
    }
}

/// Game phase 0..=24 from the non-pawn material left.
#[inline(always)]
pub fn phase(pos: &Position) -> i32 {
    let p = popcount(pos.kinds[KNIGHT] | pos.kinds[BISHOP])
        + 2 * popcount(pos.kinds[ROOK])
        + 4 * popcount(pos.kinds[QUEEN]);
    p.min(24)
}

/// King-zone attack weight per attacking kind.
const KING_ATTACK_WEIGHT: [i32; 6] = [0, 20, 20, 40, 80, 0];

#[inline(always)]
fn side<T: Trace>(pos: &Position, c: Color, info: &mut EvalInfo, trace: &mut T) -> Score {
    let ci = c as usize;
    let them = c.flip();
    let occ = pos.occupied();

    let mut psqt = s(0, 0);
    for (kind, table) in PSQT.iter().enumerate() {
        for sq in Squares(pos.pieces(c, kind)) {
            psqt += table[relative_square(c, sq)];
        }
    }
    trace.add(Term::Psqt, c, psqt);

    // Mobility: squares not blocked by own pawns/king and not attacked by enemy pawns.
    let area = !(pos.pieces(c, PAWN) | pos.pieces(c, KING) | info.attacked_by[them as usize][PAWN]);
    let enemy_zone = info.king_zone[them as usize];
    let mut mobility = s(0, 0);
    let mut rooks = s(0, 0);
    for kind in KNIGHT..=QUEEN {
        for sq in Squares(pos.pieces(c, kind)) {
            let att = match kind {
                KNIGHT => knight_attacks(sq),
                BISHOP => bishop_attacks(sq, occ ^ pos.pieces(c, QUEEN)),
                ROOK => rook_attacks(sq, occ ^ pos.pieces(c, QUEEN) ^ pos.pieces(c, ROOK)),
                _ => bishop_attacks(sq, occ) | rook_attacks(sq, occ),
            };
            info.attacked_by[ci][kind] |= att;
            info.attacked[ci] |= att;
            let (w, centre) = MOBILITY[kind - KNIGHT];
            mobility += w * (popcount(att & area) - centre);
            let zone = att & enemy_zone;
            if zone != 0 {
                info.king_attackers[ci] += 1;
                info.king_attack_weight[ci] += KING_ATTACK_WEIGHT[kind] * popcount(zone);
            }
            if kind == ROOK {
                let file = file_mask(sq & 7);
                if file & pos.pieces(c, PAWN) == 0 {
                    rooks += if file & pos.kinds[PAWN] == 0 {
                        ROOK_OPEN
                    } else {
                        ROOK_SEMI_OPEN
                    };
                }
            }
        }
    }
    trace.add(Term::Mobility, c, mobility);
    trace.add(Term::Rooks, c, rooks);

    let pair = if more_than_one(pos.pieces(c, BISHOP)) {
        BISHOP_PAIR
    } else {
        s(0, 0)
    };
    trace.add(Term::BishopPair, c, pair);

    psqt + mobility + rooks + pair
}

#[inline(always)]
fn threats<T: Trace>(pos: &Position, c: Color, info: &EvalInfo, trace: &mut T) -> Score {
    let ci = c as usize;
    let them = c.flip();
    let enemy = pos.us(them);
    let non_pawns = enemy & !(pos.kinds[PAWN] | pos.kinds[KING]);
    let majors = enemy & (pos.kinds[ROOK] | pos.kinds[QUEEN]);
    let minors_att = info.attacked_by[ci][KNIGHT] | info.attacked_by[ci][BISHOP];
    let mut t = THREAT_BY_PAWN * popcount(info.attacked_by[ci][PAWN] & non_pawns);
    t += THREAT_BY_MINOR * popcount(minors_att & majors);
    t += THREAT_BY_ROOK * popcount(info.attacked_by[ci][ROOK] & enemy & pos.kinds[QUEEN]);
    t += HANGING
        * popcount(info.attacked[ci] & !info.attacked[them as usize] & enemy & !pos.kinds[KING]);
    trace.add(Term::Threats, c, t);
    t
}

/// Piece terms for both sides, white-relative; fills the attack maps in `info`.
#[inline(always)]
pub fn evaluate<T: Trace>(pos: &Position, info: &mut EvalInfo, trace: &mut T) -> Score {
    let w = side(pos, Color::White, info, trace);
    let b = side(pos, Color::Black, info, trace);
    let tw = threats(pos, Color::White, info, trace);
    let tb = threats(pos, Color::Black, info, trace);
    w - b + tw - tb
}
