/* diff.c - two captures compared operator by operator: the rows of both
 * paired by key, the largest change of self time first, and the differences
 * of configuration worth a note. Its views are render/diff_view.c. */
#include "analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

static uint64_t magnitude(int64_t d) { return d < 0 ? -(uint64_t)d : (uint64_t)d; }

/* The size of a row's change: the larger of its self CPU time's and its self
 * device time's (an operator's: of the kernels it launched). */
static uint64_t change_of(const opprof__diff_pair *p) {
    uint64_t cpu = magnitude(p->self_delta), device = magnitude(p->device_delta);
    return cpu > device ? cpu : device;
}

static int pair_cmp(const void *a, const void *b) {
    const opprof__diff_pair *x = a, *y = b;
    uint64_t ax = change_of(x), ay = change_of(y);
    if (ax != ay) return ax > ay ? -1 : 1;
    if (x->device != y->device) return x->device ? 1 : -1;
    return strcmp(x->key, y->key);
}

/* Rows by kind (CPU, then device: a kernel and an operator may share a
 * name), then key. */
static int row_cmp(const opprof_average_row *x, const opprof_average_row *y) {
    if (x->device != y->device) return x->device ? 1 : -1;
    return strcmp(x->key, y->key);
}

static int row_by_key(const void *a, const void *b) {
    return row_cmp(*(const opprof_average_row *const *)a, *(const opprof_average_row *const *)b);
}

/* Pair the rows of both sides by kind and key (unique on a side): both lists
 * sorted by key, then one merge, so that traces with many names stay fast. */
static size_t pair_rows(const opprof_average_row *rb, size_t nb, const opprof_average_row *ra, size_t na,
                        const opprof_average_row **sorted, opprof__diff_pair *pairs) {
    const opprof_average_row **b = sorted, **a = sorted + nb;
    for (size_t i = 0; i < nb; i++) b[i] = &rb[i];
    for (size_t i = 0; i < na; i++) a[i] = &ra[i];
    qsort(b, nb, sizeof *b, row_by_key);
    qsort(a, na, sizeof *a, row_by_key);
    size_t n = 0, i = 0, j = 0;
    while (i < nb || j < na) {
        int c = i == nb ? 1 : j == na ? -1 : row_cmp(b[i], a[j]);
        if (c < 0)
            pairs[n++] = (opprof__diff_pair){.key = b[i]->key, .before = b[i]}, i++;
        else if (c > 0)
            pairs[n++] = (opprof__diff_pair){.key = a[j]->key, .after = a[j]}, j++;
        else
            pairs[n++] = (opprof__diff_pair){.key = b[i]->key, .before = b[i], .after = a[j]}, i++, j++;
    }
    return n;
}

/* The two sides' rows paired by key, largest change of self time first. */
static int paired_rows(const opprof_average_row *rb, size_t nb, const opprof_average_row *ra, size_t na,
                       opprof__diff_pair **out, size_t *n) {
    opprof__diff_pair *pairs = opprof__alloc((nb + na + 1) * sizeof *pairs);
    const opprof_average_row **sorted = opprof__alloc((nb + na + 1) * sizeof *sorted);
    if (!pairs || !sorted) {
        opprof__free(pairs);
        opprof__free(sorted);
        return OPPROF_ENOMEM;
    }
    *n = pair_rows(rb, nb, ra, na, sorted, pairs);
    opprof__free(sorted);
    for (size_t i = 0; i < *n; i++) {
        opprof__diff_pair *p = &pairs[i];
        p->device = (p->before ? p->before : p->after)->device;
        p->self_delta = opprof__sat_sub(p->after ? p->after->self_ns : 0, p->before ? p->before->self_ns : 0);
        p->device_delta =
            opprof__sat_sub(p->after ? p->after->self_device_ns : 0, p->before ? p->before->self_device_ns : 0);
    }
    qsort(pairs, *n, sizeof *pairs, pair_cmp);
    *out = pairs;
    return 0;
}

/* A side's steps: its ProfilerStep#N ranges, or an aggregate profile's runs; at least 1. */
static int64_t steps_of(const opprof_capture *c) {
    int64_t steps = 0;
    for (size_t i = 0; i < c->n_events; i++) steps += c->events[i].kind == OPPROF_KIND_STEP;
    if (!steps) steps = c->info.aggregate_runs;
    return steps > 0 ? steps : 1;
}

static int64_t per(int64_t v, int64_t steps) {
    return steps > 1 ? (v >= 0 ? v + steps / 2 : v - steps / 2) / steps : v;
}

/* A side's rows, per step: times, memory, FLOPs, bytes and calls (rounded)
 * divided by its steps; names and the rest as they are. */
static int per_step(const opprof_averages *avg, int64_t steps, opprof_average_row **out, size_t *n) {
    const opprof_average_row *rows = opprof_averages_rows(avg, n);
    *out = opprof__alloc((*n ? *n : 1) * sizeof **out);
    if (!*out) return OPPROF_ENOMEM;
    for (size_t i = 0; i < *n; i++) {
        opprof_average_row r = rows[i];
        int64_t *fields[] = {&r.calls,           &r.self_ns, &r.total_ns,       &r.cpu_mem,         &r.self_cpu_mem,
                             &r.flops,           &r.bytes,   &r.self_device_ns, &r.total_device_ns, &r.device_mem,
                             &r.self_device_mem, &r.wall_ns, &r.wait_ns,        &r.off_cpu_ns,      &r.self_off_cpu_ns};
        for (size_t k = 0; k < sizeof fields / sizeof *fields; k++) *fields[k] = per(*fields[k], steps);
        (*out)[i] = r;
    }
    return 0;
}

/* The runtime a producer's names belong to: PyTorch's and nn's are aten's. */
/* The rows to pair: by layer (asked, or two runtimes' names when their
 * layers align), else by name; each side per step. */
static int rows_to_pair(opprof__diff *d, opprof_diff_match match) {
    bool layers = match == OPPROF_DIFF_MATCH_LAYERS ||
                  (match == OPPROF_DIFF_MATCH_AUTO && strcmp(opprof__producer_family(d->before->info.producer),
                                                             opprof__producer_family(d->after->info.producer)) != 0);
    if (layers) {
        int rc = opprof__layers_build(d->before, d->after, &d->layers);
        if (rc) return rc;
        if (d->layers.n) { /* the layers' rows are the diff's now (their keys stay the layers') */
            d->rows_before = d->layers.before, d->rows_after = d->layers.after;
            d->layers.before = d->layers.after = NULL;
            d->n_rows_before = d->n_rows_after = d->layers.n;
            return 0;
        }
    }
    int rc = per_step(d->avg_before, d->steps_before, &d->rows_before, &d->n_rows_before);
    return rc ? rc : per_step(d->avg_after, d->steps_after, &d->rows_after, &d->n_rows_after);
}

/* Notes on configuration differences, and on the pairing. */
static void notes(opprof__diff *d) {
    const opprof_capture *b = d->before, *a = d->after;
    char(*out)[OPPROF__NOTE_BYTES] = d->notes;
    int n = 0;
    if (d->steps_before > 1 || d->steps_after > 1)
        snprintf(out[n++], OPPROF__NOTE_BYTES,
                 "per step: each side's times are its means per step (%lld step(s) before, %lld after)",
                 (long long)d->steps_before, (long long)d->steps_after);
    if (d->layers.n)
        snprintf(out[n++], OPPROF__NOTE_BYTES,
                 "rows are the model's layers, paired in order as classes of work (%zu of %zu operators before, "
                 "%zu of %zu after, in the first step); --match name pairs rows by name",
                 d->layers.paired_ops_before, d->layers.ops_before, d->layers.paired_ops_after, d->layers.ops_after);
    if (b->n_threads != a->n_threads)
        snprintf(out[n++], OPPROF__NOTE_BYTES, "thread tracks differ: %zu before, %zu after", b->n_threads,
                 a->n_threads);
    const opprof_schedule *sb = &b->info.schedule, *sa = &a->info.schedule;
    if (memcmp(sb, sa, sizeof *sb) != 0)
        snprintf(out[n++], OPPROF__NOTE_BYTES,
                 "schedules differ: (skip_first %d, wait %d, warmup %d, active %d, repeat %d) before, "
                 "(%d, %d, %d, %d, %d) after",
                 sb->skip_first, sb->wait, sb->warmup, sb->active, sb->repeat, sa->skip_first, sa->wait, sa->warmup,
                 sa->active, sa->repeat);
    if (b->info.profile_memory != a->info.profile_memory)
        snprintf(out[n++], OPPROF__NOTE_BYTES, "memory was recorded %s only",
                 b->info.profile_memory ? "before" : "after");
    if (b->info.dropped_events || a->info.dropped_events)
        snprintf(out[n++], OPPROF__NOTE_BYTES, "events were dropped at record time: %llu before, %llu after",
                 (unsigned long long)b->info.dropped_events, (unsigned long long)a->info.dropped_events);
    bool db = b->info.device_name[0], da = a->info.device_name[0];
    if (db != da) snprintf(out[n++], OPPROF__NOTE_BYTES, "device time was recorded %s only", db ? "before" : "after");
    if (b->n_warnings || a->n_warnings)
        snprintf(out[n++], OPPROF__NOTE_BYTES, "captures carry warnings: %zu before, %zu after", b->n_warnings,
                 a->n_warnings);
    d->n_notes = n;
}

int opprof__diff_build(opprof__diff *d, const opprof_capture *before, const opprof_capture *after, int row_limit,
                       opprof_diff_match match) {
    *d = (opprof__diff){.before = before, .after = after};
    d->steps_before = steps_of(before);
    d->steps_after = steps_of(after);
    int rc = opprof_capture_averages(before, &d->avg_before);
    if (!rc) rc = opprof_capture_averages(after, &d->avg_after);
    if (!rc) rc = rows_to_pair(d, match);
    if (!rc) rc = paired_rows(d->rows_before, d->n_rows_before, d->rows_after, d->n_rows_after, &d->pairs, &d->n);
    if (rc) return rc;
    d->shown = row_limit > 0 && (size_t)row_limit < d->n ? (size_t)row_limit : d->n;
    if (d->layers.n) { /* the layers' sums */
        for (size_t i = 0; i < d->layers.n; i++) {
            OPPROF__SAT_ADD(d->self_before, d->rows_before[i].self_ns);
            OPPROF__SAT_ADD(d->self_after, d->rows_after[i].self_ns);
        }
    } else {
        d->self_before = per(opprof_averages_self_total_ns(d->avg_before), d->steps_before);
        d->self_after = per(opprof_averages_self_total_ns(d->avg_after), d->steps_after);
        d->device_before = per(opprof_averages_self_device_total_ns(d->avg_before), d->steps_before);
        d->device_after = per(opprof_averages_self_device_total_ns(d->avg_after), d->steps_after);
    }
    const char *db = opprof_averages_device_name(d->avg_before), *da = opprof_averages_device_name(d->avg_after);
    d->device_name = db[0] && da[0] && !d->layers.n ? (strcmp(db, da) ? "device" : db) : NULL;
    notes(d);
    return 0;
}

void opprof__diff_free(opprof__diff *d) {
    opprof__free(d->pairs);
    opprof__free(d->rows_before);
    opprof__free(d->rows_after);
    opprof__layers_free(&d->layers);
    opprof_averages_free(d->avg_before);
    opprof_averages_free(d->avg_after);
    *d = (opprof__diff){0};
}
