/* test_instrumented.c - a program built with -finstrument-functions that also
 * uses the recording macros (instrumented_engine): under `opprof record
 * --functions` its functions and its ranges make one tree, with no warning and
 * no row of opprof's own helpers; with OPPROF_TRACE alone (glibc's hooks do
 * nothing) its ranges are exactly those of the program; and `opprof record
 * --functions` of a program built without the flag says which flag it needs. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>

#include <stdlib.h>
#include <unistd.h>

static const char *engine(void) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/../tests/instrumented_engine", bin_dir());
    return path;
}

/* The capture that `opprof record` or OPPROF_TRACE wrote into DIR. */
static opprof_capture *capture_in(const char *dir) {
    char path[700];
    snprintf(path, sizeof path, "%s/trace-step-0.json", dir);
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &c, &err), 0);
    return c;
}

typedef struct tally {
    int token, layer, forward, matmul, main_fn, opprof_rows, steps;
    int layer_fn, range_in_function, layer_in_forward, forward_in_token, matmul_in_layer;
} tally;

static const char *name_of(const opprof_capture *c, const opprof_event *events, int64_t i) {
    return i < 0 ? "" : opprof_capture_name(c, events[i].name);
}

static tally count(const opprof_capture *c) {
    tally t = {0};
    size_t n = 0;
    const opprof_event *ev = opprof_capture_events(c, &n);
    for (size_t i = 0; i < n; i++) {
        const char *name = opprof_capture_name(c, ev[i].name), *parent = name_of(c, ev, ev[i].parent);
        t.opprof_rows += strncmp(name, "opprof", 6) == 0;
        if (!strcmp(name, "token")) t.token++;
        if (!strcmp(name, "main")) t.main_fn++;
        t.steps += strncmp(name, "ProfilerStep#", 13) == 0;
        if (!strcmp(name, "nn::layer")) t.layer++, t.range_in_function += !strcmp(parent, "layer");
        if (!strcmp(name, "layer")) t.layer_fn++, t.layer_in_forward += !strcmp(parent, "forward");
        if (!strcmp(name, "forward")) t.forward++, t.forward_in_token += !strcmp(parent, "token");
        if (!strcmp(name, "matmul")) t.matmul++, t.matmul_in_layer += !strcmp(parent, "nn::layer");
    }
    return t;
}

TEST_CASE(functions_and_ranges_one_tree) {
    char dir[256], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/run' -- '%s'", bin_dir(), dir, engine());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "done 8"); /* the program ran as without opprof */
    CHECK(out && !strstr(out, "Warnings:") && !strstr(out, "opprof record: --functions"));
    CHECK_CONTAINS(out, "GFLOP/s"); /* opprof record's table shows the FLOPs the program stated */
    free(out);
    snprintf(cmd, sizeof cmd, "%s/run", dir);
    opprof_capture *c = capture_in(cmd);
    if (c) {
        size_t warnings = 9;
        opprof_capture_warnings(c, &warnings);
        CHECK_INT(warnings, 0);
        tally t = count(c);
        CHECK_INT(t.opprof_rows, 0); /* no opprof__range_begin, opprof__mark... */
        CHECK_INT(t.token, 8);
        CHECK_INT(t.layer, 8 * 3);
        CHECK_INT(t.forward, 8);
        CHECK_INT(t.matmul, 8 * 3 * 2);
        CHECK_INT(t.main_fn, 1);
        CHECK_INT(t.forward_in_token, 8); /* nested right: token > forward > layer > matmul */
        CHECK_INT(t.layer_in_forward, 8 * 3);
        CHECK_INT(t.matmul_in_layer, 8 * 3 * 2);
        size_t marks = 0;
        opprof_capture_marks(c, &marks);
        CHECK_INT(marks, 8 * 2 + 24 * 2); /* per token: a counter, an instant; per layer: an argument, FLOPs */
    }
    opprof_capture_free(c);
    remove_tree(dir);
}

TEST_CASE(ranges_alone_as_without_the_flag) {
    char dir[256], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(cmd, sizeof cmd, "OPPROF_TRACE='%s/run' '%s'", dir, engine());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "done 8");
    free(out);
    snprintf(cmd, sizeof cmd, "%s/run", dir);
    opprof_capture *c = capture_in(cmd);
    if (c) {
        size_t warnings = 9, n = 0;
        opprof_capture_warnings(c, &warnings);
        CHECK_INT(warnings, 0);
        tally t = count(c);
        opprof_capture_events(c, &n);
        CHECK_INT(t.token, 8);
        CHECK_INT(t.layer, 24);
        CHECK_INT(t.forward + t.matmul + t.main_fn + t.opprof_rows, 0);
        CHECK_INT(t.steps, 1);
        CHECK_INT(n, 8 + 24 + 1); /* nothing but the program's ranges, in its one step */
    }
    opprof_capture_free(c);
    /* its tables and report show the FLOPs it stated, and no memory column (it recorded none) */
    snprintf(cmd, sizeof cmd, "%s/run/trace-step-0.time.txt", dir);
    char *table = read_text(cmd);
    CHECK_CONTAINS(table, "GFLOP/s");
    CHECK(table && !strstr(table, "CPU Mem"));
    free(table);
    snprintf(cmd, sizeof cmd, "%s/run/trace-step-0.html", dir);
    char *page = read_text(cmd);
    CHECK_CONTAINS(page, "GFLOP/s");
    CHECK(page && !strstr(page, "CPU Mem"));
    free(page);
    /* diff: FLOPs before and after, no memory */
    snprintf(cmd, sizeof cmd, "'%s/opprof' diff '%s/run/trace-step-0.json' '%s/run/trace-step-0.json'", bin_dir(), dir,
             dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "FLOPs before");
    CHECK(out && !strstr(out, "Self Mem"));
    free(out);
    remove_tree(dir);
}

TEST_CASE(record_says_the_flag) {
    char dir[256], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    /* profile_cpu is built without -finstrument-functions */
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/run' -- '%s/profile_cpu' --quiet '%s/out'",
             bin_dir(), dir, bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "opprof record: --functions: the program called no instrumented function");
    CHECK_CONTAINS(out, "-finstrument-functions");
    free(out);
    /* and a program that never allocates through malloc (true): --memory says so */
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --memory -o '%s/run2' -- /bin/true", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "opprof record: --memory: the program allocated nothing through malloc");
    free(out);
    /* a program that did allocate hears nothing of it */
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --memory -o '%s/run3' -- '%s'", bin_dir(), dir, engine());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK(out && !strstr(out, "allocated nothing"));
    free(out);
    remove_tree(dir);
}

/* The exit's work, chosen: no HTML, a gzip trace of the longest ranges only;
 * the tables still count every call. */
TEST_CASE(exit_outputs_chosen) {
    char dir[256], cmd[2048], path[700], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions --no-html --gzip --max-events 20 -o '%s/run' -- '%s'",
             bin_dir(), dir, engine());
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/run/trace-step-0.html", dir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/run/trace-step-0.json", dir);
    CHECK(access(path, F_OK) != 0); /* the trace is the .gz one */
    snprintf(path, sizeof path, "%s/run/trace-step-0.json.gz", dir);
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &c, &err), 0);
    if (c) {
        size_t n = 0, warnings = 0;
        opprof_capture_events(c, &n);
        const char *const *w = opprof_capture_warnings(c, &warnings);
        CHECK(n >= 1 && n <= 20);
        CHECK_INT(warnings, 1);
        CHECK(warnings && strstr(w[0], "longest of 114 ranges"));
    }
    opprof_capture_free(c);
    snprintf(path, sizeof path, "%s/run/trace-step-0.time.txt", dir);
    char *table = read_text(path);
    CHECK(table && strstr(table, "matmul") && strstr(table, "48")); /* every call counted */
    free(table);
    /* OPPROF_OUTPUTS of an OPPROF_TRACE program: said when wrong, all written then */
    snprintf(cmd, sizeof cmd, "OPPROF_OUTPUTS=trace,pdf OPPROF_TRACE='%s/bad' '%s'", dir, engine());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(
        out,
        "OPPROF_OUTPUTS='trace,pdf' ignored: not a list of trace, tables, html, perfetto; writing trace, tables, html");
    free(out);
    snprintf(path, sizeof path, "%s/bad/trace-step-0.html", dir);
    CHECK(access(path, F_OK) == 0);
    /* and opprof record's own checks */
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --outputs trace,pdf -o '%s/x' -- true", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "--outputs takes a list of trace, tables, html, perfetto, not 'trace,pdf'");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --max-events 0 -o '%s/x' -- true", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "--max-events takes a number >= 1, not '0'");
    free(out);
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_instrumented"); }
