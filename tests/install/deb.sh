#!/bin/sh
# deb.sh BUILD_DIR -- builds the Debian packages of BUILD_DIR with
# `cpack -G DEB`, checks their names, dependencies and contents, unpacks
# them with `dpkg -x` into a scratch root (a real `apt install` needs root
# and would change the machine; `apt-get -s install ./*.deb` checks instead
# that apt can resolve their dependencies), then, against that root only:
# compiles and links a program with pkg-config, shared and static, and runs
# it on the memory backend; does the same for the shared library with
# pkg-config and find_package(fleet) where hiredis's and Lua's .pc files
# are hidden; runs the installed fleet-demo; renders the man
# pages with groff warnings on. Called by check.sh; skipped (exit 0) where
# cpack or dpkg-deb is missing.
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
lib=$(deb libfleet0)
dev=$(deb libfleet-dev)
tools=$(deb fleet-tools)

# Dependencies: the library needs libuv >= 1.44 and its run-time libraries;
# the -dev package pins the library's exact version.
version=$(dpkg-deb -f "$lib" Version)
depends_has() {
  dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//' | grep -qx "$2" ||
    fail "$(basename "$1"): Depends lacks '$2': $(dpkg-deb -f "$1" Depends)"
}
depends_has "$lib" "libuv1 (>= 1.44)"
depends_has "$lib" "libhiredis0.14 (>= 0.14.0)"
depends_has "$dev" "libfleet0 (= $version)"
depends_has "$dev" "libuv1-dev (>= 1.44)"
if dpkg-deb -f "$dev" Depends | grep -q hiredis; then
  fail "libfleet-dev requires hiredis: $(dpkg-deb -f "$dev" Depends)"
fi
dpkg-deb -e "$lib" "$tmp/lib-control"
[ -f "$tmp/lib-control/shlibs" ] || fail "libfleet0 has no shlibs file"

# Contents: each file in its package.
contains() {
  # (grep reads all: one that stops early makes dpkg-deb report a
  # broken pipe.)
  dpkg-deb -c "$1" | awk '{print $6}' | grep -x "./usr/$2" >/dev/null ||
    fail "$(basename "$1") does not hold /usr/$2"
}
contains "$lib" "lib/libfleet.so.0"
contains "$dev" "lib/libfleet.so"
contains "$dev" "lib/libfleet.a"
contains "$dev" "include/fleet.h"
contains "$dev" "include/fleet/client.h"
contains "$dev" "lib/pkgconfig/fleet.pc"
contains "$dev" "lib/cmake/fleet/fleetConfig.cmake"
contains "$dev" "share/man/man3/fleet.3"
contains "$dev" "share/fleet/lua/queue_enqueue.lua"
contains "$dev" "share/fleet/lua/queue_claim.lua"
contains "$tools" "bin/fleet-demo"
contains "$tools" "share/man/man1/fleet-demo.1"
if dpkg-deb -c "$tools" | grep '\./usr/bin/fleet$' >/dev/null; then
  contains "$tools" "share/man/man1/fleet.1"
fi
if dpkg-deb -c "$lib" | awk '{print $6}' |
  grep '\.h$\|\.a$\|bin/' >/dev/null; then
  fail "libfleet0 holds more than the shared library"
fi

# apt can install the three together (simulated: nothing changes).
if command -v apt-get >/dev/null 2>&1; then
  apt-get -s -qq install "$lib" "$dev" "$tools" >"$tmp/apt.log" 2>&1 ||
    { cat "$tmp/apt.log" >&2; fail "apt-get -s install refused the packages"; }
fi

# The scratch root.
root="$tmp/root"
for f in "$lib" "$dev" "$tools"; do dpkg -x "$f" "$root"; done
export PKG_CONFIG_PATH="$root/usr/lib/pkgconfig"
pkg-config --print-requires fleet | grep -qx 'libuv >= 1.44' ||
  fail "fleet.pc does not require libuv >= 1.44"
cflags=$(pkg-config --cflags fleet)
libs=$(pkg-config --libs fleet)
case "$cflags $libs" in
*hiredis* | *lua*) fail "pkg-config leaks hiredis or Lua: $cflags $libs" ;;
esac
inc=$(pkg-config --variable=includedir fleet)
[ "$(cd "$inc" && pwd -P)" = "$(cd "$root/usr/include" && pwd -P)" ] ||
  fail "fleet.pc's includedir is not the scratch root's: $inc"
# Shared: the program must load the packaged library.
# shellcheck disable=SC2086
cc "$here/consumer.c" $cflags $libs -o "$tmp/consumer"
LD_LIBRARY_PATH="$root/usr/lib" ldd "$tmp/consumer" |
  grep -q "$root/usr/lib/libfleet.so.0" ||
  fail "the consumer does not load the packaged libfleet.so.0"
LD_LIBRARY_PATH="$root/usr/lib" "$tmp/consumer"
# Static: libfleet.a with the libraries Libs.private names.
# shellcheck disable=SC2046
cc "$here/consumer.c" $cflags -o "$tmp/consumer-static" \
  -L"$root/usr/lib" -Wl,-Bstatic -lfleet -Wl,-Bdynamic \
  $(pkg-config --libs --static fleet | tr ' ' '\n' | grep -v '^-lfleet$' |
    grep -v "^-L")
"$tmp/consumer-static"

# Without hiredis's and Lua's .pc files (only libuv's and the scratch
# root's are visible), pkg-config and find_package(fleet) still serve a
# program linked with the shared library.
mkdir "$tmp/pc-uv-only"
cp "$(pkg-config --variable=pcfiledir libuv)/libuv.pc" "$tmp/pc-uv-only/"
(
  export PKG_CONFIG_LIBDIR="$tmp/pc-uv-only:$root/usr/lib/pkgconfig"
  unset PKG_CONFIG_PATH
  pkg-config --exists hiredis && fail "hiredis.pc still visible"
  # shellcheck disable=SC2046
  cc "$here/consumer.c" $(pkg-config --cflags --libs fleet) \
    -o "$tmp/consumer-uv-only" || fail "pkg-config without hiredis.pc failed"
  cmake -S "$here/shared" -B "$tmp/cmake-shared" \
    -DCMAKE_PREFIX_PATH="$root/usr" >"$tmp/cmake-shared.log" 2>&1 ||
    { cat "$tmp/cmake-shared.log" >&2; fail "find_package(fleet) without hiredis.pc failed"; }
  cmake --build "$tmp/cmake-shared" >/dev/null
  LD_LIBRARY_PATH="$root/usr/lib" "$tmp/cmake-shared/consumer_shared"
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
    warn=$(groff -ww -z -man "$page" 2>&1)
    [ -z "$warn" ] || fail "groff warns on $(basename "$page"): $warn"
  done
fi
echo "deb check: $(basename "$lib") $(basename "$dev") $(basename "$tools"):" \
  "built, contents and dependencies checked, unpacked with dpkg -x, linked" \
  "(pkg-config, shared and static) and ran"
