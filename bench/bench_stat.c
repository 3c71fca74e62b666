/*
 * bench_stat - does `opprof diff --stat` tell a real change from noise, on
 * this machine, with the seed's model (256 -> 512 -> 64, batch 128)?
 *
 *   A/A:       the same build on both sides, 2 x STEPS steps, REPS times:
 *              how often a row or the total is flagged significant (at 5 %
 *              and at 1 %);
 *   detection: aten::addmm slowed by 5 % and by 2 % on one side
 *              (nn_debug_slow_down: busy time, a share of its own): how often
 *              a gate on its row ('aten::addmm > +0%', one test) trips, and
 *              how often the table flags it (Holm over every row); the 2 %
 *              again with the steps that the tool said were needed;
 *   blocked:   A/A with a side's steps run one after the other instead of
 *              interleaved (what drift does to a comparison);
 *   speed:     `opprof diff --stat` of two 100-step traces, whole command;
 *   method:    on the same data, aten::addmm's row alone (one test, as a
 *              gate) by Hodges-Lehmann / Mann-Whitney (opprof's) and by a
 *              percentile bootstrap of the difference of medians (2,000
 *              resamples): how often each flags the A/A runs and finds +5 %.
 *
 * Each step is a capture of its own (a session of one step), the sides'
 * steps interleaved, as the Timer's guidance asks.
 *
 *   build/bin/bench_stat [--json] [--reps N] [--steps N]
 */
#include "bench_util.h"
#include "bench_seed.h" /* after: its `model` type would shadow bench_host's parameter */

#include <nn/nn.h>
#include <opprof/opprof.h>
#include <opprof/capture.h>

enum { MAX_STEPS = 2000 };

typedef struct sides {
    opprof_capture *c[2][MAX_STEPS];
    int n;
} sides;

/* n steps a side, the after side's aten::addmm slowed by `slow`;
 * interleaved (before, after, before...) or in two blocks. */
static void record(sides *s, const model *m, int n, double slow, bool interleaved) {
    s->n = n;
    for (int i = 0; i < 2 * n; i++) {
        int side = interleaved ? i % 2 : i >= n, k = interleaved ? i / 2 : i % n;
        nn_debug_slow_down("aten::addmm", side ? slow : 0);
        s->c[side][k] = one_step(m);
    }
    nn_debug_slow_down(NULL, 0);
}

static void sides_free(sides *s) {
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < s->n; k++) opprof_capture_free(s->c[side][k]);
}

/* aten::addmm's time in each capture of a side, ns. */
static void addmm_sample(opprof_capture *const *caps, int n, double *out) {
    for (int k = 0; k < n; k++) {
        size_t count;
        const opprof_event *ev = opprof_capture_events(caps[k], &count);
        out[k] = 0;
        for (size_t i = 0; i < count; i++)
            if (!strcmp(opprof_capture_name(caps[k], ev[i].name), "aten::addmm")) out[k] += (double)ev[i].duration_ns;
    }
}

static double median_sorted_copy(const double *v, int n, double *scratch) {
    memcpy(scratch, v, (size_t)n * sizeof *v);
    return bench_stats_of(scratch, n).median;
}

/* The percentile bootstrap of median(after) - median(before): does its
 * interval at 1 - alpha leave 0 out? */
static bool bootstrap_differs(const double *b, const double *a, int n, double alpha, uint64_t *seed) {
    enum { B = 2000 };
    static double diffs[B];
    double rb[MAX_STEPS], ra[MAX_STEPS], scratch[MAX_STEPS];
    for (int r = 0; r < B; r++) {
        for (int i = 0; i < n; i++) {
            *seed = *seed * 6364136223846793005u + 1442695040888963407u;
            rb[i] = b[(*seed >> 33) % (uint64_t)n];
            *seed = *seed * 6364136223846793005u + 1442695040888963407u;
            ra[i] = a[(*seed >> 33) % (uint64_t)n];
        }
        diffs[r] = median_sorted_copy(ra, n, scratch) - median_sorted_copy(rb, n, scratch);
    }
    qsort(diffs, B, sizeof *diffs, bench_cmp_double);
    double lo = diffs[(int)(alpha / 2 * B)], hi = diffs[(int)((1 - alpha / 2) * B) - 1];
    return lo > 0 || hi < 0;
}

typedef struct verdict {
    bool any_row, total, addmm_slower, gate, hl_single, boot_single;
    size_t addmm_needed;
    double addmm_change;
} verdict;

static verdict judge(const sides *s, double alpha, double detect) {
    opprof_stat_options o = {.alpha = alpha, .detect = detect};
    opprof_stat_diff *d;
    int rc = opprof_stat_diff_new((const opprof_capture *const *)s->c[0], (size_t)s->n,
                                  (const opprof_capture *const *)s->c[1], (size_t)s->n, &o, &d);
    if (rc) die("diff --stat", rc);
    verdict v = {.total = opprof_stat_diff_total(d)->significant};
    size_t n;
    const opprof_stat_row *rows = opprof_stat_diff_rows(d, &n);
    for (size_t i = 0; i < n; i++) v.any_row |= rows[i].significant;
    const opprof_stat_row *addmm = opprof_stat_diff_find(d, "aten::addmm");
    if (addmm) {
        v.addmm_slower = addmm->significant && addmm->change > 0;
        v.addmm_needed = addmm->steps_needed;
        v.addmm_change = addmm->change;
        opprof_stat_gate g = {.key = "aten::addmm", .above = true, .bound = 0};
        if (opprof_stat_gate_check(d, &g, 1, &v.gate, NULL, 0)) die("gate", -22);
        v.hl_single = addmm->shift.p < alpha; /* either way: the row alone */
    }
    opprof_stat_diff_free(d);
    static uint64_t seed = 12345;
    double b[MAX_STEPS], a[MAX_STEPS];
    addmm_sample(s->c[0], s->n, b);
    addmm_sample(s->c[1], s->n, a);
    v.boot_single = bootstrap_differs(b, a, s->n, alpha, &seed);
    return v;
}

typedef struct rates {
    double any_row, total, addmm, any_row_1pct, median_needed, median_change;
    double hl_single, boot_single; /* aten::addmm's row alone, either way, at 5 % */
    double gate;                   /* 'aten::addmm > +0%' tripped */
} rates;

/* reps repetitions of one experiment. */
static rates experiment(const model *m, int reps, int steps, double slow, bool interleaved, double detect) {
    static sides s;
    int any = 0, total = 0, addmm = 0, any1 = 0, hl = 0, boot = 0, gate = 0;
    double *needed = calloc((size_t)reps, sizeof *needed), *change = calloc((size_t)reps, sizeof *change);
    for (int r = 0; r < reps; r++) {
        record(&s, m, steps, slow, interleaved);
        verdict v5 = judge(&s, 0.05, detect), v1 = judge(&s, 0.01, detect);
        any += v5.any_row || v5.total;
        total += v5.total;
        addmm += v5.addmm_slower;
        any1 += v1.any_row || v1.total;
        hl += v5.hl_single;
        gate += v5.gate;
        boot += v5.boot_single;
        needed[r] = v5.addmm_needed == SIZE_MAX ? 1e9 : (double)v5.addmm_needed;
        change[r] = v5.addmm_change;
        sides_free(&s);
    }
    rates out = {(double)any / reps,
                 (double)total / reps,
                 (double)addmm / reps,
                 (double)any1 / reps,
                 bench_stats_of(needed, reps).median,
                 bench_stats_of(change, reps).median,
                 (double)hl / reps,
                 (double)boot / reps,
                 (double)gate / reps};
    free(needed);
    free(change);
    return out;
}

/* `opprof diff --stat` of two 100-step traces, whole command: ms, median of 11. */
static bench_stats diff_command_ms(const model *m) {
    char paths[2][64];
    for (int side = 0; side < 2; side++) {
        opprof_config cfg = opprof_config_default();
        opprof_session *s;
        opprof_capture *c;
        int rc = opprof_session_start(&s, &cfg);
        for (int k = 0; !rc && k < 100; k++) {
            forward(m);
            rc = opprof_session_step(s);
        }
        if (!rc) rc = opprof_session_stop(s);
        if (!rc) rc = opprof_session_take_capture(s, &c);
        snprintf(paths[side], sizeof paths[side], "/tmp/opprof-bench-stat-%d-%d.json", (int)getpid(), side);
        if (!rc) rc = opprof_capture_chrome_write(c, paths[side]);
        if (rc) die("100-step trace", rc);
        opprof_capture_free(c);
        opprof_session_free(s);
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s/opprof diff --stat %s %s > /dev/null", bench_self_dir(), paths[0], paths[1]);
    double ms[11];
    for (int i = 0; i < 11; i++) {
        int64_t t0 = bench_now_ns();
        if (system(cmd) != 0) die("opprof diff --stat", -1);
        ms[i] = (double)(bench_now_ns() - t0) / 1e6;
    }
    unlink(paths[0]);
    unlink(paths[1]);
    return bench_stats_of(ms, 11);
}

int main(int argc, char **argv) {
    bool json = false;
    int reps = 100, steps = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_stat [--json] [--reps N] [--steps N]\n");
            return 64;
        }
    }
    if (reps < 1 || steps < 2 || steps > MAX_STEPS) die("--reps >= 1, --steps in [2, 2000]", -22);
    model m = seed_model();
    for (int i = 0; i < 200; i++) forward(&m); /* warm */
    rates aa = experiment(&m, reps, steps, 0, true, 0.05);
    rates blocked = experiment(&m, reps, steps, 0, false, 0.05);
    rates five = experiment(&m, reps, steps, 0.05, true, 0.05);
    rates two = experiment(&m, reps, steps, 0.02, true, 0.02);
    int needed = (int)fmin(MAX_STEPS, fmax(2, two.median_needed));
    rates two_needed = experiment(&m, reps, needed, 0.02, true, 0.02);
    bench_stats cmd = diff_command_ms(&m);
    char host[256];
    const char *isa;
    bench_host(host, sizeof host, &isa);
    if (json) {
        printf("{\n  \"host\": \"%s\", \"isa\": \"%s\", \"reps\": %d, \"steps\": %d,\n", host, isa, reps, steps);
        bench_json_number(stdout, "aa_flagged_rate_5pct", aa.any_row, false);
        bench_json_number(stdout, "aa_total_flagged_rate_5pct", aa.total, false);
        bench_json_number(stdout, "aa_flagged_rate_1pct", aa.any_row_1pct, false);
        bench_json_number(stdout, "aa_gate_tripped_rate_5pct", aa.gate, false);
        bench_json_number(stdout, "aa_blocked_flagged_rate_5pct", blocked.any_row, false);
        bench_json_number(stdout, "aa_blocked_gate_tripped_rate_5pct", blocked.gate, false);
        bench_json_number(stdout, "detect_5pct_gate_rate", five.gate, false);
        bench_json_number(stdout, "detect_5pct_table_rate", five.addmm, false);
        bench_json_number(stdout, "detect_5pct_median_change", five.median_change, false);
        bench_json_number(stdout, "detect_2pct_gate_rate", two.gate, false);
        bench_json_number(stdout, "detect_2pct_table_rate", two.addmm, false);
        bench_json_number(stdout, "detect_2pct_steps_needed", two.median_needed, false);
        bench_json_number(stdout, "detect_2pct_gate_rate_at_needed", two_needed.gate, false);
        bench_json_number(stdout, "detect_2pct_table_rate_at_needed", two_needed.addmm, false);
        bench_json_number(stdout, "single_row_aa_rate_hodges_lehmann", aa.hl_single, false);
        bench_json_number(stdout, "single_row_aa_rate_bootstrap", aa.boot_single, false);
        bench_json_number(stdout, "single_row_detect_5pct_hodges_lehmann", five.hl_single, false);
        bench_json_number(stdout, "single_row_detect_5pct_bootstrap", five.boot_single, false);
        bench_json_number(stdout, "single_row_detect_2pct_hodges_lehmann", two.hl_single, false);
        bench_json_number(stdout, "single_row_detect_2pct_bootstrap", two.boot_single, false);
        bench_json_number(stdout, "diff_stat_100_steps_ms_median", cmd.median, false);
        bench_json_number(stdout, "diff_stat_100_steps_ms_iqr", cmd.iqr, true);
        puts("}");
    } else {
        printf("host: %s (%s); %d repetitions of %d steps a side, interleaved\n", host, isa, reps, steps);
        printf("A/A flagged (a row or the total): %.0f%% at 5%%, %.0f%% at 1%%; the total alone %.0f%%\n",
               100 * aa.any_row, 100 * aa.any_row_1pct, 100 * aa.total);
        printf("A/A: the gate 'aten::addmm > +0%%' tripped %.0f%%\n", 100 * aa.gate);
        printf("A/A with the sides in blocks instead: %.0f%% flagged, the gate tripped %.0f%%\n", 100 * blocked.any_row,
               100 * blocked.gate);
        printf("aten::addmm +5%%: the gate tripped %.0f%%, the table flagged it %.0f%% (median change %+.1f%%)\n",
               100 * five.gate, 100 * five.addmm, 100 * five.median_change);
        printf("aten::addmm +2%%: gate %.0f%%, table %.0f%%; steps needed (the tool's median): %.0f; at %d steps: "
               "gate %.0f%%, table %.0f%%\n",
               100 * two.gate, 100 * two.addmm, two.median_needed, needed, 100 * two_needed.gate,
               100 * two_needed.addmm);
        printf("aten::addmm's row alone at 5%%: A/A flagged %.0f%% (Hodges-Lehmann) vs %.0f%% (bootstrap); +5%% found "
               "%.0f%% vs %.0f%%; +2%% found %.0f%% vs %.0f%%\n",
               100 * aa.hl_single, 100 * aa.boot_single, 100 * five.hl_single, 100 * five.boot_single,
               100 * two.hl_single, 100 * two.boot_single);
        printf("opprof diff --stat of two 100-step traces: %.1f ms (IQR %.1f)\n", cmd.median, cmd.iqr);
    }
    return 0;
}
