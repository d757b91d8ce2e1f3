//! Result counts: pentanomial game pairs and trinomial games, always from the candidate's side.

use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

/// Counts of game pairs by the candidate's points in the pair:
/// `[LL, LD+DL, DD+WL+LW, WD+DW, WW]` (0, ½, 1, 1½, 2 points).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PentanomialCounts(pub [u64; 5]);

/// Counts of single games by result for the candidate: `[L, D, W]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TrinomialCounts(pub [u64; 3]);

/// What the statistics need from either kind of counts.
pub trait Counts {
    /// Games in one counted unit: 2 for a pair, 1 for a game.
    const GAMES_PER_UNIT: u64;
    /// The buckets from worst to best result for the candidate.
    fn buckets(&self) -> &[u64];
    /// Number of counted units (pairs or games).
    fn units(&self) -> u64 {
        self.buckets().iter().sum()
    }
    /// Number of games played.
    fn games(&self) -> u64 {
        self.units() * Self::GAMES_PER_UNIT
    }
    /// Number of game pairs (for trinomial counts: complete pairs the games would fill).
    fn pairs(&self) -> u64 {
        self.games() / 2
    }
    /// Points scored by the candidate (a draw is half a point).
    fn points(&self) -> f64 {
        self.buckets()
            .iter()
            .enumerate()
            .map(|(i, &n)| n as f64 * i as f64 / 2.0)
            .sum()
    }
}

impl Counts for PentanomialCounts {
    const GAMES_PER_UNIT: u64 = 2;
    fn buckets(&self) -> &[u64] {
        &self.0
    }
}

impl Counts for TrinomialCounts {
    const GAMES_PER_UNIT: u64 = 1;
    fn buckets(&self) -> &[u64] {
        &self.0
    }
}

impl PentanomialCounts {
    /// Number of game pairs.
    #[must_use]
    pub fn pairs(&self) -> u64 {
        Counts::units(self)
    }

    /// Number of games (two per pair).
    #[must_use]
    pub fn games(&self) -> u64 {
        Counts::games(self)
    }

    /// Counts one finished pair worth `half_points` (0..=4) half-points to the candidate.
    ///
    /// # Panics
    /// If `half_points > 4`: a pair cannot score more than two points.
    pub fn record(&mut self, half_points: usize) {
        self.0[half_points] += 1;
    }

    /// The same pairs seen from the opponent's side.
    #[must_use]
    pub fn reversed(&self) -> Self {
        let mut buckets = self.0;
        buckets.reverse();
        Self(buckets)
    }
}

impl TrinomialCounts {
    /// Number of games.
    #[must_use]
    pub fn games(&self) -> u64 {
        Counts::games(self)
    }

    /// Complete pairs the games would fill (games / 2, rounded down).
    #[must_use]
    pub fn pairs(&self) -> u64 {
        Counts::pairs(self)
    }

    /// The same games seen from the opponent's side.
    #[must_use]
    pub fn reversed(&self) -> Self {
        let mut buckets = self.0;
        buckets.reverse();
        Self(buckets)
    }
}

impl Add for PentanomialCounts {
    type Output = Self;
    fn add(mut self, rhs: Self) -> Self {
        self += rhs;
        self
    }
}

impl AddAssign for PentanomialCounts {
    fn add_assign(&mut self, rhs: Self) {
        for (a, b) in self.0.iter_mut().zip(rhs.0) {
            *a += b;
        }
    }
}

impl Add for TrinomialCounts {
    type Output = Self;
    fn add(mut self, rhs: Self) -> Self {
        self += rhs;
        self
    }
}

impl AddAssign for TrinomialCounts {
    fn add_assign(&mut self, rhs: Self) {
        for (a, b) in self.0.iter_mut().zip(rhs.0) {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_sums() {
        let p = PentanomialCounts([1, 2, 3, 4, 5]);
        assert_eq!((p.pairs(), p.games()), (15, 30));
        assert_eq!(Counts::points(&p), 2.0 * 0.5 + 3.0 + 4.0 * 1.5 + 5.0 * 2.0);
        let t = TrinomialCounts([3, 4, 5]);
        assert_eq!((t.games(), t.pairs()), (12, 6));
        assert_eq!(p + p, PentanomialCounts([2, 4, 6, 8, 10]));
        let mut q = t;
        q += t;
        assert_eq!(q, TrinomialCounts([6, 8, 10]));
        assert_eq!(p.reversed(), PentanomialCounts([5, 4, 3, 2, 1]));
    }

    #[test]
    fn serde_is_a_plain_array() {
        let p = PentanomialCounts([1, 2, 3, 4, 5]);
        assert_eq!(serde_json::to_string(&p).unwrap(), "[1,2,3,4,5]");
        let back: TrinomialCounts = serde_json::from_str("[7,8,9]").unwrap();
        assert_eq!(back, TrinomialCounts([7, 8, 9]));
        assert!(serde_json::from_str::<PentanomialCounts>("[1,2,3]").is_err());
    }
}
