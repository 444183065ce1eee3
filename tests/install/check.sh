#!/bin/sh
# check.sh BUILD_DIR -- installs the build into a scratch prefix, then builds
# and runs a consumer with find_package(fleet) and with pkg-config.
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$here" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/cmake/consumer_shared"
"$tmp/cmake/consumer_static"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc "$here/consumer.c" $(pkg-config --cflags --libs fleet) -o "$tmp/pc"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/pc"
echo "install check: find_package(fleet) and pkg-config consumers ran"
