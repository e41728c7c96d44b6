#!/usr/bin/env bash
# A real single-node Slurm (with accounting) on this machine, and the sweep runner against it.
#
#   bash tests/slurm_single_node.sh        # as root (or with passwordless sudo); ~2 min, 10 min at most
#
# 1. installs slurmctld slurmd slurm-client munge slurmdbd mariadb-server from Debian if missing
#    (no service starts at install: a policy-rc.d says no for the duration);
# 2. starts munged, a private mariadbd (TCP 127.0.0.1:3316, data in a fresh temp folder), slurmdbd,
#    slurmctld -c and slurmd, each with a bounded wait, and registers the cluster with sacctmgr;
# 3. runs `python -m lib.sweep` on notebooks/03_budget_law.ipynb, PROFILE=smoke, seeds 0-3, through
#    the Slurm executor (a job array), and meanwhile a second sweep of one long point (PROFILE=quick)
#    whose job it cancels with scancel: that runner must report "cancelled" and exit promptly;
# 4. checks every seed's results arrived in the store and in summary.csv, and that re-running the
#    finished sweep submits nothing (every point is DONE);
# 5. always (trap): scancel, bounded wait for an empty queue, then stops slurmd -> slurmctld ->
#    slurmdbd -> mariadbd -> munged by PID (munged last: stopping it early hangs slurmd).
#
# Every wait is bounded and the whole script re-runs itself under `timeout 600`. State lives in a
# fresh temp folder per run; daemons left by a crashed earlier run are found through their PIDs in
# $PIDS_FILE and stopped first, so the script can run twice on one machine. The sweeps' store is
# that temp folder too (LOOPS_OUTPUTS): nothing in the repository changes.
# Exit status: 0 passed, 1 a check failed, 3 Slurm could not be installed here, 124 overall timeout.
set -euo pipefail

if [ -z "${LOOPS_SLURM_UNDER_TIMEOUT:-}" ]; then
    export LOOPS_SLURM_UNDER_TIMEOUT=1
    exec timeout --kill-after=20 600 bash "$0" "$@"
fi

START=$(date +%s)
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"     # daemons live in sbin
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
PIDS_FILE=/tmp/loops-slurm-daemons.pids     # "pid name" of every daemon this script started
DB_PORT=3316
log() { echo "[slurm-check $(( $(date +%s) - START ))s] $*"; }
fail() { log "FAILED: $*"; exit 1; }

if [ "$(id -u)" = 0 ]; then SUDO=""
elif sudo -n true 2>/dev/null; then SUDO="sudo -n"
else log "cannot install or start Slurm: not root and no passwordless sudo"; exit 3; fi

# wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.5 s until it succeeds, or fail.
wait_for() {
    local limit=$1 what=$2; shift 2
    local until=$(( $(date +%s) + limit ))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$until" ] || fail "waited ${limit}s for $what"
        sleep 0.5
    done
}

# stop_pid PID NAME: TERM, bounded wait, then KILL; only if PID is still the process NAME.
stop_pid() {
    local pid=$1 name=$2
    [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$name" ] || return 0
    $SUDO kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do [ -d "/proc/$pid" ] || return 0; sleep 0.5; done
    log "$name (pid $pid) ignored SIGTERM for 15 s: SIGKILL"
    $SUDO kill -KILL "$pid" 2>/dev/null || true
}

remember() { echo "$1 $2" >> "$PIDS_FILE"; }        # remember PID NAME for teardown and for crashed runs

# Daemons a crashed earlier run left behind: stop them, newest first, by their recorded PIDs.
if [ -s "$PIDS_FILE" ]; then
    log "stopping daemons left by an earlier run ($PIDS_FILE)"
    tac "$PIDS_FILE" | while read -r pid name; do stop_pid "$pid" "$name"; done
fi
: > "$PIDS_FILE"

# ---------------------------------------------------------------------------------------------- 1
PACKAGES="slurmctld slurmd slurm-client munge slurmdbd mariadb-server"
if ! dpkg -s $PACKAGES >/dev/null 2>&1; then
    log "installing $PACKAGES"
    POLICY=/usr/sbin/policy-rc.d
    ADDED_POLICY=""
    if [ ! -e "$POLICY" ]; then     # keep apt from starting the services: this script starts its own
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null && $SUDO chmod +x "$POLICY" && ADDED_POLICY=1
    fi
    installed=0
    if timeout 180 $SUDO apt-get update -qq && \
       DEBIAN_FRONTEND=noninteractive timeout 300 $SUDO apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
    then installed=1; fi
    [ -z "$ADDED_POLICY" ] || $SUDO rm -f "$POLICY"
    [ "$installed" = 1 ] || { log "cannot install Slurm: apt-get failed (no network or no Debian mirror?)"; exit 3; }
fi
log "packages present: $(dpkg-query -W -f='${Package} ${Version}\n' slurmctld | tr '\n' ' ')"

WORK=$(mktemp -d /tmp/loops-slurm.XXXXXX)
chmod 755 "$WORK"
mkdir -p "$WORK/etc" "$WORK/state" "$WORK/spool" "$WORK/mysql" "$WORK/outputs"
export SLURM_CONF=$WORK/etc/slurm.conf      # every Slurm command and daemon (slurmdbd.conf sits beside it)
export LOOPS_OUTPUTS=$WORK/outputs          # the sweeps' store: a temp folder, never the repository
RUNNERS=""                                  # PIDs of the sweep runners started below

teardown() {
    local rc=$?
    trap - EXIT INT TERM
    set +e
    log "teardown"
    for pid in $RUNNERS; do kill -TERM "$pid" 2>/dev/null; done     # sweep runners this script started
    if [ -n "$(command -v squeue)" ] && [ -e "$WORK/slurmctld.pid" ]; then
        timeout 10 scancel $(timeout 10 squeue -h -o %i 2>/dev/null) 2>/dev/null
        local until=$(( $(date +%s) + 30 ))
        while [ -n "$(timeout 10 squeue -h -o %i 2>/dev/null)" ] && [ "$(date +%s)" -lt "$until" ]; do sleep 1; done
    fi
    for name in slurmd slurmctld slurmdbd mariadbd munged; do
        while read -r pid pname; do [ "$pname" = "$name" ] && stop_pid "$pid" "$name"; done < "$PIDS_FILE"
    done
    : > "$PIDS_FILE"
    if [ "$rc" != 0 ]; then
        for f in slurmctld.log slurmd.log slurmdbd.log mysql.err sweep-seeds.log sweep-cancel.log; do
            [ -s "$WORK/$f" ] && { echo "----- last lines of $f"; tail -n 25 "$WORK/$f"; }
        done
    fi
    log "slurm check wall time: $(( $(date +%s) - START )) s ($([ "$rc" = 0 ] && echo passed || echo "failed, exit $rc"))"
    [ "$rc" = 0 ] && rm -rf "$WORK"
    exit "$rc"
}
trap teardown EXIT
trap 'exit 124' INT TERM

# ---------------------------------------------------------------------------------------------- 2
# munge: reuse a munged that is already running (not ours: left running), else start one.
MUNGE_PID=$(cat /run/munge/munged.pid 2>/dev/null || true)
if [ -n "$MUNGE_PID" ] && [ -r "/proc/$MUNGE_PID/comm" ] && [ "$(cat "/proc/$MUNGE_PID/comm")" = munged ]; then
    log "munged already running (pid $MUNGE_PID, not started here): reused"
else
    $SUDO mkdir -p /run/munge && $SUDO chown munge:munge /run/munge && $SUDO chmod 755 /run/munge
    [ -s /etc/munge/munge.key ] || $SUDO su -s /bin/sh munge -c "/usr/sbin/mungekey --create"
    $SUDO rm -f /run/munge/munged.pid
    $SUDO su -s /bin/sh munge -c /usr/sbin/munged
    wait_for 20 "munged's pid file" test -s /run/munge/munged.pid
    remember "$(cat /run/munge/munged.pid)" munged
fi
wait_for 20 "munge to answer" sh -c "munge -n | unmunge"

# mariadb: a private server on 127.0.0.1:$DB_PORT with its data in $WORK/mysql
log "starting mariadb"
timeout 120 mariadb-install-db --no-defaults --user=root --datadir="$WORK/mysql" --auth-root-authentication-method=normal \
    --skip-test-db >"$WORK/mysql-install.log" 2>&1 || fail "mariadb-install-db (see $WORK/mysql-install.log)"
setsid mariadbd --no-defaults --user=root --datadir="$WORK/mysql" --socket="$WORK/mysql.sock" \
    --pid-file="$WORK/mysql.pid" --bind-address=127.0.0.1 --port=$DB_PORT --log-error="$WORK/mysql.err" \
    </dev/null >/dev/null 2>&1 &
remember $! mariadbd
wait_for 60 "mariadb's socket" timeout 10 mariadb --no-defaults -S "$WORK/mysql.sock" -u root -e "select 1"
mariadb --no-defaults -S "$WORK/mysql.sock" -u root -e "
    CREATE DATABASE slurm_acct_db;
    CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'loops-ci';
    CREATE USER 'slurm'@'localhost' IDENTIFIED BY 'loops-ci';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"

MEM_MB=$(( $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) - 1024 ))
cat > "$WORK/etc/slurm.conf" <<EOF
ClusterName=loops
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
KillWait=5
SchedulerType=sched/backfill
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobAcctGatherType=jobacct_gather/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
cat > "$WORK/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=loops-ci
StorageLoc=slurm_acct_db
PidFile=$WORK/slurmdbd.pid
LogFile=$WORK/slurmdbd.log
EOF
chmod 600 "$WORK/etc/slurmdbd.conf"

log "starting slurmdbd"
slurmdbd
wait_for 20 "slurmdbd's pid file" test -s "$WORK/slurmdbd.pid"
remember "$(cat "$WORK/slurmdbd.pid")" slurmdbd
wait_for 60 "slurmdbd to answer sacctmgr" timeout 10 sacctmgr -n list cluster
timeout 20 sacctmgr -i add cluster loops >/dev/null 2>&1 || true

log "starting slurmctld and slurmd"
slurmctld -c
wait_for 20 "slurmctld's pid file" test -s "$WORK/slurmctld.pid"
remember "$(cat "$WORK/slurmctld.pid")" slurmctld
slurmd -N localhost
wait_for 20 "slurmd's pid file" test -s "$WORK/slurmd.pid"
remember "$(cat "$WORK/slurmd.pid")" slurmd
wait_for 60 "the node to be idle" sh -c '[ "$(timeout 10 sinfo -h -N -o %t)" = idle ]'
wait_for 30 "sacct to answer" timeout 10 sacct -n -X
log "slurm up: $(sinfo -h -o '%P %D %c CPUs %m MB %t')"

# ---------------------------------------------------------------------------------------------- 3
SWEEP=("$PY" -m lib.sweep notebooks/03_budget_law.ipynb --executor slurm --partition debug
       --cpus 1 --mem-gb 2 --time-min 10 --poll-s 2 --max-wait-min 8)
cd "$ROOT"
# The long point first, so it is running (not pending) when cancelled.
OMP_NUM_THREADS=1 "${SWEEP[@]}" --name cancel-check --param PROFILE=quick --seeds 99 \
    >"$WORK/sweep-cancel.log" 2>&1 &
CANCEL_RUNNER=$!
RUNNERS="$RUNNERS $CANCEL_RUNNER"
wait_for 60 "the long point's job to run" sh -c '[ "$(timeout 10 squeue -h -n sweep-cancel-check -o %T)" = RUNNING ]'
log "long point running: $(squeue -h -n sweep-cancel-check -o '%i %T')"

OMP_NUM_THREADS=1 "${SWEEP[@]}" --name seeds --param PROFILE=smoke --seeds 0-3 >"$WORK/sweep-seeds.log" 2>&1 &
SEEDS_RUNNER=$!
RUNNERS="$RUNNERS $SEEDS_RUNNER"

sleep 5          # let the long point's notebook get going before it is cancelled
CANCEL_AT=$(date +%s)
timeout 10 scancel -n sweep-cancel-check
log "scancel sent to the long point"
CANCEL_RC=0
timeout 90 tail --pid="$CANCEL_RUNNER" -f /dev/null || fail "the cancelled sweep's runner still waits 90 s after scancel"
wait "$CANCEL_RUNNER" || CANCEL_RC=$?
log "cancelled sweep's runner returned (exit $CANCEL_RC) $(( $(date +%s) - CANCEL_AT )) s after scancel"
cat "$WORK/sweep-cancel.log" | grep -v 'IPKernelApp' || true
[ "$CANCEL_RC" = 1 ] || fail "the cancelled sweep exited $CANCEL_RC (expected 1: a point not done)"
grep -q "cancelled" "$WORK/sweep-cancel.log" || fail "the runner did not report the point as cancelled"

timeout 300 tail --pid="$SEEDS_RUNNER" -f /dev/null || fail "the 4-seed sweep did not finish within 300 s"
SEEDS_RC=0
wait "$SEEDS_RUNNER" || SEEDS_RC=$?
grep -v 'IPKernelApp' "$WORK/sweep-seeds.log" || true
[ "$SEEDS_RC" = 0 ] || fail "the 4-seed sweep exited $SEEDS_RC"

# ---------------------------------------------------------------------------------------------- 4
timeout 60 "$PY" - "$LOOPS_OUTPUTS/sweeps" <<'EOF' || fail "results check"
import csv, json, sys
from pathlib import Path
sweeps = Path(sys.argv[1])
rows = list(csv.DictReader(open(sweeps / "seeds" / "summary.csv")))
assert len(rows) == 4, f"summary.csv has {len(rows)} rows, expected 4"
assert sorted(r["SEEDS"] for r in rows) == ["[0]", "[1]", "[2]", "[3]"], [r["SEEDS"] for r in rows]
for r in rows:
    point = sweeps / "seeds" / r["point"]
    assert r["status"] == "done", r
    assert (point / "DONE").exists() and (point / "notebook.ipynb").exists(), point
    results = json.loads((point / "results" / "03_budget_law.smoke.json").read_text())
    assert r["contracts_learned"] == results["contracts_learned"], (r, results)
cancel = list(csv.DictReader(open(sweeps / "cancel-check" / "summary.csv")))
assert [r["status"] for r in cancel] == ["cancelled"], cancel
assert "CANCELLED" in cancel[0]["error"], cancel
print(f"store and summary: 4 seeds done, 1 point cancelled ({cancel[0]['error']})")
EOF

# Re-running the finished sweep runs nothing: every point has DONE.
OMP_NUM_THREADS=1 timeout 60 "${SWEEP[@]}" --name seeds --param PROFILE=smoke --seeds 0-3 >"$WORK/sweep-rerun.log" 2>&1 \
    || fail "re-running the finished sweep failed: $(tail -5 "$WORK/sweep-rerun.log")"
grep -q "4 already done (skipped), 0 to run" "$WORK/sweep-rerun.log" || fail "re-run did not skip the 4 done points"
log "re-run skipped the 4 done points"
log "all checks passed"
