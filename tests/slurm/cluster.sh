#!/usr/bin/env bash
# A single-node Slurm cluster on loopback, for the sweep's Slurm test
# (tests/integration/slurm.rs): munged, slurmctld and slurmd, all state
# under $1, nothing else of the machine's touched.
#   cluster.sh start DIR   starts it; prints nothing on success
#   cluster.sh stop DIR    stops what start started
# Needs root (munged --force, slurmd) and Debian's slurm-wlm and munge.
set -euo pipefail
cmd=$1 dir=$(realpath -m "$2")
case $cmd in
start)
  mkdir -p "$dir"/{munge,spool,state,log}
  # munge: its own key, socket and pid file in DIR; --force because the
  # key and directories are root's, not a munge user's.
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 600 "$dir/munge/munge.key"
  chmod 700 "$dir/munge"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed"
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
  cat >"$dir/slurm.conf" <<CONF
ClusterName=cudawatch-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$dir/slurm.conf"
  slurmd -f "$dir/slurm.conf"
  # Up when the node takes jobs.
  for _ in $(seq 1 100); do
    if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then exit 0; fi
    sleep 0.2
  done
  echo "slurm did not come up; logs in $dir/log" >&2
  exit 1
  ;;
stop)
  for pid in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
  done
  ;;
esac
