#!/bin/sh
# luaprof.sh -- the Lua VM instructions of each script line, for one
# fleet-bench run on the memory backend:
#
#   sh tests/bench/luaprof.sh queue --jobs 20000 --seconds 2
#
# Builds fleet-bench with -DFLEET_LUA=lua5.1 -DFLEET_LUA_PROFILE=ON in
# build-prof/ (once; again when the sources changed), runs it with the
# given arguments against memory:// with FLEET_LUA_PROFILE set, and
# prints tests/bench/luaprof.py's summary of every script it ran
# (LUAPROF_ARGS adds luaprof.py options, for example "--script
# queue_complete_claim --lines 40"). The profile stays in
# build-prof/luaprof.txt. Fails when the run counted nothing. CI runs it
# on a short lock run so that the profiling build keeps compiling.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-prof
log=$build/luaprof-build.log
mkdir -p "$build"
cmake -S "$root" -B "$build" -DFLEET_LUA=lua5.1 -DFLEET_LUA_PROFILE=ON \
  -DFLEET_BUILD_TOOLS=OFF -DFLEET_BUILD_EXAMPLES=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log" 2>&1 ||
  { cat "$log" >&2; exit 1; }
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" \
  --target fleet-bench >>"$log" 2>&1 ||
  { tail -n 40 "$log" >&2; exit 1; }
rm -f "$build/luaprof.txt"
FLEET_LUA_PROFILE=$build/luaprof.txt \
  "$build/tests/bench/fleet-bench" "$@" --url memory:// >/dev/null
if [ ! -s "$build/luaprof.txt" ]; then
  echo "luaprof.sh: the run counted no Lua instruction" >&2
  exit 1
fi
# shellcheck disable=SC2086
python3 "$root/tests/bench/luaprof.py" "$build/luaprof.txt" \
  --build "$build" ${LUAPROF_ARGS:-}
