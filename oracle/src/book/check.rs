//! `oracle book check`: is a book usable for a match, and what does it hold?
//!
//! Loading (legality, parse errors with line numbers) is the match runner's own
//! book reader, so a book that passes here is a book the runner accepts; this
//! adds the checks a book must pass beyond loading: every position once, and the
//! counts per side to move.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;

use serde::Serialize;
use shakmaty::{Chess, Color, Position};

use super::position::key;
use crate::play::book::{Book, BookError, BookFormat, play_uci_moves};

/// A position that occurs more than once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Duplicate {
    /// The position (EPD without counters).
    pub epd: String,
    /// Where it occurs: line numbers for EPD books, 1-based game numbers for PGN.
    pub at: Vec<usize>,
}

/// A line of the book file quoted exactly as it is there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QuotedLine {
    /// The 1-based line number.
    pub line: usize,
    /// The line's text, unchanged (the error message may show it parsed or normalized).
    pub text: String,
}

/// What `book check` found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The book file.
    pub file: String,
    /// EPD or PGN.
    pub format: BookFormat,
    /// sha256 of the file's bytes.
    pub sha256: String,
    /// Openings in the book.
    pub positions: usize,
    /// Openings with White to move after the book moves.
    pub white_to_move: usize,
    /// Openings with Black to move after the book moves.
    pub black_to_move: usize,
    /// Distinct positions.
    pub unique: usize,
    /// Positions that occur more than once.
    pub duplicates: Vec<Duplicate>,
    /// Why the book cannot be loaded at all (names the line), if so.
    pub error: Option<String>,
    /// The line the error names, as it is in the file.
    pub bad_line: Option<QuotedLine>,
}

impl Report {
    /// True when the book loads and has no repeated position.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.error.is_none() && self.duplicates.is_empty()
    }
}

/// The report for people: the book, then its error or its counts, duplicates and verdict.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "book      {} ({:?})", self.file, self.format)?;
        if let Some(error) = &self.error {
            writeln!(f, "invalid   {error}")?;
            if let Some(quoted) = &self.bad_line {
                writeln!(f, "line {:<5}{}", quoted.line, quoted.text)?;
            }
            return Ok(());
        }
        writeln!(f, "sha256    {}", self.sha256)?;
        writeln!(
            f,
            "positions {} ({} unique; {} white to move, {} black to move)",
            self.positions, self.unique, self.white_to_move, self.black_to_move
        )?;
        let place = match self.format {
            BookFormat::Epd => "lines",
            BookFormat::Pgn => "games",
        };
        for duplicate in &self.duplicates {
            let at: Vec<String> = duplicate.at.iter().map(ToString::to_string).collect();
            writeln!(
                f,
                "duplicate {} at {place} {}",
                duplicate.epd,
                at.join(", ")
            )?;
        }
        writeln!(f, "{}", if self.is_valid() { "valid" } else { "invalid" })
    }
}

/// Checks the book at `path`; PGN games are cut after `plies` half-moves as a match would.
/// Only an unreadable file is an `Err`; an invalid book is a report with `error` set.
pub fn check(path: &Path, plies: usize) -> Result<Report, BookError> {
    let format = BookFormat::from_path(path);
    let mut report = Report {
        file: path.display().to_string(),
        format,
        sha256: String::new(),
        positions: 0,
        white_to_move: 0,
        black_to_move: 0,
        unique: 0,
        duplicates: Vec::new(),
        error: None,
        bad_line: None,
    };
    let book = match Book::load(path, format, plies) {
        Ok(book) => book,
        Err(e @ (BookError::Invalid { .. } | BookError::Empty(_))) => {
            if let BookError::Invalid { line, .. } = e {
                report.bad_line = quote_line(path, line);
            }
            report.error = Some(e.to_string());
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    report.sha256 = book.sha256.clone();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let places = match format {
        BookFormat::Epd => epd_lines(&text),
        BookFormat::Pgn => (1..=book.openings.len()).collect(),
    };
    let mut seen: HashMap<String, Vec<usize>> = HashMap::new();
    let mut order = Vec::new();
    for (pos, &place) in final_positions(&book).iter().zip(&places) {
        match pos.turn() {
            Color::White => report.white_to_move += 1,
            Color::Black => report.black_to_move += 1,
        }
        let k = key(pos);
        let at = seen.entry(k.clone()).or_default();
        if at.is_empty() {
            order.push(k);
        }
        at.push(place);
    }
    report.positions = book.openings.len();
    report.unique = order.len();
    report.duplicates = order
        .into_iter()
        .filter_map(|epd| {
            let at = seen.remove(&epd)?;
            (at.len() > 1).then_some(Duplicate { epd, at })
        })
        .collect();
    Ok(report)
}

/// Line `line` (1-based) of the file at `path` as it is there, if it can be read.
fn quote_line(path: &Path, line: usize) -> Option<QuotedLine> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes)
        .lines()
        .nth(line.checked_sub(1)?)?
        .to_owned();
    Some(QuotedLine { line, text })
}

/// The position each opening reaches after its book moves.
fn final_positions(book: &Book) -> Vec<Chess> {
    book.openings
        .iter()
        .map(|o| play_uci_moves(o.root(), &o.moves).expect("the book reader validated every move"))
        .collect()
}

/// The distinct positions of a valid book (what `book generate --exclude` keeps out).
pub fn positions(path: &Path, plies: usize) -> Result<HashSet<String>, BookError> {
    let book = Book::load(path, BookFormat::from_path(path), plies)?;
    Ok(final_positions(&book).iter().map(key).collect())
}

/// Line numbers of the lines the EPD reader takes as positions (not blank, not `#`).
fn epd_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#')
        })
        .map(|(i, _)| i + 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(text: &str, ext: &str) -> tempfile::NamedTempFile {
        let file = tempfile::Builder::new().suffix(ext).tempfile().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    const E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -";
    const D4: &str = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -";
    const NF3_NF6: &str = "rnbqkb1r/pppppppp/5n2/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq -";

    #[test]
    fn counts_sides_and_finds_duplicates_with_their_lines() {
        let f = book(
            &format!("{E4}\n# note\n{D4} 0 1\n\n{NF3_NF6}\n{E4} c0 \"again\";\n"),
            ".epd",
        );
        let r = check(f.path(), usize::MAX).unwrap();
        assert_eq!((r.positions, r.unique), (4, 3));
        assert_eq!((r.white_to_move, r.black_to_move), (1, 3));
        assert_eq!(
            r.duplicates,
            vec![Duplicate {
                epd: E4.into(),
                at: vec![1, 6]
            }]
        );
        assert!(!r.is_valid());
        assert_eq!(r.sha256.len(), 64);
    }

    #[test]
    fn a_clean_book_is_valid() {
        let f = book(&format!("{E4}\n{D4}\n{NF3_NF6}\n"), ".epd");
        let r = check(f.path(), usize::MAX).unwrap();
        assert!(r.is_valid(), "{r:?}");
        assert_eq!(r.unique, 3);
    }

    #[test]
    fn an_illegal_line_is_named_and_quoted_as_written() {
        let written = "  K6K/8/8/8/8/8/8/k7   w - - c0 \"x\";";
        let f = book(&format!("{E4}\n{written}\n"), ".epd");
        let r = check(f.path(), usize::MAX).unwrap();
        let err = r.error.unwrap();
        assert!(err.contains(":2:"), "{err}");
        assert_eq!(
            r.bad_line,
            Some(QuotedLine {
                line: 2,
                text: written.into()
            })
        );
        let f = book("[Event \"a\"]\n\n1. e4 e5 2. Qxf7 *\n", ".pgn");
        let r = check(f.path(), usize::MAX).unwrap();
        assert_eq!(r.bad_line.unwrap().text, "1. e4 e5 2. Qxf7 *");
    }

    #[test]
    fn pgn_transpositions_are_duplicates_by_game_number() {
        let f = book(
            "[Event \"a\"]\n\n1. Nf3 Nf6 2. Nc3 Nc6 *\n\n[Event \"b\"]\n\n1. e4 e5 *\n\n\
             [Event \"c\"]\n\n1. Nc3 Nc6 2. Nf3 Nf6 *\n",
            ".pgn",
        );
        let r = check(f.path(), usize::MAX).unwrap();
        assert_eq!((r.positions, r.unique), (3, 2));
        assert_eq!(r.duplicates[0].at, vec![1, 3]);
        assert_eq!(r.white_to_move, 3);
    }
}
