//! Values of positions: win, draw or loss for the side to move, with plies to mate.

use serde::Serialize;

/// The exact value of a position for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "wdl", content = "plies")]
pub enum Outcome {
    /// The side to move mates in this many plies (always odd).
    Win(u8),
    /// Neither side can force mate.
    Draw,
    /// The side to move is mated in this many plies (always even; 0 = mated now).
    Loss(u8),
}

/// Table byte of an unreachable or illegal placement.
pub const INVALID: u8 = u8::MAX;

/// Table byte of a drawn position (also "not yet known" during the analysis).
pub const DRAW: u8 = 0;

impl Outcome {
    /// Decodes a table byte: 0 draw, `n + 1` a mate in `n` plies (odd `n` wins), 255 invalid.
    #[must_use]
    pub const fn from_byte(byte: u8) -> Option<Outcome> {
        match byte {
            INVALID => None,
            DRAW => Some(Outcome::Draw),
            b if (b - 1) % 2 == 1 => Some(Outcome::Win(b - 1)),
            b => Some(Outcome::Loss(b - 1)),
        }
    }

    /// The table byte of a mate in `plies` (parity tells who mates).
    #[must_use]
    pub const fn mate_byte(plies: u8) -> u8 {
        plies + 1
    }

    /// The value for the side that made the move leading to a position worth `self`.
    #[must_use]
    pub const fn from_parent(self) -> Outcome {
        match self {
            Outcome::Win(n) => Outcome::Loss(n + 1),
            Outcome::Loss(n) => Outcome::Win(n + 1),
            Outcome::Draw => Outcome::Draw,
        }
    }

    /// `win`, `draw` or `loss`.
    #[must_use]
    pub const fn wdl(self) -> &'static str {
        match self {
            Outcome::Win(_) => "win",
            Outcome::Draw => "draw",
            Outcome::Loss(_) => "loss",
        }
    }

    /// Signed plies to mate: positive when the side to move mates, negative when it is mated, 0 draw.
    #[must_use]
    pub fn dtm_plies(self) -> i32 {
        match self {
            Outcome::Win(n) => i32::from(n),
            Outcome::Draw => 0,
            Outcome::Loss(n) => -i32::from(n),
        }
    }

    /// Preference of the side to move: faster wins, then draws, then slower losses.
    #[must_use]
    pub fn preference(self) -> i32 {
        match self {
            Outcome::Win(n) => 1000 - i32::from(n),
            Outcome::Draw => 0,
            Outcome::Loss(n) => -1000 + i32::from(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_preference_orders() {
        assert_eq!(
            Outcome::from_byte(Outcome::mate_byte(0)),
            Some(Outcome::Loss(0))
        );
        assert_eq!(
            Outcome::from_byte(Outcome::mate_byte(65)),
            Some(Outcome::Win(65))
        );
        assert_eq!(Outcome::from_byte(DRAW), Some(Outcome::Draw));
        assert_eq!(Outcome::from_byte(INVALID), None);
        assert!(Outcome::Win(3).preference() > Outcome::Win(5).preference());
        assert!(Outcome::Loss(0).preference() < Outcome::Loss(2).preference());
        assert!(Outcome::Draw.preference() > Outcome::Loss(100).preference());
    }
}
