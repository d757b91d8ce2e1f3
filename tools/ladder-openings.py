#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the ladder's book: balanced openings that none of the project's other books hold.

The ladder measures Coherent against other engines, so its openings must be neither the oracle's
(books/book-a.epd, books/book-b.epd), the tuner's and self-checks' (tools/spsa/openings.epd) nor
the tests' (oracle/tests/fixtures/play/openings.epd): an engine tuned or judged on a position
would meet it again here. Each opening is eight random legal plies from the start position
(seeded, so the file is reproducible), kept when Stockfish at depth 12 scores it within
MARGIN centipawns of equality and its position is new.

    python3 tools/ladder-openings.py > tools/ladder-openings.epd

Needs python-chess (pip install chess) and Stockfish at /usr/games/stockfish.
"""
import random
import sys
from pathlib import Path

import chess
import chess.engine

COUNT = 200
PLIES = 8
MARGIN = 60
SEED = 48
ROOT = Path(__file__).resolve().parent.parent
OTHER_BOOKS = [
    "books/book-a.epd",
    "books/book-b.epd",
    "tools/spsa/openings.epd",
    "oracle/tests/fixtures/play/openings.epd",
]


def position_key(fen: str) -> str:
    """The first four EPD fields: the position, without move counters or operations."""
    return " ".join(fen.split()[:4])


def main() -> int:
    taken = set()
    for book in OTHER_BOOKS:
        for line in (ROOT / book).read_text().splitlines():
            if line.strip():
                taken.add(position_key(line))
    rng = random.Random(SEED)
    openings = []
    with chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish") as engine:
        engine.configure({"Threads": 1, "Hash": 16})
        while len(openings) < COUNT:
            board = chess.Board()
            for _ in range(PLIES):
                moves = list(board.legal_moves)
                if not moves:
                    break
                board.push(rng.choice(moves))
            if board.is_game_over() or board.ply() < PLIES:
                continue
            key = position_key(board.epd())
            if key in taken:
                continue
            # A new game each time clears the hash, so the score, and the file, do not depend on order.
            info = engine.analyse(board, chess.engine.Limit(depth=12), game=key)
            score = info["score"].white()
            if score.is_mate() or abs(score.score()) > MARGIN:
                continue
            taken.add(key)
            openings.append(key)
    sys.stdout.write("".join(f"{fen}\n" for fen in openings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
