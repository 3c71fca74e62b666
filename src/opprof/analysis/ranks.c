/* ranks.c - one capture per rank, compared: each operator's self time
 * across the ranks (min, median, max, the slowest rank), each rank's time in
 * communication and in compute, and how far apart the ranks start the same
 * collective once their clocks are aligned (the skew, and who waits). Its
 * views are render/ranks_view.c. */
#define _GNU_SOURCE /* strcasestr */
#include "analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

static bool is_comm(const char *name) {
    static const char *const prefixes[] = {"mpi::", "c10d::", "nccl", "gloo", "record_param_comms"};
    static const char *const words[] = {"allreduce",     "all_reduce", "allgather",  "all_gather", "reduce_scatter",
                                        "reducescatter", "alltoall",   "all_to_all", "broadcast"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncasecmp(name, prefixes[i], strlen(prefixes[i]))) return true;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcasestr(name, words[i])) return true;
    return false;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t median_of(int64_t *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_i64);
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

/* The operators: every row key of every rank, once, in first-seen order. */
static int collect_ops(opprof_ranks *r) {
    size_t cap = 0;
    for (size_t k = 0; k < r->n_ranks; k++) {
        size_t n;
        opprof_averages_rows(r->avgs[k], &n);
        cap += n;
    }
    r->ops = opprof__calloc(cap ? cap : 1, sizeof *r->ops);
    if (!r->ops) return OPPROF_ENOMEM;
    r->ops_cap = cap ? cap : 1;
    for (size_t k = 0; k < r->n_ranks; k++) {
        size_t n;
        const opprof_average_row *rows = opprof_averages_rows(r->avgs[k], &n);
        for (size_t i = 0; i < n; i++) {
            size_t j = 0;
            while (j < r->n_ops && strcmp(r->ops[j].name, rows[i].key)) j++;
            if (j == r->n_ops) {
                r->ops[j].name = rows[i].key;
                if (!(r->ops[j].self_ns = opprof__calloc(r->n_ranks, sizeof(int64_t)))) return OPPROF_ENOMEM;
                r->n_ops++;
            }
            r->ops[j].self_ns[k] += rows[i].self_ns;
            r->ops[j].calls += rows[i].calls;
        }
    }
    return 0;
}

static int op_order(const void *a, const void *b) {
    const opprof__ranks_op *x = a, *y = b;
    return x->max_ns != y->max_ns ? (x->max_ns > y->max_ns ? -1 : 1) : strcmp(x->name, y->name);
}

static int summarize_ops(opprof_ranks *r) {
    int64_t *v = opprof__alloc(r->n_ranks * sizeof *v);
    if (!v) return OPPROF_ENOMEM;
    for (size_t j = 0; j < r->n_ops; j++) {
        opprof__ranks_op *o = &r->ops[j];
        o->slowest = 0;
        for (size_t k = 0; k < r->n_ranks; k++)
            if (o->self_ns[k] > o->self_ns[o->slowest]) o->slowest = (int)k;
        memcpy(v, o->self_ns, r->n_ranks * sizeof *v);
        o->median_ns = median_of(v, r->n_ranks);
        o->min_ns = v[0];
        o->max_ns = v[r->n_ranks - 1];
    }
    opprof__free(v);
    qsort(r->ops, r->n_ops, sizeof *r->ops, op_order);
    return 0;
}

/* Starts of a capture's outermost collectives on rank 0's clock, in order;
 * *out holds room for every event (*room of them: the size to free). */
static int collective_starts(const opprof_capture *c, int64_t **out, size_t *count, size_t *room) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    opprof_capture_info info = opprof_capture_get_info(c);
    int64_t *s = opprof__alloc((n ? n : 1) * sizeof *s);
    if (!s) return OPPROF_ENOMEM;
    *room = n ? n : 1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == OPPROF_KIND_DEVICE || !is_comm(opprof_capture_name(c, ev[i].name))) continue;
        bool nested = false;
        for (int32_t p = ev[i].parent; p >= 0 && !nested; p = ev[p].parent)
            nested = is_comm(opprof_capture_name(c, ev[p].name));
        if (!nested) s[m++] = info.base_time_ns - info.rank.clock_offset_ns + ev[i].start_ns;
    }
    qsort(s, m, sizeof *s, cmp_i64);
    *out = s;
    *count = m;
    return 0;
}

/* The i-th collective of every rank against the others': skew = the last
 * start - the first; each rank waits from its start to the last one's. */
static int compare_collectives(opprof_ranks *r, opprof_capture *const *caps) {
    int64_t **starts = opprof__calloc(r->n_ranks, sizeof *starts);
    size_t *counts = opprof__calloc(r->n_ranks * 2, sizeof *counts), *rooms = counts ? counts + r->n_ranks : NULL;
    int rc = starts && counts ? 0 : OPPROF_ENOMEM;
    size_t common = SIZE_MAX;
    for (size_t k = 0; k < r->n_ranks && !rc; k++) {
        rc = collective_starts(caps[k], &starts[k], &counts[k], &rooms[k]);
        r->ranks[k].collectives = (int64_t)counts[k];
        if (!rc && counts[k] < common) common = counts[k];
    }
    int64_t *skews = rc || common == SIZE_MAX ? NULL : opprof__alloc((common ? common : 1) * sizeof *skews);
    if (!rc && !skews) rc = OPPROF_ENOMEM;
    for (size_t i = 0; !rc && i < common; i++) {
        int64_t first = INT64_MAX, last = INT64_MIN;
        for (size_t k = 0; k < r->n_ranks; k++) {
            if (starts[k][i] < first) first = starts[k][i];
            if (starts[k][i] > last) last = starts[k][i];
        }
        for (size_t k = 0; k < r->n_ranks; k++) {
            r->ranks[k].wait_ns += last - starts[k][i];
            if (starts[k][i] == last) r->ranks[k].last++;
        }
        skews[i] = last - first;
        if (skews[i] > r->skew_max_ns) r->skew_max_ns = skews[i];
    }
    if (!rc) {
        r->compared = (int64_t)common;
        r->skew_median_ns = median_of(skews, common);
    }
    for (size_t k = 0; starts && counts && k < r->n_ranks; k++)
        if (starts[k]) opprof__free(starts[k]);
    opprof__free(starts);
    opprof__free(counts);
    opprof__free(skews);
    return rc;
}

void opprof_ranks_free(opprof_ranks *r) {
    if (!r) return;
    for (size_t j = 0; r->ops && j < r->n_ops; j++) opprof__free(r->ops[j].self_ns);
    for (size_t k = 0; r->avgs && k < r->n_ranks; k++) opprof_averages_free(r->avgs[k]);
    opprof__free(r->ops);
    opprof__free(r->avgs);
    opprof__free(r->ranks);
    opprof__free(r);
}

int opprof_ranks_analyze(opprof_capture *const *captures, size_t n, opprof_ranks **out) {
    if (!out) return OPPROF_EINVAL;
    *out = NULL;
    if (!captures || n == 0) return OPPROF_EINVAL;
    opprof_ranks *r = opprof__calloc(1, sizeof *r);
    if (!r) return OPPROF_ENOMEM;
    r->n_ranks = n;
    r->avgs = opprof__calloc(n, sizeof *r->avgs);
    r->ranks = opprof__calloc(n, sizeof *r->ranks);
    int rc = r->avgs && r->ranks ? 0 : OPPROF_ENOMEM;
    for (size_t k = 0; k < n && !rc; k++) {
        if (!captures[k]) rc = OPPROF_EINVAL;
        if (!rc) rc = opprof_capture_averages(captures[k], &r->avgs[k]);
        if (rc) break;
        opprof_capture_info info = opprof_capture_get_info(captures[k]);
        opprof__ranks_rank *rr = &r->ranks[k];
        rr->rank = info.rank.backend[0] ? info.rank.rank : (int32_t)k;
        rr->uncertainty_ns = info.rank.clock_uncertainty_ns;
        rr->busy_ns = opprof_averages_self_total_ns(r->avgs[k]);
        size_t rows_n;
        const opprof_average_row *rows = opprof_averages_rows(r->avgs[k], &rows_n);
        for (size_t i = 0; i < rows_n; i++)
            if (is_comm(rows[i].key)) rr->comm_ns += rows[i].self_ns;
    }
    if (!rc) rc = collect_ops(r);
    if (!rc) rc = summarize_ops(r);
    if (!rc) rc = compare_collectives(r, captures);
    if (rc) {
        opprof_ranks_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
