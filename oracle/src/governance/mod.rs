//! Governance: the constitution the oracle enforces, the verdict it derives
//! and the hash-chained register it writes (docs/architecture.md).
//!
//! Pure parts (`verdict`, `canonical`, the checks in `register::audit`) take
//! data and return data; file access, locking and the clock live in
//! `register::store` and `constitution::load`.

pub mod adjudication;
pub mod canonical;
pub mod confirmation;
pub mod constitution;
pub mod contract;
pub mod entry;
pub mod hash;
pub mod register;
pub mod replay;
mod text;
pub mod time_control;
pub mod timestamp;
pub mod verdict;

pub use constitution::Constitution;
pub use entry::Entry;
pub use verdict::{Decision, Evidence, decide};
