/*
 * timer.h - a benchmark timer for C callables, as torch.utils.benchmark.Timer:
 * timeit, blocked_autorange, adaptive_autorange, PyTorch's printout, and a
 * compare table of several measurements.
 *
 *   static void forward(void *ctx) { ... }
 *   opprof_timer t = opprof_timer_default();
 *   t.stmt = forward; t.ctx = &model;
 *   t.label = "forward"; t.sub_label = "batch 128"; t.description = "1 thread";
 *   opprof_measurement *m;
 *   opprof_timer_blocked_autorange(&t, 0.2, &m);
 *   char *text; opprof_measurement_text_to_string(m, &text); puts(text); opprof_free(text);
 *   opprof_measurement_free(m);
 *
 * Measure without a profiler, as PyTorch's CPU-profiling guide advises, enforced. A measurement
 * taken while a profiler session is active carries a warning.
 * Errors: 0 or a negative OPPROF_E... code (opprof.h).
 */
#ifndef OPPROF_TIMER_H
#define OPPROF_TIMER_H

#include <opprof/opprof.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*opprof_timer_fn)(void *ctx);

typedef struct opprof_timer {
    opprof_timer_fn stmt;       /* what is measured (required) */
    opprof_timer_fn setup;      /* run once before each block (may be NULL) */
    opprof_timer_fn teardown;   /* run once after each block (may be NULL) */
    void *ctx;                  /* passed to all three */
    const char *label;          /* "forward" */
    const char *sub_label;      /* "batch 128": compare table rows */
    const char *description;    /* "1 thread": compare table columns */
    int num_threads;            /* recorded in the measurement (set your runtime's threads yourself) */
    int pin_cpu;                /* >= 0: run on this CPU while measuring; -1: do not pin */
    double (*clock)(void *ctx); /* seconds from any origin, called with ctx; NULL:
                                   CLOCK_MONOTONIC. Another clock measures in its own
                                   unit (cycles, a simulator's time, a test's fake). */
    double precision;           /* the precision asked of blocked_autorange: the median's 95 %
                                   interval within +-precision of it (0.01: +-1 %); 0: none.
                                   The measurement says whether it was reached. */
} opprof_timer;

/** label, sub_label, description NULL; one thread; no pinning; CLOCK_MONOTONIC. */
OPPROF_API opprof_timer opprof_timer_default(void);

/** A measurement: per-run times of each block, and their statistics. */
typedef struct opprof_measurement {
    double *times; /* seconds per run, one per block (block time / number_per_run) */
    size_t n_times;
    int64_t number_per_run;           /* runs per block */
    double median, q1, q3, iqr, mean; /* seconds per run; quantiles interpolated linearly */
    double median_low, median_high;   /* the median's 95 % interval (opprof_median_interval of
                                         the runs' times); NAN with fewer than 6 blocks */
    double precision_asked;           /* the timer's precision, 0: none */
    bool precision_reached;           /* the interval is within +-precision_asked of the median (true
                                         when none was asked) */
    int num_threads;
    double overhead_per_run; /* seconds subtracted from each run: the timer's own cost */
    bool profiler_active;    /* a profiler session was active while measuring */
    char label[128], sub_label[128], description[128];
} opprof_measurement;

/** Run stmt `number` times in one block. */
OPPROF_API int opprof_timer_timeit(const opprof_timer *timer, int64_t number, opprof_measurement **out);
/** PyTorch's blocked_autorange: the block size grows by 10x until the timer's
 *  overhead is negligible (<= 1e-4) and a block lasts >= min_run_time / 1000
 *  (or any block lasts > min_run_time); then blocks until min_run_time is spent. */
OPPROF_API int opprof_timer_blocked_autorange(const opprof_timer *timer, double min_run_time, opprof_measurement **out);
/** PyTorch's adaptive_autorange: blocks (sized as above for 0.05 s) until
 *  IQR / median < threshold with at least 4 blocks and min_run_time spent, or
 *  max_run_time is spent. */
OPPROF_API int opprof_timer_adaptive_autorange(const opprof_timer *timer, double threshold, double min_run_time,
                                               double max_run_time, opprof_measurement **out);

/** A measurement built from block times (seconds per block), e.g. to format
 *  numbers taken elsewhere. Labels are copied (NULL: none). */
OPPROF_API int opprof_measurement_new(const double *block_times, size_t count, int64_t number_per_run, int num_threads,
                                      const char *label, const char *sub_label, const char *description,
                                      opprof_measurement **out);
OPPROF_API void opprof_measurement_free(opprof_measurement *m);
/** Half the width of the median's interval over the median: the larger
 *  distance from the median to an end, relative (0.012: +-1.2 %); NAN when
 *  the measurement has no interval. */
OPPROF_API double opprof_measurement_precision(const opprof_measurement *m);
/** True when IQR / median < threshold. */
OPPROF_API bool opprof_measurement_meets_confidence(const opprof_measurement *m, double threshold);

/**
 * PyTorch's printout, and the median's interval:
 *   forward: baseline
 *     Median: 391.92 us
 *     IQR:    19.19 us (383.10 to 402.29)
 *     95% CI: 388.50 to 395.01 us (-0.9% to +0.8% of the median)
 *     52 measurements, 10 runs per measurement, 1 thread
 * with "WARNING: the median's 95% interval is +-X%, wider than the +-Y%
 * asked" and the blocks that would reach it, when a precision was asked and
 * not reached;
 * "WARNING: Interquartile range is X% of the median measurement." and
 * "This could indicate system fluctuation." (IQR >= 10 % of the median) or
 * "This suggests significant environmental influence." (>= 25 %), and a
 * warning when a profiler was active. *out_text: opprof_free.
 */
OPPROF_API int opprof_measurement_text_to_string(const opprof_measurement *m, char **out_text);

typedef struct opprof_compare_options {
    int baseline;  /* column index whose medians the others are divided by; -1: no ratio columns */
    bool colorize; /* green for faster, red for slower than the baseline (ANSI); callers
                      usually pass isatty(1) */
} opprof_compare_options;

/**
 * A compare table of medians, as torch.utils.benchmark.Compare: title from the
 * label, one row per sub_label, one column per description, times in one unit
 * chosen for the smallest median, each with half its 95 % interval ("250.1
 * +-1.3"); with a baseline, each other column's cell carries its ratio to the
 * baseline, marked "*" when the two measurements differ (Mann-Whitney test
 * of their blocks' times, p < 0.05): "250.1 +-1.3 (0.97x*)". *out_text:
 * opprof_free.
 */
OPPROF_API int opprof_compare_table_to_string(const opprof_measurement *const *measurements, size_t count,
                                              const opprof_compare_options *options, char **out_text);

#ifdef __cplusplus
}
#endif
#endif /* OPPROF_TIMER_H */
