/* peak.c - each event's peak memory: the most bytes allocated above the
 * level at its start, over its calls' subtrees. */
#include "analysis/analysis.h"

#include <string.h>

/* The CPU memory level (the total of the last CPU memory event) before each
 * of a thread's events, found walking back: events and memory events are
 * both in time order per thread, so one backward pointer over each serves.
 * [lo, hi) are the thread's memory events. */
typedef struct level_walk {
    const opprof_memory_event *mem;
    size_t lo, before, cpu; /* before: the memory events earlier than the event; cpu: the last CPU one
                               of those + 1, or lo; both hi at first: while every memory event
                               of the thread is earlier than the event, its level is never used
                               (nothing in its subtree rose above it) */
    int64_t initial;        /* the level before the thread's first CPU memory event */
} level_walk;

static level_walk walk_thread(const opprof_capture *c, size_t lo, size_t hi) {
    level_walk w = {c->mem, lo, hi, hi, 0};
    size_t first = lo;
    while (first < hi && c->mem[first].device_type != 0) first++; /* a device's memory has a total of its own */
    if (first < hi) w.initial = opprof__sat_sub(c->mem[first].total_allocated, c->mem[first].bytes);
    return w;
}

/* The level at `start`; starts come in decreasing order. */
static int64_t level_at(level_walk *w, int64_t start) {
    while (w->before > w->lo && w->mem[w->before - 1].ts_ns >= start) w->before--;
    if (w->cpu > w->before) { /* the last CPU one is no longer earlier: look below */
        w->cpu = w->before;
        while (w->cpu > w->lo && w->mem[w->cpu - 1].device_type != 0) w->cpu--;
    }
    return w->cpu > w->lo ? w->mem[w->cpu - 1].total_allocated : w->initial;
}

/* Each event's peak is the highest total of the memory events of its
 * subtree, carried from children to parents in one backward pass (parents
 * precede children), less its level at start: O(events + memory events),
 * however deep the nesting, and one array: the result. */
int opprof_capture_peak_memory(const opprof_capture *c, int64_t **out_peaks) {
    if (!c || !out_peaks) return OPPROF_EINVAL;
    size_t n = c->n_events;
    int64_t *peak = opprof__alloc((n ? n : 1) * sizeof *peak);
    if (!peak) return OPPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) peak[i] = INT64_MIN; /* none yet: the level at start */
    for (size_t k = 0; k < c->n_mem; k++) {
        int32_t o = c->mem[k].owner;
        if (o >= 0 && c->mem[k].device_type == 0 && c->mem[k].total_allocated > peak[o])
            peak[o] = c->mem[k].total_allocated;
    }
    size_t hi = c->n_mem;
    for (size_t after = n; after > 0;) {
        uint32_t thread = c->events[after - 1].thread;
        while (hi > 0 && c->mem[hi - 1].thread > thread) hi--;
        size_t lo = hi;
        while (lo > 0 && c->mem[lo - 1].thread == thread) lo--;
        level_walk w = walk_thread(c, lo, hi);
        for (; after > 0 && c->events[after - 1].thread == thread; after--) { /* last first: children are done */
            size_t i = after - 1;
            int64_t base = level_at(&w, c->events[i].start_ns), top = peak[i] > base ? peak[i] : base;
            int32_t p = c->events[i].parent;
            if (p >= 0 && !opprof__is_device(&c->events[i]) && top > peak[p]) peak[p] = top;
            peak[i] = opprof__sat_sub(top, base);
        }
        hi = lo;
    }
    *out_peaks = peak; /* a public block as it is (opprof_free is opprof__free) */
    return 0;
}
