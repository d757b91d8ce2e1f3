#!/usr/bin/env bash
# Runs `oracle verify` on a Slurm cluster (docs/scaling.md): binds once, plays each round of the
# current stage as an array job of SHARDS tasks (`--shard $SLURM_ARRAY_TASK_ID/SHARDS`), merges
# after the round, and submits the next round until every stage is decided. The scheduler does
# the scheduling; the oracle plans each round and records it in OUT, where every task reads it.
#
#   deploy/slurm/submit.sh CANDIDATE [BASE]
#
# Environment (defaults in brackets); OUT and CACHE_DIR must be on a file system every node sees:
#   ORACLE         the oracle binary [oracle on PATH]
#   REPO           the git repository [.]
#   PROFILE        the constitution's profile [official]
#   OUT            the run's evidence directory [oracle-out/slurm]
#   CACHE_DIR      the build cache, shared by all tasks [OUT-cache]
#   LOG_DIR        the jobs' logs, outside OUT [OUT-logs]
#   SHARDS         array tasks a round [8]
#   ROUND_MINUTES  the minutes one task plays in a round, below its time limit [300]; empty:
#                  the profile's batch_size pairs a task
#   MAX_ATTEMPTS   times one round is submitted before the run gives up on a failing task [3]
#   SBATCH_ARGS    further sbatch options for every job, e.g. "--partition=chess --account=lab"
#   TASK_ARGS      further sbatch options for the array tasks only, e.g. "--time=05:30:00"
# A task plays as many games at once as it has CPUs, at most the stage's concurrency: give it
# that many (--cpus-per-task, default 2 here, the constitution's concurrency).
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { sed -n '2,23p' "$0" >&2; exit 2; }
deploy=$(cd "$(dirname "$0")" && pwd)
export CANDIDATE=$1 BASE=${2:-}
export ORACLE=$(realpath "$(command -v "${ORACLE:-oracle}")")
export REPO=$(realpath "${REPO:-.}")
export PROFILE=${PROFILE:-official}
export OUT=$(realpath -m "${OUT:-oracle-out/slurm}")
export CACHE_DIR=$(realpath -m "${CACHE_DIR:-$OUT-cache}")
export LOG_DIR=$(realpath -m "${LOG_DIR:-$OUT-logs}")
export SHARDS=${SHARDS:-8} ROUND_MINUTES=${ROUND_MINUTES-300} MAX_ATTEMPTS=${MAX_ATTEMPTS:-3}
export SBATCH_ARGS=${SBATCH_ARGS:-} TASK_ARGS=${TASK_ARGS:-}
export DEPLOY_DIR=$deploy ATTEMPT=0 LAST_ROUND=
mkdir -p "$LOG_DIR" "$CACHE_DIR"
# shellcheck disable=SC2086 # SBATCH_ARGS is a word list of options
job=$(sbatch --parsable --export=ALL --cpus-per-task=2 --job-name=oracle-round \
  --output="$LOG_DIR/round-%j.out" $SBATCH_ARGS "$deploy/round.sbatch")
echo "submitted $job: bind and plan round 1 (logs in $LOG_DIR)"
