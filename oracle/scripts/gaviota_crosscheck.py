#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Cross-check `oracle tb probe` against the Gaviota 3-piece tables (an independent solver).

Samples random legal KQK and KRK positions (both sides to move, both colours as the strong
side), probes each with the oracle and with python-chess's pure-Python Gaviota prober, and
compares WDL and signed DTM in plies. Exit 0 when every sample agrees, 1 otherwise.

Needs: `apt-get install gaviotatb` (tables in /usr/share/gaviotatb/gtb4, the LZMA-compressed
set python-chess can read) and `pip install chess`.

    python3 oracle/scripts/gaviota_crosscheck.py --oracle target/release/oracle --samples 1000
"""

import argparse
import json
import random
import subprocess
import sys

import chess
import chess.gaviota


def random_position(rng, strong_piece):
    """A random legal position: two kings and one strong piece of a random colour."""
    while True:
        board = chess.Board(None)
        squares = rng.sample(range(64), 3)
        strong = rng.choice([chess.WHITE, chess.BLACK])
        board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        board.set_piece_at(squares[2], chess.Piece(strong_piece, strong))
        board.turn = rng.choice([chess.WHITE, chess.BLACK])
        if board.is_valid():
            return board


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", default="target/release/oracle")
    parser.add_argument("--gaviota", default="/usr/share/gaviotatb/gtb4")
    parser.add_argument("--samples", type=int, default=1000, help="per ending")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache-dir", default=None)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    tables = chess.gaviota.open_tablebase(args.gaviota)
    cache = ["--cache-dir", args.cache_dir] if args.cache_dir else []
    wdl_name = {1: "win", 0: "draw", -1: "loss"}
    mismatches = 0
    for name, piece in (("KQK", chess.QUEEN), ("KRK", chess.ROOK)):
        agree = 0
        outcomes = {"win": 0, "draw": 0, "loss": 0}
        for _ in range(args.samples):
            board = random_position(rng, piece)
            fen = board.fen()
            out = subprocess.run(
                [args.oracle, "tb", *cache, "probe", fen, "--json"],
                check=True, capture_output=True, text=True,
            )
            ours = json.loads(out.stdout)
            theirs = (wdl_name[tables.probe_wdl(board)], tables.probe_dtm(board))
            if (ours["wdl"], ours["dtm_plies"]) == theirs:
                agree += 1
                outcomes[ours["wdl"]] += 1
            else:
                mismatches += 1
                print(f"MISMATCH {fen}: oracle {ours['wdl']} {ours['dtm_plies']}, gaviota {theirs[0]} {theirs[1]}")
        print(f"{name}: {agree}/{args.samples} agree on WDL and DTM "
              f"(win {outcomes['win']}, draw {outcomes['draw']}, loss {outcomes['loss']})")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
