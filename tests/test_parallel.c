/* test_parallel.c - operators computed by a thread pool (opprof_range_part_of)
 * and ranges known after the fact (opprof_range_begin_at/_end_at): a run of
 * parts is one call with its wall time, threads, imbalance and wait, the same
 * from a trace as from a live capture. */
#include "check.h"
#include "rows.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Run 1: parts [0, 100) on thread 1 and [10, 70) on thread 2 (span 100, sum
 * 160, longest 100, mean 80); run 2: [200, 260) on both (span 60, sum 120).
 * Only the first part of run 1 has input shapes. */
static const char TRACE[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"name\":\"pool::gemm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,"
    "\"args\":{\"part_of\":1,\"Input Dims\":[[4,8]],\"Input type\":[\"q8_0\"]}},"
    "{\"ph\":\"X\",\"name\":\"pool::gemm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":60,\"args\":{\"part_of\":1}},"
    "{\"ph\":\"X\",\"name\":\"pool::gemm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":60,\"args\":{\"part_of\":2}},"
    "{\"ph\":\"X\",\"name\":\"pool::gemm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":2,\"ts\":200,\"dur\":60,\"args\":{\"part_of\":2}},"
    "{\"ph\":\"X\",\"name\":\"other\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":300,\"dur\":5}"
    "]}";

static void check_runs(const opprof_averages *avg) {
    const opprof_average_row *g = row(avg, "pool::gemm"), *o = row(avg, "other");
    CHECK(g && o);
    if (!g || !o) return;
    CHECK_INT(g->calls, 2);
    CHECK_INT(g->total_ns, 280000);
    CHECK_INT(g->wall_ns, 160000);
    CHECK_INT(g->wait_ns, 40000);
    CHECK_INT(g->threads, 2);
    CHECK(fabs(g->imbalance - 160.0 / 140.0) < 1e-9);
    CHECK_INT(o->calls, 1);
    CHECK_INT(o->wall_ns, 5000);
    CHECK_INT(o->threads, 1);
    CHECK(o->imbalance == 0);
}

TEST_CASE(runs_from_a_trace) {
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(TRACE, sizeof TRACE - 1, NULL, &c, NULL), 0);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    check_runs(avg);
    opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME};
    char *text = NULL, *json = NULL;
    CHECK_INT(opprof_averages_table_to_string(avg, &o, &text), 0);
    CHECK_CONTAINS(text, "Wall total");
    CHECK_CONTAINS(text, "Imbalance");
    CHECK_CONTAINS(text, "1.14x");
    CHECK_INT(opprof_averages_json_to_string(avg, &o, &json), 0);
    CHECK_CONTAINS(json, "\"wall_us\": 160");
    CHECK_CONTAINS(json, "\"wait_us\": 40");
    CHECK_CONTAINS(json, "\"threads\": 2");
    opprof_free(text);
    opprof_free(json);
    opprof_averages_free(avg);

    /* by input shape: every part joins the run's described part */
    opprof_averages_options by_shape = {.group_by_input_shape = true};
    CHECK_INT(opprof_capture_averages_ex(c, &by_shape, &avg), 0);
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    int64_t gemm_calls = 0, described = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].key, "pool::gemm") == 0) {
            gemm_calls += rows[i].calls;
            if (strcmp(rows[i].input_shapes, "[[4, 8]]") == 0) described = rows[i].calls;
        }
    CHECK_INT(gemm_calls, 2);
    CHECK_INT(described, 1);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

/* Without parts, no wall-time column. */
TEST_CASE(no_parts_no_columns) {
    static const char plain[] =
        "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10}]}";
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(plain, sizeof plain - 1, NULL, &c, NULL), 0);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    char *text = NULL;
    opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME};
    CHECK_INT(opprof_averages_table_to_string(avg, &o, &text), 0);
    CHECK(text && !strstr(text, "Wall total"));
    opprof_free(text);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

/* ggml's nodes as llama.cpp names them: run 1's name is on its second part
 * (the thread that described the node), run 2's has ggml's view suffixes;
 * "result_output" names no layer, "cache_k_l1" layer 1 by its "_lN". */
static const char LAYERS[] =
    "{\"opprof_version\": \"0.4.0\", \"traceEvents\":["
    "{\"ph\":\"X\",\"name\":\"ggml::MUL_MAT\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,\"args\":{\"part_of\":1}},"
    "{\"ph\":\"X\",\"name\":\"ggml::MUL_MAT\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":60,"
    "\"args\":{\"part_of\":1,\"name\":\"ffn_gate-0\"}},"
    "{\"ph\":\"X\",\"name\":\"ggml::MUL_MAT\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":60,"
    "\"args\":{\"part_of\":2,\"name\":\"Kcur-1 (view) (permuted)\"}},"
    "{\"ph\":\"X\",\"name\":\"ggml::MUL_MAT\",\"pid\":1,\"tid\":2,\"ts\":200,\"dur\":60,\"args\":{\"part_of\":2}},"
    "{\"ph\":\"X\",\"name\":\"ggml::MUL_MAT\",\"pid\":1,\"tid\":1,\"ts\":300,\"dur\":20,\"args\":{\"name\":\"result_output\"}},"
    "{\"ph\":\"X\",\"name\":\"ggml::CPY\",\"pid\":1,\"tid\":1,\"ts\":400,\"dur\":5,\"args\":{\"name\":\"cache_k_l1 (view)\"}}"
    "]}";

static const opprof_average_row *layer_row(const opprof_averages *avg, const char *name, int32_t layer) {
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].key, name) == 0 && rows[i].layer == layer) return &rows[i];
    return NULL;
}

TEST_CASE(tensor_names_give_layers) {
    CHECK_INT(opprof_tensor_name_layer("ffn_gate-7"), 7);
    CHECK_INT(opprof_tensor_name_layer("Kcur-12 (view) (permuted)"), 12);
    CHECK_INT(opprof_tensor_name_layer("cache_k_l3"), 3);
    CHECK_INT(opprof_tensor_name_layer("cache_v_l30 (view)"), 30);
    CHECK_INT(opprof_tensor_name_layer("inp_embd"), -1);
    CHECK_INT(opprof_tensor_name_layer("node_12"), -1); /* ggml's own name of an unnamed node */
    CHECK_INT(opprof_tensor_name_layer("-7"), -1);      /* a number, no tensor */
    CHECK_INT(opprof_tensor_name_layer("_l3"), -1);
    CHECK_INT(opprof_tensor_name_layer("x-12345678"), -1); /* no model has so many layers: a hash, a size */
    CHECK_INT(opprof_tensor_name_layer(""), -1);
    CHECK_INT(opprof_tensor_name_layer(NULL), -1);
}

/* By layer: a run's parts are one call of the layer any part names; the
 * layers' rows add up to the row by name; rows of no layer say so. */
TEST_CASE(rows_by_layer) {
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(LAYERS, sizeof LAYERS - 1, NULL, &c, NULL), 0);
    opprof_averages_options by_layer = {.group_by_layer = true};
    opprof_averages *avg = NULL, *plain = NULL;
    CHECK_INT(opprof_capture_averages_ex(c, &by_layer, &avg), 0);
    CHECK_INT(opprof_capture_averages(c, &plain), 0);
    const opprof_average_row *l0 = layer_row(avg, "ggml::MUL_MAT", 0), *l1 = layer_row(avg, "ggml::MUL_MAT", 1);
    const opprof_average_row *none = layer_row(avg, "ggml::MUL_MAT", -1), *cpy = layer_row(avg, "ggml::CPY", 1);
    CHECK(l0 && l1 && none && cpy);
    if (l0 && l1 && none && cpy) {
        CHECK_INT(l0->calls, 1);
        CHECK_INT(l0->total_ns, 160000);
        CHECK_INT(l0->wall_ns, 100000);
        CHECK_INT(l0->threads, 2);
        CHECK_INT(l1->calls, 1);
        CHECK_INT(l1->total_ns, 120000);
        CHECK_INT(none->calls, 1);
        CHECK_INT(none->total_ns, 20000);
        CHECK_INT(cpy->total_ns, 5000);
        const opprof_average_row *all = row(plain, "ggml::MUL_MAT");
        CHECK(all && all->calls == 3 && all->total_ns == l0->total_ns + l1->total_ns + none->total_ns);
        CHECK(all && all->layer == -1);
    }
    opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME};
    char *text = NULL, *json = NULL;
    CHECK_INT(opprof_averages_table_to_string(avg, &o, &text), 0);
    CHECK_CONTAINS(text, "Layer");
    CHECK_INT(opprof_averages_json_to_string(avg, &o, &json), 0);
    CHECK_CONTAINS(json, "\"name\": \"ggml::MUL_MAT\", \"layer\": 0,");
    CHECK_CONTAINS(json, "\"name\": \"ggml::MUL_MAT\", \"layer\": null,");
    opprof_free(text);
    opprof_free(json);
    /* without the grouping, no Layer column */
    CHECK_INT(opprof_averages_table_to_string(plain, &o, &text), 0);
    CHECK(text && !strstr(text, "Layer"));
    opprof_free(text);
    opprof_averages_free(avg);
    opprof_averages_free(plain);

    /* the names are the operators' arguments, kept through a trace written and read back */
    char path[] = "/tmp/test_parallel_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_INT(opprof_capture_chrome_write(c, path), 0);
    opprof_capture *back = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &back, NULL), 0);
    CHECK_INT(opprof_capture_averages_ex(back, &by_layer, &avg), 0);
    l0 = layer_row(avg, "ggml::MUL_MAT", 0);
    CHECK(l0 && l0->total_ns == 160000 && l0->threads == 2);
    CHECK(layer_row(avg, "ggml::CPY", 1) != NULL);
    unlink(path);
    opprof_averages_free(avg);
    opprof_capture_free(back);
    opprof_capture_free(c);
}

static opprof_capture *record(void (*body)(void)) {
    opprof_config cfg = opprof_config_default();
    cfg.record_steps = false;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    body();
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    opprof_session_free(s);
    return c;
}

static const opprof_event *event_named(const opprof_capture *c, const char *name, size_t *index) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(opprof_capture_name(c, ev[i].name), name) == 0) {
            if (index) *index = i;
            return &ev[i];
        }
    return NULL;
}

/* A range begun after its start: it encloses what ran since, and takes its arguments. */
static void late_range(void) {
    opprof_time t0 = opprof_now();
    { OPPROF_SCOPE("inside"); }
    opprof_range r = opprof_range_begin_at(OPPROF_SRCLOC("late", OPPROF_KIND_CPU_OP), t0);
    CHECK(r != 0);
    opprof_range_flops(1234);
    opprof_range_end_at(r, opprof_now());
    /* an end before its begin ends at the begin; a start before the window at its opening */
    opprof_time before = opprof_now();
    opprof_range z = opprof_range_begin_at(OPPROF_SRCLOC("zero", OPPROF_KIND_CPU_OP), opprof_now());
    opprof_range_end_at(z, before);
    opprof_range e = opprof_range_begin_at(OPPROF_SRCLOC("early", OPPROF_KIND_CPU_OP), 1);
    opprof_range_end_at(e, opprof_now());
    opprof_range_end_at(0, opprof_now()); /* nothing */
    /* an end to come ends now: what the thread records next starts after it */
    opprof_range f = opprof_range_begin_at(OPPROF_SRCLOC("future", OPPROF_KIND_CPU_OP), opprof_now());
    opprof_range_end_at(f, opprof_now() + (1ull << 40));
    { OPPROF_SCOPE("after"); }
}

TEST_CASE(ranges_after_the_fact) {
    opprof_capture *c = record(late_range);
    size_t late_i = 0;
    const opprof_event *late = event_named(c, "late", &late_i), *inside = event_named(c, "inside", NULL);
    const opprof_event *zero = event_named(c, "zero", NULL), *early = event_named(c, "early", NULL);
    CHECK(late && inside && zero && early);
    if (late && inside && zero && early) {
        CHECK(late->start_ns <= inside->start_ns);
        CHECK(late->start_ns + late->duration_ns >= inside->start_ns + inside->duration_ns);
        CHECK_INT(inside->parent, (int64_t)late_i);
        CHECK_INT(zero->duration_ns, 0);
        CHECK(early->start_ns >= 0);
    }
    const opprof_event *future = event_named(c, "future", NULL), *after = event_named(c, "after", NULL);
    CHECK(future && after);
    if (future && after) CHECK(future->start_ns + future->duration_ns <= after->start_ns);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    const opprof_average_row *r = row(avg, "late");
    CHECK(r && r->flops == 1234);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

static pthread_barrier_t g_start;

static void *part(void *arg) {
    pthread_barrier_wait(&g_start); /* both parts are recorded in the window */
    OPPROF_OP_SCOPE("pool::op");
    opprof_range_part_of((uint64_t)(uintptr_t)arg);
    return NULL;
}

static void two_runs_on_two_threads(void) {
    for (uintptr_t id = 1; id <= 2; id++) {
        pthread_t t[2];
        pthread_barrier_init(&g_start, NULL, 2);
        for (int i = 0; i < 2; i++) CHECK_INT(pthread_create(&t[i], NULL, part, (void *)id), 0);
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&g_start);
    }
}

TEST_CASE(parts_on_threads) {
    opprof_capture *c = record(two_runs_on_two_threads);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    const opprof_average_row *r = row(avg, "pool::op");
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->calls, 2);
        CHECK_INT(r->threads, 2);
        CHECK(r->wall_ns >= r->total_ns / 2); /* a run's span is at least its longest part */
        CHECK_INT(r->wait_ns, 2 * r->wall_ns - r->total_ns);
    }
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_parallel"); }
