//! The register: `register/T-NNNN.yaml`, one canonical YAML file per entry,
//! each carrying the sha256 of its predecessor's exact bytes.
//!
//! `audit` checks a register given as bytes (pure); `rules` checks an entry against the
//! constitution it was judged under and the chain of custody (for `append` and `verify` alike);
//! `store` reads the register from a repository and appends to it under a lock, never
//! overwriting a file; `report` holds what `oracle register` says about it; `landing` judges
//! what a push to the main branch may change.

pub mod audit;
pub mod landing;
pub mod report;
pub mod rules;
pub mod store;

pub use audit::{Audit, Finding, RegisterFile, audit};
pub use report::{
    Appended, Listing, Refused, ShownEntry, VerifySummary, verify_register, verify_up_to,
};
pub use store::{
    AppendError, EVIDENCE_DIR, GenesisRecord, RECORD_DIRS, REGISTER_DIR, append, genesis,
    read_files, verify, verify_files,
};
