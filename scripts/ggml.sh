#!/bin/sh
# Builds a real ggml (its CPU backend, shared libraries) with opprof's hook
# (src/ggml/ggml-cpu-hook.patch) into OPPROF_GGML_PREFIX (/opt/opprof-ggml),
# for the ggml adapter's test and bench. The source is llama.cpp's ggml tree
# as the npm package @novastera-oss/llamarn ships it (MIT; the only package of
# Debian's or npm's registries that carries ggml whole and unrenamed); npm
# checks the archive's sha512 against the registry's. Done once: a stamp
# names the package and the patch's hash. Quiet unless it builds. The tree
# of llama.cpp it comes from is kept, unpatched, in $prefix/src/llama.cpp,
# for the README's llama.cpp recipe (which patches and builds a copy).
set -eu
prefix=${OPPROF_GGML_PREFIX:-/opt/opprof-ggml}
package=@novastera-oss/llamarn@0.10.5
root=$(cd "$(dirname "$0")/.." && pwd)
patch_file="$root/src/ggml/ggml-cpu-hook.patch"
want="$package $(sha256sum < "$patch_file" | cut -c1-16) with its tree"
stamp="$prefix/opprof-ggml.stamp"
[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && exit 0

for tool in npm cmake c++ patch; do
  command -v "$tool" > /dev/null || { echo "ggml: '$tool' is missing (scripts/deps.sh installs it)" >&2; exit 1; }
done
echo "ggml: building $package's ggml with opprof's CPU hook into $prefix (once, about a minute)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$package" > /dev/null) || { echo "ggml: npm could not fetch $package" >&2; exit 1; }
tar xzf "$tmp"/*.tgz -C "$tmp" --exclude='package/cpp/llama.cpp/tools/ui' package/cpp/llama.cpp
src="$tmp/package/cpp/llama.cpp/ggml"
# The package leaves out ggml's pkg-config template, which ggml's CMake reads.
[ -f "$src/ggml.pc.in" ] || printf '%s\n' 'prefix=@CMAKE_INSTALL_PREFIX@' 'libdir=${prefix}/lib' \
  'includedir=${prefix}/include' '' 'Name: ggml' 'Description: ggml' 'Version: @GGML_VERSION@' \
  'Libs: -L${libdir} -lggml -lggml-base' 'Cflags: -I${includedir}' > "$src/ggml.pc.in"
rm -rf "$prefix/src/llama.cpp" && mkdir -p "$prefix/src"
cp -a "$tmp/package/cpp/llama.cpp" "$prefix/src/llama.cpp"
patch -s -d "$src" -p1 < "$patch_file"
cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=ON -DGGML_NATIVE=ON -DGGML_OPENMP=OFF -DGGML_CCACHE=OFF \
  -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF > "$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/build" -j2 > "$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log" >&2; exit 1; }
cmake --install "$tmp/build" > /dev/null
mkdir -p "$prefix/share/doc/ggml"
cp "$tmp/package/cpp/llama.cpp/LICENSE" "$prefix/share/doc/ggml/LICENSE"
echo "$want" > "$stamp"
