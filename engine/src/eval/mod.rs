//! The evaluation: the embedded network (`network`, trained by `tools/texel` on Coherent's own
//! games), compiled twice: once as `coherent_evaluate_popcnt` with hardware POPCNT enabled, once
//! generically.
//!
//! # The stable fast-path symbol
//! `coherent_evaluate_popcnt` is `#[unsafe(no_mangle)]` and `#[inline(never)]`, so the build-shape
//! gate can find it in the release binary and disassemble it and its callees: it must contain POPCNT
//! (the piece count that chooses the network's output bucket) and no software popcount (the
//! 0x5555…/0x3333…/0x0f0f…/0x0101… masks). `evaluate` picks the path once per process
//! (`has_hardware_popcnt`).

pub mod network;
pub mod popcnt;

use std::sync::LazyLock;

use crate::chess::position::Position;
use crate::chess::types::Color;
use network::{Accumulators, Network};

/// The network file built into the engine (docs/nnue.md says how it was trained).
const EMBEDDED: &[u8] = include_bytes!("coherent.nnue");

static NETWORK: LazyLock<Network> = LazyLock::new(|| {
    // The file is part of the source; a test reads it, so this cannot fail in a tested build.
    Network::from_bytes(EMBEDDED).unwrap_or_else(|e| panic!("the embedded network: {e}"))
});

/// The engine's network, read from the embedded file on first use.
#[must_use]
pub fn embedded_network() -> &'static Network {
    &NETWORK
}

/// The largest evaluation in cp: clear of the mate scores, within the table's `i16`.
pub const EVALUATION_LIMIT: i32 = 20_000;

#[inline(always)]
fn evaluate_inline(position: &Position, white: &[i16], black: &[i16]) -> i32 {
    let network = embedded_network();
    let pieces = popcnt::popcount(position.occupied()) as usize;
    let bucket = network::bucket(pieces, network.buckets);
    let (own, other) = if position.side == Color::White {
        (white, black)
    } else {
        (black, white)
    };
    network
        .output(own, other, bucket)
        .clamp(-EVALUATION_LIMIT, EVALUATION_LIMIT)
}

/// The fast evaluation entry, compiled with hardware POPCNT. Stable symbol for the build-shape gate.
///
/// # Safety
/// Only sound on a CPU with POPCNT; `evaluate_accumulated` checks that once before calling.
#[unsafe(no_mangle)]
#[inline(never)]
#[target_feature(enable = "popcnt")]
pub fn coherent_evaluate_popcnt(position: &Position, white: &[i16], black: &[i16]) -> i32 {
    evaluate_inline(position, white, black)
}

/// The portable evaluation entry (software popcount) for CPUs without POPCNT.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn coherent_evaluate_generic(position: &Position, white: &[i16], black: &[i16]) -> i32 {
    evaluate_inline(position, white, black)
}

/// Static evaluation in cp from the side to move's view, from ply `ply` of `accumulators`, which
/// hold `position`'s views (the search's path).
#[must_use]
#[inline]
pub fn evaluate_accumulated(position: &Position, accumulators: &Accumulators, ply: usize) -> i32 {
    let (white, black) = accumulators.views(ply);
    if popcnt::has_hardware_popcnt() {
        // SAFETY: the CPU was checked for POPCNT, the only feature this entry is compiled with.
        unsafe { coherent_evaluate_popcnt(position, white, black) }
    } else {
        coherent_evaluate_generic(position, white, black)
    }
}

/// Static evaluation in cp from the side to move's view, its accumulators computed from scratch.
#[must_use]
pub fn evaluate(position: &Position) -> i32 {
    let mut accumulators = Accumulators::new(embedded_network(), 1);
    accumulators.refresh(embedded_network(), 0, position);
    evaluate_accumulated(position, &accumulators, 0)
}

/// The evaluation path this CPU takes, for `buildinfo`.
#[must_use]
pub fn path_name() -> &'static str {
    if popcnt::has_hardware_popcnt() {
        "coherent_evaluate_popcnt (hardware POPCNT)"
    } else {
        "coherent_evaluate_generic (software popcount)"
    }
}

/// What the `eval` command prints: the network, the position's bucket and its evaluation.
#[must_use]
pub fn report(position: &Position) -> String {
    let network = embedded_network();
    let pieces = position.occupied().count_ones() as usize;
    format!(
        "network: {} neurons per view, {} output buckets\npieces {pieces}, bucket {}\nfinal evaluation (side to move): {} cp\n",
        network.hidden,
        network.buckets,
        network::bucket(pieces, network.buckets),
        evaluate(position)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::POSITIONS;
    use crate::chess::movegen::legal_moves;

    /// The same position with colours swapped and the board mirrored top to bottom.
    fn mirror(fen: &str) -> String {
        let f: Vec<&str> = fen.split_whitespace().collect();
        let swap = |s: &str| {
            s.chars()
                .map(|c| {
                    if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect::<String>()
        };
        let board = f[0]
            .split('/')
            .rev()
            .map(swap)
            .collect::<Vec<_>>()
            .join("/");
        let side = if f[1] == "w" { "b" } else { "w" };
        let mut castling: Vec<char> = swap(f[2]).chars().collect();
        castling.sort_by_key(|c| (c.is_ascii_lowercase(), *c == 'q' || *c == 'Q'));
        let castling: String = castling.into_iter().collect();
        let ep = if f[3] == "-" {
            "-".to_string()
        } else {
            let b = f[3].as_bytes();
            format!("{}{}", b[0] as char, (b'1' + b'8' - b[1]) as char)
        };
        format!("{board} {side} {castling} {ep} 0 1")
    }

    #[test]
    fn symmetric_and_both_paths_agree() {
        for fen in POSITIONS {
            let pos = Position::from_fen(fen).unwrap();
            let mirrored = Position::from_fen(&mirror(fen)).unwrap();
            assert_eq!(evaluate(&pos), evaluate(&mirrored), "{fen}");
            let mut accumulators = Accumulators::new(embedded_network(), 1);
            accumulators.refresh(embedded_network(), 0, &pos);
            let (white, black) = accumulators.views(0);
            if popcnt::has_hardware_popcnt() {
                // SAFETY: the CPU has POPCNT.
                let fast = unsafe { coherent_evaluate_popcnt(&pos, white, black) };
                assert_eq!(fast, coherent_evaluate_generic(&pos, white, black), "{fen}");
            }
            assert_eq!(
                evaluate(&pos),
                embedded_network()
                    .evaluate(&pos)
                    .clamp(-EVALUATION_LIMIT, EVALUATION_LIMIT),
                "{fen}: the accumulators and the feature lists give one evaluation"
            );
        }
    }

    /// Every move of every bench position, and every reply, updated move by move, gives the
    /// accumulators a refresh gives: castling, en passant, promotions and captures included.
    /// Each move's own accumulators are computed only after its first reply's (as when a node
    /// returns without evaluating), so the late path is checked too.
    #[test]
    fn updated_accumulators_equal_refreshed_ones() {
        let network = embedded_network();
        let mut updated = Accumulators::new(network, 3);
        let mut refreshed = Accumulators::new(network, 3);
        for fen in POSITIONS {
            let root = Position::from_fen(fen).unwrap();
            updated.refresh(network, 0, &root);
            for m in legal_moves(&root).as_slice() {
                let child = root.make_move(*m);
                updated.update(network, 0, &root, &child);
                for reply in legal_moves(&child).as_slice() {
                    let grandchild = child.make_move(*reply);
                    updated.update(network, 1, &child, &grandchild);
                    updated.compute(network, 2);
                    refreshed.refresh(network, 2, &grandchild);
                    assert_eq!(
                        updated.views(2),
                        refreshed.views(2),
                        "{fen} {m:?} {reply:?}"
                    );
                }
                updated.compute(network, 1);
                refreshed.refresh(network, 1, &child);
                assert_eq!(updated.views(1), refreshed.views(1), "{fen} {m:?}");
            }
            let null = root.make_null();
            updated.update(network, 0, &root, &null);
            updated.compute(network, 1);
            assert_eq!(
                updated.views(1),
                updated.views(0),
                "{fen}: a null move moves nothing"
            );
        }
    }

    /// Two positions no move connects (more than four inputs change) still get the refreshed
    /// accumulators: the update falls back to a refresh instead of dropping inputs.
    #[test]
    fn an_update_across_many_changes_equals_a_refresh() {
        let network = embedded_network();
        let start = Position::from_fen(POSITIONS[0]).unwrap();
        let ending = Position::from_fen("8/8/4k3/8/8/2BNK3/8/8 w - - 0 1").unwrap();
        let mut updated = Accumulators::new(network, 2);
        let mut refreshed = Accumulators::new(network, 2);
        updated.refresh(network, 0, &start);
        updated.update(network, 0, &start, &ending);
        updated.compute(network, 1);
        refreshed.refresh(network, 1, &ending);
        assert_eq!(updated.views(1), refreshed.views(1));
    }
}
