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

/* The two captures' rows paired by key, largest change of self time first. */
static int paired_rows(const opprof_averages *ab, const opprof_averages *aa, opprof__diff_pair **out, size_t *n) {
    size_t nb, na;
    const opprof_average_row *rb = opprof_averages_rows(ab, &nb), *ra = opprof_averages_rows(aa, &na);
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

/* Notes on configuration differences. */
static void notes(opprof__diff *d) {
    const opprof_capture *b = d->before, *a = d->after;
    char(*out)[160] = d->notes;
    int n = 0;
    if (b->n_threads != a->n_threads)
        snprintf(out[n++], 160, "thread tracks differ: %zu before, %zu after", b->n_threads, a->n_threads);
    const opprof_schedule *sb = &b->info.schedule, *sa = &a->info.schedule;
    if (memcmp(sb, sa, sizeof *sb) != 0)
        snprintf(out[n++], 160,
                 "schedules differ: (skip_first %d, wait %d, warmup %d, active %d, repeat %d) before, "
                 "(%d, %d, %d, %d, %d) after",
                 sb->skip_first, sb->wait, sb->warmup, sb->active, sb->repeat, sa->skip_first, sa->wait, sa->warmup,
                 sa->active, sa->repeat);
    if (b->info.profile_memory != a->info.profile_memory)
        snprintf(out[n++], 160, "memory was recorded %s only", b->info.profile_memory ? "before" : "after");
    if (b->info.dropped_events || a->info.dropped_events)
        snprintf(out[n++], 160, "events were dropped at record time: %llu before, %llu after",
                 (unsigned long long)b->info.dropped_events, (unsigned long long)a->info.dropped_events);
    bool db = b->info.device_name[0], da = a->info.device_name[0];
    if (db != da) snprintf(out[n++], 160, "device time was recorded %s only", db ? "before" : "after");
    if (b->n_warnings || a->n_warnings)
        snprintf(out[n++], 160, "captures carry warnings: %zu before, %zu after", b->n_warnings, a->n_warnings);
    d->n_notes = n;
}

int opprof__diff_build(opprof__diff *d, const opprof_capture *before, const opprof_capture *after, int row_limit) {
    *d = (opprof__diff){.before = before, .after = after};
    int rc = opprof_capture_averages(before, &d->avg_before);
    if (!rc) rc = opprof_capture_averages(after, &d->avg_after);
    if (!rc) rc = paired_rows(d->avg_before, d->avg_after, &d->pairs, &d->n);
    if (rc) return rc;
    d->shown = row_limit > 0 && (size_t)row_limit < d->n ? (size_t)row_limit : d->n;
    d->self_before = opprof_averages_self_total_ns(d->avg_before);
    d->self_after = opprof_averages_self_total_ns(d->avg_after);
    d->device_before = opprof_averages_self_device_total_ns(d->avg_before);
    d->device_after = opprof_averages_self_device_total_ns(d->avg_after);
    const char *db = opprof_averages_device_name(d->avg_before), *da = opprof_averages_device_name(d->avg_after);
    d->device_name = db[0] && da[0] ? (strcmp(db, da) ? "device" : db) : NULL;
    notes(d);
    return 0;
}

void opprof__diff_free(opprof__diff *d) {
    opprof__free(d->pairs);
    opprof_averages_free(d->avg_before);
    opprof_averages_free(d->avg_after);
    *d = (opprof__diff){0};
}
