/* bench_sql.c - what `opprof sql` costs: loading a real Kineto trace (the
 * ResNet-50 fixture, its events copied N times by make_real_trace.py) into an
 * on-disk database (--db), against `opprof report`'s read of the same file
 * in the same run, rounds interleaved; and the next query on the kept
 * database, a query of every slice's argument (EXTRACT_ARG) and one of
 * every argument (GROUP BY key: the args view unfolds each set's chunk). Rates: the trace's events (slices, flows,
 * memory events, counters) and the rows written (a set's arguments are one
 * arg_chunk row) per second of the load; peak RSS of each child. Medians
 * over the rounds. The limit, measured in the same rounds: SQLite alone
 * inserting as many rows of eight columns through one prepared statement in
 * one transaction, with `opprof sql --db`'s settings, into a file of the
 * same directory: the rate no loader on this engine can pass, and the
 * events a second it allows. Then the trace loaded as 4 traces of one
 * database (hard links, as a run's ranks are files of their own): its peak
 * against one trace's, for a database over many traces.
 *
 *   build/bin/bench_sql [--json] [--copies N] [--rounds N] */
#include "bench_util.h"

#include <sqlite3.h>
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

/* SQLite alone: `rows` rows of eight columns (an id, a set, two texts of 20
 * bytes, an integer, a type) into a new file, as opprof sql --db sets it
 * up (tools/opprof/cmd_sql.c's pragmas, pages of 16 KiB). Seconds, or NAN. */
static double engine_alone(const char *path, double rows) {
    unlink(path);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    bool ok =
        sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_exec(
            db,
            "PRAGMA page_size = 16384; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
            " PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -8192; CREATE TABLE args(id INTEGER PRIMARY KEY, arg_set_id INTEGER,"
            " flat_key TEXT, key TEXT, int_value INTEGER, string_value TEXT, real_value REAL,"
            " value_type TEXT); BEGIN",
            NULL, NULL, NULL) == SQLITE_OK &&
        sqlite3_prepare_v3(db, "INSERT INTO args VALUES (?, ?, ?, ?, ?, NULL, NULL, ?)", -1, SQLITE_PREPARE_PERSISTENT,
                           &st, NULL) == SQLITE_OK;
    int64_t t0 = bench_now_ns();
    for (int64_t i = 0; ok && i < (int64_t)rows; i++) {
        char key[32];
        snprintf(key, sizeof key, "args.argument %06d", (int)(i % 13));
        sqlite3_bind_int64(st, 1, i);
        sqlite3_bind_int64(st, 2, i / 8);
        sqlite3_bind_text(st, 3, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, key, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, i * 7);
        sqlite3_bind_text(st, 6, "int", 3, SQLITE_STATIC);
        ok = sqlite3_step(st) == SQLITE_DONE && sqlite3_reset(st) == SQLITE_OK;
    }
    ok = ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_finalize(st);
    ok = sqlite3_close(db) == SQLITE_OK && ok;
    double s = (double)(bench_now_ns() - t0) / 1e9;
    unlink(path);
    return ok ? s : NAN;
}

enum { TRACES_AT_ONCE = 4 };

int main(int argc, char **argv) {
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD); /* as opprof sql runs it: no mutexes */
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
    double report_s[32], report_rss[32], load_s[32], load_rss[32], query_s[32], query_rss[32], engine_s[32], args_s[32],
        args_rss[32], scan_s[32], scan_rss[32];
    double rows_guess = NAN; /* the engine's rows: the first load's, counted once it is made */
    char engine_db[4300];
    snprintf(engine_db, sizeof engine_db, "%s/engine.sqlite", dir);
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
        snprintf(cmd, sizeof cmd,
                 "'%s' sql --db '%s' '%s' \"SELECT COUNT(*) FROM slice WHERE EXTRACT_ARG(arg_set_id, 'args.External"
                 " id') IS NOT NULL\" > /dev/null",
                 opprof, db, trace);
        ok = ok && timed(cmd, &args_s[r], &args_rss[r]);
        snprintf(cmd, sizeof cmd, "'%s' sql --db '%s' '%s' 'SELECT key, COUNT(*) FROM args GROUP BY key' > /dev/null",
                 opprof, db, trace);
        ok = ok && timed(cmd, &scan_s[r], &scan_rss[r]);
        if (ok && isnan(rows_guess))
            rows_guess =
                count_rows(opprof, db, trace,
                           "(SELECT COUNT(*) FROM slice) + (SELECT COUNT(*) FROM flow) + (SELECT COUNT(*)"
                           " FROM memory) + (SELECT COUNT(*) FROM counter) + (SELECT COUNT(*) FROM arg_chunk)");
        engine_s[r] = ok ? engine_alone(engine_db, rows_guess) : NAN;
        ok = ok && !isnan(engine_s[r]);
    }
    double events = count_rows(opprof, db, trace,
                               "(SELECT COUNT(*) FROM slice) + (SELECT COUNT(*) FROM flow) +"
                               " (SELECT COUNT(*) FROM memory) + (SELECT COUNT(*) FROM counter)");
    double rows =
        count_rows(opprof, db, trace,
                   "(SELECT COUNT(*) FROM slice) + (SELECT COUNT(*) FROM flow) + (SELECT COUNT(*) FROM memory)"
                   " + (SELECT COUNT(*) FROM counter) + (SELECT COUNT(*) FROM arg_chunk)");
    double arguments = count_rows(opprof, db, trace, "(SELECT COUNT(*) FROM args)");
    struct stat dbst;
    double db_bytes = stat(db, &dbst) == 0 ? (double)dbst.st_size : NAN;
    /* the same trace as TRACES_AT_ONCE traces of one database (hard links: each a trace of
       its own, as a run's ranks are): the peak is one trace's, not their sum's */
    double many_s = NAN, many_rss = NAN;
    if (ok) {
        unlink(db);
        int n = snprintf(cmd, sizeof cmd, "'%s' sql --db '%s' '%s'", opprof, db, trace);
        for (int k = 1; k < TRACES_AT_ONCE && ok; k++) {
            char link_path[4300];
            snprintf(link_path, sizeof link_path, "%s/rank-%d.json", dir, k);
            ok = link(trace, link_path) == 0;
            n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", link_path);
        }
        snprintf(cmd + n, sizeof cmd - (size_t)n, " 'SELECT 1' > /dev/null 2>&1");
        ok = ok && timed(cmd, &many_s, &many_rss);
    }
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
                lrss = bench_stats_of(load_rss, rounds), rrss = bench_stats_of(report_rss, rounds),
                engine = bench_stats_of(engine_s, rounds), args_query = bench_stats_of(args_s, rounds),
                scan = bench_stats_of(scan_s, rounds);
    double mb = (double)st.st_size / 1e6;
    char model[256];
    const char *isa;
    bench_host(model, sizeof model, &isa);
    if (json) {
        printf("{\n");
        bench_json_number(stdout, "trace_mb", mb, false);
        bench_json_number(stdout, "events", events, false);
        bench_json_number(stdout, "rows", rows, false);
        bench_json_number(stdout, "arguments", arguments, false);
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
        bench_json_number(stdout, "engine_rows_per_s", rows / engine.median, false);
        bench_json_number(stdout, "engine_events_per_s", events / engine.median, false);
        bench_json_number(stdout, "load_share_of_engine", engine.median / load.median, false);
        bench_json_number(stdout, "second_query_s", query.median, false);
        bench_json_number(stdout, "extract_arg_query_s", args_query.median, false);
        bench_json_number(stdout, "args_by_key_query_s", scan.median, false);
        bench_json_number(stdout, "traces_at_once", TRACES_AT_ONCE, false);
        bench_json_number(stdout, "traces_at_once_load_s", many_s, false);
        bench_json_number(stdout, "traces_at_once_peak_rss_mb", many_rss / 1e6, false);
        bench_json_number(stdout, "traces_at_once_peak_over_one", many_rss / lrss.median, true);
        printf("}\n");
    } else {
        printf("host: %s (%s); trace %.0f MB, %.0f events, %.0f rows; %d rounds\n", model, isa, mb, events, rows,
               rounds);
        printf("load into --db: %.2f s (IQR %.2f), %.0f events/s, %.1f MB/s, peak RSS %.0f MB\n", load.median, load.iqr,
               events / load.median, mb / load.median, lrss.median / 1e6);
        printf("opprof report:  %.2f s, %.0f MB/s, peak RSS %.0f MB; load over report %.1fx\n", report.median,
               mb / report.median, rrss.median / 1e6, over.median);
        printf("second query on the kept database: %.2f s; EXTRACT_ARG of every slice: %.2f s; every argument"
               " by key: %.2f s (%.0f arguments)\n",
               query.median, args_query.median, scan.median, arguments);
        printf("SQLite alone, the same rows: %.2f s, %.0f rows/s: at most %.0f events/s; the load %.0f%% of it\n",
               engine.median, rows / engine.median, events / engine.median, 100 * engine.median / load.median);
        printf("the trace as %d traces of one database: %.2f s, peak RSS %.0f MB (%.2fx one trace's)\n", TRACES_AT_ONCE,
               many_s, many_rss / 1e6, many_rss / lrss.median);
    }
    return 0;
}
