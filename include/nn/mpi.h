/*
 * nn/mpi.h - nn across MPI ranks (libnn_mpi; pkg-config nn_mpi, CMake
 * opprof::nn_mpi). Built when CMake finds MPI (Debian: openmpi-bin,
 * libopenmpi-dev).
 *
 * Data parallel: each rank runs the whole model on its own rows of the batch
 * (nn_mpi_rows), and the outputs are gathered (nn_mpi_gather_rows).
 * Tensor parallel: a Linear is split by its outputs and the next one by its
 * inputs (nn_mpi_shard_linear); each rank computes a partial output and
 * nn_mpi_allreduce_sum adds them up.
 *
 * Communication calls are operators in the capture ("mpi::allreduce",
 * "mpi::gather"), with their arguments: bytes, world_size, peers.
 * nn_mpi_rank measures the rank's clock offset to rank 0 for opprof_config's
 * `rank`, so that `opprof merge` can align the ranks' timelines.
 *
 * Every function is collective over `comm` unless it says otherwise, and
 * returns 0 or a negative NN_E... code (NN_EMPI: an MPI call failed).
 */
#ifndef NN_MPI_H
#define NN_MPI_H

#include <mpi.h>
#include <nn/nn.h>
#include <opprof/opprof.h>

#ifdef __cplusplus
extern "C" {
#endif

/** This process's rank facts for opprof_config.rank: backend "mpi", rank,
 *  world size, and the offset of this rank's wall clock (CLOCK_REALTIME, the
 *  clock of a capture's base time) to rank 0's, from the best (shortest) of
 *  `rounds` ping-pong round trips with rank 0; the uncertainty is half that
 *  round trip. rounds < 1: NN_EINVAL. */
NN_API int nn_mpi_rank(MPI_Comm comm, int rounds, opprof_rank *out);

/** t = the sum of t over the ranks, in place, on every rank ("mpi::allreduce";
 *  t contiguous). */
NN_API int nn_mpi_allreduce_sum(nn_tensor *t, MPI_Comm comm);

/** This rank's rows of a [batch, ...] tensor: rows [r*B/N, (r+1)*B/N) of x,
 *  as a view (aten::as_strided; not collective). */
NN_API int nn_mpi_rows(const nn_tensor *x, int rank, int world_size, nn_tensor **out);

/** Every rank's `part` ([rows_r, cols], contiguous, same cols) stacked in rank
 *  order on `root` ("mpi::gather"): *out is the root's new tensor, NULL on
 *  the other ranks. */
NN_API int nn_mpi_gather_rows(const nn_tensor *part, int root, MPI_Comm comm, nn_tensor **out);

typedef enum nn_mpi_split {
    NN_MPI_SPLIT_OUTPUTS, /* rows of W and of the bias: outputs [o*part/parts ...) */
    NN_MPI_SPLIT_INPUTS   /* columns of W: the part's inputs; the bias on part 0 only */
} nn_mpi_split;

/** Part `part` of `parts` of a Linear (not collective): a new Linear (the
 *  caller's) with the weights of that share. The parts of an input split
 *  sum to the whole Linear's output. NN_EINVAL: not a Linear, part outside
 *  [0, parts), or more parts than features. */
NN_API int nn_mpi_shard_linear(nn_module *linear, nn_mpi_split split, int part, int parts, nn_module **out);

#ifdef __cplusplus
}
#endif
#endif /* NN_MPI_H */
