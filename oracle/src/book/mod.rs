//! Opening books A and B (docs/architecture.md): generation from the engine
//! itself and validation of any EPD/PGN book.

pub mod check;
pub mod generate;
pub mod position;
