/* html_report.c - a capture as one self-contained HTML page: its facts, the key
 * averages (a table that sorts by any column), a flame graph of total time
 * (click a box to zoom into it), the explorable timeline (html_timeline.c,
 * drawn by report.js on a canvas), and the memory allocated over time. The
 * other pictures are inline SVG drawn here; the page needs no network and no
 * other file. Every name is escaped: a trace's names are not trusted. */
#define _GNU_SOURCE
#include "render/render.h"

#include <math.h>
#include <string.h>
#include <time.h>

enum {
    WIDTH = 1200,        /* px, of every picture */
    FLAME_ROW = 18,      /* px */
    MAX_FLAME_DEPTH = 64 /* flame graph rows */
};

/* A stable colour per name: warm for operators, cool for ranges. */
static OPPROF__HASH void colour_of(const char *name, bool warm, char *buf, size_t size) {
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    int hue = warm ? (int)(h % 50) : 190 + (int)(h % 60);
    snprintf(buf, size, "hsl(%d,%d%%,%d%%)", hue, 60 + (int)(h >> 8) % 25, 55 + (int)(h >> 16) % 15);
}

static void facts(opprof__strbuf *sb, const opprof_capture *c) {
    const opprof_capture_info *in = &c->info;
    char when[64] = "unknown";
    if (in->base_time_ns >= (int64_t)946684800 * 1000000000) { /* from 2000 on: a wall clock, not a relative time */
        time_t secs = (time_t)(in->base_time_ns / 1000000000);
        struct tm tm;
        if (gmtime_r(&secs, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    }
    char duration[32];
    opprof_format_time_us((double)in->duration_ns / 1e3, duration, sizeof duration);
    opprof__sb_puts(sb, "<table class=\"facts\">\n");
    opprof__sb_printf(sb, "<tr><td>Started</td><td>%s</td></tr>\n", when);
    opprof__sb_printf(sb, "<tr><td>Duration</td><td>%s</td></tr>\n", duration);
    if (in->step_num >= 0) opprof__sb_printf(sb, "<tr><td>Step</td><td>%lld</td></tr>\n", (long long)in->step_num);
    opprof__sb_printf(sb,
                      "<tr><td>Events</td><td>%zu range(s) and operator(s), %zu memory event(s), %zu thread(s)"
                      "</td></tr>\n",
                      c->n_events, c->n_mem, c->n_threads);
    if (in->overhead_range_ns > 0)
        opprof__sb_printf(sb, "<tr><td>Profiler's cost</td><td>%.1f ns a range, %.1f ns a memory event</td></tr>\n",
                          in->overhead_range_ns, in->overhead_memory_event_ns);
    if (in->process_peak_rss_bytes > 0) {
        char rss[32];
        opprof_format_memory(in->process_peak_rss_bytes, rss, sizeof rss);
        opprof__sb_printf(sb, "<tr><td>Peak RSS</td><td>%s</td></tr>\n", rss);
    }
    opprof__sb_printf(sb, "<tr><td>Dropped events</td><td%s>%llu</td></tr>\n",
                      in->dropped_events ? " class=\"warn\"" : "", (unsigned long long)in->dropped_events);
    opprof__sb_puts(sb, "</table>\n");
    if (c->n_warnings) {
        opprof__sb_printf(sb, "<h2>Warnings (%zu)</h2>\n<ul class=\"warn\">\n", c->n_warnings);
        for (size_t i = 0; i < c->n_warnings; i++) {
            opprof__sb_puts(sb, "<li>");
            opprof__sb_html(sb, c->warnings[i]);
            opprof__sb_puts(sb, "</li>\n");
        }
        opprof__sb_puts(sb, "</ul>\n");
    }
}

/* The key averages as the text table shows them (render.h: the same columns
 * and cells, Peak Mem when memory was recorded), by self time; each cell
 * keeps its raw value for sorting; names are cut at MAX_NAME_CELL, whole on
 * hover. */
/* A row's self time per step (per call with fewer than 2 steps) as a box
 * plot on the row's own scale, 0 to its max: whiskers min to max, the box
 * q1 to q3, a tick at the median; the numbers on hover. */
static void distribution_cell(opprof__strbuf *sb, const opprof__view *v, const opprof_average_row *r) {
    enum { W = 120, H = 14 };
    const opprof_distribution *d = opprof__view_self_distribution(v, r);
    if (!d || !d->n || !(d->max > 0)) {
        opprof__sb_puts(sb, "<td data-v=\"0\"></td>");
        return;
    }
    char med[48], q1[48], q3[48], p99[48], mx[48];
    opprof_format_time_us(d->median / 1e3, med, sizeof med);
    opprof_format_time_us(d->q1 / 1e3, q1, sizeof q1);
    opprof_format_time_us(d->q3 / 1e3, q3, sizeof q3);
    opprof_format_time_us(d->p99 / 1e3, p99, sizeof p99);
    opprof_format_time_us(d->max / 1e3, mx, sizeof mx);
    double k = (W - 2) / d->max;
    opprof__sb_printf(sb,
                      "<td data-v=\"%g\"><svg class=\"dist\" width=\"%d\" height=\"%d\"><title>%zu %s: median %s, "
                      "IQR %s to %s, p99 %s, max %s</title><line x1=\"%.1f\" y1=\"7\" x2=\"%.1f\" y2=\"7\"/>"
                      "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"10\"/><line x1=\"%.1f\" y1=\"1\" "
                      "x2=\"%.1f\" y2=\"13\" class=\"med\"/></svg></td>",
                      d->cv, W, H, d->n, opprof_averages_steps(v->avg) >= 2 ? "steps" : "calls", med, q1, q3, p99, mx,
                      1 + d->min * k, 1 + d->max * k, 1 + d->q1 * k, fmax(1, (d->q3 - d->q1) * k), 1 + d->median * k,
                      1 + d->median * k);
}

static int averages_table(opprof__strbuf *sb, const opprof_capture *c) {
    opprof_averages *avg;
    opprof_averages_options with = {.distributions = true};
    int rc = opprof_capture_averages_ex(c, &with, &avg);
    if (rc) return rc;
    opprof_table_options options = {.sort = OPPROF_SORT_SELF_CPU_TIME, .peak_memory = true};
    opprof__view v;
    rc = opprof__view_build(&v, avg, &options);
    opprof__sb_puts(sb, "<h2>Operators and ranges <span class=\"note\">(click a column to sort)</span></h2>\n"
                        "<table class=\"sortable\" id=\"averages\">\n<thead><tr>");
    char buf[512];
    for (size_t k = 0; !rc && k < v.n_columns; k++) {
        opprof__column_title(&v, v.columns[k], buf, sizeof buf);
        opprof__sb_puts(sb, v.columns[k]->text ? "<th data-text=\"1\">" : "<th>");
        opprof__sb_html(sb, buf);
        opprof__sb_puts(sb, "</th>");
    }
    opprof__sb_printf(sb,
                      "<th title=\"self time per %s: min to max, the box from q1 to q3, the median; "
                      "sorts by the coefficient of variation\">Self per %s</th></tr></thead>\n<tbody>\n",
                      opprof_averages_steps(avg) >= 2 ? "step" : "call",
                      opprof_averages_steps(avg) >= 2 ? "step" : "call");
    for (size_t i = 0; !rc && i < v.shown; i++) {
        const opprof_average_row *r = &v.rows[v.order[i]];
        opprof__sb_puts(sb, "<tr>");
        for (size_t k = 0; k < v.n_columns; k++) {
            const opprof__column *col = v.columns[k];
            if (col->unit == OPPROF__UNIT_NAME) {
                opprof__html_name_cell(sb, r->key);
                continue;
            }
            opprof__sb_puts(sb, "<td data-v=\"");
            if (col->text) {
                opprof__sb_html(sb, col->text(r, &v));
            } else {
                opprof__number_text(col->number(r, &v), buf, sizeof buf);
                opprof__sb_puts(sb, buf);
            }
            opprof__sb_puts(sb, "\">");
            opprof__cell(&v, col, r, buf, sizeof buf);
            opprof__sb_html(sb, buf);
            opprof__sb_puts(sb, "</td>");
        }
        distribution_cell(sb, &v, r);
        opprof__sb_puts(sb, "</tr>\n");
    }
    opprof_format_time_us((double)v.self_total / 1e3, buf, sizeof buf);
    opprof__sb_printf(sb, "</tbody>\n</table>\n<p>Self CPU time total: %s</p>\n", buf);
    opprof__view_free(&v);
    opprof_averages_free(avg);
    return rc;
}

/* A cell's number for sorting: "12.34%" 12.34, "1.234ms" 1234 (microseconds), "7" 7. */
static double cell_number(const char *cell) {
    char *end;
    double x = opprof__c_strtod(cell, &end);
    if (!strncmp(end, "ms", 2)) return x * 1e3;
    if (!strncmp(end, "us", 2)) return x;
    if (end[0] == 's') return x * 1e6;
    return x;
}

/* A sampled capture's native functions by samples, as its text table has them. */
static int functions_table(opprof__strbuf *sb, const opprof_capture *c) {
    if (!c->n_samples) return 0;
    char **cells;
    size_t n, columns;
    int rc = opprof__functions_cells(c, 100, &cells, &n);
    if (rc) return rc;
    const char *const *titles = opprof__functions_titles(&columns);
    opprof__sb_printf(sb,
                      "<h2>Native functions by samples <span class=\"note\">(%zu samples, one per %.3f ms of a "
                      "thread's CPU time; click a column to sort)</span></h2>\n"
                      "<table class=\"sortable\" id=\"functions\">\n<thead><tr>",
                      c->n_samples, (double)c->info.sample_period_ns / 1e6);
    for (size_t k = 0; k < columns; k++) {
        opprof__sb_puts(sb, k == 0 || k + 1 == columns ? "<th data-text=\"1\">" : "<th>");
        opprof__sb_html(sb, titles[k]);
        opprof__sb_puts(sb, "</th>");
    }
    opprof__sb_puts(sb, "</tr></thead>\n<tbody>\n");
    for (size_t r = 0; r < n; r++) {
        opprof__sb_puts(sb, "<tr>");
        for (size_t k = 0; k < columns; k++) {
            const char *cell = cells[r * columns + k];
            opprof__sb_puts(sb, "<td data-v=\"");
            if (k == 0 || k + 1 == columns)
                opprof__sb_html(sb, cell);
            else
                opprof__sb_printf(sb, "%.17g", cell_number(cell));
            opprof__sb_puts(sb, "\">");
            opprof__sb_html(sb, cell);
            opprof__sb_puts(sb, "</td>");
        }
        opprof__sb_puts(sb, "</tr>\n");
    }
    opprof__sb_puts(sb, "</tbody>\n</table>\n");
    opprof__functions_cells_free(cells, n);
    return 0;
}

/* One box of the flame graph: a node of the stack tree at x, its name when it fits. */
static void flame_box(opprof__strbuf *sb, const opprof_capture *c, const opprof__stack_node *nd, double x, double scale,
                      double root_total) {
    double w = (double)nd->total_ns * scale;
    if (nd->depth > MAX_FLAME_DEPTH || w < 0.1) return;
    const char *name = opprof__stack_name(c, nd->name); /* the steps merged, as in the table */
    char colour[40], total[32], self[32];
    colour_of(name, strncmp(name, "aten::", 6) == 0, colour, sizeof colour);
    opprof_format_time_us((double)nd->total_ns / 1e3, total, sizeof total);
    opprof_format_time_us((double)nd->self_ns / 1e3, self, sizeof self);
    double y = (double)(nd->depth - 1) * FLAME_ROW;
    opprof__sb_puts(sb, "<g><title>");
    opprof__sb_html(sb, name);
    opprof__sb_printf(sb, ": %s total (%.2f%%), %s self</title>", total,
                      root_total > 0 ? 100.0 * (double)nd->total_ns / root_total : 0.0, self);
    opprof__sb_printf(sb,
                      "<rect class=\"f\" data-total-ns=\"%lld\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
                      "height=\"%d\" fill=\"%s\"/>",
                      (long long)nd->total_ns, x, y, w, FLAME_ROW - 1, colour);
    int chars = (int)((w - 6) / 7);
    if (chars >= 3) {
        opprof__sb_printf(sb, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + 12);
        opprof__sb_html_cut(sb, name, (size_t)chars);
        opprof__sb_puts(sb, "</text>");
    }
    opprof__sb_puts(sb, "</g>\n");
}

/* Flame graph (icicle: roots on top) of a tree: one box per path of names,
 * as wide as its total; siblings in first-seen order. `what` ends the title. */
static int flame_of(opprof__strbuf *sb, const opprof_capture *c, opprof__stack_tree t, const char *title,
                    const char *what) {
    int rc = 0;
    size_t n = t.n;
    int32_t *first_child = opprof__alloc((n ? n : 1) * sizeof *first_child);
    int32_t *next_sibling = opprof__alloc((n ? n : 1) * sizeof *next_sibling);
    int32_t *last_child = opprof__alloc((n ? n : 1) * sizeof *last_child);
    double *x = opprof__alloc((n ? n : 1) * sizeof *x);
    if (!first_child || !next_sibling || !last_child || !x) rc = OPPROF_ENOMEM;
    double root_total = 0; /* in double: sums of times read from files may exceed int64 */
    uint32_t depth = 0;
    int32_t first_root = -1, last_root = -1;
    for (size_t i = 0; i < n && !rc; i++) {
        first_child[i] = last_child[i] = next_sibling[i] = -1;
        const opprof__stack_node *nd = &t.nodes[i];
        if (nd->depth <= MAX_FLAME_DEPTH && nd->depth > depth) depth = nd->depth;
        int32_t *first = nd->parent >= 0 ? &first_child[nd->parent] : &first_root;
        int32_t *last = nd->parent >= 0 ? &last_child[nd->parent] : &last_root;
        if (*last >= 0)
            next_sibling[*last] = (int32_t)i;
        else
            *first = (int32_t)i;
        *last = (int32_t)i;
        if (nd->parent < 0) root_total += (double)nd->total_ns;
    }
    if (!rc) {
        int height = (int)depth * FLAME_ROW + 1;
        char total_text[32];
        opprof_format_time_us(root_total / 1e3, total_text, sizeof total_text);
        opprof__sb_printf(sb,
                          "<h2>%s <span class=\"note\">(%s, %s in all; hover for numbers)</span></h2>\n"
                          "<svg class=\"flame\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                          "xmlns=\"http://www.w3.org/2000/svg\">\n",
                          title, what, total_text, WIDTH, height, WIDTH, height);
        double scale = root_total > 0 ? (double)WIDTH / root_total : 0.0;
        /* Nodes come parent first: x of a node = its parent's x + its elder siblings' widths. */
        double root_x = 0;
        for (int32_t r = first_root; r >= 0; r = next_sibling[r]) {
            x[r] = root_x;
            root_x += (double)t.nodes[r].total_ns * scale;
        }
        for (size_t i = 0; i < n; i++) {
            double cx = x[i];
            for (int32_t ch = first_child[i]; ch >= 0; ch = next_sibling[ch]) {
                x[ch] = cx;
                cx += (double)t.nodes[ch].total_ns * scale;
            }
        }
        for (size_t i = 0; i < n; i++) flame_box(sb, c, &t.nodes[i], x[i], scale, root_total);
        opprof__sb_puts(sb, "</svg>\n");
    }
    opprof__free(first_child);
    opprof__free(next_sibling);
    opprof__free(last_child);
    opprof__free(x);
    opprof__stack_tree_free(&t);
    return rc;
}

/* The events' flame graph; a sampled capture's second, of its samples. */
static int flame_graph(opprof__strbuf *sb, const opprof_capture *c) {
    opprof__stack_tree t;
    int rc = opprof__stack_tree_build(c, &t);
    if (!rc) rc = flame_of(sb, c, t, "Flame graph", "total CPU time of each path of ranges and operators");
    if (!rc && c->n_samples && !(rc = opprof__sample_tree_build(c, &t)))
        rc = flame_of(sb, c, t, "Flame graph of the samples",
                      "each sample's native frames under the ranges and operators open at it; CPU time estimated "
                      "as samples times the sampling period");
    return rc;
}

static int by_counter_then_time(const void *a, const void *b, void *capture) {
    const opprof_capture *c = capture;
    const opprof_mark *x = &c->marks[*(const uint32_t *)a], *y = &c->marks[*(const uint32_t *)b];
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* One chart a counter (OPPROF_COUNTER): its value over time, a step line. */
static int counter_charts(opprof__strbuf *sb, const opprof_capture *c) {
    size_t n = 0;
    for (size_t k = 0; k < c->n_marks; k++) n += c->marks[k].kind == OPPROF_MARK_COUNTER;
    if (!n) return 0;
    uint32_t *order = opprof__alloc(n * sizeof *order);
    if (!order) return OPPROF_ENOMEM;
    for (size_t k = 0, j = 0; k < c->n_marks; k++)
        if (c->marks[k].kind == OPPROF_MARK_COUNTER) order[j++] = (uint32_t)k;
    qsort_r(order, n, sizeof *order, by_counter_then_time, (void *)c);
    int64_t span = c->info.duration_ns > 0 ? c->info.duration_ns : 1;
    enum { HEIGHT = 80, LEFT = 70 };
    for (size_t first = 0; first < n;) {
        uint32_t name = c->marks[order[first]].name;
        size_t last = first;
        double low = c->marks[order[first]].value.d, high = low;
        while (last < n && c->marks[order[last]].name == name) {
            double v = c->marks[order[last++]].value.d;
            if (v < low) low = v;
            if (v > high) high = v;
        }
        double range = high > low ? high - low : 1.0;
        opprof__sb_puts(sb, "<h2>Counter <span class=\"note\">");
        opprof__sb_html(sb, c->names[name]);
        opprof__sb_printf(sb, " (%zu samples, %g to %g)</span></h2>\n", last - first, low, high);
        opprof__sb_printf(sb,
                          "<svg class=\"counter\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                          "xmlns=\"http://www.w3.org/2000/svg\">\n<text x=\"2\" y=\"12\">%g</text>"
                          "<text x=\"2\" y=\"%d\">%g</text>\n<polyline fill=\"none\" stroke=\"#a50\" "
                          "stroke-width=\"1.5\" points=\"",
                          WIDTH, HEIGHT + 10, WIDTH, HEIGHT + 10, high, HEIGHT + 5, low);
        double y_prev = -1;
        for (size_t j = first; j < last; j++) {
            const opprof_mark *m = &c->marks[order[j]];
            double x = LEFT + (double)m->ts_ns * (WIDTH - 1 - LEFT) / (double)span;
            double y = 5 + HEIGHT - (m->value.d - low) * HEIGHT / range;
            if (y_prev >= 0) opprof__sb_printf(sb, "%.1f,%.1f ", x, y_prev); /* hold until the next sample */
            opprof__sb_printf(sb, "%.1f,%.1f ", x, y);
            y_prev = y;
        }
        opprof__sb_puts(sb, "\"/>\n</svg>\n");
        first = last;
    }
    opprof__free(order);
    return 0;
}

/* Bytes allocated over time (the allocator's total after each event), as
 * the highest value in each pixel column, with the peak marked. */
static int memory_chart(opprof__strbuf *sb, const opprof_capture *c) {
    size_t m = 0; /* the CPU's memory (a device's has a total of its own) */
    const opprof_memory_event **by_time = NULL;
    if (opprof__cpu_memory_by_time(c, &by_time, &m)) return OPPROF_ENOMEM;
    if (!m) return 0;
    int64_t span = c->info.duration_ns > 0 ? c->info.duration_ns : 1, low = INT64_MAX, high = INT64_MIN;
    const opprof_memory_event *peak = by_time[0];
    for (size_t j = 0; j < m; j++) {
        int64_t v = by_time[j]->total_allocated;
        if (v < low) low = v;
        if (v > high) high = v;
        if (v > peak->total_allocated) peak = by_time[j];
    }
    int64_t before_first;
    if (__builtin_sub_overflow(by_time[0]->total_allocated, by_time[0]->bytes, &before_first))
        before_first = by_time[0]->total_allocated;
    if (before_first < low) low = before_first;
    double range = high > low ? (double)high - (double)low : 1.0; /* from the lowest level: changes show */
    enum { HEIGHT = 160, LEFT = 70 };
#define Y(v) (5 + HEIGHT - ((double)(v) - (double)low) * HEIGHT / range)
#define X(ts) (LEFT + (double)(ts) * (WIDTH - 1 - LEFT) / (double)span)
    char peak_text[32], at_text[32];
    opprof_format_memory(peak->total_allocated, peak_text, sizeof peak_text);
    opprof_format_time_us((double)peak->ts_ns / 1e3, at_text, sizeof at_text);
    opprof__sb_printf(sb, "<h2>Memory <span class=\"note\">(bytes allocated over time; peak %s at %s)</span></h2>\n",
                      peak_text, at_text);
    char high_text[32], low_text[32], span_text[32];
    opprof_format_memory(high, high_text, sizeof high_text);
    opprof_format_memory(low, low_text, sizeof low_text);
    opprof_format_time_us((double)span / 1e3, span_text, sizeof span_text);
    opprof__sb_printf(sb,
                      "<svg class=\"memory\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                      "xmlns=\"http://www.w3.org/2000/svg\">\n"
                      "<line x1=\"%d\" y1=\"5\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>"
                      "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n"
                      "<text x=\"2\" y=\"12\">%s</text><text x=\"2\" y=\"%d\">%s</text>"
                      "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n"
                      "<polyline class=\"m\" fill=\"none\" stroke=\"#36c\" stroke-width=\"1.5\" points=\"",
                      WIDTH, HEIGHT + 24, WIDTH, HEIGHT + 24, LEFT - 2, LEFT - 2, HEIGHT + 5, LEFT - 2, HEIGHT + 5,
                      WIDTH - 1, HEIGHT + 5, high_text, HEIGHT + 5, low_text, LEFT, HEIGHT + 20, WIDTH - 1, HEIGHT + 20,
                      span_text);
    /* A step line: the level holds until the next event. Events in one pixel
     * column draw a spike to their highest total, then the column's last. */
    int64_t level = before_first; /* before the first event */
    opprof__sb_printf(sb, "%d,%.1f ", LEFT, Y(level));
    for (size_t j = 0; j < m;) {
        int px = (int)X(by_time[j]->ts_ns);
        if (px > WIDTH - 1) px = WIDTH - 1;
        int64_t column_max = by_time[j]->total_allocated, last = column_max;
        size_t k = j + 1;
        for (; k < m && (int)X(by_time[k]->ts_ns) <= px; k++) {
            last = by_time[k]->total_allocated;
            if (last > column_max) column_max = last;
        }
        opprof__sb_printf(sb, "%d,%.1f %d,%.1f %d,%.1f ", px, Y(level), px, Y(column_max), px, Y(last));
        level = last;
        j = k;
    }
    opprof__sb_printf(sb, "%d,%.1f", WIDTH - 1, Y(level));
    double peak_x = X(peak->ts_ns);
    double peak_y = Y(peak->total_allocated);
#undef Y
#undef X
    opprof__sb_printf(sb,
                      "\"/>\n<circle class=\"peak\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#c33\">"
                      "<title>peak: %s at %s</title></circle>\n</svg>\n",
                      peak_x, peak_y, peak_text, at_text);
    opprof__free(by_time);
    return 0;
}

/* The roofline chart, after the table, when a machine is given. */
static int roofline_chart(opprof__strbuf *sb, const opprof_capture *c, const opprof_machine *m) {
    if (!m) return 0;
    opprof_averages *avg = NULL;
    int rc = opprof_capture_averages(c, &avg);
    if (!rc) rc = opprof__html_roofline(sb, avg, m);
    opprof_averages_free(avg);
    return rc;
}

static int capture_html_to_string_here(const opprof_capture *c, char **out_text) {
    return opprof_capture_html_roofline_to_string(c, NULL, out_text);
}

int opprof_capture_html_to_string(const opprof_capture *c, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_html_to_string_here(c, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}

static int capture_html_roofline_to_string_here(const opprof_capture *c, const opprof_machine *m, char **out_text) {
    if (!c || !out_text || (m && m->threads < 1)) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    char title[64] = "opprof capture";
    if (c->info.step_num >= 0) snprintf(title, sizeof title, "opprof capture (step %lld)", (long long)c->info.step_num);
    opprof__html_begin(&sb, title);
    facts(&sb, c);
    int rc = averages_table(&sb, c);
    if (!rc) rc = roofline_chart(&sb, c, m);
    if (!rc) rc = functions_table(&sb, c);
    if (!rc) rc = flame_graph(&sb, c);
    if (!rc) rc = opprof__html_timeline(&sb, c);
    if (!rc) rc = memory_chart(&sb, c);
    if (!rc) rc = counter_charts(&sb, c);
    opprof__html_report_script(&sb);
    opprof__html_end(&sb);
    rc = opprof__sb_finish(&sb, rc, out_text);
    return rc;
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_capture_html_roofline_to_string(const opprof_capture *c, const opprof_machine *m, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_html_roofline_to_string_here(c, m, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}

static int capture_html_write_here(const opprof_capture *c, const char *path) {
    return opprof_capture_html_roofline_write(c, NULL, path);
}

/* The numbers as C writes them, whatever locale the program set (base/c_numbers.c). */
int opprof_capture_html_write(const opprof_capture *c, const char *path) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_html_write_here(c, path);
    opprof__c_numbers_end(numbers);
    return rc;
}

static int capture_html_roofline_write_here(const opprof_capture *c, const opprof_machine *m, const char *path) {
    if (!c || !path) return OPPROF_EINVAL;
    char *text = NULL;
    int rc = opprof_capture_html_roofline_to_string(c, m, &text);
    if (!rc) rc = opprof_write_text_file(path, text);
    opprof_free(text);
    return rc;
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_capture_html_roofline_write(const opprof_capture *c, const opprof_machine *m, const char *path) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_html_roofline_write_here(c, m, path);
    opprof__c_numbers_end(numbers);
    return rc;
}
