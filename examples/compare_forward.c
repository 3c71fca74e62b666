/*
 * compare_forward - the seed's last step: compare variants of the forward
 * pass without the profiler, same inputs, warmed up, measured repeatedly,
 * after checking that every variant computes the same output.
 *
 * Variants of Linear(256,512) > ReLU > Linear(512,64):
 *   "1 thread"   the model as profile_cpu runs it (packed weights, one thread)
 *   "2 threads"  the same with nn_set_num_threads(2)
 *   "unpacked"   nn_linear on the plain weights (packs them at every call)
 * Rows: batch sizes. Output: each measurement in PyTorch's printout (with
 * its median's 95 % interval, and a warning when the precision asked was not
 * reached), then a compare table with ratios to "1 thread", starred where a
 * variant differs from it (Mann-Whitney test of the blocks).
 */
#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/stats.h>
#include <opprof/timer.h>

#include "../tools/exit_codes.h" /* the statuses of every opprof tool */

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct variant_ctx {
    nn_module *model;
    nn_tensor *w1, *b1, *w2, *b2; /* for the unpacked variant */
    nn_tensor *x;
    int threads;
    bool unpacked;
} variant_ctx;

static int run_variant(const variant_ctx *v, nn_tensor **out) {
    nn_set_num_threads(v->threads);
    if (!v->unpacked) return nn_module_forward(v->model, v->x, out);
    nn_tensor *h = NULL, *r = NULL;
    int rc = nn_linear(v->x, v->w1, v->b1, &h);
    if (!rc) rc = nn_relu(h, &r);
    nn_tensor_free(h);
    if (!rc) rc = nn_linear(r, v->w2, v->b2, out);
    nn_tensor_free(r);
    return rc;
}

static void forward_once(void *ctx) {
    nn_tensor *y = NULL;
    run_variant(ctx, &y);
    nn_tensor_free(y);
}

/* A time in microseconds for JSON, null when there is none. */
static const char *json_us(double seconds, char *buf, size_t size) {
    if (isnan(seconds)) return "null";
    snprintf(buf, size, "%.3f", seconds * 1e6);
    return buf;
}

/* As the compare table's "*": the blocks of the two differ (p < 0.05). */
static bool differs(const opprof_measurement *a, const opprof_measurement *b) {
    opprof_shift s;
    return a != b && !opprof_shift_of(a->times, a->n_times, b->times, b->n_times, 0.95, &s) && s.p < 0.05;
}

static double max_abs_diff(const nn_tensor *a, const nn_tensor *b) {
    double worst = 0;
    for (int64_t i = 0; i < nn_tensor_numel(a); i++) worst = fmax(worst, fabs((double)a->data[i] - b->data[i]));
    return worst;
}

int main(int argc, char **argv) {
    static const struct option longs[] = {{"json", no_argument, 0, 'j'},
                                          {"min-time", required_argument, 0, 't'},
                                          {"tolerance", required_argument, 0, 'e'},
                                          {"perturb", no_argument, 0, 'p'},
                                          {"precision", required_argument, 0, 'P'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    bool json = false, perturb = false;
    double min_time = 0.2, tolerance = 0, precision = 0.01;
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 't': min_time = atof(optarg); break;
        case 'e': tolerance = atof(optarg); break;
        case 'p': perturb = true; break;
        case 'P': precision = atof(optarg) / 100; break;
        case 'h':
            printf("usage: compare_forward [--json] [--min-time SECONDS] [--tolerance T] [--precision PCT]\n\n"
                   "Checks that the variants of profile_cpu's forward pass compute the same output (bit\n"
                   "for bit, or within an absolute tolerance T), then measures each one with\n"
                   "blocked_autorange(SECONDS, default 0.2) and prints a compare table.\n"
                   "  --precision PCT  the precision asked of each median: its 95%% interval within\n"
                   "              +-PCT %% (default 1); a measurement that misses it says so\n"
                   "  --perturb   change the unpacked variant's weights (shows the refusal)\n"
                   "When outputs differ, nothing is measured.\n");
            tool_exit_codes_text(stdout);
            return 0;
        default: return TOOL_EXIT_USAGE; /* as every opprof tool */
        }
    }
    if (!(min_time > 0) || tolerance < 0 || !(precision >= 0 && precision < 1)) {
        fprintf(stderr, "compare_forward: --min-time must be > 0, --tolerance >= 0 and --precision in [0, 100)\n");
        return TOOL_EXIT_USAGE;
    }

    nn_manual_seed(7);
    nn_module *layers[3], *model;
    if (nn_linear_new(&layers[0], 256, 512) || nn_relu_new(&layers[1]) || nn_linear_new(&layers[2], 512, 64) ||
        nn_sequential_new(&model, layers, 3)) {
        fprintf(stderr, "compare_forward: cannot build the model\n");
        return TOOL_EXIT_FAILED;
    }
    nn_module_eval(model);
    /* the unpacked variant's weights: contiguous copies of the model's */
    nn_tensor *w1, *b1, *w2, *b2;
    nn_contiguous(nn_module_parameter(model, "0.weight"), &w1);
    nn_contiguous(nn_module_parameter(model, "0.bias"), &b1);
    nn_contiguous(nn_module_parameter(model, "2.weight"), &w2);
    nn_contiguous(nn_module_parameter(model, "2.bias"), &b2);
    if (perturb) w1->data[0] += 0.5f;

    static const int batches[] = {128, 32};
    static const struct {
        const char *name;
        int threads;
        bool unpacked;
    } kinds[] = {{"1 thread", 1, false}, {"2 threads", 2, false}, {"unpacked", 1, true}};
    enum { NB = 2, NK = 3 };
    variant_ctx ctx[NB][NK];
    memset(ctx, 0, sizeof ctx);
    opprof_measurement *ms[NB * NK] = {0};
    int status = 0;
    for (int b = 0; b < NB && !status; b++) {
        nn_tensor *x = NULL;
        nn_tensor_randn(&x, 2, (int64_t[]){batches[b], 256});
        nn_tensor *reference = NULL;
        for (int k = 0; k < NK; k++) {
            ctx[b][k] = (variant_ctx){model, w1, b1, w2, b2, x, kinds[k].threads, kinds[k].unpacked};
            nn_tensor *y = NULL;
            if (run_variant(&ctx[b][k], &y)) {
                fprintf(stderr, "compare_forward: variant '%s' failed\n", kinds[k].name);
                status = 1;
                break;
            }
            if (!reference) {
                reference = y;
                continue;
            }
            double diff = max_abs_diff(reference, y);
            bool same = tolerance == 0 ? nn_tensor_equal(reference, y) : diff <= tolerance;
            if (!same) {
                fprintf(stderr,
                        "compare_forward: outputs differ: '%s' against '%s' at batch %d: max abs difference %g "
                        "(tolerance %g); refusing to compare timings\n",
                        kinds[k].name, kinds[0].name, batches[b], diff, tolerance);
                status = 1;
            }
            nn_tensor_free(y);
        }
        nn_tensor_free(reference);
    }
    if (status) goto done;

    char sub[NB][32];
    for (int b = 0; b < NB; b++) {
        snprintf(sub[b], sizeof sub[b], "batch %d", batches[b]);
        for (int k = 0; k < NK; k++) {
            opprof_timer t = opprof_timer_default();
            t.stmt = forward_once;
            t.ctx = &ctx[b][k];
            t.label = "forward";
            t.sub_label = sub[b];
            t.description = kinds[k].name;
            t.num_threads = kinds[k].threads;
            t.precision = precision;
            for (int w = 0; w < 10; w++) forward_once(&ctx[b][k]); /* warm up */
            if (opprof_timer_blocked_autorange(&t, min_time, &ms[b * NK + k])) {
                fprintf(stderr, "compare_forward: measuring failed\n");
                status = 1;
                goto done;
            }
        }
    }
    if (json) {
        char low[32], high[32];
        printf("{\n  \"unit\": \"us\",\n  \"rows\": [\n");
        for (int i = 0; i < NB * NK; i++)
            printf("    {\"sub_label\": \"%s\", \"description\": \"%s\", \"median_us\": %.3f, \"iqr_us\": %.3f, "
                   "\"median_low_us\": %s, \"median_high_us\": %s, \"precision_reached\": %s, "
                   "\"ratio_to_1_thread\": %.4f, \"differs_from_1_thread\": %s, \"measurements\": %zu, "
                   "\"runs_per_measurement\": %lld}%s\n",
                   ms[i]->sub_label, ms[i]->description, ms[i]->median * 1e6, ms[i]->iqr * 1e6,
                   json_us(ms[i]->median_low, low, sizeof low), json_us(ms[i]->median_high, high, sizeof high),
                   ms[i]->precision_reached ? "true" : "false", ms[i]->median / ms[i / NK * NK]->median,
                   differs(ms[i / NK * NK], ms[i]) ? "true" : "false", ms[i]->n_times, (long long)ms[i]->number_per_run,
                   i + 1 < NB * NK ? "," : "");
        printf("  ]\n}\n");
    } else {
        for (int i = 0; i < NB * NK; i++) {
            char *text;
            opprof_measurement_text_to_string(ms[i], &text);
            printf("%s\n", text);
            opprof_free(text);
        }
        opprof_compare_options opt = {.baseline = 0, .colorize = isatty(1)};
        char *table;
        opprof_compare_table_to_string((const opprof_measurement *const *)ms, NB * NK, &opt, &table);
        fputs(table, stdout);
        opprof_free(table);
    }
done:
    for (int i = 0; i < NB * NK; i++) opprof_measurement_free(ms[i]);
    for (int b = 0; b < NB; b++) nn_tensor_free(ctx[b][0].x);
    nn_tensor_free(w1);
    nn_tensor_free(b1);
    nn_tensor_free(w2);
    nn_tensor_free(b2);
    nn_module_free(model);
    nn_release_cached_memory();
    return status;
}
