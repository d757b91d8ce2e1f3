//! One look at an SPRT: everything `oracle sprt status` reports, as plain data.

use serde::Serialize;

use super::counts::Counts;
use super::elo::Model;
use super::error::StatsError;
use super::estimate::{fixed_games_elo, normalized_elo, sprt_elo};
use super::llr::llr;
use super::params::{SprtDecision, SprtParams};

/// The status of an SPRT on cumulative counts; its JSON is the `oracle sprt status --json` object.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SprtStatus {
    /// The Elo scale of the bounds.
    pub model: Model,
    /// Generalized log-likelihood ratio of H1 against H0.
    pub llr: f64,
    /// Wald's lower bound ln(β/(1−α)).
    pub lower_bound: f64,
    /// Wald's upper bound ln((1−β)/α).
    pub upper_bound: f64,
    /// The strict decision without overshoot correction (a one-off look).
    pub state: SprtDecision,
    /// Game pairs (trinomial counts: games / 2).
    pub pairs: u64,
    /// Games.
    pub games: u64,
    /// Normalized Elo.
    pub nelo: f64,
    /// nElo 95% interval.
    pub nelo_ci95: [f64; 2],
    /// Median-unbiased logistic Elo of the SPRT (Brownian model).
    pub elo: f64,
    /// Its 95% interval.
    pub elo_ci95: [f64; 2],
    /// Likelihood of superiority of the SPRT estimate.
    pub los: f64,
    /// Logistic Elo as if the games were a fixed-length match.
    pub fixed_games_elo: f64,
    /// Its 95% interval.
    pub fixed_games_elo_ci95: [f64; 2],
    /// Likelihood of superiority as if the games were a fixed-length match (the LOS Fishtest
    /// shows for a test of fixed length: `stat_util.get_elo`).
    pub fixed_games_los: f64,
}

/// Computes the status of an SPRT with parameters `params` on cumulative `counts`
/// (pentanomial pairs or trinomial games).
///
/// # Errors
/// [`StatsError::Unreachable`] when a bound cannot be fitted to the data.
pub fn sprt_status<C: Counts>(counts: &C, params: &SprtParams) -> Result<SprtStatus, StatsError> {
    let llr = llr(counts, params)?;
    let nelo = normalized_elo(counts);
    let elo = sprt_elo(counts, params);
    let fixed = fixed_games_elo(counts);
    Ok(SprtStatus {
        model: params.model,
        llr,
        lower_bound: params.lower_bound(),
        upper_bound: params.upper_bound(),
        state: params.decide(llr, 0.0, 0.0),
        pairs: counts.pairs(),
        games: counts.games(),
        nelo: nelo.nelo,
        nelo_ci95: nelo.ci95,
        elo: elo.elo,
        elo_ci95: elo.ci95,
        los: elo.los,
        fixed_games_elo: fixed.elo,
        fixed_games_elo_ci95: fixed.ci95,
        fixed_games_los: fixed.los,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{PentanomialCounts, TrinomialCounts};

    fn all_finite(s: &SprtStatus) -> bool {
        [
            s.llr,
            s.nelo,
            s.nelo_ci95[0],
            s.nelo_ci95[1],
            s.elo,
            s.elo_ci95[0],
            s.elo_ci95[1],
            s.los,
            s.fixed_games_elo,
            s.fixed_games_elo_ci95[0],
            s.fixed_games_elo_ci95[1],
            s.fixed_games_los,
        ]
        .iter()
        .all(|v| v.is_finite())
    }

    /// Every combination of empty, small and huge buckets, under ordinary and extreme bounds:
    /// finite numbers or the one named error, never NaN.
    #[test]
    fn no_counts_give_nan() {
        let sizes = [0u64, 3, 1_000_000];
        let bounds = [
            (0.0, 2.0),
            (-5.0, 0.0),
            (0.5, 2.5),
            (-1500.0, 0.0),
            (0.0, 300.0),
        ];
        let mut checked = 0;
        for code in 0..3usize.pow(5) {
            let mut buckets = [0u64; 5];
            let mut rest = code;
            for b in &mut buckets {
                *b = sizes[rest % 3];
                rest /= 3;
            }
            for (elo0, elo1) in bounds {
                for model in [Model::Normalized, Model::Logistic] {
                    let params = SprtParams::new(elo0, elo1, 0.05, 0.05, model).unwrap();
                    let results = [
                        sprt_status(&PentanomialCounts(buckets), &params),
                        sprt_status(
                            &TrinomialCounts([buckets[0], buckets[2], buckets[4]]),
                            &params,
                        ),
                    ];
                    for result in results {
                        match result {
                            Ok(status) => {
                                assert!(all_finite(&status), "{buckets:?} {params:?} {status:?}");
                                checked += 1;
                            }
                            Err(StatsError::Unreachable { .. }) => {
                                // Only absurd normalized bounds may be out of the solver's reach.
                                assert!(
                                    model == Model::Normalized && (elo0 < -100.0 || elo1 > 100.0),
                                    "{buckets:?} {params:?}"
                                );
                            }
                            Err(other) => panic!("{buckets:?} {params:?}: {other}"),
                        }
                    }
                }
            }
        }
        assert!(checked > 4000, "{checked}");
    }

    fn close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} vs Fishtest {expected}"
        );
    }

    /// The cases of issue 15 through the whole status, against fishtest's `sprt.py`
    /// (`SPRT_elo`: LLR, Elo, interval, LOS) and `stat_util.get_elo` (the fixed-games Elo, its
    /// half-width and LOS), run with scipy on the same counts. Both LOS figures the issue
    /// quotes are here: 0.94399 and 0.97739 are `get_elo`'s, the fixed-games LOS; the SPRT's
    /// are 0.94496 and 0.99187. For [0, 0, 0, 10, 0] Fishtest, like the oracle, regularizes
    /// the empty buckets to 10⁻³ first; 190.73 is `get_elo`'s Elo, while `SPRT_elo` puts the
    /// SPRT estimate and its interval at its +1000 limit.
    #[test]
    fn issue_cases_match_fishtest() {
        let normalized = |elo0, elo1| SprtParams::new(elo0, elo1, 0.05, 0.05, Model::Normalized);
        let s = sprt_status(
            &PentanomialCounts([0, 0, 0, 10, 0]),
            &normalized(0.0, 2.0).unwrap(),
        )
        .unwrap();
        close(s.llr, 0.057_233_078_627_106_374, 1e-12);
        assert_eq!((s.elo, s.elo_ci95, s.los), (1000.0, [1000.0, 1000.0], 1.0));
        close(s.fixed_games_elo, 190.732_755_611_296_4, 1e-9);
        let half = (s.fixed_games_elo_ci95[1] - s.fixed_games_elo_ci95[0]) / 2.0;
        close(half, 5.556_316_969_043_451, 1e-9);
        close(s.fixed_games_los, 1.0, 1e-12);
        let s = sprt_status(
            &PentanomialCounts([3, 40, 90, 50, 7]),
            &normalized(0.0, 5.0).unwrap(),
        )
        .unwrap();
        close(s.llr, 0.405_629_101_428_861_66, 1e-10);
        close(s.los, 0.944_960_266_812_153_1, 1e-10);
        close(s.fixed_games_los, 0.943_988_052_615_701_5, 1e-12);
        let half = (s.fixed_games_elo_ci95[1] - s.fixed_games_elo_ci95[0]) / 2.0;
        close(half, 20.366_629_882_607_22, 1e-9);
        let s = sprt_status(
            &PentanomialCounts([0, 1, 3, 4, 1]),
            &normalized(0.0, 2.0).unwrap(),
        )
        .unwrap();
        close(s.llr, 0.038_335_062_197_605_55, 1e-10);
        close(s.los, 0.991_874_585_286_112_7, 1e-10);
        close(s.fixed_games_los, 0.977_390_253_435_465_9, 1e-12);
    }
}
