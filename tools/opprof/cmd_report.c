/* cmd_report.c - `opprof report`: the key averages table of a trace, in
 * PyTorch's layout, as text or JSON; `--ranks DIR` compares the ranks of a
 * distributed run (cmd_ranks.c). */
#define _GNU_SOURCE
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char HELP[] = "The key averages table of a trace, in PyTorch's layout.\n";

#define REPORT_OPTIONS(X)                                                                                         \
    X(SORT, "sort", "KEY", "the column to sort by (default self_cpu_time_total; the keys below)")                 \
    X(ROW_LIMIT, "row-limit", "N", "rows to print (default 100; -1 or 0: all)")                                   \
    X(MEMORY, "memory", NULL, "sort by self CPU memory (the memory table of profile_cpu)")                        \
    X(GROUP_BY_INPUT_SHAPE, "group-by-input-shape", NULL,                                                         \
      "one row per (name, input shapes) (traces with \"Input Dims\")")                                            \
    X(GROUP_BY_STACK, "group-by-stack", "N", "one row per (name, top N call sites) (traces with \"Call stack\")") \
    X(GROUP_BY, "group-by", "node|layer",                                                                         \
      "node: an ONNX Runtime profile's rows by node name (\"/fc1/Gemm\"), not operator\n"                         \
      "type; layer: one row per (name, layer), with a Layer column: the layer of the\n"                           \
      "tensor each operator names (ggml's nodes, named as llama.cpp names them: \"ffn_gate-7\")")                 \
    X(PEAK_MEMORY, "peak-memory", NULL, "a Peak Mem column (sort key cpu_memory_peak)")                           \
    X(FLOPS, "flops", NULL, "Total FLOPs and GFLOP/s columns (sort key flops)")                                   \
    X(PROFILER_COST, "profiler-cost", NULL,                                                                       \
      "a Profiler (est.) column: the profiler's own cost in each row's self time\n"                               \
      "(the ranges nested in it, each at the cost the capture measured at start)")                                \
    X(STATS, "stats", NULL,                                                                                       \
      "Self min / med / p90 / p99 / max / IQR / CV columns: each row's self time\n"                               \
      "per step (ProfilerStep#N), or per call when the trace has fewer than 2 steps")                             \
    X(SAMPLES, "samples", NULL,                                                                                   \
      "Samples, Samples % and Top native frame columns: each row's native samples\n"                              \
      "in its self time and the function most of them were in (sampled captures:\n"                               \
      "opprof record --sample, profile_cpu --sample, OPPROF_SAMPLE)")                                             \
    X(CPU_TIME, "cpu-time", NULL,                                                                                 \
      "On CPU total and Off CPU columns: each row's time on and off the CPU within\n"                             \
      "its CPU total (captures with off-CPU times)")                                                              \
    X(ROOFLINE, "roofline", NULL,                                                                                 \
      "each row against its roof: Bytes, FLOPs/B, Bound (compute, L1, L2, LLC,\n"                                 \
      "DRAM, or \"no model\" without FLOPs and bytes), % of roof, Above roof (its\n"                              \
      "time minus the roof's); under the table the time above roof per step and the\n"                            \
      "time in rows without a model. Bytes: stated ones, else each input read and\n"                              \
      "the output written once (a model from shapes). Sort key time_above_roof")                                  \
    X(MACHINE, "machine", "FILE",                                                                                 \
      "the ceilings of the machine the trace ran on (opprof machine --json);\n"                                   \
      "without it, the trace's own (profile_cpu --roofline records them), else\n"                                 \
      "this machine's, measured now, said on stderr")                                                             \
    X(WHAT_IF, "what-if", "CHANGES",                                                                              \
      "each step replayed with operators' times changed, its median\n"                                            \
      "predicted beside the measured one: NAME=roof (its roof: --machine, or\n"                                   \
      "this machine's), NAME=0.5x, NAME=+20us or NAME=-20us; comma-separated or\n"                                \
      "the option repeated. Nesting is honoured, and a run over a pool ends with\n"                               \
      "its slowest part; the replay without changes is given as its error")                                       \
    X(JSON, "json", NULL,                                                                                         \
      "the table's rows as JSON (the same columns, profiler_cost_us, the producer,\n"                             \
      "the warnings' texts, and each row's distributions per step and per call,\n"                                \
      "self and total; raw values)")                                                                              \
    X(WARNINGS, "warnings", NULL, "every warning on stderr (default: the first 3 and their count)")               \
    X(RANKS, "ranks", NULL,                                                                                       \
      "TRACE is a DIR of rank-0/, rank-1/... (profile_cpu --parallel): per operator,\n"                           \
      "min / median / max self time across ranks and the slowest rank; per\n"                                     \
      "rank, communication against compute, and the skew of collective starts")
TOOL_OPTIONS(REPORT_OPTIONS);

/* The sort keys, from the library's one list (with PyTorch's older names). */
static void sort_keys_help(FILE *out) {
    fputs("Sort keys (PyTorch's names):", out);
    int column = 80;
#define SORT_KEY_HELP(name, pytorch, older, field, per_call)                                      \
    {                                                                                             \
        const char *older_name = older;                                                           \
        int n = (int)strlen(pytorch) + (older_name ? (int)strlen(older_name) + 3 : 0) + 2;        \
        if (column + n > 78) fputs("\n ", out), column = 1;                                       \
        fprintf(out, " %s%s%s%s,", pytorch, older_name ? " (" : "", older_name ? older_name : "", \
                older_name ? ")" : "");                                                           \
        column += n;                                                                              \
    }
    OPPROF_SORT_KEYS(SORT_KEY_HELP)
#undef SORT_KEY_HELP
    fputs(" none\n", out);
}

/* The replay's answer: a line under the table, or the JSON object "what_if". */
static int what_if_text(const opprof_capture *cap, const opprof_machine *m, const opprof_what_if_change *changes,
                        size_t n, bool json, char **out) {
    opprof_what_if_result w;
    int rc = opprof_capture_what_if(cap, m, changes, n, &w);
    if (rc) return rc;
    char list[2048] = "";
    for (size_t k = 0, used = 0; k < n && used < sizeof list; k++) {
        const opprof_what_if_change *c = &changes[k];
        char value[48];
        if (c->kind == OPPROF_WHAT_IF_ROOF)
            snprintf(value, sizeof value, "roof");
        else if (c->kind == OPPROF_WHAT_IF_SCALE)
            snprintf(value, sizeof value, "%gx", c->value);
        else
            snprintf(value, sizeof value, "%+gus", c->value / 1e3);
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s=%s", k ? "," : "", c->name, value);
    }
    size_t size = 0;
    FILE *f = open_memstream(out, &size);
    if (!f) return OPPROF_ENOMEM;
    double change = w.measured_step_ns > 0 ? 100 * (w.predicted_step_ns / w.measured_step_ns - 1) : 0;
    if (json) {
        char *quoted = NULL;
        rc = opprof_json_string_to_string(list, &quoted);
        fprintf(f,
                "{\"changes\": %s, \"steps\": %zu, \"measured_step_us\": %.3f, \"predicted_step_us\": %.3f, "
                "\"predicted_change_percent\": %.3f, \"replay_error_percent\": %.3f, \"changed_calls\": %zu, "
                "\"unmodelled_calls\": %zu, \"changed_before_us\": %.3f, \"changed_after_us\": %.3f}",
                quoted ? quoted : "null", w.steps, w.measured_step_ns / 1e3, w.predicted_step_ns / 1e3, change,
                w.replay_error_percent, w.changed_calls, w.unmodelled_calls, w.changed_before_ns / 1e3,
                w.changed_after_ns / 1e3);
        opprof_free(quoted);
    } else {
        char measured[32], predicted[32], before[32], after[32];
        opprof_format_time_us(w.measured_step_ns / 1e3, measured, sizeof measured);
        opprof_format_time_us(w.predicted_step_ns / 1e3, predicted, sizeof predicted);
        opprof_format_time_us(w.changed_before_ns / 1e3, before, sizeof before);
        opprof_format_time_us(w.changed_after_ns / 1e3, after, sizeof after);
        fprintf(f,
                "What if %s: the median step (of %zu) %s measured, %s predicted (%+.1f%%); the replay without "
                "changes is %.2f%% off the measured. %zu call(s) changed, %s -> %s",
                list, w.steps, measured, predicted, change, w.replay_error_percent, w.changed_calls, before, after);
        if (w.unmodelled_calls)
            fprintf(f, "; %zu of them without a model (no FLOPs or bytes) kept their time", w.unmodelled_calls);
        fprintf(f, "\n");
    }
    int closed = tool_memstream_close(f, out);
    if (rc) free(*out), *out = NULL; /* the quoting's error */
    return rc ? rc : closed;
}

/* --group-by layer on a trace none of whose operators names a layer's tensor: said, not silently ignored. */
static void say_no_layers(const char *path, const opprof_averages *avg) {
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    for (size_t i = 0; i < n; i++)
        if (rows[i].layer >= 0) return;
    fprintf(stderr,
            "opprof: %s: --group-by layer: no operator of this trace names a layer's tensor (a \"name\" "
            "argument such as ggml's \"ffn_gate-7\"); its rows are by name, as without it\n",
            path);
}

/* What `opprof report` was asked. */
typedef struct report_args {
    opprof_sort_key sort;
    bool sort_given, json, ranks, all_warnings, by_node, roofline, needs_machine;
    int row_limit;
    const char *machine_path;
    opprof_what_if_change changes[32];
    size_t n_changes;
    opprof_averages_options group;
    opprof_table_options table;
} report_args;

/* One option (its id, optarg its argument); 0, or an exit status said on stderr. */
static int take_option(int c, report_args *a) {
    switch (c) {
    case OPT_SORT:
        a->sort_given = true;
        if (opprof_sort_key_parse(optarg, &a->sort))
            return tool_usage_error("report", "unknown sort key '%s' (run 'opprof help report' for the keys)", optarg);
        return 0;
    case OPT_ROW_LIMIT: return tool_parse_count(optarg, "--row-limit", &a->row_limit) ? TOOL_EXIT_USAGE : 0;
    case OPT_MEMORY: a->sort = OPPROF_SORT_SELF_CPU_MEMORY; return 0;
    case OPT_JSON: a->json = true; return 0;
    case OPT_GROUP_BY_INPUT_SHAPE: a->group.group_by_input_shape = true; return 0;
    case OPT_GROUP_BY:
        if (strcmp(optarg, "node") == 0)
            a->by_node = true;
        else if (strcmp(optarg, "layer") == 0)
            a->group.group_by_layer = true;
        else
            return tool_usage_error("report",
                                    "--group-by takes 'node' (an ONNX Runtime profile's nodes) or 'layer' (ggml's "
                                    "tensors' layers), not '%s'",
                                    optarg);
        return 0;
    case OPT_GROUP_BY_STACK:
        if (tool_parse_count(optarg, "--group-by-stack", &a->group.group_by_stack_n) || a->group.group_by_stack_n < 1)
            return tool_usage_error("report", "--group-by-stack takes a number of frames >= 1, not '%s'", optarg);
        return 0;
    case OPT_PEAK_MEMORY: a->table.peak_memory = true; return 0;
    case OPT_FLOPS: a->table.flops = true; return 0;
    case OPT_PROFILER_COST: a->table.profiler_cost = true; return 0;
    case OPT_RANKS: a->ranks = true; return 0;
    case OPT_WARNINGS: a->all_warnings = true; return 0;
    case OPT_STATS: a->table.stats = true; return 0;
    case OPT_SAMPLES: a->table.samples = true; return 0;
    case OPT_CPU_TIME: a->table.cpu_time = true; return 0;
    case OPT_ROOFLINE: a->roofline = true; return 0;
    case OPT_MACHINE: a->machine_path = optarg; return 0;
    case OPT_WHAT_IF: {
        char why[256] = "";
        size_t before = a->n_changes;
        if (opprof_what_if_parse(optarg, a->changes, sizeof a->changes / sizeof *a->changes, &a->n_changes, why,
                                 sizeof why))
            return tool_usage_error("report", "--what-if: %s", why);
        for (size_t k = before; k < a->n_changes; k++) a->needs_machine |= a->changes[k].kind == OPPROF_WHAT_IF_ROOF;
        return 0;
    }
    default: return TOOL_EXIT_USAGE;
    }
}

/* The table (or its JSON, or the roofline's) of cap into *text. */
static int table_text(const char *path, const opprof_capture *cap, report_args *a, const opprof_machine *machine,
                      char **text) {
    opprof_averages *avg = NULL;
    a->table.sort = a->sort;
    a->table.row_limit = a->row_limit;
    if (a->json) a->table.profiler_cost = a->table.samples = a->table.cpu_time = true; /* JSON always has them */
    a->group.distributions = a->json || a->table.stats;
    int rc = opprof_capture_averages_ex(cap, &a->group, &avg);
    if (!rc && a->group.group_by_layer) say_no_layers(path, avg);
    /* a profile of device time only (TensorRT's layers): sorted by it, unless asked otherwise */
    if (!rc && !a->sort_given && a->sort == OPPROF_SORT_SELF_CPU_TIME && !opprof_averages_self_total_ns(avg) &&
        opprof_averages_self_device_total_ns(avg) > 0)
        a->table.sort = OPPROF_SORT_SELF_DEVICE_TIME;
    if (!rc && a->roofline)
        rc = opprof_averages_roofline_to_string(avg, &a->table, machine, a->json, text);
    else if (!rc)
        rc = a->json ? opprof_averages_json_to_string(avg, &a->table, text)
                     : opprof_averages_table_to_string(avg, &a->table, text);
    opprof_averages_free(avg);
    return rc;
}

/* What follows the table: a flight save's reason, a sampled capture's
 * functions, the what-if replay; the table's JSON object left open for them. */
typedef struct report_extras {
    char *flight, *functions, *functions_json, *what_if;
} report_extras;

static int extras_text(const opprof_capture *cap, const report_args *a, const opprof_machine *machine, char *text,
                       report_extras *x) {
    int rc = 0;
    if (!a->json && opprof_capture_get_info(cap).flight.reason[0])
        rc = opprof_capture_flight_to_string(cap, a->row_limit, &x->flight);
    size_t n_samples = 0;
    opprof_capture_samples(cap, &n_samples);
    if (!rc && !a->json && n_samples)
        rc = opprof_capture_functions_to_string(cap, a->row_limit > 0 ? a->row_limit : 50, &x->functions);
    if (!rc && a->json && n_samples)
        rc = opprof_capture_functions_json_to_string(cap, a->row_limit, &x->functions_json);
    if (!rc && a->n_changes)
        rc = what_if_text(cap, a->needs_machine ? machine : NULL, a->changes, a->n_changes, a->json, &x->what_if);
    if (!rc && a->json && (x->functions_json || x->what_if)) {
        char *close = strrchr(text, '}');
        if (close) *close = '\0'; /* the object's end follows them */
    }
    return rc;
}

static void extras_print(const report_args *a, report_extras *x) {
    if (x->flight) printf("\n\n%s", x->flight);
    if (x->functions) printf("\n\n%s", x->functions);
    if (x->functions_json) printf(",\n  \"functions\": %s%s", x->functions_json, x->what_if ? "" : "\n}\n");
    if (x->what_if) printf(a->json ? ",\n  \"what_if\": %s\n}\n" : "\n%s", x->what_if);
}

static void extras_free(report_extras *x) {
    free(x->what_if);
    opprof_free(x->functions_json);
    opprof_free(x->flight);
    opprof_free(x->functions);
}

static int run(int argc, char **argv) {
    report_args a = {.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = 100};
    for (int c, rc; (c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END;)
        if ((rc = take_option(c, &a))) return rc;
    if (optind != argc - 1)
        return tool_usage_error("report", "%s", a.ranks ? "report --ranks takes one DIR" : "report takes one TRACE");
    const char *path = argv[optind];
    if (a.ranks) return tool_ranks_report(path, a.json);
    if (a.sort == OPPROF_SORT_TIME_ABOVE_ROOF && !a.roofline)
        return tool_usage_error("report", "--sort time_above_roof needs --roofline");
    if (a.machine_path && !a.roofline && !a.needs_machine)
        return tool_usage_error("report", "--machine is for --roofline and --what-if NAME=roof");
    opprof_machine machine;
    opprof_capture *cap;
    int rc = tool_load_by(path, a.by_node, &cap);
    if (rc) return rc;
    if ((a.roofline || a.needs_machine) && (rc = tool_machine_for(a.machine_path, cap, &machine))) {
        opprof_capture_free(cap);
        return rc;
    }
    tool_say_warnings(path, cap, a.all_warnings);
    if (a.by_node &&
        opprof_capture_get_info(cap).producer != OPPROF_PRODUCER_ONNXRUNTIME) /* said, not silently ignored */
        fprintf(stderr,
                "opprof: %s: --group-by node applies to ONNX Runtime's profiles (their rows by node name); "
                "this trace was written by %s: its rows are by name, as without it\n",
                path, opprof_producer_name(opprof_capture_get_info(cap).producer));
    char *text = NULL;
    report_extras x = {0};
    rc = table_text(path, cap, &a, &machine, &text);
    if (!rc) rc = extras_text(cap, &a, &machine, text, &x);
    opprof_capture_free(cap);
    int status = tool_emit(path, rc, text, NULL);
    if (status == TOOL_EXIT_OK) extras_print(&a, &x);
    extras_free(&x);
    return status;
}

static const char EXAMPLES[] =
    "  opprof report trace.json                           # PyTorch's table, sorted by self CPU time\n"
    "  opprof report --sort self_cuda_time_total --row-limit 10 trace.json.gz\n"
    "  opprof report --group-by-input-shape --stats trace.json\n"
    "  opprof report --group-by node onnxruntime_profile.json   # ONNX Runtime's nodes\n";

TOOL_COMMAND(report, "report TRACE [OPTIONS]", "the key averages table of a trace (as key_averages().table())",
             sort_keys_help);
