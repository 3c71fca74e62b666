/* stat_diff_view.c - the views of a comparison with confidence
 * (analysis/stat_diff.c): the columns are descriptors (COLUMNS), and the text
 * table, the JSON rows and the HTML page are views of them, each cell through
 * the one formatter per unit (render/units.c). Under the table: the total,
 * and the noise notes (a side too noisy for the change asked, with the steps
 * it would need). */
#include "render/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct stat_column {
    const char *title, *key; /* key: in JSON */
    opprof__unit unit;
    double (*number)(const opprof_stat_row *r);
} stat_column;

#define ROW_NUMBER(fn, expr) \
    static double fn(const opprof_stat_row *r) { return (double)(expr); }
ROW_NUMBER(median_before, r->before.median / 1e3)
ROW_NUMBER(median_after, r->after.median / 1e3)
ROW_NUMBER(iqr_before, r->before.iqr / 1e3)
ROW_NUMBER(iqr_after, r->after.iqr / 1e3)
ROW_NUMBER(shift_us, r->shift.estimate / 1e3)
ROW_NUMBER(shift_lo_us, r->shift.lo / 1e3)
ROW_NUMBER(shift_hi_us, r->shift.hi / 1e3)
ROW_NUMBER(change, r->change)
ROW_NUMBER(change_lo, r->change_lo)
ROW_NUMBER(change_hi, r->change_hi)
ROW_NUMBER(p_value, r->shift.p)
ROW_NUMBER(p_adjusted, r->p_adjusted)
ROW_NUMBER(p_greater, r->shift.p_greater)
ROW_NUMBER(p_less, r->shift.p_less)
ROW_NUMBER(spread, r->spread)
ROW_NUMBER(steps_needed, r->steps_needed == SIZE_MAX ? INFINITY : (double)r->steps_needed)
#undef ROW_NUMBER

/* Text shows the first ones with a title; JSON every one. */
static const stat_column COLUMNS[] = {
    {"Name", "name", OPPROF__UNIT_NAME, NULL},
    {"Median before", "median_us_before", OPPROF__UNIT_TIME, median_before},
    {"Median after", "median_us_after", OPPROF__UNIT_TIME, median_after},
    {"IQR before", "iqr_us_before", OPPROF__UNIT_TIME, iqr_before},
    {"IQR after", "iqr_us_after", OPPROF__UNIT_TIME, iqr_after},
    {"Shift", "shift_us", OPPROF__UNIT_CHANGE, shift_us},
    {"Change", "change", OPPROF__UNIT_RELATIVE, change},
    {"Low", "change_low", OPPROF__UNIT_RELATIVE, change_lo},
    {"High", "change_high", OPPROF__UNIT_RELATIVE, change_hi},
    {"p (Holm)", "p_adjusted", OPPROF__UNIT_PVALUE, p_adjusted},
    {NULL, "shift_us_low", OPPROF__UNIT_CHANGE, shift_lo_us},
    {NULL, "shift_us_high", OPPROF__UNIT_CHANGE, shift_hi_us},
    {NULL, "p", OPPROF__UNIT_PVALUE, p_value},
    {NULL, "p_greater", OPPROF__UNIT_PVALUE, p_greater},
    {NULL, "p_less", OPPROF__UNIT_PVALUE, p_less},
    {NULL, "spread", OPPROF__UNIT_PERCENT, spread},
    {NULL, "steps_needed", OPPROF__UNIT_COUNT, steps_needed},
};
enum { N_COLUMNS = sizeof COLUMNS / sizeof *COLUMNS, CELL = 64 };

static size_t n_titled(void) {
    size_t n = 0;
    while (n < N_COLUMNS && COLUMNS[n].title) n++;
    return n;
}

static void cell(const stat_column *col, const opprof_stat_row *r, char *buf, size_t size) {
    if (col->unit != OPPROF__UNIT_NAME) {
        opprof__unit_text(col->unit, col->number(r), buf, size);
    } else if (!r->device) {
        opprof__name_cell(r->key, buf, size);
    } else { /* a kernel may share an operator's name */
        char name[512];
        snprintf(name, sizeof name, "%s (device)", r->key);
        opprof__name_cell(name, buf, size);
    }
}

/* "Per-step self time: 20 steps before (1 capture), 20 after (2 captures); ..." */
static void method_line(opprof__strbuf *sb, const opprof_stat_diff *d) {
    opprof__sb_printf(sb,
                      "Per-step self time (a row \"NAME (wall)\": the wall time of an operator run over a pool): "
                      "%zu step(s) before (%zu capture(s)), %zu after (%zu capture(s)). "
                      "Shift: Hodges-Lehmann, with its %g%% interval (Low, High); p: Mann-Whitney, "
                      "Holm-corrected over %zu rows, the total and the step; significant below %g.\n",
                      d->steps[0], d->captures[0], d->steps[1], d->captures[1], 100 * (1 - d->alpha), d->n_rows,
                      d->alpha);
}

/* "Total (self CPU time per step): median 1.2ms before, 1.3ms after, +5.3% [+4.0%, +6.7%], p 0.0002: significant";
 * the step's line the same, "Step duration (wall time, what the program waits for)". */
static void whole_line(const opprof_stat_row *t, const char *title, char *buf, size_t size) {
    char mb[48], ma[48], c[48], lo[48], hi[48], p[48];
    opprof__unit_text(OPPROF__UNIT_TIME, t->before.median / 1e3, mb, sizeof mb);
    opprof__unit_text(OPPROF__UNIT_TIME, t->after.median / 1e3, ma, sizeof ma);
    opprof__unit_text(OPPROF__UNIT_RELATIVE, t->change, c, sizeof c);
    opprof__unit_text(OPPROF__UNIT_RELATIVE, t->change_lo, lo, sizeof lo);
    opprof__unit_text(OPPROF__UNIT_RELATIVE, t->change_hi, hi, sizeof hi);
    opprof__unit_text(OPPROF__UNIT_PVALUE, t->p_adjusted, p, sizeof p);
    snprintf(buf, size, "%s: median %s before, %s after: %s [%s, %s], p %s: %s", title, mb, ma, c, lo, hi, p,
             t->significant ? "significant" : "not significant");
}

static void total_line(const opprof_stat_diff *d, char *buf, size_t size) {
    whole_line(&d->total, "Total (self CPU time per step, every thread's)", buf, size);
}

/* The step's line, and what it says against the total: CPU time that rose
 * while the step fell is work spread over more threads, not a slower program. */
static void step_line(const opprof_stat_diff *d, char *buf, size_t size) {
    whole_line(&d->step, "Step duration (wall time per step, what the program waits for)", buf, size);
    const opprof_stat_row *s = &d->step, *t = &d->total;
    if (s->significant && t->significant && (s->change < 0) != (t->change < 0)) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, "; the steps got %s while CPU time %s: the work %s threads",
                 s->change < 0 ? "faster" : "slower", t->change < 0 ? "fell" : "rose",
                 s->change < 0 ? "is spread over more" : "runs on fewer");
    }
}

/* A row whose noise hides the change asked: only rows that weigh (a median
 * of 1 % of the total's or more), the total first; at most 5. */
static bool too_noisy(const opprof_stat_diff *d, const opprof_stat_row *r) {
    size_t have = d->steps[0] < d->steps[1] ? d->steps[0] : d->steps[1];
    double weight = fmax(r->before.median, r->after.median),
           whole = fmax(d->total.before.median, d->total.after.median);
    return r->steps_needed > have && (r == &d->total || weight >= 0.01 * whole);
}

static size_t noise_notes(const opprof_stat_diff *d, char notes[][256], size_t max) {
    size_t have = d->steps[0] < d->steps[1] ? d->steps[0] : d->steps[1], n = 0;
    for (size_t i = 0; n < max && i <= d->n_rows; i++) {
        const opprof_stat_row *r = i ? &d->rows[i - 1] : &d->total;
        if (!too_noisy(d, r)) continue;
        double sb = r->before.median ? r->before.iqr / r->before.median : 0;
        double sa = r->after.median ? r->after.iqr / r->after.median : 0;
        char need[48];
        if (r->steps_needed == SIZE_MAX)
            snprintf(need, sizeof need, "more steps than can be run");
        else
            snprintf(need, sizeof need, "about %zu steps a side", r->steps_needed);
        snprintf(notes[n++], 256,
                 "noise: %s varies by %.1f%% before and %.1f%% after (IQR / median of its steps): detecting a "
                 "%g%% change needs %s, and the smaller side has %zu",
                 i ? r->key : "the total", 100 * sb, 100 * sa, 100 * d->detect, need, have);
    }
    return n;
}

static size_t shown_rows(const opprof_stat_diff *d, int row_limit) {
    return row_limit > 0 && (size_t)row_limit < d->n_rows ? (size_t)row_limit : d->n_rows;
}

static int stat_text(opprof__strbuf *sb, const opprof_stat_diff *d, int row_limit) {
    size_t nc = n_titled(), shown = shown_rows(d, row_limit);
    const char *titles[N_COLUMNS];
    for (size_t k = 0; k < nc; k++) titles[k] = COLUMNS[k].title;
    titles[nc] = "Significant";
    size_t cols = nc + 1, n_cells = (shown ? shown : 1) * cols;
    char(*cells)[CELL] = opprof__calloc(n_cells, CELL);
    const char **ptrs = opprof__calloc(n_cells, sizeof *ptrs);
    int rc = cells && ptrs ? 0 : OPPROF_ENOMEM;
    for (size_t i = 0; !rc && i < shown; i++) {
        for (size_t k = 0; k < nc; k++) cell(&COLUMNS[k], &d->rows[i], cells[i * cols + k], CELL);
        snprintf(cells[i * cols + nc], CELL, "%s", d->rows[i].significant ? "yes" : "no");
        for (size_t k = 0; k < cols; k++) ptrs[i * cols + k] = cells[i * cols + k];
    }
    method_line(sb, d);
    if (!rc) rc = opprof__text_table(sb, titles, cols, ptrs, shown);
    opprof__free(cells);
    opprof__free(ptrs);
    char line[768], notes[6][256];
    step_line(d, line, sizeof line);
    opprof__sb_printf(sb, "%s\n", line);
    total_line(d, line, sizeof line);
    opprof__sb_printf(sb, "%s\n", line);
    if (shown < d->n_rows) opprof__sb_printf(sb, "(%zu of %zu rows shown)\n", shown, d->n_rows);
    size_t n = noise_notes(d, notes, 6);
    for (size_t i = 0; i < n; i++) opprof__sb_printf(sb, "Note: %s\n", notes[i]);
    return rc;
}

static void json_row(opprof__strbuf *sb, const opprof_stat_row *r) {
    char num[64];
    opprof__sb_puts(sb, "{");
    for (size_t k = 0; k < N_COLUMNS; k++) {
        opprof__sb_printf(sb, "%s\"%s\": ", k ? ", " : "", COLUMNS[k].key);
        if (COLUMNS[k].unit == OPPROF__UNIT_NAME) {
            opprof__sb_json_string(sb, r->key);
            continue;
        }
        opprof__number_text(COLUMNS[k].number(r), num, sizeof num);
        opprof__sb_puts(sb, num);
    }
    opprof__sb_printf(sb, ", \"significant\": %s, \"device\": %s, \"steps_before\": %zu, \"steps_after\": %zu}",
                      r->significant ? "true" : "false", r->device ? "true" : "false", r->before.n, r->after.n);
}

static void stat_json(opprof__strbuf *sb, const opprof_stat_diff *d, int row_limit) {
    size_t shown = shown_rows(d, row_limit);
    opprof__sb_printf(sb,
                      "{\n  \"method\": {\"sample\": \"self time per step\", \"shift\": \"Hodges-Lehmann\", "
                      "\"test\": \"Mann-Whitney\", \"correction\": \"Holm\", \"alpha\": %g, \"detect\": %g},\n"
                      "  \"steps\": {\"before\": %zu, \"after\": %zu},\n  \"captures\": {\"before\": %zu, "
                      "\"after\": %zu},\n  \"rows\": [",
                      d->alpha, d->detect, d->steps[0], d->steps[1], d->captures[0], d->captures[1]);
    for (size_t i = 0; i < shown; i++) {
        opprof__sb_puts(sb, i ? ",\n    " : "\n    ");
        json_row(sb, &d->rows[i]);
    }
    opprof__sb_puts(sb, shown ? "\n  ],\n  \"total\": " : "],\n  \"total\": ");
    json_row(sb, &d->total);
    opprof__sb_puts(sb, ",\n  \"step_duration\": ");
    json_row(sb, &d->step);
    char notes[6][256];
    size_t n = noise_notes(d, notes, 6);
    opprof__sb_puts(sb, ",\n  \"notes\": [");
    for (size_t i = 0; i < n; i++) {
        if (i) opprof__sb_puts(sb, ", ");
        opprof__sb_json_string(sb, notes[i]);
    }
    opprof__sb_puts(sb, "]\n}\n");
}

/* The change and its interval drawn on a scale of +-scale around 0. */
static void interval_cell(opprof__strbuf *sb, const opprof_stat_row *r, double scale) {
    enum { W = 200 };
    double lo = isfinite(r->change_lo) ? r->change_lo : -scale, hi = isfinite(r->change_hi) ? r->change_hi : scale;
    double c = isfinite(r->change) ? r->change : 0;
#define X(v) (W / 2.0 + fmax(-1, fmin(1, (v) / scale)) * W / 2.0)
    opprof__sb_printf(sb,
                      "<td data-v=\"%g\"><svg width=\"%d\" height=\"14\"><line x1=\"%d\" y1=\"0\" x2=\"%d\" "
                      "y2=\"14\" class=\"zero\"/><line x1=\"%.1f\" y1=\"7\" x2=\"%.1f\" y2=\"7\" class=\"%s\"/>"
                      "<circle cx=\"%.1f\" cy=\"7\" r=\"3\" class=\"%s\"/></svg></td>",
                      c, W, W / 2, W / 2, X(lo), X(hi), r->significant ? (c > 0 ? "worse" : "better") : "same", X(c),
                      r->significant ? (c > 0 ? "worse" : "better") : "same");
#undef X
}

static void stat_html(opprof__strbuf *sb, const opprof_stat_diff *d, int row_limit) {
    size_t shown = shown_rows(d, row_limit), nc = n_titled();
    opprof__html_begin(sb, "opprof diff --stat");
    opprof__sb_puts(sb, "<style>svg .zero{stroke:#999}svg line{stroke-width:2}svg .worse{stroke:#c33;fill:#c33}"
                        "svg .better{stroke:#393;fill:#393}svg .same{stroke:#68a;fill:#68a}</style>\n<p>");
    opprof__strbuf method = {0};
    method_line(&method, d);
    opprof__sb_html(sb, method.data ? method.data : "");
    if (method.error) sb->error = method.error; /* the page fails: its method line is not left out */
    opprof__sb_free(&method);
    char line[768], notes[6][256];
    step_line(d, line, sizeof line);
    opprof__sb_puts(sb, "</p>\n<p>");
    opprof__sb_html(sb, line);
    total_line(d, line, sizeof line);
    opprof__sb_puts(sb, "</p>\n<p>");
    opprof__sb_html(sb, line);
    opprof__sb_puts(sb, "</p>\n");
    size_t n = noise_notes(d, notes, 6);
    if (n) opprof__sb_puts(sb, "<ul class=\"warn\">\n");
    for (size_t i = 0; i < n; i++) {
        opprof__sb_puts(sb, "<li>");
        opprof__sb_html(sb, notes[i]);
        opprof__sb_puts(sb, "</li>\n");
    }
    if (n) opprof__sb_puts(sb, "</ul>\n");
    double scale = 0.05;
    for (size_t i = 0; i < shown; i++)
        if (isfinite(d->rows[i].change) && fabs(d->rows[i].change) > scale) scale = fabs(d->rows[i].change);
    opprof__sb_puts(sb, "<table class=\"sortable\" id=\"stat\">\n<thead><tr>");
    for (size_t k = 0; k < nc; k++)
        opprof__sb_printf(sb, "<th%s>%s</th>", COLUMNS[k].number ? "" : " data-text=\"1\"", COLUMNS[k].title);
    opprof__sb_printf(sb,
                      "<th data-text=\"1\">Significant</th><th>Change (&plusmn;%.0f%%)</th></tr></thead>\n<tbody>\n",
                      100 * scale);
    char text[CELL], num[64];
    for (size_t i = 0; i < shown; i++) {
        const opprof_stat_row *r = &d->rows[i];
        opprof__sb_puts(sb, "<tr>");
        for (size_t k = 0; k < nc; k++) {
            if (!COLUMNS[k].number) {
                opprof__html_name_cell(sb, r->key);
                continue;
            }
            cell(&COLUMNS[k], r, text, sizeof text);
            double v = COLUMNS[k].number(r);
            opprof__number_text(isfinite(v) ? v : 0, num, sizeof num);
            opprof__sb_printf(sb, "<td data-v=\"%s\">%s</td>", num, text);
        }
        opprof__sb_printf(sb, "<td>%s</td>", r->significant ? "yes" : "no");
        interval_cell(sb, r, scale);
        opprof__sb_puts(sb, "</tr>\n");
    }
    opprof__sb_puts(sb, "</tbody>\n</table>\n");
    opprof__html_end(sb);
}

static int stat_diff_to_string_here(const opprof_stat_diff *d, int row_limit, opprof_diff_format format,
                                    char **out_text) {
    if (!d || !out_text || (format != OPPROF_DIFF_TEXT && format != OPPROF_DIFF_JSON && format != OPPROF_DIFF_HTML))
        return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    int rc = 0;
    if (format == OPPROF_DIFF_JSON)
        stat_json(&sb, d, row_limit);
    else if (format == OPPROF_DIFF_HTML)
        stat_html(&sb, d, row_limit);
    else
        rc = stat_text(&sb, d, row_limit);
    return opprof__sb_finish(&sb, rc, out_text);
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_stat_diff_to_string(const opprof_stat_diff *d, int row_limit, opprof_diff_format format, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = stat_diff_to_string_here(d, row_limit, format, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}
