/* diff.c - two captures compared operator by operator. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair {
    const char *key;
    const opprof_average_row *before, *after; /* either may be NULL */
    int64_t self_delta;
} pair;

static int pair_cmp(const void *a, const void *b) {
    const pair *x = a, *y = b;
    uint64_t ax = x->self_delta < 0 ? -(uint64_t)x->self_delta : (uint64_t)x->self_delta;
    uint64_t ay = y->self_delta < 0 ? -(uint64_t)y->self_delta : (uint64_t)y->self_delta;
    if (ax != ay) return ax > ay ? -1 : 1;
    return strcmp(x->key, y->key);
}

static int row_by_key(const void *a, const void *b) {
    return strcmp((*(const opprof_average_row *const *)a)->key, (*(const opprof_average_row *const *)b)->key);
}

/* Pair the rows of both sides by key (keys are unique on a side): both lists
 * sorted by key, then one merge, so that traces with many names stay fast. */
static size_t pair_rows(const opprof_average_row *rb, size_t nb, const opprof_average_row *ra, size_t na,
                        const opprof_average_row **sorted, pair *pairs) {
    const opprof_average_row **b = sorted, **a = sorted + nb;
    for (size_t i = 0; i < nb; i++) b[i] = &rb[i];
    for (size_t i = 0; i < na; i++) a[i] = &ra[i];
    qsort(b, nb, sizeof *b, row_by_key);
    qsort(a, na, sizeof *a, row_by_key);
    size_t n = 0, i = 0, j = 0;
    while (i < nb || j < na) {
        int c = i == nb ? 1 : j == na ? -1 : strcmp(b[i]->key, a[j]->key);
        if (c < 0)
            pairs[n++] = (pair){b[i]->key, b[i], NULL, 0}, i++;
        else if (c > 0)
            pairs[n++] = (pair){a[j]->key, NULL, a[j], 0}, j++;
        else
            pairs[n++] = (pair){b[i]->key, b[i], a[j], 0}, i++, j++;
    }
    return n;
}

static void format_delta_us(double us, char *buf, size_t size) {
    char t[48];
    opprof_format_time_us(fabs(us), t, sizeof t);
    snprintf(buf, size, "%s%s", us < 0 ? "-" : "+", t);
}

static void format_ratio(int64_t before, int64_t after, const opprof_average_row *b, const opprof_average_row *a,
                         char *buf, size_t size) {
    if (!b)
        snprintf(buf, size, "new");
    else if (!a)
        snprintf(buf, size, "gone");
    else if (before == 0)
        snprintf(buf, size, after == 0 ? "1.00x" : "inf");
    else
        snprintf(buf, size, "%.2fx", (double)after / (double)before);
}

/* Notes on configuration differences. */
static void notes(const opprof_capture *b, const opprof_capture *a, char out[8][160], int *count) {
    *count = 0;
    if (b->n_threads != a->n_threads)
        snprintf(out[(*count)++], 160, "thread tracks differ: %zu before, %zu after", b->n_threads, a->n_threads);
    const opprof_schedule *sb = &b->info.schedule, *sa = &a->info.schedule;
    if (memcmp(sb, sa, sizeof *sb) != 0)
        snprintf(out[(*count)++], 160,
                 "schedules differ: (skip_first %d, wait %d, warmup %d, active %d, repeat %d) before, "
                 "(%d, %d, %d, %d, %d) after",
                 sb->skip_first, sb->wait, sb->warmup, sb->active, sb->repeat, sa->skip_first, sa->wait, sa->warmup,
                 sa->active, sa->repeat);
    if (b->info.profile_memory != a->info.profile_memory)
        snprintf(out[(*count)++], 160, "memory was recorded %s only", b->info.profile_memory ? "before" : "after");
    if (b->info.dropped_events || a->info.dropped_events)
        snprintf(out[(*count)++], 160, "events were dropped at record time: %llu before, %llu after",
                 (unsigned long long)b->info.dropped_events, (unsigned long long)a->info.dropped_events);
    if (b->n_warnings || a->n_warnings)
        snprintf(out[(*count)++], 160, "captures carry warnings: %zu before, %zu after", b->n_warnings, a->n_warnings);
}

/* The comparison as a page: totals, notes, a sortable table whose last
 * column draws self time before (grey) and after (red when 5 % slower, green
 * when 5 % faster, else blue) on one scale. */
static void html_page(opprof__strbuf *sb, const pair *pairs, size_t n, size_t shown, int64_t tb, int64_t ta,
                      char note[8][160], int n_notes) {
    enum { BAR = 240 }; /* px for the largest self time */
    opprof__html_begin(sb, "opprof diff");
    char t1[48], t2[48], buf[64];
    opprof_format_time_us((double)tb / 1e3, t1, sizeof t1);
    opprof_format_time_us((double)ta / 1e3, t2, sizeof t2);
    opprof__sb_printf(sb, "<p>Self CPU time total: %s before, %s after", t1, t2);
    if (tb) opprof__sb_printf(sb, " (%+.2f%%)", 100.0 * ((double)ta - (double)tb) / (double)tb);
    opprof__sb_printf(sb, "; %zu operator(s) and range(s)%s.</p>\n", n, shown < n ? ", the largest changes shown" : "");
    if (n_notes) {
        opprof__sb_puts(sb, "<ul class=\"warn\">\n");
        for (int i = 0; i < n_notes; i++) {
            opprof__sb_puts(sb, "<li>");
            opprof__sb_html(sb, note[i]);
            opprof__sb_puts(sb, "</li>\n");
        }
        opprof__sb_puts(sb, "</ul>\n");
    }
    double largest = 1;
    for (size_t i = 0; i < shown; i++) {
        if (pairs[i].before && (double)pairs[i].before->self_ns > largest) largest = (double)pairs[i].before->self_ns;
        if (pairs[i].after && (double)pairs[i].after->self_ns > largest) largest = (double)pairs[i].after->self_ns;
    }
    opprof__sb_puts(sb, "<table class=\"sortable\" id=\"diff\">\n<thead><tr><th data-text=\"1\">Name</th>"
                        "<th>Calls before</th><th>Calls after</th><th>Self before</th><th>Self after</th>"
                        "<th>Self change</th><th>Self ratio</th><th>Total before</th><th>Total after</th>"
                        "<th>Self Mem before</th><th>Self Mem after</th><th>Self time</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < shown; i++) {
        const pair *pr = &pairs[i];
        const opprof_average_row *b = pr->before, *a = pr->after;
        opprof__sb_puts(sb, "<tr><td data-v=\"");
        opprof__sb_html(sb, pr->key);
        opprof__sb_puts(sb, "\">");
        opprof__sb_html(sb, pr->key);
        opprof__sb_puts(sb, "</td>");
        /* a side's cell: its number in data-v, "-" shown where the side has no row */
#define CELL(row, value, text)                                                                             \
    opprof__sb_printf(sb, "<td data-v=\"%lld\">%s</td>", (row) ? (long long)(value) : 0LL, (row) ? (text) : "-")
        snprintf(buf, sizeof buf, "%lld", b ? (long long)b->calls : 0LL);
        CELL(b, b->calls, buf);
        snprintf(buf, sizeof buf, "%lld", a ? (long long)a->calls : 0LL);
        CELL(a, a->calls, buf);
        opprof_format_time_us(b ? (double)b->self_ns / 1e3 : 0, buf, sizeof buf);
        CELL(b, b->self_ns, buf);
        opprof_format_time_us(a ? (double)a->self_ns / 1e3 : 0, buf, sizeof buf);
        CELL(a, a->self_ns, buf);
        format_delta_us((double)pr->self_delta / 1e3, buf, sizeof buf);
        opprof__sb_printf(sb, "<td data-v=\"%lld\">%s</td>", (long long)pr->self_delta, buf);
        int64_t bs = b ? b->self_ns : 0, as = a ? a->self_ns : 0;
        format_ratio(bs, as, b, a, buf, sizeof buf);
        double ratio = !b ? 1e300 : !a ? 0 : bs == 0 ? (as == 0 ? 1 : 1e300) : (double)as / (double)bs;
        opprof__sb_printf(sb, "<td data-v=\"%g\">%s</td>", ratio, buf);
        opprof_format_time_us(b ? (double)b->total_ns / 1e3 : 0, buf, sizeof buf);
        CELL(b, b->total_ns, buf);
        opprof_format_time_us(a ? (double)a->total_ns / 1e3 : 0, buf, sizeof buf);
        CELL(a, a->total_ns, buf);
        opprof_format_memory(b ? b->self_cpu_mem : 0, buf, sizeof buf);
        CELL(b, b->self_cpu_mem, buf);
        opprof_format_memory(a ? a->self_cpu_mem : 0, buf, sizeof buf);
        CELL(a, a->self_cpu_mem, buf);
#undef CELL
        const char *trend = (double)as > 1.05 * (double)bs ? " worse" : (double)as < 0.95 * (double)bs ? " better" : "";
        opprof__sb_printf(sb,
                          "<td data-v=\"%lld\"><div class=\"bar b\" style=\"width:%.1fpx\"></div>"
                          "<div class=\"bar a%s\" style=\"width:%.1fpx\"></div></td></tr>\n",
                          (long long)pr->self_delta, (double)(bs > 0 ? bs : 0) * BAR / largest, trend,
                          (double)(as > 0 ? as : 0) * BAR / largest);
    }
    opprof__sb_puts(sb, "</tbody>\n</table>\n");
    opprof__html_end(sb);
}

#define SIDE(row, field) ((row) ? (long long)(row)->field : 0LL)

static void diff_json(opprof__strbuf *sb, const pair *pairs, size_t shown, int64_t tb, int64_t ta,
                      char note[8][160], int n_notes) {
    opprof__sb_puts(sb, "{\n  \"rows\": [");
    for (size_t i = 0; i < shown; i++) {
        const pair *pr = &pairs[i];
        opprof__sb_puts(sb, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        opprof__sb_json_string(sb, pr->key);
        opprof__sb_printf(sb,
                          ", \"calls_before\": %lld, \"calls_after\": %lld, \"self_cpu_us_before\": %.3f, "
                          "\"self_cpu_us_after\": %.3f, \"self_cpu_us_delta\": %.3f, \"total_cpu_us_before\": %.3f, "
                          "\"total_cpu_us_after\": %.3f, \"self_cpu_bytes_before\": %lld, \"self_cpu_bytes_after\": %lld, "
                          "\"present\": \"%s\"}",
                          SIDE(pr->before, calls), SIDE(pr->after, calls), SIDE(pr->before, self_ns) / 1e3,
                          SIDE(pr->after, self_ns) / 1e3, (double)pr->self_delta / 1e3, SIDE(pr->before, total_ns) / 1e3,
                          SIDE(pr->after, total_ns) / 1e3, SIDE(pr->before, self_cpu_mem), SIDE(pr->after, self_cpu_mem),
                          !pr->before ? "after" : !pr->after ? "before" : "both");
    }
    opprof__sb_printf(sb, "%s],\n  \"totals\": {\"self_cpu_us_before\": %.3f, \"self_cpu_us_after\": %.3f},\n",
                      shown ? "\n  " : "", (double)tb / 1e3, (double)ta / 1e3);
    opprof__sb_puts(sb, "  \"notes\": [");
    for (int i = 0; i < n_notes; i++) {
        if (i) opprof__sb_puts(sb, ", ");
        opprof__sb_json_string(sb, note[i]);
    }
    opprof__sb_puts(sb, "]\n}\n");
}

enum { DIFF_COLUMNS = 11, DIFF_CELL = 64 };

/* A row's cells; "-" where a side has no row. */
static void diff_cells(const pair *pr, char (*c)[DIFF_CELL]) {
    const opprof_average_row *b = pr->before, *a = pr->after;
    if (strlen(pr->key) >= 52)
        snprintf(c[0], DIFF_CELL, "%.52s...", pr->key);
    else
        snprintf(c[0], DIFF_CELL, "%s", pr->key);
    snprintf(c[1], DIFF_CELL, "%lld", SIDE(b, calls));
    snprintf(c[2], DIFF_CELL, "%lld", SIDE(a, calls));
    opprof_format_time_us(SIDE(b, self_ns) / 1e3, c[3], DIFF_CELL);
    opprof_format_time_us(SIDE(a, self_ns) / 1e3, c[4], DIFF_CELL);
    format_delta_us((double)pr->self_delta / 1e3, c[5], DIFF_CELL);
    format_ratio(SIDE(b, self_ns), SIDE(a, self_ns), b, a, c[6], DIFF_CELL);
    opprof_format_time_us(SIDE(b, total_ns) / 1e3, c[7], DIFF_CELL);
    opprof_format_time_us(SIDE(a, total_ns) / 1e3, c[8], DIFF_CELL);
    opprof_format_memory(SIDE(b, self_cpu_mem), c[9], DIFF_CELL);
    opprof_format_memory(SIDE(a, self_cpu_mem), c[10], DIFF_CELL);
    static const int before_side[] = {1, 3, 7, 9}, after_side[] = {2, 4, 8, 10};
    for (int k = 0; k < 4; k++) {
        if (!b) snprintf(c[before_side[k]], DIFF_CELL, "-");
        if (!a) snprintf(c[after_side[k]], DIFF_CELL, "-");
    }
}

/* The text view: text_table.c's layout, then the totals and the notes. */
static int diff_text(opprof__strbuf *sb, const pair *pairs, size_t shown, int64_t tb, int64_t ta,
                     char note[8][160], int n_notes) {
    static const char *const titles[DIFF_COLUMNS] = {"Name",          "Calls before",  "Calls after",  "Self before",
                                                     "Self after",    "Self change",   "Self ratio",   "Total before",
                                                     "Total after",   "Self Mem bef.", "Self Mem after"};
    char (*cells)[DIFF_CELL] = opprof__calloc((shown ? shown : 1) * DIFF_COLUMNS, DIFF_CELL);
    const char **ptrs = opprof__calloc((shown ? shown : 1) * DIFF_COLUMNS, sizeof *ptrs);
    int rc = cells && ptrs ? 0 : OPPROF_ENOMEM;
    for (size_t i = 0; !rc && i < shown; i++) {
        diff_cells(&pairs[i], cells + i * DIFF_COLUMNS);
        for (int k = 0; k < DIFF_COLUMNS; k++) ptrs[i * DIFF_COLUMNS + k] = cells[i * DIFF_COLUMNS + k];
    }
    if (!rc) rc = opprof__text_table(sb, titles, DIFF_COLUMNS, ptrs, shown);
    opprof__free(cells);
    opprof__free(ptrs);
    char t1[48], t2[48];
    opprof_format_time_us((double)tb / 1e3, t1, sizeof t1);
    opprof_format_time_us((double)ta / 1e3, t2, sizeof t2);
    if (tb)
        opprof__sb_printf(sb, "Self CPU time total: %s before, %s after (%+.2f%%)\n", t1, t2,
                          100.0 * (double)(ta - tb) / (double)tb);
    else
        opprof__sb_printf(sb, "Self CPU time total: %s before, %s after\n", t1, t2);
    for (int i = 0; i < n_notes; i++) opprof__sb_printf(sb, "Note: %s\n", note[i]);
    return rc;
}
#undef SIDE

/* The two captures' rows paired by key, largest change of self time first. */
static int paired_rows(const opprof_averages *ab, const opprof_averages *aa, pair **out, size_t *n, size_t *room) {
    size_t nb, na;
    const opprof_average_row *rb = opprof_averages_rows(ab, &nb), *ra = opprof_averages_rows(aa, &na);
    *room = nb + na + 1;
    pair *pairs = opprof__alloc(*room * sizeof *pairs);
    const opprof_average_row **sorted = opprof__alloc(*room * sizeof *sorted);
    if (!pairs || !sorted) {
        opprof__free(pairs);
        opprof__free(sorted);
        return OPPROF_ENOMEM;
    }
    *n = pair_rows(rb, nb, ra, na, sorted, pairs);
    opprof__free(sorted);
    for (size_t i = 0; i < *n; i++)
        pairs[i].self_delta = (int64_t)((uint64_t)(pairs[i].after ? pairs[i].after->self_ns : 0) -
                                        (uint64_t)(pairs[i].before ? pairs[i].before->self_ns : 0));
    qsort(pairs, *n, sizeof *pairs, pair_cmp);
    *out = pairs;
    return 0;
}

int opprof_capture_diff_to_string(const opprof_capture *before, const opprof_capture *after, int row_limit,
                                  opprof_diff_format format, char **out_text) {
    if (!before || !after || !out_text ||
        (format != OPPROF_DIFF_TEXT && format != OPPROF_DIFF_JSON && format != OPPROF_DIFF_HTML))
        return OPPROF_EINVAL;
    opprof_averages *ab = NULL, *aa = NULL;
    pair *pairs = NULL;
    size_t n = 0, room = 0;
    int rc = opprof_capture_averages(before, &ab);
    if (!rc) rc = opprof_capture_averages(after, &aa);
    if (!rc) rc = paired_rows(ab, aa, &pairs, &n, &room);
    opprof__strbuf sb = {0};
    if (!rc) {
        size_t shown = row_limit > 0 && (size_t)row_limit < n ? (size_t)row_limit : n;
        int64_t tb = opprof_averages_self_total_ns(ab), ta = opprof_averages_self_total_ns(aa);
        char note[8][160];
        int n_notes;
        notes(before, after, note, &n_notes);
        if (format == OPPROF_DIFF_JSON)
            diff_json(&sb, pairs, shown, tb, ta, note, n_notes);
        else if (format == OPPROF_DIFF_HTML)
            html_page(&sb, pairs, n, shown, tb, ta, note, n_notes);
        else
            rc = diff_text(&sb, pairs, shown, tb, ta, note, n_notes);
        opprof__free(pairs);
    }
    opprof_averages_free(ab);
    opprof_averages_free(aa);
    return opprof__sb_finish(&sb, rc, out_text);
}
