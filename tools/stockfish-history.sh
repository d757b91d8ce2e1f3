#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Stockfish's own history under the oracle (docs/stockfish.md): a clone of Stockfish at sf_10
# gets the oracle with `oracle init`, the 307 commits up to sf_11 are rebased onto that setup, and
# `oracle verify --checks-only` builds every sixth commit that carries a Bench trailer (and the
# last one) twice, bit-identically, gates it and measures its bench against the trailer. It
# prints the table docs/stockfish.md shows. `judge` then makes two candidates on the same setup,
# Stockfish 11 as one change on Stockfish 10, then the engine that stands on the setup branch
# afterwards (Stockfish 10 when 11 is rejected) without null-move pruning, and judges each under
# the workstation profile with `--append` (up to hours of games; run it on an idle machine).
#
#   tools/stockfish-history.sh checks          clone, init, rebase, checks-only table (~1 h)
#   tools/stockfish-history.sh judge           the two workstation verdicts (up to several hours)
#
# Environment:
#   STOCKFISH  a Stockfish repository, path or URL, with the tags sf_10 and sf_11
#              [https://github.com/official-stockfish/Stockfish]
#   WORK       where the clone and the runs' --out directories go [oracle-out/stockfish]
#   ORACLE     the oracle binary [target/release/oracle]
#   EVERY      check every EVERY-th Bench commit [6]
#
# Exit status: 0 when every step ran (a refused commit is a table row, not a failure), 2 on a
# setup error.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
STOCKFISH=${STOCKFISH:-https://github.com/official-stockfish/Stockfish}
WORK=$(realpath -m "${WORK:-$ROOT/oracle-out/stockfish}")
ORACLE=$(realpath "${ORACLE:-$ROOT/target/release/oracle}")
EVERY=${EVERY:-6}
repo=$WORK/repo
mode=${1:-}

die() { echo "stockfish-history: $*" >&2; exit 2; }
[ -x "$ORACLE" ] || die "ORACLE $ORACLE is not an executable (cargo build --release --locked -p oracle)"

# The contract for Stockfish 10's tree. The scope is Stockfish's whole tree, the oracle's own files
# (constitution/, books/, register/, .github/) excepted: Stockfish's commits change the readme,
# AUTHORS and its CI files together with src/, and none of those reach the build (`make -C src`).
init_flags=(
  --build 'make -C src build ARCH=x86-64-modern COMP=gcc EXE={out}'
  --scope src/ --scope tests/ --scope AUTHORS --scope Readme.md
  --scope 'Top CPU Contributors.txt' --scope Copying.txt --scope .travis.yml --scope appveyor.yml
  --gate-symbol 'Eval::evaluate(Position const&)'
)

setup() {
  if [ ! -d "$repo/.git" ]; then
    git clone -q "$STOCKFISH" "$repo"
  fi
  cd "$repo"
  if ! git rev-parse -q --verify refs/heads/oracle-setup >/dev/null; then
    git checkout -q -B oracle-setup sf_10
    "$ORACLE" init "${init_flags[@]}"
    git add register && git commit -q -m 'register: genesis'
  fi
  if ! git rev-parse -q --verify refs/heads/history >/dev/null; then
    git branch history sf_11
    git rebase -q --onto oracle-setup sf_10 history
  fi
}

checks() {
  setup
  local commits
  commits=$(git log --reverse --format=%H oracle-setup..history | while read -r commit; do
    git show -s --format=%B "$commit" | grep -qiE '^ *bench *: *[0-9]' && echo "$commit"
  done | awk -v every="$EVERY" 'NR % every == 1 { print; next } { last = $0 } END { print last }' | uniq)
  echo "| commit | subject | binary sha256 | measured bench | trailer line | oracle |"
  echo "|---|---|---|---|---|---|"
  for commit in $commits; do
    local out=$WORK/checks/$commit
    "$ORACLE" verify "$commit" --repo "$repo" --profile workstation --checks-only --out "$out" \
      --json > "$WORK/checks-$commit.json" 2>/dev/null || true
    local subject trailer
    subject=$(git show -s --format=%s "$commit" | cut -c1-48)
    trailer=$(git show -s --format=%B "$commit" | grep -iE '^ *bench *: *[0-9]' | tail -1 | tr -d '\r')
    jq -r --arg c "${commit:0:10}" --arg s "$subject" --arg t "$trailer" '
      [$c, $s,
       (.binding.candidate.sha256 // "—" | .[0:16]),
       (.steps | map(select(.step == "bench")) | .[0].detail // "—"),
       $t,
       (if .status == "checked" then "checks passed" else (.reason | split(": ") | .[1:] | join(": ")) end)]
      | "| " + join(" | ") + " |"' "$WORK/checks-$commit.json"
  done
}

judge() {
  setup
  # The setup branch plays main: entries are committed on it, and a candidate lands on it only
  # when the oracle accepts it (an Abgelehnt entry is committed, its change is not merged).
  git checkout -q oracle-setup
  if ! git rev-parse -q --verify refs/heads/sf11 >/dev/null; then
    local squash
    squash=$(printf '%s\n' 'Stockfish 11, as one change on Stockfish 10' '' \
      'The tree of the sf_11 release as one candidate against Stockfish 10.' '' \
      "Bench: $(git show -s --format=%B sf_11 | sed -n 's/^Bench: *//p' | head -1)" |
      git commit-tree "history^{tree}" -p oracle-setup)
    git branch sf11 "$squash"
  fi
  judge_one sf11 'Stockfish 11 judged against Stockfish 10'
  if ! git rev-parse -q --verify refs/heads/no-null-move >/dev/null; then
    git checkout -q -b no-null-move
    python3 - <<'EOF_PY'
import pathlib
path = pathlib.Path("src/search.cpp")
text = path.read_text()
old = "    // Step 9. Null move search with verification search (~40 Elo)\n    if (   !PvNode\n"
new = "    // Step 9. Null move search removed: a deliberately weakened engine\n    if (   false\n        && !PvNode\n"
assert old in text, "src/search.cpp: Step 9 not found"
path.write_text(text.replace(old, new))
EOF_PY
    local bench
    bench=$(cd src && make -s -j2 build ARCH=x86-64-modern COMP=gcc >/dev/null && ./stockfish bench 2>&1 |
      sed -n 's/^Nodes searched *: *//p')
    git -C src clean -qfdx .
    git commit -q -am "Remove null-move pruning (a deliberately weakened Stockfish)" -m "Bench: $bench"
    git checkout -q oracle-setup
  fi
  judge_one no-null-move 'Stockfish without null-move pruning judged'
}

# Judges BRANCH under the workstation profile from the setup branch's work tree, commits the
# entry there, and merges the branch when the oracle accepted it.
judge_one() {
  local branch=$1 subject=$2 status=0
  "$ORACLE" verify "$branch" --repo "$repo" --profile workstation --append --out "$WORK/$branch" || status=$?
  git add register && git commit -q -m "register: $subject"
  if [ "$status" -eq 0 ]; then git merge -q --no-edit "$branch"; fi
}

case $mode in
  checks) checks ;;
  judge) judge ;;
  *) die "usage: tools/stockfish-history.sh checks|judge" ;;
esac
