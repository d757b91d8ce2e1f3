//! The games a stage recorded: its PGN as `scripts/keep-evidence.sh` keeps it (gzip, beside the
//! entry), checked against the entry's `pgn_sha256` and read back into moves.
//!
//! The reader knows the oracle's own PGN output (`play::pgn`): tags, then SAN movetext with one
//! `{…}` comment after every move and a last comment with the reason before the result.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, Position};
use thiserror::Error;

use crate::play::book::{fen_of, parse_fen};
use crate::play::pgn::{ParsedGame, PgnReader};

/// The most bytes a stage PGN may hold once decompressed (12,000 games of 200 plies take 60 MB).
pub const MAX_PGN_BYTES: u64 = 512 << 20;

/// One game of a stage PGN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedGame {
    /// Global pair index (0-based; the `Round` tag counts from 1).
    pub pair: u64,
    /// 0 for the pair's first game, 1 for its second (the second number of `Round`).
    pub game: usize,
    /// The `White` tag.
    pub white: String,
    /// The `Black` tag.
    pub black: String,
    /// The `FEN` tag, normalised as the book loader writes it; `None` is the start position.
    pub fen: Option<String>,
    /// Every move from the root in UCI, book moves included.
    pub moves: Vec<String>,
    /// The same moves as the PGN writes them (SAN with check marks).
    pub san: Vec<String>,
    /// The `Result` tag.
    pub result: String,
    /// The `Termination` tag.
    pub termination: String,
}

/// A stage PGN that cannot be used.
#[derive(Debug, Error)]
pub enum RecordedError {
    /// The file is not there.
    #[error("{0}: missing (scripts/keep-evidence.sh keeps each node stage's games there)")]
    Missing(PathBuf),
    /// The file could not be read or decompressed.
    #[error("{path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The file is not PGN as the oracle writes it.
    #[error("{path}: game {game}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based position of the game in the file.
        game: u64,
        /// What is wrong there.
        reason: String,
    },
}

/// Reads `path` (gzip-compressed when it ends in `.gz`), at most [`MAX_PGN_BYTES`] of it.
pub fn read_pgn(path: &Path) -> Result<Vec<u8>, RecordedError> {
    if !path.exists() {
        return Err(RecordedError::Missing(path.to_path_buf()));
    }
    let read_error = |reason: String| RecordedError::Read {
        path: path.to_path_buf(),
        reason,
    };
    let mut bytes = Vec::new();
    let gzipped = path.extension().is_some_and(|ext| ext == "gz");
    if gzipped {
        // The system's gzip, as keep-evidence.sh wrote it; its output is read with a bound.
        let mut child = Command::new("gzip")
            .arg("-dc")
            .arg("--")
            .arg(path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| read_error(format!("cannot run gzip: {e}")))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let read = stdout.take(MAX_PGN_BYTES + 1).read_to_end(&mut bytes);
        if bytes.len() as u64 > MAX_PGN_BYTES {
            let _ = child.kill();
        }
        let output = child
            .wait_with_output()
            .map_err(|e| read_error(e.to_string()))?;
        read.map_err(|e| read_error(e.to_string()))?;
        if bytes.len() as u64 <= MAX_PGN_BYTES && !output.status.success() {
            return Err(read_error(format!(
                "gzip -dc failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
    } else {
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_PGN_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| read_error(e.to_string()))?;
    }
    if bytes.len() as u64 > MAX_PGN_BYTES {
        return Err(read_error(format!(
            "more than {MAX_PGN_BYTES} bytes of PGN; no stage records that many"
        )));
    }
    Ok(bytes)
}

/// The games of a stage PGN, in file order; `path` only names the file in errors. The text is
/// read by the renderer's own reader (`play::pgn::PgnReader`); the moves are then played from the
/// game's position, so each one is known legal and known in UCI.
pub fn parse_games(text: &str, path: &Path) -> Result<Vec<RecordedGame>, RecordedError> {
    let invalid = |game: u64, reason: String| RecordedError::Invalid {
        path: path.to_path_buf(),
        game,
        reason,
    };
    PgnReader::new(text.as_bytes(), MAX_PGN_BYTES)
        .zip(1u64..)
        .map(|(parsed, number)| {
            let parsed = parsed.map_err(|error| invalid(number, error.to_string()))?;
            game(&parsed).map_err(|reason| invalid(number, reason))
        })
        .collect()
}

/// One recorded game from the reader's tags and SAN moves, its moves checked from the root.
fn game(parsed: &ParsedGame) -> Result<RecordedGame, String> {
    let value = |name: &str| {
        parsed
            .tag(name)
            .map(str::to_owned)
            .ok_or_else(|| format!("no `{name}` tag"))
    };
    let round = value("Round")?;
    let (pair, game) = round
        .split_once('.')
        .and_then(|(pair, game)| Some((pair.parse::<u64>().ok()?, game.parse::<usize>().ok()?)))
        .filter(|&(pair, game)| pair >= 1 && (1..=2).contains(&game))
        .ok_or_else(|| format!("Round `{round}` is not PAIR.GAME (game 1 or 2)"))?;
    let fen = match parsed.tag("FEN") {
        Some(fen) => Some(fen_of(&parse_fen(fen)?)),
        None => None,
    };
    let mut pos = match &fen {
        Some(fen) => parse_fen(fen)?,
        None => Chess::default(),
    };
    let mut moves = Vec::with_capacity(parsed.moves.len());
    for text in &parsed.moves {
        let m = SanPlus::from_ascii(text.as_bytes())
            .ok()
            .and_then(|san| san.san.to_move(&pos).ok())
            .ok_or_else(|| format!("illegal move `{text}` in {}", fen_of(&pos)))?;
        moves.push(m.to_uci(CastlingMode::Standard).to_string());
        pos.play_unchecked(m);
    }
    Ok(RecordedGame {
        pair: pair - 1,
        game: game - 1,
        white: value("White")?,
        black: value("Black")?,
        fen,
        moves,
        san: parsed.moves.clone(),
        result: value("Result")?,
        termination: value("Termination")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_GAMES: &str = r#"[Event "oracle verify stage 1 short"]
[Site "oracle match"]
[Date "2026.12.06"]
[Round "3.1"]
[White "candidate"]
[Black "predecessor"]
[Result "0-1"]
[TimeControl "nodes=600"]
[Termination "normal"]
[PlyCount "4"]
[GameStartTime "2026-12-06T02:46:53 +0000"]
[GameDuration "00:00:01"]

1. f3 {book} e5 {book} 2. g4 {-5.12/12 0.250s} Qh4# {+M1/3 0.002s} {Black
mates} 0-1

[Event "oracle verify stage 1 short"]
[Round "3.2"]
[White "predecessor"]
[Black "candidate"]
[Result "1/2-1/2"]
[SetUp "1"]
[FEN "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"]
[Termination "adjudication"]

1... Kd7 {+0.00/1 0.001s} 2. e4 {+0.50/1 0.001s} {Draw by adjudication}
1/2-1/2

"#;

    #[test]
    fn reads_rounds_colours_positions_and_moves_of_the_oracles_pgn() {
        let games = parse_games(TWO_GAMES, Path::new("games.pgn")).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!((games[0].pair, games[0].game), (2, 0));
        assert_eq!(games[0].white, "candidate");
        assert_eq!(games[0].fen, None);
        assert_eq!(games[0].moves, ["f2f3", "e7e5", "g2g4", "d8h4"]);
        assert_eq!(games[0].san, ["f3", "e5", "g4", "Qh4#"]);
        assert_eq!(games[0].result, "0-1");
        assert_eq!((games[1].pair, games[1].game), (2, 1));
        assert_eq!(
            games[1].fen.as_deref(),
            Some("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1")
        );
        assert_eq!(games[1].moves, ["e8d7", "e2e4"]);
        assert_eq!(games[1].termination, "adjudication");
    }

    #[test]
    fn an_illegal_move_or_a_bad_round_is_named_with_its_game() {
        let illegal = TWO_GAMES.replace("2. g4", "2. Ke3");
        let error = parse_games(&illegal, Path::new("games.pgn"))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("games.pgn: game 1: illegal move `Ke3`"),
            "{error}"
        );
        let round = TWO_GAMES.replace("\"3.2\"", "\"3.3\"");
        let error = parse_games(&round, Path::new("games.pgn"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("Round `3.3` is not PAIR.GAME"), "{error}");
    }

    #[test]
    fn gzip_is_read_and_a_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("stage-1-short.pgn");
        std::fs::write(&plain, TWO_GAMES).unwrap();
        let status = Command::new("gzip").arg("-k").arg(&plain).status().unwrap();
        assert!(status.success());
        let bytes = read_pgn(&dir.path().join("stage-1-short.pgn.gz")).unwrap();
        assert_eq!(bytes, TWO_GAMES.as_bytes());
        let missing = dir.path().join("stage-2-long.pgn.gz");
        let error = read_pgn(&missing).unwrap_err().to_string();
        assert!(error.contains("stage-2-long.pgn.gz: missing"), "{error}");
    }
}
