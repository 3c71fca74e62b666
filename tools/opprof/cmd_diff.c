/* cmd_diff.c - `opprof diff`: two traces compared operator by operator, or
 * (--stat) two sets of steps compared with confidence (stat_diff.c). */
#define _GNU_SOURCE
#include "tool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char HELP[] = "Compare two traces per operator: calls, self and total CPU time, self CPU memory,\n"
                           "and self device time (Self CUDA...) when both traces have it, before and after, the\n"
                           "change and the ratio, sorted by the largest change in self time (CPU or device);\n"
                           "kernels are rows of their own; totals; notes where the two captures' configurations\n"
                           "differ. Each side's times are its means per step (ProfilerStep#N; an aggregate\n"
                           "profile's runs), so that traces of different step counts compare.\n";

#define DIFF_OPTIONS(X)                                                                             \
    X(ROW_LIMIT, "row-limit", "N", "rows to print (default 30; -1 or 0: all)")                      \
    X(JSON, "json", NULL, "the comparison as JSON")                                                 \
    X(HTML, "html", "OUT",                                                                          \
      "write it as a self-contained HTML page (a sortable table with\n"                             \
      "before/after bars) to OUT instead")                                                          \
    X(MATCH, "match", "HOW",                                                                        \
      "name: rows of the same name; layers: the same model's layers in order,\n"                    \
      "each side's operators read as classes of work (aten::linear = Gemm,\n"                       \
      "FusedGemm = aten::linear + aten::relu); default: layers when the\n"                          \
      "runtimes differ (ONNX Runtime or TensorRT against PyTorch or nn), else name")                \
    X(STAT, "stat", NULL,                                                                           \
      "BEFORE and AFTER are each a trace or a directory of traces (*.json,\n"                       \
      "*.json.gz, *.pftrace, in it or below it; not summary.json): every row's self\n"              \
      "time per step (ProfilerStep#N; a trace without steps is one) is its sample.\n"               \
      "Per row: the medians, IQRs, the shift of the median (Hodges-Lehmann) with its\n"             \
      "interval, the Mann-Whitney p-value Holm-corrected over the rows and the total\n"             \
      "(self time per step), significant or not; significant rows first; notes when a\n"            \
      "side is too noisy to detect the change asked, with the steps it would need.\n"               \
      "Samples must be independent: interleave the runs of the two sides. With it:")                \
    X(ALPHA, "alpha", "A", "significance level (default 0.05); intervals at 1 - A")                 \
    X(DETECT, "detect", "PCT",                                                                      \
      "the change the noise notes are about (default 5%, or the\n"                                  \
      "first gate's bound)")                                                                        \
    X(FAIL_IF, "fail-if", "GATE",                                                                   \
      "'ROW > +3%' or 'ROW < -3%' (ROW: a name, or 'total'): exit 3\n"                              \
      "when ROW's change is beyond the bound and significant as a test of\n"                        \
      "its own, one-sided in the gate's direction (p < alpha / the number\n"                        \
      "of gates); repeatable")                                                                      \
    X(WHAT_IF, "what-if", "CHANGES",                                                                \
      "the prediction to test: BEFORE's steps replayed with these changes\n"                        \
      "(as report --what-if: NAME=roof, =0.5x, =+20us), the predicted step against\n"               \
      "AFTER's measured one: confirmed when the predicted shift is within the\n"                    \
      "step row's interval, else refuted, with how far off it is")                                  \
    X(MACHINE, "machine", "FILE", "the ceilings for NAME=roof (default: this machine's, measured)") \
    X(GROUP_BY, "group-by", "layer",                                                                \
      "rows per (name, layer), \"NAME (layer N)\": the layer of the tensor each call\n"             \
      "names (ggml's nodes, named as llama.cpp names them: \"ffn_gate-7\"), gated\n"                \
      "like any row ('ggml::MUL_MAT (layer 7) > +3%')")
TOOL_OPTIONS(DIFF_OPTIONS);

enum { MAX_GATES = 32 };

/* "5%", "5" or "0.05"? A percentage: "5%" or "5" is 5 %. */
static int parse_percent(const char *text, const char *flag, double *out) {
    char *end;
    double v = strtod(text, &end);
    if (end == text || (*end && strcmp(end, "%")) || !isfinite(v) || v <= 0 || v >= 1000) {
        fprintf(stderr, "opprof: %s takes a percentage such as 5%%, not '%s'\n", flag, text);
        return -1;
    }
    *out = v / 100;
    return 0;
}

static int parse_alpha(const char *text, double *out) {
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v > 0 && v <= 0.5)) {
        fprintf(stderr, "opprof: --alpha takes a level in (0, 0.5], such as 0.05, not '%s'\n", text);
        return -1;
    }
    *out = v;
    return 0;
}

typedef struct diff_args {
    int row_limit;
    opprof_diff_match match;
    bool json, stat;
    const char *html;
    tool_stat_request stat_req;
    opprof_stat_gate gates[MAX_GATES];
    opprof_what_if_change what_if[MAX_GATES];
} diff_args;

static int parse(int argc, char **argv, diff_args *a) {
    tool_stat_request *r = &a->stat_req;
    bool stat_only = false;
    for (int c; (c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END;) {
        char why[1024];
        switch (c) {
        case OPT_ROW_LIMIT:
            if (tool_parse_count(optarg, "--row-limit", &a->row_limit)) return TOOL_EXIT_USAGE;
            break;
        case OPT_JSON: a->json = true; break;
        case OPT_MATCH:
            if (!strcmp(optarg, "name"))
                a->match = OPPROF_DIFF_MATCH_NAME;
            else if (!strcmp(optarg, "layers"))
                a->match = OPPROF_DIFF_MATCH_LAYERS;
            else
                return tool_usage_error("diff", "--match takes name or layers, not '%s'", optarg);
            break;
        case OPT_HTML: a->html = optarg; break;
        case OPT_STAT: a->stat = true; break;
        case OPT_ALPHA:
            if (parse_alpha(optarg, &r->alpha)) return TOOL_EXIT_USAGE;
            stat_only = true;
            break;
        case OPT_DETECT:
            if (parse_percent(optarg, "--detect", &r->detect)) return TOOL_EXIT_USAGE;
            stat_only = true;
            break;
        case OPT_FAIL_IF:
            if (r->n_gates == MAX_GATES) return tool_usage_error("diff", "at most %d --fail-if gates", MAX_GATES);
            if (opprof_stat_gate_parse(optarg, &a->gates[r->n_gates], why, sizeof why))
                return tool_usage_error("diff", "--fail-if %s", why);
            r->n_gates++;
            stat_only = true;
            break;
        case OPT_WHAT_IF:
            if (opprof_what_if_parse(optarg, a->what_if, MAX_GATES, &r->n_what_if, why, sizeof why))
                return tool_usage_error("diff", "--what-if: %s", why);
            r->what_if = a->what_if;
            stat_only = true;
            break;
        case OPT_MACHINE:
            r->machine_path = optarg;
            stat_only = true;
            break;
        case OPT_GROUP_BY:
            if (strcmp(optarg, "layer"))
                return tool_usage_error("diff", "--group-by takes layer, not '%s' (report --group-by groups one trace)",
                                        optarg);
            r->by_layer = stat_only = true;
            break;
        default: return TOOL_EXIT_USAGE;
        }
    }
    if (optind != argc - 2) return tool_usage_error("diff", "diff takes two traces, BEFORE and AFTER");
    if (a->json && a->html) return tool_usage_error("diff", "diff takes --json or --html, not both");
    if (stat_only && !a->stat)
        return tool_usage_error("diff",
                                "--alpha, --detect, --fail-if, --what-if, --machine and --group-by go with --stat");
    if (!r->detect && r->n_gates) r->detect = fabs(a->gates[0].bound) > 0 ? fabs(a->gates[0].bound) : 0;
    return 0;
}

static int run(int argc, char **argv) {
    diff_args a = {.row_limit = 30};
    int rc = parse(argc, argv, &a);
    if (rc) return rc;
    opprof_diff_format format = a.html ? OPPROF_DIFF_HTML : a.json ? OPPROF_DIFF_JSON : OPPROF_DIFF_TEXT;
    if (a.stat) {
        a.stat_req.row_limit = a.row_limit;
        a.stat_req.format = format;
        a.stat_req.html = a.html;
        a.stat_req.gates = a.gates;
        return tool_stat_diff(argv[optind], argv[optind + 1], &a.stat_req);
    }
    opprof_capture *before = NULL, *after = NULL;
    rc = tool_load(argv[optind], &before);
    if (!rc) rc = tool_load(argv[optind + 1], &after);
    if (rc) {
        opprof_capture_free(before);
        return rc;
    }
    char *text = NULL;
    opprof_diff_options options = {a.row_limit, format, a.match};
    rc = opprof_capture_diff_to_string_ex(before, after, &options, &text);
    opprof_capture_free(before);
    opprof_capture_free(after);
    return tool_emit("diff", rc, text, a.html);
}

static const char EXAMPLES[] =
    "  opprof diff before.json after.json                 # per operator, the largest change first\n"
    "  opprof diff pytorch_trace.json ort_profile.json    # two runtimes: the same model, layer by layer\n"
    "  opprof diff --stat runs/main runs/branch --fail-if 'total > +3%'   # is the change real?\n";

TOOL_COMMAND(diff, "diff BEFORE AFTER [OPTIONS]",
             "compare two traces operator by operator, or two sets of steps with confidence", NULL);
