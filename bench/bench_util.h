/* bench_util.h - timing, statistics and peers for opprof's benchmarks.
 * Benchmarks report medians and ratios against a baseline measured in the
 * same run; they are never part of `make test`. */
#ifndef OPPROF_BENCH_UTIL_H
#define OPPROF_BENCH_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <opprof/stats.h>

static inline int64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct bench_stats {
    double median, q1, q3, iqr;
    int n;
} bench_stats;

/* Sorts `v` in place. */
static inline bench_stats bench_stats_of(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    bench_stats s = {.n = n};
    if (n == 0) return s;
    double pos;
#define BENCH_Q(p) \
    (pos = (p) * (n - 1), v[(int)pos] + (pos - (int)pos) * (v[(int)pos + ((int)pos + 1 < n)] - v[(int)pos]))
    s.median = BENCH_Q(0.5);
    s.q1 = BENCH_Q(0.25);
    s.q3 = BENCH_Q(0.75);
#undef BENCH_Q
    s.iqr = s.q3 - s.q1;
    return s;
}

/* The directory of this executable (for peer programs built beside it). */
static inline const char *bench_self_dir(void) {
    static char dir[4096];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) return ".";
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    return dir;
}

/* Run a command once and read the doubles of its "key: value" lines for
 * `n` keys; a key that is absent is NAN. False when the command fails. */
static inline bool bench_run_peer_keys(const char *cmd, int n, const char *const *keys, double *values) {
    for (int i = 0; i < n; i++) values[i] = NAN;
    FILE *p = popen(cmd, "r");
    if (!p) return false;
    char line[512];
    while (fgets(line, sizeof line, p))
        for (int i = 0; i < n; i++) {
            size_t klen = strlen(keys[i]);
            if (strncmp(line, keys[i], klen) == 0 && line[klen] == ':') values[i] = strtod(line + klen + 1, NULL);
        }
    return pclose(p) == 0;
}

/* The same for one key: false when the command fails or the key is absent. */
static inline bool bench_run_peer(const char *cmd, const char *key, double *value) {
    return bench_run_peer_keys(cmd, 1, &key, value) && !isnan(*value);
}

static inline bool bench_have_torch(void) {
    return access("/usr/bin/python3", X_OK) == 0 && system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

/* OpenBLAS 0.3.21 (Debian 12) does not know recent Xeons and falls back to its
 * generic Prescott kernels (4x slower); peers that use it are measured with
 * the SkylakeX kernels when the CPU has AVX-512, unless the user chose. */
static inline const char *bench_openblas_env(void) {
    if (getenv("OPENBLAS_CORETYPE")) return "OPENBLAS_NUM_THREADS=1";
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? "OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=SKYLAKEX"
                                             : "OPENBLAS_NUM_THREADS=1";
}

/* The floor of a recorder: one timestamp (rdtsc on x86), ns; the best of 5
 * runs of a million, back to back (its throughput). */
static inline double bench_timestamp_ns(void) {
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        uint64_t sink = 0;
        int64_t t0 = bench_now_ns();
        for (int i = 0; i < 1000000; i++) {
#if defined(__x86_64__)
            sink += __builtin_ia32_rdtsc();
#else
            sink += (uint64_t)bench_now_ns();
#endif
        }
        double ns = (double)(bench_now_ns() - t0) / 1e6;
        if (ns < best) best = ns;
        if (sink == 42) puts("");
    }
    return best;
}

/* The CPU's model name (/proc/cpuinfo) and its widest vector ISA, for the
 * host line every figure is stated with. */
static inline void bench_host(char *model, size_t size, const char **isa) {
    snprintf(model, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(model, size, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = 0;
            break;
        }
    if (f) fclose(f);
#if defined(__x86_64__)
    __builtin_cpu_init();
    *isa = __builtin_cpu_supports("avx512f") ? "AVX-512" : __builtin_cpu_supports("avx2") ? "AVX2" : "SSE";
#else
    *isa = "other";
#endif
}

/* NaN and infinities (a ratio over a floor of 0) are null: JSON has no other word for them. */
static inline void bench_json_number(FILE *f, const char *key, double v, bool last) {
    if (!isfinite(v))
        fprintf(f, "  \"%s\": null%s\n", key, last ? "" : ",");
    else
        fprintf(f, "  \"%s\": %.6g%s\n", key, v, last ? "" : ",");
}

/* A ratio between a peer and opprof from interleaved pairs (the peer, then
 * opprof, then the peer...): the median of the pairs' ratios and its 95 %
 * interval (distribution-free: the order statistics that cover the median;
 * min to max for 6 to 8 pairs; NAN below 6). Pairs with a NAN are left out. */
typedef struct bench_ratio {
    double median, low, high;
    int pairs;
} bench_ratio;

static inline bench_ratio bench_ratio_of(const double *num, const double *den, int n) {
    bench_ratio r = {NAN, NAN, NAN, 0};
    double *v = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    for (int i = 0; v && i < n; i++)
        if (!isnan(num[i]) && !isnan(den[i]) && den[i] != 0) v[r.pairs++] = num[i] / den[i];
    if (v && r.pairs) {
        r.median = bench_stats_of(v, r.pairs).median;
        opprof_median_interval(v, (size_t)r.pairs, 0.95, &r.low, &r.high);
    }
    free(v);
    return r;
}

/* "KEY": median, "KEY_low", "KEY_high", "KEY_pairs". */
static inline void bench_json_ratio(FILE *f, const char *key, bench_ratio r, bool last) {
    char k[128];
    bench_json_number(f, key, r.median, false);
    snprintf(k, sizeof k, "%s_low", key);
    bench_json_number(f, k, r.low, false);
    snprintf(k, sizeof k, "%s_high", key);
    bench_json_number(f, k, r.high, false);
    fprintf(f, "  \"%s_pairs\": %d%s\n", key, r.pairs, last ? "" : ",");
}

/* "1.23x (1.10-1.31, 7 pairs)" */
static inline void bench_ratio_text(bench_ratio r, char *buf, size_t size) {
    if (isnan(r.median))
        snprintf(buf, size, "--");
    else if (isnan(r.low))
        snprintf(buf, size, "%.2fx (%d pairs: too few for an interval)", r.median, r.pairs);
    else
        snprintf(buf, size, "%.2fx (%.2f-%.2f, %d pairs)", r.median, r.low, r.high, r.pairs);
}

#endif
