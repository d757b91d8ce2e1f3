//! Position invariants over whole perft trees: the incrementally updated Zobrist key equals one
//! computed from scratch, and copy-make keeps every redundant field of the position consistent.

use coherent::chess::attacks::pawn_attacks;
use coherent::chess::fen::START_FEN;
use coherent::chess::movegen::{legal_moves, parse_uci_move};
use coherent::chess::position::{BLACK_OO, BLACK_OOO, Position, WHITE_OO, WHITE_OOO};
use coherent::chess::types::{CASTLE, Color, EN_PASSANT, NO_PIECE, PAWN, piece_color, piece_kind};
use coherent::chess::zobrist::KEYS;

/// Start position, Kiwipete (castling both ways, pins, en passant), the CPW "position 3"
/// (en passant along the rank), "position 4" (promotions under check) and "position 5".
const TREES: [(&str, u32); 5] = [
    (START_FEN, 3),
    (
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        3,
    ),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4),
    (
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        3,
    ),
    (
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        3,
    ),
];

/// The key of a position computed from its board and state alone, never from a parent.
fn key_from_scratch(pos: &Position) -> u64 {
    let mut key = 0;
    for (sq, &piece) in pos.board.iter().enumerate() {
        if piece != NO_PIECE {
            key ^= KEYS.piece[piece as usize][sq];
        }
    }
    key ^= KEYS.castling[pos.castling as usize];
    if let Some(ep) = pos.ep {
        key ^= KEYS.ep_file[ep & 7];
    }
    if pos.side == Color::Black {
        key ^= KEYS.side;
    }
    key
}

/// Which special moves a walk went through, so that a test cannot pass without them.
#[derive(Default)]
struct Seen {
    nodes: u64,
    castles: u64,
    en_passant: u64,
    promotions: u64,
}

/// Checks every redundant field of `pos` against the board.
fn assert_consistent(pos: &Position, path: &str) {
    assert_eq!(pos.hash, key_from_scratch(pos), "incremental key at {path}");
    let reparsed = Position::from_fen(&pos.to_fen()).expect("to_fen gives a legal FEN");
    assert_eq!(
        reparsed.hash, pos.hash,
        "key after a FEN round trip at {path}"
    );
    for sq in 0..64 {
        let piece = pos.board[sq];
        let bit = 1u64 << sq;
        for kind in 0..6 {
            let here = piece != NO_PIECE && piece_kind(piece) == kind;
            assert_eq!(pos.kinds[kind] & bit != 0, here, "kinds[{kind}] at {path}");
        }
        for color in [Color::White, Color::Black] {
            let here = piece != NO_PIECE && piece_color(piece) == color;
            assert_eq!(pos.us(color) & bit != 0, here, "colors at {path}");
        }
    }
    let mut refreshed = *pos;
    refreshed.refresh_checkers();
    assert_eq!(pos.checkers, refreshed.checkers, "checkers at {path}");
    assert_eq!(pos.in_check(), pos.checkers != 0, "in_check at {path}");
    if let Some(ep) = pos.ep {
        // Only set when a pawn of the side to move attacks the square. The capture itself may
        // still be illegal (a pin along the rank, e.g. 8/8/8/KP6/1R2Pp1k/8/6P1/8 b - e3):
        // the key then differs from the same position reached without the double push.
        let attackers = pawn_attacks(pos.side.flip(), ep) & pos.pieces(pos.side, PAWN);
        assert_ne!(attackers, 0, "en-passant square no pawn attacks at {path}");
    }
}

fn walk(pos: &Position, depth: u32, path: &mut Vec<String>, seen: &mut Seen) {
    seen.nodes += 1;
    assert_consistent(pos, &path.join(" "));
    if depth == 0 {
        return;
    }
    let before = *pos;
    for &m in legal_moves(pos).as_slice() {
        match m.flags() {
            CASTLE => seen.castles += 1,
            EN_PASSANT => seen.en_passant += 1,
            _ if m.is_promotion() => seen.promotions += 1,
            _ => {}
        }
        let child = pos.make_move(m);
        // Copy-make: the parent is untouched, so "unmake" is returning to it.
        assert_eq!(*pos, before, "make_move changed its parent");
        assert_ne!(
            child.hash,
            pos.hash,
            "{} left the key unchanged",
            m.to_uci()
        );
        path.push(m.to_uci());
        walk(&child, depth - 1, path, seen);
        path.pop();
    }
}

#[test]
fn incremental_key_equals_key_from_scratch_over_perft_trees() {
    let mut seen = Seen::default();
    for (fen, depth) in TREES {
        let pos = Position::from_fen(fen).expect("valid FEN");
        walk(&pos, depth, &mut vec![fen.to_string()], &mut seen);
    }
    assert!(seen.nodes > 200_000, "{} nodes walked", seen.nodes);
    assert!(seen.castles > 1_000, "{} castling moves", seen.castles);
    assert!(
        seen.en_passant > 100,
        "{} en-passant captures",
        seen.en_passant
    );
    assert!(seen.promotions > 1_000, "{} promotions", seen.promotions);
}

/// Plays `moves` from `fen` and returns the final position.
fn play(fen: &str, moves: &[&str]) -> Position {
    let mut pos = Position::from_fen(fen).expect("valid FEN");
    for text in moves {
        let m = parse_uci_move(&pos, text).unwrap_or_else(|| panic!("{text} is legal"));
        pos = pos.make_move(m);
    }
    pos
}

#[test]
fn castling_rights_follow_kings_and_rooks() {
    let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let all = WHITE_OO | WHITE_OOO | BLACK_OO | BLACK_OOO;
    assert_eq!(play(kiwipete, &[]).castling, all);
    // A king move loses both of its side's rights; castling is a king move.
    assert_eq!(play(kiwipete, &["e1g1"]).castling, BLACK_OO | BLACK_OOO);
    assert_eq!(play(kiwipete, &["e1d1"]).castling, BLACK_OO | BLACK_OOO);
    // A rook move loses its own side's right only.
    assert_eq!(play(kiwipete, &["h1f1"]).castling, all & !WHITE_OO);
    // Capturing a rook on its square removes the opponent's right.
    let capture = play(kiwipete, &["a2a3", "b4c3", "d2e3", "c3b2", "e3d2", "b2a1q"]);
    assert_eq!(capture.castling & WHITE_OOO, 0);
    assert_eq!(capture.hash, key_from_scratch(&capture));
}

#[test]
fn clocks_and_en_passant_after_moves() {
    // A double push sets the en-passant square only when an enemy pawn can take there.
    let pos = play(START_FEN, &["e2e4"]);
    assert_eq!(pos.ep, None);
    let pos = play(START_FEN, &["e2e4", "a7a6", "e4e5", "d7d5"]);
    assert_eq!(pos.to_fen().split(' ').nth(3), Some("d6"));
    let taken = play(START_FEN, &["e2e4", "a7a6", "e4e5", "d7d5", "e5d6"]);
    assert_eq!(
        taken.board[35], NO_PIECE,
        "the pawn taken en passant is gone"
    );
    assert_eq!(taken.ep, None);
    // The half-move clock counts quiet piece moves and resets on pawn moves and captures;
    // the full-move number rises after Black's move.
    let pos = play(START_FEN, &["g1f3", "g8f6", "f3g1"]);
    assert_eq!((pos.halfmove, pos.fullmove), (3, 2));
    let pos = play(START_FEN, &["g1f3", "g8f6", "f3g1", "e7e5"]);
    assert_eq!((pos.halfmove, pos.fullmove), (0, 3));
    // The same position reached by different move orders has the same key.
    let a = play(START_FEN, &["g1f3", "g8f6", "b1c3", "b8c6"]);
    let b = play(START_FEN, &["b1c3", "b8c6", "g1f3", "g8f6"]);
    assert_eq!(a.hash, b.hash);
    // A null move flips only the side (and clears en passant).
    let null = a.make_null();
    assert_eq!(null.hash, a.hash ^ KEYS.side);
    assert_eq!(null.hash, key_from_scratch(&null));
}
