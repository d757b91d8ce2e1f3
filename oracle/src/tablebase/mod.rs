//! The exact endgame solver: retrograde analysis with depth to mate for pawnless endings of
//! up to four pieces, the tables it writes, and the solver as defender.

mod ending;
mod index;
mod movegen;
mod outcome;
mod probe;
mod solve;
mod table;

use std::path::PathBuf;

pub use ending::{Ending, MAX_PIECES};
pub use outcome::Outcome;
pub use probe::Probe;
pub use table::{Counts, Generated, Header, Man, Table, Tablebase, file_name};

/// What can go wrong when solving, loading or probing.
#[derive(Debug, thiserror::Error)]
pub enum TablebaseError {
    /// An ending name that is not a pawnless ending of at most four pieces.
    #[error("ending `{name}`: {reason}")]
    BadEnding {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A position outside the solved endings; the reason comes first (pieces, then pawns,
    /// then castling rights), since a full board with castling rights is first of all too big.
    #[error(
        "not covered by the solver: {0} (it solves pawnless positions of at most 4 pieces \
         without castling rights)"
    )]
    NotCovered(String),
    /// A position where the side not to move is in check, or pieces overlap.
    #[error("illegal position: the side not to move is in check")]
    IllegalPosition,
    /// A table needed for a lookup was not loaded (an internal ordering bug).
    #[error("table {0} is not loaded")]
    NotLoaded(String),
    /// A table file that fails its checks.
    #[error("table file {}: {reason}; delete it to regenerate", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The failed check.
        reason: String,
    },
    /// Reading or writing a table file failed.
    #[error("table file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl From<crate::integrity::FileError> for TablebaseError {
    fn from(error: crate::integrity::FileError) -> Self {
        Self::Io {
            path: error.path,
            source: error.reason,
        }
    }
}
