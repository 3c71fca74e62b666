/*
 * bench_overhead - what opprof costs: ns per range (recording, outside the
 * window, off), per memory event, the seed's forward pass with and without
 * recording, analysis and export of 1 M and 10 M events, bytes held per
 * event; PyTorch's record_function and key_averages() on the same counts when
 * /usr/bin/python3 has torch, and libtorch's RECORD_USER_SCOPE from C++ (the
 * fairer peer for C code: build/bin/torch_overhead, built by `make bench`).
 *
 *   build/bin/bench_overhead [--json] [--events N]   (N: the large capture, default 10000000)
 */
#include "bench_util.h"

#include <stddef.h>

#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>

static const char *g_out_dir;

static long rss_kb(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n)) v = strtol(line + n + 1, NULL, 10);
    fclose(f);
    return v;
}

/* Reset the high-water mark of RSS so that VmHWM measures from here. */
static void reset_peak(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static opprof_session *start_session(opprof_schedule sched, bool memory, opprof_trace_ready_fn fn, void *ud) {
    opprof_config cfg = opprof_config_default();
    cfg.schedule = sched;
    cfg.profile_memory = memory;
    cfg.on_trace_ready = fn;
    cfg.user_data = ud;
    cfg.record_steps = false;
    opprof_session *s = NULL;
    int rc = opprof_session_start(&s, &cfg);
    if (rc) {
        fprintf(stderr, "bench_overhead: %s\n", opprof_strerror(rc));
        exit(1);
    }
    return s;
}

/* ns per empty range (the macros, as users write them), median over batches. */
static double time_ranges(int batches, int per_batch) {
    double *t = malloc((size_t)batches * sizeof *t);
    for (int b = 0; b < batches; b++) {
        int64_t t0 = bench_now_ns();
        for (int i = 0; i < per_batch; i++) {
            opprof_range r = OPPROF_BEGIN("empty");
            OPPROF_END(r);
        }
        t[b] = (double)(bench_now_ns() - t0) / per_batch;
    }
    double m = bench_stats_of(t, batches).median;
    free(t);
    return m;
}

static double time_memory_events(int batches, int per_batch) {
    double *t = malloc((size_t)batches * sizeof *t);
    for (int b = 0; b < batches; b++) {
        int64_t t0 = bench_now_ns();
        for (int i = 0; i < per_batch; i++) OPPROF_MEMORY((void *)(intptr_t)(i * 64), (i & 1) ? -64 : 64, -1);
        t[b] = (double)(bench_now_ns() - t0) / per_batch;
    }
    double m = bench_stats_of(t, batches).median;
    free(t);
    return m;
}

/* ns per range of a category the session's filter leaves out. */
static double time_filtered_ranges(int batches, int per_batch) {
    double *t = malloc((size_t)batches * sizeof *t);
    for (int b = 0; b < batches; b++) {
        int64_t t0 = bench_now_ns();
        for (int i = 0; i < per_batch; i++) {
            OPPROF_SCOPE_IN("filtered out", "empty");
        }
        t[b] = (double)(bench_now_ns() - t0) / per_batch;
    }
    double m = bench_stats_of(t, batches).median;
    free(t);
    return m;
}

/* ns per mark of the recording API (counter, instant, argument, flow), each
 * made inside an open range: what an engine adds to its ranges. */
enum { MARK_COUNTER, MARK_INSTANT, MARK_ARG, MARK_FLOW };
static double time_marks(int kind, int batches, int per_batch) {
    double *t = malloc((size_t)batches * sizeof *t);
    opprof_range outer = OPPROF_BEGIN("outer");
    for (int b = 0; b < batches; b++) {
        int64_t t0 = bench_now_ns();
        for (int i = 0; i < per_batch; i++) {
            switch (kind) {
            case MARK_COUNTER: OPPROF_COUNTER("queue_depth", i); break;
            case MARK_INSTANT: OPPROF_INSTANT("token"); break;
            case MARK_ARG: opprof_range_arg_int("layer", i); break;
            default: opprof_flow_begin((uint64_t)i); break;
            }
        }
        t[b] = (double)(bench_now_ns() - t0) / per_batch;
    }
    OPPROF_END(outer);
    double m = bench_stats_of(t, batches).median;
    free(t);
    return m;
}

/* ns per operator range with its inputs' shapes recorded (three 2-D inputs). */
static double time_ranges_with_shapes(int batches, int per_batch) {
    static const int64_t d0[] = {512}, d1[] = {128, 256}, d2[] = {256, 512};
    const opprof_input in[5] = {{1, d0, "float"}, {2, d1, "float"}, {2, d2, "float"}, {0, NULL, NULL}, {0, NULL, NULL}};
    double *t = malloc((size_t)batches * sizeof *t);
    for (int b = 0; b < batches; b++) {
        int64_t t0 = bench_now_ns();
        for (int i = 0; i < per_batch; i++) {
            opprof_range r = OPPROF_BEGIN("aten::addmm");
            if (opprof_recording_shapes()) opprof_set_inputs(5, in);
            OPPROF_END(r);
        }
        t[b] = (double)(bench_now_ns() - t0) / per_batch;
    }
    double m = bench_stats_of(t, batches).median;
    free(t);
    return m;
}

static int discard(const opprof_capture *c, void *ud) {
    (void)c;
    (void)ud;
    return 0;
}

typedef struct scale {
    size_t events;
    double snapshot_s, averages_s, export_s, export_mb, format_s;
    long peak_kb_before, peak_kb;
} scale;

static int measure_capture(const opprof_capture *c, void *ud) {
    scale *s = ud;
    opprof_capture_events(c, &s->events);
    int64_t t0 = bench_now_ns();
    opprof_averages *avg;
    if (opprof_capture_averages(c, &avg)) return -1;
    s->averages_s = (double)(bench_now_ns() - t0) / 1e9;
    opprof_averages_free(avg);
    char path[512];
    snprintf(path, sizeof path, "%s/opprof-bench-trace.json", g_out_dir);
    t0 = bench_now_ns();
    int rc = opprof_capture_chrome_write(c, path);
    s->export_s = (double)(bench_now_ns() - t0) / 1e9;
    FILE *f = fopen(path, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        s->export_mb = (double)ftell(f) / 1e6;
        fclose(f);
    }
    unlink(path);
    /* The writer's own speed, without the file system: to /dev/null. */
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        t0 = bench_now_ns();
        opprof_capture_chrome_write_stream(c, null, "null");
        s->format_s = (double)(bench_now_ns() - t0) / 1e9;
        fclose(null);
    }
    s->peak_kb = rss_kb("VmHWM");
    return rc;
}

/* Record n events (nested pairs: outer > inner), then snapshot, analyse, export. */
static scale run_scale(size_t n) {
    static const opprof_srcloc outer = {"outer", "bench", __FILE__, __LINE__, OPPROF_KIND_USER_ANNOTATION, NULL};
    static const opprof_srcloc inner = {"aten::inner", "bench", __FILE__, __LINE__, OPPROF_KIND_CPU_OP, NULL};
    scale s = {0};
    reset_peak();
    s.peak_kb_before = rss_kb("VmRSS");
    opprof_session *session = start_session((opprof_schedule){0}, false, measure_capture, &s);
    for (size_t i = 0; i < n / 2; i++) {
        opprof_range a = opprof_range_begin(&outer);
        opprof_range_end(opprof_range_begin(&inner));
        opprof_range_end(a);
    }
    int64_t t0 = bench_now_ns();
    opprof_session_free(session); /* snapshot + callback */
    s.snapshot_s = (double)(bench_now_ns() - t0) / 1e9 - s.averages_s - s.export_s;
    return s;
}

static bench_stats time_forward(nn_module *m, const nn_tensor *x, int reps) {
    double *t = malloc((size_t)reps * sizeof *t);
    for (int i = 0; i < reps; i++) {
        nn_tensor *y;
        int64_t t0 = bench_now_ns();
        nn_module_forward(m, x, &y);
        t[i] = (double)(bench_now_ns() - t0) / 1e3;
        nn_tensor_free(y);
    }
    bench_stats s = bench_stats_of(t, reps);
    free(t);
    return s;
}

static const char *TORCH_SCRIPT =
    "import sys, time, torch\n"
    "from torch.profiler import profile, record_function, ProfilerActivity\n"
    "n = int(sys.argv[1])\n"
    "with profile(activities=[ProfilerActivity.CPU]) as prof:\n"
    "    t = time.perf_counter_ns()\n"
    "    for _ in range(n):\n"
    "        with record_function('r'): pass\n"
    "    per = (time.perf_counter_ns() - t) / n\n"
    "t = time.perf_counter_ns(); prof.key_averages(); ka = (time.perf_counter_ns() - t) / 1e9\n"
    "print('range_ns: %f' % per); print('key_averages_s: %f' % ka)\n"
    "print('events: %d' % len(prof.events()))\n";

/* One round of the peers and of ours, for the ratios. */
typedef struct peer_round {
    double torch[3]; /* PyTorch: range_ns, key_averages_s, events (NAN: absent) */
    double lt[6];    /* libtorch: range_ns, range_off_ns, forward_us, forward_profiled_us, disable_s, events */
    double lt_forward_ratio;
    double ours_range;   /* a range in reused buffers, ns */
    double ours_ka_same; /* our averages of 1 M events, scaled to PyTorch's count, s */
} peer_round;

static peer_round one_round(int batches, int per) {
    peer_round r;
    for (int i = 0; i < 3; i++) r.torch[i] = NAN;
    for (int i = 0; i < 6; i++) r.lt[i] = NAN;
    if (bench_have_torch()) {
        char path[] = "/tmp/opprof-bench-torch-XXXXXX";
        int fd = mkstemp(path);
        if (fd >= 0 && write(fd, TORCH_SCRIPT, strlen(TORCH_SCRIPT)) == (ssize_t)strlen(TORCH_SCRIPT)) {
            char cmd[1024];
            snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s 100000 2>/dev/null", path);
            static const char *const keys[] = {"range_ns", "key_averages_s", "events"};
            bench_run_peer_keys(cmd, 3, keys, r.torch);
        }
        if (fd >= 0) close(fd);
        unlink(path);
    }
    /* libtorch from C++, the fairer peer for C code (built by `make bench`) */
    static const char *const keys[] = {"range_ns",  "range_off_ns", "forward_us", "forward_profiled_us",
                                       "disable_s", "events"};
    char exe[4200], cmd[8400];
    snprintf(exe, sizeof exe, "%s/torch_overhead", bench_self_dir());
    if (access(exe, X_OK) == 0) {
        snprintf(cmd, sizeof cmd, "%s '%s' 100000 2>/dev/null", bench_openblas_env(), exe);
        bench_run_peer_keys(cmd, 6, keys, r.lt);
    }
    r.lt_forward_ratio = r.lt[3] / r.lt[2];
    opprof_session *s = start_session((opprof_schedule){.wait = 1, .active = 1, .repeat = 0}, true, discard, NULL);
    opprof_session_step(s); /* a window: its buffers, */
    time_ranges(batches, per);
    opprof_session_step(s);
    opprof_session_step(s); /* reused in the next one */
    r.ours_range = time_ranges(batches, per);
    opprof_session_free(s);
    r.ours_ka_same = NAN;
    if (!isnan(r.torch[2])) {
        scale s1 = run_scale(1000000);
        r.ours_ka_same = s1.averages_s * r.torch[2] / (double)s1.events;
    }
    return r;
}

/* The median of one field over the rounds, NANs left out. */
static double median_kept(const peer_round *rounds, int n, size_t offset) {
    double v[16];
    int k = 0;
    for (int i = 0; i < n && k < 16; i++) {
        double x = *(const double *)((const char *)&rounds[i] + offset);
        if (!isnan(x)) v[k++] = x;
    }
    return k ? bench_stats_of(v, k).median : NAN;
}

int main(int argc, char **argv) {
    bool json = false;
    size_t big = 10000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--events") && i + 1 < argc)
            big = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_overhead [--json] [--events N]\n");
            return 2;
        }
    }
    g_out_dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp"; /* a real file system: what users write to */

    /* Ranges and memory events: off, outside the window, recording into
     * fresh buffers (first window), and into reused ones (later windows,
     * the steady state of a schedule). */
    const int batches = 31, per = 50000; /* 1.55 M ranges a window: within the 64 MiB a thread keeps */
    double stamp_ns = bench_timestamp_ns();
    double off_ns = time_ranges(batches, per);
    opprof_session *s = start_session((opprof_schedule){.wait = 1, .active = 1, .repeat = 0}, true, discard, NULL);
    double outside_ns = time_ranges(batches, per); /* step 0 is NONE: outside */
    opprof_session_step(s);                        /* step 1: a window */
    double cold_ns = time_ranges(batches, per);
    double memory_cold_ns = time_memory_events(batches, per);
    for (int k = 0; k < 4; k++) time_marks(k, batches, per / 4); /* the marks' buffers, for the next window */
    opprof_session_step(s);                                      /* step 2: NONE (the capture is saved and discarded) */
    opprof_session_step(s);                                      /* step 3: a window again; buffers are reused */
    double range_ns = time_ranges(batches, per);
    double memory_ns = time_memory_events(batches, per);
    double mark_ns[4];
    for (int k = 0; k < 4; k++) mark_ns[k] = time_marks(k, batches, per / 4);
    opprof_session_free(s);
    opprof_config filtered_cfg = opprof_config_default();
    filtered_cfg.categories = "kept";
    filtered_cfg.on_trace_ready = discard;
    opprof_session *fs = NULL;
    opprof_session_start(&fs, &filtered_cfg);
    double filtered_ns = time_filtered_ranges(batches, per);
    opprof_session_free(fs);

    /* The same with record_shapes and with_stack (call sites are static: a
     * range costs the same; shapes are copied into a side buffer). */
    opprof_config shapes_cfg = opprof_config_default();
    shapes_cfg.schedule = (opprof_schedule){.wait = 1, .active = 1, .repeat = 0};
    shapes_cfg.record_shapes = shapes_cfg.with_stack = true;
    shapes_cfg.on_trace_ready = discard;
    shapes_cfg.record_steps = false;
    opprof_session_start(&s, &shapes_cfg);
    opprof_session_step(s); /* a window with fresh buffers */
    /* 310 k operators a window: their 128-byte shape records stay within what a thread keeps */
    time_ranges_with_shapes(batches, per / 5);
    opprof_session_step(s);
    opprof_session_step(s); /* a window reusing them */
    double shapes_ns = time_ranges_with_shapes(batches, per / 5);
    opprof_session_step(s);
    opprof_session_step(s); /* a fresh window, buffers reused */
    double stack_ns = time_ranges(batches, per);
    opprof_session_free(s);

    /* with_native_stack: a backtrace at every begin. */
    shapes_cfg.record_shapes = shapes_cfg.with_stack = false;
    shapes_cfg.with_native_stack = true;
    opprof_session_start(&s, &shapes_cfg);
    opprof_session_step(s);
    time_ranges(5, 10000);
    opprof_session_step(s);
    opprof_session_step(s);
    double native_ns = time_ranges(11, 10000);
    opprof_session_free(s);

    /* The seed's forward pass with and without recording (memory on). */
    nn_manual_seed(7);
    nn_module *l[3], *model;
    nn_linear_new(&l[0], 256, 512);
    nn_relu_new(&l[1]);
    nn_linear_new(&l[2], 512, 64);
    nn_sequential_new(&model, l, 3);
    nn_tensor *x;
    nn_tensor_randn(&x, 2, (int64_t[]){128, 256});
    time_forward(model, x, 50);
    double plain = 0, profiled = 0;
    for (int round = 0; round < 5; round++) { /* interleave, to share the machine's moods */
        plain += time_forward(model, x, 200).median;
        s = start_session((opprof_schedule){0}, true, discard, NULL);
        profiled += time_forward(model, x, 200).median;
        opprof_session_free(s);
    }
    double forward_ratio = profiled / plain;

    /* Analysis and export at scale. */
    scale s1 = run_scale(1000000);
    scale s10 = run_scale(big);
    if (getenv("OPPROF_BENCH_DEBUG"))
        fprintf(stderr, "rss before %ld kB, peak %ld kB, events %zu\n", s10.peak_kb_before, s10.peak_kb, s10.events);
    double bytes_per_event = (double)(s10.peak_kb - s10.peak_kb_before) * 1024.0 / (double)s10.events;

    /* The peers on the same counts: ROUNDS interleaved rounds of PyTorch,
     * libtorch and ours (a range in reused buffers; averages of 1 M events
     * scaled to PyTorch's count); each ratio the median of the rounds' pairs. */
    enum { ROUNDS = 7 };
    peer_round rounds[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) rounds[k] = one_round(batches, per);
    double torch_range = NAN, torch_ka = NAN, torch_events = NAN, ours_ka_same = NAN;
    double lt_range = NAN, lt_off = NAN, lt_forward_ratio = NAN, lt_disable = NAN, lt_events = NAN;
    double v[ROUNDS], w[ROUNDS];
#define PEER_MEDIAN(field) (median_kept(rounds, ROUNDS, offsetof(peer_round, field)))
    torch_range = PEER_MEDIAN(torch[0]);
    torch_ka = PEER_MEDIAN(torch[1]);
    torch_events = PEER_MEDIAN(torch[2]);
    ours_ka_same = PEER_MEDIAN(ours_ka_same);
    lt_range = PEER_MEDIAN(lt[0]);
    lt_off = PEER_MEDIAN(lt[1]);
    lt_forward_ratio = PEER_MEDIAN(lt_forward_ratio);
    lt_disable = PEER_MEDIAN(lt[4]);
    lt_events = PEER_MEDIAN(lt[5]);
#undef PEER_MEDIAN
    for (int k = 0; k < ROUNDS; k++) v[k] = rounds[k].torch[0], w[k] = rounds[k].ours_range;
    bench_ratio range_vs_torch = bench_ratio_of(v, w, ROUNDS);
    for (int k = 0; k < ROUNDS; k++) v[k] = rounds[k].lt[0];
    bench_ratio range_vs_libtorch = bench_ratio_of(v, w, ROUNDS);
    for (int k = 0; k < ROUNDS; k++) v[k] = rounds[k].torch[1], w[k] = rounds[k].ours_ka_same;
    bench_ratio ka_vs_torch = bench_ratio_of(v, w, ROUNDS);

    if (json) {
        printf("{\n");
        bench_json_number(stdout, "range_ns", range_ns, false);
        bench_json_number(stdout, "range_outside_window_ns", outside_ns, false);
        bench_json_number(stdout, "range_off_ns", off_ns, false);
        bench_json_number(stdout, "memory_event_ns", memory_ns, false);
        bench_json_number(stdout, "range_category_filtered_ns", filtered_ns, false);
        bench_json_number(stdout, "counter_ns", mark_ns[MARK_COUNTER], false);
        bench_json_number(stdout, "instant_ns", mark_ns[MARK_INSTANT], false);
        bench_json_number(stdout, "arg_ns", mark_ns[MARK_ARG], false);
        bench_json_number(stdout, "flow_ns", mark_ns[MARK_FLOW], false);
        bench_json_number(stdout, "range_fresh_buffers_ns", cold_ns, false);
        bench_json_number(stdout, "memory_event_fresh_buffers_ns", memory_cold_ns, false);
        bench_json_number(stdout, "timestamp_ns", stamp_ns, false);
        bench_json_number(stdout, "range_with_shapes_ns", shapes_ns, false);
        bench_json_number(stdout, "shapes_extra_ns", shapes_ns - range_ns, false);
        bench_json_number(stdout, "range_with_stack_ns", stack_ns, false);
        bench_json_number(stdout, "stack_extra_ns", stack_ns - range_ns, false);
        bench_json_number(stdout, "range_with_native_stack_ns", native_ns, false);
        bench_json_number(stdout, "forward_us_plain", plain / 5, false);
        bench_json_number(stdout, "forward_us_profiled", profiled / 5, false);
        bench_json_number(stdout, "forward_profiled_ratio", forward_ratio, false);
        bench_json_number(stdout, "averages_1m_s", s1.averages_s, false);
        bench_json_number(stdout, "averages_10m_s", s10.averages_s, false);
        bench_json_number(stdout, "large_events", (double)s10.events, false);
        bench_json_number(stdout, "snapshot_10m_s", s10.snapshot_s, false);
        bench_json_number(stdout, "export_mb_s", s10.export_mb / s10.export_s, false);
        bench_json_number(stdout, "export_mevents_s", (double)s10.events / s10.export_s / 1e6, false);
        bench_json_number(stdout, "export_1m_mb_s", s1.export_mb / s1.export_s, false);
        bench_json_number(stdout, "format_mb_s", s10.export_mb / s10.format_s, false);
        bench_json_number(stdout, "format_mevents_s", (double)s10.events / s10.format_s / 1e6, false);
        bench_json_number(stdout, "trace_bytes_per_event", s10.export_mb * 1e6 / (double)s10.events, false);
        bench_json_number(stdout, "bytes_per_event", bytes_per_event, false);
        bench_json_number(stdout, "torch_range_ns", torch_range, false);
        bench_json_number(stdout, "torch_key_averages_s", torch_ka, false);
        bench_json_number(stdout, "torch_key_averages_events", torch_events, false);
        bench_json_number(stdout, "averages_same_events_s", ours_ka_same, false);
        bench_json_ratio(stdout, "ratio_range_vs_torch", range_vs_torch, false);
        bench_json_number(stdout, "libtorch_range_ns", lt_range, false);
        bench_json_number(stdout, "libtorch_range_off_ns", lt_off, false);
        bench_json_number(stdout, "libtorch_forward_profiled_ratio", lt_forward_ratio, false);
        bench_json_number(stdout, "libtorch_disable_s", lt_disable, false);
        bench_json_number(stdout, "libtorch_disable_events", lt_events, false);
        bench_json_ratio(stdout, "ratio_range_vs_libtorch", range_vs_libtorch, false);
        bench_json_ratio(stdout, "ratio_key_averages_vs_torch", ka_vs_torch, true);
        printf("}\n");
    } else {
        printf("recording cost (median of %d batches of %d)\n", batches, per);
        printf("  one timestamp (the floor)       %7.2f ns\n", stamp_ns);
        printf("  range begin+end, recording      %7.2f ns  (fresh buffers: %.2f ns)\n", range_ns, cold_ns);
        printf("  range begin+end, outside window %7.2f ns\n", outside_ns);
        printf("  range begin+end, profiler off   %7.2f ns\n", off_ns);
        printf("  memory event, recording         %7.2f ns  (fresh buffers: %.2f ns)\n", memory_ns, memory_cold_ns);
        printf("  range of a filtered category    %7.2f ns\n", filtered_ns);
        printf("  counter / instant / arg / flow  %7.2f / %.2f / %.2f / %.2f ns\n", mark_ns[MARK_COUNTER],
               mark_ns[MARK_INSTANT], mark_ns[MARK_ARG], mark_ns[MARK_FLOW]);
        printf("  range with 3 input shapes       %7.2f ns  (+%.2f ns for record_shapes)\n", shapes_ns,
               shapes_ns - range_ns);
        printf("  range with with_stack           %7.2f ns  (+%.2f ns: call sites are static)\n", stack_ns,
               stack_ns - range_ns);
        printf("  range with with_native_stack    %7.2f ns  (a backtrace at each begin)\n", native_ns);
        printf("seed's forward pass: %.1f us plain, %.1f us recorded (memory on): ratio %.4f\n", plain / 5,
               profiled / 5, forward_ratio);
        printf("at scale (%s):\n", g_out_dir);
        scale *rows[2] = {&s1, &s10};
        for (int i = 0; i < 2; i++)
            printf(
                "  %9zu events: snapshot %.3f s, averages %.3f s, export %.3f s = %.0f MB/s, %.1f M events/s, %.0f B/event in JSON\n",
                rows[i]->events, rows[i]->snapshot_s, rows[i]->averages_s, rows[i]->export_s,
                rows[i]->export_mb / rows[i]->export_s, (double)rows[i]->events / rows[i]->export_s / 1e6,
                rows[i]->export_mb * 1e6 / (double)rows[i]->events);
        printf("  the writer alone (to /dev/null): %.0f MB/s, %.1f M events/s\n", s10.export_mb / s10.format_s,
               (double)s10.events / s10.format_s / 1e6);
        printf("  peak memory held: %.1f bytes per event (recording buffers + capture + analysis)\n", bytes_per_event);
        char r1[96], r2[96];
        bench_ratio_text(range_vs_torch, r1, sizeof r1);
        bench_ratio_text(ka_vs_torch, r2, sizeof r2);
        if (!isnan(torch_range))
            printf(
                "PyTorch: record_function %.0f ns a range (%s ours); key_averages() %.2f s for %.0f events (ours: %.3f s, %s faster)\n",
                torch_range, r1, torch_ka, torch_events, ours_ka_same, r2);
        else
            printf("PyTorch: not installed (apt-get install python3-torch)\n");
        bench_ratio_text(range_vs_libtorch, r1, sizeof r1);
        if (!isnan(lt_range))
            printf("libtorch (C++): RECORD_USER_SCOPE %.0f ns a range profiling (%s ours), %.1f ns off; forward "
                   "profiled/plain %.4f; disableProfiler() %.3f s for %.0f events\n",
                   lt_range, r1, lt_off, lt_forward_ratio, lt_disable, lt_events);
        else
            printf("libtorch (C++): build/bin/torch_overhead not built (make bench, with libtorch-dev)\n");
    }
    nn_tensor_free(x);
    nn_module_free(model);
    return 0;
}
