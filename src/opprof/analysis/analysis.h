/* analysis/analysis.h - the analysis layer: key averages, peak memory,
 * FLOPs, the stack tree, diffs and ranks as numbers, the timer. Above the
 * recording and trace layers; it renders nothing. */
#ifndef OPPROF_ANALYSIS_LAYER_H
#define OPPROF_ANALYSIS_LAYER_H

#include "capture/capture.h"

/* ---- averages (analysis/averages.c), for the rendering layer ---- */
OPPROF__HIDDEN bool opprof__averages_profile_memory(const opprof_averages *avg);
/* FLOPs were recorded (with_flops, or opprof_range_flops/_bytes): their columns are shown. */
OPPROF__HIDDEN bool opprof__averages_flops_recorded(const opprof_averages *avg);
/* Some operator ran as parts on several threads (opprof_range_part_of): the wall-time columns are shown. */
OPPROF__HIDDEN bool opprof__averages_parallel(const opprof_averages *avg);
/* The profiler's own cost estimated in a row's self time: the events nested
 * directly in its events, each recorded at the range cost the capture
 * measured at start (a child's begin and end are paid between the parent's). */
OPPROF__HIDDEN double opprof__averages_profiler_cost_ns(const opprof_averages *avg, const opprof_average_row *row);
OPPROF__HIDDEN double opprof__averages_range_cost_ns(const opprof_averages *avg);
OPPROF__HIDDEN bool opprof__averages_device_memory(const opprof_averages *avg);
/* A row's bytes from its shapes (opprof_bytes of its calls), 0 without a model. */
OPPROF__HIDDEN int64_t opprof__averages_model_bytes(const opprof_averages *avg, const opprof_average_row *row);
/* The bytes a step moves by the rows (stated, else modelled), over the steps
 * (ProfilerStep* calls; no steps: the capture is one): the step's footprint. */
OPPROF__HIDDEN double opprof__averages_step_bytes(const opprof_averages *avg);

/* ---- the roof of a call (analysis/roofline.c), for the roofline and what-if ---- */
/* The level a call's bytes come from: the smallest that holds them; bytes
 * that only the last-level cache holds come from DRAM when the step's
 * footprint (step_bytes) does not fit it either, since everything else the
 * step touches passes through it before they are used again (a decode step's
 * weights, used once a step). */
OPPROF__HIDDEN int opprof__roof_level(const opprof_machine_ceilings *c, double call_bytes, double step_bytes);
/* max(FLOPs / peak, bytes / the bandwidth of their level), ns; *level and
 * *compute_bound say which (either may be NULL). */
OPPROF__HIDDEN double opprof__roof_ns(const opprof_machine_ceilings *c, double flops, double bytes, double call_bytes,
                                      double step_bytes, int *level, bool *compute_bound);
OPPROF__HIDDEN uint64_t opprof__averages_dropped(const opprof_averages *avg);
OPPROF__HIDDEN size_t opprof__averages_warnings(const opprof_averages *avg);
/* The capture's warning number i (copied), or NULL. */
OPPROF__HIDDEN const char *opprof__averages_warning(const opprof_averages *avg, size_t i);
OPPROF__HIDDEN opprof_producer opprof__averages_producer(const opprof_averages *avg);
/* The longest begin event never ended (read to the trace's end), as a share
 * of the capture's span; 0 when none. */
OPPROF__HIDDEN double opprof__averages_unended_share(const opprof_averages *avg);
OPPROF__HIDDEN bool opprof__averages_by_shape(const opprof_averages *avg);
OPPROF__HIDDEN bool opprof__averages_by_layer(const opprof_averages *avg);
OPPROF__HIDDEN int opprof__averages_stack_n(const opprof_averages *avg);
/* ---- the machine's ceilings (analysis/machine.c, machine_kernels.c) ---- */
typedef enum opprof__machine_isa { OPPROF__ISA_SCALAR, OPPROF__ISA_AVX2, OPPROF__ISA_AVX512 } opprof__machine_isa;
OPPROF__HIDDEN opprof__machine_isa opprof__machine_best_isa(void);
/* The kernels' revision, bumped when one changes what it measures (2: loads
 * folded by XOR in one loop; 3: buffers past 2 MiB on huge pages;
 * 4: DRAM on 16 LLCs), so that a
 * profile cached from other kernels is measured again (analysis/machine_cache.c). */
enum { OPPROF__MACHINE_KERNELS = 4 };
/* A quick measurement (opprof_machine_measure_quick) of every level but DRAM,
 * whose figures are left 0: what the end of a long run measures inside the
 * program (opprof_machine_remeasure), which allocates no buffer past the LLC's. */
OPPROF__HIDDEN int opprof__machine_measure_in_program(int threads, opprof_machine *out);
/* The FLOPs of one iteration of opprof__machine_fma's loop. */
OPPROF__HIDDEN double opprof__machine_fma_flops_per_iter(opprof__machine_isa isa);
/* `iters` iterations of independent FMA chains; a value that keeps them. */
OPPROF__HIDDEN double opprof__machine_fma(opprof__machine_isa isa, int64_t iters);
/* `passes` passes that load n floats of buf (64-byte aligned, n a multiple of
 * 128), in one loop (a call a pass cost a quarter of an L1 pass of 8 KB). */
OPPROF__HIDDEN double opprof__machine_load(opprof__machine_isa isa, const float *buf, size_t n, int64_t passes);
/* One pass that copies n floats (the same alignment). */
OPPROF__HIDDEN void opprof__machine_copy(opprof__machine_isa isa, float *dst, const float *src, size_t n);

/* analysis/flops.c: whether opprof_flops counts an operator of this name. */
OPPROF__HIDDEN bool opprof__counts_flops(const char *name);
/* ... and whether opprof_bytes models its traffic. */
OPPROF__HIDDEN bool opprof__counts_bytes(const char *name);

/* ---- parallel operators (analysis/parallel.c): the parts of one run ---- */
typedef struct opprof__parallel_run {
    int64_t start_ns, end_ns; /* the first part's start, the last part's end */
    int64_t sum_ns, max_ns;   /* the parts' durations: their sum, the longest */
    uint32_t parts, threads;  /* parts, and the threads they ran on */
    uint32_t key_event;       /* the part whose input shapes describe the run */
} opprof__parallel_run;
typedef struct opprof__parallel_runs {
    opprof__parallel_run *runs;
    size_t n_runs;
    uint32_t *run_of_event; /* n_events entries, UINT32_MAX: not a part; NULL without runs */
} opprof__parallel_runs;
OPPROF__HIDDEN int opprof__parallel_runs_build(const opprof_capture *c, opprof__parallel_runs *out);
OPPROF__HIDDEN void opprof__parallel_runs_free(opprof__parallel_runs *r);

/* ---- distributions (analysis/distributions.c): rows' times per step and per call ---- */
typedef struct opprof__step_self {
    int64_t step; /* -1: outside every step */
    double self;  /* ns */
} opprof__step_self;
typedef struct opprof__distributions {
    size_t n_rows, steps; /* steps >= 1 once built */
    size_t *first;        /* row r's calls: calls[first[r] .. first[r + 1]) */
    opprof__step_self *calls;
    double *step_totals;    /* per step: the self time of every CPU event */
    double *step_durations; /* per step: its wall time (ProfilerStep#N's duration; without
                               steps, the capture's) */
    double *walls;          /* per call (as calls): a run's span on its key part, 0 on its
                               other parts, any other call's duration; NULL without runs */
    opprof_row_distributions *rows;
} opprof__distributions;
/* row_of_event: each event's row (n_rows rows); runs: the capture's runs of parts (or NULL). */
OPPROF__HIDDEN int opprof__distributions_build(const opprof_capture *c, const uint32_t *row_of_event, size_t n_rows,
                                               const opprof__parallel_runs *runs, opprof__distributions *d);
/* Row `row`'s wall time in each step (d->walls summed): false without runs. */
OPPROF__HIDDEN bool opprof__distributions_row_walls(const opprof__distributions *d, size_t row, double *out);
/* Row `row`'s self time in each step: d->steps values into out. */
OPPROF__HIDDEN void opprof__distributions_row_steps(const opprof__distributions *d, size_t row, double *out);
OPPROF__HIDDEN void opprof__distributions_free(opprof__distributions *d);
OPPROF__HIDDEN const opprof__distributions *opprof__averages_distributions(const opprof_averages *avg);

/* ---- stack tree (analysis/stack_tree.c): events merged by their path of names ---- */
typedef struct opprof__stack_node {
    int32_t parent; /* node index, -1 for a root */
    uint32_t name;
    uint32_t depth;   /* 1 for a root */
    int64_t self_ns;  /* durations of its events minus their children's */
    int64_t total_ns; /* durations of its events */
} opprof__stack_node;
typedef struct opprof__stack_tree {
    opprof__stack_node *nodes; /* in first-seen order: a parent before its children */
    size_t n, cap;
    opprof__index index;    /* (parent, name) -> node */
    int32_t *node_of_event; /* n_events entries */
    size_t n_events;
} opprof__stack_tree;
/* The paths merge the steps, as the tables do: every ProfilerStep#N is one
 * frame, named by opprof__stack_name ("ProfilerStep*"). */
OPPROF__HIDDEN int opprof__stack_tree_build(const opprof_capture *c, opprof__stack_tree *t);
OPPROF__HIDDEN const char *opprof__stack_name(const opprof_capture *c, uint32_t name);
/* The samples' tree: the event tree's paths, each sample's native frames
 * (outermost first) under its owner's node, its self and total "time" the
 * sampling period (1 when unknown); node_of_event is NULL. */
OPPROF__HIDDEN int opprof__sample_tree_build(const opprof_capture *c, opprof__stack_tree *t);
OPPROF__HIDDEN void opprof__stack_tree_free(opprof__stack_tree *t);

/* ---- the same model in two runtimes, layer by layer (analysis/layers.c) ---- */
typedef struct opprof__layers {
    opprof_average_row *before, *after; /* per layer, its mean per step on each side; keys in `keys` */
    char *keys;
    size_t n;
    size_t ops_before, ops_after;               /* the first step's layer operators on each side */
    size_t paired_ops_before, paired_ops_after; /* ... of them in a paired layer */
} opprof__layers;
OPPROF__HIDDEN int opprof__layers_build(const opprof_capture *before, const opprof_capture *after, opprof__layers *out);
OPPROF__HIDDEN void opprof__layers_free(opprof__layers *l);

/* ---- two captures compared (analysis/diff.c) ---- */
typedef struct opprof__diff_pair {
    const char *key;
    const opprof_average_row *before, *after; /* either may be NULL */
    int64_t self_delta;                       /* self CPU time, after - before */
    int64_t device_delta;                     /* self device time, after - before */
    bool device;                              /* a row of device activities (paired with its kind only) */
} opprof__diff_pair;
enum { OPPROF__NOTE_BYTES = 240 };
typedef struct opprof__diff {
    const opprof_capture *before, *after;
    opprof_averages *avg_before, *avg_after;
    int64_t steps_before, steps_after;            /* each side's steps (>= 1): its rows are means per step */
    opprof_average_row *rows_before, *rows_after; /* the rows paired: per step, by name or by layer */
    size_t n_rows_before, n_rows_after;
    opprof__layers layers;               /* by layer: the layers; else n == 0 */
    opprof__diff_pair *pairs;            /* both sides' rows paired by (device, key), largest change of self
                                            CPU or self device time first */
    size_t n, shown;                     /* shown: the first rows within the row limit */
    int64_t self_before, self_after;     /* ns */
    int64_t device_before, device_after; /* self device time totals, ns */
    const char *device_name;             /* "CUDA", "MTIA": both sides have device time; else NULL */
    char notes[10][OPPROF__NOTE_BYTES];  /* configuration differences, the pairing */
    int n_notes;
} opprof__diff;
/* Both captures' key averages paired; free with opprof__diff_free (also on an error). */
OPPROF__HIDDEN int opprof__diff_build(opprof__diff *d, const opprof_capture *before, const opprof_capture *after,
                                      int row_limit, opprof_diff_match match);
OPPROF__HIDDEN void opprof__diff_free(opprof__diff *d);

/* ---- compared with confidence (analysis/stat_diff.c) ---- */
struct opprof_stat_diff {
    opprof_stat_row *rows; /* significant first, then by the size of the shift */
    size_t n_rows;
    opprof_stat_row total;
    opprof_stat_row step;         /* each step's wall time: what the user waits for */
    size_t steps[2], captures[2]; /* before, after */
    double alpha, detect;
    char *keys; /* the rows' keys, NUL-separated */
};

/* ---- ranks compared (analysis/ranks.c) ---- */
typedef struct opprof__ranks_op {
    const char *name; /* the first rank's row key that has it (owned by avgs) */
    int64_t *self_ns; /* per rank, 0 where the rank has no such operator */
    int64_t calls, min_ns, median_ns, max_ns;
    int slowest; /* the rank with max_ns */
} opprof__ranks_op;

typedef struct opprof__ranks_rank {
    int32_t rank;
    int64_t busy_ns, comm_ns; /* self time of all rows; of communication rows (their total) */
    int64_t collectives, wait_ns, last;
    int64_t uncertainty_ns;
} opprof__ranks_rank;

struct opprof_ranks {
    size_t n_ranks, n_ops, ops_cap;
    opprof_averages **avgs;
    opprof__ranks_op *ops;
    opprof__ranks_rank *ranks;
    int64_t compared, skew_median_ns, skew_max_ns; /* collectives compared by position */
};

/* Communication: MPI (nn_mpi's operators), PyTorch's c10d, NCCL and Gloo
 * kernels and ranges, and collectives by their usual names. */

#endif /* OPPROF_ANALYSIS_LAYER_H */
