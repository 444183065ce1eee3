#!/bin/sh
# test.sh -- installs what is missing (Debian 12), builds fleet with
# warnings as errors and runs the whole test suite. The Redis tests start
# their own redis-server on free loopback ports.
#   scripts/test.sh              build/ (RelWithDebInfo)
#   scripts/test.sh --sanitize   build-asan/ (AddressSanitizer + UBSan)
#   scripts/test.sh --valkey     build/, the tests on valkey-server 8
#                                (installed from bookworm-backports)
#   scripts/test.sh --hiredis1   build-hiredis1/, built on the hiredis 1.x
#                                API (hiredict 1.3's shims, unpacked from
#                                bookworm-backports by scripts/deps.sh)
# Extra arguments go to the test runner (e.g. a test name substring).
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
fleet_install_deps test
dir=build
flags="-DCMAKE_BUILD_TYPE=RelWithDebInfo"
if [ "${1:-}" = "--valkey" ]; then
  shift
  fleet_install_deps valkey
  FLEET_REDIS_SERVER=$(command -v valkey-server)
  export FLEET_REDIS_SERVER
elif [ "${1:-}" = "--hiredis1" ]; then
  shift
  dir=build-hiredis1
  hiredict=$(pwd)/build-hiredis1/hiredict
  fleet_install_deps hiredis1 "$hiredict"
  PKG_CONFIG_PATH="$hiredict/pc"
  export PKG_CONFIG_PATH
elif [ "${1:-}" = "--sanitize" ]; then
  shift
  dir=build-asan
  flags="-DCMAKE_BUILD_TYPE=Debug -DFLEET_SANITIZE=ON"
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
fi
# shellcheck disable=SC2086
cmake -S . -B "$dir" -DFLEET_WERROR=ON $flags
cmake --build "$dir" -j "$(nproc)"
if [ -n "${hiredict:-}" ] &&
  ! ldd "$dir/tests/fleet-tests" | grep -q libhiredict; then
  echo "test.sh: $dir is not linked with hiredict (a stale CMakeCache.txt?)" >&2
  exit 1
fi
# Two tests per core, with timing windows doubled for the shared cores
# (both can be overridden: -j N after the mode, FLEET_TEST_SLACK).
export FLEET_TEST_SLACK="${FLEET_TEST_SLACK:-2}"
FLEET_TEST_REQUIRE_REDIS=1 "$dir/tests/fleet-tests" -j "$(( $(nproc) * 2 ))" "$@"
