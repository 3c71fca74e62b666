/* test_cli.c - the opprof command as a user runs it: report, check, diff,
 * their exit codes, JSON outputs and errors. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>

#include <stdbool.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

static char dir[256];

static int run(char **out, const char *fmt, const char *a, const char *b) {
    char cmd[4096], args[3000];
    snprintf(args, sizeof args, fmt, a, b);
    snprintf(cmd, sizeof cmd, "'%s/opprof' %s", bin_dir(), args);
    return run_command(cmd, out);
}

static bool is_json(const char *text) {
    char err[256];
    yajl_val v = text ? yajl_tree_parse(text, err, sizeof err) : NULL;
    if (v) yajl_tree_free(v);
    return v != NULL;
}

/* Each case's directory: DIR/one, a capture of profile_cpu (and with two,
 * DIR/two, one on 2 threads); their traces' paths. */
typedef struct runs {
    char one[600], two[600], trace1[700], trace2[700];
} runs;

static void capture(runs *r, bool two) {
    char cmd[4096], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(r->one, sizeof r->one, "%s/one", dir);
    snprintf(r->two, sizeof r->two, "%s/two", dir);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet '%s'", bin_dir(), r->one);
    if (two)
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " && '%s/profile_cpu' --quiet --threads 2 '%s'",
                 bin_dir(), r->two);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    snprintf(r->trace1, sizeof r->trace1, "%s/cpu-step-4.json", r->one);
    snprintf(r->trace2, sizeof r->trace2, "%s/cpu-step-4.json", r->two);
}

/* report: the same tables as profile_cpu wrote, and its JSON. */
TEST_CASE(report_gives_the_tables_profile_cpu_wrote) {
    runs r;
    capture(&r, false);
    const char *trace1 = r.trace1, *one = r.one;
    char *out = NULL;
    char path[800];
    snprintf(path, sizeof path, "%s/cpu-step-4.time.txt", one);
    char *want = read_text(path);
    CHECK_INT(run(&out, "report --row-limit 12 '%s'%s", trace1, ""), 0);
    CHECK_STR(out, want);
    free(out);
    free(want);
    snprintf(path, sizeof path, "%s/cpu-step-4.memory.txt", one);
    want = read_text(path);
    CHECK_INT(run(&out, "report --memory --row-limit 12 '%s'%s", trace1, ""), 0);
    CHECK_STR(out, want);
    free(out);
    free(want);
    CHECK_INT(run(&out, "report --sort count --json '%s'%s", trace1, ""), 0);
    CHECK(is_json(out));
    CHECK_CONTAINS(out, "{\"name\": \"aten::linear\", \"self_cpu_percent\": "); /* the table's columns, in order */
    CHECK(out && strstr(out, "\"cpu_bytes\": 589824, \"self_cpu_bytes\": 0, \"calls\": 4, \"profiler_cost_us\": "));
    free(out);
    /* the table's options reach the rows: --flops, --peak-memory add their columns */
    CHECK_INT(run(&out, "report --json --flops --peak-memory '%s'%s", trace1, ""), 0);
    CHECK(is_json(out));
    CHECK(out && strstr(out, "{\"key\": \"peak_bytes\", \"title\": \"Peak Mem\"}") && strstr(out, "\"gflops\": "));
    free(out);
    remove_tree(dir);
}

/* check: a clean trace exits 0; problems exit 1; unreadable exits 2. */
TEST_CASE(check_exit_statuses) {
    runs r;
    capture(&r, false);
    const char *trace1 = r.trace1;
    char path[800], *out = NULL;
    CHECK_INT(run(&out, "check '%s'%s", trace1, ""), 0);
    CHECK_CONTAINS(out, "0 problem(s)");
    free(out);
    snprintf(path, sizeof path, "%s/odd.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": \"a\", \"ts\": 0, \"dur\": 10},\n"
          "{\"ph\": \"X\", \"name\": \"b\", \"ts\": 5, \"dur\": 10}\n]}\n",
          f);
    fclose(f);
    CHECK_INT(run(&out, "check '%s'%s", path, ""), 1);
    CHECK_CONTAINS(out, "odd.json:3:1: complete event 'b' overlaps 'a'");
    free(out);
    CHECK_INT(run(&out, "check --json '%s'%s", path, ""), 1);
    CHECK(is_json(out));
    CHECK_CONTAINS(out, "\"problem_count\": 1");
    free(out);
    f = fopen(path, "w");
    fputs("{\"traceEvents\": [\n{\"ph\": \"X\",", f);
    fclose(f);
    CHECK_INT(run(&out, "check '%s'%s", path, ""), 2);
    CHECK_CONTAINS(out, "odd.json:2:");
    CHECK_CONTAINS(out, "unexpected end of the file");
    free(out);
    CHECK_INT(run(&out, "check --json '%s'%s", path, ""), 2);
    CHECK(is_json(out));
    CHECK_CONTAINS(out, "\"readable\": false");
    free(out);
    CHECK_INT(run(&out, "report '%s/none.json'%s", dir, ""), 2);
    CHECK_CONTAINS(out, "none.json: no such file or directory");
    free(out);
    remove_tree(dir);
}

/* Events that cannot be read are said, never dropped silently; a trace of
 * which nothing could be read is an error (check lists every problem). */
TEST_CASE(unreadable_events_said) {
    char path[800], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/invalid.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": -5, \"pid\": 1, \"tid\": 1},\n"
          "{\"ph\": \"X\", \"name\": \"b\", \"ts\": 9, \"dur\": -1, \"pid\": 1, \"tid\": 1}]}\n",
          f);
    fclose(f);
    static const char *const commands[] = {"report", "stacks"};
    for (int i = 0; i < 2; i++) {
        CHECK_INT(run(&out, "%s '%s'", commands[i], path), 2);
        CHECK_CONTAINS(out, "invalid.json: 2 problem(s); the events concerned are left out (first: line 2, column 1: "
                            "complete event 'a' has a negative duration)");
        CHECK_CONTAINS(out, "invalid.json: no event could be read; run 'opprof check ");
        CHECK(strstr(out, "Self CPU time total") == NULL);
        free(out);
    }
    snprintf(path, sizeof path, "%s/partly.json", dir);
    f = fopen(path, "w");
    fputs("{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": \"good\", \"ts\": 1, \"dur\": 5, \"pid\": 1, \"tid\": 1},\n"
          "{\"ph\": \"X\", \"name\": \"bad\", \"ts\": 9, \"pid\": 1, \"tid\": 1}]}\n",
          f);
    fclose(f);
    CHECK_INT(run(&out, "report '%s'%s", path, ""), 0);
    CHECK_CONTAINS(out, "partly.json: 1 problem(s); the events concerned are left out (first: line 3, column 1: ");
    CHECK_CONTAINS(out, "run 'opprof check ");
    CHECK_CONTAINS(out, "good");
    free(out);
    remove_tree(dir);
}

/* diff: 1 thread against 2 threads; addmm changes the most (its GEMMs
 * split across the two cores). Another process on the machine can eat
 * the second core: the claim holds if one of three pairs of runs shows it. */
TEST_CASE(diff_of_one_thread_and_two) {
    runs r;
    capture(&r, true);
    const char *trace1 = r.trace1, *trace2 = r.trace2, *one = r.one, *two = r.two;
    char cmd[4096], *out = NULL;
    bool addmm_first = false;
    for (int attempt = 0; attempt < 3 && !addmm_first; attempt++) {
        if (attempt) {
            snprintf(cmd, sizeof cmd,
                     "rm -rf '%s' '%s' && '%s/profile_cpu' --quiet '%s' && '%s/profile_cpu' --quiet --threads 2 '%s'",
                     one, two, bin_dir(), one, bin_dir(), two);
            CHECK_INT(run_command(cmd, &out), 0);
            free(out);
        }
        CHECK_INT(run(&out, "diff --json '%s' '%s'", trace1, trace2), 0);
        CHECK(is_json(out));
        char *first = out ? strstr(out, "\"name\": ") : NULL;
        addmm_first = first && strncmp(first, "\"name\": \"aten::addmm\"", 21) == 0;
        free(out);
    }
    CHECK(addmm_first);
    CHECK_INT(run(&out, "diff '%s' '%s'", trace1, trace2), 0);
    CHECK_CONTAINS(out, "Self CPU time total:");
    free(out);
    CHECK_INT(run(&out, "diff '%s'%s", trace1, ""), 64);
    CHECK_CONTAINS(out, "diff takes two traces");
    free(out);
    remove_tree(dir);
}

/* A directory, as record and profile_cpu print where their capture went:
 * one that holds one trace reads as that trace (it said "is a directory");
 * one of several is an error that counts them and names what takes them
 * all, one of none says so; opprof sql loads every trace of a directory. */
TEST_CASE(a_directory_read_as_its_traces) {
    runs r;
    capture(&r, true);
    char *out = NULL, *want = NULL;
    CHECK_INT(run(&out, "report '%s'%s", r.trace1, ""), 0);
    CHECK_INT(run(&want, "report '%s'%s", r.one, ""), 0);
    CHECK_CONTAINS(out, "aten::addmm");
    CHECK_STR(want, out);
    free(out);
    free(want);
    CHECK_INT(run(&out, "report '%s' 2>&1%s", dir, ""), 2);
    CHECK_CONTAINS(out, ": a directory of 2 traces (");
    CHECK_CONTAINS(out, "one/cpu-step-4.json ... ");
    CHECK_CONTAINS(out, "two/cpu-step-4.json): name one; opprof sql, merge and diff --stat take a directory whole");
    free(out);
    char empty[400];
    snprintf(empty, sizeof empty, "%s/empty", dir);
    CHECK(mkdir(empty, 0777) == 0);
    CHECK_INT(run(&out, "check '%s' 2>&1%s", empty, ""), 2);
    CHECK_CONTAINS(out, "empty has no trace");
    free(out);
    CHECK_INT(run(&out,
                  "sql '%s' 'SELECT COUNT(*) AS n, MIN(file) LIKE \"%%/one/cpu-step-4.json\" AS first FROM trace'", dir,
                  ""),
              0);
    CHECK_STR(out, "\"n\",\"first\"\n2,1\n");
    free(out);
    CHECK_INT(run(&out, "sql '%s' '%s' 'SELECT COUNT(*) AS n FROM trace' 2>&1", empty, r.trace1), 2);
    CHECK_CONTAINS(out, "empty has no trace");
    free(out);
    /* merge: the ranks of a run's directory */
    CHECK_INT(run(&out, "merge '%s' -o '%s/merged.json' 2>&1", dir, dir), 0);
    CHECK_CONTAINS(out, "opprof: 2 traces, ");
    free(out);
    CHECK_INT(run(&out, "merge '%s' '%s' -o merged2.json 2>&1", r.trace1, empty), 2);
    CHECK_CONTAINS(out, "empty has no trace");
    free(out);
    remove_tree(dir);
}

/* "-" is standard input, as for every Unix tool (`zcat t.json.gz | opprof
 * report -`); it was "no such file or directory". A pipe is read once:
 * merge, which reads each input twice, says so and writes nothing, and
 * `sql --db` never takes a pipe's kept database for the next pipe's trace. */
static int run_piped(char **out, const char *trace, const char *args) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cat '%s' | '%s/opprof' %s", trace, bin_dir(), args);
    return run_command(cmd, out);
}

TEST_CASE(standard_input_named_by_a_dash) {
    runs r;
    capture(&r, true);
    char *out = NULL, *want = NULL, args[1400];
    CHECK_INT(run(&want, "report '%s' 2>/dev/null%s", r.trace1, ""), 0);
    CHECK_INT(run_piped(&out, r.trace1, "report - 2>/dev/null"), 0);
    CHECK_CONTAINS(out, "aten::addmm");
    CHECK_STR(out, want);
    free(out);
    free(want);
    CHECK_INT(run_piped(&out, r.trace1, "check -"), 0);
    CHECK_CONTAINS(out, "/dev/stdin: ");
    free(out);
    const char *count = "sql - 'SELECT COUNT(*) FROM slice WHERE name = \"aten::addmm\"'";
    CHECK_INT(run(&want, "sql '%s' 'SELECT COUNT(*) FROM slice WHERE name = \"aten::addmm\"'%s", r.trace1, ""), 0);
    CHECK_INT(run_piped(&out, r.trace1, count), 0);
    CHECK_STR(out, want);
    free(out);
    free(want);
    /* --db over a pipe, twice with other traces: each answer its own */
    const char *slices = "SELECT SUM(dur) FROM slice";
    char *one = NULL, *two = NULL;
    CHECK_INT(run(&want, "sql '%s' '%s'", r.trace2, slices), 0);
    snprintf(args, sizeof args, "sql --db '%s/piped.db' - '%s' 2>/dev/null", dir, slices);
    CHECK_INT(run_piped(&one, r.trace1, args), 0);
    CHECK_INT(run_piped(&two, r.trace2, args), 0);
    CHECK_STR(two, want);
    CHECK(one && two && strcmp(one, two) != 0);
    free(one);
    free(two);
    free(want);
    snprintf(args, sizeof args, "merge - '%s' -o '%s/merged.json' 2>&1", r.trace2, dir);
    CHECK_INT(run_piped(&out, r.trace1, args), 2);
    CHECK_CONTAINS(out, "/dev/stdin: not a file (a pipe or a device): merge reads each trace twice");
    free(out);
    CHECK_INT(run(&out, "check '%s/merged.json' 2>&1%s", dir, ""), 2); /* nothing written */
    free(out);
    remove_tree(dir);
}

/* usage, the help, and options refused or said */
TEST_CASE(usage_and_options) {
    runs r;
    capture(&r, false);
    const char *trace1 = r.trace1;
    char *out = NULL;
    CHECK_INT(run(&out, "--help%s%s", "", ""), 0);
    CHECK_CONTAINS(out, "usage: opprof COMMAND");
    free(out);
    CHECK_INT(run(&out, "report --help%s%s", "", ""), 0);
    CHECK_CONTAINS(out, "--row-limit");
    free(out);
    CHECK_INT(run(&out, "frobnicate%s%s", "", ""), 64);
    CHECK_CONTAINS(out, "unknown command 'frobnicate'");
    free(out);
    CHECK_INT(run(&out, "report --sort fastest '%s'%s", trace1, ""), 64);
    CHECK_CONTAINS(out, "unknown sort key 'fastest'");
    free(out);
    /* the help names every sort key the table knows, and each one works */
    CHECK_INT(run(&out, "report --help%s%s", "", ""), 0);
    for (int k = OPPROF_SORT_SELF_CPU_TIME; k <= OPPROF_SORT_DEVICE_MEMORY; k++) {
        const char *key = opprof_sort_key_name((opprof_sort_key)k);
        CHECK(key && *key && out && strstr(out, key));
        char *rows = NULL;
        CHECK_INT(run(&rows, "report --sort %s '%s'", key, trace1), 0);
        free(rows);
    }
    free(out);
    CHECK_INT(run(&out, "report --row-limit many '%s'%s", trace1, ""), 64);
    free(out);
    /* --group-by node on a trace that has no nodes: said, the table by name */
    CHECK_INT(run(&out, "report --group-by node '%s'%s", trace1, ""), 0);
    CHECK_CONTAINS(out, "--group-by node applies to ONNX Runtime's profiles");
    CHECK_CONTAINS(out, "this trace was written by opprof");
    free(out);
    /* --group-by layer on a trace whose operators name no layer's tensor: said, the table by name */
    CHECK_INT(run(&out, "report --group-by layer '%s'%s", trace1, ""), 0);
    CHECK_CONTAINS(out, "--group-by layer: no operator of this trace names a layer's tensor");
    CHECK(out && !strstr(out, "Layer"));
    free(out);
    CHECK_INT(run(&out, "report --group-by tensor '%s'%s", trace1, ""), 64);
    CHECK_CONTAINS(out, "--group-by takes 'node' (an ONNX Runtime profile's nodes) or 'layer'");
    free(out);

    remove_tree(dir);
}

/* One list gives each option's parser, help line and synopsis (tools/options.h):
 * a letter and a long name alike, an optional argument, a missing one said. */
TEST_CASE(options_from_their_list) {
    runs r;
    capture(&r, false);
    char *out = NULL;
    CHECK_INT(run(&out, "help merge%s%s", "", ""), 0);
    CHECK_CONTAINS(out, "usage: opprof merge TRACE... [-o OUT]\n");
    CHECK_CONTAINS(out, "  -o, --output OUT  the merged trace");
    free(out);
    char merged[800];
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    CHECK_INT(run(&out, "merge '%s' --output '%s'", r.trace1, merged), 0);
    free(out);
    CHECK_INT(run(&out, "check '%s'%s", merged, ""), 0);
    free(out);
    CHECK_INT(run(&out, "help record%s%s", "", ""), 0);
    CHECK_CONTAINS(out, "[--sample[=HZ[,dwarf]]]");
    CHECK_CONTAINS(out, "-- CMD [ARGS...]");
    free(out);
    CHECK_INT(run(&out, "report --row-limit%s%s", "", ""), 64); /* its argument missing: getopt says so */
    CHECK_CONTAINS(out, "option '--row-limit' requires an argument");
    free(out);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' -h", bin_dir());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "usage: profile_cpu [--threads N]");
    CHECK_CONTAINS(out, "  -h, --help ");
    free(out);
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_cli"); }
