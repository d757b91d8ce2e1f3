//! Piece terms: material with piece-square tables, mobility, bishop pair, rooks (on files, on the
//! seventh rank, by own pawns), minor pieces (outposts, behind pawns, bishop and pawn colours,
//! long diagonals, distance to the king, knights by own pawns), threats (by pawns, minors, rooks
//! and the king, hanging pieces, pawn pushes, contested squares).
//! Also the attack maps (`EvalInfo`) that king safety and threats read.

use super::pawns::distance;
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
        s(84, 103), s(96, 107), s(87, 115), s(77, 127), s(99, 113), s(107, 122), s(110, 92), s(92, 89),
        s(90, 96), s(87, 104), s(80, 121), s(79, 121), s(98, 101), s(100, 112), s(102, 95), s(88, 97),
        s(87, 101), s(94, 81), s(85, 94), s(103, 78), s(107, 73), s(87, 98), s(96, 86), s(86, 90),
        s(109, 90), s(91, 85), s(85, 72), s(97, 58), s(101, 50), s(114, 77), s(97, 89), s(90, 100),
        s(128, 106), s(95, 108), s(129, 111), s(114, 88), s(70, 87), s(130, 104), s(94, 120), s(121, 107),
        s(283, 102), s(142, 157), s(52, 193), s(58, 151), s(48, 192), s(138, 192), s(98, 164), s(126, 79),
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
    ],
    [
        s(299, 249), s(329, 234), s(326, 240), s(322, 241), s(319, 254), s(322, 240), s(328, 242), s(299, 249),
        s(319, 216), s(323, 263), s(339, 214), s(339, 259), s(348, 253), s(349, 230), s(358, 224), s(341, 239),
        s(329, 244), s(360, 239), s(343, 254), s(366, 255), s(361, 260), s(355, 249), s(358, 259), s(339, 240),
        s(349, 272), s(328, 262), s(363, 272), s(371, 272), s(369, 260), s(368, 271), s(357, 272), s(355, 274),
        s(345, 264), s(354, 249), s(389, 273), s(375, 273), s(378, 275), s(399, 260), s(368, 267), s(409, 245),
        s(317, 283), s(362, 260), s(364, 266), s(367, 271), s(336, 304), s(388, 255), s(364, 256), s(317, 268),
        s(308, 278), s(309, 261), s(329, 271), s(376, 276), s(318, 263), s(355, 260), s(317, 287), s(308, 262),
        s(299, 249), s(308, 257), s(317, 265), s(326, 287), s(326, 257), s(317, 265), s(308, 257), s(299, 249),
    ],
    [
        s(397, 280), s(375, 305), s(370, 301), s(354, 308), s(380, 294), s(348, 316), s(350, 304), s(315, 317),
        s(395, 294), s(374, 284), s(371, 303), s(371, 331), s(373, 307), s(369, 312), s(373, 290), s(358, 291),
        s(388, 310), s(402, 310), s(374, 298), s(379, 322), s(376, 331), s(363, 319), s(397, 322), s(352, 299),
        s(407, 299), s(375, 327), s(389, 344), s(401, 340), s(391, 346), s(389, 338), s(386, 320), s(398, 313),
        s(348, 318), s(384, 328), s(415, 327), s(388, 337), s(385, 349), s(392, 335), s(394, 330), s(333, 323),
        s(343, 332), s(380, 322), s(421, 309), s(414, 333), s(399, 333), s(396, 330), s(372, 325), s(396, 330),
        s(347, 301), s(344, 309), s(392, 333), s(363, 322), s(381, 332), s(336, 338), s(360, 322), s(301, 354),
        s(353, 317), s(358, 332), s(363, 311), s(368, 315), s(368, 316), s(363, 343), s(358, 336), s(353, 285),
    ],
    [
        s(495, 457), s(499, 464), s(501, 451), s(501, 464), s(505, 448), s(514, 449), s(495, 462), s(504, 455),
        s(478, 463), s(492, 461), s(459, 473), s(497, 454), s(508, 464), s(497, 451), s(495, 455), s(487, 450),
        s(495, 474), s(489, 475), s(473, 467), s(480, 468), s(466, 492), s(515, 458), s(495, 445), s(497, 460),
        s(470, 496), s(468, 496), s(500, 492), s(520, 481), s(528, 470), s(525, 464), s(460, 498), s(493, 475),
        s(491, 493), s(537, 486), s(514, 490), s(503, 483), s(503, 494), s(529, 472), s(498, 488), s(517, 488),
        s(515, 495), s(562, 484), s(506, 505), s(544, 484), s(551, 496), s(560, 491), s(530, 483), s(516, 485),
        s(528, 490), s(538, 480), s(559, 479), s(557, 486), s(570, 477), s(581, 470), s(540, 486), s(548, 479),
        s(560, 496), s(508, 502), s(575, 497), s(518, 493), s(534, 500), s(518, 506), s(545, 500), s(539, 501),
    ],
    [
        s(1036, 912), s(1047, 794), s(1029, 850), s(1056, 807), s(1044, 817), s(1052, 806), s(1037, 918), s(1019, 912),
        s(1025, 918), s(1053, 843), s(1070, 817), s(1063, 853), s(1074, 792), s(1105, 753), s(1082, 780), s(1033, 918),
        s(1044, 850), s(1070, 843), s(1058, 901), s(1068, 856), s(1075, 865), s(1071, 877), s(1074, 858), s(1043, 877),
        s(1062, 884), s(1038, 924), s(1066, 889), s(1053, 941), s(1079, 898), s(1043, 930), s(1057, 892), s(1051, 883),
        s(1036, 867), s(1059, 916), s(1093, 893), s(1070, 956), s(1054, 972), s(1052, 942), s(1052, 932), s(1096, 822),
        s(1051, 886), s(1041, 948), s(1067, 959), s(1065, 932), s(1081, 937), s(1063, 962), s(1093, 863), s(1086, 928),
        s(1040, 971), s(1010, 969), s(1046, 969), s(1010, 982), s(1027, 975), s(1096, 913), s(1054, 924), s(1085, 843),
        s(1092, 909), s(1021, 939), s(1023, 958), s(1025, 958), s(1025, 945), s(1023, 924), s(1021, 918), s(1039, 940),
    ],
    [
        s(-109, 36), s(-34, 29), s(-56, 30), s(-126, 44), s(-87, 36), s(-92, 52), s(-42, 40), s(-10, 9),
        s(-15, -20), s(-89, 32), s(-79, 32), s(-87, 30), s(-98, 38), s(-78, 37), s(-29, 29), s(-36, 13),
        s(-87, 0), s(-47, 4), s(-51, 8), s(-93, 34), s(-81, 29), s(-91, 33), s(-21, 12), s(-94, 12),
        s(-66, -3), s(22, 0), s(-84, 26), s(-62, 29), s(-128, 43), s(-27, 26), s(0, 6), s(-65, -9),
        s(186, -116), s(34, 8), s(-66, 38), s(-125, 57), s(-140, 45), s(-54, 39), s(-13, 20), s(-12, -9),
        s(-90, 23), s(278, -178), s(-92, 72), s(-142, 94), s(-269, 124), s(-124, 77), s(-57, 56), s(-90, 25),
        s(-102, 19), s(-102, 55), s(-132, 81), s(-59, 91), s(-257, 123), s(420, -155), s(-102, 74), s(-102, 5),
        s(-114, -44), s(-114, -32), s(-114, -12), s(-114, -2), s(-114, 2), s(-114, 30), s(-114, -32), s(-114, -44),
    ],
];

/// Mobility per kind (knight, bishop, rook, queen) and number of safe squares attacked.
#[rustfmt::skip]
const MOBILITY: [Score; 66] = [
    s(-36, -16), s(-19, -24), s(-7, -10), s(-1, 13), s(6, 29), s(13, 39), s(18, 39), s(29, 40),
    s(37, 25),
    s(14, -56), s(28, -47), s(37, -25), s(41, -6), s(53, -6), s(55, -1), s(57, 7), s(61, 2),
    s(69, 2), s(65, 1), s(56, -1), s(60, -8), s(131, -29), s(23, -13),
    s(-40, -28), s(6, -37), s(18, 3), s(22, -1), s(30, 13), s(28, 26), s(30, 33), s(34, 33),
    s(39, 33), s(46, 36), s(42, 42), s(51, 42), s(56, 44), s(50, 47), s(122, -7),
    s(-13, -26), s(195, -24), s(194, -22), s(200, -20), s(206, -57), s(208, -8), s(213, 19), s(211, 35),
    s(214, 47), s(216, 57), s(218, 73), s(221, 60), s(213, 76), s(220, 63), s(221, 68), s(225, 57),
    s(224, 55), s(225, 34), s(233, 27), s(232, 7), s(244, -14), s(359, -149), s(9, 108), s(10, 11),
    s(11, 22), s(12, 24), s(13, 26), s(14, 28),
];
/// Where each kind's row starts in `MOBILITY` (0..=8, 0..=13, 0..=14, 0..=27 squares).
const MOBILITY_OFFSET: [usize; 4] = [0, 9, 23, 38];
/// Bishop pair bonus.
const BISHOP_PAIR: Score = s(34, 76);
/// Rook on a file without pawns.
const ROOK_OPEN: Score = s(50, -7);
/// Rook on a file without own pawns.
const ROOK_SEMI_OPEN: Score = s(18, 18);
/// A minor or major piece attacked by a pawn.
const THREAT_BY_PAWN: Score = s(59, 30);
/// A rook or queen attacked by a minor piece.
const THREAT_BY_MINOR: Score = s(55, -7);
/// A queen attacked by a rook.
const THREAT_BY_ROOK: Score = s(51, 10);
/// An enemy piece attacked and not defended at all.
const HANGING: Score = s(17, 30);
/// A knight on an outpost: relative rank 4 to 6, defended by an own pawn, out of reach of enemy pawns.
const OUTPOST_KNIGHT: Score = s(12, -3);
/// A bishop on an outpost.
const OUTPOST_BISHOP: Score = s(20, 1);
/// A knight or bishop directly behind a pawn.
const MINOR_BEHIND_PAWN: Score = s(3, 17);
/// Per own pawn on the squares of a bishop's colour, per bishop.
const BISHOP_PAWNS: Score = s(-1, 0);
/// Per square of the enemy king zone a knight attacks.
const ZONE_ATTACK_KNIGHT: Score = s(-1, 0);
/// Per square of the enemy king zone a bishop attacks.
const ZONE_ATTACK_BISHOP: Score = s(-4, 2);
/// Per square of the enemy king zone a rook attacks.
const ZONE_ATTACK_ROOK: Score = s(-9, 1);
/// Per square of the enemy king zone a queen attacks.
const ZONE_ATTACK_QUEEN: Score = s(-15, 5);
/// Per central square (files c to f, relative ranks 2 to 4) free of own pawns and enemy pawn attacks.
const SPACE: Score = s(-2, 13);
/// Per enemy piece (not a pawn or king) a safe pawn push would attack.
const PAWN_PUSH_THREAT: Score = s(16, 7);
/// A rook on the relative seventh rank with the enemy king on the eighth or enemy pawns on the seventh.
const ROOK_ON_SEVENTH: Score = s(-42, 40);
/// An enemy piece (not the king) attacked by the king and not defended.
const THREAT_BY_KING: Score = s(45, -3);
/// An enemy knight or bishop attacked by a minor piece and not defended by a pawn.
const THREAT_MINOR_BY_MINOR: Score = s(19, 16);
/// Per own pawn, per knight (the knight's worth by the pawns left).
const KNIGHT_PAWNS: Score = s(6, 12);
/// Per own pawn, per rook (the rook's worth by the pawns left).
const ROOK_PAWNS: Score = s(1, 18);
/// Per square of a knight's distance to its own king.
const KNIGHT_KING_DISTANCE: Score = s(-2, -4);
/// Per square of a bishop's distance to its own king.
const BISHOP_KING_DISTANCE: Score = s(-2, -2);
/// A bishop whose diagonals, blocked by pawns only, reach two centre squares (a long diagonal).
const LONG_DIAGONAL_BISHOP: Score = s(15, 17);
/// Per square both sides attack that no enemy pawn attacks.
const RESTRICTED: Score = s(2, -2);
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
                rooks += ROOK_PAWNS * popcount(pos.pieces(c, PAWN));
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
            let king_distance = distance(sq, pos.king_square(c));
            if kind == KNIGHT {
                minors += KNIGHT_KING_DISTANCE * king_distance + KNIGHT_PAWNS * popcount(own_pawns);
            } else {
                minors += BISHOP_KING_DISTANCE * king_distance;
            }
            if kind == BISHOP {
                let colour = if bb(sq) & LIGHT_SQUARES != 0 {
                    LIGHT_SQUARES
                } else {
                    !LIGHT_SQUARES
                };
                minors += BISHOP_PAWNS * popcount(own_pawns & colour);
                let centre = (file_mask(3) | file_mask(4)) & (rank_mask(3) | rank_mask(4));
                if more_than_one(bishop_attacks(sq, pos.kinds[PAWN]) & centre) {
                    minors += LONG_DIAGONAL_BISHOP;
                }
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
    let contested = info.attacked[ci] & info.attacked[them as usize];
    t += RESTRICTED * popcount(contested & !info.attacked_by[them as usize][PAWN]);
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
