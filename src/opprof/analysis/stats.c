/* stats.c - a sample's distribution, the Hodges-Lehmann shift between two
 * samples with its Mann-Whitney interval and p-value, Holm's correction, and
 * the sample size a change needs (include/opprof/stats.h).
 *
 * The shift's interval needs the k-th smallest of the n_before * n_after
 * differences. They are never made: the k-th is found by bisection on its
 * value, counting the differences at or below a value in one pass over both
 * sorted samples, so memory stays O(n) and time O(n log n) for any size. */
#include "analysis/analysis.h"

#include <opprof/stats.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A double's bits as an unsigned key in the doubles' order (negatives
 * flipped whole, positives above them with the sign bit set). */
static OPPROF__HASH inline uint64_t order_key(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

/* A sorted copy: small ones by qsort; past that an LSD radix sort on the
 * keys, 8 bits a pass (a row's calls, 3 million in `opprof record` of a toy
 * program, took a third of its exit by qsort). NaN sort after +inf. */
static double *sorted_copy(const double *v, size_t n) {
    double *s = opprof__alloc((n ? n : 1) * sizeof *s);
    if (!s) return NULL;
    memcpy(s, v, n * sizeof *s);
    if (n < 256) {
        qsort(s, n, sizeof *s, cmp_double);
        return s;
    }
    uint64_t *a = opprof__alloc(2 * n * sizeof *a), *b = a ? a + n : NULL;
    if (!a) {
        qsort(s, n, sizeof *s, cmp_double);
        return s;
    }
    for (size_t i = 0; i < n; i++) a[i] = order_key(s[i]);
    for (int shift = 0; shift < 64; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[(a[i] >> shift & 0xFF) + 1]++;
        if (count[(a[0] >> shift & 0xFF) + 1] == n) continue; /* one value of this byte: nothing moves */
        for (int k = 0; k < 256; k++) count[k + 1] += count[k];
        for (size_t i = 0; i < n; i++) b[count[a[i] >> shift & 0xFF]++] = a[i];
        uint64_t *t = a;
        a = b;
        b = t;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t u = a[i] >> 63 ? a[i] & ~(UINT64_C(1) << 63) : ~a[i];
        memcpy(&s[i], &u, sizeof u);
    }
    opprof__free(a < b ? a : b);
    return s;
}

/* Linear interpolation between the sorted values (numpy's default). */
static double quantile(const double *sorted, size_t n, double q) {
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos, hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (pos - (double)lo) * (sorted[hi] - sorted[lo]);
}

int opprof_distribution_of(const double *values, size_t n, opprof_distribution *out) {
    if (!out || (n && !values)) return OPPROF_EINVAL;
    *out = (opprof_distribution){.n = n};
    if (!n) return 0;
    double *s = sorted_copy(values, n);
    if (!s) return OPPROF_ENOMEM;
    double sum = 0, squares = 0;
    for (size_t i = 0; i < n; i++) sum += s[i];
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++) squares += (s[i] - mean) * (s[i] - mean);
    out->min = s[0];
    out->max = s[n - 1];
    out->q1 = quantile(s, n, 0.25);
    out->median = quantile(s, n, 0.5);
    out->q3 = quantile(s, n, 0.75);
    out->p90 = quantile(s, n, 0.90);
    out->p99 = quantile(s, n, 0.99);
    out->iqr = out->q3 - out->q1;
    out->mean = mean;
    out->cv = n > 1 && mean != 0 ? sqrt(squares / (double)(n - 1)) / fabs(mean) : 0;
    opprof__free(s);
    return 0;
}

int opprof_median_interval(const double *values, size_t n, double level, double *lo, double *hi) {
    if ((n && !values) || !lo || !hi || !(level > 0 && level < 1)) return OPPROF_EINVAL;
    *lo = *hi = NAN;
    double tail = (1 - level) / 2, cdf = 0;
    size_t l = 0; /* ranks 1..l - 1 below: P(X <= l - 1) <= tail */
    for (size_t j = 0; j < n / 2 + 1; j++) {
        cdf += exp(lgamma((double)n + 1) - lgamma((double)j + 1) - lgamma((double)(n - j) + 1) - (double)n * log(2.0));
        if (cdf > tail) break;
        l = j + 1;
    }
    if (l < 1) return 0;
    double *s = sorted_copy(values, n);
    if (!s) return OPPROF_ENOMEM;
    *lo = s[l - 1];
    *hi = s[n - l];
    opprof__free(s);
    return 0;
}

double opprof_normal_quantile(double p) {
    if (!(p > 0 && p < 1)) return p >= 1 ? INFINITY : -INFINITY;
    double lo = -40, hi = 40;
    for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(-mid / sqrt(2.0)) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* ---- the k-th smallest difference after[j] - before[i] (x: before, y: after, sorted) ---- */

/* Every comparison is of the computed difference y[j] - x[i] with t, so
 * that counts and values agree to the last bit (x[i] < y[j] - t rounds
 * otherwise); it falls as i rises and rises with j, hence the two pointers. */

/* How many differences are <= t. */
static uint64_t count_at_most(const double *x, size_t m, const double *y, size_t n, double t) {
    uint64_t count = 0;
    size_t i = 0; /* the first with y[j] - x[i] <= t: moves up as j does */
    for (size_t j = 0; j < n; j++) {
        while (i < m && y[j] - x[i] > t) i++;
        count += m - i;
    }
    return count;
}

/* The smallest difference > t (+inf if none), and the largest <= t (-inf). */
static double smallest_above(const double *x, size_t m, const double *y, size_t n, double t) {
    double best = INFINITY;
    size_t below = 0; /* y[j] - x[0..below) > t */
    for (size_t j = 0; j < n; j++) {
        while (below < m && y[j] - x[below] > t) below++;
        if (below && y[j] - x[below - 1] < best) best = y[j] - x[below - 1];
    }
    return best;
}
static double largest_at_most(const double *x, size_t m, const double *y, size_t n, double t) {
    double best = -INFINITY;
    size_t i = 0;
    for (size_t j = 0; j < n; j++) {
        while (i < m && y[j] - x[i] > t) i++;
        if (i < m && y[j] - x[i] > best) best = y[j] - x[i];
    }
    return best;
}

/* Bisection between two values lo < d_k <= hi, narrowed until one distinct
 * difference lies between them. k in [1, m n]. */
static double kth_difference(const double *x, size_t m, const double *y, size_t n, uint64_t k) {
    double lo = y[0] - x[m - 1] - 1, hi = y[n - 1] - x[0];
    for (;;) {
        double a = smallest_above(x, m, y, n, lo), b = largest_at_most(x, m, y, n, hi);
        if (!(a < b)) return b;
        double mid = a + (b - a) / 2;
        if (!(mid < b)) mid = a;
        if (count_at_most(x, m, y, n, mid) >= k)
            hi = mid;
        else
            lo = mid;
    }
}

static double hodges_lehmann(const double *x, size_t m, const double *y, size_t n) {
    uint64_t pairs = (uint64_t)m * n;
    double upper = kth_difference(x, m, y, n, pairs / 2 + 1);
    return pairs % 2 ? upper : (kth_difference(x, m, y, n, pairs / 2) + upper) / 2;
}

/* ---- Mann-Whitney ---- */

typedef struct ranked {
    double value;
    int after;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
    return cmp_double(&((const ranked *)a)->value, &((const ranked *)b)->value);
}

/* U of `after` with mid-ranks for ties, and the ties' sum of (t^3 - t). */
static int mann_whitney_u(const double *x, size_t m, const double *y, size_t n, double *u, double *ties) {
    size_t total = m + n;
    ranked *r = opprof__alloc(total * sizeof *r);
    if (!r) return OPPROF_ENOMEM;
    for (size_t i = 0; i < m; i++) r[i] = (ranked){x[i], 0};
    for (size_t j = 0; j < n; j++) r[m + j] = (ranked){y[j], 1};
    qsort(r, total, sizeof *r, cmp_ranked);
    double rank_sum = 0, t_sum = 0;
    for (size_t i = 0; i < total;) {
        size_t end = i;
        while (end < total && r[end].value == r[i].value) end++;
        double t = (double)(end - i), mid_rank = (double)(i + 1 + end) / 2;
        for (size_t k = i; k < end; k++)
            if (r[k].after) rank_sum += mid_rank;
        t_sum += t * t * t - t;
        i = end;
    }
    opprof__free(r);
    *u = rank_sum - (double)n * (double)(n + 1) / 2;
    *ties = t_sum;
    return 0;
}

int opprof_shift_of(const double *before, size_t m, const double *after, size_t n, double level, opprof_shift *out) {
    if (!before || !after || !out || !m || !n || !(level > 0 && level < 1)) return OPPROF_EINVAL;
    double *x = sorted_copy(before, m), *y = sorted_copy(after, n);
    int rc = x && y ? 0 : OPPROF_ENOMEM;
    double u = 0, ties = 0;
    if (!rc) rc = mann_whitney_u(x, m, y, n, &u, &ties);
    if (rc) {
        opprof__free(x);
        opprof__free(y);
        return rc;
    }
    double mn = (double)m * (double)n, total = (double)(m + n);
    double var = total > 1 ? mn / 12 * ((total + 1) - ties / (total * (total - 1))) : 0;
    double sd = var > 0 ? sqrt(var) : 0, excess = u - mn / 2;
    *out = (opprof_shift){.n_before = m, .n_after = n, .u = u, .level = level, .p = 1, .p_greater = 1, .p_less = 1};
    if (sd > 0 && fabs(excess) > 0.5) {
        out->z = (excess - (excess > 0 ? 0.5 : -0.5)) / sd;
        out->p = erfc(fabs(out->z) / sqrt(2.0));
    }
    if (sd > 0) { /* each continuity-corrected toward its null */
        out->p_greater = 0.5 * erfc((excess - 0.5) / sd / sqrt(2.0));
        out->p_less = 0.5 * erfc(-(excess + 0.5) / sd / sqrt(2.0));
        if (out->p_greater > 1) out->p_greater = 1;
        if (out->p_less > 1) out->p_less = 1;
    }
    out->estimate = hodges_lehmann(x, m, y, n);
    /* P(U <= k - 1) = (1 - level) / 2 under no shift, continuity-corrected */
    double z = opprof_normal_quantile(1 - (1 - level) / 2);
    double k = floor(mn / 2 + 0.5 - z * sqrt(mn * (total + 1) / 12));
    out->lo = -INFINITY;
    out->hi = INFINITY;
    if (k >= 1) {
        out->lo = kth_difference(x, m, y, n, (uint64_t)k);
        out->hi = kth_difference(x, m, y, n, (uint64_t)(mn + 1 - k));
    }
    opprof__free(x);
    opprof__free(y);
    return 0;
}

int opprof_holm_adjust(const double *p, size_t n, double *adjusted) {
    if (n && (!p || !adjusted)) return OPPROF_EINVAL;
    opprof__keyed *order = opprof__alloc((n ? n : 1) * sizeof *order);
    if (!order) return OPPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) order[i] = (opprof__keyed){opprof__double_key(p[i]), i};
    opprof__sort_keyed(order, n);
    double running = 0;
    for (size_t r = 0; r < n; r++) {
        double a = (double)(n - r) * p[order[r].index];
        if (a > 1) a = 1;
        if (a > running) running = a;
        adjusted[order[r].index] = running;
    }
    opprof__free(order);
    return 0;
}

/* The rank test's most extreme z with n a side (every after above every
 * before), continuity-corrected: below the level's z, no sample of n can
 * reach it. */
static double extreme_z(double n) { return (n * n / 2 - 0.5) / sqrt(n * n * (2 * n + 1) / 12); }

size_t opprof_steps_needed(double spread, double change, double alpha, double power) {
    if (!(change > 0) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) || !(spread >= 0)) return SIZE_MAX;
    double sd = spread / 1.349, za = opprof_normal_quantile(1 - alpha / 2);
    double z = za + opprof_normal_quantile(power);
    double n = 2 * z * z * sd * sd / (change * change) / (3 / 3.14159265358979323846);
    n = ceil(n + za * za / 4); /* Guenther's correction for small samples */
    if (!(n < 1e12)) return SIZE_MAX;
    while (extreme_z(n) < za) n++;
    return n < 2 ? 2 : (size_t)n;
}
