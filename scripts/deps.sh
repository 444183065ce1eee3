# deps.sh -- sourced by setup.sh and test.sh: installs, with apt, the Debian
# 12 packages fleet needs that are not installed yet.
fleet_install_deps() {
  pkgs="cmake make gcc pkg-config libuv1-dev libhiredis-dev liblua5.1-0-dev redis-server
    libhttp-parser-dev python3-croniter dpkg-dev"
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
