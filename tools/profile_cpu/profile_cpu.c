/*
 * profile_cpu - PyTorch's CPU-profiling guide's program (profile_cpu.py) in C.
 *
 * Profiles CPU inference of Linear(256,512) > ReLU > Linear(512,64) on a batch
 * of 128 under schedule(wait=1, warmup=1, active=2, repeat=1), and writes into
 * a NEW directory: cpu-step-4.json (Chrome trace), cpu-step-4.time.txt and
 * cpu-step-4.memory.txt (tables), summary.json. The directory appears whole or
 * not at all: files are written into a temporary sibling that is renamed into
 * place at the end, and an existing directory is never touched.
 */
#define _GNU_SOURCE
#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>

#include "../exit_codes.h"
#include "../options.h"
#include "atomic_dir.h"
#include "parallel.h"

#include <signal.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct options {
    const char *outdir;
    const char *stem;
    const char *weights, *input, *save_output; /* safetensors files, or NULL */
    int threads, batch, in_features, hidden, out_features, steps;
    opprof_schedule schedule;
    bool quiet;
    bool record_shapes, with_stack, with_native_stack, with_flops, peak_memory, stacks, html, stats, perfetto;
    bool group_by_input_shape;
    int group_by_stack_n;
    long fail_alloc; /* testing: make the Nth allocation fail (0: count them), -1: off */
    parallel_mode parallel;
    opprof_flight flight;   /* --flight: keep_steps > 0 */
    const char *slow_steps; /* --slow-steps: "100,250" */
    double slow_by;         /* --slow-by: > 0 a multiple of the median step so far, < 0 minus ns */
    bool roofline;          /* --roofline: the machine's ceilings measured, kept in the traces */
    char slow_op[64];       /* --slow-op NAME=F: the operator made slower by F of its own time */
    double slow_op_by;
    int sample_hz;     /* --sample */
    bool sample_dwarf; /* --sample HZ,dwarf */
    bool cpu_time;     /* --cpu-time */
} options;

/* SIGINT and SIGTERM: noted here, acted on between steps and files, so that
 * no file is cut short; the temporary directory is then removed. */
static volatile sig_atomic_t g_signal;

static void on_signal(int sig) {
    g_signal = sig;
    parallel_on_signal(sig); /* --parallel: the whole run's directory goes, even while MPI waits */
}

typedef struct context {
    const options *opt;
    const char *workdir; /* temporary directory being filled */
    opprof_summary *summary;
    char failed_path[4096];
    int error;     /* atomic: the flight recorder saves on a thread of its own */
    bool reported; /* the error has been printed already */
} context;

/* ---- options ---- */

/* Bad usage: the error is said (getopt or the caller), then where the help is. */
static void usage_hint(void) { fputs("Run 'profile_cpu --help' for the options.\n", stderr); }

#define PROFILE_CPU_OPTIONS(X)                                                                                      \
    X(THREADS, "threads", "N", "threads for matrix products (default 1)")                                           \
    X(BATCH, "batch", "N", "rows of the input batch (default 128)")                                                 \
    X(IN, "in", "N", "input features (default 256)")                                                                \
    X(HIDDEN, "hidden", "N", "hidden features (default 512)")                                                       \
    X(OUT, "out", "N", "output features (default 64)")                                                              \
    X(STEPS, "steps", "N", "profiled loop iterations (default 6)")                                                  \
    X(SKIP_FIRST, "skip-first", "N", "schedule: steps skipped before the first cycle (default 0)")                  \
    X(WAIT, "wait", "N", "schedule: idle steps per cycle (default 1)")                                              \
    X(WARMUP, "warmup", "N", "schedule: warm-up steps per cycle (default 1)")                                       \
    X(ACTIVE, "active", "N", "schedule: recorded steps per cycle (default 2)")                                      \
    X(REPEAT, "repeat", "N", "schedule: cycles, 0 = forever (default 1)")                                           \
    X(STEM, "stem", "NAME", "file name stem of each capture (default cpu-step)")                                    \
    X(WEIGHTS, "weights", "FILE",                                                                                   \
      "load the model's weights from a safetensors file (names as\n"                                                \
      "nn.Sequential's state_dict: 0.weight, 0.bias, 2.weight, 2.bias)")                                            \
    X(INPUT, "input", "FILE",                                                                                       \
      "take the input batch from a safetensors file (tensor 'input',\n"                                             \
      "[batch, in]); --batch and --in follow it")                                                                   \
    X(SAVE_OUTPUT, "save-output", "FILE", "write the forward's result as a safetensors file (tensor 'output')")     \
    X(RECORD_SHAPES, "record-shapes", NULL, "record operators' input shapes (trace args \"Input Dims\")")           \
    X(WITH_STACK, "with-stack", NULL, "record call sites (trace args \"Call stack\")")                              \
    X(WITH_NATIVE_STACK, "with-native-stack", NULL, "record native call stacks instead (backtrace; ~1 us a range)") \
    X(WITH_FLOPS, "with-flops", NULL, "add the Total FLOPs and GFLOP/s columns (implies --record-shapes)")          \
    X(GROUP_BY_INPUT_SHAPE, "group-by-input-shape", NULL,                                                           \
      "one table row per (name, input shapes) (implies --record-shapes)")                                           \
    X(GROUP_BY_STACK, "group-by-stack", "N", "one table row per (name, top N call sites) (implies --with-stack)")   \
    X(PEAK_MEMORY, "peak-memory", NULL, "add the Peak Mem column to the tables")                                    \
    X(STATS, "stats", NULL,                                                                                         \
      "add Self min / med / p90 / p99 / max / IQR / CV to the tables: each\n"                                       \
      "row's self time per step (per call with fewer than 2 steps);\n"                                              \
      "summary.json has each operator's self_cpu_per_step either way")                                              \
    X(STACKS, "stacks", NULL,                                                                                       \
      "also write STEM-N.stacks: folded stacks of self CPU time (us)\n"                                             \
      "for flamegraph.pl and speedscope")                                                                           \
    X(HTML, "html", NULL,                                                                                           \
      "also write STEM-N.html: a self-contained report (sortable table,\n"                                          \
      "flame graph, timeline, memory over time)")                                                                   \
    X(PERFETTO, "perfetto", NULL, "also write STEM-N.pftrace: the capture in Perfetto's native format")             \
    X(QUIET, "quiet", NULL, "do not print the tables")                                                              \
    X(FAIL_ALLOC, "fail-alloc", "N",                                                                                \
      "for testing: the Nth allocation through opprof's and nn's\n"                                                 \
      "allocator fails (0: none); their count is printed on stderr at exit")                                        \
    X(PARALLEL, "parallel", "MODE",                                                                                 \
      "run under mpirun across ranks: data (each rank its rows of the\n"                                            \
      "batch) or tensor (Linear layers split, partial outputs summed with\n"                                        \
      "mpi::allreduce); OUTDIR/rank-K/ per rank, the merged trace and\n"                                            \
      "ranks.txt (opprof report --ranks) in OUTDIR")                                                                \
    X(SAMPLE, "sample", "HZ[,dwarf]",                                                                               \
      "sample every thread's native call stack HZ times a second of its\n"                                          \
      "CPU time (perf events; 1000 is perf's default; dwarf: unwind a copy of\n"                                    \
      "the stack instead of the frame-pointer walk): Samples, Samples % and\n"                                      \
      "Top native frame columns, and STEM-N.samples.stacks (folded: the\n"                                          \
      "operators above the native frames); off-CPU times too")                                                      \
    X(CPU_TIME, "cpu-time", NULL, "On CPU total and Off CPU columns (each row's time off the CPU)")                 \
    X(FLIGHT, "flight", "N[,Ts][,MMiB]",                                                                            \
      "a flight recorder instead of the schedule: every step is\n"                                                  \
      "recorded, the last N (or T seconds, M MiB) are kept, and a step that\n"                                      \
      "triggers is saved with the steps before it, as STEM-N.* (N = that step)\n"                                   \
      "with STEM-N.flight.txt: why, and the step against the median step")                                          \
    X(FLIGHT_TRIGGER, "flight-trigger", "LIST",                                                                     \
      "what triggers: Kx (slower than K x the median of the steps\n"                                                \
      "before it), DURATION (longer than it: 50ms), NAME>DURATION (a range\n"                                       \
      "named NAME longer than it); comma-separated (default 2x)")                                                   \
    X(FLIGHT_BEFORE, "flight-before", "K", "steps saved before the triggering one (default 4)")                     \
    X(FLIGHT_AFTER, "flight-after", "J", "steps saved after it (default 0)")                                        \
    X(FLIGHT_MEDIAN_OF, "flight-median-of", "W", "steps of the rolling median (default 50)")                        \
    X(FLIGHT_COOLDOWN, "flight-cooldown", "DUR", "at most one save per DUR (default 1s; 0: none)")                  \
    X(SLOW_STEPS, "slow-steps", "LIST",                                                                             \
      "for testing: these steps (\"100,250\") are made slower: their\n"                                             \
      "first aten::addmm waits longer, busy (nn_debug_delay_next)")                                                 \
    X(SLOW_BY, "slow-by", "X",                                                                                      \
      "by how much: Kx (K times the median of the last 50 steps, default\n"                                         \
      "2x) or a duration (\"20ms\")")                                                                               \
    X(ROOFLINE, "roofline", NULL,                                                                                   \
      "this machine's ceilings (opprof machine: a few seconds the first time,\n"                                    \
      "then from the user's cache, as opprof record --roofline), kept in every\n"                                   \
      "trace: `opprof report --roofline` of the trace sets each operator\n"                                         \
      "against the roofs of the machine it ran on")                                                                 \
    X(SLOW_OP, "slow-op", "NAME=F",                                                                                 \
      "for testing: every call of aten::addmm or aten::clamp_min (NAME) is\n"                                       \
      "made slower by F of its own time, busy (nn_debug_slow_down;\n"                                               \
      "\"aten::addmm=1\": twice as long)")                                                                          \
    X(HELP, "h|help", NULL, "this help")                                                                            \
    X(VERSION, "version", NULL, "print the version and exit")                                                       \
    X(TEXT_1, NULL, NULL,                                                                                           \
      "Writes STEM-N.json (Chrome trace for Perfetto), STEM-N.time.txt, STEM-N.memory.txt\nfor each capture (N = the step number when it was saved), and summary.json; on a\nfailure, nothing is left behind.")
TOOL_OPTIONS(PROFILE_CPU_OPTIONS);

static void usage(FILE *f) {
    tool_options_synopsis(f, "usage: ", "profile_cpu [OPTIONS] OUTDIR", OPTIONS, 20);
    fputs("\n"
          "Profile CPU inference of Linear(IN,HIDDEN) > ReLU > Linear(HIDDEN,OUT) as a PyTorch\n"
          "CPU-profiling guide's profile_cpu.py does, into OUTDIR (which must not exist).\n"
          "\n"
          "options:\n",
          f);
    tool_options_help(f, OPTIONS);
    tool_exit_codes_text(f);
}

static int parse_int(const char *text, const char *flag, int min, int *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > 1000000000) {
        fprintf(stderr, "profile_cpu: %s takes an integer >= %d, not '%s'\n", flag, min, text);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int say_bad(const char *flag, const char *why) {
    fprintf(stderr, "profile_cpu: %s %s: %s\n", flag, optarg, why);
    return -1;
}

/* The options with more to check than a number (optarg): 0, or -1 said on stderr. */
static int take_cooldown(options *o) {
    int64_t ns;
    if (opprof_parse_duration_ns(optarg, &ns))
        return say_bad("--flight-cooldown", "not a duration (\"1s\", \"250ms\", 0)");
    o->flight.cooldown_ms = ns / 1000000;
    return 0;
}

static int take_slow_op(options *o) {
    const char *eq = strchr(optarg, '=');
    char *end = NULL;
    double f = eq ? strtod(eq + 1, &end) : -1;
    if (!eq || eq == optarg || (size_t)(eq - optarg) >= sizeof o->slow_op || end == eq + 1 || *end ||
        !(f > 0 && f <= 100) || (strncmp(optarg, "aten::addmm=", 12) && strncmp(optarg, "aten::clamp_min=", 16)))
        return say_bad("--slow-op", "not NAME=F (aten::addmm or aten::clamp_min, F from 0 to 100: the share of its "
                                    "own time added)");
    snprintf(o->slow_op, sizeof o->slow_op, "%.*s", (int)(eq - optarg), optarg);
    o->slow_op_by = f;
    return 0;
}

static int take_slow_by(options *o) {
    int64_t ns;
    size_t n = strlen(optarg);
    char *end;
    double k = n > 1 && optarg[n - 1] == 'x' ? strtod(optarg, &end) : 0;
    if (k > 0 && end == optarg + n - 1)
        o->slow_by = k;
    else if (opprof_parse_duration_ns(optarg, &ns) == 0 && ns > 0)
        o->slow_by = -(double)ns;
    else
        return say_bad("--slow-by", "not Kx (K > 0) or a duration (\"20ms\")");
    return 0;
}

static int take_parallel(options *o) {
    if (parallel_mode_parse(optarg, &o->parallel)) {
        fprintf(stderr, "profile_cpu: --parallel takes data or tensor, not '%s'\n", optarg);
        return -1;
    }
    if (!parallel_built()) {
        fprintf(stderr, "profile_cpu: --parallel: this profile_cpu was built without MPI "
                        "(install openmpi-bin and libopenmpi-dev, then rebuild)\n");
        return -1;
    }
    return 0;
}

/* One option (its id, optarg its argument); 0, or -1 said on stderr. */
static int take_option(int c, options *o) {
    char why[512];
    int rc = 0;
    switch (c) {
    case OPT_THREADS: rc = parse_int(optarg, "--threads", 1, &o->threads); break;
    case OPT_BATCH: rc = parse_int(optarg, "--batch", 1, &o->batch); break;
    case OPT_IN: rc = parse_int(optarg, "--in", 1, &o->in_features); break;
    case OPT_HIDDEN: rc = parse_int(optarg, "--hidden", 1, &o->hidden); break;
    case OPT_OUT: rc = parse_int(optarg, "--out", 1, &o->out_features); break;
    case OPT_STEPS: rc = parse_int(optarg, "--steps", 0, &o->steps); break;
    case OPT_SKIP_FIRST: rc = parse_int(optarg, "--skip-first", 0, &o->schedule.skip_first); break;
    case OPT_WAIT: rc = parse_int(optarg, "--wait", 0, &o->schedule.wait); break;
    case OPT_WARMUP: rc = parse_int(optarg, "--warmup", 0, &o->schedule.warmup); break;
    case OPT_ACTIVE: rc = parse_int(optarg, "--active", 0, &o->schedule.active); break;
    case OPT_REPEAT: rc = parse_int(optarg, "--repeat", 0, &o->schedule.repeat); break;
    case OPT_STEM:
        if (!*optarg || strchr(optarg, '/')) {
            fprintf(stderr, "profile_cpu: --stem takes a file name without '/', not '%s'\n", optarg);
            rc = -1;
        }
        o->stem = optarg;
        break;
    case OPT_QUIET: o->quiet = true; break;
    case OPT_RECORD_SHAPES: o->record_shapes = true; break;
    case OPT_WITH_STACK: o->with_stack = true; break;
    case OPT_WITH_FLOPS: o->with_flops = o->record_shapes = true; break;
    case OPT_GROUP_BY_INPUT_SHAPE: o->group_by_input_shape = o->record_shapes = true; break;
    case OPT_GROUP_BY_STACK:
        rc = parse_int(optarg, "--group-by-stack", 1, &o->group_by_stack_n);
        o->with_stack = true;
        break;
    case OPT_PEAK_MEMORY: o->peak_memory = true; break;
    case OPT_STACKS: o->stacks = true; break;
    case OPT_WITH_NATIVE_STACK: o->with_native_stack = true; break;
    case OPT_HTML: o->html = true; break;
    case OPT_STATS: o->stats = true; break;
    case OPT_PERFETTO: o->perfetto = true; break;
    case OPT_FLIGHT:
        if (opprof_flight_parse_keep(&o->flight, optarg, why, sizeof why)) rc = say_bad("--flight", why);
        break;
    case OPT_FLIGHT_TRIGGER:
        o->flight.slower_than_median = 0;
        if (opprof_flight_parse_triggers(&o->flight, optarg, why, sizeof why)) rc = say_bad("--flight-trigger", why);
        break;
    case OPT_FLIGHT_BEFORE: rc = parse_int(optarg, "--flight-before", 0, &o->flight.before); break;
    case OPT_FLIGHT_AFTER: rc = parse_int(optarg, "--flight-after", 0, &o->flight.after); break;
    case OPT_FLIGHT_MEDIAN_OF: rc = parse_int(optarg, "--flight-median-of", 1, &o->flight.median_of); break;
    case OPT_FLIGHT_COOLDOWN: rc = take_cooldown(o); break;
    case OPT_SLOW_STEPS:
        o->slow_steps = optarg;
        if (!*optarg || strspn(optarg, "0123456789,") != strlen(optarg))
            rc = say_bad("--slow-steps", "not a comma-separated list of step numbers");
        break;
    case OPT_SLOW_OP: rc = take_slow_op(o); break;
    case OPT_ROOFLINE: o->roofline = true; break;
    case OPT_SAMPLE:
        if (opprof_parse_sample(optarg, &o->sample_hz, &o->sample_dwarf))
            rc = say_bad("--sample", "not HZ[,fp|dwarf] (HZ from 1 to 1000000)");
        break;
    case OPT_CPU_TIME: o->cpu_time = true; break;
    case OPT_SLOW_BY: rc = take_slow_by(o); break;
    case OPT_FAIL_ALLOC: {
        int n;
        rc = parse_int(optarg, "--fail-alloc", 0, &n);
        o->fail_alloc = n;
        break;
    }
    case OPT_WEIGHTS: o->weights = optarg; break;
    case OPT_INPUT: o->input = optarg; break;
    case OPT_SAVE_OUTPUT: o->save_output = optarg; break;
    case OPT_HELP: usage(stdout); exit(0);
    case OPT_VERSION: printf("profile_cpu (opprof) %s\n", opprof_version()); exit(0);
    case OPT_PARALLEL: rc = take_parallel(o); break;
    default: usage_hint(); return -1;
    }
    return rc;
}

static int parse_options(int argc, char **argv, options *o) {
    *o = (options){.stem = "cpu-step",
                   .threads = 1,
                   .batch = 128,
                   .in_features = 256,
                   .hidden = 512,
                   .out_features = 64,
                   .steps = 6,
                   .schedule = {.skip_first = 0, .wait = 1, .warmup = 1, .active = 2, .repeat = 1},
                   .fail_alloc = -1,
                   .flight = opprof_flight_default(),
                   .slow_by = 2};
    o->flight.slower_than_median = 2;
    int c;
    while ((c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END)
        if (take_option(c, o)) return -1;
    if (optind != argc - 1) {
        fprintf(stderr, optind >= argc ? "profile_cpu: missing OUTDIR\n" : "profile_cpu: too many arguments\n");
        usage_hint();
        return -1;
    }
    o->outdir = argv[optind];
    int rc = opprof_schedule_check(&o->schedule);
    if (rc) {
        fprintf(stderr, "profile_cpu: %s\n", opprof_strerror(rc));
        return -1;
    }
    char why[512];
    if (o->flight.keep_steps && opprof_flight_check(&o->flight, why, sizeof why)) {
        fprintf(stderr, "profile_cpu: --flight: %s\n", why);
        return -1;
    }
    return 0;
}

/* ---- output files ---- */

/* Write `text` to dir/name; on failure remember the path. */
static int write_file(context *ctx, const char *name, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", ctx->workdir, name);
    int rc = opprof_write_text_file(path, text);
    if (rc) snprintf(ctx->failed_path, sizeof ctx->failed_path, "%s/%s", ctx->opt->outdir, name);
    return rc;
}

static int write_trace(context *ctx, const opprof_capture *cap, const char *name) {
    char path[4096], final_path[4096];
    snprintf(path, sizeof path, "%s/%s", ctx->workdir, name);
    snprintf(final_path, sizeof final_path, "%s/%s", ctx->opt->outdir, name);
    int rc = 0;
    FILE *f = fopen(path, "w");
    if (!f) rc = -errno;
    if (!rc) rc = opprof_capture_chrome_write_stream(cap, f, final_path);
    if (f && fclose(f) != 0 && !rc) rc = -errno;
    if (rc) snprintf(ctx->failed_path, sizeof ctx->failed_path, "%s", final_path);
    return rc;
}

static int write_stacks(const opprof_capture *cap, const char *path) {
    return opprof_capture_stacks_write(cap, path, OPPROF_STACKS_SELF_TIME);
}

static int write_sample_stacks(const opprof_capture *cap, const char *path) {
    return opprof_capture_stacks_write(cap, path, OPPROF_STACKS_SAMPLES);
}

/* STEM-N.EXT, one of a capture's optional files, by `writer`; on failure
 * remember the path. */
static int write_beside(context *ctx, const opprof_capture *cap, long long step, const char *ext,
                        int (*writer)(const opprof_capture *cap, const char *path)) {
    char name[512], path[4096];
    snprintf(name, sizeof name, "%s-%lld.%s", ctx->opt->stem, step, ext);
    snprintf(path, sizeof path, "%s/%s", ctx->workdir, name);
    int rc = writer(cap, path);
    if (rc) snprintf(ctx->failed_path, sizeof ctx->failed_path, "%s/%s", ctx->opt->outdir, name);
    return rc;
}

/* on_trace_ready: the guide's save_trace. */
static int save_trace(const opprof_capture *cap, void *user_data) {
    context *ctx = user_data;
    const options *o = ctx->opt;
    opprof_capture_info info = opprof_capture_get_info(cap);
    if (g_signal) return OPPROF_ECALLBACK; /* interrupted: write nothing more */
    if (info.dropped_events) {
        /* profile_cpu sets no event budget: only a failed allocation drops events */
        fprintf(stderr, "profile_cpu: %llu events could not be recorded (out of memory): the capture is incomplete\n",
                (unsigned long long)info.dropped_events);
        __atomic_store_n(&ctx->error, OPPROF_ENOMEM, __ATOMIC_RELAXED);
        ctx->reported = true;
        return OPPROF_ENOMEM;
    }
    opprof_averages *avg = NULL;
    char *time_table = NULL, *memory_table = NULL;
    char name[512];
    opprof_averages_options group = {.group_by_input_shape = o->group_by_input_shape,
                                     .group_by_stack_n = o->group_by_stack_n,
                                     .distributions = true};
    opprof_table_options table = {.sort = OPPROF_SORT_SELF_CPU_TIME,
                                  .row_limit = 12,
                                  .peak_memory = o->peak_memory,
                                  .flops = o->with_flops,
                                  .stats = o->stats,
                                  .samples = o->sample_hz > 0,
                                  .cpu_time = o->cpu_time};
    int rc = opprof_capture_averages_ex(cap, &group, &avg);
    if (!rc) rc = opprof_averages_table_to_string(avg, &table, &time_table);
    table.sort = OPPROF_SORT_SELF_CPU_MEMORY;
    if (!rc) rc = opprof_averages_table_to_string(avg, &table, &memory_table);
    if (!rc) {
        snprintf(name, sizeof name, "%s-%lld.time.txt", o->stem, (long long)info.step_num);
        rc = write_file(ctx, name, time_table);
    }
    if (!rc) {
        snprintf(name, sizeof name, "%s-%lld.memory.txt", o->stem, (long long)info.step_num);
        rc = write_file(ctx, name, memory_table);
    }
    if (!rc) {
        snprintf(name, sizeof name, "%s-%lld.json", o->stem, (long long)info.step_num);
        rc = write_trace(ctx, cap, name);
    }
    long long step = (long long)info.step_num;
    if (!rc && o->stacks) rc = write_beside(ctx, cap, step, "stacks", write_stacks);
    if (!rc && o->sample_hz) rc = write_beside(ctx, cap, step, "samples.stacks", write_sample_stacks);
    if (!rc && o->perfetto) rc = write_beside(ctx, cap, step, "pftrace", opprof_capture_perfetto_write);
    if (!rc && o->html) rc = write_beside(ctx, cap, step, "html", opprof_capture_html_write);
    char *flight = NULL; /* a flight recorder's save: why, and its step against the others */
    if (!rc && info.flight.reason[0] && !(rc = opprof_capture_flight_to_string(cap, 12, &flight))) {
        snprintf(name, sizeof name, "%s-%lld.flight.txt", o->stem, step);
        rc = write_file(ctx, name, flight);
    }
    if (!rc) rc = opprof_summary_add_capture(ctx->summary, cap, avg);
    if (!rc && !o->quiet) printf("%s\n%s\n%s%s", time_table, memory_table, flight ? flight : "", flight ? "\n" : "");
    opprof_free(flight);
    opprof_free(time_table);
    opprof_free(memory_table);
    opprof_averages_free(avg);
    if (rc && !__atomic_load_n(&ctx->error, __ATOMIC_RELAXED)) __atomic_store_n(&ctx->error, rc, __ATOMIC_RELAXED);
    return rc;
}

/* ---- the model and its steps ---- */

/* Remove a directory that this program created, with the files in it. */
/* summary.json's "gemm": the kernel that ran each layer's product and the
 * GFLOP/s that nn measured when it chose it ("avx512 128x256x512 252.5
 * GFLOP/s; ..."; no figure when NN_GEMM set the kernel). */
static int set_gemm_kernels(opprof_summary *sum, int64_t batch, int64_t in, int64_t hidden, int64_t out) {
    const int64_t layers[2][2] = {{in, hidden}, {hidden, out}};
    char text[256] = "";
    for (int i = 0; i < 2; i++) {
        nn_gemm_choice c;
        int rc = nn_gemm_choice_for(batch, layers[i][1], layers[i][0], &c);
        if (rc) return rc;
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, "%s%s %lldx%lldx%lld", i ? "; " : "", c.kernel, (long long)batch,
                 (long long)layers[i][0], (long long)layers[i][1]);
        used = strlen(text);
        if (c.gflops > 0) snprintf(text + used, sizeof text - used, " %.1f GFLOP/s", c.gflops);
    }
    return opprof_summary_set_string(sum, "gemm", text);
}

static int make_model(const options *o, nn_module **model) {
    nn_module *layers[3] = {0};
    int rc = nn_linear_new(&layers[0], o->in_features, o->hidden);
    if (!rc) rc = nn_relu_new(&layers[1]);
    if (!rc) rc = nn_linear_new(&layers[2], o->hidden, o->out_features);
    if (rc) {
        for (int i = 0; i < 3; i++) nn_module_free(layers[i]);
        return rc;
    }
    return nn_sequential_new(model, layers, 3);
}

/* What run() builds and frees, and what it was doing when it failed. */
typedef struct work {
    nn_module *model;
    nn_tensor *inputs, *reference;
    const char *what;  /* "running the model": for "failed %s" */
    char message[512]; /* a file's error in words, when load_failed */
    bool load_failed;  /* loading or saving a safetensors file failed */
} work;

/* The model, its weights and inputs, this rank's share; the reference
 * output, then warm-up passes before the profiler starts. */
static int prepare(const options *o, work *w) {
    options sized = *o;
    int rc = 0;
    nn_manual_seed(7);
    nn_set_num_threads(o->threads); /* a fixed lab setting, not a tuning recommendation */
    w->what = "building the model";
    if (o->input) { /* the input decides the batch and the input width */
        rc = nn_tensor_load_safetensors(o->input, "input", &w->inputs, w->message, sizeof w->message);
        if (!rc && w->inputs->ndim != 2) {
            snprintf(w->message, sizeof w->message, "%s: tensor 'input' must have 2 dimensions [batch, in], not %d",
                     o->input, w->inputs->ndim);
            rc = NN_ESHAPE;
        }
        if (rc) return w->load_failed = true, rc;
        sized.batch = (int)w->inputs->shape[0];
        sized.in_features = (int)w->inputs->shape[1];
    }
    if ((rc = make_model(&sized, &w->model))) return rc;
    nn_module_eval(w->model);
    if (o->weights && (rc = nn_module_load_safetensors(w->model, o->weights, w->message, sizeof w->message)))
        return w->load_failed = true, rc;
    w->what = "creating the inputs";
    if (!w->inputs && (rc = nn_tensor_randn(&w->inputs, 2, (int64_t[]){o->batch, o->in_features}))) return rc;
    w->what = "sharing the work across ranks";
    /* --parallel: this rank's rows, or its part of the model */
    if ((rc = parallel_share(&w->model, &w->inputs))) return rc;
    w->what = "running the model";
    rc = parallel_forward(w->model, w->inputs, &w->reference);
    for (int i = 0; i < 3 && !rc; i++) { /* warm up before the profiler starts */
        nn_tensor *y = NULL;
        rc = parallel_forward(w->model, w->inputs, &y);
        nn_tensor_free(y);
    }
    return rc;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --slow-steps names this step. */
static bool is_slow(const options *o, int step) {
    for (const char *p = o->slow_steps; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        char *end;
        if (strtol(p, &end, 10) == step && end > p) return true;
    }
    return false;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* --slow-steps: this step's first aten::addmm waits --slow-by longer. */
static void slow_down(const options *o, int step, const int64_t *times) {
    if (!is_slow(o, step)) return;
    int64_t ns = (int64_t)-o->slow_by;
    if (o->slow_by > 0) { /* K times the median of the last 50 steps */
        int64_t sorted[50];
        int n = step < 50 ? step : 50;
        memcpy(sorted, times + step - n, (size_t)n * sizeof *sorted);
        qsort(sorted, (size_t)n, sizeof *sorted, cmp_i64);
        ns = n ? (int64_t)(o->slow_by * (double)sorted[n / 2]) : 0;
    }
    nn_debug_delay_next("aten::addmm", ns);
}

/* One batch: 0, 1 to stop quietly (interrupted, or a save failed: said), or an error. */
static int one_step(context *ctx, work *w, opprof_session *session, int step) {
    int frc = 0;
    {
        OPPROF_SCOPE("batch_%d", step);
        nn_tensor *output = NULL;
        {
            OPPROF_SCOPE("forward");
            frc = parallel_forward(w->model, w->inputs, &output);
        }
        nn_tensor_free(output);
    }
    if (frc) {
        w->what = "running the model";
        return frc;
    }
    int step_rc = opprof_session_step(session); /* advance once after each logical batch */
    if (g_signal || __atomic_load_n(&ctx->error, __ATOMIC_RELAXED)) return 1;
    if (step_rc && step_rc != OPPROF_ECALLBACK) { /* a capture was lost */
        w->what = "saving the capture";
        return step_rc;
    }
    return 0;
}

/* The guide's loop: each batch a range around a forward range, one step each. */
static int profile_steps(const options *o, context *ctx, work *w, opprof_session *session) {
    int64_t *times = o->slow_steps ? calloc((size_t)o->steps + 1, sizeof *times) : NULL;
    if (o->slow_steps && !times) return NN_ENOMEM;
    int rc = o->slow_op[0] ? nn_debug_slow_down(o->slow_op, o->slow_op_by) : 0;
    for (int step = 0; step < o->steps && !rc; step++) {
        int64_t t0 = now_ns();
        if (times) slow_down(o, step, times);
        rc = one_step(ctx, w, session, step);
        if (times) times[step] = now_ns() - t0;
    }
    free(times);
    if (o->slow_op[0]) nn_debug_slow_down(NULL, 0);
    return rc == 1 ? 0 : rc;
}

/* The profiler, started with the options, through the steps, stopped. */
static int profile(const options *o, context *ctx, work *w) {
    opprof_config cfg = opprof_config_default();
    cfg.schedule = o->flight.keep_steps ? (opprof_schedule){0} : o->schedule; /* --flight records every step */
    cfg.flight = o->flight;
    cfg.sample_hz = o->sample_hz;
    cfg.sample_dwarf = o->sample_dwarf;
    cfg.off_cpu = o->sample_hz > 0 || o->cpu_time;
    cfg.on_trace_ready = save_trace;
    cfg.user_data = ctx;
    cfg.profile_memory = true;
    cfg.record_shapes = o->record_shapes;
    cfg.with_stack = o->with_stack;
    cfg.with_native_stack = o->with_native_stack;
    cfg.with_flops = o->with_flops;
    if (parallel_rank()) cfg.rank = *parallel_rank();
    opprof_session *session = NULL;
    w->what = "starting the profiler";
    int rc = opprof_session_start(&session, &cfg);
    if (!rc && o->roofline) { /* before the steps: the ceilings are measured, not recorded */
        opprof_machine machine;
        char said[4400]; /* measured once per CPU, then from the user's cache (opprof_machine_cached) */
        w->what = "measuring the machine's ceilings";
        rc = opprof_machine_cached(o->threads < OPPROF_MACHINE_MAX_THREADS ? o->threads : OPPROF_MACHINE_MAX_THREADS,
                                   &machine, said, sizeof said);
        if (!rc && !o->quiet) fprintf(stderr, "profile_cpu: %s\n", said);
        if (!rc) rc = opprof_session_set_machine(session, &machine);
        if (!rc) w->what = "starting the profiler";
    }
    if (!rc) rc = profile_steps(o, ctx, w, session);
    int stop_rc = session ? opprof_session_stop(session) : 0;
    opprof_session_free(session);
    if (stop_rc == OPPROF_ECALLBACK) stop_rc = 0; /* ctx->error says why */
    if (ctx->error) {
        w->what = "saving the capture";
        return ctx->error;
    }
    if (!rc && stop_rc) w->what = "stopping the profiler";
    return rc ? rc : stop_rc;
}

/* The output after profiling is the reference's (the profiler changed
 * nothing), and --save-output writes it. */
static int check_output(const options *o, work *w) {
    nn_tensor *after = NULL;
    w->what = "checking the output";
    int rc = parallel_forward(w->model, w->inputs, &after);
    if (!rc && !nn_tensor_equal(after, w->reference)) {
        fprintf(stderr, "profile_cpu: the output after profiling differs from the reference\n");
        rc = -1;
    }
    nn_tensor_free(after);
    if (rc || !o->save_output) return rc;
    nn_tensor *whole = NULL; /* --parallel: the whole batch's output, by rank 0 */
    w->what = "gathering the output";
    rc = parallel_whole_output(w->reference, &whole);
    if (!rc && parallel_is_root()) {
        rc = nn_tensor_save_safetensors(o->save_output, "output", whole ? whole : w->reference, w->message,
                                        sizeof w->message);
        w->load_failed = rc != 0; /* the message names the file */
    }
    nn_tensor_free(whole);
    return rc;
}

static int write_summary(const options *o, context *ctx, work *w) {
    opprof_summary *sum = ctx->summary;
    int64_t in_shape[2] = {w->inputs->shape[0], w->inputs->shape[1]};
    int64_t out_shape[2] = {w->reference->shape[0], w->reference->shape[1]};
    int rc = opprof_summary_set_string(sum, "device", "cpu");
    if (!rc) rc = opprof_summary_set_int(sum, "threads", nn_get_num_threads());
    if (!rc) rc = opprof_summary_set_int_array(sum, "input_shape", in_shape, 2);
    if (!rc) rc = opprof_summary_set_int_array(sum, "output_shape", out_shape, 2);
    if (!rc) rc = set_gemm_kernels(sum, w->inputs->shape[0], w->inputs->shape[1], o->hidden, w->reference->shape[1]);
    if (!rc) {
        char path[4096];
        snprintf(path, sizeof path, "%s/summary.json", ctx->workdir);
        rc = opprof_summary_json_write(sum, path);
        if (rc) snprintf(ctx->failed_path, sizeof ctx->failed_path, "%s/summary.json", o->outdir);
        w->what = "writing";
    }
    return rc;
}

/* ---- a run, and main ---- */

static int run(const options *o, context *ctx) {
    work w = {0};
    int rc = prepare(o, &w);
    if (!rc) rc = profile(o, ctx, &w);
    if (!rc) rc = check_output(o, &w);
    if (!rc) rc = write_summary(o, ctx, &w);
    if (rc && w.load_failed) { /* the message names the file and the tensor */
        fprintf(stderr, "profile_cpu: %s\n", w.message);
        rc = -1;
    }
    if (ctx->reported || g_signal) rc = -1;
    if (rc && rc != -1) {
        if (ctx->failed_path[0])
            fprintf(stderr, "profile_cpu: cannot write '%s': %s\n", ctx->failed_path, opprof_strerror(rc));
        else
            fprintf(stderr, "profile_cpu: failed %s: %s\n", w.what,
                    rc <= -5000 && rc > -6000 ? opprof_strerror(rc) : nn_strerror(rc));
    }
    nn_tensor_free(w.reference);
    nn_tensor_free(w.inputs);
    nn_module_free(w.model);
    return rc;
}

/* --fail-alloc: one allocator for opprof and nn that fails at the Nth call. */
static long g_allocations, g_fail_at = -1;

static void *counting_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)ctx, (void)old_size;
    if (new_size == 0) return free(ptr), NULL;
    return ++g_allocations == g_fail_at ? NULL : realloc(ptr, new_size);
}

static void report_allocations(void) {
    fprintf(stderr, "profile_cpu: %ld allocations through the hooks\n", g_allocations);
}

/* One process's run into outdir (a rank's, under --parallel): the
 * directory appears whole or not at all. Returns the exit status. */
static const options *g_options;

static int profile_into(const char *outdir) {
    options o = *g_options;
    o.outdir = outdir;
    if (!parallel_is_root()) o.quiet = true; /* one rank prints the tables */
    /* Refuse an existing OUTDIR before doing anything; fill a temporary sibling. */
    char workdir[4096];
    if (outdir_begin(o.outdir, workdir, sizeof workdir)) return TOOL_EXIT_FAILED;

    context ctx = {.opt = &o, .workdir = workdir};
    int rc = opprof_summary_new(&ctx.summary);
    if (rc) {
        fprintf(stderr, "profile_cpu: %s\n", opprof_strerror(rc));
        outdir_remove(workdir);
        return TOOL_EXIT_FAILED;
    }
    rc = run(&o, &ctx);
    opprof_summary_free(ctx.summary);
    nn_release_cached_memory();
    if (g_signal) {
        outdir_remove(workdir);
        fprintf(stderr, "profile_cpu: interrupted by %s: '%s' was not created\n",
                g_signal == SIGINT ? "SIGINT" : "SIGTERM", o.outdir);
        return 128 + g_signal;
    }
    if (rc) {
        outdir_remove(workdir);
        return TOOL_EXIT_FAILED;
    }
    if (outdir_publish(workdir, o.outdir)) return TOOL_EXIT_FAILED;
    if (o.parallel == PARALLEL_OFF) printf("profile_cpu: capture written to %s/\n", o.outdir);
    return 0;
}

int main(int argc, char **argv) {
    options o;
    if (parse_options(argc, argv, &o)) return TOOL_EXIT_USAGE;
    if (o.fail_alloc >= 0) {
        static const opprof_allocator counting = {counting_realloc, NULL};
        g_fail_at = o.fail_alloc;
        opprof_set_allocator(&counting);
        nn_set_allocator(&counting);
        atexit(report_allocations);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    g_options = &o;
    if (o.parallel != PARALLEL_OFF) return parallel_main(o.parallel, &argc, &argv, o.outdir, profile_into);
    return profile_into(o.outdir);
}
