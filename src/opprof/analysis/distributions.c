/* distributions.c - each key-averages row's times step by step and call by
 * call, and their distributions (opprof_averages_row_distributions).
 *
 * One pass gives every event its self time (its duration minus its CPU
 * children's) and its step (the ProfilerStep#N range open at its start, found
 * by bisection over the steps sorted by start); the calls are then sorted
 * into their rows by counting, and each row's steps summed in one scratch
 * array of the steps. The averages keep each call's step and self time
 * (16 bytes a call), not rows x steps: a row's steps are summed when asked. */
#include "analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

static const char STEP_PREFIX[] = "ProfilerStep#";

static bool is_device(const opprof_event *e) {
    return e->kind == OPPROF_KIND_DEVICE || e->kind == OPPROF_KIND_DEVICE_ANNOTATION;
}

typedef struct step_span {
    int64_t start, end;
} step_span;

static int cmp_span(const void *a, const void *b) {
    const step_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The CPU events named ProfilerStep#N, by start. */
static int find_steps(const opprof_capture *c, step_span **out, size_t *n) {
    size_t count = 0;
    for (size_t i = 0; i < c->n_events; i++)
        count +=
            !is_device(&c->events[i]) && !strncmp(c->names[c->events[i].name], STEP_PREFIX, sizeof STEP_PREFIX - 1);
    step_span *s = opprof__alloc((count ? count : 1) * sizeof *s);
    if (!s) return OPPROF_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < c->n_events; i++) {
        const opprof_event *e = &c->events[i];
        if (is_device(e) || strncmp(c->names[e->name], STEP_PREFIX, sizeof STEP_PREFIX - 1)) continue;
        s[k++] = (step_span){e->start_ns, opprof__sat_add(e->start_ns, e->duration_ns)};
    }
    qsort(s, count, sizeof *s, cmp_span);
    *out = s;
    *n = count;
    return 0;
}

/* The step open at time t (the last one started at or before it), or -1. */
static int64_t step_at(const step_span *s, size_t n, int64_t t) {
    size_t lo = 0, hi = n; /* the first step starting after t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && t < s[lo - 1].end ? (int64_t)lo - 1 : -1;
}

typedef struct call {
    double self, total;
    int64_t step;
} call;

/* Per event: its self and total time and its step, sorted by row (counting);
 * the steps' self totals on the way. */
static call *calls_by_row(const opprof_capture *c, const uint32_t *row_of_event, const opprof__parallel_runs *runs,
                          opprof__distributions *d, const step_span *steps, size_t n_steps, size_t *first) {
    size_t n_rows = d->n_rows;
    size_t n = c->n_events;
    double *self = opprof__alloc((n ? n : 1) * sizeof *self);
    call *calls = opprof__alloc((n ? n : 1) * sizeof *calls);
    if (!self || !calls) {
        opprof__free(self);
        opprof__free(calls);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) self[i] = (double)c->events[i].duration_ns;
    for (size_t i = 0; i < n; i++) {
        const opprof_event *e = &c->events[i];
        if (!is_device(e) && e->parent >= 0) self[e->parent] -= (double)e->duration_ns;
    }
    memset(first, 0, (n_rows + 1) * sizeof *first);
    for (size_t i = 0; i < n; i++) first[row_of_event[i] + 1]++;
    for (size_t r = 0; r < n_rows; r++) first[r + 1] += first[r];
    size_t *next = opprof__alloc((n_rows ? n_rows : 1) * sizeof *next);
    if (!next) {
        opprof__free(self);
        opprof__free(calls);
        return NULL;
    }
    memcpy(next, first, n_rows * sizeof *next);
    bool walls = runs && runs->n_runs && (d->walls = opprof__alloc((n ? n : 1) * sizeof *d->walls)) != NULL;
    for (size_t i = 0; i < n; i++) {
        const opprof_event *e = &c->events[i];
        int64_t step = n_steps ? step_at(steps, n_steps, e->start_ns) : 0;
        size_t at = next[row_of_event[i]]++;
        calls[at] = (call){self[i], (double)e->duration_ns, step};
        if (step >= 0 && !is_device(e)) d->step_totals[step] += self[i]; /* the table's self total */
        if (!walls) continue;
        uint32_t run = runs->run_of_event[i];
        const opprof__parallel_run *r = run != UINT32_MAX ? &runs->runs[run] : NULL;
        d->walls[at] = !r ? (double)e->duration_ns : r->key_event == i ? (double)(r->end_ns - r->start_ns) : 0;
    }
    opprof__free(next);
    if (runs && runs->n_runs && !walls) { /* the walls' allocation failed */
        opprof__free(calls);
        calls = NULL;
    }
    opprof__free(self);
    return calls;
}

/* One row: its calls' distributions, and its times per step summed in the
 * scratch arrays of the steps (zeroed again before the next row). */
static int row_distributions(opprof__distributions *d, size_t r, const call *calls, size_t n_calls, double *scratch,
                             double *step_self, double *step_total) {
    for (size_t k = 0; k < n_calls; k++) {
        if (calls[k].step < 0) continue;
        step_self[calls[k].step] += calls[k].self;
        step_total[calls[k].step] += calls[k].total;
    }
    opprof_row_distributions *out = &d->rows[r];
    int rc = opprof_distribution_of(step_self, d->steps, &out->step_self);
    if (!rc) rc = opprof_distribution_of(step_total, d->steps, &out->step_total);
    for (size_t k = 0; k < n_calls; k++) {
        if (calls[k].step >= 0) step_self[calls[k].step] = step_total[calls[k].step] = 0;
        scratch[k] = calls[k].self;
    }
    if (!rc) rc = opprof_distribution_of(scratch, n_calls, &out->call_self);
    for (size_t k = 0; k < n_calls; k++) scratch[k] = calls[k].total;
    if (!rc) rc = opprof_distribution_of(scratch, n_calls, &out->call_total);
    return rc;
}

/* What the averages keep: each call's step and self time, by row. */
static int keep_steps(opprof__distributions *d, const call *calls, size_t n) {
    d->calls = opprof__alloc((n ? n : 1) * sizeof *d->calls);
    if (!d->calls) return OPPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) d->calls[i] = (opprof__step_self){calls[i].step, calls[i].self};
    return 0;
}

int opprof__distributions_build(const opprof_capture *c, const uint32_t *row_of_event, size_t n_rows,
                                const opprof__parallel_runs *runs, opprof__distributions *d) {
    *d = (opprof__distributions){.n_rows = n_rows};
    step_span *steps = NULL;
    size_t n_steps = 0;
    int rc = find_steps(c, &steps, &n_steps);
    if (rc) return rc;
    d->steps = n_steps ? n_steps : 1;
    d->first = opprof__alloc((n_rows + 1) * sizeof *d->first);
    d->step_totals = opprof__calloc(d->steps, sizeof *d->step_totals);
    d->step_durations = opprof__calloc(d->steps, sizeof *d->step_durations);
    for (size_t k = 0; d->step_durations && k < d->steps; k++)
        d->step_durations[k] = n_steps ? (double)(steps[k].end - steps[k].start) : (double)c->info.duration_ns;
    d->rows = opprof__calloc(n_rows ? n_rows : 1, sizeof *d->rows);
    double *scratch = opprof__alloc((c->n_events ? c->n_events : 1) * sizeof *scratch);
    double *per_step = opprof__calloc(2 * d->steps, sizeof *per_step);
    call *calls = d->first && d->step_totals ? calls_by_row(c, row_of_event, runs, d, steps, n_steps, d->first) : NULL;
    rc = calls && d->rows && scratch && per_step && d->step_durations ? 0 : OPPROF_ENOMEM;
    for (size_t r = 0; !rc && r < n_rows; r++)
        rc = row_distributions(d, r, calls + d->first[r], d->first[r + 1] - d->first[r], scratch, per_step,
                               per_step + d->steps);
    if (!rc) rc = keep_steps(d, calls, c->n_events);
    opprof__free(calls);
    opprof__free(scratch);
    opprof__free(per_step);
    opprof__free(steps);
    if (rc) opprof__distributions_free(d);
    return rc;
}

void opprof__distributions_row_steps(const opprof__distributions *d, size_t row, double *out) {
    memset(out, 0, d->steps * sizeof *out);
    for (size_t k = d->first[row]; k < d->first[row + 1]; k++)
        if (d->calls[k].step >= 0) out[d->calls[k].step] += d->calls[k].self;
}

bool opprof__distributions_row_walls(const opprof__distributions *d, size_t row, double *out) {
    if (!d->walls) return false;
    memset(out, 0, d->steps * sizeof *out);
    for (size_t k = d->first[row]; k < d->first[row + 1]; k++)
        if (d->calls[k].step >= 0) out[d->calls[k].step] += d->walls[k];
    return true;
}

void opprof__distributions_free(opprof__distributions *d) {
    opprof__free(d->walls);
    opprof__free(d->first);
    opprof__free(d->calls);
    opprof__free(d->step_totals);
    opprof__free(d->step_durations);
    opprof__free(d->rows);
    *d = (opprof__distributions){0};
}
