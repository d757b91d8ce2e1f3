//! Perft: count leaf nodes of the legal move tree (bulk-counted at depth 1), with divide.

use super::movegen::{GenMode, MoveList, generate};
use super::position::Position;
use super::types::Move;

/// Number of leaf nodes at `depth`.
#[must_use]
pub fn perft(pos: &Position, depth: u32) -> u64 {
    let mut list = MoveList::default();
    generate(pos, &mut list, GenMode::All);
    if depth <= 1 {
        return if depth == 0 { 1 } else { list.len() as u64 };
    }
    let mut n = 0;
    for &m in list.as_slice() {
        n += perft(&pos.make_move(m), depth - 1);
    }
    n
}

/// Leaf counts per root move (the "divide" output), in generation order.
#[must_use]
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    let mut list = MoveList::default();
    generate(pos, &mut list, GenMode::All);
    list.as_slice()
        .iter()
        .map(|&m| {
            (
                m,
                if depth <= 1 {
                    1
                } else {
                    perft(&pos.make_move(m), depth - 1)
                },
            )
        })
        .collect()
}
