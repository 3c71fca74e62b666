#!/bin/sh
# Installs the Debian packages that opprof needs to build and test.
# As root it installs what is missing; otherwise it prints the command to run.
# Optional peers for benchmarks (never needed by `make test`): run with --bench;
# what .ci/run adds (valgrind, Chromium for the report's browser test, Node.js
# and npm for speedscope's): --ci. Then, as root, scripts/ggml.sh builds the
# ggml that the ggml adapter is tested against and scripts/ort.sh installs the
# ONNX Runtime that writes test_onnxruntime's profiles (npm's registry, once).
# ccache: llama.cpp's CMake compiles through it when it is there, so that the
# README's llama.cpp recipe builds llama.cpp once per machine, not per clone.
set -eu

packages="cmake make gcc g++ binutils man-db python3 pkg-config libelf-dev libdw-dev libopenblas-dev libxsmm-dev libyajl-dev libsqlite3-dev zlib1g-dev libiberty-dev procps openmpi-bin libopenmpi-dev protobuf-compiler patch python3-onnx xz-utils ccache locales"
case "${1:-}" in
  --bench) packages="$packages python3 python3-torch libtorch-dev libopenblas0-pthread g++ libsimdjson-dev uftrace heaptrack libunwind-dev likwid" ;;
  --fuzz) packages="$packages clang libclang-rt-14-dev" ;;
  --ci) packages="$packages valgrind chromium clang libclang-rt-14-dev nodejs" ;;
esac

missing=""
for p in $packages; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
  esac
done

# Debian's npm is a package of its own; NodeSource's nodejs carries it (and
# conflicts with Debian's): asked for only where there is no npm.
if ! command -v npm > /dev/null; then missing="$missing npm"; fi

ggml() { if [ "$(id -u)" -eq 0 ]; then sh "$(dirname "$0")/ggml.sh" && sh "$(dirname "$0")/ort.sh"; fi; }
[ -z "$missing" ] && { ggml; exit 0; }

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
ggml
