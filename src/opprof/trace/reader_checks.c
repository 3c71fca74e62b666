/* reader_checks.c - the problems that opprof check lists, each with its
 * place, and the checks that need the whole trace. */
#define _GNU_SOURCE
#include "trace/reader_state.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- problems (opprof check) ---- */

static void vproblem(parser *p, int64_t offset, int64_t line, int64_t column, bool assumed, const char *fmt,
                     va_list ap) {
    p->problems++;
    if (!p->opt || !p->opt->on_problem) return;
    if (p->translated) offset = -1, line = column = 0; /* a place in the translation is none of the .pftrace's */
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    opprof__show_controls(msg, sizeof msg); /* a name quoted from the trace */
    opprof_trace_problem pr = {.offset = offset, .line = line, .column = column, .message = msg, .assumed = assumed};
    p->opt->on_problem(p->opt->ctx, &pr);
}

void opprof__reader_assumed(parser *p, int64_t offset, bool warning, const char *what) {
    if (!warning && !(p->opt && p->opt->on_problem)) return; /* nobody to tell */
    int64_t line = 0, column = 0;
    opprof__json_locate(&p->lx, offset, &line, &column);
    opprof__reader_assumed_placed(p, offset, line, column, "%s", what);
    if (warning && p->translated)
        opprof__capture_warnf(p->cap, "%s", what);
    else if (warning)
        opprof__capture_warnf(p->cap, "line %lld: %s", (long long)line, what);
}

void opprof__reader_assumed_placed(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vproblem(p, offset, line, column, true, fmt, ap);
    va_end(ap);
}

/* The checks that need the whole trace (records kept for each event). */
bool opprof__reader_whole_checks(const parser *p) { return p->opt && p->opt->on_problem && !p->opt->events_only; }

/* A problem at an offset in the current window. */
void opprof__reader_problem_at(parser *p, int64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void opprof__reader_problem_at(parser *p, int64_t offset, const char *fmt, ...) {
    int64_t line = 0, column = 0;
    if (offset >= 0) opprof__json_locate(&p->lx, offset, &line, &column);
    va_list ap;
    va_start(ap, fmt);
    vproblem(p, offset, line, column, false, fmt, ap);
    va_end(ap);
}

/* A problem found after parsing, at a place remembered while parsing. */
void opprof__reader_problem_placed(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void opprof__reader_problem_placed(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vproblem(p, offset, line, column, false, fmt, ap);
    va_end(ap);
}

/* ---- checks that need the whole trace ---- */

/* "the CPU's allocator", "CUDA device 0's allocator" */
typedef struct allocator_name {
    char text[48];
} allocator_name;
static allocator_name allocator_text(const opprof_memory_event *m) {
    static const char *const types[] = {"CPU",  "CUDA", "MKLDNN", "OpenGL", "OpenCL", "IDEEP", "HIP",
                                        "FPGA", "MAIA", "XLA",    "Vulkan", "Metal",  "XPU",   "MPS",
                                        "Meta", "HPU",  "VE",     "Lazy",   "IPU",    "MTIA"};
    allocator_name a;
    const char *type =
        m->device_type >= 0 && (size_t)m->device_type < sizeof types / sizeof *types ? types[m->device_type] : "device";
    if (m->device_type == 0 && m->device_id < 0)
        snprintf(a.text, sizeof a.text, "the CPU's allocator");
    else
        snprintf(a.text, sizeof a.text, "%s device %d's allocator", type, (int)m->device_id);
    return a;
}

/* Complete events by thread, then start, then longer first (parents first). */
static int xrecord_cmp(const void *a, const void *b, void *ctx) {
    const xrecord *x = a, *y = b;
    const opprof_event *ex = &((const opprof_capture *)ctx)->events[x->event];
    const opprof_event *ey = &((const opprof_capture *)ctx)->events[y->event];
    if (ex->thread != ey->thread) return ex->thread < ey->thread ? -1 : 1;
    if (ex->start_ns != ey->start_ns) return ex->start_ns < ey->start_ns ? -1 : 1;
    if (ex->duration_ns != ey->duration_ns) return ex->duration_ns > ey->duration_ns ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Memory events by allocator (device type, device id: each keeps its own
 * running total), then time, then place in the file. */
static int mrecord_cmp(const void *a, const void *b, void *ctx) {
    const mrecord *x = a, *y = b;
    const opprof_memory_event *mx = &((const opprof_capture *)ctx)->mem[x->mem];
    const opprof_memory_event *my = &((const opprof_capture *)ctx)->mem[y->mem];
    if (mx->device_type != my->device_type) return mx->device_type < my->device_type ? -1 : 1;
    if (mx->device_id != my->device_id) return mx->device_id < my->device_id ? -1 : 1;
    if (mx->ts_ns != my->ts_ns) return mx->ts_ns < my->ts_ns ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int64_t end_of(const opprof_event *e) { return e->start_ns + e->duration_ns; }

/* Complete events that overlap without nesting, per thread. */
static void check_nesting(parser *p) {
    const opprof_event *ev = p->cap->events;
    if (p->n_xs > 1) qsort_r(p->xs, p->n_xs, sizeof *p->xs, xrecord_cmp, p->cap);
    size_t *stack = NULL, depth = 0, cap = 0;
    for (size_t i = 0; i < p->n_xs; i++) {
        const xrecord *x = &p->xs[i];
        const opprof_event *e = &ev[x->event];
        if (i && e->thread != ev[p->xs[i - 1].event].thread) depth = 0;
        while (depth && end_of(&ev[p->xs[stack[depth - 1]].event]) <= e->start_ns) depth--;
        if (depth && end_of(e) > end_of(&ev[p->xs[stack[depth - 1]].event])) {
            const xrecord *outer = &p->xs[stack[depth - 1]];
            char where[64]; /* the other event: its line, or in a .pftrace its start */
            if (p->translated)
                snprintf(where, sizeof where, "starting at %.3f us", (double)ev[outer->event].start_ns / 1e3);
            else
                snprintf(where, sizeof where, "line %lld", (long long)outer->line);
            opprof__reader_problem_placed(p, x->offset, x->line, x->column,
                                          "complete event '%s' overlaps '%s' (%s) without nesting on its thread",
                                          opprof_capture_name(p->cap, e->name),
                                          opprof_capture_name(p->cap, ev[outer->event].name), where);
            continue;
        }
        if (opprof__grow((void **)&stack, &cap, depth + 1, sizeof *stack)) break;
        stack[depth++] = i;
    }
    opprof__free(stack);
}

/* Memory totals, per allocator: each total = the previous total + this
 * event's bytes. */
static void check_memory_totals(parser *p) {
    const opprof_memory_event *mem = p->cap->mem;
    if (p->n_ms > 1) qsort_r(p->ms, p->n_ms, sizeof *p->ms, mrecord_cmp, p->cap);
    for (size_t i = 1; i < p->n_ms; i++) {
        const opprof_memory_event *a = &mem[p->ms[i - 1].mem], *b = &mem[p->ms[i].mem];
        if (a->device_type != b->device_type || a->device_id != b->device_id) continue; /* another allocator */
        int64_t sum;
        if (__builtin_add_overflow(a->total_allocated, b->bytes, &sum) || sum != b->total_allocated)
            opprof__reader_problem_placed(
                p, p->ms[i].offset, p->ms[i].line, p->ms[i].column,
                "memory totals do not add up: Total Allocated %lld after %lld, but Bytes is %lld "
                "(%s)",
                (long long)b->total_allocated, (long long)a->total_allocated, (long long)b->bytes,
                allocator_text(b).text);
    }
}

void opprof__reader_check_whole(parser *p) {
    if (!opprof__reader_whole_checks(p)) return;
    check_nesting(p);
    check_memory_totals(p);
    if (p->cap->info.dropped_events)
        opprof__reader_problem_at(p, -1,
                                  "%llu events were dropped when recording (past the event budget, or too deep or "
                                  "from a signal handler when the warnings say so)",
                                  (unsigned long long)p->cap->info.dropped_events);
}
