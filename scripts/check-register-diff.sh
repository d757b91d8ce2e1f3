#!/usr/bin/env bash
# A change may only add the next register entries: against BASE, every change
# under register/ is an added register/T-NNNN.yaml, and the whole chain
# verifies from genesis. Run from the repository root:
#   scripts/check-register-diff.sh BASE [HEAD]
# The oracle binary is $ORACLE (default: target/debug/oracle).
set -euo pipefail

base=${1:?usage: check-register-diff.sh BASE [HEAD]}
head=${2:-HEAD}
oracle=${ORACLE:-target/debug/oracle}

if [[ ! -x $oracle ]]; then
  echo "check-register-diff: oracle binary $oracle not found (build it or set ORACLE)" >&2
  exit 2
fi

changes=$(git diff --name-status --no-renames "$base" "$head" -- register/)
status=0
while IFS=$'\t' read -r kind path; do
  [[ -z ${kind} ]] && continue
  if [[ $kind != A ]]; then
    echo "register: $path: status $kind; existing entries are never modified or deleted"
    status=1
  elif [[ ! $path =~ ^register/T-[0-9]{4,}\.yaml$ ]]; then
    echo "register: $path: added file is not a register entry (register/T-NNNN.yaml)"
    status=1
  fi
done <<<"$changes"

if ! "$oracle" register verify --repo .; then
  echo "register: the chain does not verify from genesis"
  status=1
fi
exit "$status"
