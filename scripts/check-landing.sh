#!/usr/bin/env bash
# What a push to main may change (docs/ci-trust.md). Run from the repository root at the
# pushed commit; BEFORE is the previous head of main.
#   scripts/check-landing.sh paths BEFORE     git only, before anything is built: a push that
#       changes engine/ adds its register entries (and their evidence/T-NNNN/ files) and changes
#       nothing else, or withdraws a rejected change (engine/ becomes the register's current
#       engine's again, but for proofs, scripts, tests and Markdown; nothing outside engine/
#       changes); a governance change
#       does not touch engine/ and is reviewed under the constitution's Article 8
#   scripts/check-landing.sh register BEFORE  the path rule, then with the oracle binary
#       $ORACLE: the register only grows and verifies from genesis, every added entry replays,
#       and an engine landing's tree is its newest entry's candidate tree plus the added entries
set -euo pipefail

usage="usage: check-landing.sh paths|register BEFORE"
mode=${1:?$usage}
before=${2:?$usage}
if [[ $mode != paths && $mode != register ]]; then
  echo "$usage" >&2
  exit 2
fi
if ! git cat-file -e "$before^{commit}" 2>/dev/null; then
  echo "landing: $before is not a commit of this repository (a rewritten main?); nothing is judged against it" >&2
  exit 1
fi

added=$(git diff --name-only --no-renames --diff-filter=A "$before" HEAD -- 'register/T-*.yaml' | sort)
engine_changed=false
git diff --quiet "$before" HEAD -- engine/ || engine_changed=true

# Lines of stdin that are neither added register entries nor files added under an added entry's
# evidence directory (evidence/T-NNNN/: the run's report, binding, stages; README, "The register").
evidence_added=$(git diff --name-only --no-renames --diff-filter=A "$before" HEAD -- evidence/ |
  while read -r path; do
    id=${path#evidence/}
    id=${id%%/*}
    grep -qxF "register/$id.yaml" <<<"$added" && echo "$path"
  done || true)
not_added() {
  local allowed
  allowed=$(printf '%s\n%s\n' "$added" "$evidence_added" | sed '/^$/d')
  if [[ -z $allowed ]]; then cat; else grep -vxF "$allowed" || true; fi
}

# The commit of the register's current engine at HEAD: the candidate of the newest entry whose
# verdict lands (the register's YAML is written by the oracle, one key per line).
current_engine_commit() {
  local file entry
  for file in $(git ls-tree --name-only HEAD register/ | grep -E '^register/T-[0-9]+\.yaml$' | sort -r); do
    entry=$(git show "HEAD:$file")
    if grep -qE '^verdict: (genesis|gewinn|korrektur|gleich)$' <<<"$entry"; then
      awk '/^candidate:/ { inside = 1; next }
           inside && /^  commit:/ { gsub(/"/, "", $2); print $2; exit }
           /^[^ ]/ { inside = 0 }' <<<"$entry"
      return
    fi
  done
}

if $engine_changed && [[ -z $added ]]; then
  # A withdrawal: a change the oracle rejected reached main, and this push takes it out again.
  # engine/ is then the current engine's except for files no build reads (proof specs, scripts,
  # tests, Markdown), so its binary is the registered one. Anything else that differs — a
  # build.rs, a .cargo/ directory, a source file — would reach the build: not a withdrawal.
  current=$(current_engine_commit)
  if [[ -n $current ]] && git cat-file -e "$current^{commit}" 2>/dev/null &&
    ! git diff --name-only --no-renames "$current" HEAD -- engine/ |
      grep -qvE '^engine/(proofs|scripts|tests)/|^engine/[^/]*\.md$'; then
    others=$(git diff --name-only --no-renames "$before" HEAD | grep -v '^engine/' || true)
    if [[ -n $others ]]; then
      echo "landing: a withdrawal restores engine/ and changes nothing else; it also changes:" >&2
      echo "$others" >&2
      exit 1
    fi
    echo "landing: engine/ withdrawn to the register's current engine $current (no entry)"
    exit 0
  fi
  echo "landing: engine/ changed without a register entry (and engine/ is not the register's current engine${current:+ $current}'s outside proofs, scripts, tests and Markdown, so it is no withdrawal)" >&2
  exit 1
fi

if $engine_changed; then
  others=$(git diff --name-only --no-renames "$before" HEAD | grep -v '^engine/' | not_added)
  if [[ -n $others ]]; then
    echo "landing: an engine landing changes engine/ and adds its register entries, nothing else; it also changes:" >&2
    echo "$others" >&2
    exit 1
  fi
  echo "landing: engine/ and the added entries: ${added//$'\n'/ }"
else
  echo "landing: engine/ unchanged"
fi
[[ $mode == paths ]] && exit 0

oracle=${ORACLE:?set ORACLE to the oracle binary}
ORACLE=$oracle scripts/check-register-diff.sh "$before"
for path in $added; do
  "$oracle" register replay "$(basename "$path" .yaml)" --repo .
done
$engine_changed || exit 0

newest=$(basename "$(tail -n 1 <<<"$added")" .yaml)
entry=$("$oracle" register show "$newest" --json)
verdict=$(jq -r .verdict <<<"$entry")
candidate=$(jq -r .candidate.commit <<<"$entry")
# Gleich (constitution Article 2.4): a bit-identical engine change lands without games.
if [[ $verdict != gewinn && $verdict != korrektur && $verdict != gleich ]]; then
  echo "landing: engine/ changed, but the newest added entry $newest is $verdict" >&2
  exit 1
fi
if ! git merge-base --is-ancestor "$candidate" HEAD 2>/dev/null; then
  echo "landing: $newest's candidate $candidate is not in main's history (land with a merge commit, not a squash or rebase)" >&2
  exit 1
fi
extra=$(git diff --name-only --no-renames "$candidate" HEAD | not_added)
if [[ -n $extra ]]; then
  echo "landing: the landed tree is not $newest's verified candidate $candidate; it differs in:" >&2
  echo "$extra" >&2
  exit 1
fi
echo "landing: the landed tree is $newest's candidate $candidate plus the added entries"
