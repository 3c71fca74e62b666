/* device_links.c - which CPU operator launched each device activity of a
 * trace, as PyTorch attributes kernels (`append_kernel` in
 * torch/autograd/profiler.py). The link depends on the Kineto that wrote the file:
 *   - PyTorch 1.8/1.9: the activity's lowercase "external id" is the
 *     operator's "External id";
 *   - Kineto since early 2024: the activity's "External id" is the
 *     operator's, and differs from its "correlation";
 *   - 2021 to early 2024: the activity's "External id" equals its
 *     "correlation", and the operator is the innermost one on the runtime
 *     call's thread (cudaLaunchKernel...) with that correlation, enclosing it.
 * Operators are found by id and runtime calls by correlation in a hash table
 * (of two with one id, the first in the trace: links come in the trace's
 * order); the enclosure search runs over the operators sorted by (thread,
 * start), sorted only for a trace that needs it. */
#include "trace/trace.h"

#include <stdlib.h>
#include <string.h>

/* ---- operators by id, runtime calls by correlation ---- */

typedef struct link_table {
    const opprof__link *links;
    uint32_t *items; /* positions in links of the operators and runtime calls held */
    size_t n;
    opprof__index ix;
} link_table;
typedef struct link_key {
    int role;
    int64_t id;
} link_key;

static int64_t id_of(const opprof__link *l) { return l->role == OPPROF__LINK_RUNTIME ? l->corr : l->ext; }
static uint64_t key_hash(int role, int64_t id) { return opprof__hash_pair((uint64_t)id, (uint64_t)role); }

static uint64_t item_hash(const void *ctx, uint32_t item) {
    const link_table *t = ctx;
    const opprof__link *l = &t->links[t->items[item]];
    return key_hash(l->role, id_of(l));
}

static bool item_equal(const void *ctx, uint32_t item, const void *key) {
    const link_table *t = ctx;
    const opprof__link *l = &t->links[t->items[item]];
    const link_key *k = key;
    return l->role == k->role && id_of(l) == k->id;
}

static const opprof__link *table_find(const link_table *t, int role, int64_t id) {
    if (!t->n) return NULL;
    link_key k = {role, id};
    uint32_t item = t->ix.slots[opprof__index_probe(&t->ix, key_hash(role, id), &k, item_equal, t)];
    return item ? &t->links[t->items[item - 1]] : NULL;
}

/* ---- the operator that encloses a runtime call ---- */

/* An operator's thread and span (its event's), its id, and its link. */
typedef struct op_span {
    int64_t start, end, ext;
    uint32_t thread, event;
    const opprof__link *link;
} op_span;

static op_span span_of(const opprof_capture *c, const opprof__link *l) {
    const opprof_event *e = &c->events[l->event];
    return (op_span){e->start_ns, e->start_ns + e->duration_ns, l->ext, e->thread, l->event, l};
}

static int by_thread_then_start(const op_span *x, const op_span *y) {
    if (x->thread != y->thread) return x->thread < y->thread;
    if (x->start != y->start) return x->start < y->start;
    if (x->end != y->end) return x->end > y->end; /* longer first: parents before children */
    if (x->ext != y->ext) return x->ext < y->ext; /* of equal spans, the inner one (a later id) found first */
    return x->event < y->event;
}
DEFINE_MERGE_SORT(sort_by_thread_then_start, op_span, by_thread_then_start)

/* The operators, by (thread, start, longer first, id, event). */
static op_span *operators_by_start(const opprof_capture *c, const opprof__link *links, size_t n, size_t *n_ops) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += links[i].role == OPPROF__LINK_OP;
    op_span *ops = opprof__alloc(k ? k * sizeof *ops : 1);
    if (!ops) return NULL;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (links[i].role == OPPROF__LINK_OP) ops[k++] = span_of(c, &links[i]);
    if (sort_by_thread_then_start(ops, k)) {
        opprof__free(ops);
        return NULL;
    }
    *n_ops = k;
    return ops;
}

/* The innermost operator on `rt`'s thread that encloses it (start <= its
 * start, end >= its end): the last operator starting at or before the call,
 * walking back to the first that encloses it (siblings that ended before it
 * are passed over). */
static const opprof__link *enclosing_op(const op_span *ops, size_t n, op_span rt) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ops[mid].thread < rt.thread || (ops[mid].thread == rt.thread && ops[mid].start <= rt.start))
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo > 0) {
        lo--;
        const op_span *o = &ops[lo];
        if (o->thread != rt.thread) return NULL;
        if (o->end >= rt.end) return o->link;
    }
    return NULL;
}

/* ---- the links ---- */

static int link_all(opprof_capture *c, const opprof__link *links, size_t n, const link_table *t) {
    op_span *by_start = NULL;
    size_t n_ops = 0;
    for (size_t i = 0; i < n; i++) {
        const opprof__link *d = &links[i];
        if (d->role != OPPROF__LINK_DEVICE) continue;
        const opprof__link *op = NULL;
        if (d->ext_lower || (d->ext >= 0 && d->ext != d->corr)) {
            op = table_find(t, OPPROF__LINK_OP, d->ext);
        } else if (d->corr >= 0) {
            const opprof__link *rt = table_find(t, OPPROF__LINK_RUNTIME, d->corr);
            if (rt && !by_start && !(by_start = operators_by_start(c, links, n, &n_ops))) return OPPROF_ENOMEM;
            if (rt) op = enclosing_op(by_start, n_ops, span_of(c, rt));
        }
        c->events[d->event].parent = op ? (int32_t)op->event : -1;
    }
    opprof__free(by_start);
    return 0;
}

int opprof__link_devices(opprof_capture *c, const opprof__link *links, size_t n) {
    /* a trace of the CPU alone has operators' ids and nothing to link them to:
     * no table (sorting them was 14-19 % of reading a 1 M-operator trace) */
    size_t n_devices = 0;
    for (size_t i = 0; i < n; i++) n_devices += links[i].role == OPPROF__LINK_DEVICE;
    if (n_devices == 0) return 0;
    link_table t = {.links = links, .items = opprof__alloc((n - n_devices) * sizeof *t.items + 1)};
    int rc = t.items ? 0 : OPPROF_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++)
        if (links[i].role != OPPROF__LINK_DEVICE) t.items[t.n++] = (uint32_t)i;
    /* the table made at its size in one pass (no growth, no lookups): of two
     * links with one key, the first in the trace comes first on the probe */
    if (!rc && t.n) rc = opprof__index_reserve(&t.ix, t.n, item_hash, &t);
    if (!rc) rc = link_all(c, links, n, &t);
    opprof__index_free(&t.ix);
    opprof__free(t.items);
    return rc;
}

/* ---- the links written back ---- */

int opprof__external_ids(const opprof_capture *c, uint32_t **ids) {
    *ids = NULL;
    bool any = false;
    for (size_t i = 0; i < c->n_events && !any; i++) any = opprof__is_device(&c->events[i]) && c->events[i].parent >= 0;
    if (!any) return 0;
    if (!(*ids = opprof__calloc(c->n_events, sizeof **ids))) return OPPROF_ENOMEM;
    for (size_t i = 0; i < c->n_events; i++) {
        const opprof_event *e = &c->events[i];
        if (!opprof__is_device(e) || e->parent < 0 || (size_t)e->parent >= c->n_events) continue;
        (*ids)[i] = (*ids)[e->parent] = (uint32_t)e->parent + 1u;
    }
    return 0;
}
