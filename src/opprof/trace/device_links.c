/* device.c - which CPU operator launched each device activity of a trace, as
 * PyTorch attributes kernels (`append_kernel` in torch/autograd/profiler.py).
 * The link depends on the Kineto that wrote the file:
 *   - PyTorch 1.8/1.9: the activity's lowercase "external id" is the
 *     operator's "External id";
 *   - Kineto since early 2024: the activity's "External id" is the
 *     operator's, and differs from its "correlation";
 *   - 2021 to early 2024: the activity's "External id" equals its
 *     "correlation", and the operator is the innermost one on the runtime
 *     call's thread (cudaLaunchKernel...) with that correlation, enclosing it.
 * Lookups are binary searches over the links sorted by id. */
#include "trace/trace.h"

#include <stdlib.h>
#include <string.h>

/* The links' two orders, sorted by the capture layer's typed merge sort (glibc's
 * qsort moved these 48-byte links through memmove: 5 % of reading a Kineto trace). */
static int by_role_then_ext(const opprof__link *x, const opprof__link *y) {
    if (x->role != y->role) return x->role < y->role;
    int64_t kx = x->role == OPPROF__LINK_RUNTIME ? x->corr : x->ext, ky = y->role == OPPROF__LINK_RUNTIME ? y->corr : y->ext;
    if (kx != ky) return kx < ky;
    return x->event < y->event;
}
DEFINE_MERGE_SORT(sort_by_role_then_ext, opprof__link, by_role_then_ext)

/* The first link of `role` whose key (ext, or corr for runtime calls) is `key`. */
static const opprof__link *find(const opprof__link *links, size_t n, int role, int64_t key) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const opprof__link *l = &links[mid];
        int64_t k = l->role == OPPROF__LINK_RUNTIME ? l->corr : l->ext;
        if (l->role < role || (l->role == role && k < key))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n) return NULL;
    const opprof__link *l = &links[lo];
    int64_t k = l->role == OPPROF__LINK_RUNTIME ? l->corr : l->ext;
    return l->role == role && k == key ? l : NULL;
}

static int by_thread_then_start(const opprof__link *x, const opprof__link *y) {
    if (x->thread != y->thread) return x->thread < y->thread;
    if (x->start != y->start) return x->start < y->start;
    return x->end > y->end; /* longer first: parents before children */
}
DEFINE_MERGE_SORT(sort_by_thread_then_start, opprof__link, by_thread_then_start)

/* The innermost operator on `rt`'s thread that encloses it (start <= its
 * start, end >= its end): `ops` sorted by (thread, start, longer first); the
 * last operator starting at or before the call, walking back to the first
 * that encloses it (siblings that ended before it are passed over). */
static const opprof__link *enclosing_op(const opprof__link *ops, size_t n, const opprof__link *rt) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ops[mid].thread < rt->thread || (ops[mid].thread == rt->thread && ops[mid].start <= rt->start))
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo > 0) {
        lo--;
        const opprof__link *o = &ops[lo];
        if (o->thread != rt->thread) return NULL;
        if (o->end >= rt->end) return o;
    }
    return NULL;
}

int opprof__link_devices(opprof_capture *c, opprof__link *links, size_t n) {
    /* a trace of the CPU alone has operators' ids and nothing to link them to:
     * no sort (it was 14-19 % of reading a 1 M-operator trace) */
    size_t n_devices = 0;
    for (size_t i = 0; i < n; i++) n_devices += links[i].role == OPPROF__LINK_DEVICE;
    if (n_devices == 0) return 0;
    if (sort_by_role_then_ext(links, n)) return OPPROF_ENOMEM;
    size_t n_ops = 0;
    while (n_ops < n && links[n_ops].role == OPPROF__LINK_OP) n_ops++;
    size_t n_rt = n_ops;
    while (n_rt < n && links[n_rt].role == OPPROF__LINK_RUNTIME) n_rt++;
    /* the operators again, by (thread, start), for the enclosure searches */
    opprof__link *by_start = opprof__alloc(n_ops ? n_ops * sizeof *by_start : 1);
    if (!by_start) return OPPROF_ENOMEM;
    memcpy(by_start, links, n_ops * sizeof *by_start);
    if (sort_by_thread_then_start(by_start, n_ops)) {
        opprof__free(by_start);
        return OPPROF_ENOMEM;
    }
    for (size_t i = n_rt; i < n; i++) {
        const opprof__link *d = &links[i];
        const opprof__link *op = NULL;
        if (d->ext_lower || (d->ext >= 0 && d->ext != d->corr)) {
            op = find(links, n_ops, OPPROF__LINK_OP, d->ext);
        } else if (d->corr >= 0) {
            const opprof__link *rt = find(links + n_ops, n_rt - n_ops, OPPROF__LINK_RUNTIME, d->corr);
            if (rt) op = enclosing_op(by_start, n_ops, rt);
        }
        c->events[d->event].parent = op ? (int32_t)op->event : -1;
    }
    opprof__free(by_start);
    return 0;
}
