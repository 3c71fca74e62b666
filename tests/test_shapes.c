/* test_shapes.c - the second diagnostic pass: input shapes, call sites,
 * FLOPs, peak memory, folded stacks; live, in the trace, and read back. */
#include "check.h"
#include "testutil.h"

#include <nn/nn.h>
#include <opprof/capture.h>
#include <stdlib.h>

typedef struct result {
    char shapes_table[16384];
    char stack_table[16384];
    char stacks[8192];
    int64_t flops_total;
    int addmm_rows, addmm_calls_each_ok;
    int64_t forward_peak;
    int64_t step_peaks[4];
    int n_steps;
    int64_t self_total_us;
    char first_site_file[128];
} result;

static int on_ready(const opprof_capture *c, void *user) {
    result *r = user;
    opprof_averages *avg;
    opprof_averages_options by_shape = {.group_by_input_shape = true};
    CHECK_INT(opprof_capture_averages_ex(c, &by_shape, &avg), 0);
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    r->addmm_calls_each_ok = 1;
    for (size_t i = 0; i < n; i++) {
        r->flops_total += rows[i].flops;
        if (strcmp(rows[i].key, "aten::addmm") == 0) {
            r->addmm_rows++;
            if (rows[i].calls != 2) r->addmm_calls_each_ok = 0;
        }
        if (strcmp(rows[i].key, "forward") == 0) r->forward_peak = rows[i].peak_mem;
    }
    r->self_total_us = opprof_averages_self_total_ns(avg) / 1000;
    char *t = NULL;
    opprof_table_options opt = {.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = -1, .flops = true, .peak_memory = true};
    CHECK_INT(opprof_averages_table_to_string(avg, &opt, &t), 0);
    snprintf(r->shapes_table, sizeof r->shapes_table, "%s", t ? t : "");
    opprof_free(t);
    opprof_averages_free(avg);

    opprof_averages_options by_stack = {.group_by_stack_n = 2};
    CHECK_INT(opprof_capture_averages_ex(c, &by_stack, &avg), 0);
    CHECK_INT(opprof_averages_table_to_string(
                  avg, &(opprof_table_options){.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = 3}, &t),
              0);
    snprintf(r->stack_table, sizeof r->stack_table, "%s", t ? t : "");
    opprof_free(t);
    opprof_averages_free(avg);

    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_SELF_TIME, &t), 0);
    snprintf(r->stacks, sizeof r->stacks, "%s", t ? t : "");
    opprof_free(t);

    int64_t *peaks = NULL;
    CHECK_INT(opprof_capture_peak_memory(c, &peaks), 0);
    const opprof_event *ev = opprof_capture_events(c, &n);
    for (size_t i = 0; i < n && peaks; i++)
        if (ev[i].kind == OPPROF_KIND_STEP && r->n_steps < 4) r->step_peaks[r->n_steps++] = peaks[i];
    opprof_free(peaks);
    for (size_t i = 0; i < n; i++) /* the call site of the first "forward": this file */
        if (strcmp(opprof_capture_name(c, ev[i].name), "forward") == 0) {
            const opprof_site *site = opprof_capture_site(c, ev[i].site);
            snprintf(r->first_site_file, sizeof r->first_site_file, "%s", site && site->file ? site->file : "");
            break;
        }
    return 0;
}

/* The seed's loop, as profile_cpu runs it, with every option on. */
static void seed_capture(result *r) {
    nn_manual_seed(7);
    nn_module *l[3], *m;
    nn_linear_new(&l[0], 256, 512);
    nn_relu_new(&l[1]);
    nn_linear_new(&l[2], 512, 64);
    nn_sequential_new(&m, l, 3);
    nn_tensor *x;
    nn_tensor_randn(&x, 2, (int64_t[]){128, 256});
    opprof_config cfg = opprof_config_default();
    cfg.schedule = (opprof_schedule){.wait = 1, .warmup = 1, .active = 2, .repeat = 1};
    cfg.profile_memory = cfg.record_shapes = cfg.with_stack = cfg.with_flops = true;
    cfg.on_trace_ready = on_ready;
    cfg.user_data = r;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    for (int step = 0; step < 6; step++) {
        {
            OPPROF_SCOPE("batch_%d", step);
            nn_tensor *y = NULL;
            {
                OPPROF_SCOPE("forward");
                nn_module_forward(m, x, &y);
            }
            nn_tensor_free(y);
        }
        opprof_session_step(s);
    }
    opprof_session_free(s);
    nn_tensor_free(x);
    nn_module_free(m);
}

/* ---- peaks against their definition ---- */

static uint64_t peak_rng = 88172645463325252u;
static int64_t next_random(uint64_t below) {
    peak_rng ^= peak_rng << 13, peak_rng ^= peak_rng >> 7, peak_rng ^= peak_rng << 17;
    return (int64_t)(peak_rng % below);
}

/* Ranges nested in [start, end) µs of one thread, down to `depth` levels,
 * some starting with their parent, some ending with it. */
static void nested_ranges(FILE *f, int tid, int64_t start, int64_t end, int depth) {
    for (int64_t t = start; t < end && depth > 0;) {
        int64_t s = t + next_random(3), d = 1 + next_random(30);
        if (s + d > end) d = end - s;
        if (d <= 0) break;
        fprintf(f,
                "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":%d,\"ts\":%lld,\"dur\":%lld},\n",
                (int)next_random(4), tid, (long long)s, (long long)d);
        nested_ranges(f, tid, s, s + d, depth - 1);
        t = s + d;
    }
}

/* A trace of three threads' nested operators and memory events, some on a
 * device, some at an operator's start or end (the third thread's only in
 * its first 150 µs), with totals as they come. */
static char *random_memory_trace(size_t *len) {
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    fprintf(f, "{\"traceEvents\": [\n");
    for (int tid = 1; tid <= 3; tid++) {
        nested_ranges(f, tid, 0, 400, 4);
        for (int k = 0; k < 60; k++)
            fprintf(
                f,
                "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":%d,"
                "\"ts\":%lld,\"args\":{\"Device Type\":%d,\"Device Id\":%d,\"Addr\":%d,\"Bytes\":%lld,"
                "\"Total Allocated\":%lld,\"Total Reserved\":0}},\n",
                tid, (long long)next_random(tid == 3 ? 150 : 410), next_random(5) == 0, next_random(5) == 0 ? 0 : -1, k,
                (long long)next_random(2000) - 1000, (long long)next_random(100000));
    }
    fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"p\"}}\n]}\n");
    fclose(f);
    return text;
}

/* The definition: an event's peak is the highest CPU total of a memory event
 * that its subtree owns, less its level at start (the total of its thread's
 * last CPU memory event before it; before the first, that one's total less
 * its bytes; 0 without any), and 0 when nothing rose above it. */
static int64_t level_before(const opprof_memory_event *mem, size_t n_mem, uint32_t thread, int64_t start) {
    int64_t level = 0;
    bool first = true;
    for (size_t k = 0; k < n_mem; k++) {
        if (mem[k].thread != thread || mem[k].device_type != 0) continue;
        if (first) level = mem[k].total_allocated - mem[k].bytes;
        first = false;
        if (mem[k].ts_ns < start) level = mem[k].total_allocated;
    }
    return level;
}

static void check_peaks_of_one_trace(void) {
    size_t len;
    char *text = random_memory_trace(&len);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(text, len, NULL, &c, NULL), 0);
    free(text);
    if (!c) return;
    size_t n, n_mem;
    const opprof_event *ev = opprof_capture_events(c, &n);
    const opprof_memory_event *mem = opprof_capture_memory_events(c, &n_mem);
    int64_t *top = malloc(n * sizeof *top), *peaks = NULL;
    for (size_t i = 0; i < n; i++) top[i] = INT64_MIN;
    size_t owned = 0, device = 0;
    for (size_t k = 0; k < n_mem; k++) {
        device += mem[k].device_type != 0;
        if (mem[k].owner < 0 || mem[k].device_type != 0) continue;
        owned++;
        for (int32_t e = mem[k].owner; e >= 0; e = ev[e].parent)
            if (mem[k].total_allocated > top[e]) top[e] = mem[k].total_allocated;
    }
    CHECK(n > 100 && owned > 50 && device > 10); /* the trace holds what it should */
    CHECK_INT(opprof_capture_peak_memory(c, &peaks), 0);
    size_t wrong = 0, risen = 0;
    for (size_t i = 0; i < n && peaks; i++) {
        int64_t base = level_before(mem, n_mem, ev[i].thread, ev[i].start_ns);
        int64_t want = top[i] > base ? top[i] - base : 0;
        risen += want > 0;
        if (peaks[i] != want && wrong++ < 3)
            fprintf(stderr, "event %zu (start %lld): peak %lld, by definition %lld\n", i, (long long)ev[i].start_ns,
                    (long long)peaks[i], (long long)want);
    }
    CHECK_INT(wrong, 0);
    CHECK(risen > 20);
    opprof_free(peaks);
    free(top);
    opprof_capture_free(c);
}

/* Twelve traces: each thread's last memory event a device's in some. */
static void check_peaks_by_definition(void) {
    for (int round = 0; round < 12; round++) check_peaks_of_one_trace();
}

/* The guide's model recorded with shapes, FLOPs, call sites and memory: its
 * tables, peaks and folded stacks. */
TEST_CASE(shapes_flops_call_sites_and_peaks) {
    result *r = calloc(1, sizeof *r);
    seed_capture(r);
    /* Two addmm rows (one per layer), 2 calls each, with PyTorch-style shapes. */
    CHECK_INT(r->addmm_rows, 2);
    CHECK(r->addmm_calls_each_ok);
    CHECK_CONTAINS(r->shapes_table, "[[512], [128, 256], [256, 512], [], []]");
    CHECK_CONTAINS(r->shapes_table, "[[64], [128, 512], [512, 64], [], []]");
    CHECK_CONTAINS(r->shapes_table, "Input Shapes");
    CHECK_CONTAINS(r->shapes_table, "Total MFLOPs");
    CHECK_CONTAINS(r->shapes_table, "67.109"); /* 2 x 33,554,432 FLOPs, in MFLOPs */
    CHECK_CONTAINS(r->shapes_table, "Peak Mem");
    /* FLOPs of the two passes: 2 x 41,943,040. */
    CHECK_INT(r->flops_total, 2LL * 41943040);
    /* Peak of forward: the largest live set inside it, hand-computed: the
     * first Linear's output and the ReLU's output, 128 x 512 floats each. */
    CHECK_INT(r->forward_peak, 2 * 128 * 512 * 4);
    CHECK_INT(r->n_steps, 2);
    CHECK_INT(r->step_peaks[0], 2 * 128 * 512 * 4);
    CHECK_INT(r->step_peaks[1], 2 * 128 * 512 * 4);
    /* Grouped by the top 2 call sites: Source Location column, frames of the
     * operator and of its caller. */
    CHECK_CONTAINS(r->stack_table, "Source Location");
    CHECK_CONTAINS(r->stack_table, "src/nn/ops.c(");
    CHECK_CONTAINS(r->stack_table, "): addmm");
    CHECK_CONTAINS(r->stack_table, "): nn__linear");
    CHECK_STR(r->first_site_file, "tests/test_shapes.c");
    /* Folded stacks: "a;b;c <int>" lines; counts add up to the self time. */
    long long sum = 0;
    int lines = 0, bad = 0;
    for (char *line = strtok(r->stacks, "\n"); line; line = strtok(NULL, "\n")) {
        char *space = strrchr(line, ' ');
        lines++;
        if (!space) {
            bad++;
            continue;
        }
        char *end;
        long long v = strtoll(space + 1, &end, 10);
        if (*end || v <= 0) bad++;
        sum += v;
        if (strstr(line, "aten::addmm") && !strstr(line, "batch_")) bad++;
    }
    CHECK(lines >= 4);
    CHECK_INT(bad, 0);
    CHECK(llabs(sum - r->self_total_us) <= lines); /* each line rounds to the microsecond */
    CHECK_CONTAINS(r->shapes_table, "Self CPU time total:");
    free(r);
}

/* Through profile_cpu and the trace file: the same, read back. */
TEST_CASE(read_back_from_profile_cpus_trace) {
    char dir[256], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(cmd, sizeof cmd,
             "'%s/profile_cpu' --quiet --group-by-input-shape --with-flops --with-stack --stacks '%s/run' && "
             "grep -c '^ProfilerStep\\*;batch_2;forward;aten::linear;aten::addmm ' '%s/run/cpu-step-4.stacks' && "
             "'%s/opprof' report --group-by-input-shape --flops '%s/run/cpu-step-4.json'",
             bin_dir(), dir, dir, bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "1\n"); /* the steps merge into one frame, as in the table */
    CHECK_CONTAINS(out, "[[512], [128, 256], [256, 512], [], []]");
    CHECK_CONTAINS(out, "16.777"); /* the second layer's addmm, 2 x 8,388,608 FLOPs */
    free(out);
    snprintf(
        cmd, sizeof cmd,
        "grep -c '\"Input Dims\":\\[\\[512\\],\\[128,256\\],\\[256,512\\],\\[\\],\\[\\]\\]' '%s/run/cpu-step-4.json'; "
        "grep -c '\"Call stack\":\"src/nn/ops.c(' '%s/run/cpu-step-4.json'",
        dir, dir);
    run_command(cmd, &out);
    CHECK(out && atoi(out) == 2);
    CHECK(out && strchr(out, '\n') && atoi(strchr(out, '\n') + 1) > 10);
    free(out);
    /* The summary has the steps' peaks and the process's peak RSS. */
    snprintf(cmd, sizeof cmd, "%s/run/summary.json", dir);
    char *sum_text = read_text(cmd);
    CHECK_CONTAINS(sum_text, "\"name\": \"ProfilerStep#2\"");
    CHECK_CONTAINS(sum_text, "\"peak_bytes\": 524288}");
    CHECK_CONTAINS(sum_text, "\"process_peak_rss_bytes\": ");
    CHECK_CONTAINS(sum_text, "\"flops_total\": 83886080");
    free(sum_text);
    remove_tree(dir);
}

/* Without record_shapes nothing is kept; FLOPs formulas and shape printing. */
TEST_CASE(flops_formulas_and_shape_printing) {
    /* Without record_shapes nothing is kept, and nothing costs. */
    CHECK(!opprof_recording_shapes());
    opprof_set_inputs(1, &(opprof_input){2, (int64_t[]){1, 2}, "float"}); /* no session: ignored */

    /* FLOPs formulas and shape printing. */
    opprof_shapes sh = {.n_inputs = 3, .ndim = {1, 2, 2}, .dims = {{512}, {128, 256}, {256, 512}}};
    CHECK_INT(opprof_flops("aten::addmm", &sh), 2LL * 128 * 256 * 512);
    CHECK_INT(opprof_flops("aten::linear", &sh), 0);
    CHECK_INT(opprof_flops("aten::relu", &sh), 0);
    opprof_shapes mm = {.n_inputs = 2, .ndim = {2, 2}, .dims = {{4, 5}, {5, 6}}};
    CHECK_INT(opprof_flops("aten::mm", &mm), 2 * 4 * 5 * 6);
    CHECK_INT(opprof_flops("aten::add", &mm), 20);
    opprof_shapes bmm = {.n_inputs = 2, .ndim = {3, 3}, .dims = {{2, 4, 5}, {2, 5, 6}}};
    CHECK_INT(opprof_flops("aten::bmm", &bmm), 2 * 2 * 4 * 5 * 6);
    CHECK_INT(opprof_flops("aten::addmm", NULL), 0);
    char buf[128];
    opprof_shapes_format(&sh, buf, sizeof buf);
    CHECK_STR(buf, "[[512], [128, 256], [256, 512]]");
    opprof_shapes_format(NULL, buf, sizeof buf);
    CHECK_STR(buf, "[]");
    /* every number's digits and sign; a buffer too small keeps the text's start */
    opprof_shapes odd = {.n_inputs = 2, .ndim = {2, 0}, .dims = {{INT64_MAX, -1}}};
    const char *whole = "[[9223372036854775807, -1], []]";
    opprof_shapes_format(&odd, buf, sizeof buf);
    CHECK_STR(buf, whole);
    for (size_t size = 1; size <= strlen(whole) + 1; size++) {
        char cut[64];
        memset(cut, 'x', sizeof cut);
        opprof_shapes_format(&odd, cut, size);
        CHECK_INT(strlen(cut), size - 1);
        CHECK(strncmp(cut, whole, size - 1) == 0);
        CHECK_INT(cut[size], 'x'); /* nothing written past size */
    }
}

TEST_CASE(peak_memory_of_each_event) {
    /* Peak memory on a hand-built capture: a: +100 (in b), +50 (in a), -100, +300 (in c). */
    opprof_capture *c;
    uint32_t t;
    opprof_capture_new(&c);
    opprof_capture_add_thread(c, 1, "", &t);
    opprof_capture_add_event(c, t, "a", OPPROF_KIND_USER_ANNOTATION, 0, 100);
    opprof_capture_add_event(c, t, "b", OPPROF_KIND_CPU_OP, 10, 20);
    opprof_capture_add_event(c, t, "c", OPPROF_KIND_CPU_OP, 50, 20);
    opprof_capture_add_memory(c, t, 15, 1, 100, 1100); /* 1000 live before */
    opprof_capture_add_memory(c, t, 40, 2, 50, 1150);
    opprof_capture_add_memory(c, t, 45, 1, -100, 1050);
    opprof_capture_add_memory(c, t, 60, 3, 300, 1350);
    opprof_capture_finish(c);
    int64_t *peaks;
    CHECK_INT(opprof_capture_peak_memory(c, &peaks), 0);
    CHECK_INT(peaks[0], 350); /* a: 1000 -> 1350 */
    CHECK_INT(peaks[1], 100); /* b: 1000 -> 1100 */
    CHECK_INT(peaks[2], 300); /* c: 1050 -> 1350 */
    opprof_free(peaks);
    opprof_capture_free(c);
}

TEST_CASE(peaks_by_definition) { check_peaks_by_definition(); }

int main(int argc, char **argv) { return check_main(argc, argv, "test_shapes"); }
