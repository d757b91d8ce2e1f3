//! `texel nnue` (this module): trains the evaluation network on `texel gen` data and writes the
//! quantized file the engine embeds. The loss is the squared error between `sigmoid(output)` and
//! a label blending game result and `sigmoid(score / SCALE)` (both from the side to move); Adam,
//! with the accumulator weights kept within [`net::CLIP`]. Every tenth position is held out, and
//! the quantized network is checked against the trained one on it before the file is written.

pub mod net;

use std::path::PathBuf;

use rayon::prelude::*;

use crate::selfplay::Rng;
use coherent::eval::network::{self, black_view, white_features};
use net::{Network, SCALE};

/// Options of one training run (`texel nnue`).
#[derive(clap::Args, Debug)]
pub struct NnueOptions {
    /// Data file from `texel gen`.
    #[arg(long, default_value = "data/selfplay.txt")]
    pub data: PathBuf,
    /// Where the network file goes.
    #[arg(long, default_value = "data/coherent.nnue")]
    pub out: PathBuf,
    /// Do not also train on the mirror image (files a-h swapped) of every position without
    /// castling rights.
    #[arg(long)]
    pub no_mirror: bool,
    /// Neurons of each view's accumulator (at most the engine's `MAX_HIDDEN`, 256; the engine's
    /// network since `T-0020` has 256).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub hidden: u32,
    /// Output buckets by the number of pieces on the board.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub buckets: u32,
    /// Passes over the training positions.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub epochs: u32,
    /// Positions per Adam step.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: u32,
    /// Adam learning rate at the start; it falls along a cosine to a tenth of it.
    #[arg(long, default_value_t = 0.001, value_parser = crate::non_negative)]
    pub lr: f64,
    /// Weight of the game result in the label (the rest is the search score). The default is
    /// the search score alone: on a million positions a network trained with 0.5 lost about
    /// 400 Elo to the hand-crafted evaluation, one trained with 0 about 90 (docs/nnue.md).
    #[arg(long, default_value_t = 0.0, value_parser = crate::unit_interval)]
    pub lambda: f64,
    /// Seed of the initial weights and the order of the positions.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Start from this network file (for example the engine's `engine/src/eval/coherent.nnue`)
    /// instead of random weights, and go on training it on the data: what earlier data taught
    /// it is kept without that data. Its size must be `--hidden` by `--buckets`.
    #[arg(long)]
    pub init: Option<PathBuf>,
}

/// The training positions, flat: White's view inputs of position `i` are
/// `features[starts[i]..starts[i + 1]]`.
struct Positions {
    features: Vec<u16>,
    starts: Vec<u32>,
    /// The side to move is Black.
    black_to_move: Vec<bool>,
    /// The label from the side to move's view.
    labels: Vec<f32>,
}

impl Positions {
    fn new() -> Positions {
        Positions {
            features: Vec::new(),
            starts: vec![0],
            black_to_move: Vec::new(),
            labels: Vec::new(),
        }
    }

    fn push(&mut self, white: &[u16], black_to_move: bool, label: f32) {
        self.features.extend_from_slice(white);
        self.starts.push(self.features.len() as u32);
        self.black_to_move.push(black_to_move);
        self.labels.push(label);
    }

    fn len(&self) -> usize {
        self.labels.len()
    }

    /// The side to move's inputs and the other side's, and the label, of position `i`.
    fn sample(&self, i: usize) -> (Vec<u16>, Vec<u16>, f32) {
        let white = &self.features[self.starts[i] as usize..self.starts[i + 1] as usize];
        let black: Vec<u16> = white.iter().map(|&f| black_view(f)).collect();
        if self.black_to_move[i] {
            (black, white.to_vec(), self.labels[i])
        } else {
            (white.to_vec(), black, self.labels[i])
        }
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The gradient of the summed loss over some positions, with that summed loss.
struct Gradient {
    w1: Vec<f32>,
    factors: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
    loss: f64,
}

impl Gradient {
    fn zero(net: &Network) -> Gradient {
        Gradient {
            w1: vec![0.0; net.w1.len()],
            factors: vec![0.0; net.factors.len()],
            b1: vec![0.0; net.b1.len()],
            w2: vec![0.0; net.w2.len()],
            b2: vec![0.0; net.b2.len()],
            loss: 0.0,
        }
    }

    fn add(&mut self, other: &Gradient) {
        let pairs = [
            (&mut self.w1, &other.w1),
            (&mut self.factors, &other.factors),
            (&mut self.b1, &other.b1),
            (&mut self.w2, &other.w2),
            (&mut self.b2, &other.b2),
        ];
        for (mine, theirs) in pairs {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
        self.loss += other.loss;
    }
}

/// The gradient over `indices` of `positions`.
fn gradient(net: &Network, positions: &Positions, indices: &[usize]) -> Gradient {
    let hidden = net.hidden;
    let mut g = Gradient::zero(net);
    let mut deltas = [vec![0.0f32; hidden], vec![0.0f32; hidden]];
    for &i in indices {
        let (own, other, label) = positions.sample(i);
        let act = net.forward(&own, &other);
        let p = sigmoid(act.output);
        g.loss += f64::from((p - label) * (p - label));
        let d_out = 2.0 * (p - label) * p * (1.0 - p);
        let bucket = network::bucket(own.len(), net.buckets);
        g.b2[bucket] += d_out;
        for (half, (acc, features)) in act.accumulators.iter().zip([&own, &other]).enumerate() {
            let weights = &net.output_weights(bucket)[half * hidden..][..hidden];
            let w2_grad = &mut g.w2[(bucket * 2 + half) * hidden..][..hidden];
            let delta = &mut deltas[half];
            for j in 0..hidden {
                let a = acc[j];
                w2_grad[j] += d_out * a.clamp(0.0, 1.0);
                delta[j] = if a > 0.0 && a < 1.0 {
                    d_out * weights[j]
                } else {
                    0.0
                };
                g.b1[j] += delta[j];
            }
            for &f in features {
                let row = &mut g.w1[usize::from(f) * hidden..][..hidden];
                for (r, d) in row.iter_mut().zip(delta.iter()) {
                    *r += d;
                }
                let factor = &mut g.factors[usize::from(f) / 64 * hidden..][..hidden];
                for (r, d) in factor.iter_mut().zip(delta.iter()) {
                    *r += d;
                }
            }
        }
    }
    g
}

/// Adam's moments of every weight.
struct Adam {
    m: Vec<f32>,
    v: Vec<f32>,
    steps: i32,
}

impl Adam {
    fn new(len: usize) -> Adam {
        Adam {
            m: vec![0.0; len],
            v: vec![0.0; len],
            steps: 0,
        }
    }

    /// One step over the weights (in the order w1, factors, b1, w2, b2) with the mean gradient;
    /// the accumulator's weights, factors and biases stay within [`net::CLIP`].
    fn step(&mut self, net: &mut Network, g: &Gradient, n: usize, lr: f32) {
        const B1: f32 = 0.9;
        const B2: f32 = 0.999;
        self.steps += 1;
        let (c1, c2) = (1.0 - B1.powi(self.steps), 1.0 - B2.powi(self.steps));
        let scale = 1.0 / n as f32;
        let clipped = net.w1.len() + net.factors.len() + net.b1.len();
        let weights = net
            .w1
            .iter_mut()
            .chain(net.factors.iter_mut())
            .chain(net.b1.iter_mut())
            .chain(net.w2.iter_mut())
            .chain(net.b2.iter_mut());
        let grads =
            g.w1.iter()
                .chain(&g.factors)
                .chain(&g.b1)
                .chain(&g.w2)
                .chain(&g.b2);
        for (k, ((w, &grad), (m, v))) in weights
            .zip(grads)
            .zip(self.m.iter_mut().zip(self.v.iter_mut()))
            .enumerate()
        {
            let grad = grad * scale;
            *m = B1 * *m + (1.0 - B1) * grad;
            *v = B2 * *v + (1.0 - B2) * grad * grad;
            *w -= lr * (*m / c1) / ((*v / c2).sqrt() + 1e-8);
            if k < clipped {
                *w = w.clamp(-net::CLIP, net::CLIP);
            }
        }
    }
}

/// Positions per gradient task: fixed, so that the sums (and the network) do not depend on the
/// number of threads.
const CHUNK: usize = 1024;

/// The summed gradient over `indices`, computed in parallel and added in a fixed order.
fn batch_gradient(net: &Network, positions: &Positions, indices: &[usize]) -> Gradient {
    let parts: Vec<Gradient> = indices
        .par_chunks(CHUNK)
        .map(|chunk| gradient(net, positions, chunk))
        .collect();
    let mut total = Gradient::zero(net);
    for part in &parts {
        total.add(part);
    }
    total
}

/// Mean loss over `indices`.
fn mean_loss(net: &Network, positions: &Positions, indices: &[usize]) -> f64 {
    batch_gradient(net, positions, indices).loss / indices.len().max(1) as f64
}

/// Reads the data, trains, checks the quantized network and writes it.
pub fn run(o: &NnueOptions) -> Result<(), String> {
    coherent::chess::attacks::init();
    // A path that cannot be written is found now, not after the training.
    write_whole(&o.out, b"")?;
    std::fs::remove_file(&o.out).map_err(|e| format!("{}: {e}", o.out.display()))?;
    let start = o
        .init
        .as_deref()
        .map(|path| starting_network(path, o))
        .transpose()?;
    let lambda = o.lambda as f32;
    let mut positions = Positions::new();
    crate::data::load(&o.data, 10, "training", |l| {
        let black = l.position.side == coherent::chess::types::Color::Black;
        let (result, score) = if black {
            (1.0 - l.result, -l.score)
        } else {
            (l.result, l.score)
        };
        let label = lambda * result as f32 + (1.0 - lambda) * sigmoid(score as f32 / SCALE);
        let white = white_features(&l.position);
        positions.push(&white, black, label);
        // Without castling rights the board's mirror image (files a-h swapped) is worth the
        // same: a second position for free. An input's square is its low six bits.
        if !o.no_mirror && l.position.castling == 0 {
            let mirrored: Vec<u16> = white.iter().map(|&f| f ^ 7).collect();
            positions.push(&mirrored, black, label);
        }
    })?;
    // Every tenth block of consecutive positions is held out: neighbouring lines come from the
    // same game, so single lines would leak their games into the training.
    let block = (positions.len() / 100).clamp(1, 1000);
    let (mut train, validation): (Vec<usize>, Vec<usize>) =
        (0..positions.len()).partition(|i| !(i / block).is_multiple_of(10));
    let mut rng = Rng::new(o.seed);
    let mut uniform = || (rng.next() >> 40) as f32 / (1u64 << 24) as f32;
    let mut net = match start {
        Some(net) => net,
        None => Network::random(o.hidden as usize, o.buckets as usize, &mut uniform),
    };
    let mut adam =
        Adam::new(net.w1.len() + net.factors.len() + net.b1.len() + net.w2.len() + net.b2.len());
    eprintln!(
        "{} positions ({} for training, {} held out); {} hidden neurons per view, {} output buckets; validation loss {:.6}",
        positions.len(),
        train.len(),
        validation.len(),
        net.hidden,
        net.buckets,
        mean_loss(&net, &positions, &validation)
    );
    let batch = o.batch as usize;
    let steps_per_epoch = train.len().div_ceil(batch);
    let total_steps = (steps_per_epoch * o.epochs as usize).max(1);
    let mut step = 0usize;
    for epoch in 1..=o.epochs {
        let started = std::time::Instant::now();
        shuffle(&mut train, &mut rng);
        let mut loss = 0.0;
        for indices in train.chunks(batch) {
            let progress = step as f64 / total_steps as f64;
            let lr = o.lr * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()));
            let g = batch_gradient(&net, &positions, indices);
            if !g.loss.is_finite() {
                return Err(format!(
                    "the training diverged in epoch {epoch} (loss {}); try a smaller --lr",
                    g.loss
                ));
            }
            loss += g.loss;
            adam.step(&mut net, &g, indices.len(), lr as f32);
            step += 1;
        }
        eprintln!(
            "epoch {epoch}: training loss {:.6}, validation loss {:.6} ({:.1} s)",
            loss / train.len() as f64,
            mean_loss(&net, &positions, &validation),
            started.elapsed().as_secs_f64()
        );
    }
    let quantized = net.quantize();
    let mut worst = 0.0f32;
    let mut total = 0.0f64;
    for &i in &validation {
        let (own, other, _) = positions.sample(i);
        let float = net.forward(&own, &other).output * SCALE;
        let diff = (float - quantized.evaluate_views(&own, &other) as f32).abs();
        // A NaN counts as the worst difference, not as none.
        worst = if diff.is_nan() {
            f32::INFINITY
        } else {
            worst.max(diff)
        };
        total += f64::from(diff);
    }
    eprintln!(
        "quantized against trained on the held-out positions: mean {:.2} cp, worst {worst:.1} cp apart",
        total / validation.len().max(1) as f64
    );
    if worst > MAX_QUANTIZATION_ERROR {
        return Err(format!(
            "the quantized network is up to {worst} cp away from the trained one (allowed \
             {MAX_QUANTIZATION_ERROR}); nothing written"
        ));
    }
    write_whole(&o.out, &quantized.to_bytes())?;
    let written = std::fs::read(&o.out)
        .map_err(|e| format!("{}: cannot read back: {e}", o.out.display()))
        .and_then(|bytes| {
            network::Network::from_bytes(&bytes).map_err(|e| format!("{}: {e}", o.out.display()))
        })?;
    if written != quantized {
        return Err(format!(
            "{}: reads back as another network",
            o.out.display()
        ));
    }
    eprintln!("wrote {}", o.out.display());
    // A glance at what the network learnt, through the integer evaluation of whole positions.
    for (name, fen) in REFERENCE_POSITIONS {
        let position = coherent::chess::position::Position::from_fen(fen)
            .expect("the reference positions are valid FEN");
        eprintln!("  {name}: {:+} cp", written.evaluate(&position));
    }
    Ok(())
}

/// The network of `--init`, which must have the size that `--hidden` and `--buckets` ask for.
fn starting_network(path: &std::path::Path, o: &NnueOptions) -> Result<Network, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("--init {}: {e}", path.display()))?;
    let quantized = network::Network::from_bytes(&bytes)
        .map_err(|e| format!("--init {}: {e}", path.display()))?;
    if (quantized.hidden, quantized.buckets) != (o.hidden as usize, o.buckets as usize) {
        return Err(format!(
            "--init {}: a network of {} neurons and {} buckets, but --hidden {} --buckets {}",
            path.display(),
            quantized.hidden,
            quantized.buckets,
            o.hidden,
            o.buckets
        ));
    }
    Ok(Network::from_quantized(&quantized))
}

/// Positions whose evaluation the command prints after training: a network that has learnt
/// anything puts the queen odds far from the start position, on the right side.
const REFERENCE_POSITIONS: [(&str, &str); 3] = [
    (
        "start position, White to move",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    ),
    (
        "White without its queen, White to move",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1",
    ),
    (
        "White without its queen, Black to move",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR b KQkq - 0 1",
    ),
];

/// The largest difference in cp between the trained and the quantized network on a held-out
/// position that still writes the file: rounding costs a few cp, an overflow or a diverged
/// weight far more.
const MAX_QUANTIZATION_ERROR: f32 = 64.0;

/// Fisher–Yates with the tool's seeded generator.
fn shuffle(items: &mut [usize], rng: &mut Rng) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

/// Writes `bytes` to `path` whole or not at all: a temporary file beside it, synced, renamed
/// over it; the temporary file is removed when anything fails.
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    let temp = std::path::PathBuf::from(name);
    let written = std::fs::File::create(&temp)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        format!("{}: cannot write: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The backward pass is the derivative of the loss: against central differences for a
    /// sample of every kind of weight, on positions of both sides to move.
    #[test]
    fn the_gradient_is_the_derivative_of_the_loss() {
        coherent::chess::attacks::init();
        let mut positions = Positions::new();
        for (fen, label) in [
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                0.7,
            ),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
                0.2,
            ),
            ("8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1", 0.5),
        ] {
            let position = coherent::chess::position::Position::from_fen(fen).unwrap();
            let black = position.side == coherent::chess::types::Color::Black;
            positions.push(&white_features(&position), black, label);
        }
        let mut rng = Rng::new(11);
        let mut net = Network::random(6, 2, || (rng.next() >> 40) as f32 / (1u64 << 24) as f32);
        // Biases that put some neurons on each side of the clipped ReLU's corners.
        net.b1 = vec![-0.3, 0.2, 0.5, 0.9, 1.3, -0.05];
        let all = [0, 1, 2];
        let analytic = gradient(&net, &positions, &all);
        let loss = |net: &Network| gradient(net, &positions, &all).loss;
        let pawn_row = usize::from(white_features(&positions_fen_pawns())[0]) * net.hidden;
        let checks: Vec<(&str, usize)> = vec![
            ("w1", pawn_row + 1),
            ("w1", pawn_row + 3),
            ("b1", 2),
            ("b1", 5),
            ("w2", 3),
            ("w2", 2 * 6 + 7),
            ("b2", 0),
            ("b2", 1),
        ];
        for (kind, at) in checks {
            let h = 1e-2f32;
            let nudge = |delta: f32| {
                let mut n = net.clone();
                match kind {
                    "w1" => n.w1[at] += delta,
                    "b1" => n.b1[at] += delta,
                    "w2" => n.w2[at] += delta,
                    _ => n.b2[at] += delta,
                }
                loss(&n)
            };
            let numeric = (nudge(h) - nudge(-h)) / (2.0 * f64::from(h));
            let exact = f64::from(match kind {
                "w1" => analytic.w1[at],
                "b1" => analytic.b1[at],
                "w2" => analytic.w2[at],
                _ => analytic.b2[at],
            });
            assert!(
                (numeric - exact).abs() <= 1e-3 + 0.05 * exact.abs(),
                "{kind}[{at}]: numeric {numeric}, backward pass {exact}"
            );
        }
    }

    /// `--init` refuses a file that is not a network, or one of another size than asked for,
    /// naming the argument, before reading any data, and writes nothing.
    #[test]
    fn a_bad_starting_network_is_refused_before_the_data_is_read() {
        let dir = std::env::temp_dir().join(format!("texel-test-{}-init", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let not_a_network = dir.join("not.nnue");
        std::fs::write(&not_a_network, b"hello").unwrap();
        let engine = PathBuf::from("../../engine/src/eval/coherent.nnue");
        for (init, hidden, expected) in [
            (not_a_network, 256, "not a Coherent network file"),
            (dir.join("missing.nnue"), 256, "missing.nnue"),
            (
                engine,
                128,
                "a network of 256 neurons and 8 buckets, but --hidden 128",
            ),
        ] {
            let options = NnueOptions {
                data: dir.join("no-data.txt"),
                out: dir.join("out.nnue"),
                hidden,
                buckets: 8,
                epochs: 1,
                batch: 32,
                lr: 0.001,
                lambda: 0.0,
                no_mirror: false,
                seed: 1,
                init: Some(init),
            };
            let e = run(&options).unwrap_err();
            assert!(e.starts_with("--init ") && e.contains(expected), "{e}");
            assert!(!dir.join("out.nnue").exists());
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A position whose first White-view input is a white pawn on d4 (the one the checks nudge).
    fn positions_fen_pawns() -> coherent::chess::position::Position {
        coherent::chess::position::Position::from_fen("8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1").unwrap()
    }

    /// Positions labelled by their material alone: a small network learns that much.
    #[test]
    fn training_learns_material_from_labelled_positions() {
        coherent::chess::attacks::init();
        let dir = std::env::temp_dir().join(format!("texel-test-{}-nnue", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fens = [
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
            "3qk3/8/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/3RK3 b - - 0 1",
            "3rk3/8/8/8/8/8/8/4K3 b - - 0 1",
            "4k3/pppp4/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/PPPP4/4K3 b - - 0 1",
            "4k3/8/8/8/8/8/8/2N1K3 w - - 0 1",
            "2n1k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/2B1K3 b - - 0 1",
        ];
        let material = [0, 900, -900, 500, -500, -400, 400, 300, -300, 300];
        let lines: Vec<String> = (0..20)
            .flat_map(|_| fens.iter().zip(material))
            .map(|(fen, cp)| format!("{fen};0.5;{cp}"))
            .collect();
        let data = dir.join("material.txt");
        std::fs::write(&data, lines.join("\n")).unwrap();
        let out = dir.join("material.nnue");
        let options = NnueOptions {
            data,
            out: out.clone(),
            hidden: 8,
            buckets: 2,
            epochs: 60,
            batch: 32,
            lr: 0.01,
            lambda: 0.0,
            no_mirror: false,
            seed: 3,
            init: None,
        };
        run(&options).unwrap();
        let net = network::Network::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
        for (fen, cp) in fens.iter().zip(material) {
            let position = coherent::chess::position::Position::from_fen(fen).unwrap();
            let eval = match position.side {
                coherent::chess::types::Color::White => net.evaluate(&position),
                coherent::chess::types::Color::Black => -net.evaluate(&position),
            };
            assert!((eval - cp).abs() < 120, "{fen}: {eval} cp, labelled {cp}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
