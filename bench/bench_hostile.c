/* bench_hostile.c - the reader on traces made to be slow: 10^6 distinct string
 * pids, and 10^5 process_labels metadata events over 5*10^4 threads, against an
 * ordinary trace read in the same run; the time per byte of each, median of 5
 * interleaved reads, and the ratio to the ordinary trace's (goal: <= 2).
 *   build/bin/bench_hostile [--json] */
#include "bench_util.h"

#include <opprof/capture.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { RUNS = 5 };

typedef void (*write_fn)(FILE *f);

/* 10^6 ordinary complete events on one thread */
static void ordinary(FILE *f) {
    for (long i = 0; i < 1000000; i++)
        fprintf(f, "%s{\"ph\":\"X\",\"name\":\"op_%ld\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":1}", i ? ",\n" : "",
                i % 50, 2 * i);
}

/* 10^6 counter samples, each of a process named by a string never seen before */
static void string_pids(FILE *f) {
    for (long i = 0; i < 1000000; i++)
        fprintf(f, "%s{\"ph\":\"C\",\"name\":\"c\",\"pid\":\"process %ld\",\"ts\":%ld,\"args\":{\"v\":1}}",
                i ? ",\n" : "", i, i);
}

/* 5*10^4 threads of one process, then 10^5 process_labels of it */
static void labels(FILE *f) {
    for (long i = 0; i < 50000; i++)
        fprintf(f, "%s{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":%ld,\"ts\":%ld,\"dur\":1}", i ? ",\n" : "", i + 1,
                i);
    for (long i = 0; i < 100000; i++)
        fprintf(f,
                ",\n{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":1,\"tid\":0,\"args\":{\"labels\":\"rank %ld\"}}",
                i % 7);
}

static int make(const char *path, write_fn body) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("{\"traceEvents\":[\n", f);
    body(f);
    fputs("\n]}\n", f);
    return fclose(f);
}

static double read_seconds(const char *path) {
    int64_t t0 = bench_now_ns();
    opprof_capture *c = NULL;
    opprof_read_error err;
    int rc = opprof_capture_read(path, NULL, &c, &err);
    double s = (double)(bench_now_ns() - t0) / 1e9;
    opprof_capture_free(c);
    if (rc) fprintf(stderr, "bench_hostile: %s: %s\n", path, err.message);
    return rc ? NAN : s;
}

int main(int argc, char **argv) {
    bool json = argc == 2 && !strcmp(argv[1], "--json");
    if (argc > 2 || (argc == 2 && !json)) {
        fprintf(stderr, "usage: bench_hostile [--json]\n");
        return 64;
    }
    static const char *const names[3] = {"ordinary", "string_pids", "process_labels"};
    write_fn bodies[3] = {ordinary, string_pids, labels};
    char paths[3][64];
    double mb[3], ns_per_byte[3][RUNS];
    for (int k = 0; k < 3; k++) {
        snprintf(paths[k], sizeof paths[k], "/tmp/opprof-bench-hostile-%d.json", k);
        struct stat st;
        if (make(paths[k], bodies[k]) || stat(paths[k], &st)) return 1;
        mb[k] = (double)st.st_size / 1e6;
    }
    for (int r = 0; r < RUNS; r++) /* interleaved: the machine's drift falls on all three */
        for (int k = 0; k < 3; k++) ns_per_byte[k][r] = read_seconds(paths[k]) * 1e3 / mb[k];
    bench_stats st[3];
    for (int k = 0; k < 3; k++) {
        st[k] = bench_stats_of(ns_per_byte[k], RUNS); /* sorts: [0] is the least, [RUNS - 1] the most */
        unlink(paths[k]);
    }
    if (json) printf("{\n");
    for (int k = 0; k < 3; k++) {
        double ratio = st[k].median / st[0].median;
        if (json) {
            char key[96];
            snprintf(key, sizeof key, "%s_mb", names[k]);
            bench_json_number(stdout, key, mb[k], false);
            snprintf(key, sizeof key, "%s_ns_per_byte_median", names[k]);
            bench_json_number(stdout, key, st[k].median, false);
            snprintf(key, sizeof key, "%s_ns_per_byte_min", names[k]);
            bench_json_number(stdout, key, ns_per_byte[k][0], false);
            snprintf(key, sizeof key, "%s_ns_per_byte_max", names[k]);
            bench_json_number(stdout, key, ns_per_byte[k][RUNS - 1], false);
            snprintf(key, sizeof key, "%s_over_ordinary", names[k]);
            bench_json_number(stdout, key, ratio, k == 2);
        } else {
            printf("%-15s %6.1f MB  %.2f ns/byte (%.2f-%.2f)  %.2fx the ordinary trace's\n", names[k], mb[k],
                   st[k].median, ns_per_byte[k][0], ns_per_byte[k][RUNS - 1], ratio);
        }
    }
    if (json) printf("}\n");
    return 0;
}
