//! PGN output: the seven-tag roster plus SetUp/FEN, TimeControl (WhiteTimeControl and
//! BlackTimeControl under time odds), Termination, PlyCount, GameStartTime and GameDuration,
//! SAN movetext with `{score/depth time}` comments after every engine move and `{book}` after
//! book moves.

use std::fmt::Write as _;

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
