//! SPSA tuning in Fishtest's form and the end-rule model (docs/spsa.md).
//!
//! `schedule` is the arithmetic of one run, `run` plays a run duel by duel and
//! checkpoints it, `rules` and `pair` turn two runs into adopted values, `model`
//! simulates the whole procedure to compare the end rules; `duel` plays duels through the
//! match runner and `session` plays runs and pairs end to end as `oracle tune` does.

pub mod duel;
pub mod model;
pub mod pair;
pub mod params;
pub mod patch;
pub mod plot;
pub mod rules;
pub mod run;
pub mod schedule;
pub mod session;
