/* timer_text.c - measurements as text: the Measurement printout and
 * torch.utils.benchmark.Compare's table (its own layout, PyTorch's; the
 * ratios through render.c's ratio unit). */
#include "render/render.h"

#include <opprof/stats.h>
#include <opprof/timer.h>

#include <math.h>
#include <string.h>

/* PyTorch's select_unit: ns, us, ms or s by the order of magnitude. */
static void select_unit(double seconds, const char **unit, double *scale) {
    int k = seconds > 0 ? (int)floor(log10(seconds) / 3.0) : -3;
    switch (k) {
    case -3: *unit = "ns", *scale = 1e-9; break;
    case -2: *unit = "us", *scale = 1e-6; break;
    case -1: *unit = "ms", *scale = 1e-3; break;
    default:
        if (k < -3)
            *unit = "ns", *scale = 1e-9;
        else
            *unit = "s", *scale = 1;
        break;
    }
}

static void title(const opprof_measurement *m, opprof__strbuf *sb) {
    if (m->label[0]) {
        opprof__sb_puts(sb, m->label);
        if (m->sub_label[0]) opprof__sb_printf(sb, ": %s", m->sub_label);
    } else {
        opprof__sb_puts(sb, m->sub_label[0] ? m->sub_label : "stmt");
    }
}

/* A precision asked and not reached: by how much, and the blocks that would
 * reach it (the interval narrows as 1 / sqrt(blocks)). */
static void precision_warning(const opprof_measurement *m, opprof__strbuf *sb) {
    if (m->precision_reached || !(m->precision_asked > 0)) return;
    double got = opprof_measurement_precision(m);
    if (isnan(got)) {
        opprof__sb_printf(sb,
                          "  WARNING: %zu measurement(s) give the median no 95%% interval (6 are needed); "
                          "+-%.1f%% was asked.\n",
                          m->n_times, 100 * m->precision_asked);
        return;
    }
    double blocks = ceil((double)m->n_times * (got / m->precision_asked) * (got / m->precision_asked));
    opprof__sb_printf(sb,
                      "  WARNING: the median's 95%% interval is +-%.1f%%, wider than the +-%.1f%% asked: "
                      "about %.0f measurements would reach it.\n",
                      100 * got, 100 * m->precision_asked, blocks);
}

static int measurement_text_to_string_here(const opprof_measurement *m, char **out_text) {
    if (!m || !out_text) return OPPROF_EINVAL;
    const char *unit;
    double scale;
    select_unit(m->median, &unit, &scale);
    size_t n = m->n_times;
    opprof__strbuf sb = {0};
    title(m, &sb);
    opprof__sb_puts(&sb, "\n");
    if (m->description[0]) opprof__sb_printf(&sb, "%s\n", m->description);
    opprof__sb_printf(&sb, "  %s%.2f %s\n", n > 1 ? "Median: " : "", m->median / scale, unit);
    if (n >= 4)
        opprof__sb_printf(&sb, "  IQR:    %.2f %s (%.2f to %.2f)\n", m->iqr / scale, unit, m->q1 / scale,
                          m->q3 / scale);
    if (!isnan(m->median_low) && m->median > 0)
        opprof__sb_printf(&sb, "  95%% CI: %.2f to %.2f %s (%+.1f%% to %+.1f%% of the median)\n", m->median_low / scale,
                          m->median_high / scale, unit, 100 * (m->median_low / m->median - 1),
                          100 * (m->median_high / m->median - 1));
    opprof__sb_printf(&sb, "  %zu measurement%s, %lld runs %s %d thread%s\n", n, n > 1 ? "s" : "",
                      (long long)m->number_per_run, n > 1 ? "per measurement," : ",", m->num_threads,
                      m->num_threads > 1 ? "s" : "");
    if (m->median > 0) {
        double rel = m->iqr / m->median * 100;
        const char *msg = !opprof_measurement_meets_confidence(m, 0.25)
                              ? "This suggests significant environmental influence."
                          : !opprof_measurement_meets_confidence(m, 0.1) ? "This could indicate system fluctuation."
                                                                         : NULL;
        if (msg)
            opprof__sb_printf(
                &sb, "  WARNING: Interquartile range is %.1f%% of the median measurement.\n           %s\n", rel, msg);
    }
    precision_warning(m, &sb);
    if (m->profiler_active)
        opprof__sb_puts(&sb, "  WARNING: a profiler session was active: these times include its cost.\n");
    int rc = opprof__sb_finish(&sb, 0, out_text);
    return rc;
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_measurement_text_to_string(const opprof_measurement *m, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = measurement_text_to_string_here(m, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}

/* ---- compare ---- */

/* torch.utils.benchmark.Compare's grid: a row per sub_label, a column per
 * description, in first-seen order. */
enum { MAX = 32, NAME = 128, CELL = 112 };
typedef struct grid {
    char rows[MAX][NAME], cols[MAX][NAME];
    int n_rows, n_cols;
    const opprof_measurement *cell[MAX][MAX];
    char text[MAX][MAX][CELL];
    size_t width[MAX], row_width;
    bool starred; /* a cell differs from its baseline */
} grid;

static int index_of(char (*names)[NAME], int *n, const char *name) {
    for (int i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0) return i;
    if (*n == MAX) return -1;
    snprintf(names[*n], NAME, "%s", name);
    return (*n)++;
}

static int fill(grid *g, const opprof_measurement *const *ms, size_t count, double *smallest) {
    *smallest = INFINITY;
    for (size_t i = 0; i < count; i++) {
        const opprof_measurement *m = ms[i];
        if (!m) return OPPROF_EINVAL;
        int r = index_of(g->rows, &g->n_rows, m->sub_label), c = index_of(g->cols, &g->n_cols, m->description);
        if (r < 0 || c < 0) return OPPROF_EINVAL;
        g->cell[r][c] = m;
        if (m->median > 0 && m->median < *smallest) *smallest = m->median;
    }
    return 0;
}

/* Whether two measurements' blocks differ (Mann-Whitney, p < 0.05). */
static bool differs(const opprof_measurement *a, const opprof_measurement *b) {
    opprof_shift s;
    return a->n_times && b->n_times && !opprof_shift_of(a->times, a->n_times, b->times, b->n_times, 0.95, &s) &&
           s.p < 0.05;
}

/* "250.1 +-1.3": the median and half its interval's width ("250.1" with no interval). */
static void median_text(const opprof_measurement *m, double scale, char *buf, size_t size) {
    double half = opprof_measurement_precision(m) * m->median;
    if (isnan(half))
        snprintf(buf, size, "%.1f", m->median / scale);
    else
        snprintf(buf, size, "%.1f +-%.1f", m->median / scale, half / scale);
}

/* Each cell's median in the table's unit with its interval, and its ratio to
 * the baseline column's (render.c's ratio unit), starred when the two
 * differ; the columns' widths. */
static void cell_texts(grid *g, int baseline, double scale) {
    for (int c = 0; c < g->n_cols; c++) g->width[c] = strlen(g->cols[c]);
    for (int r = 0; r < g->n_rows; r++) {
        if (strlen(g->rows[r]) > g->row_width) g->row_width = strlen(g->rows[r]);
        const opprof_measurement *base = baseline >= 0 ? g->cell[r][baseline] : NULL;
        for (int c = 0; c < g->n_cols; c++) {
            const opprof_measurement *m = g->cell[r][c];
            char ratio[32], median[40];
            if (!m) {
                snprintf(g->text[r][c], CELL, " ");
            } else if (base && c != baseline && base->median > 0) {
                opprof__unit_text(OPPROF__UNIT_RATIO, m->median / base->median, ratio, sizeof ratio);
                median_text(m, scale, median, sizeof median);
                g->starred |= differs(base, m);
                snprintf(g->text[r][c], CELL, "%s (%s%s)", median, ratio, differs(base, m) ? "*" : "");
            } else {
                median_text(m, scale, g->text[r][c], CELL);
            }
            if (strlen(g->text[r][c]) > g->width[c]) g->width[c] = strlen(g->text[r][c]);
        }
    }
}

/* "[---- label ----]", the centred column titles, the rows; colour: green
 * below 0.95x of the baseline, red above 1.05x. */
static void layout(opprof__strbuf *sb, const grid *g, const char *label, int baseline, bool color) {
    size_t total = g->row_width + 2;
    for (int c = 0; c < g->n_cols; c++) total += 3 + g->width[c] + 2;
    size_t label_len = strlen(label) + 2;
    size_t dashes = total > label_len + 2 ? total - label_len - 2 : 2;
    opprof__sb_puts(sb, "[");
    opprof__sb_repeat(sb, '-', dashes / 2);
    opprof__sb_printf(sb, " %s ", label);
    opprof__sb_repeat(sb, '-', dashes - dashes / 2);
    opprof__sb_puts(sb, "]\n");
    opprof__sb_repeat(sb, ' ', g->row_width + 2);
    for (int c = 0; c < g->n_cols; c++) {
        opprof__sb_puts(sb, " |  ");
        size_t pad = g->width[c] - strlen(g->cols[c]);
        opprof__sb_repeat(sb, ' ', pad / 2);
        opprof__sb_puts(sb, g->cols[c]);
        opprof__sb_repeat(sb, ' ', pad - pad / 2 + 1);
    }
    opprof__sb_puts(sb, "\n");
    for (int r = 0; r < g->n_rows; r++) {
        opprof__sb_repeat(sb, ' ', g->row_width + 2 - strlen(g->rows[r]));
        opprof__sb_puts(sb, g->rows[r]);
        for (int c = 0; c < g->n_cols; c++) {
            opprof__sb_puts(sb, " |  ");
            opprof__sb_repeat(sb, ' ', g->width[c] - strlen(g->text[r][c]));
            const char *on = "", *off = "";
            const opprof_measurement *m = g->cell[r][c], *base = baseline >= 0 ? g->cell[r][baseline] : NULL;
            if (color && base && c != baseline && m) {
                double ratio = m->median / base->median;
                if (ratio < 0.95) on = "\033[32m", off = "\033[0m";
                if (ratio > 1.05) on = "\033[31m", off = "\033[0m";
            }
            opprof__sb_printf(sb, "%s%s%s ", on, g->text[r][c], off);
        }
        opprof__sb_puts(sb, "\n");
    }
}

static int compare_table_to_string_here(const opprof_measurement *const *ms, size_t count,
                                        const opprof_compare_options *options, char **out_text) {
    if (!ms || !count || !out_text) return OPPROF_EINVAL;
    grid *g = opprof__calloc(1, sizeof *g);
    if (!g) return OPPROF_ENOMEM;
    double smallest;
    int rc = fill(g, ms, count, &smallest);
    opprof__strbuf sb = {0};
    if (!rc) {
        int baseline = options && options->baseline < g->n_cols ? options->baseline : -1;
        const char *unit;
        double scale;
        select_unit(isinf(smallest) ? 0 : smallest, &unit, &scale);
        const char *long_unit = !strcmp(unit, "ns")   ? "nanoseconds"
                                : !strcmp(unit, "us") ? "microseconds"
                                : !strcmp(unit, "ms") ? "milliseconds"
                                                      : "seconds";
        cell_texts(g, baseline, scale);
        layout(&sb, g, ms[0]->label[0] ? ms[0]->label : "", baseline, options && options->colorize);
        opprof__sb_printf(&sb, "\nTimes are in %s (%s).\n", long_unit, unit);
        if (baseline >= 0)
            opprof__sb_printf(&sb, "Ratios are to the column \"%s\" (below 1.00x: faster).\n", g->cols[baseline]);
        opprof__sb_puts(&sb, "+-: half the width of the median's 95% interval.\n");
        if (g->starred)
            opprof__sb_puts(&sb, "*: differs from the baseline (Mann-Whitney test of the measurements' blocks, "
                                 "p < 0.05).\n");
    }
    opprof__free(g);
    return opprof__sb_finish(&sb, rc, out_text);
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_compare_table_to_string(const opprof_measurement *const *ms, size_t count,
                                   const opprof_compare_options *options, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = compare_table_to_string_here(ms, count, options, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}
