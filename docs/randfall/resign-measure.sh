#!/usr/bin/env bash
# The resign-rule measurement (docs/randfall.md, "One-sided and two-sided resign"): T-0002's
# candidate (6d2f4b4, the KBNK term) against its predecessor (the engine of T-0001, 6908b29) at
# 16,000 nodes per move under the one-sided resign rule (3 moves at -400 cp), the two-sided one
# and none (decisive games played to the end, as Fishtest's worker has done since September 2026),
# the draw rule always the workstation profile's, in two sets of games:
#  1. positions: the 100 KBN+x against K+x positions of resign-positions.epd, both colours each;
#  2. replay: T-0002's stage 2 (book B, its seed, 8 plies) in the seven batches of 8 pairs in
#     which its LLR path fell by a lost pair (evidence/T-0002/stage-2-long.json: after pairs 480,
#     728, 2056, 3088, 3216, 3320 and 3352). At a fixed node count the games are the stage's own.
#
# Usage, from the repository root with target/release/oracle built (heavy: both cores):
#   flock /tmp/coherent-measure.lock nice -n 10 docs/randfall/resign-measure.sh OUT_DIR
#
# The engines are built from engine/ of each commit alone (a workspace of the engine, which has
# no dependencies, so no registry is needed) with the constitution's recipe: target-cpu x86-64,
# the release overrides and the oracle's path remapping. Their sha256 must be the register's
# (T-0002: candidate 432e40fe..., predecessor af5ebbce...), or the script stops.
# GPL-3.0-or-later.
set -euo pipefail
out=$(realpath -m "${1:?usage: resign-measure.sh OUT_DIR}")
repo=$(git rev-parse --show-toplevel)
oracle=$repo/target/release/oracle
mkdir -p "$out"

build() { # COMMIT SHA256 -> path of the binary
  local commit=$1 expected=$2 root=$out/build-$1
  rm -rf "$root" && mkdir -p "$root/src" "$root/home"
  git -C "$repo" archive "$commit" engine rust-toolchain.toml | tar -x -C "$root/src"
  git -C "$repo" show "$commit:Cargo.toml" |
    sed 's/members = \["engine", "oracle"\]/members = ["engine"]/' >"$root/src/Cargo.toml"
  local flags
  flags=$(printf '%s\x1f' -Ctarget-cpu=x86-64 \
    "--remap-path-prefix=$root/src=/coherent/src" \
    "--remap-path-prefix=$root/home=/coherent/cargo-home" \
    "--remap-path-prefix=$root/target=/coherent/target")
  (cd "$root/src" && env CARGO_HOME="$root/home" CARGO_ENCODED_RUSTFLAGS="${flags%$'\x1f'}" \
    CARGO_INCREMENTAL=0 LC_ALL=C TZ=UTC cargo build -q --release --offline -p coherent \
    --bin coherent --target-dir "$root/target" \
    --config profile.release.codegen-units=1 --config profile.release.debug=false \
    --config profile.release.incremental=false --config profile.release.lto=true \
    --config profile.release.opt-level=3 --config 'profile.release.panic="abort"' \
    --config profile.release.strip=false) >&2
  local binary=$root/target/release/coherent actual
  actual=$(sha256sum "$binary" | cut -d' ' -f1)
  if [[ $actual != "$expected" ]]; then
    echo "resign-measure: $commit built to $actual, the register has $expected" >&2
    exit 1
  fi
  echo "$binary"
}

candidate=$(build 6d2f4b4 432e40fefb9b2e3118d298b836cbb3e8ab2a91f8f9444e315205a5dd7b1025f4)
predecessor=$(build 6908b29 af5ebbce71ba9a992edd27cae53d710c5af6ba432f028878918cef55fa94e21b)

# The stage's seed: the first 16 hex digits of sha256("CANDIDATE\nPREDECESSOR\nlong").
stage_seed=$((16#$(printf '%s\n%s\n%s' 432e40fefb9b2e3118d298b836cbb3e8ab2a91f8f9444e315205a5dd7b1025f4 \
  af5ebbce71ba9a992edd27cae53d710c5af6ba432f028878918cef55fa94e21b long |
  sha256sum | cut -c1-16)))

play() { # RULE NAME MATCH-ARGS...
  local rule=$1 name=$2
  shift 2
  local resign=(--resign movecount=3,score=400)
  [[ $rule == two-sided ]] && resign=(--resign movecount=3,score=400,twosided=true)
  [[ $rule == no-resign ]] && resign=()
  "$oracle" match --engine "cmd=$candidate,name=candidate" \
    --engine "cmd=$predecessor,name=predecessor" --nodes 16000 --concurrency 2 \
    --draw movenumber=34,movecount=8,score=20 "${resign[@]}" \
    --pgn-out "$out/$name.pgn" --json "$@" >"$out/$name.json"
}

for rule in one-sided two-sided no-resign; do
  play "$rule" "positions-$rule" --book "$repo/docs/randfall/resign-positions.epd" \
    --book-order sequential --pairs 100
  for start in 480 728 2056 3088 3216 3320 3352; do
    play "$rule" "replay-$rule-$start" --book "$repo/books/book-b.epd" --book-order random \
      --seed "$stage_seed" --plies 8 --opening-offset "$start" --pairs 8
  done
  cat "$out"/replay-"$rule"-*.pgn >"$out/replay-$rule.pgn"
done
for set in positions replay; do
  echo "== $set"
  python3 "$repo/docs/randfall/resign-summary.py" --candidate candidate \
    "one-sided=$out/$set-one-sided.pgn" "two-sided=$out/$set-two-sided.pgn" \
    "no-resign=$out/$set-no-resign.pgn"
done
