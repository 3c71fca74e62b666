/* fail_alloc.c - a preloaded allocator that fails one allocation, for the
 * tests that run a command out of memory at each of its allocations in turn
 * (test_sql). OPPROF_TEST_FAIL_ALLOC="main K" fails the K-th allocation that
 * the process's main thread makes after this library is loaded, "other K"
 * the K-th that its other threads make (opprof sql's writer). With
 * OPPROF_TEST_ALLOC_COUNTS=FILE it writes "MAIN OTHER" there at exit: how
 * many each made. glibc's own allocator does the work; not in sanitizer
 * builds, whose runtime owns malloc (tests/CMakeLists.txt). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default"))) /* the build hides what it does not name */

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static long counts[2]; /* allocations so far: the main thread's, the others' */
static long fail_at = -1;
static int fail_kind = -1; /* 0: main, 1: other */
static int ready;

__attribute__((constructor)) static void start(void) {
    const char *spec = getenv("OPPROF_TEST_FAIL_ALLOC");
    if (spec && !strncmp(spec, "main ", 5)) fail_kind = 0, fail_at = atol(spec + 5);
    if (spec && !strncmp(spec, "other ", 6)) fail_kind = 1, fail_at = atol(spec + 6);
    ready = 1;
}

__attribute__((destructor)) static void stop(void) {
    const char *path = getenv("OPPROF_TEST_ALLOC_COUNTS");
    ready = 0;
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f) fprintf(f, "%ld %ld\n", counts[0], counts[1]), fclose(f);
}

/* This allocation is the one to fail. */
static int fails(void) {
    if (!ready) return 0;
    int kind = gettid() != getpid();
    long n = __atomic_add_fetch(&counts[kind], 1, __ATOMIC_RELAXED);
    if (kind != fail_kind || n != fail_at) return 0;
    errno = ENOMEM;
    return 1;
}

EXPORT void *malloc(size_t size) { return fails() ? NULL : __libc_malloc(size); }
EXPORT void *calloc(size_t n, size_t size) { return fails() ? NULL : __libc_calloc(n, size); }
EXPORT void *realloc(void *p, size_t size) { return fails() ? NULL : __libc_realloc(p, size); }
EXPORT void *aligned_alloc(size_t align, size_t size) { return fails() ? NULL : __libc_memalign(align, size); }
EXPORT void *memalign(size_t align, size_t size) { return fails() ? NULL : __libc_memalign(align, size); }

EXPORT int posix_memalign(void **out, size_t align, size_t size) {
    void *p = fails() ? NULL : __libc_memalign(align, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
