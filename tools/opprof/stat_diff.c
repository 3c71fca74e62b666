/* stat_diff.c - `opprof diff --stat BEFORE AFTER`: each side a trace or a
 * directory of traces (its subdirectories too), compared with confidence,
 * and the CI gates (--fail-if) that decide the exit status. */
#define _GNU_SOURCE
#include "tool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct side {
    opprof_capture **caps;
    size_t n;
} side;

static void side_free(side *s) {
    for (size_t i = 0; i < s->n; i++) opprof_capture_free(s->caps[i]);
    free(s->caps);
}

/* A side: one trace, or every trace of a directory. */
static int load_side(const char *path, side *s) {
    char **names = NULL;
    size_t n = 0;
    int rc = tool_expand_traces(&path, 1, &names, &n);
    if (rc == 0 && !(s->caps = calloc(n, sizeof *s->caps))) {
        fprintf(stderr, "opprof: %s: %s\n", path, opprof_strerror(OPPROF_ENOMEM));
        rc = TOOL_EXIT_UNREADABLE;
    }
    for (size_t i = 0; !rc && i < n; i++) {
        rc = tool_load(names[i], &s->caps[i]);
        if (!rc) s->n++;
    }
    tool_free_list(names, n);
    return rc;
}

/* Each gate, checked and said on stderr; TOOL_EXIT_REGRESSED when one trips. */
static int check_gates(const opprof_stat_diff *d, const opprof_stat_gate *gates, size_t n) {
    int status = 0;
    for (size_t i = 0; i < n; i++) {
        bool tripped = false;
        char why[1024];
        int rc = opprof_stat_gate_check(d, &gates[i], n, &tripped, why, sizeof why);
        fprintf(stderr, "opprof: %s\n", why);
        if (rc) return tool_usage_error("diff", "a gate must name a row of the comparison, or 'total'");
        if (tripped) status = TOOL_EXIT_REGRESSED;
    }
    return status;
}

/* BEFORE's steps replayed with the changes: the predicted median step, as
 * BEFORE's median step times the mean of each capture's predicted over
 * measured, in *ratio. The replay's error (out of memory), or OPPROF_EINVAL
 * when a capture has no step to replay or the roofs cannot be had. */
static int predicted_ratio(const side *s, const tool_stat_request *req, double *ratio) {
    *ratio = NAN;
    bool roof = false;
    for (size_t k = 0; k < req->n_what_if; k++) roof |= req->what_if[k].kind == OPPROF_WHAT_IF_ROOF;
    opprof_machine m;
    if (!s->n || (roof && tool_machine_for(req->machine_path, s->caps[0], &m))) return OPPROF_EINVAL;
    double sum = 0;
    for (size_t i = 0; i < s->n; i++) {
        opprof_what_if_result w;
        int rc = opprof_capture_what_if(s->caps[i], roof ? &m : NULL, req->what_if, req->n_what_if, &w);
        if (rc || !(w.measured_step_ns > 0)) return rc ? rc : OPPROF_EINVAL;
        sum += w.predicted_step_ns / w.measured_step_ns;
    }
    *ratio = sum / (double)s->n;
    return 0;
}

/* The prediction against AFTER's measured step: confirmed when the predicted
 * shift is inside the step row's interval. A line (text) or an object, in
 * *text (NULL: no step row to set it against); OPPROF_ENOMEM. */
static int prediction_text(const opprof_stat_diff *d, double ratio, const tool_stat_request *req, bool json,
                           char **text) {
    *text = NULL;
    const opprof_stat_row *step = opprof_stat_diff_step_duration(d);
    if (!step) return 0;
    char list[1024] = "";
    for (size_t k = 0, used = 0; k < req->n_what_if && used < sizeof list; k++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", k ? "," : "", req->what_if[k].name);
    double before = step->before.median, predicted = before * ratio, measured = step->after.median;
    double shift = predicted - before, lo = step->shift.lo, hi = step->shift.hi;
    bool confirmed = shift >= lo && shift <= hi;
    /* how far the predicted shift is from the measured one (Hodges-Lehmann), in BEFORE's step: the
     * medians of whole steps move with the runs' spread, the shift between the sides less */
    double off = before > 0 ? 100 * (shift - step->shift.estimate) / before : NAN;
    size_t size = 0;
    FILE *f = open_memstream(text, &size);
    if (!f) return OPPROF_ENOMEM;
    if (json)
        fprintf(f,
                "{\"changed\": \"%s\", \"before_step_us\": %.3f, \"predicted_step_us\": %.3f, "
                "\"measured_step_us\": %.3f, \"predicted_shift_us\": %.3f, \"measured_shift_us\": %.3f, "
                "\"interval_us\": [%.3f, %.3f], \"confirmed\": %s, \"shift_off_percent\": %.3f}",
                list, before / 1e3, predicted / 1e3, measured / 1e3, shift / 1e3, step->shift.estimate / 1e3, lo / 1e3,
                hi / 1e3, confirmed ? "true" : "false", off);
    else
        fprintf(f,
                "Prediction (%s changed, BEFORE replayed): step %.3fus -> %.3fus predicted, %.3fus measured; "
                "the shift %+.3fus predicted, %+.3fus measured (interval %+.3fus to %+.3fus): %s, the predicted "
                "shift %+.1f%% of the step off the measured one\n",
                list, before / 1e3, predicted / 1e3, measured / 1e3, shift / 1e3, step->shift.estimate / 1e3, lo / 1e3,
                hi / 1e3, confirmed ? "confirmed" : "refuted", off);
    return tool_memstream_close(f, text);
}

/* Whether a row is a layer's ("NAME (layer N)"). */
static bool any_layer(const opprof_stat_diff *d) {
    size_t n = 0;
    const opprof_stat_row *rows = opprof_stat_diff_rows(d, &n);
    for (size_t i = 0; i < n; i++)
        if (strstr(rows[i].key, " (layer ")) return true;
    return false;
}

int tool_stat_diff(const char *before, const char *after, const tool_stat_request *req) {
    side sides[2] = {{0}, {0}};
    int rc = load_side(before, &sides[0]);
    if (!rc) rc = load_side(after, &sides[1]);
    opprof_stat_diff *d = NULL;
    if (!rc) {
        opprof_stat_options o = {.alpha = req->alpha, .detect = req->detect};
        opprof_averages_options grouping = {.group_by_layer = req->by_layer};
        int err = opprof_stat_diff_new_ex((const opprof_capture *const *)sides[0].caps, sides[0].n,
                                          (const opprof_capture *const *)sides[1].caps, sides[1].n, &o, &grouping, &d);
        if (!err && req->by_layer && !any_layer(d))
            fprintf(stderr, "opprof: diff --stat --group-by layer: no operator names a layer's tensor (llama.cpp's "
                            "\"ffn_gate-7\"); the rows are by name\n");
        if (err) {
            fprintf(stderr, "opprof: diff --stat: %s\n", opprof_strerror(err));
            rc = TOOL_EXIT_UNREADABLE;
        }
    }
    double ratio = NAN;
    int replayed = !rc && req->n_what_if ? predicted_ratio(&sides[0], req, &ratio) : 0;
    side_free(&sides[0]);
    side_free(&sides[1]);
    if (rc) return rc;
    if (replayed) {
        fprintf(stderr, "opprof: diff --stat --what-if: BEFORE could not be replayed%s%s\n",
                replayed == OPPROF_ENOMEM ? ": " : "", replayed == OPPROF_ENOMEM ? opprof_strerror(replayed) : "");
        opprof_stat_diff_free(d);
        return TOOL_EXIT_UNREADABLE;
    }
    char *text = NULL, *prediction = NULL;
    int err = opprof_stat_diff_to_string(d, req->row_limit, req->format, &text);
    if (!err && req->n_what_if) err = prediction_text(d, ratio, req, req->format == OPPROF_DIFF_JSON, &prediction);
    if (prediction && req->format == OPPROF_DIFF_JSON) { /* the object gains "prediction" */
        char *close = strrchr(text, '}');
        if (close) *close = '\0';
    }
    int status = tool_emit("diff", err, text, req->html);
    if (prediction && !status) {
        if (req->format == OPPROF_DIFF_JSON)
            printf(",\n  \"prediction\": %s\n}\n", prediction);
        else if (req->format == OPPROF_DIFF_TEXT)
            printf("\n%s", prediction);
        else
            fprintf(stderr, "opprof: %s", prediction);
    }
    free(prediction);
    if (!status) status = check_gates(d, req->gates, req->n_gates);
    opprof_stat_diff_free(d);
    return status;
}
