#!/bin/sh
# Installs the Debian packages that opprof needs to build and test.
# As root it installs what is missing; otherwise it prints the command to run.
# Optional peers for benchmarks (never needed by `make test`): run with --bench;
# what .ci/run adds (valgrind, Chromium for the report's browser test): --ci.
set -eu

packages="cmake make gcc g++ binutils man-db python3 pkg-config libelf-dev libunwind-dev libopenblas-dev libxsmm-dev libyajl-dev zlib1g-dev openmpi-bin libopenmpi-dev protobuf-compiler"
case "${1:-}" in
  --bench) packages="$packages python3 python3-torch libtorch-dev libopenblas0-pthread g++ libsimdjson-dev uftrace heaptrack" ;;
  --fuzz) packages="$packages clang libclang-rt-14-dev" ;;
  --ci) packages="$packages valgrind chromium clang libclang-rt-14-dev" ;;
esac

missing=""
for p in $packages; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
  esac
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  echo "deps: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "deps: missing Debian packages:$missing" >&2
  echo "deps: install them with: sudo apt-get install$missing" >&2
  exit 1
fi
