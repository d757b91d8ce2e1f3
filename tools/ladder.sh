#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The ladder: Coherent against three Debian engines of rising strength (Glaurung, Toga II,
# Ethereal) at 1+0.01 (or TC), played by `oracle match`; prints per opponent the games counted,
# W-D-L from Coherent's side, Elo with its 95% interval, the engines' faults (mostly the
# opponents' time forfeits) and W-D-L over the games without a fault.
#
#   tools/ladder.sh                      100 games per opponent, Coherent built from this tree
#   GAMES=4 tools/ladder.sh              a quick check that everything runs
#   COHERENT=/path/to/coherent tools/ladder.sh
#   TC=8+0.08 GAMES=100 ONLY=ethereal-chess tools/ladder.sh     one rung at a longer control
#
# Environment:
#   GAMES     games per opponent, even (one pair per opening, colours swapped); default 100
#   COHERENT  the engine to measure; default: `cargo build --release -p coherent` of this tree
#   ORACLE    the match runner; default target/release/oracle, built if missing
#   BOOK      openings; default oracle/tests/fixtures/play/openings.epd: 64 openings that are
#             neither book A nor book B, so the ladder never trains on the oracle's test books
#   SEED      seed of the opening order; default 1
#   TC        time control BASE+INC in seconds; default 1+0.01
#   ONLY      the opponents to play, by Debian package, space-separated; default all three
#   OUT       where each opponent's PGN and JSON summary go; default a new /tmp/ladder.* dir
#
# Missing engines are installed with apt-get (root, or through sudo). Each build and each match
# holds /tmp/coherent-measure.lock, released in between, so no other heavy job shares the cores.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GAMES=${GAMES:-100}
BOOK=${BOOK:-$ROOT/oracle/tests/fixtures/play/openings.epd}
SEED=${SEED:-1}
OUT=${OUT:-$(mktemp -d /tmp/ladder.XXXXXX)}
LOCK=/tmp/coherent-measure.lock
TC=${TC:-1+0.01}
CONCURRENCY=2
# Debian package and the UCI options it needs beyond Hash; weakest first.
ALL_OPPONENTS=(
  "glaurung option.Threads=1"
  "toga2"
  "ethereal-chess"
)
OPPONENTS=()
for opponent in "${ALL_OPPONENTS[@]}"; do
  if [[ -z ${ONLY:-} || " $ONLY " == *" ${opponent%% *} "* ]]; then
    OPPONENTS+=("$opponent")
  fi
done

die() {
  echo "ladder: $*" >&2
  exit 2
}

if ! [[ $GAMES =~ ^[0-9]+$ ]] || ((GAMES < 2 || GAMES % 2 != 0)); then
  die "GAMES must be an even number of at least 2 (games are played in pairs), got '$GAMES'"
fi
[[ -f $BOOK ]] || die "BOOK: no such file: $BOOK"
[[ $TC =~ ^[0-9]+(\.[0-9]+)?\+[0-9]+(\.[0-9]+)?$ ]] || die "TC must be BASE+INC in seconds (e.g. 8+0.08), got '$TC'"
for name in ${ONLY:-}; do
  known=false
  for opponent in "${ALL_OPPONENTS[@]}"; do
    [[ $name == "${opponent%% *}" ]] && known=true
  done
  $known || die "ONLY: unknown opponent '$name' (known: glaurung toga2 ethereal-chess)"
done
((${#OPPONENTS[@]} > 0)) || die "ONLY names no opponent (known: glaurung toga2 ethereal-chess)"
for tool in jq flock; do
  command -v "$tool" >/dev/null || die "needs $tool on PATH"
done

as_root() {
  if ((EUID == 0)); then "$@"; else sudo "$@"; fi
}

# install_missing PKG…: apt-get update and install only when one of them is not installed.
install_missing() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    echo "ladder: installing ${missing[*]}" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
}

# engine_binary PKG: the one executable the package installs under /usr/games.
engine_binary() {
  local bins
  mapfile -t bins < <(dpkg -L "$1" | grep '^/usr/games/' | while read -r f; do
    [[ -f $f && -x $f ]] && echo "$f"
  done)
  ((${#bins[@]} == 1)) || die "package $1: expected one engine in /usr/games, found ${#bins[@]}"
  echo "${bins[0]}"
}

packages=()
for opponent in "${OPPONENTS[@]}"; do packages+=("${opponent%% *}"); done
install_missing "${packages[@]}"

if [[ -z ${COHERENT:-} ]]; then
  (cd "$ROOT" && flock "$LOCK" nice -n 10 cargo build --release --locked -q -p coherent)
  COHERENT=$ROOT/target/release/coherent
fi
[[ -x $COHERENT ]] || die "COHERENT: not an executable: $COHERENT"
ORACLE=${ORACLE:-$ROOT/target/release/oracle}
if [[ ! -x $ORACLE ]]; then
  (cd "$ROOT" && flock "$LOCK" nice -n 10 cargo build --release --locked -q -p oracle)
fi
mkdir -p "$OUT"

results=()
for opponent in "${OPPONENTS[@]}"; do
  read -r pkg options <<<"$opponent"
  binary=$(engine_binary "$pkg")
  spec="cmd=$binary,name=$pkg"
  for option in $options; do spec+=",$option"; done
  echo "ladder: coherent vs $pkg, $GAMES games at $TC" >&2
  # Exit status 0 is the only success without an SPRT; anything else leaves no summary.
  flock "$LOCK" nice -n 10 "$ORACLE" match --json \
    --engine "cmd=$COHERENT,name=coherent" --engine "$spec" --each option.Hash=16 \
    --tc "$TC" --concurrency "$CONCURRENCY" --pairs $((GAMES / 2)) \
    --book "$BOOK" --seed "$SEED" --pgn-out "$OUT/$pkg.pgn" >"$OUT/$pkg.json" ||
    die "the match against $pkg failed (see $OUT/$pkg.json and the messages above)"
  results+=("$(jq -r --arg name "$pkg" '
    def fixed: if . == null then "n/a" else (. * 10 | round / 10 | tostring) end;
    [$name, .games_counted, "\(.wins)-\(.draws)-\(.losses)", (.elo | fixed),
     (if .elo_ci95 == null or (.elo_ci95 | any(. == null)) then "n/a"
      else ((.elo_ci95[1] - .elo_ci95[0]) / 2 | fixed) end),
     (.faults.first + .faults.second),
     (if .fault_free_wdl == null then "n/a"
      else (.fault_free_wdl | "\(.[0])-\(.[1])-\(.[2])") end)] | @tsv' "$OUT/$pkg.json")")
done

printf '\nCoherent (%s) at %s, book %s, results in %s\n' "$COHERENT" "$TC" "${BOOK#"$ROOT"/}" "$OUT"
{
  printf 'opponent\tgames\tW-D-L\tElo\t±95%%\tfaults\tW-D-L without faults\n'
  printf '%s\n' "${results[@]}"
} | column -t -s $'\t'
