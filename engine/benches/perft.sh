#!/usr/bin/env bash
# The full perft suite at its published depths (startpos 6 = 119,060,324; Kiwipete 5 = 193,690,690; …):
# every line of engine/tests/data/*.perft, through the release binary's UCI `perft` command.
# `cargo test` runs the same files up to a node budget; this script runs them all (about a minute).
#
# Usage: engine/benches/perft.sh [binary] [max-nodes]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-target/release/coherent}
MAX=${2:-1000000000}
[ -x "$BIN" ] || cargo build --release -p coherent --locked
fail=0
total_nodes=0
start=$(date +%s.%N)
for file in engine/tests/data/*.perft; do
  id="" fen=""
  while read -r key rest; do
    case "$key" in
      id) id=$rest ;;
      epd) fen=$rest ;;
      perft)
        read -r depth expected <<<"$rest"
        [ "$expected" -le "$MAX" ] || continue
        got=$(printf 'position fen %s\nperft %s\nquit\n' "$fen" "$depth" | "$BIN" | sed -n 's/^Nodes searched: //p')
        if [ "$got" = "$expected" ]; then
          printf 'ok    %-28s depth %s  %12s\n' "$id" "$depth" "$got"
        else
          printf 'FAIL  %-28s depth %s  got %s expected %s\n' "$id" "$depth" "$got" "$expected"
          fail=1
        fi
        total_nodes=$((total_nodes + expected))
        ;;
    esac
  done < "$file"
done
end=$(date +%s.%N)
echo "total $total_nodes nodes in $(echo "$end - $start" | bc) s"
[ $fail -eq 0 ] && echo "perft suite: all exact" || { echo "perft suite: FAILED"; exit 1; }
