/* mpi.c - nn across MPI ranks: the clock offset to rank 0, the collectives
 * as operators of the capture, data and tensor parallel splits. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <nn/mpi.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

enum { TAG_PING = 7101, TAG_RESULT = 7102 };

/* Rank 0 and `peer`: rank 0 sends its time, the peer answers with its own;
 * offset = peer's time - the middle of the round trip. */
static int ping_pong(MPI_Comm comm, int peer, int rounds, int64_t result[2]) {
    int64_t best_rtt = INT64_MAX, offset = 0, t;
    for (int i = 0; i < rounds; i++) {
        int64_t t0 = realtime_ns();
        if (MPI_Send(&t0, 1, MPI_INT64_T, peer, TAG_PING, comm) != MPI_SUCCESS ||
            MPI_Recv(&t, 1, MPI_INT64_T, peer, TAG_PING, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return NN_EMPI;
        int64_t t1 = realtime_ns();
        if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            offset = t - (t0 + (t1 - t0) / 2);
        }
    }
    result[0] = offset;
    result[1] = best_rtt / 2 + 1; /* +1: the clock's own nanosecond */
    return MPI_Send(result, 2, MPI_INT64_T, peer, TAG_RESULT, comm) == MPI_SUCCESS ? 0 : NN_EMPI;
}

static int answer_pings(MPI_Comm comm, int rounds, int64_t result[2]) {
    for (int i = 0; i < rounds; i++) {
        int64_t t;
        if (MPI_Recv(&t, 1, MPI_INT64_T, 0, TAG_PING, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) return NN_EMPI;
        t = realtime_ns();
        if (MPI_Send(&t, 1, MPI_INT64_T, 0, TAG_PING, comm) != MPI_SUCCESS) return NN_EMPI;
    }
    return MPI_Recv(result, 2, MPI_INT64_T, 0, TAG_RESULT, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : NN_EMPI;
}

int nn_mpi_rank(MPI_Comm comm, int rounds, opprof_rank *out) {
    if (!out || rounds < 1) return NN_EINVAL;
    memset(out, 0, sizeof *out);
    int rank, size;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) return NN_EMPI;
    int64_t result[2] = {0, 0};
    int rc = 0;
    if (rank == 0)
        for (int peer = 1; peer < size && !rc; peer++) rc = ping_pong(comm, peer, rounds, result);
    else
        rc = answer_pings(comm, rounds, result);
    if (rc) return rc;
    strcpy(out->backend, "mpi");
    out->rank = rank;
    out->world_size = size;
    out->clock_offset_ns = rank == 0 ? 0 : result[0];
    out->clock_uncertainty_ns = rank == 0 ? 0 : result[1];
    return 0;
}

/* The arguments every collective carries. */
static void collective_args(int64_t bytes, int size) {
    opprof_range_arg_int("bytes", bytes);
    opprof_range_arg_int("world_size", size);
    opprof_range_arg_int("peers", size - 1);
    opprof_range_bytes(bytes);
}

int nn_mpi_allreduce_sum(nn_tensor *t, MPI_Comm comm) {
    if (!t || !nn_tensor_is_contiguous(t)) return NN_EINVAL;
    int64_t n = nn_tensor_numel(t);
    if (n > INT32_MAX) return NN_EINVAL;
    int size;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS) return NN_EMPI;
    OPPROF_OP_SCOPE("mpi::allreduce");
    collective_args(n * (int64_t)sizeof(float), size);
    return MPI_Allreduce(MPI_IN_PLACE, t->data, (int)n, MPI_FLOAT, MPI_SUM, comm) == MPI_SUCCESS ? 0 : NN_EMPI;
}

int nn_mpi_rows(const nn_tensor *x, int rank, int world_size, nn_tensor **out) {
    if (!out) return NN_EINVAL;
    *out = NULL;
    if (!x || x->ndim < 1 || world_size < 1 || rank < 0 || rank >= world_size) return NN_EINVAL;
    int64_t b = x->shape[0], first = b * rank / world_size, shape[NN_MAX_DIMS];
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
    shape[0] = b * (rank + 1) / world_size - first;
    return nn_as_strided(x, x->ndim, shape, x->strides, first * x->strides[0], out);
}

int nn_mpi_gather_rows(const nn_tensor *part, int root, MPI_Comm comm, nn_tensor **out) {
    if (!out) return NN_EINVAL;
    *out = NULL;
    if (!part || part->ndim != 2 || !nn_tensor_is_contiguous(part)) return NN_EINVAL;
    int rank, size;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) return NN_EMPI;
    OPPROF_OP_SCOPE("mpi::gather");
    int mine = (int)nn_tensor_numel(part), *counts = rank == root ? calloc((size_t)size * 2, sizeof(int)) : NULL;
    if (rank == root && !counts) return NN_ENOMEM;
    int rc = MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, root, comm) == MPI_SUCCESS ? 0 : NN_EMPI;
    int64_t total = 0;
    for (int r = 0; counts && r < size; r++) {
        counts[size + r] = (int)total; /* displacements */
        total += counts[r];
    }
    if (!rc && rank == root)
        rc = nn_tensor_zeros(out, 2, (int64_t[]){total / (part->shape[1] ? part->shape[1] : 1), part->shape[1]});
    collective_args((int64_t)mine * (int64_t)sizeof(float), size);
    /* every rank takes part even when the root failed, or the others would wait forever */
    if (MPI_Gatherv(part->data, mine, MPI_FLOAT, *out ? (*out)->data : NULL, counts, counts ? counts + size : NULL,
                    MPI_FLOAT, root, comm) != MPI_SUCCESS &&
        !rc)
        rc = NN_EMPI;
    free(counts);
    if (rc) {
        nn_tensor_free(*out);
        *out = NULL;
    }
    return rc;
}

int nn_mpi_shard_linear(nn_module *linear, nn_mpi_split split, int part, int parts, nn_module **out) {
    if (!out) return NN_EINVAL;
    *out = NULL;
    nn_tensor *w = linear ? nn_module_parameter(linear, "weight") : NULL;
    nn_tensor *b = linear ? nn_module_parameter(linear, "bias") : NULL;
    if (!w || !b || w->ndim != 2 || parts < 1 || part < 0 || part >= parts) return NN_EINVAL;
    int64_t outs = w->shape[0], ins = w->shape[1];
    int64_t total = split == NN_MPI_SPLIT_OUTPUTS ? outs : ins;
    if (parts > total) return NN_EINVAL;
    int64_t first = total * part / parts, count = total * (part + 1) / parts - first;
    nn_module *m;
    int rc = split == NN_MPI_SPLIT_OUTPUTS ? nn_linear_new(&m, ins, count) : nn_linear_new(&m, count, outs);
    if (rc) return rc;
    nn_tensor *mw = nn_module_parameter(m, "weight"), *mb = nn_module_parameter(m, "bias");
    for (int64_t o = 0; o < mw->shape[0]; o++)
        for (int64_t i = 0; i < mw->shape[1]; i++) {
            int64_t so = split == NN_MPI_SPLIT_OUTPUTS ? first + o : o,
                    si = split == NN_MPI_SPLIT_OUTPUTS ? i : first + i;
            mw->data[o * mw->strides[0] + i * mw->strides[1]] = w->data[so * w->strides[0] + si * w->strides[1]];
        }
    for (int64_t o = 0; o < mb->shape[0]; o++)
        mb->data[o * mb->strides[0]] = split == NN_MPI_SPLIT_OUTPUTS ? b->data[(first + o) * b->strides[0]]
                                       : part == 0                   ? b->data[o * b->strides[0]]
                                                                     : 0.0f;
    rc = nn_module_parameters_changed(m);
    if (rc) {
        nn_module_free(m);
        return rc;
    }
    *out = m;
    return 0;
}
