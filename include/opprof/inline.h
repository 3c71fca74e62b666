/*
 * opprof/inline.h - the recorder's inline fast path, which the macros of
 * <opprof/opprof.h> expand to. Not part of the API, and not a header of its
 * own: <opprof/opprof.h> includes it (the manual is there).
 */
#ifndef OPPROF_INLINE_H
#define OPPROF_INLINE_H
#ifndef OPPROF_OPPROF_H
#error "include <opprof/opprof.h>, not <opprof/inline.h>"
#endif
#include <opprof/mark_kinds.h>

/* ------------------------------------------------------------------------- */
/* Internal: the macros' inline fast path                                    */
/* ------------------------------------------------------------------------- */
/*
 * Not part of the API: every name with two underscores may change in any
 * version. src/opprof/record/recorder.c uses these same definitions; since code built
 * against this header writes them, their layout is part of the shared
 * library's ABI (a change to it changes the soname). Define OPPROF_NO_INLINE
 * before including this header to have the macros call the functions instead.
 *
 * The macros record a range or a memory event inline, without a call, when
 * the calling thread's buffers are ready for the open window, which is the
 * usual case: one load and compare says so, then a few stores and a TSC
 * read. Every other case (a thread's or a window's first record, a full
 * chunk, the event budget, misuse, a clock other than the TSC, native
 * stacks) calls the functions above, which do the same and more. A range
 * outside a window costs one load and a predicted branch.
 */

#ifndef OPPROF_ENABLE
#define OPPROF_ENABLE 1
#endif

/* Nonzero while a window records. */
extern OPPROF_API int opprof__recording;
#define OPPROF__RECORDING() __builtin_expect(__atomic_load_n(&opprof__recording, __ATOMIC_RELAXED), 0)

#define OPPROF__MAX_DEPTH 1024 /* open ranges per thread */

/* One range in a thread's buffer: 32 bytes. */
typedef struct opprof__slot {
    uint64_t begin;   /* ticks */
    uint64_t end;     /* ticks, 0 while open; atomic */
    const char *name; /* the call site's name, or a copy in the thread's name arena */
    const opprof_srcloc *loc;
} opprof__slot;

/* One memory event in a thread's buffer: 24 bytes, the fewest that hold its
 * time, address and size (an allocator hook's event: bench_record's floor
 * stores these). An event whose allocator gives its total takes two slots:
 * the first's ts has OPPROF__MEMORY_TOTAL_NEXT set and the second's `bytes`
 * is the total (32-byte slots that always had room for it stored 16 bytes
 * more a malloc+free pair: bench_record 25.5-31.6 ns a pair before, 24.6-28.7
 * after). */
typedef struct opprof__memory_slot {
    uint64_t ts; /* ticks, OPPROF__MEMORY_TOTAL_NEXT or'ed in */
    uint64_t addr;
    int64_t bytes;
} opprof__memory_slot;
#define OPPROF__MEMORY_TOTAL_NEXT (UINT64_C(1) << 63)

/* A counter sample, instant, argument, flow, async edge, FLOPs or bytes in a
 * thread's buffer: 32 bytes. kind: opprof_mark_kind (<opprof/capture.h>). */
typedef struct opprof__mark_slot {
    uint64_t ts; /* ticks; arguments, FLOPs, bytes: their range's sequence number */
    uint32_t kind;
    uint32_t pad;
    const char *name; /* the caller's string (a literal), or a copy in the thread's arena */
    uint64_t value;   /* int64_t, double's bits, an arena string, or an id */
} opprof__mark_slot;
enum {
#define OPPROF__MARK_KIND_INLINE(name, value, phase, of_range, has_id, category) OPPROF__MARK_##name = value,
    OPPROF_MARK_KINDS(OPPROF__MARK_KIND_INLINE)
#undef OPPROF__MARK_KIND_INLINE
};
/** The library's path of every mark (what the inline path falls back to). */
OPPROF_API void opprof__mark_slow(uint32_t kind, const char *name, uint64_t value, int of_range);

/* Where the next item of a thread's stream goes. */
typedef struct opprof__cursor {
    unsigned char *next;  /* owner only */
    unsigned char *limit; /* next may advance up to here (chunk end or budget) */
    uint64_t count;       /* items published; atomic */
} opprof__cursor;

/* The part of a thread's recording state that the inline path uses. */
typedef struct opprof__fast {
    int busy;            /* atomic: inside a record (the close handshake) */
    uint32_t depth;      /* open ranges */
    uint64_t ready;      /* the opprof__window value this thread's buffers are
                            ready for inline recording; 0: never */
    uint64_t token;      /* epoch and thread bits of this thread's range handles */
    uint64_t last_ticks; /* the thread's last timestamp: both paths keep them increasing */
    opprof__cursor ranges, memory, marks;
    opprof__slot *stack[OPPROF__MAX_DEPTH]; /* open slots, innermost last */
    uint64_t stack_seq[OPPROF__MAX_DEPTH];  /* their sequence numbers */
} opprof__fast;

/* Odd while a window records: (epoch << 1) | 1; atomic. */
extern OPPROF_API uint64_t opprof__window;

#if OPPROF_ENABLE && (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(OPPROF_NO_INLINE)
#define OPPROF__INLINE 1
/* This thread's state; NULL before its first record. */
extern OPPROF_API __thread opprof__fast *opprof__tls __attribute__((tls_model("initial-exec")));

/* Ask for the cache line 256 bytes ahead of the slot being written, for
 * writing: a capture streams through memory that is not in cache, and this
 * hides the wait for its lines (bench_overhead: 25.5 -> 23.7 ns a range).
 * A prefetch never faults, even past the end of a buffer. */
#define OPPROF__PREFETCH(slot) __builtin_prefetch((const char *)(slot) + 256, 1, 3)

/* The TSC, never at or before this thread's last timestamp: where the kernel
 * does not trust the CPUs' TSCs to agree (a VM booted with tsc=unstable), a
 * thread moved to another CPU could read an earlier count. One compare keeps
 * a thread's events in order, as the library's path does (0.5; 0.4 left
 * such hosts to the library's path, at 26 ns a range more). */
static inline OPPROF__NOINSTR __attribute__((always_inline)) uint64_t opprof__now(opprof__fast *t) {
    uint64_t now = __builtin_ia32_rdtsc();
    if (__builtin_expect(now <= t->last_ticks, 0)) now = t->last_ticks + 1;
    t->last_ticks = now;
    return now;
}

/* Enter: flag busy, then check the window (the closer's membarrier makes the
 * compiler fence a full one). 1 when the inline path may record, 0 when it
 * may not (leave, then the library's path), -1 when this thread is already
 * inside a record (a signal handler interrupted it): nothing may be touched,
 * not even `busy`; the library's path drops the record and counts it. A
 * signal between the check and the flag runs its own record to the end
 * before this one begins, which is safe. */
static inline OPPROF__NOINSTR __attribute__((always_inline)) int opprof__enter(opprof__fast *t) {
    if (__builtin_expect(__atomic_load_n(&t->busy, __ATOMIC_RELAXED), 0)) return -1;
    __atomic_store_n(&t->busy, 1, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return __atomic_load_n(&opprof__window, __ATOMIC_RELAXED) == t->ready;
}

static inline OPPROF__NOINSTR __attribute__((always_inline)) void opprof__leave(opprof__fast *t) {
    __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

static inline OPPROF__NOINSTR __attribute__((always_inline)) opprof_range
opprof__range_begin(const opprof_srcloc *loc) {
    opprof__fast *t = opprof__tls;
    if (__builtin_expect(t != 0, 1)) {
        uint32_t depth = t->depth;
        int in = opprof__enter(t);
        if (__builtin_expect(in > 0 && t->ranges.next < t->ranges.limit && depth < OPPROF__MAX_DEPTH, 1)) {
            opprof__slot *e = (opprof__slot *)(void *)t->ranges.next;
            uint64_t seq = t->ranges.count;
            t->ranges.next += sizeof *e;
            OPPROF__PREFETCH(e);
            t->stack[depth] = e;
            t->stack_seq[depth] = seq;
            t->depth = depth + 1;
            e->name = loc->name;
            e->loc = loc;
            __atomic_store_n(&e->end, 0, __ATOMIC_RELAXED);
            e->begin = opprof__now(t);
            __atomic_store_n(&t->ranges.count, seq + 1, __ATOMIC_RELEASE);
            opprof__leave(t);
            return t->token | (depth + 1);
        }
        if (in >= 0) opprof__leave(t); /* -1: the interrupted record's flag, not ours */
    }
    return opprof_range_begin(loc);
}

static inline OPPROF__NOINSTR __attribute__((always_inline)) void opprof__range_end(opprof_range range) {
    opprof__fast *t = opprof__tls;
    if (__builtin_expect(t != 0, 1)) {
        uint32_t depth = t->depth;
        int in = opprof__enter(t);
        if (__builtin_expect(in > 0 && range == (t->token | depth) && depth != 0, 1)) {
            uint64_t now = opprof__now(t);
            t->depth = depth - 1;
            __atomic_store_n(&t->stack[depth - 1]->end, now, __ATOMIC_RELAXED);
            opprof__leave(t);
            return;
        }
        if (in >= 0) opprof__leave(t); /* -1: the interrupted record's flag, not ours */
    }
    opprof_range_end(range);
}

static inline OPPROF__NOINSTR __attribute__((always_inline)) void opprof__record_memory(const void *addr, int64_t bytes,
                                                                                        int64_t total_allocated) {
    opprof__fast *t = opprof__tls;
    if (__builtin_expect(t != 0, 1)) {
        int in = opprof__enter(t);
        unsigned with_total = total_allocated >= 0; /* a constant 0 in a hook that passes -1 */
        if (__builtin_expect(
                in > 0 && t->memory.limit - t->memory.next > (long)(with_total * sizeof(opprof__memory_slot)), 1)) {
            opprof__memory_slot *m = (opprof__memory_slot *)(void *)t->memory.next;
            uint64_t seq = t->memory.count;
            t->memory.next += (1 + with_total) * sizeof *m;
            OPPROF__PREFETCH(m);
            m->addr = (uint64_t)(uintptr_t)addr;
            m->bytes = bytes;
            if (with_total) {
                m[1].ts = 0;
                m[1].addr = 0;
                m[1].bytes = total_allocated;
            }
            m->ts = opprof__now(t) | (with_total ? OPPROF__MEMORY_TOTAL_NEXT : 0);
            __atomic_store_n(&t->memory.count, seq + 1 + with_total, __ATOMIC_RELEASE);
            opprof__leave(t);
            return;
        }
        if (in >= 0) opprof__leave(t); /* -1: the interrupted record's flag, not ours */
    }
    opprof_record_memory(addr, bytes, total_allocated);
}
/* A mark: a timestamp (or the innermost range's sequence number) and three stores. */
static inline OPPROF__NOINSTR __attribute__((always_inline)) void opprof__mark(uint32_t kind, const char *name,
                                                                               uint64_t value, int of_range) {
    opprof__fast *t = opprof__tls;
    if (__builtin_expect(t != 0, 1)) {
        uint32_t depth = t->depth;
        int in = opprof__enter(t);
        if (__builtin_expect(in > 0 && t->marks.next < t->marks.limit && (!of_range || depth), 1)) {
            opprof__mark_slot *m = (opprof__mark_slot *)(void *)t->marks.next;
            uint64_t seq = t->marks.count;
            t->marks.next += sizeof *m;
            m->kind = kind;
            m->pad = 0;
            m->name = name;
            m->value = value;
            m->ts = of_range ? t->stack_seq[depth - 1] : opprof__now(t);
            __atomic_store_n(&t->marks.count, seq + 1, __ATOMIC_RELEASE);
            opprof__leave(t);
            return;
        }
        if (in >= 0) opprof__leave(t); /* -1: the interrupted record's flag, not ours */
    }
    opprof__mark_slow(kind, name, value, of_range);
}
#else
#define OPPROF__INLINE 0
#define opprof__range_begin opprof_range_begin
#define opprof__range_end opprof_range_end
#define opprof__record_memory opprof_record_memory
#define opprof__mark opprof__mark_slow
#endif

/* The marks' functions, inline where the macros are: calls as written go to
 * the inline path ((opprof_counter_int)(...) or a pointer reaches the
 * library's function, which does the same). */
static inline OPPROF__NOINSTR uint64_t opprof__double_bits(double v) {
    union {
        double d;
        uint64_t u;
    } x;
    x.d = v;
    return x.u;
}
#if OPPROF_ENABLE && !defined(OPPROF_BUILDING)
#define opprof_counter_int(name, value) \
    opprof__mark(OPPROF__MARK_COUNTER, (name), opprof__double_bits((double)(int64_t)(value)), 0)
#define opprof_counter_double(name, value) \
    opprof__mark(OPPROF__MARK_COUNTER, (name), opprof__double_bits((double)(value)), 0)
#define opprof_instant(name, scope) opprof__mark(OPPROF__MARK_INSTANT, (name), (uint64_t)(scope), 0)
#define opprof_range_arg_int(key, value) opprof__mark(OPPROF__MARK_ARG_INT, (key), (uint64_t)(int64_t)(value), 1)
#define opprof_range_arg_double(key, value) \
    opprof__mark(OPPROF__MARK_ARG_DOUBLE, (key), opprof__double_bits((double)(value)), 1)
#define opprof_range_flops(n) opprof__mark(OPPROF__MARK_FLOPS, "flops", (uint64_t)(int64_t)(n), 1)
#define opprof_range_bytes(n) opprof__mark(OPPROF__MARK_BYTES, "bytes", (uint64_t)(int64_t)(n), 1)
#define opprof_range_part_of(id) opprof__mark(OPPROF__MARK_ARG_INT, OPPROF_PART_OF_KEY, (uint64_t)(id), 1)
#define opprof_flow_begin(id) opprof__mark(OPPROF__MARK_FLOW_BEGIN, "flow", (uint64_t)(id), 0)
#define opprof_flow_end(id) opprof__mark(OPPROF__MARK_FLOW_END, "flow", (uint64_t)(id), 0)
#define opprof_async_begin(name, id) opprof__mark(OPPROF__MARK_ASYNC_BEGIN, (name), (uint64_t)(id), 0)
#define opprof_async_end(name, id) opprof__mark(OPPROF__MARK_ASYNC_END, (name), (uint64_t)(id), 0)
#elif !OPPROF_ENABLE && !defined(OPPROF_BUILDING) /* compiled out: named, not evaluated */
#define opprof_counter_int(name, value) ((void)sizeof(name), (void)sizeof(value))
#define opprof_counter_double(name, value) ((void)sizeof(name), (void)sizeof(value))
#define opprof_instant(name, scope) ((void)sizeof(name), (void)sizeof(scope))
#define opprof_range_arg_int(key, value) ((void)sizeof(key), (void)sizeof(value))
#define opprof_range_arg_double(key, value) ((void)sizeof(key), (void)sizeof(value))
#define opprof_range_arg_str(key, value) ((void)sizeof(key), (void)sizeof(value))
#define opprof_range_flops(n) ((void)sizeof(n))
#define opprof_range_bytes(n) ((void)sizeof(n))
#define opprof_flow_begin(id) ((void)sizeof(id))
#define opprof_flow_end(id) ((void)sizeof(id))
#define opprof_async_begin(name, id) ((void)sizeof(name), (void)sizeof(id))
#define opprof_async_end(name, id) ((void)sizeof(name), (void)sizeof(id))
#endif

#endif /* OPPROF_INLINE_H */
