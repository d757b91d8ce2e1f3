//! Brownian motion with drift between two absorbing barriers: the model of an SPRT's LLR path
//! behind Fishtest's median-unbiased Elo estimate (Siegmund, Sequential Analysis, ch. 3).

/// Most terms of the eigenfunction series; it needs a few dozen where it is used.
const MAX_TERMS: usize = 10_000;

/// The series stops once a term is this small.
const TERM_TOLERANCE: f64 = 1e-9;

/// A Brownian motion started at 0 with drift μ and variance σ² per unit time, absorbed at a < 0 < b.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Brownian {
    /// Lower barrier.
    pub a: f64,
    /// Upper barrier.
    pub b: f64,
    /// Drift per unit time.
    pub mu: f64,
    /// Variance per unit time.
    pub sigma2: f64,
}

// The C library's erfc (libm), correct to an ulp, as scipy's `norm.cdf` is. statrs's erf is
// only good to a few 10⁻¹² (its Φ(1.5) is 0.93319279872823 against 0.9331927987311419), which
// showed in the last digits of the LOS next to Fishtest's.
#[link(name = "m")]
unsafe extern "C" {
    safe fn erfc(x: f64) -> f64;
}

/// Standard normal distribution function Φ(x) = ½·erfc(−x/√2), to the last digit of scipy's.
pub(crate) fn phi(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Primitive of e^(γy)·sin(nπy/A), times (2/A)·e^(−γy).
fn primitive(n: f64, gamma: f64, width: f64, y: f64) -> f64 {
    let angle = std::f64::consts::PI * n * y / width;
    (2.0 * width * gamma * angle.sin() - 2.0 * std::f64::consts::PI * n * angle.cos())
        / (width * width * gamma * gamma + std::f64::consts::PI.powi(2) * n * n)
}

impl Brownian {
    /// Probability of an outcome worse than the observed (T, y): absorbed at the lower barrier
    /// by time T, or alive at T below y (Fishtest: the path passes to the right of (T, y), time
    /// on the vertical axis). Uses the exact series, or Siegmund's approximation where the
    /// series converges slowly, switching exactly where Fishtest does.
    pub fn outcome_cdf(&self, t: f64, y: f64) -> f64 {
        let gamma = self.mu / self.sigma2;
        let width = self.b - self.a;
        if self.sigma2 * t / (width * width) < 1e-2 || (gamma * width).abs() > 15.0 {
            self.outcome_cdf_siegmund(t, y)
        } else {
            self.outcome_cdf_series(t, y)
        }
    }

    /// The eigenfunction expansion of the killed process (exact; slow for small σ²T/A²).
    fn outcome_cdf_series(&self, t: f64, y: f64) -> f64 {
        let (mu, sigma2) = (self.mu, self.sigma2);
        let width = self.b - self.a;
        let x = -self.a;
        let y = y - self.a;
        let gamma = mu / sigma2;
        let pi = std::f64::consts::PI;
        let lambda = |n: f64| (n * pi / width).powi(2) * sigma2 / 2.0 + mu * mu / sigma2 / 2.0;
        let lambda_1 = lambda(1.0);
        let t0 = (-lambda_1 * t - x * gamma + y * gamma).exp();
        let mut sum = 0.0;
        for n in 1..=MAX_TERMS {
            let n = n as f64;
            let t1 = (-(lambda(n) - lambda_1) * t).exp();
            let t3 = primitive(n, gamma, width, y);
            sum += t1 * t3 * (n * pi * x / width).sin();
            if (t0 * t1 * t3).abs() <= TERM_TOLERANCE {
                break;
            }
        }
        let pre = if gamma * width > 30.0 {
            (-2.0 * gamma * x).exp()
        } else if (gamma * width).abs() < 1e-8 {
            (width - x) / width
        } else {
            (1.0 - (2.0 * gamma * (width - x)).exp()) / (1.0 - (2.0 * gamma * width).exp())
        };
        pre + t0 * sum
    }

    /// Siegmund's approximation, with the asymptotic expansion of Φ where exp would overflow.
    fn outcome_cdf_siegmund(&self, t: f64, y: f64) -> f64 {
        let denom = (t * self.sigma2).sqrt();
        let offset = self.mu * t;
        let gamma = self.mu / self.sigma2;
        let z = (y - offset) / denom;
        let za = (-y + offset + 2.0 * self.a) / denom;
        let zb = (y - offset - 2.0 * self.b) / denom;
        let tail = |zz: f64, barrier: f64| -> f64 {
            if gamma * barrier >= 5.0 {
                -(-(zz * zz) / 2.0 + 2.0 * gamma * barrier).exp()
                    / (2.0 * std::f64::consts::PI).sqrt()
                    * (1.0 / zz - 1.0 / zz.powi(3))
            } else {
                (2.0 * gamma * barrier).exp() * phi(zz)
            }
        };
        phi(z) + tail(za, self.a) - tail(zb, self.b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Φ to the last digit of scipy's `norm.cdf` (values printed by Python's `math.erfc`, which
    /// agrees with scipy on every one of them).
    #[test]
    fn phi_matches_scipy() {
        for (x, want) in [
            (1.589_161_682_760_662_7, 0.943_988_052_615_701_5),
            (1.5, 0.933_192_798_731_141_9),
            (0.3, 0.617_911_422_188_952_6),
            (-1.2, 0.115_069_670_221_708_3),
            (4.0, 0.999_968_328_758_166_9),
        ] {
            assert!(
                (phi(x) - want).abs() <= 2.0 * f64::EPSILON * want,
                "Φ({x}) = {}",
                phi(x)
            );
        }
    }

    /// Two-barrier ruin probability: a path with drift μ, variance σ² started at 0 hits a < 0
    /// before b > 0 with probability (e^(2γa) − e^(−2γ(b−a)))/(1 − e^(−2γ(b−a))), γ = μ/σ².
    fn ruin(a: f64, b: f64, mu: f64, sigma2: f64) -> f64 {
        let gamma = mu / sigma2;
        let far = (-2.0 * gamma * (b - a)).exp();
        ((2.0 * gamma * a).exp() - far) / (1.0 - far)
    }

    #[test]
    fn long_horizons_give_the_ruin_probability() {
        let (a, b) = (-2.944_438_979_166_440_3, 2.944_438_979_166_440_3);
        // Series branch (|γA| ≤ 15): every path is absorbed long before T.
        for mu in [-0.3, -0.01, 0.02, 0.4] {
            let bm = Brownian {
                a,
                b,
                mu,
                sigma2: 1.0,
            };
            let worse = bm.outcome_cdf(1e4, 0.5);
            assert!((worse - ruin(a, b, mu, 1.0)).abs() < 1e-9, "{mu}: {worse}");
        }
        // Siegmund branch (|γA| > 15): the far barrier no longer matters.
        let bm = Brownian {
            a,
            b,
            mu: 3.0,
            sigma2: 1.0,
        };
        let worse = bm.outcome_cdf(1e3, 0.5);
        assert!((worse - ruin(a, b, 3.0, 1.0)).abs() < 1e-12, "{worse}");
    }

    #[test]
    fn a_better_observed_outcome_leaves_more_worse_ones() {
        let bm = Brownian {
            a: -2.94,
            b: 2.94,
            mu: 0.001,
            sigma2: 0.002,
        };
        let low = bm.outcome_cdf(1000.0, -1.0);
        let high = bm.outcome_cdf(1000.0, 1.0);
        assert!(0.0 < low && low < high && high < 1.0, "{low} {high}");
    }
}
