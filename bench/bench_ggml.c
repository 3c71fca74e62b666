/* bench_ggml.c - the ggml adapter's cost per op against ggml's own run, in
 * the same run: a transformer-like graph (LAYERS blocks of RMS norm, three
 * matmuls of q8_0 weights, SiLU, mul, add, softmax) computed on a pool of
 * THREADS threads, rounds interleaved:
 *   ggml     ggml alone (no hook)
 *   idle     the adapter attached, no window open (one load and a branch a node a thread)
 *   window   the adapter recording every node
 *   shapes   ... with record_shapes
 * Each round times ITERS computes of each; the cost per op is (its time -
 * ggml's) / (ops computed), per round, then the median and range over rounds.
 *
 * --roofline: then the explain step on the same graph, ITERS recorded
 * computes each beside one of ggml alone, against the machine's ceilings
 * measured in the same run (opprof machine's measurement): each layer's
 * ggml::MUL_MAT row (report --group-by layer), its bound and % of roof, and a
 * graph's share of the DRAM copy bandwidth by opprof's bytes and recorded
 * graph times, against the speed of light computed without opprof: the
 * weights' bytes x ggml's own computes per second / the DRAM copy bandwidth.
 * With --dim 2048 the weights (294 MB) are past any LLC.
 *
 *   build/bin/bench_ggml [--json] [--rounds N] [--iters N] [--threads N] [--tokens N] [--dim N] [--roofline]
 */
#include "bench_util.h"

#include <opprof/capture.h>
#include <opprof/ggml.h>
#include <opprof/opprof.h>

#include <ggml-cpu.h>
#include <ggml.h>

/* A small decoder's token step: ops of a few microseconds, where a hook's cost shows. */
static int DIM = 256, HIDDEN = 704, TOKENS = 1, LAYERS = 8;
enum mode { GGML, IDLE, WINDOW, SHAPES, MODES };
static const char *const MODE_NAMES[MODES] = {"ggml", "idle", "window", "shapes"};

typedef struct model {
    struct ggml_context *ctx;
    struct ggml_cgraph *graph;
    struct ggml_threadpool *pool;
    struct ggml_cplan plan;
} model;

static int64_t g_weight_bytes; /* all the weights' */

static struct ggml_tensor *weight(model *m, int64_t k, int64_t n, unsigned seed) {
    struct ggml_tensor *w = ggml_new_tensor_2d(m->ctx, GGML_TYPE_Q8_0, k, n);
    g_weight_bytes += (int64_t)ggml_nbytes(w);
    float *tmp = malloc((size_t)(k * n) * sizeof *tmp);
    for (int64_t i = 0; i < k * n; i++) tmp[i] = (float)((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f;
    ggml_quantize_chunk(GGML_TYPE_Q8_0, tmp, w->data, 0, n, k, NULL);
    free(tmp);
    return w;
}

static void model_make(model *m, int threads) {
    /* the weights (q8_0: 34 bytes a block of 32), then room for the activations */
    size_t weights = (size_t)LAYERS * 3 * (size_t)DIM * (size_t)HIDDEN / 32 * 34;
    struct ggml_init_params ip = {weights + ((size_t)64 << 20), NULL, false};
    m->ctx = ggml_init(ip);
    struct ggml_tensor *x = ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, DIM, TOKENS);
    for (int64_t i = 0; i < ggml_nelements(x); i++) ((float *)x->data)[i] = (float)(i % 17) / 17.0f;
    struct ggml_tensor *h = x;
    for (int l = 0; l < LAYERS; l++) {
        struct ggml_tensor *n = ggml_rms_norm(m->ctx, h, 1e-5f);
        /* named as llama.cpp names a layer's tensors: the rows by layer */
        struct ggml_tensor *gate =
            ggml_format_name(ggml_mul_mat(m->ctx, weight(m, DIM, HIDDEN, 3 * l + 1), n), "ffn_gate-%d", l);
        struct ggml_tensor *up =
            ggml_format_name(ggml_mul_mat(m->ctx, weight(m, DIM, HIDDEN, 3 * l + 2), n), "ffn_up-%d", l);
        struct ggml_tensor *act = ggml_mul(m->ctx, ggml_silu(m->ctx, gate), up);
        struct ggml_tensor *down =
            ggml_format_name(ggml_mul_mat(m->ctx, weight(m, HIDDEN, DIM, 3 * l + 3), act), "ffn_down-%d", l);
        h = ggml_add(m->ctx, h, ggml_soft_max(m->ctx, down));
    }
    m->graph = ggml_new_graph(m->ctx);
    ggml_build_forward_expand(m->graph, h);
    struct ggml_threadpool_params tp = ggml_threadpool_params_default(threads);
    m->pool = ggml_threadpool_new(&tp);
    m->plan = ggml_graph_plan(m->graph, threads, m->pool);
    m->plan.work_data = malloc(m->plan.work_size ? m->plan.work_size : 1);
}

static double run(model *m, enum mode mode, int iters) {
    opprof_session *s = NULL;
    if (mode != GGML) opprof_ggml_attach();
    if (mode >= WINDOW) {
        opprof_config cfg = opprof_config_default();
        cfg.record_steps = false;
        cfg.record_shapes = mode == SHAPES;
        if (opprof_session_start(&s, &cfg)) exit(1);
    }
    int64_t t0 = bench_now_ns();
    for (int i = 0; i < iters; i++) ggml_graph_compute(m->graph, &m->plan);
    double ns = (double)(bench_now_ns() - t0);
    if (s) {
        opprof_session_stop(s);
        opprof_capture *c = NULL;
        opprof_session_take_capture(s, &c);
        opprof_capture_free(c);
        opprof_session_free(s);
    }
    opprof_ggml_detach();
    return ns;
}

static double median_of(double *v, int n) { return bench_stats_of(v, n).median; }

/* --roofline's figures (see the top), printed as JSON keys. */
typedef struct roof_figures {
    int mul_mat_rows, compute_bound, dram_bound, other_bound;
    double roof_min, roof_max, roof_median; /* % of roof of the MUL_MAT rows */
    double step_us, dram_copy_gbs, step_dram_percent, speed_of_light_percent;
    bool ok;
} roof_figures;

static void mul_mat_rows(const opprof_averages *avg, const opprof_machine *machine, roof_figures *f) {
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    double pct[512];
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].key, "ggml::MUL_MAT") != 0 || f->mul_mat_rows >= 512) continue;
        opprof_roofline r = opprof_averages_roofline(avg, i, machine);
        if (!r.modelled) continue;
        pct[f->mul_mat_rows++] = r.roof_percent;
        const opprof_machine_ceilings *c = opprof_machine_for_threads(machine, rows[i].threads);
        if (r.compute_bound)
            f->compute_bound++;
        else if (!strcmp(c->levels[r.level].name, "DRAM"))
            f->dram_bound++;
        else
            f->other_bound++;
    }
    bench_stats st = bench_stats_of(pct, f->mul_mat_rows);
    f->roof_min = pct[0], f->roof_max = f->mul_mat_rows ? pct[f->mul_mat_rows - 1] : NAN, f->roof_median = st.median;
}

/* The bytes a graph moves by opprof's rows (stated, else modelled). */
static double bytes_per_graph(const opprof_averages *avg, int64_t graphs) {
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    double bytes = 0;
    for (size_t i = 0; i < n; i++)
        if (!strncmp(rows[i].key, "ggml::", 6)) bytes += (double)rows[i].bytes;
    return bytes / (double)graphs;
}

/* Each recorded compute beside one of ggml alone, so that both are timed in
 * the same moments of the machine: opprof's figure is the recorded graphs'
 * (ggml::graph_compute's median call), the speed of light ggml's own. */
static roof_figures roofline(model *m, int threads, int iters) {
    roof_figures f = {0};
    opprof_machine machine;
    if (opprof_machine_measure(threads, &machine)) return f;
    const opprof_machine_ceilings *c = opprof_machine_for_threads(&machine, threads);
    f.dram_copy_gbs = c->levels[OPPROF_MACHINE_LEVELS - 1].copy_gbs;
    double *alone = calloc((size_t)iters, sizeof *alone);
    opprof_config cfg = opprof_config_default();
    cfg.record_steps = false;
    opprof_session *s = NULL;
    if (!alone || opprof_session_start(&s, &cfg)) exit(1);
    for (int i = 0; i < iters; i++) {
        opprof_ggml_attach();
        ggml_graph_compute(m->graph, &m->plan);
        opprof_ggml_detach();
        int64_t t0 = bench_now_ns();
        ggml_graph_compute(m->graph, &m->plan);
        alone[i] = (double)(bench_now_ns() - t0);
    }
    opprof_session_stop(s);
    opprof_capture *cap = NULL;
    opprof_session_take_capture(s, &cap);
    opprof_session_free(s);
    opprof_averages_options by_layer = {.group_by_layer = true, .distributions = true};
    opprof_averages *avg = NULL;
    if (!cap || opprof_capture_averages_ex(cap, &by_layer, &avg)) exit(1);
    mul_mat_rows(avg, &machine, &f);
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    opprof_row_distributions rd;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].key, "ggml::graph_compute") && !opprof_averages_row_distributions(avg, i, &rd) &&
            rows[i].calls > 0) {
            f.step_us = rd.call_total.median / 1e3;
            /* opprof's: the bytes its rows move a graph, over a recorded graph's time, against DRAM's copy bandwidth */
            f.step_dram_percent = 100.0 * bytes_per_graph(avg, rows[i].calls) / (f.step_us * 1e3) / f.dram_copy_gbs;
            /* without opprof: the weights, streamed once a compute, at ggml's own speed */
            f.speed_of_light_percent =
                100.0 * (double)g_weight_bytes / bench_stats_of(alone, iters).median / f.dram_copy_gbs;
            f.ok = f.mul_mat_rows > 0;
        }
    free(alone);
    opprof_averages_free(avg);
    opprof_capture_free(cap);
    return f;
}

static void roofline_json(const roof_figures *f) {
    bench_json_number(stdout, "weight_bytes", (double)g_weight_bytes, false);
    bench_json_number(stdout, "dram_copy_gbps", f->dram_copy_gbs, false);
    bench_json_number(stdout, "mul_mat_rows", f->mul_mat_rows, false);
    bench_json_number(stdout, "mul_mat_compute_bound", f->compute_bound, false);
    bench_json_number(stdout, "mul_mat_dram_bound", f->dram_bound, false);
    bench_json_number(stdout, "mul_mat_cache_bound", f->other_bound, false);
    bench_json_number(stdout, "mul_mat_roof_pct_min", f->roof_min, false);
    bench_json_number(stdout, "mul_mat_roof_pct_median", f->roof_median, false);
    bench_json_number(stdout, "mul_mat_roof_pct_max", f->roof_max, false);
    bench_json_number(stdout, "recorded_graph_us", f->step_us, false);
    bench_json_number(stdout, "graph_dram_pct", f->step_dram_percent, false);
    bench_json_number(stdout, "speed_of_light_dram_pct", f->speed_of_light_percent, false);
    bench_json_number(stdout, "dram_apart_pp", f->step_dram_percent - f->speed_of_light_percent, false);
}

int main(int argc, char **argv) {
    bool json = false, with_roofline = false;
    int rounds = 9, iters = 200, threads = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
            TOKENS = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dim") && i + 1 < argc)
            DIM = atoi(argv[++i]), HIDDEN = DIM * 11 / 4 / 32 * 32;
        else if (!strcmp(argv[i], "--roofline"))
            with_roofline = true;
        else {
            fprintf(stderr, "usage: bench_ggml [--json] [--rounds N] [--iters N] [--threads N] [--tokens N] [--dim N] "
                            "[--roofline]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 100 || iters < 1 || threads < 1 || TOKENS < 1 || DIM < 32 || DIM % 32) {
        fprintf(stderr, "bench_ggml: rounds 1-100, iters and threads and tokens >= 1, dim a multiple of 32\n");
        return 2;
    }
    model m;
    model_make(&m, threads);
    int ops = 0;
    for (int i = 0; i < ggml_graph_n_nodes(m.graph); i++) ops += ggml_graph_node(m.graph, i)->op != GGML_OP_NONE;
    run(&m, WINDOW, iters / 4 + 1); /* warm: pages, caches, the pool */
    double t[MODES][100], per_op[MODES][100], ratio[MODES][100];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < MODES; k++) {
            enum mode mode = (enum mode)((k + r) % MODES); /* each mode first in its turn */
            t[mode][r] = run(&m, mode, iters);
        }
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < MODES; k++) {
            per_op[k][r] = (t[k][r] - t[GGML][r]) / ((double)iters * ops);
            ratio[k][r] = t[k][r] / t[GGML][r];
        }
    char host[256];
    const char *isa;
    bench_host(host, sizeof host, &isa);
    double med_graph[MODES], med_op[MODES], lo[MODES], hi[MODES], med_ratio[MODES];
    for (int k = 0; k < MODES; k++) {
        double v[100];
        for (int r = 0; r < rounds; r++) v[r] = t[k][r] / iters;
        med_graph[k] = median_of(v, rounds);
        memcpy(v, per_op[k], sizeof(double) * (size_t)rounds);
        bench_stats_of(v, rounds);
        lo[k] = v[0], hi[k] = v[rounds - 1];
        med_op[k] = median_of(v, rounds);
        memcpy(v, ratio[k], sizeof(double) * (size_t)rounds);
        med_ratio[k] = median_of(v, rounds);
    }
    roof_figures roof = {0};
    if (with_roofline && !(roof = roofline(&m, threads, iters)).ok) {
        fprintf(stderr, "bench_ggml: --roofline: the machine could not be measured, or no MUL_MAT row has a model\n");
        return 1;
    }
    if (json) {
        printf("{\n  \"host\": \"%s\",\n  \"isa\": \"%s\",\n", host, isa);
        if (with_roofline) roofline_json(&roof);
        bench_json_number(stdout, "threads", threads, false);
        bench_json_number(stdout, "ops_per_graph", ops, false);
        bench_json_number(stdout, "dim", DIM, false);
        bench_json_number(stdout, "tokens", TOKENS, false);
        bench_json_number(stdout, "rounds", rounds, false);
        for (int k = 0; k < MODES; k++) {
            char key[64];
            snprintf(key, sizeof key, "%s_graph_us", MODE_NAMES[k]);
            bench_json_number(stdout, key, med_graph[k] / 1e3, false);
            if (k == GGML) continue;
            snprintf(key, sizeof key, "%s_ns_per_op", MODE_NAMES[k]);
            bench_json_number(stdout, key, med_op[k], false);
            snprintf(key, sizeof key, "%s_ns_per_op_low", MODE_NAMES[k]);
            bench_json_number(stdout, key, lo[k], false);
            snprintf(key, sizeof key, "%s_ns_per_op_high", MODE_NAMES[k]);
            bench_json_number(stdout, key, hi[k], false);
            snprintf(key, sizeof key, "%s_over_ggml", MODE_NAMES[k]);
            bench_json_number(stdout, key, med_ratio[k], k == MODES - 1);
        }
        printf("}\n");
        return 0;
    }
    printf("host: %s (%s), %d threads, %d ops a graph (dim %d, %d tokens), %d rounds of %d computes\n", host, isa,
           threads, ops, DIM, TOKENS, rounds, iters);
    printf("%-8s %12s %14s %22s %10s\n", "", "graph", "cost per op", "range over rounds", "vs ggml");
    for (int k = 0; k < MODES; k++)
        if (k == GGML)
            printf("%-8s %10.1fus\n", MODE_NAMES[k], med_graph[k] / 1e3);
        else
            printf("%-8s %10.1fus %12.0fns %10.0f to %6.0fns %9.3fx\n", MODE_NAMES[k], med_graph[k] / 1e3, med_op[k],
                   lo[k], hi[k], med_ratio[k]);
    if (with_roofline)
        printf("roofline: %d MUL_MAT rows (by layer): %d compute-bound, %d DRAM, %d cache; %.1f-%.1f %% of roof "
               "(median %.1f); the step at %.1f %% of DRAM's copy bandwidth (%.1f GB/s) by opprof, %.1f %% by the "
               "speed of light (%.0f MB of weights a compute)\n",
               roof.mul_mat_rows, roof.compute_bound, roof.dram_bound, roof.other_bound, roof.roof_min, roof.roof_max,
               roof.roof_median, roof.step_dram_percent, roof.dram_copy_gbs, roof.speed_of_light_percent,
               (double)g_weight_bytes / 1e6);
    return 0;
}
