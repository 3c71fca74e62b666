/* parallel.h - profile_cpu --parallel data|tensor: the guide's model across
 * MPI ranks (parallel.c). Without MPI in the build, only the parse and
 * parallel_built() exist, and --parallel is refused. */
#ifndef PROFILE_CPU_PARALLEL_H
#define PROFILE_CPU_PARALLEL_H

#include <nn/nn.h>
#include <opprof/opprof.h>
#include <stdbool.h>

typedef enum parallel_mode { PARALLEL_OFF, PARALLEL_DATA, PARALLEL_TENSOR } parallel_mode;

/** "data" or "tensor"; -1 for another word. */
int parallel_mode_parse(const char *word, parallel_mode *mode);
/** Whether this profile_cpu was built with MPI. */
bool parallel_built(void);

/** The whole run: MPI_Init, OUTDIR/rank-K filled by profile(rank_outdir) on
 *  each rank (whole or not at all, as a single run's OUTDIR), then rank 0
 *  merges the ranks' last captures into OUTDIR/<the same name> and writes
 *  OUTDIR/ranks.txt (opprof report --ranks). OUTDIR appears whole or not at
 *  all, also when a rank fails or is killed. Returns the exit status. */
int parallel_main(parallel_mode mode, int *argc, char ***argv, const char *outdir,
                  int (*profile)(const char *rank_outdir));
/** From profile_cpu's SIGINT/SIGTERM handler (async-signal-safe): in a
 *  parallel run, the whole OUTDIR.tmp goes, even while MPI waits. */
void parallel_on_signal(int sig);

/* During profile(): with no parallel run they do what a single process does. */

/** This rank's facts for opprof_config.rank, or NULL. */
const opprof_rank *parallel_rank(void);
/** The rank's share: data: its rows of *inputs; tensor: its halves of the
 *  model (the first Linear split by outputs, the second by inputs). */
int parallel_share(nn_module **model, nn_tensor **inputs);
/** The forward pass; tensor: + mpi::allreduce of the partial outputs. */
int parallel_forward(nn_module *model, const nn_tensor *x, nn_tensor **y);
/** The whole batch's output for saving: data: *whole is a new tensor on rank
 *  0, gathered from the ranks (mpi::gather); otherwise *whole is NULL: y is
 *  the whole output (tensor: every rank has it after the allreduce). */
int parallel_whole_output(const nn_tensor *y, nn_tensor **whole);
/** Rank 0 (or no parallel run): the process that writes shared files. */
bool parallel_is_root(void);

#endif
