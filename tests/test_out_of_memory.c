/* test_out_of_memory.c - commands run out of memory at each allocation in
 * turn (tests/fail_alloc.c preloaded: the k-th allocation of the main thread,
 * or of the others, fails): each gives its whole result, or exit 2 with a
 * message that says out of memory and nothing left behind; none dies of a
 * signal. The library's own allocations are swept in test_sizes (its
 * allocator hook); these are the commands', SQLite's and zlib's. */
#include "check.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static char g_dir[256];

static const char *dir(void) {
    if (!g_dir[0] && !make_temp_dir(g_dir, sizeof g_dir)) abort();
    return g_dir;
}

/* A trace of each kind of event the sql load writes rows for: nesting,
 * arguments (set aside as the trace is read), a counter and a flow. */
static const char TRACE[] =
    "{\"traceEvents\": [\n"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":8,\"args\":{\"name\":\"worker\"}},\n"
    "{\"ph\":\"X\",\"name\":\"outer\",\"cat\":\"app\",\"pid\":7,\"tid\":8,\"ts\":10,\"dur\":100,"
    "\"args\":{\"n\":3,\"s\":\"x\",\"r\":0.5}},\n"
    "{\"ph\":\"X\",\"name\":\"inner\",\"pid\":7,\"tid\":8,\"ts\":20,\"dur\":30,\"args\":{\"grid\":[1,2]}},\n"
    "{\"ph\":\"C\",\"name\":\"queue\",\"pid\":7,\"tid\":8,\"ts\":40,\"args\":{\"depth\":5}},\n"
    "{\"ph\":\"s\",\"name\":\"f\",\"cat\":\"flow\",\"id\":5,\"pid\":7,\"tid\":8,\"ts\":25},\n"
    "{\"ph\":\"f\",\"name\":\"f\",\"cat\":\"flow\",\"id\":5,\"pid\":7,\"tid\":9,\"ts\":60,\"bp\":\"e\"},\n"
    "{\"ph\":\"X\",\"name\":\"other\",\"cat\":\"app\",\"pid\":7,\"tid\":9,\"ts\":55,\"dur\":20}\n"
    "]}\n";

/* dir()/name, written with text; gzip-compressed as name.gz too when gz. */
static const char *write_trace(const char *name, bool gz) {
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", dir(), name);
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(TRACE, f);
    fclose(f);
    if (gz && run_commandf(NULL, "gzip -kf '%s'", path) != 0) abort();
    if (gz) strcat(path, ".gz");
    return path;
}

/* One run of `opprof ARGS` in dir() with the k-th allocation of `kind`'s
 * threads failed ("main", "other"; "none": none): "exit N\nL\n", L the files
 * left whose names begin with `left`; its stdout in *out, its stderr in
 * *err, and the allocations each kind made in dir()/counts. */
static char *run_failing(const char *kind, long k, const char *args, const char *left, char **out, char **err) {
    char *st = NULL, path[700];
    run_commandf(&st,
                 "cd '%s' && rm -f '%s'*; OPPROF_TEST_FAIL_ALLOC='%s %ld' OPPROF_TEST_ALLOC_COUNTS=counts"
                 " LD_PRELOAD='%s/../tests/libfail_alloc.so' '%s/opprof' %s >run.out 2>run.err; echo \"exit $?\";"
                 " ls | grep -c '^%s'",
                 dir(), left, kind, k, bin_dir(), bin_dir(), args, left);
    snprintf(path, sizeof path, "%s/run.out", dir());
    *out = read_text(path);
    snprintf(path, sizeof path, "%s/run.err", dir());
    *err = read_text(path);
    return st ? st : strdup("");
}

/* The allocations that `opprof ARGS` makes, by kind, when none fails; its
 * stdout, the one every run that succeeds must give. */
static char *whole_run(const char *args, const char *left, long *main_allocs, long *other_allocs) {
    char *out = NULL, *err = NULL, path[700];
    char *st = run_failing("none", 0, args, left, &out, &err);
    CHECK(!strncmp(st, "exit 0\n", 7));
    snprintf(path, sizeof path, "%s/counts", dir());
    char *counts = read_text(path);
    *main_allocs = *other_allocs = 0;
    CHECK(counts && sscanf(counts, "%ld %ld", main_allocs, other_allocs) == 2);
    free(st), free(err), free(counts);
    return out ? out : strdup("");
}

/* One run with the k-th allocation failed: the whole result (`expected`,
 * `kept` files named `left` kept), or exit 2 (sql's statement: 1) saying out
 * of memory with none left. Its stderr, for the caller to read further. */
static char *whole_or_nothing(const char *kind, long k, const char *args, const char *left, int kept,
                              const char *expected) {
    char *out = NULL, *err = NULL;
    char *st = run_failing(kind, k, args, left, &out, &err);
    int code = -1, files = -1;
    sscanf(st, "exit %d\n%d", &code, &files);
    bool whole = code == 0 && out && !strcmp(out, expected) && files == kept;
    bool nothing = (code == 2 || code == 1) && err && (strstr(err, "out of memory") || strstr(err, "no thread")) &&
                   files == 0; /* 1: sql's statement that failed */
    if (!whole && !nothing) fprintf(stderr, "%s allocation %ld failed: %s%s\n", kind, k, st, err ? err : "");
    CHECK(whole || nothing);
    free(st), free(out);
    return err ? err : strdup("");
}

/* `opprof sql --db` out of memory at each allocation of its writer's thread
 * (the rows, and the arguments' sets made as the trace is read) and at each
 * of the first 120 of its main thread (its start, the database's open).
 * Found so: an open that failed left its temporary; a row's error, met by
 * the next statement's prepare, had the statement before finalized again
 * (SIGBUS). */
TEST_CASE(sql_load_fails_whole_at_each_allocation) {
    char args[1600];
    snprintf(args, sizeof args,
             "sql --db oom.sqlite '%s' 'SELECT name, depth FROM slice ORDER BY id;"
             " SELECT key, display_value FROM args ORDER BY id; SELECT COUNT(*) FROM flow'",
             write_trace("sql.json", false));
    long main_allocs, other_allocs;
    char *expected = whole_run(args, "oom.sqlite", &main_allocs, &other_allocs);
    CHECK_CONTAINS(expected, "\"args.s\",\"x\"");
    CHECK(other_allocs > 0 && main_allocs > 120);
    for (long k = 1; k <= other_allocs; k++) free(whole_or_nothing("other", k, args, "oom.sqlite", 1, expected));
    int open_failed = 0;
    for (long k = 1; k <= 120; k++) {
        char *err = whole_or_nothing("main", k, args, "oom.sqlite", 1, expected);
        open_failed += strstr(err, "oom.sqlite: out of memory\n") != NULL;
        free(err);
    }
    CHECK(open_failed > 0); /* the open was among them */
    free(expected);
}

/* `opprof ARGS` at each allocation of its main thread: whole or nothing,
 * never a "corrupt" input; how many runs said `said`. */
static int each_main_allocation(const char *args, const char *left, int kept, const char *said) {
    long main_allocs, other_allocs;
    char *expected = whole_run(args, left, &main_allocs, &other_allocs);
    CHECK(main_allocs > 0);
    int saying = 0;
    for (long k = 1; k <= main_allocs; k++) {
        char *err = whole_or_nothing("main", k, args, left, kept, expected);
        CHECK(!strstr(err, "corrupt") && !strstr(err, "not a trace"));
        saying += strstr(err, said) != NULL;
        free(err);
    }
    free(expected);
    return saying;
}

/* `opprof sql --db kept.sqlite QUERY` on a database made of the test's trace,
 * at its allocations from the `from_end`-th last (those before open the
 * database), every one of the last 200 and one in `stride` before them. */
static void query_at_allocations(const char *query, long from_end, long stride) {
    char args[1200];
    CHECK_INT(run_commandf(NULL, "cd '%s' && rm -f kept.sqlite && '%s/opprof' sql --db kept.sqlite '%s' 'SELECT 1'"
                                 " >/dev/null 2>&1",
                           dir(), bin_dir(), write_trace("functions.json", false)),
              0);
    snprintf(args, sizeof args, "sql --db kept.sqlite \"%s\"", query);
    long main_allocs, other_allocs;
    char *expected = whole_run(args, "none", &main_allocs, &other_allocs);
    for (long k = main_allocs > from_end ? main_allocs - from_end : 1; k <= main_allocs; k++) {
        if (main_allocs - k >= 200 && k % stride) continue;
        char *err = whole_or_nothing("main", k, args, "none", 0, expected);
        CHECK(!strstr(err, "not an error") && !strstr(err, "no such"));
        free(err);
    }
    free(expected);
}

/* Perfetto's functions on a kept database: EXTRACT_ARG's lookup out of
 * memory gave NULL, its key's lookup "not an error", TRACE_START() NULL;
 * each is now the query's error. */
TEST_CASE(sql_functions_fail_whole_at_each_allocation) {
    query_at_allocations("SELECT name, EXTRACT_ARG(arg_set_id, 'args.s') AS s FROM slice ORDER BY id;"
                         " SELECT TRACE_START(), TRACE_DUR()",
                         400, 1);
}

/* PerfettoSQL's INCLUDE and macros: an INCLUDE whose savepoint failed said
 * "no such savepoint"; a macro's lookup out of memory, "no such macro"; a
 * macro's expansion that could not grow, nothing at all. */
TEST_CASE(sql_modules_and_macros_fail_whole_at_each_allocation) {
    query_at_allocations("INCLUDE PERFETTO MODULE intervals.overlap;"
                         " SELECT COUNT(*) FROM intervals_overlap_count!((SELECT ts, dur FROM slice), ts, dur)",
                         2000, 4);
}

/* The prompt's .tables and .schema, read from a file: a step out of memory
 * listed the names met before it and exited 0; it is now the command's
 * error and exit status 1, as a statement's is. Its last 250 allocations:
 * those before are the database's open, swept above. */
TEST_CASE(sql_shell_commands_fail_whole_at_each_allocation) {
    char path[600];
    snprintf(path, sizeof path, "%s/commands.txt", dir());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(".tables\n.schema thread\nSELECT COUNT(*) FROM slice;\n", f);
    fclose(f);
    CHECK_INT(run_commandf(NULL, "cd '%s' && rm -f kept.sqlite && '%s/opprof' sql --db kept.sqlite '%s' 'SELECT 1'"
                                 " >/dev/null 2>&1",
                           dir(), bin_dir(), write_trace("shell.json", false)),
              0);
    long main_allocs, other_allocs;
    char *expected = whole_run("sql --db kept.sqlite < commands.txt", "none", &main_allocs, &other_allocs);
    CHECK_CONTAINS(expected, "\nthread_track\n");
    CHECK_CONTAINS(expected, "CREATE TABLE thread(utid");
    int said = 0;
    for (long k = main_allocs > 250 ? main_allocs - 250 : 1; k <= main_allocs; k++) {
        char *err = whole_or_nothing("main", k, "sql --db kept.sqlite < commands.txt", "none", 0, expected);
        said += strstr(err, ".tables: out of memory") || strstr(err, ".schema: out of memory");
        free(err);
    }
    CHECK(said > 0); /* the commands' own steps were among them */
    free(expected);
}

/* `opprof report --json` of a gzip-compressed trace: zlib's buffers, when it
 * could not have them, were said to be "the gzip data is corrupt". */
TEST_CASE(gzip_read_fails_whole_at_each_allocation) {
    char args[800];
    snprintf(args, sizeof args, "report --json '%s'", write_trace("report.json", true));
    CHECK(each_main_allocation(args, "none", 0, "read: out of memory") > 0); /* zlib's buffers among them */
}

/* A .pftrace (opprof convert) of 30,000 ranges, each around another: more
 * than a socket's buffer of translation, so that the reader stops while the
 * translator still has slices open. Out of memory: the first bytes, read to
 * know the file's kind, then said "not a trace: expected '{'"; the reader's
 * stop, the translator's "a slice never ended". */
TEST_CASE(pftrace_read_fails_whole_at_each_allocation) {
    char json[700], args[1600];
    snprintf(json, sizeof json, "%s/nested.json", dir());
    FILE *f = fopen(json, "w");
    if (!f) abort();
    fputs("{\"traceEvents\": [\n", f);
    for (int i = 0; i < 15000; i++)
        fprintf(f,
                "{\"ph\":\"X\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":8},\n"
                "{\"ph\":\"X\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":2}%s\n",
                i * 10, i * 10 + 3, i == 14999 ? "" : ",");
    fputs("]}\n", f);
    fclose(f);
    CHECK_INT(run_commandf(NULL, "cd '%s' && '%s/opprof' convert nested.json nested.pftrace", dir(), bin_dir()), 0);
    snprintf(args, sizeof args, "report --json '%s/nested.pftrace'", dir());
    CHECK(each_main_allocation(args, "none", 0, "out of memory") > 0);
}

/* `opprof merge` of a gzip-compressed trace and a plain one: its own reader's
 * zlib out of memory was "not a trace that can be merged". No merged file is
 * left by a merge that fails. */
TEST_CASE(merge_fails_whole_at_each_allocation) {
    char args[1600], plain[700];
    snprintf(plain, sizeof plain, "%s", write_trace("plain.json", false));
    snprintf(args, sizeof args, "merge '%s' '%s' -o merged.json", write_trace("merge.json", true), plain);
    CHECK(each_main_allocation(args, "merged.json", 1, "out of memory") > 0);
}

/* `opprof diff --stat`: a side whose list of captures could not be had
 * failed with exit 2 and no word. */
TEST_CASE(diff_stat_fails_whole_at_each_allocation) {
    char args[1600], before[700];
    snprintf(before, sizeof before, "%s", write_trace("before.json", false));
    snprintf(args, sizeof args, "diff --stat '%s' '%s'", before, write_trace("after.json", true));
    CHECK(each_main_allocation(args, "none", 0, "out of memory") > 0);
}

/* The what-if replay: `report --what-if` and `diff --stat --what-if` on
 * PyTorch 1.13's trace of the guide. Its arrays out of memory left the
 * replay half done and said nothing (a replay error of -100 %); its line,
 * when glibc's memstream could not be closed, was left out (its fclose gives
 * 0 and no text); the prediction's likewise; and the replay out of memory was
 * said "BEFORE could not be replayed" alone. */
TEST_CASE(what_if_fails_whole_at_each_allocation) {
    char trace[700], args[2000];
    snprintf(trace, sizeof trace, "%s/tests/fixtures/pytorch-1.13/cpu-step-4.legacy.json", source_dir());
    snprintf(args, sizeof args, "report --what-if aten::addmm=0.5x '%s'", trace);
    CHECK(each_main_allocation(args, "none", 0, "out of memory") > 0);
    snprintf(args, sizeof args, "report --json --what-if aten::addmm=0.5x '%s'", trace);
    CHECK(each_main_allocation(args, "none", 0, "out of memory") > 0);
    snprintf(args, sizeof args, "diff --stat --what-if aten::addmm=0.5x '%s' '%s'", trace, trace);
    CHECK(each_main_allocation(args, "none", 0, "out of memory") > 0);
}

int main(int argc, char **argv) {
    int rc = check_main(argc, argv, "test_out_of_memory");
    if (g_dir[0]) remove_tree(g_dir);
    return rc;
}
