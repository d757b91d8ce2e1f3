//! Standard output for a reader that may stop reading (`oracle … | head -1`).
//!
//! Rust ignores SIGPIPE, so writing to a closed pipe is an error, and `println!` panics on it.
//! The oracle must keep ignoring SIGPIPE: it writes to engines' pipes, and an engine that exits
//! must cost a game, never the oracle. So every command writes through [`write`] (the
//! [`outln!`] and [`out!`] macros): the first failed write is kept, later ones are skipped, and
//! [`lost_status`] turns it into the exit status once the command is done — 141 without a word
//! for a closed pipe, as a shell reports a tool that SIGPIPE ended; 2 with the error on standard
//! error for anything else (a full disk).
//!
//! A command's result is one typed summary ([`Summary`]): [`render`] prints its `Display` for
//! people or, under `--json`, its `Serialize` as one JSON object on one line, so that the two
//! cannot say different things (docs/cli.md, "Output").

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::OnceLock;

use serde::Serialize;

/// The exit status of a command whose standard output was closed by its reader (128 + SIGPIPE).
pub const EXIT_CLOSED: u8 = 141;

/// The first write to standard output that failed.
static FAILED: OnceLock<io::Error> = OnceLock::new();

/// Writes `args` to standard output and flushes it; false (and nothing written) once a write
/// has failed.
pub fn write(args: fmt::Arguments<'_>) -> bool {
    if FAILED.get().is_some() {
        return false;
    }
    let mut stdout = io::stdout().lock();
    match stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        Ok(()) => true,
        Err(error) => {
            // Only the first failure is kept; a second one is the same lost output.
            let _ = FAILED.set(error);
            false
        }
    }
}

/// The exit status that replaces the command's own when its output was lost: [`EXIT_CLOSED`]
/// for a closed pipe, else 2 after naming the error on standard error.
pub fn lost_status() -> Option<ExitCode> {
    let error = FAILED.get()?;
    if error.kind() == io::ErrorKind::BrokenPipe {
        return Some(ExitCode::from(EXIT_CLOSED));
    }
    // Standard error may be gone too; there is nowhere left to complain then.
    let _ = writeln!(io::stderr(), "error: standard output: {error}");
    Some(ExitCode::from(super::EXIT_ERROR))
}

/// `println!` through [`write`]: false once standard output is lost.
macro_rules! outln {
    () => {
        $crate::cli::output::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` through [`write`]: false once standard output is lost.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::output::write(format_args!($($arg)*))
    };
}

pub(crate) use {out, outln};

/// A command's result: its text for people (`Display`, complete with its final newline) and
/// its `--json` object (`Serialize`).
pub trait Summary: Serialize + fmt::Display {
    /// Whether the JSON object's keys are printed in alphabetical order at every level rather
    /// than in field order: the order of the commands whose object was once assembled as a
    /// `serde_json::Value` (`match`, `merge`, `register`), kept so that their output does not
    /// change under those who compare it.
    const SORTED_KEYS: bool = false;
}

/// Prints `summary`: under `json` as one JSON object on one line, else as its text.
///
/// # Errors
/// The summary cannot be serialized (a path that is not UTF-8).
pub fn render<S: Summary>(summary: &S, json: bool) -> serde_json::Result<()> {
    if !json {
        out!("{summary}");
    } else if S::SORTED_KEYS {
        outln!("{}", serde_json::to_value(summary)?);
    } else {
        outln!("{}", serde_json::to_string(summary)?);
    }
    Ok(())
}
