/* preload.c - libopprof_record.so, what `opprof record` preloads into a
 * program it did not build: the program's allocations become memory events
 * (OPPROF_RECORD_MEMORY=1) and, in a program compiled with
 * -finstrument-functions, every function becomes a range
 * (OPPROF_RECORD_FUNCTIONS=1). The session itself is OPPROF_TRACE's
 * (src/opprof/autostart/autostart.c): libopprof.so, which this library needs, starts it
 * before this library's constructor runs.
 *
 * Allocations: malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
 * memalign, valloc, pvalloc and C++'s operator new and delete (all their
 * forms) forward to glibc's own entry points (__libc_malloc...) and record
 * the bytes asked for; a free is recorded without its size
 * (OPPROF_FREE_UNKNOWN_SIZE), which the capture takes from the allocation at
 * the same address. Functions: functions.c. */
#define _GNU_SOURCE
#include "common/quiet_write.h"
#include "common/fd_room.h"
#include "preload/exec.h"
#include "preload/functions.h"
#include "preload/steps.h"

#include <opprof/opprof.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static int g_memory; /* record allocations */
/* The program allocated through the hooks, said at exit when it did not
 * (stored once: then the hot path only reads a cached line). */
static int g_saw_allocation;

/* ---- allocations ---- */

/* The bytes asked for; a free's size is the capture's to find (the
 * allocation at the same address): no size lookup on the hot path. */
static inline void allocated(void *p, size_t n) {
    if (p && g_memory && !opprof__preload_inside) {
        if (__builtin_expect(!__atomic_load_n(&g_saw_allocation, __ATOMIC_RELAXED), 0))
            __atomic_store_n(&g_saw_allocation, 1, __ATOMIC_RELAXED);
        OPPROF_MEMORY(p, (int64_t)n, -1);
    }
}

static inline void freeing(void *p) {
    if (p && g_memory && !opprof__preload_inside) OPPROF_MEMORY(p, OPPROF_FREE_UNKNOWN_SIZE, -1);
}

EXPORT void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    allocated(p, n);
    return p;
}

EXPORT void free(void *p) {
    freeing(p);
    __libc_free(p);
}

EXPORT void *calloc(size_t n, size_t size) {
    void *p = __libc_calloc(n, size);
    allocated(p, n * size); /* no overflow: calloc succeeded */
    return p;
}

EXPORT void *realloc(void *old, size_t n) {
    void *p = __libc_realloc(old, n);
    if (p || n == 0) freeing(old); /* the old block is gone */
    allocated(p, n);
    return p;
}

EXPORT void *memalign(size_t align, size_t n) {
    void *p = __libc_memalign(align, n);
    allocated(p, n);
    return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n) {
    if (align < sizeof(void *) || (align & (align - 1))) return 22; /* EINVAL */
    void *p = __libc_memalign(align, n);
    if (!p) return 12; /* ENOMEM */
    allocated(p, n);
    *out = p;
    return 0;
}

/* as glibc's: an alignment that is no power of two is rounded up to one */
EXPORT void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

EXPORT void *valloc(size_t n) { return memalign((size_t)sysconf(_SC_PAGESIZE), n); }

/* n rounded up to whole pages (0: one page), never wrapping past SIZE_MAX */
EXPORT void *pvalloc(size_t n) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (n > SIZE_MAX - page + 1) {
        errno = ENOMEM;
        return NULL;
    }
    return memalign(page, n ? (n + page - 1) / page * page : page);
}

EXPORT void *reallocarray(void *old, size_t n, size_t size) {
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(old, bytes);
}

/* C++: operator new/delete, every form (size, array, nothrow, aligned, sized
 * delete), by their mangled names, with the standard's contract: new calls
 * the new_handler while allocation fails, and throws std::bad_alloc when
 * there is none; the nothrow forms return NULL instead. libstdc++'s own
 * functions do the C++ parts (weak: a program that calls new has them). */
extern void (*_ZSt15get_new_handlerv(void))(void) __attribute__((weak));
extern void _ZSt17__throw_bad_allocv(void) __attribute__((weak, noreturn));

static void *new_block(size_t n, size_t align, bool nothrow) {
    for (;;) {
        void *p = align ? memalign(align, n ? n : 1) : malloc(n ? n : 1);
        if (p) return p;
        void (*handler)(void) = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : NULL;
        if (handler) {
            handler(); /* frees memory, throws, or ends the program */
            continue;
        }
        if (nothrow || !_ZSt17__throw_bad_allocv) return NULL;
        _ZSt17__throw_bad_allocv();
    }
}

#define NOTHROW const void *t /* std::nothrow_t, unused */
EXPORT void *_Znwm(size_t n) { return new_block(n, 0, false); }
EXPORT void *_Znam(size_t n) { return new_block(n, 0, false); }
EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, NOTHROW) {
    (void)t;
    return new_block(n, 0, true);
}
EXPORT void *_ZnamRKSt9nothrow_t(size_t n, NOTHROW) {
    (void)t;
    return new_block(n, 0, true);
}
EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t a) { return new_block(n, a, false); }
EXPORT void *_ZnamSt11align_val_t(size_t n, size_t a) { return new_block(n, a, false); }
EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, NOTHROW) {
    (void)t;
    return new_block(n, a, true);
}
EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, NOTHROW) {
    (void)t;
    return new_block(n, a, true);
}
EXPORT void _ZdlPv(void *p) { free(p); }
EXPORT void _ZdaPv(void *p) { free(p); }
EXPORT void _ZdlPvRKSt9nothrow_t(void *p, NOTHROW) {
    (void)t;
    free(p);
}
EXPORT void _ZdaPvRKSt9nothrow_t(void *p, NOTHROW) {
    (void)t;
    free(p);
}
EXPORT void _ZdlPvm(void *p, size_t n) {
    (void)n;
    free(p);
}
EXPORT void _ZdaPvm(void *p, size_t n) {
    (void)n;
    free(p);
}
EXPORT void _ZdlPvSt11align_val_t(void *p, size_t a) {
    (void)a;
    free(p);
}
EXPORT void _ZdaPvSt11align_val_t(void *p, size_t a) {
    (void)a;
    free(p);
}
EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) {
    (void)n, (void)a;
    free(p);
}
EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) {
    (void)n, (void)a;
    free(p);
}
#undef NOTHROW

/* The program's exit handlers ran: opprof record learns it from the file it
 * named (OPPROF_RECORD_EXITED, made by it), so that a capture that is not there
 * is blamed on its real cause. Only the process record started says so. */
static void say_exited(void) {
    const char *path = secure_getenv("OPPROF_RECORD_EXITED"), *pid = secure_getenv("OPPROF_RECORD_PID");
    if (!path || !pid || strtol(pid, NULL, 10) != (long)getpid()) return;
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) { /* no descriptor left (a hard RLIMIT_NOFILE the program filled): its size says it, by path */
        struct stat st;
        if (errno == EMFILE && lstat(path, &st) == 0 && S_ISREG(st.st_mode) && truncate(path, 1) != 0) {}
        return;
    }
    if (write(fd, "1", 1) < 0) { /* record then says the handlers did not run: no worse */
    }
    close(fd);
}

/* `opprof record` says what it could not see, once, when the program ends. */
__attribute__((destructor)) static void record_said(void) {
    opprof__fd_room room = opprof__fd_room_make();
    say_exited();
    if (!opprof__child_took_profile()) { /* else a wrapper that forks: the child's session speaks */
        opprof__steps_said();
        opprof__functions_said();
        if (g_memory && !__atomic_load_n(&g_saw_allocation, __ATOMIC_RELAXED))
            opprof__say("opprof record: --memory: the program allocated nothing through malloc, new and their kin "
                        "(a custom allocator, or allocations made before it started?), so no memory is recorded\n");
    }
    opprof__fd_room_give_back(room);
}

OPPROF__STDERR_AT_START /* opprof__say's: this library's */

    __attribute__((constructor)) static void
    record_setup(void) {
    const char *m = secure_getenv("OPPROF_RECORD_MEMORY");
    g_memory = m && strcmp(m, "1") == 0;
    const char *step = secure_getenv("OPPROF_STEP_FUNCTION");
    opprof__steps_setup(step);
    opprof__functions_setup(step);
}
