#!/bin/sh
# sidebyside.sh -- fleet-bench beside its Node anchors (BullMQ, Bee-Queue,
# Redlock) and protocol models (OpenSandbox's pool store, Kaal's cron
# fire, goa pulse's DispatchJob), and the record store alone, on one
# private redis-server, round-robin, and the table of issues 11, 25 and
# 27: fleet's figures per round, their ratios to the anchors, the
# medians, and the machine's ping baseline of each round.
#
#   sh tests/bench/sidebyside.sh
#
# From a fresh clone: builds fleet-bench into build/ (incrementally when
# build/ exists), installs the anchors' packages into tests/bench/node/
# when node_modules is missing, starts redis-server on a free loopback port
# (no persistence), runs every program once per round with FLUSHALL
# between runs, and kills the server at the end. Needs cmake, a C
# toolchain, redis-server, redis-cli, node >= 20 and npm.
#
# Environment: SIDEBYSIDE_SECONDS (default 8), the measurement time of each
# phase; SIDEBYSIDE_ROUNDS (default 3). The defaults take about 10 minutes.
# SIDEBYSIDE_ONLY, a list of groups among queue, lock, warmpool, cron,
# pool and store (default all of them), runs only those groups' programs
# (and the ping baseline, always).
#
# `fleet-bench queue` measures the default, no completed-job history, and
# the same processing under flow control (a limit far above the rate
# reached, 1000 groups) and a limit of 1000 jobs/s held for 10 s; a
# second run with --keep 1000 measures what keeping history costs (only its
# "_keep" figures are kept, so that its bulk enqueue and memory figures do
# not replace the default run's). The memory backend's run (`--url
# memory:// --flow`) gives its processed jobs/s beside the Redis backend's.
#
# SIDEBYSIDE_RESULTS, a file, keeps every run's JSON lines there as they
# come (tests/bench/node/table.js FILE prints their table), so that a run
# cut short still leaves what it measured. FLEET_BENCH, when set, names a
# fleet-bench built elsewhere (a bundle made by bundle-bench.sh,
# tests/bench/bundle-run.sh): nothing is built, and cmake is not needed.
# SIDEBYSIDE_PIN=1 puts redis-server on one core and every client on the
# next two (the first three cores this script may use, with taskset), as
# on a quiet machine; it needs three cores.
#
# Every run is bounded by its own counts and times, and by `timeout`.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
node_dir=$here/node
bench=${FLEET_BENCH:-$root/build/tests/bench/fleet-bench}
pin=${SIDEBYSIDE_PIN:-0}
secs=${SIDEBYSIDE_SECONDS:-8}
rounds=${SIDEBYSIDE_ROUNDS:-3}
groups=${SIDEBYSIDE_ONLY:-queue lock warmpool cron pool store}
work=$(mktemp -d "${TMPDIR:-/tmp}/fleet-sidebyside.XXXXXX")
results=${SIDEBYSIDE_RESULTS:-$work/results.jsonl}
redis_pid=

cleanup() {
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() {
  printf 'sidebyside: %s\n' "$*" >&2
}

tools="redis-server redis-cli node timeout"
[ -n "${FLEET_BENCH:-}" ] || tools="$tools cmake"
[ -d "$node_dir/node_modules" ] || tools="$tools npm"
[ "$pin" = 1 ] && tools="$tools taskset"
for tool in $tools; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    log "$tool is not on PATH"
    exit 1
  fi
done
case $secs in
  '' | *[!0-9.]* | .* | *.*.*)
    log "SIDEBYSIDE_SECONDS wants a positive number"
    exit 2
    ;;
esac
case $rounds in
  '' | *[!0-9]* | 0)
    log "SIDEBYSIDE_ROUNDS wants a positive integer"
    exit 2
    ;;
esac

# With SIDEBYSIDE_PIN=1: the server's core and the clients' two, from the
# cores this script may use (taskset's list of them, ranges expanded).
server_cpu=
client_cpus=
case $pin in
  0) ;;
  1)
    cpus=$(taskset -cp $$ | sed 's/.*: //' | tr ',' '\n' |
      awk -F- '{ e = NF > 1 ? $2 : $1; for (c = $1; c <= e; c++) print c }')
    set -- $cpus
    if [ $# -lt 3 ]; then
      log "SIDEBYSIDE_PIN=1 needs three cores; this script may use $#"
      exit 2
    fi
    server_cpu=$1
    client_cpus=$2,$3
    if ! taskset -c "$server_cpu" true 2>/dev/null; then
      log "taskset cannot pin here: SIDEBYSIDE_PIN=1 left off"
      server_cpu=
      client_cpus=
    fi
    ;;
  *)
    log "SIDEBYSIDE_PIN wants 0 or 1"
    exit 2
    ;;
esac

for g in $groups; do
  case $g in
    queue | lock | warmpool | cron | pool | store) ;;
    *)
      log "SIDEBYSIDE_ONLY: unknown group '$g' (queue lock warmpool cron pool" \
        "store)"
      exit 2
      ;;
  esac
done

# want GROUP: whether GROUP runs.
want() {
  case " $groups " in
    *" $1 "*) return 0 ;;
  esac
  return 1
}

if [ -n "${FLEET_BENCH:-}" ]; then
  [ -x "$bench" ] || { log "FLEET_BENCH=$bench is not a program"; exit 1; }
else
  log "building fleet-bench in $root/build"
  if [ ! -f "$root/build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$root/build" >"$work/cmake.log" 2>&1 ||
      { cat "$work/cmake.log" >&2; exit 1; }
  fi
  cmake --build "$root/build" -j2 --target fleet-bench >"$work/build.log" \
    2>&1 || { cat "$work/build.log" >&2; exit 1; }
fi

if [ ! -d "$node_dir/node_modules" ]; then
  log "npm install into $node_dir"
  (cd "$node_dir" && npm install --no-audit --no-fund --no-package-lock \
    --loglevel=error) >&2
fi

# A free loopback port: the kernel picks one, node reports it. Another
# process may take it before redis-server does, so starting is retried.
free_port() {
  node -e 'const s = require("net").createServer();
s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

start_redis() {
  tries=0
  while [ $tries -lt 5 ]; do
    tries=$((tries + 1))
    port=$(free_port)
    if [ -n "$server_cpu" ]; then
      taskset -c "$server_cpu" redis-server --port "$port" --bind 127.0.0.1 \
        --save "" --appendonly no --dir "$work" --logfile "$work/redis.log" &
    else
      redis-server --port "$port" --bind 127.0.0.1 --save "" \
        --appendonly no --dir "$work" --logfile "$work/redis.log" &
    fi
    redis_pid=$!
    waited=0
    while [ $waited -lt 50 ]; do
      if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null |
        grep -q PONG; then
        return 0
      fi
      kill -0 "$redis_pid" 2>/dev/null || break
      sleep 0.1
      waited=$((waited + 1))
    done
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
    redis_pid=
  done
  log "redis-server did not start; see the log below"
  cat "$work/redis.log" >&2 || true
  exit 1
}

start_redis
url=redis://127.0.0.1:$port
if [ -n "$client_cpus" ]; then
  # Every client this script starts from here on inherits these cores.
  taskset -cp "$client_cpus" $$ >/dev/null
  log "redis-server on core $server_cpu, the clients on cores $client_cpus"
fi
log "redis-server $(redis-server --version | cut -d' ' -f3) on $url," \
  "pid $redis_pid; $rounds rounds, $secs s phases"

# The lock run: --inflight 50 where fleet-bench has it, else plain `lock`,
# whose c50 run is the same measurement.
inflight=yes
if ! "$bench" lock --inflight 50 --seconds 0.01 --url "$url" >/dev/null \
  2>"$work/lock-probe.log" &&
  grep -q "unknown flag" "$work/lock-probe.log"; then
  inflight=no
  lock_note="fleet-bench lock has no --inflight yet: ran plain"
  lock_note="$lock_note 'fleet-bench lock' and used its c50 run"
  log "$lock_note"
fi
redis-cli -h 127.0.0.1 -p "$port" flushall >/dev/null

# run ROUND LIMIT NAME COMMAND...: runs one program for at most LIMIT
# seconds, tags its JSON lines with the round (only those matching $only
# when it is set; their bench renamed to $as when that is set), and
# empties the server.
failures=0
only=
as=
run() {
  r=$1
  limit=$2
  name=$3
  shift 3
  log "round $r/$rounds: $name"
  if ! timeout -k 5 "$limit" "$@" >"$work/out" 2>"$work/err"; then
    failures=$((failures + 1))
    log "round $r: $name failed:"
    cat "$work/err" >&2
  fi
  sed -n "s/^{/{\"round\":$r,/p" "$work/out" | grep -e "${only:-^}" |
    if [ -n "$as" ]; then
      sed "s/\"bench\":\"[^\"]*\"/\"bench\":\"$as\"/"
    else
      cat
    fi >>"$results" || true
  redis-cli -h 127.0.0.1 -p "$port" flushall >/dev/null
}

# Each limit is the run's own worst case with room to spare: bulk enqueue
# and queueing a million jobs are bounded by counts, the rest by $secs.
limit=$(awk -v s="$secs" 'BEGIN { printf "%d", 15 * s + 150 }')
r=1
while [ $r -le "$rounds" ]; do
  run $r "$limit" ping "$bench" ping --url "$url" --seconds "$secs"
  if want queue; then
    run $r "$limit" "fleet queue" "$bench" queue --url "$url" \
      --seconds "$secs"
    only=_keep_
    run $r "$limit" "fleet queue --keep 1000" "$bench" queue --url "$url" \
      --seconds "$secs" --keep 1000
    only=
    run $r "$limit" bullmq node "$node_dir/bullmq.js" --url "$url" \
      --seconds "$secs"
    run $r "$limit" bee-queue node "$node_dir/beequeue.js" --url "$url" \
      --seconds "$secs"
    run $r "$limit" "fleet queue --pending 1000" "$bench" queue \
      --url "$url" --seconds "$secs" --pending 1000
    run $r "$limit" "fleet queue --pending 1000000" "$bench" queue \
      --url "$url" --seconds "$secs" --pending 1000000
    # The memory backend, in this process, on the same scripts (issue 27).
    as=fleet-queue-memory
    run $r "$limit" "fleet queue memory://" "$bench" queue --url memory:// \
      --seconds "$secs" --flow
    as=
  fi
  if want lock; then
    if [ $inflight = yes ]; then
      run $r "$limit" "fleet lock --inflight 50" "$bench" lock \
        --inflight 50 --url "$url" --seconds "$secs"
    else
      run $r "$limit" "fleet lock" "$bench" lock --url "$url" \
        --seconds "$secs"
    fi
    run $r "$limit" redlock node "$node_dir/redlock.js" --url "$url" \
      --seconds "$secs"
  fi
  if want warmpool; then
    run $r "$limit" "fleet warmpool" "$bench" warmpool --url "$url" \
      --seconds "$secs"
    run $r "$limit" opensandbox node "$node_dir/opensandbox.js" \
      --url "$url" --seconds "$secs"
  fi
  # Cron (issue 27): 10,000 definitions due at once on 3 schedulers,
  # beside the model of Kaal's fire with its registry, with the tightest
  # window that sees every occurrence and (1,000 definitions, or a round
  # takes minutes) with Kaal's default 120 s lookback.
  if want cron; then
    run $r "$limit" "fleet cron" "$bench" cron --url "$url" --defs 10000 \
      --rounds 3
    run $r "$limit" "kaal --lookback 5" node "$node_dir/kaal.js" \
      --url "$url" --defs 10000 --rounds 3 --lookback 5
    run $r "$limit" "kaal" node "$node_dir/kaal.js" --url "$url" \
      --defs 1000 --rounds 3
  fi
  # The pool (issue 27): dispatch + start with 1 and 50 in flight beside
  # the model of goa pulse's DispatchJob (its rebalance phase kept small).
  if want pool; then
    run $r "$limit" "fleet pool" "$bench" pool --url "$url" \
      --seconds "$secs" --jobs 1000
    run $r "$limit" pulse node "$node_dir/pulse.js" --url "$url" \
      --seconds "$secs"
  fi
  # The record store (issue 27): puts and appends with one index entry
  # and without; no peer runs beside it.
  if want store; then
    run $r "$limit" "fleet store" "$bench" store --url "$url" \
      --seconds "$secs"
  fi
  r=$((r + 1))
done

echo
if [ -n "${SIDEBYSIDE_ONLY:-}" ]; then
  node "$node_dir/table.js" "$results" --skip-empty
else
  node "$node_dir/table.js" "$results"
fi
if [ -n "${lock_note:-}" ]; then
  echo
  echo "note: $lock_note."
fi
if [ $failures -gt 0 ]; then
  echo
  echo "$failures run(s) failed; their cells say n/a."
  exit 1
fi
