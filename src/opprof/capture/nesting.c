/* nesting.c - nesting: each event's parent, each memory event's owner.
 *
 * Events are ordered per thread by start, longer first, so a parent always
 * precedes its children; one pass with a stack of open events then finds
 * every parent. This is the only place where nesting is derived: every
 * analysis and writer reads `parent` and `owner`. */
#include "capture/capture.h"

#include <pthread.h>
#include <stddef.h>
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

DEFINE_MERGE_SORT(sort_memory, opprof_memory_event, memory_before)

static int mark_before(const opprof_mark *a, const opprof_mark *b) {
    if (a->thread != b->thread) return a->thread < b->thread;
    return a->ts_ns < b->ts_ns;
}
DEFINE_MERGE_SORT(sort_marks, opprof_mark, mark_before)

#define is_device opprof__is_device

/* Events are sorted as keys of 24 bytes, each with the index it had, then
 * moved once, in place, to where their keys went: sorting the 32-byte
 * events moved them through every merge pass (the most of finishing a
 * Kineto trace, whose threads' events come in runs of four), and gathering
 * them into a second array held the events twice at the read's peak.
 * The keys are first put in their thread's bucket (in the order they come,
 * so that ties keep it); each bucket is then sorted, a large capture's in
 * two halves of its threads, one half on a helper thread. Device
 * activities' links to their launching operators and arguments' events
 * (indices set before the sort) follow the events. */
typedef struct event_key {
    int64_t start_ns, duration_ns;
    uint32_t origin;
} event_key;
static int key_before(const event_key *a, const event_key *b) {
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
    return a->duration_ns > b->duration_ns;
}
DEFINE_MERGE_SORT(sort_keys, event_key, key_before)

/* Events from which the buckets are sorted on two threads. */
enum { TWO_THREADS_MIN_EVENTS = 1 << 16 };

typedef struct buckets {
    event_key *keys;
    const size_t *first; /* thread t's keys: keys[first[t] .. first[t + 1]) */
    uint32_t *position;  /* an event's index once sorted */
    size_t from, to;     /* the threads sorted here */
    int rc;
} buckets;

static void *sort_buckets(void *arg) {
    buckets *b = arg;
    for (size_t t = b->from; t < b->to && !b->rc; t++)
        b->rc = sort_keys(b->keys + b->first[t], b->first[t + 1] - b->first[t]);
    for (size_t k = b->first[b->from]; k < b->first[b->to] && !b->rc; k++) b->position[b->keys[k].origin] = (uint32_t)k;
    return NULL;
}

/* Each event moved to its position, in place: a cycle at a time (the event
 * at i goes to position[i]), `done` a bit per place. No second array of
 * events: that was a third of the peak of reading a large trace. */
#define MOVE_IN_PLACE(fn, type)                                                       \
    static void fn(type *items, size_t n, const uint32_t *position, uint64_t *done) { \
        memset(done, 0, (n / 64 + 1) * sizeof *done);                                 \
        for (size_t i = 0; i < n; i++) {                                              \
            if (done[i / 64] >> (i % 64) & 1) continue;                               \
            type carried = items[i];                                                  \
            for (size_t j = position[i]; j != i; j = position[j]) {                   \
                type next = items[j];                                                 \
                items[j] = carried;                                                   \
                done[j / 64] |= 1ull << (j % 64);                                     \
                carried = next;                                                       \
            }                                                                         \
            items[i] = carried;                                                       \
            done[i / 64] |= 1ull << (i % 64);                                         \
        }                                                                             \
    }
MOVE_IN_PLACE(move_in_place, opprof_event)
MOVE_IN_PLACE(move_ids_in_place, int64_t) /* the arguments set aside follow their events */

/* The buckets sorted and gathered: threads [0, half) here, the rest beside
 * when the capture is large, may use two threads, and has a bucket boundary
 * inside it. */
static int sort_all_buckets(const opprof_capture *c, buckets *here) {
    size_t nt = c->n_threads, n = c->n_events, half = 0;
    const size_t *first = here->first;
    while (half < nt && first[half + 1] <= n / 2) half++;
    if (half < nt && first[half + 1] - n / 2 < n / 2 - first[half]) half++; /* the nearer boundary */
    buckets beside = *here;
    beside.from = half;
    beside.to = nt;
    pthread_t helper;
    bool two = n >= TWO_THREADS_MIN_EVENTS && c->finish_threads != 1 && half > 0 && half < nt &&
               opprof__usable_cpus() >= 2 && opprof__helper_start(&helper, sort_buckets, &beside) == 0;
    here->to = two ? half : nt;
    sort_buckets(here);
    if (two) pthread_join(helper, NULL);
    return here->rc ? here->rc : beside.rc;
}

/* The keys in their threads' buckets: first[t + 1] ends thread t's. */
static void fill_buckets(const opprof_capture *c, event_key *keys, size_t *first) {
    for (size_t k = 0; k < c->n_events; k++) first[c->events[k].thread + 2]++;
    for (size_t t = 0; t < c->n_threads; t++) first[t + 2] += first[t + 1];
    for (size_t k = 0; k < c->n_events; k++) { /* first[t + 1]: where thread t's next key goes */
        const opprof_event *e = &c->events[k];
        keys[first[e->thread + 1]++] = (event_key){e->start_ns, e->duration_ns, (uint32_t)k};
    }
}

static int sort_events(opprof_capture *c) {
    size_t n = c->n_events, i = 1;
    while (i < n && !event_before(&c->events[i], &c->events[i - 1])) i++;
    if (i >= n) return 0; /* already in order (opprof's own captures) */
    buckets b = {0};
    b.keys = opprof__alloc(n * sizeof *b.keys);
    b.position = opprof__alloc(n * sizeof *b.position);
    size_t *first = opprof__calloc(c->n_threads + 2, sizeof *first);
    b.first = first;
    int rc = b.keys && b.position && first ? 0 : OPPROF_ENOMEM;
    if (!rc) fill_buckets(c, b.keys, first);
    if (!rc) rc = sort_all_buckets(c, &b);
    opprof__free(b.keys);
    opprof__free(first);
    uint64_t *done = rc ? NULL : opprof__alloc((n / 64 + 1) * sizeof *done);
    if (!rc && !done) rc = OPPROF_ENOMEM;
    if (!rc) {
        move_in_place(c->events, n, b.position, done);
        if (c->spilled) move_ids_in_place(c->spilled, n, b.position, done); /* covered at finish */
        for (opprof_event *e = c->events; e < c->events + n; e++)
            if (is_device(e) && e->parent >= 0) e->parent = (int32_t)b.position[e->parent];
        for (size_t k = 0; k < c->n_marks; k++) /* arguments follow their events */
            if (c->marks[k].event >= 0) c->marks[k].event = (int32_t)b.position[c->marks[k].event];
    }
    opprof__free(done);
    opprof__free(b.position);
    return rc;
}

static int64_t end_of(const opprof_event *e) { return e->start_ns + e->duration_ns; }

/* Parents, by PyTorch's rule (EventList._populate_cpu_children): events of a
 * thread in (start, longer first) order, a stack of open ones; the parent of
 * an event is the innermost open one that contains it. An event that starts
 * inside another but ends after it is not its child and keeps its whole
 * duration (the enclosing one is closed for what follows, as in PyTorch):
 * counted in a warning. Device activities are not nested: their `parent` is
 * their launching operator (device.c). Captures that opprof records always
 * nest; this serves traces of other tools. */
static int link_parents(opprof_capture *c) {
    int32_t *stack = NULL;
    size_t depth = 0, cap = 0;
    uint64_t overlapping = 0;
    uint32_t thread = UINT32_MAX;
    for (size_t i = 0; i < c->n_events; i++) {
        opprof_event *e = &c->events[i];
        if (is_device(e)) continue;
        if (e->thread != thread) {
            depth = 0;
            thread = e->thread;
        }
        while (depth) {
            const opprof_event *top = &c->events[stack[depth - 1]];
            if (e->start_ns < end_of(top) && end_of(e) <= end_of(top)) break;
            if (e->start_ns < end_of(top)) overlapping++;
            depth--;
        }
        e->parent = depth ? stack[depth - 1] : -1;
        /* the invariant every reader of `parent` relies on: an earlier event of the thread that holds it whole */
        OPPROF__ASSERT(e->parent < (int32_t)i);
        OPPROF__ASSERT(e->parent < 0 ||
                       (c->events[e->parent].thread == e->thread && c->events[e->parent].start_ns <= e->start_ns &&
                        end_of(e) <= end_of(&c->events[e->parent])));
        if (opprof__grow((void **)&stack, &cap, depth + 1, sizeof *stack)) {
            opprof__free(stack);
            return OPPROF_ENOMEM;
        }
        stack[depth++] = (int32_t)i;
    }
    opprof__free(stack);
    if (overlapping)
        return opprof__capture_warnf(c,
                                     "%llu event(s) overlapped an enclosing event without nesting; each was "
                                     "counted whole, outside the event it overlapped (PyTorch's rule)",
                                     (unsigned long long)overlapping);
    return 0;
}

/* PyTorch's _remove_dup_nodes: an event that is the only child of an event
 * of the same name is merged into it (its children become the parent's),
 * until no such pair remains. Traces of other tools only: a framework writes
 * some operators twice (a dispatcher layer and its kernel). */
static int merge_only_children(opprof_capture *c) {
    size_t n = c->n_events;
    uint32_t *children = opprof__calloc(n ? n : 1, sizeof *children);
    int32_t *remap = opprof__alloc((n ? n : 1) * sizeof *remap);
    if (!children || !remap) {
        opprof__free(children);
        opprof__free(remap);
        return OPPROF_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        if (!is_device(&c->events[i]) && c->events[i].parent >= 0) children[c->events[i].parent]++;
    /* In (start, longer first) order a parent precedes its child, so one
     * pass resolves chains: the merged-into event of a merged parent. */
    size_t merged = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        opprof_event *e = &c->events[i];
        remap[i] = (int32_t)i;
        if (is_device(e) || e->parent < 0) continue;
        int32_t p = remap[e->parent];
        e->parent = p;
        if (children[p] == 1 && c->events[p].name == e->name && (size_t)p != i) {
            children[p] = children[i];
            remap[i] = p;
            merged++;
        }
    }
    if (merged) {
        /* compact: keep the events that were not merged; re-point parents,
         * device launches and nothing else (owners are linked after this) */
        int32_t *new_index = (int32_t *)children; /* reuse: n entries */
        size_t k = 0, n_marks = c->n_marks;       /* marks added below have their new index */
        for (size_t i = 0; i < n; i++) new_index[i] = remap[i] == (int32_t)i ? (int32_t)k++ : -1;
        for (size_t i = 0; i < n && !rc; i++) {
            if (remap[i] != (int32_t)i) { /* its arguments set aside go to the event it is merged into */
                if (c->spilled && c->spilled[i] >= 0)
                    rc = opprof__capture_set_spilled(c, (size_t)new_index[remap[i]], c->spilled[i]);
                continue;
            }
            opprof_event e = c->events[i];
            if (e.parent >= 0) e.parent = new_index[remap[e.parent]];
            OPPROF__ASSERT(e.parent < new_index[i]); /* still before what it holds */
            c->events[new_index[i]] = e;
            if (c->spilled) c->spilled[new_index[i]] = c->spilled[i];
        }
        c->n_events = k;
        c->n_spilled = c->spilled ? k : 0;
        for (size_t m = 0; m < n_marks; m++)
            if (c->marks[m].event >= 0) c->marks[m].event = new_index[remap[c->marks[m].event]];
    }
    opprof__free(children);
    opprof__free(remap);
    return rc;
}

/* Owners by time: the innermost event with start <= ts < end (an event of
 * no duration: ts == start). At equal times an operator owns what it
 * allocates as it begins, and its caller what is freed as it ends: what
 * code does around a range with a clock too coarse to tell them apart. */
static bool owns(const opprof_event *e, int64_t ts) {
    return end_of(e) > ts || (e->duration_ns == 0 && e->start_ns == ts);
}

/* Each item's owner: items (memory events, samples) of `stride` bytes, sorted
 * by thread then time, their time, thread and owner at the offsets given. */
typedef struct timed_items {
    char *base;
    size_t n, stride, ts_at, thread_at, owner_at;
} timed_items;

static int link_owners_of(const opprof_capture *c, const timed_items *it) {
    int32_t *stack = NULL;
    size_t depth = 0, cap = 0, next = 0;
    uint32_t thread = UINT32_MAX;
    for (size_t j = 0; j < it->n; j++) {
        char *item = it->base + j * it->stride;
        int64_t ts;
        uint32_t th;
        memcpy(&ts, item + it->ts_at, sizeof ts);
        memcpy(&th, item + it->thread_at, sizeof th);
        if (th != thread) {
            thread = th;
            depth = 0;
            while (next < c->n_events && c->events[next].thread < thread) next++;
        }
        while (next < c->n_events && c->events[next].thread == thread && c->events[next].start_ns <= ts) {
            const opprof_event *e = &c->events[next];
            if (is_device(e)) { /* device activities own nothing */
                next++;
                continue;
            }
            while (depth && end_of(&c->events[stack[depth - 1]]) < e->start_ns) depth--;
            if (opprof__grow((void **)&stack, &cap, depth + 1, sizeof *stack)) {
                opprof__free(stack);
                return OPPROF_ENOMEM;
            }
            stack[depth++] = (int32_t)next++;
        }
        while (depth && !owns(&c->events[stack[depth - 1]], ts)) depth--;
        int32_t owner = depth ? stack[depth - 1] : -1;
        OPPROF__ASSERT(owner < 0 || (c->events[owner].thread == th && c->events[owner].start_ns <= ts &&
                                     owns(&c->events[owner], ts)));
        memcpy(item + it->owner_at, &owner, sizeof owner);
    }
    opprof__free(stack);
    return 0;
}

/* The timed_items of an array of n items of TYPE, each with ts_ns, thread and owner. */
#define TIMED_ITEMS(array, n, TYPE)                                                                              \
    (timed_items) {                                                                                              \
        (char *)(array), (n), sizeof(TYPE), offsetof(TYPE, ts_ns), offsetof(TYPE, thread), offsetof(TYPE, owner) \
    }

static int link_owners(opprof_capture *c) {
    timed_items mem = TIMED_ITEMS(c->mem, c->n_mem, opprof_memory_event);
    timed_items samples = TIMED_ITEMS(c->samples, c->n_samples, opprof_sample);
    int rc = link_owners_of(c, &mem);
    return rc ? rc : link_owners_of(c, &samples);
}

/* Frees recorded with OPPROF_FREE_UNKNOWN_SIZE take the size of the
 * allocation at their address before them: the memory events by (address,
 * time), each address's history read in order. */
typedef struct by_address {
    uint64_t addr;
    int64_t ts;
    uint32_t thread, index;
} by_address;
static int address_before(const by_address *a, const by_address *b) {
    if (a->addr != b->addr) return a->addr < b->addr;
    if (a->ts != b->ts) return a->ts < b->ts;
    return a->thread < b->thread;
}
DEFINE_MERGE_SORT(sort_by_address, by_address, address_before)

static int resolve_free_sizes(opprof_capture *c) {
    size_t unknown = 0;
    for (size_t j = 0; j < c->n_mem; j++) unknown += c->mem[j].bytes == OPPROF_FREE_UNKNOWN_SIZE;
    if (!unknown) return 0;
    by_address *order = opprof__alloc(c->n_mem * sizeof *order);
    if (!order) return OPPROF_ENOMEM;
    for (size_t j = 0; j < c->n_mem; j++)
        order[j] = (by_address){c->mem[j].addr, c->mem[j].ts_ns, c->mem[j].thread, (uint32_t)j};
    int rc = sort_by_address(order, c->n_mem);
    size_t before_capture = 0;
    int64_t live = 0; /* the size of the block at this address, 0 when none is known */
    for (size_t k = 0; !rc && k < c->n_mem; k++) {
        opprof_memory_event *m = &c->mem[order[k].index];
        if (k && order[k].addr != order[k - 1].addr) live = 0;
        if (m->bytes == OPPROF_FREE_UNKNOWN_SIZE) {
            before_capture += live == 0;
            m->bytes = -live;
            live = 0;
        } else {
            live = m->bytes > 0 ? m->bytes : 0;
        }
    }
    opprof__free(order);
    if (!rc && before_capture)
        rc = opprof__capture_warnf(c,
                                   "%zu free(s) of blocks allocated before the capture: their sizes are unknown, "
                                   "counted as 0",
                                   before_capture);
    return rc;
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
        opprof__free(head);
        return OPPROF_ENOMEM;
    }
    memcpy(end, head + 1, nt * sizeof *end);
    /* a running total per (device type, device id): each allocator its own */
    enum { ALLOCATORS = 16 };
    int32_t kinds[ALLOCATORS][2];
    int64_t totals[ALLOCATORS];
    int n_alloc = 0;
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t t = 0; t < nt; t++)
            if (head[t] < end[t] && (best == SIZE_MAX || c->mem[head[t]].ts_ns < c->mem[head[best]].ts_ns)) best = t;
        if (best == SIZE_MAX) break;
        opprof_memory_event *m = &c->mem[head[best]++];
        int a = 0;
        while (a < n_alloc && (kinds[a][0] != m->device_type || kinds[a][1] != m->device_id)) a++;
        if (a == n_alloc && n_alloc < ALLOCATORS) {
            kinds[n_alloc][0] = m->device_type;
            kinds[n_alloc][1] = m->device_id;
            totals[n_alloc++] = 0;
        }
        if (a == ALLOCATORS) a = ALLOCATORS - 1; /* more allocators than that: the last one's sum */
        OPPROF__SAT_ADD(totals[a], m->bytes);
        if (m->total_allocated < 0) m->total_allocated = totals[a];
    }
    opprof__free(head);
    opprof__free(end);
    return 0;
}

int opprof_capture_finish(opprof_capture *c) {
    if (!c || c->finished) return OPPROF_EINVAL;
    int rc = opprof__capture_demangle(c);
    if (!rc) rc = opprof__capture_cover_spilled(c);
    if (!rc) rc = sort_events(c);
    if (!rc) rc = sort_memory(c->mem, c->n_mem);
    if (!rc) rc = sort_marks(c->marks, c->n_marks);
    if (!rc) rc = opprof__capture_sort_samples(c);
    if (!rc) rc = link_parents(c);
    if (!rc && c->merge_only_children) rc = merge_only_children(c);
    if (!rc) rc = link_owners(c);
    if (!rc) rc = resolve_free_sizes(c);
    if (!rc) rc = fill_totals(c);
    if (rc) return rc;
    int64_t last = c->info.duration_ns;
    for (size_t i = 0; i < c->n_events; i++)
        if (end_of(&c->events[i]) > last) last = end_of(&c->events[i]);
    for (size_t j = 0; j < c->n_mem; j++)
        if (c->mem[j].ts_ns > last) last = c->mem[j].ts_ns;
    for (size_t j = 0; j < c->n_samples; j++)
        if (c->samples[j].ts_ns > last) last = c->samples[j].ts_ns;
    c->info.duration_ns = last;
    c->finished = true;
    return 0;
}
