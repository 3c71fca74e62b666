/* cmd_sql.c - `opprof sql`: traces as Perfetto's SQL tables on SQLite
 * (sql/sql.h), a query's result as trace_processor's CSV, a file of
 * statements, or SQLite's prompt; `--db FILE` keeps the database. */
#define _GNU_SOURCE
#include "tool.h"
#include "sql/sql.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char HELP[] =
    "Load traces into SQLite as Perfetto's trace_processor lays them out, and run a\n"
    "query: its result goes to stdout as trace_processor's shell prints CSV. Any trace\n"
    "that `opprof report` reads: opprof's JSON and .pftrace, PyTorch's (Kineto and legacy),\n"
    "ONNX Runtime's, TensorFlow's, TensorRT's table, any Chrome trace-event writer's.\n"
    "Perfetto's tables: slice (cat, slice_id), thread, process, track, thread_track,\n"
    "process_track, counter, counter_track, process_counter_track, args, flow, stats,\n"
    "perf_sample, stack_profile_callsite/frame/mapping, trace_bounds, metadata; its\n"
    "functions EXTRACT_ARG, PERCENTILE, REGEXP, TRACE_START, TRACE_END, TRACE_DUR, DEMANGLE,\n"
    "ancestor_slice, descendant_slice, directly_connected_flow, following_flow,\n"
    "preceding_flow; INCLUDE PERFETTO MODULE slices.with_context (thread_slice,\n"
    "process_slice), slices.self_dur, slices.hierarchy, slices.flat_slices (_slice_flattened),\n"
    "intervals.overlap (intervals_overlap_count!), counters.intervals (counter_leading_intervals!),\n"
    "linux.perf.samples (linux_perf_samples_summary_tree); the prelude's cast_int!, cast_double!,\n"
    "cast_string!; CREATE [OR REPLACE] PERFETTO TABLE, VIEW, INDEX,\n"
    "FUNCTION, MACRO (the session's own). opprof's: trace, key_averages, step, memory,\n"
    "opprof_slice (call site, input dims, FLOPs, bytes, off-CPU time, peak memory, samples).\n"
    "Several traces go into one database, each with its own processes and trace_id; a\n"
    "directory, each trace in it and below it (record's DIR of steps, rank-N/).\n"
    "Times in ns on each trace's clock; a rank's less its measured offset (distributedInfo), on\n"
    "rank 0's clock as opprof merge aligns them. opprof(1) has every table and column.\n"
    "QUERY, the last operand unless it is a file, holds the statements to run.\n"
    "--db FILE with no TRACE queries FILE as it is (a database that opprof made, of\n"
    "this version): its traces need not be there any more.\n";

#define SQL_OPTIONS(X)                                                                 \
    X(FILE, "-f", "FILE", "run the statements of FILE instead of QUERY")               \
    X(DB, "db", "FILE",                                                                \
      "keep the database in FILE; a later run with the same traces, none\n"            \
      "newer than FILE, queries it without reading them again (unless a\n"             \
      "statement wrote to its tables: each run starts from the traces)")               \
    X(MODE, "mode", "MODE",                                                            \
      "csv (default): trace_processor's; SQLite's shell's list (a|b|c),\n"             \
      "tabs, column, line or json")                                                    \
    X(TEXT_PROMPT, NULL, NULL,                                                         \
      "With neither QUERY nor -f: a prompt (.tables, .schema [NAME], .mode, .quit);\n" \
      "Ctrl-C stops the statement that runs, the traces still loaded.")
TOOL_OPTIONS(SQL_OPTIONS);

static const char EXAMPLES[] =
    "opprof sql run/cpu-step-5.json 'SELECT name, SUM(dur) FROM slice GROUP BY name ORDER BY 2 DESC LIMIT 5'\n"
    "opprof sql run/cpu-step-5.json 'SELECT name, calls, self_ns FROM key_averages ORDER BY self_ns DESC'  # report's rows\n"
    "opprof sql --db t.sqlite rank-*/trace.json -f q.sql  # several ranks in one database, kept\n"
    "opprof sql --db t.sqlite 'SELECT COUNT(*) FROM slice'  # that database again, its traces not named\n";

typedef struct sql_opts {
    const char *db_path, *file, *query;
    sql_mode mode;
    char **traces;
    int n_traces;
} sql_opts;

static int64_t mtime_ns(const struct stat *st) {
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* The reader's counts and the capture's own as the stats table's rows. */
static size_t trace_stats(const tool_load_counts *c, const opprof_capture *cap, sql_stat *out, size_t max) {
    size_t n = 0;
    opprof_capture_info info = opprof_capture_get_info(cap);
    size_t n_warnings = 0;
    const char *const *w = opprof_capture_warnings(cap, &n_warnings);
    struct {
        const char *name;
        int64_t value;
        const char *description;
    } rows[] = {
        {"read_problems", c->problems, c->problems ? c->first_problem : "events the reader left out (opprof check)"},
        {"events_dropped_at_record", (int64_t)info.dropped_events, "events past the recorder's budget"},
        {"samples_lost", (int64_t)info.samples_lost, "samples the kernel could not hand over"},
        {"capture_warnings", (int64_t)n_warnings, n_warnings ? w[0] : "misuse of ranges, unfinished ranges"},
    };
    for (size_t k = 0; k < sizeof rows / sizeof *rows && n < max; k++, n++) {
        snprintf(out[n].name, sizeof out[n].name, "%s", rows[k].name);
        out[n].value = rows[k].value;
        snprintf(out[n].description, sizeof out[n].description, "%s", rows[k].description);
    }
    for (int k = 0; k < c->n_unused && n < max; k++, n++) {
        snprintf(out[n].name, sizeof out[n].name, "events_not_in_tables");
        out[n].value = (int64_t)c->unused[k].count;
        snprintf(out[n].description, sizeof out[n].description, "%s", c->unused[k].kind);
    }
    return n;
}

/* A trace into db: its arguments as it is read (sql_read_args), then its capture. */
static int load_trace(sqlite3 *db, const char *path, const char *what, sql_args *args, sql_ids *ids) {
    struct stat st;
    if (stat(path, &st)) {
        fprintf(stderr, "opprof: %s: %s\n", path, strerror(errno));
        return TOOL_EXIT_UNREADABLE;
    }
    tool_load_counts counts;
    opprof_capture *cap = NULL;
    sql_read_args read = {0};
    sql_read_args_begin(&read, args, ids);
    int rc = tool_load_counted(path, &counts, &(tool_spill){sql_read_args_add, &read}, &cap);
    if (rc) {
        if (read.rc) fprintf(stderr, "opprof: %s: %s could not take it: %s\n", path, what, sqlite3_errstr(read.rc));
        sql_read_args_free(&read);
        return rc;
    }
    sql_stat stats[8 + TOOL_LOAD_UNUSED_KINDS];
    sql_trace t = {path, mtime_ns(&st), (int64_t)st.st_size, stats,
                   trace_stats(&counts, cap, stats, 8 + TOOL_LOAD_UNUSED_KINDS)};
    rc = sql_load_capture(db, cap, &t, &read, args, ids);
    if (rc == SQLITE_OK) rc = sql_writer_drain(); /* its last rows' error, if any */
    opprof_capture_free(cap);
    sql_read_args_free(&read);
    if (rc) {
        fprintf(stderr, "opprof: %s: %s could not take it: %s\n", path, what, sqlite3_errstr(rc));
        return TOOL_EXIT_UNREADABLE;
    }
    return 0;
}

/* Every trace into db, in one transaction. */
static int load_all(sqlite3 *db, const sql_opts *o) {
    const char *what = o->db_path ? o->db_path : "sql";
    if (sql_create_schema(db) || sqlite3_exec(db, "BEGIN", NULL, NULL, NULL)) {
        fprintf(stderr, "opprof: %s: the database could not be made: %s\n", what, sqlite3_errmsg(db));
        return TOOL_EXIT_UNREADABLE;
    }
    sql_ids ids = sql_ids_start();
    sql_args *args = NULL;
    int rc = 0;
    int args_rc = sql_args_open(db, &ids, &args); /* out of memory: its statements are the schema's own */
    if (args_rc) { /* its code, not the connection's message: a failed calloc sets none */
        fprintf(stderr, "opprof: %s: the database could not be made: %s\n", what, sqlite3_errstr(args_rc));
        rc = TOOL_EXIT_UNREADABLE;
    }
    if (!rc && sql_writer_start()) { /* the rows are inserted on a thread while the load goes on */
        fprintf(stderr, "opprof: %s: no thread to write the database\n", what);
        rc = TOOL_EXIT_UNREADABLE;
    }
    for (int k = 0; k < o->n_traces && !rc; k++) rc = load_trace(db, o->traces[k], what, args, &ids);
    sql_writer_stop(); /* its errors were load_trace's */
    /* the indexes, then the sets of arguments that the loads moved or dropped */
    if (!rc && (sql_create_indexes(db) || sql_bounds_insert(db, &ids) || sql_args_settle(args) ||
                sqlite3_exec(db, "COMMIT", NULL, NULL, NULL))) {
        fprintf(stderr, "opprof: %s: the database could not be written: %s\n", what, sqlite3_errmsg(db));
        rc = TOOL_EXIT_UNREADABLE;
    }
    sql_args_close(args);
    return rc;
}

/* The database's PRAGMA user_version: the version of the tables it holds. */
static int schema_version(sqlite3 *db) {
    sqlite3_stmt *st = NULL;
    int version = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return version;
}

/* --db FILE holds these traces, as they are now, and is newer than each. */
static bool db_is_current(const sql_opts *o) {
    struct stat dbst;
    if (stat(o->db_path, &dbst)) return false;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    bool current =
        sqlite3_open_v2(o->db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        schema_version(db) == SQL_SCHEMA_VERSION && /* a database of another opprof's tables is made again */
        sqlite3_prepare_v2(db, "SELECT file, mtime_ns, size_bytes FROM trace ORDER BY id", -1, &st, NULL) == SQLITE_OK;
    int k = 0;
    for (; current && sqlite3_step(st) == SQLITE_ROW; k++) {
        struct stat ts;
        const char *file = (const char *)sqlite3_column_text(st, 0);
        current = k < o->n_traces && file && !strcmp(file, o->traces[k]) && !stat(o->traces[k], &ts) &&
                  S_ISREG(ts.st_mode) && /* a pipe (-, <(zcat ...)) holds another trace each time */
                  mtime_ns(&ts) == sqlite3_column_int64(st, 1) && ts.st_size == sqlite3_column_int64(st, 2) &&
                  mtime_ns(&ts) <= mtime_ns(&dbst);
    }
    current = current && k == o->n_traces;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return current;
}

/* --db FILE may be replaced: it does not exist, or it is a database that
 * opprof made (its trace and slice tables), of any version, or an empty file
 * (mktemp's). Anything else there (a trace named by mistake, the user's own
 * database, /dev/null) is theirs, and is not lost: why not, said into why
 * (false). An SQLite file that SQLite cannot read (damaged: cut short, or
 * overwritten) may have been opprof's, and is said to be damaged. */
static bool db_may_be_replaced(const char *path, char *why, size_t size) {
    struct stat st;
    if (stat(path, &st)) return errno == ENOENT || (snprintf(why, size, "%s", strerror(errno)), false);
    if (S_ISREG(st.st_mode) && st.st_size == 0) return true;
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    int rc = S_ISREG(st.st_mode) ? sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) : SQLITE_NOTADB;
    if (rc == SQLITE_OK)
        rc =
            sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('trace', 'slice')", -1, &q, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(q);
    bool ours = rc == SQLITE_ROW && (sqlite3_column_int(q, 0) == 2 || schema_version(db) == SQL_CHANGED_VERSION);
    if (!ours && rc != SQLITE_ROW && rc != SQLITE_NOTADB && db)
        snprintf(why, size, "it is an SQLite database that SQLite cannot read (%s): damaged?", sqlite3_errmsg(db));
    else if (!ours)
        snprintf(why, size, "it is not a database that opprof made");
    sqlite3_finalize(q);
    sqlite3_close(db);
    return ours;
}

static int build_db(const sql_opts *o, const char *tmp, sqlite3 **out);

/* --db's file as it is, no trace named: a database that opprof made, of
 * this version of its tables (its traces need not be there any more). */
static int open_db_alone(const sql_opts *o, sqlite3 **out) {
    char why[512] = "";
    struct stat st;
    if (stat(o->db_path, &st) != 0)
        snprintf(why, sizeof why, "%s", strerror(errno));
    else if (!db_may_be_replaced(o->db_path, why, sizeof why))
        ; /* not opprof's: why says so */
    else if (st.st_size == 0)
        snprintf(why, sizeof why, "it is empty");
    else {
        sqlite3 *db = NULL;
        int version =
            sqlite3_open_v2(o->db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK ? schema_version(db) : -1;
        sqlite3_close(db);
        if (version == SQL_CHANGED_VERSION)
            snprintf(why, sizeof why, "a statement of an earlier run changed its tables: name its traces");
        else if (version != SQL_SCHEMA_VERSION)
            snprintf(why, sizeof why, "its tables are another opprof's (version %d, this one's %d): name its traces",
                     version, SQL_SCHEMA_VERSION);
    }
    if (why[0]) {
        fprintf(stderr, "opprof: %s: no trace named to make it, and %s\n", o->db_path, why);
        return TOOL_EXIT_UNREADABLE;
    }
    if (sqlite3_open_v2(o->db_path, out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) return 0;
    fprintf(stderr, "opprof: %s: %s\n", o->db_path, sqlite3_errmsg(*out));
    return TOOL_EXIT_UNREADABLE;
}

/* The database: in memory, or --db's file (reused while current, else made
 * as a temporary beside it and renamed: never half-built). */
static int open_db(const sql_opts *o, sqlite3 **out) {
    if (o->n_traces == 0) return open_db_alone(o, out);
    if (o->db_path && db_is_current(o)) {
        if (sqlite3_open_v2(o->db_path, out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) return 0;
        fprintf(stderr, "opprof: %s: %s\n", o->db_path, sqlite3_errmsg(*out));
        return TOOL_EXIT_UNREADABLE;
    }
    char why[512];
    if (o->db_path && !db_may_be_replaced(o->db_path, why, sizeof why)) {
        fprintf(stderr, "opprof: %s: not replaced: %s (remove it, or name another file)\n", o->db_path, why);
        return TOOL_EXIT_UNREADABLE;
    }
    char tmp[4096];
    if (o->db_path && snprintf(tmp, sizeof tmp, "%s.tmp.%ld", o->db_path, (long)getpid()) >= (int)sizeof tmp)
        return tool_usage_error("sql", "--db: the path is too long");
    if (o->db_path) tool_temporary_sweep(o->db_path, ".tmp."), tool_temporary_guard(tmp);
    int rc = build_db(o, o->db_path ? tmp : NULL, out);
    if (o->db_path) tool_temporary_unguard();
    return rc;
}

/* The database built in memory (tmp NULL) or in tmp, renamed to --db's FILE. */
static int build_db(const sql_opts *o, const char *tmp, sqlite3 **out) {
    const char *where = tmp ? tmp : ":memory:";
    /* one thread: SQLite's own mutexes are a quarter of a load's time */
    if (sqlite3_open_v2(where, out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        fprintf(stderr, "opprof: %s: %s\n", o->db_path ? o->db_path : "sql", sqlite3_errmsg(*out));
        sqlite3_close(*out); /* the file it may have made (out of memory after the open) is not left */
        *out = NULL;
        if (tmp) unlink(tmp);
        return TOOL_EXIT_UNREADABLE;
    }
    /* rows are appended and indexes made after them: a load of 64 MB of Kineto
     * took as long with 4 MiB of page cache as with 64 (and 37 MB less RSS), and
     * one of 258 MB as long with 512 KiB as with 8 MiB (10 paired whole runs:
     * 0.90-1.13, median 0.97), its peak 52.8 MiB, not 60.4.
     * Pages of 16 KiB, not 4: each page is a write of its own (49,000 of them for
     * a 194 MB Kineto trace), and its load took 0.83x the time (10 paired
     * whole runs), its database 6 % smaller, queries as fast, the peak the same. */
    sqlite3_exec(*out,
                 "PRAGMA page_size = 16384; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
                 " PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -512",
                 NULL, NULL, NULL);
    int rc = load_all(*out, o);
    if (!tmp) return rc;
    if (rc == 0 && sqlite3_close(*out) == SQLITE_OK) {
        *out = NULL;
        if (rename(tmp, o->db_path)) {
            fprintf(stderr, "opprof: %s: %s\n", o->db_path, strerror(errno));
            unlink(tmp);
            return TOOL_EXIT_UNREADABLE;
        }
        if (sqlite3_open_v2(o->db_path, out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) return 0;
        fprintf(stderr, "opprof: %s: %s\n", o->db_path, sqlite3_errmsg(*out));
        return TOOL_EXIT_UNREADABLE;
    }
    unlink(tmp);
    return rc ? rc : TOOL_EXIT_UNREADABLE;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    for (size_t got; text && (got = fread(text + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *grown = realloc(text, cap *= 2);
            if (!grown) free(text);
            text = grown;
        }
    }
    if (text) text[n] = '\0';
    if (ferror(f)) free(text), text = NULL;
    fclose(f);
    return text;
}

static int run_text(sqlite3 *db, const char *text, sql_mode mode) {
    char why[1024] = "";
    int rc = sql_run(db, text, mode, stdout, why, sizeof why);
    fflush(stdout);
    if (rc == SQLITE_OK) return 0;
    fprintf(stderr, "opprof: sql: %s\n", why);
    return TOOL_EXIT_FAILED;
}

static int parse(int argc, char **argv, sql_opts *o) {
    int c;
    while ((c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END) {
        switch (c) {
        case OPT_DB: o->db_path = optarg; break;
        case OPT_FILE: o->file = optarg; break;
        case OPT_MODE:
            if (sql_mode_by_name(optarg, &o->mode))
                return tool_usage_error("sql", "--mode is %s, not '%s'", SQL_MODE_NAMES, optarg);
            break;
        default: return TOOL_EXIT_USAGE;
        }
    }
    o->traces = argv + optind;
    o->n_traces = argc - optind;
    struct stat st;
    /* --db FILE that exists, and no trace: FILE as it is; its lone operand a query when
       it is no file and holds a blank (a word alone is a trace's name that is missing) */
    bool db_alone =
        o->db_path && stat(o->db_path, &st) == 0 &&
        (o->n_traces == 0 || (o->n_traces == 1 && stat(o->traces[0], &st) != 0 && strpbrk(o->traces[0], " \t\n")));
    if (!o->file && o->n_traces > (db_alone ? 0 : 1) && stat(o->traces[o->n_traces - 1], &st) != 0)
        o->query = o->traces[--o->n_traces];
    if (o->n_traces < 1 && !db_alone)
        return tool_usage_error("sql", "sql takes one TRACE or more, then QUERY (or --db FILE that exists alone)");
    return 0;
}

static int run(int argc, char **argv) {
    sql_opts o = {.mode = SQL_MODE_CSV};
    int rc = parse(argc, argv, &o);
    char **traces = NULL;
    size_t n_traces = 0;
    if (rc == 0) rc = tool_expand_traces((const char *const *)o.traces, (size_t)o.n_traces, &traces, &n_traces);
    if (rc == 0) o.traces = traces, o.n_traces = (int)n_traces; /* each directory its traces */
    char *text = NULL;
    if (rc == 0 && o.file && !(text = read_file(o.file))) {
        fprintf(stderr, "opprof: %s: %s\n", o.file, strerror(errno ? errno : EIO));
        rc = TOOL_EXIT_UNREADABLE;
    }
    if (rc) {
        tool_free_list(traces, n_traces);
        return rc;
    }
    /* one thread at a time calls SQLite in this process (the writer's while it
     * runs, sql/writer.c): none of its mutexes (the page cache's and the
     * allocator's were 3.6 % of a load with NOMUTEX alone) */
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
    sqlite3 *db = NULL;
    struct stat link;
    char *target = NULL; /* --db through a symbolic link: the file it leads to is made, the link stays */
    if (o.db_path && !lstat(o.db_path, &link) && S_ISLNK(link.st_mode) && (target = realpath(o.db_path, NULL)))
        o.db_path = target;
    rc = open_db(&o, &db);
    if (rc == 0 && sql_register_functions(db)) {
        fprintf(stderr, "opprof: sql: %s\n", sqlite3_errmsg(db));
        rc = TOOL_EXIT_FAILED;
    }
    if (rc == 0 && o.db_path) sql_kept_guard(db); /* the next run's database is what the traces make */
    if (rc == 0)
        rc = text      ? run_text(db, text, o.mode)
             : o.query ? run_text(db, o.query, o.mode)
                       : (sql_shell(db, o.mode, stdin, stdout) ? TOOL_EXIT_FAILED : 0);
    if (db && o.db_path && sql_kept_changed(db))
        fprintf(stderr, "opprof: %s: a statement changed its tables: the next run makes it again from the traces\n",
                o.db_path);
    free(text);
    free(target);
    tool_free_list(traces, n_traces);
    sql_release_functions();
    sqlite3_close(db);
    return rc;
}

TOOL_COMMAND(sql, "sql TRACE... [QUERY] [OPTIONS] | sql --db FILE [QUERY]",
             "ask traces anything: Perfetto's SQL tables and opprof's, on SQLite", NULL);
