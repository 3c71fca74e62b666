/* html_timeline.c - the report's explorable timeline: every event of the
 * capture as data for report.js (embedded at build time: report_js.h), which
 * draws it on a canvas with zoom, pan, search, hidden tracks and details on
 * click; the memory total and the counters as charts on the same time axis.
 * Strings are escaped for a <script> element: a trace's names are not trusted. */
#include "render/render.h"

#include <string.h>

#include "report_js.h" /* REPORT_JS: src/opprof/report.js */

/* A JavaScript string literal that cannot end its <script> element. */
static void js_string(opprof__strbuf *sb, const char *s) {
    opprof__sb_puts(sb, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            opprof__sb_printf(sb, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
            opprof__sb_printf(sb, "\\u%04x", *p);
        else
            opprof__sb_put(sb, (const char *)p, 1);
    }
    opprof__sb_puts(sb, "\"");
}

/* ---- which events the page holds ---- */

/* A browser draws a few million events at most (1 M load in under a second,
 * tests/browser_test.sh): past OPPROF_REPORT_EVENTS (default 2 M), the
 * timeline holds the longest ones, those of at least min_ns; a parent lasts
 * at least as long as its children, so every event shown has its callers. The
 * page says so; the trace and the tables keep every event. */
enum { DEFAULT_MAX_EVENTS = 2000000 };

typedef struct shown {
    const opprof_capture *c;
    int32_t *at;    /* event -> its place in the page, -1: left out; NULL: all, in order */
    size_t n;       /* events in the page */
    int64_t min_ns; /* when some are left out: the shortest duration shown */
} shown;

static int choose_events(shown *sh, const opprof_capture *c) {
    *sh = (shown){.c = c, .n = c->n_events};
    size_t max = (size_t)opprof__env_int("OPPROF_REPORT_EVENTS", 1, INT32_MAX, DEFAULT_MAX_EVENTS);
    int64_t hi = opprof__capture_longest_bound(c, max);
    if (!hi) return 0;
    sh->at = opprof__alloc(c->n_events * sizeof *sh->at);
    if (!sh->at) return OPPROF_ENOMEM;
    sh->min_ns = hi;
    sh->n = 0;
    for (size_t i = 0; i < c->n_events; i++) sh->at[i] = c->events[i].duration_ns >= hi ? (int32_t)sh->n++ : -1;
    return 0;
}

/* The page's index of event i, or -1. */
static int32_t place(const shown *sh, size_t i) { return sh->at ? sh->at[i] : (int32_t)i; }

/* The page's index of the nearest caller shown, or -1. */
static int32_t shown_parent(const shown *sh, const opprof_event *e) {
    if (opprof__is_device(e)) return -1;
    int32_t p = e->parent;
    while (p >= 0 && place(sh, (size_t)p) < 0) p = sh->c->events[p].parent;
    return p >= 0 ? place(sh, (size_t)p) : -1;
}

static void events_arrays(opprof__strbuf *sb, const shown *sh) {
    static const char *const keys[] = {"s", "d", "n", "t", "p"};
    const opprof_capture *c = sh->c;
    for (int k = 0; k < 5; k++) {
        opprof__sb_printf(sb, ",%s:[", keys[k]);
        for (size_t i = 0, first = 1; i < c->n_events; i++) {
            const opprof_event *e = &c->events[i];
            if (place(sh, i) < 0) continue;
            if (!first) opprof__sb_puts(sb, ",");
            first = 0;
            if (k == 0) opprof__sb_us(sb, e->start_ns);
            if (k == 1) opprof__sb_us(sb, e->duration_ns);
            if (k == 2) opprof__sb_int(sb, e->name);
            if (k == 3) opprof__sb_int(sb, e->thread);
            if (k == 4) opprof__sb_int(sb, shown_parent(sh, e));
        }
        opprof__sb_puts(sb, "]\n");
    }
}

static void thread_labels(opprof__strbuf *sb, const opprof_capture *c) {
    opprof__sb_puts(sb, ",threads:[");
    for (size_t th = 0; th < c->n_threads; th++) {
        const opprof_thread_info *t = &c->threads[th];
        char label[160]; /* "rank 1 · profile_cpu (tid 7)", "thread 7" */
        snprintf(label, sizeof label, "%s%s%s%s%lld%s", t->process, t->process[0] ? " \xc2\xb7 " : "", t->name,
                 t->name[0] ? " (tid " : "thread ", (long long)t->tid, t->name[0] ? ")" : "");
        if (th) opprof__sb_puts(sb, ",");
        js_string(sb, label);
    }
    opprof__sb_puts(sb, "]\n");
}

/* args, shapes, sites: objects keyed by event index, only where there is one. */
static int event_texts(opprof__strbuf *sb, const shown *sh) {
    const opprof_capture *c = sh->c;
    opprof__arg_index args;
    if (opprof__arg_index_build(&args, c)) return OPPROF_ENOMEM;
    opprof__strbuf text = {0};
    opprof__sb_puts(sb, ",args:{");
    for (size_t i = 0, first = 1; args.first && i < c->n_events; i++) {
        if (args.first[i] == args.first[i + 1] || place(sh, i) < 0) continue;
        text.len = 0;
        for (uint32_t a = args.first[i]; a < args.first[i + 1]; a++) {
            const opprof_mark *m = &c->marks[args.order[a]];
            opprof__sb_printf(&text, "%s%s=", a > args.first[i] ? ", " : "", c->names[m->name]);
            if (m->kind == OPPROF_MARK_ARG_STR)
                opprof__sb_puts(&text, c->names[m->value.str]);
            else if (m->kind == OPPROF_MARK_ARG_DOUBLE)
                opprof__sb_printf(&text, "%g", m->value.d);
            else
                opprof__sb_printf(&text, "%lld", (long long)m->value.i);
        }
        opprof__sb_printf(sb, "%s%d:", first ? "" : ",", place(sh, i));
        if (text.error) sb->error = text.error; /* the page fails: no argument left out */
        js_string(sb, text.error ? "" : text.data);
        first = 0;
    }
    opprof__sb_puts(sb, "},shapes:{");
    for (size_t i = 0, first = 1; i < c->n_events; i++) {
        const opprof_site *site = opprof_capture_site(c, c->events[i].site);
        const opprof_shapes *shapes = site && site->shapes ? opprof_capture_shapes(c, site->shapes) : NULL;
        if (!shapes || place(sh, i) < 0) continue;
        char buf[512];
        opprof_shapes_format(shapes, buf, sizeof buf);
        opprof__sb_printf(sb, "%s%d:", first ? "" : ",", place(sh, i));
        js_string(sb, buf);
        first = 0;
    }
    opprof__sb_puts(sb, "},sites:{");
    for (size_t i = 0, first = 1; i < c->n_events; i++) {
        const opprof_site *site = opprof_capture_site(c, c->events[i].site);
        if (!site || !site->file || place(sh, i) < 0) continue;
        char buf[512];
        snprintf(buf, sizeof buf, "%s:%u", site->file, site->line);
        opprof__sb_printf(sb, "%s%d:", first ? "" : ",", place(sh, i));
        js_string(sb, buf);
        first = 0;
    }
    opprof__sb_puts(sb, "}\n");
    opprof__sb_free(&text);
    opprof__arg_index_free(&args);
    return 0;
}

/* Per event, the memory its own memory events moved. */
static int event_memory(opprof__strbuf *sb, const shown *sh) {
    const opprof_capture *c = sh->c;
    int64_t *alloc = opprof__calloc(c->n_events ? c->n_events * 2 : 1, sizeof *alloc);
    if (!alloc) return OPPROF_ENOMEM;
    for (size_t j = 0; j < c->n_mem; j++) {
        const opprof_memory_event *m = &c->mem[j];
        if (m->owner < 0 || (size_t)m->owner >= c->n_events) continue;
        int64_t moved = m->bytes >= 0 ? m->bytes : m->bytes == INT64_MIN ? INT64_MAX : -m->bytes;
        OPPROF__SAT_ADD(alloc[2 * m->owner + (m->bytes < 0)], moved); /* hostile sizes saturate */
    }
    opprof__sb_puts(sb, ",mem:{");
    for (size_t i = 0, first = 1; i < c->n_events; i++) {
        if ((!alloc[2 * i] && !alloc[2 * i + 1]) || place(sh, i) < 0) continue;
        char a[32], f[32], text[160];
        opprof_format_memory(alloc[2 * i], a, sizeof a);
        opprof_format_memory(alloc[2 * i + 1], f, sizeof f);
        snprintf(text, sizeof text, "%s allocated, %s freed by the event itself", a, f);
        opprof__sb_printf(sb, "%s%d:", first ? "" : ",", place(sh, i));
        js_string(sb, text);
        first = 0;
    }
    opprof__sb_puts(sb, "}\n");
    opprof__free(alloc);
    return 0;
}

static int by_time(const void *a, const void *b) {
    const opprof_memory_event *x = *(const opprof_memory_event *const *)a, *y = *(const opprof_memory_event *const *)b;
    return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

int opprof__cpu_memory_by_time(const opprof_capture *c, const opprof_memory_event ***out, size_t *n) {
    size_t m = 0;
    bool ordered = true; /* the capture's are by thread, then time: one thread's need no sort */
    const opprof_memory_event *last = NULL;
    for (size_t j = 0; j < c->n_mem; j++) {
        if (c->mem[j].device_type != 0) continue;
        ordered = ordered && (!last || last->ts_ns <= c->mem[j].ts_ns);
        last = &c->mem[j];
        m++;
    }
    *out = NULL;
    *n = m;
    if (!m) return 0;
    const opprof_memory_event **order = opprof__alloc(m * sizeof *order);
    if (!order) return OPPROF_ENOMEM;
    for (size_t j = 0, k = 0; j < c->n_mem; j++)
        if (c->mem[j].device_type == 0) order[k++] = &c->mem[j];
    if (!ordered) qsort(order, m, sizeof *order, by_time);
    *out = order;
    return 0;
}

static int by_name_then_place(const void *a, const void *b) {
    const opprof_mark *x = *(const opprof_mark *const *)a, *y = *(const opprof_mark *const *)b;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    return x < y ? -1 : x > y; /* the capture's marks are in time order */
}

/* Each counter, one series per name, its samples in time order. */
static int counter_series(opprof__strbuf *sb, const opprof_capture *c, bool any) {
    size_t n = 0;
    for (size_t j = 0; j < c->n_marks; j++) n += c->marks[j].kind == OPPROF_MARK_COUNTER;
    if (!n) return 0;
    const opprof_mark **order = opprof__alloc(n * sizeof *order);
    if (!order) return OPPROF_ENOMEM;
    for (size_t j = 0, k = 0; j < c->n_marks; j++)
        if (c->marks[j].kind == OPPROF_MARK_COUNTER) order[k++] = &c->marks[j];
    qsort(order, n, sizeof *order, by_name_then_place);
    for (size_t first = 0, end; first < n; first = end) {
        for (end = first; end < n && order[end]->name == order[first]->name;) end++;
        opprof__sb_puts(sb, any ? ",{name:" : "{name:");
        js_string(sb, c->names[order[first]->name]);
        for (int part = 0; part < 2; part++) {
            opprof__sb_puts(sb, part ? "],v:[" : ",t:[");
            for (size_t j = first; j < end; j++) {
                if (j > first) opprof__sb_puts(sb, ",");
                if (part)
                    opprof__sb_printf(sb, "%.17g", order[j]->value.d);
                else
                    opprof__sb_us(sb, order[j]->ts_ns);
            }
        }
        opprof__sb_puts(sb, "]}");
        any = true;
    }
    opprof__free(order);
    return 0;
}

/* The CPU allocator's total after each memory event, then each counter. */
static int series(opprof__strbuf *sb, const opprof_capture *c) {
    opprof__sb_puts(sb, ",series:[");
    size_t m = 0;
    const opprof_memory_event **order = NULL;
    if (opprof__cpu_memory_by_time(c, &order, &m)) return OPPROF_ENOMEM;
    bool any = false;
    if (m) {
        opprof__sb_puts(sb, "{name:\"allocated bytes\",t:[");
        for (size_t j = 0; j < m; j++) {
            if (j) opprof__sb_puts(sb, ",");
            opprof__sb_us(sb, order[j]->ts_ns);
        }
        opprof__sb_puts(sb, "],v:[");
        for (size_t j = 0; j < m; j++) {
            if (j) opprof__sb_puts(sb, ",");
            opprof__sb_int(sb, order[j]->total_allocated);
        }
        opprof__sb_puts(sb, "]}");
        opprof__free(order);
        any = true;
    }
    int rc = counter_series(sb, c, any);
    opprof__sb_puts(sb, "]\n");
    return rc;
}

/* Each thread's times off the CPU (off: thread, start, duration, one after
 * another) and its samples (smp: thread, time), marked on its track. */
static void cpu_marks(opprof__strbuf *sb, const opprof_capture *c) {
    opprof__sb_puts(sb, ",off:[");
    for (size_t j = 0; j < c->n_off_cpu; j++) {
        opprof__sb_printf(sb, "%s%u,", j ? "," : "", c->off_cpu[j].thread);
        opprof__sb_us(sb, c->off_cpu[j].start_ns);
        opprof__sb_puts(sb, ",");
        opprof__sb_us(sb, c->off_cpu[j].duration_ns);
    }
    opprof__sb_puts(sb, "],smp:[");
    for (size_t j = 0; j < c->n_samples; j++) {
        opprof__sb_printf(sb, "%s%u,", j ? "," : "", c->samples[j].thread);
        opprof__sb_us(sb, c->samples[j].ts_ns);
    }
    opprof__sb_puts(sb, "]\n");
}

/* "(1.234ms across, 30 events; ...)" or, with events left out, how many are shown and why. */
static void timeline_heading(opprof__strbuf *sb, const shown *sh, int64_t span) {
    char span_text[32], min_text[32];
    opprof_format_time_us((double)span / 1e3, span_text, sizeof span_text);
    opprof__sb_printf(sb,
                      "<h2>Timeline <span class=\"note\">(%s across, %zu events; wheel or W/S: zoom, drag or "
                      "A/D: pan, click: details%s)</span></h2>\n",
                      span_text, sh->n,
                      sh->c->n_off_cpu || sh->c->n_samples ? "; under a thread's name, grey: off the CPU, red: a sample"
                                                           : "");
    if (!sh->at) return;
    opprof_format_time_us((double)sh->min_ns / 1e3, min_text, sizeof min_text);
    opprof__sb_printf(sb,
                      "<p class=\"warn\" id=\"tl-left-out\">The timeline shows the %zu longest of the capture's %zu "
                      "events, those of %s and longer (OPPROF_REPORT_EVENTS sets how many a page holds); the "
                      "tables above, the flame graph and the trace keep every event.</p>\n",
                      sh->n, sh->c->n_events, min_text);
}

int opprof__html_timeline(opprof__strbuf *sb, const opprof_capture *c) {
    if (!c->n_events) return 0;
    shown sh;
    if (choose_events(&sh, c)) return OPPROF_ENOMEM;
    int64_t span = c->info.duration_ns > 0 ? c->info.duration_ns : 1;
    timeline_heading(sb, &sh, span);
    opprof__sb_puts(sb, "<div class=\"tl-bar\"><input id=\"tl-search\" type=\"search\" placeholder=\"search names\"> "
                        "<span id=\"tl-range\" class=\"note\"></span><div id=\"tl-threads\"></div></div>\n"
                        "<canvas id=\"tl-canvas\" style=\"width:100%;border:1px solid #ddd\"></canvas>\n"
                        "<pre id=\"tl-detail\"></pre><pre id=\"opprof-selftest\"></pre>\n"
                        "<script>window.OPPROF_TL={span:");
    opprof__sb_us(sb, span);
    opprof__sb_puts(sb, ",names:[");
    for (uint32_t i = 0; i < c->n_names; i++) {
        if (i) opprof__sb_puts(sb, ",");
        js_string(sb, c->names[i]);
    }
    opprof__sb_puts(sb, "]\n");
    events_arrays(sb, &sh);
    thread_labels(sb, c);
    int rc = event_texts(sb, &sh);
    if (!rc) rc = event_memory(sb, &sh);
    if (!rc) rc = series(sb, c);
    cpu_marks(sb, c);
    opprof__sb_puts(sb, "};</script>\n");
    opprof__free(sh.at);
    return rc;
}

void opprof__html_report_script(opprof__strbuf *sb) {
    opprof__sb_puts(sb, "<script>");
    opprof__sb_puts(sb, REPORT_JS);
    opprof__sb_puts(sb, "</script>\n");
}
