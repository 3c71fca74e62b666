/* test_producers.c - each producer's trace read as its producer means it:
 * PyTorch's duplicate-node merge for PyTorch's traces only (recursion kept
 * in every other writer's, in B/E and in X events), the producer named, and
 * the lenient forms that Perfetto's importer takes (a bare array left open,
 * a trailing comma, times written as strings) read with a warning each,
 * while a JSON file that is no trace is refused. The expected rows are
 * worked out by hand from the trace-event format's meaning. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <stdlib.h>

/* The row named `key`: calls, self and total in ns; 0 when found. */
static int row_of(const opprof_capture *c, const char *key, int64_t *calls, int64_t *self_ns, int64_t *total_ns) {
    opprof_averages *avg = NULL;
    if (opprof_capture_averages(c, &avg)) return -1;
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    int rc = -1;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].key, key)) {
            *calls = rows[i].calls, *self_ns = rows[i].self_ns, *total_ns = rows[i].total_ns;
            rc = 0;
        }
    opprof_averages_free(avg);
    return rc;
}

static opprof_capture *read_trace_text(const char *text) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    int rc = opprof_capture_read_buffer(text, strlen(text), NULL, &c, &err);
    if (rc) fprintf(stderr, "read: %s\n", err.message);
    return rc ? NULL : c;
}

/* factorial(3) -> factorial(2) -> factorial(1), as uftrace's B/E events. */
static const char RECURSION_BE[] = "{\"traceEvents\": [\n"
                                   "{\"ph\": \"B\", \"name\": \"factorial\", \"pid\": 1, \"tid\": 1, \"ts\": 0},\n"
                                   "{\"ph\": \"B\", \"name\": \"factorial\", \"pid\": 1, \"tid\": 1, \"ts\": 10},\n"
                                   "{\"ph\": \"B\", \"name\": \"factorial\", \"pid\": 1, \"tid\": 1, \"ts\": 20},\n"
                                   "{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 30},\n"
                                   "{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 40},\n"
                                   "{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 50}\n"
                                   "]}\n";

TEST_CASE(recursion_kept_in_begin_end) {
    opprof_capture *c = read_trace_text(RECURSION_BE);
    CHECK(c != NULL);
    if (!c) return;
    CHECK_INT(opprof_capture_get_info(c).producer, OPPROF_PRODUCER_OTHER);
    int64_t calls = 0, self = 0, total = 0;
    CHECK_INT(row_of(c, "factorial", &calls, &self, &total), 0);
    CHECK_INT(calls, 3);
    CHECK_INT(self, 50000);                  /* 20 + 20 + 10 us: the whole span once */
    CHECK_INT(total, 50000 + 30000 + 10000); /* each call's own duration */
    opprof_capture_free(c);
}

/* The same nesting as complete events, in a writer's trace (clang's
 * -ftime-trace style: "X" with a category of its own). */
static const char RECURSION_X[] =
    "{\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"Frontend\", \"name\": \"Source\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 100},\n"
    "{\"ph\": \"X\", \"cat\": \"Frontend\", \"name\": \"Source\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 50},\n"
    "{\"ph\": \"X\", \"cat\": \"Frontend\", \"name\": \"Parse\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 5}\n"
    "]}\n";

TEST_CASE(same_name_nesting_kept_in_complete_events) {
    opprof_capture *c = read_trace_text(RECURSION_X);
    CHECK(c != NULL);
    if (!c) return;
    int64_t calls = 0, self = 0, total = 0;
    CHECK_INT(row_of(c, "Source", &calls, &self, &total), 0);
    CHECK_INT(calls, 2);
    CHECK_INT(total, 150000);
    CHECK_INT(self, 50000 + 45000); /* outer 100 - 50, inner 50 - 5 */
    opprof_capture_free(c);
}

/* The same shape in a Kineto trace: PyTorch's rule merges the only child
 * named as its parent (torch.autograd's _remove_dup_nodes). */
static const char KINETO_DUP[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 100},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 50}\n"
    "]}\n";

TEST_CASE(pytorch_merges_its_duplicate_nodes) {
    opprof_capture *c = read_trace_text(KINETO_DUP);
    CHECK(c != NULL);
    if (!c) return;
    CHECK_INT(opprof_capture_get_info(c).producer, OPPROF_PRODUCER_KINETO);
    int64_t calls = 0, self = 0, total = 0;
    CHECK_INT(row_of(c, "aten::linear", &calls, &self, &total), 0);
    CHECK_INT(calls, 1);
    CHECK_INT(total, 100000);
    opprof_capture_free(c);
    /* PyTorch's legacy exporter: "pid": "CPU functions", no category */
    c = read_trace_text(
        "[{\"name\": \"aten::add\", \"ph\": \"X\", \"ts\": 1, \"dur\": 9, \"tid\": 1, \"pid\": \"CPU functions\"},"
        "{\"name\": \"aten::add\", \"ph\": \"X\", \"ts\": 2, \"dur\": 3, \"tid\": 1, \"pid\": \"CPU functions\"}]");
    CHECK(c != NULL);
    if (!c) return;
    CHECK_INT(opprof_capture_get_info(c).producer, OPPROF_PRODUCER_PYTORCH_LEGACY);
    CHECK_INT(row_of(c, "aten::add", &calls, &self, &total), 0);
    CHECK_INT(calls, 1);
    CHECK_STR(opprof_producer_name(OPPROF_PRODUCER_PYTORCH_LEGACY), "PyTorch (legacy exporter)");
    opprof_capture_free(c);
}

/* The device row named `key` (device time in ns, calls), or -1. */
static int device_row(const opprof_capture *c, const char *key, int64_t *calls, int64_t *device_ns, int *rows) {
    opprof_averages *avg = NULL;
    if (opprof_capture_averages(c, &avg)) return -1;
    size_t n;
    const opprof_average_row *r = opprof_averages_rows(avg, &n);
    int rc = -1;
    *rows = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].device && !strcmp(r[i].key, key)) {
            *calls = r[i].calls, *device_ns = r[i].self_device_ns;
            ++*rows;
            rc = 0;
        }
    opprof_averages_free(avg);
    return rc;
}

/* Device side by process and by category: a runtime call written on a
 * process labelled "MTIA 17" is a device row, as is CUPTI's
 * cuda_profiler_range; GPU-side ProfilerStep#N rows are renamed before they
 * are grouped (one row, 3 calls). */
static const char DEVICES[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 17, \"args\": {\"name\": \"MTIA 17\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"mtia_runtime\", \"name\": \"synchronize\", \"pid\": 17, \"tid\": 108, \"ts\": 0, "
    "\"dur\": 40},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 30},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_profiler_range\", \"name\": \"range_0\", \"pid\": 0, \"tid\": 7, \"ts\": 5, "
    "\"dur\": 9},\n"
    "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 0, \"dur\": 10},\n"
    "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#2\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 10, \"dur\": 10},\n"
    "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 20, \"dur\": 10}\n"
    "]}\n";

TEST_CASE(device_side_by_process_and_category) {
    opprof_capture *c = read_trace_text(DEVICES);
    CHECK(c != NULL);
    if (!c) return;
    int64_t calls = 0, ns = 0, self = 0, total = 0;
    int rows = 0;
    CHECK_INT(device_row(c, "synchronize", &calls, &ns, &rows), 0);
    CHECK_INT(ns, 40000);
    CHECK(row_of(c, "synchronize", &calls, &self, &total) != 0 || self == 0); /* no CPU time */
    CHECK_INT(device_row(c, "range_0", &calls, &ns, &rows), 0);
    CHECK_INT(ns, 9000);
    CHECK_INT(device_row(c, "ProfilerStep*", &calls, &ns, &rows), 0);
    CHECK_INT(rows, 1);
    CHECK_INT(calls, 3);
    CHECK_INT(row_of(c, "aten::mm", &calls, &self, &total), 0);
    CHECK_INT(self, 30000); /* the CPU's only row with CPU time */
    size_t nt;
    const opprof_thread_info *threads = opprof_capture_threads(c, &nt);
    bool mtia_is_device = false;
    for (size_t i = 0; i < nt; i++)
        if (threads[i].pid == 17) mtia_is_device = threads[i].device;
    CHECK(mtia_is_device);
    opprof_capture_free(c);
}

/* The warning the lenient read left, or "". */
static const char *only_warning(const opprof_capture *c) {
    size_t n;
    const char *const *w = opprof_capture_warnings(c, &n);
    return n == 1 ? w[0] : "";
}

TEST_CASE(lenient_forms_read_with_a_warning) {
    /* a bare array whose writer stopped (no ']'), after a comma too */
    opprof_capture *c =
        read_trace_text("[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2},\n");
    CHECK(c != NULL);
    if (c)
        CHECK_STR(only_warning(c), "line 2: the event array has no closing ']' (a writer that stopped early): "
                                   "read to the end");
    opprof_capture_free(c);
    c = read_trace_text("[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}");
    CHECK(c != NULL);
    opprof_capture_free(c);
    /* a trailing comma */
    c = read_trace_text(
        "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2},\n]}");
    CHECK(c != NULL);
    if (c) CHECK_STR(only_warning(c), "line 1: a comma before the event array's ']' (a trailing comma): ignored");
    opprof_capture_free(c);
    /* times as strings (Hermes): read exactly */
    c = read_trace_text(
        "{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": \"1.5\", "
        "\"dur\": \"2.25\"}]}");
    CHECK(c != NULL);
    if (c) {
        size_t n;
        const opprof_event *ev = opprof_capture_events(c, &n);
        CHECK_INT(n, 1);
        if (n) CHECK_INT(ev[0].duration_ns, 2250);
        CHECK_STR(only_warning(c),
                  "2 time(s) (\"ts\", \"dur\") written as strings were read as numbers (first: line 2)");
    }
    opprof_capture_free(c);
    /* malformed otherwise: the precise error stays */
    opprof_read_error err;
    const char *cut = "[{\"ph\": \"X\", \"name\": \"a\", \"pi";
    CHECK_INT(opprof_capture_read_buffer(cut, strlen(cut), NULL, &c, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "unexpected end of the file");
    const char *open_object = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
                              "\"dur\": 2},\n";
    CHECK_INT(opprof_capture_read_buffer(open_object, strlen(open_object), NULL, &c, &err), OPPROF_EFORMAT);
    const char *not_number = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": \"soon\", \"dur\": 2}]}";
    c = read_trace_text(not_number); /* read; the event is a problem, left out */
    if (c) {
        size_t n;
        opprof_capture_events(c, &n);
        CHECK_INT(n, 0);
    }
    opprof_capture_free(c);
}

/* The commands: exit codes, the warnings' texts, the producer, check's list. */
TEST_CASE(commands_say_it) {
    char dir[256], path[512], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/open.json", dir);
    FILE *f = fopen(path, "w");
    fputs("[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2},\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/opprof' report '%s'", bin_dir(), path);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "written by another trace-event writer, read by its rules");
    CHECK_CONTAINS(out, "1 warning(s):\n  - line 2: the event array has no closing ']'");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' report --json '%s' 2>/dev/null", bin_dir(), path);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "\"producer\": \"another trace-event writer\"");
    CHECK_CONTAINS(out, "\"warnings\": [\n    \"line 2: the event array has no closing ']'");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' check '%s'", bin_dir(), path);
    CHECK_INT(run_command(cmd, &out), 1); /* check lists the lenient place */
    CHECK_CONTAINS(out, "open.json:2:1: the event array has no closing ']'");
    free(out);
    /* a profiler's own JSON that is no trace: exit 2, saying why */
    snprintf(path, sizeof path, "%s/profile.json", dir);
    f = fopen(path, "w");
    fputs("{\"version\": 1, \"samples\": [1, 2, 3]}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/opprof' report '%s'", bin_dir(), path);
    CHECK_INT(run_command(cmd, &out), 2);
    CHECK_CONTAINS(out, "not a trace: the object has no \"traceEvents\" array");
    free(out);
    remove_tree(dir);
}

/* Another writer's counters, instants, flows and async ranges written again
 * by convert (and merge into .pftrace): none lost, its arguments not made
 * opprof's (a "bytes" argument stays out of the tables); what convert cannot
 * write (legacy async "S"/"F") is said as not written again. */
static const char FOREIGN_MARKS[] =
    "{\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"name\": \"copy\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 10, \"args\": {\"bytes\": 640}},\n"
    "{\"ph\": \"C\", \"name\": \"cpu\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"args\": {\"user\": 3, \"sys\": 1}},\n"
    "{\"ph\": \"i\", \"name\": \"tick\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"s\": \"t\"},\n"
    "{\"ph\": \"s\", \"name\": \"hop\", \"id\": 7, \"pid\": 1, \"tid\": 1, \"ts\": 3},\n"
    "{\"ph\": \"f\", \"name\": \"hop\", \"id\": 7, \"bp\": \"e\", \"pid\": 1, \"tid\": 1, \"ts\": 5},\n"
    "{\"ph\": \"b\", \"name\": \"load\", \"id\": 9, \"cat\": \"io\", \"pid\": 1, \"tid\": 1, \"ts\": 4},\n"
    "{\"ph\": \"e\", \"name\": \"load\", \"id\": 9, \"cat\": \"io\", \"pid\": 1, \"tid\": 1, \"ts\": 8},\n"
    "{\"ph\": \"S\", \"name\": \"old\", \"id\": 5, \"pid\": 1, \"tid\": 1, \"ts\": 4},\n"
    "{\"ph\": \"F\", \"name\": \"old\", \"id\": 5, \"pid\": 1, \"tid\": 1, \"ts\": 9}\n"
    "]}\n";

TEST_CASE(convert_keeps_another_writers_marks) {
    char dir[256], path[512], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/in.json", dir);
    FILE *f = fopen(path, "w");
    fputs(FOREIGN_MARKS, f);
    fclose(f);
    CHECK_INT(run_commandf(&out, "'%s/opprof' convert '%s' '%s/out.json'", bin_dir(), path, dir), 0);
    CHECK_CONTAINS(out, "in.json: not written again: 2 async events (b/n/e, S/T/p/F)");
    free(out);
    CHECK_INT(run_commandf(&out, "cat '%s/out.json'", dir), 0);
    CHECK_CONTAINS(out, "{\"ph\":\"C\",\"cat\":\"counter\",\"name\":\"cpu user\"");
    CHECK_CONTAINS(out, "\"args\":{\"cpu user\":3}");
    CHECK_CONTAINS(out, "\"args\":{\"cpu sys\":1}");
    CHECK_CONTAINS(out, "{\"ph\":\"i\",\"cat\":\"instant\",\"s\":\"t\",\"name\":\"tick\"");
    CHECK_CONTAINS(out, "{\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"hop\",\"id\":7");
    CHECK_CONTAINS(out, "{\"ph\":\"f\",\"cat\":\"flow\",\"bp\":\"e\",\"name\":\"hop\",\"id\":7");
    CHECK_CONTAINS(out, "{\"ph\":\"b\",\"cat\":\"async\",\"name\":\"load\",\"id\":9");
    CHECK_CONTAINS(out, "{\"ph\":\"e\",\"cat\":\"async\",\"name\":\"load\",\"id\":9");
    CHECK(out && !strstr(out, "\"bytes\""));
    free(out);
    /* read again, the same rows: no FLOPs or bytes column from the writer's "bytes" */
    CHECK_INT(run_commandf(&out, "'%s/opprof' report '%s/out.json' 2>&1", bin_dir(), dir), 0);
    CHECK_CONTAINS(out, "copy");
    CHECK(out && !strstr(out, "GB/s"));
    free(out);
    remove_tree(dir);
}

/* Begins never ended (a trace cut while they ran): read to the trace's end
 * as Chrome's viewer does, each listed by check with its share, and the
 * table says so under it when one covers much of the trace. */
TEST_CASE(unended_begins_said) {
    char dir[256], path[512], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/cut.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\": [\n"
          "{\"ph\": \"X\", \"name\": \"done\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 10},\n"
          "{\"ph\": \"B\", \"name\": \"RunTask\", \"pid\": 1, \"tid\": 2, \"ts\": 20},\n"
          "{\"ph\": \"X\", \"name\": \"last\", \"pid\": 1, \"tid\": 1, \"ts\": 90, \"dur\": 10}\n"
          "]}\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/opprof' check '%s'", bin_dir(), path);
    CHECK_INT(run_command(cmd, &out), 1);
    CHECK_CONTAINS(out, "cut.json:3:1: begin event 'RunTask' (thread 2) never ended: read as lasting to the trace's "
                        "end (0.080 ms, 80.0 % of the trace)");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' report '%s' 2>/dev/null", bin_dir(), path);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "Note: begin events that never ended were read as lasting to the trace's end; the longest "
                        "covers 80.0 % of it");
    free(out);
    remove_tree(dir);
}

/* A Kineto trace with a kernel of `kernel_us` launched by an operator of
 * the same name ("nccl:all_reduce" is both). */
static opprof_capture *gpu_trace(int kernel_us) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"schemaVersion\": 1, \"traceEvents\": [\n"
             "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nccl:all_reduce\", \"pid\": 1, \"tid\": 1, "
             "\"ts\": 0, \"dur\": 50, \"args\": {\"External id\": 7}},\n"
             "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"nccl:all_reduce\", \"pid\": 0, \"tid\": 7, "
             "\"ts\": 10, \"dur\": %d, \"args\": {\"External id\": 7}}\n"
             "]}\n",
             kernel_us);
    return read_trace_text(text);
}

/* diff compares device time when both sides have it, in report's columns;
 * a kernel and an operator of one name are two rows, each paired with its
 * kind (they were one pair, and the kernel's time read 0 -> 0). */
TEST_CASE(diff_of_device_time) {
    opprof_capture *before = gpu_trace(10), *after = gpu_trace(30);
    CHECK(before && after);
    if (!before || !after) return;
    char *text = NULL;
    CHECK_INT(opprof_capture_diff_to_string(before, after, 0, OPPROF_DIFF_TEXT, &text), 0);
    CHECK_CONTAINS(text, "Self CUDA before");
    CHECK_CONTAINS(text, "Self CUDA change");
    CHECK_CONTAINS(text, "Self CUDA time total: 10.000us before, 30.000us after (+200.00%)");
    opprof_free(text);
    CHECK_INT(opprof_capture_diff_to_string(before, after, 0, OPPROF_DIFF_JSON, &text), 0);
    CHECK_CONTAINS(text, "\"self_device_us_delta\": 20, \"device\": true");
    /* the operator's own row: its self CPU time, and the kernel it launched as its self device time */
    CHECK_CONTAINS(text, "\"self_cpu_us_before\": 50, \"self_cpu_us_after\": 50");
    CHECK_CONTAINS(text, "\"self_device_us_delta\": 20, \"device\": false");
    opprof_free(text);
    opprof_capture_free(before);
    opprof_capture_free(after);
}

/* The operator that launched each device activity, by each Kineto's rule
 * (trace/device_links.c): "external id" (PyTorch 1.8/1.9), an "External id"
 * that differs from the "correlation" (Kineto since 2024), and one that
 * equals it (2021-2024): then the innermost operator enclosing the runtime
 * call of that correlation, of two with one span the later id. */
static const char LINK_RULES[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 100, "
    "\"args\": {\"External id\": 1}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 50, "
    "\"args\": {\"External id\": 3}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 50, "
    "\"args\": {\"External id\": 2}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 20, "
    "\"dur\": 5, \"args\": {\"External id\": 3, \"correlation\": 40}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", \"pid\": 1, \"tid\": 1, \"ts\": 70, \"dur\": 20, "
    "\"args\": {\"External id\": 5}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::first\", \"pid\": 1, \"tid\": 2, \"ts\": 200, \"dur\": 10, "
    "\"args\": {\"External id\": 6}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::second\", \"pid\": 1, \"tid\": 2, \"ts\": 100, \"dur\": 10, "
    "\"args\": {\"External id\": 6}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 300, "
    "\"dur\": 5, \"args\": {\"correlation\": 50}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k_enclosed\", \"pid\": 0, \"tid\": 7, \"ts\": 30, \"dur\": 10, "
    "\"args\": {\"External id\": 40, \"correlation\": 40}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k_lower\", \"pid\": 0, \"tid\": 7, \"ts\": 80, \"dur\": 10, "
    "\"args\": {\"external id\": 5, \"correlation\": 41}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k_by_id\", \"pid\": 0, \"tid\": 7, \"ts\": 210, \"dur\": 10, "
    "\"args\": {\"External id\": 6, \"correlation\": 99}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k_outside\", \"pid\": 0, \"tid\": 7, \"ts\": 310, \"dur\": 10, "
    "\"args\": {\"External id\": 50, \"correlation\": 50}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k_unknown\", \"pid\": 0, \"tid\": 7, \"ts\": 320, \"dur\": 10, "
    "\"args\": {\"External id\": 77, \"correlation\": 77}}\n"
    "]}\n";

/* The name of the operator that launched the device activity `kernel`, "-" for none. */
static const char *launcher_of(const opprof_capture *c, const char *kernel) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(opprof_capture_name(c, ev[i].name), kernel))
            return ev[i].parent < 0 ? "-" : opprof_capture_name(c, ev[ev[i].parent].name);
    return "(no such kernel)";
}

TEST_CASE(device_activities_find_their_launchers_by_each_rule) {
    opprof_capture *c = read_trace_text(LINK_RULES);
    CHECK(c != NULL);
    if (!c) return;
    CHECK_STR(launcher_of(c, "k_enclosed"), "aten::mm"); /* of addmm and mm (one span), the later id */
    CHECK_STR(launcher_of(c, "k_lower"), "aten::relu");
    CHECK_STR(launcher_of(c, "k_by_id"), "aten::first"); /* of two operators with id 6, the first in the trace */
    CHECK_STR(launcher_of(c, "k_outside"), "-");         /* its runtime call is in no operator */
    CHECK_STR(launcher_of(c, "k_unknown"), "-");         /* no runtime call of its correlation */
    opprof_capture_free(c);
}

/* ONNX Runtime 0.4's form (every node's kernel between two fences, which
 * have no provider) and its GPU kernels ("Kernel", a category Kineto's 1.9
 * traces use too): rows by operator type, fences no rows and said, kernels
 * device rows, the producer ONNX Runtime. */
static const char ORT_04[] =
    "[\n"
    "{\"cat\":\"Session\",\"pid\":1,\"tid\":1,\"dur\":500,\"ts\":0,\"ph\":\"X\",\"name\":\"model_loading_uri\",\"args\":{}},\n"
    "{\"cat\":\"Session\",\"pid\":1,\"tid\":1,\"dur\":300,\"ts\":600,\"ph\":\"X\",\"name\":\"session_initialization\",\"args\":{}},\n"
    "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":2,\"ts\":1001,\"ph\":\"X\",\"name\":\"conv1_fence_before\",\"args\":{\"op_name\":\"Conv\"}},\n"
    "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":40,\"ts\":1004,\"ph\":\"X\",\"name\":\"conv1_kernel_time\","
    "\"args\":{\"op_name\":\"Conv\",\"provider\":\"CPUExecutionProvider\"}},\n"
    "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":1,\"ts\":1045,\"ph\":\"X\",\"name\":\"conv1_fence_after\",\"args\":{\"op_name\":\"Conv\"}},\n"
    "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":10,\"ts\":1050,\"ph\":\"X\",\"name\":\"relu1_kernel_time\","
    "\"args\":{\"op_name\":\"Relu\",\"provider\":\"CUDAExecutionProvider\"}},\n"
    "{\"cat\":\"Kernel\",\"pid\":1,\"tid\":7,\"dur\":6,\"ts\":1052,\"ph\":\"X\",\"name\":\"relu_kernel_f32\",\"args\":{\"op_name\":\"Relu\"}},\n"
    "{\"cat\":\"Session\",\"pid\":1,\"tid\":1,\"dur\":70,\"ts\":1000,\"ph\":\"X\",\"name\":\"model_run\",\"args\":{}}\n"
    "]\n";

TEST_CASE(onnxruntime_fences_and_kernels) {
    opprof_capture *c = read_trace_text(ORT_04);
    CHECK(c != NULL);
    if (!c) return;
    CHECK_INT(opprof_capture_get_info(c).producer, OPPROF_PRODUCER_ONNXRUNTIME);
    int64_t calls = 0, self = 0, total = 0;
    CHECK_INT(row_of(c, "Conv", &calls, &self, &total), 0);
    CHECK_INT(calls, 1);
    CHECK_INT(self, 40000); /* the kernel's time; the fences are no rows */
    CHECK_INT(row_of(c, "Relu", &calls, &self, &total), 0);
    CHECK_INT(row_of(c, "ProfilerStep*", &calls, &self, &total), 0);
    CHECK_INT(calls, 1);
    CHECK(row_of(c, "conv1_fence_before", &calls, &self, &total) != 0);
    CHECK(row_of(c, "model_loading_uri", &calls, &self, &total) != 0);
    size_t n;
    const char *const *warnings = opprof_capture_warnings(c, &n);
    bool fences = false, startup = false;
    for (size_t i = 0; i < n; i++) {
        fences |= strstr(warnings[i], "fences (2, 0.003 ms in all") != NULL;
        startup |= strstr(warnings[i], "model_loading_uri 0.500 ms, session_initialization 0.300 ms") != NULL;
    }
    CHECK(fences);
    CHECK(startup);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    bool kernel = false;
    for (size_t i = 0; i < n; i++) kernel |= !strcmp(rows[i].key, "relu_kernel_f32") && rows[i].device;
    CHECK(kernel);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

/* Files of other tools that are no trace: named for what they are, with what to do. */
TEST_CASE(foreign_files_named) {
    static const unsigned char xspace[] = {0x0a, 0x0d, 0x08, 0x01, 0x12, 0x09, '/', 'h',
                                           'o',  's',  't',  ':',  'C',  'P',  'U'};
    static const char perf[] = "PERFILE2\x68\0\0\0\0\0\0\0", sqlite[] = "SQLite format 3";
    const struct {
        const void *data;
        size_t len;
        const char *says;
    } files[] = {{xspace, sizeof xspace, "an XSpace of TensorFlow's or XLA's profiler (xplane.pb"},
                 {perf, sizeof perf, "a perf.data file of Linux perf"},
                 {sqlite, sizeof sqlite, "an SQLite database"}};
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
        opprof_capture *c = NULL;
        opprof_read_error err;
        CHECK_INT(opprof_capture_read_buffer(files[k].data, files[k].len, NULL, &c, &err), OPPROF_EFORMAT);
        CHECK(c == NULL);
        CHECK_CONTAINS(err.message, files[k].says);
        CHECK_INT(err.offset, -1);
    }
    /* by path too, through `opprof report` */
    char dir[256], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    CHECK_INT(
        run_commandf(
            &out,
            "printf '\\n\\r\\010\\001\\022\\011/host:CPU' > '%s/x.xplane.pb' && '%s/opprof' report '%s/x.xplane.pb'",
            dir, bin_dir(), dir),
        2);
    CHECK_CONTAINS(out, "x.xplane.pb: an XSpace");
    free(out);
    run_commandf(&out, "rm -rf '%s'", dir);
    free(out);
}

/* The same conv net in PyTorch and in ONNX Runtime (which fused each ReLU
 * into its Conv and changed the layout after the pool): paired layer by
 * layer, the unfused ReLU with its conv, the layout change with its pool;
 * each side's time per step (2 steps before, 1 run after). */
static const char TORCH_CONV[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::conv2d\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":40},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::convolution\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":38},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":42,\"dur\":10},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::max_pool2d\",\"pid\":1,\"tid\":1,\"ts\":53,\"dur\":8},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::flatten\",\"pid\":1,\"tid\":1,\"ts\":62,\"dur\":2},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":65,\"dur\":30},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::conv2d\",\"pid\":1,\"tid\":1,\"ts\":101,\"dur\":60},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":162,\"dur\":10},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::max_pool2d\",\"pid\":1,\"tid\":1,\"ts\":173,\"dur\":8},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::flatten\",\"pid\":1,\"tid\":1,\"ts\":182,\"dur\":2},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":185,\"dur\":10}\n"
    "]}\n";
static const char ORT_CONV[] =
    "[\n"
    "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":30,\"ts\":1,\"ph\":\"X\",\"name\":\"r1_nchwc_kernel_time\","
    "\"args\":{\"op_name\":\"Conv\",\"provider\":\"CPUExecutionProvider\"}},\n"
    "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":5,\"ts\":32,\"ph\":\"X\",\"name\":\"p1_nchwc_kernel_time\","
    "\"args\":{\"op_name\":\"MaxPool\",\"provider\":\"CPUExecutionProvider\"}},\n"
    "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":3,\"ts\":38,\"ph\":\"X\",\"name\":\"ReorderOutput_kernel_time\","
    "\"args\":{\"op_name\":\"ReorderOutput\",\"provider\":\"CPUExecutionProvider\"}},\n"
    "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":1,\"ts\":42,\"ph\":\"X\",\"name\":\"/flatten/Flatten_kernel_time\","
    "\"args\":{\"op_name\":\"Flatten\",\"provider\":\"CPUExecutionProvider\"}},\n"
    "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":12,\"ts\":44,\"ph\":\"X\",\"name\":\"/fc/Gemm_kernel_time\","
    "\"args\":{\"op_name\":\"Gemm\",\"provider\":\"CPUExecutionProvider\"}},\n"
    "{\"cat\":\"Session\",\"pid\":1,\"tid\":1,\"dur\":60,\"ts\":0,\"ph\":\"X\",\"name\":\"model_run\",\"args\":{}}\n"
    "]\n";

TEST_CASE(diff_across_runtimes_by_layer) {
    opprof_capture *torch = read_trace_text(TORCH_CONV), *ort = read_trace_text(ORT_CONV);
    CHECK(torch && ort);
    if (!torch || !ort) return;
    char *text = NULL;
    CHECK_INT(opprof_capture_diff_to_string(torch, ort, 0, OPPROF_DIFF_JSON, &text), 0);
    /* per step: conv 40 and 60 (their mean 50), with their relu, 10 */
    CHECK_CONTAINS(text, "\"name\": \"L1 aten::conv2d+aten::relu | Conv\", \"calls_before\": 1, \"calls_after\": 1, "
                         "\"self_cpu_us_before\": 60, \"self_cpu_us_after\": 30");
    CHECK_CONTAINS(text, "\"name\": \"L2 aten::max_pool2d | MaxPool+ReorderOutput\"");
    CHECK_CONTAINS(text, "\"name\": \"L3 aten::flatten | Flatten\"");
    CHECK_CONTAINS(text, "\"name\": \"L4 aten::linear | Gemm\", \"calls_before\": 1, \"calls_after\": 1, "
                         "\"self_cpu_us_before\": 20, \"self_cpu_us_after\": 12");
    opprof_free(text);
    /* by name: no shared names, every row new or gone; times per step still */
    opprof_diff_options by_name = {0, OPPROF_DIFF_TEXT, OPPROF_DIFF_MATCH_NAME};
    CHECK_INT(opprof_capture_diff_to_string_ex(torch, ort, &by_name, &text), 0);
    CHECK_CONTAINS(text, "Note: per step: each side's times are its means per step (2 step(s) before, 1 after)");
    CHECK(text && !strstr(text, "L1 "));
    opprof_free(text);
    opprof_diff_options bad = {0, OPPROF_DIFF_TEXT, (opprof_diff_match)9};
    CHECK_INT(opprof_capture_diff_to_string_ex(torch, ort, &bad, &text), OPPROF_EINVAL);
    opprof_capture_free(torch);
    opprof_capture_free(ort);
}

/* A TensorFlow 1.x GPU timeline of two runs, as Timeline.generate_chrome_trace_format
 * writes it: MatMul launched by the host (GPU:0 Compute, 10 us), run on stream 7
 * (50 us) and again on stream:all; Mul on the CPU (20 us). The op's device time
 * once, its launch as CPU time, each run a step. */
static const char TF_GPU[] =
    "{\"traceEvents\": [\n"
    "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"/job:localhost/replica:0/task:0/device:GPU:0 Compute\"}},\n"
    "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 2, \"args\": {\"name\": \"/job:localhost/replica:0/task:0/device:CPU:0 Compute\"}},\n"
    "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 4, \"args\": {\"name\": \"/device:GPU:0/stream:all Compute\"}},\n"
    "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 6, \"args\": {\"name\": \"/device:GPU:0/stream:7 Compute\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 0, \"tid\": 0, \"ts\": 100, \"dur\": 10, \"args\": {\"name\": \"dense/MatMul\", \"op\": \"MatMul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"Mul\", \"pid\": 2, \"tid\": 0, \"ts\": 170, \"dur\": 20, \"args\": {\"name\": \"scale/Mul\", \"op\": \"Mul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 4, \"tid\": 0, \"ts\": 112, \"dur\": 50, \"args\": {\"name\": \"dense/MatMul\", \"op\": \"MatMul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 6, \"tid\": 0, \"ts\": 112, \"dur\": 50, \"args\": {\"name\": \"dense/MatMul\", \"op\": \"MatMul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 0, \"tid\": 0, \"ts\": 300, \"dur\": 10, \"args\": {\"name\": \"dense/MatMul\", \"op\": \"MatMul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"Mul\", \"pid\": 2, \"tid\": 0, \"ts\": 370, \"dur\": 20, \"args\": {\"name\": \"scale/Mul\", \"op\": \"Mul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 4, \"tid\": 0, \"ts\": 312, \"dur\": 50, \"args\": {\"name\": \"dense/MatMul\", \"op\": \"MatMul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 6, \"tid\": 0, \"ts\": 312, \"dur\": 50, \"args\": {\"name\": \"dense/MatMul\", \"op\": \"MatMul\"}}\n"
    "]}\n";

TEST_CASE(tensorflow_streams_once) {
    opprof_capture *c = read_trace_text(TF_GPU);
    CHECK(c != NULL);
    if (!c) return;
    CHECK_INT(opprof_capture_get_info(c).producer, OPPROF_PRODUCER_TENSORFLOW);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    int64_t host_calls = 0, host_cpu = 0, host_device = 0, device_calls = 0, device_ns = 0, steps = 0, mul_cpu = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(rows[i].key, "MatMul") && !rows[i].device)
            host_calls = rows[i].calls, host_cpu = rows[i].self_ns, host_device = rows[i].self_device_ns;
        if (!strcmp(rows[i].key, "MatMul") && rows[i].device)
            device_calls = rows[i].calls, device_ns = rows[i].self_device_ns;
        if (!strcmp(rows[i].key, "ProfilerStep*")) steps = rows[i].calls;
        if (!strcmp(rows[i].key, "Mul")) mul_cpu = rows[i].self_ns;
    }
    CHECK_INT(host_calls, 2);
    CHECK_INT(host_cpu, 2 * 10000);    /* the launches */
    CHECK_INT(host_device, 2 * 50000); /* the kernels it launched, once each */
    CHECK_INT(device_calls, 2);
    CHECK_INT(device_ns, 2 * 50000); /* not 3 x: stream:all is left out */
    CHECK_INT(opprof_averages_self_device_total_ns(avg), 2 * 50000);
    CHECK_INT(mul_cpu, 2 * 20000);
    CHECK_INT(steps, 2); /* two runs */
    opprof_averages_free(avg);
    const char *const *warnings = opprof_capture_warnings(c, &n);
    bool said = false;
    for (size_t i = 0; i < n; i++) said |= strstr(warnings[i], "stream:all (2 events") != NULL;
    CHECK(said);
    opprof_capture_free(c);
}

/* The guide's MLP in nn (opprof's trace: PyTorch's names) and in a TensorFlow
 * 1.x CPU timeline (MatMul then BiasAdd for each Linear): paired layer by
 * layer, the bias with its MatMul, as ONNX Runtime's are (by name, every row
 * was new or gone). */
static const char NN_MLP[] =
    "{\"traceEvents\": [\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":40},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":38},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":42,\"dur\":10},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":53,\"dur\":20},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":54,\"dur\":18}\n"
    "], \"opprof_version\": \"0.4.0\"}\n";
static const char TF_MLP[] =
    "{\"traceEvents\": [\n"
    "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 2, \"args\": {\"name\": \"/job:localhost/replica:0/task:0/device:CPU:0 Compute\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 2, \"tid\": 0, \"ts\": 100, \"dur\": 30, \"args\": {\"name\": \"fc1/MatMul\", \"op\": \"MatMul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"BiasAdd\", \"pid\": 2, \"tid\": 0, \"ts\": 131, \"dur\": 4, \"args\": {\"name\": \"fc1/BiasAdd\", \"op\": \"BiasAdd\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"Relu\", \"pid\": 2, \"tid\": 0, \"ts\": 136, \"dur\": 6, \"args\": {\"name\": \"fc1/Relu\", \"op\": \"Relu\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"MatMul\", \"pid\": 2, \"tid\": 0, \"ts\": 143, \"dur\": 12, \"args\": {\"name\": \"fc2/MatMul\", \"op\": \"MatMul\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"Op\", \"name\": \"BiasAdd\", \"pid\": 2, \"tid\": 0, \"ts\": 156, \"dur\": 2, \"args\": {\"name\": \"fc2/BiasAdd\", \"op\": \"BiasAdd\"}}\n"
    "]}\n";

TEST_CASE(diff_nn_against_tensorflow_by_layer) {
    opprof_capture *nn = read_trace_text(NN_MLP), *tf = read_trace_text(TF_MLP);
    CHECK(nn && tf);
    if (!nn || !tf) return;
    CHECK_INT(opprof_capture_get_info(tf).producer, OPPROF_PRODUCER_TENSORFLOW);
    char *text = NULL;
    CHECK_INT(opprof_capture_diff_to_string(nn, tf, 0, OPPROF_DIFF_JSON, &text), 0);
    CHECK_CONTAINS(text, "\"name\": \"L1 aten::linear | MatMul+BiasAdd\"");
    CHECK_CONTAINS(text, "\"name\": \"L2 aten::relu | Relu\"");
    CHECK_CONTAINS(text, "\"name\": \"L3 aten::linear | MatMul+BiasAdd\"");
    opprof_free(text);
    opprof_capture_free(nn);
    opprof_capture_free(tf);
}

/* TensorRT's per-layer profile (trtexec --exportProfile): a table without a
 * timeline, RUNS calls of device time per layer, RUNS steps; report and diff
 * take it (a layer twice as slow after). */
static const char TRT_BEFORE[] =
    "[\n  { \"count\" : 100 }\n"
    ", { \"name\" : \"conv1 + relu1\", \"timeMs\" : 12.5, \"averageMs\" : 0.125, \"medianMs\" : 0.124, \"percentage\" : 62.5 }\n"
    ", { \"name\" : \"fc1\", \"timeMs\" : 7.5, \"averageMs\" : 0.075, \"medianMs\" : 0.075, \"percentage\" : 37.5 }\n]\n";
static const char TRT_AFTER[] =
    "[\n  { \"count\" : 50 }\n"
    ", { \"name\" : \"conv1 + relu1\", \"timeMs\" : 12.5, \"averageMs\" : 0.25, \"medianMs\" : 0.25, \"percentage\" : 76.9 }\n"
    ", { \"name\" : \"fc1\", \"timeMs\" : 3.75, \"averageMs\" : 0.075, \"medianMs\" : 0.075, \"percentage\" : 23.1 }\n]\n";

TEST_CASE(tensorrt_layers_as_a_table) {
    opprof_capture *before = read_trace_text(TRT_BEFORE), *after = read_trace_text(TRT_AFTER);
    CHECK(before && after);
    if (!before || !after) return;
    CHECK_INT(opprof_capture_get_info(before).producer, OPPROF_PRODUCER_TENSORRT);
    CHECK_INT(opprof_capture_get_info(before).aggregate_runs, 100);
    size_t n_events;
    opprof_capture_events(before, &n_events);
    CHECK_INT(n_events, 0); /* no timeline */
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(before, &avg), 0);
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    CHECK_INT(n, 2);
    CHECK_STR(rows[0].key, "conv1 + relu1");
    CHECK_INT(rows[0].calls, 100);
    CHECK_INT(rows[0].self_device_ns, 12500000);
    CHECK(rows[0].device);
    CHECK_INT(opprof_averages_self_device_total_ns(avg), 20000000);
    opprof_averages_free(avg);
    char *text = NULL; /* per run: conv 125 -> 250 us, fc 75 -> 75 us */
    CHECK_INT(opprof_capture_diff_to_string(before, after, 0, OPPROF_DIFF_JSON, &text), 0);
    CHECK_CONTAINS(text, "\"name\": \"conv1 + relu1\", \"calls_before\": 1, \"calls_after\": 1");
    CHECK_CONTAINS(text, "\"self_device_us_before\": 125, \"self_device_us_after\": 250");
    CHECK_CONTAINS(text, "(100 step(s) before, 50 after)");
    opprof_free(text);
    opprof_capture_free(before);
    opprof_capture_free(after);
    /* by the commands: report reads it; convert and stacks say that it has no timeline */
    char dir[256], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/trt.json", dir);
    CHECK_INT(opprof_write_text_file(path, TRT_BEFORE), 0);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report '%s'", bin_dir(), path), 0);
    CHECK_CONTAINS(out, "written by TensorRT (per-layer profile)");
    CHECK_CONTAINS(out, "Self CUDA time total: 20.000ms");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' convert '%s' '%s/x.json'", bin_dir(), path, dir), 2);
    CHECK_CONTAINS(out, "a table without a timeline: convert has no events to write");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' stacks '%s'", bin_dir(), path), 2);
    CHECK_CONTAINS(out, "stacks has no events to write");
    free(out);
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_producers"); }
