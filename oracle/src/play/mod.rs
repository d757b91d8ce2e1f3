//! The match runner (docs/architecture.md): UCI engines, clocks, books,
//! game rules, PGN, pairs, live SPRT, resumable state and shards.

pub mod book;
pub mod clock;
pub mod game;
pub mod option;
pub mod pgn;
pub mod preflight;
pub mod runner;
pub mod shard;
pub mod uci;
