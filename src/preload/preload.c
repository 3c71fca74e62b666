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
 * the same address.
 *
 * Functions: a table from each function's address to a call site record,
 * filled once per function with its name from the ELF symbol table of its
 * object (libelf: static functions too), read without a lock; a stack per
 * thread of the open ranges' handles. */
#define _GNU_SOURCE
#include "preload/steps.h"

#include <opprof/capture.h> /* opprof_free */
#include <opprof/opprof.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static int g_memory;    /* record allocations */
static int g_functions; /* record functions */
/* What the program did through the hooks, said at exit when it did nothing
 * that was asked for (stored once: then the hot path only reads a cached line). */
static int g_saw_allocation, g_saw_function;
static __thread int t_inside
    __attribute__((tls_model("initial-exec"))); /* naming a function: its own allocations are not the program's */

/* ---- allocations ---- */

/* The bytes asked for; a free's size is the capture's to find (the
 * allocation at the same address): no size lookup on the hot path. */
static inline void allocated(void *p, size_t n) {
    if (p && g_memory && !t_inside) {
        if (__builtin_expect(!__atomic_load_n(&g_saw_allocation, __ATOMIC_RELAXED), 0))
            __atomic_store_n(&g_saw_allocation, 1, __ATOMIC_RELAXED);
        OPPROF_MEMORY(p, (int64_t)n, -1);
    }
}

static inline void freeing(void *p) {
    if (p && g_memory && !t_inside) OPPROF_MEMORY(p, OPPROF_FREE_UNKNOWN_SIZE, -1);
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

/* ---- function names: opprof_symbolize (the ELF symbols of each object) ---- */

/* A symbol's whole name: C++ template names pass 200 bytes routinely, and two
 * that differ past any cut would be one row. 16 KiB covers what a linker keeps. */
enum { NAME_MAX_BYTES = 16384 };
static char g_name_buf[NAME_MAX_BYTES]; /* under g_fill */

/* ---- functions: address -> call site, read without a lock ---- */

/* The table holds up to TABLE_LOAD functions (3/4 full: every probe for a
 * function not in it ends at an empty slot soon); past it, new functions are
 * one row, found without the lock or a scan (a full table was scanned under
 * the lock at every call of a function without a slot: 46 s for 0.24 s). */
enum { TABLE_SIZE = 1 << 17, TABLE_LOAD = TABLE_SIZE / 4 * 3, MAX_OPEN = 1024 };

typedef struct function {
    opprof_srcloc loc;
    void *fn;
    bool step;      /* the function of --step: each entry begins a step */
    uint64_t calls; /* atomic: its calls while recording, recorded or not */
    char name[];
} function;

/* The budget of --functions: each function's first g_call_cap calls while
 * recording are ranges, the rest only counted (a template-heavy program's
 * accessors called 10^8 times would fill memory and disk), so that the
 * functions that run long and seldom are all kept. */
/* --functions --step FUNCTION: FUNCTION's instrumented entries step even
 * outside a window (a schedule's wait), where no other entry is looked up. */
static bool g_step_by_entry;

static uint64_t g_call_cap = 100000;

static function *g_table[TABLE_SIZE]; /* atomic pointers; filled once each */
static size_t g_filled;               /* atomic: slots filled */
static pthread_mutex_t g_fill = PTHREAD_MUTEX_INITIALIZER;
static function g_overflow = {
    {"(more functions than opprof record's table holds)", "?", "?", 0, OPPROF_KIND_CPU_OP, NULL}, NULL, false, 0};

static function *new_function(void *fn) {
    opprof_symbolize(fn, g_name_buf, sizeof g_name_buf, NULL, 0);
    size_t len = strlen(g_name_buf);
    function *f = __libc_calloc(1, sizeof *f + len + 1);
    if (!f) return NULL;
    f->fn = fn;
    memcpy(f->name, g_name_buf, len + 1);
    f->step = opprof__steps_is(f->name);
    f->loc = (opprof_srcloc){f->name, f->name, "?", 0, OPPROF_KIND_CPU_OP, NULL};
    return f;
}

static __attribute__((noinline)) function *add_function(void *fn, size_t k) {
    t_inside = 1;
    pthread_mutex_lock(&g_fill);
    function *f = NULL;
    for (size_t probes = 0; probes < TABLE_SIZE; probes++, k = (k + 1) & (TABLE_SIZE - 1)) {
        function *cur = __atomic_load_n(&g_table[k], __ATOMIC_ACQUIRE);
        if (cur && cur->fn == fn) {
            f = cur;
            break;
        }
        if (!cur) {
            if (__atomic_load_n(&g_filled, __ATOMIC_RELAXED) >= TABLE_LOAD || !(f = new_function(fn))) break;
            __atomic_store_n(&g_table[k], f, __ATOMIC_RELEASE);
            __atomic_add_fetch(&g_filled, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    pthread_mutex_unlock(&g_fill);
    t_inside = 0;
    return f ? f : &g_overflow;
}

static inline function *function_of(void *fn) {
    size_t k = ((uintptr_t)fn >> 4) * 0x9E3779B97F4A7C15ull >> 47;
    for (size_t probes = 0; probes < TABLE_SIZE; probes++, k = (k + 1) & (TABLE_SIZE - 1)) {
        function *f = __atomic_load_n(&g_table[k], __ATOMIC_ACQUIRE);
        if (__builtin_expect(f && f->fn == fn, 1)) return f;
        if (!f) break; /* the end of its probe: not in the table */
    }
    if (__atomic_load_n(&g_filled, __ATOMIC_RELAXED) >= TABLE_LOAD) return &g_overflow;
    return add_function(fn, ((uintptr_t)fn >> 4) * 0x9E3779B97F4A7C15ull >> 47);
}

static __thread opprof_range t_open[MAX_OPEN] __attribute__((tls_model("initial-exec")));
static __thread unsigned t_depth __attribute__((tls_model("initial-exec")));

EXPORT void __cyg_profile_func_enter(void *fn, void *site) {
    (void)site;
    if (!g_functions) return;
    if (__builtin_expect(!__atomic_load_n(&g_saw_function, __ATOMIC_RELAXED), 0))
        __atomic_store_n(&g_saw_function, 1, __ATOMIC_RELAXED);
    unsigned d = t_depth++;
    opprof_range r = 0;
    /* not while this thread names a function (a signal handler that calls
     * instrumented code then): the naming holds a lock, taken only here */
    if (OPPROF__RECORDING() && !t_inside) {
        function *f = function_of(fn);
        if (__builtin_expect(f->step, 0)) opprof__steps_function_entered();
        if (__atomic_add_fetch(&f->calls, 1, __ATOMIC_RELAXED) <= g_call_cap) r = opprof__range_begin(&f->loc);
    } else if (__builtin_expect(g_step_by_entry, 0) && !t_inside && function_of(fn)->step) {
        opprof__steps_function_entered(); /* outside a window too: the steps are what opens one (OPPROF_SCHEDULE) */
    }
    if (d < MAX_OPEN) t_open[d] = r;
}

EXPORT void __cyg_profile_func_exit(void *fn, void *site) {
    (void)fn, (void)site;
    if (!g_functions || t_depth == 0) return;
    /* the handle read before the depth goes down: a signal handler's
     * instrumented calls in between take the slots above, never this one */
    unsigned d = t_depth - 1;
    opprof_range r = d < MAX_OPEN ? t_open[d] : 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t_depth = d;
    if (r) opprof__range_end(r);
}

/* The calls past the budget, said at exit: how many, of how many functions,
 * the three most called of them. */
static void budget_said(void) {
    uint64_t over = 0, functions = 0;
    const function *top[3] = {0};
    for (size_t k = 0; k < TABLE_SIZE; k++) {
        const function *f = __atomic_load_n(&g_table[k], __ATOMIC_ACQUIRE);
        uint64_t calls = f ? __atomic_load_n(&f->calls, __ATOMIC_RELAXED) : 0;
        if (calls <= g_call_cap) continue;
        over += calls - g_call_cap;
        functions++;
        for (int i = 0; i < 3; i++)
            if (!top[i] || calls > top[i]->calls) {
                memmove(&top[i + 1], &top[i], (size_t)(2 - i) * sizeof *top);
                top[i] = f;
                break;
            }
    }
    if (!over) return;
    fprintf(stderr,
            "opprof record: --functions: %llu call(s) of %llu function(s) not recorded, past each function's "
            "first %llu (OPPROF_FUNCTION_CALLS; the tables count the recorded calls): most called",
            (unsigned long long)over, (unsigned long long)functions, (unsigned long long)g_call_cap);
    for (int i = 0; i < 3 && top[i]; i++) {
        char *readable = opprof_demangle(top[i]->name);
        fprintf(stderr, "%s %s (%llu calls)", i ? "," : "", readable ? readable : top[i]->name,
                (unsigned long long)top[i]->calls);
        opprof_free(readable);
    }
    fputs("\n", stderr);
}

/* The program's exit handlers ran: opprof record learns it from the file it
 * named (OPPROF_RECORD_EXITED, made by it), so that a capture that is not there
 * is blamed on its real cause. Only the process record started says so. */
static void say_exited(void) {
    const char *path = secure_getenv("OPPROF_RECORD_EXITED"), *pid = secure_getenv("OPPROF_RECORD_PID");
    if (!path || !pid || strtol(pid, NULL, 10) != (long)getpid()) return;
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return;
    if (write(fd, "1", 1) < 0) { /* record then says the handlers did not run: no worse */
    }
    close(fd);
}

/* `opprof record` says what it could not see, once, when the program ends. */
__attribute__((destructor)) static void record_said(void) {
    say_exited();
    opprof__steps_said();
    if (g_functions) budget_said();
    if (g_functions && !__atomic_load_n(&g_saw_function, __ATOMIC_RELAXED))
        fputs("opprof record: --functions: the program called no instrumented function, so none is "
              "recorded; build it with -finstrument-functions (gcc, clang) to record its functions\n",
              stderr);
    if (g_memory && !__atomic_load_n(&g_saw_allocation, __ATOMIC_RELAXED))
        fputs("opprof record: --memory: the program allocated nothing through malloc, new and their kin "
              "(a custom allocator, or allocations made before it started?), so no memory is recorded\n",
              stderr);
}

__attribute__((constructor)) static void record_setup(void) {
    const char *m = secure_getenv("OPPROF_RECORD_MEMORY"), *f = secure_getenv("OPPROF_RECORD_FUNCTIONS");
    g_functions = f && strcmp(f, "1") == 0;
    g_memory = m && strcmp(m, "1") == 0;
    const char *step = secure_getenv("OPPROF_STEP_FUNCTION");
    opprof__steps_setup(step);
    g_step_by_entry = g_functions && step && *step;
    const char *cap = secure_getenv("OPPROF_FUNCTION_CALLS");
    if (cap && *cap) {
        char *end;
        unsigned long long v = strtoull(cap, &end, 10);
        if (*end || v == 0)
            fprintf(stderr, "opprof record: OPPROF_FUNCTION_CALLS='%s' ignored: not a number >= 1; %llu kept\n", cap,
                    (unsigned long long)g_call_cap);
        else
            g_call_cap = v;
    }
}
