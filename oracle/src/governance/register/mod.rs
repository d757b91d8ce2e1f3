//! The register: `register/T-NNNN.yaml`, one canonical YAML file per entry,
//! each carrying the sha256 of its predecessor's exact bytes.
//!
//! `audit` checks a register given as bytes (pure); `store` reads it from a
//! repository and appends to it under a lock, never overwriting a file.

pub mod audit;
pub mod store;

pub use audit::{Audit, Finding, RegisterFile, audit};
pub use store::{AppendError, GenesisRecord, REGISTER_DIR, append, genesis, read_files, verify};
