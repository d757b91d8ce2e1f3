#!/usr/bin/env python3
"""Cross-check Coherent's move generator against python-chess on positions from random games:
divide at depth 2 must match move for move. Usage: perft-crosscheck.py [binary] [positions] [seed]"""
import random
import subprocess
import sys

import chess

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/coherent"
count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)

fens = []
while len(fens) < count:
    b = chess.Board()
    for _ in range(rng.randrange(1, 120)):
        moves = list(b.legal_moves)
        if not moves:
            break
        # Prefer captures and promotions now and then to reach sparse, tactical positions.
        noisy = [m for m in moves if b.is_capture(m) or m.promotion]
        b.push(rng.choice(noisy if noisy and rng.random() < 0.4 else moves))
    fens.append(b.fen())

script = "".join(f"position fen {f}\nperft 2\n" for f in fens) + "quit\n"
out = subprocess.run([binary], input=script, capture_output=True, text=True, check=True).stdout
blocks = out.split("Nodes searched: ")
bad = 0
for i, fen in enumerate(fens):
    lines = blocks[i].strip().splitlines()
    got = {l.split(": ")[0]: int(l.split(": ")[1]) for l in lines if ": " in l and len(l.split(": ")[0]) in (4, 5)}
    b = chess.Board(fen)
    want = {}
    for m in b.legal_moves:
        b.push(m)
        want[m.uci()] = b.legal_moves.count()
        b.pop()
    if not want:
        want = {}
    if got != want:
        bad += 1
        print(f"MISMATCH {fen}: extra {set(got) - set(want)} missing {set(want) - set(got)}")
print(f"{count} positions, {bad} mismatches")
sys.exit(1 if bad else 0)
