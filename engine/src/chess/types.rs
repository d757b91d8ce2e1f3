//! Basic chess vocabulary: colours, piece kinds, squares and the packed move.

/// A square index 0..64, a1 = 0, h1 = 7, a8 = 56.
pub type Square = usize;

/// White or black, usable as an array index.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Color {
    /// The side that moves first.
    White = 0,
    /// The side that moves second.
    Black = 1,
}

impl Color {
    /// The other colour.
    #[must_use]
    #[inline(always)]
    pub const fn flip(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// The colour as an array index.
    #[must_use]
    #[inline(always)]
    pub const fn idx(self) -> usize {
        self as usize
    }
}

/// Piece kinds, usable as array indices (0 = pawn … 5 = king).
pub const PAWN: usize = 0;
/// Knight index.
pub const KNIGHT: usize = 1;
/// Bishop index.
pub const BISHOP: usize = 2;
/// Rook index.
pub const ROOK: usize = 3;
/// Queen index.
pub const QUEEN: usize = 4;
/// King index.
pub const KING: usize = 5;

/// A coloured piece is `color * 6 + kind`; this marks an empty mailbox square.
pub const NO_PIECE: u8 = 12;

/// The coloured piece code for a colour and kind.
#[must_use]
#[inline(always)]
pub const fn make_piece(color: Color, kind: usize) -> u8 {
    (color as usize * 6 + kind) as u8
}

/// The kind (0..6) of a coloured piece code.
#[must_use]
#[inline(always)]
pub const fn piece_kind(piece: u8) -> usize {
    piece as usize % 6
}

/// The colour of a coloured piece code.
#[must_use]
#[inline(always)]
pub const fn piece_color(piece: u8) -> Color {
    if piece < 6 {
        Color::White
    } else {
        Color::Black
    }
}

/// File 0..8 (a..h) of a square.
#[must_use]
#[inline(always)]
pub const fn file_of(sq: Square) -> usize {
    sq & 7
}

/// Rank 0..8 (1..8) of a square.
#[must_use]
#[inline(always)]
pub const fn rank_of(sq: Square) -> usize {
    sq >> 3
}

/// Algebraic name of a square, e.g. "e4".
#[must_use]
pub fn square_name(sq: Square) -> String {
    let f = (b'a' + file_of(sq) as u8) as char;
    let r = (b'1' + rank_of(sq) as u8) as char;
    format!("{f}{r}")
}

/// Parse an algebraic square name like "e4".
#[must_use]
pub fn parse_square(s: &str) -> Option<Square> {
    let b = s.as_bytes();
    if b.len() != 2 || !(b'a'..=b'h').contains(&b[0]) || !(b'1'..=b'8').contains(&b[1]) {
        return None;
    }
    Some(((b[1] - b'1') * 8 + (b[0] - b'a')) as usize)
}

/// Move flag: plain quiet move.
pub const QUIET: u16 = 0;
/// Move flag: pawn double push (sets the en-passant square).
pub const DOUBLE_PUSH: u16 = 1;
/// Move flag: castling, encoded as the king's two-square move.
pub const CASTLE: u16 = 2;
/// Move flag: capture.
pub const CAPTURE: u16 = 4;
/// Move flag: en-passant capture.
pub const EN_PASSANT: u16 = 5;
/// Move flag bit: promotion; the low two bits give the piece (0 = knight … 3 = queen).
pub const PROMO: u16 = 8;

/// A move packed in 16 bits: from (6), to (6), flags (4). Zero is the null move.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct Move(pub u16);

impl Move {
    /// The "no move" value, printed as `0000`.
    pub const NONE: Move = Move(0);

    /// Pack a move.
    #[must_use]
    #[inline(always)]
    pub const fn new(from: Square, to: Square, flags: u16) -> Move {
        Move(from as u16 | (to as u16) << 6 | flags << 12)
    }

    /// Origin square.
    #[must_use]
    #[inline(always)]
    pub const fn from(self) -> Square {
        (self.0 & 63) as usize
    }

    /// Destination square.
    #[must_use]
    #[inline(always)]
    pub const fn to(self) -> Square {
        ((self.0 >> 6) & 63) as usize
    }

    /// The 4-bit flag field.
    #[must_use]
    #[inline(always)]
    pub const fn flags(self) -> u16 {
        self.0 >> 12
    }

    /// True for promotions.
    #[must_use]
    #[inline(always)]
    pub const fn is_promotion(self) -> bool {
        self.flags() & PROMO != 0
    }

    /// The promoted-to piece kind, if a promotion.
    #[must_use]
    #[inline(always)]
    pub const fn promotion(self) -> Option<usize> {
        if self.is_promotion() {
            Some(KNIGHT + (self.flags() & 3) as usize)
        } else {
            None
        }
    }

    /// True for captures and promotions: the moves quiescence search looks at.
    #[must_use]
    #[inline(always)]
    pub const fn is_noisy(self) -> bool {
        self.flags() & (CAPTURE | PROMO) != 0
    }

    /// UCI long algebraic notation, e.g. "e7e8q"; `0000` for the null move.
    #[must_use]
    pub fn to_uci(self) -> String {
        if self == Move::NONE {
            return "0000".to_string();
        }
        let mut s = format!("{}{}", square_name(self.from()), square_name(self.to()));
        if let Some(p) = self.promotion() {
            s.push(['n', 'b', 'r', 'q'][p - KNIGHT]);
        }
        s
    }
}

impl std::fmt::Display for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_uci())
    }
}
