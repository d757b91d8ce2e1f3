//! The Coherent oracle: the gatekeeper of the engine's main branch.
//!
//! Each module is one concept of docs/architecture.md; the binary in `main.rs`
//! is a thin command line over them.

pub mod book;
pub mod builder;
pub mod gate;
pub mod governance;
pub mod init;
pub mod integrity;
pub mod measurement;
pub mod play;
pub mod proof;
pub mod report;
pub mod site;
pub mod stats;
pub mod tablebase;
pub mod tune;
pub mod verify;

/// `eprintln!` that cannot panic: a line for a standard error that is closed (`oracle … 2>&1 |
/// head -1`) is dropped, since there is nowhere left to say anything, and the command goes on.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
