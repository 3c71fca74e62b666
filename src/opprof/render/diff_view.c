/* diff_view.c - the views of two captures compared (analysis/diff.c): the
 * columns are descriptors (COLUMNS), and the text table, the JSON rows and
 * the HTML page are views of them, each cell through the one formatter per
 * unit (render/units.c); a new column is one line of COLUMNS. */
#include "render/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the columns ---- */

enum side { BOTH, BEFORE, AFTER }; /* BEFORE, AFTER: no value ("-", null) where that side has no row */

typedef struct diff_column {
    const char *title, *key; /* key: in JSON */
    opprof__unit unit;
    enum side side;
    double (*number)(const opprof__diff_pair *p); /* NAN: no value */
    unsigned needs;                               /* SHOW_*: shown only when a side recorded it */
} diff_column;

enum { SHOW_MEMORY = 1u << 0, SHOW_FLOPS = 1u << 1, SHOW_DEVICE = 1u << 2 };

#define SIDE_NUMBER(fn, row, expr) \
    static double fn(const opprof__diff_pair *p) { return p->row ? (double)(expr) : NAN; }
SIDE_NUMBER(calls_before, before, p->before->calls)
SIDE_NUMBER(calls_after, after, p->after->calls)
SIDE_NUMBER(self_before, before, p->before->self_ns / 1e3)
SIDE_NUMBER(self_after, after, p->after->self_ns / 1e3)
SIDE_NUMBER(total_before, before, p->before->total_ns / 1e3)
SIDE_NUMBER(total_after, after, p->after->total_ns / 1e3)
SIDE_NUMBER(mem_before, before, p->before->self_cpu_mem)
SIDE_NUMBER(mem_after, after, p->after->self_cpu_mem)
SIDE_NUMBER(flops_before, before, p->before->flops)
SIDE_NUMBER(flops_after, after, p->after->flops)
SIDE_NUMBER(device_before, before, p->before->self_device_ns / 1e3)
SIDE_NUMBER(device_after, after, p->after->self_device_ns / 1e3)
#undef SIDE_NUMBER

static double self_change(const opprof__diff_pair *p) { return (double)p->self_delta / 1e3; }
static double device_change(const opprof__diff_pair *p) { return (double)p->device_delta / 1e3; }

/* after / before; no value for an operator new or gone; inf from nothing to something */
static double self_ratio(const opprof__diff_pair *p) {
    if (!p->before || !p->after) return NAN;
    double b = (double)p->before->self_ns, a = (double)p->after->self_ns;
    return b == 0 ? (a == 0 ? 1.0 : INFINITY) : a / b;
}

static const diff_column COLUMNS[] = {
    {"Name", "name", OPPROF__UNIT_NAME, BOTH, NULL, 0},
    {"Calls before", "calls_before", OPPROF__UNIT_COUNT, BEFORE, calls_before, 0},
    {"Calls after", "calls_after", OPPROF__UNIT_COUNT, AFTER, calls_after, 0},
    {"Self before", "self_cpu_us_before", OPPROF__UNIT_TIME, BEFORE, self_before, 0},
    {"Self after", "self_cpu_us_after", OPPROF__UNIT_TIME, AFTER, self_after, 0},
    {"Self change", "self_cpu_us_delta", OPPROF__UNIT_CHANGE, BOTH, self_change, 0},
    {"Self ratio", "self_ratio", OPPROF__UNIT_RATIO, BOTH, self_ratio, 0},
    {"Total before", "total_cpu_us_before", OPPROF__UNIT_TIME, BEFORE, total_before, 0},
    {"Total after", "total_cpu_us_after", OPPROF__UNIT_TIME, AFTER, total_after, 0},
    /* "%s": the device's name, as report's columns say it ("Self CUDA") */
    {"Self %s before", "self_device_us_before", OPPROF__UNIT_TIME, BEFORE, device_before, SHOW_DEVICE},
    {"Self %s after", "self_device_us_after", OPPROF__UNIT_TIME, AFTER, device_after, SHOW_DEVICE},
    {"Self %s change", "self_device_us_delta", OPPROF__UNIT_CHANGE, BOTH, device_change, SHOW_DEVICE},
    {"Self Mem before", "self_cpu_bytes_before", OPPROF__UNIT_BYTES, BEFORE, mem_before, SHOW_MEMORY},
    {"Self Mem after", "self_cpu_bytes_after", OPPROF__UNIT_BYTES, AFTER, mem_after, SHOW_MEMORY},
    {"FLOPs before", "flops_before", OPPROF__UNIT_COUNT, BEFORE, flops_before, SHOW_FLOPS},
    {"FLOPs after", "flops_after", OPPROF__UNIT_COUNT, AFTER, flops_after, SHOW_FLOPS},
};
enum { N_COLUMNS = sizeof COLUMNS / sizeof *COLUMNS, CELL = 64 };

/* The columns that the two captures' recordings call for, in order. */
typedef struct shown {
    const diff_column *col[N_COLUMNS];
    size_t n;
} shown;

static shown shown_columns(const opprof__diff *d) {
    unsigned have = 0;
    const opprof_averages *side[2] = {d->avg_before, d->avg_after};
    for (int s = 0; s < 2; s++) {
        if (opprof__averages_profile_memory(side[s])) have |= SHOW_MEMORY;
        if (opprof__averages_flops_recorded(side[s])) have |= SHOW_FLOPS;
    }
    if (d->device_name) have |= SHOW_DEVICE;
    shown out = {.n = 0};
    for (size_t k = 0; k < N_COLUMNS; k++)
        if ((COLUMNS[k].needs & have) == COLUMNS[k].needs) out.col[out.n++] = &COLUMNS[k];
    return out;
}

/* A cell as every view shows it: "-" where the column's side has no row,
 * "new" and "gone" for the ratio of an operator on one side only. */
static void cell(const diff_column *col, const opprof__diff_pair *p, size_t name_at, char *buf, size_t size) {
    if (col->unit == OPPROF__UNIT_NAME) {
        opprof__name_cell_at(p->key, name_at, buf, size); /* name_at: opprof__name_windows */
    } else if ((col->side == BEFORE && !p->before) || (col->side == AFTER && !p->after)) {
        snprintf(buf, size, "-");
    } else if (col->unit == OPPROF__UNIT_RATIO && (!p->before || !p->after)) {
        snprintf(buf, size, p->before ? "gone" : "new");
    } else {
        opprof__unit_text(col->unit, col->number(p), buf, size);
    }
}

/* A column's title: the device's name in its "%s" */
static const char *title_of(const diff_column *col, const opprof__diff *d, char *buf, size_t size) {
    if (!strstr(col->title, "%s")) return col->title;
    snprintf(buf, size, col->title, d->device_name ? d->device_name : "device");
    return buf;
}

/* "Self CPU time total: 1.150us before, 0.600us after (-47.83%)" */
static void total_line(const char *what, int64_t before, int64_t after, char *buf, size_t size) {
    char t1[48], t2[48];
    opprof_format_time_us((double)before / 1e3, t1, sizeof t1);
    opprof_format_time_us((double)after / 1e3, t2, sizeof t2);
    int n = snprintf(buf, size, "Self %s time total: %s before, %s after", what, t1, t2);
    if (before && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " (%+.2f%%)", 100.0 * ((double)after - (double)before) / (double)before);
}

/* The CPU's totals line, and the device's when both sides have one. */
static void totals_line(const opprof__diff *d, char *buf, size_t size) {
    total_line("CPU", d->self_before, d->self_after, buf, size);
    size_t n = strlen(buf);
    if (d->device_name && n + 2 < size) {
        memcpy(buf + n, "; ", 3);
        total_line(d->device_name, d->device_before, d->device_after, buf + n + 2, size - n - 2);
    }
}

/* ---- the views ---- */

static int diff_text(opprof__strbuf *sb, const opprof__diff *d) {
    shown sc = shown_columns(d);
    size_t nc = sc.n;
    const char *titles[N_COLUMNS];
    char named[N_COLUMNS][CELL];
    for (size_t k = 0; k < nc; k++) titles[k] = title_of(sc.col[k], d, named[k], CELL);
    size_t n_cells = (d->shown ? d->shown : 1) * nc;
    char(*cells)[CELL] = opprof__calloc(n_cells, CELL);
    const char **ptrs = opprof__calloc(n_cells, sizeof *ptrs);
    const char **keys = opprof__calloc(d->shown ? d->shown : 1, sizeof *keys);
    size_t *at = opprof__calloc(d->shown ? d->shown : 1, sizeof *at); /* names that would read the same */
    int rc = cells && ptrs && keys && at ? 0 : OPPROF_ENOMEM;
    for (size_t i = 0; !rc && i < d->shown; i++) keys[i] = d->pairs[i].key;
    if (!rc) rc = opprof__name_windows(keys, d->shown, at);
    for (size_t i = 0; !rc && i < d->shown; i++)
        for (size_t k = 0; k < nc; k++) {
            cell(sc.col[k], &d->pairs[i], at[i], cells[i * nc + k], CELL);
            ptrs[i * nc + k] = cells[i * nc + k];
        }
    if (!rc) rc = opprof__text_table(sb, titles, nc, ptrs, d->shown);
    opprof__free(cells);
    opprof__free(ptrs);
    opprof__free(keys);
    opprof__free(at);
    char line[256];
    totals_line(d, line, sizeof line);
    opprof__sb_printf(sb, "%s\n", line);
    for (int i = 0; i < d->n_notes; i++) opprof__sb_printf(sb, "Note: %s\n", d->notes[i]);
    return rc;
}

/* Each column's raw value under its key (null where there is none), and
 * which side has the operator. */
static void diff_json(opprof__strbuf *sb, const opprof__diff *d) {
    char num[64];
    shown sc = shown_columns(d);
    opprof__sb_puts(sb, "{\n  \"rows\": [");
    for (size_t i = 0; i < d->shown; i++) {
        const opprof__diff_pair *p = &d->pairs[i];
        opprof__sb_puts(sb, i ? ",\n    {" : "\n    {");
        for (size_t k = 0; k < sc.n; k++) {
            opprof__sb_printf(sb, "%s\"%s\": ", k ? ", " : "", sc.col[k]->key);
            if (sc.col[k]->unit == OPPROF__UNIT_NAME) {
                opprof__sb_json_string(sb, p->key);
                continue;
            }
            opprof__number_text(sc.col[k]->number(p), num, sizeof num);
            opprof__sb_puts(sb, num);
        }
        opprof__sb_printf(sb, ", \"device\": %s, \"present\": \"%s\"}", p->device ? "true" : "false",
                          !p->before  ? "after"
                          : !p->after ? "before"
                                      : "both");
    }
    opprof__sb_puts(sb, d->shown ? "\n  ],\n  \"totals\": {\"self_cpu_us_before\": "
                                 : "],\n  \"totals\": {\"self_cpu_us_before\": ");
    opprof__number_text((double)d->self_before / 1e3, num, sizeof num);
    opprof__sb_printf(sb, "%s, \"self_cpu_us_after\": ", num);
    opprof__number_text((double)d->self_after / 1e3, num, sizeof num);
    opprof__sb_puts(sb, num);
    if (d->device_name) {
        opprof__sb_puts(sb, ", \"self_device_us_before\": ");
        opprof__number_text((double)d->device_before / 1e3, num, sizeof num);
        opprof__sb_printf(sb, "%s, \"self_device_us_after\": ", num);
        opprof__number_text((double)d->device_after / 1e3, num, sizeof num);
        opprof__sb_puts(sb, num);
    }
    opprof__sb_puts(sb, "},\n  \"notes\": [");
    for (int i = 0; i < d->n_notes; i++) {
        if (i) opprof__sb_puts(sb, ", ");
        opprof__sb_json_string(sb, d->notes[i]);
    }
    opprof__sb_puts(sb, "]\n}\n");
}

/* The two captures side by side, in the report's facts box. */
static void html_facts(opprof__strbuf *sb, const opprof__diff *d) {
    const opprof_capture *side[2] = {d->before, d->after};
    char t[2][48];
    opprof__sb_puts(sb,
                    "<table class=\"facts\"><tr><th></th><th>before</th><th>after</th></tr>\n<tr><td>captured</td>");
    for (int s = 0; s < 2; s++) {
        opprof_format_time_us((double)side[s]->info.duration_ns / 1e3, t[s], sizeof t[s]);
        opprof__sb_printf(sb, "<td>%s</td>", t[s]);
    }
    opprof__sb_puts(sb, "</tr>\n<tr><td>Self CPU time total</td>");
    opprof_format_time_us((double)d->self_before / 1e3, t[0], sizeof t[0]);
    opprof_format_time_us((double)d->self_after / 1e3, t[1], sizeof t[1]);
    opprof__sb_printf(sb, "<td>%s</td><td>%s</td></tr>\n<tr><td>events</td>", t[0], t[1]);
    for (int s = 0; s < 2; s++) opprof__sb_printf(sb, "<td>%zu</td>", side[s]->n_events);
    opprof__sb_puts(sb, "</tr>\n<tr><td>thread tracks</td>");
    for (int s = 0; s < 2; s++) opprof__sb_printf(sb, "<td>%zu</td>", side[s]->n_threads);
    opprof__sb_puts(sb, "</tr>\n<tr><td>memory recorded</td>");
    for (int s = 0; s < 2; s++) opprof__sb_printf(sb, "<td>%s</td>", side[s]->info.profile_memory ? "yes" : "no");
    opprof__sb_puts(sb, "</tr></table>\n");
}

/* What a cell sorts by: its value; a missing side as 0, "new" and "inf" above all. */
static double sort_value(const diff_column *col, const opprof__diff_pair *p) {
    double x = col->number(p);
    if (isnan(x)) return col->unit == OPPROF__UNIT_RATIO && !p->before ? 1e300 : 0;
    return isinf(x) ? 1e300 : x;
}

/* The self-time bars: before (grey) and after (red when 5 % slower, green
 * when 5 % faster, else blue) on one scale. */
static void bars_cell(opprof__strbuf *sb, const opprof__diff_pair *p, double largest) {
    enum { BAR = 240 }; /* px for the largest self time */
    double bs = p->before ? (double)p->before->self_ns : 0, as = p->after ? (double)p->after->self_ns : 0;
    const char *trend = as > 1.05 * bs ? " worse" : as < 0.95 * bs ? " better" : "";
    opprof__sb_printf(sb,
                      "<td data-v=\"%lld\"><div class=\"bar b\" style=\"width:%.1fpx\"></div>"
                      "<div class=\"bar a%s\" style=\"width:%.1fpx\"></div></td>",
                      (long long)p->self_delta, (bs > 0 ? bs : 0) * BAR / largest, trend,
                      (as > 0 ? as : 0) * BAR / largest);
}

static void diff_html(opprof__strbuf *sb, const opprof__diff *d) {
    opprof__html_begin(sb, "opprof diff");
    html_facts(sb, d);
    char line[256];
    totals_line(d, line, sizeof line);
    opprof__sb_printf(sb, "<p>%s; %zu operator(s) and range(s)%s.</p>\n", line, d->n,
                      d->shown < d->n ? ", the largest changes shown" : "");
    if (d->n_notes) opprof__sb_puts(sb, "<ul class=\"warn\">\n");
    for (int i = 0; i < d->n_notes; i++) {
        opprof__sb_puts(sb, "<li>");
        opprof__sb_html(sb, d->notes[i]);
        opprof__sb_puts(sb, "</li>\n");
    }
    if (d->n_notes) opprof__sb_puts(sb, "</ul>\n");
    double largest = 1;
    for (size_t i = 0; i < d->shown; i++) {
        const opprof__diff_pair *p = &d->pairs[i];
        if (p->before && (double)p->before->self_ns > largest) largest = (double)p->before->self_ns;
        if (p->after && (double)p->after->self_ns > largest) largest = (double)p->after->self_ns;
    }
    opprof__sb_puts(sb, "<table class=\"sortable\" id=\"diff\">\n<thead><tr>");
    shown sc = shown_columns(d);
    char title[CELL];
    for (size_t k = 0; k < sc.n; k++)
        opprof__sb_printf(sb, "<th%s>%s</th>", sc.col[k]->number ? "" : " data-text=\"1\"",
                          title_of(sc.col[k], d, title, sizeof title));
    opprof__sb_puts(sb, "<th>Self time</th></tr></thead>\n<tbody>\n");
    char text[CELL], num[64];
    for (size_t i = 0; i < d->shown; i++) {
        const opprof__diff_pair *p = &d->pairs[i];
        opprof__sb_puts(sb, "<tr>");
        for (size_t k = 0; k < sc.n; k++) {
            if (!sc.col[k]->number) {
                opprof__html_name_cell(sb, p->key);
                continue;
            }
            cell(sc.col[k], p, 0, text, sizeof text);
            opprof__number_text(sort_value(sc.col[k], p), num, sizeof num);
            opprof__sb_printf(sb, "<td data-v=\"%s\">%s</td>", num, text);
        }
        bars_cell(sb, p, largest);
        opprof__sb_puts(sb, "</tr>\n");
    }
    opprof__sb_puts(sb, "</tbody>\n</table>\n");
    opprof__html_end(sb);
}

int opprof_capture_diff_to_string(const opprof_capture *before, const opprof_capture *after, int row_limit,
                                  opprof_diff_format format, char **out_text) {
    opprof_diff_options o = {row_limit, format, OPPROF_DIFF_MATCH_AUTO};
    return opprof_capture_diff_to_string_ex(before, after, &o, out_text);
}

static int capture_diff_to_string_ex_here(const opprof_capture *before, const opprof_capture *after,
                                          const opprof_diff_options *options, char **out_text) {
    opprof_diff_options o = options ? *options : (opprof_diff_options){0, OPPROF_DIFF_TEXT, OPPROF_DIFF_MATCH_AUTO};
    opprof_diff_format format = o.format;
    if (!before || !after || !out_text ||
        (format != OPPROF_DIFF_TEXT && format != OPPROF_DIFF_JSON && format != OPPROF_DIFF_HTML) ||
        (o.match != OPPROF_DIFF_MATCH_AUTO && o.match != OPPROF_DIFF_MATCH_NAME && o.match != OPPROF_DIFF_MATCH_LAYERS))
        return OPPROF_EINVAL;
    opprof__diff d;
    int rc = opprof__diff_build(&d, before, after, o.row_limit, o.match);
    opprof__strbuf sb = {0};
    if (!rc) {
        if (format == OPPROF_DIFF_JSON)
            diff_json(&sb, &d);
        else if (format == OPPROF_DIFF_HTML)
            diff_html(&sb, &d);
        else
            rc = diff_text(&sb, &d);
    }
    opprof__diff_free(&d);
    return opprof__sb_finish(&sb, rc, out_text);
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_capture_diff_to_string_ex(const opprof_capture *before, const opprof_capture *after,
                                     const opprof_diff_options *options, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_diff_to_string_ex_here(before, after, options, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}
