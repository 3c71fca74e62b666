/* timer.c - torch.utils.benchmark's Timer for C callables: timeit,
 * blocked_autorange, adaptive_autorange, the Measurement printout, Compare. */
#define _GNU_SOURCE
#include "analysis/analysis.h"

#include <opprof/stats.h>
#include <opprof/timer.h>

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

opprof_timer opprof_timer_default(void) {
    opprof_timer t;
    memset(&t, 0, sizeof t);
    t.num_threads = 1;
    t.pin_cpu = -1;
    return t;
}

static void noop(void *ctx) { (void)ctx; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* torch.quantile's linear interpolation on sorted values. */
static double quantile(const double *sorted, size_t n, double q) {
    if (n == 0) return 0;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (pos - (double)lo) * (sorted[hi] - sorted[lo]);
}

static void copy_label(char *dst, size_t size, const char *src) { snprintf(dst, size, "%s", src ? src : ""); }

int opprof_measurement_new(const double *block_times, size_t count, int64_t number_per_run, int num_threads,
                           const char *label, const char *sub_label, const char *description,
                           opprof_measurement **out) {
    if (!out || (count && !block_times) || number_per_run < 1) return OPPROF_EINVAL;
    opprof_measurement *m = opprof__calloc(1, sizeof *m);
    if (!m) return OPPROF_ENOMEM;
    m->times = opprof__alloc((count ? count : 1) * sizeof *m->times);
    if (!m->times) {
        opprof__free(m);
        return OPPROF_ENOMEM;
    }
    double sum = 0;
    for (size_t i = 0; i < count; i++) {
        m->times[i] = block_times[i] / (double)number_per_run;
        sum += m->times[i];
    }
    m->n_times = count;
    m->number_per_run = number_per_run;
    m->num_threads = num_threads;
    double *sorted = opprof__alloc((count ? count : 1) * sizeof *sorted);
    if (!sorted) {
        opprof_measurement_free(m);
        return OPPROF_ENOMEM;
    }
    memcpy(sorted, m->times, count * sizeof *sorted);
    qsort(sorted, count, sizeof *sorted, cmp_double);
    m->median = quantile(sorted, count, 0.5);
    m->q1 = quantile(sorted, count, 0.25);
    m->q3 = quantile(sorted, count, 0.75);
    m->iqr = m->q3 - m->q1;
    m->mean = count ? sum / (double)count : 0;
    opprof__free(sorted);
    m->precision_reached = true;
    if (opprof_median_interval(m->times, count, 0.95, &m->median_low, &m->median_high)) {
        opprof_measurement_free(m);
        return OPPROF_ENOMEM;
    }
    copy_label(m->label, sizeof m->label, label);
    copy_label(m->sub_label, sizeof m->sub_label, sub_label);
    copy_label(m->description, sizeof m->description, description);
    *out = m;
    return 0;
}

void opprof_measurement_free(opprof_measurement *m) {
    if (!m) return;
    opprof__free(m->times);
    opprof__free(m);
}

double opprof_measurement_precision(const opprof_measurement *m) {
    if (!m || isnan(m->median_low) || !(m->median > 0)) return NAN;
    double below = m->median - m->median_low, above = m->median_high - m->median;
    return (below > above ? below : above) / m->median;
}

/* With a precision asked: whether the measurement reached it. */
static void judge_precision(opprof_measurement *m, double asked) {
    m->precision_asked = asked > 0 ? asked : 0;
    double got = opprof_measurement_precision(m);
    m->precision_reached = !(asked > 0) || (!isnan(got) && got <= asked);
}

bool opprof_measurement_meets_confidence(const opprof_measurement *m, double threshold) {
    return m && m->median > 0 && m->iqr / m->median < threshold;
}

/* ---- running ---- */

typedef struct runner {
    const opprof_timer *t;
    double clock_overhead; /* seconds: two clock reads */
    double call_overhead;  /* seconds per run: the loop and the indirect call */
    bool pinned;
    cpu_set_t saved;
} runner;

static double now_s(const opprof_timer *t) {
    return t->clock ? t->clock(t->ctx) : (double)opprof__monotonic_ns() * 1e-9;
}

/* One block of `number` runs, raw seconds (the timer's overhead included). */
static double block_raw(const opprof_timer *t, opprof_timer_fn fn, int64_t number) {
    if (t->setup) t->setup(t->ctx);
    double t0 = now_s(t);
    for (int64_t i = 0; i < number; i++) fn(t->ctx);
    double t1 = now_s(t);
    if (t->teardown) t->teardown(t->ctx);
    return t1 - t0;
}

static double median_of(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return quantile(v, n, 0.5);
}

static void runner_start(runner *r, const opprof_timer *t) {
    memset(r, 0, sizeof *r);
    r->t = t;
    if (t->pin_cpu >= 0 && sched_getaffinity(0, sizeof r->saved, &r->saved) == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(t->pin_cpu, &one);
        r->pinned = sched_setaffinity(0, sizeof one, &one) == 0;
    }
    /* The timer's own cost: clock reads, and the loop calling a function
     * that does nothing. Both are subtracted from every block. */
    opprof_timer bare = *t;
    bare.setup = bare.teardown = NULL;
    double v[21];
    for (int i = 0; i < 21; i++) v[i] = block_raw(&bare, noop, 0);
    r->clock_overhead = median_of(v, 21);
    for (int i = 0; i < 21; i++) v[i] = (block_raw(&bare, noop, 10000) - r->clock_overhead) / 10000.0;
    r->call_overhead = median_of(v, 21);
    if (r->call_overhead < 0) r->call_overhead = 0;
}

static void runner_stop(runner *r) {
    if (r->pinned) sched_setaffinity(0, sizeof r->saved, &r->saved);
}

/* One block, the timer's overhead taken out; *raw_out: the time it took. */
static double block(const runner *r, int64_t number, double *raw_out) {
    double raw = block_raw(r->t, r->t->stmt, number);
    double net = raw - r->clock_overhead - r->call_overhead * (double)number;
    if (raw_out) *raw_out = raw;
    return net > 0 ? net : 0;
}

/* PyTorch's _estimate_block_size. */
static int64_t estimate_block_size(const runner *r, double min_run_time) {
    double overhead = r->clock_overhead > 0 ? r->clock_overhead : 1e-9;
    int64_t number = 1;
    for (;;) {
        double taken = block_raw(r->t, r->t->stmt, number);
        double relative = overhead / (taken > 0 ? taken : 1e-12);
        if (relative <= 1e-4 && taken >= min_run_time / 1000) break;
        if (taken > min_run_time) break;
        if (number * 10 > 2147483647) break;
        number *= 10;
    }
    return number;
}

typedef bool (*stop_fn)(const double *times, size_t n, int64_t number, double threshold);

/* PyTorch's _threaded_measurement_loop. */
static int measurement_loop(const runner *r, int64_t number, double min_run_time, double max_run_time, stop_fn stop,
                            double threshold, opprof_measurement **out) {
    double *times = NULL;
    size_t n = 0, cap = 0;
    double total = 0;
    bool can_stop = false;
    while (total < min_run_time || !can_stop) {
        double raw, t = block(r, number, &raw);
        if (opprof__grow((void **)&times, &cap, n + 1, sizeof *times)) {
            opprof__free(times);
            return OPPROF_ENOMEM;
        }
        times[n++] = t;
        total += raw; /* time spent, as PyTorch counts it: a block whose net time is 0 still took time */
        can_stop = stop(times, n, number, threshold);
        if (max_run_time > 0 && total > max_run_time) break;
    }
    const opprof_timer *tm = r->t;
    int rc = opprof_measurement_new(times, n, number, tm->num_threads, tm->label, tm->sub_label, tm->description, out);
    opprof__free(times);
    if (!rc) (*out)->overhead_per_run = r->call_overhead + r->clock_overhead / (double)number;
    return rc;
}

static bool stop_always(const double *times, size_t n, int64_t number, double threshold) {
    (void)times, (void)n, (void)number, (void)threshold;
    return true;
}

static bool stop_when_confident(const double *times, size_t n, int64_t number, double threshold) {
    if (n <= 3) return false;
    opprof_measurement *m;
    if (opprof_measurement_new(times, n, number, 1, NULL, NULL, NULL, &m)) return true;
    bool ok = opprof_measurement_meets_confidence(m, threshold);
    opprof_measurement_free(m);
    return ok;
}

static int check_timer(const opprof_timer *t) {
    if (!t || !t->stmt || t->num_threads < 1 || !(t->precision >= 0 && t->precision < 1)) return OPPROF_EINVAL;
    if (opprof_is_active())
        opprof__say("opprof timer: warning: a profiler session is active: measure without it "
                    "(the measurement says so too)\n");
    return 0;
}

static void finish(opprof_measurement *m, bool was_active) {
    if (m) m->profiler_active = was_active || opprof_is_active();
}

int opprof_timer_timeit(const opprof_timer *t, int64_t number, opprof_measurement **out) {
    int rc = check_timer(t);
    if (rc) return rc;
    if (!out || number < 1) return OPPROF_EINVAL;
    bool active = opprof_is_active();
    runner r;
    runner_start(&r, t);
    double one = block(&r, number, NULL);
    runner_stop(&r);
    rc = opprof_measurement_new(&one, 1, number, t->num_threads, t->label, t->sub_label, t->description, out);
    if (!rc) (*out)->overhead_per_run = r.call_overhead + r.clock_overhead / (double)number;
    if (!rc) finish(*out, active);
    return rc;
}

int opprof_timer_blocked_autorange(const opprof_timer *t, double min_run_time, opprof_measurement **out) {
    int rc = check_timer(t);
    if (rc) return rc;
    if (!out || !(min_run_time > 0)) return OPPROF_EINVAL;
    bool active = opprof_is_active();
    runner r;
    runner_start(&r, t);
    int64_t number = estimate_block_size(&r, min_run_time);
    rc = measurement_loop(&r, number, min_run_time, 0, stop_always, 0, out);
    runner_stop(&r);
    if (!rc) finish(*out, active);
    if (!rc) judge_precision(*out, t->precision);
    return rc;
}

int opprof_timer_adaptive_autorange(const opprof_timer *t, double threshold, double min_run_time, double max_run_time,
                                    opprof_measurement **out) {
    int rc = check_timer(t);
    if (rc) return rc;
    if (!out || !(threshold > 0) || min_run_time < 0 || !(max_run_time > 0)) return OPPROF_EINVAL;
    bool active = opprof_is_active();
    runner r;
    runner_start(&r, t);
    int64_t number = estimate_block_size(&r, 0.05);
    rc = measurement_loop(&r, number, min_run_time, max_run_time, stop_when_confident, threshold, out);
    runner_stop(&r);
    if (!rc) finish(*out, active);
    return rc;
}
