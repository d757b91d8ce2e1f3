//! Piece terms: material with piece-square tables, mobility, bishop pair, rooks on files and on
//! the seventh rank, trapped rooks, minor pieces (outposts reached or held, behind pawns, bishop
//! and pawn colours), threats (by pawns, minors, rooks and the king, hanging pieces, pawn pushes,
//! squares from which a piece would attack the queen).
//! Also the attack maps (`EvalInfo`) that king safety and threats read.

use super::popcnt::popcount;
use super::{Score, Term, Trace, s};
use crate::chess::attacks::{bishop_attacks, king_attacks, knight_attacks, rook_attacks};
use crate::chess::bitboard::{
    Bitboard, LIGHT_SQUARES, RANK_3, RANK_6, Squares, bb, file_mask, forward, front_span, lsb,
    more_than_one, pawn_attacks_bb, rank_mask,
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
        s(98, 119), s(114, 112), s(101, 123), s(94, 134), s(115, 120), s(120, 132), s(129, 99), s(109, 104),
        s(107, 113), s(107, 114), s(97, 133), s(99, 131), s(117, 112), s(116, 124), s(122, 106), s(107, 111),
        s(104, 121), s(111, 101), s(101, 113), s(118, 99), s(121, 92), s(104, 117), s(114, 104), s(104, 110),
        s(123, 112), s(109, 108), s(102, 96), s(114, 81), s(120, 76), s(129, 100), s(116, 112), s(107, 120),
        s(141, 127), s(112, 129), s(141, 135), s(128, 112), s(86, 113), s(144, 128), s(111, 140), s(133, 128),
        s(316, 89), s(175, 144), s(85, 181), s(87, 142), s(89, 185), s(166, 184), s(130, 153), s(160, 70),
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
    ],
    [
        s(299, 249), s(337, 239), s(339, 249), s(337, 248), s(333, 265), s(336, 251), s(340, 251), s(299, 249),
        s(328, 220), s(329, 266), s(350, 230), s(352, 273), s(361, 268), s(364, 244), s(371, 232), s(355, 251),
        s(336, 249), s(367, 251), s(352, 270), s(373, 271), s(371, 279), s(365, 267), s(368, 274), s(348, 246),
        s(352, 274), s(332, 271), s(368, 289), s(374, 289), s(374, 277), s(373, 289), s(364, 281), s(362, 280),
        s(348, 268), s(360, 258), s(389, 289), s(380, 289), s(378, 292), s(399, 276), s(371, 281), s(414, 248),
        s(317, 287), s(365, 268), s(363, 281), s(363, 288), s(334, 320), s(385, 271), s(363, 270), s(317, 271),
        s(308, 278), s(313, 264), s(324, 281), s(365, 283), s(319, 269), s(352, 268), s(317, 287), s(308, 263),
        s(299, 249), s(308, 257), s(317, 265), s(326, 290), s(326, 261), s(317, 265), s(308, 257), s(299, 249),
    ],
    [
        s(403, 283), s(370, 300), s(371, 295), s(357, 303), s(383, 291), s(353, 310), s(350, 301), s(330, 323),
        s(391, 291), s(381, 287), s(372, 294), s(375, 325), s(377, 300), s(373, 308), s(386, 294), s(358, 282),
        s(383, 300), s(397, 304), s(384, 306), s(379, 313), s(378, 325), s(377, 325), s(398, 316), s(353, 291),
        s(399, 291), s(373, 317), s(387, 334), s(399, 331), s(389, 336), s(387, 330), s(385, 311), s(396, 307),
        s(342, 312), s(379, 318), s(409, 319), s(381, 328), s(380, 339), s(385, 328), s(390, 323), s(331, 310),
        s(335, 322), s(373, 313), s(421, 316), s(405, 326), s(384, 329), s(390, 340), s(363, 315), s(391, 322),
        s(346, 288), s(348, 313), s(382, 325), s(349, 316), s(371, 323), s(322, 332), s(361, 332), s(292, 349),
        s(353, 323), s(358, 320), s(363, 305), s(368, 306), s(368, 307), s(363, 333), s(358, 323), s(353, 285),
    ],
    [
        s(503, 482), s(506, 488), s(508, 475), s(506, 489), s(511, 474), s(520, 473), s(503, 487), s(513, 481),
        s(485, 487), s(498, 485), s(467, 495), s(504, 477), s(514, 488), s(504, 474), s(504, 476), s(496, 474),
        s(500, 500), s(493, 500), s(481, 492), s(482, 495), s(472, 515), s(521, 483), s(499, 472), s(505, 486),
        s(476, 521), s(477, 522), s(502, 517), s(522, 507), s(530, 497), s(527, 492), s(466, 524), s(498, 500),
        s(497, 517), s(540, 512), s(519, 515), s(508, 509), s(508, 520), s(533, 498), s(504, 514), s(519, 513),
        s(520, 521), s(564, 511), s(510, 530), s(546, 510), s(553, 521), s(564, 515), s(540, 507), s(521, 510),
        s(536, 515), s(546, 504), s(565, 503), s(557, 511), s(574, 501), s(590, 493), s(549, 509), s(557, 502),
        s(560, 524), s(507, 529), s(580, 523), s(518, 520), s(533, 527), s(524, 529), s(553, 523), s(549, 525),
    ],
    [
        s(1027, 912), s(1035, 802), s(1019, 860), s(1046, 811), s(1034, 824), s(1042, 809), s(1030, 918), s(1019, 912),
        s(1017, 918), s(1045, 846), s(1060, 818), s(1052, 860), s(1063, 798), s(1095, 750), s(1071, 790), s(1023, 918),
        s(1034, 855), s(1060, 844), s(1050, 901), s(1058, 857), s(1065, 870), s(1061, 879), s(1065, 857), s(1031, 886),
        s(1052, 887), s(1032, 918), s(1058, 882), s(1042, 939), s(1069, 895), s(1034, 931), s(1051, 889), s(1041, 883),
        s(1025, 873), s(1052, 916), s(1084, 893), s(1065, 946), s(1056, 953), s(1047, 929), s(1048, 924), s(1085, 823),
        s(1050, 876), s(1038, 945), s(1068, 945), s(1061, 918), s(1078, 928), s(1061, 955), s(1088, 856), s(1078, 926),
        s(1030, 973), s(1015, 954), s(1047, 959), s(1018, 969), s(1027, 966), s(1093, 905), s(1046, 924), s(1071, 855),
        s(1079, 915), s(1021, 933), s(1023, 952), s(1025, 951), s(1025, 947), s(1023, 924), s(1021, 918), s(1022, 956),
    ],
    [
        s(-113, 23), s(-33, 21), s(-53, 27), s(-114, 40), s(-77, 32), s(-83, 46), s(-40, 32), s(-14, -2),
        s(-23, -25), s(-85, 29), s(-72, 32), s(-76, 33), s(-85, 40), s(-69, 37), s(-27, 26), s(-39, 5),
        s(-89, -1), s(-54, 8), s(-44, 13), s(-84, 41), s(-73, 36), s(-85, 38), s(-22, 14), s(-101, 10),
        s(-66, -4), s(31, 1), s(-78, 33), s(-56, 38), s(-125, 52), s(-21, 34), s(0, 11), s(-72, -9),
        s(181, -123), s(43, 10), s(-73, 44), s(-126, 64), s(-132, 51), s(-54, 45), s(-23, 23), s(-26, -12),
        s(-90, 20), s(300, -195), s(-102, 78), s(-160, 103), s(-289, 134), s(-134, 83), s(-65, 59), s(-90, 21),
        s(-102, 11), s(-102, 59), s(-160, 92), s(-89, 104), s(-277, 138), s(441, -173), s(-102, 77), s(-102, -2),
        s(-114, -44), s(-114, -32), s(-114, -10), s(-114, -2), s(-114, 2), s(-114, 34), s(-114, -32), s(-114, -44),
    ],
];

/// Mobility per kind (knight, bishop, rook, queen) and number of safe squares attacked.
#[rustfmt::skip]
const MOBILITY: [Score; 66] = [
    s(-14, -16), s(1, -10), s(13, -1), s(19, 20), s(25, 32), s(31, 40), s(36, 38), s(47, 37),
    s(52, 20),
    s(-2, -46), s(13, -47), s(21, -26), s(26, -7), s(37, -6), s(39, 0), s(41, 8), s(46, 6),
    s(53, 7), s(50, 9), s(38, 8), s(45, 2), s(110, -19), s(9, 0),
    s(-24, -28), s(14, -9), s(25, 26), s(29, 22), s(35, 29), s(34, 40), s(36, 46), s(40, 47),
    s(44, 46), s(51, 49), s(48, 55), s(55, 55), s(62, 56), s(58, 56), s(129, 4),
    s(-13, -26), s(165, -24), s(163, -22), s(169, -20), s(175, -54), s(176, -8), s(182, 19), s(180, 31),
    s(183, 45), s(186, 54), s(188, 70), s(191, 56), s(184, 71), s(191, 60), s(193, 65), s(197, 55),
    s(197, 54), s(198, 35), s(205, 29), s(201, 16), s(211, 0), s(323, -127), s(9, 106), s(10, 13),
    s(11, 22), s(12, 24), s(13, 26), s(14, 28),
];
/// Where each kind's row starts in `MOBILITY` (0..=8, 0..=13, 0..=14, 0..=27 squares).
const MOBILITY_OFFSET: [usize; 4] = [0, 9, 23, 38];
/// Bishop pair bonus.
const BISHOP_PAIR: Score = s(37, 61);
/// Rook on a file without pawns.
const ROOK_OPEN: Score = s(48, -10);
/// Rook on a file without own pawns.
const ROOK_SEMI_OPEN: Score = s(20, 11);
/// A minor or major piece attacked by a pawn.
const THREAT_BY_PAWN: Score = s(59, 26);
/// A rook or queen attacked by a minor piece.
const THREAT_BY_MINOR: Score = s(56, -9);
/// A queen attacked by a rook.
const THREAT_BY_ROOK: Score = s(38, 7);
/// An enemy piece attacked and not defended at all.
const HANGING: Score = s(17, 30);
/// A knight on an outpost: relative rank 4 to 6, defended by an own pawn, out of reach of enemy pawns.
const OUTPOST_KNIGHT: Score = s(14, 1);
/// A bishop on an outpost.
const OUTPOST_BISHOP: Score = s(22, 1);
/// A knight or bishop directly behind a pawn.
const MINOR_BEHIND_PAWN: Score = s(3, 16);
/// Per own pawn on the squares of a bishop's colour, per bishop.
const BISHOP_PAWNS: Score = s(-2, -5);
/// Per square of the enemy king zone a knight attacks.
const ZONE_ATTACK_KNIGHT: Score = s(-2, 1);
/// Per square of the enemy king zone a bishop attacks.
const ZONE_ATTACK_BISHOP: Score = s(-6, 5);
/// Per square of the enemy king zone a rook attacks.
const ZONE_ATTACK_ROOK: Score = s(-11, 3);
/// Per square of the enemy king zone a queen attacks.
const ZONE_ATTACK_QUEEN: Score = s(-16, 7);
/// Per central square (files c to f, relative ranks 2 to 4) free of own pawns and enemy pawn attacks.
const SPACE: Score = s(-2, 10);
/// Per enemy piece (not a pawn or king) a safe pawn push would attack.
const PAWN_PUSH_THREAT: Score = s(16, 7);
/// A rook on the relative seventh rank with the enemy king on the eighth or enemy pawns on the seventh.
const ROOK_ON_SEVENTH: Score = s(-46, 42);
/// An enemy piece (not the king) attacked by the king and not defended.
const THREAT_BY_KING: Score = s(41, -1);
/// An enemy knight or bishop attacked by a minor piece and not defended by a pawn.
const THREAT_MINOR_BY_MINOR: Score = s(20, 15);
/// A knight not on an outpost that attacks an outpost square free of own pieces.
const REACHABLE_OUTPOST: Score = s(13, 2);
/// A rook with at most three safe squares on the outer side of its own king's file.
const TRAPPED_ROOK: Score = s(-5, -14);
/// A rook on a file with a queen of either colour.
const ROOK_ON_QUEEN_FILE: Score = s(3, 3);
/// Per safe square from which a knight would attack the lone enemy queen.
const KNIGHT_ON_QUEEN: Score = s(5, 3);
/// Per safe square, held twice, from which a bishop or rook would attack the lone enemy queen.
const SLIDER_ON_QUEEN: Score = s(11, 13);
// texel: end

/// Attack maps gathered while scoring pieces, read by later terms.
pub struct EvalInfo {
    /// Squares attacked by each colour's pieces of each kind.
    pub attacked_by: [[Bitboard; 6]; 2],
    /// Squares attacked by each colour.
    pub attacked: [Bitboard; 2],
    /// Squares attacked at least twice by each colour (two pawns on one square count once).
    pub attacked2: [Bitboard; 2],
    /// Squares around each king.
    pub king_zone: [Bitboard; 2],
    /// Number of pieces of each colour attacking the enemy king zone.
    pub king_attackers: [i32; 2],
    /// Weighted attacks of each colour on the enemy king zone.
    pub king_attack_weight: [i32; 2],
    /// Each colour's passed pawns, found by the pawn terms.
    pub passed: [Bitboard; 2],
}

impl EvalInfo {
    /// Start the maps with pawn and king attacks.
    #[inline(always)]
    pub fn new(pos: &Position) -> EvalInfo {
        let mut info = EvalInfo {
            attacked_by: [[0; 6]; 2],
            attacked: [0; 2],
            attacked2: [0; 2],
            king_zone: [0; 2],
            king_attackers: [0; 2],
            king_attack_weight: [0; 2],
            passed: [0; 2],
        };
        for c in [Color::White, Color::Black] {
            let ci = c as usize;
            let ksq = pos.king_square(c);
            let pawns = pawn_attacks_bb(c, pos.pieces(c, PAWN));
            let king = king_attacks(ksq);
            info.attacked_by[ci][PAWN] = pawns;
            info.attacked_by[ci][KING] = king;
            info.attacked[ci] = pawns | king;
            info.attacked2[ci] = pawns & king;
            info.king_zone[ci] = king | forward(c, king) | (1u64 << ksq);
        }
        info
    }
}

/// Squares on relative ranks 4 to 6 that an own pawn defends and no enemy pawn can ever attack.
#[inline(always)]
pub fn outpost_squares(pos: &Position, c: Color, own_pawn_attacks: Bitboard) -> Bitboard {
    let enemy_attacks = pawn_attacks_bb(c.flip(), pos.pieces(c.flip(), PAWN));
    let reach = enemy_attacks | front_span(c.flip(), enemy_attacks);
    let ranks = if c == Color::White {
        rank_mask(3) | rank_mask(4) | rank_mask(5)
    } else {
        rank_mask(2) | rank_mask(3) | rank_mask(4)
    };
    ranks & own_pawn_attacks & !reach
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
            info.attacked2[ci] |= info.attacked[ci] & att;
            info.attacked[ci] |= att;
            let safe_squares = popcount(att & area);
            mobility += MOBILITY[MOBILITY_OFFSET[kind - KNIGHT] + safe_squares as usize];
            let zone = att & enemy_zone;
            if zone != 0 {
                info.king_attackers[ci] += 1;
                info.king_attack_weight[ci] += KING_ATTACK_WEIGHT[kind] * popcount(zone);
                zone_attack += ZONE_ATTACK[kind - KNIGHT] * popcount(zone);
            }
            if kind == ROOK {
                let file = file_mask(sq & 7);
                if file & pos.kinds[QUEEN] != 0 {
                    rooks += ROOK_ON_QUEEN_FILE;
                }
                let king_file = pos.king_square(c) & 7;
                if safe_squares <= 3 && (king_file < 4) == (sq & 7 < king_file) {
                    rooks += TRAPPED_ROOK;
                }
                if file & pos.pieces(c, PAWN) == 0 {
                    rooks += if file & pos.kinds[PAWN] == 0 {
                        ROOK_OPEN
                    } else {
                        ROOK_SEMI_OPEN
                    };
                }
                let (seventh, eighth) = if c == Color::White {
                    (rank_mask(6), rank_mask(7))
                } else {
                    (rank_mask(1), rank_mask(0))
                };
                if bb(sq) & seventh != 0
                    && (pos.pieces(them, KING) & eighth != 0
                        || pos.pieces(them, PAWN) & seventh != 0)
                {
                    rooks += ROOK_ON_SEVENTH;
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
    let outposts = outpost_squares(pos, c, info.attacked_by[ci][PAWN]);
    for kind in [KNIGHT, BISHOP] {
        for sq in Squares(pos.pieces(c, kind)) {
            if bb(sq) & outposts != 0 {
                minors += if kind == KNIGHT {
                    OUTPOST_KNIGHT
                } else {
                    OUTPOST_BISHOP
                };
            } else if kind == KNIGHT && knight_attacks(sq) & outposts & !pos.us(c) != 0 {
                minors += REACHABLE_OUTPOST;
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
    let undefended = enemy & !info.attacked[them as usize] & !pos.kinds[KING];
    t += THREAT_BY_KING * popcount(info.attacked_by[ci][KING] & undefended);
    let enemy_minors = enemy & (pos.kinds[KNIGHT] | pos.kinds[BISHOP]);
    t += THREAT_MINOR_BY_MINOR
        * popcount(minors_att & enemy_minors & !info.attacked_by[them as usize][PAWN]);
    // Squares from which a piece would attack a lone enemy queen, and that the enemy does not
    // hold strongly (with a pawn, or twice where we hold them once).
    let queen = pos.pieces(them, QUEEN);
    if queen != 0 && !more_than_one(queen) {
        let queen_sq = lsb(queen);
        let strongly_protected = info.attacked_by[them as usize][PAWN]
            | (info.attacked2[them as usize] & !info.attacked2[ci]);
        let safe =
            !(pos.pieces(c, PAWN) | pos.pieces(c, KING) | info.attacked_by[them as usize][PAWN])
                & !strongly_protected;
        t += KNIGHT_ON_QUEEN
            * popcount(knight_attacks(queen_sq) & info.attacked_by[ci][KNIGHT] & safe);
        let occ = pos.occupied();
        let sliders = bishop_attacks(queen_sq, occ) & info.attacked_by[ci][BISHOP]
            | rook_attacks(queen_sq, occ) & info.attacked_by[ci][ROOK];
        t += SLIDER_ON_QUEEN * popcount(sliders & safe & info.attacked2[ci]);
    }
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
