//! The Coherent oracle: the gatekeeper of the engine's main branch.
//!
//! Each module is one concept of docs/architecture.md; the binary in `main.rs`
//! is a thin command line over them.

pub mod book;
pub mod build;
pub mod gate;
pub mod governance;
pub mod integrity;
pub mod play;
pub mod proof;
pub mod report;
pub mod site;
pub mod stats;
pub mod tablebase;
pub mod tune;
pub mod verify;
