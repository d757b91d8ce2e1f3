//! Coherent: a UCI chess engine.
