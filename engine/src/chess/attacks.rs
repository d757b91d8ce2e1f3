//! Attack tables: leaper tables built at compile time, slider attacks by magic bitboards whose
//! magics are found once at start-up with a fixed-seed generator (so every run builds the same table).

use std::sync::LazyLock;

use super::bitboard::{Bitboard, bb};
use super::types::{Color, Square};

const fn leaper_table(deltas: &[(i32, i32)]) -> [Bitboard; 64] {
    let mut t = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut i = 0;
        while i < deltas.len() {
            let (nf, nr) = (f + deltas[i].0, r + deltas[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                t[sq] |= 1u64 << (nr * 8 + nf);
            }
            i += 1;
        }
        sq += 1;
    }
    t
}

const KNIGHT_TABLE: [Bitboard; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
const KING_TABLE: [Bitboard; 64] = leaper_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);
const PAWN_TABLE: [[Bitboard; 64]; 2] = [
    leaper_table(&[(-1, 1), (1, 1)]),
    leaper_table(&[(-1, -1), (1, -1)]),
];

const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// Knight attacks from a square.
#[must_use]
#[inline(always)]
pub fn knight_attacks(sq: Square) -> Bitboard {
    KNIGHT_TABLE[sq]
}

/// King attacks from a square.
#[must_use]
#[inline(always)]
pub fn king_attacks(sq: Square) -> Bitboard {
    KING_TABLE[sq]
}

/// Squares a pawn of `color` on `sq` attacks.
#[must_use]
#[inline(always)]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    PAWN_TABLE[color as usize][sq]
}

/// Slow ray walk, used to build the magic tables and to check them in tests.
fn slider_attacks_slow(sq: Square, occ: Bitboard, dirs: &[(i32, i32); 4]) -> Bitboard {
    let mut att = 0;
    for &(df, dr) in dirs {
        let (mut f, mut r) = ((sq % 8) as i32 + df, (sq / 8) as i32 + dr);
        while (0..8).contains(&f) && (0..8).contains(&r) {
            let s = (r * 8 + f) as usize;
            att |= bb(s);
            if occ & bb(s) != 0 {
                break;
            }
            f += df;
            r += dr;
        }
    }
    att
}

/// Relevant occupancy mask: the rays without their last square.
fn slider_mask(sq: Square, dirs: &[(i32, i32); 4]) -> Bitboard {
    let mut m = 0;
    for &(df, dr) in dirs {
        let (mut f, mut r) = ((sq % 8) as i32 + df, (sq / 8) as i32 + dr);
        while (0..8).contains(&(f + df)) && (0..8).contains(&(r + dr)) {
            m |= bb((r * 8 + f) as usize);
            f += df;
            r += dr;
        }
    }
    m
}

/// Bit count by clearing the lowest bit: start-up only, and kept free of popcount so that nothing
/// the evaluation can reach (the lazy table initialiser) carries a software popcount.
fn bit_count(mut b: u64) -> u32 {
    let mut n = 0;
    while b != 0 {
        b &= b - 1;
        n += 1;
    }
    n
}

#[derive(Clone, Copy, Default)]
struct Magic {
    mask: Bitboard,
    magic: u64,
    shift: u32,
    offset: usize,
}

/// All slider and line tables, built once.
struct Tables {
    rook: [Magic; 64],
    bishop: [Magic; 64],
    attacks: Vec<Bitboard>,
    between: Vec<Bitboard>,
    line: Vec<Bitboard>,
}

/// xorshift64*: a tiny fixed-seed generator so the magic search is reproducible.
struct Prng(u64);

impl Prng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn sparse(&mut self) -> u64 {
        self.next() & self.next() & self.next()
    }
}

/// Per-rank generator seeds known to find magics quickly (Stockfish's 64-bit seeds).
const MAGIC_SEEDS: [u64; 8] = [728, 10316, 55013, 32803, 12281, 15100, 16645, 255];

fn find_magics(dirs: &[(i32, i32); 4], table: &mut Vec<Bitboard>) -> [Magic; 64] {
    let mut magics = [Magic::default(); 64];
    for (sq, entry) in magics.iter_mut().enumerate() {
        let mut rng = Prng(MAGIC_SEEDS[sq / 8]);
        let mask = slider_mask(sq, dirs);
        let bits = bit_count(mask);
        let size = 1usize << bits;
        // Enumerate all subsets of the mask (Carry-Rippler) with their true attacks.
        let mut occs = Vec::with_capacity(size);
        let mut atts = Vec::with_capacity(size);
        let mut sub: u64 = 0;
        loop {
            occs.push(sub);
            atts.push(slider_attacks_slow(sq, sub, dirs));
            sub = sub.wrapping_sub(mask) & mask;
            if sub == 0 {
                break;
            }
        }
        let offset = table.len();
        table.resize(offset + size, 0);
        let mut epoch = vec![0u32; size];
        let mut attempt = 0u32;
        'search: loop {
            let magic = rng.sparse();
            if bit_count(mask.wrapping_mul(magic) >> 56) < 6 {
                continue;
            }
            attempt += 1;
            for i in 0..size {
                let idx = (occs[i].wrapping_mul(magic) >> (64 - bits)) as usize;
                if epoch[idx] < attempt {
                    epoch[idx] = attempt;
                    table[offset + idx] = atts[i];
                } else if table[offset + idx] != atts[i] {
                    continue 'search;
                }
            }
            *entry = Magic {
                mask,
                magic,
                shift: 64 - bits,
                offset,
            };
            break;
        }
    }
    magics
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let mut attacks = Vec::with_capacity(110_000);
    let rook = find_magics(&ROOK_DIRS, &mut attacks);
    let bishop = find_magics(&BISHOP_DIRS, &mut attacks);
    let mut between = vec![0u64; 64 * 64];
    let mut line = vec![0u64; 64 * 64];
    for a in 0..64 {
        for b in 0..64 {
            if a == b {
                continue;
            }
            for dirs in [&ROOK_DIRS, &BISHOP_DIRS] {
                if slider_attacks_slow(a, 0, dirs) & bb(b) != 0 {
                    line[a * 64 + b] = (slider_attacks_slow(a, 0, dirs)
                        & slider_attacks_slow(b, 0, dirs))
                        | bb(a)
                        | bb(b);
                    between[a * 64 + b] =
                        slider_attacks_slow(a, bb(b), dirs) & slider_attacks_slow(b, bb(a), dirs);
                }
            }
        }
    }
    Tables {
        rook,
        bishop,
        attacks,
        between,
        line,
    }
});

/// Build the tables now (so the first search does not pay for it).
pub fn init() {
    LazyLock::force(&TABLES);
}

#[inline(always)]
fn magic_index(m: &Magic, occ: Bitboard) -> usize {
    m.offset + ((occ & m.mask).wrapping_mul(m.magic) >> m.shift) as usize
}

/// Bishop attacks from `sq` given the occupancy.
#[must_use]
#[inline(always)]
pub fn bishop_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    let t = &*TABLES;
    t.attacks[magic_index(&t.bishop[sq], occ)]
}

/// Rook attacks from `sq` given the occupancy.
#[must_use]
#[inline(always)]
pub fn rook_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    let t = &*TABLES;
    t.attacks[magic_index(&t.rook[sq], occ)]
}

/// Squares strictly between two aligned squares (empty if not aligned).
#[must_use]
#[inline(always)]
pub fn between(a: Square, b: Square) -> Bitboard {
    TABLES.between[a * 64 + b]
}

/// The full line through two aligned squares (empty if not aligned).
#[must_use]
#[inline(always)]
pub fn line(a: Square, b: Square) -> Bitboard {
    TABLES.line[a * 64 + b]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magics_match_ray_walk() {
        let mut rng = Prng(12345);
        for sq in 0..64 {
            for _ in 0..200 {
                let occ = rng.next() & rng.next();
                assert_eq!(
                    rook_attacks(sq, occ),
                    slider_attacks_slow(sq, occ, &ROOK_DIRS)
                );
                assert_eq!(
                    bishop_attacks(sq, occ),
                    slider_attacks_slow(sq, occ, &BISHOP_DIRS)
                );
            }
        }
        assert_eq!(bit_count(between(0, 63)), 6);
        assert_eq!(bit_count(line(0, 9)), 8);
        assert_eq!(between(0, 17), 0);
    }
}
