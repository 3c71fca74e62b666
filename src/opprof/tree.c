/* tree.c - nesting: each event's parent, each memory event's owner.
 *
 * Events are ordered per thread by start, longer first, so a parent always
 * precedes its children; one pass with a stack of open events then finds
 * every parent. This is the only place where nesting is derived: every
 * analysis and writer reads `parent` and `owner`. */
#include "internal.h"

#include <string.h>

static int event_before(const opprof_event *a, const opprof_event *b) {
    if (a->thread != b->thread) return a->thread < b->thread;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
    return a->duration_ns > b->duration_ns;
}

static int memory_before(const opprof_memory_event *a, const opprof_memory_event *b) {
    if (a->thread != b->thread) return a->thread < b->thread;
    return a->ts_ns < b->ts_ns;
}

/* A stable merge sort, generic over the element's "before" relation. */
#define DEFINE_MERGE_SORT(fn, type, before)                                       \
    static int fn(type *items, size_t n) {                                         \
        size_t i = 1;                                                              \
        while (i < n && !before(&items[i], &items[i - 1])) i++;                    \
        if (i >= n) return 0; /* already sorted */                                 \
        type *tmp = opprof__alloc(n * sizeof *tmp);                                \
        if (!tmp) return OPPROF_ENOMEM;                                            \
        type *src = items, *dst = tmp;                                             \
        for (size_t width = 1; width < n; width *= 2) {                            \
            for (size_t lo = 0; lo < n; lo += 2 * width) {                         \
                size_t mid = lo + width < n ? lo + width : n;                      \
                size_t hi = lo + 2 * width < n ? lo + 2 * width : n;               \
                size_t a = lo, b = mid, k = lo;                                    \
                while (a < mid && b < hi)                                          \
                    dst[k++] = before(&src[b], &src[a]) ? src[b++] : src[a++];     \
                while (a < mid) dst[k++] = src[a++];                               \
                while (b < hi) dst[k++] = src[b++];                                \
            }                                                                      \
            type *swap = src;                                                      \
            src = dst;                                                             \
            dst = swap;                                                            \
        }                                                                          \
        if (src != items) memcpy(items, src, n * sizeof *items);                   \
        opprof__dealloc(tmp, n * sizeof *tmp);                                     \
        return 0;                                                                  \
    }

DEFINE_MERGE_SORT(sort_events, opprof_event, event_before)
DEFINE_MERGE_SORT(sort_memory, opprof_memory_event, memory_before)

static int64_t end_of(const opprof_event *e) { return e->start_ns + e->duration_ns; }

/* Parents, by a stack of open events per thread. An event that starts inside
 * another but ends after it is cut to the enclosing event's end. */
static int link_parents(opprof_capture *c) {
    int32_t *stack = NULL;
    size_t depth = 0, cap = 0;
    uint64_t cut = 0;
    uint32_t thread = UINT32_MAX;
    for (size_t i = 0; i < c->n_events; i++) {
        opprof_event *e = &c->events[i];
        if (e->thread != thread) {
            depth = 0;
            thread = e->thread;
        }
        while (depth && end_of(&c->events[stack[depth - 1]]) <= e->start_ns) depth--;
        e->parent = depth ? stack[depth - 1] : -1;
        if (depth && end_of(e) > end_of(&c->events[stack[depth - 1]])) {
            e->duration_ns = end_of(&c->events[stack[depth - 1]]) - e->start_ns;
            cut++;
        }
        if (opprof__grow((void **)&stack, &cap, depth + 1, sizeof *stack)) {
            opprof__dealloc(stack, cap * sizeof *stack);
            return OPPROF_ENOMEM;
        }
        stack[depth++] = (int32_t)i;
    }
    opprof__dealloc(stack, cap * sizeof *stack);
    if (cut)
        return opprof__capture_warnf(c,
                                     "%llu event(s) overlapped an enclosing event without nesting; "
                                     "cut at the enclosing event's end",
                                     (unsigned long long)cut);
    return 0;
}

/* Owners by time: the innermost event with start <= ts < end (an event of
 * no duration: ts == start). At equal times an operator owns what it
 * allocates as it begins, and its caller what is freed as it ends: what
 * code does around a range with a clock too coarse to tell them apart. */
static bool owns(const opprof_event *e, int64_t ts) {
    return end_of(e) > ts || (e->duration_ns == 0 && e->start_ns == ts);
}

static int link_owners(opprof_capture *c) {
    int32_t *stack = NULL;
    size_t depth = 0, cap = 0, next = 0;
    uint32_t thread = UINT32_MAX;
    for (size_t j = 0; j < c->n_mem; j++) {
        opprof_memory_event *m = &c->mem[j];
        if (m->thread != thread) {
            thread = m->thread;
            depth = 0;
            while (next < c->n_events && c->events[next].thread < thread) next++;
        }
        while (next < c->n_events && c->events[next].thread == thread &&
               c->events[next].start_ns <= m->ts_ns) {
            const opprof_event *e = &c->events[next];
            while (depth && end_of(&c->events[stack[depth - 1]]) < e->start_ns) depth--;
            if (opprof__grow((void **)&stack, &cap, depth + 1, sizeof *stack)) {
                opprof__dealloc(stack, cap * sizeof *stack);
                return OPPROF_ENOMEM;
            }
            stack[depth++] = (int32_t)next++;
        }
        while (depth && !owns(&c->events[stack[depth - 1]], m->ts_ns)) depth--;
        m->owner = depth ? stack[depth - 1] : -1;
    }
    opprof__dealloc(stack, cap * sizeof *stack);
    return 0;
}

/* Fill unknown totals with the running sum of the capture, in time order. */
static int fill_totals(opprof_capture *c) {
    size_t unknown = 0;
    for (size_t j = 0; j < c->n_mem; j++) unknown += c->mem[j].total_allocated < 0;
    if (!unknown) return 0;
    /* Merge the threads' sorted runs by repeatedly taking the earliest head. */
    size_t nt = c->n_threads ? c->n_threads : 1;
    size_t *head = opprof__calloc(nt + 1, sizeof *head);
    if (!head) return OPPROF_ENOMEM;
    for (size_t j = 0; j < c->n_mem; j++) head[c->mem[j].thread + 1]++;
    for (size_t t = 0; t < nt; t++) head[t + 1] += head[t];
    size_t *end = opprof__alloc((nt + 1) * sizeof *end);
    if (!end) {
        opprof__dealloc(head, (nt + 1) * sizeof *head);
        return OPPROF_ENOMEM;
    }
    memcpy(end, head + 1, nt * sizeof *end);
    int64_t total = 0;
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t t = 0; t < nt; t++)
            if (head[t] < end[t] &&
                (best == SIZE_MAX || c->mem[head[t]].ts_ns < c->mem[head[best]].ts_ns))
                best = t;
        if (best == SIZE_MAX) break;
        opprof_memory_event *m = &c->mem[head[best]++];
        OPPROF__WRAP_ADD(total, m->bytes);
        if (m->total_allocated < 0) m->total_allocated = total;
    }
    opprof__dealloc(head, (nt + 1) * sizeof *head);
    opprof__dealloc(end, (nt + 1) * sizeof *end);
    return 0;
}

int opprof_capture_finish(opprof_capture *c) {
    if (!c || c->finished) return OPPROF_EINVAL;
    int rc = sort_events(c->events, c->n_events);
    if (!rc) rc = sort_memory(c->mem, c->n_mem);
    if (!rc) rc = link_parents(c);
    if (!rc) rc = link_owners(c);
    if (!rc) rc = fill_totals(c);
    if (rc) return rc;
    int64_t last = c->info.duration_ns;
    for (size_t i = 0; i < c->n_events; i++)
        if (end_of(&c->events[i]) > last) last = end_of(&c->events[i]);
    for (size_t j = 0; j < c->n_mem; j++)
        if (c->mem[j].ts_ns > last) last = c->mem[j].ts_ns;
    c->info.duration_ns = last;
    c->finished = true;
    return 0;
}
