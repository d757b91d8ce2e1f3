//! Opening books (EPD and PGN) and the seeded order in which a match plays them.
//!
//! Every opening is checked with `shakmaty` when the book is loaded, so a bad line is
//! reported with its file and line number before any engine is started.

use std::fmt;
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

/// The format of a book file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum BookFormat {
    /// One position per line (FEN fields; operations after them are ignored).
    Epd,
    /// Games; the first `plies` half-moves of each are the opening.
    Pgn,
}

impl BookFormat {
    /// The format implied by a file name: `.pgn` is PGN, anything else EPD.
    pub fn from_path(path: &Path) -> BookFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("pgn") => BookFormat::Pgn,
            _ => BookFormat::Epd,
        }
    }
}

/// The order in which a match reads its book.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum BookOrder {
    /// Shuffled by the match seed (ChaCha8), so that a short match samples the whole book.
    #[default]
    Random,
    /// File order, as cutechess and fastchess read a book by default.
    Sequential,
}

/// One opening: a root position (`None` is the standard start) and the book moves played from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opening {
    /// FEN of the root, or `None` for the standard starting position.
    pub fen: Option<String>,
    /// Book moves from the root in UCI notation (empty for EPD books).
    pub moves: Vec<String>,
}

impl Opening {
    /// The root position.
    pub fn root(&self) -> Chess {
        match &self.fen {
            None => Chess::default(),
            Some(fen) => parse_fen(fen).expect("book openings are validated when loaded"),
        }
    }
}

/// Why a book could not be used.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    /// The file could not be read.
    #[error("cannot read book {path}: {source}")]
    Read {
        /// The book file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A line or game of the book is invalid.
    #[error("{path}:{line}: {reason}")]
    Invalid {
        /// The book file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong there.
        reason: String,
    },
    /// The book has no openings.
    #[error("book {0} contains no openings")]
    Empty(PathBuf),
}

/// A loaded, validated book.
#[derive(Debug, Clone)]
pub struct Book {
    /// The openings in file order.
    pub openings: Vec<Opening>,
    /// sha256 of the file's bytes (hex), binding a match result to its book.
    pub sha256: String,
}

impl Book {
    /// Reads and validates a book; PGN games are cut to their first `plies` half-moves.
    pub fn load(path: &Path, format: BookFormat, plies: usize) -> Result<Book, BookError> {
        let bytes = std::fs::read(path).map_err(|source| BookError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let sha256 = crate::integrity::sha256_hex(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let invalid = |line: usize, reason: String| BookError::Invalid {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let openings = match format {
            BookFormat::Epd => parse_epd(&text).map_err(|(l, r)| invalid(l, r))?,
            BookFormat::Pgn => parse_pgn(&text, plies).map_err(|(l, r)| invalid(l, r))?,
        };
        if openings.is_empty() {
            return Err(BookError::Empty(path.to_path_buf()));
        }
        Ok(Book { openings, sha256 })
    }

    /// Reads the book at `path`, or without one the standard start position as its only opening
    /// (hashed as the one-line EPD book holding it, so that the two are the same match).
    pub fn load_or_start(
        path: Option<&Path>,
        format: BookFormat,
        plies: usize,
    ) -> Result<Book, BookError> {
        match path {
            Some(path) => Book::load(path, format, plies),
            None => Ok(Book {
                openings: vec![Opening {
                    fen: None,
                    moves: Vec::new(),
                }],
                sha256: crate::integrity::sha256_hex(
                    format!("{}\n", fen_of(&Chess::default())).as_bytes(),
                ),
            }),
        }
    }

    /// The opening of pair `pair`: the book in `order` (shuffled by `seed` with ChaCha8, or
    /// as in the file), read cyclically from `offset`.
    pub fn schedule(&self, order: BookOrder, seed: u64, offset: usize) -> Schedule {
        let mut indices: Vec<usize> = (0..self.openings.len()).collect();
        if order == BookOrder::Random {
            indices.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        }
        Schedule {
            order: indices,
            offset,
        }
    }
}

/// The seeded opening order of a match.
#[derive(Debug, Clone)]
pub struct Schedule {
    order: Vec<usize>,
    offset: usize,
}

impl Schedule {
    /// The book index of the opening played by pair `pair` (global pair index).
    pub fn opening_of(&self, pair: u64) -> usize {
        let n = self.order.len() as u64;
        self.order[((self.offset as u64 + pair) % n) as usize]
    }
}

/// Parses and validates a FEN into a position.
pub fn parse_fen(fen: &str) -> Result<Chess, String> {
    let parsed =
        Fen::from_ascii(fen.as_bytes()).map_err(|e| format!("invalid FEN `{fen}`: {e}"))?;
    parsed
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("illegal position `{fen}`: {e}"))
}

/// The FEN of a position as engines and PGN readers expect it.
pub fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// Parses an EPD book: the first four fields of each non-empty, non-comment line.
fn parse_epd(text: &str) -> Result<Vec<Opening>, (usize, String)> {
    let mut openings = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_ascii_whitespace().take(4).collect();
        if fields.len() < 4 {
            return Err((index + 1, format!("expected 4 FEN fields, got `{line}`")));
        }
        let pos = parse_fen(&format!("{} 0 1", fields.join(" "))).map_err(|e| (index + 1, e))?;
        if pos.is_game_over() {
            return Err((index + 1, format!("position `{line}` is already decided")));
        }
        openings.push(Opening {
            fen: Some(fen_of(&pos)),
            moves: Vec::new(),
        });
    }
    Ok(openings)
}

/// A PGN game being read: where it started, its root and the moves kept so far.
struct PgnGame {
    line: usize,
    fen: Option<String>,
    pos: Chess,
    moves: Vec<String>,
}

impl PgnGame {
    fn new(line: usize) -> PgnGame {
        PgnGame {
            line,
            fen: None,
            pos: Chess::default(),
            moves: Vec::new(),
        }
    }
}

/// Parses a PGN book: tags (`FEN` is honoured), movetext without comments, variations and NAGs.
fn parse_pgn(text: &str, plies: usize) -> Result<Vec<Opening>, (usize, String)> {
    let mut openings = Vec::new();
    let mut game: Option<PgnGame> = None;
    let mut in_movetext = false;
    let mut comment_depth = 0usize;
    let mut variation_depth = 0usize;
    let finish =
        |game: Option<PgnGame>, openings: &mut Vec<Opening>| -> Result<(), (usize, String)> {
            if let Some(g) = game {
                if g.moves.len() < plies && g.pos.is_game_over() {
                    return Err((
                        g.line,
                        format!(
                            "game ends after {} plies, fewer than {plies}",
                            g.moves.len()
                        ),
                    ));
                }
                openings.push(Opening {
                    fen: g.fen,
                    moves: g.moves,
                });
            }
            Ok(())
        };
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim();
        if comment_depth == 0 && line.starts_with('[') {
            if in_movetext {
                finish(game.take(), &mut openings)?;
                in_movetext = false;
            }
            let g = game.get_or_insert_with(|| PgnGame::new(number));
            if let Some(value) = tag_value(line, "FEN") {
                let pos = parse_fen(value).map_err(|e| (number, e))?;
                g.fen = Some(fen_of(&pos));
                g.pos = pos;
            }
            continue;
        }
        if line.starts_with('%') {
            continue;
        }
        let mut rest = line;
        while !rest.is_empty() {
            if comment_depth > 0 {
                match rest.find('}') {
                    Some(end) => {
                        comment_depth = 0;
                        rest = &rest[end + 1..];
                    }
                    None => rest = "",
                }
                continue;
            }
            rest = rest.trim_start();
            let Some(first) = rest.chars().next() else {
                break;
            };
            match first {
                '{' => {
                    comment_depth = 1;
                    rest = &rest[1..];
                }
                ';' => rest = "",
                '(' => {
                    variation_depth += 1;
                    rest = &rest[1..];
                }
                ')' => {
                    variation_depth = variation_depth.saturating_sub(1);
                    rest = &rest[1..];
                }
                _ => {
                    let end = rest
                        .find(|c: char| c.is_whitespace() || "{}();".contains(c))
                        .unwrap_or(rest.len());
                    let token = &rest[..end];
                    rest = &rest[end..];
                    if variation_depth > 0 {
                        continue;
                    }
                    in_movetext = true;
                    let g = game.get_or_insert_with(|| PgnGame::new(number));
                    if matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*") {
                        finish(game.take(), &mut openings)?;
                        in_movetext = false;
                        continue;
                    }
                    let san = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                    let san = san.trim_end_matches(['!', '?']);
                    if san.is_empty() || san.starts_with('$') || g.moves.len() >= plies {
                        continue;
                    }
                    let parsed = SanPlus::from_ascii(san.as_bytes())
                        .map_err(|e| (number, format!("bad move `{token}`: {e}")))?;
                    let m = parsed.san.to_move(&g.pos).map_err(|e| {
                        (
                            number,
                            format!("illegal move `{token}` in {}: {e}", fen_of(&g.pos)),
                        )
                    })?;
                    g.moves.push(m.to_uci(CastlingMode::Standard).to_string());
                    g.pos.play_unchecked(m);
                }
            }
        }
    }
    finish(game.take(), &mut openings)?;
    Ok(openings)
}

/// The value of a PGN tag line `[Name "value"]` when its name is `name`.
fn tag_value<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?.trim();
    let (tag, value) = inner.split_once(char::is_whitespace)?;
    (tag == name).then(|| value.trim().trim_matches('"'))
}

/// Plays UCI moves from `pos`, checking each; the error names the first bad move.
pub fn play_uci_moves(mut pos: Chess, moves: &[String]) -> Result<Chess, String> {
    for text in moves {
        let m = UciMove::from_ascii(text.as_bytes())
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .ok_or_else(|| format!("illegal move `{text}` in {}", fen_of(&pos)))?;
        pos.play_unchecked(m);
    }
    Ok(pos)
}

impl fmt::Display for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.fen.as_deref().unwrap_or("startpos"))?;
        if !self.moves.is_empty() {
            write!(f, " moves {}", self.moves.join(" "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str, ext: &str) -> tempfile::NamedTempFile {
        let file = tempfile::Builder::new().suffix(ext).tempfile().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    #[test]
    fn epd_book_is_validated_with_line_numbers() {
        let file = write(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 hmvc 0; id \"e4\";\n\n\
             # comment\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n",
            ".epd",
        );
        let book = Book::load(file.path(), BookFormat::Epd, 0).unwrap();
        assert_eq!(book.openings.len(), 2);
        // The en-passant square is dropped when no capture is possible (legal mode).
        assert_eq!(
            book.openings[0].fen.as_deref(),
            Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
        );
        assert_eq!(book.sha256.len(), 64);

        let bad = write("8/8/8/8/8/8/8/8 w - -\n", ".epd");
        let error = Book::load(bad.path(), BookFormat::Epd, 0)
            .unwrap_err()
            .to_string();
        assert!(error.ends_with(":1: illegal position `8/8/8/8/8/8/8/8 w - - 0 1`: illegal position: empty board, missing king"), "{error}");
    }

    #[test]
    fn pgn_book_keeps_the_first_plies_and_skips_comments_and_variations() {
        let file = write(
            "[Event \"a\"]\n[Site \"?\"]\n\n1. e4 {best by test} e5 (1... c5 2. Nf3) 2. Nf3 $1 Nc6 3. Bb5 a6 1-0\n\n\
             [Event \"b\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n[SetUp \"1\"]\n\n1. e4 Kd7 2. Kd2 *\n",
            ".pgn",
        );
        assert_eq!(BookFormat::from_path(file.path()), BookFormat::Pgn);
        let book = Book::load(file.path(), BookFormat::Pgn, 4).unwrap();
        assert_eq!(
            book.openings[0],
            Opening {
                fen: None,
                moves: vec!["e2e4".into(), "e7e5".into(), "g1f3".into(), "b8c6".into()]
            }
        );
        assert_eq!(
            book.openings[1].fen.as_deref(),
            Some("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
        );
        assert_eq!(book.openings[1].moves, vec!["e2e4", "e8d7", "e1d2"]);

        let bad = write("[Event \"a\"]\n\n1. e4 e5\n2. Ke3 *\n", ".pgn");
        let error = Book::load(bad.path(), BookFormat::Pgn, 8)
            .unwrap_err()
            .to_string();
        assert!(error.contains(":4: illegal move `Ke3`"), "{error}");
    }

    #[test]
    fn schedule_is_a_seeded_permutation_read_from_the_offset() {
        let book = Book {
            openings: (0..10)
                .map(|_| Opening {
                    fen: None,
                    moves: Vec::new(),
                })
                .collect(),
            sha256: String::new(),
        };
        let a = book.schedule(BookOrder::Random, 7, 0);
        let mut seen: Vec<usize> = (0..10).map(|p| a.opening_of(p)).collect();
        assert_eq!(
            book.schedule(BookOrder::Random, 7, 0).opening_of(3),
            a.opening_of(3)
        );
        assert_eq!(
            book.schedule(BookOrder::Random, 7, 3).opening_of(0),
            a.opening_of(3)
        );
        assert_eq!(a.opening_of(12), a.opening_of(2));
        assert_ne!(seen, (0..10).collect::<Vec<_>>());
        seen.sort_unstable();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        let sequential = book.schedule(BookOrder::Sequential, 7, 3);
        let read: Vec<usize> = (0..12).map(|p| sequential.opening_of(p)).collect();
        assert_eq!(read, [3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4]);
    }

    #[test]
    fn no_book_is_the_start_position_hashed_as_its_one_line_epd() {
        let dir = tempfile::tempdir().unwrap();
        let epd = dir.path().join("start.epd");
        std::fs::write(
            &epd,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n",
        )
        .unwrap();
        let from_file = Book::load(&epd, BookFormat::Epd, 8).unwrap();
        let start = Book::load_or_start(None, BookFormat::Epd, 8).unwrap();
        assert_eq!(start.sha256, from_file.sha256);
        assert_eq!(start.openings.len(), 1);
        assert_eq!(start.openings[0].root(), Chess::default());
    }
}
