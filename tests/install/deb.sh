#!/bin/sh
# deb.sh BUILD_DIR -- builds the Debian packages of BUILD_DIR with
# `cpack -G DEB`, checks their names, versions, dependencies and contents,
# runs lintian on them (any error or warning fails; the one override is
# cmake/deb/lintian-overrides, which says why), unpacks
# them with `dpkg -x` into a scratch root (a real `apt install` needs root
# and would change the machine; `apt-get -s install ./*.deb` checks instead
# that apt can resolve their dependencies), then, against that root only:
# compiles and links a program with pkg-config, shared and static, and runs
# it on the memory backend; does the same for the shared library with
# pkg-config and find_package(fleet) where hiredis's and Lua's .pc files
# are hidden; runs the installed fleet-demo; renders the man
# pages with groff warnings on. Called by check.sh; skipped (exit 0) where
# cpack or dpkg-deb is missing; lintian is required (scripts/deps.sh test
# installs it).
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
for tool in cpack dpkg-deb dpkg dpkg-shlibdeps; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "deb check: skipped ($tool not installed)"
    exit 0
  }
done
fail() {
  echo "deb check: $*" >&2
  exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The packages, made into $tmp/debs (the build directory stays clean).
(cd "$build" && cpack -G DEB -B "$tmp/debs" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB failed"; }
deb() {
  f=$(ls "$tmp"/debs/"$1"_*.deb 2>/dev/null | head -n 1)
  [ -n "$f" ] || fail "no $1 package made"
  echo "$f"
}
# The version (include/fleet.h's) and the soname (CMakeLists.txt's
# FLEET_SOVERSION), as docs/versioning.md says they go together: the
# library package is libfleet<soname>, holding libfleet.so.<soname>.
src=$(cd "$here/../.." && pwd)
upstream=$(sed -n 's/^#define FLEET_VERSION_STRING "\(.*\)"$/\1/p' \
  "$src/include/fleet.h")
soversion=$(sed -n 's/^set(FLEET_SOVERSION \([0-9]*\))$/\1/p' \
  "$src/CMakeLists.txt")
[ -n "$upstream" ] && [ -n "$soversion" ] ||
  fail "no version in include/fleet.h or no FLEET_SOVERSION in CMakeLists.txt"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir="lib/$multiarch"
lib=$(deb "libfleet$soversion")
dev=$(deb libfleet-dev)
tools=$(deb fleet-tools)
[ "$(ls "$tmp"/debs/libfleet[0-9]*_*.deb | wc -l)" -eq 1 ] ||
  fail "more than one library package: $(ls "$tmp"/debs)"
version=$(dpkg-deb -f "$lib" Version)
for f in "$lib" "$dev" "$tools"; do
  [ "$(dpkg-deb -f "$f" Version)" = "$upstream-1" ] ||
    fail "$(basename "$f"): version $(dpkg-deb -f "$f" Version), not $upstream-1"
done

# Metadata: the maintainer and home page the build was given
# (FLEET_DEB_MAINTAINER, FLEET_HOMEPAGE; no home page when none was), with
# an address lintian accepts (checked below).
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
for f in "$lib" "$dev" "$tools"; do
  [ "$(dpkg-deb -f "$f" Maintainer)" = "$(cache FLEET_DEB_MAINTAINER)" ] ||
    fail "$(basename "$f"): Maintainer $(dpkg-deb -f "$f" Maintainer)"
  [ "$(dpkg-deb -f "$f" Homepage)" = "$(cache FLEET_HOMEPAGE)" ] ||
    fail "$(basename "$f"): Homepage $(dpkg-deb -f "$f" Homepage)"
done

# Dependencies: dpkg-shlibdeps's, one entry per library (no second libuv1
# of our own); the -dev package pins the library's exact version.
depends_has() {
  dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//' | grep -qx "$2" ||
    fail "$(basename "$1"): Depends lacks '$2': $(dpkg-deb -f "$1" Depends)"
}
depends_once() {
  dups=$(dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' |
    sort | uniq -d)
  [ -z "$dups" ] ||
    fail "$(basename "$1"): Depends names $dups twice: $(dpkg-deb -f "$1" Depends)"
}
depends_has "$lib" "libhiredis0.14 (>= 0.14.0)"
dpkg-deb -f "$lib" Depends | grep -q "libuv1 (>= " ||
  fail "libfleet$soversion does not depend on libuv1: $(dpkg-deb -f "$lib" Depends)"
depends_has "$dev" "libfleet$soversion (= $version)"
depends_has "$dev" "libuv1-dev (>= 1.44)"
for f in "$lib" "$dev" "$tools"; do depends_once "$f"; done
if dpkg-deb -f "$dev" Depends | grep -q hiredis; then
  fail "libfleet-dev requires hiredis: $(dpkg-deb -f "$dev" Depends)"
fi
dpkg-deb -e "$lib" "$tmp/lib-control"
grep -qx "libfleet $soversion libfleet$soversion (>= $version)" \
  "$tmp/lib-control/shlibs" ||
  fail "libfleet$soversion's shlibs file: $(cat "$tmp/lib-control/shlibs")"
grep -qx "activate-noawait ldconfig" "$tmp/lib-control/triggers" ||
  fail "libfleet$soversion has no ldconfig trigger"

# Lintian: no error and no warning (the overrides are in the packages).
command -v lintian >/dev/null 2>&1 ||
  fail "lintian is not installed (scripts/deps.sh test installs it)"
lintian --fail-on error,warning "$lib" "$dev" "$tools" >"$tmp/lintian.log" 2>&1 ||
  { grep -v "root privileges" "$tmp/lintian.log" >&2; fail "lintian complains"; }

# Contents: each file in its package.
contains() {
  # (grep reads all: one that stops early makes dpkg-deb report a
  # broken pipe.)
  dpkg-deb -c "$1" | awk '{print $6}' | grep -x "./usr/$2" >/dev/null ||
    fail "$(basename "$1") does not hold /usr/$2"
}
contains "$lib" "$libdir/libfleet.so.$soversion"
contains "$lib" "$libdir/libfleet.so.$upstream"
contains "$dev" "$libdir/libfleet.so"
contains "$dev" "$libdir/libfleet.a"
contains "$dev" "include/fleet.h"
contains "$dev" "include/fleet/client.h"
contains "$dev" "$libdir/pkgconfig/fleet.pc"
contains "$dev" "$libdir/cmake/fleet/fleetConfig.cmake"
contains "$dev" "share/man/man3/fleet.3.gz"
contains "$dev" "share/man/man3/fleet_queue.3.gz"
contains "$dev" "share/man/man3/fleet_queue_enqueue.3.gz"
contains "$dev" "share/fleet/lua/queue_enqueue.lua"
contains "$dev" "share/fleet/lua/queue_claim.lua"
contains "$tools" "bin/fleet-demo"
contains "$tools" "share/man/man1/fleet-demo.1.gz"
if dpkg-deb -c "$tools" | awk '{print $6}' | grep -x './usr/bin/fleet' >/dev/null; then
  contains "$tools" "share/man/man1/fleet.1.gz"
fi
for f in "$lib" "$dev" "$tools"; do
  p=$(dpkg-deb -f "$f" Package)
  contains "$f" "share/doc/$p/copyright"
  contains "$f" "share/doc/$p/changelog.Debian.gz"
done
if dpkg-deb -c "$lib" | awk '{print $6}' | grep '\.h$\|\.a$\|bin/' >/dev/null; then
  fail "libfleet$soversion holds more than the shared library"
fi

# apt can install the three together (simulated: nothing changes).
if command -v apt-get >/dev/null 2>&1; then
  apt-get -s -qq install "$lib" "$dev" "$tools" >"$tmp/apt.log" 2>&1 ||
    { cat "$tmp/apt.log" >&2; fail "apt-get -s install refused the packages"; }
fi

# The scratch root.
root="$tmp/root"
for f in "$lib" "$dev" "$tools"; do dpkg -x "$f" "$root"; done
rlib="$root/usr/$libdir"
# fleet.pc, as installed: plain paths under /usr (no "pkgconfig/../..").
pc="$rlib/pkgconfig/fleet.pc"
grep -qx 'prefix=/usr' "$pc" || fail "fleet.pc: $(grep '^prefix=' "$pc")"
grep -qx "libdir=\${prefix}/$libdir" "$pc" ||
  fail "fleet.pc: $(grep '^libdir=' "$pc")"
grep -qx 'includedir=${prefix}/include' "$pc" ||
  fail "fleet.pc: $(grep '^includedir=' "$pc")"
grep -qx "Version: $upstream" "$pc" || fail "fleet.pc: $(grep '^Version' "$pc")"
! grep -q '\.\.' "$pc" || fail "fleet.pc holds a relative path"
# Against the scratch root: prefix moved there.
export PKG_CONFIG_PATH="$rlib/pkgconfig"
pc() { pkg-config --define-variable=prefix="$root/usr" "$@"; }
pc --print-requires fleet | grep -qx 'libuv >= 1.44' ||
  fail "fleet.pc does not require libuv >= 1.44"
cflags=$(pc --cflags fleet)
libs=$(pc --libs fleet)
case "$cflags $libs" in
*hiredis* | *lua*) fail "pkg-config leaks hiredis or Lua: $cflags $libs" ;;
esac
inc=$(pc --variable=includedir fleet)
[ "$(cd "$inc" && pwd -P)" = "$(cd "$root/usr/include" && pwd -P)" ] ||
  fail "fleet.pc's includedir is not the scratch root's: $inc"
# Shared: the program must load the packaged library.
# shellcheck disable=SC2086
cc "$here/consumer.c" $cflags $libs -o "$tmp/consumer"
LD_LIBRARY_PATH="$rlib" ldd "$tmp/consumer" |
  grep -q "$rlib/libfleet.so.$soversion" ||
  fail "the consumer does not load the packaged libfleet.so.$soversion"
out=$(LD_LIBRARY_PATH="$rlib" "$tmp/consumer") || fail "the consumer failed"
case "$out" in
*"fleet $upstream") ;;
*) fail "the packaged library is not fleet $upstream: $out" ;;
esac
# Static: libfleet.a with the libraries Libs.private names.
# shellcheck disable=SC2046
cc "$here/consumer.c" $cflags -o "$tmp/consumer-static" \
  -L"$rlib" -Wl,-Bstatic -lfleet -Wl,-Bdynamic \
  $(pc --libs --static fleet | tr ' ' '\n' | grep -v '^-lfleet$' |
    grep -v "^-L")
"$tmp/consumer-static"

# Without hiredis's and Lua's .pc files (only libuv's and the scratch
# root's are visible), pkg-config and find_package(fleet) still serve a
# program linked with the shared library.
mkdir "$tmp/pc-uv-only"
cp "$(pkg-config --variable=pcfiledir libuv)/libuv.pc" "$tmp/pc-uv-only/"
(
  export PKG_CONFIG_LIBDIR="$tmp/pc-uv-only:$rlib/pkgconfig"
  unset PKG_CONFIG_PATH
  pkg-config --exists hiredis && fail "hiredis.pc still visible"
  # shellcheck disable=SC2046
  cc "$here/consumer.c" $(pc --cflags --libs fleet) \
    -o "$tmp/consumer-uv-only" || fail "pkg-config without hiredis.pc failed"
  cmake -S "$here/shared" -B "$tmp/cmake-shared" \
    -DCMAKE_PREFIX_PATH="$root/usr" >"$tmp/cmake-shared.log" 2>&1 ||
    { cat "$tmp/cmake-shared.log" >&2; fail "find_package(fleet) without hiredis.pc failed"; }
  cmake --build "$tmp/cmake-shared" >/dev/null
  LD_LIBRARY_PATH="$rlib" "$tmp/cmake-shared/consumer_shared"
)

# The installed programs and man pages.
"$root/usr/bin/fleet-demo" run --jobs 20 --concurrency 2 --work-ms 0 \
  >"$tmp/demo.out" || fail "the installed fleet-demo failed"
if [ -x "$root/usr/bin/fleet" ]; then
  "$root/usr/bin/fleet" --help >/dev/null 2>&1 ||
    fail "the installed fleet --help failed"
fi
if command -v groff >/dev/null 2>&1; then
  for page in "$root"/usr/share/man/man*/*; do
    # A page of one function sources its header's page, which the
    # package must hold.
    so=$(gzip -dc "$page" | sed -n '1s/^\.so //p')
    if [ -n "$so" ]; then
      [ -f "$root/usr/share/man/$so.gz" ] ||
        fail "$(basename "$page") sources $so, which is not installed"
      continue
    fi
    warn=$(gzip -dc "$page" | groff -ww -z -man 2>&1)
    [ -z "$warn" ] || fail "groff warns on $(basename "$page"): $warn"
  done
fi
echo "deb check: $(basename "$lib") $(basename "$dev") $(basename "$tools"):" \
  "built, contents and dependencies checked, unpacked with dpkg -x, linked" \
  "(pkg-config, shared and static) and ran"
