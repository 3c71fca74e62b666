/* test_stats.c - the statistics of <opprof/stats.h> on samples whose answers
 * are worked out by hand, the key averages' per-step distributions, the
 * comparison with confidence (opprof_stat_diff) and its gates, and
 * `opprof diff --stat` with its exit statuses. No timing of this machine is
 * asserted: every capture here is built by hand. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/stats.h>

#include <math.h>
#include <yajl/yajl_tree.h>

#define CHECK_NEAR(a, b, tol)                                                                                     \
    do {                                                                                                          \
        double near_a = (a), near_b = (b);                                                                        \
        check_count++;                                                                                            \
        if (!(fabs(near_a - near_b) <= (tol))) {                                                                  \
            check_failures++;                                                                                     \
            fprintf(stderr, "%s:%d: %s ~ %s failed: %.9g != %.9g\n", __FILE__, __LINE__, #a, #b, near_a, near_b); \
        }                                                                                                         \
    } while (0)

TEST_CASE(distribution_of_one_to_ten) {
    double v[10] = {7, 3, 10, 1, 5, 9, 2, 8, 4, 6}; /* 1..10, shuffled */
    opprof_distribution d;
    CHECK_INT(opprof_distribution_of(v, 10, &d), 0);
    CHECK_INT(d.n, 10);
    CHECK_NEAR(d.min, 1, 0);
    CHECK_NEAR(d.max, 10, 0);
    CHECK_NEAR(d.median, 5.5, 1e-12);
    CHECK_NEAR(d.q1, 3.25, 1e-12); /* 1 + 0.25 * 9 */
    CHECK_NEAR(d.q3, 7.75, 1e-12);
    CHECK_NEAR(d.p90, 9.1, 1e-12);
    CHECK_NEAR(d.p99, 9.91, 1e-12);
    CHECK_NEAR(d.iqr, 4.5, 1e-12);
    CHECK_NEAR(d.mean, 5.5, 1e-12);
    CHECK_NEAR(d.cv, 0.5504818825631803, 1e-12); /* sqrt(55 / 6) / 5.5 */
    CHECK_NEAR(v[0], 7, 0);                      /* not sorted in place */
    CHECK_INT(opprof_distribution_of(NULL, 0, &d), 0);
    CHECK_INT(d.n, 0);
    CHECK_INT(opprof_distribution_of(NULL, 3, &d), OPPROF_EINVAL);
}

/* before {1, 2, 4}, after {3, 5, 6, 7}: ranks of after in the 7 values are
 * 3, 5, 6, 7 (sum 21), U = 21 - 4 * 5 / 2 = 11 (the pairs with after >
 * before: 2 + 3 + 3 + 3), mean 6, variance 3 * 4 * 8 / 12 = 8, z = (11 - 6 -
 * 0.5) / sqrt(8) = 1.591, p = 0.1116. The 12 differences after - before,
 * sorted: -1 1 1 2 2 3 3 4 4 5 5 6: Hodges-Lehmann (3 + 3) / 2 = 3. At 80 %:
 * k = floor(6 + 0.5 - 1.2816 * sqrt(8)) = 2: [d(2), d(11)] = [1, 5]. At 95 %
 * k = floor(6.5 - 1.96 * 2.83) = 0: no finite interval. */
static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Past 255 values the sort is a radix sort on the doubles' bits: the same
 * order statistics as qsort's order on negatives, -0.0 and 0.0, tiny and
 * huge values, infinities and repeats. */
TEST_CASE(distribution_of_many_values) {
    enum { N = 5000 };
    static double v[N], sorted[N];
    uint64_t seed = 12345;
    for (int i = 0; i < N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double r = (double)(seed >> 11) / 9007199254740992.0; /* [0, 1) */
        v[i] = i % 7 == 0 ? -r * 1e6 : i % 11 == 0 ? r * 1e-300 : i % 13 == 0 ? 42.0 : r * 1e9;
    }
    v[1] = -0.0, v[2] = 0.0, v[3] = 1.0 / 0.0, v[4] = -1.0 / 0.0, v[5] = 5e-324;
    memcpy(sorted, v, sizeof v);
    qsort(sorted, N, sizeof *sorted, ascending);
    opprof_distribution d;
    CHECK_INT(opprof_distribution_of(v, N, &d), 0);
    CHECK(d.min == sorted[0] && d.max == sorted[N - 1]);
    double pos = 0.5 * (N - 1), med = sorted[(int)pos] + (pos - (int)pos) * (sorted[(int)pos + 1] - sorted[(int)pos]);
    CHECK(d.median == med);
    pos = 0.25 * (N - 1);
    CHECK(d.q1 == sorted[(int)pos] + (pos - (int)pos) * (sorted[(int)pos + 1] - sorted[(int)pos]));
}

TEST_CASE(mann_whitney_worked_by_hand) {
    double before[] = {4, 1, 2}, after[] = {6, 3, 7, 5};
    opprof_shift s;
    CHECK_INT(opprof_shift_of(before, 3, after, 4, 0.80, &s), 0);
    CHECK_NEAR(s.u, 11, 0);
    CHECK_NEAR(s.z, 4.5 / sqrt(8), 1e-12);
    CHECK_NEAR(s.p, 0.11161176829829222, 1e-12);
    CHECK_NEAR(s.estimate, 3, 0);
    CHECK_NEAR(s.lo, 1, 0);
    CHECK_NEAR(s.hi, 5, 0);
    /* one-sided: P(U >= 11) ~ Phi(-(11 - 6 - 0.5) / sqrt 8) = 0.0558; P(U <= 11) ~ Phi((11 - 6 + 0.5) / sqrt 8) */
    CHECK_NEAR(s.p_greater, 0.5 * erfc(4.5 / sqrt(8) / sqrt(2)), 1e-12);
    CHECK_NEAR(s.p_greater, 0.055805884149146, 1e-12);
    CHECK_NEAR(s.p_less, 0.5 * erfc(-5.5 / sqrt(8) / sqrt(2)), 1e-12);
    CHECK_INT(opprof_shift_of(before, 3, after, 4, 0.95, &s), 0);
    CHECK(isinf(s.lo) && s.lo < 0 && isinf(s.hi) && s.hi > 0);
    /* the other way round: the same test, mirrored */
    CHECK_INT(opprof_shift_of(after, 4, before, 3, 0.80, &s), 0);
    CHECK_NEAR(s.u, 1, 0);
    CHECK_NEAR(s.estimate, -3, 0);
    CHECK_NEAR(s.lo, -5, 0);
    CHECK_NEAR(s.hi, -1, 0);
    CHECK_NEAR(s.p, 0.11161176829829222, 1e-12);
}

/* before {1, 2, 2}, after {2, 3}: the three 2s share rank 3, so after's
 * ranks are 3 and 5, U = 8 - 3 = 5; ties t = 3: sum t^3 - t = 24; variance
 * 6 / 12 * (6 - 24 / 20) = 2.4; z = (5 - 3 - 0.5) / sqrt(2.4) = 0.9682. */
TEST_CASE(mann_whitney_ties_by_hand) {
    double before[] = {2, 1, 2}, after[] = {3, 2};
    opprof_shift s;
    CHECK_INT(opprof_shift_of(before, 3, after, 2, 0.95, &s), 0);
    CHECK_NEAR(s.u, 5, 0);
    CHECK_NEAR(s.z, 0.9682458365518541, 1e-12);
    CHECK_NEAR(s.p, 0.33292160806556603, 1e-12);
    double same[] = {4, 4, 4};
    CHECK_INT(opprof_shift_of(same, 3, same, 3, 0.95, &s), 0);
    CHECK_NEAR(s.p, 1, 0);
    CHECK_NEAR(s.z, 0, 0);
    CHECK_NEAR(s.estimate, 0, 0);
}

static uint64_t lcg(uint64_t *state) {
    *state = *state * 6364136223846793005u + 1442695040888963407u;
    return *state >> 33;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The k-th difference found by bisection is the k-th of all pairs sorted. */
TEST_CASE(shift_matches_every_pair) {
    enum { M = 37, N = 53 };
    double x[M], y[N], *diffs = malloc(M * N * sizeof *diffs);
    uint64_t st = 42;
    for (int i = 0; i < M; i++) x[i] = (double)(lcg(&st) % 40); /* ties on purpose */
    for (int j = 0; j < N; j++) y[j] = (double)(lcg(&st) % 40) + 5;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) diffs[i * N + j] = y[j] - x[i];
    qsort(diffs, M * N, sizeof *diffs, by_value);
    const double levels[] = {0.5, 0.8, 0.9, 0.95, 0.99};
    for (int l = 0; l < 5; l++) {
        opprof_shift s;
        CHECK_INT(opprof_shift_of(x, M, y, N, levels[l], &s), 0);
        double mn = M * N, z = opprof_normal_quantile(1 - (1 - levels[l]) / 2);
        int k = (int)floor(mn / 2 + 0.5 - z * sqrt(mn * (M + N + 1) / 12));
        CHECK(k >= 1);
        CHECK_NEAR(s.lo, diffs[k - 1], 0);
        CHECK_NEAR(s.hi, diffs[M * N - k], 0);
        CHECK_NEAR(s.estimate, (diffs[M * N / 2 - 1] + diffs[M * N / 2]) / 2, 0); /* M N even */
    }
    free(diffs);
}

/* Fractional times (seconds, as the timer's blocks): the bisection ends, and
 * on the very differences that sorting all pairs gives (it once looped,
 * comparing x < y - t where it counted y - x). */
TEST_CASE(shift_of_fractional_seconds) {
    enum { M = 29, N = 31 };
    double x[M], y[N], *diffs = malloc(M * N * sizeof *diffs);
    uint64_t st = 7;
    for (int i = 0; i < M; i++) x[i] = 3.9e-4 + (double)(lcg(&st) % 1000) * 1.3e-8;
    for (int j = 0; j < N; j++) y[j] = 2.1e-4 + (double)(lcg(&st) % 1000) * 0.7e-8;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) diffs[i * N + j] = y[j] - x[i];
    qsort(diffs, M * N, sizeof *diffs, by_value);
    opprof_shift s;
    CHECK_INT(opprof_shift_of(x, M, y, N, 0.95, &s), 0);
    CHECK_NEAR(s.estimate, diffs[M * N / 2], 0); /* M N odd */
    double mn = M * N, z = opprof_normal_quantile(0.975);
    int k = (int)floor(mn / 2 + 0.5 - z * sqrt(mn * (M + N + 1) / 12));
    CHECK_NEAR(s.lo, diffs[k - 1], 0);
    CHECK_NEAR(s.hi, diffs[M * N - k], 0);
    CHECK(s.p < 1e-9); /* every after is below every before */
    free(diffs);
}

TEST_CASE(shift_refuses_bad_input) {
    double v[2] = {1, 2};
    opprof_shift s;
    CHECK_INT(opprof_shift_of(v, 0, v, 2, 0.95, &s), OPPROF_EINVAL);
    CHECK_INT(opprof_shift_of(v, 2, v, 0, 0.95, &s), OPPROF_EINVAL);
    CHECK_INT(opprof_shift_of(NULL, 2, v, 2, 0.95, &s), OPPROF_EINVAL);
    CHECK_INT(opprof_shift_of(v, 2, v, 2, 1.0, &s), OPPROF_EINVAL);
    CHECK_INT(opprof_shift_of(v, 2, v, 2, 0.0, &s), OPPROF_EINVAL);
    CHECK_INT(opprof_shift_of(v, 2, v, 2, NAN, &s), OPPROF_EINVAL);
}

/* p {0.01, 0.04, 0.03, 0.005}: sorted 0.005 x 4 = 0.02, 0.01 x 3 = 0.03,
 * 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> 0.06 (monotone). */
TEST_CASE(holm_worked_by_hand) {
    double p[4] = {0.01, 0.04, 0.03, 0.005}, adj[4];
    CHECK_INT(opprof_holm_adjust(p, 4, adj), 0);
    CHECK_NEAR(adj[0], 0.03, 1e-15);
    CHECK_NEAR(adj[1], 0.06, 1e-15);
    CHECK_NEAR(adj[2], 0.06, 1e-15);
    CHECK_NEAR(adj[3], 0.02, 1e-15);
    double big[2] = {0.6, 0.7};
    CHECK_INT(opprof_holm_adjust(big, 2, big), 0); /* in place, capped at 1 */
    CHECK_NEAR(big[0], 1, 0);
    CHECK_NEAR(big[1], 1, 0);
    CHECK_INT(opprof_holm_adjust(NULL, 1, adj), OPPROF_EINVAL);
}

/* n = 2 (z(0.975) + z(0.8))^2 (spread / 1.349)^2 / change^2 / (3 / pi)
 * + z(0.975)^2 / 4, rounded up: 36.13 + 0.96 -> 38; 325.2 + 0.96 -> 327;
 * 8.5 + 0.96 -> 10; with no spread, the fewest a side with which the rank
 * test reaches 0.05 at all: 4 ((16 / 2 - 0.5) / sqrt(16 * 9 / 12) = 2.17 >
 * 1.96; 3 a side give 1.75). */
TEST_CASE(steps_needed_worked_out) {
    CHECK_INT(opprof_steps_needed(0.10, 0.05, 0.05, 0.8), 38);
    CHECK_INT(opprof_steps_needed(0.30, 0.05, 0.05, 0.8), 327);
    CHECK_INT(opprof_steps_needed(0.02, 0.02, 0.05, 0.8), 10);
    CHECK_INT(opprof_steps_needed(0.0, 0.05, 0.05, 0.8), 4);
    CHECK_INT(opprof_steps_needed(0.0, 0.05, 0.001, 0.8), 8); /* 7 a side reach z 3.07 only, below 3.29 */
    CHECK(opprof_steps_needed(-1, 0.05, 0.05, 0.8) == SIZE_MAX);
    CHECK(opprof_steps_needed(0.1, 0, 0.05, 0.8) == SIZE_MAX);
    CHECK_NEAR(opprof_normal_quantile(0.975), 1.959963984540054, 1e-9);
    CHECK_NEAR(opprof_normal_quantile(0.5), 0, 1e-12);
}

/* ---- captures built by hand ---- */

/* `steps` ProfilerStep#N of 1 ms each; in each, "op" lasting op_us[k] us
 * (nested in "forward"), and "rare" in step 2 only. */
static opprof_capture *stepped_capture(int steps, const double *op_us, bool rare) {
    opprof_capture *c;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "main", &t), 0);
    for (int k = 0; k < steps; k++) {
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", k);
        int64_t s = k * 1000000;
        CHECK_INT(opprof_capture_add_event(c, t, name, OPPROF_KIND_STEP, s, 1000000), 0);
        CHECK_INT(opprof_capture_add_event(c, t, "forward", OPPROF_KIND_USER_ANNOTATION, s + 1000, 900000), 0);
        CHECK_INT(opprof_capture_add_event(c, t, "op", OPPROF_KIND_CPU_OP, s + 2000, (int64_t)(op_us[k] * 1000)), 0);
        if (rare && k == 2) CHECK_INT(opprof_capture_add_event(c, t, "rare", OPPROF_KIND_CPU_OP, s + 950000, 7000), 0);
    }
    CHECK_INT(opprof_capture_finish(c), 0);
    return c;
}

static size_t row_of(const opprof_averages *avg, const char *key) {
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].key, key)) return i;
    return (size_t)-1;
}

TEST_CASE(averages_per_step) {
    double op[4] = {100, 200, 300, 400};
    opprof_capture *c = stepped_capture(4, op, true);
    opprof_averages *plain, *avg;
    opprof_averages_options with = {.distributions = true};
    CHECK_INT(opprof_capture_averages(c, &plain), 0);
    CHECK_INT(opprof_averages_steps(plain), 0);
    double s[4], totals[4];
    CHECK_INT(opprof_averages_row_step_self(plain, 0, s), OPPROF_EINVAL);
    opprof_row_distributions rd;
    CHECK_INT(opprof_averages_row_distributions(plain, 0, &rd), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_averages_ex(c, &with, &avg), 0);
    CHECK_INT(opprof_averages_steps(avg), 4);
    size_t r_op = row_of(avg, "op"), r_rare = row_of(avg, "rare"), r_fwd = row_of(avg, "forward");
    CHECK_INT(opprof_averages_row_step_self(avg, r_op, s), 0);
    CHECK(s[0] == 100000 && s[1] == 200000 && s[2] == 300000 && s[3] == 400000);
    CHECK_INT(opprof_averages_row_step_self(avg, r_rare, s), 0);
    CHECK(s[0] == 0 && s[1] == 0 && s[2] == 7000 && s[3] == 0); /* 0 where it did not run */
    CHECK_INT(opprof_averages_row_step_self(avg, r_fwd, s), 0);
    CHECK(s[0] == 800000 && s[3] == 500000); /* 900 us minus op's */
    CHECK_INT(opprof_averages_row_step_self(avg, 99, s), OPPROF_EINVAL);
    CHECK_INT(opprof_averages_row_distributions(avg, r_op, &rd), 0);
    CHECK_NEAR(rd.step_self.median, 250000, 0);
    CHECK_NEAR(rd.call_self.max, 400000, 0);
    CHECK_INT(rd.call_self.n, 4);
    CHECK_INT(opprof_averages_row_distributions(avg, r_fwd, &rd), 0);
    CHECK_NEAR(rd.step_total.median, 900000, 0);
    CHECK_NEAR(rd.step_self.min, 500000, 0);
    CHECK_INT(opprof_averages_step_self_totals(avg, totals), 0);
    CHECK(totals[0] == 1000000 && totals[2] == 1000000); /* every step's self time: its span */
    CHECK_INT(opprof_averages_step_self_totals(plain, totals), OPPROF_EINVAL);
    CHECK_INT(opprof_averages_row_distributions(avg, 99, &rd), OPPROF_EINVAL);
    opprof_averages_free(plain);
    opprof_averages_free(avg);
    opprof_capture_free(c);
    /* no ProfilerStep: one step, the whole capture */
    opprof_capture *flat;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&flat), 0);
    CHECK_INT(opprof_capture_add_thread(flat, 1, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(flat, t, "op", OPPROF_KIND_CPU_OP, 0, 10), 0);
    CHECK_INT(opprof_capture_add_event(flat, t, "op", OPPROF_KIND_CPU_OP, 20, 30), 0);
    CHECK_INT(opprof_capture_finish(flat), 0);
    CHECK_INT(opprof_capture_averages_ex(flat, &with, &avg), 0);
    CHECK_INT(opprof_averages_steps(avg), 1);
    CHECK_INT(opprof_averages_row_step_self(avg, 0, s), 0);
    CHECK(s[0] == 40);
    CHECK_INT(opprof_averages_row_distributions(avg, 0, &rd), 0);
    CHECK_INT(rd.call_self.n, 2);
    CHECK_NEAR(rd.call_self.median, 20, 0);
    opprof_averages_free(avg);
    opprof_capture_free(flat);
}

/* --stats columns and the JSON's distributions: the same numbers. */
TEST_CASE(table_stats_columns_and_json) {
    double op[4] = {100, 200, 300, 400};
    opprof_capture *c = stepped_capture(4, op, false);
    opprof_averages *plain, *avg;
    opprof_averages_options with = {.distributions = true};
    CHECK_INT(opprof_capture_averages(c, &plain), 0);
    CHECK_INT(opprof_capture_averages_ex(c, &with, &avg), 0);
    opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME, .stats = true};
    char *text = NULL;
    CHECK_INT(opprof_averages_table_to_string(plain, &o, &text), OPPROF_EINVAL);
    CHECK_INT(opprof_averages_table_to_string(avg, &o, &text), 0);
    CHECK_CONTAINS(text,
                   "Self min      Self med      Self p90      Self p99      Self max      Self IQR       Self CV");
    /* op: 100 200 300 400 us: min, median 250, p90 370, p99 397, max, IQR 175 - 325 */
    CHECK_CONTAINS(text,
                   "100.000us     250.000us     370.000us     397.000us     400.000us     150.000us        51.64%");
    CHECK_CONTAINS(text, "Self min to Self CV: each row's self time per step, over 4 steps");
    opprof_free(text);
    o.stats = false;
    CHECK_INT(opprof_averages_json_to_string(avg, &o, &text), 0);
    CHECK_CONTAINS(text, "\"steps\": 4");
    CHECK_CONTAINS(text, "\"step_self\": {\"n\": 4, \"min_us\": 100, \"q1_us\": 175, \"median_us\": 250");
    CHECK_CONTAINS(text, "\"call_self\": {\"n\": 4");
    opprof_free(text);
    CHECK_INT(opprof_averages_json_to_string(plain, &o, &text), 0);
    CHECK(text && !strstr(text, "distributions")); /* built without them */
    opprof_free(text);
    opprof_averages_free(plain);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

/* 20 steps of "op" near `us` (a fixed wobble of +-2 %), shifted by `factor`. */
static opprof_capture *noisy_capture(double us, double factor, int seed) {
    double op[20];
    uint64_t st = (uint64_t)seed;
    for (int k = 0; k < 20; k++) op[k] = us * factor * (0.98 + 0.04 * (double)(lcg(&st) % 1000) / 1000);
    return stepped_capture(20, op, false);
}

/* The same work on one thread, then split over two: each step `step_us`
 * long, "op" on each of `threads` threads for op_us (a +-1 % wobble). */
static opprof_capture *split_capture(int threads, double step_us, double op_us, int seed) {
    opprof_capture *c;
    uint32_t t[2];
    uint64_t st = (uint64_t)seed;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "main", &t[0]), 0);
    if (threads == 2) CHECK_INT(opprof_capture_add_thread(c, 2, "worker", &t[1]), 0);
    int64_t at = 0;
    for (int k = 0; k < 20; k++) {
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", k);
        double wobble = 0.99 + 0.02 * (double)(lcg(&st) % 1000) / 1000;
        int64_t step = (int64_t)(step_us * wobble * 1000), op = (int64_t)(op_us * wobble * 1000);
        CHECK_INT(opprof_capture_add_event(c, t[0], name, OPPROF_KIND_STEP, at, step), 0);
        for (int i = 0; i < threads; i++) { /* one run over the pool a step: its parts */
            CHECK_INT(opprof_capture_add_event(c, t[i], "op", OPPROF_KIND_CPU_OP, at + 1000, op), 0);
            size_t n_events;
            opprof_capture_events(c, &n_events);
            opprof_mark part = {
                .thread = t[i], .event = (int32_t)n_events - 1, .kind = OPPROF_MARK_ARG_INT, .value.i = k + 1};
            CHECK_INT(opprof_capture_add_mark(c, &part, OPPROF_PART_OF_KEY, NULL), 0);
        }
        at += step + 10000;
    }
    CHECK_INT(opprof_capture_finish(c), 0);
    return c;
}

/* Thread scaling answered the right way round (issue 48): split over two
 * threads, the op's CPU time rises (800 us to 2 x 450) while the step, the
 * time the program waits for, falls (1000 us to 600): the step's row says
 * faster, and its line says why the CPU time rose. */
TEST_CASE(stat_diff_step_duration_on_thread_scaling) {
    opprof_capture *one = split_capture(1, 1000, 800, 1), *two = split_capture(2, 600, 450, 2);
    const opprof_capture *b[] = {one}, *a[] = {two};
    opprof_stat_diff *d = NULL;
    CHECK_INT(opprof_stat_diff_new(b, 1, a, 1, NULL, &d), 0);
    const opprof_stat_row *step = opprof_stat_diff_step_duration(d), *op = opprof_stat_diff_find(d, "op");
    CHECK(step && op);
    if (step && op) {
        CHECK(step->significant && step->change < -0.35 && step->change > -0.45);
        CHECK(op->significant && op->change > 0.10);
        CHECK(opprof_stat_diff_find(d, "step") == step);
    }
    /* the op over the pool: its wall time per step fell (800 us to 450) while its CPU time rose */
    const opprof_stat_row *wall = opprof_stat_diff_find(d, "op (wall)");
    CHECK(wall != NULL);
    if (wall) CHECK(wall->significant && wall->change < -0.40 && wall->change > -0.48);
    char *text = NULL;
    CHECK_INT(opprof_stat_diff_to_string(d, 0, OPPROF_DIFF_TEXT, &text), 0);
    CHECK_CONTAINS(text, "the steps got faster while CPU time rose: the work is spread over more threads");
    opprof_free(text);
    CHECK_INT(opprof_stat_diff_to_string(d, 0, OPPROF_DIFF_JSON, &text), 0);
    CHECK_CONTAINS(text, "\"step_duration\": {\"name\": \"step\"");
    CHECK_CONTAINS(text, "\"name\": \"op (wall)\"");
    opprof_free(text);
    opprof_stat_gate g;
    bool tripped = true;
    CHECK_INT(opprof_stat_gate_parse("step > +3%", &g, NULL, 0), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, NULL, 0), 0);
    CHECK(!tripped); /* faster steps pass a gate on slower ones */
    CHECK_INT(opprof_stat_gate_parse("op (wall) > +3%", &g, NULL, 0), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, NULL, 0), 0);
    CHECK(!tripped); /* and so does the pool's op, by its wall time */
    opprof_stat_diff_free(d);
    opprof_capture_free(one);
    opprof_capture_free(two);
}

/* 20 steps, each with a MUL_MAT of layer 0 (300 us), of layer 1 (300 us x slow1) and
 * one of no layer's tensor (100 us), as the ggml adapter records them: the tensor's
 * name in the "name" argument (a +-1 % wobble). */
static opprof_capture *layered_capture(double slow1, int seed) {
    opprof_capture *c;
    uint32_t t;
    uint64_t st = (uint64_t)seed;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "main", &t), 0);
    static const char *const tensors[] = {"ffn_up-0", "ffn_up-1", "result_output"};
    const double us[] = {300, 300 * slow1, 100};
    for (int k = 0; k < 20; k++) {
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", k);
        int64_t s = k * 1000000, at = s + 1000;
        CHECK_INT(opprof_capture_add_event(c, t, name, OPPROF_KIND_STEP, s, 1000000), 0);
        for (int l = 0; l < 3; l++) {
            double wobble = 0.99 + 0.02 * (double)(lcg(&st) % 1000) / 1000;
            int64_t dur = (int64_t)(us[l] * wobble * 1000);
            CHECK_INT(opprof_capture_add_event(c, t, "ggml::MUL_MAT", OPPROF_KIND_CPU_OP, at, dur), 0);
            size_t n_events;
            opprof_capture_events(c, &n_events);
            opprof_mark arg = {.thread = t, .event = (int32_t)n_events - 1, .kind = OPPROF_MARK_ARG_STR};
            CHECK_INT(opprof_capture_add_mark(c, &arg, "name", tensors[l]), 0);
            at += dur + 1000;
        }
    }
    CHECK_INT(opprof_capture_finish(c), 0);
    return c;
}

/* diff --stat by layer (issue 48): one layer's MUL_MAT made 1.5x slower is that layer's row,
 * significant, and gated by its name; the other layer's and the row of no layer stay; by
 * name, the one MUL_MAT row moves by the average. */
TEST_CASE(stat_diff_by_layer) {
    opprof_capture *b = layered_capture(1.0, 1), *a = layered_capture(1.5, 2);
    const opprof_capture *bs[] = {b}, *as[] = {a};
    opprof_averages_options by_layer = {.group_by_layer = true};
    opprof_stat_diff *d = NULL;
    CHECK_INT(opprof_stat_diff_new_ex(bs, 1, as, 1, NULL, &by_layer, &d), 0);
    const opprof_stat_row *l0 = opprof_stat_diff_find(d, "ggml::MUL_MAT (layer 0)"),
                          *l1 = opprof_stat_diff_find(d, "ggml::MUL_MAT (layer 1)"),
                          *none = opprof_stat_diff_find(d, "ggml::MUL_MAT");
    CHECK(l0 && l1 && none);
    if (l0 && l1 && none) {
        CHECK(l1->significant && l1->change > 0.45 && l1->change < 0.55);
        CHECK(!l0->significant && fabs(l0->change) < 0.03);
        CHECK(!none->significant && fabs(none->change) < 0.03);
        CHECK(fabs(none->before.median - 100000) < 2000); /* the call of no layer's tensor alone */
    }
    opprof_stat_gate g;
    bool tripped = false;
    CHECK_INT(opprof_stat_gate_parse("ggml::MUL_MAT (layer 1) > +10%", &g, NULL, 0), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, NULL, 0), 0);
    CHECK(tripped);
    CHECK_INT(opprof_stat_gate_parse("ggml::MUL_MAT (layer 0) > +10%", &g, NULL, 0), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, NULL, 0), 0);
    CHECK(!tripped);
    opprof_stat_diff_free(d);
    /* by name: one row, all three calls a step: +150 us of 700 */
    CHECK_INT(opprof_stat_diff_new_ex(bs, 1, as, 1, NULL, NULL, &d), 0);
    const opprof_stat_row *all = opprof_stat_diff_find(d, "ggml::MUL_MAT");
    CHECK(all && all->significant && all->change > 0.19 && all->change < 0.24);
    CHECK(opprof_stat_diff_find(d, "ggml::MUL_MAT (layer 1)") == NULL);
    opprof_stat_diff_free(d);
    opprof_averages_options shapes = {.group_by_input_shape = true};
    CHECK_INT(opprof_stat_diff_new_ex(bs, 1, as, 1, NULL, &shapes, &d), OPPROF_EINVAL);
    opprof_capture_free(b);
    opprof_capture_free(a);
}

TEST_CASE(stat_diff_finds_a_shift_and_gates_it) {
    opprof_capture *b = noisy_capture(200, 1.0, 1), *a = noisy_capture(200, 1.10, 2);
    opprof_stat_diff *d;
    CHECK_INT(
        opprof_stat_diff_new((const opprof_capture *const *)&b, 1, (const opprof_capture *const *)&a, 1, NULL, &d), 0);
    const opprof_stat_row *op = opprof_stat_diff_find(d, "op");
    CHECK(op && op->significant);
    CHECK(op && op->change > 0.07 && op->change < 0.13);
    CHECK(op && op->change_lo < op->change && op->change < op->change_hi);
    size_t n, steps[2], caps[2];
    const opprof_stat_row *rows = opprof_stat_diff_rows(d, &n);
    CHECK(n >= 3 && rows[0].significant); /* significant rows first */
    opprof_stat_diff_sides(d, steps, caps);
    CHECK_INT(steps[0], 20);
    CHECK_INT(caps[1], 1);
    const opprof_stat_row *fwd = opprof_stat_diff_find(d, "forward");
    CHECK(fwd && fwd->significant && fwd->change < 0); /* op's time left forward's self time */
    const opprof_stat_row *total = opprof_stat_diff_total(d);
    CHECK(total && !total->significant && total->shift.estimate == 0); /* every step lasts 1 ms */
    opprof_stat_gate g;
    char why[1024];
    bool tripped;
    CHECK_INT(opprof_stat_gate_parse("op > +5%", &g, why, sizeof why), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, why, sizeof why), 0);
    CHECK(tripped);
    CHECK_CONTAINS(why, "FAILED");
    CHECK_INT(opprof_stat_gate_parse("op > +20%", &g, why, sizeof why), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, why, sizeof why), 0);
    CHECK(!tripped);
    CHECK_INT(opprof_stat_gate_parse("forward < -2%", &g, why, sizeof why), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, why, sizeof why), 0);
    CHECK(tripped);
    CHECK_INT(opprof_stat_gate_parse("total > +1%", &g, why, sizeof why), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, why, sizeof why), 0);
    CHECK(!tripped);
    CHECK_INT(opprof_stat_gate_parse("no_such_op > +1%", &g, why, sizeof why), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, why, sizeof why), OPPROF_ENOENT);
    CHECK_CONTAINS(why, "no_such_op");
    char *text;
    CHECK_INT(opprof_stat_diff_to_string(d, 0, OPPROF_DIFF_TEXT, &text), 0);
    CHECK_CONTAINS(text, "Hodges-Lehmann");
    CHECK_CONTAINS(text, "Total (self CPU time per step, every thread's)");
    CHECK_CONTAINS(text, "Step duration (wall time per step, what the program waits for)");
    opprof_free(text);
    CHECK_INT(opprof_stat_diff_to_string(d, 0, (opprof_diff_format)7, &text), OPPROF_EINVAL);
    opprof_stat_diff_free(d);
    /* A/A: the same captures on both sides */
    CHECK_INT(
        opprof_stat_diff_new((const opprof_capture *const *)&b, 1, (const opprof_capture *const *)&b, 1, NULL, &d), 0);
    rows = opprof_stat_diff_rows(d, &n);
    for (size_t i = 0; i < n; i++) CHECK(!rows[i].significant && rows[i].shift.estimate == 0);
    opprof_stat_diff_free(d);
    opprof_stat_options bad = {.alpha = 0.7};
    CHECK_INT(
        opprof_stat_diff_new((const opprof_capture *const *)&b, 1, (const opprof_capture *const *)&a, 1, &bad, &d),
        OPPROF_EINVAL);
    CHECK_INT(
        opprof_stat_diff_new((const opprof_capture *const *)&b, 0, (const opprof_capture *const *)&a, 1, NULL, &d),
        OPPROF_EINVAL);
    opprof_capture_free(a);
    opprof_capture_free(b);
}

/* A gate is one test of the row it names, one-sided: here op's two-sided p
 * is 0.03 (one-sided 0.016), not significant once corrected over the
 * table's 3 rows and the total; the gate trips alone, not as one of 4
 * sharing alpha (0.0125 each). */
TEST_CASE(gate_is_one_test_of_its_row) {
    opprof_capture *b = noisy_capture(200, 1.0, 1), *a = noisy_capture(200, 1.010, 2);
    opprof_stat_diff *d;
    CHECK_INT(
        opprof_stat_diff_new((const opprof_capture *const *)&b, 1, (const opprof_capture *const *)&a, 1, NULL, &d), 0);
    const opprof_stat_row *op = opprof_stat_diff_find(d, "op");
    CHECK(op && op->shift.p > 0.025 && op->shift.p < 0.05);
    CHECK(op && !op->significant && op->p_adjusted > 0.05);
    opprof_stat_gate g;
    char why[1024];
    bool tripped = false;
    CHECK_INT(opprof_stat_gate_parse("op > +0.5%", &g, why, sizeof why), 0);
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, why, sizeof why), 0);
    CHECK(tripped);
    CHECK_CONTAINS(why, "(significant at 0.05): FAILED");
    CHECK(op && fabs(op->shift.p_greater - op->shift.p / 2) < 1e-3);
    CHECK_INT(opprof_stat_gate_check(d, &g, 4, &tripped, why, sizeof why), 0);
    CHECK(!tripped);
    CHECK_CONTAINS(why, "(not significant at 0.0125): passed (beyond the bound, but not significant)");
    CHECK_INT(opprof_stat_gate_parse("op < -0.5%", &g, why, sizeof why), 0); /* the other way: p_less, near 1 */
    CHECK_INT(opprof_stat_gate_check(d, &g, 1, &tripped, why, sizeof why), 0);
    CHECK(!tripped);
    CHECK_INT(opprof_stat_gate_check(d, &g, 0, &tripped, why, sizeof why), OPPROF_EINVAL);
    opprof_stat_diff_free(d);
    opprof_capture_free(a);
    opprof_capture_free(b);
}

/* Several captures on a side are one sample: their steps end to end. */
TEST_CASE(stat_diff_puts_captures_end_to_end) {
    double one[1] = {100}, other[1] = {300};
    opprof_capture *b[3] = {stepped_capture(1, one, false), stepped_capture(1, one, false),
                            stepped_capture(1, other, false)};
    opprof_capture *a[1] = {noisy_capture(100, 1, 5)};
    opprof_stat_diff *d;
    CHECK_INT(opprof_stat_diff_new((const opprof_capture *const *)b, 3, (const opprof_capture *const *)a, 1, NULL, &d),
              0);
    size_t steps[2], caps[2];
    opprof_stat_diff_sides(d, steps, caps);
    CHECK_INT(steps[0], 3);
    CHECK_INT(caps[0], 3);
    CHECK_INT(steps[1], 20);
    const opprof_stat_row *op = opprof_stat_diff_find(d, "op");
    CHECK(op && op->before.n == 3 && op->before.median == 100000 && op->before.max == 300000);
    opprof_stat_diff_free(d);
    for (int i = 0; i < 3; i++) opprof_capture_free(b[i]);
    opprof_capture_free(a[0]);
}

/* A side too noisy for the change asked is said, with the steps it needs. */
TEST_CASE(stat_diff_says_noise) {
    double wild[20];
    for (int k = 0; k < 20; k++) wild[k] = k % 2 ? 100 : 160; /* IQR / median: 60 / 130 */
    opprof_capture *b = stepped_capture(20, wild, false), *a = stepped_capture(20, wild, false);
    opprof_stat_diff *d;
    opprof_stat_options o = {.detect = 0.05};
    CHECK_INT(opprof_stat_diff_new((const opprof_capture *const *)&b, 1, (const opprof_capture *const *)&a, 1, &o, &d),
              0);
    const opprof_stat_row *op = opprof_stat_diff_find(d, "op");
    CHECK(op && op->steps_needed > 20);
    size_t rows;
    opprof_stat_diff_rows(d,
                          &rows); /* ProfilerStep*, forward, op, the total and the step: Holm's first bar, alpha / 5 */
    CHECK_INT(rows, 3);
    CHECK_INT(op ? op->steps_needed : 0,
              opprof_steps_needed(60.0 / 130.0 * (1 + 0.84 * 0.864 / sqrt(20)), 0.05, 0.05 / 5, 0.8));
    CHECK_NEAR(op ? op->spread : 0, 60.0 / 130.0, 1e-12);
    char *text;
    CHECK_INT(opprof_stat_diff_to_string(d, 0, OPPROF_DIFF_TEXT, &text), 0);
    char want[200];
    snprintf(want, sizeof want, "detecting a 5%% change needs about %zu steps a side, and the smaller side has 20",
             op ? op->steps_needed : 0);
    CHECK_CONTAINS(text, "Note: noise: op varies by 46.2% before and 46.2% after");
    CHECK_CONTAINS(text, want);
    opprof_free(text);
    opprof_stat_diff_free(d);
    opprof_capture_free(a);
    opprof_capture_free(b);
}

TEST_CASE(gate_parse_errors_name_the_reason) {
    opprof_stat_gate g;
    char why[1024];
    CHECK_INT(opprof_stat_gate_parse("std::vector<int> > +2.5%", &g, why, sizeof why), 0);
    CHECK_STR(g.key, "std::vector<int>");
    CHECK(g.above && fabs(g.bound - 0.025) < 1e-12);
    CHECK_INT(opprof_stat_gate_parse("a<b<-3%", &g, why, sizeof why), 0);
    CHECK_STR(g.key, "a<b");
    CHECK(!g.above && fabs(g.bound + 0.03) < 1e-12);
    const char *bad[][2] = {{"total 3%", "no '>' or '<'"},
                            {"total > x%", "its bound is no number"},
                            {"total > 3", "not a percentage"},
                            {"total > 3% more", "not a percentage"},
                            {" > 3%", "names no row"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_INT(opprof_stat_gate_parse(bad[i][0], &g, why, sizeof why), OPPROF_EINVAL);
        CHECK_CONTAINS(why, bad[i][1]);
    }
}

/* ---- the command ---- */

static bool is_json(const char *text) {
    char err[256];
    yajl_val v = text ? yajl_tree_parse(text, err, sizeof err) : NULL;
    if (v) yajl_tree_free(v);
    return v != NULL;
}

static int opprof_cmd(char **out, const char *fmt, const char *d) {
    char args[3000], cmd[4096];
    snprintf(args, sizeof args, fmt, d, d, d, d);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/opprof' %s", d, bin_dir(), args);
    return run_command(cmd, out);
}

/* diff --stat --group-by layer from the command line: rows and gates by layer, through
 * traces written and read back; its errors; traces of no layer said. */
TEST_CASE(diff_stat_by_layer_command) {
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    opprof_capture *b = layered_capture(1.0, 1), *a = layered_capture(1.5, 2), *plain = noisy_capture(200, 1.0, 1);
    const opprof_capture *caps[] = {b, a, plain};
    static const char *const names[] = {"before.json", "after.json", "plain.json"};
    for (int k = 0; k < 3; k++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        CHECK_INT(opprof_capture_chrome_write(caps[k], path), 0);
    }
    char *out = NULL;
    CHECK_INT(opprof_cmd(&out, "diff --stat --group-by layer before.json after.json 2>&1", dir), 0);
    CHECK_CONTAINS(out, "ggml::MUL_MAT (layer 1)");
    CHECK_CONTAINS(out, "ggml::MUL_MAT (layer 0)");
    free(out);
    CHECK_INT(opprof_cmd(&out,
                         "diff --stat --group-by layer before.json after.json --fail-if "
                         "'ggml::MUL_MAT (layer 1) > +10%%' 2>&1",
                         dir),
              3);
    CHECK_CONTAINS(out, "gate 'ggml::MUL_MAT (layer 1) > +10%': change +");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat --group-by layer plain.json plain.json 2>&1", dir), 0);
    CHECK_CONTAINS(out, "no operator names a layer's tensor");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --group-by layer before.json after.json 2>&1", dir), 64);
    CHECK_CONTAINS(out, "--group-by go with --stat");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat --group-by node before.json after.json 2>&1", dir), 64);
    CHECK_CONTAINS(out, "--group-by takes layer, not 'node'");
    free(out);
    opprof_capture_free(b);
    opprof_capture_free(a);
    opprof_capture_free(plain);
    remove_tree(dir);
}

TEST_CASE(diff_stat_command_and_exit_statuses) {
    char dir[256], path[1200];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    opprof_capture *b = noisy_capture(200, 1.0, 1), *a = noisy_capture(200, 1.10, 2);
    snprintf(path, sizeof path, "%s/before.json", dir);
    CHECK_INT(opprof_capture_chrome_write(b, path), 0);
    snprintf(path, sizeof path, "%s/after.json.gz", dir);
    opprof_chrome_options gz = {.gzip = true};
    CHECK_INT(opprof_capture_chrome_write_ex(a, path, &gz), 0);
    snprintf(path, sizeof path, "mkdir '%s/runs' '%s/empty' && cp '%s/before.json' '%s/runs/a.json'", dir, dir, dir,
             dir);
    CHECK_INT(system(path), 0);
    snprintf(path, sizeof path, "mkdir '%s/runs/run-2'", dir); /* profile_cpu's runs, side by side */
    CHECK_INT(system(path), 0);
    snprintf(path, sizeof path, "%s/runs/run-2/b.json", dir);
    CHECK_INT(opprof_capture_chrome_write(b, path), 0);
    snprintf(path, sizeof path, "%s/runs/summary.json", dir); /* not a trace of the directory */
    CHECK_INT(opprof_write_text_file(path, "{}"), 0);
    char *out = NULL;
    CHECK_INT(opprof_cmd(&out, "diff --stat before.json after.json.gz", dir), 0);
    CHECK_CONTAINS(out, "20 step(s) before (1 capture(s)), 20 after (1 capture(s))");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat before.json after.json.gz --fail-if 'op > +5%%'", dir), 3);
    CHECK_CONTAINS(out, "gate 'op > +5%': change +");
    CHECK_CONTAINS(out, "FAILED");
    free(out);
    CHECK_INT(
        opprof_cmd(&out, "diff --stat before.json after.json.gz --fail-if 'op > +50%%' --fail-if 'total > +1%%'", dir),
        0);
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat before.json after.json.gz --json --fail-if 'op > +5%%'", dir), 3);
    const char *brace = out ? strchr(out, '{') : NULL;
    CHECK(brace != NULL);
    char *end = brace ? strstr(brace, "\n}\n") : NULL;
    if (end) end[2] = 0;
    CHECK(brace && is_json(brace));
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat runs after.json.gz", dir), 0); /* a directory and below: 2 captures */
    CHECK_CONTAINS(out, "40 step(s) before (2 capture(s))");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat before.json after.json.gz --html page.html", dir), 0);
    free(out);
    snprintf(path, sizeof path, "%s/page.html", dir);
    char *page = read_text(path);
    CHECK_CONTAINS(page, "<table class=\"sortable\" id=\"stat\">");
    free(page);
    /* errors: each names its thing */
    CHECK_INT(opprof_cmd(&out, "diff --stat empty after.json.gz", dir), 2);
    CHECK_CONTAINS(out, "empty has no trace");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat before.json after.json.gz --fail-if 'nothing > +5%%'", dir), 64);
    CHECK_CONTAINS(out, "gate 'nothing': no row of that name on either side");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat before.json after.json.gz --fail-if 'op >> 5'", dir), 64);
    CHECK_CONTAINS(out, "is no gate");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff before.json after.json.gz --fail-if 'op > +5%%'", dir), 64);
    CHECK_CONTAINS(out, "go with --stat");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat --alpha 0.9 before.json after.json.gz", dir), 64);
    CHECK_CONTAINS(out, "--alpha takes a level");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat --detect zero before.json after.json.gz", dir), 64);
    CHECK_CONTAINS(out, "--detect takes a percentage");
    free(out);
    CHECK_INT(opprof_cmd(&out, "diff --stat before.json missing.json", dir), 2);
    CHECK_CONTAINS(out, "missing.json");
    free(out);
    opprof_capture_free(a);
    opprof_capture_free(b);
    remove_tree(dir);
}

/* profile_cpu --stats: the columns in its tables; summary.json has each
 * operator's self time per step either way (the guide's schedule: 2 steps). */
/* .pftrace files are found wherever trace files are: diff --stat's
 * directories count them (a capture in both forms once), and a rank's
 * directory gives its last trace, the JSON of a step written in both forms. */
TEST_CASE(pftrace_files_found_as_traces) {
    char dir[256], path[1200];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    opprof_capture *b = noisy_capture(200, 1.0, 1), *a = noisy_capture(200, 1.10, 2);
    snprintf(path, sizeof path, "mkdir -p '%s/before/run-2' '%s/after' '%s/ranks/rank-0' '%s/ranks/rank-1'", dir, dir,
             dir, dir);
    CHECK_INT(system(path), 0);
    const char *before[] = {"before/a.pftrace", "before/run-2/b.pftrace", "before/run-2/b.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, before[i]);
        CHECK_INT(i == 2 ? opprof_capture_chrome_write(b, path) : opprof_capture_perfetto_write(b, path), 0);
    }
    snprintf(path, sizeof path, "%s/after/a.pftrace", dir);
    CHECK_INT(opprof_capture_perfetto_write(a, path), 0);
    char *out = NULL;
    CHECK_INT(opprof_cmd(&out, "diff --stat before after", dir), 0);
    CHECK_CONTAINS(out, "40 step(s) before (2 capture(s)), 20 after (1 capture(s))");
    free(out);
    snprintf(path, sizeof path, "%s/ranks/rank-0/cpu-step-4.pftrace", dir);
    CHECK_INT(opprof_capture_perfetto_write(b, path), 0);
    snprintf(path, sizeof path, "%s/ranks/rank-1/cpu-step-4.pftrace", dir);
    CHECK_INT(opprof_capture_perfetto_write(a, path), 0);
    snprintf(path, sizeof path, "%s/ranks/rank-1/cpu-step-4.json", dir);
    CHECK_INT(opprof_capture_chrome_write(a, path), 0);
    char ranks[600], last[1200];
    snprintf(ranks, sizeof ranks, "%s/ranks", dir);
    CHECK_INT(opprof_ranks_trace_path(ranks, 1, last, sizeof last), 0);
    CHECK_CONTAINS(last, "rank-1/cpu-step-4.json");
    CHECK_INT(opprof_cmd(&out, "report --ranks ranks", dir), 0);
    CHECK_CONTAINS(out, "op");
    free(out);
    CHECK(opprof_is_trace_file_name("x.pftrace.gz") && opprof_is_trace_file_name("x.json.gz"));
    CHECK(!opprof_is_trace_file_name("summary.json") && !opprof_is_trace_file_name(".x.json") &&
          !opprof_is_trace_file_name("x.json.tmp.12") && !opprof_is_trace_file_name("x.txt"));
    opprof_capture_free(a);
    opprof_capture_free(b);
    remove_tree(dir);
}

TEST_CASE(profile_cpu_stats) {
    char dir[256], cmd[1200], path[700];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --stats '%s/run'", bin_dir(), dir);
    char *out = NULL;
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/run/cpu-step-4.time.txt", dir);
    char *table = read_text(path);
    CHECK_CONTAINS(table, "Self med");
    CHECK_CONTAINS(table, "Self min to Self CV: each row's self time per step, over 2 steps");
    free(table);
    snprintf(path, sizeof path, "%s/run/summary.json", dir);
    char *summary = read_text(path);
    CHECK(is_json(summary));
    CHECK_CONTAINS(summary, "\"self_cpu_per_step\": {\"n\": 2, \"min_us\": ");
    free(summary);
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_stats"); }
