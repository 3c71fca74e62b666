/* functions.c - `opprof record --functions` inside libopprof_record.so
 * (OPPROF_RECORD_FUNCTIONS=1): in a program compiled with
 * -finstrument-functions, every function becomes a range, within the budget
 * (budget.c). A table from each function's address to a call site record,
 * filled once per function with its name from the ELF symbol table of its
 * object (libelf: static functions too), read without a lock; a stack per
 * thread of the open ranges' handles. */
#define _GNU_SOURCE
#include "common/quiet_write.h"
#include "preload/functions.h"
#include "preload/steps.h"

#include <opprof/capture.h> /* opprof_free */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_calloc(size_t, size_t);
extern void __libc_free(void *);

static int g_functions; /* record functions */
/* The program called an instrumented function, said at exit when it did not
 * (stored once: then the hot path only reads a cached line). */
static int g_saw_function;

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
enum { TABLE_SIZE = 1 << 17, TABLE_LOAD = FUNCTIONS_MAX, MAX_OPEN = 1024 };
_Static_assert(TABLE_LOAD == TABLE_SIZE / 4 * 3, "the table 3/4 full at most");

/* --functions --step FUNCTION: FUNCTION's instrumented entries step even
 * outside a window (a schedule's wait), where no other entry is looked up. */
static bool g_step_by_entry;

static function *g_table[TABLE_SIZE]; /* atomic pointers; filled once each */
static size_t g_filled;               /* atomic: slots filled */
static pthread_mutex_t g_fill = PTHREAD_MUTEX_INITIALIZER;
static function g_overflow = {
    {"(more functions than opprof record's table holds)", "?", "?", 0, OPPROF_KIND_CPU_OP, NULL},
    NULL,
    FUNCTIONS_MAX,
    false,
    0,
    0};

static function *new_function(void *fn, uint32_t id) {
    opprof_symbolize(fn, g_name_buf, sizeof g_name_buf, NULL, 0);
    size_t len = strlen(g_name_buf);
    function *f = __libc_calloc(1, sizeof *f + len + 1);
    if (!f) return NULL;
    f->fn = fn;
    f->id = id;
    memcpy(f->name, g_name_buf, len + 1);
    f->step = opprof__steps_is(f->name);
    f->loc = (opprof_srcloc){f->name, f->name, "?", 0, OPPROF_KIND_CPU_OP, NULL};
    return f;
}

static __attribute__((noinline)) function *add_function(void *fn, size_t k) {
    opprof__preload_inside = 1;
    pthread_mutex_lock(&g_fill);
    function *f = NULL;
    for (size_t probes = 0; probes < TABLE_SIZE; probes++, k = (k + 1) & (TABLE_SIZE - 1)) {
        function *cur = __atomic_load_n(&g_table[k], __ATOMIC_ACQUIRE);
        if (cur && cur->fn == fn) {
            f = cur;
            break;
        }
        if (!cur) {
            size_t filled = __atomic_load_n(&g_filled, __ATOMIC_RELAXED);
            if (filled >= TABLE_LOAD || !(f = new_function(fn, (uint32_t)filled))) break;
            __atomic_store_n(&g_table[k], f, __ATOMIC_RELEASE);
            __atomic_add_fetch(&g_filled, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    pthread_mutex_unlock(&g_fill);
    opprof__preload_inside = 0;
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
/* each open call's place on its thread's stack: this hook's frame, called from it */
static __thread uintptr_t t_frame[MAX_OPEN] __attribute__((tls_model("initial-exec")));
static __thread unsigned t_depth __attribute__((tls_model("initial-exec")));
/* How far apart two frames of one stack can be: the stack's limit
 * (RLIMIT_STACK, 8 MiB when unlimited). Farther, they are two stacks (a
 * signal handler's alternate stack). */
static uintptr_t g_stack_span = 8u << 20;

/* The open calls whose frames are gone, ended: those below `here` on the
 * stack (a call at `here` itself is its caller's, inlined into it). A
 * longjmp (libpng's and libjpeg's error paths, an interpreter's) leaves the
 * functions it jumps out of without their exits: each later call nested in
 * them, the stack grew by their depth every time, and their times summed to
 * many times the run's. The handle is read before the depth goes down, as
 * in exit. */
static inline void end_calls_left(uintptr_t here) {
    for (unsigned d = t_depth; d > 0 && d <= MAX_OPEN;) {
        uintptr_t frame = t_frame[d - 1];
        if (frame == here || here - frame >= g_stack_span) break; /* here, above it, or another stack */
        opprof_range r = t_open[--d];
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        t_depth = d;
        if (r) opprof__range_end(r);
    }
}

EXPORT void __cyg_profile_func_enter(void *fn, void *site) {
    (void)site;
    if (!g_functions) return;
    if (__builtin_expect(!__atomic_load_n(&g_saw_function, __ATOMIC_RELAXED), 0))
        __atomic_store_n(&g_saw_function, 1, __ATOMIC_RELAXED);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    end_calls_left(here);
    /* the slot's frame set before the depth goes up: a signal handler's
     * instrumented calls in between see this call's frame above theirs, and
     * no range yet */
    unsigned d = t_depth;
    if (d < MAX_OPEN) t_open[d] = 0, t_frame[d] = here;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t_depth = d + 1;
    opprof_range r = 0;
    /* not while this thread names a function (a signal handler that calls
     * instrumented code then): the naming holds a lock, taken only here */
    if (OPPROF__RECORDING() && !opprof__preload_inside) {
        function *f = function_of(fn);
        if (__builtin_expect(f->step, 0)) opprof__steps_function_entered();
        if (opprof__budget_spend(f)) r = opprof__range_begin(&f->loc);
    } else if (__builtin_expect(g_step_by_entry, 0) && !opprof__preload_inside && function_of(fn)->step) {
        opprof__steps_function_entered(); /* outside a window too: the steps are what opens one (OPPROF_SCHEDULE) */
    }
    if (d < MAX_OPEN) t_open[d] = r;
}

EXPORT void __cyg_profile_func_exit(void *fn, void *site) {
    (void)fn, (void)site;
    if (!g_functions || t_depth == 0) return;
    end_calls_left((uintptr_t)__builtin_frame_address(0));
    if (t_depth == 0) return;
    /* the handle read before the depth goes down: a signal handler's
     * instrumented calls in between take the slots above, never this one */
    unsigned d = t_depth - 1;
    opprof_range r = d < MAX_OPEN ? t_open[d] : 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t_depth = d;
    if (r) opprof__range_end(r);
}

/* top[0..*shown) are the most called, the most first: i joins them, if it is. */
static void keep_top(size_t top[3], size_t *shown, const uint64_t *calls, size_t i) {
    size_t at = *shown;
    while (at > 0 && calls[top[at - 1]] < calls[i]) at--;
    if (at >= 3) return;
    for (size_t j = *shown < 3 ? *shown : 2; j > at; j--) top[j] = top[j - 1];
    top[at] = i;
    if (*shown < 3) (*shown)++;
}

/* The calls past the budget, said at exit: how many, of how many functions,
 * the three most called of them. */
static void budget_said(void) {
    size_t n = 0;
    function **functions = __libc_calloc(TABLE_LOAD + 1, sizeof *functions);
    uint64_t *calls = __libc_calloc(TABLE_LOAD + 1, sizeof *calls),
             *recorded = __libc_calloc(TABLE_LOAD + 1, sizeof *recorded);
    if (functions && calls && recorded) {
        for (size_t k = 0; k < TABLE_SIZE; k++) {
            function *f = __atomic_load_n(&g_table[k], __ATOMIC_ACQUIRE);
            if (f) functions[n++] = f;
        }
        functions[n++] = &g_overflow;
        opprof__budget_tally(functions, n, calls, recorded);
    }
    uint64_t over = 0, count = 0;
    size_t top[3], shown = 0;
    for (size_t i = 0; i < n; i++) {
        if (calls[i] <= recorded[i]) continue;
        over += calls[i] - recorded[i];
        count++;
        keep_top(top, &shown, calls, i);
    }
    if (over && opprof__stderr_is_the_programs()) {
        opprof__quiet q; /* one message of several writes */
        opprof__quiet_begin(&q);
        fprintf(stderr,
                "opprof record: --functions: %llu call(s) of %llu function(s) not recorded, past each function's "
                "first %llu (OPPROF_FUNCTION_CALLS; the tables count the recorded calls): most called",
                (unsigned long long)over, (unsigned long long)count, (unsigned long long)opprof__budget_cap());
        for (size_t i = 0; i < shown; i++) {
            char *readable = opprof_demangle(functions[top[i]]->name);
            fprintf(stderr, "%s %s (%llu calls)", i ? "," : "", readable ? readable : functions[top[i]]->name,
                    (unsigned long long)calls[top[i]]);
            opprof_free(readable);
        }
        fputs("\n", stderr);
        fflush(stderr);
        opprof__quiet_end(&q);
    }
    __libc_free(functions);
    __libc_free(calls);
    __libc_free(recorded);
}

void opprof__functions_said(void) {
    if (!g_functions) return;
    budget_said();
    if (!__atomic_load_n(&g_saw_function, __ATOMIC_RELAXED))
        opprof__say("opprof record: --functions: the program called no instrumented function, so none is "
                    "recorded; build it with -finstrument-functions (gcc, clang) to record its functions\n");
}

void opprof__functions_setup(const char *step) {
    const char *on = secure_getenv("OPPROF_RECORD_FUNCTIONS");
    g_functions = on && strcmp(on, "1") == 0;
    g_step_by_entry = g_functions && step && *step;
    struct rlimit stack;
    if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY && stack.rlim_cur > (1u << 20))
        g_stack_span = (uintptr_t)stack.rlim_cur;
    const char *cap = secure_getenv("OPPROF_FUNCTION_CALLS");
    if (cap && *cap) {
        char *end;
        unsigned long long v = strtoull(cap, &end, 10);
        if (*end || v == 0)
            opprof__say("opprof record: OPPROF_FUNCTION_CALLS='%s' ignored: not a number >= 1; %llu kept\n", cap,
                        (unsigned long long)opprof__budget_cap());
        else
            opprof__budget_set(v);
    }
}
