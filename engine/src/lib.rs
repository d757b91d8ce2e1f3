//! Coherent: a UCI chess engine (std only).

pub mod chess;
