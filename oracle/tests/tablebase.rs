//! Solver facts: published maxima and counts, and agreement with shakmaty's rules.

use std::sync::OnceLock;

use oracle::tablebase::{Ending, Outcome, Table, Tablebase, TablebaseError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, FromSetup, Position};

/// One in-memory tablebase for the test run, so that each ending is solved once.
fn tb() -> &'static Tablebase {
    static TB: OnceLock<Tablebase> = OnceLock::new();
    TB.get_or_init(|| Tablebase::new(None))
}

fn table(name: &str) -> std::sync::Arc<Table> {
    tb().table(&name.parse::<Ending>().unwrap()).unwrap()
}

fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap()
}

/// Longest win with White to move over placements accepted by `keep` (white king a1–d1–d4).
fn longest_white_win(t: &Table, keep: impl Fn(&[u8]) -> bool) -> u8 {
    let n = t.ending().piece_count();
    let mut longest = 0;
    for king in [0u8, 1, 2, 3, 9, 10, 11, 18, 19, 27] {
        for code in 0..1usize << (6 * (n - 1)) {
            let mut squares = vec![king];
            squares.extend((0..n - 1).map(|i| ((code >> (6 * i)) & 63) as u8));
            if squares[1..].contains(&king) || !keep(&squares) {
                continue;
            }
            if let Some(Outcome::Win(p)) = t.outcome(&squares, Color::White) {
                longest = longest.max(p);
            }
        }
    }
    longest
}

/// Dark squares (a1 is dark) have equal file and rank parity.
fn is_dark(sq: u8) -> bool {
    (sq & 7) % 2 == (sq >> 3) % 2
}

#[test]
fn longest_mates_match_the_published_maxima() {
    assert_eq!(table("KQK").header().max_dtm_moves, 10);
    assert_eq!(table("KRK").header().max_dtm_moves, 16);
    assert_eq!(table("KBNK").header().max_dtm_moves, 33);
    assert_eq!(table("KBNK").header().white_to_move.max_win_plies, 65);
    let kbbk = table("KBBK");
    let opposite = longest_white_win(&kbbk, |s| {
        s[2] != s[3] && is_dark(s[2]) != is_dark(s[3]) && !s[2..].contains(&s[1])
    });
    assert_eq!(opposite.div_ceil(2), 19);
    let same = longest_white_win(&kbbk, |s| is_dark(s[2]) == is_dark(s[3]));
    assert_eq!(same, 0, "bishops on one colour never force mate");
}

#[test]
fn knnk_has_mates_but_no_forced_win() {
    let h = table("KNNK").header().clone();
    // Black to move is only ever lost when already mated: no forced mate exists.
    assert!(h.black_to_move.loss > 0);
    assert_eq!(h.black_to_move.max_loss_plies, 0);
    // White to move wins only by a mate in one that Black's previous move allowed.
    assert_eq!(h.white_to_move.max_win_plies, 1);
    assert!(h.white_to_move.win * 1000 < h.white_to_move.draw);
}

#[test]
fn kqk_has_23048_drawn_positions_with_black_to_move() {
    // The published count: every legal placement (no two men on a square, kings not adjacent,
    // White not in check), Black to move (Black may be in check), no symmetry reduction.
    let c = table("KQK").unreduced_counts(Color::Black);
    assert_eq!(c.draw, 23_048);
    assert_eq!(c.draw + c.loss, 223_944);
    assert_eq!(c.max_loss_plies, 20);
}

#[test]
fn defending_pieces_and_their_captures_are_solved() {
    // Published maxima for four-piece endings with a defending piece.
    assert_eq!(table("KQKR").header().max_dtm_moves, 35);
}

/// Random legal positions of `ending` with `stm` to move (shakmaty accepts them).
fn random_positions(ending: &str, count: usize, seed: u64) -> Vec<Chess> {
    let e: Ending = ending.parse().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let mut board = shakmaty::Board::empty();
        let mut free: Vec<u8> = (0..64).collect();
        for (color, role) in e.layout() {
            let sq = free.swap_remove(rng.random_range(0..free.len()));
            board.set_piece_at(
                shakmaty::Square::new(u32::from(sq)),
                shakmaty::Piece { color, role },
            );
        }
        let turn = if rng.random_bool(0.5) {
            Color::White
        } else {
            Color::Black
        };
        let setup = shakmaty::Setup {
            board,
            turn,
            ..shakmaty::Setup::empty()
        };
        if let Ok(pos) = Chess::from_setup(setup, CastlingMode::Standard) {
            out.push(pos);
        }
    }
    out
}

#[test]
fn values_agree_with_shakmaty_move_by_move() {
    for (ending, seed) in [
        ("KQK", 1),
        ("KRK", 2),
        ("KBNK", 3),
        ("KBBK", 4),
        ("KNNK", 5),
        ("KQKR", 6),
    ] {
        for pos in random_positions(ending, 400, seed) {
            let value = tb().value(&pos).unwrap();
            let expected = if pos.is_checkmate() {
                Outcome::Loss(0)
            } else if pos.is_stalemate() {
                Outcome::Draw
            } else {
                tb().rank_moves(&pos).unwrap()[0].1
            };
            assert_eq!(
                value,
                expected,
                "{ending}: {}",
                Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
            );
            // Every reflection of the board (and the colour-swapped mirror) has the same value.
            for flip in [
                shakmaty::Board::flip_horizontal,
                shakmaty::Board::flip_diagonal,
            ] {
                let mut setup = pos.to_setup(shakmaty::EnPassantMode::Legal);
                flip(&mut setup.board);
                let image = Chess::from_setup(setup, CastlingMode::Standard).unwrap();
                assert_eq!(tb().value(&image).unwrap(), value);
            }
            let mut setup = pos.to_setup(shakmaty::EnPassantMode::Legal);
            setup.mirror();
            let mirrored = Chess::from_setup(setup, CastlingMode::Standard).unwrap();
            assert_eq!(tb().value(&mirrored).unwrap(), value);
        }
    }
}

#[test]
fn captures_leave_the_ending_and_the_defender_takes_them() {
    // Black can take the hanging knight: KBNK turns into a drawn KBK.
    let pos = position("8/8/8/8/8/1kN5/8/K1B5 b - - 0 1");
    assert_eq!(tb().value(&pos).unwrap(), Outcome::Draw);
    assert_eq!(tb().defend(&pos).unwrap().unwrap().to_string(), "b3c3");
    // A lost position: the defence is the move that delays mate longest.
    let pos = position("8/8/8/3k4/8/8/8/KBN5 b - - 0 1");
    let ranked = tb().rank_moves(&pos).unwrap();
    let Outcome::Win(_) = tb().value(&pos).unwrap().from_parent() else {
        panic!("KBNK with the pieces safe is lost for Black");
    };
    let longest = ranked.iter().map(|(_, v)| v.dtm_plies()).min().unwrap();
    assert_eq!(ranked[0].1.dtm_plies(), longest);
    assert_eq!(tb().value(&pos).unwrap(), Outcome::Loss((-longest) as u8));
}

#[test]
fn table_files_round_trip_and_reject_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let cached = Tablebase::new(Some(dir.path().to_owned()));
    let kqk: Ending = "KQK".parse().unwrap();
    let first = cached.table(&kqk).unwrap();
    let path = cached.cache_path(&kqk).unwrap();
    let again = Table::read(&kqk, &path).unwrap();
    assert_eq!(again.header(), first.header());
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    assert!(matches!(
        Table::read(&kqk, &path),
        Err(TablebaseError::Corrupt { .. })
    ));
}
