//! The match runner (docs/architecture.md): UCI engines, clocks, books,
//! game rules, PGN, pairs, live SPRT, resumable state and shards.

pub mod book;
pub mod clock;
pub mod compliance;
pub mod cpu_guard;
pub mod cpus;
pub mod fingerprint;
pub mod game;
pub mod interrupt;
pub mod option;
pub mod pgn;
pub mod preflight;
pub mod runner;
mod rusage;
pub mod session;
pub mod shard;
pub mod shard_games;
pub mod spec;
pub mod state;
pub mod stop;
pub mod summary;
pub mod tally;
mod tree_cpu;
pub mod uci;
mod worker;
