/* test_ggml.c - a real ggml graph (scripts/ggml.sh's build: matmuls, one of
 * q8_0 weights, add, softmax) computed by a pool of 2 threads through the
 * ggml adapter: per-op rows whose calls and FLOPs are the graph's, each run's
 * parts on the threads that computed them and inside its step, the outputs
 * of every node identical with and without the adapter, and the same table
 * from the trace read back. */
#include "check.h"
#include "rows.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/ggml.h>
#include <opprof/opprof.h>

#include <ggml-cpu.h>
#include <ggml.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { K = 256, M = 96, N = 64, THREADS = 2, STEPS = 4, ACTIVE = 3 };

typedef struct model {
    struct ggml_context *ctx;
    struct ggml_cgraph *graph;
    struct ggml_threadpool *pool;
    struct ggml_cplan plan;
    void *work;
} model;

static void fill(struct ggml_tensor *t, unsigned seed) {
    float *p = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) p[i] = (float)((i * 7919 + seed * 104729) % 1000) / 500.0f - 1.0f;
}

/* softmax(W·x + b) and the same with W in q8_0, summed. */
static void model_make(model *m) {
    struct ggml_init_params ip = {64u << 20, NULL, false};
    m->ctx = ggml_init(ip);
    struct ggml_tensor *w = ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor *wq = ggml_new_tensor_2d(m->ctx, GGML_TYPE_Q8_0, K, M);
    struct ggml_tensor *x = ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor *b = ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, M, N);
    fill(w, 1), fill(x, 2), fill(b, 3);
    ggml_quantize_chunk(GGML_TYPE_Q8_0, w->data, wq->data, 0, M, K, NULL);
    ggml_set_name(w, "w"), ggml_set_name(wq, "wq"), ggml_set_name(x, "x"), ggml_set_name(b, "b");
    struct ggml_tensor *y = ggml_add(m->ctx, ggml_mul_mat(m->ctx, w, x), b);
    ggml_set_name(y, "y");
    struct ggml_tensor *yq = ggml_add(m->ctx, ggml_mul_mat(m->ctx, wq, x), b);
    struct ggml_tensor *out = ggml_add(m->ctx, ggml_soft_max(m->ctx, y), ggml_soft_max(m->ctx, yq));
    ggml_set_name(out, "out");
    m->graph = ggml_new_graph(m->ctx);
    ggml_build_forward_expand(m->graph, out);
    struct ggml_threadpool_params tp = ggml_threadpool_params_default(THREADS);
    m->pool = ggml_threadpool_new(&tp);
    m->plan = ggml_graph_plan(m->graph, THREADS, m->pool);
    m->work = malloc(m->plan.work_size ? m->plan.work_size : 1);
    m->plan.work_data = m->work;
}

static void model_free(model *m) {
    ggml_threadpool_free(m->pool);
    free(m->work);
    ggml_free(m->ctx);
}

/* Every node's output, one after the other. */
static size_t outputs(model *m, char **out) {
    size_t size = 0;
    for (int i = 0; i < ggml_graph_n_nodes(m->graph); i++) size += ggml_nbytes(ggml_graph_node(m->graph, i));
    char *p = *out = malloc(size);
    for (int i = 0; i < ggml_graph_n_nodes(m->graph); i++) {
        struct ggml_tensor *t = ggml_graph_node(m->graph, i);
        memcpy(p, t->data, ggml_nbytes(t));
        p += ggml_nbytes(t);
    }
    return size;
}

/* The graph's own count of nodes of an op, and their FLOPs by the formula of
 * opprof/ggml.h, computed here from the tensors. */
static void graph_counts(model *m, enum ggml_op op, int64_t *count, int64_t *flops) {
    *count = *flops = 0;
    for (int i = 0; i < ggml_graph_n_nodes(m->graph); i++) {
        struct ggml_tensor *t = ggml_graph_node(m->graph, i);
        if (t->op != op) continue;
        (*count)++;
        if (op == GGML_OP_MUL_MAT) *flops += 2 * t->src[0]->ne[0] * t->ne[0] * t->ne[1];
        if (op == GGML_OP_ADD) *flops += ggml_nelements(t);
    }
}

/* The rows of one op: its calls and FLOPs are the graph's times the active
 * steps; its parts ran on both threads. */
static void check_rows(model *m, const opprof_averages *avg, const char *where) {
    static const struct {
        const char *name;
        enum ggml_op op;
    } ops[] = {{"ggml::MUL_MAT", GGML_OP_MUL_MAT}, {"ggml::ADD", GGML_OP_ADD}, {"ggml::SOFT_MAX", GGML_OP_SOFT_MAX}};
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        const opprof_average_row *r = row(avg, ops[k].name);
        CHECK(r != NULL);
        if (!r) {
            fprintf(stderr, "  (%s: no row %s)\n", where, ops[k].name);
            continue;
        }
        int64_t count, flops;
        graph_counts(m, ops[k].op, &count, &flops);
        CHECK_INT(r->calls, count * ACTIVE);
        CHECK_INT(r->flops, flops * ACTIVE);
        CHECK_INT(r->threads, THREADS);
        /* each run's span is at least its longest part, which is at least the mean of its 2 parts */
        CHECK(r->wall_ns > 0 && r->wall_ns >= r->total_ns / THREADS);
        CHECK_INT(r->wait_ns, THREADS * r->wall_ns - r->total_ns);
        CHECK(r->imbalance >= 1.0);
        CHECK(r->wait_ns >= 0);
    }
    CHECK(row(avg, "ggml::graph_compute") != NULL);
    /* each thread's time between its parts of two nodes of a graph: a row of its own */
    int64_t runs = 0;
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    for (size_t i = 0; i < n; i++)
        if (!strncmp(rows[i].key, "ggml::", 6) && strcmp(rows[i].key, "ggml::graph_compute") &&
            strcmp(rows[i].key, "ggml::between_ops"))
            runs += rows[i].calls;
    const opprof_average_row *between = row(avg, "ggml::between_ops");
    CHECK(between && between->calls == (runs / ACTIVE - 1) * THREADS * ACTIVE && between->self_ns > 0);
}

/* Every part of a run lies within one step, and a run's parts are on two threads. */
static void check_parts(const opprof_capture *c) {
    size_t n_ev, n_marks, n_threads;
    const opprof_event *ev = opprof_capture_events(c, &n_ev);
    const opprof_mark *marks = opprof_capture_marks(c, &n_marks);
    const opprof_thread_info *threads = opprof_capture_threads(c, &n_threads);
    int64_t parts = 0, outside = 0;
    for (size_t k = 0; k < n_marks; k++) {
        if (marks[k].kind != OPPROF_MARK_ARG_INT || strcmp(opprof_capture_name(c, marks[k].name), OPPROF_PART_OF_KEY))
            continue;
        const opprof_event *p = &ev[marks[k].event];
        parts++;
        bool inside = false;
        for (size_t i = 0; i < n_ev && !inside; i++)
            inside = ev[i].kind == OPPROF_KIND_STEP && ev[i].start_ns <= p->start_ns &&
                     p->start_ns + p->duration_ns <= ev[i].start_ns + ev[i].duration_ns;
        outside += !inside;
    }
    CHECK(parts > 0);
    CHECK_INT(outside, 0);
    bool worker = false;
    for (size_t t = 0; t < n_threads; t++) worker |= strcmp(threads[t].name, "ggml-cpu 1") == 0;
    CHECK(worker);
}

/* The inputs of a q8_0 matmul are described as such. */
static void check_shapes(const opprof_capture *c) {
    size_t n_ev;
    const opprof_event *ev = opprof_capture_events(c, &n_ev);
    bool q8 = false;
    for (size_t i = 0; i < n_ev && !q8; i++) {
        const opprof_shapes *sh = opprof_capture_shapes(c, opprof_capture_site(c, ev[i].site)->shapes);
        if (sh && sh->n_inputs == 2 && strcmp(sh->dtype[0], "q8_0") == 0) {
            q8 = true;
            CHECK_INT(sh->dims[0][0], M);
            CHECK_INT(sh->dims[0][1], K);
            CHECK_STR(sh->dtype[1], "float");
        }
    }
    CHECK(q8);
}

/* STEPS computes of `graph` through the adapter, a step each, the last
 * ACTIVE of them recorded (shapes too when asked). */
static opprof_capture *recorded(struct ggml_cgraph *graph, struct ggml_cplan *plan, bool shapes) {
    CHECK_INT(opprof_ggml_attach(), 0);
    opprof_config cfg = opprof_config_default();
    cfg.schedule = (opprof_schedule){.wait = 0, .warmup = 1, .active = ACTIVE, .repeat = 1};
    cfg.record_shapes = shapes;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    for (int step = 0; step < STEPS; step++) {
        CHECK_INT(ggml_graph_compute(graph, plan), GGML_STATUS_SUCCESS);
        opprof_session_step(s);
    }
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    opprof_session_free(s);
    opprof_ggml_detach();
    return c;
}

TEST_CASE(graph_through_the_adapter) {
    model m;
    model_make(&m);
    CHECK_INT(ggml_graph_compute(m.graph, &m.plan), GGML_STATUS_SUCCESS);
    char *plain, *profiled;
    size_t plain_size = outputs(&m, &plain);

    opprof_capture *c = recorded(m.graph, &m.plan, true);

    /* the schedule is ggml's: every node's output as without the adapter */
    size_t profiled_size = outputs(&m, &profiled);
    CHECK_INT(profiled_size, plain_size);
    CHECK(memcmp(plain, profiled, plain_size) == 0);
    free(plain);
    free(profiled);

    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    check_rows(&m, avg, "live");
    check_parts(c);
    check_shapes(c);
    char *table = NULL;
    opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME};
    CHECK_INT(opprof_averages_table_to_string(avg, &o, &table), 0);
    CHECK_CONTAINS(table, "Wall total");
    CHECK_CONTAINS(table, "Imbalance");
    CHECK_CONTAINS(table, "GFLOP/s");
    printf("%s", table);
    opprof_free(table);

    /* the trace read back gives the same runs */
    char path[] = "/tmp/test_ggml_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK_INT(opprof_capture_chrome_write(c, path), 0);
    opprof_capture *back = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &back, NULL), 0);
    opprof_averages *avg_back = NULL;
    CHECK_INT(opprof_capture_averages(back, &avg_back), 0);
    check_rows(&m, avg_back, "read back");
    const opprof_average_row *live = row(avg, "ggml::MUL_MAT"), *read = row(avg_back, "ggml::MUL_MAT");
    if (live && read) {
        CHECK_INT(read->wall_ns / 1000, live->wall_ns / 1000); /* traces keep microseconds */
        CHECK_INT(read->threads, live->threads);
    }
    unlink(path);
    opprof_averages_free(avg_back);
    opprof_capture_free(back);
    opprof_averages_free(avg);
    opprof_capture_free(c);
    model_free(&m);
}

/* Two layers named as llama.cpp names them ("ffn_up-0", "ffn_out-1"), an
 * unnamed node that reads layer 1's cache, then a softmax: grouped by layer,
 * each layer's matmul is a row of its calls, both pool threads included,
 * though ggml describes a node on one thread's part only; the unnamed node is
 * of layer 1 and the softmax of none. */
TEST_CASE(rows_by_layer_of_a_real_graph) {
    enum { LAYERS = 2 };
    struct ggml_init_params ip = {32u << 20, NULL, false};
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    fill(h, 9);
    for (int l = 0; l < LAYERS; l++) {
        struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, K),
                           *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
        fill(w, 10 + (unsigned)l), fill(b, 20 + (unsigned)l);
        h = ggml_format_name(ggml_mul_mat(ctx, w, h), "ffn_up-%d", l);
        h = ggml_format_name(ggml_add(ctx, h, b), "ffn_out-%d", l);
    }
    /* an unnamed node that reads a layer's state (llama.cpp's flash attention
     * reads "cache_k_l1 (view)") is of that layer; the softmax after it, which
     * reads only activations, is of none */
    struct ggml_tensor *cache = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    fill(cache, 30);
    ggml_set_name(cache, "cache_k_l1");
    h = ggml_mul(ctx, h, ggml_view_2d(ctx, cache, K, N, cache->nb[1], 0));
    struct ggml_tensor *out = ggml_soft_max(ctx, h);
    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, out);
    struct ggml_cplan plan = ggml_graph_plan(graph, THREADS, NULL);
    void *work = malloc(plan.work_size ? plan.work_size : 1);
    plan.work_data = work;

    opprof_capture *c = recorded(graph, &plan, false);

    opprof_averages_options by_layer = {.group_by_layer = true};
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages_ex(c, &by_layer, &avg), 0);
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    int matmuls[LAYERS] = {0}, adds[LAYERS] = {0}, softmax_of_no_layer = 0, mul_of_layer_1 = 0;
    for (size_t i = 0; i < n; i++) {
        const opprof_average_row *r = &rows[i];
        bool layered = r->layer >= 0 && r->layer < LAYERS;
        if (!strcmp(r->key, "ggml::MUL_MAT") && layered && r->calls == ACTIVE && r->threads == THREADS)
            matmuls[r->layer]++;
        if (!strcmp(r->key, "ggml::ADD") && layered && r->calls == ACTIVE) adds[r->layer]++;
        if (!strcmp(r->key, "ggml::SOFT_MAX") && r->layer == -1 && r->calls == ACTIVE) softmax_of_no_layer++;
        if (!strcmp(r->key, "ggml::MUL") && r->layer == 1 && r->calls == ACTIVE) mul_of_layer_1++;
        bool of_a_layer =
            !strcmp(r->key, "ggml::MUL_MAT") || !strcmp(r->key, "ggml::ADD") || !strcmp(r->key, "ggml::MUL");
        CHECK(of_a_layer == layered);
    }
    for (int l = 0; l < LAYERS; l++) CHECK(matmuls[l] == 1 && adds[l] == 1);
    CHECK_INT(softmax_of_no_layer, 1);
    CHECK_INT(mul_of_layer_1, 1);
    opprof_averages_free(avg);
    /* the same graph recorded again, compared by layer (diff --stat --group-by layer): a row per
     * layer's matmul, CPU and wall, each with both sides' steps; the softmax of no layer by name */
    opprof_capture *again = recorded(graph, &plan, false);
    const opprof_capture *before[] = {c}, *after[] = {again};
    opprof_stat_diff *d = NULL;
    CHECK_INT(opprof_stat_diff_new_ex(before, 1, after, 1, NULL, &by_layer, &d), 0);
    for (int l = 0; l < LAYERS; l++) {
        char key[64];
        snprintf(key, sizeof key, "ggml::MUL_MAT (layer %d)", l);
        const opprof_stat_row *row = opprof_stat_diff_find(d, key);
        CHECK(row && row->before.n == row->after.n && row->before.n >= 2 && row->before.median > 0);
        snprintf(key, sizeof key, "ggml::MUL_MAT (layer %d) (wall)", l);
        CHECK(opprof_stat_diff_find(d, key) != NULL);
    }
    CHECK(opprof_stat_diff_find(d, "ggml::SOFT_MAX") != NULL);
    CHECK(opprof_stat_diff_find(d, "ggml::MUL_MAT") == NULL); /* every matmul is a layer's */
    opprof_stat_diff_free(d);
    opprof_capture_free(again);
    opprof_capture_free(c);
    free(work);
    ggml_free(ctx);
}

/* FLOPs and bytes by what an op touches: a 12-token lookup reads 12 rows of
 * its table, not the table; a row store writes its rows; flash attention
 * counts its two products (it had 0 FLOPs). */
TEST_CASE(flops_and_bytes_by_what_an_op_touches) {
    struct ggml_init_params ip = {16u << 20, NULL, true}; /* shapes only: no data */
    struct ggml_context *ctx = ggml_init(ip);
    enum { EMBD = 64, VOCAB = 1000, TOKENS = 12, D = 32, NKV = 48, HEADS = 4 };
    struct ggml_tensor *table = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, EMBD, VOCAB);
    struct ggml_tensor *ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, TOKENS);
    struct ggml_tensor *rows = ggml_get_rows(ctx, table, ids);
    /* q8_0: 34 bytes a block of 32 values, so a row of 64 is 68 bytes */
    CHECK_INT(opprof_ggml_bytes(rows), TOKENS * 68 + TOKENS * 4 + TOKENS * EMBD * 4);
    struct ggml_tensor *cache = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, EMBD, VOCAB);
    struct ggml_tensor *src = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, EMBD, TOKENS);
    struct ggml_tensor *where = ggml_new_tensor_1d(ctx, GGML_TYPE_I64, TOKENS);
    struct ggml_tensor *stored = ggml_set_rows(ctx, cache, src, where);
    CHECK_INT(opprof_ggml_bytes(stored), TOKENS * EMBD * 2 + TOKENS * EMBD * 4 + TOKENS * 8);
    struct ggml_tensor *q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, D, TOKENS, HEADS);
    struct ggml_tensor *k = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, D, NKV, HEADS);
    struct ggml_tensor *v = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, D, NKV, HEADS);
    struct ggml_tensor *att = ggml_flash_attn_ext(ctx, q, k, v, NULL, 0.125f, 0.0f, 0.0f);
    CHECK_INT(opprof_ggml_flops(att), 2 * (int64_t)NKV * (D + D) * TOKENS * HEADS);
    struct ggml_tensor *sum = ggml_add(ctx, src, src); /* every other op: its inputs and output */
    CHECK_INT(opprof_ggml_bytes(sum), 3 * TOKENS * EMBD * 4);
    CHECK_INT(opprof_ggml_bytes(NULL), 0);
    ggml_free(ctx);
}

/* Outside a window the adapter records nothing and changes nothing. */
TEST_CASE(outside_a_window) {
    model m;
    model_make(&m);
    CHECK_INT(opprof_ggml_attach(), 0);
    CHECK_INT(opprof_ggml_attach(), 0); /* twice is once */
    CHECK_INT(ggml_graph_compute(m.graph, &m.plan), GGML_STATUS_SUCCESS);
    opprof_ggml_detach();
    opprof_ggml_detach();
    CHECK_STR(opprof_ggml_op_name(ggml_graph_node(m.graph, 0)), "ggml::MUL_MAT");
    CHECK_INT(opprof_ggml_flops(ggml_graph_node(m.graph, 0)), 2 * K * M * N);
    CHECK_INT(opprof_ggml_flops(NULL), 0);
    model_free(&m);
}

#if defined(OPPROF_TEST_RECORD)
/* An unchanged ggml program (ggml_target) under `opprof record --ggml --step
 * ggml_graph_compute`: its ops per graph, each graph a step, its output as
 * without opprof. */
TEST_CASE(record_an_unchanged_program) {
    char dir[256], *plain = NULL, *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    CHECK_INT(run_commandf(&plain, "'%s/../tests/ggml_target' 5", bin_dir()), 0);
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' record --ggml --step ggml_graph_compute --outputs trace -o '%s/r' -- "
                           "'%s/../tests/ggml_target' 5 2>/dev/null",
                           bin_dir(), dir, bin_dir()),
              0);
    CHECK_STR(out, plain);
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report --json --row-limit 0 '%s'/r/trace-step-*.json", bin_dir(), dir),
              0);
    CHECK_CONTAINS(out, "\"name\": \"ggml::MUL_MAT\"");
    const char *mm = out ? strstr(out, "\"name\": \"ggml::MUL_MAT\"") : NULL;
    CHECK(mm && strstr(mm, "\"calls\": 5,")); /* one a compute */
    const char *steps = out ? strstr(out, "\"name\": \"ProfilerStep*\"") : NULL;
    CHECK(steps && strstr(steps, "\"calls\": 6,")); /* step 0, then one a compute */
    CHECK_CONTAINS(out, "\"threads\": 2");
    free(out);
    free(plain);
    /* a program without ggml: said, and run as it is */
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --ggml --outputs trace -o '%s/none' -- true", bin_dir(), dir), 0);
    CHECK_CONTAINS(out, "--ggml: the program has no ggml with opprof's CPU hook");
    free(out);
    /* wrappers that exec the ggml program (llama.cpp is benchmarked under
     * taskset): its ops, and no word of a missing ggml (the wrapper had none) */
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' record --ggml --step ggml_graph_compute --outputs trace -o '%s/wrapped' -- "
                           "env OPPROF_TEST_WRAPPED=1 taskset -c 0,1 '%s/../tests/ggml_target' 2 2>&1",
                           bin_dir(), dir, bin_dir()),
              0);
    CHECK_CONTAINS(out, "ggml_target: 2 computes");
    CHECK(out && !strstr(out, "no ggml with opprof's CPU hook"));
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report --json '%s'/wrapped/trace-step-*.json", bin_dir(), dir), 0);
    mm = out ? strstr(out, "\"name\": \"ggml::MUL_MAT\"") : NULL;
    CHECK(mm && strstr(mm, "\"calls\": 2,"));
    free(out);
    /* a wrapper that forks: the child it runs has the profile, its ops recorded; nothing is said of a ggml
     * that the wrapper lacks */
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' record --ggml --outputs trace -o '%s/forked' -- "
                           "sh -c \"'%s/../tests/ggml_target' 1; true\" 2>&1",
                           bin_dir(), dir, bin_dir()),
              0);
    CHECK_CONTAINS(out, "ggml_target, which sh ran in a child process");
    CHECK(out && !strstr(out, "no ggml with opprof's CPU hook"));
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report --row-limit 0 '%s/forked/trace-step-0.json'", bin_dir(), dir), 0);
    CHECK_CONTAINS(out, "ggml::MUL_MAT");
    free(out);
    run_commandf(&out, "rm -rf '%s'", dir);
    free(out);
}
#endif

int main(int argc, char **argv) { return check_main(argc, argv, "test_ggml"); }
