/*
 * bench_roofline - are the roofs right? In one run:
 *   - opprof's ceilings (opprof_machine_measure, one thread) against Debian's
 *     likwid-bench at the same ISA: peakflops_sp_(avx|avx512)_fma, and
 *     load_/copy_(avx|avx512) at a working set per level (L1 16 kB, L2 256 kB,
 *     LLC 8 MB, DRAM 1 GB), their ratios;
 *   - the seed's model (256 -> 512 -> 64, batch 128) recorded with its shapes:
 *     aten::addmm's and aten::clamp_min's bound and % of roof, and the largest
 *     % of roof of any row (above 100: a roof exceeded, a wrong roof);
 *   - the quick measurement a capture makes (opprof_machine_measure_quick,
 *     1..N threads): its time, and its one-thread figures over the full ones.
 * likwid-bench counts no hardware event here: it needs no PMU. Without it the
 * peer's keys are null.
 *
 *   build/bin/bench_roofline [--json] [--steps N]
 */
#include "bench_util.h"
#include "bench_seed.h"

#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>

/* likwid-bench's figure for a test at a working set: "MByte/s" or "MFlops/s", NAN without it. */
static double likwid(const char *test, const char *size, const char *key) {
    if (access("/usr/bin/likwid-bench", X_OK) != 0) return NAN;
    char cmd[256], line[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/likwid-bench -t %s -w S0:%s:1 2>/dev/null", test, size);
    FILE *p = popen(cmd, "r");
    double v = NAN;
    size_t klen = strlen(key);
    while (p && fgets(line, sizeof line, p))
        if (!strncmp(line, key, klen)) v = strtod(line + klen + 1, NULL);
    if (p) pclose(p);
    return v;
}

/* The model's capture: steps of forward with shapes recorded. */
static opprof_capture *capture_model(int steps) {
    model m = seed_model();
    for (int i = 0; i < 20; i++) forward(&m);
    opprof_config cfg = opprof_config_default();
    cfg.record_shapes = true;
    opprof_session *s;
    opprof_capture *c = NULL;
    int rc = opprof_session_start(&s, &cfg);
    if (rc) die("session", rc);
    for (int i = 0; i < steps; i++) {
        opprof_range r = opprof_range_begin(OPPROF_SRCLOC("step", OPPROF_KIND_USER_ANNOTATION));
        forward(&m);
        opprof_range_end(r);
    }
    rc = opprof_session_stop(s);
    if (!rc) rc = opprof_session_take_capture(s, &c);
    if (rc) die("capture", rc);
    opprof_session_free(s);
    return c;
}

int main(int argc, char **argv) {
    bool json = false;
    int steps = 50;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_roofline [--json] [--steps N]\n");
            return 64;
        }
    }
    opprof_machine m, quick;
    int rc = opprof_machine_measure(1, &m);
    if (rc) die("machine", rc);
    /* a capture's measurement (the cache's first, and a long run's end): 1..N threads, timed */
    int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    cpus = cpus < 1 ? 1 : cpus > OPPROF_MACHINE_MAX_THREADS ? OPPROF_MACHINE_MAX_THREADS : cpus;
    int64_t t0 = bench_now_ns();
    if ((rc = opprof_machine_measure_quick(cpus, &quick))) die("quick machine", rc);
    double quick_s = (double)(bench_now_ns() - t0) / 1e9;
    const opprof_machine_ceilings *q1 = &quick.by_threads[0];
    bool wide = !strcmp(m.isa, "AVX-512");
    const char *sizes[4] = {"16kB", "256kB", "8MB", "1GB"};
    char test[64];
    snprintf(test, sizeof test, "peakflops_sp_%s_fma", wide ? "avx512" : "avx");
    double peer_fma = likwid(test, "32kB", "MFlops/s:") / 1e3;
    double peer_load[4], peer_copy[4];
    for (int l = 0; l < 4; l++) {
        snprintf(test, sizeof test, "load_%s", wide ? "avx512" : "avx");
        peer_load[l] = likwid(test, sizes[l], "MByte/s:") / 1e3;
        snprintf(test, sizeof test, "copy_%s", wide ? "avx512" : "avx");
        peer_copy[l] = likwid(test, sizes[l], "MByte/s:") / 1e3;
    }
    opprof_capture *c = capture_model(steps);
    opprof_averages *avg = NULL;
    if (opprof_capture_averages(c, &avg)) die("averages", -12);
    size_t n = 0;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    double addmm_pct = NAN, clamp_pct = NAN, max_pct = 0;
    int addmm_compute = -1, clamp_level = -1;
    for (size_t i = 0; i < n; i++) {
        opprof_roofline f = opprof_averages_roofline(avg, i, &m);
        if (!f.modelled) continue;
        if (f.roof_percent > max_pct) max_pct = f.roof_percent;
        if (!strcmp(rows[i].key, "aten::addmm")) addmm_pct = f.roof_percent, addmm_compute = f.compute_bound;
        if (!strcmp(rows[i].key, "aten::clamp_min"))
            clamp_pct = f.roof_percent, clamp_level = f.compute_bound ? -1 : f.level;
    }
    opprof_averages_free(avg);
    opprof_capture_free(c);
    const opprof_machine_ceilings *one = &m.by_threads[0];
    if (json) {
        printf("{\n");
        bench_json_number(stdout, "fma_gflops", one->fma_peak_gflops, false);
        bench_json_number(stdout, "likwid_fma_gflops", peer_fma, false);
        bench_json_number(stdout, "fma_over_likwid", one->fma_peak_gflops / peer_fma, false);
        for (int l = 0; l < 4; l++) {
            char key[64];
            const char *name = one->levels[l].name;
            snprintf(key, sizeof key, "%s_load_gbps", name),
                bench_json_number(stdout, key, one->levels[l].load_gbs, false);
            snprintf(key, sizeof key, "%s_likwid_load_gbps", name), bench_json_number(stdout, key, peer_load[l], false);
            snprintf(key, sizeof key, "%s_load_over_likwid", name);
            bench_json_number(stdout, key, one->levels[l].load_gbs / peer_load[l], false);
            snprintf(key, sizeof key, "%s_copy_gbps", name),
                bench_json_number(stdout, key, one->levels[l].copy_gbs, false);
            snprintf(key, sizeof key, "%s_likwid_copy_gbps", name), bench_json_number(stdout, key, peer_copy[l], false);
            snprintf(key, sizeof key, "%s_copy_over_likwid", name);
            bench_json_number(stdout, key, one->levels[l].copy_gbs / peer_copy[l], false);
        }
        bench_json_number(stdout, "quick_s", quick_s, false);
        bench_json_number(stdout, "quick_threads", cpus, false);
        bench_json_number(stdout, "quick_fma_over_full", q1->fma_peak_gflops / one->fma_peak_gflops, false);
        for (int l = 0; l < 4; l++) {
            char key[64];
            snprintf(key, sizeof key, "quick_%s_load_over_full", one->levels[l].name);
            bench_json_number(stdout, key, q1->levels[l].load_gbs / one->levels[l].load_gbs, false);
        }
        bench_json_number(stdout, "addmm_roof_pct", addmm_pct, false);
        bench_json_number(stdout, "addmm_compute_bound", addmm_compute, false);
        bench_json_number(stdout, "clamp_min_roof_pct", clamp_pct, false);
        bench_json_number(stdout, "clamp_min_level", clamp_level, false);
        bench_json_number(stdout, "max_roof_pct", max_pct, true);
        printf("}\n");
    } else {
        char model_name[256];
        const char *isa;
        bench_host(model_name, sizeof model_name, &isa);
        printf("host: %s (%s), one thread\n", model_name, isa);
        printf("FMA peak: %.1f GFLOP/s, likwid-bench %.1f (%.3fx)\n", one->fma_peak_gflops, peer_fma,
               one->fma_peak_gflops / peer_fma);
        for (int l = 0; l < 4; l++)
            printf("%-5s load %.1f GB/s (likwid %.1f, %.3fx), copy %.1f GB/s (likwid %.1f, %.3fx)\n",
                   one->levels[l].name, one->levels[l].load_gbs, peer_load[l], one->levels[l].load_gbs / peer_load[l],
                   one->levels[l].copy_gbs, peer_copy[l], one->levels[l].copy_gbs / peer_copy[l]);
        printf("quick measurement, 1..%d threads: %.3f s; one thread's over the full one's: FMA %.3fx", cpus, quick_s,
               q1->fma_peak_gflops / one->fma_peak_gflops);
        for (int l = 0; l < 4; l++)
            printf(", %s load %.3fx", one->levels[l].name, q1->levels[l].load_gbs / one->levels[l].load_gbs);
        printf("\n");
        printf("aten::addmm: %s, %.1f %% of roof; aten::clamp_min: %s, %.1f %%; largest %% of roof %.1f\n",
               addmm_compute ? "compute" : "memory", addmm_pct,
               clamp_level >= 0 ? one->levels[clamp_level].name : "compute", clamp_pct, max_pct);
    }
    return 0;
}
