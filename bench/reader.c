/*
 * bench_reader - reading big traces back: writes a synthetic trace of the
 * given size with opprof's own writer (nested operators, memory events), then
 * measures opprof_capture_read + key averages (what `opprof report` does) in
 * MB/s and peak memory, and, where /usr/bin/python3 exists, Python's
 * json.load plus a per-name sum on the same file, in the same run.
 *
 *   build/bin/bench_reader [--json] [--mb N] [--keep FILE]   (default 1024 MB)
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
    return opprof_capture_write_chrome(c, g_path);
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

static const char *PY =
    "import json, sys, time\n"
    "t = time.perf_counter()\n"
    "with open(sys.argv[1]) as f: d = json.load(f)\n"
    "sums = {}\n"
    "for e in d['traceEvents']:\n"
    "    if e.get('ph') == 'X': sums[e['name']] = sums.get(e['name'], 0) + e['dur']\n"
    "print('seconds: %f' % (time.perf_counter() - t))\n";

int main(int argc, char **argv) {
    bool json = false;
    double mb = 1024;
    const char *keep = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = atof(argv[++i]);
        else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
            keep = argv[++i];
        else {
            fprintf(stderr, "usage: bench_reader [--json] [--mb N] [--keep FILE]\n");
            return 2;
        }
    }
    char path[512];
    snprintf(path, sizeof path, "%s", keep ? keep : "/tmp/opprof-bench-reader.json");
    g_path = path;
    /* ~125 bytes an event with memory events mixed in (measured on the writer's output). */
    size_t events = (size_t)(mb * 1e6 / 125.0);
    if (make_trace(events)) {
        fprintf(stderr, "bench_reader: cannot write %s\n", path);
        return 1;
    }
    struct stat st;
    stat(path, &st);
    double file_mb = (double)st.st_size / 1e6;

    /* Parse + report, as `opprof report` does. */
    long rss_before = status_kb("VmRSS");
    FILE *clear = fopen("/proc/self/clear_refs", "w");
    if (clear) {
        fputs("5", clear);
        fclose(clear);
    }
    int64_t t0 = bench_now_ns();
    opprof_capture *c = NULL;
    opprof_read_error err;
    if (opprof_capture_read(path, NULL, &c, &err)) {
        fprintf(stderr, "bench_reader: %s: %s\n", path, err.message);
        return 1;
    }
    opprof_averages *avg;
    char *table;
    opprof_capture_averages(c, &avg);
    opprof_averages_table(avg, OPPROF_SORT_SELF_CPU_TIME, 12, &table);
    double seconds = (double)(bench_now_ns() - t0) / 1e9;
    long peak_kb = status_kb("VmHWM") - rss_before;
    size_t n_events, n_mem, n_names = opprof_capture_name_count(c);
    opprof_capture_events(c, &n_events);
    opprof_capture_memory_events(c, &n_mem);
    double capture_mb = ((double)n_events * sizeof(opprof_event) + (double)n_mem * sizeof(opprof_memory_event) +
                         (double)n_names * 64) / 1e6;
    opprof_free(table);
    opprof_averages_free(avg);
    opprof_capture_free(c);

    /* Python's json.load + a per-name sum, same file. */
    double py_s = NAN;
    if (access("/usr/bin/python3", X_OK) == 0) {
        char script[] = "/tmp/opprof-bench-reader-XXXXXX";
        int fd = mkstemp(script);
        if (fd >= 0 && write(fd, PY, strlen(PY)) == (ssize_t)strlen(PY)) {
            char cmd[1200];
            snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s 2>/dev/null", script, path);
            if (!bench_run_peer(cmd, "seconds", &py_s)) py_s = NAN;
        }
        if (fd >= 0) close(fd);
        unlink(script);
    }
    if (!keep) unlink(path);

    double rate = file_mb / seconds, py_rate = file_mb / py_s;
    if (json) {
        printf("{\n");
        bench_json_number(stdout, "trace_mb", file_mb, false);
        bench_json_number(stdout, "events", (double)(n_events + n_mem), false);
        bench_json_number(stdout, "parse_report_s", seconds, false);
        bench_json_number(stdout, "parse_report_mb_s", rate, false);
        bench_json_number(stdout, "peak_rss_mb", (double)peak_kb / 1024.0, false);
        bench_json_number(stdout, "capture_mb", capture_mb, false);
        bench_json_number(stdout, "peak_over_capture", (double)peak_kb * 1024.0 / 1e6 / capture_mb, false);
        bench_json_number(stdout, "python_json_mb_s", py_rate, false);
        bench_json_number(stdout, "ratio_vs_python", rate / py_rate, true);
        printf("}\n");
    } else {
        printf("trace: %.0f MB, %zu events (%zu memory)\n", file_mb, n_events + n_mem, n_mem);
        printf("  opprof read + report   %6.2f s  %6.0f MB/s  peak %.0f MB (capture %.0f MB: %.2fx)\n", seconds, rate,
               (double)peak_kb / 1024.0, capture_mb, (double)peak_kb * 1024.0 / 1e6 / capture_mb);
        if (!isnan(py_s))
            printf("  Python json.load + sum %6.2f s  %6.0f MB/s  -> opprof is %.1fx faster\n", py_s, py_rate,
                   rate / py_rate);
        else
            printf("  Python: /usr/bin/python3 not found\n");
    }
    return 0;
}
