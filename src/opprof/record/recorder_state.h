/* record/recorder_state.h - the recorder's buffers and global state, shared by
 * the hot path (record/recorder.c) and the capture built from it
 * (record/snapshot.c). Seen by the recording layer only. */
#ifndef OPPROF_RECORDER_STATE_H
#define OPPROF_RECORDER_STATE_H

#include "record/record.h"

#include <pthread.h>
#include <stddef.h>

enum {
    CHUNK_EVENTS = 65536,          /* 2 MiB of range slots: one huge page (alloc.c) */
    CHUNK_MEMORY = 87381,          /* 2 MiB of 24-byte memory slots */
    BUDGET_CLAIM = 8192,           /* events a thread takes from the event budget at a time */
    NAME_ARENA_BYTES = 65536,      /* formatted names */
    RETAIN_CHUNKS = 32,            /* chunks a stream keeps across windows (64 MiB), unless
                                      OPPROF_RETAIN_CHUNKS says otherwise */
    MAX_DEPTH = OPPROF__MAX_DEPTH, /* open ranges per thread */
    MAX_NAME = 256
};

/* The slots and the thread's hot fields are declared in opprof.h, whose
 * inline path writes them too. */
typedef opprof__slot slot;
typedef opprof__memory_slot mem_slot;
_Static_assert(sizeof(slot) == 32 && sizeof(mem_slot) == 24, "ranges are 32 bytes, memory events 24");

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
enum { CHUNK_MARKS = 65536 }; /* 2 MiB of marks */

typedef struct chunk {
    struct chunk *next;
    size_t size; /* bytes of the whole chunk */
    _Alignas(64) unsigned char data[];
} chunk;

/* A stream's first chunk is HEAD_CHUNK_BYTES (where its others are larger),
 * its pages faulted in as written, so that a thread with a few events holds
 * a few pages; the next ones are whole huge pages, populated ahead
 * (base/spare_chunks.c). A first chunk as large as the others faulted 512
 * pages one at a time: on these VMs, where a 4 KiB page costs the most, that
 * was 6.6 ns a malloc+free pair in a 1 M-pair run (36.4 ns a pair against
 * 29.0, 12 interleaved runs by hand; ARCHITECTURE.md). */
enum { HEAD_CHUNK_BYTES = 65536 - 128 };

/* The items of `item` bytes that chunk c holds. */
static inline size_t chunk_items(const chunk *c, size_t item) { return (c->size - sizeof(chunk)) / item; }

/* Past chunk c's last item of `item` bytes. */
static inline unsigned char *chunk_end(chunk *c, size_t item) { return c->data + chunk_items(c, item) * item; }

/* A stream read in order, chunk by chunk (record/snapshot.c). */
typedef struct stream_walk {
    const chunk *ch;
    size_t first, items; /* ch's first item's index in the stream; its items */
} stream_walk;

static inline stream_walk stream_walk_start(const chunk *head, size_t item) {
    return (stream_walk){head, 0, head ? chunk_items(head, item) : 0};
}

/* Item i of the stream, i at or after the last one asked for. */
static inline const void *stream_walk_at(stream_walk *w, size_t i, size_t item) {
    while (i >= w->first + w->items) {
        w->first += w->items;
        w->ch = w->ch->next;
        w->items = chunk_items(w->ch, item);
    }
    return w->ch->data + (i - w->first) * item;
}

typedef struct stream {
    chunk *head, *tail;
    opprof__cursor *at; /* next item in tail, and the count published */
    size_t budget;      /* items claimed from the window's budget, not yet under limit */
    size_t claim;       /* the size of its next claim */
} stream;

typedef struct name_arena {
    struct name_arena *next;
    size_t used;
    char text[NAME_ARENA_BYTES];
} name_arena;

/* The misuses a thread counts, X(NAME, WHAT): its counter misused[MISUSE_NAME],
 * where the first one happened first_misuse[MISUSE_NAME], and the warning,
 * "N WHAT (first: where)" (record/snapshot.c). */
#define RECORDER_TEXT_(x) #x
#define RECORDER_TEXT(x) RECORDER_TEXT_(x)
#define RECORDER_MISUSES(X)                                                             \
    X(UNMATCHED_END, "range end(s) without a matching open range on their thread")      \
    X(OUT_OF_ORDER_END, "range(s) closed early because an enclosing range ended first") \
    X(TOO_DEEP, "range(s) dropped: more than " RECORDER_TEXT(OPPROF__MAX_DEPTH) " ranges open on one thread")
enum {
#define MISUSE_ENUM(name, what) MISUSE_##name,
    RECORDER_MISUSES(MISUSE_ENUM)
#undef MISUSE_ENUM
    MISUSE_KINDS
};

/* Where a misuse happened: the range (and the range it concerns), and when. */
typedef struct misuse {
    const char *name, *other; /* NULL when unknown */
    uint64_t ticks;
} misuse;

typedef struct opprof__thread {
    struct opprof__thread *next_all;
    struct opprof__thread *next_free; /* on g_free_threads or g_exited_threads (under g_threads_lock) */
    uint64_t exited_in;               /* the epoch in which its thread exited holding events; 0: none */
    int exit_rounds;                  /* destructor rounds seen at its thread's exit */
    uint32_t index;                   /* 1-based, stable */
    int64_t tid;
    char name[64];
    uint64_t epoch; /* epoch of the buffered data; atomic */
    stream ranges, memory, shapes, natives, marks;
    opprof__cursor shapes_at, natives_at;
    name_arena *names_head, *names_tail;
    /* misuse and loss counters of this epoch; atomic (read by collector) */
    uint64_t dropped;
    uint64_t misused[MISUSE_KINDS];
    uint64_t reentered; /* records from a signal handler while the thread was inside one: dropped */
    /* the first misuse of each kind in this epoch, named in the warnings */
    misuse first_misuse[MISUSE_KINDS];
    /* last, so that the stack of open ranges (its bulk: 16 KiB) ends the
     * state, and the rest shares one page: busy, depth, ranges', memory's
     * and marks' cursors, the stack */
    opprof__fast fast;
} opprof__thread;

/* ---- global state ---- */
extern OPPROF__HIDDEN int g_memory;           /* atomic: ... and memory events are wanted */
extern OPPROF__HIDDEN int g_shapes;           /* atomic: ... and input shapes are wanted */
extern OPPROF__HIDDEN int g_native;           /* atomic: ... and native call stacks are wanted */
extern OPPROF__HIDDEN uint64_t g_epoch;       /* atomic */
extern OPPROF__HIDDEN uint64_t g_max_events;  /* atomic: 0 = unlimited */
extern OPPROF__HIDDEN int64_t g_budget;       /* atomic: events left in the window's budget */
extern OPPROF__HIDDEN uint64_t g_foreign_end; /* atomic: ends of ranges begun on other threads */
extern OPPROF__HIDDEN int64_t g_foreign_tid;  /* atomic: the system id of the first thread that did so */
extern OPPROF__HIDDEN uint64_t g_lost;        /* atomic: records lost because a thread's state could not be allocated */
extern OPPROF__HIDDEN uint64_t g_inputs_unrecorded; /* atomic: opprof_set_inputs in a window that records no shapes */
extern OPPROF__HIDDEN uint64_t g_window_start;      /* ticks */
extern OPPROF__HIDDEN int g_membarrier;             /* 1: registered, 0: unavailable, -1: not tried */
extern OPPROF__HIDDEN size_t g_retain_chunks;       /* set once, before the first window */
extern OPPROF__HIDDEN opprof__recorder_config g_window_cfg; /* of the open or last window (under the session lock) */
extern OPPROF__HIDDEN pthread_mutex_t g_threads_lock;
extern OPPROF__HIDDEN opprof__thread *g_threads;
extern OPPROF__HIDDEN uint32_t g_thread_count; /* states ever made (the list's length) */

/* The state whose fast part is `fast`, or NULL. */
static inline opprof__thread *thread_of(opprof__fast *fast) {
    return fast ? (opprof__thread *)(void *)((char *)fast - offsetof(opprof__thread, fast)) : NULL;
}
/* This thread's whole state, or NULL. */
#define tls_thread thread_of(opprof__tls)

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ADD_RELAXED(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define g_recording opprof__recording

#endif /* OPPROF_RECORDER_STATE_H */
