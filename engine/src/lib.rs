//! Coherent: a UCI chess engine (std only).

pub mod bench;
pub mod chess;
pub mod eval;
pub mod search;
pub mod tune;
pub mod uci;
