#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The ladder: Coherent against four Debian engines of rising strength (Glaurung, Toga II,
# Ethereal, Stockfish), every rung played twice on the same games, once by `oracle match` and
# once by fastchess (built from its source), so that no figure about another engine rests on the
# oracle's runner alone. The matches, the table and the checks are those of the runner-parity
# benchmark, oracle/benches/vs_fastchess.sh, which this script calls with one rung per opponent
# and time control; see its header for the table's columns and the environment it also reads
# (COHERENT, ORACLE, FASTCHESS, OUT). Its book is tools/ladder-openings.epd, 200 balanced openings
# that none of the project's other books hold (tools/ladder-openings.py writes it), unless BOOK
# names another.
#
#   tools/ladder.sh                                  100 games per rung and runner at 1+0.01
#   GAMES=4 tools/ladder.sh                          a quick check that everything runs
#   TCS="1+0.01 8+0.08" ONLY="ethereal-chess stockfish" GAMES=200 tools/ladder.sh
#
# Environment:
#   GAMES  games per rung and runner, even (one pair per opening, colours swapped); default 100
#   TCS    time controls BASE+INC in seconds, space-separated; default 1+0.01
#   ONLY   opponents by Debian package, weakest first; default glaurung toga2 ethereal-chess stockfish
#
# Exit status: that of vs_fastchess.sh (1 when a rung has more oracle forfeits than fastchess
# forfeits or the two runners' intervals do not overlap, 2 on bad input).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
rungs=()
for tc in ${TCS:-1+0.01}; do
  for opponent in ${ONLY:-glaurung toga2 ethereal-chess stockfish}; do
    rungs+=("$opponent@$tc")
  done
done
BOOK=${BOOK:-$ROOT/tools/ladder-openings.epd} ONLY="${rungs[*]}" exec "$ROOT/oracle/benches/vs_fastchess.sh"
