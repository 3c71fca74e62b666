/* recorder.c - the hot path: per-thread event buffers written without locks.
 *
 * Each thread owns a state, made at its first record and reused by a later
 * thread once the events it holds are collected. A range is one 32-byte slot,
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
#include "record/recorder_state.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
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

/* ---- global state ---- */
int opprof__recording;                  /* atomic: a window is open (read by the macros) */
uint64_t opprof__window;                /* atomic: (epoch << 1) | open; the inline path compares it */
int g_memory;                           /* atomic: ... and memory events are wanted */
int g_shapes;                           /* atomic: ... and input shapes are wanted */
int g_native;                           /* atomic: ... and native call stacks are wanted */
uint64_t g_epoch;                       /* atomic */
uint64_t g_max_events;                  /* atomic: 0 = unlimited */
int64_t g_budget;                       /* atomic: events left in the window's budget */
uint64_t g_foreign_end;                 /* atomic: ends of ranges begun on other threads */
int64_t g_foreign_tid;                  /* atomic: the system id of the first thread that did so */
uint64_t g_lost;                        /* atomic: records lost because a thread's state could not be allocated */
uint64_t g_inputs_unrecorded;           /* atomic: opprof_set_inputs in a window that records no shapes */
uint64_t g_window_start;                /* ticks */
int g_membarrier = -1;                  /* 1: registered, 0: unavailable, -1: not tried */
size_t g_retain_chunks = RETAIN_CHUNKS; /* set once, before the first window */
opprof__recorder_config g_window_cfg;   /* of the open or last window (under the session lock) */
pthread_mutex_t g_threads_lock = PTHREAD_MUTEX_INITIALIZER;
opprof__thread *g_threads;
uint32_t g_thread_count;
__thread opprof__fast *opprof__tls __attribute__((tls_model("initial-exec")));

/* ---- thread registration, exit and reuse ----
 * A state is made at a thread's first record and stays on g_threads, which
 * the collector walks. When its thread exits, the state is freed for reuse
 * at once if it holds no events of the current epoch; else it waits on the
 * exited list until that epoch's window has been collected (a later epoch).
 * A new thread takes a free state before it makes one, so the states are as
 * many as the threads alive at once plus those that exited holding the open
 * window's events, never as many as the threads ever made. */
static opprof__thread *g_free_threads, *g_exited_threads; /* under g_threads_lock; newest first */
static pthread_key_t g_exit_key;
static int g_exit_key_ok;
static pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;
/* Set when this thread's state was released at its exit: a record made
 * after that (by another key's destructor) is lost and counted. */
static __thread int t_released __attribute__((tls_model("initial-exec")));

static bool holds_events(opprof__thread *t) {
    if (LOAD(&t->epoch) != LOAD(&g_epoch)) return false;
    const stream *streams[] = {&t->ranges, &t->memory, &t->shapes, &t->natives, &t->marks};
    for (size_t i = 0; i < sizeof streams / sizeof *streams; i++)
        if (LOAD_RELAXED(&streams[i]->at->count)) return true;
    for (int k = 0; k < MISUSE_KINDS; k++)
        if (LOAD_RELAXED(&t->misused[k])) return true;
    return LOAD_RELAXED(&t->dropped) || LOAD_RELAXED(&t->reentered);
}

/* Free the exited states whose epoch has been collected (the list is newest
 * first, so when its head's has, all have). */
static void free_collected_locked(void) {
    if (!g_exited_threads || g_exited_threads->exited_in == LOAD(&g_epoch)) return;
    opprof__thread *last = g_exited_threads;
    while (last->next_free) last = last->next_free;
    last->next_free = g_free_threads;
    g_free_threads = g_exited_threads;
    g_exited_threads = NULL;
}

/* What a stream claimed of the window's budget and did not fill. */
static int64_t stream_unused(stream *s, size_t item) {
    int64_t unused = (int64_t)s->budget;
    if (s->at->limit && s->at->next) unused += (s->at->limit - s->at->next) / (int64_t)item;
    s->budget = 0;
    s->at->limit = s->at->next;
    return unused;
}

/* An ending thread gives back what it claimed of the budget and did not
 * use, inside a record, so that no window closes or opens meanwhile: short
 * threads kept their claims, and 66,000 of them filled 420,700 of a budget of
 * 640,000. */
static void budget_give_back(opprof__thread *t) {
    if (!LOAD_RELAXED(&g_max_events) || LOAD_RELAXED(&t->fast.busy)) return;
    STORE_RELAXED(&t->fast.busy, 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint64_t window = LOAD(&opprof__window);
    if ((window & 1) && t->epoch == window >> 1) {
        int64_t back = stream_unused(&t->ranges, sizeof(slot)) + stream_unused(&t->memory, sizeof(mem_slot)) +
                       stream_unused(&t->shapes, sizeof(shape_slot)) + stream_unused(&t->natives, sizeof(native_slot)) +
                       stream_unused(&t->marks, sizeof(mark_slot));
        if (back > 0) __atomic_add_fetch(&g_budget, back, __ATOMIC_RELAXED);
    }
    STORE(&t->fast.busy, 0);
}

static inline uint64_t thread_now(opprof__thread *t);
static inline void record_leave(opprof__thread *t);

/* The ranges a thread left open end with it, not with the capture
 * (pthread_exit from inside them, or a thread function that returns inside
 * a range): a thread of microseconds showed the capture's whole length. */
static void end_open_ranges(opprof__thread *t) {
    STORE_RELAXED(&t->fast.busy, 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint64_t window = LOAD(&opprof__window);
    if ((window & 1) && t->epoch == window >> 1 && t->fast.depth) {
        uint64_t now = thread_now(t);
        while (t->fast.depth) STORE_RELAXED(&t->fast.stack[--t->fast.depth]->end, now);
    }
    record_leave(t);
}

static void thread_exit(void *arg) {
    opprof__thread *t = arg;
    /* run in the destructors' next-to-last round, so that what other keys'
     * destructors record before it still lands; the last round is the
     * sanitizers' (ThreadSanitizer ends its thread state there: code run
     * after it faults) */
    if (++t->exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS - 1 && pthread_setspecific(g_exit_key, t) == 0) return;
    end_open_ranges(t);
    budget_give_back(t);
    t_released = 1;
    opprof__tls = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* a handler that records from here on sees no state */
    /* the stack of open ranges is the state's bulk, and dead now */
    opprof__release_pages(t->fast.stack, sizeof t->fast.stack + sizeof t->fast.stack_seq);
    pthread_mutex_lock(&g_threads_lock);
    free_collected_locked();
    if (holds_events(t)) {
        t->exited_in = LOAD(&g_epoch);
        t->next_free = g_exited_threads;
        g_exited_threads = t;
    } else {
        t->next_free = g_free_threads;
        g_free_threads = t;
    }
    pthread_mutex_unlock(&g_threads_lock);
}

static void exit_key_create(void) { g_exit_key_ok = pthread_key_create(&g_exit_key, thread_exit) == 0; }

/* A state for this thread: a free one, or a new one (zeroed but for its
 * stack, which depth 0 leaves unread: a new state touches one page). */
static opprof__thread *thread_state_locked(void) {
    free_collected_locked();
    opprof__thread *t = g_free_threads;
    if (t) {
        g_free_threads = t->next_free;
        return t;
    }
    if (!(t = opprof__alloc_chunk(sizeof *t, false))) return NULL;
    memset(t, 0, offsetof(opprof__thread, fast.stack));
    t->index = ++g_thread_count;
    t->next_all = g_threads;
    g_threads = t;
    t->ranges.at = &t->fast.ranges;
    t->memory.at = &t->fast.memory;
    t->shapes.at = &t->shapes_at;
    t->natives.at = &t->natives_at;
    t->marks.at = &t->fast.marks;
    return t;
}

static opprof__thread *thread_register_locked(void) {
    pthread_once(&g_exit_once, exit_key_create);
    char name[sizeof((opprof__thread *)0)->name];
    if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) name[0] = '\0';
    pthread_mutex_lock(&g_threads_lock);
    opprof__thread *t = thread_state_locked();
    if (t) {
        /* a reused state starts a window afresh at its first record */
        STORE_RELAXED(&t->epoch, 0);
        t->fast.ready = 0;
        t->fast.depth = 0;
        t->exited_in = 0;
        t->exit_rounds = 0;
        t->next_free = NULL;
        t->tid = (int64_t)syscall(SYS_gettid);
        memcpy(t->name, name, sizeof name);
    }
    pthread_mutex_unlock(&g_threads_lock);
    if (!t) return NULL;
    if (g_exit_key_ok) pthread_setspecific(g_exit_key, t);
    opprof__tls = &t->fast;
    return t;
}

/* Set while this thread registers (a lock is held): a signal handler that
 * records meanwhile is refused rather than taking the lock again. */
static __thread int t_registering __attribute__((tls_model("initial-exec")));

__attribute__((cold, noinline)) static opprof__thread *thread_register(void) {
    if (t_registering || t_released) return NULL;
    t_registering = 1;
    opprof__thread *t = thread_register_locked();
    t_registering = 0;
    return t;
}

static void stream_reset(stream *s) {
    s->tail = NULL; /* the slow path starts again from head */
    s->at->next = s->at->limit = NULL;
    s->budget = 0;
    s->claim = 0;
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
    /* The inline path writes only what it knows how: TSC timestamps (clock.c),
     * no native stacks. */
    t->fast.ready = opprof__use_tsc && !LOAD_RELAXED(&g_native) ? (epoch << 1) | 1 : 0;
    STORE_RELAXED(&t->dropped, 0);
    for (int k = 0; k < MISUSE_KINDS; k++) {
        STORE_RELAXED(&t->misused[k], 0);
        t->first_misuse[k] = (misuse){0};
    }
    STORE_RELAXED(&t->reentered, 0);
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
    /* a signal handler that records while this thread is inside a record:
     * dropped and counted, the interrupted record left as it was; opprof's
     * own allocations inside a record (opprof__own_allocations): dropped */
    if (__builtin_expect(LOAD_RELAXED(&t->fast.busy), 0)) {
        if (LOAD_RELAXED(&g_recording) && !opprof__own_allocations) ADD_RELAXED(&t->reentered, 1);
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

/* Claim events from the window's budget. A stream's claims start small and
 * double up to BUDGET_CLAIM, and none takes more than a sixteenth of what is
 * left: a stream that goes quiet holds little that another could have used. */
static size_t budget_claim(stream *s) {
    if (s->claim < 64) s->claim = 64;
    size_t want = s->claim;
    if (want < BUDGET_CLAIM) s->claim = want * 2;
    if (LOAD_RELAXED(&g_max_events) == 0) return BUDGET_CLAIM;
    int64_t left = LOAD_RELAXED(&g_budget);
    while (left > 0) {
        int64_t share = left / 16 > 0 ? left / 16 : 1;
        int64_t take = share < (int64_t)want ? share : (int64_t)want;
        if (__atomic_compare_exchange_n(&g_budget, &left, left - take, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return (size_t)take;
    }
    return 0;
}

/* Slow path of reserving an item: the next chunk, or more budget. The fast
 * path is one compare: cursor < limit. */
__attribute__((cold, noinline)) static void *stream_reserve_slow(stream *s, size_t item, size_t per_chunk,
                                                                 uint64_t *dropped) {
    if (!s->tail || s->at->next == chunk_end(s->tail, item)) {
        chunk *next = s->tail ? s->tail->next : s->head;
        if (!next) {
            /* A stream's second chunk on is mapped whole at once, on huge
             * pages where the kernel gives them (a thread that fills one
             * chunk will fill the next: faulting 4 KiB pages one by one cost
             * twice as much an event, bench_overhead "fresh buffers"); the
             * first is smaller and left to fault in (HEAD_CHUNK_BYTES). */
            size_t items = per_chunk;
            if (!s->head && per_chunk * item > HEAD_CHUNK_BYTES) items = HEAD_CHUNK_BYTES / item;
            size_t size = sizeof(chunk) + items * item;
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
    if (s->budget == 0 && (s->budget = budget_claim(s)) == 0) {
        s->at->limit = s->at->next;
        ADD_RELAXED(dropped, 1);
        return NULL;
    }
    size_t room = (size_t)(chunk_end(s->tail, item) - s->at->next) / item;
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
        if (LOAD_RELAXED(&t->misused[MISUSE_TOO_DEEP]) == 0)
            t->first_misuse[MISUSE_TOO_DEEP] = (misuse){name, NULL, thread_now(t)};
        ADD_RELAXED(&t->misused[MISUSE_TOO_DEEP], 1);
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
            next = opprof__alloc_chunk(sizeof *next, false); /* kept, as the thread's state */
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

/* A time given by the caller, kept inside the window and in this thread's
 * order of ends (never before the range's begin). */
static uint64_t given_ticks(uint64_t ticks, uint64_t not_before) {
    if (ticks < g_window_start) ticks = g_window_start;
    return ticks < not_before ? not_before : ticks;
}

/* An end now (given == 0) or at the time given (never before its begin, never
 * after now: the thread's next records must not start inside it). */
static void end_record(opprof_range range, opprof_time given) {
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
        if (LOAD_RELAXED(&t->misused[MISUSE_UNMATCHED_END]) == 0) {
            const char *open = t->fast.depth ? t->fast.stack[t->fast.depth - 1]->name : NULL;
            t->first_misuse[MISUSE_UNMATCHED_END] = (misuse){NULL, open, thread_now(t)};
        }
        ADD_RELAXED(&t->misused[MISUSE_UNMATCHED_END], 1);
        record_leave(t);
        return;
    }
    uint64_t now = thread_now(t);
    if (given && given < now) now = given_ticks(given, t->fast.stack[depth - 1]->begin); /* never in the future */
    if (depth < t->fast.depth) {
        /* Ranges opened inside this one are still open: close them here. */
        if (LOAD_RELAXED(&t->misused[MISUSE_OUT_OF_ORDER_END]) == 0)
            t->first_misuse[MISUSE_OUT_OF_ORDER_END] =
                (misuse){t->fast.stack[t->fast.depth - 1]->name, t->fast.stack[depth - 1]->name, now};
        ADD_RELAXED(&t->misused[MISUSE_OUT_OF_ORDER_END], t->fast.depth - depth);
        while (t->fast.depth > depth) STORE_RELAXED(&t->fast.stack[--t->fast.depth]->end, now);
    }
    STORE_RELAXED(&t->fast.stack[--t->fast.depth]->end, now);
    record_leave(t);
}

void opprof_range_end(opprof_range range) { end_record(range, 0); }

bool opprof__range_is_this_threads(opprof_range range) {
    const opprof__thread *t = tls_thread;
    return range != 0 && t && t->index == (uint32_t)((range >> 20) & 0xFFFFFu);
}

/* ---- ranges known after the fact ---- */

opprof_time opprof_now(void) { return opprof__ticks(); }

opprof_range opprof_range_begin_at(const opprof_srcloc *loc, opprof_time start) {
    if (__builtin_expect(!LOAD(&g_recording), 1) || !loc) return 0;
    opprof__thread *t = record_enter();
    if (!t) return 0;
    opprof_range r = begin_record(t, loc, loc->name);
    if (r) {
        slot *e = t->fast.stack[t->fast.depth - 1];
        uint64_t begin = given_ticks(start, 0);
        if (begin < e->begin) e->begin = begin; /* never in the future */
    }
    record_leave(t);
    return r;
}

void opprof_range_end_at(opprof_range range, opprof_time end) { end_record(range, end ? end : 1); }

/* ---- memory ---- */

void opprof_record_memory(const void *addr, int64_t bytes, int64_t total_allocated) {
    if (__builtin_expect(!LOAD(&g_memory), 1)) return;
    opprof__thread *t = record_enter();
    if (!t) return;
    /* g_memory closes with the window, which record_enter checked while busy */
    mem_slot *m = stream_reserve(&t->memory, sizeof(mem_slot), CHUNK_MEMORY, &t->dropped);
    if (m) {
        /* the total in the next slot (opprof.h), which may begin the next
         * chunk; none left: the event is kept, its total dropped and counted */
        mem_slot *total =
            total_allocated >= 0 ? stream_reserve(&t->memory, sizeof(mem_slot), CHUNK_MEMORY, &t->dropped) : NULL;
        if (total) *total = (mem_slot){.bytes = total_allocated};
        m->ts = thread_now(t) | (total ? OPPROF__MEMORY_TOTAL_NEXT : 0);
        m->addr = (uint64_t)(uintptr_t)addr;
        m->bytes = bytes;
        STORE(&t->memory.at->count, t->memory.at->count + 1 + (total != NULL));
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
void opprof_counter_int(const char *name, int64_t value) {
    mark(OPPROF_MARK_COUNTER, name, opprof__double_bits((double)value), false);
}
void opprof_counter_double(const char *name, double value) {
    mark(OPPROF_MARK_COUNTER, name, opprof__double_bits(value), false);
}
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

void opprof_range_part_of(uint64_t op_id) { mark(OPPROF_MARK_ARG_INT, OPPROF_PART_OF_KEY, op_id, true); }
void opprof_range_flops(int64_t flops) { mark(OPPROF_MARK_FLOPS, "flops", (uint64_t)flops, true); }
void opprof_range_bytes(int64_t bytes) { mark(OPPROF_MARK_BYTES, "bytes", (uint64_t)bytes, true); }
void opprof_flow_begin(uint64_t id) { mark(OPPROF_MARK_FLOW_BEGIN, "flow", id, false); }
void opprof_flow_end(uint64_t id) { mark(OPPROF_MARK_FLOW_END, "flow", id, false); }
void opprof_async_begin(const char *name, uint64_t id) { mark(OPPROF_MARK_ASYNC_BEGIN, name, id, false); }
void opprof_async_end(const char *name, uint64_t id) { mark(OPPROF_MARK_ASYNC_END, name, id, false); }
#undef mark

bool opprof_recording_shapes(void) { return LOAD_RELAXED(&g_shapes) != 0; }

void opprof_set_inputs(int n_inputs, const opprof_input *inputs) {
    if (!LOAD(&g_shapes)) { /* said in the capture's warnings: record_shapes is off */
        if (LOAD_RELAXED(&g_recording)) ADD_RELAXED(&g_inputs_unrecorded, 1);
        return;
    }
    if (n_inputs < 0 || (n_inputs && !inputs)) return;
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
    STORE_RELAXED(&g_inputs_unrecorded, 0);
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
/* The window closed: what every record checks says so. */
static void window_flags_off(void) {
    STORE(&opprof__window, LOAD_RELAXED(&g_epoch) << 1);
    STORE(&g_recording, 0);
    STORE(&g_memory, 0);
    STORE(&g_shapes, 0);
    STORE(&g_native, 0);
}

uint64_t opprof__recorder_window_close(void) {
    window_flags_off();
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

void opprof__recorder_forget_after_fork(void) {
    window_flags_off();
    pthread_mutex_init(&g_threads_lock, NULL); /* a parent's thread may have held it */
    for (opprof__thread *t = g_threads; t; t = t->next_all)
        if (t != tls_thread) STORE(&t->fast.busy, 0); /* those threads are not in this process */
}

uint64_t opprof__recorder_window_start_ticks(void) { return g_window_start; }

bool opprof__recorder_thread_clean(void) {
    opprof__thread *t = tls_thread;
    return t && t->epoch == LOAD_RELAXED(&g_epoch) && LOAD_RELAXED(&t->dropped) == 0 && LOAD_RELAXED(&g_lost) == 0;
}
