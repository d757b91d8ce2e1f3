//! `oracle verify`: the whole gatekeeper, step by step (ARCHITECTURE §1).
//!
//! 1. resolve candidate and predecessor; read the rules from the predecessor; refuse governance changes
//! 2. read the candidate's trailers
//! 3. build both twice, bit-identically; bind their hashes in `--out` before any measurement
//! 4. gate on the candidate; bench of both, the candidate's equal to its trailer
//! 5. Randfall only: the proof fails on the predecessor and passes on the candidate
//! 6. stage 1, then stage 2: an SPRT each on the path's bounds
//! 7. verdict, loss tolerance, the register entry in `--out` (`--append`: into the register)

pub mod binding;
pub mod out;
pub mod resolve;
pub mod steps;
pub mod trailers;
