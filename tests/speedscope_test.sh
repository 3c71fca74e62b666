#!/bin/sh
# speedscope_test.sh - a sampled capture's Chrome trace, imported by
# speedscope (npm's speedscope 1.25.0, driven in Debian's headless Chromium
# by playwright-core): it loads without an error or a dialog, speedscope
# finds one profile per sampled thread (Chrome's "Profile"/"ProfileChunk"
# events: trace/chrome_profile.c), and its Sandwich view names the operators
# above the native frames and nn's GEMM kernel among them. Run by .ci/run
# (chromium, nodejs from scripts/deps.sh --ci; the npm registry reachable).
#
#   sh tests/speedscope_test.sh [BUILD_DIR]
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "speedscope_test: $*" >&2; exit 1; }
command -v chromium > /dev/null || fail "chromium is not installed (sh scripts/deps.sh --ci)"
command -v npm > /dev/null || fail "npm is not installed (sh scripts/deps.sh --ci)"

(cd "$tmp" && npm install --no-save --silent --no-audit --no-fund speedscope@1.25.0 playwright-core@1.64.1 > npm.log 2>&1) ||
    { cat "$tmp/npm.log" >&2; fail "npm could not install speedscope and playwright-core"; }
cp "$here/speedscope_check.mjs" "$tmp/"

# OpenBLAS's own workers (nn links it) spin in sched_yield as the library
# loads, and one is sampled in some runs; in one CI run speedscope opened that
# worker's profile (sched_yield only) first. One thread of OpenBLAS's: none.
OPENBLAS_NUM_THREADS=1 "$build/bin/profile_cpu" --quiet --sample 1000 --wait 0 --warmup 2 --active 20 --steps 22 "$tmp/run" > /dev/null
trace="$tmp/run/cpu-step-22.json"
[ -f "$trace" ] || fail "profile_cpu wrote no $trace"
python3 - "$trace" "$tmp/profile.js" <<'PY'
import base64, json, sys
data = open(sys.argv[1], 'rb').read()
with open(sys.argv[2], 'w') as out: # what speedscope's own command line hands its page
    out.write('speedscope.loadFileFromBase64(%s, %s)' % (json.dumps('cpu-step-22.json'), json.dumps(base64.b64encode(data).decode())))
PY
(cd "$tmp" && node speedscope_check.mjs "$tmp/node_modules/speedscope/dist/release/index.html" "$tmp/profile.js") > "$tmp/page.json" ||
    fail "speedscope did not load the trace"
python3 - "$tmp/page.json" "$trace" <<'PY' || fail "$(head -c 2000 "$tmp/page.json")"
import json, sys
page = json.load(open(sys.argv[1]))
trace = json.load(open(sys.argv[2]))
profiles = [e for e in trace['traceEvents'] if e.get('name') == 'Profile']
assert not page['errors'], 'page errors: %s' % page['errors']
assert page['title'] == 'cpu-step-22.json - speedscope', page['title']
text = page['text']
assert len(profiles) >= 1, 'the trace has no Profile event'
if len(profiles) > 1:
    assert '(1/%d)' % len(profiles) in text, 'speedscope does not show %d profiles' % len(profiles)
for name in ('ProfilerStep#', 'forward', 'aten::addmm', 'nn__sgemm'):
    assert name in text, 'the Sandwich view has no %s' % name
print('speedscope_test: %d profiles, the Sandwich view names aten::addmm and nn__sgemm' % len(profiles))
PY
