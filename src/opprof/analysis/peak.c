/* peak.c - each event's peak memory: the most bytes allocated above the
 * level at its start, over its calls' subtrees. */
#include "analysis/analysis.h"

#include <string.h>

/* An event's base is the level when it starts (per thread, events and memory
 * events in time order); its peak is the highest total of the memory events
 * of its subtree, carried from children to parents in one backward pass:
 * O(events + memory events), however deep the nesting. */
int opprof_capture_peak_memory(const opprof_capture *c, int64_t **out_peaks) {
    if (!c || !out_peaks) return OPPROF_EINVAL;
    size_t n = c->n_events;
    int64_t *base = opprof__alloc((n ? n : 1) * sizeof *base);
    int64_t *peak = opprof__alloc((n ? n : 1) * sizeof *peak);
    if (!base || !peak) {
        opprof__free(base);
        opprof__free(peak);
        return OPPROF_ENOMEM;
    }
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        uint32_t thread = c->events[i].thread;
        while (j < c->n_mem && c->mem[j].thread < thread) j++;
        /* the level before the thread's first memory event (the CPU's memory:
         * a device's has a total of its own) */
        size_t first = j;
        while (first < c->n_mem && c->mem[first].thread == thread && c->mem[first].device_type != 0) first++;
        int64_t level = first < c->n_mem && c->mem[first].thread == thread
                            ? opprof__sat_sub(c->mem[first].total_allocated, c->mem[first].bytes)
                            : 0;
        for (; i < n && c->events[i].thread == thread; i++) {
            while (j < c->n_mem && c->mem[j].thread == thread && c->mem[j].ts_ns < c->events[i].start_ns) {
                if (c->mem[j].device_type == 0) level = c->mem[j].total_allocated;
                j++;
            }
            base[i] = peak[i] = level;
        }
        while (j < c->n_mem && c->mem[j].thread == thread) j++;
    }
    for (size_t k = 0; k < c->n_mem; k++) {
        int32_t o = c->mem[k].owner;
        if (o >= 0 && c->mem[k].device_type == 0 && c->mem[k].total_allocated > peak[o])
            peak[o] = c->mem[k].total_allocated;
    }
    for (size_t after = n; after > 0; after--) { /* last first: an event's children are done */
        size_t i = after - 1;
        int32_t p = c->events[i].parent;
        if (p >= 0 && !opprof__is_device(&c->events[i]) && peak[i] > peak[p]) peak[p] = peak[i];
        peak[i] = peak[i] > base[i] ? opprof__sat_sub(peak[i], base[i]) : 0;
    }
    opprof__free(base);
    *out_peaks = peak; /* a public block as it is (opprof_free is opprof__free) */
    return 0;
}
