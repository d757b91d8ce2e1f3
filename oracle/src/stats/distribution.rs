//! Discrete score distributions: the regularized empirical one and its moments.

/// Every zero bucket becomes this pseudo-count before anything else (Fishtest's regularization).
pub const REGULARIZATION: f64 = 1e-3;

/// Most outcome classes a distribution has (five for pentanomial pairs).
const MAX_POINTS: usize = 5;

/// A discrete distribution on the equally spaced scores `a_i = i/(n−1)` in [0, 1]
/// (pair score per game for pentanomial data, game score for trinomial data).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    len: usize,
    probs: [f64; MAX_POINTS],
}

impl Distribution {
    /// The regularized empirical distribution of `buckets` and its total N (after regularization).
    ///
    /// Every bucket that is exactly 0 counts as `REGULARIZATION` so that logarithms and
    /// variances stay finite; N is taken afterwards and may therefore be fractional.
    ///
    /// # Panics
    /// If there are not 3 or 5 buckets (the types in `counts` guarantee it).
    #[must_use]
    pub fn empirical(buckets: &[u64]) -> (f64, Self) {
        assert!(matches!(buckets.len(), 3 | 5), "3 or 5 buckets expected");
        let mut probs = [0.0; MAX_POINTS];
        for (p, &n) in probs.iter_mut().zip(buckets) {
            *p = if n == 0 { REGULARIZATION } else { n as f64 };
        }
        let total: f64 = probs.iter().sum();
        for p in &mut probs[..buckets.len()] {
            *p /= total;
        }
        (
            total,
            Self {
                len: buckets.len(),
                probs,
            },
        )
    }

    /// A distribution from probabilities over equally spaced scores (they must sum to 1).
    ///
    /// # Panics
    /// If there are not 3 or 5 probabilities.
    #[must_use]
    pub fn from_probs(p: &[f64]) -> Self {
        assert!(matches!(p.len(), 3 | 5), "3 or 5 probabilities expected");
        let mut probs = [0.0; MAX_POINTS];
        probs[..p.len()].copy_from_slice(p);
        Self {
            len: p.len(),
            probs,
        }
    }

    /// The uniform distribution with as many points as `self`.
    #[must_use]
    pub fn uniform_like(&self) -> Self {
        let mut probs = [0.0; MAX_POINTS];
        for p in &mut probs[..self.len] {
            *p = 1.0 / self.len as f64;
        }
        Self {
            len: self.len,
            probs,
        }
    }

    /// The probabilities, worst result first.
    #[must_use]
    pub fn probs(&self) -> &[f64] {
        &self.probs[..self.len]
    }

    /// The score of class `i`: i/(n−1).
    #[must_use]
    pub fn score(&self, i: usize) -> f64 {
        i as f64 / (self.len - 1) as f64
    }

    /// (score, probability) pairs.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.probs()
            .iter()
            .enumerate()
            .map(|(i, &p)| (self.score(i), p))
    }

    /// Mean score μ.
    #[must_use]
    pub fn mean(&self) -> f64 {
        self.points().map(|(a, p)| a * p).sum()
    }

    /// Mean μ and variance v = Σ p_i (a_i − μ)².
    #[must_use]
    pub fn mean_variance(&self) -> (f64, f64) {
        let mu = self.mean();
        let var = self.points().map(|(a, p)| p * (a - mu).powi(2)).sum();
        (mu, var)
    }

    /// Mean, variance, skewness γ1 and excess kurtosis γ2.
    #[must_use]
    pub fn moments(&self) -> (f64, f64, f64, f64) {
        let (mu, var) = self.mean_variance();
        let m3: f64 = self.points().map(|(a, p)| p * (a - mu).powi(3)).sum();
        let m4: f64 = self.points().map(|(a, p)| p * (a - mu).powi(4)).sum();
        (mu, var, m3 / var.powf(1.5), m4 / (var * var) - 3.0)
    }

    /// The distribution p_i / (1 + λ b_i): the form of every constrained maximum-likelihood fit.
    pub(crate) fn tilted(&self, b: &[f64], lambda: f64) -> Self {
        let mut probs = [0.0; MAX_POINTS];
        for ((q, &p), &bi) in probs.iter_mut().zip(self.probs()).zip(b) {
            *q = p / (1.0 + lambda * bi);
        }
        Self {
            len: self.len,
            probs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regularization_replaces_zeros_before_the_total() {
        let (n, d) = Distribution::empirical(&[0, 3, 0, 1, 0]);
        assert!((n - 4.003).abs() < 1e-15);
        assert!((d.probs()[0] - 1e-3 / 4.003).abs() < 1e-18);
        assert!((d.probs().iter().sum::<f64>() - 1.0).abs() < 1e-15);
        let (n, d) = Distribution::empirical(&[0, 0, 0]);
        assert!((n - 3e-3).abs() < 1e-18);
        assert!((d.mean() - 0.5).abs() < 1e-15);
    }

    #[test]
    fn moments_of_a_known_distribution() {
        let d = Distribution::from_probs(&[0.25, 0.5, 0.25]);
        let (mu, var, skew, kurt) = d.moments();
        assert!((mu - 0.5).abs() < 1e-15);
        assert!((var - 0.125).abs() < 1e-15);
        assert!(skew.abs() < 1e-12);
        // m4 = 0.5 · 0.5⁴ = 1/32, var² = 1/64: kurtosis 2, excess −1.
        assert!((kurt + 1.0).abs() < 1e-12);
    }
}
