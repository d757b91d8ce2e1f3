//! The rules of chess: board representation, move generation, FEN and perft.

pub mod attacks;
pub mod bitboard;
pub mod fen;
pub mod movegen;
pub mod perft;
pub mod position;
pub mod types;
pub mod zobrist;
