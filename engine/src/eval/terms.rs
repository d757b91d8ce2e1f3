//! Piece terms: material with piece-square tables, mobility, bishop pair, rooks on files and on
//! the seventh rank, minor pieces (outposts, behind pawns, bishop and pawn colours), threats
//! (by pawns, minors, rooks and the king, hanging pieces, pawn pushes).
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
        s(99, 114), s(112, 118), s(102, 126), s(94, 136), s(116, 121), s(121, 133), s(125, 103), s(105, 100),
        s(106, 106), s(103, 113), s(95, 131), s(96, 131), s(114, 111), s(115, 122), s(117, 105), s(102, 107),
        s(103, 111), s(109, 92), s(101, 105), s(115, 90), s(120, 84), s(102, 109), s(110, 97), s(100, 101),
        s(125, 100), s(107, 97), s(99, 84), s(111, 70), s(117, 64), s(127, 89), s(112, 101), s(104, 111),
        s(144, 116), s(112, 118), s(143, 124), s(128, 99), s(81, 101), s(144, 116), s(109, 131), s(134, 119),
        s(307, 97), s(165, 152), s(71, 190), s(74, 149), s(67, 193), s(150, 195), s(118, 162), s(147, 77),
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
    ],
    [
        s(299, 249), s(334, 243), s(332, 251), s(332, 251), s(328, 267), s(332, 255), s(336, 255), s(299, 249),
        s(323, 220), s(328, 267), s(345, 231), s(348, 277), s(357, 273), s(358, 248), s(368, 235), s(351, 253),
        s(333, 250), s(363, 255), s(347, 276), s(372, 277), s(368, 284), s(362, 272), s(364, 278), s(345, 249),
        s(351, 278), s(331, 274), s(366, 294), s(374, 293), s(372, 282), s(371, 294), s(363, 286), s(360, 285),
        s(349, 270), s(356, 261), s(388, 293), s(376, 293), s(377, 296), s(399, 280), s(370, 283), s(414, 252),
        s(317, 289), s(362, 272), s(362, 284), s(365, 291), s(332, 325), s(387, 275), s(363, 270), s(317, 275),
        s(308, 279), s(313, 265), s(326, 282), s(368, 288), s(315, 274), s(351, 271), s(317, 292), s(308, 265),
        s(299, 249), s(308, 257), s(317, 265), s(326, 290), s(326, 259), s(317, 265), s(308, 257), s(299, 249),
    ],
    [
        s(402, 284), s(371, 299), s(373, 296), s(358, 302), s(384, 292), s(353, 311), s(350, 302), s(327, 324),
        s(391, 289), s(381, 289), s(371, 294), s(375, 326), s(377, 301), s(374, 309), s(386, 294), s(358, 285),
        s(385, 300), s(399, 303), s(384, 306), s(379, 315), s(378, 326), s(377, 327), s(400, 316), s(352, 292),
        s(401, 290), s(372, 319), s(387, 336), s(400, 333), s(389, 338), s(388, 332), s(385, 314), s(398, 307),
        s(342, 311), s(379, 319), s(410, 320), s(382, 330), s(381, 341), s(388, 328), s(390, 324), s(330, 313),
        s(336, 322), s(372, 315), s(423, 316), s(406, 327), s(389, 326), s(393, 340), s(367, 315), s(394, 321),
        s(342, 291), s(347, 315), s(382, 327), s(351, 316), s(369, 328), s(324, 332), s(365, 329), s(294, 347),
        s(353, 323), s(358, 319), s(363, 303), s(368, 306), s(368, 306), s(363, 334), s(358, 326), s(353, 285),
    ],
    [
        s(507, 482), s(510, 488), s(513, 475), s(512, 489), s(517, 473), s(525, 473), s(507, 487), s(516, 480),
        s(490, 486), s(504, 484), s(471, 496), s(509, 478), s(521, 488), s(509, 475), s(508, 477), s(498, 474),
        s(505, 498), s(499, 499), s(485, 490), s(491, 493), s(477, 515), s(527, 481), s(506, 469), s(509, 484),
        s(482, 520), s(481, 520), s(510, 516), s(531, 505), s(540, 494), s(537, 488), s(470, 523), s(504, 498),
        s(504, 516), s(548, 511), s(526, 514), s(514, 508), s(515, 519), s(540, 497), s(509, 513), s(527, 512),
        s(527, 519), s(574, 508), s(514, 531), s(555, 508), s(562, 519), s(573, 513), s(544, 506), s(528, 508),
        s(541, 514), s(550, 503), s(570, 503), s(562, 510), s(580, 500), s(593, 492), s(553, 509), s(560, 502),
        s(571, 520), s(517, 526), s(586, 521), s(527, 517), s(543, 524), s(535, 526), s(561, 521), s(552, 524),
    ],
    [
        s(1036, 912), s(1043, 798), s(1028, 854), s(1055, 804), s(1043, 817), s(1051, 806), s(1037, 918), s(1019, 912),
        s(1024, 918), s(1051, 844), s(1068, 814), s(1061, 853), s(1073, 791), s(1105, 746), s(1080, 785), s(1033, 918),
        s(1041, 854), s(1067, 841), s(1056, 900), s(1065, 855), s(1072, 866), s(1068, 876), s(1072, 858), s(1040, 883),
        s(1059, 884), s(1033, 923), s(1062, 883), s(1048, 940), s(1074, 894), s(1039, 928), s(1053, 892), s(1048, 883),
        s(1031, 871), s(1052, 918), s(1087, 894), s(1065, 949), s(1051, 966), s(1049, 931), s(1048, 930), s(1092, 824),
        s(1048, 883), s(1035, 952), s(1060, 957), s(1061, 926), s(1075, 933), s(1059, 960), s(1089, 856), s(1081, 931),
        s(1033, 977), s(1005, 967), s(1042, 969), s(1009, 977), s(1024, 972), s(1091, 912), s(1048, 924), s(1079, 848),
        s(1086, 917), s(1021, 936), s(1023, 959), s(1025, 955), s(1025, 950), s(1023, 924), s(1021, 918), s(1031, 954),
    ],
    [
        s(-114, 37), s(-30, 28), s(-48, 30), s(-113, 43), s(-75, 36), s(-82, 51), s(-37, 40), s(-12, 11),
        s(-20, -17), s(-84, 32), s(-72, 33), s(-76, 31), s(-86, 39), s(-69, 38), s(-25, 30), s(-39, 15),
        s(-86, 2), s(-48, 7), s(-43, 9), s(-85, 36), s(-75, 32), s(-86, 36), s(-20, 14), s(-97, 13),
        s(-66, -2), s(27, 0), s(-78, 29), s(-54, 31), s(-124, 46), s(-21, 29), s(5, 7), s(-68, -7),
        s(193, -118), s(42, 9), s(-63, 39), s(-120, 59), s(-126, 45), s(-50, 40), s(-5, 20), s(-9, -10),
        s(-90, 26), s(306, -197), s(-93, 74), s(-149, 98), s(-286, 130), s(-127, 80), s(-53, 56), s(-90, 26),
        s(-102, 19), s(-102, 59), s(-142, 86), s(-79, 99), s(-274, 134), s(436, -171), s(-102, 79), s(-102, 5),
        s(-114, -44), s(-114, -32), s(-114, -15), s(-114, -1), s(-114, 1), s(-114, 35), s(-114, -32), s(-114, -44),
    ],
];

/// Mobility per kind (knight, bishop, rook, queen) and number of safe squares attacked.
#[rustfmt::skip]
const MOBILITY: [Score; 66] = [
    s(-4, -16), s(11, -12), s(23, -1), s(29, 20), s(37, 32), s(45, 39), s(51, 36), s(62, 35),
    s(69, 15),
    s(4, -44), s(20, -44), s(29, -23), s(33, -4), s(45, -5), s(48, 2), s(50, 10), s(55, 7),
    s(63, 8), s(59, 9), s(49, 8), s(55, 2), s(120, -19), s(21, -1),
    s(-25, -28), s(17, -13), s(29, 23), s(34, 21), s(42, 33), s(40, 46), s(42, 52), s(47, 52),
    s(51, 51), s(59, 53), s(56, 60), s(65, 59), s(72, 61), s(66, 62), s(142, 6),
    s(-13, -26), s(172, -24), s(172, -22), s(179, -20), s(184, -54), s(186, -8), s(191, 21), s(189, 35),
    s(191, 49), s(194, 60), s(196, 76), s(198, 62), s(191, 78), s(197, 67), s(199, 72), s(202, 64),
    s(201, 62), s(201, 44), s(209, 37), s(205, 22), s(215, 5), s(328, -123), s(9, 110), s(10, 17),
    s(11, 22), s(12, 24), s(13, 26), s(14, 28),
];
/// Where each kind's row starts in `MOBILITY` (0..=8, 0..=13, 0..=14, 0..=27 squares).
const MOBILITY_OFFSET: [usize; 4] = [0, 9, 23, 38];
/// Bishop pair bonus.
const BISHOP_PAIR: Score = s(37, 63);
/// Rook on a file without pawns.
const ROOK_OPEN: Score = s(49, -9);
/// Rook on a file without own pawns.
const ROOK_SEMI_OPEN: Score = s(19, 13);
/// A minor or major piece attacked by a pawn.
const THREAT_BY_PAWN: Score = s(58, 29);
/// A rook or queen attacked by a minor piece.
const THREAT_BY_MINOR: Score = s(56, -9);
/// A queen attacked by a rook.
const THREAT_BY_ROOK: Score = s(52, 8);
/// An enemy piece attacked and not defended at all.
const HANGING: Score = s(17, 30);
/// A knight on an outpost: relative rank 4 to 6, defended by an own pawn, out of reach of enemy pawns.
const OUTPOST_KNIGHT: Score = s(11, 1);
/// A bishop on an outpost.
const OUTPOST_BISHOP: Score = s(21, 3);
/// A knight or bishop directly behind a pawn.
const MINOR_BEHIND_PAWN: Score = s(4, 15);
/// Per own pawn on the squares of a bishop's colour, per bishop.
const BISHOP_PAWNS: Score = s(-2, -5);
/// Per square of the enemy king zone a knight attacks.
const ZONE_ATTACK_KNIGHT: Score = s(-2, 0);
/// Per square of the enemy king zone a bishop attacks.
const ZONE_ATTACK_BISHOP: Score = s(-5, 4);
/// Per square of the enemy king zone a rook attacks.
const ZONE_ATTACK_ROOK: Score = s(-10, 2);
/// Per square of the enemy king zone a queen attacks.
const ZONE_ATTACK_QUEEN: Score = s(-16, 6);
/// Per central square (files c to f, relative ranks 2 to 4) free of own pawns and enemy pawn attacks.
const SPACE: Score = s(0, 12);
/// Per enemy piece (not a pawn or king) a safe pawn push would attack.
const PAWN_PUSH_THREAT: Score = s(16, 7);
/// A rook on the relative seventh rank with the enemy king on the eighth or enemy pawns on the seventh.
const ROOK_ON_SEVENTH: Score = s(-44, 42);
/// An enemy piece (not the king) attacked by the king and not defended.
const THREAT_BY_KING: Score = s(41, -1);
/// An enemy knight or bishop attacked by a minor piece and not defended by a pawn.
const THREAT_MINOR_BY_MINOR: Score = s(20, 15);
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
    let undefended = enemy & !info.attacked[them as usize] & !pos.kinds[KING];
    t += THREAT_BY_KING * popcount(info.attacked_by[ci][KING] & undefended);
    let enemy_minors = enemy & (pos.kinds[KNIGHT] | pos.kinds[BISHOP]);
    t += THREAT_MINOR_BY_MINOR
        * popcount(minors_att & enemy_minors & !info.attacked_by[them as usize][PAWN]);
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
