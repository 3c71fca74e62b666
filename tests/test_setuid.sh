#!/bin/sh
# test_setuid.sh BUILD: a setuid-root program linked with opprof ignores
# OPPROF_TRACE (and every OPPROF_ variable) from an unprivileged caller: run as
# nobody with umask 000, it creates nothing where the caller points it, while
# the same program without the bit does. And `opprof record` of a setuid
# program says why it records nothing. Needs root to make a file setuid: run
# otherwise, it exits 77, which CTest reports as skipped (never as passed).
set -u
build=$1
if [ "$(id -u)" -ne 0 ]; then echo "test_setuid: needs root to make a setuid program (skipped)"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir "$tmp/theirs" && chown nobody "$tmp/theirs"
cp "$build/tests/setuid_target" "$tmp/plain"
cp "$build/tests/setuid_target" "$tmp/suid" && chown root "$tmp/suid" && chmod 4755 "$tmp/suid"
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "umask 000; $1"; }

as_nobody "OPPROF_TRACE='$tmp/theirs/plain' '$tmp/plain' steps 2" >"$tmp/plain.log" 2>&1
check "the program without the bit is profiled" "[ -d '$tmp/theirs/plain' ]"
as_nobody "OPPROF_TRACE='$tmp/theirs/suid' '$tmp/suid' steps 2" >"$tmp/suid.log" 2>&1
status=$?
check "the setuid program ran" "[ $status -eq 0 ]"
check "the setuid program ignores OPPROF_TRACE" "[ ! -e '$tmp/theirs/suid' ] && ! ls '$tmp/theirs' | grep -q suid"
as_nobody "OPPROF_TRACE='$tmp/theirs/suid2' OPPROF_SCHEDULE=bogus '$tmp/suid' steps 1" >"$tmp/suid2.log" 2>&1
check "and says nothing of OPPROF_ variables" "! grep -q opprof '$tmp/suid2.log'"
# a program setuid to another user (nobody's, run by root): AT_SECURE for it too
cp "$build/tests/setuid_target" "$tmp/suid_nobody" && chown nobody "$tmp/suid_nobody" && chmod 4755 "$tmp/suid_nobody"
"$build/bin/opprof" record -o "$tmp/rec" -- "$tmp/suid_nobody" steps 1 >"$tmp/rec.log" 2>&1
check "opprof record says why a setuid program records nothing" "grep -q 'is setuid or setgid' '$tmp/rec.log' && [ ! -e '$tmp/rec' ]"
"$build/bin/opprof" record -o "$tmp/rec2" -- "$tmp/suid" steps 1 >"$tmp/rec2.log" 2>&1
check "and nothing when it runs as its caller (root's, run by root)" "! grep -q 'is setuid' '$tmp/rec2.log' && [ -d '$tmp/rec2' ]"
echo "$((6 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
