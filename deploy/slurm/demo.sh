#!/usr/bin/env bash
# The opt-in long test of the Slurm scripts (docs/scaling.md), as root on a Debian machine with
# `slurm-wlm` and `munge`: starts a single-node test cluster (test-cluster.sh), makes a throwaway
# test repository (deploy/test-repo.sh), runs `oracle verify` there through submit.sh with
# SHARDS array tasks a round, cancels one array task in the middle of round 2 (scancel), waits
# for the stage's decision, and checks the result:
#   - no pair was counted twice: every shard file holds each of its pairs once, and the stage
#     record's counts equal `oracle merge --plan` over the same shard files, recounted here;
#   - with PROFILE=cluster-nodes (games at a node limit, hence deterministic), the run's counts
#     equal those of one machine playing the same shards round by round without Slurm.
#
#   deploy/slurm/demo.sh                                  # cluster-clock: 8+0.08, ~15 minutes
#   PROFILE=cluster-nodes ROUND_MINUTES= deploy/slurm/demo.sh   # a few minutes
#
# Environment: ORACLE [target/release/oracle], PROFILE [cluster-clock], SHARDS [2],
# ROUND_MINUTES [2; empty: the profile's batch_size], DEMO_DIR [oracle-out/slurm-demo-PROFILE].
# Exits 0 when every check holds. Not part of .ci/run: it plays at a clock for many minutes.
# Under a lock that keeps measurements apart, use `flock -o LOCK deploy/slurm/demo.sh`, so that the
# cluster's daemons do not inherit the lock.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export ORACLE=$(realpath "${ORACLE:-target/release/oracle}")
export PROFILE=${PROFILE:-cluster-clock} SHARDS=${SHARDS:-2} ROUND_MINUTES=${ROUND_MINUTES-2}
demo=$(realpath -m "${DEMO_DIR:-oracle-out/slurm-demo-$PROFILE}")
log() { echo "$(date -u +%FT%TZ) demo: $*"; }

rm -rf "$demo"
mkdir -p "$demo"
started_cluster=
if [ -z "${SLURM_CONF:-}" ]; then
  deploy/slurm/test-cluster.sh start "$demo/cluster" >/dev/null
  export SLURM_CONF=$demo/cluster/slurm.conf
  started_cluster=1
fi
stop_cluster() { [ -z "$started_cluster" ] || deploy/slurm/test-cluster.sh stop "$demo/cluster"; }
trap stop_cluster EXIT
candidate=$(deploy/test-repo.sh "$demo/repo")
log "test repository $demo/repo, candidate $candidate, profile $PROFILE, $SHARDS shards"
export REPO=$demo/repo OUT=$demo/out CACHE_DIR=${CACHE_DIR:-$root/oracle-out/cache}
export LOG_DIR=$demo/logs
deploy/slurm/submit.sh "$candidate"

# Round 2: wait until shard 1 has played two pairs of it, then cancel that array task.
shards_dir=$OUT/shards/stage-1-short
pairs_of() { jq '.pairs | length' "$1" 2>/dev/null || echo 0; }
round_two=
while [ -z "$round_two" ]; do
  sleep 2
  if [ -f "$shards_dir/round.json" ] && [ "$(jq .number "$shards_dir/round.json")" -ge 2 ]; then
    round_one_end=$(pairs_of "$shards_dir/shard-1-of-$SHARDS.json")
    task=$(squeue -h -n oracle-shard -t RUNNING -o '%i' | grep "_1$" || true)
    if [ -n "$task" ] && [ "$(pairs_of "$shards_dir/shard-1-of-$SHARDS.state.json")" -ge $((round_one_end + 2)) ]; then
      round_two=$task
    fi
  fi
  if ! squeue -h | grep -q .; then log "the run ended before round 2"; exit 1; fi
done
before=$(pairs_of "$shards_dir/shard-1-of-$SHARDS.state.json")
scancel "$round_two"
log "scancel $round_two (shard 1/$SHARDS) in round 2 with $before pairs counted, $round_one_end of them from round 1"

while squeue -h | grep -q .; do sleep 5; done
log "no job left; the run's log:"
cat "$LOG_DIR"/round-*.out
grep -h "task\|error" "$LOG_DIR"/shard-*.out | sort -k1,1 || true
decided=$(grep -l "decided:" "$LOG_DIR"/round-*.out | head -1)
[ -n "$decided" ] || { log "no merge decided the stage"; exit 1; }

# No pair twice, in every shard file, and the record's counts are the shard files' counts.
for file in "$shards_dir"/shard-*-of-"$SHARDS".json; do
  total=$(jq '.pairs | length' "$file")
  unique=$(jq '[.pairs[].index] | unique | length' "$file")
  log "$(basename "$file"): $total pairs, $unique distinct"
  [ "$total" = "$unique" ] || { log "a pair counted twice in $file"; exit 1; }
done
record=$OUT/stage-1-short/stage.json
jq -c '{games_played} + (.record | {state, pairs, games, pentanomial, llr})' "$record"
bounds=$(jq -r '.record | "--elo0 \(.elo0) --elo1 \(.elo1)"' "$record")
# shellcheck disable=SC2086 # two options and their values
"$ORACLE" merge --json --plan "$shards_dir/shard-1-of-$SHARDS.json" $bounds \
  "$shards_dir"/shard-*-of-"$SHARDS".json >"$demo/merge.json" || true
jq -c '{pairs: .pairs_counted, games_played, pentanomial, sprt: .sprt.state, llr: .sprt.llr}' "$demo/merge.json"
[ "$(jq -c '.record.pentanomial' "$record")" = "$(jq -c '.pentanomial' "$demo/merge.json")" ] ||
  { log "the record's counts are not the shard files'"; exit 1; }
log "the stage record's counts equal oracle merge's recount of the shard files"

if [ "$PROFILE" = cluster-nodes ]; then
  # One machine, the same shards, round by round, no Slurm and nothing cancelled.
  local_out=$demo/out-one-machine
  verify=("$ORACLE" verify "$candidate" --profile "$PROFILE" --repo "$REPO" --out "$local_out"
    --cache-dir "$CACHE_DIR" --json)
  round_args=()
  [ -n "$ROUND_MINUTES" ] && round_args=(--round-minutes "$ROUND_MINUTES")
  while :; do
    "${verify[@]}" --no-play "${round_args[@]}" >"$demo/one-machine.json" || true
    [ "$(jq -r .status "$demo/one-machine.json")" = continue ] || break
    for k in $(seq "$SHARDS"); do "${verify[@]}" --shard "$k/$SHARDS" >/dev/null; done
  done
  one=$(jq -c '.record | {state, pairs, games, pentanomial, llr}' "$local_out/stage-1-short/stage.json")
  slurm=$(jq -c '.record | {state, pairs, games, pentanomial, llr}' "$record")
  log "one machine: $one"
  log "slurm:       $slurm"
  [ "$one" = "$slurm" ] || { log "the Slurm run's counts differ from one machine's"; exit 1; }
  log "the Slurm run's counts equal one machine's"
fi
log "all checks hold"
