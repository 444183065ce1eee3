#!/bin/sh
# instr.sh -- the server's instructions per operation of a fleet-bench run,
# counted by valgrind (callgrind) instead of timed: a figure that a busy
# or shared machine blurs far less than time (two runs differ by 1-2%, as
# the worker's claims batch differently), for comparing two variants of a
# script or two runs of `fleet-bench queue --flow` (limits and groups
# against the unlimited queue) or `--life` (a result and an event
# subscriber against the default path).
#
#   sh tests/bench/instr.sh queue --flow --jobs 20000
#
# Starts redis-server (REDIS_SERVER, default the one on PATH) under
# `valgrind --tool=callgrind` on a free loopback port, runs
# build/tests/bench/fleet-bench with the given arguments against it and
# FLEET_BENCH_HOOK set to this script: at every sample fleet-bench takes,
# the hook dumps callgrind's counts (and so restarts them), and at every
# measurement it emits, the hook prints the instructions of the interval
# since the sample before, per operation:
#
#   instr <label> <instructions per op> <ops>
#
# followed, for each label that names a variant of process_c<C> (limit,
# groups1000, result_events), by its ratio to process_c<C>. The server runs
# about 50 times slower under valgrind: keep --jobs small (20000 is
# plenty; every measured phase is at least that many operations), and
# read rates and CPU from a plain run. fleet-bench queue stops a
# processing phase after 5 x --seconds (default 5) whether or not it
# processed every job, and under valgrind a slow phase (1000 groups) can
# hit that bound: such a phase is cut short, its figure is not comparable
# (a cut groups phase read 1.27x the plain one where a whole one read
# 1.15x), and this script says so on stderr. Give --seconds 40 with
# --jobs 20000 on a slow machine. Instructions are not time (a cache
# miss costs no more instructions than a hit), so the figure is a floor of
# a variant's cost, not its CPU. Needs valgrind (callgrind_control).
#
# Every wait is bounded (by count); redis-server is stopped by its pid.
set -eu

if [ "${1:-}" = "--hook" ]; then
  # The hook, as fleet-bench calls it: sample | emit LABEL OPS.
  dir=$INSTR_DIR
  case "$2" in
  sample)
    callgrind_control -d "$(cat "$dir/pid")" >/dev/null 2>&1 || true
    ;;
  emit)
    # The newest dump: callgrind numbers them cg.out.1, cg.out.2, ...
    last=$(ls "$dir"/cg.out.* 2>/dev/null | sed 's/.*\.//' | sort -n | tail -1)
    ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' \
      "$dir/cg.out.$last" | head -1)
    awk -v l="$3" -v ir="${ir:-0}" -v ops="$4" \
      'BEGIN { printf "instr %s %.0f %s\n", l, ir / ops, ops }' |
      tee -a "$dir/instr.txt" >&2
    ;;
  esac
  exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bench=$root/build/tests/bench/fleet-bench
server=${REDIS_SERVER:-redis-server}
command -v callgrind_control >/dev/null || {
  echo "instr.sh: needs valgrind (callgrind_control)" >&2
  exit 2
}
[ -x "$bench" ] || {
  echo "instr.sh: no $bench: build first" >&2
  exit 2
}
work=$(mktemp -d "${TMPDIR:-/tmp}/fleet-instr.XXXXXX")
vpid=
cleanup() {
  if [ -n "$vpid" ]; then
    kill "$vpid" 2>/dev/null || true
    wait "$vpid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
  "$server" --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
  >"$work/server.log" 2>&1 &
vpid=$!
echo "$vpid" >"$work/pid"
n=0
until redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; do
  n=$((n + 1))
  if [ $n -gt 150 ]; then
    echo "instr.sh: redis-server under valgrind did not start" >&2
    cat "$work/server.log" >&2
    exit 1
  fi
  sleep 0.2
done
echo "instr.sh: redis-server under callgrind on port $port (pid $vpid)" >&2
INSTR_DIR=$work FLEET_BENCH_HOOK="sh $here/instr.sh --hook" \
  "$bench" "$@" --url "redis://127.0.0.1:$port" >"$work/bench.out"
# The ratios of the variants to the default processing run.
awk '
  { ir[$2] = $3; order[++n] = $2 }
  END {
    for (i = 1; i <= n; i++) {
      l = order[i]
      print "instr " l " " ir[l] " per op"
      if (match(l, /^process_c[0-9]+_/)) {
        base = substr(l, 1, RLENGTH - 1)
        if (base in ir && ir[base] > 0)
          printf "instr %s_ratio %.3f\n", l, ir[l] / ir[base]
      }
    }
  }' "$work/instr.txt"
# A processing phase the bench cut at its time bound (fewer operations than
# --jobs): say so.
jobs=$(printf '%s\n' "$@" | awk 'p { print; exit } $0 == "--jobs" { p = 1 }')
if [ -n "$jobs" ]; then
  awk -v jobs="$jobs" '$2 ~ /^process_/ && $4 + 0 < jobs + 0 {
      printf "instr.sh: %s processed %d of %d jobs before fleet-bench " \
        "stopped it (5 x --seconds): its figure is not comparable; give " \
        "a larger --seconds\n", $2, $4, jobs
    }' "$work/instr.txt" >&2
fi
redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || true
wait "$vpid" 2>/dev/null || true
vpid=
