/*
 * stats.h - the statistics behind `opprof diff --stat`, the key averages'
 * distributions and the timer's intervals, for callers that compare samples
 * of their own: a sample's distribution, the shift between two samples with
 * its interval and its significance, a correction for many comparisons, and
 * the sample size that a change needs.
 *
 * The shift is distribution-free: the Hodges-Lehmann estimate (the median of
 * every difference after - before) with the interval that inverts the
 * Mann-Whitney test, and that test's two-sided p-value (its normal
 * approximation with the ties' correction and a continuity correction). Both
 * assume independent observations: steps that share a slow drift of the
 * machine (a side measured after the other) are not; interleave the sides.
 *
 * Errors: 0 or a negative OPPROF_E... code (opprof.h).
 */
#ifndef OPPROF_STATS_H
#define OPPROF_STATS_H

#include <opprof/opprof.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A sample's distribution. Quantiles interpolate linearly between the
 *  sorted values (numpy's and torch.quantile's default). */
typedef struct opprof_distribution {
    size_t n;
    double min, q1, median, q3, p90, p99, max;
    double iqr; /* q3 - q1 */
    double mean;
    double cv; /* coefficient of variation: standard deviation (n - 1) / mean; 0 when the mean is 0 */
} opprof_distribution;

/** The distribution of n values (n 0: all zero). values is not changed.
 *  OPPROF_EINVAL for NULL with n > 0, OPPROF_ENOMEM. */
OPPROF_API int opprof_distribution_of(const double *values, size_t n, opprof_distribution *out);

/** The distribution-free interval of a sample's median at confidence
 *  `level`: the order statistics of ranks l and n + 1 - l, l the largest
 *  with P(Binomial(n, 1/2) <= l - 1) <= (1 - level) / 2, so that it covers
 *  the median with at least that probability. *lo and *hi are NAN when n
 *  is too small for the level (fewer than 6 values at 95 %). OPPROF_EINVAL
 *  for NULL, or a level outside (0, 1). */
OPPROF_API int opprof_median_interval(const double *values, size_t n, double level, double *lo, double *hi);

/** How `after` moved from `before`. */
typedef struct opprof_shift {
    size_t n_before, n_after;
    double estimate;  /* Hodges-Lehmann: the median of all after[j] - before[i] */
    double lo, hi;    /* its interval at the asked level (the differences of ranks
                         k and n_before * n_after + 1 - k); lo = -inf, hi = +inf when
                         the samples are too small for that level */
    double u;         /* Mann-Whitney U of `after`: pairs with after > before, ties 1/2 */
    double z;         /* (u - mean) / sd, continuity-corrected; 0 when sd is 0 */
    double p;         /* two-sided p-value; 1 when every value is equal */
    double p_greater; /* one-sided: after tends to be greater than before */
    double p_less;    /* one-sided: after tends to be less */
    double level;     /* the interval's confidence, e.g. 0.95 */
} opprof_shift;

/** The shift between two samples at confidence `level` (in (0, 1)).
 *  OPPROF_EINVAL for an empty side, NULL, or a level out of range. */
OPPROF_API int opprof_shift_of(const double *before, size_t n_before, const double *after, size_t n_after, double level,
                               opprof_shift *out);

/** Holm's step-down correction: adjusted[i] for p[i] (monotone, at most 1),
 *  so that "adjusted[i] < alpha" rejects with a family-wise error <= alpha.
 *  adjusted may be p. OPPROF_ENOMEM, OPPROF_EINVAL for NULL with n > 0. */
OPPROF_API int opprof_holm_adjust(const double *p, size_t n, double *adjusted);

/** The observations per side that a two-sided rank test at `alpha` needs to
 *  detect, with probability `power`, a shift of `change` (a fraction of the
 *  median, e.g. 0.05) in a sample whose spread is `spread` (its IQR over its
 *  median): the normal approximation, sd estimated as IQR / 1.349, with the
 *  rank test's efficiency 3/pi, plus Guenther's small-sample correction
 *  (z^2 / 4), and never fewer than the test needs to reach alpha at all (4
 *  a side for 0.05). SIZE_MAX when change is 0. */
OPPROF_API size_t opprof_steps_needed(double spread, double change, double alpha, double power);

/** The standard normal's quantile: z with P(Z <= z) = p, p in (0, 1). */
OPPROF_API double opprof_normal_quantile(double p);

#ifdef __cplusplus
}
#endif
#endif /* OPPROF_STATS_H */
