#!/bin/sh
# bundle-run.sh -- the side-by-side table and the floors on a machine with
# no packages, toolchain or network, from a bundle that
# ../shared/tools/bundle-bench.sh gathered on a machine that has them
# (redis-server, redis-cli, fleet-bench, node as node.xz, the anchors'
# node_modules.tar.xz, and their shared libraries).
#
#   sh tests/bench/bundle-run.sh BUNDLE OUT
#
# A copy of build/generated/lua/functions in BUNDLE/functions, when there,
# gives floors.py the scripts' function libraries (its setup phase).
#
# Unpacks node and the Node packages (with python3's lzma, so that xz need
# not be there), names the machine (cores, processor, kernel, Redis) in
# OUT/machine.txt, then runs tests/bench/floors.py --pin (where there are
# two cores) into OUT/floors.txt, and tests/bench/sidebyside.sh with
# redis-server pinned to one core and the clients to two (SIDEBYSIDE_PIN=1,
# where there are three) into OUT/sidebyside.txt, and the table's JSON
# lines into OUT/sidebyside.jsonl (tests/bench/node/table.js prints their
# table). Each is written as it goes, so that a run cut short still
# leaves what it measured.
#
# Environment: SIDEBYSIDE_SECONDS, SIDEBYSIDE_ROUNDS and SIDEBYSIDE_ONLY
# pass through to sidebyside.sh; FLOORS_SECONDS (default 2) is floors.py's
# --seconds; BUNDLE_SKIP, a list among sidebyside and floors, leaves those
# out. Needs python3, taskset and timeout there.
set -eu

bundle=${1:?usage: bundle-run.sh BUNDLE OUT}
out=${2:?usage: bundle-run.sh BUNDLE OUT}
here=$(cd "$(dirname "$0")" && pwd)
bundle=$(cd "$bundle" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
skip=" ${BUNDLE_SKIP:-} "

export PATH="$bundle/bin:$PATH"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FLEET_BENCH="$bundle/bin/fleet-bench"
if [ -d "$bundle/functions" ]; then
  export FLEET_FUNCTIONS="$bundle/functions"
fi

if [ ! -x "$bundle/bin/node" ] && [ -f "$bundle/bin/node.xz" ]; then
  python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as f, open(sys.argv[2], "wb") as o:
    shutil.copyfileobj(f, o)' "$bundle/bin/node.xz" "$bundle/bin/node"
  chmod +x "$bundle/bin/node"
fi
if [ ! -d "$here/node/node_modules" ] &&
  [ -f "$bundle/node_modules.tar.xz" ]; then
  python3 -c 'import sys, tarfile
tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$bundle/node_modules.tar.xz" "$here/node"
fi

{
  echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
  echo "cores: $(nproc) (this script may use $(taskset -cp $$ | sed 's/.*: //'))"
  echo "processor: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
  echo "kernel: $(uname -sr)"
  echo "redis-server: $(redis-server --version)"
  echo "node: $(node --version)"
} | tee "$out/machine.txt"

# status NAME: the exit status NAME's run left (tee's would hide it).
status() {
  s=$(cat "$out/$1.rc" 2>/dev/null || echo 1)
  rm -f "$out/$1.rc"
  [ "$s" = 0 ] || { echo "bundle-run: $1 failed ($s)" >&2; rc=1; }
}

rc=0
# floors.py first: it is short and bounded, sidebyside.sh the long one.
case $skip in
  *" floors "*) ;;
  *)
    fpin=--pin
    [ "$(nproc)" -ge 2 ] && taskset -c 0 true 2>/dev/null || fpin=
    { PYTHONUNBUFFERED=1 python3 "$here/floors.py" $fpin \
      --seconds "${FLOORS_SECONDS:-2}"; echo $? >"$out/floors.rc"; } 2>&1 |
      tee "$out/floors.txt"
    status floors
    ;;
esac
case $skip in
  *" sidebyside "*) ;;
  *)
    pin=0
    [ "$(nproc)" -ge 3 ] && pin=1
    : >"$out/sidebyside.jsonl"
    { SIDEBYSIDE_PIN=$pin SIDEBYSIDE_RESULTS=$out/sidebyside.jsonl \
      sh "$here/sidebyside.sh"; echo $? >"$out/sidebyside.rc"; } 2>&1 |
      tee "$out/sidebyside.txt"
    status sidebyside
    ;;
esac
exit $rc
