//! SPSA tuning in Fishtest's form and the end-rule model of seed 000 (SPSA.md).
//!
//! `schedule` is the arithmetic of one run, `rules` turns two runs into adopted
//! values, `model` simulates both to compare the rules.

pub mod model;
pub mod pair;
pub mod params;
pub mod rules;
pub mod run;
pub mod schedule;
