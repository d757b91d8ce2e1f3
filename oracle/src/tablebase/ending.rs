//! Endings by material: which pieces each side has, in a canonical order.

use std::fmt;
use std::str::FromStr;

use shakmaty::{Color, Role};

use super::TablebaseError;

/// The most pieces (kings included) a solved ending may have: 4 keeps every table a few MB.
pub const MAX_PIECES: usize = 4;

/// A pawnless material signature such as KBNK or KQKR; white is the side with more material.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ending {
    /// White's pieces besides the king, strongest first.
    white: Vec<Role>,
    /// Black's pieces besides the king, strongest first.
    black: Vec<Role>,
}

/// Relative weight used only to put the stronger side first and pieces in a fixed order.
const fn weight(role: Role) -> u32 {
    match role {
        Role::Queen => 9,
        Role::Rook => 5,
        Role::Bishop => 4,
        Role::Knight => 3,
        Role::Pawn => 1,
        Role::King => 0,
    }
}

/// Sorts pieces strongest first so that equal material always gets the same name.
fn sorted(mut roles: Vec<Role>) -> Vec<Role> {
    roles.sort_by_key(|&r| std::cmp::Reverse(weight(r)));
    roles
}

/// Orders two sides' pieces so that the first is the stronger (more pieces, then heavier ones).
fn stronger_first(a: &[Role], b: &[Role]) -> bool {
    let key = |side: &[Role]| {
        (
            side.len(),
            side.iter().map(|&r| weight(r)).collect::<Vec<_>>(),
        )
    };
    key(a) >= key(b)
}

impl Ending {
    /// The ending of this material, and whether colours must be swapped to reach its name.
    pub fn from_material(white: &[Role], black: &[Role]) -> (Ending, bool) {
        let (w, b) = (sorted(white.to_vec()), sorted(black.to_vec()));
        if stronger_first(&w, &b) {
            (Ending { white: w, black: b }, false)
        } else {
            (Ending { white: b, black: w }, true)
        }
    }

    /// Number of pieces including both kings.
    pub fn piece_count(&self) -> usize {
        2 + self.white.len() + self.black.len()
    }

    /// True when only the kings are left: always a draw, no table needed.
    pub fn is_bare_kings(&self) -> bool {
        self.white.is_empty() && self.black.is_empty()
    }

    /// Colour and role of each piece in table order: white king, black king, white pieces, black pieces.
    pub fn layout(&self) -> Vec<(Color, Role)> {
        let mut layout = vec![(Color::White, Role::King), (Color::Black, Role::King)];
        layout.extend(self.white.iter().map(|&r| (Color::White, r)));
        layout.extend(self.black.iter().map(|&r| (Color::Black, r)));
        layout
    }
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let letters = |roles: &[Role]| roles.iter().map(|r| r.upper_char()).collect::<String>();
        write!(f, "K{}K{}", letters(&self.white), letters(&self.black))
    }
}

impl FromStr for Ending {
    type Err = TablebaseError;

    /// Parses names like `KBNK`, `kqkr` or `KNBK`; pawns and more than 4 pieces are refused.
    fn from_str(s: &str) -> Result<Ending, TablebaseError> {
        let bad = |reason: &str| TablebaseError::BadEnding {
            name: s.to_owned(),
            reason: reason.to_owned(),
        };
        let upper = s.to_ascii_uppercase();
        let rest = upper
            .strip_prefix('K')
            .ok_or_else(|| bad("must start with K"))?;
        let (white, black) = rest
            .split_once('K')
            .ok_or_else(|| bad("needs a second K for the other side"))?;
        let roles = |letters: &str| -> Result<Vec<Role>, TablebaseError> {
            letters
                .chars()
                .map(|c| match c {
                    'Q' => Ok(Role::Queen),
                    'R' => Ok(Role::Rook),
                    'B' => Ok(Role::Bishop),
                    'N' => Ok(Role::Knight),
                    'P' => Err(bad("pawns are not supported")),
                    _ => Err(bad("pieces are Q, R, B, N")),
                })
                .collect()
        };
        let (white, black) = (roles(white)?, roles(black)?);
        if 2 + white.len() + black.len() > MAX_PIECES {
            return Err(bad("at most 4 pieces"));
        }
        Ok(Ending::from_material(&white, &black).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_canonical() {
        let e: Ending = "knbk".parse().unwrap();
        assert_eq!(e.to_string(), "KBNK");
        let e: Ending = "KRKQ".parse().unwrap();
        assert_eq!(e.to_string(), "KQKR");
        assert!("KBNNK".parse::<Ending>().is_err());
        assert!("KPK".parse::<Ending>().is_err());
        assert!("QK".parse::<Ending>().is_err());
    }
}
