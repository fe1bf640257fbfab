#!/usr/bin/env bash
# A real Slurm cluster on this one machine, for moldtune's Slurm tests (tests/slurm.rs) and
# the figures of docs/cluster.md: munge, one slurmctld and two slurmd (nodes n1
# and n2, one CPU each, both on 127.0.0.1 with ports of their own), from Debian's packages
# slurm-wlm and munge (installed when missing). Needs root (the daemons run as root).
#
#   bash scripts/slurm_local.sh start [DIR]   # installs, starts, waits until both nodes are idle
#   bash scripts/slurm_local.sh stop [DIR]    # stops what `start` started
#
# DIR (default /tmp/moldtune-slurm) holds slurm.conf, the daemons' state, logs and pid
# files; point Slurm's commands at it with `export SLURM_CONF=DIR/slurm.conf`.
set -euo pipefail
cmd=${1:-}
dir=${2:-/tmp/moldtune-slurm}
conf="$dir/slurm.conf"

die() { echo "slurm_local: $*" >&2; exit 1; }

install() {
  command -v slurmctld >/dev/null 2>&1 && command -v munged >/dev/null 2>&1 && return
  echo "slurm_local: installing slurm-wlm and munge" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
}

write_conf() {
  local host
  host=$(hostname)
  mkdir -p "$dir"/{state,spool,log,run}
  cat >"$conf" <<EOF
# Written by moldtune's scripts/slurm_local.sh: a test cluster on one machine.
ClusterName=moldtune-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=1
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=16818 CPUs=1 RealMemory=2000 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=16819 CPUs=1 RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  munge -n >/dev/null 2>&1 && return # already running
  [ -f /etc/munge/munge.key ] || { mkdir -p /etc/munge; dd if=/dev/urandom of=/etc/munge/munge.key bs=128 count=1 2>/dev/null; }
  chown munge:munge /etc/munge/munge.key 2>/dev/null || true
  chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
  munged --force >/dev/null 2>&1
  touch "$dir/run/munged.ours"
}

wait_idle() {
  for _ in $(seq 1 60); do
    states=$(sinfo --noheader --format=%t 2>/dev/null | sort -u | tr '\n' ' ')
    [ "$states" = "idle " ] && return
    sleep 0.5
  done
  sinfo >&2 || true
  tail -n 20 "$dir"/log/*.log >&2 || true
  die "the nodes did not become idle within 30 s"
}

stop() {
  for pidfile in "$dir"/run/slurmd-*.pid "$dir"/run/slurmctld.pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  if [ -f "$dir/run/munged.ours" ]; then
    pkill -x munged 2>/dev/null || true
    rm -f "$dir/run/munged.ours"
  fi
  sleep 1
}

case "$cmd" in
  start)
    [ "$(id -u)" -eq 0 ] || die "needs root: the test daemons run as root"
    install
    stop
    rm -rf "$dir/state" "$dir/spool"
    write_conf
    export SLURM_CONF="$conf"
    start_munge
    slurmctld -f "$conf"
    for n in n1 n2; do slurmd -f "$conf" -N "$n"; done
    wait_idle
    echo "slurm_local: nodes n1 n2 idle; export SLURM_CONF=$conf" >&2
    ;;
  stop)
    stop
    ;;
  *)
    die "usage: slurm_local.sh start|stop [DIR]"
    ;;
esac
