//! The oracle's integration tests, one binary: they drive the real `oracle` binary on real git
//! repositories, fixture engines and the workspace's own engine. One module a subject; what they
//! share is in `support`, the fixture files in `fixtures/`, the insta snapshots in `snapshots/`.
//!
//! `oracle/Cargo.toml` sets `autotests = false`: a file in `tests/` is compiled only when it is
//! declared here.

mod support;

mod book;
mod build;
mod engine_contract;
mod gate;
mod init;
mod keep_evidence;
mod landing;
mod play;
mod proof;
mod register;
mod register_append;
mod register_constitution;
mod register_diff;
mod register_site;
mod run_workflow;
mod sprt;
mod tablebase;
mod tune_model;
mod tune_run;
mod verify;
mod workflows;
