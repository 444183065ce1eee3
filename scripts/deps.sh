# deps.sh -- sourced by setup.sh and test.sh: installs, with apt, the Debian
# 12 packages fleet needs that are not installed yet.
# With the argument "test", also what only the test suite needs: the cron
# oracle (python3-croniter), the openssl command that makes the TLS tests'
# CA, redis-sentinel, chromium for the dashboard test, and dpkg-dev
# (dpkg-shlibdeps) and lintian for the package check of
# tests/install/deb.sh, and prometheus for promtool, which checks the text
# of `fleet metrics` (tests/test_cli_metrics.c). With
# "valkey", valkey-server from Debian's bookworm-backports (the apt source
# is added when missing). With "hiredis1" DIR, the hiredis 1.x API (see
# fleet_install_hiredis1 below).
fleet_install_deps() {
  if [ "${1:-}" = "valkey" ]; then
    fleet_install_valkey
    return
  fi
  if [ "${1:-}" = "hiredis1" ]; then
    fleet_install_hiredis1 "$2"
    return
  fi
  # LuaJIT is optional (the memory backend runs faster with it; the build
  # falls back to Lua 5.1 without it), but installed here by default.
  pkgs="cmake make gcc pkg-config libuv1-dev libhiredis-dev liblua5.1-0-dev
    libluajit-5.1-dev libssl-dev libhttp-parser-dev redis-server"
  if [ "${1:-}" = "test" ]; then
    pkgs="$pkgs python3-croniter openssl redis-sentinel chromium dpkg-dev
      lintian prometheus"
  fi
  missing=""
  for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
      missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  echo "installing:$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

# Adds Debian's bookworm-backports apt source when missing, and updates.
fleet_apt_backports() {
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" |
      $sudo tee /etc/apt/sources.list.d/fleet-bookworm-backports.list >/dev/null
  fi
  $sudo apt-get update -qq
}

fleet_install_valkey() {
  command -v valkey-server >/dev/null 2>&1 && return 0
  fleet_apt_backports
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    -t bookworm-backports valkey-server
}

# Debian 12 ships hiredis 0.14 only; its backports have Redict's fork of
# hiredis 1.x, hiredict 1.3, whose "shims" package gives it hiredis's
# header names, API and pkg-config name. Those packages would replace
# libhiredis-dev's headers, so they are not installed: they are unpacked
# into DIR/root, and DIR/pc/hiredis.pc points a build at them (with an
# rpath to their library). (Its variables start with h1: this file is
# sourced, and sh has no local variables.)
fleet_install_hiredis1() {
  h1=$1
  [ -f "$h1/pc/hiredis.pc" ] && return 0
  fleet_apt_backports
  rm -rf "$h1/debs" "$h1/root"
  mkdir -p "$h1/debs" "$h1/root" "$h1/pc"
  h1_lib=$(apt-cache depends libhiredict-dev |
    awk '/Depends: libhiredict[0-9]/ {print $2; exit}')
  [ -n "$h1_lib" ] || { echo "no libhiredict runtime package" >&2; return 1; }
  (cd "$h1/debs" && apt-get download -qq -t bookworm-backports \
    libhiredict-shims-dev libhiredict-dev "$h1_lib") || return 1
  for h1_deb in "$h1"/debs/*.deb; do dpkg-deb -x "$h1_deb" "$h1/root"; done
  h1_root=$(cd "$h1/root" && pwd)
  h1_libdir=$(dirname "$(ls "$h1_root"/usr/lib/*/libhiredict.so | head -n 1)")
  h1_version=$(sed -n 's/^Version: *//p' \
    "$(ls "$h1_root"/usr/lib/*/pkgconfig/hiredis.pc | head -n 1)")
  cat >"$h1/pc/hiredis.pc" <<EOF
Name: hiredis
Description: hiredict's hiredis shims, unpacked by scripts/deps.sh
Version: $h1_version
Libs: -L$h1_libdir -lhiredict -Wl,-rpath,$h1_libdir
Cflags: -I$h1_root/usr/include/hiredis -I$h1_root/usr/include
EOF
}
