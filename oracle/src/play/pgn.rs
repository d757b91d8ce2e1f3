//! PGN output: the seven-tag roster plus SetUp/FEN, TimeControl (WhiteTimeControl and
//! BlackTimeControl under time odds), Termination, PlyCount, GameStartTime and GameDuration,
//! SAN movetext with `{score/depth time}` comments after every engine move and `{book}` after
//! book moves; and the reader of that output ([`PgnReader`]), which the merge uses to hold a
//! shard's games against its pairs.

use std::fmt::Write as _;
use std::io::{BufRead, Read as _};

use shakmaty::Position;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;

use super::game::GameRecord;
use super::uci::Score;

/// The tags of a game that do not come from the game itself.
#[derive(Debug, Clone)]
pub struct PgnHeader<'a> {
    /// `Event`.
    pub event: &'a str,
    /// `Site`.
    pub site: &'a str,
    /// `Date` (`YYYY.MM.DD`).
    pub date: &'a str,
    /// `Round` (pair number and game within it, `12.2`).
    pub round: &'a str,
    /// `White`.
    pub white: &'a str,
    /// `Black`.
    pub black: &'a str,
    /// White's and Black's time control: one `TimeControl` tag when they are equal, else
    /// `WhiteTimeControl` and `BlackTimeControl` (as cutechess writes time odds).
    pub time_controls: [&'a str; 2],
    /// `GameStartTime` (`YYYY-MM-DDTHH:MM:SS +0000`, as cutechess writes it).
    pub start_time: &'a str,
    /// `GameDuration` (`HH:MM:SS`).
    pub duration: &'a str,
}

/// A score as PGN comments show it: pawns from the mover's side (`+0.31`) or mate (`+M5`, `-M3`).
pub fn format_score(score: Score) -> String {
    match score {
        Score::Cp(cp) => format!("{:+.2}", f64::from(cp) / 100.0),
        Score::Mate(n) if n > 0 => format!("+M{n}"),
        Score::Mate(n) => format!("-M{}", -i64::from(n)),
    }
}

/// Renders one game as PGN text (ending in a blank line).
pub fn render(header: &PgnHeader<'_>, game: &GameRecord) -> String {
    let mut out = String::with_capacity(1024 + 24 * game.moves.len());
    let mut tag = |name: &str, value: &str| {
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(out, "[{name} \"{escaped}\"]");
    };
    tag("Event", header.event);
    tag("Site", header.site);
    tag("Date", header.date);
    tag("Round", header.round);
    tag("White", header.white);
    tag("Black", header.black);
    tag("Result", game.result.pgn());
    if let Some(fen) = &game.opening.fen {
        tag("SetUp", "1");
        tag("FEN", fen);
    }
    match header.time_controls {
        [white, black] if white == black => tag("TimeControl", white),
        [white, black] => {
            tag("WhiteTimeControl", white);
            tag("BlackTimeControl", black);
        }
    }
    tag("Termination", game.termination.pgn_tag());
    tag(
        "PlyCount",
        &(game.opening.moves.len() + game.moves.len()).to_string(),
    );
    tag("GameStartTime", header.start_time);
    tag("GameDuration", header.duration);
    out.push('\n');

    let mut pos = game.opening.root();
    let mut text = String::new();
    let book = game
        .opening
        .moves
        .iter()
        .map(|m| (m.as_str(), "book".to_string()));
    let played = game.moves.iter().map(|m| {
        let mut comment = match m.score {
            Some(score) => format_score(score),
            None => String::from("?"),
        };
        if let Some(depth) = m.depth {
            let _ = write!(comment, "/{depth}");
        }
        let _ = write!(comment, " {:.3}s", m.elapsed.as_secs_f64());
        (m.uci.as_str(), comment)
    });
    for (uci, comment) in book.chain(played) {
        let m = UciMove::from_ascii(uci.as_bytes())
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .expect("recorded moves were checked when played");
        let number = pos.fullmoves().get();
        let white = pos.turn().is_white();
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
        if white {
            let _ = write!(text, "{number}. ");
        } else if text.is_empty() {
            let _ = write!(text, "{number}... ");
        }
        let _ = write!(text, "{san} {{{comment}}} ");
    }
    let _ = write!(
        text,
        "{{{}}} {}",
        game.reason.replace(['{', '}'], ""),
        game.result.pgn()
    );
    wrap(&text, 79, &mut out);
    out.push_str("\n\n");
    out
}

/// Appends `text` to `out` broken at spaces into lines of at most `width` characters
/// (a single longer token stays whole).
fn wrap(text: &str, width: usize, out: &mut String) {
    let mut line_len = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if line_len > 0 && line_len + 1 + word.len() > width {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += word.len();
    }
}

/// One game of [`render`]'s output read back: its tags and its moves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedGame {
    /// The tag pairs in file order, unescaped.
    pub tags: Vec<(String, String)>,
    /// The moves in SAN, without move numbers, comments or the result.
    pub moves: Vec<String>,
    /// How many of the first moves the book played (each followed by `{book}`).
    pub book_moves: usize,
}

impl ParsedGame {
    /// The value of tag `name`, if the game has it.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(tag, _)| tag == name)
            .map(|(_, value)| value.as_str())
    }
}

/// Why PGN text could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum PgnError {
    /// The bytes could not be read, or are not UTF-8.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A game is not in the form [`render`] writes.
    #[error("game {game}: {reason}")]
    Malformed {
        /// 1-based position of the game in the text.
        game: u64,
        /// What is wrong.
        reason: String,
    },
    /// A game is longer than the reader's bound.
    #[error("game {game} is longer than {limit} bytes")]
    TooLong {
        /// 1-based position of the game in the text.
        game: u64,
        /// The bound.
        limit: u64,
    },
}

/// The game termination markers of PGN.
const RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

/// Reads the games of [`render`]'s output one at a time, each at most `max_game_bytes` long, so
/// that memory stays bounded however large the file is.
pub struct PgnReader<R> {
    reader: R,
    max_game_bytes: u64,
    games: u64,
}

impl<R: BufRead> PgnReader<R> {
    /// A reader of the games in `reader`.
    pub fn new(reader: R, max_game_bytes: u64) -> Self {
        PgnReader {
            reader,
            max_game_bytes,
            games: 0,
        }
    }

    /// The next game, `None` at the end of the text.
    fn read_game(&mut self) -> Result<Option<ParsedGame>, PgnError> {
        let number = self.games + 1;
        let malformed = |reason: String| PgnError::Malformed {
            game: number,
            reason,
        };
        let mut game = ParsedGame::default();
        let mut movetext = Movetext::default();
        let mut line = String::new();
        let mut used = 0u64;
        loop {
            line.clear();
            let room = self.max_game_bytes - used + 1;
            let read = (&mut self.reader).take(room).read_line(&mut line)?;
            used += read as u64;
            if used > self.max_game_bytes {
                return Err(PgnError::TooLong {
                    game: number,
                    limit: self.max_game_bytes,
                });
            }
            if read == 0 {
                if game.tags.is_empty() && !movetext.started {
                    return Ok(None);
                }
                return Err(malformed("the text ends before the game's result".into()));
            }
            let text = line.trim_end_matches(['\n', '\r']);
            if !movetext.started && text.starts_with('[') {
                let tag = parse_tag(text).ok_or_else(|| malformed(format!("tag `{text}`")))?;
                game.tags.push(tag);
                continue;
            }
            if let Some(result) = movetext.feed(text, &mut game).map_err(malformed)? {
                if game.tag("Result") != Some(result) {
                    return Err(malformed(format!(
                        "the movetext ends in {result}, the Result tag differs"
                    )));
                }
                self.games = number;
                return Ok(Some(game));
            }
        }
    }
}

impl<R: BufRead> Iterator for PgnReader<R> {
    type Item = Result<ParsedGame, PgnError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read_game().transpose()
    }
}

/// A tag line `[Name "value"]` with `\\` and `\"` escaped, as [`render`] writes it.
fn parse_tag(line: &str) -> Option<(String, String)> {
    let (name, quoted) = line
        .strip_prefix('[')?
        .strip_suffix("\"]")?
        .split_once(" \"")?;
    let mut value = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => value.push(chars.next()?),
            '"' => return None,
            c => value.push(c),
        }
    }
    Some((name.to_string(), value))
}

/// A game's movetext as it is read line by line: a comment may span lines.
#[derive(Default)]
struct Movetext {
    /// A token of the movetext was seen: tag lines are over.
    started: bool,
    /// The comment being read, when the last line ended inside one.
    comment: Option<String>,
    /// The last token was a move (a `{book}` right after it marks a book move).
    after_move: bool,
}

impl Movetext {
    /// Reads one line into `game`; the result token once the game ends.
    fn feed<'a>(
        &mut self,
        line: &'a str,
        game: &mut ParsedGame,
    ) -> Result<Option<&'a str>, String> {
        let mut rest = line;
        loop {
            if let Some(comment) = &mut self.comment {
                let Some(end) = rest.find('}') else {
                    // The wrap broke the comment at a space.
                    comment.push_str(rest);
                    comment.push(' ');
                    return Ok(None);
                };
                comment.push_str(&rest[..end]);
                if comment == "book" && self.after_move && game.book_moves + 1 == game.moves.len() {
                    game.book_moves += 1;
                }
                self.comment = None;
                self.after_move = false;
                rest = &rest[end + 1..];
                continue;
            }
            rest = rest.trim_start();
            if rest.is_empty() {
                return Ok(None);
            }
            self.started = true;
            if let Some(after) = rest.strip_prefix('{') {
                self.comment = Some(String::new());
                rest = after;
                continue;
            }
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '{')
                .unwrap_or(rest.len());
            let (word, after) = rest.split_at(end);
            rest = after;
            if RESULTS.contains(&word) {
                if !rest.trim().is_empty() {
                    return Err(format!("`{}` after the result {word}", rest.trim()));
                }
                return Ok(Some(word));
            }
            let number = word.trim_end_matches('.');
            if number.len() < word.len() && number.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            if !word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+#=-".contains(c))
            {
                return Err(format!("`{word}` is not a move"));
            }
            game.moves.push(word.to_string());
            self.after_move = true;
        }
    }
}

/// Today's date in UTC as PGN writes it (`YYYY.MM.DD`).
pub fn utc_date() -> String {
    let (year, month, day, _) = utc_civil(std::time::SystemTime::now());
    format!("{year:04}.{month:02}.{day:02}")
}

/// A moment in UTC as cutechess writes `GameStartTime` (`YYYY-MM-DDTHH:MM:SS +0000`).
pub fn utc_timestamp(at: std::time::SystemTime) -> String {
    let (year, month, day, seconds) = utc_civil(at);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02} +0000",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A duration as cutechess writes `GameDuration` (`HH:MM:SS`).
pub fn hours_minutes_seconds(duration: std::time::Duration) -> String {
    let seconds = duration.as_secs();
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// Year, month, day and second of the day of `at` in UTC.
fn utc_civil(at: std::time::SystemTime) -> (i64, i64, i64, u64) {
    let since_epoch = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (since_epoch / 86_400) as i64;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, since_epoch % 86_400)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::play::book::Opening;
    use crate::play::game::{GameResult, MoveRecord, Termination};

    #[test]
    fn renders_tags_book_moves_and_comments() {
        let game = GameRecord {
            opening: Opening {
                fen: None,
                moves: vec!["f2f3".into(), "e7e5".into()],
            },
            moves: vec![
                MoveRecord {
                    uci: "g2g4".into(),
                    score: Some(Score::Cp(-512)),
                    depth: Some(12),
                    elapsed: Duration::from_millis(250),
                    engine_time_ms: Some(249),
                },
                MoveRecord {
                    uci: "d8h4".into(),
                    score: Some(Score::Mate(1)),
                    depth: Some(3),
                    elapsed: Duration::from_micros(1500),
                    engine_time_ms: Some(1),
                },
            ],
            result: GameResult::BlackWins,
            termination: Termination::Normal,
            reason: "Black mates".into(),
            faulted: None,
        };
        let header = PgnHeader {
            event: "test",
            site: "here",
            date: "2026.11.29",
            round: "1.1",
            white: "A",
            black: "B \"quoted\"",
            time_controls: ["8+0.08"; 2],
            start_time: "2026-11-29T12:00:00 +0000",
            duration: "00:01:05",
        };
        insta::assert_snapshot!(render(&header, &game), @r#"
        [Event "test"]
        [Site "here"]
        [Date "2026.11.29"]
        [Round "1.1"]
        [White "A"]
        [Black "B \"quoted\""]
        [Result "0-1"]
        [TimeControl "8+0.08"]
        [Termination "normal"]
        [PlyCount "4"]
        [GameStartTime "2026-11-29T12:00:00 +0000"]
        [GameDuration "00:01:05"]

        1. f3 {book} e5 {book} 2. g4 {-5.12/12 0.250s} Qh4# {+M1/3 0.002s} {Black
        mates} 0-1
        "#);
    }

    /// A game of `moves` (UCI) from `fen` after the book's `book`, every move with a comment.
    fn game_of(fen: Option<&str>, book: &[&str], moves: &[&str], reason: &str) -> GameRecord {
        GameRecord {
            opening: Opening {
                fen: fen.map(str::to_string),
                moves: book.iter().map(|m| m.to_string()).collect(),
            },
            moves: moves
                .iter()
                .map(|uci| MoveRecord {
                    uci: uci.to_string(),
                    score: Some(Score::Cp(31)),
                    depth: Some(12),
                    elapsed: Duration::from_millis(250),
                    engine_time_ms: Some(249),
                })
                .collect(),
            result: GameResult::WhiteWins,
            termination: Termination::Adjudication,
            reason: reason.into(),
            faulted: None,
        }
    }

    fn header(round: &str) -> PgnHeader<'_> {
        PgnHeader {
            event: "read \\ back",
            site: "here",
            date: "2026.11.29",
            round,
            white: "A \"quoted\"",
            black: "B",
            time_controls: ["nodes=300"; 2],
            start_time: "2026-11-29T12:00:00 +0000",
            duration: "00:00:01",
        }
    }

    #[test]
    fn the_reader_reads_back_what_render_writes() {
        let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"].repeat(6);
        let first = game_of(
            None,
            &["e2e4", "e7e5"],
            &shuffle,
            "White {wins} [by] adjudication",
        );
        let fen = "4k3/8/8/8/8/8/8/4K2R b K - 0 1";
        let second = game_of(Some(fen), &[], &["e8d7", "h1h7"], "");
        let text = render(&header("7.1"), &first) + &render(&header("7.2"), &second);
        assert!(text.lines().count() > 30, "comments span lines:\n{text}");
        let games: Vec<ParsedGame> = PgnReader::new(text.as_bytes(), 4096)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(games.len(), 2);
        let [first, second] = [&games[0], &games[1]];
        assert_eq!(first.tag("Event"), Some("read \\ back"));
        assert_eq!(first.tag("White"), Some("A \"quoted\""));
        assert_eq!(first.tag("Round"), Some("7.1"));
        assert_eq!(first.tag("Result"), Some("1-0"));
        assert_eq!(first.tag("Termination"), Some("adjudication"));
        assert_eq!(first.tag("PlyCount"), Some("26"));
        assert_eq!((first.moves.len(), first.book_moves), (26, 2));
        assert_eq!(first.moves[..4], ["e4", "e5", "Nf3", "Nf6"]);
        assert_eq!(second.tag("FEN"), Some(fen));
        assert_eq!(second.moves, ["Kd7", "Rh7+"]);
        assert_eq!(second.book_moves, 0);
    }

    #[test]
    fn the_reader_refuses_what_render_never_writes() {
        let read = |text: &str, limit| {
            PgnReader::new(text.as_bytes(), limit)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())
        };
        let tags = "[Round \"1.1\"]\n[Result \"1-0\"]\n\n";
        // A comment may hold a line that looks like a tag; it stays a comment.
        let games = read(&format!("{tags}1. e4 {{a\n[b \"c\"]}} e5 1-0\n\n"), 4096).unwrap();
        assert_eq!(games[0].moves, ["e4", "e5"]);
        assert_eq!(read("\n\n", 4096).unwrap(), []);
        for (text, error) in [
            (
                format!("{tags}1. e4 e5"),
                "game 1: the text ends before the game's result",
            ),
            (
                format!("{tags}1. e4 0-1\n"),
                "game 1: the movetext ends in 0-1, the Result tag differs",
            ),
            (
                format!("{tags}1. e4 1-0 e5\n"),
                "game 1: `e5` after the result 1-0",
            ),
            (
                format!("{tags}1. e4 (1. d4) 1-0\n"),
                "game 1: `(1.` is not a move",
            ),
            (
                format!("[Round 1.1]\n{tags}1-0\n"),
                "game 1: tag `[Round 1.1]`",
            ),
            (
                format!("{tags}1. e4 {{{}}} 1-0\n", "x".repeat(100)),
                "game 1 is longer than 64 bytes",
            ),
        ] {
            assert_eq!(read(&text, 64).unwrap_err(), error, "{text}");
        }
    }

    #[test]
    fn time_odds_name_each_sides_time_control() {
        let game = GameRecord {
            opening: Opening {
                fen: None,
                moves: Vec::new(),
            },
            moves: Vec::new(),
            result: GameResult::Draw,
            termination: Termination::Adjudication,
            reason: String::new(),
            faulted: None,
        };
        let header = PgnHeader {
            event: "odds",
            site: "here",
            date: "2026.12.01",
            round: "1.2",
            white: "B",
            black: "A",
            time_controls: ["4+0.04", "40/8"],
            start_time: "2026-12-01T21:00:00 +0000",
            duration: "00:00:00",
        };
        let text = render(&header, &game);
        assert!(
            text.contains("[WhiteTimeControl \"4+0.04\"]\n[BlackTimeControl \"40/8\"]\n"),
            "{text}"
        );
        assert!(!text.contains("[TimeControl "), "{text}");
    }

    #[test]
    fn timestamps_and_durations_have_cutechess_shape() {
        let at = std::time::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        assert_eq!(utc_timestamp(at), "2026-11-18T11:06:40 +0000");
        assert_eq!(hours_minutes_seconds(Duration::from_secs(3725)), "01:02:05");
    }

    #[test]
    fn utc_date_has_pgn_shape() {
        let date = utc_date();
        assert_eq!(date.len(), 10);
        assert_eq!(&date[4..5], ".");
        assert!(date.as_str() >= "2024.01.01");
    }
}
