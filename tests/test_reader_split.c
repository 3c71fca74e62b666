/* test_reader_split.c - a trace read on two threads (opprof_read_options
 * .threads = 2: the event array's second half read by a second thread, then
 * joined) gives what one thread gives: the same capture, written back byte
 * for byte, the same problems in the same order with the same places, and
 * the same errors. Each case also checks which way it was read
 * (opprof_capture_info.read_threads), so that a split that never happens
 * cannot pass for one that works. */
#include "check.h"
#include "fuzz/read_one.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <zlib.h>

static char dir[256];

/* A file in the test's directory (four names at a time). */
static const char *path_of(const char *name) {
    static char paths[4][512];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, 512, "%s/%s", dir, name);
    return path;
}

static void write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(text, 1, len, f) == len);
    fclose(f);
}

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->len + (size_t)n + 1) * 2;
        t->s = realloc(t->s, t->cap);
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

/* How problems are asked for: those of single events (opprof report), all
 * (opprof check: one thread), none. */
typedef enum asked { EVENT_PROBLEMS, ALL_PROBLEMS, NO_PROBLEMS } asked;

/* One thread's and two threads' reads of path agree (fuzz/read_one.h: the
 * code, the error and its place, the problems in order, the capture written
 * back, its table); the two-thread read was read by `expect_threads`. */
static void same_both_ways(const char *path, int expect_threads, asked problems) {
    opprof_read_options opt = {.on_problem = problems == NO_PROBLEMS ? NULL : read_say,
                               .events_only = problems == EVENT_PROBLEMS};
    int one_rc, one_by, two_rc, two_by;
    opt.threads = 1;
    char *one = read_as_text(path, opt, &one_rc, &one_by);
    opt.threads = 2;
    char *two = read_as_text(path, opt, &two_rc, &two_by);
    CHECK_INT(one_by, one_rc ? 0 : 1);
    CHECK_INT(two_by, two_rc ? 0 : expect_threads);
    CHECK_INT(two_rc, one_rc);
    CHECK_STR(two, one);
    free(one);
    free(two);
}

/* A trace of `n` events of every kind the reader keeps, spread over both
 * halves: operators on three threads (one named by a string tid, as
 * Kineto's streams), memory events, thread names in both halves (the
 * second renaming a thread of the first), a process label, events left out
 * by name, a complete event without "dur" (a problem) in each half. */
static text mixed_trace(int n, bool ours) {
    text t = {0};
    put(&t, "{%s\"traceEvents\": [\n", ours ? "\"opprof_version\": \"0.4.0\", " : "");
    put(&t, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"main\"}},\n");
    for (int i = 0; i < n; i++) {
        int tid = i % 3 + 1;
        if (i == n / 4 || i == 3 * n / 4)
            put(&t, "{\"ph\": \"X\", \"name\": \"no dur %d\", \"pid\": 1, \"tid\": 1, \"ts\": %d},\n", i, i * 10);
        if (i == 3 * n / 4)
            put(&t,
                "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"renamed\"}},\n"
                "{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 1, \"tid\": 0, \"args\": {\"labels\": \"rank 3\"}},\n");
        if (tid == 3)
            put(&t,
                "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, \"tid\": \"stream %d\", "
                "\"ts\": %d.5, \"dur\": 3, \"args\": {\"External id\": %d}},\n",
                i % 7, i % 2 + 7, i * 10, i);
        else
            put(&t,
                "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op%d\", \"pid\": 1, \"tid\": %d, \"ts\": %d, "
                "\"dur\": 8, \"args\": {\"External id\": %d, \"Input Dims\": [[%d, 4]]}},\n",
                i % 11, tid, i * 10, i, i % 5);
        if (i % 5 == 0) /* an allocation and its free, in turn: totals that add up */
            put(&t,
                "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": %d, \"ts\": %d.25, "
                "\"args\": {\"Addr\": %d, \"Bytes\": %d, \"Total Allocated\": %d}},\n",
                tid, i * 10, 4096 + i, i % 2 ? -64 : 64, i % 2 ? 0 : 64);
        if (i % 97 == 0)
            put(&t, "{\"ph\": \"X\", \"name\": \"aten::is_leaf\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1},\n",
                i * 10);
    }
    put(&t,
        "{\"ph\": \"X\", \"name\": \"last\", \"pid\": 1, \"tid\": 2, \"ts\": 1, \"dur\": 1},\n]}\n"); /* a trailing comma */
    return t;
}

TEST_CASE(mixed_events_join) {
    text t = mixed_trace(20000, false);
    write_file(path_of("mixed.json"), t.s, t.len);
    same_both_ways(path_of("mixed.json"), 2, EVENT_PROBLEMS);
    same_both_ways(path_of("mixed.json"), 2, NO_PROBLEMS);
    free(t.s);
}

TEST_CASE(opprof_own_trace_joins) {
    text t = mixed_trace(5000, true);
    write_file(path_of("ours.json"), t.s, t.len);
    same_both_ways(path_of("ours.json"), 2, EVENT_PROBLEMS);
    free(t.s);
}

/* ONNX Runtime's profile of many runs and TensorRT's table of many layers:
 * their rules count across the whole file (ORT's runs are steps numbered in
 * order, TensorRT's first element gives every layer's run count), so a half
 * cannot stand alone and two threads give one thread's result, read by one
 * (the half's runs were numbered from 0 again; its layers were dropped). */
TEST_CASE(onnxruntime_and_tensorrt_read_as_one_thread_reads) {
    text t = {0};
    put(&t, "[\n");
    for (int run = 0; run < 3000; run++) {
        int ts = run * 100;
        put(&t,
            "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":30,\"ts\":%d,\"ph\":\"X\",\"name\":\"fc_kernel_time\","
            "\"args\":{\"op_name\":\"Gemm\",\"provider\":\"CPUExecutionProvider\"}},\n",
            ts + 1);
        put(&t,
            "{\"cat\":\"Node\",\"pid\":1,\"tid\":1,\"dur\":10,\"ts\":%d,\"ph\":\"X\",\"name\":\"relu_kernel_time\","
            "\"args\":{\"op_name\":\"Relu\",\"provider\":\"CPUExecutionProvider\"}},\n",
            ts + 32);
        put(&t,
            "{\"cat\":\"Session\",\"pid\":1,\"tid\":1,\"dur\":60,\"ts\":%d,\"ph\":\"X\",\"name\":\"model_run\","
            "\"args\":{}}%s\n",
            ts, run == 2999 ? "" : ",");
    }
    put(&t, "]\n");
    write_file(path_of("ort.json"), t.s, t.len);
    same_both_ways(path_of("ort.json"), 1, EVENT_PROBLEMS);
    free(t.s);
    t = (text){0};
    put(&t, "[\n  { \"count\" : 100 }\n");
    for (int layer = 0; layer < 4000; layer++)
        put(&t,
            ", { \"name\" : \"layer %d\", \"timeMs\" : 1.5, \"averageMs\" : 0.015, \"medianMs\" : 0.015, "
            "\"percentage\" : 0.025 }\n",
            layer);
    put(&t, "]\n");
    write_file(path_of("trt.json"), t.s, t.len);
    same_both_ways(path_of("trt.json"), 1, EVENT_PROBLEMS);
    free(t.s);
}

/* PyTorch 1.9's ResNet-50 trace from Kineto, decompressed: string tids, flows,
 * device activities linked to their launches across the two halves. */
static const char *kineto_file(void) {
    char gz[1024];
    snprintf(gz, sizeof gz,
             "%s/tests/fixtures/real-traces/kineto__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
             source_dir());
    gzFile in = gzopen(gz, "rb");
    CHECK(in != NULL);
    if (!in) return NULL;
    FILE *out = fopen(path_of("kineto.json"), "wb");
    char buf[1 << 16];
    int n;
    while ((n = gzread(in, buf, sizeof buf)) > 0) CHECK(fwrite(buf, 1, (size_t)n, out) == (size_t)n);
    gzclose(in);
    fclose(out);
    return path_of("kineto.json");
}

TEST_CASE(kineto_trace_joins) {
    const char *path = kineto_file();
    if (path) same_both_ways(path, 2, EVENT_PROBLEMS);
}

/* A string that looks like an event boundary where the second thread looks:
 * its guess is wrong, the half is dropped, the first thread reads it all. */
TEST_CASE(boundary_in_a_string_is_not_taken) {
    text t = {0};
    put(&t, "{\"traceEvents\": [\n");
    for (int i = 0; i < 200; i++)
        put(&t, "{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1},\n", i * 2);
    put(&t, "{\"ph\": \"X\", \"name\": \"");
    for (int i = 0; i < 20000; i++) put(&t, "x}, {"); /* escaped nothing: plain bytes of a name */
    put(&t, "\", \"pid\": 1, \"tid\": 1, \"ts\": 500, \"dur\": 1},\n");
    for (int i = 0; i < 50; i++)
        put(&t, "{\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1},\n", 600 + i * 2);
    put(&t, "{\"ph\": \"X\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 9999, \"dur\": 1}]}\n");
    write_file(path_of("string.json"), t.s, t.len);
    same_both_ways(path_of("string.json"), 1, EVENT_PROBLEMS);
    free(t.s);
}

/* Calls as uftrace writes them: "B" and "E" only, nested 1 to 5 deep on
 * three threads in turn, so that calls of every depth straddle the split;
 * some names only a "B" before the split has (its "E" in the second half
 * gives them their place among the names). `twist` adds an "E" three
 * quarters in (past the split) that no thread pairs as it stands: 1 with no
 * "B" open, 2 earlier than its "B" (the trace's first event), 3 on a thread
 * named by a string; 4 a "B" there (on a thread of its own) never ended. */
static text calls_trace(int n, int twist) {
    text t = {0};
    int depth[4] = {0}, ts = 1;
    put(&t, "{\"traceEvents\": [\n");
    if (twist == 2) put(&t, "{\"ph\": \"B\", \"name\": \"late\", \"pid\": 1, \"tid\": 5, \"ts\": 100},\n");
    if (twist == 3) put(&t, "{\"ph\": \"B\", \"name\": \"s\", \"pid\": 1, \"tid\": \"stream\", \"ts\": 1},\n");
    for (int i = 0; i < n; i++) {
        int tid = i % 3 + 1;
        if (i == 3 * n / 4 && twist == 1) put(&t, "{\"ph\": \"E\", \"pid\": 1, \"tid\": 9, \"ts\": %d},\n", ts);
        if (i == 3 * n / 4 && twist == 2) put(&t, "{\"ph\": \"E\", \"pid\": 1, \"tid\": 5, \"ts\": 50},\n");
        if (i == 3 * n / 4 && twist == 3)
            put(&t, "{\"ph\": \"E\", \"pid\": 1, \"tid\": \"stream\", \"ts\": %d},\n", ts);
        if (i == 3 * n / 4 && twist == 4)
            put(&t, "{\"ph\": \"B\", \"name\": \"open\", \"pid\": 1, \"tid\": 7, \"ts\": %d},\n", ts);
        bool opens = depth[tid] == 0 || (depth[tid] < 5 && (i / 3) % 4 != 3);
        if (opens) {
            depth[tid]++;
            if (i < n / 2 && i % 50 == 1) /* a name only this call has */
                put(&t, "{\"ph\": \"B\", \"name\": \"only%d\", \"pid\": 1, \"tid\": %d, \"ts\": %d},\n", i, tid, ts);
            else
                put(&t, "{\"ph\": \"B\", \"name\": \"f%d\", \"pid\": 1, \"tid\": %d, \"ts\": %d},\n", depth[tid], tid,
                    ts);
        } else {
            depth[tid]--;
            put(&t, "{\"ph\": \"E\", \"pid\": 1, \"tid\": %d, \"ts\": %d},\n", tid, ts);
        }
        ts += 1 + i % 3;
    }
    for (int tid = 1; tid <= 3; tid++)
        for (; depth[tid] > 0; depth[tid]--)
            put(&t, "{\"ph\": \"E\", \"pid\": 1, \"tid\": %d, \"ts\": %d},\n", tid, ++ts);
    put(&t, "{\"ph\": \"X\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1}]}\n", ++ts);
    return t;
}

/* Calls whose "B" is before the split and "E" after it join: the half's
 * ends close this thread's open begins, as one thread pairs them. */
TEST_CASE(begin_end_across_the_split_join) {
    text t = {0};
    put(&t, "{\"traceEvents\": [\n{\"ph\": \"B\", \"name\": \"outer\", \"pid\": 1, \"tid\": 1, \"ts\": 0},\n");
    for (int i = 0; i < 2000; i++)
        put(&t, "{\"ph\": \"X\", \"name\": \"x\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1},\n", 1 + i * 2);
    put(&t, "{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 5000}]}\n");
    write_file(path_of("across.json"), t.s, t.len);
    same_both_ways(path_of("across.json"), 2, EVENT_PROBLEMS);
    free(t.s);
    t = calls_trace(12000, 0);
    write_file(path_of("calls.json"), t.s, t.len);
    same_both_ways(path_of("calls.json"), 2, EVENT_PROBLEMS);
    same_both_ways(path_of("calls.json"), 2, NO_PROBLEMS);
    free(t.s);
}

/* An end that does not pair as it stands drops the half: one thread reads
 * it all and says what one thread says. */
TEST_CASE(begin_end_that_do_not_pair_are_read_whole) {
    static const char *const names[] = {"", "no-begin.json", "earlier.json", "string-tid.json", "open.json"};
    for (int twist = 1; twist <= 4; twist++) {
        text t = calls_trace(12000, twist);
        write_file(path_of(names[twist]), t.s, t.len);
        same_both_ways(path_of(names[twist]), 1, EVENT_PROBLEMS);
        free(t.s);
    }
}

/* Pairs that stay within a half join as well. */
TEST_CASE(begin_end_within_halves_join) {
    text t = {0};
    put(&t, "{\"traceEvents\": [\n");
    for (int i = 0; i < 3000; i++) /* pairs in the first half and at the end; the middle, complete events */
        if (i < 1000 || i >= 2900)
            put(&t,
                "{\"ph\": \"B\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": %d},\n"
                "{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": %d},\n",
                i * 4, i * 4 + 2);
        else
            put(&t, "{\"ph\": \"X\", \"name\": \"x\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 2},\n", i * 4);
    put(&t, "{\"ph\": \"X\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": 9000, \"dur\": 1}]}\n");
    write_file(path_of("pairs.json"), t.s, t.len);
    same_both_ways(path_of("pairs.json"), 2, EVENT_PROBLEMS);
    free(t.s);
}

/* Ids at the ends of int64's range, negative ones beside ids written as
 * strings (a string id and -1 are one id to the reader, as they always
 * were: two threads say the same), in both halves. A number where the
 * second thread keeps its string ids (below INT64_MIN / 4) drops its half. */
static void ids_trace(const char *name, const char *const *ids, int n_ids, int expect_threads) {
    text t = {0};
    put(&t, "{\"traceEvents\": [\n");
    for (int i = 0; i < 3000; i++)
        put(&t, "{\"ph\": \"X\", \"name\": \"op%d\", \"pid\": %s, \"tid\": %s, \"ts\": %d, \"dur\": 1},\n", i % 5,
            ids[i % n_ids], ids[(i / n_ids) % n_ids], i * 2);
    put(&t, "{\"ph\": \"X\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": 9000, \"dur\": 1}]}\n");
    write_file(path_of(name), t.s, t.len);
    same_both_ways(path_of(name), expect_threads, EVENT_PROBLEMS);
    free(t.s);
}

TEST_CASE(extreme_and_string_ids_join) {
    static const char *const near[] = {"9223372036854775807", "-1", "\"\"", "\"stream 7\"", "0", "\"-3\"",
                                       "-2305843009213693952"};
    ids_trace("ids.json", near, 7, 2);
    static const char *const far[] = {"-9223372036854775808", "\"stream 7\"", "-1", "-4611686018427387904"};
    ids_trace("far_ids.json", far, 4, 1);
}

/* An error in the second half: the same message at the same line, column and
 * byte as one thread says (the second half's own error is never the one said). */
TEST_CASE(error_in_second_half_is_placed_as_one_thread_places_it) {
    text t = mixed_trace(4000, false);
    char *bad = strstr(t.s + t.len * 3 / 4, "\"dur\": 8");
    CHECK(bad != NULL);
    if (bad) memcpy(bad, "\"dur\": @", 8);
    write_file(path_of("bad.json"), t.s, t.len);
    opprof_read_error error;
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read(path_of("bad.json"), &(opprof_read_options){.threads = 2}, &c, &error),
              OPPROF_EFORMAT);
    CHECK(error.line > 3000);
    long long lines = 0, last = -1; /* the place of the error's byte, counted here */
    for (long long i = 0; i < error.offset && i < (long long)t.len; i++)
        if (t.s[i] == '\n') lines++, last = i;
    CHECK_INT(error.line, lines + 1);
    CHECK_INT(error.column, error.offset - last);
    CHECK(bad && error.offset >= bad - t.s && error.offset < bad - t.s + 16);
    same_both_ways(path_of("bad.json"), 0, EVENT_PROBLEMS);
    free(t.s);
}

/* A half with nothing to say counts no lines: this thread counts those
 * before the half's start for the jump past it, so that an error after the
 * array is placed as one thread places it. `first` and `second` follow the
 * events of each half: many lines, one line, and lines in the first half
 * only (the error's column then counts from the first half's last newline). */
static void error_after_clean_halves(const char *name, const char *first, const char *second) {
    text t = {0};
    put(&t, "{\"traceEvents\": [%s", first);
    for (int i = 0; i < 3000; i++)
        put(&t, "{\"ph\": \"X\", \"name\": \"op%d\", \"pid\": 1, \"tid\": %d, \"ts\": %d, \"dur\": 5},%s", i % 7,
            i % 2 + 1, i * 10, i < 1200 ? first : second);
    put(&t, "{\"ph\": \"X\", \"name\": \"last\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}%s],%s\"late\": tru}\n",
        second, second);
    write_file(path_of(name), t.s, t.len);
    opprof_read_error error;
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read(path_of(name), &(opprof_read_options){.threads = 2}, &c, &error), OPPROF_EFORMAT);
    long long lines = 0, last = -1;
    for (long long i = 0; i < error.offset && i < (long long)t.len; i++)
        if (t.s[i] == '\n') lines++, last = i;
    CHECK(error.offset > (long long)t.len - 8);
    CHECK_INT(error.line, lines + 1);
    CHECK_INT(error.column, error.offset - last);
    same_both_ways(path_of(name), 0, EVENT_PROBLEMS);
    /* the same trace whole: read by two threads, the half having counted no line */
    memcpy(strstr(t.s, "\"late\": tru}"), "\"late\": 1 }", 11);
    write_file(path_of(name), t.s, t.len);
    same_both_ways(path_of(name), 2, EVENT_PROBLEMS);
    /* and a problem in the half: it counts the lines before its start then */
    char *dur = strstr(t.s + t.len * 3 / 4, "\"dur\"");
    CHECK(dur != NULL);
    if (dur) memcpy(dur, "\"dux\"", 5);
    write_file(path_of(name), t.s, t.len);
    same_both_ways(path_of(name), 2, EVENT_PROBLEMS);
    free(t.s);
}

TEST_CASE(error_after_the_array_is_placed_as_one_thread_places_it) {
    error_after_clean_halves("lines.json", "\n", "\n");
    error_after_clean_halves("one_line.json", " ", " ");
    error_after_clean_halves("first_lines.json", "\n", " ");
}

/* Where two threads do not apply: opprof check's whole-trace checks, a gzip
 * file, a trace in memory; and threads = 0 on a small file. */
TEST_CASE(one_thread_where_two_do_not_apply) {
    text t = mixed_trace(3000, false);
    write_file(path_of("small.json"), t.s, t.len);
    same_both_ways(path_of("small.json"), 1, ALL_PROBLEMS); /* opprof check: one thread */
    opprof_capture *c = NULL;
    opprof_read_options automatic = {0};
    CHECK_INT(opprof_capture_read(path_of("small.json"), &automatic, &c, NULL), 0);
    CHECK_INT(c ? opprof_capture_get_info(c).read_threads : -1, 1); /* under 32 MiB */
    opprof_capture_free(c);
    gzFile gz = gzopen(path_of("small.json.gz"), "wb");
    gzwrite(gz, t.s, (unsigned)t.len);
    gzclose(gz);
    opprof_read_options two = {.threads = 2};
    CHECK_INT(opprof_capture_read(path_of("small.json.gz"), &two, &c, NULL), 0);
    CHECK_INT(c ? opprof_capture_get_info(c).read_threads : -1, 1);
    opprof_capture_free(c);
    CHECK_INT(opprof_capture_read_buffer(t.s, t.len, &two, &c, NULL), 0);
    CHECK_INT(c ? opprof_capture_get_info(c).read_threads : -1, 1);
    opprof_capture_free(c);
    free(t.s);
}

/* ---- arguments set aside (opprof_read_options.spill_args) ---- */

/* What spill_args was given: each part's records, one text each. */
typedef struct set_aside {
    text records[2];
    size_t *at[2]; /* by record: its offset in records[part] */
    size_t n[2], cap[2];
    size_t fail_at; /* the call that fails (0: none) */
    size_t calls[2];
} set_aside;

static void put_arg(text *t, const char *key, char type, int64_t i, double d, const char *s) {
    if (type == 's') put(t, "%s=s:%s;", key, s);
    if (type == 'd') put(t, "%s=d:%.17g;", key, d);
    if (type == 'i') put(t, "%s=i:%lld;", key, (long long)i);
}

static int64_t take_args(void *ctx, int part, const opprof_spilled_arg *args, size_t n) {
    set_aside *a = ctx; /* each part its own slots: the two threads never meet here */
    if (a->fail_at && part == 0 && ++a->calls[0] == a->fail_at) return OPPROF_ENOSPC;
    if (a->n[part] == a->cap[part]) {
        a->cap[part] = a->cap[part] ? a->cap[part] * 2 : 1024;
        a->at[part] = realloc(a->at[part], a->cap[part] * sizeof *a->at[part]);
    }
    a->at[part][a->n[part]] = a->records[part].len;
    for (size_t k = 0; k < n; k++)
        put_arg(&a->records[part], args[k].key,
                args[k].kind == OPPROF_MARK_ARG_STR      ? 's'
                : args[k].kind == OPPROF_MARK_ARG_DOUBLE ? 'd'
                                                         : 'i',
                args[k].i, args[k].d, args[k].str);
    put(&a->records[part], "%c", '\0'); /* each record its own string */
    a->records[part].len++;
    return (int64_t)(a->n[part]++ * 2 + (size_t)part);
}

/* A set's place in the file: part 0's before part 1's, each in its order. */
static int64_t file_order(int64_t id) { return (id & 1) << 40 | id >> 1; }

/* The records of the sets that event e keeps (opprof_capture_spilled_set,
 * then its OPPROF_SPILLED_ARGS_ARG marks: a child merged into it), in the
 * order the file gave them; the number of sets. */
static int put_sets(text *t, const opprof_capture *c, const set_aside *a, size_t e, int *from_part_1) {
    size_t n_marks = 0;
    const opprof_mark *m = opprof_capture_marks(c, &n_marks);
    int64_t ids[8];
    int n = 0;
    if (opprof_capture_spilled_set(c, e) >= 0) ids[n++] = opprof_capture_spilled_set(c, e);
    for (size_t k = 0; k < n_marks && n < 8; k++)
        if (m[k].event == (int32_t)e && !strcmp(opprof_capture_name(c, m[k].name), OPPROF_SPILLED_ARGS_ARG))
            ids[n++] = m[k].value.i;
    for (int i = 1; i < n; i++) /* by file order: a handful */
        for (int j = i; j > 0 && file_order(ids[j]) < file_order(ids[j - 1]); j--) {
            int64_t swap = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = swap;
        }
    for (int i = 0; i < n; i++) {
        int64_t id = ids[i];
        CHECK(a && id >= 0 && (size_t)(id >> 1) < a->n[id & 1]);
        if (a && id >= 0 && (size_t)(id >> 1) < a->n[id & 1])
            put(t, "%s", a->records[id & 1].s + a->at[id & 1][id >> 1]);
        *from_part_1 += (int)(id & 1);
    }
    return n;
}

/* Each event's arguments, one line each: its marks' or, where it keeps sets
 * set aside, their records (then only those). */
static char *event_args_text(const opprof_capture *c, const set_aside *a, int *spilled_from_part_1) {
    size_t n_ev = 0, n_marks = 0;
    opprof_capture_events(c, &n_ev);
    const opprof_mark *m = opprof_capture_marks(c, &n_marks);
    text *per = calloc(n_ev + 1, sizeof *per);
    bool *aside = calloc(n_ev + 1, 1);
    for (size_t e = 0; e < n_ev; e++) aside[e] = put_sets(&per[e], c, a, e, spilled_from_part_1) > 0;
    for (size_t k = 0; k < n_marks; k++) {
        if (m[k].event < 0) continue;
        const char *key = opprof_capture_name(c, m[k].name);
        text *t = &per[m[k].event];
        if (aside[m[k].event] || !strncmp(key, "opprof:", 7)) {
            continue; /* repeated among the records; the thread clock */
        } else if (m[k].kind == OPPROF_MARK_FLOPS || m[k].kind == OPPROF_MARK_BYTES) {
            put_arg(t, m[k].kind == OPPROF_MARK_FLOPS ? "flops" : "bytes", 'i', m[k].value.i, 0, NULL);
        } else if (m[k].kind >= OPPROF_MARK_ARG_INT && m[k].kind <= OPPROF_MARK_ARG_STR) {
            char type = m[k].kind == OPPROF_MARK_ARG_STR ? 's' : m[k].kind == OPPROF_MARK_ARG_DOUBLE ? 'd' : 'i';
            put_arg(t, key, type, m[k].value.i, m[k].value.d,
                    type == 's' ? opprof_capture_name(c, m[k].value.str) : NULL);
        }
    }
    text all = {0};
    put(&all, "%zu events\n", n_ev);
    for (size_t i = 0; i < n_ev; i++) {
        put(&all, "%zu %s\n", i, per[i].s ? per[i].s : "");
        free(per[i].s);
    }
    free(per);
    free(aside);
    return all.s;
}

static void free_set_aside(set_aside *a) {
    for (int k = 0; k < 2; k++) {
        free(a->records[k].s);
        free(a->at[k]);
    }
}

/* Another writer's arguments given to spill_args as they are read, on both
 * threads (ids of both parts), stand for the same arguments of the same
 * events as when the capture keeps them, after every sort, merge and drop;
 * the tables' own stay marks. */
static void args_set_aside_as_kept(const char *path) {
    opprof_read_options kept = {.keep_marks = true, .threads = 1};
    set_aside a = {0};
    opprof_read_options aside = {.keep_marks = true, .threads = 2, .spill_args = take_args, .spill_ctx = &a};
    opprof_capture *one = NULL, *two = NULL;
    CHECK_INT(opprof_capture_read(path, &kept, &one, NULL), 0);
    CHECK_INT(opprof_capture_read(path, &aside, &two, NULL), 0);
    if (!one || !two) return;
    CHECK_INT(opprof_capture_get_info(two).read_threads, 2);
    CHECK(a.n[0] > 0 && a.n[1] > 0);
    int from_1 = 0, none = 0;
    char *x = event_args_text(one, NULL, &none), *y = event_args_text(two, &a, &from_1);
    CHECK_STR(y, x);
    CHECK(from_1 > 0);
    CHECK(strstr(x, "External id=i:") != NULL); /* arguments there were */
    opprof_capture_free(one);
    opprof_capture_free(two);
    free(x);
    free(y);
    free_set_aside(&a);
}

TEST_CASE(arguments_set_aside_stand_for_the_kept) {
    text t = mixed_trace(20000, false);
    write_file(path_of("aside.json"), t.s, t.len);
    args_set_aside_as_kept(path_of("aside.json"));
    free(t.s);
    const char *kineto = kineto_file(); /* device activities, flows, string tids */
    if (kineto) args_set_aside_as_kept(kineto);
}

/* A spill_args that fails fails the read, naming what it was doing. */
TEST_CASE(arguments_not_set_aside_fail_the_read) {
    text t = mixed_trace(2000, false);
    write_file(path_of("aside-fails.json"), t.s, t.len);
    free(t.s);
    set_aside a = {.fail_at = 100};
    opprof_read_options aside = {.keep_marks = true, .threads = 1, .spill_args = take_args, .spill_ctx = &a};
    opprof_capture *c = NULL;
    opprof_read_error err = {0};
    CHECK_INT(opprof_capture_read(path_of("aside-fails.json"), &aside, &c, &err), OPPROF_ENOSPC);
    CHECK(c == NULL);
    CHECK_CONTAINS(err.message, "arguments set aside: no space left on device");
    CHECK(err.line > 1);
    free_set_aside(&a);
}

int main(int argc, char **argv) {
    if (!make_temp_dir(dir, sizeof dir)) return 1;
    int rc = check_main(argc, argv, "test_reader_split");
    remove_tree(dir);
    return rc;
}

/* ---- the id each event keeps, through the sort and PyTorch's merge ---- */

static int64_t count_sets(void *ctx, int part, const opprof_spilled_arg *args, size_t n) {
    (void)part;
    (void)args;
    (void)n;
    return (*(int64_t *)ctx)++;
}

/* Sets 0.. in the order the file gives them; events out of time order (the
 * sort), an only child named as its parent (PyTorch's merge: the parent
 * keeps its set, the child's is a mark of it), a B/E pair (the B's set and
 * the E's, both at the E: the second a mark). */
static const char MERGED_TRACE[] =
    "{\"schemaVersion\":1,\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":50,"
    "\"args\":{\"External id\":2}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":12,\"dur\":40,"
    "\"args\":{\"External id\":3}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":13,\"dur\":38,"
    "\"args\":{\"External id\":4}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":5,"
    "\"args\":{\"External id\":5}},"
    "{\"ph\":\"B\",\"cat\":\"user_annotation\",\"name\":\"step\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"a\":1}},"
    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":100,\"args\":{\"b\":\"x\"}}]}";

/* The sets that the event named `name` keeps: the array's, then its marks'. */
static void sets_of(const opprof_capture *c, const char *name, int64_t *first, int64_t *merged) {
    size_t n_ev = 0, n_marks = 0;
    const opprof_event *ev = opprof_capture_events(c, &n_ev);
    const opprof_mark *m = opprof_capture_marks(c, &n_marks);
    *first = *merged = -2;
    for (size_t e = 0; e < n_ev; e++) {
        if (strcmp(opprof_capture_name(c, ev[e].name), name)) continue;
        *first = opprof_capture_spilled_set(c, e);
        for (size_t k = 0; k < n_marks; k++)
            if (m[k].event == (int32_t)e && !strcmp(opprof_capture_name(c, m[k].name), OPPROF_SPILLED_ARGS_ARG))
                *merged = m[k].value.i;
    }
}

TEST_CASE(each_event_keeps_the_set_of_its_arguments) {
    int64_t next = 0;
    opprof_read_options o = {.keep_marks = true, .threads = 1, .spill_args = count_sets, .spill_ctx = &next};
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(MERGED_TRACE, sizeof MERGED_TRACE - 1, &o, &c, NULL), 0);
    if (!c) return;
    CHECK_INT(next, 6);
    size_t n_ev = 0;
    opprof_capture_events(c, &n_ev);
    CHECK_INT(n_ev, 4); /* the only child merged into its parent */
    int64_t first, merged;
    const struct {
        const char *name;
        int64_t first, merged;
    } want[] = {{"aten::linear", 0, -2}, {"aten::addmm", 1, 2}, {"aten::relu", 3, -2}, {"step", 4, 5}};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        sets_of(c, want[k].name, &first, &merged);
        CHECK_INT(first, want[k].first);
        CHECK_INT(merged, want[k].merged);
    }
    CHECK_INT(opprof_capture_spilled_set(c, n_ev), -1); /* past the events */
    CHECK_INT(opprof_capture_spilled_set(NULL, 0), -1);
    opprof_capture_free(c);
}
