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

// texel: begin. Fitted to Coherent's self-play games by tools/texel (`texel tune`,
// docs/texel.md); regenerate them rather than edit by hand.
/// Material plus piece-square value per kind and (white-relative) square, a1 first.
#[rustfmt::skip]
pub const PSQT: [[Score; 64]; 6] = [
    [
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
        s(98, 113), s(116, 115), s(103, 114), s(100, 129), s(116, 110), s(118, 127), s(125, 100), s(106, 103),
        s(110, 108), s(111, 112), s(106, 118), s(107, 120), s(121, 109), s(118, 122), s(123, 107), s(105, 110),
        s(106, 114), s(116, 108), s(114, 109), s(126, 107), s(125, 100), s(111, 118), s(117, 111), s(107, 107),
        s(126, 108), s(112, 122), s(115, 100), s(121, 103), s(121, 98), s(132, 111), s(123, 126), s(112, 123),
        s(146, 116), s(138, 127), s(163, 138), s(134, 123), s(88, 118), s(156, 121), s(125, 139), s(136, 125),
        s(322, 111), s(164, 154), s(95, 184), s(213, 109), s(127, 175), s(201, 179), s(151, 154), s(122, 108),
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
    ],
    [
        s(299, 249), s(320, 249), s(319, 259), s(303, 256), s(313, 269), s(323, 266), s(324, 272), s(299, 249),
        s(305, 257), s(302, 258), s(324, 234), s(331, 281), s(342, 272), s(339, 265), s(342, 243), s(352, 270),
        s(311, 262), s(346, 259), s(329, 281), s(351, 283), s(360, 286), s(341, 277), s(336, 291), s(327, 257),
        s(330, 290), s(299, 273), s(341, 303), s(346, 298), s(351, 289), s(342, 305), s(333, 294), s(344, 282),
        s(339, 273), s(333, 273), s(374, 298), s(371, 292), s(370, 299), s(396, 284), s(363, 293), s(414, 246),
        s(317, 267), s(369, 258), s(369, 284), s(359, 289), s(337, 315), s(409, 266), s(356, 277), s(317, 265),
        s(308, 257), s(317, 266), s(291, 293), s(335, 288), s(335, 255), s(326, 271), s(317, 265), s(308, 257),
        s(299, 249), s(308, 257), s(317, 265), s(326, 273), s(326, 273), s(317, 265), s(308, 257), s(299, 249),
    ],
    [
        s(345, 318), s(350, 328), s(384, 274), s(359, 290), s(401, 271), s(372, 295), s(350, 263), s(351, 315),
        s(358, 314), s(390, 275), s(383, 288), s(385, 307), s(392, 281), s(398, 279), s(403, 280), s(358, 289),
        s(394, 290), s(392, 297), s(402, 278), s(396, 295), s(394, 302), s(384, 311), s(411, 292), s(363, 279),
        s(395, 275), s(392, 306), s(395, 316), s(414, 313), s(405, 321), s(383, 318), s(386, 299), s(403, 279),
        s(364, 286), s(400, 299), s(420, 295), s(391, 315), s(389, 313), s(416, 306), s(397, 310), s(343, 310),
        s(356, 311), s(400, 306), s(441, 296), s(429, 303), s(419, 307), s(433, 302), s(399, 301), s(413, 312),
        s(358, 272), s(376, 298), s(391, 311), s(373, 299), s(387, 304), s(310, 320), s(363, 317), s(358, 289),
        s(353, 285), s(358, 284), s(363, 275), s(368, 284), s(368, 310), s(363, 305), s(358, 289), s(353, 285),
    ],
    [
        s(492, 487), s(496, 493), s(502, 477), s(498, 495), s(504, 476), s(511, 481), s(499, 485), s(502, 485),
        s(473, 489), s(492, 486), s(452, 500), s(501, 489), s(507, 490), s(495, 476), s(508, 481), s(487, 486),
        s(478, 510), s(488, 501), s(471, 494), s(460, 501), s(459, 527), s(500, 497), s(481, 478), s(494, 492),
        s(461, 525), s(455, 522), s(493, 515), s(524, 499), s(532, 492), s(503, 497), s(478, 507), s(496, 493),
        s(470, 524), s(494, 526), s(506, 516), s(482, 516), s(494, 520), s(515, 496), s(466, 514), s(504, 510),
        s(506, 521), s(571, 496), s(479, 532), s(533, 510), s(530, 519), s(574, 501), s(541, 499), s(523, 500),
        s(524, 525), s(513, 523), s(508, 535), s(507, 539), s(529, 531), s(539, 518), s(503, 532), s(509, 527),
        s(549, 517), s(481, 528), s(548, 527), s(503, 520), s(520, 528), s(534, 528), s(530, 517), s(553, 515),
    ],
    [
        s(1017, 912), s(1011, 918), s(1014, 883), s(1038, 826), s(1024, 845), s(1009, 924), s(1021, 918), s(1019, 912),
        s(1005, 918), s(1006, 924), s(1051, 813), s(1041, 880), s(1058, 791), s(1075, 777), s(1058, 820), s(1027, 918),
        s(1010, 924), s(1042, 854), s(1026, 932), s(1040, 860), s(1041, 888), s(1037, 914), s(1041, 896), s(1018, 924),
        s(1039, 917), s(996, 936), s(1028, 899), s(1013, 963), s(1038, 900), s(996, 943), s(1015, 922), s(1011, 930),
        s(1020, 930), s(1021, 926), s(1069, 885), s(1035, 964), s(1007, 974), s(998, 977), s(990, 972), s(1060, 827),
        s(1022, 924), s(1018, 930), s(1049, 936), s(1038, 935), s(1045, 925), s(1027, 936), s(1029, 930), s(1039, 924),
        s(1043, 918), s(1000, 924), s(1042, 930), s(1027, 936), s(1027, 936), s(1069, 930), s(1023, 924), s(1040, 918),
        s(1066, 912), s(1021, 918), s(1023, 924), s(1025, 930), s(1025, 930), s(1023, 924), s(1021, 918), s(1019, 912),
    ],
    [
        s(-125, 22), s(-41, 6), s(-64, 8), s(-119, 13), s(-87, 11), s(-89, 26), s(-45, 16), s(-30, -9),
        s(-25, -27), s(-108, 23), s(-91, 20), s(-94, 14), s(-95, 22), s(-82, 22), s(-40, 12), s(-55, 5),
        s(-60, -18), s(-89, 7), s(-105, 15), s(-124, 31), s(-104, 25), s(-105, 25), s(-11, -3), s(-110, 2),
        s(-66, -16), s(15, -10), s(-99, 25), s(-98, 30), s(-169, 41), s(-63, 22), s(-15, -3), s(-77, -24),
        s(-78, -52), s(-78, 20), s(-71, 28), s(-139, 48), s(-162, 40), s(-88, 33), s(-51, 8), s(-78, 8),
        s(-90, 39), s(432, -227), s(-90, 58), s(-90, 73), s(-90, 64), s(-81, 64), s(-90, 57), s(-90, 10),
        s(-102, -32), s(-102, 109), s(-102, 92), s(-102, 112), s(-102, 95), s(-102, 136), s(-102, 80), s(-102, -32),
        s(-114, -44), s(-114, -32), s(-114, -20), s(-114, -15), s(-114, 12), s(-114, -20), s(-114, -32), s(-114, -44),
    ],
];

/// Mobility per kind (knight, bishop, rook, queen) and number of safe squares attacked.
#[rustfmt::skip]
const MOBILITY: [Score; 66] = [
    s(-11, -16), s(4, -16), s(17, -2), s(24, 19), s(33, 33), s(41, 40), s(49, 38), s(61, 37),
    s(69, 17),
    s(-42, -34), s(-24, -37), s(-15, -19), s(-12, 5), s(2, 8), s(4, 19), s(6, 32), s(12, 30),
    s(19, 35), s(12, 36), s(-4, 43), s(-16, 52), s(30, 41), s(-65, 57),
    s(-36, -28), s(7, -11), s(18, 22), s(21, 22), s(27, 34), s(25, 51), s(26, 54), s(32, 54),
    s(38, 54), s(41, 59), s(39, 64), s(48, 64), s(52, 69), s(57, 60), s(81, 33),
    s(-13, -26), s(-12, -24), s(25, -22), s(33, -20), s(38, -18), s(35, 52), s(45, 46), s(42, 76),
    s(46, 90), s(48, 98), s(50, 121), s(52, 104), s(41, 126), s(49, 115), s(54, 123), s(50, 119),
    s(61, 103), s(57, 91), s(73, 79), s(58, 74), s(65, 61), s(192, -69), s(9, 77), s(10, 3),
    s(11, 22), s(12, 24), s(13, 26), s(14, 28),
];
/// Where each kind's row starts in `MOBILITY` (0..=8, 0..=13, 0..=14, 0..=27 squares).
const MOBILITY_OFFSET: [usize; 4] = [0, 9, 23, 38];
/// Bishop pair bonus.
const BISHOP_PAIR: Score = s(42, 69);
/// Rook on a file without pawns.
const ROOK_OPEN: Score = s(46, -8);
/// Rook on a file without own pawns.
const ROOK_SEMI_OPEN: Score = s(20, 6);
/// A minor or major piece attacked by a pawn.
const THREAT_BY_PAWN: Score = s(56, 28);
/// A rook or queen attacked by a minor piece.
const THREAT_BY_MINOR: Score = s(53, -6);
/// A queen attacked by a rook.
const THREAT_BY_ROOK: Score = s(51, 6);
/// An enemy piece attacked and not defended at all.
const HANGING: Score = s(21, 33);
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
