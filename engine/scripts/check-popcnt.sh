#!/usr/bin/env bash
# Build-shape self-check: disassemble `coherent_evaluate_popcnt` and its direct callees to depth 2
# and require hardware POPCNT in the entry and no software-popcount constants
# (0x5555…, 0x3333…, 0x0f0f…, 0x0101…) anywhere in that call tree.
#
# Usage: engine/scripts/check-popcnt.sh [binary]   (default target/release/coherent)
set -euo pipefail
BIN=${1:-target/release/coherent}
DIS=$(mktemp)
trap 'rm -f "$DIS"' EXIT
objdump -d --no-show-raw-insn "$BIN" > "$DIS"

body() { awk -v s="<$1>:" '$2 == s {p=1; next} p && /^$/ {exit} p' "$DIS"; }
callees() { body "$1" | grep -oE 'call +[0-9a-f]+ <[^>+]+>' | sed -E 's/.*<(.*)>/\1/' | sort -u; }
swar='0x5555555555555555|0x3333333333333333|0xf0f0f0f0f0f0f0f|0x101010101010101'

entry=${ENTRY:-coherent_evaluate_popcnt}
[ -n "$(body "$entry")" ] || { echo "FAIL: symbol $entry not found in $BIN"; exit 1; }
popcnts=$(body "$entry" | grep -cP '\tpopcnt\s' || true)
echo "$entry: $(body "$entry" | wc -l) instructions, $popcnts popcnt"
status=0
[ "$popcnts" -gt 0 ] || { echo "FAIL: no popcnt in $entry"; status=1; }
declare -A seen=([$entry]=1)
level=("$entry")
for depth in 1 2; do
  next=()
  for f in "${level[@]}"; do
    for c in $(callees "$f"); do
      [ -n "${seen[$c]:-}" ] && continue
      seen[$c]=1
      next+=("$c")
      hits=$(body "$c" | grep -ciE "\\\$($swar)\b" || true)
      echo "  depth $depth callee $c: $hits software-popcount constants"
      [ "$hits" -eq 0 ] || status=1
    done
  done
  level=("${next[@]}")
done
hits=$(body "$entry" | grep -ciE "\\\$($swar)\b" || true)
echo "$entry itself: $hits software-popcount constants"
[ "$hits" -eq 0 ] || status=1
[ $status -eq 0 ] && echo "OK: hardware POPCNT in the evaluation, no software popcount" || echo "FAIL"
exit $status
