//! Static exchange evaluation: does a move win at least `threshold` after all recaptures on its square?

use crate::chess::attacks::{bishop_attacks, rook_attacks};
use crate::chess::bitboard::{bb, lsb};
use crate::chess::position::Position;
use crate::chess::types::{BISHOP, CASTLE, EN_PASSANT, KNIGHT, Move, PAWN, QUEEN, ROOK};

/// Exchange values per kind (king effectively infinite).
pub const SEE_VALUE: [i32; 6] = [100, 300, 300, 500, 900, 20000];

/// Value gained by the capture itself (captured piece plus promotion gain).
#[must_use]
#[inline]
pub fn capture_value(pos: &Position, m: Move) -> i32 {
    let mut v = pos.captured_kind(m).map_or(0, |k| SEE_VALUE[k]);
    if let Some(p) = m.promotion() {
        v += SEE_VALUE[p] - SEE_VALUE[PAWN];
    }
    v
}

/// True if the exchange started by `m` gains at least `threshold` centipawns.
#[must_use]
pub fn see_ge(pos: &Position, m: Move, threshold: i32) -> bool {
    if m.flags() == CASTLE {
        return threshold <= 0;
    }
    let (from, to) = (m.from(), m.to());
    let mut swap = capture_value(pos, m) - threshold;
    if swap < 0 {
        return false;
    }
    let mover = m
        .promotion()
        .unwrap_or_else(|| pos.kind_at(from).unwrap_or(PAWN));
    swap = SEE_VALUE[mover] - swap;
    if swap <= 0 {
        return true;
    }
    let mut occ = pos.occupied() ^ bb(from) ^ bb(to);
    if m.flags() == EN_PASSANT {
        occ ^= bb(to ^ 8);
    }
    let mut stm = pos.side;
    let mut attackers = pos.attackers_to(to, occ);
    let diag = pos.diagonal_sliders();
    let orth = pos.orthogonal_sliders();
    let mut res = true;
    loop {
        stm = stm.flip();
        attackers &= occ;
        let mine = attackers & pos.us(stm);
        if mine == 0 {
            break;
        }
        res = !res;
        let mut next = None;
        for kind in [PAWN, KNIGHT, BISHOP, ROOK, QUEEN] {
            let b = mine & pos.kinds[kind];
            if b != 0 {
                next = Some((kind, b));
                break;
            }
        }
        let Some((kind, b)) = next else {
            // Only the king is left: it may capture only if the other side has no attacker left.
            return if attackers & !pos.us(stm) != 0 {
                !res
            } else {
                res
            };
        };
        swap = SEE_VALUE[kind] - swap;
        if swap < res as i32 {
            break;
        }
        occ ^= bb(lsb(b));
        if kind == PAWN || kind == BISHOP || kind == QUEEN {
            attackers |= bishop_attacks(to, occ) & diag;
        }
        if kind == ROOK || kind == QUEEN {
            attackers |= rook_attacks(to, occ) & orth;
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::movegen::parse_uci_move;

    #[test]
    fn exchanges() {
        let pos = Position::from_fen("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1").unwrap();
        let m = parse_uci_move(&pos, "e1e5").unwrap();
        assert!(see_ge(&pos, m, 100) && !see_ge(&pos, m, 101));
        let pos =
            Position::from_fen("1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1").unwrap();
        let m = parse_uci_move(&pos, "d3e5").unwrap();
        assert!(
            !see_ge(&pos, m, 0),
            "knight takes defended pawn loses material"
        );
    }
}
