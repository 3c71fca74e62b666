/* bench_sql.c - what `opprof sql` costs: loading a real Kineto trace (the
 * ResNet-50 fixture, its events copied N times by make_real_trace.py) into an
 * on-disk database (--db), against `opprof report`'s read of the same file
 * in the same run, rounds interleaved; and the next query on the kept
 * database. Rates: the trace's events (slices, flows, memory events,
 * counters) and all rows (args too) per second of the load; peak RSS of each
 * child. Medians over the rounds.
 *
 *   build/bin/bench_sql [--json] [--copies N] [--rounds N] */
#include "bench_util.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Run cmd in a child shell: its wall time (s) and peak RSS (bytes). */
static bool timed(const char *cmd, double *seconds, double *peak) {
    int64_t t0 = bench_now_ns();
    pid_t child = fork();
    if (child == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (child < 0 || wait4(child, &st, 0, &ru) != child) return false;
    *seconds = (double)(bench_now_ns() - t0) / 1e9;
    *peak = (double)ru.ru_maxrss * 1024;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static double count_rows(const char *opprof, const char *db, const char *trace, const char *query) {
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "'%s' sql --mode list --db '%s' '%s' \"SELECT %s AS n\" | tail -1", opprof, db, trace,
             query);
    FILE *p = popen(cmd, "r");
    double n = NAN;
    if (p && fscanf(p, "%lf", &n) != 1) n = NAN;
    if (p) pclose(p);
    return n;
}

int main(int argc, char **argv) {
    bool json = false;
    int copies = 6, rounds = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--copies") && i + 1 < argc)
            copies = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_sql [--json] [--copies N] [--rounds N (1-32)]\n");
            return 64;
        }
    }
    if (copies < 1 || rounds < 1 || rounds > 32) return 64;
    char dir[] = "/tmp/bench-sql-XXXXXX", trace[4200], db[4200], opprof[4200], cmd[16384];
    if (!mkdtemp(dir)) return 1;
    snprintf(trace, sizeof trace, "%s/resnet.json", dir);
    snprintf(db, sizeof db, "%s/resnet.sqlite", dir);
    snprintf(opprof, sizeof opprof, "%s/opprof", bench_self_dir());
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 '%s/make_real_trace.py' '%s/../tests/fixtures/real-traces/"
             "kineto__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz' %d '%s'",
             OPPROF_BENCH_SOURCE_DIR, OPPROF_BENCH_SOURCE_DIR, copies, trace);
    struct stat st;
    if (system(cmd) != 0 || stat(trace, &st)) {
        fprintf(stderr, "bench_sql: cannot make %s\n", trace);
        return 1;
    }
    double report_s[32], report_rss[32], load_s[32], load_rss[32], query_s[32], query_rss[32];
    bool ok = true;
    for (int r = 0; r < rounds && ok; r++) {
        snprintf(cmd, sizeof cmd, "'%s' report '%s' > /dev/null 2>&1", opprof, trace);
        ok = timed(cmd, &report_s[r], &report_rss[r]);
        unlink(db);
        snprintf(cmd, sizeof cmd, "'%s' sql --db '%s' '%s' 'SELECT 1' > /dev/null 2>&1", opprof, db, trace);
        ok = ok && timed(cmd, &load_s[r], &load_rss[r]);
        snprintf(cmd, sizeof cmd,
                 "'%s' sql --db '%s' '%s' 'SELECT name, SUM(dur) FROM slice GROUP BY name' > /dev/null", opprof, db,
                 trace);
        ok = ok && timed(cmd, &query_s[r], &query_rss[r]);
    }
    double events = count_rows(opprof, db, trace,
                               "(SELECT COUNT(*) FROM slice) + (SELECT COUNT(*) FROM flow) +"
                               " (SELECT COUNT(*) FROM memory) + (SELECT COUNT(*) FROM counter)");
    double rows =
        count_rows(opprof, db, trace,
                   "(SELECT COUNT(*) FROM slice) + (SELECT COUNT(*) FROM flow) + (SELECT COUNT(*) FROM memory)"
                   " + (SELECT COUNT(*) FROM counter) + (SELECT COUNT(*) FROM args) +"
                   " (SELECT COUNT(*) FROM opprof_slice)");
    struct stat dbst;
    double db_bytes = stat(db, &dbst) == 0 ? (double)dbst.st_size : NAN;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_sql: cannot remove %s\n", dir);
    if (!ok) {
        fprintf(stderr, "bench_sql: a command failed\n");
        return 1;
    }
    double ratio[32];
    for (int r = 0; r < rounds; r++) ratio[r] = load_s[r] / report_s[r];
    bench_stats load = bench_stats_of(load_s, rounds), report = bench_stats_of(report_s, rounds),
                query = bench_stats_of(query_s, rounds), over = bench_stats_of(ratio, rounds),
                lrss = bench_stats_of(load_rss, rounds), rrss = bench_stats_of(report_rss, rounds);
    double mb = (double)st.st_size / 1e6;
    char model[256];
    const char *isa;
    bench_host(model, sizeof model, &isa);
    if (json) {
        printf("{\n");
        bench_json_number(stdout, "trace_mb", mb, false);
        bench_json_number(stdout, "events", events, false);
        bench_json_number(stdout, "rows", rows, false);
        bench_json_number(stdout, "database_mb", db_bytes / 1e6, false);
        bench_json_number(stdout, "load_s", load.median, false);
        bench_json_number(stdout, "load_iqr_s", load.iqr, false);
        bench_json_number(stdout, "load_events_per_s", events / load.median, false);
        bench_json_number(stdout, "load_rows_per_s", rows / load.median, false);
        bench_json_number(stdout, "load_mb_s", mb / load.median, false);
        bench_json_number(stdout, "load_peak_rss_mb", lrss.median / 1e6, false);
        bench_json_number(stdout, "report_s", report.median, false);
        bench_json_number(stdout, "report_mb_s", mb / report.median, false);
        bench_json_number(stdout, "report_peak_rss_mb", rrss.median / 1e6, false);
        bench_json_number(stdout, "load_over_report", over.median, false);
        bench_json_number(stdout, "second_query_s", query.median, true);
        printf("}\n");
    } else {
        printf("host: %s (%s); trace %.0f MB, %.0f events, %.0f rows; %d rounds\n", model, isa, mb, events, rows,
               rounds);
        printf("load into --db: %.2f s (IQR %.2f), %.0f events/s, %.1f MB/s, peak RSS %.0f MB\n", load.median, load.iqr,
               events / load.median, mb / load.median, lrss.median / 1e6);
        printf("opprof report:  %.2f s, %.0f MB/s, peak RSS %.0f MB; load over report %.1fx\n", report.median,
               mb / report.median, rrss.median / 1e6, over.median);
        printf("second query on the kept database: %.2f s\n", query.median);
    }
    return 0;
}
