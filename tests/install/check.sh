#!/bin/sh
# check.sh BUILD_DIR -- installs the build into a scratch prefix, checks
# that the shared library exports the public API only and carries the
# version and soname docs/versioning.md gives (include/fleet.h's version,
# CMakeLists.txt's FLEET_SOVERSION), that fleet.pc names the prefix with
# plain paths and that the expanded Lua scripts are installed, then builds
# and runs a consumer with find_package(fleet) and with pkg-config; then
# deb.sh checks the Debian packages (cpack -G DEB, lintian).
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
# Only fleet_ symbols leave the library: no internal fleet__ one, nothing
# unprefixed.
so=$(ls "$tmp"/prefix/lib*/libfleet.so "$tmp"/prefix/lib/*/libfleet.so \
  2>/dev/null | head -n 1)
[ -n "$so" ] || { echo "install check: no libfleet.so installed" >&2; exit 1; }
libdir=$(dirname "$so")
fail() {
  echo "install check: $*" >&2
  exit 1
}
# The version and the soname, each from its one source.
src=$(cd "$here/../.." && pwd)
version=$(sed -n 's/^#define FLEET_VERSION_STRING "\(.*\)"$/\1/p' \
  "$src/include/fleet.h")
soversion=$(sed -n 's/^set(FLEET_SOVERSION \([0-9]*\))$/\1/p' \
  "$src/CMakeLists.txt")
grep -q "^project(fleet VERSION $version " "$src/CMakeLists.txt" ||
  fail "CMakeLists.txt's project version is not include/fleet.h's $version"
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libfleet.so.$soversion" ] ||
  fail "the soname is $soname, not libfleet.so.$soversion"
[ "$(readlink "$so")" = "libfleet.so.$soversion" ] &&
  [ "$(readlink "$libdir/libfleet.so.$soversion")" = "libfleet.so.$version" ] ||
  fail "libfleet.so -> $(readlink "$so"), not libfleet.so.$soversion ->" \
    "libfleet.so.$version"
pc="$libdir/pkgconfig/fleet.pc"
grep -qx "prefix=$tmp/prefix" "$pc" || fail "fleet.pc: $(grep '^prefix=' "$pc")"
grep -qx "Version: $version" "$pc" || fail "fleet.pc: $(grep '^Version' "$pc")"
! grep -q '\.\.' "$pc" || fail "fleet.pc holds a relative path"
leaked=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBR]$/ {print $3}' |
  grep -v '^fleet_[a-z0-9]' | grep -v '^_' || true)
internal=$(nm -D --defined-only "$so" | awk '{print $3}' | grep '^fleet__' ||
  true)
if [ -n "$leaked$internal" ]; then
  echo "install check: libfleet.so exports non-public symbols:" $leaked \
    $internal >&2
  exit 1
fi
# The Lua scripts, expanded (no --#include line left), for other languages
# and redis-cli (docs/queue.md, "Running the scripts yourself").
lua="$tmp/prefix/share/fleet/lua"
for f in "$build"/generated/lua/*.lua; do
  if ! cmp -s "$f" "$lua/$(basename "$f")"; then
    echo "install check: $lua/$(basename "$f") missing or stale" >&2
    exit 1
  fi
done
[ -f "$lua/queue_enqueue.lua" ] ||
  { echo "install check: no queue_enqueue.lua in $lua" >&2; exit 1; }
if grep -l '^--#include' "$lua"/*.lua >&2; then
  echo "install check: scripts above still hold --#include lines" >&2
  exit 1
fi
cmake -S "$here" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/cmake/consumer_shared"
"$tmp/cmake/consumer_static"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --variable=includedir fleet)" = "$tmp/prefix/include" ] ||
  fail "fleet.pc's includedir: $(pkg-config --variable=includedir fleet)"
# shellcheck disable=SC2046
cc "$here/consumer.c" $(pkg-config --cflags --libs fleet) -o "$tmp/pc"
LD_LIBRARY_PATH="$libdir" "$tmp/pc"
echo "install check: find_package(fleet) and pkg-config consumers ran"
sh "$here/deb.sh" "$build"
