/* samples.c - a capture's native call-stack samples and its times off the
 * CPU: storage, the stacks interned (a stack is a run of name ids in one
 * array), their order at finish, and each event's off-CPU time. */
#include "capture/capture.h"

#include <string.h>

typedef struct stack_key {
    const uint32_t *ids;
    const uint32_t *sources; /* NULL: none known */
    size_t n;
} stack_key;

static const uint32_t NO_SOURCE = UINT32_MAX;

/* A stack's hash: its names', and its sources' where known (a frame without
 * one hashes as NO_SOURCE, so that NULL and all-unknown sources agree). */
static OPPROF__HASH uint64_t hash_ids(const uint32_t *ids, const uint32_t *sources, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ids[i] ^ (uint64_t)(sources ? sources[i] : NO_SOURCE) << 32) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

static uint64_t stack_hash_of(const void *ctx, uint32_t item) {
    const opprof_capture *c = ctx;
    size_t first = c->stack_first[item];
    return hash_ids(c->frames + first, c->frame_sources ? c->frame_sources + first : NULL,
                    c->stack_first[item + 1] - first);
}

static bool same_sources(const uint32_t *a, const uint32_t *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((a ? a[i] : NO_SOURCE) != (b ? b[i] : NO_SOURCE)) return false;
    return true;
}

static bool stack_equal(const void *ctx, uint32_t item, const void *key) {
    const opprof_capture *c = ctx;
    const stack_key *k = key;
    size_t first = c->stack_first[item], n = c->stack_first[item + 1] - first;
    return n == k->n && (!n || (!memcmp(c->frames + first, k->ids, n * sizeof *k->ids) &&
                                same_sources(c->frame_sources ? c->frame_sources + first : NULL, k->sources, n)));
}

/* frame_sources made, every frame so far without a source. */
static int start_sources(opprof_capture *c) {
    size_t cap = c->cap_frames ? c->cap_frames : 1;
    if (!(c->frame_sources = opprof__alloc(cap * sizeof *c->frame_sources))) return OPPROF_ENOMEM;
    for (size_t i = 0; i < c->n_frames; i++) c->frame_sources[i] = NO_SOURCE;
    return 0;
}

static bool any_source(const uint32_t *sources, size_t n) {
    for (size_t i = 0; sources && i < n; i++)
        if (sources[i] != NO_SOURCE) return true;
    return false;
}

/* Room for n more frames (frame_sources, when kept, as large as frames). */
static int grow_frames(opprof_capture *c, size_t n) {
    size_t cap = c->cap_frames;
    if (opprof__grow((void **)&c->frames, &c->cap_frames, c->n_frames + n, sizeof *c->frames)) return OPPROF_ENOMEM;
    if (c->frame_sources && c->cap_frames != cap) {
        uint32_t *grown = opprof__realloc(c->frame_sources, c->cap_frames * sizeof *grown);
        if (!grown) return OPPROF_ENOMEM;
        c->frame_sources = grown;
    }
    return 0;
}

/* The index of the stack of these frames (and sources: NULL, none known), added if new. */
static int intern_stack(opprof_capture *c, const uint32_t *ids, const uint32_t *sources, size_t n, uint32_t *stack) {
    if (!c->cap_stack_first) { /* stack 0 starts at frame 0 */
        if (opprof__grow((void **)&c->stack_first, &c->cap_stack_first, 1, sizeof *c->stack_first))
            return OPPROF_ENOMEM;
        c->stack_first[0] = 0;
    }
    stack_key key = {ids, sources, n};
    size_t slot;
    int64_t found = opprof__index_lookup(&c->stack_index, c->n_stacks, stack_hash_of, stack_equal, c,
                                         hash_ids(ids, sources, n), &key, &slot);
    if (found < 0) return OPPROF_ENOMEM;
    if (found) return *stack = (uint32_t)found - 1, 0;
    if ((!c->frame_sources && any_source(sources, n) && start_sources(c)) || grow_frames(c, n) ||
        opprof__grow((void **)&c->stack_first, &c->cap_stack_first, c->n_stacks + 2, sizeof *c->stack_first))
        return OPPROF_ENOMEM;
    if (n) memcpy(c->frames + c->n_frames, ids, n * sizeof *ids); /* a stack may be empty: no array yet */
    for (size_t i = 0; c->frame_sources && i < n; i++)
        c->frame_sources[c->n_frames + i] = sources ? sources[i] : NO_SOURCE;
    c->n_frames += n;
    c->stack_first[c->n_stacks + 1] = (uint32_t)c->n_frames;
    c->stack_index.slots[slot] = (uint32_t)++c->n_stacks;
    *stack = (uint32_t)c->n_stacks - 1;
    return 0;
}

int opprof__capture_intern_stack(opprof_capture *c, const uint32_t *ids, const uint32_t *sources, size_t n,
                                 uint32_t *stack) {
    if (!c || c->finished || n > 4096 || c->n_frames + n > UINT32_MAX - 1) return OPPROF_EINVAL;
    return intern_stack(c, ids, sources, n, stack);
}

int opprof__capture_add_sample_stack(opprof_capture *c, uint32_t thread, int64_t ts_ns, uint32_t stack) {
    if (!c || c->finished || thread >= c->n_threads || !opprof__time_in_range(ts_ns) || stack >= c->n_stacks)
        return OPPROF_EINVAL;
    if (opprof__grow_pages((void **)&c->samples, &c->cap_samples, c->n_samples + 1, sizeof *c->samples))
        return OPPROF_ENOMEM;
    c->samples[c->n_samples++] = (opprof_sample){ts_ns, thread, stack, -1, 0};
    return 0;
}

int opprof__capture_add_sample_ids(opprof_capture *c, uint32_t thread, int64_t ts_ns, const uint32_t *ids,
                                   const uint32_t *sources, size_t n) {
    if (!c || c->finished || thread >= c->n_threads || !opprof__time_in_range(ts_ns)) return OPPROF_EINVAL;
    uint32_t stack;
    int rc = opprof__capture_intern_stack(c, ids, sources, n, &stack);
    return rc ? rc : opprof__capture_add_sample_stack(c, thread, ts_ns, stack);
}

int opprof_capture_add_sample_at(opprof_capture *c, uint32_t thread, int64_t ts_ns, const char *const *frames,
                                 const char *const *sources, size_t n_frames) {
    if (!c || (n_frames && !frames) || n_frames > 4096) return OPPROF_EINVAL;
    uint32_t ids[4096], where[4096];
    for (size_t i = 0; i < n_frames; i++) {
        if (!frames[i]) return OPPROF_EINVAL;
        if (opprof__capture_intern(c, frames[i], strlen(frames[i]), &ids[i])) return OPPROF_ENOMEM;
        where[i] = NO_SOURCE;
        if (sources && sources[i] && opprof__capture_intern(c, sources[i], strlen(sources[i]), &where[i]))
            return OPPROF_ENOMEM;
    }
    return opprof__capture_add_sample_ids(c, thread, ts_ns, ids, sources ? where : NULL, n_frames);
}

int opprof_capture_add_sample(opprof_capture *c, uint32_t thread, int64_t ts_ns, const char *const *frames,
                              size_t n_frames) {
    return opprof_capture_add_sample_at(c, thread, ts_ns, frames, NULL, n_frames);
}

int opprof_capture_add_off_cpu(opprof_capture *c, uint32_t thread, int64_t start_ns, int64_t duration_ns,
                               bool preempted) {
    if (!c || c->finished || thread >= c->n_threads || duration_ns < 0 || !opprof__time_in_range(start_ns) ||
        duration_ns > OPPROF_MAX_TIME_NS || !opprof__time_in_range(start_ns + duration_ns))
        return OPPROF_EINVAL;
    if (opprof__grow_pages((void **)&c->off_cpu, &c->cap_off_cpu, c->n_off_cpu + 1, sizeof *c->off_cpu))
        return OPPROF_ENOMEM;
    c->off_cpu[c->n_off_cpu++] = (opprof_off_cpu){start_ns, duration_ns, thread, preempted};
    return 0;
}

const opprof_sample *opprof_capture_samples(const opprof_capture *c, size_t *count) {
    if (count) *count = c ? c->n_samples : 0;
    return c ? c->samples : NULL;
}

const uint32_t *opprof_capture_stack(const opprof_capture *c, uint32_t stack, size_t *count) {
    if (count) *count = 0;
    if (!c || stack >= c->n_stacks) return NULL;
    static const uint32_t no_frames[1];
    if (count) *count = c->stack_first[stack + 1] - c->stack_first[stack];
    return c->frames ? c->frames + c->stack_first[stack] : no_frames; /* only empty stacks so far */
}

const uint32_t *opprof_capture_stack_sources(const opprof_capture *c, uint32_t stack, size_t *count) {
    if (count) *count = 0;
    if (!c || stack >= c->n_stacks) return NULL;
    if (count) *count = c->stack_first[stack + 1] - c->stack_first[stack];
    return c->frame_sources ? c->frame_sources + c->stack_first[stack] : NULL;
}

size_t opprof_capture_stack_count(const opprof_capture *c) { return c ? c->n_stacks : 0; }

const opprof_off_cpu *opprof_capture_off_cpu(const opprof_capture *c, size_t *count) {
    if (count) *count = c ? c->n_off_cpu : 0;
    return c ? c->off_cpu : NULL;
}

/* ---- order ---- */

static int sample_before(const opprof_sample *a, const opprof_sample *b) {
    return a->thread != b->thread ? a->thread < b->thread : a->ts_ns < b->ts_ns;
}
DEFINE_MERGE_SORT(sort_samples, opprof_sample, sample_before)

static int off_before(const opprof_off_cpu *a, const opprof_off_cpu *b) {
    return a->thread != b->thread ? a->thread < b->thread : a->start_ns < b->start_ns;
}
DEFINE_MERGE_SORT(sort_off, opprof_off_cpu, off_before)

int opprof__capture_sort_samples(opprof_capture *c) {
    int rc = sort_samples(c->samples, c->n_samples);
    return rc ? rc : sort_off(c->off_cpu, c->n_off_cpu);
}

void opprof__capture_free_samples(opprof_capture *c) {
    opprof__free_pages(c->samples, c->cap_samples * sizeof *c->samples);
    opprof__free_pages(c->off_cpu, c->cap_off_cpu * sizeof *c->off_cpu);
    opprof__free(c->frames);
    opprof__free(c->frame_sources);
    opprof__free(c->stack_first);
    opprof__index_free(&c->stack_index);
}

/* ---- each event's time off the CPU ---- */

/* Off-CPU time of thread t's intervals [first, last) within [a, b). */
static int64_t overlap(const opprof_off_cpu *off, size_t first, size_t last, int64_t a, int64_t b) {
    int64_t sum = 0;
    for (size_t k = first; k < last && off[k].start_ns < b; k++) {
        int64_t s = off[k].start_ns > a ? off[k].start_ns : a;
        int64_t e = off[k].start_ns + off[k].duration_ns < b ? off[k].start_ns + off[k].duration_ns : b;
        if (e > s) sum += e - s;
    }
    return sum;
}

int opprof_capture_event_off_cpu(const opprof_capture *c, int64_t **out_ns) {
    if (!c || !out_ns) return OPPROF_EINVAL;
    int64_t *v = opprof__calloc(c->n_events + 1, sizeof *v);
    if (!v) return OPPROF_ENOMEM;
    const opprof_off_cpu *off = c->off_cpu;
    size_t first = 0, last = 0; /* the thread's intervals that may still overlap: [first, last) */
    for (size_t i = 0; i < c->n_events && c->n_off_cpu; i++) {
        const opprof_event *e = &c->events[i];
        if (i == 0 || e->thread != c->events[i - 1].thread) {
            first = 0;
            while (first < c->n_off_cpu && off[first].thread < e->thread) first++;
            last = first;
            while (last < c->n_off_cpu && off[last].thread == e->thread) last++;
        }
        /* a thread's intervals do not overlap, and its events come by start: an
         * interval over before this event began is over for every later one */
        while (first < last && off[first].start_ns + off[first].duration_ns <= e->start_ns) first++;
        v[i] = overlap(off, first, last, e->start_ns, e->start_ns + e->duration_ns);
    }
    *out_ns = v;
    return 0;
}
