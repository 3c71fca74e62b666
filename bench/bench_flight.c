/*
 * bench_flight - what the flight recorder costs and whether it keeps the
 * slow steps, on the seed's model (256 -> 512 -> 64, batch 128):
 *
 *   range:     a range's cost (OPPROF_SCOPE) recording 50 steps of 10,000
 *              ranges, in a session with the flight recorder and in one
 *              window of a plain session, 7 interleaved rounds; the ratio's
 *              median and interval, and two timestamps (the floor) beside;
 *   upkeep:    opprof_session_step()'s time per step with the recorder (each
 *              step closed into a capture of the ring, the rules applied) and
 *              without it, over the seed's steps: median, p99, max;
 *   detection: STEPS steps (2,000) of which 20 are slowed by twice the
 *              median step (aten::addmm waits, busy: nn_debug_delay_next),
 *              trigger 2x (and again 2.5x) the rolling median, 4 steps before: the slow steps
 *              saved, missed, the saves of unslowed steps, the saves that hold
 *              their step and its 4 predecessors; each save written as a JSON
 *              trace by on_trace_ready, and the time from its step's end to
 *              that file being whole (latency), and what the triggering steps'
 *              opprof_session_step() cost the program (its hand-off);
 *   rss:       the process's resident memory after 1,000 steps and after
 *              RSS_STEPS (100,000) steps of the recorder (keep 100): the drift.
 *
 *   build/bin/bench_flight [--json] [--steps N] [--rss-steps N]
 */
#include "bench_util.h"
#include "bench_seed.h" /* after: its `model` type would shadow bench_host's parameter */

#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <sys/stat.h>
#include <unistd.h>

enum { ROUNDS = 7, SLOWED = 20, BEFORE = 4 };

static int discard(const opprof_capture *c, void *ud) {
    (void)c;
    (void)ud;
    return 0;
}

static opprof_config config(bool flight) {
    opprof_config cfg = opprof_config_default();
    cfg.on_trace_ready = discard;
    cfg.profile_memory = true;
    if (flight) {
        cfg.flight = opprof_flight_default();
        cfg.flight.keep_steps = 100;
    }
    return cfg;
}

static opprof_session *start(const opprof_config *cfg) {
    opprof_session *s;
    int rc = opprof_session_start(&s, cfg);
    if (rc) die("session", rc);
    return s;
}

/* ---- range ---- */

static double range_ns(bool flight) {
    opprof_config cfg = config(flight);
    opprof_session *s = start(&cfg);
    int64_t spent = 0;
    enum { STEPS = 50, RANGES = 10000 };
    for (int step = 0; step < STEPS; step++) {
        int64_t t0 = bench_now_ns();
        for (int i = 0; i < RANGES; i++) {
            OPPROF_SCOPE("r");
        }
        spent += bench_now_ns() - t0;
        opprof_session_step(s);
    }
    opprof_session_free(s);
    return (double)spent / (STEPS * RANGES);
}

/* ---- upkeep ---- */

static double quantile(double *v, int n, double p) { /* v sorted */
    return n ? v[(int)(p * (n - 1) + 0.5)] : NAN;
}

typedef struct upkeep {
    double median, p99, max;
} upkeep;

static upkeep step_cost(const model *m, bool flight, int steps) {
    opprof_config cfg = config(flight);
    opprof_session *s = start(&cfg);
    double *v = malloc((size_t)steps * sizeof *v);
    for (int i = 0; i < steps; i++) {
        forward(m);
        int64_t t0 = bench_now_ns();
        opprof_session_step(s);
        v[i] = (double)(bench_now_ns() - t0);
    }
    opprof_session_free(s);
    qsort(v, (size_t)steps, sizeof *v, bench_cmp_double);
    upkeep u = {quantile(v, steps, 0.5), quantile(v, steps, 0.99), v[steps - 1]};
    free(v);
    return u;
}

/* ---- detection ---- */

typedef struct detection {
    int steps;
    bool *slowed;
    int64_t *step_end; /* when the program ended each step (before opprof_session_step) */
    int saved_slow, false_saves, complete;
    double latency_ms[64];
    int n_latency;
    char dir[64];
} detection;

static int save_and_check(const opprof_capture *c, void *ud) {
    detection *d = ud;
    opprof_capture_info info = opprof_capture_get_info(c);
    int64_t k = info.flight.trigger_step;
    char path[128];
    snprintf(path, sizeof path, "%s/step-%lld.json", d->dir, (long long)k);
    int rc = opprof_capture_chrome_write(c, path);
    if (rc) return rc;
    if (k >= 0 && k < d->steps && d->n_latency < 64)
        d->latency_ms[d->n_latency++] = (double)(bench_now_ns() - d->step_end[k]) / 1e6;
    if (k < 0 || k >= d->steps || !d->slowed[k]) {
        d->false_saves++;
        return 0;
    }
    d->saved_slow++;
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    int steps = 0;
    for (size_t i = 0; i < n; i++) steps += ev[i].kind == OPPROF_KIND_STEP;
    d->complete += info.flight.first_step == k - BEFORE && info.flight.last_step == k && steps == BEFORE + 1;
    unlink(path);
    return 0;
}

static double median_of(const int64_t *v, int n) {
    double *w = malloc((size_t)(n ? n : 1) * sizeof *w);
    for (int i = 0; i < n; i++) w[i] = (double)v[i];
    double m = n ? bench_stats_of(w, n).median : 0;
    free(w);
    return m;
}

static void detect(const model *m, detection *d, double k, double *handoff_us, double *other_us) {
    opprof_config cfg = config(true);
    cfg.on_trace_ready = save_and_check;
    cfg.user_data = d;
    cfg.flight.slower_than_median = k;
    cfg.flight.before = BEFORE;
    cfg.flight.cooldown_ms = 0;
    snprintf(d->dir, sizeof d->dir, "/tmp/opprof-bench-flight-%d", (int)getpid());
    mkdir(d->dir, 0700);
    int64_t *dur = calloc((size_t)d->steps, sizeof *dur), *step_cost_ns = calloc((size_t)d->steps, sizeof *dur);
    d->slowed = calloc((size_t)d->steps, sizeof *d->slowed);
    d->step_end = calloc((size_t)d->steps, sizeof *d->step_end);
    for (int j = 0; j < SLOWED; j++) d->slowed[100 + j * (d->steps - 200) / SLOWED + (j * 37) % 50] = true;
    opprof_session *s = start(&cfg);
    int64_t start_ns = bench_now_ns();
    for (int i = 0; i < d->steps; i++) {
        if (d->slowed[i])
            nn_debug_delay_next("aten::addmm", (int64_t)(2 * median_of(dur + (i > 50 ? i - 50 : 0), i > 50 ? 50 : i)));
        forward(m);
        d->step_end[i] = bench_now_ns();
        dur[i] = d->step_end[i] - start_ns;
        opprof_session_step(s);
        start_ns = bench_now_ns();
        step_cost_ns[i] = start_ns - d->step_end[i];
    }
    opprof_session_free(s);
    int64_t *slow_cost = calloc(SLOWED, sizeof *slow_cost), *plain_cost = calloc((size_t)d->steps, sizeof *plain_cost);
    int ns = 0, np = 0;
    for (int i = 0; i < d->steps; i++) {
        if (d->slowed[i])
            slow_cost[ns++] = step_cost_ns[i];
        else
            plain_cost[np++] = step_cost_ns[i];
    }
    *handoff_us = median_of(slow_cost, ns) / 1e3;
    *other_us = median_of(plain_cost, np) / 1e3;
    rmdir(d->dir);
    free(dur);
    free(step_cost_ns);
    free(slow_cost);
    free(plain_cost);
}

/* ---- rss ---- */

static double rss_mib(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    if (f) fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

static void rss_drift(const model *m, int steps, double *at_1000, double *at_end) {
    opprof_config cfg = config(true);
    opprof_session *s = start(&cfg);
    for (int i = 0; i < steps; i++) {
        forward(m);
        opprof_session_step(s);
        if (i == 999) *at_1000 = rss_mib();
    }
    *at_end = rss_mib();
    opprof_session_free(s);
}

int main(int argc, char **argv) {
    bool json = false;
    int steps = 2000, rss_steps = 100000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rss-steps") && i + 1 < argc)
            rss_steps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_flight [--json] [--steps N] [--rss-steps N]\n");
            return 64;
        }
    }
    if (steps < 400 || rss_steps < 1000) die("--steps must be >= 400 and --rss-steps >= 1000", OPPROF_EINVAL);
    model m = seed_model();
    for (int i = 0; i < 200; i++) forward(&m); /* warm */
    range_ns(false);                           /* a round to warm the buffers and the clock, not counted */
    double plain[ROUNDS], flight[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        plain[r] = range_ns(false);
        flight[r] = range_ns(true);
    }
    bench_ratio ratio = bench_ratio_of(flight, plain, ROUNDS);
    double floor2 = 2 * bench_timestamp_ns();
    double flight_med = bench_stats_of(flight, ROUNDS).median, plain_med = bench_stats_of(plain, ROUNDS).median;
    upkeep with = step_cost(&m, true, steps), without = step_cost(&m, false, steps);
    detection d = {.steps = steps}, d25 = {.steps = steps};
    double handoff_us, other_us, h25, o25;
    detect(&m, &d, 2, &handoff_us, &other_us);
    detect(&m, &d25, 2.5, &h25, &o25);
    qsort(d.latency_ms, (size_t)d.n_latency, sizeof *d.latency_ms, bench_cmp_double);
    double lat_med = quantile(d.latency_ms, d.n_latency, 0.5),
           lat_max = d.n_latency ? d.latency_ms[d.n_latency - 1] : NAN;
    double rss_1000 = 0, rss_end = 0;
    rss_drift(&m, rss_steps, &rss_1000, &rss_end);
    char host[256], rtext[96];
    const char *isa;
    bench_host(host, sizeof host, &isa);
    bench_ratio_text(ratio, rtext, sizeof rtext);
    if (json) {
        printf("{\n  \"host\": \"%s\",\n  \"isa\": \"%s\",\n", host, isa);
        bench_json_number(stdout, "range_ns_flight", flight_med, false);
        bench_json_number(stdout, "range_ns_plain", plain_med, false);
        bench_json_ratio(stdout, "range_flight_over_plain", ratio, false);
        bench_json_number(stdout, "two_timestamps_ns", floor2, false);
        bench_json_number(stdout, "step_upkeep_us_median", with.median / 1e3, false);
        bench_json_number(stdout, "step_upkeep_us_p99", with.p99 / 1e3, false);
        bench_json_number(stdout, "step_upkeep_us_max", with.max / 1e3, false);
        bench_json_number(stdout, "step_without_flight_us_median", without.median / 1e3, false);
        bench_json_number(stdout, "step_without_flight_us_p99", without.p99 / 1e3, false);
        bench_json_number(stdout, "detection_steps", steps, false);
        bench_json_number(stdout, "detection_slowed", SLOWED, false);
        bench_json_number(stdout, "detection_saved_slow", d.saved_slow, false);
        bench_json_number(stdout, "detection_false_saves", d.false_saves, false);
        bench_json_number(stdout, "detection_complete_saves", d.complete, false);
        bench_json_number(stdout, "detection_2_5x_saved_slow", d25.saved_slow, false);
        bench_json_number(stdout, "detection_2_5x_false_saves", d25.false_saves, false);
        bench_json_number(stdout, "detection_2_5x_complete_saves", d25.complete, false);
        bench_json_number(stdout, "save_latency_ms_median", lat_med, false);
        bench_json_number(stdout, "save_latency_ms_max", lat_max, false);
        bench_json_number(stdout, "triggering_step_call_us_median", handoff_us, false);
        bench_json_number(stdout, "other_step_call_us_median", other_us, false);
        bench_json_number(stdout, "rss_steps", rss_steps, false);
        bench_json_number(stdout, "rss_mib_after_1000_steps", rss_1000, false);
        bench_json_number(stdout, "rss_mib_at_end", rss_end, false);
        bench_json_number(stdout, "rss_drift_mib", rss_end - rss_1000, true);
        puts("}");
    } else {
        printf("host: %s (%s)\n", host, isa);
        printf("range: %.2f ns with the flight recorder, %.2f ns in a plain window: %s (two timestamps: %.2f ns)\n",
               flight_med, plain_med, rtext, floor2);
        printf("step upkeep: median %.2f us, p99 %.2f us, max %.2f us (without the recorder: %.2f us, p99 %.2f us)\n",
               with.median / 1e3, with.p99 / 1e3, with.max / 1e3, without.median / 1e3, without.p99 / 1e3);
        printf("detection, %d steps, %d slowed by 2x the median step, trigger 2x: %d saved, %d missed, %d saves of "
               "unslowed steps, %d with their step and %d predecessors\n",
               steps, SLOWED, d.saved_slow, SLOWED - d.saved_slow, d.false_saves, d.complete, BEFORE);
        printf("... trigger 2.5x: %d saved, %d saves of unslowed steps, %d complete\n", d25.saved_slow, d25.false_saves,
               d25.complete);
        printf("save latency (step end to its JSON written): median %.2f ms, max %.2f ms; the triggering step's "
               "opprof_session_step: %.2f us (others %.2f us)\n",
               lat_med, lat_max, handoff_us, other_us);
        printf("rss: %.2f MiB after 1,000 steps, %.2f MiB after %d: drift %+.2f MiB\n", rss_1000, rss_end, rss_steps,
               rss_end - rss_1000);
    }
    return 0;
}
