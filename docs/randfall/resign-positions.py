#!/usr/bin/env python3
"""Starting positions for the resign-rule measurement: KBN+x against K+x, as in T-0002's stage 2.

In T-0002 (docs/randfall.md) every pair that differed was an ending in which the attacker kept
bishop and knight and the defender a pawn, a rook or a bishop: KBN+P against K+P, KBN against
K+R, KBN against K+B. This draws 25 random legal positions of each of

    KBNP-KP, KBN-KR, KBN-KB, KBN-KP

(100 in all; White holds the bishop and knight, the side to move is drawn too), with the side to
move neither in check nor able to capture, so each game starts in the class it was drawn for.
Pawns stand on ranks 2 to 7. The lines are EPD (four FEN fields and the ending as `c0`); a
game played from one starts at move 1, so the draw adjudication (from move 34) applies only
after 33 moves, where in T-0002 it applied at once. The seed makes the file reproducible:

    python3 docs/randfall/resign-positions.py --seed 13 > docs/randfall/resign-positions.epd

Needs python-chess. GPL-3.0-or-later.
"""

import argparse
import random

import chess

ENDINGS = [
    ("KBNP-KP", [chess.BISHOP, chess.KNIGHT, chess.PAWN], [chess.PAWN]),
    ("KBN-KR", [chess.BISHOP, chess.KNIGHT], [chess.ROOK]),
    ("KBN-KB", [chess.BISHOP, chess.KNIGHT], [chess.BISHOP]),
    ("KBN-KP", [chess.BISHOP, chess.KNIGHT], [chess.PAWN]),
]
PER_ENDING = 25
PAWN_SQUARES = [s for s in chess.SQUARES if 1 <= chess.square_rank(s) <= 6]


def place(rng, board, piece_type, colour):
    """Puts a piece of `piece_type` on a random empty square (pawns off the back ranks)."""
    squares = PAWN_SQUARES if piece_type == chess.PAWN else chess.SQUARES
    square = rng.choice([s for s in squares if board.piece_at(s) is None])
    board.set_piece_at(square, chess.Piece(piece_type, colour))


def draw(rng, attacker, defender):
    """A random legal position of the ending, side to move not in check and without a capture."""
    while True:
        board = chess.Board(None)
        place(rng, board, chess.KING, chess.WHITE)
        place(rng, board, chess.KING, chess.BLACK)
        for piece_type in attacker:
            place(rng, board, piece_type, chess.WHITE)
        for piece_type in defender:
            place(rng, board, piece_type, chess.BLACK)
        board.turn = rng.choice([chess.WHITE, chess.BLACK])
        quiet = not any(board.is_capture(m) for m in board.legal_moves)
        if board.is_valid() and not board.is_check() and any(board.legal_moves) and quiet:
            return board


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    seen = set()
    for name, attacker, defender in ENDINGS:
        count = 0
        while count < PER_ENDING:
            board = draw(rng, attacker, defender)
            if board.epd() not in seen:
                seen.add(board.epd())
                print(board.epd(c0=name))
                count += 1


if __name__ == "__main__":
    main()
