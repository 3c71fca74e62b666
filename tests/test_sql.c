/* test_sql.c - `opprof sql`: trace_processor's CSV (quoting, NULL, doubles,
 * blank lines between statements), Perfetto's JSON import rules on small
 * hand-written traces with their expected CSV, Perfetto's functions and
 * modules, key_averages and each producer's slices against `opprof report
 * --json` of the same trace, arguments one row a set read back exactly (and by
 * SQLite alone from a kept database), several traces in one database, --db
 * kept and rebuilt, and every error: a query, a missing or unreadable trace, a full
 * disk under --db, while the arguments are set aside or the rows inserted
 * (never a partial database). */
#include "check.h"
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sqlite3.h>
#include <yajl/yajl_tree.h>

#define CHECK_MSG(cond, msg)                             \
    do {                                                 \
        if (!(cond)) fprintf(stderr, "  (%s)\n", (msg)); \
        CHECK(cond);                                     \
    } while (0)

static char g_dir[256];

static const char *dir(void) {
    if (!g_dir[0] && !make_temp_dir(g_dir, sizeof g_dir)) abort();
    return g_dir;
}

/* path of name in the test's directory, text written there. */
static const char *write_file(const char *name, const char *text) {
    static char path[8][512];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 512, "%s/%s", dir(), name);
    FILE *f = fopen(p, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
    return p;
}

/* stdout of `opprof sql ARGS` (stderr dropped); its exit status in *status. */
static char *sql(int *status, const char *args) {
    char *out = NULL;
    int st = run_commandf(&out, "'%s/opprof' sql %s 2>/dev/null", bin_dir(), args);
    if (status) *status = st;
    return out ? out : strdup("");
}

/* `opprof sql TRACE -f FILE` of statements that fail: exit 1, and stderr says `said`. */
static void fails_saying(const char *trace, const char *statements, const char *said) {
    char *err = NULL;
    const char *file = write_file("bad.sql", statements);
    CHECK_INT(run_commandf(&err, "'%s/opprof' sql '%s' -f '%s' 2>&1", bin_dir(), trace, file), 1);
    CHECK_CONTAINS(err, said);
    free(err);
}

/* Every writer's way of saying what happened, on one process: names, nesting
 * (X and B/E), arguments, instants of each scope, a counter (a track per numeric
 * argument, "NAME KEY" as Perfetto's JSON importer names it), an async range,
 * a flow between threads. */
static const char MAPPING[] =
    "{\"traceEvents\": [\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"tid\":0,\"args\":{\"name\":\"server\"}},\n"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":8,\"args\":{\"name\":\"worker\"}},\n"
    "{\"ph\":\"X\",\"name\":\"outer\",\"cat\":\"app\",\"pid\":7,\"tid\":8,\"ts\":10,\"dur\":100,\"args\":{\"n\":3,\"s\":\"x\",\"r\":0.5}},\n"
    "{\"ph\":\"B\",\"name\":\"inner\",\"pid\":7,\"tid\":8,\"ts\":20},\n"
    "{\"ph\":\"E\",\"pid\":7,\"tid\":8,\"ts\":50},\n"
    "{\"ph\":\"i\",\"name\":\"tick\",\"pid\":7,\"tid\":8,\"ts\":30,\"s\":\"t\"},\n"
    "{\"ph\":\"i\",\"name\":\"ptick\",\"pid\":7,\"tid\":8,\"ts\":35,\"s\":\"p\"},\n"
    "{\"ph\":\"i\",\"name\":\"gtick\",\"pid\":7,\"tid\":8,\"ts\":36,\"s\":\"g\"},\n"
    "{\"ph\":\"C\",\"name\":\"queue\",\"pid\":7,\"tid\":8,\"ts\":40,\"args\":{\"depth\":5}},\n"
    "{\"ph\":\"C\",\"name\":\"queue\",\"pid\":7,\"tid\":8,\"ts\":45,\"args\":{\"depth\":2.5,\"cap\":\"8\",\"unit\":\"jobs\"}},\n"
    "{\"ph\":\"b\",\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x1\",\"pid\":7,\"tid\":8,\"ts\":12},\n"
    "{\"ph\":\"e\",\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x1\",\"pid\":7,\"tid\":8,\"ts\":90},\n"
    "{\"ph\":\"s\",\"name\":\"f\",\"cat\":\"flow\",\"id\":5,\"pid\":7,\"tid\":8,\"ts\":25},\n"
    "{\"ph\":\"f\",\"name\":\"f\",\"cat\":\"flow\",\"id\":5,\"pid\":7,\"tid\":9,\"ts\":60,\"bp\":\"e\"},\n"
    "{\"ph\":\"X\",\"name\":\"other\",\"cat\":\"app\",\"pid\":7,\"tid\":9,\"ts\":55,\"dur\":20}\n"
    "]}\n";

TEST_CASE(csv_as_trace_processor_prints_it) {
    const char *t = write_file("mapping.json", MAPPING);
    char args[1024];
    snprintf(args, sizeof args, "'%s' \"SELECT 1 AS i, 1.5 AS d, 'a b' AS s, NULL AS n, x'00' AS b, \\\"dq\\\" AS q\"",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"i\",\"d\",\"s\",\"n\",\"b\",\"q\"\n1,1.500000,\"a b\",\"[NULL]\",\"<raw bytes>\",\"dq\"\n");
    free(out);
    snprintf(args, sizeof args, "'%s' 'SELECT name FROM slice WHERE 0'", t); /* no row: the header */
    out = sql(NULL, args);
    CHECK_STR(out, "\"name\"\n");
    free(out);
    /* a statement without columns: an empty line (not after the last); results a blank line apart */
    snprintf(args, sizeof args,
             "'%s' 'CREATE TABLE t(x); INSERT INTO t VALUES (2); SELECT x FROM t; SELECT 3 AS y; DROP TABLE t'", t);
    out = sql(NULL, args);
    CHECK_STR(out, "\n\n\"x\"\n2\n\n\"y\"\n3\n");
    free(out);
    snprintf(args, sizeof args, "--mode list '%s' 'SELECT 1 AS a, NULL AS b, 2.5 AS c'", t);
    out = sql(NULL, args);
    CHECK_STR(out, "a|b|c\n1||2.5\n");
    free(out);
}

/* SQLite's shell's other modes, as sqlite3 3.40 prints the same statements
 * (`.mode column`, `line`, `json`, `tabs`; NULL empty or null, a double as
 * SQLite makes it text), but that a result of no rows prints its header in
 * column mode and [] in json; through --mode and the prompt's .mode alike. */
static const char MODES_QUERY[] =
    "SELECT 1 AS a, 'hello' AS bb, NULL AS c, 2.5 AS d UNION ALL SELECT 1234567, 'x\"y', 3, -1; "
    "SELECT 1 AS e WHERE 0";

TEST_CASE(modes_as_sqlite_prints_them) {
    const char *t = write_file("mapping.json", MAPPING), *q = write_file("modes.sql", MODES_QUERY);
    static const struct {
        const char *mode, *want;
    } cases[] = {
        {"column", "a        bb     c  d  \n-------  -----  -  ---\n1        hello     2.5\n1234567  x\"y    3  -1 \n"
                   "\ne\n-\n"},
        {"line",
         "    a = 1\n   bb = hello\n    c = \n    d = 2.5\n\n    a = 1234567\n   bb = x\"y\n    c = 3\n    d = -1\n\n"},
        {"json", "[{\"a\":1,\"bb\":\"hello\",\"c\":null,\"d\":2.5},\n{\"a\":1234567,\"bb\":\"x\\\"y\",\"c\":3,"
                 "\"d\":-1}]\n\n[]\n"},
        {"tabs", "a\tbb\tc\td\n1\thello\t\t2.5\n1234567\tx\"y\t3\t-1\n\ne\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char args[1024], *out = NULL;
        snprintf(args, sizeof args, "--mode %s '%s' -f '%s'", cases[k].mode, t, q);
        CHECK_STR(out = sql(NULL, args), cases[k].want);
        free(out);
        CHECK_INT(run_commandf(&out, "(echo .mode %s; cat '%s') | '%s/opprof' sql '%s' 2>/dev/null", cases[k].mode, q,
                               bin_dir(), t),
                  0);
        CHECK_STR(out, cases[k].want);
        free(out);
    }
    /* json: a string's control bytes escaped, a blob's bytes as a string, no infinite number */
    char args[1024], *out = NULL;
    snprintf(args, sizeof args, "--mode json '%s' \"SELECT char(10) || 'q' AS s, x'0102' AS b, 1e999 AS inf\"", t);
    CHECK_STR(out = sql(NULL, args), "[{\"s\":\"\\nq\",\"b\":\"\\u0001\\u0002\",\"inf\":null}]\n");
    free(out);
}

/* A flow's steps ("t"), as Perfetto's JSON importer links a v1 flow: each step and the end
 * take the flow from the start or step before it (A -> B -> C -> D, over three threads); an
 * id's marks after its end start nothing until a new start; a flow whose end no slice holds
 * or follows is counted as Perfetto counts it; the same through .pftrace. */
static const char FLOW_STEPS[] =
    "{\"traceEvents\": [\n"
    "{\"ph\":\"X\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},\n"
    "{\"ph\":\"X\",\"name\":\"B\",\"pid\":1,\"tid\":2,\"ts\":20,\"dur\":10},\n"
    "{\"ph\":\"X\",\"name\":\"C\",\"pid\":1,\"tid\":3,\"ts\":40,\"dur\":10},\n"
    "{\"ph\":\"X\",\"name\":\"D\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":10},\n"
    "{\"ph\":\"X\",\"name\":\"E\",\"pid\":1,\"tid\":2,\"ts\":80,\"dur\":10},\n"
    "{\"ph\":\"s\",\"name\":\"job\",\"cat\":\"input\",\"id\":\"0x7\",\"pid\":1,\"tid\":1,\"ts\":5},\n"
    "{\"ph\":\"t\",\"name\":\"job\",\"cat\":\"input\",\"id\":\"0x7\",\"pid\":1,\"tid\":2,\"ts\":25},\n"
    "{\"ph\":\"t\",\"name\":\"job\",\"cat\":\"input\",\"id\":\"0x7\",\"pid\":1,\"tid\":3,\"ts\":45},\n"
    "{\"ph\":\"f\",\"name\":\"job\",\"cat\":\"input\",\"id\":\"0x7\",\"pid\":1,\"tid\":1,\"ts\":65,\"bp\":\"e\"},\n"
    "{\"ph\":\"t\",\"name\":\"job\",\"cat\":\"input\",\"id\":\"0x7\",\"pid\":1,\"tid\":2,\"ts\":85},\n"
    "{\"ph\":\"s\",\"name\":\"late\",\"cat\":\"input\",\"id\":\"0x9\",\"pid\":1,\"tid\":3,\"ts\":45},\n"
    "{\"ph\":\"f\",\"name\":\"late\",\"cat\":\"input\",\"id\":\"0x9\",\"pid\":1,\"tid\":3,\"ts\":95}\n"
    "]}\n";

TEST_CASE(flow_steps_link_in_turn) {
    const char *t = write_file("flow_steps.json", FLOW_STEPS);
    /* the same as opprof's own trace: its marks are kept by convert (another writer's are not) */
    char ours[sizeof FLOW_STEPS + 32], pf[600], back[600], args[1400];
    snprintf(ours, sizeof ours, "{\"opprof_version\": \"0.4\", %s", FLOW_STEPS + 1);
    const char *o = write_file("flow_steps_ours.json", ours);
    snprintf(pf, sizeof pf, "%s.pftrace", o);
    snprintf(back, sizeof back, "%s.again.json", o);
    char *out = NULL;
    CHECK_INT(run_commandf(&out, "'%s/opprof' convert '%s' '%s' 2>&1 && '%s/opprof' convert '%s' '%s' 2>&1", bin_dir(),
                           o, pf, bin_dir(), pf, back),
              0);
    free(out);
    const char *query = "SELECT o.name AS from_slice, i.name AS to_slice FROM flow f JOIN slice o ON o.id = "
                        "f.slice_out JOIN slice i ON i.id = f.slice_in ORDER BY o.ts";
    const char *traces[] = {t, pf, back};
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "'%s' '%s; SELECT name, source, value FROM stats WHERE value > 0'", traces[k],
                 query);
        out = sql(NULL, args);
        CHECK_STR(out, "\"from_slice\",\"to_slice\"\n\"A\",\"B\"\n\"B\",\"C\"\n\"C\",\"D\"\n\n"
                       "\"name\",\"source\",\"value\"\n\"flow_no_enclosing_slice\",\"analysis\",1\n");
        free(out);
    }
}

/* A mark event ("R", Chrome's navigation timing) is an instant on its thread, as Perfetto's
 * JSON importer reads "R", "I" and "i"; other writers' instants are not rows of report. */
TEST_CASE(mark_events_are_instants) {
    const char *t =
        write_file("marks.json", "{\"traceEvents\": [\n"
                                 "{\"ph\":\"X\",\"name\":\"load\",\"pid\":1,\"tid\":2,\"ts\":0,\"dur\":50},\n"
                                 "{\"ph\":\"R\",\"name\":\"firstPaint\",\"pid\":1,\"tid\":2,\"ts\":20},\n"
                                 "{\"ph\":\"I\",\"name\":\"old\",\"pid\":1,\"tid\":2,\"ts\":30}\n"
                                 "]}\n");
    char args[1024];
    snprintf(args, sizeof args, "'%s' 'SELECT name, ts, dur, depth, parent_id FROM slice ORDER BY ts'", t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"name\",\"ts\",\"dur\",\"depth\",\"parent_id\"\n\"load\",0,50000,0,\"[NULL]\"\n"
                   "\"firstPaint\",20000,0,1,0\n\"old\",30000,0,1,0\n");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report '%s' 2>&1", bin_dir(), t), 0);
    CHECK_CONTAINS(out, "2 instant events (i/I/R)");
    free(out);
}

/* opprof_slice.layer: the layer of the tensor a slice's "name" argument names (ggml's
 * nodes, as llama.cpp names them); a run's parts on other threads, which ggml describes
 * on one part only, take the run's; NULL for a tensor of no layer or no name. */
TEST_CASE(slices_know_their_layer) {
    const char *t = write_file(
        "layers.json",
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"name\":\"ggml::MUL_MAT\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10,"
        "\"args\":{\"name\":\"ffn_up-3\",\"part_of\":7}},\n"
        "{\"ph\":\"X\",\"name\":\"ggml::MUL_MAT\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":9,\"args\":{\"part_of\":7}},\n"
        "{\"ph\":\"X\",\"name\":\"ggml::MUL_MAT\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":10,"
        "\"args\":{\"name\":\"cache_k_l12 (view)\"}},\n"
        "{\"ph\":\"X\",\"name\":\"ggml::MUL_MAT\",\"pid\":1,\"tid\":1,\"ts\":40,\"dur\":10,"
        "\"args\":{\"name\":\"result_output\"}},\n"
        "{\"ph\":\"X\",\"name\":\"ggml::ADD\",\"pid\":1,\"tid\":2,\"ts\":60,\"dur\":5}\n"
        "]}\n");
    char args[1024];
    snprintf(args, sizeof args,
             "'%s' 'SELECT s.ts, o.layer FROM opprof_slice o JOIN slice s ON s.id = o.slice_id ORDER BY s.ts;"
             " SELECT o.layer, SUM(s.dur) AS ns FROM opprof_slice o JOIN slice s ON s.id = o.slice_id"
             " WHERE s.name = \"ggml::MUL_MAT\" GROUP BY o.layer ORDER BY o.layer'",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"ts\",\"layer\"\n0,3\n1000,3\n20000,12\n40000,\"[NULL]\"\n60000,\"[NULL]\"\n"
                   "\n\"layer\",\"ns\"\n\"[NULL]\",10000\n3,19000\n12,10000\n");
    free(out);
}

/* Arguments as Perfetto's JSON importer flattens them: an array's items under KEY[i]
 * (flat_key without the indices), an object's members under KEY.MEMBER, null and empty
 * containers left out, true as 1, "" kept as a string; as many as the event gives (the
 * reader kept 8, cut strings at 127 bytes and dropped arrays). */
TEST_CASE(arguments_flattened_as_perfetto_does) {
    char long_text[400];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    char trace[2048];
    snprintf(trace, sizeof trace,
             "{\"traceEvents\": [\n"
             "{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5,\"args\":{\"grid\":[4,1,2],"
             "\"obj\":{\"a\":1.5,\"b\":[true,null,\"x\"]},\"nul\":null,\"e\":[],\"s\":\"\",\"a1\":1,\"a2\":2,"
             "\"a3\":3,\"a4\":4,\"a5\":5,\"a6\":6,\"a7\":7,\"a8\":8,\"long\":\"%s\"}}\n]}\n",
             long_text);
    const char *t = write_file("flat_args.json", trace);
    char args[1024];
    snprintf(args, sizeof args,
             "'%s' 'SELECT key, flat_key, value_type, int_value, string_value, real_value FROM args"
             " WHERE key NOT LIKE \"args.a_\" AND key != \"args.long\";"
             " SELECT COUNT(*) AS n, LENGTH(EXTRACT_ARG(0, \"args.long\")) AS long_len FROM args'",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"key\",\"flat_key\",\"value_type\",\"int_value\",\"string_value\",\"real_value\"\n"
                   "\"args.grid[0]\",\"args.grid\",\"int\",4,\"[NULL]\",\"[NULL]\"\n"
                   "\"args.grid[1]\",\"args.grid\",\"int\",1,\"[NULL]\",\"[NULL]\"\n"
                   "\"args.grid[2]\",\"args.grid\",\"int\",2,\"[NULL]\",\"[NULL]\"\n"
                   "\"args.obj.a\",\"args.obj.a\",\"real\",\"[NULL]\",\"[NULL]\",1.500000\n"
                   "\"args.obj.b[0]\",\"args.obj.b\",\"int\",1,\"[NULL]\",\"[NULL]\"\n"
                   "\"args.obj.b[1]\",\"args.obj.b\",\"string\",\"[NULL]\",\"x\",\"[NULL]\"\n"
                   "\"args.s\",\"args.s\",\"string\",\"[NULL]\",\"\",\"[NULL]\"\n"
                   "\n\"n\",\"long_len\"\n16,399\n");
    free(out);
}

/* A set's arguments are one arg_chunk row (sql/args.c) that the args view
 * unfolds: every value comes back exactly (int64's ends, doubles to the last
 * bit, JSON's escapes, UTF-8), ids one after another, each key once in
 * arg_key however many traces and sets use it, and EXTRACT_ARG finds them
 * with a constant key and with a key that changes row to row. */
TEST_CASE(arguments_one_row_a_set_values_exact) {
    const char *t = write_file(
        "exact_args.json",
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5,\"args\":{\"max\":9223372036854775807,"
        "\"min\":-9223372036854775808,\"tenth\":0.1,\"one\":1.0,\"big\":1e300,\"tiny\":4.9e-324,"
        "\"r17\":1.2345678901234567e-30,"
        "\"s\":\"q\\\"b\\\\n\\nt\\tc\\u0001 \\u00e9 \\ud83d\\ude00 :1\\\":\"}},\n"
        "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,\"args\":{\"max\":1,\"s\":\"\"}}\n"
        "]}\n");
    char args[2048];
    snprintf(args, sizeof args,
             "'%s' '%s' 'SELECT COUNT(*) AS chunks FROM arg_chunk; SELECT COUNT(*) AS keys, COUNT(DISTINCT key)"
             " AS distinct_keys FROM arg_key; SELECT MIN(id) AS first, MAX(id) AS last, COUNT(*) AS n FROM args;"
             " SELECT key, value_type, int_value = 9223372036854775807 OR int_value = -9223372036854775807 - 1"
             " AS int_ends, real_value = 0.1 OR real_value = 1.0 OR real_value = 1e300 OR real_value = 4.9e-324"
             " OR real_value = 1.2345678901234567e-30"
             " AS real_exact, hex(string_value) AS text, display_value FROM args WHERE arg_set_id = 0 ORDER BY id;"
             " SELECT a.arg_set_id, a.key, EXTRACT_ARG(a.arg_set_id, a.key) IS a.int_value AS found FROM args a"
             " WHERE a.key = \"args.max\" ORDER BY a.id;"
             " SELECT EXTRACT_ARG(0, \"args.none\") AS none, EXTRACT_ARG(NULL, \"args.max\") AS no_set'",
             t, t);
    char *out = sql(NULL, args);
    CHECK_STR(out,
              "\"chunks\"\n4\n\n\"keys\",\"distinct_keys\"\n8,8\n\n\"first\",\"last\",\"n\"\n0,19,20\n\n"
              "\"key\",\"value_type\",\"int_ends\",\"real_exact\",\"text\",\"display_value\"\n"
              "\"args.max\",\"int\",1,\"[NULL]\",\"\",\"9223372036854775807\"\n"
              "\"args.min\",\"int\",1,\"[NULL]\",\"\",\"-9223372036854775808\"\n"
              "\"args.tenth\",\"real\",\"[NULL]\",1,\"\",\"0.1\"\n"
              "\"args.one\",\"real\",\"[NULL]\",1,\"\",\"1.0\"\n"
              "\"args.big\",\"real\",\"[NULL]\",1,\"\",\"1.0e+300\"\n"
              "\"args.tiny\",\"real\",\"[NULL]\",1,\"\",\"4.94065645841247e-324\"\n"
              "\"args.r17\",\"real\",\"[NULL]\",1,\"\",\"1.23456789012346e-30\"\n"
              "\"args.s\",\"string\",\"[NULL]\",\"[NULL]\",\"7122625C6E0A7409630120C3A920F09F9880203A31223A\","
              "\"q\"b\\n\nt\tc\x01 \xc3\xa9 \xf0\x9f\x98\x80 :1\":\"\n" /* as trace_processor: quotes not doubled */
              "\n\"arg_set_id\",\"key\",\"found\"\n0,\"args.max\",1\n1,\"args.max\",1\n"
              "2,\"args.max\",1\n3,\"args.max\",1\n\n\"none\",\"no_set\"\n\"[NULL]\",\"[NULL]\"\n");
    free(out);
    /* a set of more arguments than a chunk holds (SQL_ARGS_A_CHUNK, 4096): two chunks, one set */
    static char big[40000];
    snprintf(big, sizeof big, "%s",
             "{\"traceEvents\": [{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":0,"
             "\"dur\":1,\"args\":{\"v\":[0");
    for (int k = 1; k < 5000; k++) snprintf(big + strlen(big), sizeof big - strlen(big), ",%d", k);
    snprintf(big + strlen(big), sizeof big - strlen(big), "]}}]}\n");
    t = write_file("big_set.json", big);
    snprintf(args, sizeof args,
             "'%s' 'SELECT COUNT(*) AS n, MIN(id) AS first, MAX(id) AS last, SUM(int_value = id) AS in_place,"
             " COUNT(DISTINCT arg_set_id) AS sets FROM args; SELECT COUNT(*) AS chunks FROM arg_chunk;"
             " SELECT EXTRACT_ARG(0, \"args.v[4095]\") AS a, EXTRACT_ARG(0, \"args.v[4096]\") AS b,"
             " EXTRACT_ARG(0, \"args.v[4999]\") AS c'",
             t);
    out = sql(NULL, args);
    CHECK_STR(out, "\"n\",\"first\",\"last\",\"in_place\",\"sets\"\n5000,0,4999,5000,1\n\n\"chunks\"\n2\n\n"
                   "\"a\",\"b\",\"c\"\n4095,4096,4999\n");
    free(out);
}

/* An integral double is written by a path of its own (sql/args.c put_real):
 * it stays a REAL, exact to 2^53 and beyond, negative zero's sign kept, and
 * a string without escapes (put_string's plain path) beside one with them. */
TEST_CASE(integral_doubles_and_plain_strings_exact) {
    const char *t = write_file("integral_args.json",
                               "{\"traceEvents\": [{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5,"
                               "\"args\":{\"neg\":-3.0,\"nz\":-0.0,\"z\":0.0,\"p53\":9007199254740992.0,"
                               "\"m53\":-9007199254740992.0,\"p54\":18014398509481984.0,\"half\":2.5,"
                               "\"plain\":\"aten::mm\",\"quoted\":\"a\\\"b\"}}]}\n");
    char args[1024];
    snprintf(args, sizeof args,
             "'%s' 'SELECT key, value_type, real_value = -3.0 OR real_value = 9007199254740992.0 OR"
             " real_value = -9007199254740992.0 OR real_value = 18014398509481984.0 OR real_value = 2.5"
             " OR (real_value = 0 AND 1 / real_value IS NULL) AS exact, real_value, string_value"
             " FROM args ORDER BY id'",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"key\",\"value_type\",\"exact\",\"real_value\",\"string_value\"\n"
                   "\"args.neg\",\"real\",1,-3.000000,\"[NULL]\"\n"
                   "\"args.nz\",\"real\",1,-0.000000,\"[NULL]\"\n"
                   "\"args.z\",\"real\",1,0.000000,\"[NULL]\"\n"
                   "\"args.p53\",\"real\",1,9007199254740992.000000,\"[NULL]\"\n"
                   "\"args.m53\",\"real\",1,-9007199254740992.000000,\"[NULL]\"\n"
                   "\"args.p54\",\"real\",1,18014398509481984.000000,\"[NULL]\"\n"
                   "\"args.half\",\"real\",1,2.500000,\"[NULL]\"\n"
                   "\"args.plain\",\"string\",\"[NULL]\",\"[NULL]\",\"aten::mm\"\n"
                   "\"args.quoted\",\"string\",\"[NULL]\",\"[NULL]\",\"a\"b\"\n");
    free(out);
}

/* Rows of `query` on the database at path, opened by SQLite alone (none of
 * opprof's functions): columns joined by '|', NULL as "NULL", a line a row. */
static char *plain_sqlite(const char *path, const char *query) {
    static char out[4096];
    out[0] = '\0';
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, query, -1, &st, NULL) != SQLITE_OK)
        snprintf(out, sizeof out, "error: %s", sqlite3_errmsg(db));
    while (st && sqlite3_step(st) == SQLITE_ROW)
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            const char *v = (const char *)sqlite3_column_text(st, c);
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", v ? v : "NULL",
                     c + 1 < sqlite3_column_count(st) ? "|" : "\n");
        }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* The args view is SQLite's own SQL over arg_chunk and arg_key: a database
 * that --db keeps answers it in any SQLite, without opprof. */
TEST_CASE(args_of_a_kept_database_read_by_sqlite_alone) {
    const char *t =
        write_file("plain_args.json", "{\"traceEvents\": [\n"
                                      "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5,"
                                      "\"args\":{\"n\":-3,\"grid\":[4,2],\"s\":\"x y\",\"r\":0.25}},\n"
                                      "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,"
                                      "\"args\":{\"n\":7}}\n]}\n");
    char db[600], args[1400];
    snprintf(db, sizeof db, "%s/plain.sqlite", dir());
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT 1'", db, t);
    free(sql(NULL, args));
    CHECK_STR(plain_sqlite(db, "SELECT id, arg_set_id, flat_key, key, int_value, string_value, real_value,"
                               " value_type, display_value FROM args ORDER BY id"),
              "0|0|args.n|args.n|-3|NULL|NULL|int|-3\n"
              "1|0|args.grid|args.grid[0]|4|NULL|NULL|int|4\n"
              "2|0|args.grid|args.grid[1]|2|NULL|NULL|int|2\n"
              "3|0|args.s|args.s|NULL|x y|NULL|string|x y\n"
              "4|0|args.r|args.r|NULL|NULL|0.25|real|0.25\n"
              "5|1|args.n|args.n|7|NULL|NULL|int|7\n");
    CHECK_STR(plain_sqlite(db, "SELECT s.name, a.int_value FROM slice s JOIN args a USING (arg_set_id)"
                               " WHERE a.key = 'args.n' ORDER BY s.ts"),
              "a|-3\nb|7\n");
}

/* PyTorch's array arguments in a real Kineto trace: a kernel's grid and block, an
 * operator's "Input Dims" and "Input type" item by item, its ids and call stack kept
 * as arguments too (the reader also takes them for its links and frames). */
TEST_CASE(kineto_array_arguments) {
    char path[4200], args[5000];
    snprintf(path, sizeof path,
             "%s/tests/fixtures/real-traces/kineto__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
             source_dir());
    snprintf(args, sizeof args,
             "'%s' 'SELECT EXTRACT_ARG(arg_set_id, \"args.Input Dims[0][1]\") AS c, EXTRACT_ARG(arg_set_id,"
             " \"args.Input Dims[1][3]\") AS k, EXTRACT_ARG(arg_set_id, \"args.Input type[2]\") AS t2,"
             " EXTRACT_ARG(arg_set_id, \"args.External id\") AS ext FROM slice WHERE name = \"aten::conv2d\""
             " ORDER BY ts LIMIT 1;"
             " SELECT COUNT(*) AS n FROM args WHERE flat_key = \"args.grid\";"
             " SELECT COUNT(*) AS n FROM slice WHERE category = \"Kernel\"'",
             path);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"c\",\"k\",\"t2\",\"ext\"\n3,7,\"\",541\n\n\"n\"\n26316\n\n\"n\"\n8772\n");
    free(out);
}

/* Async instants ("n"), as Perfetto's JSON importer reads them: a slice of no duration on
 * the async track of its name and id, inside the range open there; async ranges of one
 * track nest. */
TEST_CASE(async_instants_and_nesting) {
    const char *t = write_file(
        "async.json", "{\"traceEvents\": [\n"
                      "{\"ph\":\"b\",\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x7\",\"pid\":1,\"tid\":1,\"ts\":10},\n"
                      "{\"ph\":\"n\",\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x7\",\"pid\":1,\"tid\":1,\"ts\":20},\n"
                      "{\"ph\":\"b\",\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x7\",\"pid\":1,\"tid\":1,\"ts\":30},\n"
                      "{\"ph\":\"e\",\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x7\",\"pid\":1,\"tid\":1,\"ts\":40},\n"
                      "{\"ph\":\"e\",\"name\":\"req\",\"cat\":\"net\",\"id\":\"0x7\",\"pid\":1,\"tid\":1,\"ts\":50},\n"
                      "{\"ph\":\"n\",\"name\":\"ping\",\"cat\":\"net\",\"id\":\"0x7\",\"pid\":1,\"tid\":1,\"ts\":60},\n"
                      "{\"ph\":\"b\",\"name\":\"never\",\"cat\":\"net\",\"id\":\"0x8\",\"pid\":1,\"tid\":1,\"ts\":60}\n"
                      "]}\n");
    char args[1024];
    snprintf(args, sizeof args,
             "'%s' 'SELECT s.ts, s.dur, t.name AS track, s.depth, p.ts AS parent_ts FROM slice s JOIN track t ON"
             " t.id = s.track_id LEFT JOIN slice p ON p.id = s.parent_id ORDER BY s.ts, s.depth'",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"ts\",\"dur\",\"track\",\"depth\",\"parent_ts\"\n10000,40000,\"req\",0,\"[NULL]\"\n"
                   "20000,0,\"req\",1,10000\n30000,10000,\"req\",1,10000\n60000,0,\"ping\",0,\"[NULL]\"\n");
    free(out);
}

TEST_CASE(json_import_rules) {
    const char *t = write_file("mapping.json", MAPPING);
    char args[1024];
    snprintf(args, sizeof args,
             "'%s' 'SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id FROM slice'", t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"id\",\"ts\",\"dur\",\"track_id\",\"category\",\"name\",\"depth\",\"parent_id\",\"arg_set_id\"\n"
                   "0,10000,100000,0,\"app\",\"outer\",0,\"[NULL]\",0\n"
                   "1,12000,78000,6,\"async\",\"req\",0,\"[NULL]\",\"[NULL]\"\n" /* two counter tracks before it */
                   "2,20000,30000,0,\"[NULL]\",\"inner\",1,0,\"[NULL]\"\n"
                   "3,30000,0,0,\"instant\",\"tick\",2,2,\"[NULL]\"\n"
                   "4,35000,0,2,\"instant\",\"ptick\",0,\"[NULL]\",\"[NULL]\"\n"
                   "5,36000,0,3,\"instant\",\"gtick\",0,\"[NULL]\",\"[NULL]\"\n"
                   "6,55000,20000,1,\"app\",\"other\",0,\"[NULL]\",\"[NULL]\"\n"); /* ids in time order over
                                                                                every track */
    free(out);
    /* slice has Perfetto's columns alone (opprof's facts of a slice are opprof_slice's, the
       same rows' other columns), and opprof_slice a row for each event, none for an
       instant or an async slice */
    snprintf(args, sizeof args, "'%s' 'SELECT * FROM slice WHERE id = 2; SELECT slice_id, kind FROM opprof_slice'", t);
    out = sql(NULL, args);
    CHECK_STR(out, "\"id\",\"ts\",\"dur\",\"track_id\",\"category\",\"name\",\"depth\",\"parent_id\",\"arg_set_id\","
                   "\"thread_ts\",\"thread_dur\",\"cat\",\"slice_id\"\n"
                   "2,20000,30000,0,\"[NULL]\",\"inner\",1,0,\"[NULL]\",\"[NULL]\",\"[NULL]\",\"[NULL]\",2\n\n"
                   "\"slice_id\",\"kind\"\n0,\"cpu_op\"\n2,\"cpu_op\"\n6,\"cpu_op\"\n");
    free(out);
    snprintf(
        args, sizeof args,
        "'%s' 'SELECT arg_set_id, key, int_value, string_value, real_value, value_type FROM args;"
        " SELECT c.ts, t.name, c.value FROM counter c JOIN process_counter_track t ON t.id = c.track_id ORDER BY t.name, c.ts;"
        " SELECT slice_out, slice_in FROM flow;"
        " SELECT t.utid, t.tid, t.name, p.pid, p.name FROM thread t JOIN process p USING (upid) WHERE t.utid > 0;"
        " SELECT id, utid FROM thread_track; SELECT id, upid FROM process_track'",
        t);
    out = sql(NULL, args);
    CHECK_STR(out,
              "\"arg_set_id\",\"key\",\"int_value\",\"string_value\",\"real_value\",\"value_type\"\n"
              "0,\"args.n\",3,\"[NULL]\",\"[NULL]\",\"int\"\n"
              "0,\"args.s\",\"[NULL]\",\"x\",\"[NULL]\",\"string\"\n"
              "0,\"args.r\",\"[NULL]\",\"[NULL]\",0.500000,\"real\"\n"
              "\n\"ts\",\"name\",\"value\"\n45000,\"queue cap\",8.000000\n40000,\"queue depth\",5.000000\n"
              "45000,\"queue depth\",2.500000\n"
              "\n\"slice_out\",\"slice_in\"\n2,6\n"
              "\n\"utid\",\"tid\",\"name\",\"pid\",\"name\"\n1,8,\"worker\",7,\"server\"\n2,9,\"[NULL]\",7,\"server\"\n"
              "\n\"id\",\"utid\"\n0,1\n1,2\n"
              "\n\"id\",\"upid\"\n2,1\n6,1\n");
    free(out);
}

/* A counter event's values as Perfetto's JSON importer takes them: a number,
 * or a string that is one, each a track "NAME KEY"; true, false, a word, an
 * object or an array left out, and counted in stats. */
TEST_CASE(counter_values_as_perfetto_takes_them) {
    const char *t =
        write_file("counters.json",
                   "{\"traceEvents\": [\n"
                   "{\"ph\":\"C\",\"name\":\"q\",\"pid\":1,\"tid\":1,\"ts\":10,\"args\":{\"depth\":2,"
                   "\"cap\":\"8\",\"unit\":\"jobs\",\"busy\":true,\"nested\":{\"a\":1},\"arr\":[1,2],\"none\":null}}\n"
                   "]}\n");
    char args[1024];
    snprintf(args, sizeof args,
             "'%s' 'SELECT t.name, c.value FROM counter c JOIN process_counter_track t ON t.id = c.track_id"
             " ORDER BY t.name; SELECT value FROM stats WHERE description LIKE \"counter values%%\"'",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"name\",\"value\"\n\"q cap\",8.000000\n\"q depth\",2.000000\n"
                   "\n\"value\"\n5\n"); /* jobs, true, nested.a, arr[0], arr[1] */
    free(out);
}

/* Slice ids in time order over every track, as trace_processor numbers them
 * (it sorts the events before importing them): a thread's later slices after
 * another thread's earlier ones; a parent before what it holds; instants and
 * async slices among them (json_import_rules). */
TEST_CASE(slice_ids_in_time_order) {
    static const char TWO_THREADS[] = "{\"traceEvents\": [\n"
                                      "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5},\n"
                                      "{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":20},\n"
                                      "{\"ph\":\"X\",\"name\":\"d\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":10},\n"
                                      "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":2,\"ts\":30,\"dur\":5}\n"
                                      "]}\n";
    const char *t = write_file("two_threads.json", TWO_THREADS);
    char args[1024];
    snprintf(args, sizeof args, "'%s' 'SELECT id, ts, name, depth, parent_id FROM slice ORDER BY id'", t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"id\",\"ts\",\"name\",\"depth\",\"parent_id\"\n"
                   "0,10000,\"a\",0,\"[NULL]\"\n1,30000,\"b\",0,\"[NULL]\"\n2,50000,\"c\",0,\"[NULL]\"\n"
                   "3,50000,\"d\",1,2\n");
    free(out);
    /* opprof's own tables name the same slices */
    snprintf(args, sizeof args,
             "'%s' 'SELECT s.name FROM opprof_slice o JOIN slice s ON s.id = o.slice_id ORDER BY o.slice_id'", t);
    out = sql(NULL, args);
    CHECK_STR(out, "\"name\"\n\"a\"\n\"b\"\n\"c\"\n\"d\"\n");
    free(out);
}

/* A complete event's thread clock ("tts", "tdur", as Chrome writes them):
 * thread_ts and thread_dur in ns, as Perfetto's JSON importer maps them, and
 * no argument of the slice; a slice without them has NULL; a "tts" that is
 * no number is left out; a B/E pair's from the B's "tts" to the E's. */
TEST_CASE(thread_time_of_complete_events) {
    static const char THREAD_TIME[] =
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,\"tts\":7,\"tdur\":4},\n"
        "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5},\n"
        "{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":5,\"tts\":\"x\",\"tdur\":1.5},\n"
        "{\"ph\":\"B\",\"name\":\"d\",\"pid\":1,\"tid\":1,\"ts\":40,\"tts\":20},\n"
        "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":48,\"tts\":26}\n"
        "]}\n";
    const char *t = write_file("thread_time.json", THREAD_TIME);
    char args[1024];
    snprintf(args, sizeof args,
             "'%s' 'SELECT name, thread_ts, thread_dur FROM slice ORDER BY id; SELECT COUNT(*) FROM args'", t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"name\",\"thread_ts\",\"thread_dur\"\n\"a\",7000,4000\n\"b\",\"[NULL]\",\"[NULL]\"\n"
                   "\"c\",\"[NULL]\",1500\n\"d\",20000,6000\n\n\"COUNT(*)\"\n0\n");
    free(out);
    /* the report of the same trace is as without them */
    out = NULL;
    CHECK_INT(run_commandf(&out, "'%s/opprof' check '%s'", bin_dir(), t), 0);
    CHECK_CONTAINS(out, "0 problem(s)");
    free(out);
}

/* `opprof convert from to`, which must succeed. */
static void convert(const char *from, const char *to) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out, "'%s/opprof' convert '%s' '%s'", bin_dir(), from, to), 0);
    free(out);
}

/* A real Kineto trace (MTIA inference) with a host name, into `path`. */
static void mtia_trace(char *path, size_t size) {
    snprintf(path, size, "%s/tests/fixtures/real-traces/hta__mtia_inference_trace__mtia_inference_rank_0.json.gz",
             source_dir());
}

/* The host a trace says it ran on (Kineto's "host_name"): trace.host, kept
 * through a .pftrace and a JSON written again; NULL for a trace without it. */
TEST_CASE(host_of_each_trace) {
    char kineto[700], pf[700], json[700], args[3000];
    mtia_trace(kineto, sizeof kineto);
    snprintf(pf, sizeof pf, "%s/host.pftrace", dir());
    snprintf(json, sizeof json, "%s/host.json", dir());
    convert(kineto, pf);
    convert(pf, json);
    char *out = NULL;
    const char *plain = write_file("no_host.json", MAPPING);
    snprintf(args, sizeof args, "'%s' '%s' '%s' '%s' 'SELECT id, host FROM trace ORDER BY id'", kineto, pf, json,
             plain);
    out = sql(NULL, args);
    CHECK_STR(out,
              "\"id\",\"host\"\n0,\"twshared38393.01.cco6.facebook.com\"\n1,\"twshared38393.01.cco6.facebook.com\"\n"
              "2,\"twshared38393.01.cco6.facebook.com\"\n3,\"[NULL]\"\n");
    free(out);
}

/* Perfetto's metadata table: each trace's trace_size_bytes (the file's
 * size, a gzip file's compressed) and trace_type ("proto" for a .pftrace,
 * gzip or not; "json" otherwise), a trace's pair after the one before, and
 * the query Perfetto's own metric runs on it. */
TEST_CASE(metadata_of_each_trace) {
    char kineto[700], pf[700], pfgz[700], args[3000];
    mtia_trace(kineto, sizeof kineto);
    snprintf(pf, sizeof pf, "%s/meta.pftrace", dir());
    snprintf(pfgz, sizeof pfgz, "%s/meta.pftrace.gz", dir());
    convert(kineto, pf);
    convert(kineto, pfgz);
    char *out = NULL;
    struct stat a, b, c;
    CHECK(stat(kineto, &a) == 0 && stat(pf, &b) == 0 && stat(pfgz, &c) == 0);
    CHECK(c.st_size < b.st_size); /* the .gz's own size is the one given, not what it holds */
    snprintf(args, sizeof args,
             "'%s' '%s' '%s' 'SELECT * FROM metadata;"
             " SELECT int_value FROM metadata WHERE name = \"trace_size_bytes\" AND trace_id = 1'",
             kineto, pf, pfgz);
    out = sql(NULL, args);
    char expected[1024];
    snprintf(expected, sizeof expected,
             "\"id\",\"name\",\"key_type\",\"int_value\",\"str_value\",\"trace_id\"\n"
             "0,\"trace_size_bytes\",\"single\",%lld,\"[NULL]\",0\n"
             "1,\"trace_type\",\"single\",\"[NULL]\",\"json\",0\n"
             "2,\"trace_size_bytes\",\"single\",%lld,\"[NULL]\",1\n"
             "3,\"trace_type\",\"single\",\"[NULL]\",\"proto\",1\n"
             "4,\"trace_size_bytes\",\"single\",%lld,\"[NULL]\",2\n"
             "5,\"trace_type\",\"single\",\"[NULL]\",\"proto\",2\n"
             "\n\"int_value\"\n%lld\n",
             (long long)a.st_size, (long long)b.st_size, (long long)c.st_size, (long long)b.st_size);
    CHECK_STR(out, expected);
    free(out);
}

/* A B/E pair's arguments: the B's and the E's on the slice they make, as
 * Perfetto's JSON importer merges them (they were not read). */
TEST_CASE(begin_end_arguments_merged) {
    static const char BEGIN_END[] = "{\"traceEvents\": [\n"
                                    "{\"ph\":\"B\",\"name\":\"d\",\"pid\":1,\"tid\":1,\"ts\":40,\"args\":{\"a\":1}},\n"
                                    "{\"ph\":\"B\",\"name\":\"e\",\"pid\":1,\"tid\":1,\"ts\":41},\n"
                                    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":42},\n"
                                    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":48,\"args\":{\"b\":\"x\"}}\n"
                                    "]}\n";
    const char *t = write_file("begin_end.json", BEGIN_END);
    char args[1024];
    snprintf(args, sizeof args,
             "'%s' 'SELECT s.name, a.key, a.int_value, a.string_value FROM slice s JOIN args a USING(arg_set_id) "
             "ORDER BY s.name, a.key'",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"name\",\"key\",\"int_value\",\"string_value\"\n\"d\",\"args.a\",1,\"[NULL]\"\n"
                   "\"d\",\"args.b\",\"[NULL]\",\"x\"\n");
    free(out);
}

TEST_CASE(perfetto_functions_and_modules) {
    const char *t = write_file("mapping.json", MAPPING);
    char args[2048];
    snprintf(
        args, sizeof args,
        "'%s' 'SELECT id FROM ancestor_slice(3); SELECT id FROM descendant_slice(0);"
        " SELECT EXTRACT_ARG(arg_set_id, \"args.s\") AS s, EXTRACT_ARG(arg_set_id, \"args.n\") AS n FROM slice WHERE id = 0;"
        " SELECT slice_out, slice_in FROM following_flow(0); SELECT slice_out FROM preceding_flow(6);"
        " SELECT COUNT(*) AS n FROM directly_connected_flow(2);"
        " INCLUDE PERFETTO MODULE slices.with_context;"
        " SELECT name, thread_name, tid, pid FROM thread_slice WHERE depth = 1;"
        " SELECT name, pid FROM process_slice ORDER BY id;"
        " INCLUDE PERFETTO MODULE slices.self_dur;"
        " SELECT id, self_dur FROM slice_self_dur WHERE id IN (0, 2);"
        " SELECT * FROM trace_bounds; SELECT TRACE_START() AS s, TRACE_END() AS e, TRACE_DUR() AS d'",
        t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"id\"\n0\n2\n" /* tick's ancestors, outermost first */
                   "\n\"id\"\n2\n3\n"
                   "\n\"s\",\"n\"\n\"x\",3\n"
                   "\n\"slice_out\",\"slice_in\"\n2,6\n" /* reached through outer's child */
                   "\n\"slice_out\"\n2\n"
                   "\n\"n\"\n1\n"
                   "\n" /* INCLUDE: a statement without columns */
                   "\n\"name\",\"thread_name\",\"tid\",\"pid\"\n\"inner\",\"worker\",8,7\n"
                   "\n\"name\",\"pid\"\n\"req\",7\n\"ptick\",7\n"
                   "\n"
                   "\n\"id\",\"self_dur\"\n0,70000\n2,30000\n"
                   /* from the first event (outer, at 10 us) to the last end (outer's, 110 us) */
                   "\n\"start_ts\",\"end_ts\"\n10000,110000\n"
                   "\n\"s\",\"e\",\"d\"\n10000,110000,100000\n");
    free(out);
    /* trace_processor's bounds of an instant alone (one past it) and of nothing (0, 0); DEMANGLE */
    const char *instant = write_file("instant.json", "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"x\", \"pid\": 1,"
                                                     " \"tid\": 1, \"ts\": 5, \"s\": \"t\"}]}");
    snprintf(args, sizeof args,
             "'%s' 'SELECT * FROM trace_bounds; SELECT DEMANGLE(\"_ZN11AccumulatorIdE3addEd\") AS d,"
             " DEMANGLE(name) AS n FROM slice'",
             instant);
    out = sql(NULL, args);
    CHECK_STR(out,
              "\"start_ts\",\"end_ts\"\n5000,5001\n\n\"d\",\"n\"\n\"Accumulator<double>::add(double)\",\"[NULL]\"\n");
    free(out);
    snprintf(args, sizeof args, "'%s' 'SELECT * FROM trace_bounds'", write_file("empty.json", "{\"traceEvents\": []}"));
    out = sql(NULL, args);
    CHECK_STR(out, "\"start_ts\",\"end_ts\"\n0,0\n");
    free(out);
    int st = 0;
    snprintf(args, sizeof args, "'%s' 'INCLUDE PERFETTO MODULE android.startup'", t);
    char *err = NULL;
    st = run_commandf(&err, "'%s/opprof' sql %s", bin_dir(), args);
    CHECK_INT(st, 1);
    CHECK_CONTAINS(err, "android.startup: no such module here");
    free(err);
    snprintf(args, sizeof args, "'%s' 'SELECT * FROM ancestor_slice'", t);
    st = run_commandf(&err, "'%s/opprof' sql %s", bin_dir(), args);
    CHECK_INT(st, 1);
    CHECK_CONTAINS(err, "ancestor_slice needs its argument");
    free(err);
}

/* slices.flat_slices, intervals.overlap and slices.hierarchy, each worked
 * by hand on a trace of two threads: A (0-100 us) holds C (10-30, holding
 * E 12-17), D (40-70) and F (70-100); G (50-150) is the other thread's; Z
 * (200) takes no time. Flattened, each instant is the deepest slice's and
 * no piece is empty; the overlap counts every change at a ts at once (D's
 * end and F's start at 70: 3 stays 3). Included twice, a module is the same. */
TEST_CASE(perfetto_modules_flat_overlap_hierarchy) {
    const char *t =
        write_file("flat.json", "{\"traceEvents\":[\n"
                                "{\"ph\":\"X\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},\n"
                                "{\"ph\":\"X\",\"name\":\"C\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":20},\n"
                                "{\"ph\":\"X\",\"name\":\"E\",\"pid\":1,\"tid\":1,\"ts\":12,\"dur\":5},\n"
                                "{\"ph\":\"X\",\"name\":\"D\",\"pid\":1,\"tid\":1,\"ts\":40,\"dur\":30},\n"
                                "{\"ph\":\"X\",\"name\":\"F\",\"pid\":1,\"tid\":1,\"ts\":70,\"dur\":30},\n"
                                "{\"ph\":\"X\",\"name\":\"G\",\"pid\":1,\"tid\":2,\"ts\":50,\"dur\":100},\n"
                                "{\"ph\":\"X\",\"name\":\"Z\",\"pid\":1,\"tid\":2,\"ts\":200,\"dur\":0}]}\n");
    char args[2048];
    snprintf(args, sizeof args,
             "'%s' 'INCLUDE PERFETTO MODULE slices.flat_slices; INCLUDE PERFETTO MODULE slices.flat_slices;"
             " SELECT slice_id, ts, dur, depth, name, tid FROM _slice_flattened;"
             " INCLUDE PERFETTO MODULE intervals.overlap;"
             " SELECT * FROM intervals_overlap_count!(slice, ts, dur);"
             " SELECT * FROM intervals_overlap_count!((SELECT * FROM slice WHERE depth = 0), ts, dur);"
             " INCLUDE PERFETTO MODULE slices.hierarchy;"
             " SELECT id, name, depth FROM _slice_ancestor_and_self(2);"
             " SELECT id, name FROM _slice_descendant_and_self(1)'",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\n\n\"slice_id\",\"ts\",\"dur\",\"depth\",\"name\",\"tid\"\n"
                   "0,0,10000,0,\"A\",1\n1,10000,2000,1,\"C\",1\n2,12000,5000,2,\"E\",1\n1,17000,13000,1,\"C\",1\n"
                   "0,30000,10000,0,\"A\",1\n3,40000,30000,1,\"D\",1\n4,50000,100000,0,\"G\",2\n"
                   "5,70000,30000,1,\"F\",1\n"
                   "\n\n\"ts\",\"value\"\n0,1\n10000,2\n12000,3\n17000,2\n30000,1\n40000,2\n50000,3\n70000,3\n"
                   "100000,1\n150000,0\n200000,0\n"
                   "\n\"ts\",\"value\"\n0,1\n50000,2\n100000,1\n150000,0\n200000,0\n"
                   "\n\n\"id\",\"name\",\"depth\"\n2,\"E\",2\n0,\"A\",0\n1,\"C\",1\n"
                   "\n\"id\",\"name\"\n1,\"C\"\n2,\"E\"\n");
    free(out);
    /* on real traces: each thread slice's flattened pieces add up to its self time (slices.self_dur) */
    const char *real[] = {"real-traces/hta__cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
                          "pytorch-1.13/cpu-step-4.legacy.json"};
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args,
                 "'%s/tests/fixtures/%s' 'INCLUDE PERFETTO MODULE slices.flat_slices; INCLUDE PERFETTO MODULE"
                 " slices.self_dur; WITH f AS (SELECT slice_id AS id, SUM(dur) AS flat FROM _slice_flattened"
                 " GROUP BY slice_id) SELECT COUNT(*) > 10 AS some, SUM(COALESCE(f.flat, 0) != d.self_dur) AS differ"
                 " FROM thread_slice s JOIN slice_self_dur d USING (id) LEFT JOIN f USING (id)'",
                 source_dir(), real[k]);
        out = sql(NULL, args);
        CHECK_STR(out, "\n\n\"some\",\"differ\"\n1,0\n");
        free(out);
    }
}

/* counters.intervals as trace_processor's C++ computes it: a value equal to
 * the one before it on its track left out, each kept one's interval to the
 * next kept one's ts (the last to the trace's end), next_value and
 * delta_value (to the one before) NULL at either end; a trace's counter with
 * two tracks (Perfetto's doc example). The prelude's casts with no INCLUDE. A
 * module that fails half-way leaves nothing of its own behind. */
TEST_CASE(counter_intervals_and_prelude_casts) {
    const char *t = write_file(
        "counters.json", "{\"traceEvents\":[\n"
                         "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"tid\":1,\"ts\":0,\"args\":{\"a\":10,\"b\":10}},\n"
                         "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"tid\":1,\"ts\":10,\"args\":{\"a\":10,\"b\":20}},\n"
                         "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"tid\":1,\"ts\":20,\"args\":{\"a\":30}},\n"
                         "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"tid\":1,\"ts\":25,\"args\":{\"a\":30}},\n"
                         "{\"ph\":\"X\",\"name\":\"step\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":40}]}\n");
    char args[2048];
    snprintf(args, sizeof args,
             "'%s' 'INCLUDE PERFETTO MODULE counters.intervals; SELECT c.*, t.name FROM"
             " counter_leading_intervals!(counter) c JOIN counter_track t ON t.id = c.track_id ORDER BY t.name, c.ts;"
             " SELECT ts, dur, cast_int!(value) AS v, cast_string!(cast_int!(value)) AS s, cast_double!(\"2.5\") AS d"
             " FROM counter_leading_intervals!((SELECT c.* FROM counter c JOIN counter_track t ON t.id = c.track_id"
             " AND t.name = \"mem b\")) AS cli'",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\n\"id\",\"ts\",\"dur\",\"track_id\",\"value\",\"next_value\",\"delta_value\",\"name\"\n"
                   "0,0,20000,1,10.000000,30.000000,\"[NULL]\",\"mem a\"\n"
                   "4,20000,20000,1,30.000000,\"[NULL]\",20.000000,\"mem a\"\n"
                   "1,0,10000,2,10.000000,20.000000,\"[NULL]\",\"mem b\"\n"
                   "3,10000,30000,2,20.000000,\"[NULL]\",10.000000,\"mem b\"\n"
                   "\n\"ts\",\"dur\",\"v\",\"s\",\"d\"\n0,10000,10,\"10\",2.500000\n10000,30000,20,\"20\",2.500000\n");
    free(out);
    /* slices.flat_slices fails at its index (a table of that name): its views and table go with it */
    const char *q =
        write_file("half.sql", "CREATE TEMP TABLE _slice_flattened_ts_idx(x);\n"
                               "INCLUDE PERFETTO MODULE slices.flat_slices;\n"
                               "SELECT name FROM sqlite_temp_master WHERE type != \"index\" ORDER BY name;\n");
    char *err = NULL;
    CHECK_INT(run_commandf(&err, "'%s/opprof' sql '%s' < '%s' 2>&1", bin_dir(), t, q), 1);
    CHECK_CONTAINS(err, "INCLUDE PERFETTO MODULE slices.flat_slices: line 4: there is already a table named");
    CHECK_CONTAINS(err, "\"name\"\n\"_slice_flattened_ts_idx\"\n");
    CHECK(err && !strstr(err, "thread_slice") && !strstr(err, "\"_slice_flattened\""));
    free(err);
}

/* ---- against `opprof report --json`: each producer ---------------------------- */

static const char TF_TIMELINE[] =
    "{\"traceEvents\": [\n"
    "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"/job:localhost/replica:0/task:0/device:CPU:0 Compute\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 0, \"tid\": 0, \"ts\": 100, \"dur\": 10, \"args\": {\"name\": \"dense/MatMul\", \"op\": \"MatMul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"Mul\", \"pid\": 0, \"tid\": 0, \"ts\": 170, \"dur\": 20, \"args\": {\"name\": \"scale/Mul\", \"op\": \"Mul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 0, \"tid\": 0, \"ts\": 300, \"dur\": 12, \"args\": {\"name\": \"dense/MatMul\", \"op\": \"MatMul\"}}\n"
    "]}\n";
static const char TRT_PROFILE[] =
    "[\n  { \"count\" : 100 }\n"
    ", { \"name\" : \"conv1 + relu1\", \"timeMs\" : 12.5, \"averageMs\" : 0.125, \"medianMs\" : 0.124, \"percentage\" : 62.5 }\n"
    ", { \"name\" : \"fc1\", \"timeMs\" : 7.5, \"averageMs\" : 0.075, \"medianMs\" : 0.075, \"percentage\" : 37.5 }\n]\n";

/* key_averages' rows, as `--mode list` prints them: name|device|calls|self|total|self device|total device|slices' sum. */
typedef struct sql_row_text {
    char *name;
    long long device, calls, self, total, self_device, total_device, slices;
    bool has_slices;
} sql_row_text;

static size_t split_rows(char *text, sql_row_text *rows, size_t max) {
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        char *f[8] = {0};
        int k = 0;
        for (char *p = line; k < 8 && p; k++) f[k] = strsep(&p, "|");
        if (k < 8 || !f[7]) continue;
        rows[n++] = (sql_row_text){f[0],        atoll(f[1]), atoll(f[2]), atoll(f[3]),    atoll(f[4]),
                                   atoll(f[5]), atoll(f[6]), atoll(f[7]), f[7][0] != '\0'};
    }
    return n;
}

static double field(yajl_val row, const char *key) {
    const char *path[] = {key, NULL};
    yajl_val v = yajl_tree_get(row, path, yajl_t_any);
    return v && YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : 0;
}

/* Each of report's rows is one of key_averages' (name and device alike;
 * calls, self and total, CPU and device, as report says them in us), and
 * each CPU name's slices add up to its total. Returns the rows compared. */
static int compare_with_report(const char *trace) {
    char *json = NULL, args[2048];
    if (run_commandf(&json, "'%s/opprof' report --json --row-limit -1 '%s' 2>/dev/null", bin_dir(), trace)) {
        fprintf(stderr, "report failed on %s\n", trace);
        free(json);
        return -1;
    }
    snprintf(
        args, sizeof args,
        "--mode list '%s' 'SELECT k.name, k.device, k.calls, k.self_ns, k.total_ns, k.self_device_ns, k.total_device_ns,"
        " (SELECT SUM(s.dur) FROM slice s JOIN opprof_slice o ON o.slice_id = s.id"
        "  WHERE s.name = k.name AND o.kind IN (\"cpu_op\", \"user_annotation\")) FROM key_averages k'",
        trace);
    char *text = sql(NULL, args);
    static sql_row_text rows[20000];
    size_t n = split_rows(text, rows, sizeof rows / sizeof *rows);
    char err[256];
    yajl_val doc = yajl_tree_parse(json, err, sizeof err);
    const char *rows_path[] = {"rows", NULL}, *name_path[] = {"name", NULL}, *device_path[] = {"device", NULL};
    yajl_val arr = doc ? yajl_tree_get(doc, rows_path, yajl_t_array) : NULL;
    int compared = arr ? 0 : -1;
    for (size_t i = 0; arr && i < arr->u.array.len; i++) {
        yajl_val r = arr->u.array.values[i];
        const char *name = YAJL_GET_STRING(yajl_tree_get(r, name_path, yajl_t_string));
        bool device = YAJL_IS_TRUE(yajl_tree_get(r, device_path, yajl_t_any));
        const sql_row_text *k = NULL;
        for (size_t j = 0; name && j < n && !k; j++)
            if (!strcmp(rows[j].name, name) && rows[j].device == device) k = &rows[j];
        char what[256];
        snprintf(what, sizeof what, "%s: %.60s%s", trace, name ? name : "?", device ? " (device)" : "");
        CHECK_MSG(k != NULL, what);
        if (!k) continue;
        CHECK_MSG(k->calls == (long long)field(r, "calls"), what);
        CHECK_MSG(fabs(k->self / 1000.0 - field(r, "self_cpu_us")) < 0.01, what);
        CHECK_MSG(fabs(k->total / 1000.0 - field(r, "total_cpu_us")) < 0.01, what);
        CHECK_MSG(fabs(k->self_device / 1000.0 - field(r, "self_device_us")) < 0.01, what);
        CHECK_MSG(fabs(k->total_device / 1000.0 - field(r, "total_device_us")) < 0.01, what);
        if (!device && k->has_slices && strncmp(name, "ProfilerStep", 12))
            CHECK_MSG(k->slices == k->total, what); /* the slices of the name add up to its total */
        compared++;
    }
    yajl_tree_free(doc);
    free(json);
    free(text);
    return compared;
}

TEST_CASE(key_averages_are_reports_rows_for_each_producer) {
    char own[600], cmd[2400];
    snprintf(own, sizeof own, "%s/own", dir());
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --steps 3 '%s' > /dev/null 2>&1", bin_dir(), own);
    CHECK_INT(system(cmd), 0);
    char json[700], pftrace[700];
    snprintf(json, sizeof json, "%s/cpu-step-3.json", own);
    snprintf(pftrace, sizeof pftrace, "%s/cpu-step-3.pftrace", own);
    snprintf(cmd, sizeof cmd, "'%s/opprof' convert '%s' '%s' > /dev/null 2>&1", bin_dir(), json, pftrace);
    CHECK_INT(system(cmd), 0);
    char src[8][700];
    const char *fixtures[] = {"pytorch-1.13/cpu-step-4.legacy.json",
                              "real-traces/hta__cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
                              "real-traces/hta__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
                              "onnxruntime-1.30/mlp.json", "real-traces/catapult__multiple_input_latency.json.gz"};
    for (int k = 0; k < 5; k++) snprintf(src[k], sizeof src[k], "%s/tests/fixtures/%s", source_dir(), fixtures[k]);
    const char *traces[] = {json,
                            pftrace,
                            src[0],
                            src[1],
                            src[2],
                            src[3],
                            src[4],
                            write_file("timeline.json", TF_TIMELINE),
                            write_file("trt.json", TRT_PROFILE)};
    for (size_t k = 0; k < sizeof traces / sizeof *traces; k++) {
        int n = compare_with_report(traces[k]);
        if (n <= 0) fprintf(stderr, "no row compared in %s\n", traces[k]);
        CHECK(n > 0);
    }
}

/* ---- several traces; --db ------------------------------------------------------- */

TEST_CASE(traces_kept_apart_in_one_database) {
    const char *a = write_file("a.json", MAPPING), *b = write_file("b.json", TF_TIMELINE);
    char args[1024];
    snprintf(args, sizeof args,
             "'%s' '%s' 'SELECT id, file = \"%s\" AS same, producer FROM trace;"
             " SELECT upid, pid, trace_id FROM process WHERE upid > 0;"
             " SELECT p.trace_id, COUNT(*) FROM slice s JOIN thread_track tt ON tt.id = s.track_id"
             " JOIN thread t USING (utid) JOIN process p USING (upid) GROUP BY p.trace_id'",
             a, b, b);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"id\",\"same\",\"producer\"\n"
                   "0,0,\"another trace-event writer\"\n1,1,\"TensorFlow (timeline)\"\n"
                   "\n\"upid\",\"pid\",\"trace_id\"\n1,7,0\n2,0,1\n"
                   "\n\"trace_id\",\"COUNT(*)\"\n0,4\n1,5\n"); /* TensorFlow's runs are steps */
    free(out);
}

static ino_t inode_of(const char *path) {
    struct stat st;
    return stat(path, &st) ? 0 : st.st_ino;
}

/* --db FILE with no trace: the database as it is, its traces gone (copied to another
 * machine, or removed), Perfetto's functions on it; what cannot be queried so is said:
 * no such file, a file opprof did not make, an empty one, another opprof's tables, and
 * a lone word, which is a trace that is missing, not a query. */
TEST_CASE(db_queried_alone_once_made) {
    const char *t = write_file("alone.json", MAPPING);
    char args[1200], db[600];
    snprintf(db, sizeof db, "%s/alone.sqlite", dir());
    unlink(db);
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT 1'", db, t);
    free(sql(NULL, args));
    CHECK(unlink(t) == 0);
    int st = -1;
    snprintf(args, sizeof args,
             "--db '%s' 'SELECT COUNT(*) AS n FROM slice; SELECT name FROM ancestor_slice(3) ORDER BY depth'", db);
    char *out = sql(&st, args);
    CHECK_INT(st, 0);
    CHECK_STR(out, "\"n\"\n7\n\n\"name\"\n\"outer\"\n\"inner\"\n");
    free(out);
    char *err = NULL;
    st = run_commandf(&err, "echo 'SELECT COUNT(*) AS n FROM thread;' | '%s/opprof' sql --db '%s'", bin_dir(), db);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(err, "\"n\"\n");
    free(err);
    st = run_commandf(&err, "'%s/opprof' sql --db '%s/none.sqlite' 'SELECT 1'", bin_dir(), dir());
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "SELECT 1: No such file or directory"); /* no database: the operand was a trace */
    free(err);
    const char *other = write_file("theirs.txt", "not a database\n");
    st = run_commandf(&err, "'%s/opprof' sql --db '%s' 'SELECT 1'", bin_dir(), other);
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "theirs.txt: no trace named to make it, and it is not a database that opprof made\n");
    free(err);
    const char *empty = write_file("empty_alone.sqlite", "");
    st = run_commandf(&err, "'%s/opprof' sql --db '%s' 'SELECT 1'", bin_dir(), empty);
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "empty_alone.sqlite: no trace named to make it, and it is empty\n");
    free(err);
    sqlite3 *h = NULL;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK && sqlite3_exec(h, "PRAGMA user_version = 3", 0, 0, 0) == SQLITE_OK);
    sqlite3_close(h);
    st = run_commandf(&err, "'%s/opprof' sql --db '%s' 'SELECT 1'", bin_dir(), db);
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "no trace named to make it, and its tables are another opprof's (version 3, this one's ");
    free(err);
    st = run_commandf(&err, "'%s/opprof' sql --db '%s' '%s/gone.json'", bin_dir(), db, dir());
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "gone.json: No such file or directory");
    free(err);
}

TEST_CASE(db_kept_while_current_and_rebuilt_whole) {
    const char *t = write_file("cached.json", MAPPING);
    char db[600], args[1400], tmp_glob[700];
    snprintf(db, sizeof db, "%s/cache.sqlite", dir());
    snprintf(tmp_glob, sizeof tmp_glob, "ls '%s' | grep -c tmp", dir());
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT COUNT(*) AS n FROM slice'", db, t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"n\"\n7\n");
    free(out);
    ino_t first = inode_of(db);
    CHECK(first != 0);
    out = sql(NULL, args); /* reused: the same file */
    CHECK_STR(out, "\"n\"\n7\n");
    free(out);
    CHECK(inode_of(db) == first);
    /* a database of another version of opprof's tables (its user_version): rebuilt */
    snprintf(args, sizeof args, "--db '%s' '%s' 'PRAGMA user_version = 1'", db, t);
    free(sql(NULL, args));
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT COUNT(*) AS n FROM slice; PRAGMA user_version'", db, t);
    out = sql(NULL, args);
    CHECK_STR(out, "\"n\"\n7\n\n\"user_version\"\n10\n");
    free(out);
    CHECK(inode_of(db) != first);
    first = inode_of(db);
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT COUNT(*) AS n FROM slice'", db, t);
    /* the trace changes: rebuilt as a new file */
    write_file("cached.json", TF_TIMELINE);
    out = sql(NULL, args);
    CHECK_STR(out, "\"n\"\n5\n"); /* 3 ops, 2 runs as steps */
    free(out);
    ino_t second = inode_of(db);
    CHECK(second != first);
    /* a rebuild that fails (the disk full: a file size limit) keeps the old database, and no temporary */
    write_file("cached.json", MAPPING);
    char *err = NULL;
    int st = run_commandf(&err, "trap '' XFSZ; ulimit -f 4; '%s/opprof' sql %s", bin_dir(), args);
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "cache.sqlite");
    free(err);
    CHECK(inode_of(db) == second);
    char *count = NULL;
    run_command(tmp_glob, &count);
    CHECK_STR(count, "0\n");
    free(count);
}

/* `opprof sql --db FILE TRACE 'QUERY'` of a statement that writes to the kept
 * tables: the next run with the same traces reused the changed file and
 * answered otherwise (a count of 0 for 7, "table mine already exists") with
 * the same command. Each run now starts from what the traces make: a write to
 * main marks the file (said once), and the next run makes it again; TEMP
 * tables, INCLUDE, a rolled back write and reads leave it as it is. */
TEST_CASE(db_changed_by_a_statement_made_again) {
    const char *t = write_file("changed.json", MAPPING);
    char db[600], args[1600];
    snprintf(db, sizeof db, "%s/changed.sqlite", dir());
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT COUNT(*) AS n FROM slice'", db, t);
    char *out = sql(NULL, args), *err = NULL;
    CHECK_STR(out, "\"n\"\n7\n");
    free(out);
    ino_t made = inode_of(db);
    /* read only (a table-valued function among them: SQLite asks for its schema's
       rows as it connects), TEMP, INCLUDE, a write rolled back: kept, nothing said */
    CHECK_INT(run_commandf(&err,
                           "'%s/opprof' sql --db '%s' '%s' 'CREATE PERFETTO TABLE p AS SELECT name FROM slice;"
                           " INCLUDE PERFETTO MODULE slices.with_context; CREATE TEMP TABLE q AS SELECT 1;"
                           " BEGIN; DELETE FROM __intrinsic_slice; ROLLBACK; SELECT COUNT(*) FROM ancestor_slice(1);"
                           " SELECT COUNT(*) AS n FROM p' 2>&1",
                           bin_dir(), db, t),
              0);
    CHECK(err && strstr(err, "\"n\"\n7\n") && !strstr(err, "changed its tables"));
    free(err);
    out = sql(NULL, args);
    CHECK_STR(out, "\"n\"\n7\n");
    free(out);
    CHECK(inode_of(db) == made);
    /* a DELETE: this run sees it, the next does not */
    CHECK_INT(run_commandf(&err,
                           "'%s/opprof' sql --db '%s' '%s' 'DELETE FROM __intrinsic_slice WHERE depth > 0;"
                           " SELECT COUNT(*) AS n FROM slice' 2>&1",
                           bin_dir(), db, t),
              0);
    CHECK_CONTAINS(err, "\"n\"\n5\n"); /* depth 0 of the 7 */
    CHECK_CONTAINS(err, "changed.sqlite: a statement changed its tables: the next run makes it again from the traces");
    free(err);
    /* alone, it is not queried as it is */
    CHECK_INT(run_commandf(&err, "'%s/opprof' sql --db '%s' 'SELECT 1' 2>&1", bin_dir(), db), 2);
    CHECK_CONTAINS(err, "a statement of an earlier run changed its tables: name its traces");
    free(err);
    out = sql(NULL, args);
    CHECK_STR(out, "\"n\"\n7\n");
    free(out);
    CHECK(inode_of(db) != made);
    /* a table of the user's: the same command twice gives the same answer */
    snprintf(args, sizeof args,
             "--db '%s' '%s' 'CREATE TABLE mine AS SELECT name FROM slice; SELECT COUNT(*) AS n FROM mine'", db, t);
    for (int k = 0; k < 2; k++) {
        int status = -1;
        out = sql(&status, args);
        CHECK_INT(status, 0);
        CHECK_STR(out, "\n\"n\"\n7\n");
        free(out);
    }
    /* its tables dropped: still opprof's, made again, not refused */
    snprintf(args, sizeof args, "--db '%s' '%s' 'DROP VIEW slice; DROP TABLE trace; SELECT 1 AS one'", db, t);
    free(sql(NULL, args));
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT COUNT(*) AS n FROM slice'", db, t);
    int status = -1;
    out = sql(&status, args);
    CHECK_INT(status, 0);
    CHECK_STR(out, "\"n\"\n7\n");
    free(out);
}

TEST_CASE(errors_named_and_nothing_half_built) {
    const char *t = write_file("ok.json", MAPPING), *bad = write_file("bad.json", "{\"traceEvents\": [ {\"ph\": ");
    char *err = NULL, db[600];
    snprintf(db, sizeof db, "%s/never.sqlite", dir());
    int st = run_commandf(&err, "'%s/opprof' sql '%s' 'SELECT nope FROM slice'", bin_dir(), t);
    CHECK_INT(st, 1);
    CHECK_CONTAINS(err, "line 1: no such column: nope");
    free(err);
    st = run_commandf(&err, "'%s/opprof' sql '%s' 'SELECT 1;\nSELECT * FROM nowhere'", bin_dir(), t);
    CHECK_INT(st, 1);
    CHECK_CONTAINS(err, "line 2: no such table: nowhere");
    CHECK_CONTAINS(err, "\"1\"\n1\n"); /* what ran before stays printed */
    free(err);
    st = run_commandf(&err, "'%s/opprof' sql --db '%s' '%s/missing.json' 'SELECT 1'", bin_dir(), db, dir());
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "missing.json: No such file or directory");
    free(err);
    st = run_commandf(&err, "'%s/opprof' sql --db '%s' '%s' '%s' 'SELECT 1'", bin_dir(), db, t, bad);
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "bad.json");
    free(err);
    CHECK(inode_of(db) == 0); /* no database, not even the first trace's */
    /* --db naming what opprof did not make (a trace, by a slip of the hand) loses nothing */
    st = run_commandf(&err, "'%s/opprof' sql --db '%s' '%s' 'SELECT 1'", bin_dir(), t, t);
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "ok.json: not replaced: it is not a database that opprof made");
    free(err);
    char *kept = NULL;
    run_commandf(&kept, "cat '%s'", t);
    CHECK_STR(kept, MAPPING);
    free(kept);
    /* a database of opprof's cut short (copied in part): damaged, said so, and kept */
    st = run_commandf(&err,
                      "cd '%s' && '%s/opprof' sql --db cut.db '%s' 'SELECT 1' && truncate -s 40000 cut.db && "
                      "'%s/opprof' sql --db cut.db '%s' 'SELECT 1' 2>&1; echo \"exit $?\"; stat -c %%s cut.db",
                      dir(), bin_dir(), t, bin_dir(), t);
    CHECK_CONTAINS(err, "cut.db: not replaced: it is an SQLite database that SQLite cannot read (database disk "
                        "image is malformed): damaged? (remove it, or name another file)\nexit 2\n40000\n");
    free(err);
    /* an empty file (mktemp's) is taken */
    write_file("empty.sqlite", "");
    st = run_commandf(&err, "'%s/opprof' sql --db '%s/empty.sqlite' '%s' 'SELECT COUNT(*) FROM slice'", bin_dir(),
                      dir(), t);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(err, "7\n");
    free(err);
    /* through a link: the file it leads to is made again, the link stays */
    const char *other = write_file("other.json", MAPPING);
    st = run_commandf(&err,
                      "cd '%s' && ln -s empty.sqlite via.sqlite && '%s/opprof' sql --db via.sqlite '%s' "
                      "'SELECT file FROM trace' && test -L via.sqlite && ls | grep -c sqlite",
                      dir(), bin_dir(), other);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(err, "other.json\"\n2\n"); /* empty.sqlite, via.sqlite */
    free(err);
    st = run_commandf(&err, "'%s/opprof' sql '%s' -f '%s/none.sql'", bin_dir(), t, dir());
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "none.sql: No such file or directory");
    free(err);
    st = run_commandf(&err, "'%s/opprof' sql --mode table '%s' 'SELECT 1'", bin_dir(), t);
    CHECK_INT(st, 64);
    CHECK_CONTAINS(err, "--mode is csv, list, tabs, column, line or json, not 'table'");
    free(err);
}

/* The arguments go into args as each trace is read (sql/read_args.c), in
 * memory or on disk alike: the args come out the same, ids and all, in the
 * order the trace gives them (a B/E pair's at its E), not grouped by
 * thread, their sets numbered as they come; a directory where --db cannot
 * be made is named, and nothing is built. */
TEST_CASE(arguments_as_read_the_same_with_db_or_without) {
    const char *t = write_file(
        "two-threads.json",
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":5,\"args\":{\"k\":1,\"grid\":[4,2]}},\n"
        "{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":3,\"ts\":11,\"args\":{\"from\":\"B\"}},\n"
        "{\"ph\":\"X\",\"name\":\"d\",\"pid\":1,\"tid\":3,\"ts\":5,\"dur\":1,\"args\":{\"s\":\"x\"}},\n"
        "{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":2,\"ts\":20,\"dur\":5,\"args\":{\"r\":0.25,\"flops\":7}},\n"
        "{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":30,\"args\":{\"to\":\"E\"}}\n"
        "]}\n");
    char db[600], args[1400];
    snprintf(db, sizeof db, "%s/aside.sqlite", dir());
    static const char query[] = "'SELECT a.id, s.name, a.arg_set_id, a.key, a.int_value, a.string_value, a.real_value"
                                " FROM args a JOIN slice s USING (arg_set_id) ORDER BY a.id'";
    static const char expected[] =
        "\"id\",\"name\",\"arg_set_id\",\"key\",\"int_value\",\"string_value\",\"real_value\"\n"
        "0,\"a\",0,\"args.k\",1,\"[NULL]\",\"[NULL]\"\n"
        "1,\"a\",0,\"args.grid[0]\",4,\"[NULL]\",\"[NULL]\"\n"
        "2,\"a\",0,\"args.grid[1]\",2,\"[NULL]\",\"[NULL]\"\n"
        "3,\"d\",1,\"args.s\",\"[NULL]\",\"x\",\"[NULL]\"\n"
        "4,\"c\",2,\"args.r\",\"[NULL]\",\"[NULL]\",0.250000\n"
        "5,\"c\",2,\"args.flops\",7,\"[NULL]\",\"[NULL]\"\n"
        "6,\"b\",3,\"args.from\",\"[NULL]\",\"B\",\"[NULL]\"\n"
        "7,\"b\",3,\"args.to\",\"[NULL]\",\"E\",\"[NULL]\"\n";
    snprintf(args, sizeof args, "'%s' %s", t, query);
    char *in_memory = sql(NULL, args);
    CHECK_STR(in_memory, expected);
    free(in_memory);
    snprintf(args, sizeof args, "--db '%s' '%s' %s", db, t, query);
    char *on_disk = sql(NULL, args);
    CHECK_STR(on_disk, expected);
    free(on_disk);
    char *err = NULL;
    snprintf(db, sizeof db, "%s/nowhere/x.sqlite", dir());
    int st = run_commandf(&err, "'%s/opprof' sql --db '%s' '%s' 'SELECT 1'", bin_dir(), db, t);
    CHECK_INT(st, 2);
    CHECK_CONTAINS(err, "nowhere");
    free(err);
    CHECK(inode_of(db) == 0);
}

/* `opprof sql --db DB TRACE 'SELECT 1'` where no file may pass `kib` KiB (a
 * disk that fills): its exit status, its stderr in *err. */
static int load_on_a_full_disk(const char *db, const char *trace, int kib, char **err) {
    return run_commandf(err, "trap '' XFSZ; ulimit -f %d; '%s/opprof' sql --db '%s' '%s' 'SELECT 1'", kib, bin_dir(),
                        db, trace);
}

/* No file of the test's directory whose name holds `part`: nothing half-built. */
static void check_none_left(const char *part) {
    char *left = NULL;
    run_commandf(&left, "ls -a '%s' | grep -c '%s'", dir(), part);
    CHECK_STR(left, "0\n");
    free(left);
}

/* A trace of n complete events on one thread, 2 us apart: named "op", or
 * "op0".."op<names - 1>" in turn; each with the argument "w": arg (NULL: none). */
static void write_events(const char *path, int n, int names, const char *arg) {
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs("{\"traceEvents\": [\n", f);
    for (int i = 0; i < n; i++) {
        char name[16] = "";
        if (names > 1) snprintf(name, sizeof name, "%d", i % names);
        fprintf(f, "{\"ph\":\"X\",\"name\":\"op%s\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1", name, i * 2);
        if (arg) fprintf(f, ",\"args\":{\"w\":\"%s\"}", arg);
        fputs(i == n - 1 ? "}\n" : "},\n", f);
    }
    fputs("]}\n", f);
    fclose(f);
}

/* A load that SIGTERM stops leaves neither its temporary nor a database,
 * and ends as the signal does (143); one killed outright (SIGKILL: no handler
 * runs) leaves its temporary, which the next load beside it removes, its
 * process being gone, while a live process's is kept. */
TEST_CASE(a_stopped_load_leaves_nothing) {
    char path[600], db[600];
    snprintf(path, sizeof path, "%s/stopped.json", dir());
    snprintf(db, sizeof db, "%s/stopped.sqlite", dir());
    write_events(path, 300000, 50, "x"); /* seconds to load: the temporary is seen long before */
    char prefix[700], load[1900];
    snprintf(prefix, sizeof prefix, "%s.tmp.", db);
    snprintf(load, sizeof load, "'%s/opprof' sql --db '%s' '%s' 'SELECT 1'", bin_dir(), db, path);
    char *out = stopped_once_made(load, prefix, "", dir(), "stopped.sqlite");
    CHECK_STR(out, "exit 143\n0\n");
    free(out);
    const char *small = write_file("small.json", MAPPING);
    snprintf(load, sizeof load, "'%s/opprof' sql --db '%s' '%s' 'SELECT 1'", bin_dir(), db, small);
    out = leftovers_after(prefix, "", load);
    CHECK_STR(out, "live kept\n");
    free(out);
}

/* Arguments that the disk cannot take (a file size limit) fail the load
 * while the trace is read: they are written as they come, and more than
 * SQLite's page cache (512 KiB) holds are written to the file before the read
 * ends. The message names the trace and the database, and none is left. */
TEST_CASE(arguments_the_disk_cannot_take_fail_the_load) {
    char path[600], db[600];
    snprintf(path, sizeof path, "%s/wide-args.json", dir());
    snprintf(db, sizeof db, "%s/wide.sqlite", dir());
    char wide[1025];
    memset(wide, 'w', 1024);
    wide[1024] = '\0';
    write_events(path, 20000, 1, wide); /* 20 MB of arguments: more than the page cache holds */
    char *err = NULL;
    CHECK_INT(load_on_a_full_disk(db, path, 1024, &err), 2);
    CHECK_CONTAINS(err, "wide-args.json:");
    CHECK_CONTAINS(err, "arguments set aside: input/output error");
    CHECK_CONTAINS(err, "wide.sqlite could not take it: disk I/O error");
    free(err);
    CHECK(inode_of(db) == 0);
    check_none_left("tmp");
}

/* A set of arguments written as the trace was read whose event the read
 * then merged into its parent (PyTorch's only child of the same name) joins
 * the parent's set; one whose event the read left out (TensorFlow's
 * stream:all, every stream's ops again) is dropped: no argument of no slice. */
TEST_CASE(arguments_of_merged_and_dropped_events) {
    const char *t = write_file(
        "merged-args.json",
        "{\"schemaVersion\": 1, \"traceEvents\": [\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,"
        "\"args\":{\"p\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":50,"
        "\"args\":{\"c\":2}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":5,"
        "\"args\":{\"q\":3}}\n"
        "]}\n");
    static const char query[] =
        "'SELECT s.name, a.arg_set_id, a.key, a.int_value, a.string_value FROM slice s JOIN args a USING (arg_set_id)"
        " ORDER BY a.id; SELECT COUNT(*) AS args, (SELECT COUNT(*) FROM arg_chunk WHERE arg_set_id NOT IN"
        " (SELECT arg_set_id FROM slice WHERE arg_set_id IS NOT NULL)) AS of_no_slice FROM args'";
    char db[600], args[1400];
    snprintf(db, sizeof db, "%s/merged.sqlite", dir());
    snprintf(args, sizeof args, "--db '%s' '%s' %s", db, t, query);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"name\",\"arg_set_id\",\"key\",\"int_value\",\"string_value\"\n"
                   "\"aten::linear\",0,\"args.p\",1,\"[NULL]\"\n"
                   "\"aten::linear\",0,\"args.c\",2,\"[NULL]\"\n"
                   "\"aten::add\",2,\"args.q\",3,\"[NULL]\"\n"
                   "\n\"args\",\"of_no_slice\"\n3,0\n");
    free(out);
    t = write_file(
        "stream-all.json",
        "{\"traceEvents\": [\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"/job:localhost/replica:0/task:0/"
        "device:GPU:0 Compute\"}},\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4,\"args\":{\"name\":\"/device:GPU:0/stream:all Compute\"}},\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":6,\"args\":{\"name\":\"/device:GPU:0/stream:7 Compute\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMul\",\"pid\":0,\"tid\":0,\"ts\":100,\"dur\":10,"
        "\"args\":{\"name\":\"dense/MatMul\",\"op\":\"MatMul\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMul\",\"pid\":4,\"tid\":0,\"ts\":112,\"dur\":50,"
        "\"args\":{\"name\":\"dense/MatMul\",\"op\":\"all\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMul\",\"pid\":6,\"tid\":0,\"ts\":112,\"dur\":50,"
        "\"args\":{\"name\":\"dense/MatMul\",\"op\":\"7\"}}\n"
        "]}\n");
    snprintf(db, sizeof db, "%s/stream-all.sqlite", dir());
    snprintf(args, sizeof args, "--db '%s' '%s' %s", db, t, query);
    out = sql(NULL, args);
    CHECK_STR(out, "\"name\",\"arg_set_id\",\"key\",\"int_value\",\"string_value\"\n"
                   "\"MatMul\",0,\"args.name\",\"[NULL]\",\"dense/MatMul\"\n"
                   "\"MatMul\",0,\"args.op\",\"[NULL]\",\"MatMul\"\n"
                   "\"MatMul\",2,\"args.name\",\"[NULL]\",\"dense/MatMul\"\n"
                   "\"MatMul\",2,\"args.op\",\"[NULL]\",\"7\"\n"
                   "\n\"args\",\"of_no_slice\"\n4,0\n");
    free(out);
}

/* Rows are inserted by the writer's thread (sql/writer.c) while the load goes
 * on: a disk that fills while it inserts (more rows than SQLite's 512 KiB page
 * cache holds, so that pages are written before COMMIT) fails the load that
 * gave them ("could not take it"), not only the COMMIT ("could not be
 * written"), and leaves no database. */
TEST_CASE(rows_the_disk_cannot_take_fail_the_load) {
    char path[600], db[600];
    snprintf(path, sizeof path, "%s/many-rows.json", dir());
    snprintf(db, sizeof db, "%s/many.sqlite", dir());
    write_events(path, 300000, 50, NULL); /* no arguments: rows of slices alone */
    char *err = NULL;
    CHECK_INT(load_on_a_full_disk(db, path, 4096, &err), 2);
    CHECK_CONTAINS(err, "many-rows.json: ");
    CHECK_CONTAINS(err, "many.sqlite could not take it: ");
    free(err);
    CHECK(inode_of(db) == 0);
    check_none_left("many.sqlite");
    /* without the limit, every row is there: more batches than the writer's ring holds */
    int st = 0;
    char args[1400];
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT COUNT(*) AS n, SUM(dur) AS d, MAX(id) AS last FROM slice'", db,
             path);
    char *out = sql(&st, args);
    CHECK_INT(st, 0);
    CHECK_STR(out, "\"n\",\"d\",\"last\"\n300000,300000000,299999\n");
    free(out);
}

/* Sampled stacks (the Trace Event Format's "samples" and "stackFrames") in
 * Perfetto's layout: a perf_sample a sample, on its thread, in the slice it
 * fell in (none after the last); a stack_profile_callsite a distinct path
 * from the outermost frame, shared by the stacks that begin alike; a frame a
 * name, in the one unknown mapping. The callsites are found by queries while
 * the rows go in (sql/writer.c drains its rows first). */
TEST_CASE(samples_as_perfettos_stack_profile) {
    const char *t =
        write_file("sampled.json",
                   "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"step\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100}],\n"
                   "\"stackFrames\":{\"1\":{\"name\":\"main\",\"category\":\"app\"},"
                   "\"2\":{\"name\":\"work\",\"parent\":\"1\",\"category\":\"app\"},"
                   "\"3\":{\"name\":\"leaf\",\"parent\":\"2\",\"category\":\"app\"},"
                   "\"4\":{\"name\":\"other\",\"parent\":\"1\",\"category\":\"app\"}},\n"
                   "\"samples\":[{\"cpu\":0,\"tid\":1,\"ts\":\"10\",\"sf\":3,\"weight\":1},"
                   "{\"cpu\":0,\"tid\":1,\"ts\":\"20\",\"sf\":2,\"weight\":1},"
                   "{\"cpu\":0,\"tid\":1,\"ts\":\"30\",\"sf\":3,\"weight\":1},"
                   "{\"cpu\":0,\"tid\":1,\"ts\":\"150\",\"sf\":4,\"weight\":1}]}\n");
    char args[1400];
    snprintf(
        args, sizeof args,
        "'%s' 'SELECT s.id, s.ts, s.utid, s.cpu_mode, f.name AS leaf, c.depth, s.slice_id FROM perf_sample s"
        " JOIN stack_profile_callsite c ON s.callsite_id = c.id JOIN stack_profile_frame f ON c.frame_id = f.id"
        " ORDER BY s.id; SELECT c.id, c.depth, c.parent_id, f.name, m.name AS mapping FROM stack_profile_callsite c"
        " JOIN stack_profile_frame f ON c.frame_id = f.id JOIN stack_profile_mapping m ON f.mapping = m.id"
        " ORDER BY c.id; SELECT * FROM trace_bounds'",
        t);
    int st = 0;
    char *out = sql(&st, args);
    CHECK_INT(st, 0);
    CHECK_STR(out, "\"id\",\"ts\",\"utid\",\"cpu_mode\",\"leaf\",\"depth\",\"slice_id\"\n"
                   "0,10000,1,\"user\",\"leaf\",2,0\n"
                   "1,20000,1,\"user\",\"work\",1,0\n"
                   "2,30000,1,\"user\",\"leaf\",2,0\n"
                   "3,150000,1,\"user\",\"other\",1,\"[NULL]\"\n"
                   "\n"
                   "\"id\",\"depth\",\"parent_id\",\"name\",\"mapping\"\n"
                   "1,0,\"[NULL]\",\"main\",\"[unknown]\"\n"
                   "2,1,1,\"work\",\"[unknown]\"\n"
                   "3,2,2,\"leaf\",\"[unknown]\"\n"
                   "4,1,1,\"other\",\"[unknown]\"\n"
                   "\n\"start_ts\",\"end_ts\"\n0,150000\n"); /* to the last sample, past the slice */
    free(out);
    /* linux.perf.samples: the tree of those stacks, each node's samples as leaf and in all; a
     * frame's source "file:line" taken apart at its last ':' (none: all of it the file) */
    snprintf(args, sizeof args,
             "'%s' 'UPDATE stack_profile_frame SET source = \"C:/src/a.c:42\" WHERE name = \"leaf\";"
             " UPDATE stack_profile_frame SET source = \"b.c\" WHERE name = \"work\";"
             " INCLUDE PERFETTO MODULE linux.perf.samples; SELECT * FROM linux_perf_samples_summary_tree'",
             t);
    out = sql(&st, args);
    CHECK_INT(st, 0);
    CHECK_STR(out, "\n\n\n\"id\",\"parent_id\",\"name\",\"mapping_name\",\"source_file\",\"line_number\","
                   "\"self_count\",\"cumulative_count\"\n"
                   "1,\"[NULL]\",\"main\",\"[unknown]\",\"[NULL]\",\"[NULL]\",0,4\n"
                   "2,1,\"work\",\"[unknown]\",\"b.c\",\"[NULL]\",1,3\n"
                   "3,2,\"leaf\",\"[unknown]\",\"C:/src/a.c\",42,2,2\n"
                   "4,1,\"other\",\"[unknown]\",\"[NULL]\",\"[NULL]\",1,1\n");
    free(out);
}

/* Flows bound to events (the Trace Event Format's v2 flows, as Chrome writes
 * them): "bind_id" with "flow_out" leaves the event, with "flow_in" enters it,
 * with both goes on through it; the event's own slice, not a child starting
 * with it, a "B"'s as its slice's; their ids apart from v1 flows' ("id"); one
 * without a direction counted in stats, as Perfetto counts it. */
TEST_CASE(flows_bound_to_events_link_their_slices) {
    const char *t = write_file(
        "bound.json",
        "{\"traceEvents\": [\n"
        "{\"ph\":\"X\",\"name\":\"send\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,\"bind_id\":\"0x7\",\"flow_out\":true},\n"
        "{\"ph\":\"X\",\"name\":\"relay\",\"pid\":1,\"tid\":2,\"ts\":20,\"dur\":5,\"bind_id\":7,\"flow_in\":true,"
        "\"flow_out\":true},\n"
        "{\"ph\":\"B\",\"name\":\"recv\",\"pid\":1,\"tid\":3,\"ts\":30,\"bind_id\":\"0x7\",\"flow_in\":true},\n"
        "{\"ph\":\"X\",\"name\":\"child\",\"pid\":1,\"tid\":3,\"ts\":30,\"dur\":2},\n"
        "{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":40},\n"
        "{\"ph\":\"X\",\"name\":\"lonely\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":1,\"bind_id\":9},\n"
        "{\"ph\":\"s\",\"name\":\"v1\",\"cat\":\"x\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":11},\n"
        "{\"ph\":\"f\",\"name\":\"v1\",\"cat\":\"x\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":50,\"bp\":\"e\"}\n"
        "]}\n");
    char args[1400];
    snprintf(args, sizeof args,
             "'%s' 'SELECT o.name AS out, i.name AS inward FROM flow f JOIN slice o ON o.id = f.slice_out"
             " JOIN slice i ON i.id = f.slice_in ORDER BY o.ts, i.ts;"
             " SELECT value, description FROM stats WHERE name = \"events_not_in_tables\"; SELECT COUNT(*) FROM args'",
             t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"out\",\"inward\"\n\"send\",\"relay\"\n\"send\",\"lonely\"\n\"relay\",\"recv\"\n\n"
                   "\"value\",\"description\"\n"
                   "1,\"flows bound to events (bind_id; in opprof sql, those without flow_in or flow_out)\"\n\n"
                   "\"COUNT(*)\"\n0\n");
    free(out);
    char *err = NULL; /* report's tables have no flows: each bound flow said */
    int st = run_commandf(&err, "'%s/opprof' report '%s' 2>&1 >/dev/null", bin_dir(), t);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(err, "4 flows bound to events (bind_id");
    free(err);
}

/* PerfettoSQL's own statements (CREATE PERFETTO TABLE, VIEW, INDEX, FUNCTION
 * scalar and table-valued, OR REPLACE, schemas and types read), as its
 * documentation writes them; what a query makes is its session's: a kept
 * database stays as it was loaded. */
TEST_CASE(perfetto_sql_statements) {
    char t[600]; /* write_file's paths are reused: copied */
    snprintf(t, sizeof t, "%s", write_file("mapping.json", MAPPING));
    const char *q = write_file(
        "perfetto.sql",
        "CREATE PERFETTO TABLE long_slice(id LONG, name STRING) AS SELECT id, name FROM slice WHERE dur >= 30000;\n"
        "CREATE OR REPLACE PERFETTO TABLE long_slice AS SELECT id, name FROM slice WHERE dur >= 50000;\n"
        "CREATE PERFETTO INDEX long_by_name ON long_slice(name);\n"
        "SELECT * FROM long_slice ORDER BY id;\n"
        "CREATE PERFETTO VIEW first_name(n STRING) AS SELECT name AS n FROM slice WHERE id = 0;\n"
        "SELECT n FROM first_name;\n"
        "CREATE PERFETTO FUNCTION ends(ts LONG, dur LONG) RETURNS LONG AS SELECT $ts + $dur;\n"
        "CREATE PERFETTO FUNCTION longest() RETURNS STRING AS\n"
        "  SELECT name FROM slice WHERE depth = 0 ORDER BY dur DESC LIMIT 1;\n"
        "SELECT ends(ts, dur) AS e, longest() AS o FROM slice WHERE id = 2;\n"
        "/* a slice's children; its argument named as a column */\n"
        "CREATE PERFETTO FUNCTION children(id JOINID(slice.id)) RETURNS TABLE(id LONG, name STRING) AS\n"
        "  SELECT id, name FROM slice WHERE parent_id = $id ORDER BY id;\n"
        "SELECT p.name AS parent, c.name AS child FROM slice p, children(p.id) c ORDER BY c.id;\n");
    char db[600], args[1400];
    snprintf(db, sizeof db, "%s/perfetto.sqlite", dir());
    snprintf(args, sizeof args, "--db '%s' '%s' -f '%s'", db, t, q);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\n\n\n\"id\",\"name\"\n0,\"outer\"\n1,\"req\"\n" /* dur >= 50 us: replaced */
                   "\n\n\"n\"\n\"outer\"\n"
                   "\n\n\n\"e\",\"o\"\n50000,\"outer\"\n" /* inner: 20 us + 30 us */
                   "\n\n\"parent\",\"child\"\n\"outer\",\"inner\"\n\"inner\",\"tick\"\n");
    free(out);
    ino_t kept = inode_of(db);
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT COUNT(*) AS n FROM sqlite_schema WHERE name LIKE \"long%%\"'",
             db, t);
    out = sql(NULL, args);
    CHECK_STR(out, "\"n\"\n0\n"); /* the session's tables went with it */
    free(out);
    CHECK(inode_of(db) == kept);
    /* macros: a table and an expression, one that calls another, an argument with a
       comma in its string; a macro's text is not expanded where it is defined */
    q = write_file("macros.sql", "CREATE PERFETTO MACRO named(tab TableOrSubquery, n Expr) RETURNS TableOrSubquery AS\n"
                                 "  (SELECT id, name, dur FROM $tab WHERE name = $n);\n"
                                 "CREATE PERFETTO MACRO twice(x Expr) RETURNS Expr AS ($x) * 2;\n"
                                 "CREATE PERFETTO MACRO four(x Expr) RETURNS Expr AS twice!(twice!($x));\n"
                                 "SELECT id, twice!(dur) AS d, four!(1) AS f FROM named!(slice, 'inner');\n"
                                 "SELECT COUNT(*) AS n FROM named!((SELECT * FROM slice), 'a, b');\n");
    snprintf(args, sizeof args, "'%s' -f '%s'", t, q);
    out = sql(NULL, args);
    CHECK_STR(out, "\n\n\n\"id\",\"d\",\"f\"\n2,60000,4\n\n\"n\"\n0\n");
    free(out);
    /* a function over every row (its select kept between calls), and one that calls itself */
    q = write_file("calls.sql", "CREATE PERFETTO FUNCTION ends(ts LONG, dur LONG) RETURNS LONG AS SELECT $ts + $dur;\n"
                                "CREATE PERFETTO FUNCTION fact(n LONG) RETURNS LONG AS\n"
                                "  SELECT CASE WHEN $n <= 1 THEN 1 ELSE $n * fact($n - 1) END;\n"
                                "SELECT SUM(ends(ts, dur)) AS s, fact(10) AS f FROM slice;\n");
    snprintf(args, sizeof args, "'%s' -f '%s'", t, q);
    out = sql(NULL, args);
    CHECK_STR(out, "\n\n\"s\",\"f\"\n426000,3628800\n"); /* the 7 slices' ends, in ns */
    free(out);
    /* as Chromium's standard library writes one, comments between its arguments */
    q = write_file("chromium.sql",
                   "-- Checks if slice has an ancestor with provided name.\n"
                   "CREATE PERFETTO FUNCTION _has_parent_slice_with_name(\n"
                   "  -- Id of the slice to check parents of.\n"
                   "  id LONG,\n"
                   "  -- Name of potential ancestor slice.\n"
                   "  parent_name STRING)\n"
                   "-- Whether `parent_name` is a name of an ancestor slice.\n"
                   "RETURNS BOOL AS\n"
                   "SELECT EXISTS(\n"
                   "  SELECT 1\n"
                   "  FROM ancestor_slice($id)\n"
                   "  WHERE name = $parent_name\n"
                   "  LIMIT 1\n"
                   ");\n"
                   "SELECT id FROM slice WHERE _has_parent_slice_with_name(id, \"outer\") ORDER BY id;\n");
    snprintf(args, sizeof args, "'%s' -f '%s'", t, q);
    out = sql(NULL, args);
    CHECK_STR(out, "\n\"id\"\n2\n3\n"); /* inner and tick */
    free(out);
    const struct {
        const char *query, *said;
    } errors[] = {
        {"SELECT 1;\nCREATE PERFETTO TABLE t SELECT 1", "line 2: CREATE PERFETTO TABLE t: AS select expected"},
        {"CREATE PERFETTO FUNCTION f(a INT) AS SELECT 1",
         "CREATE PERFETTO FUNCTION f: (arguments) RETURNS type AS ... expected"},
        {"CREATE PERFETTO TRIGGER t AS SELECT 1",
         "CREATE PERFETTO TRIGGER t: opprof makes PerfettoSQL's TABLE, VIEW, INDEX, FUNCTION and MACRO"},
        {"SELECT 1;\n\nSELECT nope!(1)", "line 3: nope!: no such macro (CREATE PERFETTO MACRO makes one)"},
        {"CREATE PERFETTO MACRO loop(x Expr) RETURNS Expr AS loop!($x); SELECT loop!(1)",
         "256 rounds of expansion and still a call"},
        {"CREATE PERFETTO MACRO d(x Expr) RETURNS Expr AS d!($x) + d!($x); SELECT d!(1)",
         "macros: the statement grew past 4 MiB as they expanded"},
        {"CREATE PERFETTO MACRO one(x Expr) RETURNS Expr AS $x; SELECT one!(1", "one!(: its ')' is missing"},
        /* a call with more or fewer arguments than its macro takes (a comma in a string or
           in parentheses separates none) */
        {"CREATE PERFETTO MACRO two(a Expr, b Expr) RETURNS Expr AS $a || $b; SELECT two!(\"x,y\")",
         "two!: takes 2 argument(s) (a, b), given 1"},
        {"CREATE PERFETTO MACRO two(a Expr, b Expr) RETURNS Expr AS $a || $b; SELECT two!(1, (2), 3)",
         "two!: takes 2 argument(s) (a, b), given 3"},
        {"CREATE PERFETTO MACRO none() RETURNS Expr AS 5; SELECT none!(1)", "none!: takes 0 argument(s) (), given 1"},
        /* PERCENTILE's percentile out of range, or no number (NULL was taken as 0: the minimum) */
        {"SELECT PERCENTILE(dur, 101) FROM slice", "PERCENTILE: the percentile is a number from 0 to 100"},
        {"SELECT PERCENTILE(dur, NULL) FROM slice", "PERCENTILE: the percentile is a number from 0 to 100"},
        {"SELECT PERCENTILE(dur, \"x\") FROM slice", "PERCENTILE: the percentile is a number from 0 to 100"},
        {"INCLUDE PERFETTO MODULE intervals.overlap; SELECT * FROM intervals_overlap_count!(slice, ts)",
         "intervals_overlap_count!: takes 3 argument(s) (segments, ts_column, dur_column), given 2"},
        {"INCLUDE PERFETTO MODULE counters.intervals; SELECT * FROM counter_leading_intervals!(counter, value)",
         "counter_leading_intervals!: takes 1 argument(s) (counter_table), given 2"},
        {"SELECT cast_int!(1, 2)", "cast_int!: takes 1 argument(s) (value), given 2"},
        {"CREATE PERFETTO TABLE t AS SELECT nope FROM slice", "CREATE PERFETTO TABLE t: no such column: nope"},
        {"CREATE PERFETTO FUNCTION two(a INT, b INT) RETURNS TABLE(s INT) AS SELECT $a + $b AS s;"
         " SELECT * FROM two(1)",
         "two needs its arguments: two(a, b)"},
        /* a recursion without end: an error once the stack is nearly spent, not a crash */
        {"CREATE PERFETTO FUNCTION down(n LONG) RETURNS LONG AS SELECT 1 + down($n - 1); SELECT down(1)",
         "down: calls nested "},
        {"CREATE PERFETTO FUNCTION more(n LONG) RETURNS TABLE(v LONG) AS\n"
         "  SELECT v FROM more($n + 1);\nSELECT COUNT(*) FROM more(1)",
         "more: calls nested "},
        /* a module's own statement that fails: the module, its line and SQLite's reason */
        {"CREATE TEMP TABLE _slice_flattened_id_idx(x); INCLUDE PERFETTO MODULE slices.flat_slices",
         "INCLUDE PERFETTO MODULE slices.flat_slices: line 3: there is already a table named _slice_flattened_id_idx"},
    };
    for (size_t k = 0; k < sizeof errors / sizeof *errors; k++) fails_saying(t, errors[k].query, errors[k].said);
}

/* STR_SPLIT and the time.conversion module's functions, as Perfetto's
 * documentation gives them: a field from 0, NULL past the last; whole
 * numbers of a unit (integer division, toward zero) and back. */
TEST_CASE(str_split_and_time_conversion) {
    const char *t = write_file("mapping.json", MAPPING);
    char args[1400];
    snprintf(
        args, sizeof args,
        "'%s' 'INCLUDE PERFETTO MODULE time.conversion; SELECT STR_SPLIT(\"a.b.c\", \".\", 1) AS f1,"
        " STR_SPLIT(\"a::b\", \"::\", 1) AS f2, STR_SPLIT(\"a.b\", \".\", 2) AS past, STR_SPLIT(NULL, \".\", 0) AS n,"
        " time_to_ms(2500000) AS ms, time_to_us(-1500) AS us, time_to_s(TRACE_DUR()) AS s, time_from_ms(3) AS ns,"
        " time_to_days(time_from_days(2)) AS days'",
        t);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\n\"f1\",\"f2\",\"past\",\"n\",\"ms\",\"us\",\"s\",\"ns\",\"days\"\n"
                   "\"b\",\"b\",\"[NULL]\",\"[NULL]\",2,-1,0,3000000,2\n");
    free(out);
    const char *bad[][2] = {{"SELECT STR_SPLIT(\"a\", \"\", 0)", "STR_SPLIT: the delimiter is empty"},
                            {"SELECT STR_SPLIT(\"a\", \".\", -1)", "STR_SPLIT: the field\x27s index is negative"},
                            {"SELECT time_from_days(200000000)", "time_from: the time overflows"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) fails_saying(t, bad[k][0], bad[k][1]);
}

/* SPAN_JOIN, SPAN_LEFT_JOIN, SPAN_OUTER_JOIN: the tables and expected CSV of
 * trace_processor's own tests (test/trace_processor/span_join: unordered
 * columns both ways, an outer join unpartitioned, partitioned against empty
 * unpartitioned and the reverse, a left join of disjoint partitions); a
 * kept --db gets no table of the session's (the same script runs twice);
 * the errors, each named. */
TEST_CASE(span_join_as_trace_processor) {
    char t[600];
    snprintf(t, sizeof t, "%s", write_file("mapping.json", MAPPING));
    const char *q = write_file(
        "span.sql",
        "create table t1(a1 STRING, a2 BIG INT, dur BIG INT, a3 BIG INT, ts BIG INT PRIMARY KEY) without rowid;\n"
        "INSERT INTO t1(a1, a2, dur, a3, ts) VALUES (\"A\", 1, 10, 100, 0), (\"B\", 2, 90, 101, 10), (\"C\", 3, 1, 102,"
        " 100);\n"
        "create table t2(b1 STRING, ts BIG INT, b2 BIG INT, part BIG INT, dur BIG INT, b3 BIG INT,"
        " PRIMARY KEY (part, ts)) without rowid;\n"
        "INSERT INTO t2(b1, ts, b2, part, dur, b3) VALUES (\"A\", 10, 10, 0, 90, 100), (\"B\", 100, 90, 0, 10, 200),"
        " (\"C\", 110, 1, 0, 5, 300), (\"A\", 5, 10, 1, 45, 100), (\"B\", 50, 90, 1, 40, 200), (\"C\", 90, 1, 1, 100,"
        " 300);\n"
        "create virtual table sp using span_join(t1, t2 PARTITIONED part);\n"
        "select ts,dur,part,b1,b2,b3,a1,a2,a3 from sp;\n"
        "CREATE VIRTUAL TABLE sp2 USING SPAN_JOIN(t2 PARTITIONED part, t1);\n"
        "SELECT ts, dur, part, b1, b2, b3, a1, a2, a3 FROM sp2;\n"
        "create table o1(ts BIG INT, dur BIG INT, a BIG INT);\n"
        "create table o2(ts BIG INT, dur BIG INT, b BIG INT);\n"
        "INSERT INTO o1(ts, dur, a) VALUES (100, 400, 1), (500, 50, 2), (600, 100, 3);\n"
        "INSERT INTO o2(ts, dur, b) VALUES (50, 100, 4), (550, 50, 5), (600, 50, 6), (900, 500, 7);\n"
        "create virtual table so using span_outer_join(o1, o2);\n"
        "select * from so;\n"
        "create table p1(ts BIGINT, dur BIGINT, part BIGINT);\n"
        "create table u2(ts BIGINT, dur BIGINT, b BIGINT);\n"
        "INSERT INTO u2(ts, dur) VALUES (100, 400), (500, 50), (600, 100);\n"
        "create virtual table mr using span_outer_join(u2, p1 PARTITIONED part);\n"
        "select * from mr;\n"
        "create table p3(ts BIGINT, dur BIGINT, part BIGINT);\n"
        "INSERT INTO p3 VALUES (100, 400, 0), (100, 50, 1), (600, 100, 1);\n"
        "create table u4(ts BIGINT, dur BIGINT);\n"
        "create virtual table ml using span_outer_join(u4, p3 PARTITIONED part);\n"
        "select * from ml;\n"
        "create table l1(ts BIGINT, dur BIGINT, part BIGINT); INSERT INTO l1 VALUES (500, 100, 10);\n"
        "create table l2(ts BIGINT, dur BIGINT, part BIGINT); INSERT INTO l2 VALUES (500, 100, 5);\n"
        "create virtual table lj using span_left_join(l1 PARTITIONED part, l2 PARTITIONED part);\n"
        "select * from lj;\n");
    char args[1400];
    snprintf(args, sizeof args, "'%s' -f '%s'", t, q);
    char *out = sql(NULL, args);
    static const char JOINED[] = "\"ts\",\"dur\",\"part\",\"b1\",\"b2\",\"b3\",\"a1\",\"a2\",\"a3\"\n"
                                 "10,90,0,\"A\",10,100,\"B\",2,101\n100,1,0,\"B\",90,200,\"C\",3,102\n"
                                 "5,5,1,\"A\",10,100,\"A\",1,100\n10,40,1,\"A\",10,100,\"B\",2,101\n"
                                 "50,40,1,\"B\",90,200,\"B\",2,101\n90,10,1,\"C\",1,300,\"B\",2,101\n"
                                 "100,1,1,\"C\",1,300,\"C\",3,102\n";
    CHECK_CONTAINS(out, JOINED);
    CHECK(out && strstr(out, JOINED) && strstr(strstr(out, JOINED) + 1, JOINED)); /* both ways round */
    CHECK_CONTAINS(out, "\"ts\",\"dur\",\"a\",\"b\"\n50,50,\"[NULL]\",4\n100,50,1,4\n150,350,1,\"[NULL]\"\n"
                        "500,50,2,\"[NULL]\"\n550,50,\"[NULL]\",5\n600,50,3,6\n650,50,3,\"[NULL]\"\n"
                        "900,500,\"[NULL]\",7\n");
    CHECK_CONTAINS(out, "\n\"ts\",\"dur\",\"part\",\"b\"\n\n"); /* no partition: no row */
    CHECK_CONTAINS(out, "\"ts\",\"dur\",\"part\"\n100,400,0\n100,50,1\n600,100,1\n");
    CHECK_CONTAINS(out, "\"ts\",\"dur\",\"part\"\n500,100,10\n");
    free(out);
    /* a window of time against a trace's top slices on every thread; on a kept database, twice:
       the session's tables are not written into it */
    q = write_file("window.sql", "CREATE PERFETTO VIEW top AS SELECT s.ts, s.dur, s.name, t.utid FROM slice s"
                                 " JOIN thread_track t ON s.track_id = t.id WHERE s.depth = 0 AND s.dur > 0;\n"
                                 "CREATE PERFETTO TABLE win AS SELECT 40000 AS ts, 20000 AS dur, 1 AS w;\n"
                                 "CREATE VIRTUAL TABLE cut USING SPAN_JOIN(win, top PARTITIONED utid);\n"
                                 "SELECT w, name, SUM(dur) AS ns FROM cut GROUP BY w, name ORDER BY name;\n");
    char db[600];
    snprintf(db, sizeof db, "%s/span.sqlite", dir());
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "--db '%s' '%s' -f '%s'", db, t, q);
        out = sql(NULL, args);
        CHECK_STR(out, "\n\n\n\"w\",\"name\",\"ns\"\n1,\"other\",5000\n1,\"outer\",20000\n"); /* 55-60 us, 40-60 */
        free(out);
    }
    snprintf(args, sizeof args, "--db '%s' '%s' 'SELECT COUNT(*) AS n FROM sqlite_schema WHERE name = \"cut\"'", db, t);
    out = sql(NULL, args);
    CHECK_STR(out, "\"n\"\n0\n");
    free(out);
    const struct {
        const char *query, *said;
    } errors[] = {
        {"CREATE VIRTUAL TABLE x USING SPAN_JOIN(slice)",
         "SPAN_JOIN takes two tables: SPAN_JOIN(t1 [PARTITIONED col], t2"},
        {"CREATE VIRTUAL TABLE x USING SPAN_JOIN(slice, nope)", "SPAN_JOIN: nope: no such table: nope"},
        {"CREATE VIRTUAL TABLE x USING SPAN_JOIN(slice, thread)", "SPAN_JOIN: thread needs the columns ts and dur"},
        {"CREATE VIRTUAL TABLE x USING SPAN_JOIN(slice PARTITIONED track_id, slice)",
         "SPAN_JOIN: column id is in both slice and slice (rename it in a view)"},
        {"CREATE VIRTUAL TABLE x USING SPAN_JOIN(slice PARTITIONED track_id, counter PARTITIONED id)",
         "SPAN_JOIN: the tables are partitioned by track_id and by id"},
        {"CREATE PERFETTO VIEW a AS SELECT ts, dur, track_id FROM slice;\n" /* was "vtable constructor failed" */
         "CREATE VIRTUAL TABLE x USING SPAN_JOIN(a, slice PARTITIONED track_id)",
         "SPAN_JOIN: column track_id of a is slice's partition (partition both by it, or rename it in a view)"},
        {"CREATE VIRTUAL TABLE x USING SPAN_JOIN(slice PARTITION track_id, counter)",
         "SPAN_JOIN: 'slice PARTITION track_id' is not TABLE or TABLE PARTITIONED COLUMN"},
        {"CREATE PERFETTO TABLE w AS SELECT 0 AS ts, 1000000 AS dur;\n"
         "CREATE VIRTUAL TABLE x USING SPAN_JOIN(slice PARTITIONED track_id, w); SELECT COUNT(*) FROM x",
         "SPAN_JOIN: slice's spans overlap (the one at ts 20000 begins before the one at 10000 ends in partition "
         "track_id 0): each table's spans must be apart"},
    };
    for (size_t k = 0; k < sizeof errors / sizeof *errors; k++) fails_saying(t, errors[k].query, errors[k].said);
}

/* ---- the prompt on a terminal (a pseudo-terminal, Ctrl-C typed into it) ---- */

typedef struct terminal {
    int fd;
    char seen[8192]; /* the output's end, past the last text found */
    size_t len;
} terminal;

/* Read the terminal until `text` is printed (true), or for at most a
 * minute, a guard against a hang that no busy machine reaches. */
static bool shows(terminal *t, const char *text) {
    size_t n = strlen(text);
    time_t give_up = time(NULL) + 60;
    for (;;) {
        t->seen[t->len] = '\0';
        char *at = strstr(t->seen, text);
        if (at) {
            t->len -= (size_t)(at + n - t->seen);
            memmove(t->seen, at + n, t->len + 1);
            return true;
        }
        if (t->len > sizeof t->seen / 2) { /* rows stream: the end kept, where text may begin */
            memmove(t->seen, t->seen + t->len - n, n);
            t->len = n;
        }
        struct pollfd p = {t->fd, POLLIN, 0};
        if (time(NULL) > give_up || poll(&p, 1, 1000) < 0) return false;
        ssize_t got = p.revents ? read(t->fd, t->seen + t->len, sizeof t->seen - 1 - t->len) : 0;
        if (got < 0 && errno != EINTR) return false;
        if (got > 0) t->len += (size_t)got;
    }
}

static void type(terminal *t, const char *keys) { CHECK(write(t->fd, keys, strlen(keys)) == (ssize_t)strlen(keys)); }

TEST_CASE(ctrl_c_on_a_terminal_stops_the_statement_not_the_shell) {
    const char *t = write_file("ok.json", MAPPING);
    char opprof[600];
    snprintf(opprof, sizeof opprof, "%s/opprof", bin_dir());
    terminal term = {0};
    pid_t pid = forkpty(&term.fd, NULL, NULL, NULL);
    if (pid == 0) {
        execl(opprof, "opprof", "sql", t, (char *)NULL);
        _exit(127);
    }
    CHECK(pid > 0);
    CHECK(shows(&term, "opprof> "));
    /* rows without end: once they print, the statement runs, and Ctrl-C stops it */
    type(&term, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c;\n");
    CHECK(shows(&term, "\r\n5000\r\n"));
    type(&term, "\x03");
    CHECK(shows(&term, "interrupted"));
    CHECK(shows(&term, "opprof> "));
    /* Ctrl-C while a statement is typed drops it */
    type(&term, "SELECT 6 *\n");
    CHECK(shows(&term, "   ...> "));
    type(&term, "\x03");
    CHECK(shows(&term, "opprof> "));
    type(&term, "SELECT 6 * 7 AS answer;\n");
    CHECK(shows(&term, "\r\n42\r\n")); /* the trace still loaded, the shell as it was */
    type(&term, "SELECT COUNT(*) AS n FROM slice;\n");
    CHECK(shows(&term, "\r\n7\r\n"));
    /* three in a row at the prompt: the shell ends as SIGINT ends it */
    for (int k = 0; k < 3; k++) {
        CHECK(shows(&term, "opprof> "));
        type(&term, "\x03");
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
    close(term.fd);
}

TEST_CASE(file_of_statements_and_prompt) {
    const char *t = write_file("ok.json", MAPPING);
    const char *q = write_file(
        "q.sql",
        "-- the slices of the worker\nSELECT name\n  FROM slice\n WHERE track_id = 0 AND dur > 0\n ORDER BY ts;\n");
    char args[1024];
    snprintf(args, sizeof args, "'%s' -f '%s'", t, q);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"name\"\n\"outer\"\n\"inner\"\n");
    free(out);
    char *shell = NULL;
    int st = run_commandf(
        &shell,
        "printf '.tables\\nSELECT COUNT(*)\\n  AS n FROM thread;\\n.mode list\\nSELECT 1 AS x;\\n.quit\\nSELECT 2;\\n'"
        " | '%s/opprof' sql '%s' 2>&1",
        bin_dir(), t);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(shell, "key_averages\n");
    CHECK_CONTAINS(shell, "\nslice\n");
    CHECK_CONTAINS(shell, "\"n\"\n3\n");
    CHECK_CONTAINS(shell, "x\n1\n");
    CHECK(strstr(shell, "2\n") == NULL || strstr(shell, "\"2\"") == NULL);
    free(shell);
    /* as sqlite3 reads a pipe: the session goes on past a failure, which makes the
       exit status 1, and the last statement runs without its ';' */
    st = run_commandf(&shell, "printf 'SELECT nope;\\n.mode table\\nSELECT 3 AS y' | '%s/opprof' sql '%s' 2>&1",
                      bin_dir(), t);
    CHECK_INT(st, 1);
    CHECK_CONTAINS(shell, "line 1: no such column: nope");
    CHECK_CONTAINS(shell, ".mode is csv, list, tabs, column, line or json, not 'table'");
    CHECK_CONTAINS(shell, "\"y\"\n3\n");
    free(shell);
    st = run_commandf(&shell, "printf 'SELECT 4 AS z;\\n-- the end\\n' | '%s/opprof' sql '%s' 2>/dev/null", bin_dir(),
                      t);
    CHECK_INT(st, 0);
    CHECK_STR(shell, "\"z\"\n4\n");
    free(shell);
}

/* Queries as Perfetto's documentation and its trace_processor tests write
 * them (the .sql files of test/trace_processor/ atrace, process_tracking,
 * graphics, parsing, track_event, metadata; docs/getting-started/android-trace-analysis.md;
 * the stdlib's modules), run unchanged: each must run on a trace of each producer. */
static const char *const PERFETTO_QUERIES[] = {
    "SELECT slice.ts, slice.dur, slice.name, slice.depth FROM slice JOIN thread_track ON (slice.track_id = "
    "thread_track.id) JOIN thread USING (utid) WHERE tid = 42;",
    "SELECT s.name, dur, tid, pid FROM slice s JOIN thread_track t ON s.track_id = t.id JOIN thread USING (utid) "
    "LEFT JOIN process USING (upid);",
    "SELECT utid, ts, dur, slice.name, flat_key, int_value, string_value FROM thread_track JOIN slice ON "
    "slice.track_id = thread_track.id JOIN args ON slice.arg_set_id = args.arg_set_id ORDER BY ts;",
    "SELECT thread.name AS thread_name, instant.name AS track_name, instant.ts FROM slice instant JOIN thread_track "
    "ON instant.track_id = thread_track.id JOIN thread USING (utid) WHERE dur = 0;",
    "SELECT ts, t.name, value, tid FROM counter c JOIN thread_counter_track t ON c.track_id = t.id JOIN thread "
    "USING (utid) ORDER BY ts;",
    "select track.name as track, process.name as process, thread.name as thread, thread_process.name as "
    "thread_process, slice.ts, slice.dur, slice.category, slice.name, args.key, args.string_value, args.int_value "
    "from slice left join track on slice.track_id = track.id left join process_track on slice.track_id = "
    "process_track.id left join process on process_track.upid = process.upid left join thread_track on "
    "slice.track_id = thread_track.id left join thread on thread_track.utid = thread.utid left join process "
    "thread_process on thread.upid = thread_process.upid left join args on slice.arg_set_id = args.arg_set_id "
    "order by ts asc;",
    "SELECT ts, dur, pid, slice.name as slice_name, process_track.name as track_name FROM slice INNER JOIN "
    "process_track ON slice.track_id = process_track.id INNER JOIN process USING (upid);",
    "SELECT * FROM slice WHERE name GLOB '*interesting_slice*' LIMIT 10;",
    "SELECT ts - TRACE_START() AS rel_ts, name FROM slice WHERE ts >= (SELECT start_ts FROM trace_bounds) AND ts <"
    " TRACE_END() LIMIT 5;",
    "SELECT name, COUNT(dur) AS count_slice, AVG(dur) / 1000000 AS avg_dur_ms, CAST(MAX(dur) AS DOUBLE) / 1000000 "
    "AS max_dur_ms, CAST(MIN(dur) AS DOUBLE) / 1000000 AS min_dur_ms, PERCENTILE(dur,50) / 1000000 AS P50_dur_ms, "
    "PERCENTILE(dur,90) / 1000000 AS P90_dur_ms, PERCENTILE(dur,99) / 1000000 AS P99_dur_ms FROM slice WHERE name "
    "REGEXP '.*aten.*' GROUP BY name ORDER BY count_slice DESC LIMIT 10;",
    /* the metadata test's and the trace_metadata metric's */
    "select name, str_value from metadata where name = \"trace_uuid\";",
    "SELECT int_value FROM metadata WHERE name = 'trace_size_bytes';",
    /* the standard library's modules that opprof has, as their documentation calls them */
    "INCLUDE PERFETTO MODULE slices.flat_slices; SELECT slice_id, ts, dur, depth, name, tid, thread_name, pid,"
    " process_name FROM _slice_flattened ORDER BY ts LIMIT 10;",
    "INCLUDE PERFETTO MODULE intervals.overlap; SELECT ts, value FROM intervals_overlap_count!(slice, ts, dur);",
    "INCLUDE PERFETTO MODULE counters.intervals; SELECT ts, dur, cast_int!(value) AS v, next_value, delta_value FROM"
    " counter_leading_intervals!((SELECT c.* FROM counter c JOIN counter_track t ON t.id = c.track_id)) AS cli"
    " JOIN counter_track AS t ON t.id = cli.track_id;",
    "INCLUDE PERFETTO MODULE linux.perf.samples; SELECT name, self_count, cumulative_count FROM"
    " linux_perf_samples_summary_tree ORDER BY cumulative_count DESC;",
};

TEST_CASE(perfetto_documented_queries_on_each_producer) {
    char own[600], cmd[2400], json[700];
    snprintf(own, sizeof own, "%s/own-4-steps", dir()); /* not key_averages_...'s, when one process runs both */
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --record-shapes '%s' > /dev/null 2>&1", bin_dir(), own);
    CHECK_INT(system(cmd), 0);
    snprintf(json, sizeof json, "%s/cpu-step-4.json", own);
    char src[6][700];
    const char *fixtures[] = {"pytorch-1.13/cpu-step-4.legacy.json",
                              "real-traces/hta__cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
                              "real-traces/hta__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
                              "onnxruntime-1.30/mlp.json",
                              "real-traces/catapult__flow.json.gz",
                              "real-traces/kineto__test__gpu_metrics_input.json.gz"};
    for (int k = 0; k < 6; k++) snprintf(src[k], sizeof src[k], "%s/tests/fixtures/%s", source_dir(), fixtures[k]);
    char mine[3][700]; /* write_file's paths are reused: copied */
    snprintf(mine[0], sizeof mine[0], "%s", write_file("mapping.json", MAPPING));
    snprintf(mine[1], sizeof mine[1], "%s", write_file("timeline.json", TF_TIMELINE));
    snprintf(mine[2], sizeof mine[2], "%s", write_file("trt.json", TRT_PROFILE));
    const char *traces[] = {json, src[0], src[1], src[2], src[3], src[4], src[5], mine[0], mine[1], mine[2]};
    for (size_t q = 0; q < sizeof PERFETTO_QUERIES / sizeof *PERFETTO_QUERIES; q++) {
        const char *path = write_file("q.sql", PERFETTO_QUERIES[q]);
        for (size_t t = 0; t < sizeof traces / sizeof *traces; t++) {
            char *out = NULL;
            int st = run_commandf(&out, "'%s/opprof' sql '%s' -f '%s' 2>&1 >/dev/null", bin_dir(), traces[t], path);
            if (st) fprintf(stderr, "query %zu on %s: exit %d: %s\n", q, traces[t], st, out ? out : "");
            CHECK_INT(st, 0);
            free(out);
        }
    }
    /* the aggregate on numbers known: PERCENTILE between the closest ranks, as numpy's default */
    char args[600];
    snprintf(args, sizeof args,
             "'%s' 'SELECT PERCENTILE(dur, 50) AS p50, PERCENTILE(dur, 90) AS p90 FROM slice WHERE dur > 0'",
             write_file("mapping.json", MAPPING));
    char *out = sql(NULL, args); /* 20, 30, 78, 100 us */
    CHECK_STR(out, "\"p50\",\"p90\"\n54000.000000,93400.000000\n");
    free(out);
}

TEST_CASE(ranks_on_one_clock) {
    /* rank 1's clock runs 5 us ahead of rank 0's (distributedInfo.clock_offset_ns, as opprof
     * measures it at start): its slice at "10 us" happened at rank 0's 5 us */
    char a[700], b[700], args[1600];
    snprintf(a, sizeof a, "%s",
             write_file("rank0.json",
                        "{\"distributedInfo\": {\"backend\": \"mpi\", \"rank\": 0, "
                        "\"world_size\": 2, \"clock_offset_ns\": 0}, \"traceEvents\": "
                        "[{\"ph\":\"X\",\"name\":\"allreduce\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":4}]}"));
    snprintf(b, sizeof b, "%s",
             write_file("rank1.json",
                        "{\"distributedInfo\": {\"backend\": \"mpi\", \"rank\": 1, "
                        "\"world_size\": 2, \"clock_offset_ns\": 5000}, \"traceEvents\": "
                        "[{\"ph\":\"X\",\"name\":\"allreduce\",\"pid\":2,\"tid\":1,\"ts\":10,\"dur\":4}]}"));
    snprintf(args, sizeof args,
             "'%s' '%s' 'SELECT t.rank, s.ts FROM slice s JOIN thread_track tt ON tt.id = s.track_id"
             " JOIN thread USING (utid) JOIN trace t ON t.id = thread.trace_id ORDER BY t.rank'",
             a, b);
    char *out = sql(NULL, args);
    CHECK_STR(out, "\"rank\",\"ts\"\n0,10000\n1,5000\n");
    free(out);
}

int main(int argc, char **argv) {
    int rc = check_main(argc, argv, "test_sql");
    if (g_dir[0]) remove_tree(g_dir);
    return rc;
}
