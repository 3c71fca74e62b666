/*
 * engine.c - a small multi-threaded inference engine, instrumented the way an
 * engineer instruments their own: a scheduler thread hands requests to two
 * workers; each request is a flow from the scheduler's range to the worker's
 * and an async range from arrival to completion; the workers run a custom
 * operator (my::int8_gemm) that states its FLOPs and bytes, mark each token
 * emitted, and count the KV cache's bytes.
 *
 *   build/bin/engine OUTDIR      writes OUTDIR/engine.json (Perfetto) and
 *                                OUTDIR/engine.html, prints the table with FLOPs
 *
 * OUTDIR must not exist. Exit status: 0, 1 on failure, 64 on bad usage.
 */
#define _GNU_SOURCE
#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { REQUESTS = 6, TOKENS = 4, WORKERS = 2, M = 8, N = 64, K = 64 };

typedef struct queue {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    int ids[REQUESTS];
    int head, tail;
    bool closed;
} queue;

static queue g_queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, false};
static int64_t g_kv_cache_bytes; /* atomic */

/* C[M][N] = A[M][K] x B[K][N] in int8, accumulated in int32. */
static void int8_gemm(const int8_t *a, const int8_t *b, int32_t *c) {
    OPPROF_OP_SCOPE("my::int8_gemm");
    opprof_range_flops(2LL * M * N * K);
    opprof_range_bytes((int64_t)M * K + (int64_t)K * N + (int64_t)M * N * 4);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int32_t acc = 0;
            for (int k = 0; k < K; k++) acc += a[i * K + k] * b[k * N + j];
            c[i * N + j] = acc;
        }
}

static void serve(int id, const int8_t *weights) {
    OPPROF_SCOPE("serve");
    opprof_range_arg_int("request", id);
    opprof_range_arg_str("model", "toy-int8");
    opprof_flow_end((uint64_t)id); /* the arrow from the scheduler's range ends here */
    int8_t activations[M * K];
    int32_t out[M * N];
    for (int i = 0; i < M * K; i++) activations[i] = (int8_t)((i * 7 + id) % 11 - 5);
    for (int t = 0; t < TOKENS; t++) {
        {
            OPPROF_SCOPE("decode_step");
            opprof_range_arg_int("token", t);
            opprof_range_arg_double("temperature", 0.7);
            int8_gemm(activations, weights, out);
            activations[t] = (int8_t)(out[t] & 0x7f);
        }
        OPPROF_INSTANT("token");
        int64_t kv = __atomic_add_fetch(&g_kv_cache_bytes, 2 * K * 2, __ATOMIC_RELAXED);
        OPPROF_COUNTER("kv_cache_bytes", kv);
    }
    opprof_async_end("request", (uint64_t)id);
}

static void *worker(void *arg) {
    const int8_t *weights = arg;
    opprof_thread_set_name("worker");
    for (;;) {
        pthread_mutex_lock(&g_queue.lock);
        while (g_queue.head == g_queue.tail && !g_queue.closed) pthread_cond_wait(&g_queue.ready, &g_queue.lock);
        if (g_queue.head == g_queue.tail) {
            pthread_mutex_unlock(&g_queue.lock);
            return NULL;
        }
        int id = g_queue.ids[g_queue.head++];
        pthread_mutex_unlock(&g_queue.lock);
        serve(id, weights);
    }
}

static void *scheduler(void *arg) {
    (void)arg;
    opprof_thread_set_name("scheduler");
    for (int id = 1; id <= REQUESTS; id++) {
        OPPROF_SCOPE("schedule");
        opprof_range_arg_int("request", id);
        opprof_async_begin("request", (uint64_t)id);
        opprof_flow_begin((uint64_t)id); /* ... to the worker that serves it */
        OPPROF_INSTANT_PROCESS("request arrived");
        pthread_mutex_lock(&g_queue.lock);
        g_queue.ids[g_queue.tail++] = id;
        pthread_cond_signal(&g_queue.ready);
        pthread_mutex_unlock(&g_queue.lock);
    }
    pthread_mutex_lock(&g_queue.lock);
    g_queue.closed = true;
    pthread_cond_broadcast(&g_queue.ready);
    pthread_mutex_unlock(&g_queue.lock);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: engine OUTDIR\n");
        return 64;
    }
    const char *dir = argv[1];
    if (mkdir(dir, 0777) != 0) {
        perror(dir);
        return 1;
    }
    static int8_t weights[K * N];
    for (int i = 0; i < K * N; i++) weights[i] = (int8_t)((i * 13) % 9 - 4);

    opprof_config cfg = opprof_config_default(); /* no callback: the session keeps the capture */
    cfg.record_steps = false;
    opprof_session *s;
    int rc = opprof_session_start(&s, &cfg);
    if (rc) {
        fprintf(stderr, "engine: %s\n", opprof_strerror(rc));
        return 1;
    }
    pthread_t sched, workers[WORKERS];
    for (int w = 0; w < WORKERS; w++) pthread_create(&workers[w], NULL, worker, weights);
    pthread_create(&sched, NULL, scheduler, NULL);
    pthread_join(sched, NULL);
    for (int w = 0; w < WORKERS; w++) pthread_join(workers[w], NULL);
    opprof_session_stop(s);

    opprof_capture *cap = NULL;
    rc = opprof_session_take_capture(s, &cap);
    char path[4096], *table = NULL;
    opprof_averages *avg = NULL;
    if (!rc && !cap) rc = OPPROF_EINVAL;
    if (!rc) {
        snprintf(path, sizeof path, "%s/engine.json", dir);
        rc = opprof_capture_chrome_write(cap, path);
    }
    if (!rc) {
        snprintf(path, sizeof path, "%s/engine.html", dir);
        rc = opprof_capture_html_write(cap, path);
    }
    opprof_table_options topt = {.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = 12, .flops = true};
    if (!rc) rc = opprof_capture_averages(cap, &avg);
    if (!rc) rc = opprof_averages_table_to_string(avg, &topt, &table);
    if (!rc) fputs(table, stdout);
    if (rc) fprintf(stderr, "engine: %s: %s\n", path, opprof_strerror(rc));
    opprof_free(table);
    opprof_averages_free(avg);
    opprof_capture_free(cap);
    opprof_session_free(s);
    return rc ? 1 : 0;
}
