//! Piece terms: material with piece-square tables, mobility, bishop pair, rooks on files, minor
//! pieces (outposts, behind pawns, bishop and pawn colours), threats.
//! Also the attack maps (`EvalInfo`) that king safety and threats read.

use super::popcnt::popcount;
use super::{Score, Term, Trace, s};
use crate::chess::attacks::{bishop_attacks, king_attacks, knight_attacks, rook_attacks};
use crate::chess::bitboard::{
    Bitboard, LIGHT_SQUARES, Squares, adjacent_files_of, bb, file_mask, forward, front_span,
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
        s(102, 111), s(115, 118), s(102, 116), s(94, 127), s(114, 114), s(118, 127), s(126, 107), s(105, 101),
        s(108, 104), s(105, 114), s(96, 122), s(94, 123), s(111, 104), s(110, 117), s(115, 109), s(101, 108),
        s(107, 108), s(114, 99), s(104, 103), s(118, 99), s(121, 95), s(101, 110), s(113, 107), s(101, 101),
        s(128, 97), s(110, 105), s(102, 94), s(110, 93), s(116, 88), s(125, 101), s(114, 112), s(104, 111),
        s(152, 109), s(123, 122), s(156, 129), s(137, 113), s(97, 111), s(161, 116), s(126, 132), s(146, 112),
        s(307, 96), s(172, 149), s(82, 185), s(83, 139), s(77, 186), s(160, 184), s(124, 149), s(144, 73),
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
    ],
    [
        s(299, 249), s(330, 245), s(331, 251), s(330, 248), s(324, 269), s(328, 256), s(333, 256), s(299, 249),
        s(320, 224), s(323, 267), s(339, 234), s(343, 277), s(352, 272), s(353, 249), s(364, 240), s(348, 256),
        s(326, 254), s(358, 254), s(340, 274), s(366, 275), s(363, 281), s(356, 269), s(358, 278), s(340, 251),
        s(342, 278), s(316, 274), s(352, 292), s(361, 292), s(359, 280), s(356, 293), s(346, 285), s(351, 287),
        s(343, 271), s(345, 260), s(383, 289), s(374, 285), s(381, 287), s(398, 275), s(368, 277), s(410, 252),
        s(317, 287), s(368, 267), s(364, 277), s(375, 281), s(343, 314), s(393, 265), s(379, 260), s(317, 272),
        s(308, 281), s(310, 265), s(328, 278), s(372, 285), s(323, 266), s(352, 267), s(317, 291), s(308, 265),
        s(299, 249), s(308, 257), s(317, 265), s(326, 287), s(326, 253), s(317, 265), s(308, 257), s(299, 249),
    ],
    [
        s(405, 283), s(370, 300), s(373, 295), s(360, 297), s(384, 291), s(354, 308), s(350, 298), s(330, 316),
        s(390, 292), s(381, 288), s(372, 293), s(375, 324), s(378, 298), s(376, 304), s(388, 292), s(358, 292),
        s(386, 299), s(398, 301), s(385, 304), s(380, 311), s(378, 324), s(377, 323), s(401, 316), s(353, 291),
        s(403, 285), s(372, 318), s(384, 333), s(397, 330), s(385, 337), s(382, 331), s(379, 316), s(395, 311),
        s(342, 311), s(381, 317), s(413, 317), s(384, 327), s(377, 341), s(386, 328), s(387, 326), s(329, 314),
        s(336, 319), s(373, 316), s(428, 312), s(416, 322), s(400, 322), s(402, 336), s(371, 312), s(398, 320),
        s(342, 294), s(347, 312), s(383, 328), s(352, 313), s(375, 325), s(324, 331), s(366, 328), s(290, 350),
        s(353, 323), s(358, 317), s(363, 299), s(368, 307), s(368, 304), s(363, 334), s(358, 328), s(353, 285),
    ],
    [
        s(513, 477), s(517, 482), s(519, 468), s(517, 483), s(521, 467), s(530, 467), s(512, 480), s(521, 475),
        s(496, 481), s(509, 478), s(474, 490), s(514, 472), s(524, 482), s(512, 469), s(513, 471), s(503, 470),
        s(511, 493), s(504, 492), s(492, 482), s(494, 486), s(480, 508), s(531, 475), s(509, 462), s(515, 478),
        s(486, 512), s(480, 512), s(512, 506), s(531, 497), s(539, 485), s(534, 480), s(464, 515), s(507, 488),
        s(508, 507), s(549, 502), s(527, 505), s(514, 499), s(516, 507), s(537, 488), s(504, 505), s(530, 502),
        s(529, 511), s(582, 496), s(515, 520), s(556, 498), s(563, 508), s(572, 503), s(545, 496), s(524, 500),
        s(520, 528), s(528, 519), s(546, 519), s(542, 525), s(559, 513), s(575, 503), s(532, 521), s(537, 516),
        s(577, 513), s(521, 519), s(586, 515), s(522, 514), s(545, 518), s(542, 518), s(562, 514), s(556, 517),
    ],
    [
        s(1041, 912), s(1049, 797), s(1034, 850), s(1062, 804), s(1049, 815), s(1055, 806), s(1043, 918), s(1019, 912),
        s(1028, 918), s(1055, 846), s(1074, 809), s(1066, 852), s(1079, 789), s(1111, 741), s(1087, 780), s(1036, 918),
        s(1043, 854), s(1070, 839), s(1058, 899), s(1067, 852), s(1072, 867), s(1065, 881), s(1071, 859), s(1037, 881),
        s(1063, 882), s(1028, 926), s(1056, 890), s(1034, 948), s(1064, 896), s(1021, 937), s(1041, 898), s(1037, 886),
        s(1029, 872), s(1052, 915), s(1080, 900), s(1051, 960), s(1027, 978), s(1024, 940), s(1022, 941), s(1084, 813),
        s(1051, 877), s(1033, 951), s(1053, 958), s(1049, 932), s(1056, 943), s(1039, 970), s(1076, 863), s(1067, 932),
        s(1038, 972), s(1013, 954), s(1045, 964), s(1008, 976), s(1010, 977), s(1083, 918), s(1042, 924), s(1080, 845),
        s(1097, 905), s(1021, 934), s(1023, 954), s(1025, 948), s(1025, 943), s(1023, 924), s(1021, 918), s(1028, 951),
    ],
    [
        s(-112, 31), s(-24, 19), s(-45, 22), s(-110, 34), s(-73, 29), s(-79, 44), s(-31, 32), s(-13, 9),
        s(-20, -19), s(-84, 31), s(-72, 33), s(-77, 31), s(-86, 40), s(-69, 38), s(-22, 28), s(-43, 16),
        s(-83, 1), s(-59, 16), s(-57, 20), s(-94, 45), s(-85, 42), s(-95, 45), s(-23, 21), s(-100, 18),
        s(-66, 0), s(16, 10), s(-87, 39), s(-67, 44), s(-139, 59), s(-33, 40), s(-2, 16), s(-66, -3),
        s(170, -101), s(34, 20), s(-62, 47), s(-135, 69), s(-124, 54), s(-55, 51), s(-2, 27), s(-10, -9),
        s(-90, 28), s(300, -185), s(-93, 80), s(-153, 106), s(-295, 139), s(-143, 92), s(-68, 65), s(-90, 25),
        s(-102, 16), s(-102, 60), s(-164, 93), s(-100, 107), s(-307, 146), s(369, -146), s(-102, 80), s(-102, 1),
        s(-114, -44), s(-114, -32), s(-114, -19), s(-114, -9), s(-114, -4), s(-114, 37), s(-114, -32), s(-114, -44),
    ],
];

/// Mobility per kind (knight, bishop, rook, queen) and number of safe squares attacked.
#[rustfmt::skip]
const MOBILITY: [Score; 66] = [
    s(2, -16), s(20, -23), s(32, -10), s(39, 12), s(47, 26), s(55, 34), s(61, 33), s(74, 32),
    s(82, 15),
    s(9, -52), s(25, -51), s(34, -28), s(39, -9), s(51, -8), s(54, -1), s(57, 9), s(62, 8),
    s(71, 7), s(66, 11), s(57, 8), s(58, 9), s(124, -12), s(16, 14),
    s(-19, -28), s(22, -18), s(34, 19), s(38, 17), s(46, 30), s(45, 42), s(47, 47), s(52, 46),
    s(56, 46), s(64, 48), s(61, 53), s(70, 52), s(77, 54), s(74, 52), s(148, -2),
    s(-13, -26), s(190, -24), s(188, -22), s(195, -20), s(200, -76), s(201, -23), s(206, 2), s(202, 18),
    s(204, 31), s(206, 43), s(207, 62), s(210, 48), s(201, 66), s(207, 56), s(208, 61), s(211, 52),
    s(208, 53), s(210, 31), s(217, 27), s(213, 12), s(219, -1), s(327, -123), s(9, 103), s(10, 15),
    s(11, 22), s(12, 24), s(13, 26), s(14, 28),
];
/// Where each kind's row starts in `MOBILITY` (0..=8, 0..=13, 0..=14, 0..=27 squares).
const MOBILITY_OFFSET: [usize; 4] = [0, 9, 23, 38];
/// Bishop pair bonus.
const BISHOP_PAIR: Score = s(39, 64);
/// Rook on a file without pawns.
const ROOK_OPEN: Score = s(46, -6);
/// Rook on a file without own pawns.
const ROOK_SEMI_OPEN: Score = s(18, 14);
/// A minor or major piece attacked by a pawn.
const THREAT_BY_PAWN: Score = s(56, 26);
/// A rook or queen attacked by a minor piece.
const THREAT_BY_MINOR: Score = s(57, -13);
/// A queen attacked by a rook.
const THREAT_BY_ROOK: Score = s(52, 4);
/// An enemy piece attacked and not defended at all.
const HANGING: Score = s(19, 33);
/// A knight on an outpost: relative rank 4 to 6, defended by an own pawn, out of reach of enemy pawns.
const OUTPOST_KNIGHT: Score = s(17, 2);
/// A bishop on an outpost.
const OUTPOST_BISHOP: Score = s(27, 2);
/// A knight or bishop directly behind a pawn.
const MINOR_BEHIND_PAWN: Score = s(4, 16);
/// Per own pawn on the squares of a bishop's colour, per bishop.
const BISHOP_PAWNS: Score = s(-2, -5);
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
            mobility += MOBILITY[MOBILITY_OFFSET[kind - KNIGHT] + popcount(att & area) as usize];
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

    psqt + mobility + rooks + minors + pair
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
