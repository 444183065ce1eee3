# deps.sh -- sourced by setup.sh and test.sh: installs, with apt, the Debian
# 12 packages fleet needs that are not installed yet.
# With the argument "test", also what only the test suite needs: the cron
# oracle (python3-croniter), the openssl command that makes the TLS tests'
# CA, redis-sentinel, chromium for the dashboard test, and dpkg-dev
# (dpkg-shlibdeps) for the package check of tests/install/deb.sh. With
# "valkey", valkey-server from Debian's bookworm-backports (the apt source
# is added when missing).
fleet_install_deps() {
  if [ "${1:-}" = "valkey" ]; then
    fleet_install_valkey
    return
  fi
  pkgs="cmake make gcc pkg-config libuv1-dev libhiredis-dev liblua5.1-0-dev
    libssl-dev libhttp-parser-dev redis-server"
  if [ "${1:-}" = "test" ]; then
    pkgs="$pkgs python3-croniter openssl redis-sentinel chromium dpkg-dev"
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

fleet_install_valkey() {
  command -v valkey-server >/dev/null 2>&1 && return 0
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" |
      $sudo tee /etc/apt/sources.list.d/fleet-bookworm-backports.list >/dev/null
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    -t bookworm-backports valkey-server
}
