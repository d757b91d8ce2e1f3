//! Piece terms: material with piece-square tables, mobility, bishop pair, rooks on files, minor
//! pieces (outposts, behind pawns, bishop and pawn colours), threats.
//! Also the attack maps (`EvalInfo`) that king safety and threats read.

use super::popcnt::popcount;
use super::{Score, Term, Trace, s};
use crate::chess::attacks::{bishop_attacks, king_attacks, knight_attacks, rook_attacks};
use crate::chess::bitboard::{
    Bitboard, LIGHT_SQUARES, RANK_3, RANK_6, Squares, adjacent_files_of, bb, file_mask, forward,
    front_span, more_than_one, pawn_attacks_bb, rank_mask,
};
use crate::chess::position::Position;
use crate::chess::types::{BISHOP, Color, KING, KNIGHT, PAWN, QUEEN, ROOK, relative_square};

// texel: begin. Fitted to Coherent's self-play games by tools/texel (`texel tune`,
// docs/texel.md); regenerate them rather than edit by hand.
/// Material plus piece-square value per kind and (white-relative) square, a1 first.
#[rustfmt::skip]
pub const PSQT: [[Score; 64]; 6] = [
    [
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
        s(102, 112), s(115, 118), s(103, 126), s(94, 138), s(115, 123), s(119, 136), s(126, 105), s(106, 101),
        s(108, 106), s(105, 115), s(96, 133), s(93, 135), s(111, 115), s(109, 128), s(115, 109), s(101, 109),
        s(106, 110), s(112, 92), s(102, 106), s(115, 93), s(118, 88), s(100, 114), s(110, 100), s(100, 103),
        s(127, 100), s(108, 97), s(100, 86), s(107, 75), s(111, 70), s(121, 95), s(110, 106), s(103, 115),
        s(150, 114), s(117, 116), s(148, 123), s(131, 95), s(85, 95), s(152, 112), s(115, 128), s(141, 117),
        s(302, 94), s(173, 144), s(79, 184), s(82, 138), s(68, 186), s(157, 182), s(117, 151), s(141, 72),
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
    ],
    [
        s(299, 249), s(333, 244), s(333, 252), s(331, 250), s(327, 269), s(331, 257), s(335, 255), s(299, 249),
        s(322, 223), s(326, 270), s(343, 235), s(346, 278), s(355, 273), s(356, 251), s(367, 238), s(349, 256),
        s(330, 254), s(362, 257), s(346, 276), s(370, 277), s(367, 283), s(361, 272), s(363, 279), s(343, 252),
        s(350, 278), s(328, 275), s(364, 293), s(372, 292), s(371, 280), s(369, 293), s(360, 286), s(358, 287),
        s(349, 269), s(355, 260), s(391, 290), s(379, 288), s(380, 292), s(403, 276), s(369, 281), s(414, 252),
        s(317, 288), s(370, 268), s(363, 281), s(373, 284), s(338, 318), s(386, 269), s(371, 263), s(317, 272),
        s(308, 280), s(311, 265), s(326, 280), s(369, 286), s(319, 270), s(347, 269), s(317, 290), s(308, 263),
        s(299, 249), s(308, 257), s(317, 265), s(326, 289), s(326, 255), s(317, 265), s(308, 257), s(299, 249),
    ],
    [
        s(406, 284), s(372, 300), s(373, 298), s(360, 301), s(383, 294), s(354, 311), s(350, 302), s(330, 319),
        s(393, 291), s(381, 291), s(372, 296), s(374, 327), s(377, 302), s(374, 309), s(386, 296), s(358, 290),
        s(387, 301), s(401, 303), s(386, 307), s(380, 315), s(379, 327), s(378, 326), s(402, 317), s(354, 293),
        s(406, 288), s(376, 320), s(389, 335), s(404, 332), s(392, 338), s(390, 331), s(387, 315), s(402, 308),
        s(343, 312), s(386, 318), s(416, 319), s(387, 328), s(385, 341), s(391, 327), s(397, 324), s(330, 314),
        s(336, 321), s(372, 317), s(428, 315), s(413, 325), s(397, 325), s(400, 338), s(368, 314), s(392, 323),
        s(341, 295), s(347, 315), s(385, 328), s(354, 314), s(372, 328), s(326, 330), s(369, 328), s(292, 350),
        s(353, 325), s(358, 318), s(363, 301), s(368, 308), s(368, 304), s(363, 334), s(358, 326), s(353, 285),
    ],
    [
        s(509, 480), s(512, 486), s(515, 472), s(513, 486), s(518, 471), s(527, 471), s(508, 484), s(517, 479),
        s(491, 486), s(505, 483), s(472, 494), s(510, 477), s(521, 487), s(510, 473), s(510, 476), s(499, 474),
        s(507, 497), s(501, 497), s(488, 487), s(491, 491), s(478, 513), s(528, 480), s(507, 467), s(510, 483),
        s(484, 517), s(482, 517), s(511, 512), s(533, 500), s(541, 490), s(539, 484), s(471, 519), s(506, 494),
        s(508, 510), s(551, 505), s(529, 508), s(515, 504), s(518, 512), s(542, 491), s(510, 509), s(529, 507),
        s(530, 514), s(578, 501), s(516, 525), s(557, 503), s(564, 513), s(572, 509), s(545, 501), s(530, 501),
        s(515, 532), s(523, 523), s(544, 522), s(541, 529), s(557, 517), s(571, 507), s(529, 524), s(535, 519),
        s(573, 516), s(519, 521), s(586, 518), s(521, 516), s(542, 521), s(537, 522), s(561, 517), s(554, 520),
    ],
    [
        s(1036, 912), s(1044, 799), s(1027, 855), s(1055, 804), s(1042, 818), s(1049, 809), s(1038, 918), s(1019, 912),
        s(1024, 918), s(1050, 847), s(1068, 815), s(1060, 855), s(1072, 792), s(1104, 745), s(1079, 786), s(1034, 918),
        s(1041, 853), s(1067, 842), s(1055, 902), s(1064, 857), s(1070, 869), s(1067, 877), s(1071, 861), s(1039, 884),
        s(1059, 884), s(1033, 922), s(1060, 885), s(1047, 940), s(1073, 895), s(1038, 928), s(1053, 893), s(1048, 884),
        s(1030, 869), s(1053, 913), s(1087, 894), s(1065, 948), s(1050, 965), s(1049, 928), s(1048, 928), s(1091, 820),
        s(1049, 879), s(1035, 950), s(1060, 955), s(1061, 925), s(1074, 931), s(1060, 959), s(1090, 855), s(1082, 927),
        s(1035, 972), s(1007, 959), s(1043, 965), s(1012, 973), s(1023, 970), s(1093, 911), s(1046, 924), s(1080, 846),
        s(1091, 908), s(1021, 934), s(1023, 957), s(1025, 951), s(1025, 945), s(1023, 924), s(1021, 918), s(1032, 948),
    ],
    [
        s(-122, 33), s(-26, 11), s(-45, 12), s(-111, 25), s(-74, 19), s(-80, 35), s(-34, 24), s(-17, 4),
        s(-24, -25), s(-82, 19), s(-70, 19), s(-74, 17), s(-85, 26), s(-68, 25), s(-24, 17), s(-45, 9),
        s(-89, -2), s(-51, 1), s(-44, 1), s(-85, 28), s(-76, 25), s(-87, 28), s(-19, 7), s(-102, 10),
        s(-66, -3), s(22, -3), s(-76, 22), s(-58, 26), s(-127, 40), s(-21, 23), s(4, 3), s(-71, -8),
        s(173, -110), s(36, 8), s(-57, 33), s(-121, 53), s(-116, 38), s(-45, 35), s(-3, 15), s(-13, -13),
        s(-90, 27), s(299, -197), s(-90, 71), s(-147, 94), s(-287, 127), s(-129, 77), s(-62, 56), s(-90, 24),
        s(-102, 22), s(-102, 56), s(-154, 86), s(-83, 98), s(-286, 136), s(402, -163), s(-102, 77), s(-102, 6),
        s(-114, -44), s(-114, -32), s(-114, -19), s(-114, -5), s(-114, 2), s(-114, 42), s(-114, -32), s(-114, -44),
    ],
];

/// Mobility per kind (knight, bishop, rook, queen) and number of safe squares attacked.
#[rustfmt::skip]
const MOBILITY: [Score; 66] = [
    s(-4, -16), s(11, -17), s(24, -5), s(30, 17), s(37, 30), s(45, 38), s(51, 37), s(63, 36),
    s(69, 18),
    s(1, -47), s(18, -46), s(27, -25), s(31, -5), s(44, -5), s(47, 2), s(50, 10), s(54, 9),
    s(63, 9), s(58, 11), s(48, 10), s(50, 7), s(116, -16), s(7, 10),
    s(-25, -28), s(17, -13), s(29, 22), s(33, 21), s(42, 34), s(40, 46), s(42, 52), s(47, 51),
    s(51, 51), s(59, 53), s(56, 58), s(66, 57), s(73, 59), s(71, 56), s(145, 2),
    s(-13, -26), s(177, -24), s(176, -22), s(183, -20), s(188, -61), s(189, -12), s(194, 17), s(192, 31),
    s(194, 44), s(197, 55), s(199, 72), s(202, 57), s(194, 74), s(201, 64), s(203, 68), s(206, 60),
    s(203, 60), s(206, 38), s(213, 33), s(208, 20), s(218, 2), s(329, -124), s(9, 109), s(10, 17),
    s(11, 22), s(12, 24), s(13, 26), s(14, 28),
];
/// Where each kind's row starts in `MOBILITY` (0..=8, 0..=13, 0..=14, 0..=27 squares).
const MOBILITY_OFFSET: [usize; 4] = [0, 9, 23, 38];
/// Bishop pair bonus.
const BISHOP_PAIR: Score = s(37, 65);
/// Rook on a file without pawns.
const ROOK_OPEN: Score = s(46, -5);
/// Rook on a file without own pawns.
const ROOK_SEMI_OPEN: Score = s(19, 14);
/// A minor or major piece attacked by a pawn.
const THREAT_BY_PAWN: Score = s(58, 26);
/// A rook or queen attacked by a minor piece.
const THREAT_BY_MINOR: Score = s(56, -11);
/// A queen attacked by a rook.
const THREAT_BY_ROOK: Score = s(53, 4);
/// An enemy piece attacked and not defended at all.
const HANGING: Score = s(18, 33);
/// A knight on an outpost: relative rank 4 to 6, defended by an own pawn, out of reach of enemy pawns.
const OUTPOST_KNIGHT: Score = s(13, 1);
/// A bishop on an outpost.
const OUTPOST_BISHOP: Score = s(22, 2);
/// A knight or bishop directly behind a pawn.
const MINOR_BEHIND_PAWN: Score = s(4, 16);
/// Per own pawn on the squares of a bishop's colour, per bishop.
const BISHOP_PAWNS: Score = s(-1, -6);
/// Per square of the enemy king zone a knight attacks.
const ZONE_ATTACK_KNIGHT: Score = s(-1, 0);
/// Per square of the enemy king zone a bishop attacks.
const ZONE_ATTACK_BISHOP: Score = s(-5, 3);
/// Per square of the enemy king zone a rook attacks.
const ZONE_ATTACK_ROOK: Score = s(-8, 1);
/// Per square of the enemy king zone a queen attacks.
const ZONE_ATTACK_QUEEN: Score = s(-15, 6);
/// Per central square (files c to f, relative ranks 2 to 4) free of own pawns and enemy pawn attacks.
const SPACE: Score = s(0, 12);
/// Per enemy piece (not a pawn or king) a safe pawn push would attack.
const PAWN_PUSH_THREAT: Score = s(16, 9);
// texel: end

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

/// The linear king-zone attack terms by kind (knight, bishop, rook, queen).
const ZONE_ATTACK: [Score; 4] = [
    ZONE_ATTACK_KNIGHT,
    ZONE_ATTACK_BISHOP,
    ZONE_ATTACK_ROOK,
    ZONE_ATTACK_QUEEN,
];

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
    let mut zone_attack = s(0, 0);
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
            mobility += MOBILITY[MOBILITY_OFFSET[kind - KNIGHT] + popcount(att & area) as usize];
            let zone = att & enemy_zone;
            if zone != 0 {
                info.king_attackers[ci] += 1;
                info.king_attack_weight[ci] += KING_ATTACK_WEIGHT[kind] * popcount(zone);
                zone_attack += ZONE_ATTACK[kind - KNIGHT] * popcount(zone);
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
    let centre = (file_mask(2) | file_mask(3) | file_mask(4) | file_mask(5))
        & if c == Color::White {
            rank_mask(1) | rank_mask(2) | rank_mask(3)
        } else {
            rank_mask(4) | rank_mask(5) | rank_mask(6)
        };
    let space = centre & !pos.pieces(c, PAWN) & !info.attacked_by[them as usize][PAWN];
    mobility += SPACE * popcount(space);
    trace.add(Term::Mobility, c, mobility);
    trace.add(Term::KingSafety, c, zone_attack);
    trace.add(Term::Rooks, c, rooks);

    let mut minors = s(0, 0);
    let own_pawns = pos.pieces(c, PAWN);
    let enemy_pawns = pos.pieces(them, PAWN);
    for kind in [KNIGHT, BISHOP] {
        for sq in Squares(pos.pieces(c, kind)) {
            let rel_rank = relative_square(c, sq) >> 3;
            let out_of_reach =
                adjacent_files_of(sq & 7) & front_span(c, rank_mask(sq >> 3)) & enemy_pawns == 0;
            if (3..=5).contains(&rel_rank)
                && info.attacked_by[ci][PAWN] & bb(sq) != 0
                && out_of_reach
            {
                minors += if kind == KNIGHT {
                    OUTPOST_KNIGHT
                } else {
                    OUTPOST_BISHOP
                };
            }
            if forward(c, bb(sq)) & pos.kinds[PAWN] != 0 {
                minors += MINOR_BEHIND_PAWN;
            }
            if kind == BISHOP {
                let colour = if bb(sq) & LIGHT_SQUARES != 0 {
                    LIGHT_SQUARES
                } else {
                    !LIGHT_SQUARES
                };
                minors += BISHOP_PAWNS * popcount(own_pawns & colour);
            }
        }
    }
    trace.add(Term::MinorPieces, c, minors);

    let pair = if more_than_one(pos.pieces(c, BISHOP)) {
        BISHOP_PAIR
    } else {
        s(0, 0)
    };
    trace.add(Term::BishopPair, c, pair);

    psqt + mobility + zone_attack + rooks + minors + pair
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
    // Pawn pushes to empty squares that enemy pawns do not attack and that are not more
    // attacked by the enemy than held by us.
    let empty = !pos.occupied();
    let single = forward(c, pos.pieces(c, PAWN)) & empty;
    let third = if c == Color::White { RANK_3 } else { RANK_6 };
    let pushes = (single | forward(c, single & third) & empty)
        & !info.attacked_by[them as usize][PAWN]
        & (info.attacked[ci] | !info.attacked[them as usize]);
    t += PAWN_PUSH_THREAT * popcount(pawn_attacks_bb(c, pushes) & non_pawns);
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
