//! Zobrist keys, generated at compile time from a fixed seed so hashes are identical everywhere.

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

/// All keys: 12 pieces × 64 squares, 16 castling-right sets, 8 en-passant files, side to move.
pub struct Keys {
    /// Key per coloured piece code and square.
    pub piece: [[u64; 64]; 12],
    /// Key per castling-rights bit set (0..16).
    pub castling: [u64; 16],
    /// Key per en-passant file.
    pub ep_file: [u64; 8],
    /// Key xored in when black is to move.
    pub side: u64,
}

const fn build() -> Keys {
    let mut k = Keys {
        piece: [[0; 64]; 12],
        castling: [0; 16],
        ep_file: [0; 8],
        side: 0,
    };
    let mut state = 0x0C0F_FEE5_EED5_u64;
    let mut p = 0;
    while p < 12 {
        let mut s = 0;
        while s < 64 {
            let (ns, v) = splitmix(state);
            state = ns;
            k.piece[p][s] = v;
            s += 1;
        }
        p += 1;
    }
    let mut c = 0;
    while c < 16 {
        let (ns, v) = splitmix(state);
        state = ns;
        k.castling[c] = v;
        c += 1;
    }
    let mut f = 0;
    while f < 8 {
        let (ns, v) = splitmix(state);
        state = ns;
        k.ep_file[f] = v;
        f += 1;
    }
    k.side = splitmix(state).1;
    k
}

/// The engine's Zobrist keys.
pub static KEYS: Keys = build();
