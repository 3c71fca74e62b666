#!/bin/sh
# test_install: what a project that adopts opprof meets. `cmake --install`
# into a fresh prefix outside /usr, then:
#   - the installed tools run with no LD_LIBRARY_PATH (RUNPATH $ORIGIN/../lib);
#   - opprof.pc is the profiler alone (no nn, no BLAS); nn.pc the runtime;
#     nn_mpi.pc the runtime across MPI ranks;
#   - a C program built with pkg-config, shared and static, runs;
#   - a C++17 CMake project with find_package(opprof CONFIG) builds under
#     -Wall -Wextra -pedantic -Werror against opprof::opprof, opprof::nn and
#     opprof::opprof_static, and runs; C-only, C++-only and mixed projects,
#     with and without MPI on the machine; nn_mpi as a component;
#   - the README's pkg-config line as written;
#   - the shared libraries export only opprof_* and nn_* symbols;
#   - every public header compiles alone as C11 -pedantic and C++17 -pedantic;
#   - the removed block form OPPROF_RANGE(...) { } fails to compile, saying why;
#   - man -l opens opprof(1) and profile_cpu(1).
set -eu
build="$1"
src="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
ok() { passed=$((passed + 1)); }
fail() { echo "test_install: FAILED: $*" >&2; echo "test_install: $passed passed, 1 failed"; exit 1; }

p="$tmp/prefix"
cmake --install "$build" --prefix "$p" >/dev/null
unset LD_LIBRARY_PATH || true
libdir=$(dirname "$(find "$p" -name libopprof.so | head -n 1)")

# -- the tools, from their prefix alone
"$p/bin/opprof" --version | grep -q "^opprof 0\." || fail "opprof --version"; ok
"$p/bin/profile_cpu" --version | grep -q "^profile_cpu (opprof) 0\." || fail "profile_cpu --version"; ok
"$p/bin/profile_cpu" --quiet "$tmp/run" >/dev/null || fail "installed profile_cpu run"; ok
"$p/bin/opprof" report "$tmp/run/cpu-step-4.json" | grep -q "aten::addmm" || fail "installed opprof report"; ok
readelf -d "$p/bin/opprof" | grep -q 'RUNPATH.*\$ORIGIN/\.\./lib' || fail "opprof's RUNPATH"; ok

# -- pkg-config: the profiler alone, and the runtime
export PKG_CONFIG_PATH="$libdir/pkgconfig"
libs=$(pkg-config --libs opprof)
case "$libs" in *-lnn*|*openblas*|*xsmm*) fail "pkg-config --libs opprof names nn or a BLAS: $libs" ;; esac; ok
case "$(pkg-config --libs nn)" in *-lnn*-lopprof*) ;; *) fail "pkg-config --libs nn: $(pkg-config --libs nn)" ;; esac; ok

cat > "$tmp/use.c" <<'C'
#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    opprof_config cfg = opprof_config_default();
    cfg.record_steps = false;
    opprof_session *s;
    if (opprof_session_start(&s, &cfg) != 0) return 1;
    for (int i = 0; i < 3; i++) {
        OPPROF_SCOPE("work_%d", i);
    }
    opprof_session_stop(s);
    opprof_capture *c;
    size_t n = 0;
    if (opprof_session_take_capture(s, &c) != 0 || !c) return 2;
    opprof_capture_events(c, &n);
    opprof_capture_free(c);
    opprof_session_free(s);
    printf("%s %zu\n", opprof_version(), n);
    return strcmp(opprof_version(), OPPROF_VERSION_STRING) != 0 || n != 3;
}
C
cc -std=c11 -Wall -Wextra -Werror "$tmp/use.c" $(pkg-config --cflags --libs opprof) \
    -Wl,-rpath,"$libdir" -o "$tmp/use_shared" || fail "build with pkg-config (shared)"
"$tmp/use_shared" | grep -q " 3$" || fail "run (shared)"; ok
cc -std=c11 "$tmp/use.c" $(pkg-config --cflags opprof) -L"$libdir" -Wl,-Bstatic -lopprof -Wl,-Bdynamic \
    $(pkg-config --static --libs-only-other --libs-only-l opprof | sed 's/-lopprof//') -o "$tmp/use_static" \
    || fail "build with pkg-config (static)"
"$tmp/use_static" | grep -q " 3$" || fail "run (static)"
! ldd "$tmp/use_static" | grep -q libopprof || fail "the static build loads libopprof.so"; ok

cat > "$tmp/nn.c" <<'C'
#include <nn/nn.h>
int main(void) {
    nn_tensor *t;
    if (nn_tensor_zeros(&t, 1, (int64_t[]){3}) != 0) return 1;
    nn_tensor_free(t);
    return 0;
}
C
cc "$tmp/nn.c" $(pkg-config --cflags --libs nn) -Wl,-rpath,"$libdir" -o "$tmp/nn" || fail "build with nn.pc"
"$tmp/nn" || fail "run with nn.pc"; ok

# -- nn_mpi.pc: nn across MPI ranks (Requires: nn, ompi-c)
printf '#include <nn/mpi.h>\nint main(void) { opprof_rank r; return nn_mpi_rank(MPI_COMM_WORLD, 0, &r) == NN_EINVAL ? 0 : 1; }\n' > "$tmp/mpi.c"
cc -std=c11 -Wall -Wextra -Werror "$tmp/mpi.c" $(pkg-config --cflags --libs nn_mpi) -Wl,-rpath,"$libdir" -o "$tmp/mpi" \
    || fail "build with nn_mpi.pc"
"$tmp/mpi" || fail "run with nn_mpi.pc"; ok

# -- opprof-ggml.pc and COMPONENTS ggml: the ggml adapter (when built with it)
if [ -f "$libdir/pkgconfig/opprof-ggml.pc" ]; then
  ggml_prefix=$(sed -n 's/^OPPROF_GGML_PREFIX:PATH=//p' "$build/CMakeCache.txt")
  cat > "$tmp/ggml.c" <<'C'
#include <opprof/ggml.h>
#include <ggml.h>
#include <string.h>
int main(void) {
    struct ggml_init_params ip = {1 << 20, NULL, false};
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);
    struct ggml_tensor *y = ggml_mul_mat(ctx, a, b);
    int rc = opprof_ggml_attach() != 0 || strcmp(opprof_ggml_op_name(y), "ggml::MUL_MAT") || opprof_ggml_flops(y) != 2 * 4 * 3 * 2;
    opprof_ggml_detach();
    ggml_free(ctx);
    return rc;
}
C
  PKG_CONFIG_PATH="$libdir/pkgconfig:$ggml_prefix/lib/pkgconfig" cc -std=c11 -Wall -Werror "$tmp/ggml.c" \
      $(PKG_CONFIG_PATH="$libdir/pkgconfig:$ggml_prefix/lib/pkgconfig" pkg-config --cflags --libs opprof-ggml) \
      -Wl,-rpath,"$libdir" -Wl,-rpath,"$ggml_prefix/lib" -o "$tmp/ggml" || fail "build with opprof-ggml.pc"
  "$tmp/ggml" || fail "run with opprof-ggml.pc"; ok
  mkdir -p "$tmp/cmake-ggml"
  cp "$tmp/ggml.c" "$tmp/cmake-ggml/ggml.c"
  printf '%s\n' 'cmake_minimum_required(VERSION 3.20)' 'project(user_ggml LANGUAGES C CXX)' \
      'find_package(opprof 0.6 CONFIG REQUIRED COMPONENTS ggml)' 'add_executable(user_ggml ggml.c)' \
      'target_link_libraries(user_ggml PRIVATE opprof::ggml)' > "$tmp/cmake-ggml/CMakeLists.txt"
  cmake -S "$tmp/cmake-ggml" -B "$tmp/cmake-ggml/build" -DCMAKE_PREFIX_PATH="$p;$ggml_prefix" >/dev/null \
      || fail "find_package(opprof COMPONENTS ggml)"
  cmake --build "$tmp/cmake-ggml/build" >/dev/null || fail "build against opprof::ggml"
  "$tmp/cmake-ggml/build/user_ggml" || fail "run against opprof::ggml"; ok
fi

# -- a CMake project in C++: find_package(opprof CONFIG), the C++ header
mkdir -p "$tmp/cmake-user"
cat > "$tmp/cmake-user/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(user LANGUAGES CXX C)
find_package(opprof 0.6 CONFIG REQUIRED)
add_executable(user user.cpp)
target_compile_options(user PRIVATE -Wall -Wextra -pedantic -Werror)
set_property(TARGET user PROPERTY CXX_STANDARD 17)
target_link_libraries(user PRIVATE opprof::opprof opprof::nn)
add_executable(user_static user.cpp)
set_property(TARGET user_static PROPERTY CXX_STANDARD 17)
target_link_libraries(user_static PRIVATE opprof::nn_static)
CMAKE
cat > "$tmp/cmake-user/user.cpp" <<'CPP'
#include <nn/nn.h>
#include <opprof/opprof.hpp>
#include <cstdio>
#include <stdexcept>

static int layer(int i) {
    OPPROF_OP_SCOPE("my::layer_%d", i); // the C macro, in C++
    if (i == 1) throw std::runtime_error("layer 1 fails"); // the range still ends
    return i;
}

int main() {
    opprof_config cfg = opprof_config_default();
    cfg.record_steps = false;
    std::size_t events = 0;
    {
        opprof::session s(cfg);
        {
            opprof::scope whole(OPPROF_SRCLOC("whole", OPPROF_KIND_USER_ANNOTATION));
            for (int i = 0; i < 3; i++) {
                try {
                    layer(i);
                } catch (const std::exception &) {
                }
            }
            nn_tensor *t = nullptr;
            const int64_t shape[] = {4};
            if (nn_tensor_zeros(&t, 1, shape) == 0) nn_tensor_free(t); // aten::zeros
        }
        s.stop();
        opprof::capture_ptr c = s.take_capture();
        if (!c) return 2;
        opprof_capture_events(c.get(), &events);
        std::size_t warnings = 0;
        opprof_capture_warnings(c.get(), &warnings);
        if (warnings != 0) return 3;
    }
    try {
        opprof::session bad([] {
            opprof_config c = opprof_config_default();
            c.schedule.wait = 1; // active 0: refused
            return c;
        }());
        return 4;
    } catch (const opprof::error &e) {
        if (e.code() != OPPROF_ESCHEDULE) return 5;
    }
    std::printf("events %zu\n", events);
    return events == 5 ? 0 : 1; // whole, 3 layers, aten::zeros
}
CPP
cmake -S "$tmp/cmake-user" -B "$tmp/cmake-user/build" -DCMAKE_PREFIX_PATH="$p" >"$tmp/cmake.log" 2>&1 \
    || { cat "$tmp/cmake.log" >&2; fail "find_package(opprof CONFIG)"; }
cmake --build "$tmp/cmake-user/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; fail "CMake user build"; }
"$tmp/cmake-user/build/user" | grep -q "events 5" || fail "CMake user (shared) run"
"$tmp/cmake-user/build/user_static" | grep -q "events 5" || fail "CMake user (static) run"
! ldd "$tmp/cmake-user/build/user_static" | grep -q 'libopprof\|libnn' || fail "user_static loads a shared opprof"; ok

# -- CMake consumers of every kind: C only, C++ only, mixed; with MPI on the
#    machine and without it (CMAKE_DISABLE_FIND_PACKAGE_MPI hides it); nn_mpi
#    as a component, and refused with the reason where it cannot be had.
consumer() { # NAME LANGUAGES "COMPONENTS..." SOURCE TARGETS NO_MPI EXPECT(ok|fail:TEXT)
    d="$tmp/consumer-$1"; mkdir -p "$d"; cp "$4" "$d/"
    comps=""; [ -n "$3" ] && comps="COMPONENTS $3"
    cat > "$d/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project($1 LANGUAGES $2)
find_package(opprof 0.6 CONFIG REQUIRED $comps)
add_executable(app $(basename "$4"))
target_link_libraries(app PRIVATE $5)
CMAKE
    flags=""; [ "$6" = no-mpi ] && flags="-DCMAKE_DISABLE_FIND_PACKAGE_MPI=TRUE"
    if cmake -S "$d" -B "$d/build" -DCMAKE_PREFIX_PATH="$p" $flags >"$d/log" 2>&1 && cmake --build "$d/build" >>"$d/log" 2>&1; then
        [ "$7" = ok ] || fail "consumer $1 ($6) configured, expected: $7"
        "$d/build/app" >/dev/null || fail "consumer $1 ($6) run"
    else
        case "$7" in
        fail:*) grep -qF -- "${7#fail:}" "$d/log" || { cat "$d/log" >&2; fail "consumer $1 ($6): no '${7#fail:}'"; } ;;
        *) cat "$d/log" >&2; fail "consumer $1 ($6)" ;;
        esac
    fi
}
cp "$tmp/cmake-user/user.cpp" "$tmp/user.cpp"
for mpi in with-mpi no-mpi; do
    consumer "c_$mpi" C "" "$tmp/use.c" opprof::opprof "$mpi" ok
    consumer "cxx_$mpi" CXX "" "$tmp/user.cpp" "opprof::opprof opprof::nn" "$mpi" ok
    consumer "mixed_$mpi" "C CXX" "" "$tmp/user.cpp" "opprof::opprof opprof::nn" "$mpi" ok
done
consumer mpi_component "C" nn_mpi "$tmp/mpi.c" opprof::nn_mpi with-mpi ok
consumer mpi_component_no_mpi "C" nn_mpi "$tmp/mpi.c" opprof::nn_mpi no-mpi "fail:opprof's nn_mpi needs MPI, not found"
consumer mpi_component_cxx "CXX" nn_mpi "$tmp/user.cpp" opprof::nn_mpi with-mpi "fail:enable C in project()"; ok

# -- the README's pkg-config line, as written
cc "$tmp/use.c" $(pkg-config --cflags --libs opprof) -Wl,-rpath,$(pkg-config --variable=libdir opprof) -o "$tmp/readme" \
    || fail "the README's pkg-config line"
"$tmp/readme" | grep -q " 3$" || fail "the README's pkg-config program"; ok

# -- exported symbols: opprof_* and nn_* only
for lib in "$libdir"/libopprof.so "$libdir"/libnn.so "$libdir"/libnn_mpi.so; do
    others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^opprof_' | grep -v '^nn_' || true)
    [ -z "$others" ] || fail "$(basename "$lib") exports: $(echo "$others" | head -n 5 | tr '\n' ' ')"
done
! nm -D --defined-only "$libdir"/libnn.so | grep -q 'libxsmm_\|sgemm_' || fail "libnn.so exports libxsmm/BLAS"; ok
readelf -d "$libdir/libopprof.so" | grep -q 'SONAME.*libopprof\.so\.0\.6' || fail "libopprof's SONAME"; ok

# -- every public header alone: C11 and C++17, pedantic, warnings as errors
for h in opprof/opprof.h opprof/capture.h opprof/mark_kinds.h opprof/timer.h nn/nn.h; do
    printf '#include <%s>\nint main(void) { return 0; }\n' "$h" > "$tmp/h.c"
    gcc -std=c11 -pedantic -Wall -Wextra -Werror -I"$p/include" -c "$tmp/h.c" -o "$tmp/h.o" || fail "$h as C11"
    cp "$tmp/h.c" "$tmp/h.cpp"
    g++ -std=c++17 -pedantic -Wall -Wextra -Werror -I"$p/include" -c "$tmp/h.cpp" -o "$tmp/h.o" || fail "$h as C++17"
done
printf '#include <opprof/opprof.hpp>\nint main() { OPPROF_SCOPE("x_%%d", 1); return 0; }\n' > "$tmp/hpp.cpp"
g++ -std=c++17 -pedantic -Wall -Wextra -Werror -I"$p/include" -c "$tmp/hpp.cpp" -o "$tmp/h.o" || fail "opprof.hpp"; ok
printf '#include <nn/mpi.h>\nint main(void) { return 0; }\n' > "$tmp/h.c"
gcc -std=c11 -pedantic -Wall -Wextra -Werror -I"$p/include" $(pkg-config --cflags ompi-c) -c "$tmp/h.c" -o "$tmp/h.o" \
    || fail "nn/mpi.h as C11"; ok

# -- the removed block form: a compile error that says what to write
printf '#include <opprof/opprof.h>\nvoid f(void) { OPPROF_RANGE("x") { } }\n' > "$tmp/old.c"
if gcc -std=c11 -I"$p/include" -c "$tmp/old.c" -o "$tmp/old.o" 2>"$tmp/old.log"; then fail "OPPROF_RANGE compiles"; fi
grep -q "write OPPROF_SCOPE(...); inside the block" "$tmp/old.log" || fail "OPPROF_RANGE's message: $(cat "$tmp/old.log")"; ok
# -- C++: a range named at run time is refused, saying what to write; literals and constexpr arrays are not
printf '#include <opprof/opprof.h>\nvoid f(const char *name) { OPPROF_SCOPE(name); }\n' > "$tmp/runtime.cpp"
if g++ -std=c++17 -I"$p/include" -c "$tmp/runtime.cpp" -o "$tmp/runtime.o" 2>"$tmp/runtime.log"; then
  fail "OPPROF_SCOPE(name) of a run-time name compiles in C++"
fi
grep -q 'write OPPROF_SCOPE("%s", name)' "$tmp/runtime.log" || fail "the run-time name's message: $(cat "$tmp/runtime.log")"; ok
printf '#include <opprof/opprof.h>\nstatic constexpr char k[] = "k";\nvoid f(const char *name) { OPPROF_SCOPE("lit"); OPPROF_SCOPE(k); OPPROF_SCOPE("%%s", name); OPPROF_OP_SCOPE_IN("io", "r_%%d", 1); }\n' > "$tmp/names.cpp"
g++ -std=c++17 -Wall -Wextra -pedantic -Werror -I"$p/include" -c "$tmp/names.cpp" -o "$tmp/names.o" \
    || fail "literal names in C++"; ok

# -- man pages
MANWIDTH=80 man -l "$p/share/man/man1/opprof.1" 2>/dev/null | grep -q "read a profiler trace back" || fail "man opprof"
MANWIDTH=80 man -l "$p/share/man/man1/profile_cpu.1" 2>/dev/null | grep -q "EXIT STATUS" || fail "man profile_cpu"; ok

echo "test_install: $passed passed, 0 failed"
