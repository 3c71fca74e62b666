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

static void vproblem(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, va_list ap) {
    p->problems++;
    if (!p->opt || !p->opt->on_problem) return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    opprof_trace_problem pr = {.offset = offset, .line = line, .column = column, .message = msg};
    p->opt->on_problem(p->opt->ctx, &pr);
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
    vproblem(p, offset, line, column, fmt, ap);
    va_end(ap);
}

/* A problem found after parsing, at a place remembered while parsing. */
void opprof__reader_problem_placed(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void opprof__reader_problem_placed(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vproblem(p, offset, line, column, fmt, ap);
    va_end(ap);
}

/* ---- checks that need the whole trace ---- */

static int xrecord_cmp(const void *a, const void *b) {
    const xrecord *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int mrecord_cmp(const void *a, const void *b) {
    const mrecord *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

void opprof__reader_check_whole(parser *p) {
    if (!opprof__reader_whole_checks(p)) return;
    /* Complete events that overlap without nesting, per thread. */
    if (p->n_xs > 1) qsort(p->xs, p->n_xs, sizeof *p->xs, xrecord_cmp);
    size_t *stack = NULL, depth = 0, cap = 0;
    for (size_t i = 0; i < p->n_xs; i++) {
        const xrecord *x = &p->xs[i];
        if (i && x->thread != p->xs[i - 1].thread) depth = 0;
        while (depth && p->xs[stack[depth - 1]].end <= x->start) depth--;
        if (depth && x->end > p->xs[stack[depth - 1]].end) {
            const xrecord *outer = &p->xs[stack[depth - 1]];
            opprof__reader_problem_placed(p, x->offset, x->line, x->column,
                           "complete event '%s' overlaps '%s' (line %lld) without nesting on its thread",
                           opprof_capture_name(p->cap, x->name), opprof_capture_name(p->cap, outer->name),
                           (long long)outer->line);
            continue;
        }
        if (opprof__grow((void **)&stack, &cap, depth + 1, sizeof *stack)) break;
        stack[depth++] = i;
    }
    opprof__free(stack);
    /* Memory totals: each total = the previous total + this event's bytes. */
    if (p->n_ms > 1) qsort(p->ms, p->n_ms, sizeof *p->ms, mrecord_cmp);
    for (size_t i = 1; i < p->n_ms; i++) {
        const mrecord *a = &p->ms[i - 1], *b = &p->ms[i];
        int64_t sum;
        if (__builtin_add_overflow(a->total, b->bytes, &sum) || sum != b->total)
            opprof__reader_problem_placed(p, b->offset, b->line, b->column,
                           "memory totals do not add up: Total Allocated %lld after %lld, but Bytes is %lld",
                           (long long)b->total, (long long)a->total, (long long)b->bytes);
    }
    if (p->cap->info.dropped_events)
        opprof__reader_problem_at(p, -1,
                                  "%llu events were dropped when recording (past the event budget, or too deep or "
                                  "from a signal handler when the warnings say so)",
                                  (unsigned long long)p->cap->info.dropped_events);
}

