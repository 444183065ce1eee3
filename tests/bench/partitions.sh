#!/bin/sh
# partitions.sh -- a partitioned queue over the shards of a Redis Cluster
# (docs/queue.md, "Partitioned queues"; issue 28): jobs/s and server CPU
# per job with S = 1, 2, 4 and 8 masters, and a plain queue on one master
# beside the partitioned one.
#
#   sh tests/bench/partitions.sh
#
# For each S: starts S redis-servers with --cluster-enabled on free
# loopback ports (no persistence, no replicas), each pinned with taskset
# to a core of its own when the machine has S + 1 cores or more, gives
# each an equal run of slots (CLUSTER ADDSLOTSRANGE and MEET: `redis-cli
# --cluster create` refuses fewer than 3 masters), records the queue's
# partition count (`fleet queue create`), fills the queue with N jobs from
# PRODUCERS `fleet-demo enqueue` processes at once, then starts W
# `fleet-demo worker` processes (no-op jobs) and times them until every
# job completed (`fleet queue stats`, polled every 100 ms). Server CPU is
# the utime + stime of the redis-servers (/proc/<pid>/stat) over the
# processing, per job. Prints one line per run and the scaling against
# S = 1; the last line names the machine. S larger than the machine's
# cores is skipped.
#
# Environment: PARTS_SHARDS (default "1 2 4 8"), PARTS_P (partitions,
# default 16), PARTS_WORKERS (W, default 4), PARTS_CONCURRENCY (per worker,
# default 64), PARTS_JOBS (N, default 200000), PARTS_PRODUCERS (default 2),
# PARTS_PLAIN (1: also a plain queue on S = 1; default 1). Needs a build in
# build/ (fleet, fleet-demo), redis-server, redis-cli, python3, taskset.
#
# Every wait is bounded (by count and by `timeout`).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fleet=$root/build/tools/fleet/fleet
demo=$root/build/examples/fleet-demo
shards=${PARTS_SHARDS:-"1 2 4 8"}
parts=${PARTS_P:-16}
workers=${PARTS_WORKERS:-4}
conc=${PARTS_CONCURRENCY:-64}
jobs=${PARTS_JOBS:-200000}
producers=${PARTS_PRODUCERS:-2}
plain=${PARTS_PLAIN:-1}
cores=$(nproc)
tick=$(getconf CLK_TCK)
work=$(mktemp -d "${TMPDIR:-/tmp}/fleet-parts.XXXXXX")
pids=
wpids=
base=

log() {
  printf 'partitions: %s\n' "$*" >&2
}

stop_workers() {
  for wp in $wpids; do kill "$wp" 2>/dev/null || true; done
  for wp in $wpids; do wait "$wp" 2>/dev/null || true; done
  wpids=
}

stop_cluster() {
  for sp in $pids; do kill "$sp" 2>/dev/null || true; done
  for sp in $pids; do wait "$sp" 2>/dev/null || true; done
  pids=
  rm -rf "$work"/node*
}

cleanup() {
  stop_workers
  stop_cluster
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in redis-server redis-cli python3 timeout; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    log "$tool is not on PATH"
    exit 1
  fi
done
for f in "$fleet" "$demo"; do
  if [ ! -x "$f" ]; then
    log "$f is missing: build first (cmake -S . -B build && cmake --build build)"
    exit 1
  fi
done

# A free loopback port of 55535 or less (a cluster node also listens on
# its port + 10000).
free_port() {
  python3 -c '
import socket
for _ in range(200):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    if p <= 55535:
        print(p)
        break'
}

# Starts S masters, each with 16384/S slots; sets $ports, $pids, $url.
start_cluster() {
  n=$1
  ports=
  i=0
  while [ "$i" -lt "$n" ]; do
    d=$work/node$i
    mkdir -p "$d"
    port=$(free_port)
    redis-server --port "$port" --bind 127.0.0.1 --save "" \
      --appendonly no --cluster-enabled yes --cluster-node-timeout 5000 \
      --cluster-config-file "$d/nodes.conf" --dir "$d" \
      --logfile "$d/log" >/dev/null 2>&1 &
    pid=$!
    pids="$pids $pid"
    if [ "$cores" -gt "$n" ] && command -v taskset >/dev/null 2>&1; then
      taskset -cp "$i" "$pid" >/dev/null
    fi
    ports="$ports $port"
    i=$((i + 1))
  done
  for port in $ports; do
    k=0
    until redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; do
      k=$((k + 1))
      [ "$k" -lt 100 ] || {
        log "redis-server on $port did not start:"
        cat "$work"/node*/log >&2 || true
        exit 1
      }
      sleep 0.05
    done
  done
  i=0
  first=
  for port in $ports; do
    lo=$((16384 * i / n))
    hi=$((16384 * (i + 1) / n - 1))
    redis-cli -p "$port" cluster addslotsrange "$lo" "$hi" >/dev/null
    if [ -z "$first" ]; then first=$port; else
      redis-cli -p "$first" cluster meet 127.0.0.1 "$port" >/dev/null
    fi
    i=$((i + 1))
  done
  for port in $ports; do
    k=0
    until redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok' &&
      [ "$(redis-cli -p "$port" cluster info |
        sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p')" = "$n" ]; do
      k=$((k + 1))
      [ "$k" -lt 400 ] || { log "cluster of $n did not come up"; exit 1; }
      sleep 0.05
    done
  done
  url=redis+cluster://127.0.0.1:$first
}

# The utime + stime of the servers, in clock ticks.
server_ticks() {
  t=0
  for sp in $pids; do
    v=$(awk '{print $14 + $15}' "/proc/$sp/stat")
    t=$((t + v))
  done
  echo "$t"
}

# The jobs of queue $1 completed since it was made (`completed_ever`:
# `completed` counts only those kept, at most fleet-demo's 1000).
completed() {
  FLEET_URL=$url "$fleet" queue stats "$1" 2>/dev/null |
    sed -n 's/^completed_ever: *\([0-9]*\).*/\1/p'
}

# One run: S shards, queue $2 of $3 partitions (1: plain).
run() {
  s=$1 q=$2 p=$3
  start_cluster "$s"
  if [ "$p" -gt 1 ]; then
    FLEET_URL=$url timeout 30 "$fleet" queue create "$q" --partitions "$p" \
      >/dev/null
  fi
  per=$((jobs / producers))
  fill=
  i=0
  while [ "$i" -lt "$producers" ]; do
    FLEET_URL=$url timeout 300 "$demo" enqueue --queue "$q" --count "$per" \
      --size 0 >/dev/null &
    fill="$fill $!"
    i=$((i + 1))
  done
  for fp in $fill; do wait "$fp"; done
  total=$((per * producers))
  c0=$(server_ticks)
  t0=$(date +%s.%N)
  i=0
  while [ "$i" -lt "$workers" ]; do
    FLEET_URL=$url timeout 600 "$demo" worker --queue "$q" \
      --concurrency "$conc" --work-ms 0 >/dev/null 2>&1 &
    wpids="$wpids $!"
    i=$((i + 1))
  done
  k=0
  while :; do
    done_n=$(completed "$q")
    [ "${done_n:-0}" -ge "$total" ] && break
    k=$((k + 1))
    [ "$k" -lt 6000 ] || { log "S=$s: only ${done_n:-0} of $total completed"; exit 1; }
    sleep 0.1
  done
  t1=$(date +%s.%N)
  c1=$(server_ticks)
  stop_workers
  stop_cluster
  rate=$(python3 -c "print(round($total / ($t1 - $t0)))")
  cpu=$(python3 -c "print(round(($c1 - $c0) * 1e6 / $tick / $total, 2))")
  printf 'S=%-2s %-6s P=%-3s W=%s C=%s jobs=%s: %8s jobs/s, %6s us server CPU per job\n' \
    "$s" "$q" "$p" "$workers" "$conc" "$total" "$rate" "$cpu"
  last=$rate
}

for s in $shards; do
  if [ "$s" -gt "$cores" ]; then
    log "S=$s skipped: the machine has $cores cores"
    continue
  fi
  if [ "$s" -eq 1 ] && [ "$plain" = 1 ]; then
    run 1 plain 1
    plain_rate=$last
  fi
  run "$s" bq "$parts"
  if [ -z "$base" ]; then
    base=$last
    if [ -n "${plain_rate:-}" ]; then
      printf '   one shard: partitioned / plain = %s\n' \
        "$(python3 -c "print(round($last / $plain_rate, 2))")"
    fi
  else
    printf '   S=%s / S=1 = %s (target >= %s)\n' "$s" \
      "$(python3 -c "print(round($last / $base, 2))")" \
      "$(python3 -c "print(0.8 * $s)")"
  fi
done
printf 'machine: %s, %s cores (%s); redis %s\n' "$(uname -n)" "$cores" \
  "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" \
  "$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')"
