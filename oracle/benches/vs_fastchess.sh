#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Runner parity: `oracle match` and fastchess (built from its source) play the same games, and
# their results are set side by side. Both read the same EPD book in file order with colours
# swapped in each pair, so every pair starts from the same opening under both runners.
#
#   oracle/benches/vs_fastchess.sh                 every rung below and the speed run
#   ONLY="ethereal-chess@1+0.01 speed" oracle/benches/vs_fastchess.sh
#
# A rung is OPPONENT@TC: Coherent against a Debian engine (stockfish, ethereal-chess, toga2 or
# glaurung; installed with apt-get when missing) at BASE+INC seconds, Hash 16, one thread,
# concurrency 2. The default rungs:
#   stockfish@1+0.01  ethereal-chess@1+0.01  toga2@1+0.01  glaurung@1+0.01  ethereal-chess@8+0.08
# and `speed`: Stockfish against itself at 5,000 nodes per move, SPEED_GAMES games, the wall
# time of each runner. tools/ladder.sh plays its ladder through this script.
#
# Per rung and runner it prints W-D-L from Coherent's side, each engine's time forfeits, Elo
# with its 95% interval (trinomial, the same formula for both runners, from the PGN) and the
# wall time; then whether the oracle forfeited no more games than fastchess and whether the
# two intervals overlap. Exit status 1 when a rung fails either check.
#
# Environment:
#   GAMES        games per rung, even; default 100
#   SPEED_GAMES  games of the speed run, even; default 200
#   COHERENT     the engine to measure; default `cargo build --release -p coherent` of this tree
#   ORACLE       default target/release/oracle, built if missing
#   FASTCHESS    a fastchess binary; default: built from FASTCHESS_REPO at FASTCHESS_REF in
#                ~/.cache/coherent-oracle/fastchess-REF (needs git, make and a C++17 compiler)
#   FASTCHESS_REPO  default https://github.com/Disservin/fastchess
#   FASTCHESS_REF   default v1.8.2-alpha
#   BOOK         default oracle/tests/fixtures/play/openings.epd (64 openings, neither of the
#                oracle's books); GAMES/2 pairs read it from the top
#   ONLY         the rungs to run, space-separated (OPPONENT@TC or speed); default the rungs above
#   OUT          result directory (PGNs, logs, results.md); default a new /tmp/vs-fastchess.*
#
# Each match holds /tmp/coherent-measure.lock, so no other measurement shares the cores.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GAMES=${GAMES:-100}
SPEED_GAMES=${SPEED_GAMES:-200}
BOOK=${BOOK:-$ROOT/oracle/tests/fixtures/play/openings.epd}
OUT=${OUT:-$(mktemp -d /tmp/vs-fastchess.XXXXXX)}
FASTCHESS_REPO=${FASTCHESS_REPO:-https://github.com/Disservin/fastchess}
FASTCHESS_REF=${FASTCHESS_REF:-v1.8.2-alpha}
LOCK=/tmp/coherent-measure.lock
CONCURRENCY=2
DEFAULT_RUNGS="stockfish@1+0.01 ethereal-chess@1+0.01 toga2@1+0.01 glaurung@1+0.01 ethereal-chess@8+0.08 speed"
OPPONENTS="stockfish ethereal-chess toga2 glaurung"
RUNGS=${ONLY:-$DEFAULT_RUNGS}

die() {
  echo "vs_fastchess: $*" >&2
  exit 2
}

for games in "$GAMES" "$SPEED_GAMES"; do
  [[ $games =~ ^[0-9]+$ ]] && ((games >= 2 && games % 2 == 0)) ||
    die "GAMES and SPEED_GAMES must be even numbers of at least 2, got '$games'"
done
[[ -f $BOOK ]] || die "BOOK: no such file: $BOOK"
packages=()
for rung in $RUNGS; do
  [[ $rung == speed ]] && packages+=(stockfish) && continue
  opponent=${rung%@*}
  [[ $rung == *@* && " $OPPONENTS " == *" $opponent "* ]] ||
    die "ONLY: '$rung' is not speed or OPPONENT@TC with OPPONENT one of: $OPPONENTS"
  [[ ${rung#*@} =~ ^[0-9]+(\.[0-9]+)?\+[0-9]+(\.[0-9]+)?$ ]] ||
    die "ONLY: '$rung': the time control must be BASE+INC in seconds (e.g. 8+0.08)"
  packages+=("$opponent")
done
for tool in flock python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || die "needs $tool on PATH"
done
mkdir -p "$OUT"
# Matches run in their own directories: every path given must stay valid there.
OUT=$(realpath "$OUT")
BOOK=$(realpath "$BOOK")

if [[ -z ${COHERENT:-} ]]; then
  (cd "$ROOT" && flock "$LOCK" cargo build --release --locked -q -p coherent)
  COHERENT=$ROOT/target/release/coherent
fi
[[ -x $COHERENT ]] || die "COHERENT: not an executable: $COHERENT"
COHERENT=$(realpath "$COHERENT")
ORACLE=${ORACLE:-$ROOT/target/release/oracle}
if [[ ! -x $ORACLE ]]; then
  (cd "$ROOT" && flock "$LOCK" cargo build --release --locked -q -p oracle)
fi
ORACLE=$(realpath "$ORACLE")
if [[ -z ${FASTCHESS:-} ]]; then
  src=${XDG_CACHE_HOME:-$HOME/.cache}/coherent-oracle/fastchess-$FASTCHESS_REF
  if [[ ! -x $src/fastchess ]]; then
    rm -rf "$src"
    git clone -q --depth 1 --branch "$FASTCHESS_REF" "$FASTCHESS_REPO" "$src" ||
      die "cannot fetch fastchess $FASTCHESS_REF from $FASTCHESS_REPO"
    flock "$LOCK" make -C "$src" -j2 >"$OUT/fastchess-build.log" 2>&1 ||
      die "building fastchess failed (see $OUT/fastchess-build.log)"
  fi
  FASTCHESS=$src/fastchess
fi
[[ -x $FASTCHESS ]] || die "FASTCHESS: not an executable: $FASTCHESS"
FASTCHESS=$(realpath "$FASTCHESS")

as_root() {
  if ((EUID == 0)); then "$@"; else sudo "$@"; fi
}

# The Debian engines the rungs need, installed when one is missing.
missing=()
for pkg in $(printf '%s\n' "${packages[@]}" | sort -u); do
  [[ -x /usr/games/$pkg ]] || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "vs_fastchess: installing ${missing[*]}" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# engine_binary PKG: the Debian engine's executable.
engine_binary() {
  local binary=/usr/games/$1
  [[ -x $binary ]] || die "$1 is not installed (apt-get install $1)"
  echo "$binary"
}

# The UCI options an opponent needs beyond Hash.
opponent_options() {
  case $1 in
    glaurung) echo "option.Threads=1" ;;
    *) echo "" ;;
  esac
}

# timed LOG CMD…: runs CMD under the lock in LOG's directory (fastchess writes its config.json
# where it runs), its output to LOG; prints its wall time in seconds, measured once the lock is
# held (a wait for another measurement is not the runner's time).
timed() {
  local log=$1
  shift
  (cd "$(dirname "$log")" &&
    flock "$LOCK" /usr/bin/time -f %e -o "$log.wall" "$@" >"$log" 2>&1) ||
    echo "vs_fastchess: exit $? from $1 (see $log)" >&2
  python3 -c "import sys; print(f'{float(open(sys.argv[1]).read().split()[-1]):.1f}')" "$log.wall"
}

# summarize PGN RUNNER RUNG WALL: one Markdown table row from a PGN (W-D-L of the engine named
# coherent, or of the first engine in the speed run; forfeits per engine; Elo ± 95%).
summarize() {
  python3 - "$@" <<'PY'
import math, re, sys
pgn, runner, rung, wall = sys.argv[1:5]
first = "coherent" if rung != "speed" else "sf-a"
text = open(pgn, encoding="utf-8", errors="replace").read()
wins = draws = losses = 0
forfeits = {}
for block in re.split(r"\n(?=\[Event )", text):
    tags = dict(re.findall(r'^\[(\w+) "([^"]*)"\]', block, re.M))
    if "Result" not in tags:
        continue
    white, black, result = tags.get("White"), tags.get("Black"), tags["Result"]
    if result == "1/2-1/2":
        draws += 1
    elif (result == "1-0") == (white == first):
        wins += 1
    elif result in ("1-0", "0-1"):
        losses += 1
    if tags.get("Termination") == "time forfeit" and result in ("1-0", "0-1"):
        loser = black if result == "1-0" else white
        forfeits[loser] = forfeits.get(loser, 0) + 1
games = wins + draws + losses
score = (wins + draws / 2) / games if games else 0.5
elo = lambda s: -400 * math.log10(1 / s - 1) if 0 < s < 1 else float("nan")
if games and 0 < score < 1:
    var = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score ** 2) / games
    half = 1.959964 * math.sqrt(var / games)
    # An interval reaching a score of 0 or 1 has no Elo bound on that side.
    low = elo(score - half) if score - half > 0 else float("-inf")
    high = elo(score + half) if score + half < 1 else float("inf")
    bound = lambda x: f"{x:+.1f}" if math.isfinite(x) else ("+∞" if x > 0 else "−∞")
    figure = f"{elo(score):+.1f} [{bound(low)}, {bound(high)}]"
else:
    low = high = float("nan")
    figure = "n/a"
faults = ", ".join(f"{name} {count}" for name, count in sorted(forfeits.items())) or "none"
print(f"| {rung} | {runner} | {games} | {wins}-{draws}-{losses} | {faults} | {figure} | {wall} s |")
print(f"#stats {sum(forfeits.values())} {low} {high}")
PY
}

results=$OUT/results.md
{
  echo "Coherent: $COHERENT ($(sha256sum "$COHERENT" | cut -c1-16)…), oracle: $ORACLE, fastchess: $FASTCHESS_REF"
  echo "Book: ${BOOK#"$ROOT"/} in file order; $GAMES games per rung, concurrency $CONCURRENCY, Hash 16"
  echo
  echo "| rung | runner | games | W-D-L | time forfeits | Elo [95%] | wall |"
  echo "|---|---|---|---|---|---|---|"
} >"$results"
failed=0

for rung in $RUNGS; do
  dir=$OUT/$rung
  mkdir -p "$dir"
  if [[ $rung == speed ]]; then
    sf=$(engine_binary stockfish)
    pairs=$((SPEED_GAMES / 2))
    echo "vs_fastchess: speed, Stockfish vs Stockfish at 5000 nodes, $SPEED_GAMES games" >&2
    oracle_wall=$(timed "$dir/oracle.log" "$ORACLE" match --engine "cmd=$sf,name=sf-a" --engine "cmd=$sf,name=sf-b" \
      --each option.Hash=16,option.Threads=1 --nodes 5000 --concurrency $CONCURRENCY \
      --pairs $pairs --book "$BOOK" --book-order sequential --pgn-out "$dir/oracle.pgn" \
      )
    fastchess_wall=$(timed "$dir/fastchess.log" "$FASTCHESS" -engine "cmd=$sf" name=sf-a -engine "cmd=$sf" name=sf-b \
      -each tc=inf nodes=5000 option.Hash=16 option.Threads=1 -concurrency $CONCURRENCY \
      -rounds $pairs -repeat -openings "file=$BOOK" format=epd order=sequential \
      -pgnout "file=$dir/fastchess.pgn")
  else
    opponent=${rung%@*}
    tc=${rung#*@}
    binary=$(engine_binary "$opponent")
    read -r -a extra <<<"$(opponent_options "$opponent")"
    oracle_spec="cmd=$binary,name=$opponent"
    for option in "${extra[@]}"; do oracle_spec+=",$option"; done
    pairs=$((GAMES / 2))
    echo "vs_fastchess: coherent vs $opponent at $tc, $GAMES games per runner" >&2
    oracle_wall=$(timed "$dir/oracle.log" "$ORACLE" match --engine "cmd=$COHERENT,name=coherent" \
      --engine "$oracle_spec" --each option.Hash=16 --tc "$tc" --concurrency $CONCURRENCY \
      --pairs $pairs --book "$BOOK" --book-order sequential --pgn-out "$dir/oracle.pgn" \
      )
    fastchess_wall=$(timed "$dir/fastchess.log" "$FASTCHESS" -engine "cmd=$COHERENT" name=coherent \
      -engine "cmd=$binary" "name=$opponent" "${extra[@]}" -each "tc=$tc" option.Hash=16 \
      -concurrency $CONCURRENCY -rounds $pairs -repeat \
      -openings "file=$BOOK" format=epd order=sequential \
      -pgnout "file=$dir/fastchess.pgn")
  fi
  oracle_row=$(summarize "$dir/oracle.pgn" "oracle match" "$rung" "$oracle_wall")
  fastchess_row=$(summarize "$dir/fastchess.pgn" fastchess "$rung" "$fastchess_wall")
  grep -v '^#stats' <<<"$oracle_row" >>"$results"
  grep -v '^#stats' <<<"$fastchess_row" >>"$results"
  read -r _ oracle_forfeits oracle_low oracle_high <<<"$(grep '^#stats' <<<"$oracle_row")"
  read -r _ fastchess_forfeits fastchess_low fastchess_high <<<"$(grep '^#stats' <<<"$fastchess_row")"
  verdict=$(python3 - "$oracle_forfeits" "$fastchess_forfeits" "$oracle_low" "$oracle_high" \
    "$fastchess_low" "$fastchess_high" "$oracle_wall" "$fastchess_wall" "$rung" <<'PY'
import math, sys
of, ff = int(sys.argv[1]), int(sys.argv[2])
ol, oh, fl, fh, ow, fw = map(float, sys.argv[3:9])
rung = sys.argv[9]
notes, ok = [], True
if of > ff:
    ok = False
notes.append(f"forfeits {of} ≤ {ff}" if of <= ff else f"MORE FORFEITS: {of} > {ff}")
if rung != "speed":
    if any(math.isnan(x) for x in (ol, oh, fl, fh)):
        notes.append("intervals not computable")
    elif ol <= fh and fl <= oh:
        notes.append("intervals overlap")
    else:
        ok = False
        notes.append("INTERVALS DO NOT OVERLAP")
notes.append(f"oracle wall / fastchess wall = {ow / fw:.2f}")
print(("ok" if ok else "FAIL") + ": " + "; ".join(notes))
PY
)
  echo "| $rung | check | | | | $verdict | |" >>"$results"
  [[ $verdict == ok* ]] || failed=1
done

cat "$results"
echo "Results and PGNs: $OUT" >&2
exit $failed
