#!/bin/sh
# Installs ONNX Runtime for Node.js (npm's onnxruntime-node, Microsoft's own
# build: libonnxruntime.so is in the package) into OPPROF_ORT_PREFIX
# (/opt/opprof-ort), for test_onnxruntime, which has ONNX Runtime write the
# profiles it checks. --ignore-scripts: the package's install script fetches
# CUDA libraries from outside npm's registry, which the CPU provider does not
# need. Done once: a stamp names the version. Quiet unless it installs.
set -eu
prefix=${OPPROF_ORT_PREFIX:-/opt/opprof-ort}
package=onnxruntime-node@1.30.0
stamp="$prefix/opprof-ort.stamp"
[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$package" ] && exit 0
command -v npm > /dev/null || { echo "ort: 'npm' is missing (scripts/deps.sh installs it)" >&2; exit 1; }
echo "ort: installing $package into $prefix (once)"
mkdir -p "$prefix"
(cd "$prefix" && npm install --silent --ignore-scripts --no-audit --no-fund "$package" > /dev/null) ||
  { echo "ort: npm could not install $package" >&2; exit 1; }
echo "$package" > "$stamp"
