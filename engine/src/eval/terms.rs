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
        s(103, 121), s(113, 104), s(103, 119), s(89, 123), s(109, 107), s(111, 134), s(122, 108), s(106, 112),
        s(117, 108), s(115, 108), s(112, 118), s(103, 115), s(117, 121), s(112, 133), s(127, 111), s(107, 118),
        s(112, 116), s(114, 103), s(114, 105), s(123, 107), s(121, 102), s(105, 120), s(121, 116), s(104, 113),
        s(126, 112), s(121, 117), s(123, 103), s(125, 111), s(124, 102), s(132, 114), s(130, 123), s(120, 128),
        s(149, 120), s(144, 133), s(204, 131), s(132, 141), s(111, 120), s(148, 142), s(148, 148), s(132, 142),
        s(266, 115), s(127, 160), s(127, 134), s(127, 143), s(127, 157), s(127, 185), s(127, 160), s(65, 134),
        s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0), s(0, 0),
    ],
    [
        s(299, 249), s(309, 270), s(317, 279), s(303, 265), s(312, 270), s(322, 276), s(308, 282), s(299, 249),
        s(308, 257), s(317, 265), s(316, 241), s(323, 286), s(330, 266), s(321, 284), s(303, 265), s(308, 257),
        s(309, 258), s(339, 271), s(326, 282), s(329, 297), s(344, 290), s(327, 287), s(328, 291), s(314, 247),
        s(320, 296), s(296, 277), s(323, 307), s(328, 299), s(337, 296), s(320, 311), s(312, 294), s(326, 272),
        s(332, 251), s(323, 268), s(364, 300), s(353, 298), s(357, 308), s(369, 285), s(352, 289), s(371, 258),
        s(317, 265), s(326, 275), s(342, 291), s(344, 283), s(341, 308), s(378, 286), s(343, 283), s(317, 265),
        s(308, 257), s(317, 265), s(326, 277), s(335, 281), s(335, 281), s(326, 273), s(317, 265), s(308, 257),
        s(299, 249), s(308, 257), s(317, 265), s(326, 273), s(326, 273), s(317, 265), s(308, 257), s(299, 249),
    ],
    [
        s(345, 285), s(350, 289), s(382, 270), s(358, 285), s(401, 270), s(372, 294), s(350, 289), s(345, 285),
        s(358, 289), s(382, 275), s(388, 286), s(385, 304), s(387, 278), s(394, 274), s(395, 283), s(358, 289),
        s(383, 296), s(370, 288), s(401, 273), s(392, 294), s(393, 294), s(393, 306), s(408, 287), s(354, 291),
        s(421, 263), s(371, 306), s(390, 306), s(403, 320), s(393, 324), s(375, 317), s(398, 286), s(410, 275),
        s(359, 300), s(391, 299), s(400, 307), s(385, 316), s(376, 316), s(395, 307), s(392, 299), s(355, 291),
        s(379, 303), s(370, 311), s(462, 294), s(402, 316), s(411, 301), s(373, 303), s(425, 279), s(401, 317),
        s(358, 289), s(363, 290), s(368, 317), s(373, 300), s(373, 312), s(368, 303), s(363, 293), s(358, 289),
        s(353, 285), s(358, 289), s(363, 293), s(368, 297), s(368, 297), s(363, 293), s(358, 289), s(353, 285),
    ],
    [
        s(457, 504), s(460, 503), s(472, 488), s(466, 511), s(465, 497), s(478, 502), s(473, 501), s(476, 494),
        s(436, 512), s(462, 518), s(430, 516), s(487, 491), s(463, 514), s(453, 513), s(479, 494), s(455, 505),
        s(437, 536), s(458, 515), s(435, 514), s(438, 519), s(429, 551), s(471, 529), s(464, 485), s(462, 518),
        s(433, 539), s(420, 532), s(464, 523), s(501, 515), s(498, 509), s(473, 514), s(461, 528), s(477, 517),
        s(433, 545), s(469, 543), s(458, 540), s(463, 534), s(459, 538), s(490, 514), s(434, 534), s(469, 534),
        s(461, 537), s(530, 511), s(441, 553), s(478, 531), s(479, 535), s(491, 531), s(506, 509), s(496, 513),
        s(484, 542), s(475, 540), s(467, 555), s(547, 532), s(540, 536), s(510, 531), s(433, 556), s(492, 537),
        s(477, 545), s(450, 547), s(477, 559), s(477, 536), s(477, 545), s(477, 547), s(477, 550), s(517, 540),
    ],
    [
        s(1019, 912), s(1007, 918), s(1007, 924), s(1028, 852), s(1003, 930), s(1000, 924), s(1021, 918), s(1019, 912),
        s(1021, 918), s(999, 924), s(1036, 840), s(1030, 894), s(1046, 822), s(1027, 930), s(1030, 924), s(1021, 918),
        s(1014, 924), s(1032, 898), s(1016, 911), s(1026, 893), s(1031, 932), s(1034, 901), s(1034, 930), s(1021, 924),
        s(1029, 930), s(982, 936), s(1014, 942), s(1004, 948), s(1029, 920), s(996, 942), s(1013, 936), s(1012, 930),
        s(1010, 930), s(1016, 936), s(1029, 942), s(1038, 948), s(1015, 948), s(1018, 942), s(999, 936), s(1050, 930),
        s(1023, 924), s(1025, 930), s(1027, 936), s(1029, 942), s(1029, 942), s(1027, 936), s(1025, 930), s(1023, 924),
        s(1021, 918), s(1023, 924), s(1025, 930), s(1027, 936), s(1027, 936), s(1025, 930), s(1023, 924), s(1021, 918),
        s(1019, 912), s(1021, 918), s(1023, 924), s(1025, 930), s(1025, 930), s(1023, 924), s(1021, 918), s(1019, 912),
    ],
    [
        s(-112, -49), s(-49, -45), s(-57, -50), s(-95, -47), s(-81, -41), s(-82, -24), s(-40, -43), s(-29, -67),
        s(-26, -61), s(-86, -37), s(-82, -35), s(-78, -45), s(-81, -36), s(-75, -34), s(-37, -41), s(-24, -48),
        s(-54, -86), s(-95, -47), s(-104, -40), s(-128, -21), s(-109, -22), s(-109, -29), s(-28, -50), s(-82, -46),
        s(-66, -60), s(-66, -44), s(-121, -34), s(-116, -25), s(-172, -16), s(-96, -22), s(-19, -60), s(-66, -58),
        s(-78, -8), s(-78, -41), s(-78, -19), s(-178, -5), s(-192, -12), s(-78, -19), s(-78, -36), s(-78, -44),
        s(-90, -20), s(-90, 28), s(-90, -11), s(-90, 1), s(-90, -23), s(-90, 11), s(-90, 1), s(-90, -20),
        s(-102, -32), s(-102, -20), s(-102, -8), s(-102, 4), s(-102, 4), s(-102, -8), s(-102, -20), s(-102, -32),
        s(-114, -44), s(-114, -32), s(-114, -20), s(-114, -8), s(-114, -8), s(-114, -20), s(-114, -32), s(-114, -44),
    ],
];

/// Mobility per kind (knight, bishop, rook, queen) and number of safe squares attacked.
#[rustfmt::skip]
const MOBILITY: [Score; 66] = [
    s(-22, -16), s(-11, -4), s(-3, 8), s(1, 36), s(10, 46), s(15, 53), s(20, 54), s(33, 54),
    s(34, 37),
    s(-78, 35), s(-57, 2), s(-56, 22), s(-52, 40), s(-39, 39), s(-36, 48), s(-29, 57), s(-25, 56),
    s(-18, 60), s(-25, 62), s(-47, 73), s(-58, 83), s(30, 62), s(-148, 106),
    s(-43, -28), s(-4, -10), s(-1, 38), s(6, 33), s(11, 43), s(8, 58), s(10, 60), s(15, 66),
    s(24, 62), s(29, 67), s(25, 73), s(28, 76), s(35, 80), s(34, 71), s(0, 80),
    s(-13, -26), s(-12, -24), s(-1, -22), s(9, -20), s(12, -18), s(12, -16), s(16, 55), s(12, 79),
    s(17, 77), s(17, 96), s(19, 112), s(24, 90), s(17, 108), s(18, 109), s(17, 128), s(15, 133),
    s(26, 109), s(12, 122), s(45, 97), s(19, 97), s(7, 113), s(8, 93), s(9, 18), s(10, 20),
    s(11, 22), s(12, 24), s(13, 26), s(14, 28),
];
/// Where each kind's row starts in `MOBILITY` (0..=8, 0..=13, 0..=14, 0..=27 squares).
const MOBILITY_OFFSET: [usize; 4] = [0, 9, 23, 38];
/// Bishop pair bonus.
const BISHOP_PAIR: Score = s(42, 59);
/// Rook on a file without pawns.
const ROOK_OPEN: Score = s(37, -3);
/// Rook on a file without own pawns.
const ROOK_SEMI_OPEN: Score = s(15, 6);
/// A minor or major piece attacked by a pawn.
const THREAT_BY_PAWN: Score = s(57, 37);
/// A rook or queen attacked by a minor piece.
const THREAT_BY_MINOR: Score = s(50, 2);
/// A queen attacked by a rook.
const THREAT_BY_ROOK: Score = s(47, 20);
/// An enemy piece attacked and not defended at all.
const HANGING: Score = s(19, 31);
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
