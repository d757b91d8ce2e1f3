//! Position lists: FEN or EPD lines, with the EPD operations `bm`, `am` and `id`.

use std::path::Path;

use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, Position};

use super::ProofError;

/// One parsed FEN or EPD line.
#[derive(Clone, Debug)]
pub struct EpdLine {
    /// The position (clocks 0 1 when the line is EPD).
    pub position: Chess,
    /// Best moves (`bm`), as UCI.
    pub best: Vec<String>,
    /// Avoid moves (`am`), as UCI.
    pub avoid: Vec<String>,
    /// The `id` operation, if any.
    pub id: Option<String>,
}

/// Parses a FEN (6 fields) or an EPD line (4 fields and `;`-terminated operations).
pub fn parse_epd(line: &str) -> Result<EpdLine, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 4 {
        return Err(format!("`{line}` has fewer than 4 FEN fields"));
    }
    let clocks =
        fields.len() >= 6 && fields[4].parse::<u32>().is_ok() && fields[5].parse::<u32>().is_ok();
    let (fen, ops) = if clocks {
        (fields[..6].join(" "), fields[6..].join(" "))
    } else {
        (
            format!("{} 0 1", fields[..4].join(" ")),
            fields[4..].join(" "),
        )
    };
    let position: Chess = fen
        .parse::<Fen>()
        .map_err(|e| format!("invalid FEN `{fen}`: {e}"))?
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("illegal position `{fen}`: {e}"))?;
    let mut parsed = EpdLine {
        position,
        best: Vec::new(),
        avoid: Vec::new(),
        id: None,
    };
    for op in ops.split(';').map(str::trim).filter(|op| !op.is_empty()) {
        let (code, operands) = op.split_once(char::is_whitespace).unwrap_or((op, ""));
        let moves = || -> Result<Vec<String>, String> {
            operands
                .split_whitespace()
                .map(|san| {
                    san.parse::<San>()
                        .ok()
                        .and_then(|s| s.to_move(&parsed.position).ok())
                        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
                        .ok_or_else(|| format!("`{san}` in `{code}` is not a legal move here"))
                })
                .collect()
        };
        match code {
            "bm" => parsed.best = moves()?,
            "am" => parsed.avoid = moves()?,
            "id" => parsed.id = Some(operands.trim_matches('"').to_owned()),
            _ => {}
        }
    }
    // Only a position without moves is refused: a dead draw by material (KBBK with bishops of one
    // colour) still has a best move and an evaluation, which is what control sets compare.
    if parsed.position.legal_moves().is_empty() {
        return Err(format!(
            "`{line}`: the side to move has no legal move (mate or stalemate)"
        ));
    }
    Ok(parsed)
}

/// Reads one FEN or EPD per line (blank lines and `#` comments skipped).
pub fn read_positions(path: &Path) -> Result<Vec<Chess>, ProofError> {
    let text = std::fs::read_to_string(path).map_err(|source| ProofError::Io {
        path: path.to_owned(),
        source,
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| {
            parse_epd(l)
                .map(|e| e.position)
                .map_err(|reason| ProofError::BadPositionFile {
                    path: path.to_owned(),
                    line: i + 1,
                    reason,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_draw_by_material_is_a_position_but_a_stalemate_is_not() {
        // KBBK with both bishops on dark squares: no mate is possible, but there are moves.
        assert!(parse_epd("8/8/8/3k4/8/B7/5B2/3K4 w - - 0 1").is_ok());
        let stalemate = parse_epd("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").unwrap_err();
        assert!(stalemate.contains("no legal move"), "{stalemate}");
    }
}
