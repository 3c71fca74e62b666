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
 *   build/bin/bench_ggml [--json] [--rounds N] [--iters N] [--threads N] [--tokens N] [--dim N]
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

static struct ggml_tensor *weight(model *m, int64_t k, int64_t n, unsigned seed) {
    struct ggml_tensor *w = ggml_new_tensor_2d(m->ctx, GGML_TYPE_Q8_0, k, n);
    float *tmp = malloc((size_t)(k * n) * sizeof *tmp);
    for (int64_t i = 0; i < k * n; i++) tmp[i] = (float)((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f;
    ggml_quantize_chunk(GGML_TYPE_Q8_0, tmp, w->data, 0, n, k, NULL);
    free(tmp);
    return w;
}

static void model_make(model *m, int threads) {
    struct ggml_init_params ip = {256u << 20, NULL, false};
    m->ctx = ggml_init(ip);
    struct ggml_tensor *x = ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, DIM, TOKENS);
    for (int64_t i = 0; i < ggml_nelements(x); i++) ((float *)x->data)[i] = (float)(i % 17) / 17.0f;
    struct ggml_tensor *h = x;
    for (int l = 0; l < LAYERS; l++) {
        struct ggml_tensor *n = ggml_rms_norm(m->ctx, h, 1e-5f);
        struct ggml_tensor *gate = ggml_mul_mat(m->ctx, weight(m, DIM, HIDDEN, 3 * l + 1), n);
        struct ggml_tensor *up = ggml_mul_mat(m->ctx, weight(m, DIM, HIDDEN, 3 * l + 2), n);
        struct ggml_tensor *act = ggml_mul(m->ctx, ggml_silu(m->ctx, gate), up);
        struct ggml_tensor *down = ggml_mul_mat(m->ctx, weight(m, HIDDEN, DIM, 3 * l + 3), act);
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

int main(int argc, char **argv) {
    bool json = false;
    int rounds = 9, iters = 200, threads = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = true;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tokens") && i + 1 < argc) TOKENS = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dim") && i + 1 < argc) DIM = atoi(argv[++i]), HIDDEN = DIM * 11 / 4 / 32 * 32;
        else {
            fprintf(stderr, "usage: bench_ggml [--json] [--rounds N] [--iters N] [--threads N] [--tokens N] [--dim N]\n");
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
    if (json) {
        printf("{\n  \"host\": \"%s\",\n  \"isa\": \"%s\",\n", host, isa);
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
    return 0;
}
