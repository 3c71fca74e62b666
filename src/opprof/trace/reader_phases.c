/* reader_phases.c - what each phase of an event makes of it: threads by
  * (pid, tid), complete events, B/E pairs on a stack per thread, instants,
 * metadata and marks; the event array. */
#define _GNU_SOURCE
#include "trace/reader_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t thread_hash(int64_t pid, int64_t tid) { return opprof__hash_pair((uint64_t)pid, (uint64_t)tid); }

/* ---- threads by (pid, tid) ---- */

static uint64_t thread_hash_of(const void *ctx, uint32_t item) {
    const opprof_thread_info *t = &((const opprof_capture *)ctx)->threads[item];
    return thread_hash(t->pid, t->tid);
}

static bool thread_equal(const void *ctx, uint32_t item, const void *key) {
    const opprof_thread_info *t = &((const opprof_capture *)ctx)->threads[item];
    const int64_t *k = key;
    return t->pid == k[0] && t->tid == k[1];
}

/* The capture's thread of (pid, tid), added when new: a hash table, since a
 * hostile file may name millions of threads. */
int opprof__reader_thread_of(parser *p, int64_t pid, int64_t tid, uint32_t *index) {
    opprof_capture *c = p->cap;
    if (p->last_thread) {
        const opprof_thread_info *last = &c->threads[p->last_thread - 1];
        if (last->pid == pid && last->tid == tid) {
            *index = p->last_thread - 1;
            return 0;
        }
    }
    if (opprof__index_reserve(&p->thread_index, c->n_threads, thread_hash_of, c))
        return opprof__reader_no_memory(p, "threads");
    int64_t key[2] = {pid, tid};
    size_t k = opprof__index_probe(&p->thread_index, thread_hash(pid, tid), key, thread_equal, c);
    if (!p->thread_index.slots[k]) {
        if (c->n_threads >= OPPROF_MAX_THREADS)
            return FAIL(p, "more than %u threads (pid, tid pairs): more than a capture holds", OPPROF_MAX_THREADS);
        /* a tid written as a string ("stream 7") names its track until a
         * thread_name says otherwise */
        const char *label = opprof__reader_string_of(p, tid);
        int rc = opprof_capture_add_thread(c, tid, label ? label : "", index);
        if (rc) return opprof__json_fail_code(&p->lx, rc, "threads");
        if (pid != 0 && c->info.pid == 0) c->info.pid = pid;
        c->threads[*index].pid = pid;
        p->thread_index.slots[k] = *index + 1;
    }
    *index = p->thread_index.slots[k] - 1;
    p->last_thread = *index + 1;
    return 0;
}

int64_t opprof__reader_find_thread(parser *p, int64_t pid, int64_t tid) {
    if (opprof__index_reserve(&p->thread_index, p->cap->n_threads, thread_hash_of, p->cap)) return -1;
    int64_t key[2] = {pid, tid};
    size_t k = opprof__index_probe(&p->thread_index, thread_hash(pid, tid), key, thread_equal, p->cap);
    return p->thread_index.slots[k] ? (int64_t)p->thread_index.slots[k] - 1 : -1;
}

/* ---- complete events, and begins waiting for their ends ---- */

opprof_kind opprof__reader_complete_kind(uint8_t cat, const char *name) {
    return cat == CAT_DEVICE                                           ? OPPROF_KIND_DEVICE
           : cat == CAT_DEVICE_ANNOTATION                              ? OPPROF_KIND_DEVICE_ANNOTATION
           : name[0] == 'P' && strncmp(name, "ProfilerStep#", 13) == 0 ? OPPROF_KIND_STEP
           : cat == CAT_USER                                           ? OPPROF_KIND_USER_ANNOTATION
                                                                       : OPPROF_KIND_CPU_OP;
}

/* Add a complete event (an "X", or a "B" and its "E"); `e`, when given,
 * carries its call site and input shapes. line and column: the event's
 * place when it is before the cursor (-1: at offset). */
static int add_complete(parser *p, uint32_t thread, const char *name, uint8_t cat, int64_t ts, int64_t dur,
                        int64_t offset, int64_t line, int64_t column, event *e) {
    opprof_kind kind = opprof__reader_complete_kind(cat, name);
    int rc = opprof_capture_add_event(p->cap, thread, name, kind, ts, dur);
    if (rc) return opprof__json_fail_code(&p->lx, rc, "events");
    if (e) {
        if (kind == OPPROF_KIND_DEVICE || kind == OPPROF_KIND_DEVICE_ANNOTATION) {
            snprintf(p->cap->info.device_name, sizeof p->cap->info.device_name, "%s", e->mtia ? "MTIA" : "CUDA");
        }
        int role = kind == OPPROF_KIND_DEVICE              ? OPPROF__LINK_DEVICE
                   : cat == CAT_RUNTIME                    ? OPPROF__LINK_RUNTIME
                   : cat == CAT_CPU_OP || cat == CAT_OTHER ? OPPROF__LINK_OP
                                                           : -1;
        if (role >= 0 && (e->ext_id >= 0 || e->corr_id >= 0)) {
            if (opprof__grow((void **)&p->links, &p->cap_links, p->n_links + 1, sizeof *p->links))
                return opprof__reader_no_memory(p, "device links");
            p->links[p->n_links++] =
                (opprof__link){(uint32_t)(p->cap->n_events - 1), (uint8_t)role, e->ext_lower, e->ext_id, e->corr_id};
        }
    }
    if (e && (e->has_dims || (e->frame && e->frame[0]))) {
        /* "file(line): function" */
        char *file = NULL, *function = NULL;
        unsigned long site_line = 0;
        if (e->frame && e->frame[0]) {
            char *open = strrchr(e->frame, '(');
            char *close = open ? strstr(open, "): ") : NULL;
            if (open && close) {
                *open = '\0';
                site_line = strtoul(open + 1, NULL, 10);
                file = e->frame;
                function = close + 3;
            } else {
                function = e->frame;
            }
        }
        if (e->has_dims) {
            p->cap->info.record_shapes = true;
            for (int k = 0; k < e->shapes.n_inputs; k++)
                if (!e->has_types) snprintf(e->shapes.dtype[k], sizeof e->shapes.dtype[k], "float");
        }
        if (file) p->cap->info.with_stack = true;
        if (opprof_capture_set_last_site(p->cap, file, function, (uint32_t)site_line, e->has_dims ? &e->shapes : NULL))
            return opprof__reader_no_memory(p, "sites");
    }
    if (ts < p->min_ts) p->min_ts = ts;
    if (ts + dur > p->max_ts) p->max_ts = ts + dur;
    if (opprof__reader_whole_checks(p) && kind != OPPROF_KIND_DEVICE && kind != OPPROF_KIND_DEVICE_ANNOTATION) {
        if (opprof__grow((void **)&p->xs, &p->cap_xs, p->n_xs + 1, sizeof *p->xs))
            return opprof__reader_no_memory(p, "checks");
        if (line < 0) opprof__json_locate(&p->lx, offset, &line, &column);
        p->xs[p->n_xs++] = (xrecord){offset, column, (uint32_t)(p->cap->n_events - 1),
                                     line > UINT32_MAX ? UINT32_MAX : (uint32_t)line};
    }
    return 0;
}

/* "B" and "E" events: an "E" ends the innermost "B" still open on its thread
 * (as Chrome's viewer pairs them), making one complete event. Their names
 * and categories come from the "B"; the arguments kept (keep_marks, opprof's
 * own) of both are the event's. */
static int push_begin(parser *p, uint32_t thread, const event *e, int64_t offset) {
    if (opprof__grow((void **)&p->begins, &p->cap_begins, p->n_begins + 1, sizeof *p->begins))
        return opprof__reader_no_memory(p, "begin events");
    size_t old_cap = p->cap_innermost;
    if (opprof__grow((void **)&p->innermost, &p->cap_innermost, (size_t)thread + 1, sizeof *p->innermost))
        return opprof__reader_no_memory(p, "begin events");
    for (size_t i = old_cap; i < p->cap_innermost; i++) p->innermost[i] = -1;
    if (p->n_begins >= INT32_MAX) return FAIL(p, "more than 2^31 begin events open at once: not supported");
    size_t len = strlen(e->name);
    char *name = opprof__alloc(len + 1);
    if (!name) return opprof__reader_no_memory(p, "begin events");
    memcpy(name, e->name, len + 1);
    begun *b = &p->begins[p->n_begins];
    *b = (begun){thread,     p->innermost[thread],
                 e->cat,     e->ts,
                 offset,     0,
                 0,          (e->have & HAS_TTS) ? e->tts : -1,
                 e->bind_id, e->bound,
                 name,       {0}};
    /* its arguments wait for its end, as Perfetto merges a B's and its E's */
    if (opprof__reader_args_copy(&b->args, &e->args)) {
        opprof__free(name);
        return opprof__reader_no_memory(p, "begin events");
    }
    opprof__json_locate(&p->lx, offset, &b->line, &b->column);
    p->innermost[thread] = (int32_t)p->n_begins++;
    return 0;
}

int32_t opprof__reader_open_begin(const parser *p, uint32_t thread) {
    int32_t i = thread < p->cap_innermost ? p->innermost[thread] : -1;
    OPPROF__ASSERT(i < 0 || (size_t)i < p->n_begins);
    OPPROF__ASSERT(i < 0 || (p->begins[i].thread == thread && p->begins[i].name)); /* a thread's stack holds its own */
    OPPROF__ASSERT(i < 0 || p->begins[i].outer < i); /* ... each above the one open before it */
    return i;
}

void opprof__reader_close_begin(parser *p, uint32_t thread) {
    begun *b = &p->begins[p->innermost[thread]];
    p->innermost[thread] = b->outer;
    opprof__free(b->name);
    opprof__free(b->args.at);
    b->name = NULL;
    b->args = (event_args){0};
    /* The stack's top is the last slot when threads do not interleave. */
    while (p->n_begins && !p->begins[p->n_begins - 1].name) p->n_begins--;
}

/* The second thread's "E" with no "B" open on its thread: the "B" may be in
 * the first half. A placeholder event holds its place in the order, named
 * apart (0xFF and its number: no name read from JSON is invalid UTF-8); the
 * join gives it the "B"'s name, kind and start, or drops the half. A thread
 * named by strings cannot be found by the join, and more ends than calls are
 * ever open at once (a hostile trace's) would cost a name each: the half is
 * dropped. */
enum { HELD_ENDS_MAX = 1 << 20 };
static int hold_end(parser *p, uint32_t thread, int64_t ts) {
    const opprof_thread_info *t = &p->cap->threads[thread];
    if (p->n_held_ends >= HELD_ENDS_MAX || opprof__reader_string_index(p, t->pid) ||
        opprof__reader_string_index(p, t->tid)) {
        p->unmatched_ends++;
        return 0;
    }
    char placeholder[24];
    snprintf(placeholder, sizeof placeholder, "\xff%zu", p->n_held_ends);
    if (opprof__grow((void **)&p->held_ends, &p->cap_held_ends, p->n_held_ends + 1, sizeof *p->held_ends))
        return opprof__reader_no_memory(p, "end events");
    int rc = opprof_capture_add_event(p->cap, thread, placeholder, OPPROF_KIND_CPU_OP, ts, 0);
    if (rc) return opprof__json_fail_code(&p->lx, rc, "end events");
    p->held_ends[p->n_held_ends++] = (struct held_end){(uint32_t)(p->cap->n_events - 1), thread, ts};
    return 0;
}

/* The arguments that the tables read (averages.c, parallel.c), kept as marks
 * when the others are given to spill_args: by the first letter, then whole
 * (five compares for each of a Kineto event's 11 arguments were a sixtieth of
 * `opprof sql`'s load). */
static bool read_by_tables(const char *key) {
    switch (key[0]) {
    case 'f': return !strcmp(key, "flops");
    case 'b': return !strcmp(key, "bytes");
    case 'n': return !strcmp(key, "name");
    case 'l': return !strcmp(key, "layer");
    default: return key[0] == OPPROF_PART_OF_KEY[0] && !strcmp(key, OPPROF_PART_OF_KEY);
    }
}

/* Another writer's arguments given to spill_args (keep_marks): the last
 * event keeps the id it returns (opprof_capture_spilled_set). */
static int spill_args(parser *p, const event_args *args, opprof_mark m) {
    if (opprof__grow((void **)&p->spilled, &p->cap_spilled, (size_t)args->n, sizeof *p->spilled))
        return opprof__reader_no_memory(p, "arguments");
    for (int k = 0; k < args->n; k++) {
        const event_arg *a = &args->at[k];
        p->spilled[k] =
            (opprof_spilled_arg){opprof__reader_arg_key(args, a), a->kind, a->i, a->d, opprof__reader_arg_str(args, a)};
    }
    int64_t id = p->opt->spill_args(p->opt->spill_ctx, p->is_half, p->spilled, (size_t)args->n);
    if (id < 0) return opprof__json_fail_code(&p->lx, id < INT_MIN ? OPPROF_EINVAL : (int)id, "arguments set aside");
    return opprof__capture_set_spilled(p->cap, (size_t)m.event, id) ? opprof__reader_no_memory(p, "arguments") : 0;
}

/* An event's arguments as its marks: the last event of the capture, on `thread`. */
static int arg_marks(parser *p, const event_args *args, uint32_t thread) {
    opprof_mark m = {.thread = thread, .event = (int32_t)(p->cap->n_events - 1)};
    bool all = p->ours || p->keep_marks; /* keep_event_marks reads another writer's for its counters only */
    bool spilled = args->n && p->keep_marks && !p->ours && p->opt && p->opt->spill_args;
    if (spilled) {
        int rc = spill_args(p, args, m);
        if (rc) return rc;
    }
    for (int k = 0; k < args->n; k++) {
        const event_arg *a = &args->at[k];
        const char *name = opprof__reader_arg_key(args, a);
        if (!all && strcmp(name, OPPROF_PART_OF_KEY) != 0) continue;
        if (spilled && !read_by_tables(name)) continue;
        m.kind = a->kind;
        m.value.i = a->i;
        if (m.kind == OPPROF_MARK_ARG_DOUBLE) m.value.d = a->d;
        if (m.kind == OPPROF_MARK_ARG_INT && (!strcmp(name, "flops") || !strcmp(name, "bytes")))
            m.kind = name[0] == 'f' ? OPPROF_MARK_FLOPS : OPPROF_MARK_BYTES;
        if (opprof_capture_add_mark(p->cap, &m, name, opprof__reader_arg_str(args, a)))
            return opprof__reader_no_memory(p, "marks");
    }
    return 0;
}

/* The last event's thread clock (keep_marks), each -1 when unknown: two of
 * its integer arguments, the ones `opprof sql` makes thread_ts and thread_dur. */
static int thread_time_marks(parser *p, uint32_t thread, int64_t tts, int64_t tdur) {
    opprof_mark m = {.kind = OPPROF_MARK_ARG_INT, .thread = thread, .event = (int32_t)(p->cap->n_events - 1)};
    m.value.i = tts;
    if (tts >= 0 && opprof_capture_add_mark(p->cap, &m, OPPROF_THREAD_TS_ARG, NULL))
        return opprof__reader_no_memory(p, "marks");
    m.value.i = tdur;
    if (tdur >= 0 && opprof_capture_add_mark(p->cap, &m, OPPROF_THREAD_DUR_ARG, NULL))
        return opprof__reader_no_memory(p, "marks");
    return 0;
}

/* The last event's flow (v2: "bind_id" with "flow_out", "flow_in" or both)
 * as an integer argument of it whose key says the direction (keep_marks,
 * `opprof sql`'s flow table); else counted as unused, as one without a
 * direction (Perfetto's stat flow_without_direction). */
static int bound_flow_mark(parser *p, uint32_t thread, uint64_t bind_id, uint8_t bound) {
    if (!(bound & BOUND_ID)) return 0;
    bool out = bound & BOUND_OUT, in = bound & BOUND_IN;
    if (!p->keep_marks || (!out && !in)) {
        p->unused[UNUSED_BOUND_FLOW]++;
        return 0;
    }
    opprof_mark m = {.kind = OPPROF_MARK_ARG_INT, .thread = thread, .event = (int32_t)(p->cap->n_events - 1)};
    m.value.id = bind_id;
    const char *key = in && out ? OPPROF_FLOW_STEP_ARG : out ? OPPROF_FLOW_OUT_ARG : OPPROF_FLOW_IN_ARG;
    return opprof_capture_add_mark(p->cap, &m, key, NULL) ? opprof__reader_no_memory(p, "marks") : 0;
}

/* What a "B" and its "E" carry, on the event they make, as Perfetto's JSON
 * importer merges them: both's arguments kept; the thread clock from the
 * "B"'s "tts" to the "E"'s; the "B"'s flow. */
static int begin_end_marks(parser *p, const begun *b, const event *end) {
    int rc = arg_marks(p, &b->args, b->thread);
    if (!rc) rc = arg_marks(p, &end->args, b->thread);
    if (!rc) rc = bound_flow_mark(p, b->thread, b->bind_id, b->bound);
    bool ended = b->tts >= 0 && (end->have & HAS_TTS) && end->tts >= b->tts;
    return rc ? rc : thread_time_marks(p, b->thread, b->tts, ended ? end->tts - b->tts : -1);
}

static int pop_begin(parser *p, uint32_t thread, const event *end, int64_t offset) {
    int64_t ts = end->ts;
    int32_t i = opprof__reader_open_begin(p, thread);
    if (i < 0 && p->is_half) return hold_end(p, thread, ts);
    if (i < 0) {
        p->unmatched_ends++;
        opprof__reader_problem_at(p, offset, "end event without a begin event open on its thread");
        return 0;
    }
    const begun *b = &p->begins[i];
    int rc = 0;
    if (ts < b->ts)
        opprof__reader_problem_at(p, offset, "end event of '%s' (line %lld) is earlier than its begin", b->name,
                                  (long long)b->line);
    else
        rc = add_complete(p, thread, b->name, b->cat, b->ts, ts - b->ts, b->offset, b->line, b->column, NULL);
    if (!rc && ts >= b->ts) rc = begin_end_marks(p, b, end);
    opprof__reader_close_begin(p, thread);
    return rc;
}

/* "B" events never ended: read as lasting to the trace's end, as Chrome's
 * viewer shows them ("did not finish"), and said in the capture's warnings:
 * a trace cut short by its writer is valid. */
/* The share of the trace's span that `ns` is, in percent. */
static double share_of_trace(const parser *p, int64_t ns) {
    return p->max_ts > p->min_ts ? 100.0 * (double)ns / (double)(p->max_ts - p->min_ts) : 100.0;
}

/* "B" events never ended: read as lasting to the trace's end (as Chrome's
 * viewer and Perfetto show them), each a problem for check with its share of
 * the trace, the longest kept in the capture's facts for the table's note. */
int opprof__reader_unended_begins(parser *p) {
    size_t count = 0;
    const char *first = NULL;
    for (size_t i = 0; i < p->n_begins; i++) {
        begun *b = &p->begins[i];
        if (!b->name) continue;
        int64_t end = p->max_ts > b->ts ? p->max_ts : b->ts;
        int rc = add_complete(p, b->thread, b->name, b->cat, b->ts, end - b->ts, b->offset, b->line, b->column, NULL);
        if (rc) return rc;
        if (!count++) first = opprof_capture_name(p->cap, p->cap->events[p->cap->n_events - 1].name);
        if (end - b->ts > p->cap->info.unended_ns) p->cap->info.unended_ns = end - b->ts;
        opprof__reader_assumed_placed(p, b->offset, b->line, b->column,
                                      "begin event '%s' (thread %lld) never ended: read as lasting to the trace's end "
                                      "(%.3f ms, %.1f %% of the trace)",
                                      b->name, (long long)p->cap->threads[b->thread].tid, (double)(end - b->ts) / 1e6,
                                      share_of_trace(p, end - b->ts));
    }
    if (count && opprof__capture_warnf(p->cap,
                                       "%zu begin event(s) never ended (first: '%s'): read as lasting to the trace's "
                                       "end, the longest %.1f %% of the trace",
                                       count, first, share_of_trace(p, p->cap->info.unended_ns)))
        return opprof__reader_no_memory(p, "warnings");
    return 0;
}

void opprof__reader_free_begins(parser *p) {
    for (size_t i = 0; i < p->n_begins; i++) {
        opprof__free(p->begins[i].name);
        opprof__free(p->begins[i].args.at);
    }
    opprof__free(p->begins);
    opprof__free(p->innermost);
    opprof__free(p->held_ends);
}

/* ---- what each phase makes: ranges, instants, marks, metadata ---- */

/* Names PyTorch's key_averages leaves out (torch/autograd/profiler.py):
 * compared only at a length of theirs (every operator's name starts with
 * "aten::", so a first byte decides nothing). */
static bool filtered_name(const char *name, size_t len) {
#define FILTERED(lit) \
    { lit, sizeof lit - 1 }
    static const struct {
        const char *text;
        size_t len;
    } names[] = {FILTERED("[memory]"),
                 FILTERED("[OutOfMemory]"),
                 FILTERED("profiler::_record_function_enter"),
                 FILTERED("profiler::_record_function_enter_new"),
                 FILTERED("profiler::_record_function_exit"),
                 FILTERED("aten::is_leaf"),
                 FILTERED("aten::output_nr"),
                 FILTERED("aten::_version")};
#undef FILTERED
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (len == names[i].len && memcmp(name, names[i].text, len) == 0) return true;
    return false;
}

/* Another writer's counter event (keep_marks: `opprof sql`): a sample of a
 * counter per numeric argument, named as Perfetto's JSON importer names its
 * track: "NAME KEY" ({"name": "cpu", "args": {"user": 3, "sys": 1}} is "cpu
 * user" and "cpu sys"). As there, a number written as a string counts, and a
 * value that is no number (true, false, an array, an object, a word) is left
 * out and counted (its stats' json_parser_failure, our events_not_in_tables).
 * opprof's own counters carry their name once. */
static int foreign_counters(parser *p, event *e, opprof_mark *m) {
    m->kind = OPPROF_MARK_COUNTER;
    if (e->ts < p->min_ts) p->min_ts = e->ts;
    for (int k = 0; k < e->args.n; k++) {
        const event_arg *a = &e->args.at[k];
        const char *str = opprof__reader_arg_str(&e->args, a);
        char *end = NULL;
        double v = str ? opprof__c_strtod(str, &end) : a->kind == OPPROF_MARK_ARG_INT ? (double)a->i : a->d;
        if (a->flattened || (end && (end == str || *end))) {
            p->unused[UNUSED_COUNTER_VALUE]++;
            continue;
        }
        char name[512];
        snprintf(name, sizeof name, "%.200s %.300s", e->name, opprof__reader_arg_key(&e->args, a));
        m->value.d = v;
        if (opprof_capture_add_mark(p->cap, m, name, NULL)) return opprof__reader_no_memory(p, "marks");
    }
    return 0;
}

/* A mark that is an event of its own, read back (opprof's, or with
 * keep_marks every writer's): a counter sample, an instant, a flow or async
 * edge. (An event's arguments are arg_marks.) */
static int own_marks(parser *p, event *e, uint32_t thread) {
    opprof_mark m = {.ts_ns = e->ts, .thread = thread, .event = -1};
    const char *name = e->name;
    if (e->ph == 'C' && !p->ours) return foreign_counters(p, e, &m);
    if (e->ph == 'C') {
        if (e->args.at[0].kind == OPPROF_MARK_ARG_STR) return 0;
        m.kind = OPPROF_MARK_COUNTER;
        m.value.d = e->args.at[0].d;
    } else if (e->ph == 'i' || e->ph == 'I' || e->ph == 'R') {
        m.kind = OPPROF_MARK_INSTANT;
        m.value.i = e->scope == 'g'   ? OPPROF_INSTANT_GLOBAL
                    : e->scope == 'p' ? OPPROF_INSTANT_PROCESS
                                      : OPPROF_INSTANT_THREAD;
    } else {
        m.kind = (uint32_t)opprof__mark_of_phase(e->ph); /* a flow or async edge */
        m.value.id = e->id;
    }
    if (e->ts < p->min_ts) p->min_ts = e->ts;
    return opprof_capture_add_mark(p->cap, &m, name, NULL) ? opprof__reader_no_memory(p, "marks") : 0;
}

static int take_complete(parser *p, event *e, int64_t offset) {
    if ((e->have & (HAS_NAME | HAS_TS | HAS_DUR)) != (HAS_NAME | HAS_TS | HAS_DUR)) {
        opprof__reader_problem_at(p, offset, "complete event without %s",
                                  !(e->have & HAS_NAME) ? "\"name\""
                                  : !(e->have & HAS_TS) ? "\"ts\""
                                                        : "\"dur\"");
        return 0;
    }
    if (e->dur < 0) {
        opprof__reader_problem_at(p, offset, "complete event '%s' has a negative duration", e->name);
        return 0;
    }
    /* Kineto's own span and Python functions are no rows (as in PyTorch) */
    if (e->cat == CAT_SPAN || e->cat == CAT_PYTHON || filtered_name(e->name, e->name_len)) {
        p->unused[e->cat == CAT_SPAN ? UNUSED_SPAN : e->cat == CAT_PYTHON ? UNUSED_PYTHON : UNUSED_FILTERED]++;
        return 0;
    }
    int runtime = opprof__reader_runtime_event(p, e); /* another runtime's rules: 1, no row */
    if (runtime) return runtime < 0 ? runtime : 0;
    uint32_t thread;
    if (opprof__reader_thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
    if (add_complete(p, thread, e->name, e->cat, e->ts, e->dur, offset, -1, -1, e)) return OPPROF_EFORMAT;
    if (e->category[0] && opprof_capture_set_last_category(p->cap, e->category))
        return opprof__reader_no_memory(p, "categories");
    int rc = arg_marks(p, &e->args, thread);
    if (!rc) rc = bound_flow_mark(p, thread, e->bind_id, e->bound);
    return rc ? rc
              : thread_time_marks(p, thread, (e->have & HAS_TTS) ? e->tts : -1, (e->have & HAS_TDUR) ? e->tdur : -1);
}

/* "i"/"I": Kineto's [memory] events; opprof's own instants. */
static int take_instant(parser *p, event *e, int64_t offset) {
    uint32_t thread;
    if (!e->memory_name) {
        if ((p->ours || p->keep_event_marks) && (e->have & (HAS_NAME | HAS_TS)) == (HAS_NAME | HAS_TS)) {
            if (opprof__reader_thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
            return own_marks(p, e, thread);
        }
        p->unused[UNUSED_INSTANT]++;
        return 0;
    }
    if (!(e->have & HAS_TS) || !(e->have & HAS_BYTES)) {
        opprof__reader_problem_at(p, offset, "memory event without %s",
                                  !(e->have & HAS_TS) ? "\"ts\"" : "args \"Bytes\"");
        return 0;
    }
    if (opprof__reader_thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
    if (opprof_capture_add_memory(p->cap, thread, e->ts, (uint64_t)e->addr, e->bytes,
                                  (e->have & HAS_TOTAL) ? e->total : -1))
        return opprof__reader_no_memory(p, "memory events");
    p->cap->mem[p->cap->n_mem - 1].device_type = (int32_t)e->device_type;
    p->cap->mem[p->cap->n_mem - 1].device_id = (int32_t)e->device_id;
    if (e->ts < p->min_ts) p->min_ts = e->ts;
    if (e->ts > p->max_ts) p->max_ts = e->ts;
    p->cap->info.profile_memory = true;
    if (opprof__reader_whole_checks(p) && (e->have & HAS_TOTAL)) {
        if (opprof__grow((void **)&p->ms, &p->cap_ms, p->n_ms + 1, sizeof *p->ms))
            return opprof__reader_no_memory(p, "checks");
        int64_t line, column;
        opprof__json_locate(&p->lx, offset, &line, &column);
        p->ms[p->n_ms++] =
            (mrecord){offset, column, (uint32_t)(p->cap->n_mem - 1), line > UINT32_MAX ? UINT32_MAX : (uint32_t)line};
    }
    return 0;
}

/* "M": thread names (and threads that only a sort index names: a thread of
 * the trace with no event and no name); opprof merge's process labels ("rank K"). */
static int take_metadata(parser *p, event *e) {
    if ((e->have & HAS_NAME) && strcmp(e->name, "thread_sort_index") == 0) {
        uint32_t thread;
        return opprof__reader_thread_of(p, e->pid, e->tid, &thread) ? OPPROF_EFORMAT : 0;
    }
    if ((e->have & HAS_NAME) && strcmp(e->name, "thread_name") == 0 && e->arg_name) {
        uint32_t thread;
        if (opprof__reader_thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        snprintf(p->cap->threads[thread].name, sizeof p->cap->threads[thread].name, "%s", e->arg_name);
        if (p->is_half) { /* named here: the name wins over the first half's */
            if (opprof__grow((void **)&p->named, &p->cap_named, p->n_named + 1, sizeof *p->named))
                return opprof__reader_no_memory(p, "threads");
            p->named[p->n_named++] = thread;
        }
    }
    if ((e->have & HAS_NAME) && e->arg_name && (!strcmp(e->name, "process_labels") || !strcmp(e->name, "process_name")))
        return opprof__reader_set_label(p, e->pid, e->arg_name, e->name[8] == 'l');
    return 0;
}

static int unused_kind(char ph);

/* Counters, flows, async events: opprof's own become marks; others are counted. */
static int take_mark(parser *p, event *e, int64_t offset) {
    (void)offset;
    uint32_t thread = 0;
    if (e->ph == 'C') {
        /* opprof writes its memory events again as a counter track, for Perfetto */
        if (p->ours && (e->have & HAS_NAME) && strcmp(e->name, "Allocated bytes") == 0) return 0;
        if ((p->ours || p->keep_event_marks) && (e->have & (HAS_NAME | HAS_TS)) == (HAS_NAME | HAS_TS) && e->args.n) {
            /* a counter is the process's: opprof's first thread carries it; another writer's
             * (keep_marks) its own thread, so that its process is known */
            if ((!p->cap->n_threads || !p->ours) && opprof__reader_thread_of(p, e->pid, e->tid, &thread))
                return OPPROF_EFORMAT;
            return own_marks(p, e, thread);
        }
        p->unused[UNUSED_COUNTER]++;
        return 0;
    }
    if ((p->ours || p->keep_event_marks) && (e->have & (HAS_NAME | HAS_TS)) == (HAS_NAME | HAS_TS)) {
        if (opprof__reader_thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        return own_marks(p, e, thread);
    }
    p->unused[unused_kind(e->ph)]++;
    return 0;
}

static int take_begin(parser *p, event *e, int64_t offset) {
    if ((e->have & (HAS_NAME | HAS_TS)) != (HAS_NAME | HAS_TS)) {
        opprof__reader_problem_at(p, offset, "begin event without %s", !(e->have & HAS_NAME) ? "\"name\"" : "\"ts\"");
        return 0;
    }
    uint32_t thread;
    if (opprof__reader_thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
    return push_begin(p, thread, e, offset);
}

static int take_end(parser *p, event *e, int64_t offset) {
    if (!(e->have & HAS_TS)) {
        opprof__reader_problem_at(p, offset, "end event without \"ts\"");
        return 0;
    }
    uint32_t thread;
    if (opprof__reader_thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
    return pop_begin(p, thread, e, offset);
}

static int take_metadata_at(parser *p, event *e, int64_t offset) {
    (void)offset;
    return take_metadata(p, e);
}

/* ---- the phase table, and the loop over the events ---- */

/* The one list of the Trace Event Format's phases (legacy async S T p F and
 * context events included) and what the reader does with each: a phase that
 * is not here is unknown, a problem; one without `take` is valid, counted as
 * unused of its kind. The phases of <opprof/mark_kinds.h> not taken here are
 * opprof's marks (take_mark). */
typedef struct phase {
    char ph;
    int (*take)(parser *p, event *e, int64_t offset);
    int unused; /* UNUSED_* when not taken */
} phase;
/* Indexed by the phase's character. */
static const phase PHASES[128] = {
    ['X'] = {'X', take_complete, 0},
    ['B'] = {'B', take_begin, 0},
    ['E'] = {'E', take_end, 0},
    ['i'] = {'i', take_instant, 0},
    ['I'] = {'I', take_instant, 0},
    ['M'] = {'M', take_metadata_at, 0},
    ['C'] = {'C', NULL, UNUSED_COUNTER},
    ['s'] = {'s', NULL, UNUSED_FLOW},
    ['t'] = {'t', NULL, UNUSED_FLOW},
    ['f'] = {'f', NULL, UNUSED_FLOW},
    ['b'] = {'b', NULL, UNUSED_ASYNC},
    ['n'] = {'n', NULL, UNUSED_ASYNC}, /* with keep_marks an instant of async ranges */
    ['e'] = {'e', NULL, UNUSED_ASYNC},
    ['S'] = {'S', NULL, UNUSED_ASYNC},
    ['T'] = {'T', NULL, UNUSED_ASYNC},
    ['p'] = {'p', NULL, UNUSED_ASYNC},
    ['F'] = {'F', NULL, UNUSED_ASYNC},
    ['N'] = {'N', NULL, UNUSED_OBJECT},
    ['O'] = {'O', NULL, UNUSED_OBJECT},
    ['D'] = {'D', NULL, UNUSED_OBJECT},
    ['P'] = {'P', opprof__reader_take_profile, UNUSED_OTHER_PHASE},
    ['V'] = {'V', NULL, UNUSED_OTHER_PHASE},
    ['v'] = {'v', NULL, UNUSED_OTHER_PHASE},
    ['R'] = {'R', take_instant, 0}, /* a mark: an instant, as Perfetto's JSON importer reads it */
    ['c'] = {'c', NULL, UNUSED_OTHER_PHASE},
    ['('] = {'(', NULL, UNUSED_OTHER_PHASE},
    [')'] = {')', NULL, UNUSED_OTHER_PHASE},
};

static const phase *phase_of(char ph) {
    unsigned char c = (unsigned char)ph;
    return c < 128 && PHASES[c].ph ? &PHASES[c] : NULL;
}

static int unused_kind(char ph) {
    const phase *k = phase_of(ph);
    return k ? k->unused : UNUSED_OTHER_PHASE;
}

static int take_event(parser *p, event *e, int64_t offset) {
    if (!(e->have & HAS_PH)) {
        int row = opprof__reader_runtime_row(p, e, offset); /* TensorRT's layers have none */
        if (row) return row < 0 ? row : 0;
        opprof__reader_problem_at(p, offset, "event without \"ph\"");
        return 0;
    }
    if (e->bad_type) {
        opprof__reader_problem_at(p, offset, "event field \"%s\" %s", e->bad_field,
                                  e->bad_why ? e->bad_why : "has the wrong type or is out of range");
        return 0;
    }
    if ((e->have & HAS_TS) && e->ph != 'M' && e->ts > p->max_ts)
        p->max_ts = e->ts; /* the trace's end: its latest time */
    const phase *ph = phase_of(e->ph);
    if (ph && ph->take) return ph->take(p, e, offset);
    if (opprof__mark_of_phase(e->ph) >= 0) return take_mark(p, e, offset);
    if (!ph) {
        opprof__reader_problem_at(p, offset, "unknown phase \"%s\"", e->ph_text);
        return 0;
    }
    p->unused[ph->unused]++;
    return 0;
}

/* The array ends where a bare array's file ends (a writer that stopped
 * early: the trace-event format allows it, and Perfetto reads it). */
static int unterminated(parser *p) {
    opprof__reader_assumed(p, HERE(p), true,
                           "the event array has no closing ']' (a writer that stopped early): read to the end");
    p->lx.depth--;
    return 0;
}

/* After an event: ',' and another, or ']'; 1 when another follows. Lenient
 * where the producers are: a comma before ']' (a trailing comma), and the
 * end of a bare array's file where an event or ']' would be. */
static int next_event(parser *p) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c == ',') {
        int64_t comma = HERE(p);
        p->lx.pos++;
        c = opprof__json_skip_ws(&p->lx);
        if (c == ']') {
            opprof__reader_assumed(p, comma, true, "a comma before the event array's ']' (a trailing comma): ignored");
            p->lx.pos++;
            p->lx.depth--;
            return 0;
        }
        return c == -1 && p->array_form ? unterminated(p) : c == -2 ? OPPROF_EFORMAT : 1;
    }
    if (c == -1 && p->array_form) return unterminated(p);
    return opprof__json_next(&p->lx, ']', "after an event"); /* ']', or the error that says why */
}

int opprof__reader_parse_items(parser *p, int more) {
    event e;
    memset(&e, 0, sizeof e);
    while (more == 1) {
        if (opprof__json_skip_ws(&p->lx) != '{') {
            more = FAIL(p, "expected an event object");
            break;
        }
        int64_t offset = HERE(p);
        if (offset >= p->split_at && (more = opprof__reader_split_reached(p, offset))) {
            more = more < 0 ? more : 0; /* the second thread read the rest */
            break;
        }
        more = 1;
        e.have = 0;
        e.bad_type = false;
        e.bad_why = NULL;
        e.cat = CAT_OTHER;
        e.mtia = e.memory_name = e.ext_lower = false;
        e.ext_id = e.corr_id = -1;
        e.device_type = 0;
        e.device_id = -1;
        e.args.n = 0;
        e.args.text_len = 0;
        e.category[0] = '\0';
        e.runtime = RT_NONE;
        e.op_name[0] = '\0';
        e.layer = 0;
        e.id = 0;
        e.has_id = false;
        e.bound = 0;
        e.scope = 't';
        e.pid = e.tid = 0;
        e.ts = e.dur = e.bytes = e.addr = 0;
        e.name_len = 0;
        e.total = -1;
        if (e.arg_name) e.arg_name[0] = '\0';
        if (e.frame) e.frame[0] = '\0';
        if (e.has_dims || e.has_types) memset(&e.shapes, 0, sizeof e.shapes);
        e.has_dims = e.has_types = false;
        if ((more = opprof__json_object(&p->lx, opprof__reader_event_key, &e))) break;
        if (e.arg_name && !e.arg_name[0]) {
            opprof__free(e.arg_name);
            e.arg_name = NULL;
            e.arg_name_cap = 0;
        }
        more = take_event(p, &e, offset);
        opprof__reader_profile_drop(p); /* args.data that no profile event took */
        if (more) break;
        more = next_event(p);
    }
    opprof__free(e.name);
    opprof__free(e.arg_name);
    opprof__free(e.frame);
    opprof__free(e.args.at);
    opprof__free(e.args.text);
    opprof__free(e.flat_key);
    return more < 0 ? more : 0;
}

int opprof__reader_parse_events(parser *p) {
    int more = opprof__json_open(&p->lx, '[', ']', "an array of events");
    if (more == 1) opprof__reader_split_start(p);
    more = opprof__reader_parse_items(p, more);
    opprof__reader_split_end(p);
    return more;
}
