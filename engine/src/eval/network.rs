//! The evaluation network: its file (docs/nnue.md), its integer evaluation, and the accumulators
//! the search keeps up to date move by move. One definition of the inputs, the buckets, the format
//! and the arithmetic: the trainer (`tools/texel`) writes its files and checks them through this
//! module, and the engine embeds one.
//!
//! Each side's view of the board is 768 inputs (own and enemy pieces, six kinds, 64 squares;
//! Black's view flipped vertically). One accumulator of `hidden` neurons per view, shared
//! weights, clipped ReLU; both halves (side to move first) into the output of the bucket the
//! piece count chooses; the output times [`SCALE`] / ([`QA`]·[`QB`]) is the evaluation in cp.

use crate::chess::bitboard::Squares;
use crate::chess::position::Position;
use crate::chess::types::{Color, KING, NO_PIECE, PAWN, Square};

/// Inputs of one view: two sides × six kinds × 64 squares.
pub const INPUTS: usize = 768;
/// The evaluation in cp is the trained output times this.
pub const SCALE: i32 = 400;
/// Quantization of the accumulator weights and of the clipped ReLU's 1.0.
pub const QA: i32 = 255;
/// Quantization of the output weights.
pub const QB: i32 = 256;
/// The first bytes of a network file.
pub const MAGIC: &[u8; 8] = b"COHNNUE1";

/// The input of a piece of `piece` colour and `kind` on `square`, seen from `view`'s side.
#[must_use]
pub fn feature(view: Color, piece: Color, kind: usize, square: Square) -> u16 {
    let (side, square) = if view == Color::White {
        (piece.idx(), square)
    } else {
        (piece.flip().idx(), square ^ 56)
    };
    (side * 384 + kind * 64 + square) as u16
}

/// The same piece's input from Black's view, given its input from White's.
#[must_use]
pub fn black_view(white: u16) -> u16 {
    let w = usize::from(white);
    let (side, kind, square) = (w / 384, w % 384 / 64, w % 64);
    ((1 - side) * 384 + kind * 64 + (square ^ 56)) as u16
}

/// The active inputs of a position from White's view.
#[must_use]
pub fn white_features(position: &Position) -> Vec<u16> {
    let mut out = Vec::with_capacity(32);
    for color in [Color::White, Color::Black] {
        for kind in PAWN..=KING {
            for square in Squares(position.pieces(color, kind)) {
                out.push(feature(Color::White, color, kind, square));
            }
        }
    }
    out
}

/// The inputs of the side to move's view and of the other side's.
#[must_use]
pub fn views(position: &Position) -> (Vec<u16>, Vec<u16>) {
    let white = white_features(position);
    let black: Vec<u16> = white.iter().map(|&f| black_view(f)).collect();
    if position.side == Color::White {
        (white, black)
    } else {
        (black, white)
    }
}

/// The output bucket of a position with `pieces` pieces (2 to 32) among `buckets` buckets: the
/// 31 piece counts cut into `buckets` near-equal ranges, each used, the fullest board in the last.
#[must_use]
pub fn bucket(pieces: usize, buckets: usize) -> usize {
    (pieces.saturating_sub(2) * buckets / 31).min(buckets - 1)
}

/// The most neurons per view a file may have: each half of the output then sums within `i32`.
pub const MAX_HIDDEN: usize = 256;

/// The most output buckets a file may have: every bucket keeps piece counts of its own.
pub const MAX_BUCKETS: usize = 16;

/// The largest accumulator weight or bias a file may hold: the trainer's bound 1.98 times [`QA`],
/// so that 32 pieces and the bias stay within `i16`.
pub const MAX_ACCUMULATOR_WEIGHT: i16 = 505;

/// A network in integers: accumulator weights and biases times [`QA`], output weights times
/// [`QB`], output biases times `QA·QB`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    /// Neurons of one view's accumulator.
    pub hidden: usize,
    /// Accumulator weights, one row of `hidden` per input.
    pub w1: Vec<i16>,
    /// Accumulator biases.
    pub b1: Vec<i16>,
    /// Output buckets.
    pub buckets: usize,
    /// Output weights per bucket: the side to move's half, then the other side's.
    pub w2: Vec<i16>,
    /// Output bias per bucket.
    pub b2: Vec<i32>,
}

impl Network {
    /// The evaluation in cp from the side to move's view, computed from scratch.
    #[must_use]
    pub fn evaluate(&self, position: &Position) -> i32 {
        let (own, other) = views(position);
        self.evaluate_views(&own, &other)
    }

    /// The evaluation in cp for the side to move's inputs `own` and the other side's `other`
    /// (`own.len()` pieces choose the bucket).
    #[must_use]
    pub fn evaluate_views(&self, own: &[u16], other: &[u16]) -> i32 {
        let (mut own_sums, mut other_sums) = (self.b1.clone(), self.b1.clone());
        for &f in own {
            self.add_row(&mut own_sums, f);
        }
        for &f in other {
            self.add_row(&mut other_sums, f);
        }
        self.output(&own_sums, &other_sums, bucket(own.len(), self.buckets))
    }

    /// The output in cp of the bucket `bucket` for the side to move's accumulator `own` and the
    /// other side's `other`. Each half's sum fits `i32`: at most [`MAX_HIDDEN`] neurons of
    /// [`QA`] times an `i16` weight.
    #[must_use]
    #[inline(always)]
    pub fn output(&self, own: &[i16], other: &[i16], bucket: usize) -> i32 {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU has AVX2, the only feature this copy is compiled with.
            return unsafe { self.output_avx2(own, other, bucket) };
        }
        self.output_portable(own, other, bucket)
    }

    /// [`Network::output`] compiled for AVX2's 256-bit registers: the same integers, faster.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn output_avx2(&self, own: &[i16], other: &[i16], bucket: usize) -> i32 {
        self.output_portable(own, other, bucket)
    }

    /// [`Network::output`] for any CPU.
    #[inline(always)]
    fn output_portable(&self, own: &[i16], other: &[i16], bucket: usize) -> i32 {
        let weights = &self.w2[bucket * 2 * self.hidden..][..2 * self.hidden];
        let (own_weights, other_weights) = weights.split_at(self.hidden);
        let half = |sums: &[i16], weights: &[i16]| -> i32 {
            sums.iter()
                .zip(weights)
                .map(|(&a, &w)| i32::from(a).clamp(0, QA) * i32::from(w))
                .sum()
        };
        let sum = i64::from(self.b2[bucket])
            + i64::from(half(own, own_weights))
            + i64::from(half(other, other_weights));
        (sum * i64::from(SCALE) / i64::from(QA * QB)) as i32
    }

    /// Adds input `feature`'s row to the accumulator `sums`.
    #[inline(always)]
    fn add_row(&self, sums: &mut [i16], feature: u16) {
        let row = &self.w1[usize::from(feature) * self.hidden..][..self.hidden];
        for (a, &w) in sums.iter_mut().zip(row) {
            *a = a.wrapping_add(w);
        }
    }

    /// Subtracts input `feature`'s row from the accumulator `sums`.
    #[inline(always)]
    fn subtract_row(&self, sums: &mut [i16], feature: u16) {
        let row = &self.w1[usize::from(feature) * self.hidden..][..self.hidden];
        for (a, &w) in sums.iter_mut().zip(row) {
            *a = a.wrapping_sub(w);
        }
    }

    /// Writes `before` with the rows of `removed` taken away and those of `added` put in into
    /// `after`, in one pass over the neurons for the common moves (a quiet move, a capture).
    #[inline]
    fn apply(&self, before: &[i16], after: &mut [i16], removed: &[u16], added: &[u16]) {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU has AVX2, the only feature this copy is compiled with.
            return unsafe { self.apply_avx2(before, after, removed, added) };
        }
        self.apply_portable(before, after, removed, added);
    }

    /// [`Network::apply`] compiled for AVX2's 256-bit registers: the same integers, faster.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn apply_avx2(&self, before: &[i16], after: &mut [i16], removed: &[u16], added: &[u16]) {
        self.apply_portable(before, after, removed, added);
    }

    /// [`Network::apply`] for any CPU.
    #[inline(always)]
    fn apply_portable(&self, before: &[i16], after: &mut [i16], removed: &[u16], added: &[u16]) {
        let row = |f: u16| &self.w1[usize::from(f) * self.hidden..][..self.hidden];
        match (removed, added) {
            (&[r], &[a]) => {
                let (r, a) = (row(r), row(a));
                for (((out, &b), &r), &a) in after.iter_mut().zip(before).zip(r).zip(a) {
                    *out = b.wrapping_sub(r).wrapping_add(a);
                }
            }
            (&[r1, r2], &[a]) => {
                let (r1, r2, a) = (row(r1), row(r2), row(a));
                for ((((out, &b), &r1), &r2), &a) in
                    after.iter_mut().zip(before).zip(r1).zip(r2).zip(a)
                {
                    *out = b.wrapping_sub(r1).wrapping_sub(r2).wrapping_add(a);
                }
            }
            _ => {
                after.copy_from_slice(before);
                for &f in removed {
                    self.subtract_row(after, f);
                }
                for &f in added {
                    self.add_row(after, f);
                }
            }
        }
    }

    /// The file: [`MAGIC`], `hidden` and `buckets` as `u32`, then `w1`, `b1`, `w2` as `i16` and
    /// `b2` as `i32`, all little-endian.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        out.extend_from_slice(&(self.buckets as u32).to_le_bytes());
        for v in self.w1.iter().chain(&self.b1).chain(&self.w2) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in &self.b2 {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// Reads a network file, or says what is wrong with it.
    ///
    /// # Errors
    /// A message naming what does not fit: the magic, the sizes, the length.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, String> {
        let rest = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or("not a Coherent network file (its first bytes are not COHNNUE1)")?;
        let Some((sizes, rest)) = rest.split_first_chunk::<8>() else {
            return Err("the file ends before its hidden size and bucket count".into());
        };
        let size = |at: usize| {
            u32::from_le_bytes([sizes[at], sizes[at + 1], sizes[at + 2], sizes[at + 3]]) as usize
        };
        let (hidden, buckets) = (size(0), size(4));
        if !(1..=MAX_HIDDEN).contains(&hidden) || !(1..=MAX_BUCKETS).contains(&buckets) {
            return Err(format!(
                "{hidden} hidden neurons and {buckets} buckets: not a network this engine reads"
            ));
        }
        let shorts = INPUTS * hidden + hidden + buckets * 2 * hidden;
        let want = shorts * 2 + buckets * 4;
        if rest.len() != want {
            return Err(format!(
                "a network of {hidden} hidden neurons and {buckets} buckets has {want} bytes of \
                 weights, the file {}",
                rest.len()
            ));
        }
        let (weights, biases) = rest.split_at(shorts * 2);
        let mut values = weights
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]));
        let mut take = |n: usize| values.by_ref().take(n).collect::<Vec<i16>>();
        let (w1, b1) = (take(INPUTS * hidden), take(hidden));
        if let Some(w) = w1
            .iter()
            .chain(&b1)
            .find(|w| w.unsigned_abs() > MAX_ACCUMULATOR_WEIGHT.unsigned_abs())
        {
            return Err(format!(
                "an accumulator weight of {w} is beyond ±{MAX_ACCUMULATOR_WEIGHT}: 32 pieces could \
                 overflow the engine's 16-bit sums"
            ));
        }
        Ok(Network {
            hidden,
            w1,
            b1,
            buckets,
            w2: take(buckets * 2 * hidden),
            b2: biases
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        })
    }
}

/// The accumulators of every ply of a search, White's view then Black's, each ply's made from its
/// parent's by the squares the move changed, so that a move costs a few rows, not 32.
///
/// A move only records what it changed; the rows are added when an evaluation at that ply or
/// below asks for them ([`Accumulators::compute`]). Nodes that return without evaluating (a
/// table cutoff, a repetition, a stored evaluation with children that do the same) cost no rows.
#[derive(Debug, Clone)]
pub struct Accumulators {
    hidden: usize,
    sums: Vec<i16>,
    /// Per ply: the inputs the move into it changed, while its sums are still to be computed.
    pending: Vec<Option<MoveInputs>>,
}

/// The inputs of White's view that one move removes and adds (at most four of each).
#[derive(Debug, Clone, Copy, Default)]
struct MoveInputs {
    removed: [u16; 4],
    added: [u16; 4],
    n_removed: u8,
    n_added: u8,
}

impl Accumulators {
    /// Room for `plies` plies of `network`'s accumulators.
    #[must_use]
    pub fn new(network: &Network, plies: usize) -> Accumulators {
        Accumulators {
            hidden: network.hidden,
            sums: vec![0; plies * 2 * network.hidden],
            pending: vec![None; plies],
        }
    }

    /// Ply `ply`'s accumulators: White's view, then Black's (computed: see [`Accumulators::compute`]).
    #[must_use]
    #[inline(always)]
    pub fn views(&self, ply: usize) -> (&[i16], &[i16]) {
        self.sums[ply * 2 * self.hidden..][..2 * self.hidden].split_at(self.hidden)
    }

    /// Computes ply `ply`'s accumulators for `position` from its pieces.
    pub fn refresh(&mut self, network: &Network, ply: usize, position: &Position) {
        let hidden = self.hidden;
        self.pending[ply] = None;
        let (white, black) = self.sums[ply * 2 * hidden..][..2 * hidden].split_at_mut(hidden);
        white.copy_from_slice(&network.b1);
        black.copy_from_slice(&network.b1);
        for f in white_features(position) {
            network.add_row(white, f);
            network.add_row(black, black_view(f));
        }
    }

    /// Records the move from `parent` at ply `ply` to `child` at `ply + 1`: every square whose
    /// piece differs loses the old piece's inputs and gains the new one's. This covers every kind
    /// of move (castling, en passant, promotion) and the null move alike. Two positions no move
    /// connects (more than four inputs change) are refreshed at once.
    #[inline]
    pub fn update(&mut self, network: &Network, ply: usize, parent: &Position, child: &Position) {
        let mut inputs = MoveInputs::default();
        for (chunk, (old, new)) in parent
            .board
            .chunks_exact(8)
            .zip(child.board.chunks_exact(8))
            .enumerate()
        {
            // Eight squares at a time: a move changes at most four, in one or two words.
            let word = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
            let mut changed = word(old) ^ word(new);
            while changed != 0 {
                let offset = changed.trailing_zeros() as usize / 8;
                changed &= !(0xff << (offset * 8));
                let (was, is) = (old[offset], new[offset]);
                let square = chunk * 8 + offset;
                if was != NO_PIECE {
                    let Some(slot) = inputs.removed.get_mut(usize::from(inputs.n_removed)) else {
                        return self.refresh(network, ply + 1, child);
                    };
                    *slot = piece_feature(was, square);
                    inputs.n_removed += 1;
                }
                if is != NO_PIECE {
                    let Some(slot) = inputs.added.get_mut(usize::from(inputs.n_added)) else {
                        return self.refresh(network, ply + 1, child);
                    };
                    *slot = piece_feature(is, square);
                    inputs.n_added += 1;
                }
            }
        }
        self.pending[ply + 1] = Some(inputs);
    }

    /// Computes ply `ply`'s sums, and those of the plies above it on the current path that are
    /// still pending, each from its parent's. Ply 0 must have been refreshed.
    #[inline]
    pub fn compute(&mut self, network: &Network, ply: usize) {
        let mut first = ply;
        while first > 0 && self.pending[first].is_some() {
            first -= 1;
        }
        for child_ply in first + 1..=ply {
            if let Some(inputs) = self.pending[child_ply].take() {
                self.apply(network, child_ply, &inputs);
            }
        }
    }

    /// Makes ply `ply`'s sums from ply `ply - 1`'s and the inputs the move between them changed.
    fn apply(&mut self, network: &Network, ply: usize, inputs: &MoveInputs) {
        let removed = &inputs.removed[..usize::from(inputs.n_removed)];
        let added = &inputs.added[..usize::from(inputs.n_added)];
        let size = 2 * self.hidden;
        let (before, after) = self.sums[(ply - 1) * size..][..2 * size].split_at_mut(size);
        let (white_before, black_before) = before.split_at(self.hidden);
        let (white, black) = after.split_at_mut(self.hidden);
        network.apply(white_before, white, removed, added);
        let mut removed_black = [0u16; 4];
        let mut added_black = [0u16; 4];
        for (to, &f) in removed_black.iter_mut().zip(removed) {
            *to = black_view(f);
        }
        for (to, &f) in added_black.iter_mut().zip(added) {
            *to = black_view(f);
        }
        network.apply(
            black_before,
            black,
            &removed_black[..removed.len()],
            &added_black[..added.len()],
        );
    }
}

/// True when the running CPU has AVX2 (checked once, then cached): the accumulator arithmetic
/// then runs in 256-bit registers. The integers are the same either way, and so is every search.
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2() -> bool {
    static HAS_AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS_AVX2.get_or_init(|| std::arch::is_x86_feature_detected!("avx2"))
}

/// White's input of the coloured piece code `piece` (colour × 6 + kind) on `square`.
#[inline(always)]
fn piece_feature(piece: u8, square: Square) -> u16 {
    u16::from(piece) * 64 + square as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(fen: &str) -> Position {
        crate::chess::attacks::init();
        Position::from_fen(fen).unwrap()
    }

    #[test]
    fn the_views_of_a_symmetric_position_are_the_same_inputs() {
        let start = position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let white = white_features(&start);
        assert_eq!(white.len(), 32);
        let mut black: Vec<u16> = white.iter().map(|&f| black_view(f)).collect();
        let mut sorted = white.clone();
        sorted.sort_unstable();
        black.sort_unstable();
        assert_eq!(black, sorted);
        // White's king on e1 is an own king on e1 for White and an enemy king on e8 for Black.
        let king = feature(Color::White, Color::White, KING, 4);
        assert_eq!(king, 5 * 64 + 4);
        assert_eq!(black_view(king), 384 + 5 * 64 + 60);
        assert_eq!(
            black_view(king),
            feature(Color::Black, Color::White, KING, 4)
        );
        assert_eq!(
            black_view(feature(Color::White, Color::Black, PAWN, 52)),
            feature(Color::Black, Color::Black, PAWN, 52)
        );
        assert_eq!(feature(Color::Black, Color::Black, PAWN, 52), 12);
        let (own, other) = views(&position("4k3/8/8/8/8/8/8/3QK3 b - - 0 1"));
        assert_eq!(
            own.iter().map(|&f| black_view(f)).collect::<Vec<_>>(),
            other
        );
    }

    #[test]
    fn every_bucket_is_used_and_the_fullest_board_is_in_the_last() {
        for buckets in 1..=MAX_BUCKETS {
            let used: Vec<usize> = (2..=32).map(|pieces| bucket(pieces, buckets)).collect();
            assert!(used.windows(2).all(|w| w[0] <= w[1]), "{buckets}");
            assert_eq!(used[0], 0);
            assert_eq!(*used.last().unwrap(), buckets - 1, "{buckets}");
            let mut distinct = used.clone();
            distinct.dedup();
            assert_eq!(distinct.len(), buckets, "{buckets}: {used:?}");
        }
    }

    /// A network whose accumulator neurons all read "a queen of this view's own side" and whose
    /// output weighs every neuron of both halves alike: each queen on the board is worth SCALE,
    /// whichever side has it and whichever side moves.
    fn queen_counter(hidden: usize) -> Network {
        let mut w1 = vec![0i16; INPUTS * hidden];
        for square in 0..64 {
            let own_queen = feature(Color::White, Color::White, 4, square);
            w1[usize::from(own_queen) * hidden..][..hidden].fill(QA as i16);
        }
        Network {
            hidden,
            w1,
            b1: vec![0; hidden],
            buckets: 2,
            w2: vec![(QB / hidden as i32) as i16; 2 * 2 * hidden],
            b2: vec![0; 2],
        }
    }

    #[test]
    fn a_queen_counting_network_sees_the_queens_from_each_side() {
        let net = queen_counter(4);
        let white_queen = position("4k3/8/8/8/8/8/8/3QK3 w - - 0 1");
        let black_to_move = position("4k3/8/8/8/8/8/8/3QK3 b - - 0 1");
        // White to move sees the queen in its own half, Black to move in the other half.
        assert_eq!(net.evaluate(&white_queen), SCALE);
        assert_eq!(net.evaluate(&black_to_move), SCALE);
        let both = position("3qk3/8/8/8/8/8/8/3QK3 b - - 0 1");
        assert_eq!(net.evaluate(&both), 2 * SCALE);
    }

    #[test]
    fn the_file_reads_back_and_bad_files_are_named() {
        let net = queen_counter(4);
        let bytes = net.to_bytes();
        assert_eq!(Network::from_bytes(&bytes).unwrap(), net);
        let short = Network::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(short.contains("4 hidden neurons and 2 buckets"), "{short}");
        let foreign = Network::from_bytes(b"GIF89a..").unwrap_err();
        assert!(foreign.contains("COHNNUE1"), "{foreign}");
        let truncated = Network::from_bytes(b"COHNNUE1\x04\x00").unwrap_err();
        assert!(truncated.contains("ends before"), "{truncated}");
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        huge.extend_from_slice(&1u32.to_le_bytes());
        assert!(
            Network::from_bytes(&huge)
                .unwrap_err()
                .contains("not a network")
        );
        let mut loud = net.clone();
        loud.b1[0] = MAX_ACCUMULATOR_WEIGHT + 1;
        let overflow = Network::from_bytes(&loud.to_bytes()).unwrap_err();
        assert!(overflow.contains("beyond ±505"), "{overflow}");
    }
}
