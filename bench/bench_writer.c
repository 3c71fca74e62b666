/*
 * bench_writer - writing a capture: Chrome's JSON against Perfetto's native
 * protobuf format, bytes and nanoseconds per event, in one run.
 *
 * Two captures recorded through the real hot path: N iterations of
 * forward > aten::linear > aten::addmm, aten::relu (4 slices each), then the
 * same with an allocation in addmm and a free in relu (2 memory events
 * each, at addresses where glibc's heap puts blocks in a program: 47 bits,
 * 0x5555...; a few blocks in turn): bytes per slice from the first, per
 * memory event from the difference. Each format is written ROUNDS times, the two in turn; times
 * are medians, the speed ratio the median of the rounds' pairs with its
 * interval. And the guide's capture (profile_cpu's model, one step) in both.
 *
 *   build/bin/bench_writer [--json] [--iterations N]
 */
#include "bench_util.h"

#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <sys/stat.h>

enum { ROUNDS = 7 };

static void die(const char *what, int rc) {
    fprintf(stderr, "bench_writer: %s: %s\n", what, opprof_strerror(rc));
    exit(1);
}

/* An address of a heap block as a program's heap has them (PIE's heap starts
 * near 0x555555554000): one of 64 blocks, in turn. */
static void *heap_block(long i) { return (void *)(uintptr_t)(UINT64_C(0x555555560000) + (uint64_t)(i % 64) * 4096); }

/* n iterations of the nested ranges, with memory events or not. */
static opprof_capture *record(long n, bool memory) {
    opprof_config cfg = opprof_config_default();
    cfg.profile_memory = memory;
    cfg.record_steps = false;
    opprof_session *s;
    int rc = opprof_session_start(&s, &cfg);
    if (rc) die("session", rc);
    for (long i = 0; i < n; i++) {
        OPPROF_SCOPE("forward");
        {
            OPPROF_OP_SCOPE("aten::linear");
            OPPROF_OP_SCOPE("aten::addmm");
            if (memory) opprof_record_memory(heap_block(i), 4096, -1);
        }
        OPPROF_OP_SCOPE("aten::relu");
        if (memory) opprof_record_memory(heap_block(i), -4096, -1);
    }
    opprof_capture *c = NULL;
    rc = opprof_session_stop(s);
    if (!rc) rc = opprof_session_take_capture(s, &c);
    if (rc) die("capture", rc);
    opprof_session_free(s);
    return c;
}

/* The guide's model, one step recorded. */
static opprof_capture *seed_capture(void) {
    nn_manual_seed(7);
    nn_module *layers[3], *model;
    nn_tensor *x, *y;
    if (nn_linear_new(&layers[0], 256, 512) || nn_relu_new(&layers[1]) || nn_linear_new(&layers[2], 512, 64) ||
        nn_sequential_new(&model, layers, 3) || nn_tensor_randn(&x, 2, (int64_t[]){128, 256}))
        die("model", OPPROF_ENOMEM);
    opprof_config cfg = opprof_config_default();
    cfg.profile_memory = true;
    opprof_session *s;
    int rc = opprof_session_start(&s, &cfg);
    if (rc) die("session", rc);
    for (int k = 0; k < 2; k++) {
        OPPROF_SCOPE("forward");
        if (nn_module_forward(model, x, &y)) die("forward", OPPROF_ENOMEM);
        nn_tensor_free(y);
        opprof_session_step(s);
    }
    opprof_capture *c = NULL;
    rc = opprof_session_stop(s);
    if (!rc) rc = opprof_session_take_capture(s, &c);
    if (rc) die("capture", rc);
    opprof_session_free(s);
    nn_tensor_free(x);
    nn_module_free(model);
    return c;
}

typedef struct written {
    double json_s[ROUNDS], perfetto_s[ROUNDS];
    double json_bytes, perfetto_bytes;
    size_t events, memory;
} written;

static double file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size : NAN;
}

static written write_both(const opprof_capture *c) {
    written w = {0};
    opprof_capture_events(c, &w.events);
    opprof_capture_memory_events(c, &w.memory);
    char json[128], pf[128];
    snprintf(json, sizeof json, "/tmp/opprof-bench-writer-%d.json", (int)getpid());
    snprintf(pf, sizeof pf, "/tmp/opprof-bench-writer-%d.pftrace", (int)getpid());
    for (int r = 0; r < ROUNDS; r++) {
        int64_t t0 = bench_now_ns();
        int rc = opprof_capture_chrome_write(c, json);
        int64_t t1 = bench_now_ns();
        if (!rc) rc = opprof_capture_perfetto_write(c, pf);
        int64_t t2 = bench_now_ns();
        if (rc) die("write", rc);
        w.json_s[r] = (double)(t1 - t0) / 1e9;
        w.perfetto_s[r] = (double)(t2 - t1) / 1e9;
    }
    w.json_bytes = file_size(json);
    w.perfetto_bytes = file_size(pf);
    unlink(json);
    unlink(pf);
    return w;
}

static double median(const double *v) {
    double s[ROUNDS];
    memcpy(s, v, sizeof s);
    return bench_stats_of(s, ROUNDS).median;
}

int main(int argc, char **argv) {
    bool json = false;
    long n = 250000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc && atol(argv[i + 1]) > 0)
            n = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_writer [--json] [--iterations N]\n");
            return 64;
        }
    }
    opprof_capture *plain = record(n, false), *mem = record(n, true), *seed = seed_capture();
    written a = write_both(plain), b = write_both(mem), s = write_both(seed);
    double slices = (double)a.events, mems = (double)b.memory;
    double json_slice = a.json_bytes / slices, pf_slice = a.perfetto_bytes / slices;
    double json_mem = (b.json_bytes - a.json_bytes) / mems, pf_mem = (b.perfetto_bytes - a.perfetto_bytes) / mems;
    double events_b = (double)(b.events + b.memory);
    bench_ratio speed = bench_ratio_of(b.json_s, b.perfetto_s, ROUNDS); /* > 1: Perfetto's is faster */
    char host[256];
    const char *isa;
    bench_host(host, sizeof host, &isa);
    if (json) {
        printf("{\n  \"host\": \"%s\", \"isa\": \"%s\", \"slices\": %zu, \"memory_events\": %zu,\n", host, isa,
               a.events, b.memory);
        bench_json_number(stdout, "json_bytes_per_slice", json_slice, false);
        bench_json_number(stdout, "perfetto_bytes_per_slice", pf_slice, false);
        bench_json_number(stdout, "json_bytes_per_memory_event", json_mem, false);
        bench_json_number(stdout, "perfetto_bytes_per_memory_event", pf_mem, false);
        bench_json_number(stdout, "json_ns_per_event", median(b.json_s) * 1e9 / events_b, false);
        bench_json_number(stdout, "perfetto_ns_per_event", median(b.perfetto_s) * 1e9 / events_b, false);
        bench_json_ratio(stdout, "perfetto_speed_over_json", speed, false);
        bench_json_number(stdout, "seed_json_bytes", s.json_bytes, false);
        bench_json_number(stdout, "seed_perfetto_bytes", s.perfetto_bytes, false);
        bench_json_number(stdout, "seed_json_over_perfetto", s.json_bytes / s.perfetto_bytes, true);
        puts("}");
    } else {
        char r[96];
        bench_ratio_text(speed, r, sizeof r);
        printf("host: %s (%s); %zu slices, then %zu memory events more; %d rounds\n", host, isa, a.events, b.memory,
               ROUNDS);
        printf("  bytes per slice: JSON %.1f, Perfetto %.1f\n", json_slice, pf_slice);
        printf("  bytes per memory event: JSON %.1f, Perfetto %.1f\n", json_mem, pf_mem);
        printf("  ns per event (slices and memory): JSON %.1f, Perfetto %.1f: Perfetto %s JSON's speed\n",
               median(b.json_s) * 1e9 / events_b, median(b.perfetto_s) * 1e9 / events_b, r);
        printf("  the guide's capture: %.0f bytes as JSON, %.0f as Perfetto (%.2fx smaller)\n", s.json_bytes,
               s.perfetto_bytes, s.json_bytes / s.perfetto_bytes);
    }
    opprof_capture_free(plain);
    opprof_capture_free(mem);
    opprof_capture_free(seed);
    return 0;
}
