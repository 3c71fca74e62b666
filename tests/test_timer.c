/* test_timer.c - the benchmark timer: accuracy on a callable of known
 * duration, its own overhead taken out, PyTorch's printout line for line,
 * the compare table, and compare_forward's refusal of differing outputs. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/timer.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

static void empty(void *ctx) { (void)ctx; }

/* A fake clock, so that every figure is exact whatever the machine is doing:
 * a read costs READ_COST, a run of the statement costs `run_cost`. (The real
 * clock's accuracy is measured by bench/timer.c, not asserted here.) */
enum { READ_COST_NS = 100 };
typedef struct fake {
    int64_t now_ns;
    int64_t run_cost_ns;
} fake;

static double fake_clock(void *ctx) {
    fake *f = ctx;
    double t = (double)f->now_ns * 1e-9;
    f->now_ns += READ_COST_NS;
    return t;
}

static void fake_run(void *ctx) {
    fake *f = ctx;
    f->now_ns += f->run_cost_ns;
}

static int setups;
static void count_setup(void *ctx) {
    (void)ctx;
    setups++;
}

static char *format(const opprof_measurement *m) {
    char *t = NULL;
    CHECK_INT(opprof_measurement_text_to_string(m, &t), 0);
    return t;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-12 + 1e-9 * fabs(b); }

TEST_CASE(exact_arithmetic) {
    /* Exact arithmetic: the clock's own cost (two reads) and the loop's are
     * measured and taken out, so a statement of 200 us measures 200 us. */
    fake f = {.now_ns = 1000000, .run_cost_ns = 200000};
    opprof_timer t = opprof_timer_default();
    t.stmt = fake_run;
    t.ctx = &f;
    t.clock = fake_clock;
    t.setup = count_setup;
    opprof_measurement *m = NULL;
    setups = 0;
    CHECK_INT(opprof_timer_blocked_autorange(&t, 0.2, &m), 0);
    if (m) {
        CHECK(near(m->median, 200e-6));
        CHECK(near(m->q1, 200e-6) && near(m->q3, 200e-6) && near(m->iqr, 0));
        /* PyTorch's block size: x10 until the clock's cost is <= 1e-4 of a
         * block and a block lasts >= min_run_time / 1000: 10 runs here. */
        CHECK_INT(m->number_per_run, 10);
        CHECK_INT(m->n_times, 100);       /* 100 blocks of 2 ms reach 0.2 s */
        CHECK(setups >= (int)m->n_times); /* setup before each block */
        CHECK(near(m->overhead_per_run, 2 * READ_COST_NS * 1e-9 / 2 / 10));
        CHECK(near(m->median_low, 200e-6) && near(m->median_high, 200e-6)); /* every block equal */
        CHECK(m->precision_reached && m->precision_asked == 0);
    }
    opprof_measurement_free(m);
    /* A precision asked: reached by equal blocks; one that no 1-block measurement reaches is said. */
    t.precision = 0.01;
    CHECK_INT(opprof_timer_blocked_autorange(&t, 0.2, &m), 0);
    CHECK(m && m->precision_reached && m->precision_asked == 0.01);
    opprof_measurement_free(m);
    f.run_cost_ns = 300000000; /* a block lasts longer than min_run_time: 1 block */
    CHECK_INT(opprof_timer_blocked_autorange(&t, 0.2, &m), 0);
    CHECK(m && m->n_times == 1 && !m->precision_reached && isnan(m->median_low));
    if (m) {
        char *text = format(m);
        CHECK_CONTAINS(text,
                       "WARNING: 1 measurement(s) give the median no 95% interval (6 are needed); +-1.0% was asked.");
        opprof_free(text);
    }
    opprof_measurement_free(m);
    t.precision = -0.5;
    CHECK_INT(opprof_timer_blocked_autorange(&t, 0.2, &m), OPPROF_EINVAL);
    t.precision = 0;
    f.run_cost_ns = 200000;

    f.run_cost_ns = 50000;
    CHECK_INT(opprof_timer_timeit(&t, 20, &m), 0);
    if (m) {
        CHECK(near(m->median, 50e-6));
        CHECK_INT(m->number_per_run, 20);
        CHECK_INT(m->n_times, 1);
    }
    opprof_measurement_free(m);

    CHECK_INT(opprof_timer_adaptive_autorange(&t, 0.1, 0.01, 1.0, &m), 0);
    if (m) {
        CHECK(near(m->median, 50e-6));
        CHECK(m->n_times >= 4); /* at least 4 blocks before it may stop */
    }
    opprof_measurement_free(m);

    /* The real clock runs too (no assertion on what it measures). */
    opprof_timer e = opprof_timer_default();
    e.stmt = empty;
    CHECK_INT(opprof_timer_timeit(&e, 1000, &m), 0);
    if (m) CHECK(m->median >= 0 && m->overhead_per_run > 0);
    opprof_measurement_free(m);
    /* Pinning to a CPU works and is undone. */
    e.pin_cpu = 0;
    CHECK_INT(opprof_timer_timeit(&e, 1000, &m), 0);
    opprof_measurement_free(m);

    /* PyTorch's printout, line for line, on hand-built numbers. */
    double blocks[] = {3831.0e-6, 3831.0e-6, 3919.2e-6, 4022.9e-6, 4022.9e-6}; /* 10 runs a block */
    CHECK_INT(opprof_measurement_new(blocks, 5, 10, 1, "forward", "baseline", NULL, &m), 0);
    char *text = format(m);
    CHECK_STR(text, "forward: baseline\n"
                    "  Median: 391.92 us\n"
                    "  IQR:    19.19 us (383.10 to 402.29)\n"
                    "  5 measurements, 10 runs per measurement, 1 thread\n");
    opprof_free(text);
    opprof_measurement_free(m);
    /* One measurement: no IQR line; PyTorch's own spacing ("runs ,"). */
    CHECK_INT(opprof_measurement_new(blocks + 2, 1, 10, 2, "forward", NULL, "2 threads", &m), 0);
    text = format(m);
    CHECK_STR(text, "forward\n2 threads\n  391.92 us\n  1 measurement, 10 runs , 2 threads\n");
    opprof_free(text);
    opprof_measurement_free(m);
    /* Warnings: IQR 15 % and 30 % of the median. */
    double noisy[] = {0.85e-3, 0.93e-3, 1.0e-3, 1.08e-3, 1.15e-3};
    CHECK_INT(opprof_measurement_new(noisy, 5, 1, 1, "x", NULL, NULL, &m), 0);
    text = format(m);
    CHECK_CONTAINS(text, "  Median: 1.00 ms\n");
    CHECK_CONTAINS(text, "  WARNING: Interquartile range is 15.0% of the median measurement.\n"
                         "           This could indicate system fluctuation.\n");
    opprof_free(text);
    opprof_measurement_free(m);
    double wild[] = {0.7e-3, 0.85e-3, 1.0e-3, 1.15e-3, 1.3e-3};
    CHECK_INT(opprof_measurement_new(wild, 5, 1, 1, "x", NULL, NULL, &m), 0);
    text = format(m);
    CHECK_CONTAINS(text, "This suggests significant environmental influence.");
    opprof_free(text);
    opprof_measurement_free(m);
    /* Units: ns and s. */
    double tiny[] = {12e-9, 12e-9, 12e-9, 12e-9}, big[] = {2.5, 2.5, 2.5, 2.5};
    CHECK_INT(opprof_measurement_new(tiny, 4, 1, 1, "t", NULL, NULL, &m), 0);
    text = format(m);
    CHECK_CONTAINS(text, "Median: 12.00 ns");
    opprof_free(text);
    opprof_measurement_free(m);
    CHECK_INT(opprof_measurement_new(big, 4, 1, 1, "t", NULL, NULL, &m), 0);
    text = format(m);
    CHECK_CONTAINS(text, "Median: 2.50 s");
    opprof_free(text);
    opprof_measurement_free(m);

    /* Measuring under a profiler is flagged. */
    opprof_config cfg = opprof_config_default();
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    CHECK_INT(opprof_timer_timeit(&e, 1000, &m), 0);
    if (m) {
        CHECK(m->profiler_active);
        text = format(m);
        CHECK_CONTAINS(text, "WARNING: a profiler session was active");
        opprof_free(text);
    }
    opprof_measurement_free(m);
    opprof_session_free(s);

    /* The compare table: rows by sub_label, columns by description, ratios. */
    opprof_measurement *ms[4];
    double a[] = {100e-6, 100e-6, 100e-6, 100e-6}, b2[] = {200e-6, 200e-6, 200e-6, 200e-6};
    opprof_measurement_new(a, 4, 1, 1, "forward", "batch 128", "before", &ms[0]);
    opprof_measurement_new(b2, 4, 1, 1, "forward", "batch 128", "after", &ms[1]);
    opprof_measurement_new(b2, 4, 1, 1, "forward", "batch 32", "before", &ms[2]);
    opprof_measurement_new(a, 4, 1, 1, "forward", "batch 32", "after", &ms[3]);
    opprof_compare_options opt = {.baseline = 0};
    CHECK_INT(opprof_compare_table_to_string((const opprof_measurement *const *)ms, 4, &opt, &text), 0);
    CHECK_CONTAINS(text, " forward ");
    CHECK_CONTAINS(text, "|  before  |");
    /* 4 blocks against 4, apart: Mann-Whitney U = 16 of 16, z = 7.5 / sqrt(12), p = 0.030: starred */
    CHECK_CONTAINS(text, "batch 128 |   100.0  |  200.0 (2.00x*)");
    CHECK_CONTAINS(text, "batch 32 |   200.0  |  100.0 (0.50x*)");
    CHECK_CONTAINS(text, "Times are in microseconds (us).");
    CHECK_CONTAINS(text, "*: differs from the baseline (Mann-Whitney test of the measurements' blocks, p < 0.05).");
    opprof_free(text);
    for (int i = 0; i < 4; i++) opprof_measurement_free(ms[i]);

    /* The median's interval: 10 blocks of 1..10 us; P(Binomial(10, 1/2) <= 1) = 11 / 1024 <= 0.025 <
     * P(<= 2) = 56 / 1024, so ranks 2 and 9: 2 to 9 us. Overlapping blocks differ from nothing. */
    double ten[10], ten_shifted[10];
    for (int i = 0; i < 10; i++) ten[i] = (i + 1) * 1e-6, ten_shifted[i] = (i + 2) * 1e-6;
    CHECK_INT(opprof_measurement_new(ten, 10, 1, 1, "f", "x", "before", &ms[0]), 0);
    CHECK_INT(opprof_measurement_new(ten_shifted, 10, 1, 1, "f", "x", "after", &ms[1]), 0);
    CHECK(fabs(ms[0]->median_low - 2e-6) < 1e-15 && fabs(ms[0]->median_high - 9e-6) < 1e-15);
    CHECK(fabs(opprof_measurement_precision(ms[0]) - 3.5 / 5.5) < 1e-12); /* 9 - 5.5 over 5.5 */
    text = format(ms[0]);
    CHECK_CONTAINS(text, "  95% CI: 2.00 to 9.00 us (-63.6% to +63.6% of the median)\n");
    opprof_free(text);
    CHECK_INT(opprof_compare_table_to_string((const opprof_measurement *const *)ms, 2, &opt, &text), 0);
    CHECK_CONTAINS(text, "x |  5.5 +-3.5  |  6.5 +-3.5 (1.18x) ");
    CHECK(text && !strstr(text, "*: differs"));
    opprof_free(text);
    /* a precision asked and not reached is said, with the blocks that would reach it */
    ms[0]->precision_asked = 0.10;
    ms[0]->precision_reached = false;
    text = format(ms[0]);
    CHECK_CONTAINS(text, "WARNING: the median's 95% interval is +-63.6%, wider than the +-10.0% asked: about 405 "
                         "measurements would reach it.");
    opprof_free(text);
    opprof_measurement_free(ms[0]);
    opprof_measurement_free(ms[1]);

    /* Bad use. */
    opprof_timer none = opprof_timer_default();
    CHECK_INT(opprof_timer_blocked_autorange(&none, 0.1, &m), OPPROF_EINVAL);
    CHECK_INT(opprof_timer_blocked_autorange(&e, 0, &m), OPPROF_EINVAL);
    CHECK_INT(opprof_timer_timeit(&e, 0, &m), OPPROF_EINVAL);
    CHECK_INT(opprof_measurement_new(a, 4, 0, 1, NULL, NULL, NULL, &m), OPPROF_EINVAL);
}

TEST_CASE(compare_forward) {
    /* compare_forward: both variants' medians and ratios; refusal on differing outputs. */
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/compare_forward' --min-time 0.02", bin_dir());
    CHECK_INT(run_command(cmd, &out), 0);
    /* "Median: " once it has 2 measurements or more; one measurement (a slow forward on a loaded
     * machine or under a sanitizer, past --min-time) is printed alone, as PyTorch's Timer does */
    const char *first = out ? strstr(out, "forward: batch 128\n1 thread\n  ") : NULL;
    CHECK(first != NULL);
    if (first) {
        const char *line = first + strlen("forward: batch 128\n1 thread\n  ");
        const char *next = strchr(line, '\n');
        CHECK(!strncmp(line, "Median: ", 8) ||
              (line[0] >= '0' && line[0] <= '9' && next && !strncmp(next + 1, "  1 measurement, ", 17)));
    }
    CHECK_CONTAINS(out, " 1 thread ");
    CHECK_CONTAINS(out, " batch 128 |");
    /* a median's interval needs 6 measurements, which a loaded machine may not give in
     * --min-time: the interval where some measurement has them, else the warning that says why */
    bool six = false;
    for (const char *at = out; at && (at = strstr(at, " measurements, ")) != NULL; at++) {
        const char *digits = at;
        while (digits > out && digits[-1] >= '0' && digits[-1] <= '9') digits--;
        six |= atoi(digits) >= 6;
    }
    CHECK_CONTAINS(out, six ? "  95% CI: " : "give the median no 95% interval (6 are needed)");
    CHECK_CONTAINS(out, "+-: half the width of the median's 95% interval.");
    CHECK(out && (strstr(out, "x)") || strstr(out, "x*)"))); /* a ratio, starred or not (timing decides) */
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/compare_forward' --min-time 0.02 --json", bin_dir());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "\"ratio_to_1_thread\": 1.0000, \"differs_from_1_thread\": false");
    CHECK_CONTAINS(out, "\"median_low_us\": ");
    CHECK_CONTAINS(out, "\"precision_reached\": ");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/compare_forward' --perturb", bin_dir());
    CHECK_INT(run_command(cmd, &out), 1);
    CHECK_CONTAINS(out, "outputs differ: 'unpacked' against '1 thread'");
    CHECK_CONTAINS(out, "refusing to compare timings");
    CHECK(strstr(out, "Median") == NULL);
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/compare_forward' --perturb --tolerance 1", bin_dir());
    CHECK_INT(run_command(cmd, &out), 0); /* within a stated tolerance, it compares */
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/compare_forward' --min-time -1", bin_dir());
    CHECK_INT(run_command(cmd, &out), 64); /* bad usage: 64, as every tool */
    CHECK_CONTAINS(out, "--min-time must be > 0");
    free(out);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_timer"); }
