/* test_sizes.c - the allocator contract, checked: opprof and nn tell their
 * allocator hook the size of every block they free or grow (they keep it in
 * a header beside the block); here a hook that remembers each block's size
 * counts every call whose size is wrong, and every block still live at the end. The workload goes
 * through every output and input: a profiled forward pass, key averages
 * (grouped three ways), tables, JSON rows, the HTML report, the Chrome trace
 * written and read back, folded stacks, a diff, the summary, a merge and the
 * ranks compared. (Blocks still live at the end are said, not failed: the
 * recorder keeps its thread buffers for the next session.) TRAP=1 stops at
 * the first wrong size, for a debugger's backtrace. And a read out of memory
 * at each of its allocations in turn: it fails whole, or reads what it would. */
#include "check.h"
#include "testutil.h"

#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>

static long g_wrong, g_live, g_calls;

/* Each block carries its size in a 16-byte header (malloc's alignment). */
static void *checking_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)ctx;
    __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED); /* a read's helper thread allocates too */
    if (ptr) {
        size_t *head = (size_t *)((char *)ptr - 16);
        if (*head != old_size) {
            if (__atomic_fetch_add(&g_wrong, 1, __ATOMIC_RELAXED) < 5)
                fprintf(stderr, "block of %zu bytes freed or grown as %zu bytes\n", *head, old_size);
            if (getenv("TRAP")) __builtin_trap();
        }
        if (new_size == 0) {
            __atomic_sub_fetch(&g_live, 1, __ATOMIC_RELAXED);
            free(head);
            return NULL;
        }
        head = realloc(head, new_size + 16);
        if (!head) return NULL;
        *head = new_size;
        return (char *)head + 16;
    }
    if (new_size == 0) return NULL;
    size_t *head = malloc(new_size + 16);
    if (!head) return NULL;
    *head = new_size;
    __atomic_add_fetch(&g_live, 1, __ATOMIC_RELAXED);
    return (char *)head + 16;
}

static void outputs(const opprof_capture *cap, const char *dir) {
    opprof_averages_options groupings[] = {{0}, {.group_by_input_shape = true}, {.group_by_stack_n = 3}};
    for (int g = 0; g < 3; g++) {
        opprof_averages *avg;
        CHECK_INT(opprof_capture_averages_ex(cap, &groupings[g], &avg), 0);
        opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME, .peak_memory = true, .flops = true};
        char *text = NULL, *json = NULL;
        CHECK_INT(opprof_averages_table_to_string(avg, &o, &text), 0);
        CHECK_INT(opprof_averages_json_to_string(avg, &o, &json), 0);
        opprof_free(text);
        opprof_free(json);
        opprof_averages_free(avg);
    }
    char *html = NULL, *stacks = NULL, *diff = NULL;
    CHECK_INT(opprof_capture_html_to_string(cap, &html), 0);
    CHECK_INT(opprof_capture_stacks_to_string(cap, OPPROF_STACKS_SELF_TIME, &stacks), 0);
    opprof_free(html);
    opprof_free(stacks);
    for (int f = OPPROF_DIFF_TEXT; f <= OPPROF_DIFF_HTML; f++) {
        CHECK_INT(opprof_capture_diff_to_string(cap, cap, 10, (opprof_diff_format)f, &diff), 0);
        opprof_free(diff);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    CHECK_INT(opprof_capture_chrome_write(cap, path), 0);
    opprof_capture *back = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &back, &err), 0);
    opprof_summary *sum;
    CHECK_INT(opprof_summary_new(&sum), 0);
    opprof_averages *avg;
    CHECK_INT(opprof_capture_averages(back, &avg), 0);
    CHECK_INT(opprof_summary_add_capture(sum, back, avg), 0);
    char *summary = NULL;
    CHECK_INT(opprof_summary_json_to_string(sum, &summary), 0);
    opprof_free(summary);
    opprof_averages_free(avg);
    opprof_summary_free(sum);
    char merged[600];
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    const char *paths[] = {path, path};
    CHECK_INT(opprof_merge_traces(paths, 2, merged, NULL, &err), 0);
    opprof_capture *two[] = {back, back};
    opprof_ranks *ranks;
    CHECK_INT(opprof_ranks_analyze(two, 2, &ranks), 0);
    char *table = NULL;
    CHECK_INT(opprof_ranks_table_to_string(ranks, &table), 0);
    opprof_free(table);
    opprof_ranks_free(ranks);
    opprof_capture_free(back);
}

TEST_CASE(every_free_and_realloc_gets_the_size_it_allocated) {
    static const opprof_allocator checking = {checking_realloc, NULL};
    CHECK_INT(opprof_set_allocator(&checking), 0);
    CHECK_INT(nn_set_allocator(&checking), 0);
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    {
        nn_manual_seed(5);
        nn_module *l[3], *m;
        CHECK_INT(nn_linear_new(&l[0], 64, 128), 0);
        CHECK_INT(nn_relu_new(&l[1]), 0);
        CHECK_INT(nn_linear_new(&l[2], 128, 16), 0);
        CHECK_INT(nn_sequential_new(&m, l, 3), 0);
        nn_tensor *x;
        CHECK_INT(nn_tensor_randn(&x, 2, (int64_t[]){32, 64}), 0);
        opprof_config cfg = opprof_config_default();
        cfg.profile_memory = cfg.record_shapes = cfg.with_stack = cfg.with_flops = true;
        opprof_session *s;
        CHECK_INT(opprof_session_start(&s, &cfg), 0);
        for (int step = 0; step < 3; step++) {
            OPPROF_SCOPE("batch_%d", step);
            nn_tensor *y = NULL;
            CHECK_INT(nn_module_forward(m, x, &y), 0);
            nn_tensor_free(y);
        }
        CHECK_INT(opprof_session_stop(s), 0);
        opprof_capture *cap = NULL;
        CHECK_INT(opprof_session_take_capture(s, &cap), 0);
        if (cap) outputs(cap, dir);
        opprof_capture_free(cap);
        opprof_session_free(s);
        nn_tensor_free(x);
        nn_module_free(m);
        nn_release_cached_memory();
    }
    remove_tree(dir);
    printf("test_sizes: %ld allocator calls, %ld with a wrong size, %ld blocks live at the end\n", g_calls, g_wrong,
           g_live);
    CHECK(g_calls > 100);
    CHECK_INT(g_wrong, 0);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_sizes"); }

/* ---- a read out of memory at each of its allocations in turn ---- */

static long g_fail_at; /* the call that fails, counted from the read's (or output's) first; 0: none */
static long g_read_calls;

static void *failing_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    if (new_size > old_size && __atomic_add_fetch(&g_read_calls, 1, __ATOMIC_RELAXED) == g_fail_at)
        return NULL; /* counted always */
    return checking_realloc(ctx, ptr, old_size, new_size);
}

static int64_t next_set(void *ctx, int part, const opprof_spilled_arg *args, size_t n) {
    (void)part;
    (void)args;
    (void)n;
    return (*(int64_t *)ctx)++;
}

/* Another writer's trace whose arguments are set aside (opprof sql's read):
 * events out of order, an only child merged into its parent, a B/E pair,
 * a device activity and its launch, a flow, a counter. */
static const char SPILLED_TRACE[] =
    "{\"schemaVersion\":1,\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":50,"
    "\"args\":{\"External id\":2,\"Input Dims\":[[2,3],[3]]}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":12,\"dur\":40,"
    "\"args\":{\"External id\":3}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":13,\"dur\":38,"
    "\"args\":{\"External id\":4}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":14,\"dur\":3,"
    "\"args\":{\"correlation\":7,\"External id\":4}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":9,"
    "\"args\":{\"correlation\":7,\"External id\":4,\"device\":0}},"
    "{\"ph\":\"s\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":14,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
    "{\"ph\":\"f\",\"id\":7,\"pid\":0,\"tid\":7,\"ts\":20,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},"
    "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":15,\"args\":{\"bytes\":64}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":5,"
    "\"args\":{\"External id\":5}},"
    "{\"ph\":\"B\",\"cat\":\"user_annotation\",\"name\":\"step\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"a\":1}},"
    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":100,\"args\":{\"b\":\"x\"}}]}";

/* opprof's own trace of a sampled run (opprof record --sample): a range, a
 * profile chunk of 2 samples, the sampling facts and an off-CPU time. */
static const char SAMPLED_TRACE[] =
    "{\"schemaVersion\":1,\"opprof_version\":\"0.6.0\",\"step_num\":0,\"warnings\":[],"
    "\"baseTimeNanoseconds\":1796652442468496651,\"traceEvents\":["
    "{\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"thread_name\",\"pid\":9,\"tid\":9,\"args\":{\"name\":\"main\"}},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":9,\"tid\":9,\"ts\":30,\"dur\":784},"
    "{\"ph\":\"P\",\"cat\":\"disabled-by-default-v8.cpu_profiler\",\"name\":\"Profile\",\"id\":1,\"pid\":9,\"tid\":9,"
    "\"ts\":394,\"args\":{\"data\":{\"startTime\":394}}},"
    "{\"ph\":\"P\",\"cat\":\"disabled-by-default-v8.cpu_profiler\",\"name\":\"ProfileChunk\",\"id\":1,\"pid\":9,"
    "\"tid\":9,\"ts\":394,\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
    "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"scriptId\":\"0\",\"url\":\"\",\"lineNumber\":-1}},"
    "{\"id\":2,\"parent\":1,\"opprof_range\":1,\"callFrame\":{\"functionName\":\"ProfilerStep#0\",\"url\":\"\"}},"
    "{\"id\":3,\"parent\":2,\"callFrame\":{\"functionName\":\"gemm\",\"url\":\"gemm.c\",\"lineNumber\":25}}],"
    "\"samples\":[3,3]},\"timeDeltas\":[0.0,1000.0],\"endTime\":1394}}}],"
    "\"opprof_sampling\":{\"period_ns\":1000000,\"off_cpu\":1,\"samples_lost\":0},"
    "\"opprof_off_cpu\":[{\"preempted\":0,\"pid\":9,\"tid\":9,\"ts\":524,\"dur\":182}]}";

/* A bare array cut short by its writer: read, with a warning that says so. */
static const char CUT_SHORT_TRACE[] = "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},";

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fputs(text, f) >= 0);
    CHECK_INT(fclose(f), 0);
}

/* Every allocation of a read failing in turn: the read says out of memory,
 * gives no capture and frees every block it took (nothing dropped in
 * silence: a category, a warning, a sample); once none fails, it reads as
 * it would. The number of allocations: `exact` where one thread reads (a
 * .pftrace is translated on a thread of its own beside the reader, whose
 * allocations and the reader's come in either order). */
static long read_out_of_memory_at_each(const char *path, bool spill, bool exact, size_t *events, size_t *warnings) {
    int rc = OPPROF_ENOMEM;
    long at = 1;
    for (; rc == OPPROF_ENOMEM && at < 100000; at++) {
        int64_t sets = 0;
        opprof_read_options o = {
            .keep_marks = spill, .threads = 1, .spill_args = spill ? next_set : NULL, .spill_ctx = &sets};
        opprof_capture *c = NULL;
        long live = g_live;
        g_read_calls = 0;
        g_fail_at = at;
        opprof_read_error err = {0};
        rc = opprof_capture_read(path, &o, &c, &err);
        g_fail_at = 0;
        if (rc == OPPROF_ENOMEM) CHECK(c == NULL && strstr(err.message, "out of memory") != NULL);
        if (rc != OPPROF_ENOMEM) CHECK_INT(rc, 0);
        if (!rc && c) {
            opprof_capture_events(c, events);
            opprof_capture_warnings(c, warnings);
            if (spill) CHECK_INT(sets, 8); /* SPILLED_TRACE's: each event's, the B's and the E's, the counter's */
        }
        opprof_capture_free(c);
        CHECK_INT(g_live, live); /* nothing kept */
    }
    if (exact) CHECK_INT(at - 2, g_read_calls); /* each failed in turn, then none */
    return at - 2;
}

TEST_CASE(a_read_out_of_memory_fails_whole_at_each_allocation) {
    static const opprof_allocator failing = {failing_realloc, NULL};
    CHECK_INT(opprof_set_allocator(&failing), 0);
    char dir[256], path[512], pf[512];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/trace.json", dir);
    snprintf(pf, sizeof pf, "%s/sampled.pftrace", dir);
    size_t events = 0, warnings = 0;
    write_text(path, SPILLED_TRACE);
    long n = read_out_of_memory_at_each(path, true, true, &events, &warnings);
    printf("test_sizes: a Kineto trace, its arguments set aside: %ld allocations\n", n);
    CHECK_INT(events, 6);
    write_text(path, CUT_SHORT_TRACE);
    read_out_of_memory_at_each(path, false, true, &events, &warnings);
    CHECK_INT(events, 1);
    CHECK_INT(warnings, 1); /* the array has no closing ']' */
    write_text(path, SAMPLED_TRACE);
    n = read_out_of_memory_at_each(path, false, true, &events, &warnings);
    printf("test_sizes: a sampled trace: %ld allocations\n", n);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &c, NULL), 0);
    size_t samples = 0, off = 0;
    opprof_capture_samples(c, &samples);
    opprof_capture_off_cpu(c, &off);
    CHECK_INT(samples, 2);
    CHECK_INT(off, 1);
    CHECK_INT(opprof_capture_perfetto_write(c, pf), 0);
    opprof_capture_free(c);
    n = read_out_of_memory_at_each(pf, false, false, &events, &warnings);
    printf("test_sizes: its .pftrace: %ld allocations\n", n);
    CHECK(n > 20);
    CHECK_INT(g_wrong, 0);
    CHECK_INT(opprof_set_allocator(NULL), 0);
    remove_tree(dir);
}

/* ---- each output out of memory at each of its allocations in turn ---- */

typedef struct output {
    char *data;
    size_t len;
} output;

/* Output `which` of c (a table, its JSON, the HTML report, folded stacks, a
 * diff, the Chrome trace, the .pftrace, diff --stat's page, ranks compared,
 * native functions) into *out (NULL on an error). */
static int write_output(const opprof_capture *c, int which, output *out) {
    *out = (output){0};
    opprof_averages *avg = NULL;
    opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME, .peak_memory = true, .flops = true};
    char *text = NULL;
    int rc = which <= 1 ? opprof_capture_averages(c, &avg) : 0;
    if (which == 0 && !rc) rc = opprof_averages_table_to_string(avg, &o, &text);
    if (which == 1 && !rc) rc = opprof_averages_json_to_string(avg, &o, &text);
    if (which == 2) rc = opprof_capture_html_to_string(c, &text);
    if (which == 3) rc = opprof_capture_stacks_to_string(c, OPPROF_STACKS_SELF_TIME, &text);
    if (which == 4) rc = opprof_capture_diff_to_string(c, c, 10, OPPROF_DIFF_TEXT, &text);
    if (which == 7) { /* diff --stat's page, three runs a side */
        const opprof_capture *runs[] = {c, c, c};
        opprof_stat_diff *d = NULL;
        rc = opprof_stat_diff_new(runs, 3, runs, 3, NULL, &d);
        if (!rc) rc = opprof_stat_diff_to_string(d, 20, OPPROF_DIFF_HTML, &text);
        opprof_stat_diff_free(d);
    }
    if (which == 8) { /* two ranks */
        opprof_capture *ranks[] = {(opprof_capture *)c, (opprof_capture *)c};
        opprof_ranks *r = NULL;
        rc = opprof_ranks_analyze(ranks, 2, &r);
        if (!rc) rc = opprof_ranks_json_to_string(r, &text);
        opprof_ranks_free(r);
    }
    if (which == 9) rc = opprof_capture_functions_json_to_string(c, 20, &text); /* a sampled capture's */
    if (which == 10) { /* the what-if replay, its first event's name half as long: its figures as text */
        size_t n_events = 0;
        const opprof_event *ev = opprof_capture_events(c, &n_events);
        opprof_what_if_change change = {.kind = OPPROF_WHAT_IF_SCALE, .value = 0.5};
        snprintf(change.name, sizeof change.name, "%s", n_events ? opprof_capture_name(c, ev[0].name) : "");
        opprof_what_if_result w;
        rc = opprof_capture_what_if(c, NULL, &change, 1, &w);
        char figures[256];
        snprintf(figures, sizeof figures, "%zu %.17g %.17g %.17g %zu %.17g %.17g", w.steps, w.measured_step_ns,
                 w.predicted_step_ns, w.replay_error_percent, w.changed_calls, w.changed_before_ns, w.changed_after_ns);
        if (!rc && !(out->data = strdup(figures))) return -1;
        if (!rc) out->len = strlen(figures);
    }
    opprof_averages_free(avg);
    if (which == 5 || which == 6) {
        FILE *f = open_memstream(&out->data, &out->len);
        if (!f) return -1;
        rc = which == 5 ? opprof_capture_chrome_write_stream(c, f, "t") : opprof_capture_perfetto_write_stream(c, f);
        fclose(f);
        if (rc) free(out->data), *out = (output){0};
    } else if (text) {
        out->len = strlen(text);
        out->data = malloc(out->len + 1);
        if (out->data) memcpy(out->data, text, out->len + 1);
        opprof_free(text);
    }
    return rc;
}

static const char *const OUTPUTS[] = {"table",  "json",     "html",      "stacks", "diff",   "chrome",
                                      "perfetto", "stat html", "ranks",  "functions", "what-if"};
enum { N_OUTPUTS = sizeof OUTPUTS / sizeof *OUTPUTS };

/* Each output of the capture that `path` holds, each of its allocations
 * failing in turn: out of memory and no output, or the same output. */
static void outputs_out_of_memory_at_each(const char *path) {
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &c, NULL), 0);
    for (int which = 0; c && which < N_OUTPUTS; which++) {
        output whole, got;
        g_read_calls = 0;
        int rc0 = write_output(c, which, &whole);
        if (which == 9 && rc0 == OPPROF_EINVAL) continue; /* no samples: no functions */
        CHECK_INT(rc0, 0);
        long n = g_read_calls;
        for (long at = 1; at <= n; at++) {
            long live = g_live;
            g_read_calls = 0;
            g_fail_at = at;
            int rc = write_output(c, which, &got);
            g_fail_at = 0;
            if (rc != OPPROF_ENOMEM && (rc || got.len != whole.len || memcmp(got.data, whole.data, got.len)))
                fprintf(stderr, "%s: %s: allocation %ld of %ld failed: %d\n", path, OUTPUTS[which], at, n, rc);
            CHECK(rc == OPPROF_ENOMEM ? got.data == NULL
                                      : !rc && got.len == whole.len && !memcmp(got.data, whole.data, got.len));
            free(got.data);
            CHECK_INT(g_live, live);
        }
        free(whole.data);
    }
    opprof_capture_free(c);
}

/* Found by it: a .pftrace of input shapes written through a NULL string,
 * averages with warnings freed twice, shapes formatted "[]", a .pftrace's
 * facts, the HTML's arguments and diff --stat's method line left out with no
 * error. (The what-if replay, on malloc until 0e23b0f, was half done in
 * silence: test_out_of_memory found it.) */
TEST_CASE(each_output_out_of_memory_fails_whole_at_each_allocation) {
    static const opprof_allocator failing = {failing_realloc, NULL};
    CHECK_INT(opprof_set_allocator(&failing), 0);
    char dir[256], path[512];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/sampled.json", dir);
    write_text(path, SAMPLED_TRACE);
    outputs_out_of_memory_at_each(path);
    snprintf(path, sizeof path, "%s/tests/fixtures/onnxruntime-1.30/mlp.json", source_dir());
    outputs_out_of_memory_at_each(path); /* warnings, shapes */
    snprintf(path, sizeof path,
             "%s/tests/fixtures/real-traces/hta__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz", source_dir());
    outputs_out_of_memory_at_each(path); /* device activities, flows, shapes */
    CHECK_INT(g_wrong, 0);
    CHECK_INT(opprof_set_allocator(NULL), 0);
    remove_tree(dir);
}
