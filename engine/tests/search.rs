//! Search through the library API: the move picker's order, mates found at their distance, and
//! positions without a result to play for scored as draws.

use std::collections::HashSet;

use coherent::chess::movegen::{GenMode, legal_moves, parse_uci_move};
use coherent::chess::position::Position;
use coherent::chess::types::{Color, Move};
use coherent::search::history::{Continuations, History};
use coherent::search::movepick::{MovePicker, Refutations, is_bad_noisy};
use coherent::search::time::Limits;
use coherent::search::{MATE, Searcher, score_to_uci};

fn position(fen: &str) -> Position {
    Position::from_fen(fen).expect("valid FEN")
}

fn mv(pos: &Position, text: &str) -> Move {
    parse_uci_move(pos, text).unwrap_or_else(|| panic!("{text} is legal"))
}

/// White to move with good captures (gxf4 wins a knight, Qxd6 a free pawn), bad captures
/// (Qxf4 and Qxe5 lose the queen to a pawn) and quiet moves.
const ORDERING: &str = "4k3/8/3p4/4p3/3Q1n2/6P1/8/4K3 w - - 0 1";

#[test]
fn move_picker_orders_tt_captures_refutations_history_bad_captures() {
    let pos = position(ORDERING);
    let tt = mv(&pos, "e1d2");
    let refs = Refutations {
        killers: [mv(&pos, "d4a4"), mv(&pos, "d4b2")],
        counter: mv(&pos, "e1f1"),
    };
    let mut history = History::default();
    let favourite = mv(&pos, "d4a1");
    let none = Continuations::default();
    history.update_quiet(
        Color::White,
        pos.board[favourite.from()],
        favourite,
        &none,
        4000,
    );

    let mut picker = MovePicker::new(&pos, GenMode::All, tt, refs, &history, &none);
    assert_eq!(picker.len(), legal_moves(&pos).len());
    let mut order = Vec::new();
    while let Some((m, score)) = picker.next_move() {
        order.push((m.to_uci(), is_bad_noisy(score)));
    }
    let names: Vec<&str> = order.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(
        names[..7],
        ["e1d2", "g3f4", "d4d6", "d4a4", "d4b2", "e1f1", "d4a1"],
        "{names:?}"
    );
    assert_eq!(names[names.len() - 2..], ["d4f4", "d4e5"], "{names:?}");
    for (m, bad) in &order {
        assert_eq!(*bad, m == "d4f4" || m == "d4e5", "{m}");
    }
    // Every legal move exactly once.
    let picked: HashSet<&str> = names.iter().copied().collect();
    let legal: HashSet<String> = legal_moves(&pos)
        .as_slice()
        .iter()
        .map(|m| m.to_uci())
        .collect();
    assert_eq!(picked.len(), names.len());
    assert_eq!(picked, legal.iter().map(String::as_str).collect());
}

#[test]
fn noisy_mode_picks_captures_only() {
    let pos = position(ORDERING);
    let mut picker = MovePicker::new(
        &pos,
        GenMode::Noisy,
        Move::NONE,
        Refutations::default(),
        &History::default(),
        &Continuations::default(),
    );
    let mut names = Vec::new();
    while let Some((m, _)) = picker.next_move() {
        assert!(m.is_noisy(), "{}", m.to_uci());
        names.push(m.to_uci());
    }
    assert_eq!(names, ["g3f4", "d4d6", "d4f4", "d4e5"]);
}

fn search(fen: &str, depth: i32) -> (String, i32) {
    let mut searcher = Searcher::new(1);
    let limits = Limits {
        depth: Some(depth),
        ..Limits::default()
    };
    let r = searcher.search(&position(fen), &[], &limits, false);
    (r.best.to_uci(), r.score)
}

#[test]
fn mates_are_found_at_their_distance() {
    // Mate in 2 (Nf6+ gxf6, Bxf7#), as Stockfish finds it.
    let fen = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1";
    let (best, score) = search(fen, 6);
    assert_eq!((best.as_str(), score), ("d5f6", MATE - 3));
    assert_eq!(score_to_uci(score), "mate 2");
    // The side to move is mated next move whatever it does: Ka7, Ra1#.
    let (best, score) = search("k7/2K5/8/8/8/8/8/1R6 b - - 0 1", 6);
    assert_eq!((best.as_str(), score), ("a8a7", -(MATE - 2)));
    assert_eq!(score_to_uci(score), "mate -1");
}

#[test]
fn positions_without_a_result_score_as_draws() {
    // Stalemate at the root: no move to return, and nothing to win or lose.
    let stalemate = position("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    assert!(legal_moves(&stalemate).is_empty() && !stalemate.in_check());
    let (best, score) = search("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 4);
    assert_eq!((best, score), (Move::NONE.to_uci(), 0));
    // King and knight against a king cannot mate: every line is a draw.
    let (_, score) = search("8/8/8/8/8/5k2/8/6KN w - - 0 1", 8);
    assert_eq!(score, 0);
    // The only legal move takes the queen and leaves two bare kings.
    let (best, score) = search("7k/6Q1/8/5K2/8/8/8/8 b - - 0 1", 4);
    assert_eq!((best.as_str(), score), ("h8g7", 0));
}
