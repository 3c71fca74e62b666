/*
 * bench_reader - reading big traces back: writes a synthetic trace of the
 * given size with opprof's own writer (nested operators, memory events), then
 * measures opprof_capture_read + key averages (what `opprof report` does) in
 * MB/s and peak memory, and, where /usr/bin/python3 exists, Python's
 * json.load plus a per-name sum on the same file, in the same run. Then the
 * same on a real Kineto trace (PyTorch 1.9's ResNet-50 on CUDA from
 * tests/fixtures, its events copied N times by make_real_trace.py).
 *
 * Each file is read in ROUNDS rounds of Python, opprof on one thread, opprof
 * on two (opprof_read_options.threads: the event array read in two halves)
 * and simdjson, in turn: the medians, and the ratios as the median of the
 * rounds' pairs with its interval.
 *
 *   build/bin/bench_reader [--json] [--mb N] [--real-copies N] [--rounds N] [--keep FILE]
 *   (defaults: 1024 MB of opprof's own; 12 copies: 388 MB of Kineto's; 7 rounds)
 */
#include "bench_util.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <sys/stat.h>

static long status_kb(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n)) v = strtol(line + n + 1, NULL, 10);
    if (f) fclose(f);
    return v;
}

static const char *g_path;

static int write_trace(const opprof_capture *c, void *ud) {
    (void)ud;
    return opprof_capture_chrome_write(c, g_path);
}

/* Record about `events` events through the real hot path, write them:
 * forward > aten::linear > aten::addmm (an allocation), aten::relu (a free). */
static int make_trace(size_t events) {
    opprof_config cfg = opprof_config_default();
    cfg.on_trace_ready = write_trace;
    cfg.profile_memory = true;
    cfg.record_steps = false;
    opprof_session *s;
    if (opprof_session_start(&s, &cfg)) return -1;
    for (size_t i = 0; i < events / 6; i++) {
        {
            OPPROF_SCOPE("forward");
            {
                OPPROF_OP_SCOPE("aten::linear");
                {
                    OPPROF_OP_SCOPE("aten::addmm");
                    opprof_record_memory((void *)(uintptr_t)(i * 64), 4096, -1);
                }
            }
            {
                OPPROF_OP_SCOPE("aten::relu");
                opprof_record_memory((void *)(uintptr_t)(i * 64), -4096, -1);
            }
        }
    }
    int rc = opprof_session_stop(s);
    opprof_session_free(s);
    return rc;
}

static const char *PY = "import json, sys, time\n"
                        "t = time.perf_counter()\n"
                        "with open(sys.argv[1]) as f: d = json.load(f)\n"
                        "sums = {}\n"
                        "for e in d['traceEvents']:\n"
                        "    if e.get('ph') == 'X': sums[e['name']] = sums.get(e['name'], 0) + e['dur']\n"
                        "print('seconds: %f' % (time.perf_counter() - t))\n";

typedef struct measured {
    double mb, seconds, peak_mb, capture_mb, python_s, simdjson_s, simdjson_peak_mb; /* medians; peak: the largest */
    double simdjson_parse_s;         /* simdjson's parse alone, the file already in memory */
    double simdjson_warm_parse_s;    /* ... by a parser whose buffers are already touched */
    double two_seconds, two_peak_mb; /* ... on two threads */
    size_t events, memory;
    int two_threads_read; /* the threads that the two-thread read used */
    bench_ratio vs_python, simdjson_over, simdjson_parse_over, simdjson_warm_parse_over, two_over_simdjson,
        two_over_one;
} measured;

/* Read + report `path` as `opprof report` does, on `threads` threads:
 * seconds, peak memory (m->seconds, m->peak_mb, or the two_ fields). */
static int measure_ours(const char *path, int threads, measured *m) {
    long rss_before = status_kb("VmRSS");
    FILE *clear = fopen("/proc/self/clear_refs", "w"); /* VmHWM from here */
    if (clear) {
        fputs("5", clear);
        fclose(clear);
    }
    int64_t t0 = bench_now_ns();
    opprof_capture *c = NULL;
    opprof_read_error err;
    if (opprof_capture_read(path, &(opprof_read_options){.threads = threads}, &c, &err)) {
        fprintf(stderr, "bench_reader: %s: %s\n", path, err.message);
        return -1;
    }
    opprof_averages *avg;
    char *table;
    opprof_capture_averages(c, &avg);
    opprof_averages_table_to_string(avg, &(opprof_table_options){.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = 12},
                                    &table);
    double seconds = (double)(bench_now_ns() - t0) / 1e9;
    double peak = (double)(status_kb("VmHWM") - rss_before) / 1024.0;
    double *peak_of = threads == 1 ? &m->peak_mb : &m->two_peak_mb;
    if (peak > *peak_of) *peak_of = peak;
    if (threads == 1)
        m->seconds = seconds;
    else {
        m->two_seconds = seconds;
        m->two_threads_read = opprof_capture_get_info(c).read_threads;
    }
    size_t n_names = opprof_capture_name_count(c);
    opprof_capture_events(c, &m->events);
    opprof_capture_memory_events(c, &m->memory);
    m->capture_mb = ((double)m->events * sizeof(opprof_event) + (double)m->memory * sizeof(opprof_memory_event) +
                     (double)n_names * 64) /
                    1e6;
    opprof_free(table);
    opprof_averages_free(avg);
    opprof_capture_free(c);
    return 0;
}

/* Python's json.load and a per-name sum on the same file: seconds, or NAN. */
static double python_seconds(const char *path) {
    double seconds = NAN;
    if (access("/usr/bin/python3", X_OK) != 0) return NAN;
    char script[] = "/tmp/opprof-bench-reader-XXXXXX";
    int fd = mkstemp(script);
    if (fd >= 0 && write(fd, PY, strlen(PY)) == (ssize_t)strlen(PY)) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s 2>/dev/null", script, path);
        if (!bench_run_peer(cmd, "seconds", &seconds)) seconds = NAN;
    }
    if (fd >= 0) close(fd);
    unlink(script);
    return seconds;
}

/* simdjson's On-Demand parser doing the same sum (make bench builds it):
 * seconds with its load of the file, or NAN; parse[0] the parse alone,
 * parse[1] the same parser's second parse (its buffers touched). */
static double simdjson_seconds(const char *path, double parse[2], double *peak_mb) {
    char peer[4200], cmd[8600];
    parse[0] = parse[1] = NAN;
    snprintf(peer, sizeof peer, "%s/simdjson_peer", bench_self_dir());
    if (access(peer, X_OK) != 0) return NAN;
    static const char *const keys[] = {"seconds", "parse_seconds", "warm_parse_seconds", "peak_rss_mb"};
    double v[4];
    snprintf(cmd, sizeof cmd, "'%s' '%s'", peer, path);
    if (!bench_run_peer_keys(cmd, 4, keys, v)) return NAN;
    parse[0] = v[1];
    parse[1] = v[2];
    *peak_mb = v[3];
    return v[0];
}

enum { MAX_ROUNDS = 64 };

/* The median of the runs that gave a time (a peer missing gives NAN). */
static double median_of_known(const double *runs, int rounds) {
    double known[MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < rounds; r++)
        if (!isnan(runs[r])) known[n++] = runs[r];
    return n ? bench_stats_of(known, n).median : NAN;
}

/* `rounds` rounds of Python, opprof, simdjson in turn: the medians, and the
 * ratios of each round's pair. */
static int measure(const char *path, int rounds, measured *m) {
    struct stat st;
    if (stat(path, &st)) return -1;
    m->mb = (double)st.st_size / 1e6;
    m->simdjson_peak_mb = NAN;
    double ours[MAX_ROUNDS] = {0}, two[MAX_ROUNDS] = {0}, py[MAX_ROUNDS] = {0}, simd[MAX_ROUNDS] = {0};
    double simd_parse[MAX_ROUNDS] = {0}, simd_warm[MAX_ROUNDS] = {0};
    for (int r = 0; r < rounds; r++) {
        py[r] = python_seconds(path);
        if (measure_ours(path, 1, m) || measure_ours(path, 2, m)) return -1;
        ours[r] = m->seconds;
        two[r] = m->two_seconds;
        double parse[2];
        simd[r] = simdjson_seconds(path, parse, &m->simdjson_peak_mb);
        simd_parse[r] = parse[0];
        simd_warm[r] = parse[1];
    }
    m->vs_python = bench_ratio_of(py, ours, rounds);                       /* opprof's speed over Python's */
    m->simdjson_over = bench_ratio_of(ours, simd, rounds);                 /* simdjson's speed over opprof's */
    m->simdjson_parse_over = bench_ratio_of(ours, simd_parse, rounds);     /* ... its parse alone's */
    m->simdjson_warm_parse_over = bench_ratio_of(ours, simd_warm, rounds); /* ... its second parse's */
    m->two_over_simdjson = bench_ratio_of(simd, two, rounds);              /* opprof on two threads over simdjson */
    m->two_over_one = bench_ratio_of(ours, two, rounds);                   /* ... over opprof on one */
    double sorted[MAX_ROUNDS];
    memcpy(sorted, ours, sizeof(double) * (size_t)rounds);
    m->seconds = bench_stats_of(sorted, rounds).median;
    memcpy(sorted, two, sizeof(double) * (size_t)rounds);
    m->two_seconds = bench_stats_of(sorted, rounds).median;
    m->python_s = median_of_known(py, rounds);
    m->simdjson_s = median_of_known(simd, rounds);
    m->simdjson_parse_s = median_of_known(simd_parse, rounds);
    m->simdjson_warm_parse_s = median_of_known(simd_warm, rounds);
    return 0;
}

static void print_text(const char *what, const measured *m) {
    double rate = m->mb / m->seconds, py_rate = m->mb / m->python_s;
    printf("%s: %.0f MB, %zu events (%zu memory)\n", what, m->mb, m->events + m->memory, m->memory);
    printf("  opprof read + report   %6.2f s  %6.0f MB/s  peak %.0f MB (capture %.0f MB: %.2fx)\n", m->seconds, rate,
           m->peak_mb, m->capture_mb, m->peak_mb * 1.048576 / m->capture_mb);
    char ratio[96];
    bench_ratio_text(m->vs_python, ratio, sizeof ratio);
    if (!isnan(m->python_s))
        printf("  Python json.load + sum %6.2f s  %6.0f MB/s  -> opprof is %s faster\n", m->python_s, py_rate, ratio);
    else
        printf("  Python: /usr/bin/python3 not found\n");
    bench_ratio_text(m->two_over_one, ratio, sizeof ratio);
    printf("  opprof on two threads  %6.2f s  %6.0f MB/s  peak %.0f MB (read by %d): %s one thread's speed\n",
           m->two_seconds, m->mb / m->two_seconds, m->two_peak_mb, m->two_threads_read, ratio);
    bench_ratio_text(m->simdjson_over, ratio, sizeof ratio);
    if (!isnan(m->simdjson_s)) {
        printf("  simdjson On-Demand sum %6.2f s  %6.0f MB/s  peak %.0f MB (the whole file in memory): %s opprof\n",
               m->simdjson_s, m->mb / m->simdjson_s, m->simdjson_peak_mb, ratio);
        bench_ratio_text(m->simdjson_parse_over, ratio, sizeof ratio);
        printf("  simdjson's parse alone %6.2f s  %6.0f MB/s  (the file already in memory): %s opprof\n",
               m->simdjson_parse_s, m->mb / m->simdjson_parse_s, ratio);
        bench_ratio_text(m->simdjson_warm_parse_over, ratio, sizeof ratio);
        printf("  simdjson's second parse %5.2f s  %6.0f MB/s  (its buffers already touched): %s opprof\n",
               m->simdjson_warm_parse_s, m->mb / m->simdjson_warm_parse_s, ratio);
        bench_ratio_text(m->two_over_simdjson, ratio, sizeof ratio);
        printf("  opprof on two threads: %s simdjson's speed\n", ratio);
    }
}

static void print_json(const char *prefix, const measured *m, bool last) {
    char key[64];
    double rate = m->mb / m->seconds, py_rate = m->mb / m->python_s;
#define KEY(name) (snprintf(key, sizeof key, "%s%s", prefix, name), key)
    bench_json_number(stdout, KEY("trace_mb"), m->mb, false);
    bench_json_number(stdout, KEY("events"), (double)(m->events + m->memory), false);
    bench_json_number(stdout, KEY("parse_report_s"), m->seconds, false);
    bench_json_number(stdout, KEY("parse_report_mb_s"), rate, false);
    bench_json_number(stdout, KEY("peak_rss_mb"), m->peak_mb, false);
    bench_json_number(stdout, KEY("capture_mb"), m->capture_mb, false);
    bench_json_number(stdout, KEY("peak_over_capture"), m->peak_mb * 1.048576 / m->capture_mb, false);
    bench_json_number(stdout, KEY("python_json_mb_s"), py_rate, false);
    bench_json_number(stdout, KEY("simdjson_mb_s"), m->mb / m->simdjson_s, false);
    bench_json_number(stdout, KEY("simdjson_peak_rss_mb"), m->simdjson_peak_mb, false);
    bench_json_ratio(stdout, KEY("ratio_vs_python"), m->vs_python, false);
    bench_json_ratio(stdout, KEY("simdjson_over_opprof"), m->simdjson_over, false);
    bench_json_number(stdout, KEY("simdjson_parse_mb_s"), m->mb / m->simdjson_parse_s, false);
    bench_json_ratio(stdout, KEY("simdjson_parse_over_opprof"), m->simdjson_parse_over, false);
    bench_json_number(stdout, KEY("simdjson_warm_parse_mb_s"), m->mb / m->simdjson_warm_parse_s, false);
    bench_json_ratio(stdout, KEY("simdjson_warm_parse_over_opprof"), m->simdjson_warm_parse_over, false);
    bench_json_number(stdout, KEY("two_threads_parse_report_mb_s"), m->mb / m->two_seconds, false);
    bench_json_number(stdout, KEY("two_threads_peak_rss_mb"), m->two_peak_mb, false);
    bench_json_number(stdout, KEY("two_threads_read_by"), m->two_threads_read, false);
    bench_json_ratio(stdout, KEY("two_threads_over_one"), m->two_over_one, false);
    bench_json_ratio(stdout, KEY("two_threads_over_simdjson"), m->two_over_simdjson, last);
#undef KEY
}

int main(int argc, char **argv) {
    bool json = false;
    double mb = 1024;
    int copies = 12;
    const char *keep = NULL;
    int rounds = 7;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = atof(argv[++i]);
        else if (!strcmp(argv[i], "--real-copies") && i + 1 < argc)
            copies = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
            keep = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
                 atoi(argv[i + 1]) <= MAX_ROUNDS)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: bench_reader [--json] [--mb N] [--real-copies N] [--rounds N (1-64)] [--keep FILE]\n");
            return 64;
        }
    }
    /* 1. opprof's own trace: ~125 bytes an event with memory events mixed in. */
    char path[512];
    snprintf(path, sizeof path, "%s", keep ? keep : "/tmp/opprof-bench-reader.json");
    g_path = path;
    if (make_trace((size_t)(mb * 1e6 / 125.0))) {
        fprintf(stderr, "bench_reader: cannot write %s\n", path);
        return 1;
    }
    measured own = {0};
    if (measure(path, rounds, &own)) return 1;
    if (!keep) unlink(path);

    /* 2. A real Kineto trace: PyTorch 1.9's ResNet-50 training on CUDA (35 MB,
     * tests/fixtures/real-traces), its events copied until it is large. */
    measured real = {0};
    bool have_real = false;
    char src[1024], real_path[] = "/tmp/opprof-bench-real-XXXXXX", cmd[2400];
    snprintf(src, sizeof src,
             "%s/../tests/fixtures/real-traces/"
             "kineto__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
             OPPROF_BENCH_SOURCE_DIR);
    int fd = copies > 0 ? mkstemp(real_path) : -1;
    if (fd >= 0) {
        close(fd);
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/make_real_trace.py' '%s' %d '%s'", OPPROF_BENCH_SOURCE_DIR, src,
                 copies, real_path);
        have_real = system(cmd) == 0 && measure(real_path, rounds, &real) == 0;
        unlink(real_path);
    }
    if (json) {
        printf("{\n");
        print_json("", &own, !have_real);
        if (have_real) print_json("real_", &real, true);
        printf("}\n");
    } else {
        print_text("opprof's own trace", &own);
        if (have_real) print_text("a real Kineto trace (PyTorch 1.9, ResNet-50 on CUDA, copied)", &real);
    }
    return 0;
}
