#!/usr/bin/env bash
# Match-runner measurements of issue 4, each run under the shared measurement lock.
#
#   play_bench.sh glaurung   Stockfish vs Glaurung, 40 games at 1+0.01, concurrency 2,
#                            every PGN game re-validated with python-chess
#   play_bench.sh tc         Stockfish vs itself at 1+0.01, concurrency 1 and 2: games/min,
#                            runner overhead per move (measured move time − the engine's
#                            reported `time`, p50/p95), time losses
#   play_bench.sh nodes      the same at --nodes 5000, concurrency 1 (50 games) and 2 (200
#                            games); the latter also gives the engines' CPU time (user+sys of
#                            the engine processes) / (2 × wall)
#   play_bench.sh all        all three
#
# Each mode holds the measurement lock once, so its runs are back to back.
# Environment: ORACLE (default target/release/oracle), SF, GLAURUNG, BOOK, OUT (result dir),
# TC_PAIRS (pairs per 1+0.01 run, default 25).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ORACLE=${ORACLE:-$ROOT/target/release/oracle}
SF=${SF:-/usr/games/stockfish}
GLAURUNG=${GLAURUNG:-/usr/games/glaurung}
BOOK=${BOOK:-$ROOT/oracle/tests/fixtures/play/openings.epd}
OUT=${OUT:-$(mktemp -d /tmp/play-bench.XXXXXX)}
TC_PAIRS=${TC_PAIRS:-25}
LOCK=/tmp/coherent-measure.lock
mkdir -p "$OUT"
export OUT
[ -x "$ORACLE" ] || (cd "$ROOT" && cargo build --release -p oracle)

sf_pair() {
  echo --engine "cmd=$SF,name=sf-a,option.Threads=1,option.Hash=16" \
       --engine "cmd=$SF,name=sf-b,option.Threads=1,option.Hash=16"
}

# run NAME ARGS…: one match, JSON summary to $OUT/NAME.json, load noted.
run() {
  local name=$1; shift
  echo "== $name: $*" >&2
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  "$ORACLE" match --book "$BOOK" --seed 1 --json --pgn-out "$OUT/$name.pgn" "$@" > "$OUT/$name.json"
  python3 - "$OUT/$name.json" "$name" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
games = j["games_played"]
tf = j["terminations"]["time_forfeit"]
print(f"{sys.argv[2]:>12}: games {games:4d}  games/min {j['games_per_minute']:7.1f}  "
      f"overhead/move p50 {j['move_overhead_ms']['p50']:+.3f} ms p95 {j['move_overhead_ms']['p95']:+.3f} ms "
      f"({j['move_overhead_ms']['moves']} moves)  time losses {tf} ({1000 * tf / max(games, 1):.1f}/1000 games)  "
      f"engine CPU {j['engine_cpu_seconds']:.1f} s / ({j['concurrency']} x wall {j['wall_seconds']:.1f} s) = {100 * j['engine_cpu_share']:.1f}%  "
      f"runner CPU {j['runner_cpu_seconds']:.1f} s  "
      f"W-D-L {j['wins']}-{j['draws']}-{j['losses']} ptnml {j['pentanomial']} terminations {j['terminations']}")
PY
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
}

glaurung() {
  run sf-glaurung --engine "cmd=$SF,name=Stockfish 15.1,option.Threads=1,option.Hash=16" \
      --engine "cmd=$GLAURUNG,name=Glaurung 2.2,option.Threads=1" --tc 1+0.01 --pairs 20 --concurrency 2
  python3 "$ROOT/oracle/benches/play_validate_pgn.py" "$OUT/sf-glaurung.pgn" 40
}

tc() {
  run tc-c1 $(sf_pair) --tc 1+0.01 --pairs "$TC_PAIRS" --concurrency 1
  run tc-c2 $(sf_pair) --tc 1+0.01 --pairs "$TC_PAIRS" --concurrency 2
}

nodes() {
  run nodes-c1 $(sf_pair) --nodes 5000 --pairs 25 --concurrency 1
  run nodes-c2 $(sf_pair) --nodes 5000 --pairs 100 --concurrency 2
}

mode=${1:-all}
case "$mode" in
  glaurung | tc | nodes | all) ;;
  *) echo "usage: $0 [glaurung|tc|nodes|all]" >&2; exit 2 ;;
esac
if [ -z "${PLAY_BENCH_LOCKED:-}" ]; then
  if [ "$mode" = all ]; then
    for m in glaurung tc nodes; do "$0" "$m"; done
    exit 0
  fi
  PLAY_BENCH_LOCKED=1 OUT=$OUT exec flock "$LOCK" "$0" "$mode"
fi
"$mode"
echo "results in $OUT" >&2
