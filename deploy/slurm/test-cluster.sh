#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for trying the job scripts of deploy/slurm/
# (docs/scaling.md). It uses Debian's `slurm-wlm` and `munge` packages as installed and touches
# none of their system configuration: munged, slurmctld and slurmd run as root with a key, a
# socket, a slurm.conf, spool and logs of their own under STATE_DIR, on ports of their own.
#
#   deploy/slurm/test-cluster.sh start STATE_DIR   # prints the line that points clients at it
#   deploy/slurm/test-cluster.sh stop STATE_DIR
#
# Clients (sbatch, squeue, scancel, scontrol) need SLURM_CONF=STATE_DIR/slurm.conf. The node
# offers this machine's CPUs and memory; jobs run as the user who submits them (root here).
# Environment: SLURM_TEST_PORT (slurmctld's port, default 16817; slurmd uses the next one).
set -euo pipefail

usage() {
  echo "usage: $0 start|stop STATE_DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
action=$1
state=$(realpath -m "$2")
port=${SLURM_TEST_PORT:-16817}

stop_pid_file() {
  local file=$1
  [ -s "$file" ] || return 0
  local pid
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$file"
}

case $action in
start)
  [ "$(id -u)" -eq 0 ] || { echo "$0: munged and slurmd run as root here; run as root" >&2; exit 2; }
  for tool in munged slurmctld slurmd sbatch; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is missing (apt-get install slurm-wlm munge)" >&2; exit 2; }
  done
  mkdir -p "$state"/{munge,spool/ctld,spool/d,log}
  chmod 0700 "$state/munge"
  # A key of its own: a test cluster shares no credential with anything else.
  [ -s "$state/munge/munge.key" ] ||
    dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$state/munge/munge.key"
  munged --force --key-file="$state/munge/munge.key" --socket="$state/munge/munge.socket" \
    --pid-file="$state/munge/munged.pid" --log-file="$state/log/munged.log" \
    --seed-file="$state/munge/munged.seed"
  host=$(hostname -s)
  cpus=$(nproc)
  # slurmd -C prints the node as the daemon sees it; its RealMemory keeps the node from being
  # drained for less memory than configured.
  memory=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' | head -1)
  cat >"$state/slurm.conf" <<CONF
ClusterName=coherent-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/munge.socket
StateSaveLocation=$state/spool/ctld
SlurmdSpoolDir=$state/spool/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
KillWait=10
MaxArraySize=1001
NodeName=$host CPUs=$cpus RealMemory=${memory:-1000} State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  slurmctld -f "$state/slurm.conf"
  slurmd -f "$state/slurm.conf"
  export SLURM_CONF="$state/slurm.conf"
  for _ in $(seq 100); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then
      sinfo
      echo "export SLURM_CONF=$state/slurm.conf"
      exit 0
    fi
    sleep 0.2
  done
  echo "$0: the node did not become idle; see $state/log/" >&2
  sinfo >&2 || true
  exit 1
  ;;
stop)
  export SLURM_CONF="$state/slurm.conf"
  if [ -f "$state/slurm.conf" ]; then
    scancel --user="$(id -un)" 2>/dev/null || true
  fi
  stop_pid_file "$state/slurmd.pid"
  stop_pid_file "$state/slurmctld.pid"
  stop_pid_file "$state/munge/munged.pid"
  ;;
*) usage ;;
esac
