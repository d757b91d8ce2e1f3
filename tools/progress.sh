#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The measured points of the progress line (docs/progress.md): the register's current engine
# against earlier ones, each a fixed-length match of the two registered binaries, rebuilt
# bit-identically from the commits their entries record, played by `oracle register measure`.
# Each match writes measurements/<MEASURED>-vs-<BASELINE>-<TC>-<DATE>.yaml and its games, which
# this script compresses (gzip -9 -n: the same games give the same bytes) beside it; commit both,
# then `oracle register site` draws them beside the claimed line.
#
#   tools/progress.sh                        current engine vs T-0001 and T-0013, 400 games at 1+0.01
#   GAMES=4 TC=nodes=2000 tools/progress.sh  a quick check that everything runs
#   MEASURED=T-0020 BASELINES=T-0013 tools/progress.sh
#
# Environment:
#   MEASURED   the entry measured; default the newest genesis, Gewinn or Korrektur entry
#   BASELINES  entries it plays against, space-separated; default "T-0001 T-0013"
#   TC         time control BASE+INC seconds (or nodes=N); default 1+0.01
#   GAMES      games per match, even; default 400
#   BOOK       opening book; default books/book-a.epd
#   ORACLE     the oracle binary; default target/release/oracle, built first
#
# Matches at a clock hold /tmp/coherent-measure.lock, so that they never share the machine with
# another measurement; builds hold /tmp/coherent-compile.lock and run at idle priority.
# Exit status: that of the first `oracle register measure` that fails (2 on bad input).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

TC=${TC:-1+0.01}
GAMES=${GAMES:-400}
BOOK=${BOOK:-books/book-a.epd}
BASELINES=${BASELINES:-T-0001 T-0013}
if [[ -z ${ORACLE:-} ]]; then
  flock /tmp/coherent-compile.lock chrt --idle 0 cargo build --release --locked -p oracle
  ORACLE=$ROOT/target/release/oracle
fi
if [[ -z ${MEASURED:-} ]]; then
  # The register's current engine: the newest entry that landed one (genesis, Gewinn, Korrektur).
  # An Abgelehnt entry's candidate left main; a Gleich entry's is its predecessor's binary.
  newest=$(find register -maxdepth 1 -name 'T-[0-9][0-9][0-9][0-9].yaml' -print0 |
    xargs -0 -r grep -l -E '^verdict: (genesis|gewinn|korrektur)$' | sort | tail -n 1)
  if [[ -z $newest ]]; then
    echo "progress: register/ holds no entry that landed an engine" >&2
    exit 2
  fi
  MEASURED=$(basename "$newest" .yaml)
fi

for baseline in $BASELINES; do
  echo "progress: $MEASURED vs $baseline at $TC, $GAMES games"
  measure=("$ORACLE" register measure "$MEASURED" "$baseline" --tc "$TC" --games "$GAMES" --book "$BOOK")
  if [[ $TC == nodes=* ]]; then
    chrt --idle 0 "${measure[@]}"
  else
    flock /tmp/coherent-measure.lock "${measure[@]}"
  fi
done
for pgn in measurements/*.pgn; do
  if [[ -f $pgn ]]; then gzip -9 -n "$pgn"; fi
done
echo "progress: commit measurements/, then: $ORACLE register site --out site"
