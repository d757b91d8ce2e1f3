#!/usr/bin/env bash
# A throwaway test repository for trying the cluster scripts (docs/scaling.md): a copy of this
# repository's engine history in which the newest engine change is judged against its parent
# under a throwaway constitution, never this repository's. Its profiles are the official
# profile's first stage (8+0.08, book A, the same bounds and rules), not binding, cut short:
#   cluster-clock  at 8+0.08, at most MAX_GAMES games (default 60: about ten minutes on 2 cores)
#   cluster-nodes  the same stage at 2,000 nodes a move, at most 120 games: deterministic games,
#                  so two runs of the same shards must agree pair for pair
#
#   deploy/test-repo.sh DIR      # prints the candidate commit
#
# The predecessor is the change's parent with the throwaway constitution committed on top; the
# candidate is the change itself (its `Bench:` trailer) on top of that.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
source_repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
dir=$1
max_games=${MAX_GAMES:-60}
[ ! -e "$dir" ] || { echo "$0: $dir exists" >&2; exit 2; }
change=$(git -C "$source_repo" log --first-parent --format=%H -1 HEAD -- engine/)
git clone --quiet --no-local "$source_repo" "$dir"
cd "$dir"
git checkout --quiet -b cluster-test "$change^"
python3 - "$source_repo/constitution/constitution.yaml" "$max_games" >constitution/constitution.yaml <<'PY'
import sys, yaml
constitution = yaml.safe_load(open(sys.argv[1]))
official = constitution["profiles"]["official"]
def profile(tc, max_games, description):
    stage = dict(official["stages"][0], tc=tc, min_games=0, max_games=max_games)
    return dict(official, binding=False, description=description, stages=[stage])
constitution["profiles"] = {
    "cluster-clock": profile("8+0.08", int(sys.argv[2]), "The official profile's first stage, cut short: a throwaway test of the cluster scripts."),
    "cluster-nodes": profile("nodes=2000", 120, "The official profile's first stage at a node limit, cut short: a throwaway test of the cluster scripts."),
}
print("# A throwaway constitution for testing the cluster scripts (deploy/test-repo.sh).")
print(yaml.safe_dump(constitution, sort_keys=False), end="")
PY
git -c user.name=test -c user.email=test@example.invalid commit --quiet -am "governance: a throwaway constitution for the cluster test"
git -c user.name=test -c user.email=test@example.invalid cherry-pick --quiet "$change" >/dev/null
git rev-parse HEAD
