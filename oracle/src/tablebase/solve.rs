//! Retrograde analysis: depth to mate for every placement of one ending.
//!
//! Ply 0 holds the checkmates. Each later ply `n` takes the positions decided at ply `n - 1`
//! and walks their predecessors (un-moves): after a loss, every predecessor wins in `n`; after a
//! win, each predecessor loses one escape, and the one whose last escape goes is lost in `n`.
//! Captures leave the ending; their values come from the smaller tables and enter the same
//! schedule at the ply they imply. Whatever is never decided is a draw.

use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;
use shakmaty::Color;

use super::ending::Ending;
use super::index::{Indexer, normalising, transform};
use super::movegen::Placement;
use super::outcome::{DRAW, INVALID, Outcome};

/// A value entering the schedule from a capture into a smaller ending.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// The position wins at this ply by a capture.
    Win(usize),
    /// One of the position's moves is a capture that loses at this ply.
    Escape(usize),
}

/// Placements with rayon's work split in chunks of this many indices (cheap per index).
const CHUNK: usize = 1 << 12;

/// Solves `ending`; `capture_value` gives the value of a position reached by a capture.
///
/// Returns one byte per index (see `Outcome::from_byte`).
pub fn solve(
    ending: &Ending,
    capture_value: &(dyn Fn(&Placement, Color) -> Outcome + Sync),
) -> Vec<u8> {
    let layout = ending.layout();
    let ix = Indexer::new(layout.len());
    let size = ix.size();
    let values: Vec<AtomicU8> = (0..size).map(|_| AtomicU8::new(DRAW)).collect();
    let escapes: Vec<AtomicU8> = (0..size).map(|_| AtomicU8::new(0)).collect();

    // Initial pass: legality, mates, escape counts and the capture events.
    let events: Vec<(usize, Event)> = (0..size)
        .into_par_iter()
        .with_min_len(CHUNK)
        .fold(Vec::new, |mut events, idx| {
            let (squares, stm) = ix.decode(idx);
            let p = Placement::new(&layout, &squares);
            if p.has_overlap() || p.in_check(!stm) {
                values[idx].store(INVALID, Ordering::Relaxed);
                return events;
            }
            let mut moves = 0u8;
            p.for_each_legal(stm, |mv, next| {
                moves += 1;
                if mv.captured.is_some() {
                    match capture_value(next, !stm).from_parent() {
                        Outcome::Win(n) => events.push((usize::from(n), Event::Win(idx))),
                        Outcome::Loss(n) => events.push((usize::from(n), Event::Escape(idx))),
                        Outcome::Draw => {}
                    }
                }
            });
            if moves == 0 && p.in_check(stm) {
                values[idx].store(Outcome::mate_byte(0), Ordering::Relaxed);
            }
            escapes[idx].store(moves, Ordering::Relaxed);
            events
        })
        .reduce(Vec::new, |mut a, mut b| {
            a.append(&mut b);
            a
        });
    let last_event = events.iter().map(|&(ply, _)| ply).max().unwrap_or(0);
    let mut schedule: Vec<Vec<Event>> = vec![Vec::new(); last_event + 1];
    for (ply, event) in events {
        schedule[ply].push(event);
    }

    // Settles `idx` at `ply` when it wins or its last escape is gone; true if newly decided.
    let win = |idx: usize, ply: u8| {
        values[idx]
            .compare_exchange(
                DRAW,
                Outcome::mate_byte(ply),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok()
    };
    let lose_escape = |idx: usize, ply: u8| {
        if values[idx].load(Ordering::Relaxed) != DRAW {
            return false;
        }
        let left = escapes[idx].fetch_sub(1, Ordering::Relaxed) - 1;
        if left == 0 {
            values[idx].store(Outcome::mate_byte(ply), Ordering::Relaxed);
        }
        left == 0
    };

    let mut ply = 1usize;
    loop {
        assert!(ply < 254, "depth to mate exceeds the table byte");
        let n = ply as u8;
        let mut decided = 0usize;
        for &event in schedule.get(ply).map(Vec::as_slice).unwrap_or(&[]) {
            let newly = match event {
                Event::Win(idx) => win(idx, n),
                Event::Escape(idx) => lose_escape(idx, n),
            };
            decided += usize::from(newly);
        }
        let frontier = Outcome::mate_byte(n - 1);
        decided += (0..size)
            .into_par_iter()
            .with_min_len(CHUNK)
            .map(|idx| {
                if values[idx].load(Ordering::Relaxed) != frontier {
                    return 0;
                }
                let (squares, stm) = ix.decode(idx);
                let mut newly = 0;
                for_each_predecessor(ix, idx, &Placement::new(&layout, &squares), stm, |prev| {
                    let pred = ix.index(&prev.squares, !stm);
                    if values[pred].load(Ordering::Relaxed) == INVALID {
                        return;
                    }
                    let settled = if ply % 2 == 1 {
                        win(pred, n)
                    } else {
                        lose_escape(pred, n)
                    };
                    newly += usize::from(settled);
                });
                newly
            })
            .sum::<usize>();
        if decided == 0 && ply > last_event {
            break;
        }
        ply += 1;
    }
    values.into_iter().map(AtomicU8::into_inner).collect()
}

/// Calls `f` once for every stored placement with a legal move into entry `idx` (placement `q`,
/// `stm` to move).
///
/// An entry stands for those mirror images of its placement that index to it, and a
/// predecessor's move may reach any of them; so the un-moves start from each such image and keep
/// only predecessors in stored (normalised) form. Each (predecessor entry, move) pair is thus
/// seen exactly once, matching the escape counts of the initial pass.
fn for_each_predecessor(
    ix: Indexer,
    idx: usize,
    q: &Placement,
    stm: Color,
    mut f: impl FnMut(&Placement),
) {
    let mover = !stm;
    let mut seen: Vec<[u8; 4]> = Vec::with_capacity(8);
    for t in 0..8 {
        let mut image = *q;
        for sq in &mut image.squares[..q.len] {
            *sq = transform(*sq, t);
        }
        if seen.contains(&image.squares) || ix.index(&image.squares, stm) != idx {
            continue;
        }
        seen.push(image.squares);
        // Outside the triangle only a white-king un-move can bring the king back into it.
        let king_stored = normalising(image.squares[0]) == 0;
        if !king_stored && mover == Color::Black {
            continue;
        }
        image.for_each_unmove(mover, |slot, prev| {
            if (king_stored || slot == 0) && normalising(prev.squares[0]) == 0 {
                f(prev);
            }
        });
    }
}
