#!/bin/sh
# setup.sh -- installs what is missing (Debian 12), builds fleet into build/
# and runs the demo on the in-process memory backend.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
fleet_install_deps
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$(nproc)"
build/examples/fleet-demo run --jobs 20000 --concurrency 50 --work-ms 1
