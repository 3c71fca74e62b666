/* stat_diff.c - two sets of captures compared with confidence: each row's
 * self time per step on both sides, the shift between them with its interval
 * and p-value (analysis/stats.c), Holm's correction over the rows, the steps
 * a side's noise needs, and the CI gate (include/opprof/capture.h). Its views
 * are render/stat_diff_view.c. */
#include "analysis/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One side's row of one capture, before pairing. */
typedef struct entry {
    const char *key;
    int32_t layer; /* grouped by layer: its layer, -1 none */
    bool device;
    int side;
    size_t capture, row;
} entry;

typedef struct side {
    opprof_averages **avg;
    size_t *offset; /* each capture's first step in the side's sample */
    size_t n, steps;
} side;

static int entry_cmp(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->device != y->device) return x->device ? 1 : -1;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->layer > y->layer) - (x->layer < y->layer);
}

static int side_build(side *s, const opprof_capture *const *caps, size_t n, bool by_layer) {
    opprof_averages_options with = {.distributions = true, .group_by_layer = by_layer};
    s->n = n;
    s->avg = opprof__calloc(n, sizeof *s->avg);
    s->offset = opprof__calloc(n, sizeof *s->offset);
    if (!s->avg || !s->offset) return OPPROF_ENOMEM;
    for (size_t k = 0; k < n; k++) {
        if (!caps[k]) return OPPROF_EINVAL;
        int rc = opprof_capture_averages_ex(caps[k], &with, &s->avg[k]);
        if (rc) return rc;
        s->offset[k] = s->steps;
        s->steps += opprof_averages_steps(s->avg[k]);
    }
    return 0;
}

static void side_free(side *s) {
    for (size_t k = 0; s->avg && k < s->n; k++) opprof_averages_free(s->avg[k]);
    opprof__free(s->avg);
    opprof__free(s->offset);
}

/* Every row of every capture of both sides, sorted by (device, key). */
static entry *all_entries(const side sides[2], size_t *count) {
    size_t n = 0, rows;
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < sides[s].n; k++) n += (opprof_averages_rows(sides[s].avg[k], &rows), rows);
    entry *e = opprof__alloc((n ? n : 1) * sizeof *e);
    if (!e) return NULL;
    size_t m = 0;
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < sides[s].n; k++) {
            const opprof_average_row *r = opprof_averages_rows(sides[s].avg[k], &rows);
            for (size_t i = 0; i < rows; i++) e[m++] = (entry){r[i].key, r[i].layer, r[i].device, s, k, i};
        }
    qsort(e, n, sizeof *e, entry_cmp);
    *count = n;
    return e;
}

/* The numbers of a row from its two samples. */
static int compare(opprof_stat_row *row, const double *before, size_t nb, const double *after, size_t na,
                   const opprof_stat_diff *d) {
    int rc = opprof_distribution_of(before, nb, &row->before);
    if (!rc) rc = opprof_distribution_of(after, na, &row->after);
    if (!rc) rc = opprof_shift_of(before, nb, after, na, 1 - d->alpha, &row->shift);
    if (rc) return rc;
    double median = row->before.median;
    row->change = median != 0 ? row->shift.estimate / median : NAN;
    row->change_lo = median != 0 ? row->shift.lo / median : NAN;
    row->change_hi = median != 0 ? row->shift.hi / median : NAN;
    row->p_adjusted = row->shift.p;
    const opprof_distribution *sd[2] = {&row->before, &row->after};
    for (int s = 0; s < 2; s++) {
        double x = sd[s]->median != 0 ? sd[s]->iqr / fabs(sd[s]->median) : sd[s]->iqr != 0 ? INFINITY : 0;
        if (x > row->spread) row->spread = x;
    }
    return 0;
}

/* The steps a side needs to detect d->detect at `alpha` with power 0.8, at
 * the spread's upper 80 % bound: an IQR of n values is off by about
 * 0.86 / sqrt(n) of itself (a normal sample's), and a spread measured low
 * would ask for too few steps. */
static void steps_needed(opprof_stat_row *row, const opprof_stat_diff *d, double alpha) {
    bool nothing = row->before.median == 0 && row->after.median == 0;
    double n = (double)(row->before.n < row->after.n ? row->before.n : row->after.n);
    double spread = row->spread * (1 + 0.84 * 0.864 / sqrt(n > 1 ? n : 1));
    row->steps_needed = nothing ? 0 : opprof_steps_needed(spread, d->detect, alpha, 0.8);
}

/* An operator that ran over a pool on either side (a run's parts on several threads). */
static bool pooled(const side sides[2], const entry *e, size_t from, size_t to) {
    for (size_t k = from; k < to; k++) {
        size_t n;
        const opprof_average_row *r = opprof_averages_rows(sides[e[k].side].avg[e[k].capture], &n);
        if (!e[k].device && r[e[k].row].threads > 1) return true;
    }
    return false;
}

/* A row's time per step in one capture: its self time; `wall`: its wall time,
 * a run over a pool once (its self time where the capture has no runs: one thread). */
static int row_steps(const opprof_averages *avg, size_t row, bool wall, double *out) {
    int rc = wall ? opprof_averages_row_step_wall(avg, row, out) : OPPROF_ENOENT;
    return rc == OPPROF_ENOENT ? opprof_averages_row_step_self(avg, row, out) : rc;
}

/* One row per (device, key): its samples, zeros in the steps of captures
 * that have no such row; then one more per operator that ran over a pool,
 * "KEY (wall)", its wall time per step: what the program waited for, where
 * its self time sums the threads'. */
static int pair_rows(opprof_stat_diff *d, const side sides[2], opprof__strbuf *keys, size_t *key_at) {
    size_t n = 0;
    entry *e = all_entries(sides, &n);
    double *sample[2] = {opprof__alloc((sides[0].steps + 1) * sizeof(double)),
                         opprof__alloc((sides[1].steps + 1) * sizeof(double))};
    d->rows = opprof__calloc(2 * n + 1, sizeof *d->rows); /* room for the wall rows */
    int rc = e && sample[0] && sample[1] && d->rows ? 0 : OPPROF_ENOMEM;
    for (int pass = 0; !rc && pass < 2; pass++) {
        bool wall = pass == 1;
        for (size_t i = 0; !rc && i < n;) {
            size_t end = i;
            while (end < n && !entry_cmp(&e[i], &e[end])) end++;
            if (wall && !pooled(sides, e, i, end)) {
                i = end;
                continue;
            }
            for (int s = 0; s < 2; s++) memset(sample[s], 0, sides[s].steps * sizeof(double));
            for (size_t k = i; !rc && k < end; k++) { /* a (device, key) once per capture: its steps' place */
                const side *sd = &sides[e[k].side];
                rc = row_steps(sd->avg[e[k].capture], e[k].row, wall, sample[e[k].side] + sd->offset[e[k].capture]);
            }
            if (rc) break;
            opprof_stat_row *row = &d->rows[d->n_rows];
            row->device = e[i].device;
            key_at[d->n_rows++] = keys->len; /* "KEY", "KEY (layer N)", each "... (wall)" too */
            opprof__sb_put(keys, e[i].key, strlen(e[i].key));
            if (e[i].layer >= 0) opprof__sb_printf(keys, " (layer %d)", (int)e[i].layer);
            if (wall) opprof__sb_puts(keys, " (wall)");
            opprof__sb_put(keys, "", 1); /* the key's end */
            rc = compare(row, sample[0], sides[0].steps, sample[1], sides[1].steps, d);
            i = end;
        }
    }
    opprof__free(e);
    opprof__free(sample[0]);
    opprof__free(sample[1]);
    return rc;
}

/* A whole-step row: `per_step` gives each capture's steps (the total: the
 * self time of every CPU row; the step: its wall time). */
static int compare_steps(opprof_stat_diff *d, const side sides[2], int (*per_step)(const opprof_averages *, double *),
                         opprof_stat_row *row, const char *key) {
    double *sample[2] = {opprof__alloc((sides[0].steps + 1) * sizeof(double)),
                         opprof__alloc((sides[1].steps + 1) * sizeof(double))};
    int rc = sample[0] && sample[1] ? 0 : OPPROF_ENOMEM;
    for (int s = 0; !rc && s < 2; s++)
        for (size_t k = 0; !rc && k < sides[s].n; k++) rc = per_step(sides[s].avg[k], sample[s] + sides[s].offset[k]);
    if (!rc) rc = compare(row, sample[0], sides[0].steps, sample[1], sides[1].steps, d);
    row->key = key;
    opprof__free(sample[0]);
    opprof__free(sample[1]);
    return rc;
}

static int row_order(const void *a, const void *b) {
    const opprof_stat_row *x = a, *y = b;
    if (x->significant != y->significant) return x->significant ? -1 : 1;
    double ax = fabs(x->shift.estimate), ay = fabs(y->shift.estimate);
    if (ax != ay) return ax > ay ? -1 : 1;
    if (x->device != y->device) return x->device ? 1 : -1;
    return strcmp(x->key, y->key);
}

/* Holm over the rows, the total and the step, the steps each needs against
 * that correction, then the order of the views. */
static int correct_and_sort(opprof_stat_diff *d) {
    size_t n = d->n_rows + 2; /* one family, whatever the table flags is within alpha */
    double *p = opprof__alloc(n * sizeof *p);
    if (!p) return OPPROF_ENOMEM;
    for (size_t i = 0; i < d->n_rows; i++) p[i] = d->rows[i].shift.p;
    p[d->n_rows] = d->total.shift.p;
    p[d->n_rows + 1] = d->step.shift.p;
    int rc = opprof_holm_adjust(p, n, p);
    for (size_t i = 0; !rc && i < n; i++) {
        opprof_stat_row *r = i < d->n_rows ? &d->rows[i] : i == d->n_rows ? &d->total : &d->step;
        r->p_adjusted = p[i];
        r->significant = p[i] < d->alpha;
        steps_needed(r, d, d->alpha / (double)n); /* Holm's first step: the bar to clear */
    }
    opprof__free(p);
    if (!rc) qsort(d->rows, d->n_rows, sizeof *d->rows, row_order);
    return rc;
}

int opprof_stat_diff_new(const opprof_capture *const *before, size_t n_before, const opprof_capture *const *after,
                         size_t n_after, const opprof_stat_options *options, opprof_stat_diff **out) {
    return opprof_stat_diff_new_ex(before, n_before, after, n_after, options, NULL, out);
}

int opprof_stat_diff_new_ex(const opprof_capture *const *before, size_t n_before, const opprof_capture *const *after,
                            size_t n_after, const opprof_stat_options *options, const opprof_averages_options *grouping,
                            opprof_stat_diff **out) {
    bool by_layer = grouping && grouping->group_by_layer;
    if (grouping && (grouping->group_by_input_shape || grouping->group_by_stack_n)) return OPPROF_EINVAL;
    double alpha = options && options->alpha != 0 ? options->alpha : 0.05;
    double detect = options && options->detect != 0 ? options->detect : 0.05;
    if (!before || !after || !out || !n_before || !n_after || !(alpha > 0 && alpha <= 0.5) || !(detect > 0))
        return OPPROF_EINVAL;
    opprof_stat_diff *d = opprof__calloc(1, sizeof *d);
    side sides[2] = {{0}, {0}};
    if (!d) return OPPROF_ENOMEM;
    d->alpha = alpha;
    d->detect = detect;
    int rc = side_build(&sides[0], before, n_before, by_layer);
    if (!rc) rc = side_build(&sides[1], after, n_after, by_layer);
    opprof__strbuf keys = {0};
    size_t n_entries = 0, rows;
    for (int s = 0; !rc && s < 2; s++)
        for (size_t k = 0; k < sides[s].n; k++) n_entries += (opprof_averages_rows(sides[s].avg[k], &rows), rows);
    size_t *key_at = rc ? NULL : opprof__alloc((2 * n_entries + 1) * sizeof *key_at);
    if (!rc && !key_at) rc = OPPROF_ENOMEM;
    if (!rc) rc = pair_rows(d, sides, &keys, key_at);
    if (!rc) rc = compare_steps(d, sides, opprof_averages_step_self_totals, &d->total, "total");
    if (!rc) rc = compare_steps(d, sides, opprof_averages_step_durations, &d->step, "step");
    if (!rc && keys.error) rc = OPPROF_ENOMEM;
    if (!rc) {
        d->keys = keys.data;
        for (size_t i = 0; i < d->n_rows; i++) d->rows[i].key = d->keys + key_at[i];
        rc = correct_and_sort(d);
    } else {
        opprof__sb_free(&keys);
    }
    for (int s = 0; s < 2; s++) {
        d->steps[s] = sides[s].steps;
        d->captures[s] = sides[s].n;
        side_free(&sides[s]);
    }
    opprof__free(key_at);
    if (rc) {
        opprof_stat_diff_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void opprof_stat_diff_free(opprof_stat_diff *d) {
    if (!d) return;
    opprof__free(d->rows);
    opprof__free(d->keys);
    opprof__free(d);
}

const opprof_stat_row *opprof_stat_diff_rows(const opprof_stat_diff *d, size_t *count) {
    if (count) *count = d ? d->n_rows : 0;
    return d ? d->rows : NULL;
}

const opprof_stat_row *opprof_stat_diff_total(const opprof_stat_diff *d) { return d ? &d->total : NULL; }
const opprof_stat_row *opprof_stat_diff_step_duration(const opprof_stat_diff *d) { return d ? &d->step : NULL; }

const opprof_stat_row *opprof_stat_diff_find(const opprof_stat_diff *d, const char *key) {
    if (!d || !key) return NULL;
    if (!strcmp(key, "total")) return &d->total;
    if (!strcmp(key, "step")) return &d->step;
    const opprof_stat_row *device = NULL;
    for (size_t i = 0; i < d->n_rows; i++)
        if (!strcmp(d->rows[i].key, key)) {
            if (!d->rows[i].device) return &d->rows[i];
            device = &d->rows[i];
        }
    return device;
}

void opprof_stat_diff_sides(const opprof_stat_diff *d, size_t steps[2], size_t captures[2]) {
    for (int s = 0; s < 2; s++) {
        if (steps) steps[s] = d ? d->steps[s] : 0;
        if (captures) captures[s] = d ? d->captures[s] : 0;
    }
}

/* ---- the gate ---- */

int opprof_stat_gate_parse(const char *text, opprof_stat_gate *out, char *why, size_t size) {
    if (!text || !out) return OPPROF_EINVAL;
    const char *op = strrchr(text, '>'), *lt = strrchr(text, '<');
    if (!op || (lt && lt > op)) op = lt;
    char *end = NULL;
    double bound = op ? opprof__c_strtod(op + 1, &end) : NAN;
    bool number = end && end != op + 1;
    while (end && (*end == ' ' || *end == '\t')) end++;
    const char *key_end = op;
    while (key_end && key_end > text && (key_end[-1] == ' ' || key_end[-1] == '\t')) key_end--;
    const char *why_not = !op                                           ? "it has no '>' or '<'"
                          : !number || !isfinite(bound)                 ? "its bound is no number"
                          : *end != '%' || end[1]                       ? "its bound is not a percentage (write '+3%')"
                          : key_end == text                             ? "it names no row (a name, or 'total')"
                          : (size_t)(key_end - text) >= sizeof out->key ? "its row's name is too long"
                                                                        : NULL;
    if (why_not) {
        if (why) snprintf(why, size, "'%s' is no gate: %s (e.g. 'total > +3%%', 'aten::addmm > +5%%')", text, why_not);
        return OPPROF_EINVAL;
    }
    memset(out, 0, sizeof *out);
    memcpy(out->key, text, (size_t)(key_end - text));
    out->above = *op == '>';
    out->bound = bound / 100;
    return 0;
}

int opprof_stat_gate_check(const opprof_stat_diff *d, const opprof_stat_gate *g, size_t n_gates, bool *tripped,
                           char *why, size_t size) {
    if (!d || !g || !tripped || !n_gates) return OPPROF_EINVAL;
    const opprof_stat_row *r = opprof_stat_diff_find(d, g->key);
    if (!r) {
        if (why) snprintf(why, size, "gate '%s': no row of that name on either side", g->key);
        return OPPROF_ENOENT;
    }
    bool beyond = g->above ? r->change > g->bound : r->change < g->bound;
    if (isnan(r->change)) beyond = g->above ? r->shift.estimate > 0 : r->shift.estimate < 0;
    double level = d->alpha / (double)n_gates;
    double p = g->above ? r->shift.p_greater : r->shift.p_less; /* one-sided, the gate's way */
    bool significant = p < level;
    *tripped = significant && beyond;
    if (why)
        snprintf(why, size, "gate '%s %c %+g%%': change %+.2f%% [%+.2f%%, %+.2f%%], one-sided p %.3g (%s at %.3g): %s",
                 g->key, g->above ? '>' : '<', 100 * g->bound, 100 * r->change, 100 * r->change_lo, 100 * r->change_hi,
                 p, significant ? "significant" : "not significant", level,
                 *tripped ? "FAILED"
                 : beyond ? "passed (beyond the bound, but not significant)"
                          : "passed");
    return 0;
}
