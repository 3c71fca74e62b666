#!/bin/sh
# test_install: `cmake --install` into a fresh prefix, then a program built
# with `pkg-config --cflags --libs opprof` against it, and run.
set -eu
build="$1"
src="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc=$(find "$tmp/prefix" -name opprof.pc)
test -n "$pc"
export PKG_CONFIG_PATH="$(dirname "$pc")"
cat > "$tmp/use.c" <<'C'
#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    nn_tensor *t;
    if (nn_tensor_zeros(&t, 1, (int64_t[]){3}) != 0) return 1;
    nn_tensor_free(t);
    puts(opprof_version());
    return strcmp(opprof_version(), OPPROF_VERSION_STRING) != 0;
}
C
cc "$tmp/use.c" $(pkg-config --cflags --libs opprof) -o "$tmp/use"
LD_LIBRARY_PATH="$(pkg-config --variable=libdir opprof)" "$tmp/use"
test -x "$tmp/prefix/bin/opprof"
test -x "$tmp/prefix/bin/profile_cpu"
echo "test_install: 1 passed, 0 failed"
