/* record.c - the hot path: per-thread event buffers written without locks.
 *
 * Each thread owns a state (registered once, kept until the process ends so
 * that a thread that exits keeps its events). A range is one 32-byte slot,
 * reserved at begin (so a thread's slots are in start order) and completed
 * at end through the thread's stack of open slots. Memory events go to a
 * second per-thread stream. The owner publishes its counts with release
 * stores; the collector (opprof__recorder_snapshot) reads them with acquire
 * loads, so it sees whole events and never takes a lock that the hot path
 * takes.
 *
 * The macros of opprof.h write the same slots inline (opprof__range_begin,
 * opprof__range_end, opprof__record_memory) when the thread's `ready` word
 * equals the exported window word; the functions here are their slow path
 * and do everything else: registration, resets, chunks, budget, misuse.
 *
 * Windows are epochs: opening a window bumps the epoch and publishes the
 * window word (epoch << 1) | 1; a thread notices on its next record and
 * resets its own buffers. A collector reads only threads whose epoch is the
 * current one.
 *
 * Closing a window is a handshake, so that the collector may free buffers
 * while it copies them (a capture then costs its own 32 bytes an event, not
 * twice that): every record sets its thread's `busy` flag, then checks that
 * the window is open; the closer clears the window flag, runs membarrier()
 * (a full barrier on every thread of the process, paid by the closer, not by
 * the hot path) and waits until no thread is busy. After that no thread
 * writes into its buffers until the next window opens. Where membarrier() is
 * missing, buffers are kept instead of freed.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

enum {
    CHUNK_EVENTS = 65536,      /* 2 MiB of range slots: one huge page (alloc.c) */
    CHUNK_MEMORY = 65536,      /* 2 MiB of memory events */
    BUDGET_CLAIM = 8192,       /* events a thread takes from the event budget at a time */
    NAME_ARENA_BYTES = 65536,  /* formatted names */
    RETAIN_CHUNKS = 32,        /* chunks a stream keeps across windows (64 MiB), unless
                                  OPPROF_RETAIN_CHUNKS says otherwise */
    MAX_DEPTH = OPPROF__MAX_DEPTH, /* open ranges per thread */
    MAX_NAME = 256
};

/* The slots and the thread's hot fields are declared in opprof.h, whose
 * inline path writes them too. */
typedef opprof__slot slot;
typedef opprof__memory_slot mem_slot;
_Static_assert(sizeof(slot) == 32 && sizeof(mem_slot) == 32, "events are 32 bytes");

/* Input shapes of the range with sequence number `seq` on its thread. */
enum { SHAPE_DIMS = 12, CHUNK_SHAPES = 2048, NATIVE_FRAMES = 14 };
/* frames captured: opprof's own (and a sanitizer's interceptor) are dropped later */
enum { NATIVE_CAPTURED = NATIVE_FRAMES };

/* The native call stack of the range with sequence number `seq`. */
typedef struct native_slot {
    uint64_t seq;
    uint64_t n;
    void *frames[NATIVE_FRAMES];
} native_slot;
typedef struct shape_slot {
    uint64_t seq;
    uint8_t n_inputs;
    uint8_t ndim[OPPROF_MAX_INPUTS];
    uint8_t dtype[OPPROF_MAX_INPUTS];
    uint8_t pad[7];
    int64_t dims[SHAPE_DIMS];
} shape_slot;

/* Marks (opprof.h's inline path writes them too). */
typedef opprof__mark_slot mark_slot;
_Static_assert(sizeof(mark_slot) == 32, "marks are 32 bytes");
_Static_assert((int)OPPROF__MARK_ARG_DOUBLE == (int)OPPROF_MARK_ARG_DOUBLE &&
                   (int)OPPROF__MARK_FLOPS == (int)OPPROF_MARK_FLOPS &&
                   (int)OPPROF__MARK_ASYNC_END == (int)OPPROF_MARK_ASYNC_END &&
                   (int)OPPROF__MARK_INSTANT == (int)OPPROF_MARK_INSTANT,
               "opprof.h's mark kinds are capture.h's");
enum { CHUNK_MARKS = 65536 }; /* 2 MiB of marks */

typedef struct chunk {
    struct chunk *next;
    size_t size;               /* bytes of the whole chunk */
    _Alignas(64) unsigned char data[];
} chunk;

typedef struct stream {
    chunk *head, *tail;
    opprof__cursor *at;        /* next item in tail, and the count published */
    size_t budget;             /* items claimed from the window's budget, not yet under limit */
} stream;

typedef struct name_arena {
    struct name_arena *next;
    size_t used;
    char text[NAME_ARENA_BYTES];
} name_arena;

/* Where a misuse happened: the range (and the range it concerns), and when. */
typedef struct misuse {
    const char *name, *other; /* NULL when unknown */
    uint64_t ticks;
} misuse;

typedef struct opprof__thread {
    opprof__fast fast;         /* first: busy, depth, ranges' and memory's cursors, the stack */
    struct opprof__thread *next_all;
    uint32_t index;            /* 1-based, stable */
    int64_t tid;
    char name[64];
    uint64_t epoch;            /* epoch of the buffered data; atomic */
    stream ranges, memory, shapes, natives, marks;
    opprof__cursor shapes_at, natives_at;
    name_arena *names_head, *names_tail;
    /* misuse and loss counters of this epoch; atomic (read by collector) */
    uint64_t dropped;
    uint64_t unmatched_end;
    uint64_t out_of_order_end;
    uint64_t too_deep;
    /* the first misuse of each kind in this epoch, named in the warnings */
    misuse first_unmatched, first_out_of_order, first_too_deep;
} opprof__thread;

/* ---- global state ---- */
int opprof__recording;          /* atomic: a window is open (read by the macros) */
#define g_recording opprof__recording
uint64_t opprof__window;        /* atomic: (epoch << 1) | open; the inline path compares it */
static int g_memory;            /* atomic: ... and memory events are wanted */
static int g_shapes;            /* atomic: ... and input shapes are wanted */
static int g_native;            /* atomic: ... and native call stacks are wanted */
static uint64_t g_epoch;        /* atomic */
static uint64_t g_max_events;   /* atomic: 0 = unlimited */
static int64_t g_budget;        /* atomic: events left in the window's budget */
static uint64_t g_foreign_end;  /* atomic: ends of ranges begun on other threads */
static int64_t g_foreign_tid;   /* atomic: the system id of the first thread that did so */
static uint64_t g_lost;         /* atomic: records lost because a thread's state could not be allocated */
static uint64_t g_window_start; /* ticks */
static int g_membarrier = -1;   /* 1: registered, 0: unavailable, -1: not tried */
static size_t g_retain_chunks = RETAIN_CHUNKS; /* set once, before the first window */
static opprof__recorder_config g_window_cfg; /* of the open or last window (under the session lock) */
static pthread_mutex_t g_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static opprof__thread *g_threads;
static uint32_t g_thread_count;

__thread opprof__fast *opprof__tls __attribute__((tls_model("initial-exec")));
/* The thread's whole state: its fast part is the first member. */
#define tls_thread ((opprof__thread *)opprof__tls)

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ADD_RELAXED(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

/* ---- thread registration and reset ---- */

__attribute__((cold, noinline)) static opprof__thread *thread_register(void) {
    opprof__thread *t = opprof__calloc(1, sizeof *t);
    if (!t) return NULL;
    t->tid = (int64_t)syscall(SYS_gettid);
    if (pthread_getname_np(pthread_self(), t->name, sizeof t->name) != 0) t->name[0] = '\0';
    pthread_mutex_lock(&g_threads_lock);
    t->index = ++g_thread_count;
    t->next_all = g_threads;
    g_threads = t;
    pthread_mutex_unlock(&g_threads_lock);
    t->ranges.at = &t->fast.ranges;
    t->memory.at = &t->fast.memory;
    t->shapes.at = &t->shapes_at;
    t->natives.at = &t->natives_at;
    t->marks.at = &t->fast.marks;
    opprof__tls = &t->fast;
    return t;
}

static void stream_reset(stream *s) {
    s->tail = NULL; /* the slow path starts again from head */
    s->at->next = s->at->limit = NULL;
    s->budget = 0;
    STORE_RELAXED(&s->at->count, 0);
}

/* The owner moves its buffers to the window of `epoch` (called while busy). */
__attribute__((cold, noinline)) static void thread_reset(opprof__thread *t, uint64_t epoch) {
    stream_reset(&t->ranges);
    stream_reset(&t->memory);
    stream_reset(&t->shapes);
    stream_reset(&t->natives);
    stream_reset(&t->marks);
    for (name_arena *a = t->names_head; a; a = a->next) a->used = 0;
    t->names_tail = t->names_head;
    t->fast.depth = 0;
    t->fast.token = ((epoch & 0xFFFFFFu) << 40) | ((uint64_t)(t->index & 0xFFFFFu) << 20);
    /* The inline path writes only what it knows how: TSC timestamps that a
     * thread reads in order (clock.c), no native stacks. */
    t->fast.ready = opprof__use_tsc && opprof__tsc_monotonic && !LOAD_RELAXED(&g_native) ? (epoch << 1) | 1 : 0;
    STORE_RELAXED(&t->dropped, 0);
    STORE_RELAXED(&t->unmatched_end, 0);
    STORE_RELAXED(&t->out_of_order_end, 0);
    STORE_RELAXED(&t->too_deep, 0);
    t->first_unmatched = t->first_out_of_order = t->first_too_deep = (misuse){0};
    STORE(&t->epoch, epoch);
}

/* Enter a record: this thread's state, flagged busy, with buffers of the
 * current window; NULL (not busy) when no window is open. */
static inline __attribute__((always_inline)) opprof__thread *record_enter(void) {
    opprof__thread *t = tls_thread;
    if (__builtin_expect(!t, 0) && !(t = thread_register())) {
        if (LOAD_RELAXED(&g_recording)) ADD_RELAXED(&g_lost, 1);
        return NULL;
    }
    STORE_RELAXED(&t->fast.busy, 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the closer's membarrier() makes it a full fence */
    uint64_t window = LOAD(&opprof__window);
    if (__builtin_expect(!(window & 1), 0)) {
        STORE(&t->fast.busy, 0);
        return NULL;
    }
    if (__builtin_expect(t->epoch != window >> 1, 0)) thread_reset(t, window >> 1);
    return t;
}

static inline __attribute__((always_inline)) void record_leave(opprof__thread *t) { STORE(&t->fast.busy, 0); }

/* Claim up to `want` events from the window's budget. */
static size_t budget_claim(size_t want) {
    if (LOAD_RELAXED(&g_max_events) == 0) return want;
    int64_t left = LOAD_RELAXED(&g_budget);
    while (left > 0) {
        int64_t take = left < (int64_t)want ? left : (int64_t)want;
        if (__atomic_compare_exchange_n(&g_budget, &left, left - take, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return (size_t)take;
    }
    return 0;
}

/* Slow path of reserving an item: the next chunk, or more budget. The fast
 * path is one compare: cursor < limit. */
__attribute__((cold, noinline)) static void *stream_reserve_slow(stream *s, size_t item, size_t per_chunk,
                                                                  uint64_t *dropped) {
    if (!s->tail || s->at->next == s->tail->data + per_chunk * item) {
        chunk *next = s->tail ? s->tail->next : s->head;
        if (!next) {
            size_t size = sizeof(chunk) + per_chunk * item;
            /* A stream's second chunk on is mapped whole at once, on huge
             * pages where the kernel gives them (a thread that fills one
             * chunk will fill the next: faulting 4 KiB pages one by one cost
             * twice as much an event, bench_overhead "fresh buffers"); the
             * first is left to fault in, so that a thread with a few events
             * holds a few pages. */
            next = opprof__alloc_chunk(size, s->head != NULL);
            if (!next) {
                ADD_RELAXED(dropped, 1);
                return NULL;
            }
            next->next = NULL;
            next->size = size;
            if (s->tail)
                s->tail->next = next;
            else
                s->head = next;
        }
        s->tail = next;
        s->at->next = next->data;
    }
    if (s->budget == 0 && (s->budget = budget_claim(BUDGET_CLAIM)) == 0) {
        s->at->limit = s->at->next;
        ADD_RELAXED(dropped, 1);
        return NULL;
    }
    size_t room = (size_t)(s->tail->data + per_chunk * item - s->at->next) / item;
    size_t n = s->budget < room ? s->budget : room;
    s->budget -= n;
    s->at->limit = s->at->next + n * item;
    void *p = s->at->next;
    s->at->next += item;
    return p;
}

static inline void *stream_reserve(stream *s, size_t item, size_t per_chunk, uint64_t *dropped) {
    if (__builtin_expect(s->at->next < s->at->limit, 1)) {
        void *p = s->at->next;
        s->at->next += item;
        return p;
    }
    return stream_reserve_slow(s, item, per_chunk, dropped);
}

static inline uint64_t thread_now(opprof__thread *t) {
    uint64_t now = opprof__ticks();
    if (__builtin_expect(now <= t->fast.last_ticks, 0)) now = t->fast.last_ticks + 1;
    t->fast.last_ticks = now;
    return now;
}

/* Token: epoch (low 24 bits) | thread index (20 bits) | depth (20 bits). */
static inline opprof_range make_token(const opprof__thread *t, uint32_t depth) { return t->fast.token | depth; }

/* ---- ranges ---- */

/* with_native_stack: the return addresses, raw; the frames inside opprof
 * are dropped when they are symbolized (native_text). */
__attribute__((cold, noinline)) static void record_native(opprof__thread *t, uint64_t seq) {
    native_slot *ns = stream_reserve(&t->natives, sizeof(native_slot), CHUNK_SHAPES, &t->dropped);
    if (!ns) return;
    int n = backtrace(ns->frames, NATIVE_CAPTURED);
    ns->seq = seq;
    ns->n = n > 0 ? (uint64_t)n : 0;
    STORE(&t->natives.at->count, t->natives.at->count + 1);
}

/* Record a begin; the caller has entered (t busy) and leaves after. */
static inline __attribute__((always_inline)) opprof_range begin_record(opprof__thread *t, const opprof_srcloc *loc,
                                                                        const char *name) {
    if (__builtin_expect(t->fast.depth >= MAX_DEPTH, 0)) {
        if (LOAD_RELAXED(&t->too_deep) == 0) t->first_too_deep = (misuse){name, NULL, thread_now(t)};
        ADD_RELAXED(&t->too_deep, 1);
        return 0;
    }
    slot *e = stream_reserve(&t->ranges, sizeof(slot), CHUNK_EVENTS, &t->dropped);
    if (!e) return 0;
    e->begin = thread_now(t);
    e->end = 0;
    e->name = name;
    e->loc = loc;
    t->fast.stack_seq[t->fast.depth] = t->ranges.at->count;
    if (__builtin_expect(LOAD_RELAXED(&g_native), 0)) record_native(t, t->ranges.at->count);
    STORE(&t->ranges.at->count, t->ranges.at->count + 1);
    t->fast.stack[t->fast.depth++] = e;
    return make_token(t, t->fast.depth);
}

opprof_range opprof_range_begin(const opprof_srcloc *loc) {
    if (__builtin_expect(!LOAD(&g_recording), 1)) return 0;
    opprof__thread *t = record_enter();
    if (!t) return 0;
    opprof_range r = begin_record(t, loc, loc->name);
    record_leave(t);
    return r;
}

/* Copy a formatted name into the thread's arena (kept until its next epoch). */
static const char *arena_copy(opprof__thread *t, const char *text, size_t len) {
    name_arena *a = t->names_tail;
    if (!a || a->used + len + 1 > NAME_ARENA_BYTES) {
        name_arena *next = a ? a->next : t->names_head;
        if (!next) {
            next = opprof__alloc(sizeof *next);
            if (!next) return NULL;
            next->next = NULL;
            if (a)
                a->next = next;
            else
                t->names_head = next;
        }
        next->used = 0;
        t->names_tail = a = next;
    }
    char *dst = a->text + a->used;
    memcpy(dst, text, len);
    dst[len] = '\0';
    a->used += len + 1;
    return dst;
}

opprof_range opprof_range_beginf(const opprof_srcloc *loc, const char *format, ...) {
    if (__builtin_expect(!LOAD(&g_recording), 1)) return 0;
    char buf[MAX_NAME];
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
    opprof__thread *t = record_enter();
    if (!t) return 0;
    opprof_range r = 0;
    const char *name = arena_copy(t, buf, (size_t)n);
    if (name)
        r = begin_record(t, loc, name);
    else
        ADD_RELAXED(&t->dropped, 1);
    record_leave(t);
    return r;
}

void opprof_range_end(opprof_range range) {
    if (range == 0) return;
    opprof__thread *t = tls_thread;
    uint32_t index = (uint32_t)((range >> 20) & 0xFFFFFu);
    if (!t || t->index != index) {
        if (ADD_RELAXED(&g_foreign_end, 1) == 0) STORE_RELAXED(&g_foreign_tid, (int64_t)syscall(SYS_gettid));
        return;
    }
    STORE_RELAXED(&t->fast.busy, 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    /* The window is closed, or this thread has not recorded in the open one
     * yet, or the range was begun in an earlier window: nothing to write (its
     * buffers may be gone). */
    uint64_t window = LOAD(&opprof__window);
    if (!(window & 1) || t->epoch != window >> 1 || (t->epoch & 0xFFFFFFu) != (range >> 40)) {
        record_leave(t);
        return;
    }
    uint32_t depth = (uint32_t)(range & 0xFFFFFu);
    if (depth > t->fast.depth || depth == 0) {
        if (LOAD_RELAXED(&t->unmatched_end) == 0) {
            const char *open = t->fast.depth ? t->fast.stack[t->fast.depth - 1]->name : NULL;
            t->first_unmatched = (misuse){NULL, open, thread_now(t)};
        }
        ADD_RELAXED(&t->unmatched_end, 1);
        record_leave(t);
        return;
    }
    uint64_t now = thread_now(t);
    if (depth < t->fast.depth) {
        /* Ranges opened inside this one are still open: close them here. */
        if (LOAD_RELAXED(&t->out_of_order_end) == 0)
            t->first_out_of_order = (misuse){t->fast.stack[t->fast.depth - 1]->name, t->fast.stack[depth - 1]->name, now};
        ADD_RELAXED(&t->out_of_order_end, t->fast.depth - depth);
        while (t->fast.depth > depth) STORE_RELAXED(&t->fast.stack[--t->fast.depth]->end, now);
    }
    STORE_RELAXED(&t->fast.stack[--t->fast.depth]->end, now);
    record_leave(t);
}

/* ---- memory ---- */

void opprof_record_memory(const void *addr, int64_t bytes, int64_t total_allocated) {
    if (__builtin_expect(!LOAD(&g_memory), 1)) return;
    opprof__thread *t = record_enter();
    if (!t) return;
    /* g_memory closes with the window, which record_enter checked while busy */
    mem_slot *m = stream_reserve(&t->memory, sizeof(mem_slot), CHUNK_MEMORY, &t->dropped);
    if (m) {
        m->ts = thread_now(t);
        m->addr = (uint64_t)(uintptr_t)addr;
        m->bytes = bytes;
        m->total = total_allocated;
        STORE(&t->memory.at->count, t->memory.at->count + 1);
    }
    record_leave(t);
}

/* ---- marks: counters, instants, arguments, flows, async, FLOPs, bytes ---- */

/* A mark now; `of_range`: attached to the innermost open range (none: nothing).
 * What the inline path of opprof.h falls back to. */
void opprof__mark_slow(uint32_t kind, const char *name, uint64_t value, int of_range) {
    if (__builtin_expect(!LOAD(&g_recording), 1) || !name) return;
    opprof__thread *t = record_enter();
    if (!t) return;
    uint32_t depth = t->fast.depth;
    if (!of_range || depth) {
        mark_slot *m = stream_reserve(&t->marks, sizeof(mark_slot), CHUNK_MARKS, &t->dropped);
        if (m) {
            m->ts = of_range ? t->fast.stack_seq[depth - 1] : thread_now(t);
            m->kind = kind;
            m->pad = 0;
            m->name = name;
            m->value = value;
            STORE(&t->marks.at->count, t->marks.at->count + 1);
        }
    }
    record_leave(t);
}

#define mark opprof__mark_slow
void opprof_counter_int(const char *name, int64_t value) { mark(OPPROF_MARK_COUNTER, name, opprof__double_bits((double)value), false); }
void opprof_counter_double(const char *name, double value) { mark(OPPROF_MARK_COUNTER, name, opprof__double_bits(value), false); }
void opprof_instant(const char *name, opprof_instant_scope scope) {
    mark(OPPROF_MARK_INSTANT, name, (uint64_t)scope, false);
}
void opprof_range_arg_int(const char *key, int64_t value) { mark(OPPROF_MARK_ARG_INT, key, (uint64_t)value, true); }
void opprof_range_arg_double(const char *key, double value) {
    mark(OPPROF_MARK_ARG_DOUBLE, key, opprof__double_bits(value), true);
}
void opprof_range_arg_str(const char *key, const char *value) {
    if (__builtin_expect(!LOAD(&g_recording), 1) || !key || !value) return;
    opprof__thread *t = record_enter();
    if (!t) return;
    uint32_t depth = t->fast.depth;
    size_t len = strnlen(value, MAX_NAME - 1);
    const char *copy = depth ? arena_copy(t, value, len) : NULL; /* kept until the capture is taken */
    mark_slot *m = copy ? stream_reserve(&t->marks, sizeof(mark_slot), CHUNK_MARKS, &t->dropped) : NULL;
    if (m) {
        *m = (mark_slot){t->fast.stack_seq[depth - 1], OPPROF_MARK_ARG_STR, 0, key, (uint64_t)(uintptr_t)copy};
        STORE(&t->marks.at->count, t->marks.at->count + 1);
    }
    record_leave(t);
}

void opprof_range_flops(int64_t flops) { mark(OPPROF_MARK_FLOPS, "flops", (uint64_t)flops, true); }
void opprof_range_bytes(int64_t bytes) { mark(OPPROF_MARK_BYTES, "bytes", (uint64_t)bytes, true); }
void opprof_flow_begin(uint64_t id) { mark(OPPROF_MARK_FLOW_BEGIN, "flow", id, false); }
void opprof_flow_end(uint64_t id) { mark(OPPROF_MARK_FLOW_END, "flow", id, false); }
void opprof_async_begin(const char *name, uint64_t id) { mark(OPPROF_MARK_ASYNC_BEGIN, name, id, false); }
void opprof_async_end(const char *name, uint64_t id) { mark(OPPROF_MARK_ASYNC_END, name, id, false); }
#undef mark

bool opprof_recording_shapes(void) { return LOAD_RELAXED(&g_shapes) != 0; }

void opprof_set_inputs(int n_inputs, const opprof_input *inputs) {
    if (!LOAD(&g_shapes) || n_inputs < 0 || (n_inputs && !inputs)) return;
    opprof__thread *t = record_enter();
    if (!t) return;
    uint32_t depth = t->fast.depth;
    if (depth >= 1) {
        shape_slot *sh = stream_reserve(&t->shapes, sizeof(shape_slot), CHUNK_SHAPES, &t->dropped);
        if (sh) {
            memset(sh, 0, sizeof *sh);
            sh->seq = t->fast.stack_seq[depth - 1];
            int used = 0;
            for (int i = 0; i < n_inputs && i < OPPROF_MAX_INPUTS; i++) {
                int nd = inputs[i].ndim < 0 ? 0 : inputs[i].ndim;
                if (nd > OPPROF_MAX_INPUT_DIMS || used + nd > SHAPE_DIMS) break; /* kept: the inputs that fit */
                sh->ndim[i] = (uint8_t)nd;
                sh->dtype[i] = (uint8_t)opprof__dtype_code(inputs[i].dtype);
                for (int d = 0; d < nd; d++) sh->dims[used + d] = inputs[i].dims[d];
                used += nd;
                sh->n_inputs = (uint8_t)(i + 1);
            }
            STORE(&t->shapes.at->count, t->shapes.at->count + 1);
        }
    }
    record_leave(t);
}

void opprof_thread_set_name(const char *name) {
    opprof__thread *t = tls_thread;
    if (!t && !(t = thread_register())) return;
    pthread_mutex_lock(&g_threads_lock);
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    pthread_mutex_unlock(&g_threads_lock);
}

/* ---- windows (called by session.c under its lock) ---- */

static void membarrier_setup(void) {
    if (g_membarrier >= 0) return;
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    g_membarrier = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                   syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* OPPROF_RETAIN_CHUNKS: how many 2 MiB chunks each stream of a thread keeps
 * for the next window (1 to 1048576); an invalid value is said on stderr and
 * the default kept. */
static void retain_setup(void) {
    static bool done;
    if (done) return;
    done = true;
    g_retain_chunks = (size_t)opprof__env_int("OPPROF_RETAIN_CHUNKS", 1, 1048576, RETAIN_CHUNKS);
}

void opprof__recorder_window_open(const opprof__recorder_config *cfg) {
    opprof__clock_init();
    membarrier_setup();
    retain_setup();
    STORE_RELAXED(&g_max_events, cfg->max_events);
    STORE_RELAXED(&g_budget, cfg->max_events ? (int64_t)cfg->max_events : 0);
    STORE_RELAXED(&g_foreign_end, 0);
    STORE_RELAXED(&g_lost, 0);
    g_window_start = opprof__ticks();
    STORE(&g_memory, cfg->profile_memory ? 1 : 0);
    STORE(&g_shapes, cfg->record_shapes ? 1 : 0);
    STORE(&g_native, cfg->with_native_stack ? 1 : 0);
    g_window_cfg = *cfg;
    uint64_t epoch = __atomic_add_fetch(&g_epoch, 1, __ATOMIC_RELEASE);
    STORE(&g_recording, 1);
    STORE(&opprof__window, (epoch << 1) | 1); /* last: a thread that sees it sees the rest */
}

/* Close, then wait until no thread is inside a record: from then on no
 * thread touches its buffers before the next window opens. Returns the
 * window's end: a tick read after the wait, so that it follows every
 * timestamp recorded in the window (a record that had passed its check when
 * the window closed may still have read the clock after the close began). */
uint64_t opprof__recorder_window_close(void) {
    STORE(&opprof__window, LOAD_RELAXED(&g_epoch) << 1);
    STORE(&g_recording, 0);
    STORE(&g_memory, 0);
    STORE(&g_shapes, 0);
    STORE(&g_native, 0);
    if (g_membarrier == 1) syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    pthread_mutex_lock(&g_threads_lock);
    for (opprof__thread *t = g_threads; t; t = t->next_all)
        /* A record takes nanoseconds; one that is still busy after a while
         * belongs to a thread that lost its CPU: let it have ours. */
        for (unsigned spins = 0; LOAD(&t->fast.busy); spins++) {
            if (spins >= 1000) {
                sched_yield();
                continue;
            }
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
        }
    pthread_mutex_unlock(&g_threads_lock);
    return opprof__ticks_fenced();
}

uint64_t opprof__recorder_window_start_ticks(void) { return g_window_start; }

bool opprof__recorder_thread_clean(void) {
    opprof__thread *t = tls_thread;
    return t && t->epoch == LOAD_RELAXED(&g_epoch) && LOAD_RELAXED(&t->dropped) == 0 && LOAD_RELAXED(&g_lost) == 0;
}

/* ---- collection ---- */

typedef struct name_cache {
    const char **keys; /* static name pointers */
    uint32_t *ids;
    size_t size;       /* power of two */
    size_t used;
} name_cache;

/* Intern a static name, looked up by its address first (call sites repeat). */
static int intern_static(opprof_capture *c, name_cache *nc, const char *name, uint32_t *id) {
    if (nc->used * 4 >= nc->size * 3) return opprof__capture_intern(c, name, strlen(name), id);
    size_t h = ((uintptr_t)name >> 3) * 0x9E3779B97F4A7C15ull;
    for (size_t i = h & (nc->size - 1);; i = (i + 1) & (nc->size - 1)) {
        if (nc->keys[i] == name) {
            *id = nc->ids[i];
            return 0;
        }
        if (!nc->keys[i]) {
            int rc = opprof__capture_intern(c, name, strlen(name), id);
            if (rc) return rc;
            nc->keys[i] = name;
            nc->ids[i] = *id;
            nc->used++;
            return 0;
        }
    }
}

static int64_t to_ns(uint64_t ticks, uint64_t origin, double ns_per_tick) {
    if (ticks <= origin) return 0;
    return (int64_t)((double)(ticks - origin) * ns_per_tick + 0.5);
}


/* Free a chain of chunks. */
static void free_chain(chunk *ch) {
    while (ch) {
        chunk *next = ch->next;
        opprof__free_chunk(ch);
        ch = next;
    }
}

/* Keep the first g_retain_chunks chunks of a stream for the next window and
 * free the rest (only when the close handshake makes that safe). */
static void trim_stream(stream *s) {
    if (g_membarrier != 1) return;
    chunk *ch = s->head;
    for (size_t i = 1; ch && i < g_retain_chunks; i++) ch = ch->next;
    if (ch) {
        free_chain(ch->next);
        ch->next = NULL;
    }
    s->tail = NULL; /* the owner resets its cursor when it next records */
    s->at->next = s->at->limit = NULL;
}

/* Sites: (call site, shapes) pairs, looked up through a small cache. */
typedef struct site_cache {
    const opprof_srcloc *loc;
    uint32_t shapes, site;
} site_cache;

static int site_of(opprof_capture *c, site_cache *cache, const opprof_srcloc *loc, uint32_t shapes, const char *native,
                   uint32_t *site) {
    if (native) return opprof__capture_intern_site(c, loc->file, loc->function, loc->line, shapes, native, site);
    site_cache *e = &cache[(((uintptr_t)loc >> 4) ^ shapes * 31u) & 255];
    if (e->loc == loc && e->shapes == shapes && e->site) {
        *site = e->site;
        return 0;
    }
    int rc = opprof__capture_intern_site(c, loc->file, loc->function, loc->line, shapes, NULL, site);
    if (!rc) *e = (site_cache){loc, shapes, *site};
    return rc;
}

/* "symbol+0x1f (libfoo.so);..." for a native stack, with dladdr; the
 * frames up to the last one inside opprof itself are left out. */
static void native_text(const native_slot *ns, opprof__strbuf *sb) {
    Dl_info self;
    const void *self_base = dladdr((void *)(uintptr_t)native_text, &self) ? self.dli_fbase : NULL;
    uint64_t first = 0;
    for (uint64_t i = 0; i < ns->n && i < 4; i++) {
        Dl_info info;
        if (dladdr(ns->frames[i], &info) && info.dli_fbase == self_base) first = i + 1;
    }
    for (uint64_t i = first; i < ns->n; i++) {
        Dl_info info;
        const char *module = "?", *symbol = NULL;
        uintptr_t offset = (uintptr_t)ns->frames[i];
        if (dladdr(ns->frames[i], &info) && info.dli_fname) {
            const char *slash = strrchr(info.dli_fname, '/');
            module = slash ? slash + 1 : info.dli_fname;
            if (info.dli_sname) {
                symbol = info.dli_sname;
                offset = (uintptr_t)ns->frames[i] - (uintptr_t)info.dli_saddr;
            } else {
                offset = (uintptr_t)ns->frames[i] - (uintptr_t)info.dli_fbase;
            }
        }
        opprof__sb_printf(sb, "%s%s+0x%lx (%s)", i > first ? ";" : "", symbol ? symbol : "", (unsigned long)offset,
                          module);
    }
}

static int shapes_of(opprof_capture *c, const shape_slot *sh, uint32_t *index) {
    opprof_shapes s;
    memset(&s, 0, sizeof s);
    s.n_inputs = sh->n_inputs;
    int used = 0;
    for (int i = 0; i < sh->n_inputs; i++) {
        s.ndim[i] = sh->ndim[i];
        for (int d = 0; d < sh->ndim[i]; d++) s.dims[i][d] = sh->dims[used + d];
        used += sh->ndim[i];
        snprintf(s.dtype[i], sizeof s.dtype[i], "%s", opprof__dtype_name(sh->dtype[i]));
    }
    return opprof__capture_intern_shapes(c, &s, index);
}

/* The thread's marks into the capture: times in ns, arguments to their events. */
static int collect_marks(opprof_capture *c, opprof__thread *t, uint32_t thread, size_t event_base, size_t n_ranges,
                         uint64_t start, double npt) {
    size_t count = LOAD(&t->marks.at->count);
    if (!count) return 0;
    if (opprof__grow_pages((void **)&c->marks, &c->cap_marks, c->n_marks + count, sizeof *c->marks))
        return OPPROF_ENOMEM;
    const chunk *ch = t->marks.head;
    for (size_t i = 0; i < count; i++) {
        if (i && i % CHUNK_MARKS == 0) ch = ch->next;
        const mark_slot *s = (const mark_slot *)ch->data + i % CHUNK_MARKS;
        bool of_range = s->kind >= OPPROF_MARK_ARG_INT && s->kind <= OPPROF_MARK_BYTES;
        if (of_range && s->ts >= n_ranges) continue; /* its range was dropped */
        opprof_mark k = {.ts_ns = of_range ? 0 : to_ns(s->ts, start, npt),
                         .kind = s->kind,
                         .thread = thread,
                         .event = of_range ? (int32_t)(event_base + s->ts) : -1};
        memcpy(&k.value, &s->value, sizeof k.value);
        if (opprof__capture_intern(c, s->name, strlen(s->name), &k.name)) return OPPROF_ENOMEM;
        if (s->kind == OPPROF_MARK_ARG_STR) {
            const char *str = (const char *)(uintptr_t)s->value;
            if (opprof__capture_intern(c, str, strlen(str), &k.value.str)) return OPPROF_ENOMEM;
        }
        c->marks[c->n_marks++] = k;
    }
    return 0;
}

/* A thread's memory events, in order. Their owners are linked by
 * opprof_capture_finish from the times in nanoseconds, by the rule a trace
 * read back follows too, so that a capture and its trace agree even where a
 * clock's granularity makes times equal. */
static void collect_memory(opprof_capture *c, opprof__thread *t, uint32_t thread_index, size_t m, uint64_t start,
                           double npt) {
    chunk *ch = t->memory.head;
    for (size_t i = 0; i < m; i++) {
        size_t k = i % CHUNK_MEMORY;
        if (i && k == 0) ch = ch->next;
        const mem_slot *s = (const mem_slot *)ch->data + k;
        opprof_memory_event *me = &c->mem[c->n_mem + i];
        me->ts_ns = to_ns(s->ts, start, npt);
        me->addr = s->addr;
        me->bytes = s->bytes;
        me->total_allocated = s->total;
        me->thread = thread_index;
        me->owner = -1;
        me->device_type = 0; /* the CPU */
        me->device_id = -1;
    }
    c->n_mem += m;
    trim_stream(&t->memory);
}

/* Where the shape and native-stack records of a thread are read from: they
 * are in the order of their ranges' sequence numbers. */
typedef struct site_cursor {
    size_t n_shapes, next_shape, n_natives, next_native;
    const chunk *shape_chunk, *native_chunk;
    opprof__strbuf native;
    site_cache cache[256];
} site_cursor;

/* The site of range number i (its call site, input shapes, native stack). */
static int site_of_range(opprof_capture *c, site_cursor *sc, const slot *s, size_t i, uint32_t *site) {
    uint32_t shapes = 0;
    int rc = 0;
    while (sc->next_shape < sc->n_shapes) {
        const shape_slot *sh = (const shape_slot *)sc->shape_chunk->data + sc->next_shape % CHUNK_SHAPES;
        if (sh->seq > i) break;
        if (sh->seq == i && (rc = shapes_of(c, sh, &shapes))) return rc;
        sc->next_shape++;
        if (sc->next_shape % CHUNK_SHAPES == 0 && sc->next_shape < sc->n_shapes) sc->shape_chunk = sc->shape_chunk->next;
    }
    const char *native_stack = NULL;
    while (sc->next_native < sc->n_natives) {
        const native_slot *ns = (const native_slot *)sc->native_chunk->data + sc->next_native % CHUNK_SHAPES;
        if (ns->seq > i) break;
        if (ns->seq == i) {
            sc->native.len = 0;
            native_text(ns, &sc->native);
            if (sc->native.error) return sc->native.error;
            native_stack = sc->native.data;
        }
        sc->next_native++;
        if (sc->next_native % CHUNK_SHAPES == 0 && sc->next_native < sc->n_natives)
            sc->native_chunk = sc->native_chunk->next;
    }
    return site_of(c, sc->cache, s->loc, shapes, native_stack, site);
}

/* One range as an event; an open one ends at the window's end. */
static int range_event(opprof_capture *c, name_cache *nc, const slot *s, uint32_t thread_index, uint64_t start,
                       uint64_t end, double npt, uint64_t *open_count, const char **open_name) {
    uint64_t e_end = LOAD_RELAXED(&s->end);
    if (e_end == 0 || e_end > end) {
        e_end = end;
        if (!*open_name) *open_name = s->name;
        (*open_count)++;
    }
    uint32_t id;
    int rc = s->name == s->loc->name ? intern_static(c, nc, s->name, &id)
                                     : opprof__capture_intern(c, s->name, strlen(s->name), &id);
    if (rc) return rc;
    opprof_event *ev = &c->events[c->n_events++];
    ev->start_ns = to_ns(s->begin, start, npt);
    ev->duration_ns = to_ns(e_end, start, npt) - ev->start_ns;
    if (ev->duration_ns < 0) ev->duration_ns = 0;
    ev->name = id;
    ev->thread = (uint16_t)thread_index;
    ev->parent = -1;
    ev->kind = (uint8_t)s->loc->kind;
    ev->category = s->loc->category ? opprof__capture_category_index(c, s->loc->category) : 0;
    ev->site = 0;
    return 0;
}

static int collect_thread(opprof_capture *c, opprof__thread *t, name_cache *nc, uint64_t start,
                          uint64_t end, double npt, uint64_t *open_count, const char **open_name) {
    bool want_sites = g_window_cfg.with_stack || g_window_cfg.record_shapes || g_window_cfg.with_native_stack;
    uint32_t thread_index;
    int rc = opprof_capture_add_thread(c, t->tid, t->name, &thread_index);
    if (rc) return rc;
    c->threads[thread_index].pid = (int64_t)getpid();
    size_t n = LOAD(&t->ranges.at->count), m = LOAD(&t->memory.at->count);
    size_t event_base = c->n_events; /* this thread's range with sequence number s is event_base + s */
    rc = opprof__grow_pages((void **)&c->events, &c->cap_events, c->n_events + n, sizeof(opprof_event));
    if (!rc) rc = opprof__grow_pages((void **)&c->mem, &c->cap_mem, c->n_mem + m, sizeof(opprof_memory_event));
    if (rc) return rc;
    collect_memory(c, t, thread_index, m, start, npt);

    site_cursor *sc = want_sites ? opprof__calloc(1, sizeof *sc) : NULL;
    if (want_sites && !sc) return OPPROF_ENOMEM;
    if (sc) {
        sc->n_shapes = LOAD(&t->shapes.at->count);
        sc->shape_chunk = t->shapes.head;
        sc->n_natives = LOAD(&t->natives.at->count);
        sc->native_chunk = t->natives.head;
    }
    /* Ranges, chunk by chunk; chunks past the retained ones are freed as
     * soon as they are converted, so memory peaks at the capture's size. */
    bool can_free = g_membarrier == 1;
    chunk *keep_last = NULL, *ch = t->ranges.head;
    size_t chunk_no = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        size_t k = i % CHUNK_EVENTS;
        if (i && k == 0) {
            chunk *next = ch->next;
            if (can_free && chunk_no >= g_retain_chunks)
                opprof__free_chunk(ch);
            else
                keep_last = ch;
            ch = next;
            chunk_no++;
        }
        const slot *s = (const slot *)ch->data + k;
        rc = range_event(c, nc, s, thread_index, start, end, npt, open_count, open_name);
        if (!rc && sc) rc = site_of_range(c, sc, s, i, &c->events[c->n_events - 1].site);
    }
    if (sc) {
        opprof__sb_free(&sc->native);
        opprof__free(sc);
    }
    if (!rc) rc = collect_marks(c, t, thread_index, event_base, n, start, npt);
    trim_stream(&t->marks);
    trim_stream(&t->shapes);
    trim_stream(&t->natives);
    if (can_free && chunk_no >= g_retain_chunks && n) {
        /* The chain from the retained ones on has been freed up to `ch`. */
        if (keep_last) keep_last->next = NULL;
        free_chain(ch);
        if (!keep_last) t->ranges.head = NULL;
        t->ranges.tail = NULL;
        t->ranges.at->next = t->ranges.at->limit = NULL;
    } else {
        trim_stream(&t->ranges);
    }
    return rc;
}

/* A misuse in words, for a warning: which range, on which thread, when. */
typedef struct misuse_where {
    char context[300]; /* "'inner' closed when 'outer' ended, " */
    char place[160];   /* "thread 'worker-1' (tid 1234) at 12.345 us" */
} misuse_where;

static void where_of(misuse_where *w, const opprof__thread *t, const misuse *m, uint64_t start, double npt) {
    const char *name = m->name ? m->name : "", *other = m->other ? m->other : "";
    if (m == &t->first_out_of_order)
        snprintf(w->context, sizeof w->context, "'%.120s' closed when '%.120s' ended, ", name, other);
    else if (m == &t->first_unmatched && *other)
        snprintf(w->context, sizeof w->context, "inside '%.120s', ", other);
    else if (*name)
        snprintf(w->context, sizeof w->context, "'%.120s', ", name);
    double us = m->ticks > start ? (double)to_ns(m->ticks, start, npt) / 1e3 : 0.0;
    snprintf(w->place, sizeof w->place, "thread '%.63s' (tid %lld) at %.3f us", t->name[0] ? t->name : "?",
             (long long)t->tid, us);
}

int opprof__recorder_snapshot(opprof_capture **out, uint64_t start, uint64_t end) {
    opprof_capture *c;
    int rc = opprof_capture_new(&c);
    if (rc) return rc;
    double npt = opprof__ns_per_tick();
    uint64_t epoch = LOAD(&g_epoch);
    uint64_t dropped = 0, unmatched = 0, out_of_order = 0, too_deep = 0, open_count = 0;
    const char *open_name = NULL;
    misuse_where w_unmatched = {0}, w_out_of_order = {0}, w_too_deep = {0};
    name_cache nc = {0};
    nc.size = 1024;
    nc.keys = opprof__calloc(nc.size, sizeof *nc.keys);
    nc.ids = opprof__calloc(nc.size, sizeof *nc.ids);
    if (!nc.keys || !nc.ids) rc = OPPROF_ENOMEM;

    pthread_mutex_lock(&g_threads_lock);
    /* The list is newest first; collect oldest first so the main thread leads. */
    size_t count = 0;
    for (opprof__thread *t = g_threads; t; t = t->next_all) count++;
    opprof__thread **order = rc ? NULL : opprof__calloc(count ? count : 1, sizeof *order);
    if (!rc && !order) rc = OPPROF_ENOMEM;
    if (!rc) {
        size_t i = count;
        for (opprof__thread *t = g_threads; t; t = t->next_all) order[--i] = t;
        for (i = 0; i < count && !rc; i++) {
            opprof__thread *t = order[i];
            if (LOAD(&t->epoch) != epoch) continue;
            dropped += LOAD_RELAXED(&t->dropped);
            if (!unmatched && LOAD_RELAXED(&t->unmatched_end)) where_of(&w_unmatched, t, &t->first_unmatched, start, npt);
            if (!out_of_order && LOAD_RELAXED(&t->out_of_order_end))
                where_of(&w_out_of_order, t, &t->first_out_of_order, start, npt);
            if (!too_deep && LOAD_RELAXED(&t->too_deep)) where_of(&w_too_deep, t, &t->first_too_deep, start, npt);
            unmatched += LOAD_RELAXED(&t->unmatched_end);
            out_of_order += LOAD_RELAXED(&t->out_of_order_end);
            too_deep += LOAD_RELAXED(&t->too_deep);
            rc = collect_thread(c, t, &nc, start, end, npt, &open_count, &open_name);
        }
    }
    pthread_mutex_unlock(&g_threads_lock);
    opprof__free(order);
    opprof__free(nc.keys);
    opprof__free(nc.ids);
    if (rc) {
        opprof_capture_free(c);
        return rc;
    }
    c->info.dropped_events = dropped + too_deep + LOAD_RELAXED(&g_lost);
    c->info.profile_memory = LOAD_RELAXED(&g_memory) || c->n_mem > 0;
    uint64_t foreign = LOAD_RELAXED(&g_foreign_end);
    if (unmatched)
        opprof__capture_warnf(c, "%llu range end(s) without a matching open range on their thread (first: %s%s)",
                              (unsigned long long)unmatched, w_unmatched.context, w_unmatched.place);
    if (foreign)
        opprof__capture_warnf(c, "%llu range end(s) called on another thread than their begin; ignored (first: "
                              "on tid %lld)", (unsigned long long)foreign, (long long)LOAD_RELAXED(&g_foreign_tid));
    if (out_of_order)
        opprof__capture_warnf(c, "%llu range(s) closed early because an enclosing range ended first (first: %s%s)",
                              (unsigned long long)out_of_order, w_out_of_order.context, w_out_of_order.place);
    if (too_deep)
        opprof__capture_warnf(c, "%llu range(s) dropped: more than %d ranges open on one thread (first: %s%s)",
                              (unsigned long long)too_deep, MAX_DEPTH, w_too_deep.context, w_too_deep.place);
    if (open_count)
        opprof__capture_warnf(c, "%llu range(s) still open at the end of the capture (first: '%s'); "
                              "cut at the capture's end",
                              (unsigned long long)open_count, open_name);
    c->info.duration_ns = to_ns(end, start, npt);
    rc = opprof_capture_finish(c);
    if (rc) {
        opprof_capture_free(c);
        return rc;
    }
    *out = c;
    return 0;
}
