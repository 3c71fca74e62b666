/* whatif.c - what a change would gain, before it is made: each captured step
 * replayed with some operators' times changed ("aten::addmm=roof", "=0.5x",
 * "=+20us", "=-20us").
 *
 * The replay, on each thread, from the innermost events out: an event that
 * changes takes its new time (its children's changes are then in it); any
 * other event keeps its own time and loses what its children lost, so that
 * the step (ProfilerStep#N) shrinks by what its thread lost. The parts of an
 * operator run over a pool (opprof_range_part_of) end together: the run's
 * new wall time is its latest part's, each part at its own start offset with
 * its new duration, and a thread that took part loses the run's wall time
 * change, not its own part's (a run gains only when its slowest part does).
 * "=roof" is the operator's roof on the machine's ceilings (a call's FLOPs
 * and bytes, stated or from its shapes: opprof_bytes); a call without a
 * model keeps its time, and is counted. */
#include "analysis/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int opprof_what_if_parse(const char *text, opprof_what_if_change *out, size_t max, size_t *n, char *why,
                         size_t why_size) {
    if (!text || !out || !n) return OPPROF_EINVAL;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (len == 0 || (end && !end[1]))
            return snprintf(why, why_size, "an empty change in '%s'", text), OPPROF_EINVAL;
        if (*n >= max) return snprintf(why, why_size, "more than %zu changes", max), OPPROF_EINVAL;
        opprof_what_if_change *c = &out[*n];
        memset(c, 0, sizeof *c);
        if (!eq || eq == p || (size_t)(eq - p) >= sizeof c->name)
            return snprintf(why, why_size, "'%.*s' is not NAME=CHANGE", (int)len, p), OPPROF_EINVAL;
        memcpy(c->name, p, (size_t)(eq - p));
        char value[64];
        size_t vlen = len - (size_t)(eq - p) - 1;
        snprintf(value, sizeof value, "%.*s", (int)(vlen < sizeof value ? vlen : sizeof value - 1), eq + 1);
        char *rest = NULL;
        double v = opprof__c_strtod(value, &rest);
        if (!strcmp(value, "roof")) {
            c->kind = OPPROF_WHAT_IF_ROOF;
        } else if (rest != value && !strcmp(rest, "x") && v >= 0) {
            c->kind = OPPROF_WHAT_IF_SCALE, c->value = v;
        } else if (rest != value && (value[0] == '+' || value[0] == '-') &&
                   (!strcmp(rest, "us") || !strcmp(rest, "ms") || !strcmp(rest, "ns"))) {
            c->kind = OPPROF_WHAT_IF_ADD;
            c->value = v * (!strcmp(rest, "ms") ? 1e6 : !strcmp(rest, "us") ? 1e3 : 1);
        } else {
            return snprintf(why, why_size, "'%s' for %s is none of roof, Kx (0.5x), +Nus or -Nus (ns, us, ms)", value,
                            c->name),
                   OPPROF_EINVAL;
        }
        (*n)++;
        p = end ? end + 1 : p + len;
    }
    return *n ? 0 : (snprintf(why, why_size, "no change given"), OPPROF_EINVAL);
}

typedef struct replay {
    const opprof_capture *c;
    const opprof_machine *m;
    const opprof_what_if_change *changes;
    size_t n_changes;
    int *change_of_name;   /* per name: the change's index, or -1 */
    double *flops, *bytes; /* per event: a call's model */
    double step_bytes;     /* what a step moves: the sum of bytes over the steps (opprof__roof_level) */
    double *dur;           /* per event: its replayed duration */
    opprof__parallel_runs runs;
    double *run_delta; /* per run: its wall time's change (old - new) */
    opprof_what_if_result *out;
} replay;

/* A call's roof on `threads` threads' ceilings, or NAN without a model. */
static double roof_ns(const replay *r, double flops, double bytes, int threads) {
    const opprof_machine_ceilings *c = opprof_machine_for_threads(r->m, threads);
    if (!c || (flops <= 0 && bytes <= 0)) return NAN;
    return opprof__roof_ns(c, flops, bytes, bytes, r->step_bytes, NULL, NULL);
}

/* The new time of a call that `change` applies to, taking `old` ns. */
static double changed(replay *r, const opprof_what_if_change *ch, double old, double flops, double bytes, int threads) {
    r->out->changed_calls++;
    r->out->changed_before_ns += old;
    double now = old;
    if (ch->kind == OPPROF_WHAT_IF_SCALE)
        now = old * ch->value;
    else if (ch->kind == OPPROF_WHAT_IF_ADD)
        now = fmax(0, old + ch->value);
    else {
        double roof = roof_ns(r, flops, bytes, threads);
        if (isnan(roof))
            r->out->unmodelled_calls++;
        else
            now = fmin(old, roof); /* never slower than it was */
    }
    r->out->changed_after_ns += now;
    return now;
}

static void event_models(replay *r) {
    const opprof_capture *c = r->c;
    for (size_t k = 0; k < c->n_marks; k++) {
        const opprof_mark *m = &c->marks[k];
        if (m->event < 0 || (size_t)m->event >= c->n_events) continue;
        if (m->kind == OPPROF_MARK_FLOPS) r->flops[m->event] += (double)m->value.i;
        if (m->kind == OPPROF_MARK_BYTES) r->bytes[m->event] += (double)m->value.i;
    }
    for (size_t i = 0; i < c->n_events; i++) {
        const opprof_site *site = opprof_capture_site(c, c->events[i].site);
        const opprof_shapes *sh = site ? opprof_capture_shapes(c, site->shapes) : NULL;
        const char *name = c->names[c->events[i].name];
        if (r->flops[i] <= 0) r->flops[i] = (double)opprof_flops(name, sh);
        if (r->bytes[i] <= 0) r->bytes[i] = (double)opprof_bytes(name, sh);
    }
    size_t steps = 0;
    for (size_t i = 0; i < c->n_events; i++) {
        r->step_bytes += r->bytes[i];
        steps += c->events[i].kind == OPPROF_KIND_STEP;
    }
    r->step_bytes /= (double)(steps ? steps : 1);
}

/* Runs: each part's new duration at its start offset; the latest end is the new wall. */
static int replay_runs(replay *r) {
    const opprof_capture *c = r->c;
    double *new_end = opprof__calloc(r->runs.n_runs + 1, sizeof *new_end);
    if (!new_end) return OPPROF_ENOMEM;
    for (size_t i = 0; i < c->n_events; i++) {
        uint32_t run = r->runs.run_of_event ? r->runs.run_of_event[i] : UINT32_MAX;
        if (run == UINT32_MAX) continue;
        double end = (double)(c->events[i].start_ns - r->runs.runs[run].start_ns) + r->dur[i];
        if (end > new_end[run]) new_end[run] = end;
    }
    for (size_t k = 0; k < r->runs.n_runs; k++)
        r->run_delta[k] = (double)(r->runs.runs[k].end_ns - r->runs.runs[k].start_ns) - new_end[k];
    opprof__free(new_end);
    return 0;
}

/* Innermost first: each event's new duration; a part's change reaches its
 * enclosing events as its run's wall change, once per run and thread. */
static int replay_events(replay *r) {
    const opprof_capture *c = r->c;
    size_t n = c->n_events;
    double *lost = opprof__calloc(n + 1, sizeof *lost);         /* per event: what its children lost */
    uint32_t *counted = opprof__calloc(n + 1, sizeof *counted); /* per event: the last run counted in it, + 1 */
    int rc = lost && counted ? 0 : OPPROF_ENOMEM;
    if (rc) goto done;
    for (size_t after = n; after > 0; after--) {
        size_t i = after - 1;
        const opprof_event *e = &c->events[i];
        double old = (double)e->duration_ns;
        int ch = r->change_of_name[e->name];
        uint32_t run = r->runs.run_of_event ? r->runs.run_of_event[i] : UINT32_MAX;
        if (ch >= 0 && e->kind != OPPROF_KIND_DEVICE)
            r->dur[i] = changed(r, &r->changes[ch], old, r->flops[i], r->bytes[i],
                                run == UINT32_MAX ? 1 : (int)r->runs.runs[run].threads);
        else
            r->dur[i] = fmax(0, old - lost[i]);
        if (e->parent < 0 || e->kind == OPPROF_KIND_DEVICE) continue;
        if (run == UINT32_MAX) {
            lost[e->parent] += old - r->dur[i];
        }
    }
    if ((rc = replay_runs(r))) goto done;
    /* the runs' wall changes, into the events that enclose their parts (once each) */
    for (size_t i = 0; i < n; i++) {
        uint32_t run = r->runs.run_of_event ? r->runs.run_of_event[i] : UINT32_MAX;
        if (run == UINT32_MAX) continue;
        for (int32_t p = c->events[i].parent; p >= 0; p = c->events[p].parent) {
            if (counted[p] == run + 1) break;
            counted[p] = run + 1;
            if (r->change_of_name[c->events[p].name] >= 0) break; /* changed whole: its new time stands */
            r->dur[p] -= r->run_delta[run];
        }
    }
done:
    opprof__free(lost);
    opprof__free(counted);
    return rc;
}

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
    if (!n) return NAN;
    qsort(v, n, sizeof *v, by_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The steps: measured, and replayed with and without the changes. */
static int summarize(replay *r, const double *identity) {
    const opprof_capture *c = r->c;
    size_t n = 0;
    for (size_t i = 0; i < c->n_events; i++) n += c->events[i].kind == OPPROF_KIND_STEP;
    size_t steps = n ? n : 1;
    double *v = opprof__alloc(3 * steps * sizeof *v);
    if (!v) return OPPROF_ENOMEM;
    double *measured = v, *predicted = v + steps, *unchanged = v + 2 * steps;
    size_t k = 0;
    for (size_t i = 0; n && i < c->n_events; i++)
        if (c->events[i].kind == OPPROF_KIND_STEP) {
            measured[k] = (double)c->events[i].duration_ns;
            predicted[k] = r->dur[i];
            unchanged[k++] = identity[i];
        }
    if (!n) { /* no steps: the capture is one, its top-level events on their threads */
        measured[0] = unchanged[0] = (double)c->info.duration_ns;
        double lost_most = 0;
        for (size_t t = 0; t < c->n_threads; t++) {
            double lost = 0;
            for (size_t i = 0; i < c->n_events; i++)
                if (c->events[i].thread == t && c->events[i].parent < 0)
                    lost += (double)c->events[i].duration_ns - r->dur[i];
            if (fabs(lost) > fabs(lost_most)) lost_most = lost;
        }
        predicted[0] = measured[0] - lost_most;
    }
    r->out->steps = steps;
    r->out->measured_step_ns = median(measured, steps);
    r->out->predicted_step_ns = median(predicted, steps);
    double m = r->out->measured_step_ns;
    r->out->replay_error_percent = m > 0 ? 100 * (median(unchanged, steps) - m) / m : 0;
    opprof__free(v);
    return 0;
}

int opprof_capture_what_if(const opprof_capture *c, const opprof_machine *m, const opprof_what_if_change *changes,
                           size_t n_changes, opprof_what_if_result *out) {
    if (!c || !changes || !out || !c->finished) return OPPROF_EINVAL;
    memset(out, 0, sizeof *out);
    for (size_t k = 0; k < n_changes; k++)
        if (changes[k].kind == OPPROF_WHAT_IF_ROOF && (!m || m->threads < 1)) return OPPROF_EINVAL;
    replay r = {.c = c, .m = m, .changes = changes, .n_changes = n_changes, .out = out};
    size_t n = c->n_events;
    r.change_of_name = opprof__alloc((c->n_names + 1) * sizeof *r.change_of_name);
    r.flops = opprof__calloc(n + 1, sizeof *r.flops);
    r.bytes = opprof__calloc(n + 1, sizeof *r.bytes);
    r.dur = opprof__calloc(n + 1, sizeof *r.dur);
    double *identity = opprof__calloc(n + 1, sizeof *identity);
    int rc = r.change_of_name && r.flops && r.bytes && r.dur && identity ? opprof__parallel_runs_build(c, &r.runs)
                                                                         : OPPROF_ENOMEM;
    r.run_delta = rc ? NULL : opprof__calloc(r.runs.n_runs + 1, sizeof *r.run_delta);
    if (!rc && !r.run_delta) rc = OPPROF_ENOMEM;
    if (!rc) {
        event_models(&r);
        for (size_t i = 0; i < c->n_names; i++) r.change_of_name[i] = -1;
        rc = replay_events(&r); /* unchanged: the replay's own error */
    }
    if (!rc) {
        memcpy(identity, r.dur, n * sizeof *identity);
        for (size_t i = 0; i < c->n_names; i++)
            for (size_t k = 0; k < n_changes; k++)
                if (!strcmp(c->names[i], changes[k].name)) r.change_of_name[i] = (int)k;
        memset(out, 0, sizeof *out);
        rc = replay_events(&r);
    }
    if (!rc) rc = summarize(&r, identity);
    opprof__parallel_runs_free(&r.runs);
    opprof__free(r.change_of_name);
    opprof__free(r.flops);
    opprof__free(r.bytes);
    opprof__free(r.dur);
    opprof__free(r.run_delta);
    opprof__free(identity);
    return rc;
}
