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
        s(86, 106), s(98, 114), s(92, 120), s(88, 126), s(106, 120), s(118, 128), s(118, 99), s(99, 93),
        s(95, 98), s(91, 108), s(89, 124), s(93, 117), s(106, 103), s(112, 114), s(110, 98), s(99, 97),
        s(92, 100), s(98, 87), s(96, 95), s(109, 81), s(112, 75), s(100, 101), s(102, 92), s(92, 94),
        s(114, 95), s(89, 94), s(92, 82), s(104, 65), s(107, 64), s(125, 84), s(103, 97), s(94, 101),
        s(142, 100), s(110, 102), s(139, 107), s(120, 87), s(82, 89), s(147, 108), s(105, 118), s(133, 98),
        s(296, 102), s(199, 151), s(106, 188), s(102, 142), s(129, 169), s(182, 181), s(119, 160), s(191, 66),
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
    ],
    [
        s(299, 249), s(353, 249), s(350, 260), s(352, 258), s(345, 281), s(358, 256), s(353, 269), s(299, 249),
        s(342, 236), s(336, 268), s(364, 239), s(366, 282), s(375, 282), s(375, 256), s(387, 263), s(368, 256),
        s(351, 249), s(377, 268), s(366, 285), s(382, 291), s(385, 294), s(380, 277), s(380, 286), s(363, 260),
        s(374, 285), s(355, 279), s(388, 300), s(392, 301), s(387, 289), s(389, 305), s(360, 299), s(382, 279),
        s(369, 286), s(377, 268), s(399, 307), s(393, 303), s(395, 305), s(414, 293), s(386, 291), s(424, 263),
        s(363, 277), s(357, 288), s(382, 297), s(387, 303), s(362, 327), s(403, 287), s(376, 282), s(317, 290),
        s(356, 276), s(335, 286), s(336, 297), s(406, 286), s(334, 289), s(374, 276), s(317, 322), s(334, 274),
        s(299, 249), s(308, 257), s(317, 277), s(326, 310), s(326, 281), s(317, 279), s(308, 257), s(299, 249),
    ],
    [
        s(400, 278), s(395, 274), s(397, 281), s(393, 287), s(420, 274), s(379, 293), s(430, 270), s(349, 306),
        s(412, 264), s(404, 270), s(398, 276), s(399, 310), s(400, 284), s(396, 295), s(413, 278), s(362, 266),
        s(401, 293), s(419, 289), s(406, 301), s(405, 302), s(400, 310), s(405, 305), s(424, 303), s(384, 269),
        s(422, 273), s(396, 302), s(414, 316), s(428, 315), s(415, 321), s(408, 316), s(402, 306), s(420, 290),
        s(367, 299), s(409, 300), s(436, 306), s(409, 312), s(399, 333), s(406, 316), s(415, 308), s(357, 299),
        s(374, 298), s(384, 308), s(436, 300), s(420, 315), s(403, 316), s(422, 325), s(382, 305), s(407, 304),
        s(359, 277), s(382, 292), s(395, 317), s(376, 299), s(381, 319), s(350, 318), s(377, 318), s(340, 325),
        s(353, 315), s(358, 333), s(363, 291), s(368, 307), s(368, 299), s(363, 326), s(358, 330), s(353, 284),
    ],
    [
        s(525, 496), s(529, 497), s(530, 488), s(535, 494), s(537, 485), s(542, 486), s(528, 500), s(535, 488),
        s(506, 499), s(521, 494), s(492, 503), s(527, 491), s(542, 495), s(533, 479), s(535, 484), s(515, 482),
        s(520, 506), s(514, 509), s(506, 499), s(501, 505), s(498, 522), s(537, 496), s(527, 481), s(531, 492),
        s(504, 529), s(509, 528), s(539, 517), s(547, 513), s(562, 501), s(555, 497), s(502, 524), s(522, 509),
        s(517, 528), s(561, 520), s(554, 523), s(537, 512), s(549, 523), s(546, 506), s(528, 523), s(545, 519),
        s(539, 536), s(570, 526), s(537, 538), s(577, 519), s(588, 523), s(578, 526), s(575, 507), s(559, 517),
        s(558, 524), s(573, 514), s(587, 515), s(591, 515), s(620, 497), s(590, 507), s(565, 519), s(582, 511),
        s(585, 531), s(539, 536), s(595, 531), s(544, 530), s(573, 530), s(561, 531), s(591, 523), s(581, 530),
    ],
    [
        s(1109, 828), s(1089, 796), s(1080, 823), s(1105, 784), s(1094, 804), s(1093, 788), s(1082, 918), s(1019, 912),
        s(1105, 785), s(1104, 834), s(1117, 804), s(1107, 838), s(1123, 770), s(1144, 749), s(1115, 794), s(1063, 918),
        s(1092, 844), s(1111, 834), s(1102, 898), s(1111, 853), s(1117, 859), s(1118, 858), s(1118, 833), s(1094, 854),
        s(1103, 876), s(1085, 913), s(1098, 885), s(1095, 943), s(1115, 895), s(1093, 908), s(1103, 878), s(1105, 875),
        s(1084, 879), s(1104, 920), s(1130, 909), s(1109, 945), s(1101, 959), s(1092, 936), s(1102, 916), s(1138, 810),
        s(1098, 875), s(1082, 934), s(1091, 967), s(1108, 925), s(1103, 950), s(1113, 944), s(1123, 881), s(1129, 881),
        s(1084, 947), s(1041, 980), s(1094, 941), s(1084, 958), s(1089, 951), s(1154, 886), s(1101, 916), s(1140, 829),
        s(1134, 871), s(1110, 884), s(1073, 933), s(1143, 886), s(1164, 865), s(1023, 963), s(1116, 861), s(1078, 930),
    ],
    [
        s(-78, 61), s(-13, 54), s(-30, 54), s(-98, 67), s(-55, 60), s(-61, 75), s(-17, 64), s(9, 29),
        s(-6, 9), s(-63, 55), s(-49, 51), s(-60, 52), s(-69, 59), s(-50, 61), s(-8, 55), s(-20, 34),
        s(-64, 21), s(-37, 27), s(-12, 28), s(-77, 60), s(-61, 55), s(-56, 57), s(1, 39), s(-80, 33),
        s(0, 6), s(39, 27), s(-64, 52), s(-54, 59), s(-116, 73), s(-14, 53), s(-3, 36), s(-64, 24),
        s(169, -74), s(20, 41), s(-37, 63), s(-99, 83), s(-119, 80), s(-51, 71), s(-42, 55), s(-57, 30),
        s(-90, 53), s(281, -150), s(-84, 100), s(-169, 135), s(-203, 135), s(-129, 110), s(-36, 84), s(-90, 45),
        s(-102, 67), s(-82, 72), s(-85, 99), s(-5, 94), s(-67, 90), s(458, -156), s(-102, 103), s(-102, 41),
        s(-114, -44), s(-114, 63), s(-114, 40), s(-114, 40), s(-114, 38), s(-114, 45), s(-114, 47), s(-114, -44),
    ],
];

/// Mobility per kind (knight, bishop, rook, queen) and number of safe squares attacked.
#[rustfmt::skip]
const MOBILITY: [Score; 66] = [
    s(3, -75), s(14, -29), s(28, -19), s(33, 3), s(42, 14), s(50, 22), s(56, 19), s(65, 17),
    s(71, -1),
    s(1, -44), s(18, -39), s(28, -21), s(32, 2), s(46, 0), s(48, 6), s(51, 14), s(56, 12),
    s(63, 12), s(62, 11), s(54, 7), s(61, 3), s(130, -15), s(30, -1),
    s(-5, -121), s(33, -44), s(44, -6), s(49, -9), s(58, 5), s(56, 20), s(58, 25), s(62, 24),
    s(68, 25), s(76, 27), s(75, 31), s(82, 32), s(92, 29), s(80, 36), s(169, -28),
    s(-13, -26), s(232, -24), s(227, -22), s(235, -20), s(243, -71), s(241, -25), s(247, -5), s(247, 10),
    s(250, 6), s(254, 23), s(258, 20), s(258, 20), s(253, 36), s(258, 30), s(260, 31), s(265, 19),
    s(260, 19), s(266, 1), s(266, -9), s(270, -24), s(289, -54), s(412, -191), s(339, -104), s(456, -257),
    s(11, -12), s(12, -148), s(13, 26), s(14, 28),
];
/// Where each kind's row starts in `MOBILITY` (0..=8, 0..=13, 0..=14, 0..=27 squares).
const MOBILITY_OFFSET: [usize; 4] = [0, 9, 23, 38];
/// Bishop pair bonus.
const BISHOP_PAIR: Score = s(37, 68);
/// Rook on a file without pawns.
const ROOK_OPEN: Score = s(48, -10);
/// Rook on a file without own pawns.
const ROOK_SEMI_OPEN: Score = s(17, 14);
/// A minor or major piece attacked by a pawn.
const THREAT_BY_PAWN: Score = s(59, 26);
/// A rook or queen attacked by a minor piece.
const THREAT_BY_MINOR: Score = s(57, -10);
/// A queen attacked by a rook.
const THREAT_BY_ROOK: Score = s(53, 4);
/// An enemy piece attacked and not defended at all.
const HANGING: Score = s(18, 29);
/// A knight on an outpost: relative rank 4 to 6, defended by an own pawn, out of reach of enemy pawns.
const OUTPOST_KNIGHT: Score = s(12, 1);
/// A bishop on an outpost.
const OUTPOST_BISHOP: Score = s(21, 1);
/// A knight or bishop directly behind a pawn.
const MINOR_BEHIND_PAWN: Score = s(4, 16);
/// Per own pawn on the squares of a bishop's colour, per bishop.
const BISHOP_PAWNS: Score = s(-2, -5);
/// Per square of the enemy king zone a knight attacks.
const ZONE_ATTACK_KNIGHT: Score = s(0, -1);
/// Per square of the enemy king zone a bishop attacks.
const ZONE_ATTACK_BISHOP: Score = s(-5, 4);
/// Per square of the enemy king zone a rook attacks.
const ZONE_ATTACK_ROOK: Score = s(-9, 2);
/// Per square of the enemy king zone a queen attacks.
const ZONE_ATTACK_QUEEN: Score = s(-18, 9);
/// Per central square (files c to f, relative ranks 2 to 4) free of own pawns and enemy pawn attacks.
const SPACE: Score = s(-1, 11);
/// Per enemy piece (not a pawn or king) a safe pawn push would attack.
const PAWN_PUSH_THREAT: Score = s(17, 6);
/// A rook on the relative seventh rank with the enemy king on the eighth or enemy pawns on the seventh.
const ROOK_ON_SEVENTH: Score = s(-39, 41);
/// An enemy piece (not the king) attacked by the king and not defended.
const THREAT_BY_KING: Score = s(48, -3);
/// An enemy knight or bishop attacked by a minor piece and not defended by a pawn.
const THREAT_MINOR_BY_MINOR: Score = s(20, 14);
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
