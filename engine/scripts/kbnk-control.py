#!/usr/bin/env python3
"""The KBNK study's control set: random legal positions of the endings next to KBNK.

64 positions each of KQK, KRK, KNNK, KBBK with same-coloured bishops and KBBK with
opposite-coloured bishops (320 in all), the strong side (White) to move, not in check,
drawn with a fixed seed so the file is reproducible:

    python3 engine/scripts/kbnk-control.py --seed 3 > engine/proofs/kbnk-control.epd

The KBNK mating-corner term must leave best move and evaluation unchanged on every one of
them (`oracle proof study ... --control engine/proofs/kbnk-control.epd`). Needs python-chess.
"""

import argparse
import random

import chess

ENDINGS = [
    ("KQK", [chess.QUEEN], None),
    ("KRK", [chess.ROOK], None),
    ("KNNK", [chess.KNIGHT, chess.KNIGHT], None),
    ("KBBK same-coloured", [chess.BISHOP, chess.BISHOP], "same"),
    ("KBBK opposite-coloured", [chess.BISHOP, chess.BISHOP], "opposite"),
]
PER_ENDING = 64


def square_colour(square):
    return (chess.square_file(square) + chess.square_rank(square)) % 2


def draw(rng, pieces, bishops):
    while True:
        squares = rng.sample(chess.SQUARES, 2 + len(pieces))
        if bishops is not None:
            same = square_colour(squares[2]) == square_colour(squares[3])
            if same != (bishops == "same"):
                continue
        board = chess.Board(None)
        board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        for square, piece in zip(squares[2:], pieces):
            board.set_piece_at(square, chess.Piece(piece, chess.WHITE))
        board.turn = chess.WHITE
        if board.is_valid() and not board.is_check() and any(board.legal_moves):
            return board.fen()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    seen = set()
    for _name, pieces, bishops in ENDINGS:
        count = 0
        while count < PER_ENDING:
            fen = draw(rng, pieces, bishops)
            if fen not in seen:
                seen.add(fen)
                print(fen)
                count += 1


if __name__ == "__main__":
    main()
