//! Coherent: a UCI chess engine (std only).
#![warn(missing_docs)]

pub mod bench;
pub mod chess;
pub mod eval;
pub mod search;
pub mod tune;
pub mod uci;
