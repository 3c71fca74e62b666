#!/bin/sh
# test_layers.sh SOURCE_DIR: scripts/check_layers.py passes on the tree and
# fails, naming the file, the line and the rule, on copies with one include
# that breaks a rule: upward, sideways (record/ and trace/), a lower layer's
# inner header, and a private header from outside src/opprof.
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # NAME EXPECTED_STATUS EXPECTED_TEXT TREE
    out=$(python3 "$src/scripts/check_layers.py" "$4" 2>&1)
    status=$?
    if [ "$status" -ne "$2" ] || ! printf '%s\n' "$out" | grep -qF -- "$3"; then
        echo "FAIL $1: status $status (expected $2), output:"; printf '%s\n' "$out"
        fails=$((fails + 1))
    else
        echo "ok   $1"
    fi
}
copy() { # a tree of what the script reads
    rm -rf "$tmp/t"; mkdir -p "$tmp/t/src"
    cp -r "$src/src/opprof" "$src/src/nn" "$src/src/mpi" "$src/src/preload" "$tmp/t/src/"
    mkdir -p "$tmp/t/tools" "$tmp/t/examples" "$tmp/t/bench" "$tmp/t/tests"
    cp -r "$src/tools/." "$tmp/t/tools/"
}
copy
check "the tree" 0 "every include follows the layers" "$tmp/t"
printf '#include "render/render.h"\n' >>"$tmp/t/src/opprof/base/strbuf.c"
check "upward include" 1 "src/opprof/base/strbuf.c:$(wc -l <"$tmp/t/src/opprof/base/strbuf.c"): base/ includes \"render/render.h\" of render/, a layer above it" "$tmp/t"
copy
printf '#include "trace/trace.h"\n' >>"$tmp/t/src/opprof/record/session.c"
check "include beside" 1 "record/ includes \"trace/trace.h\" of trace/, a layer beside it" "$tmp/t"
copy
printf '#include "record/recorder_state.h"\n' >>"$tmp/t/src/opprof/analysis/timer.c"
check "inner header" 1 "of a lower layer, only record/record.h" "$tmp/t"
copy
printf '#include "base/base.h"\n' >>"$tmp/t/tools/opprof/main.c"
check "from outside" 1 "tools/opprof/main.c" "$tmp/t"
echo "$((5 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
