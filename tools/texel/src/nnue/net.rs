//! The network: each side's view of the board as 768 inputs (own and enemy pieces, six kinds,
//! 64 squares; Black's view flipped vertically), one accumulator of `hidden` neurons per view
//! with shared weights, clipped ReLU, both halves (side to move first) into one output whose
//! value times [`SCALE`] is the evaluation in cp. The output layer has one set of weights per
//! bucket of material (the number of pieces on the board, kings included, see [`bucket`]).
//! Trained in `f32`, shipped quantized.

use coherent::eval::network::{self as nnue, INPUTS, QA, QB, bucket};

/// The evaluation in cp is the output times this.
pub const SCALE: f32 = nnue::SCALE as f32;
/// Bound of the accumulator weights and biases: 32 pieces at most keep a quantized sum in `i16`.
pub const CLIP: f32 = 1.98;
/// Factor rows: one per side and kind of piece (each input's row index divided by 64).
pub const FACTORS: usize = INPUTS / 64;

/// The network in `f32`, as trained.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// Neurons of one view's accumulator.
    pub hidden: usize,
    /// Accumulator weights, one row of `hidden` per input.
    pub w1: Vec<f32>,
    /// One row of `hidden` per side and kind of piece, added to the row of each of its 64
    /// squares: what a piece is worth wherever it stands is learnt from every position it is
    /// in, not from those with it on one square (the "factoriser"). Folded into `w1` when
    /// quantized, so the engine never sees it.
    pub factors: Vec<f32>,
    /// Accumulator biases.
    pub b1: Vec<f32>,
    /// Output buckets.
    pub buckets: usize,
    /// Output weights per bucket: the side to move's half, then the other side's.
    pub w2: Vec<f32>,
    /// Output bias per bucket.
    pub b2: Vec<f32>,
}

/// One forward pass's intermediate values, kept for the backward pass.
pub struct Activations {
    /// The side to move's accumulator, then the other side's (before the clipped ReLU).
    pub accumulators: [Vec<f32>; 2],
    /// The output (times [`SCALE`] in cp).
    pub output: f32,
}

impl Network {
    /// A network of `hidden` neurons and `buckets` output buckets with small weights drawn by
    /// `uniform` (values in [0, 1)).
    pub fn random(hidden: usize, buckets: usize, mut uniform: impl FnMut() -> f32) -> Network {
        let mut draw = |bound: f32, n: usize| -> Vec<f32> {
            (0..n).map(|_| (uniform() * 2.0 - 1.0) * bound).collect()
        };
        let w1 = draw(0.1, INPUTS * hidden);
        let w2 = draw(1.0 / (hidden as f32).sqrt(), buckets * 2 * hidden);
        Network {
            hidden,
            w1,
            factors: vec![0.0; FACTORS * hidden],
            b1: vec![0.0; hidden],
            buckets,
            w2,
            b2: vec![0.0; buckets],
        }
    }

    /// The network a quantized file holds, back in `f32` (factor rows zero, since the file has
    /// them folded in): the starting point of a run that goes on from an earlier network.
    /// Quantizing it again gives the same integers.
    #[must_use]
    pub fn from_quantized(q: &nnue::Network) -> Network {
        let scaled = |values: &[i16], scale: i32| -> Vec<f32> {
            values
                .iter()
                .map(|&v| f32::from(v) / scale as f32)
                .collect()
        };
        Network {
            hidden: q.hidden,
            w1: scaled(&q.w1, QA),
            factors: vec![0.0; FACTORS * q.hidden],
            b1: scaled(&q.b1, QA),
            buckets: q.buckets,
            w2: scaled(&q.w2, QB),
            b2: q.b2.iter().map(|&b| b as f32 / (QA * QB) as f32).collect(),
        }
    }

    /// The output weights of `bucket`.
    #[must_use]
    pub fn output_weights(&self, bucket: usize) -> &[f32] {
        &self.w2[bucket * 2 * self.hidden..][..2 * self.hidden]
    }

    /// Input `feature`'s row of accumulator weights, and its piece's factor row.
    fn rows(&self, feature: u16) -> (&[f32], &[f32]) {
        let f = usize::from(feature);
        (
            &self.w1[f * self.hidden..][..self.hidden],
            &self.factors[f / 64 * self.hidden..][..self.hidden],
        )
    }

    /// The accumulator of one view: biases plus the rows of its active inputs.
    fn accumulate(&self, features: &[u16]) -> Vec<f32> {
        let mut acc = self.b1.clone();
        for &f in features {
            let (row, factor) = self.rows(f);
            for ((a, w), v) in acc.iter_mut().zip(row).zip(factor) {
                *a += w + v;
            }
        }
        acc
    }

    /// The forward pass for the side to move's inputs `own` and the other side's `other`
    /// (`own.len()` pieces on the board choose the output bucket).
    #[must_use]
    pub fn forward(&self, own: &[u16], other: &[u16]) -> Activations {
        let accumulators = [self.accumulate(own), self.accumulate(other)];
        let bucket = bucket(own.len(), self.buckets);
        let mut output = self.b2[bucket];
        for (half, acc) in accumulators.iter().enumerate() {
            let weights = &self.output_weights(bucket)[half * self.hidden..][..self.hidden];
            for (a, w) in acc.iter().zip(weights) {
                output += a.clamp(0.0, 1.0) * w;
            }
        }
        Activations {
            accumulators,
            output,
        }
    }

    /// The network in integers, as the engine reads it.
    #[must_use]
    pub fn quantize(&self) -> nnue::Network {
        let q = |x: f32, scale: i32| (x * scale as f32).round() as i16;
        nnue::Network {
            hidden: self.hidden,
            w1: self
                .w1
                .chunks_exact(self.hidden)
                .enumerate()
                .flat_map(|(f, row)| {
                    let factor = &self.factors[f / 64 * self.hidden..][..self.hidden];
                    row.iter()
                        .zip(factor)
                        .map(|(&w, &v)| q((w + v).clamp(-CLIP, CLIP), QA))
                })
                .collect(),
            b1: self.b1.iter().map(|&b| q(b, QA)).collect(),
            buckets: self.buckets,
            w2: self.w2.iter().map(|&w| q(w, QB)).collect(),
            b2: self
                .b2
                .iter()
                .map(|&b| (b * (QA * QB) as f32).round() as i32)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coherent::chess::position::Position;
    use coherent::eval::network::{black_view, white_features};

    /// The trainer's forward pass and the integer evaluation of the quantized network agree to
    /// within a few cp (rounding), on both sides to move. Each of the 32 pieces' weights is
    /// rounded to 1/255, which moves an accumulator by about 0.006 and the output by a few cp.
    #[test]
    fn the_quantized_network_evaluates_as_the_trained_one() {
        coherent::chess::attacks::init();
        let mut state = 7u32;
        let mut net = Network::random(16, 4, || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 24) as f32
        });
        // Factor rows of their own, so that the quantized weights must fold them in.
        for (i, v) in net.factors.iter_mut().enumerate() {
            *v = ((i * 37 % 101) as f32 / 101.0 - 0.5) * 0.2;
        }
        let quantized = net.quantize();
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
            "8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1",
        ] {
            let position = Position::from_fen(fen).unwrap();
            let white = white_features(&position);
            let black: Vec<u16> = white.iter().map(|&f| black_view(f)).collect();
            let (own, other) = if position.side == coherent::chess::types::Color::White {
                (white, black)
            } else {
                (black, white)
            };
            let float = net.forward(&own, &other).output * SCALE;
            let integer = quantized.evaluate(&position);
            assert!(
                (float - integer as f32).abs() < 8.0,
                "{fen}: {float} cp in f32, {integer} cp quantized"
            );
        }
        let bytes = quantized.to_bytes();
        assert_eq!(nnue::Network::from_bytes(&bytes).unwrap(), quantized);
    }

    /// A network read back from its integers quantizes to the same integers, the engine's own
    /// network included (its accumulator weights reach the ±505 bound).
    #[test]
    fn a_quantized_network_read_back_quantizes_to_itself() {
        let engine =
            nnue::Network::from_bytes(include_bytes!("../../../../engine/src/eval/coherent.nnue"))
                .unwrap();
        assert_eq!(Network::from_quantized(&engine).quantize(), engine);
    }
}
