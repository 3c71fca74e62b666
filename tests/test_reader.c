/* test_reader.c - reading traces back: ours, PyTorch's legacy array form,
 * a Kineto-form file built by hand, gzip; malformed input of every kind gets
 * an error with its position; the checks find what they should. */
#include "check.h"
#include "rows.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <zlib.h>

#include <locale.h>
#include <stdlib.h>

static char dir[256];

/* A growing text, for traces built in a loop. */
typedef struct text_buffer {
    char *data;
    size_t len, cap;
} text_buffer;

static void tb_put(text_buffer *b, const char *s) {
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->data = realloc(b->data, b->cap);
        if (!b->data) abort();
    }
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

static const char *tmp_path(const char *name) {
    static char path[4][600];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, 600, "%s/%s", dir, name);
    return p;
}

static char *table_of(const opprof_capture *c, opprof_sort_key sort, int limit) {
    opprof_averages *avg;
    char *t = NULL;
    if (opprof_capture_averages(c, &avg)) return NULL;
    opprof_averages_table_to_string(avg, &(opprof_table_options){.sort = sort, .row_limit = limit}, &t);
    opprof_averages_free(avg);
    return t;
}

/* Expect a read of `text` to fail with a message holding `what` at line:column. */
static void expect_error(const char *text, const char *what, long long line, long long column) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    int rc = opprof_capture_read_buffer(text, strlen(text), NULL, &c, &err);
    CHECK_INT(rc, OPPROF_EFORMAT);
    CHECK(c == NULL);
    CHECK_CONTAINS(err.message, what);
    if (line) {
        CHECK_INT(err.line, line);
        CHECK_INT(err.column, column);
    }
    CHECK(err.offset >= 0);
}

typedef struct problems {
    int count;
    char text[4096];
} problems;

static void collect(void *ctx, const opprof_trace_problem *p) {
    problems *ps = ctx;
    ps->count++;
    snprintf(ps->text + strlen(ps->text), sizeof ps->text - strlen(ps->text), "%lld:%lld %s\n", (long long)p->line,
             (long long)p->column, p->message);
}

/* The legacy PyTorch table's rows: name and calls (the last column). */
static int table_rows(const char *path, char names[][64], long long *calls, int max) {
    char *text = read_text(path);
    if (!text) return 0;
    int n = 0, dashes = 0;
    for (char *line = strtok(text, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        if (line[0] == '-') {
            dashes++;
            continue;
        }
        if (dashes != 2) continue;
        char first[64];
        if (sscanf(line, "%63s", first) != 1) continue;
        char *end = line + strlen(line);
        while (end > line && end[-1] == ' ') end--;
        char *start = end;
        while (start > line && start[-1] != ' ') start--;
        strcpy(names[n], first);
        calls[n] = atoll(start);
        n++;
    }
    free(text);
    return n;
}

TEST_CASE(own_trace_and_gzip) {
    char cmd[2048], *out = NULL;
    /* Our own trace reads back to the same tables, to the nanosecond. */
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet '%s'", bin_dir(), tmp_path("run"));
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    opprof_capture *c = NULL;
    opprof_read_error err;
    snprintf(cmd, sizeof cmd, "%s/run/cpu-step-4.json", dir);
    CHECK_INT(opprof_capture_read(cmd, NULL, &c, &err), 0);
    if (c) {
        char *time_table = table_of(c, OPPROF_SORT_SELF_CPU_TIME, 12);
        char *mem_table = table_of(c, OPPROF_SORT_SELF_CPU_MEMORY, 12);
        char path[700];
        snprintf(path, sizeof path, "%s/run/cpu-step-4.time.txt", dir);
        char *want_time = read_text(path);
        snprintf(path, sizeof path, "%s/run/cpu-step-4.memory.txt", dir);
        char *want_mem = read_text(path);
        CHECK_STR(time_table, want_time);
        CHECK_STR(mem_table, want_mem);
        opprof_capture_info info = opprof_capture_get_info(c);
        CHECK_INT(info.step_num, 4);
        CHECK(info.profile_memory);
        CHECK(info.overhead_range_ns > 0);
        size_t nt;
        const opprof_thread_info *th = opprof_capture_threads(c, &nt);
        CHECK_INT(nt, 1);
        CHECK_STR(th[0].name, "profile_cpu");
        opprof_free(time_table);
        opprof_free(mem_table);
        free(want_time);
        free(want_mem);

        /* 2. The same trace gzip-compressed. */
        char *json = read_text(cmd);
        gzFile gz = gzopen(tmp_path("trace.json.gz"), "wb");
        gzputs(gz, json);
        gzclose(gz);
        opprof_capture *cz = NULL;
        CHECK_INT(opprof_capture_read(tmp_path("trace.json.gz"), NULL, &cz, &err), 0);
        if (cz) {
            char *a = table_of(c, OPPROF_SORT_NONE, -1), *b = table_of(cz, OPPROF_SORT_NONE, -1);
            CHECK_STR(a, b);
            opprof_free(a);
            opprof_free(b);
        }
        opprof_capture_free(cz);
        /* A truncated gzip file: an error, not a partial capture. */
        char *gzdata = read_text(tmp_path("trace.json.gz"));
        FILE *f = fopen(tmp_path("cut.json.gz"), "wb");
        struct stat st;
        stat(tmp_path("trace.json.gz"), &st);
        fwrite(gzdata, 1, (size_t)st.st_size / 2, f);
        fclose(f);
        cz = NULL;
        CHECK(opprof_capture_read(tmp_path("cut.json.gz"), NULL, &cz, &err) != 0);
        CHECK(cz == NULL);
        /* ... and one with all its data but its trailer (the CRC and the
         * size): the JSON is whole, the file is not; from a file and from
         * memory alike */
        f = fopen(tmp_path("cut8.json.gz"), "wb");
        fwrite(gzdata, 1, (size_t)st.st_size - 8, f);
        fclose(f);
        CHECK_INT(opprof_capture_read(tmp_path("cut8.json.gz"), NULL, &cz, &err), OPPROF_EFORMAT);
        CHECK(cz == NULL);
        CHECK_CONTAINS(err.message, "the gzip stream is cut short");
        CHECK_INT(opprof_capture_read_buffer(gzdata, (size_t)st.st_size - 8, NULL, &cz, &err), OPPROF_EFORMAT);
        CHECK(cz == NULL);
        CHECK_CONTAINS(err.message, "the gzip stream is cut short");
        CHECK_INT(opprof_capture_read_buffer(gzdata, (size_t)st.st_size, NULL, &cz, &err), 0); /* whole: read */
        opprof_capture_free(cz);
        cz = NULL;
        free(gzdata);
        free(json);
    }
    opprof_capture_free(c);
}

TEST_CASE(pytorch_legacy_tables) {
    char cmd[2048];
    opprof_capture *c = NULL;
    opprof_read_error err;
    /* PyTorch 1.13's legacy export: names and calls as its own tables list them. */
    snprintf(cmd, sizeof cmd, "%s/tests/fixtures/pytorch-1.13/cpu-step-4.legacy.json", source_dir());
    CHECK_INT(opprof_capture_read(cmd, NULL, &c, &err), 0);
    if (c) {
        opprof_averages *avg;
        CHECK_INT(opprof_capture_averages(c, &avg), 0);
        char names[32][64];
        long long calls[32];
        const char *tables[] = {"cpu-step-4.time.txt", "cpu-step-4.memory.txt"};
        int matched = 0;
        for (int t = 0; t < 2; t++) {
            snprintf(cmd, sizeof cmd, "%s/tests/fixtures/pytorch-1.13/%s", source_dir(), tables[t]);
            int n = table_rows(cmd, names, calls, 32);
            CHECK_INT(n, 12);
            for (int i = 0; i < n; i++) {
                const opprof_average_row *r = row(avg, names[i]);
                CHECK(r != NULL);
                if (r) {
                    CHECK_INT(r->calls, calls[i]);
                    matched++;
                }
            }
        }
        CHECK_INT(matched, 24);
        /* ... and the times, which the legacy file carries: addmm's self 468 us. */
        const opprof_average_row *addmm = row(avg, "aten::addmm");
        if (addmm) CHECK_INT(addmm->self_ns, 468000);
        CHECK_INT(opprof_averages_self_total_ns(avg), 1030000);
        opprof_averages_free(avg);
    }
    opprof_capture_free(c);
}

TEST_CASE(kineto_by_hand) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    /* A Kineto-form trace written by hand: absolute microsecond timestamps,
     * string and integer ids, metadata, memory instants, other phases. */
    const char *kineto =
        "{\n"
        "  \"schemaVersion\": 1, \"deviceProperties\": [], \"distributedInfo\": {\"rank\": 0},\n"
        "  \"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#7\", \"pid\": 42, \"tid\": 42,\n"
        "   \"ts\": 1700000000000.000, \"dur\": 100.000, \"args\": {\"External id\": 1}},\n"
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 42, \"tid\": 42,\n"
        "   \"ts\": 1700000000010.500, \"dur\": 50.250, \"args\": {\"Input Dims\": [[128, 256], [256, 512]],\n"
        "   \"Input type\": [\"float\", \"float\"], \"Ev Idx\": 3}},\n"
        "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 42, \"tid\": 42,\n"
        "   \"ts\": 1700000000011, \"args\": {\"Device Type\": 0, \"Device Id\": -1, \"Addr\": 94000, \"Bytes\": 262144,\n"
        "   \"Total Allocated\": 262144, \"Total Reserved\": 262144}},\n"
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 42, \"tid\": 43,\n"
        "   \"ts\": 1700000000020, \"dur\": 1e1},\n"
        "  {\"ph\": \"C\", \"name\": \"counter\", \"pid\": 42, \"ts\": 1700000000000, \"args\": {\"v\": 1}},\n"
        "  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 42, \"tid\": 43, \"args\": {\"name\": \"worker \\\"2\\\"\"}},\n"
        "  {\"ph\": \"f\", \"id\": 1, \"pid\": 42, \"tid\": 42, \"ts\": 1700000000010.5, \"cat\": \"ac2g\", \"name\": \"f\"}\n"
        "  ],\n"
        "  \"traceName\": \"x.json\", \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1000\n"
        "}\n";
    CHECK_INT(opprof_capture_read_buffer(kineto, strlen(kineto), NULL, &c, &err), 0);
    if (c) {
        opprof_averages *avg;
        opprof_capture_averages(c, &avg);
        const opprof_average_row *a = row(avg, "aten::addmm"), *st = row(avg, "ProfilerStep*");
        CHECK(a && st);
        if (a && st) {
            CHECK_INT(a->calls, 2);
            CHECK_INT(a->total_ns, 50250 + 10000);
            CHECK_INT(a->self_cpu_mem, 262144);
            CHECK_INT(st->self_ns, 100000 - 50250);
            CHECK_INT(st->cpu_mem, 262144);
        }
        size_t nt;
        const opprof_thread_info *th = opprof_capture_threads(c, &nt);
        CHECK_INT(nt, 2);
        CHECK_STR(th[1].name, "worker \"2\"");
        CHECK_INT(opprof_capture_get_info(c).base_time_ns, 1000 + 1700000000000000LL);
        opprof_averages_free(avg);
    }
    opprof_capture_free(c);
}

TEST_CASE(malformed_input_placed) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    /* Malformed input: an error with its place, never a capture. */
    expect_error("", "empty", 0, 0);
    expect_error("{\"traceEvents\": [\n{\"ph\": \"X\", \"ts\": 1,\n", "unexpected end of the file", 3, 1);
    expect_error("{\"traceEvents\": [{\"ph\": \"X\" \"ts\": 1}]}", "expected ',' or '}'", 1, 29);
    expect_error("{\"traceEvents\": [{\"ts\": 1e999}]}", "number out of range", 1, 25);
    expect_error("{\"traceEvents\": [{\"ts\": 01}]}", "leading zero", 1, 26);
    expect_error("{\"traceEvents\": [{\"name\": \"a\x80z\"}]}", "invalid UTF-8", 1, 29);
    expect_error("{\"traceEvents\": [{\"name\": \"tab\there\"}]}", "control character", 1, 31);
    expect_error("{\"traceEvents\": [{\"name\": \"\\ud800\"}]}", "unpaired surrogate", 0, 0);
    expect_error("{\"traceEvents\": [{\"name\": \"\\q\"}]}", "invalid escape", 0, 0);
    expect_error("{\"traceEvents\": [{\"ok\": tru}]}", "invalid literal", 0, 0);
    expect_error("{\"other\": 1}", "no \"traceEvents\"", 1, 1);
    expect_error("\"just a string\"", "expected '{' or '['", 1, 1);
    expect_error("{\"traceEvents\": []} extra", "after the end of the trace", 1, 21);
    expect_error("{\"traceEvents\": [1]}", "expected an event object", 1, 18);
    /* A byte that is no printable text is named by its value: a NUL cut the
     * message ("found '"), a lone 0xFF went to the terminal as it was. */
    expect_error("\xff\xfe{}", "at the start, found byte 0xFF", 1, 1);
    expect_error("{\"traceEvents\": [{\"ph\": \"X\"}\x01]}", "after an event, found byte 0x01", 1, 29);
    expect_error("{\"traceEvents\": [{\"ph\": \x7f}]}", "unexpected byte 0x7F: expected a value", 1, 25);
    expect_error("{\"traceEvents\": [{\"ph\" \"X\"}]}", "expected ':' after a key, found '\"'", 1, 24);
    CHECK_INT(opprof_capture_read_buffer("\0{}", 3, NULL, &c, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "expected '{' or '[' at the start, found byte 0x00");
    /* Deep nesting stops at the limit, not at the stack's end. */
    char deep[4096];
    int k = snprintf(deep, sizeof deep, "{\"traceEvents\": [{\"args\": ");
    for (int i = 0; i < 1000; i++) deep[k++] = '[';
    deep[k] = '\0';
    expect_error(deep, "nesting deeper than 64", 0, 0);
    /* A string past the limit stops at the limit: 2 GiB of it, gzip-compressed. */
    gzFile gz = gzopen(tmp_path("huge.json.gz"), "wb1R"); /* run-length: fast */
    gzputs(gz, "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"");
    char block[1 << 16];
    memset(block, 'a', sizeof block);
    for (long i = 0; i < (2L << 30) / (long)sizeof block; i++) gzwrite(gz, block, sizeof block);
    gzputs(gz, "\"}]}");
    gzclose(gz);
    CHECK_INT(opprof_capture_read(tmp_path("huge.json.gz"), NULL, &c, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "string longer than 1048576 bytes");
    CHECK(err.offset > 1048576 && err.offset < 1048576 + 100);
    /* A missing file and a directory: -errno. */
    CHECK_INT(opprof_capture_read(tmp_path("missing.json"), NULL, &c, &err), -ENOENT);
    CHECK_CONTAINS(err.message, "no such file");
    CHECK_INT(opprof_capture_read(dir, NULL, &c, &err), -EISDIR);
}

TEST_CASE(checks_place_each_problem) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    /* Checks: each problem with its line and column. */
    const char *odd =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 0, \"dur\": 10, \"tid\": 1},\n"
        "{\"ph\": \"X\", \"name\": \"b\", \"ts\": 5, \"dur\": 10, \"tid\": 1},\n"
        "{\"ph\": \"Z\", \"name\": \"c\"},\n"
        "{\"ph\": \"X\", \"name\": \"d\", \"ts\": 1, \"dur\": -4, \"tid\": 2},\n"
        "{\"ph\": \"X\", \"ts\": 1, \"dur\": 4},\n"
        "{\"ph\": \"X\", \"name\": \"e\", \"ts\": \"soon\", \"dur\": 4},\n"
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Bytes\": 100, \"Total Allocated\": 100}},\n"
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 2, \"args\": {\"Bytes\": 50, \"Total Allocated\": 170}},\n"
        "{\"ph\": \"B\", \"name\": \"old\", \"ts\": 2},\n"
        "{\"ph\": \"X\", \"name\": \"nul\\u0000hidden\", \"ts\": 3, \"dur\": 1, \"tid\": 3}\n"
        "], \"dropped_events\": 7}\n";
    problems ps = {0};
    opprof_read_options opt = {.on_problem = collect, .ctx = &ps};
    CHECK_INT(opprof_capture_read_buffer(odd, strlen(odd), &opt, &c, &err), 0);
    CHECK_INT(ps.count, 9);
    CHECK_CONTAINS(ps.text, "4:1 unknown phase \"Z\"");
    CHECK_CONTAINS(ps.text, "11:1 event field \"name\" holds \\u0000, which no name can keep"); /* never cut silently */
    CHECK_CONTAINS(ps.text, "5:1 complete event 'd' has a negative duration");
    CHECK_CONTAINS(ps.text, "6:1 complete event without \"name\"");
    CHECK_CONTAINS(ps.text, "7:1 event field \"ts\" has the wrong type");
    /* a begin never ended is read to the end (Chrome's viewer), and listed with its share of the trace */
    CHECK_CONTAINS(ps.text, "10:1 begin event 'old' (thread 0) never ended: read as lasting to the trace's end "
                            "(0.013 ms, 86.7 % of the trace)");
    CHECK_CONTAINS(ps.text, "3:1 complete event 'b' overlaps 'a' (line 2)");
    CHECK_CONTAINS(ps.text, "9:1 memory totals do not add up: Total Allocated 170 after 100, but Bytes is 50");
    CHECK_CONTAINS(ps.text, "0:0 7 events were dropped when recording");
    /* Two allocators interleaved (the CPU's and CUDA device 0's, as a
     * Kineto trace with memory profiling has them): each keeps its own
     * running total, so none is a problem; a wrong total in one still is. */
    const char *two =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Bytes\": 100, \"Total Allocated\": 100}},\n"
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 2, \"args\": {\"Bytes\": 512, \"Total Allocated\": 512, "
        "\"Device Type\": 1, \"Device Id\": 0}},\n"
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 3, \"args\": {\"Bytes\": 20, \"Total Allocated\": 120}},\n"
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 4, \"args\": {\"Bytes\": -512, \"Total Allocated\": 0, "
        "\"Device Type\": 1, \"Device Id\": 0}},\n"
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 5, \"args\": {\"Bytes\": 8, \"Total Allocated\": 9, "
        "\"Device Type\": 1, \"Device Id\": 0}}\n"
        "]}\n";
    problems two_ps = {0};
    opt.ctx = &two_ps;
    opprof_capture_free(c);
    c = NULL;
    CHECK_INT(opprof_capture_read_buffer(two, strlen(two), &opt, &c, &err), 0);
    CHECK_INT(two_ps.count, 1);
    CHECK_CONTAINS(two_ps.text, "6:1 memory totals do not add up: Total Allocated 9 after 0, but Bytes is 8 "
                                "(CUDA device 0's allocator)");
    opt.ctx = &ps;
    /* Without a problem callback, the same file reads; b is cut at a's end. */
    opprof_capture_free(c);
    c = NULL;
    CHECK_INT(opprof_capture_read_buffer(odd, strlen(odd), NULL, &c, &err), 0);
    size_t nw;
    opprof_capture_warnings(c, &nw);
    CHECK_INT(nw, 2); /* b overlaps a; 'old' never ended */
    opprof_capture_free(c);
}

TEST_CASE(begin_end_pairs) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    problems ps = {0};
    opprof_read_options opt = {.on_problem = collect, .ctx = &ps};
    size_t nw;
    /* Begin/end pairs ("B"/"E", as Chrome's tracing and many C and C++
     * profilers write): each "E" ends the innermost "B" open on its thread;
     * the capture is the same as with complete events. */
    const char *pairs =
        "[\n"
        "{\"ph\": \"B\", \"name\": \"batch_0\", \"cat\": \"user_annotation\", \"ts\": 0, \"pid\": 1, \"tid\": 1},\n"
        "{\"ph\": \"B\", \"name\": \"aten::addmm\", \"cat\": \"cpu_op\", \"ts\": 10, \"pid\": 1, \"tid\": 1},\n"
        "{\"ph\": \"B\", \"name\": \"aten::addmm\", \"cat\": \"cpu_op\", \"ts\": 12, \"pid\": 1, \"tid\": 2},\n"
        "{\"ph\": \"E\", \"ts\": 40, \"pid\": 1, \"tid\": 1},\n"
        "{\"ph\": \"E\", \"ts\": 20, \"pid\": 1, \"tid\": 2},\n"
        "{\"ph\": \"E\", \"name\": \"batch_0\", \"ts\": 100, \"pid\": 1, \"tid\": 1}\n"
        "]\n";
    const char *complete =
        "[\n"
        "{\"ph\": \"X\", \"name\": \"batch_0\", \"cat\": \"user_annotation\", \"ts\": 0, \"dur\": 100, \"pid\": 1, \"tid\": 1},\n"
        "{\"ph\": \"X\", \"name\": \"aten::addmm\", \"cat\": \"cpu_op\", \"ts\": 10, \"dur\": 30, \"pid\": 1, \"tid\": 1},\n"
        "{\"ph\": \"X\", \"name\": \"aten::addmm\", \"cat\": \"cpu_op\", \"ts\": 12, \"dur\": 8, \"pid\": 1, \"tid\": 2}\n"
        "]\n";
    opprof_capture *from_pairs = NULL, *from_complete = NULL;
    CHECK_INT(opprof_capture_read_buffer(pairs, strlen(pairs), &opt, &from_pairs, &err), 0);
    CHECK_INT(ps.count, 0);
    CHECK_INT(opprof_capture_read_buffer(complete, strlen(complete), NULL, &from_complete, &err), 0);
    if (from_pairs && from_complete) {
        char *a = table_of(from_pairs, OPPROF_SORT_NONE, -1), *b = table_of(from_complete, OPPROF_SORT_NONE, -1);
        CHECK_STR(a, b);
        CHECK_CONTAINS(a, "aten::addmm");
        opprof_free(a);
        opprof_free(b);
        size_t n;
        const opprof_event *ev = opprof_capture_events(from_pairs, &n);
        CHECK_INT(n, 3);
        CHECK_INT(ev[1].parent, 0); /* addmm inside batch_0 on thread 1 */
        CHECK_INT(ev[1].duration_ns, 30000);
        CHECK_INT(ev[0].kind, OPPROF_KIND_USER_ANNOTATION);
        CHECK_INT(ev[1].kind, OPPROF_KIND_CPU_OP);
    }
    opprof_capture_free(from_pairs);
    opprof_capture_free(from_complete);
    /* Unmatched ends, ends before their begins, begins without "name" or
     * "ts", and begins left open: each said with its place, none read. */
    const char *bad_pairs = "[\n"
                            "{\"ph\": \"E\", \"ts\": 5, \"tid\": 1},\n"
                            "{\"ph\": \"B\", \"name\": \"late\", \"ts\": 50, \"tid\": 1},\n"
                            "{\"ph\": \"E\", \"ts\": 40, \"tid\": 1},\n"
                            "{\"ph\": \"B\", \"ts\": 60, \"tid\": 1},\n"
                            "{\"ph\": \"B\", \"name\": \"x\", \"tid\": 1},\n"
                            "{\"ph\": \"E\", \"tid\": 1},\n"
                            "{\"ph\": \"B\", \"name\": \"open\", \"ts\": 70, \"tid\": 3},\n"
                            "{\"ph\": \"X\", \"name\": \"kept\", \"ts\": 0, \"dur\": 1, \"tid\": 1}\n"
                            "]\n";
    memset(&ps, 0, sizeof ps);
    c = NULL;
    CHECK_INT(opprof_capture_read_buffer(bad_pairs, strlen(bad_pairs), &opt, &c, &err), 0);
    CHECK_INT(ps.count, 6);
    CHECK_CONTAINS(ps.text, "2:1 end event without a begin event open on its thread");
    CHECK_CONTAINS(ps.text, "4:1 end event of 'late' (line 3) is earlier than its begin");
    CHECK_CONTAINS(ps.text, "5:1 begin event without \"name\"");
    CHECK_CONTAINS(ps.text, "6:1 begin event without \"ts\"");
    CHECK_CONTAINS(ps.text, "7:1 end event without \"ts\"");
    if (c) { /* 'open', never ended, lasts to the trace's end (70 us, as it starts), and is said */
        size_t n;
        const opprof_event *ev = opprof_capture_events(c, &n);
        CHECK_INT(n, 2);
        CHECK_STR(opprof_capture_name(c, ev[n - 1].name), "open");
        const char *const *w = opprof_capture_warnings(c, &nw);
        CHECK_INT(nw, 1);
        if (nw)
            CHECK_STR(w[0], "1 begin event(s) never ended (first: 'open'): read as lasting to the trace's end, the "
                            "longest 0.0 % of the trace");
    }
    opprof_capture_free(c);
}

TEST_CASE(numbers_of_every_length) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    /* Numbers of every length: the reader takes plain ones eight digits at a
     * time, and falls back to a byte at a time near the window's end or past
     * 18 digits; each duration must come back to the nanosecond, rounded half
     * up past the third decimal. */
    {
        static const char *const fractions[] = {"", ".5", ".123", ".1235", ".00001234"};
        static const int64_t fraction_ns[] = {0, 500, 123, 124, 0};
        text_buffer text = {0};
        char buf[256];
        tb_put(&text, "{\"traceEvents\": [\n");
        int n_cases = 0;
        for (int digits = 1; digits <= 15; digits++)
            for (int f = 0; f < 5; f++) {
                snprintf(buf, sizeof buf,
                         "%s{\"ph\":\"X\",\"name\":\"digits%d_f%d\",\"pid\":1,\"tid\":%d,\"ts\":0,"
                         "\"dur\":%.*s%s}\n",
                         n_cases ? "," : "", digits, f, n_cases + 1, digits, "987654321098765", fractions[f]);
                tb_put(&text, buf);
                n_cases++;
            }
        tb_put(&text, "]}\n");
        c = NULL;
        CHECK_INT(opprof_capture_read_buffer(text.data, text.len, NULL, &c, &err), 0);
        size_t n = 0;
        const opprof_event *ev = c ? opprof_capture_events(c, &n) : NULL;
        CHECK_INT(n, n_cases);
        int right = 0;
        for (size_t i = 0; i < n; i++) {
            int digits, f;
            if (sscanf(opprof_capture_name(c, ev[i].name), "digits%d_f%d", &digits, &f) != 2) continue;
            snprintf(buf, sizeof buf, "%.*s", digits, "987654321098765");
            int64_t want = strtoll(buf, NULL, 10) * 1000 + fraction_ns[f];
            if (ev[i].duration_ns == want)
                right++;
            else
                fprintf(stderr, "digits%d_f%d: %lld ns, want %lld\n", digits, f, (long long)ev[i].duration_ns,
                        (long long)want);
        }
        CHECK_INT(right, n_cases);
        opprof_capture_free(c);
        free(text.data);
        /* 16 digits and more, and a leading zero, still say their errors */
        expect_error("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 0123}]}", "leading zero", 1, 37);
        expect_error("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 12345678.}]}", "no digit after '.'", 1, 45);
    }
}

/* A program that set a locale with a decimal comma (de_DE, compiled here by
 * localedef) reads and writes traces through the library: strtod read
 * "1.5" as 1, and the writer's doubles were "0,5". Both are C's now, the
 * program's locale kept. */
TEST_CASE(numbers_read_and_written_under_a_decimal_comma) {
    char cmd[1200], *out = NULL;
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' 2>&1", tmp_path("loc"),
             tmp_path("loc"));
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    setenv("LOCPATH", tmp_path("loc"), 1);
    CHECK(setlocale(LC_ALL, "de_DE.UTF-8") != NULL);
    char printed[16];
    snprintf(printed, sizeof printed, "%.1f", 1.5);
    CHECK_STR(printed, "1,5"); /* the locale took */
    static const char TRACE[] = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 10.5, \"dur\": 2.25,"
                                " \"pid\": 1, \"tid\": 1, \"args\": {\"r\": 0.75}}]}";
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(TRACE, strlen(TRACE), NULL, &c, NULL), 0);
    size_t n = 0;
    const opprof_event *e = c ? opprof_capture_events(c, &n) : NULL;
    CHECK_INT(n, 1);
    if (e && n == 1) CHECK_INT(e[0].duration_ns, 2250);
    CHECK_INT(c ? opprof_capture_chrome_write(c, tmp_path("comma.json")) : -1, 0);
    opprof_capture *back = NULL;
    CHECK_INT(opprof_capture_read(tmp_path("comma.json"), NULL, &back, NULL), 0);
    e = back ? opprof_capture_events(back, &n) : NULL;
    if (e && n == 1) CHECK_INT(e[0].duration_ns, 2250);
    snprintf(printed, sizeof printed, "%.1f", 1.5);
    CHECK_STR(printed, "1,5"); /* and it stays the program's */
    setlocale(LC_ALL, "C");
    opprof_capture_free(back);
    opprof_capture_free(c);
}

static int run_all(int argc, char **argv) {
    if (!make_temp_dir(dir, sizeof dir)) return 1;
    int rc = check_main(argc, argv, "test_reader");
    remove_tree(dir);
    return rc;
}

int main(int argc, char **argv) { return run_all(argc, argv); }
