/* parallel.c - profile_cpu --parallel data|tensor (see parallel.h).
 *
 * OUTDIR appears whole or not at all across the ranks: rank 0 makes
 * OUTDIR.tmp.XXXXXX and tells the others; each rank writes its own capture
 * into it as rank-K (whole or not at all, as profile_cpu always does); when
 * every rank has succeeded, rank 0 merges and renames. A signal on any rank
 * (mpirun sends SIGTERM to the others when one dies) removes the whole
 * temporary directory from a watcher thread, even while the main thread
 * waits inside MPI, and ends the process. */
#define _GNU_SOURCE
#include "parallel.h"

#include "atomic_dir.h"

#include <stdio.h>
#include <string.h>

int parallel_mode_parse(const char *word, parallel_mode *mode) {
    if (!strcmp(word, "data"))
        *mode = PARALLEL_DATA;
    else if (!strcmp(word, "tensor"))
        *mode = PARALLEL_TENSOR;
    else
        return -1;
    return 0;
}

#ifndef PROFILE_CPU_MPI
bool parallel_built(void) { return false; }
int parallel_main(parallel_mode mode, int *argc, char ***argv, const char *outdir,
                  int (*profile)(const char *rank_outdir)) {
    (void)mode, (void)argc, (void)argv, (void)outdir, (void)profile;
    return 1;
}
void parallel_on_signal(int sig) { (void)sig; }
const opprof_rank *parallel_rank(void) { return NULL; }
int parallel_share(nn_module **model, nn_tensor **inputs) { return (void)model, (void)inputs, 0; }
int parallel_forward(nn_module *model, const nn_tensor *x, nn_tensor **y) { return nn_module_forward(model, x, y); }
int parallel_whole_output(const nn_tensor *y, nn_tensor **whole) { return (void)y, *whole = NULL, 0; }
bool parallel_is_root(void) { return true; }
#else
#include <nn/mpi.h>
#include <opprof/capture.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static struct {
    parallel_mode mode;
    int rank, size;
    opprof_rank facts;
    char workdir[4096];
    int signal_pipe[2];
} g = {.signal_pipe = {-1, -1}};

bool parallel_built(void) { return true; }
bool parallel_is_root(void) { return g.mode == PARALLEL_OFF || g.rank == 0; }
const opprof_rank *parallel_rank(void) { return g.mode == PARALLEL_OFF ? NULL : &g.facts; }

void parallel_on_signal(int sig) {
    if (g.signal_pipe[1] >= 0) {
        unsigned char b = (unsigned char)sig;
        ssize_t w = write(g.signal_pipe[1], &b, 1);
        (void)w;
    }
}

static void *watch_signals(void *arg) {
    (void)arg;
    unsigned char sig;
    if (read(g.signal_pipe[0], &sig, 1) != 1) return NULL;
    outdir_remove(g.workdir);
    fprintf(stderr, "profile_cpu: rank %d: interrupted by %s: nothing was created\n", g.rank,
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    _exit(128 + sig);
}

/* Rank 0, every rank done: OUTDIR/<name> merged from the ranks' last
 * captures, OUTDIR/ranks.txt comparing them; then the rename. */
static int finish(const char *outdir) {
    char(*paths)[4096] = calloc((size_t)g.size, sizeof *paths);
    const char **list = calloc((size_t)g.size, sizeof *list);
    opprof_capture **caps = calloc((size_t)g.size, sizeof *caps);
    int rc = paths && list && caps ? 0 : OPPROF_ENOMEM;
    for (int k = 0; k < g.size && !rc; k++) {
        rc = opprof_ranks_trace_path(g.workdir, k, paths[k], sizeof paths[k]);
        list[k] = paths[k];
    }
    opprof_read_error err = {0};
    char merged[8192], report[8192];
    if (!rc) {
        snprintf(merged, sizeof merged, "%s/%s", g.workdir, strrchr(paths[0], '/') + 1);
        rc = opprof_merge_traces(list, (size_t)g.size, merged, NULL, &err);
    }
    for (int k = 0; k < g.size && !rc; k++) rc = opprof_capture_read(paths[k], NULL, &caps[k], &err);
    opprof_ranks *ranks = NULL;
    char *text = NULL;
    if (!rc) rc = opprof_ranks_analyze(caps, (size_t)g.size, &ranks);
    if (!rc) rc = opprof_ranks_table_to_string(ranks, &text);
    if (!rc) {
        snprintf(report, sizeof report, "%s/ranks.txt", g.workdir);
        FILE *f = fopen(report, "w");
        if (!f || fputs(text, f) < 0) rc = -errno;
        if (f && fclose(f) != 0 && !rc) rc = -errno;
    }
    if (rc) fprintf(stderr, "profile_cpu: merging the ranks: %s\n", err.message[0] ? err.message : opprof_strerror(rc));
    opprof_free(text);
    opprof_ranks_free(ranks);
    for (int k = 0; caps && k < g.size; k++) opprof_capture_free(caps[k]);
    free(caps);
    free(list);
    free(paths);
    return rc ? 1 : outdir_publish(g.workdir, outdir);
}

static int start_watcher(void) {
    pthread_t t;
    if (pipe2(g.signal_pipe, O_CLOEXEC) != 0) return -1;
    if (pthread_create(&t, NULL, watch_signals, NULL) != 0) return -1;
    pthread_detach(t);
    return 0;
}

int parallel_main(parallel_mode mode, int *argc, char ***argv, const char *outdir,
                  int (*profile)(const char *rank_outdir)) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "profile_cpu: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.size);
    g.mode = mode;
    int mine = nn_mpi_rank(MPI_COMM_WORLD, 100, &g.facts) ? 1 : 0, status; /* the clock offsets first */
    if (mine) fprintf(stderr, "profile_cpu: rank %d: measuring the clock offset failed\n", g.rank);
    MPI_Allreduce(&mine, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g.rank == 0 && !status) status = outdir_begin(outdir, g.workdir, sizeof g.workdir);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(g.workdir, sizeof g.workdir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!status && start_watcher() != 0) status = 1;
    int worst = status;
    if (!status) {
        char rank_dir[4200];
        snprintf(rank_dir, sizeof rank_dir, "%s/rank-%d", g.workdir, g.rank);
        int mine_status = profile(rank_dir);
        MPI_Allreduce(&mine_status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (g.rank == 0 && worst == 0) worst = finish(outdir);
        if (g.rank == 0 && worst != 0) outdir_remove(g.workdir);
    }
    MPI_Bcast(&worst, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (g.rank == 0 && worst == 0) printf("profile_cpu: %d ranks' captures written to %s/\n", g.size, outdir);
    MPI_Finalize();
    return worst;
}

int parallel_share(nn_module **model, nn_tensor **inputs) {
    if (g.mode == PARALLEL_DATA) {
        nn_tensor *rows;
        int rc = nn_mpi_rows(*inputs, g.rank, g.size, &rows);
        if (rc) return rc;
        nn_tensor *mine;
        rc = nn_contiguous(rows, &mine);
        nn_tensor_free(rows);
        if (rc) return rc;
        nn_tensor_free(*inputs);
        *inputs = mine;
        return 0;
    }
    if (g.mode != PARALLEL_TENSOR) return 0;
    nn_module *first, *second, *relu = NULL, *seq;
    int rc = nn_mpi_shard_linear(nn_module_child(*model, 0), NN_MPI_SPLIT_OUTPUTS, g.rank, g.size, &first);
    if (rc) return rc;
    rc = nn_mpi_shard_linear(nn_module_child(*model, 2), NN_MPI_SPLIT_INPUTS, g.rank, g.size, &second);
    if (!rc) rc = nn_relu_new(&relu);
    if (!rc) rc = nn_sequential_new(&seq, (nn_module *[]){first, relu, second}, 3);
    if (rc) {
        nn_module_free(first);
        nn_module_free(second);
        nn_module_free(relu);
        return rc;
    }
    nn_module_free(*model);
    *model = seq;
    return 0;
}

int parallel_forward(nn_module *model, const nn_tensor *x, nn_tensor **y) {
    int rc = nn_module_forward(model, x, y);
    if (rc || g.mode != PARALLEL_TENSOR) return rc;
    rc = nn_mpi_allreduce_sum(*y, MPI_COMM_WORLD);
    if (rc) {
        nn_tensor_free(*y);
        *y = NULL;
    }
    return rc;
}

int parallel_whole_output(const nn_tensor *y, nn_tensor **whole) {
    *whole = NULL;
    if (g.mode != PARALLEL_DATA) return 0;
    return nn_mpi_gather_rows(y, 0, MPI_COMM_WORLD, whole);
}
#endif
