/* load.c - a capture's timeline into Perfetto's tables, by the rules of
 * Perfetto's JSON importer: complete and B/E events on their thread's track
 * (depth and parent_id from their nesting), their args under "args.",
 * instants as zero-duration slices (on the thread's track, or its process's
 * or the trace's for "s":"p" and "s":"g"), counters as process counter
 * tracks, async b/e pairs on tracks of their own, flows between the slices
 * that enclose their ends, and a device activity linked to the operator that
 * launched it by a flow (as Kineto's ac2g flows are). Times: ns, the trace's
 * own clock (the capture's start plus its times), less its rank's measured
 * clock offset (distributedInfo.clock_offset_ns): the ranks of one run on
 * rank 0's clock, as `opprof merge` puts them. */
#define _GNU_SOURCE
#include "sql.h"

#include <stdlib.h>
#include <string.h>

/* ---- statements ------------------------------------------------------- */

enum { ST_PROCESS, ST_THREAD, ST_TRACK, ST_SLICE, ST_COUNTER, ST_FLOW, ST_COUNT };
static const char *const INSERTS[ST_COUNT] = {
    "INSERT INTO process(upid, pid, name, trace_id) VALUES (?, ?, ?, ?)",
    "INSERT INTO thread(utid, tid, name, upid, is_main_thread, trace_id) VALUES (?, ?, ?, ?, ?, ?)",
    "INSERT INTO track(id, name, type, classification, utid, upid, is_counter) VALUES (?, ?, ?, ?, ?, ?, ?)",
    "INSERT INTO __intrinsic_slice(id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts,"
    " thread_dur, kind, file, function, line, input_dims, flops, bytes, off_cpu_ns, peak_memory_bytes, samples,"
    " layer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "INSERT INTO counter(id, ts, track_id, value) VALUES (?, ?, ?, ?)",
    "INSERT INTO flow(id, slice_out, slice_in, trace_id) VALUES (?, ?, ?, ?)",
};

/* A mark kept for after the slice ids: a flow's or an async range's. */
typedef struct pending {
    uint64_t id;
    uint32_t name;
    uint32_t kind;
    int64_t ts;
    uint32_t thread;
    size_t order; /* the mark's index: its place among marks of the same time (a bound flow's: its event) */
} pending;

typedef struct loader {
    sqlite3 *db;
    const opprof_capture *cap;
    sql_ids *ids;
    sql_args *args;
    sqlite3_stmt *st[ST_COUNT];
    int64_t trace_id, base_ns, first_slice;
    const opprof_event *ev;
    size_t n_ev;
    const opprof_thread_info *th;
    size_t n_th;
    int64_t *utid, *upid, *track; /* by capture thread */
    size_t *first_event;          /* by thread: its first event (n_th + 1 entries) */
    int64_t *arg_set;             /* by event, -1: none */
    uint8_t *arg_flags;           /* by event: ARGS_AS_READ, ARGS_DIMS */
    const sql_read_args *read;    /* the sets written as the trace was read, or NULL */
    pending *bound;               /* flows bound to events (OPPROF_FLOW_OUT_ARG...), their marks' */
    size_t n_bound, cap_bound;
    int64_t *thread_ts, *thread_dur; /* by event: its thread clock's (OPPROF_THREAD_TS_ARG...), -1: none;
                                        NULL while no event has one */
    struct mark_slice *marks;        /* instants and async slices, placed in the id order with the events */
    size_t n_marks, cap_marks;
    uint32_t *order;   /* events, then mark slices (n_ev + their index), by start: Perfetto's slice order */
    int64_t *slice_id; /* by event, then by mark slice: first_slice + its place in `order` */
    int64_t process_track_upid, process_track, global_track;
    bool other_writer; /* a plain trace-event writer's: no category is Kineto's */
} loader;

static int64_t ts_of(const loader *L, int64_t ns) { return L->base_ns + ns; }

/* A track's row; its id in *id. */
static int new_track(loader *L, int64_t *id, const char *name, const char *type, const char *cls, int64_t utid,
                     int64_t upid, int counter) {
    *id = L->ids->track++;
    return sql_row(L->st[ST_TRACK], "isssIIi", *id, name, type, cls, utid, upid, (int64_t)counter);
}

/* ---- processes, threads, their tracks ------------------------------------ */

/* (key, index) pairs sorted: groups of one key, each in first-seen order. */
typedef struct keyed {
    int64_t key, key2;
    size_t index;
} keyed;

static int by_key(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->key2 != y->key2) return x->key2 < y->key2 ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* For each item, the first item of its key (n log n, however many keys). */
static size_t *first_of_key(keyed *k, size_t n) {
    size_t *first = malloc((n + 1) * sizeof *first);
    if (!first) return NULL;
    qsort(k, n, sizeof *k, by_key);
    for (size_t i = 0, lead = 0; i < n; i++) {
        if (i == 0 || k[i].key != k[i - 1].key || k[i].key2 != k[i - 1].key2) lead = k[i].index;
        first[k[i].index] = lead;
    }
    return first;
}

static int load_threads(loader *L) {
    L->utid = calloc(L->n_th + 1, sizeof *L->utid);
    L->upid = calloc(L->n_th + 1, sizeof *L->upid);
    L->track = calloc(L->n_th + 1, sizeof *L->track);
    keyed *by_pid = malloc((L->n_th + 1) * sizeof *by_pid);
    if (!L->utid || !L->upid || !L->track || !by_pid) return free(by_pid), SQLITE_NOMEM;
    for (size_t t = 0; t < L->n_th; t++) by_pid[t] = (keyed){L->th[t].pid, 0, t};
    size_t *first = first_of_key(by_pid, L->n_th); /* each thread's process: its first thread's */
    free(by_pid);
    if (!first) return SQLITE_NOMEM;
    int rc = SQLITE_OK;
    for (size_t t = 0; t < L->n_th && rc == SQLITE_OK; t++) {
        const opprof_thread_info *ti = &L->th[t];
        L->upid[t] = first[t] < t ? L->upid[first[t]] : -1;
        if (L->upid[t] < 0) {
            L->upid[t] = L->ids->upid++;
            rc = sql_row(L->st[ST_PROCESS], "iisi", L->upid[t], ti->pid, ti->process, L->trace_id);
            if (rc) break;
        }
        L->utid[t] = L->ids->utid++;
        rc = sql_row(L->st[ST_THREAD], "iisiii", L->utid[t], ti->tid, ti->name, L->upid[t],
                     (int64_t)(ti->tid == ti->pid), L->trace_id);
        if (rc == SQLITE_OK) rc = new_track(L, &L->track[t], NULL, "thread_track", "thread", L->utid[t], -1, 0);
    }
    free(first);
    return rc;
}

/* ---- slices ----------------------------------------------------------------- */

/* The innermost event of `thread` open at ts (its start <= ts <= its end),
 * else, when `or_next`, the first that starts after ts; -1 if none. */
static int64_t enclosing(const loader *L, uint32_t thread, int64_t ts, bool or_next) {
    if (thread >= L->n_th) return -1;
    size_t lo = L->first_event[thread], hi = L->first_event[thread + 1];
    size_t a = lo, b = hi; /* the first event starting after ts */
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (L->ev[m].start_ns <= ts)
            a = m + 1;
        else
            b = m;
    }
    for (int64_t i = (int64_t)a - 1; i >= (int64_t)lo; i = L->ev[i].parent) {
        if (L->ev[i].start_ns + L->ev[i].duration_ns >= ts) return i;
        if (L->ev[i].parent < 0) break;
    }
    return or_next && a < hi ? (int64_t)a : -1;
}

static int64_t arg_set_of(loader *L, size_t e) {
    if (L->arg_set[e] < 0) L->arg_set[e] = L->ids->arg_set++;
    return L->arg_set[e];
}

enum { ARGS_AS_READ = 1, ARGS_DIMS = 2 }; /* an event's arguments written as read; they give "Input Dims" */

/* Set `set` (written as the trace was read) given to event e: its first
 * kept as read; a second (a child merged into e) has the first's arguments
 * moved into the lower id. */
static int claim_set(loader *L, uint8_t *claimed, size_t e, int64_t set) {
    const sql_read_args *r = L->read;
    if (set < r->first_set || set - r->first_set >= (int64_t)r->n_sets) return SQLITE_OK;
    claimed[set - r->first_set] = 1;
    if (r->dims[set - r->first_set]) L->arg_flags[e] |= ARGS_DIMS;
    if (!(L->arg_flags[e] & ARGS_AS_READ)) {
        L->arg_set[e] = set;
        L->arg_flags[e] |= ARGS_AS_READ;
        return SQLITE_OK;
    }
    if (set > L->arg_set[e]) return sql_args_move_set(L->args, set, L->arg_set[e]);
    int rc = sql_args_move_set(L->args, L->arg_set[e], set);
    L->arg_set[e] = set;
    return rc;
}

/* The sets written as the trace was read (read_args.c), each to the event
 * that keeps its id (opprof_capture_spilled_set, then the
 * OPPROF_SPILLED_ARGS_ARG marks of an event that a child was merged into);
 * a set that no event keeps (the read left its event out) is dropped. */
static int claim_read_sets(loader *L, const opprof_mark *m, size_t n_marks) {
    size_t n = L->read ? L->read->n_sets : 0;
    uint8_t *claimed = calloc(n + 1, 1);
    if (!claimed) return SQLITE_NOMEM;
    int rc = SQLITE_OK;
    for (size_t e = 0; n && e < L->n_ev && rc == SQLITE_OK; e++) {
        int64_t set = opprof_capture_spilled_set(L->cap, e);
        if (set >= 0) rc = claim_set(L, claimed, e, set);
    }
    for (size_t k = 0; n && k < n_marks && rc == SQLITE_OK; k++)
        if (m[k].event >= 0 && (size_t)m[k].event < L->n_ev && m[k].kind == OPPROF_MARK_ARG_INT &&
            !strcmp(opprof_capture_name(L->cap, m[k].name), OPPROF_SPILLED_ARGS_ARG))
            rc = claim_set(L, claimed, (size_t)m[k].event, m[k].value.i);
    for (size_t k = 0; k < n && rc == SQLITE_OK; k++)
        if (!claimed[k]) rc = sql_args_move_set(L->args, L->read->first_set + (int64_t)k, -1);
    free(claimed);
    return rc;
}

/* One mark's argument (opprof's own, FLOPs, bytes) into args. */
static int mark_arg(loader *L, const opprof_mark *m, const char *key) {
    int64_t set = arg_set_of(L, (size_t)m->event);
    if (m->kind >= OPPROF_MARK_ARG_INT && m->kind <= OPPROF_MARK_ARG_STR && sql_args_key_gives_dims(key))
        L->arg_flags[m->event] |= ARGS_DIMS;
    switch ((opprof_mark_kind)m->kind) {
    case OPPROF_MARK_ARG_INT: return sql_args_add(L->args, set, key, 'i', m->value.i, NULL, 0);
    case OPPROF_MARK_ARG_DOUBLE: return sql_args_add(L->args, set, key, 'r', 0, NULL, m->value.d);
    case OPPROF_MARK_ARG_STR:
        return sql_args_add(L->args, set, key, 's', 0, opprof_capture_name(L->cap, m->value.str), 0);
    case OPPROF_MARK_FLOPS: return sql_args_add(L->args, set, "flops", 'i', m->value.i, NULL, 0);
    case OPPROF_MARK_BYTES: return sql_args_add(L->args, set, "bytes", 'i', m->value.i, NULL, 0);
    case OPPROF_MARK_COUNTER:
    case OPPROF_MARK_INSTANT:
    case OPPROF_MARK_FLOW_BEGIN:
    case OPPROF_MARK_FLOW_STEP:
    case OPPROF_MARK_FLOW_END:
    case OPPROF_MARK_ASYNC_BEGIN:
    case OPPROF_MARK_ASYNC_END:
    case OPPROF_MARK_ASYNC_INSTANT:
    case OPPROF_MARK_KIND_COUNT: break; /* of no range: load_marks */
    }
    return SQLITE_OK;
}

/* A flow bound to its event (v2), for load_flows: its direction as a flow mark's kind. */
static int add_bound_flow(loader *L, const opprof_mark *m, const char *key) {
    if (!sql_grow((void **)&L->bound, &L->cap_bound, L->n_bound + 1, sizeof *L->bound)) return SQLITE_NOMEM;
    uint32_t kind = !strcmp(key, OPPROF_FLOW_OUT_ARG)    ? OPPROF_MARK_FLOW_BEGIN
                    : !strcmp(key, OPPROF_FLOW_STEP_ARG) ? OPPROF_MARK_FLOW_STEP
                                                         : OPPROF_MARK_FLOW_END;
    L->bound[L->n_bound++] = (pending){m->value.id, 0, kind, L->ev[m->event].start_ns, m->thread, (size_t)m->event};
    return SQLITE_OK;
}

/* Each event's thread clock, none yet. */
static int thread_clocks(loader *L) {
    L->thread_ts = malloc((L->n_ev + 1) * sizeof *L->thread_ts);
    L->thread_dur = malloc((L->n_ev + 1) * sizeof *L->thread_dur);
    if (!L->thread_ts || !L->thread_dur) return SQLITE_NOMEM;
    for (size_t i = 0; i < L->n_ev; i++) L->thread_ts[i] = L->thread_dur[i] = -1;
    return SQLITE_OK;
}

/* Each event's arguments: those written as the trace was read (which its
 * marks repeat in part), else its marks' (opprof's own, FLOPs, bytes), a
 * set numbered as it comes. */
static int load_args(loader *L) {
    size_t n_marks = 0;
    const opprof_mark *m = opprof_capture_marks(L->cap, &n_marks);
    int rc = claim_read_sets(L, m, n_marks);
    for (size_t k = 0; k < n_marks && rc == SQLITE_OK; k++) {
        if (m[k].event < 0 || (size_t)m[k].event >= L->n_ev) continue;
        const char *key = opprof_capture_name(L->cap, m[k].name);
        bool ts = !strcmp(key, OPPROF_THREAD_TS_ARG), dur = !ts && !strcmp(key, OPPROF_THREAD_DUR_ARG);
        if (m[k].kind == OPPROF_MARK_ARG_INT && (ts || dur)) { /* slice.thread_ts and _dur, no argument */
            if (!L->thread_ts) rc = thread_clocks(L);
            if (rc == SQLITE_OK) (ts ? L->thread_ts : L->thread_dur)[m[k].event] = m[k].value.i;
        } else if (m[k].kind == OPPROF_MARK_ARG_INT && !strncmp(key, "opprof:flow_", 12)) {
            rc = add_bound_flow(L, &m[k], key); /* a flow, no argument */
        } else if (!(L->arg_flags[m[k].event] & ARGS_AS_READ))
            rc = mark_arg(L, &m[k], key);
    }
    return rc;
}

/* Input shapes that the trace's own arguments did not give (opprof's
 * captures and .pftrace; another writer's "Input Dims" are its arguments,
 * kept whole by the reader): "Input Dims[i][j]", as Perfetto flattens the
 * JSON that PyTorch writes. */
static int load_shape_args(loader *L) {
    int rc = SQLITE_OK;
    for (size_t e = 0; e < L->n_ev && rc == SQLITE_OK; e++) {
        const opprof_site *site = opprof_capture_site(L->cap, L->ev[e].site);
        const opprof_shapes *sh = site ? opprof_capture_shapes(L->cap, site->shapes) : NULL;
        bool given = L->arg_flags[e] & ARGS_DIMS;
        for (int i = 0; sh && !given && i < sh->n_inputs && rc == SQLITE_OK; i++)
            for (int j = 0; j < sh->ndim[i] && rc == SQLITE_OK; j++) {
                char key[48];
                snprintf(key, sizeof key, "Input Dims[%d][%d]", i, j);
                rc = sql_args_add(L->args, arg_set_of(L, e), key, 'i', sh->dims[i][j], NULL, 0);
            }
    }
    return rc;
}

/* An instant or an async slice: numbered with the events before any is inserted. */
typedef struct mark_slice {
    int64_t ts, dur, track, depth;
    int64_t parent; /* an instant's: the event it is in; an async slice's: the mark slice it is in; or -1 */
    uint32_t name;
    bool async;
} mark_slice;

static int64_t start_of(const loader *L, uint32_t r) {
    return r < L->n_ev ? L->ev[r].start_ns : L->marks[r - L->n_ev].ts;
}

/* Slice ids in time order over every track, as trace_processor gives them (it
 * sorts a trace's events by time before it imports them): by start, then the
 * events before the marks' slices, then capture order, so that a parent comes
 * before what it holds. */
static int by_start(const void *a, const void *b, void *ctx) {
    const loader *L = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int64_t sx = start_of(L, x), sy = start_of(L, y);
    if (sx != sy) return sx < sy ? -1 : 1;
    return (x > y) - (x < y);
}

static int order_slices(loader *L) {
    size_t n = L->n_ev + L->n_marks;
    L->order = malloc((n + 1) * sizeof *L->order);
    L->slice_id = malloc((n + 1) * sizeof *L->slice_id);
    if (!L->order || !L->slice_id) return SQLITE_NOMEM;
    for (size_t i = 0; i < n; i++) L->order[i] = (uint32_t)i;
    qsort_r(L->order, n, sizeof *L->order, by_start, L);
    for (size_t r = 0; r < n; r++) L->slice_id[L->order[r]] = L->first_slice + (int64_t)r;
    L->ids->slice += (int64_t)n;
    return SQLITE_OK;
}

static int64_t slice_of(const loader *L, int64_t event) { return event >= 0 ? L->slice_id[event] : -1; }

/* The events' slices, with opprof's facts of each (sql_slice_facts). */
static int load_slices(loader *L) {
    int *depth = malloc((L->n_ev + 1) * sizeof *depth);
    sql_slice_facts facts;
    int rc = depth ? sql_slice_facts_make(L->cap, &facts) : SQLITE_NOMEM;
    if (rc != SQLITE_OK) {
        free(depth);
        return rc;
    }
    sql_slice_fact f;
    for (size_t r = 0; r < L->n_ev + L->n_marks && rc == SQLITE_OK; r++) { /* in id order: a parent's depth is known */
        size_t i = L->order[r];
        if (i >= L->n_ev) continue; /* a mark's slice: load_mark_slices */
        const opprof_event *e = &L->ev[i];
        bool device = e->kind == OPPROF_KIND_DEVICE;
        int64_t parent = !device && e->parent >= 0 ? e->parent : -1;
        depth[i] = parent >= 0 ? depth[parent] + 1 : 0;
        const char *cat = opprof_capture_category(L->cap, e);
        if (!cat && !L->other_writer) cat = opprof_kind_category((opprof_kind)e->kind); /* else it had none */
        sql_bounds_take(L->ids, ts_of(L, e->start_ns), ts_of(L, e->start_ns) + e->duration_ns);
        sql_slice_fact_of(&facts, i, &f);
        rc = sql_row(L->st[ST_SLICE], "iiiissiIIIIsssIsiiiiiI", L->slice_id[i], ts_of(L, e->start_ns), e->duration_ns,
                     L->track[e->thread], cat, opprof_capture_name(L->cap, e->name), (int64_t)depth[i],
                     slice_of(L, parent), L->arg_set[i], L->thread_ts ? L->thread_ts[i] : -1,
                     L->thread_dur ? L->thread_dur[i] : -1, f.kind, f.file, f.function, f.line, f.input_dims, f.flops,
                     f.bytes, f.off_cpu_ns, f.peak_memory_bytes, f.samples, f.layer);
        if (rc == SQLITE_OK && device && e->parent >= 0) /* launched by: Kineto's ac2g flow */
            rc = sql_row(L->st[ST_FLOW], "iiii", L->ids->flow++, slice_of(L, e->parent), L->slice_id[i], L->trace_id);
    }
    sql_slice_facts_free(&facts);
    free(depth);
    return rc;
}

static int load_mark_slices(loader *L) {
    int rc = SQLITE_OK;
    for (size_t k = 0; k < L->n_marks && rc == SQLITE_OK; k++) {
        const mark_slice *m = &L->marks[k];
        int64_t parent = m->parent < 0 ? -1
                         : m->async    ? L->slice_id[L->n_ev + (size_t)m->parent]
                                       : L->slice_id[m->parent];
        sql_bounds_take(L->ids, ts_of(L, m->ts), ts_of(L, m->ts) + m->dur);
        rc = sql_row(L->st[ST_SLICE], "iiiissiI--------------", L->slice_id[L->n_ev + k], ts_of(L, m->ts), m->dur,
                     m->track, m->async ? "async" : "instant", opprof_capture_name(L->cap, m->name), m->depth, parent);
    }
    return rc;
}

/* ---- marks between events: instants, counters, flows, async ranges ----- */

static int by_pair(const void *a, const void *b) {
    const pending *x = a, *y = b;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* A mark's slice, numbered later (order_slices); its index, or -1 when out of memory. */
static int64_t add_mark_slice(loader *L, mark_slice m) {
    if (L->n_marks >= UINT32_MAX - L->n_ev - 1) return -1;
    if (!sql_grow((void **)&L->marks, &L->cap_marks, L->n_marks + 1, sizeof *L->marks)) return -1;
    L->marks[L->n_marks] = m;
    return (int64_t)L->n_marks++;
}

static int plan_instant(loader *L, const opprof_mark *m) {
    int64_t track, parent = -1, depth = 0;
    if (m->value.i == OPPROF_INSTANT_THREAD) {
        track = L->track[m->thread];
        parent = enclosing(L, m->thread, m->ts_ns, false);
        for (int64_t p = parent; p >= 0; p = L->ev[p].parent) depth++;
    } else if (m->value.i == OPPROF_INSTANT_PROCESS) {
        if (L->process_track_upid != L->upid[m->thread] || L->process_track < 0) {
            int rc = new_track(L, &L->process_track, NULL, "process_track", "process", -1, L->upid[m->thread], 0);
            if (rc) return rc;
            L->process_track_upid = L->upid[m->thread];
        }
        track = L->process_track;
    } else {
        int rc = L->global_track < 0 ? new_track(L, &L->global_track, NULL, "global_track", "global", -1, -1, 0) : 0;
        if (rc) return rc;
        track = L->global_track;
    }
    return add_mark_slice(L, (mark_slice){m->ts_ns, 0, track, depth, parent, m->name, false}) < 0 ? SQLITE_NOMEM
                                                                                                  : SQLITE_OK;
}

/* A counter's track: one per (process, name), made at its first sample.
 * m is the trace's counter c; `first` maps each counter to its key's first
 * counter (first_of_key). */
static int load_counter(loader *L, const opprof_mark *m, size_t c, const size_t *first, int64_t *track_of_counter) {
    int64_t track = track_of_counter[first[c]];
    if (track < 0) {
        int rc = new_track(L, &track, opprof_capture_name(L->cap, m->name), "process_counter_track", "counter", -1,
                           L->upid[m->thread], 1);
        if (rc) return rc;
        track_of_counter[first[c]] = track;
    }
    sql_bounds_take(L->ids, ts_of(L, m->ts_ns), ts_of(L, m->ts_ns));
    return sql_row(L->st[ST_COUNTER], "iiid", L->ids->counter++, ts_of(L, m->ts_ns), track, m->value.d);
}

/* A stats row of the loader's own (Perfetto's name for what it counts), after the reader's. */
static int stat_row(loader *L, const char *name, int64_t value, const char *description) {
    sqlite3_stmt *st = NULL;
    int rc = sql_prepare(L->db,
                         "INSERT INTO stats(name, idx, severity, source, value, description, trace_id)"
                         " VALUES (?, (SELECT COUNT(*) FROM stats WHERE trace_id = ?), 'info', 'analysis', ?, ?, ?)",
                         &st);
    if (rc == SQLITE_OK) rc = sql_row(st, "siisi", name, L->trace_id, value, description, L->trace_id);
    sql_finalize(st);
    return rc;
}

/* Flows: the marks of one id in time order, each to the next (s -> t -> t -> f), as
 * Perfetto's JSON importer links v1 flows: a step or an end takes the flow from the
 * start or step before it; an end closes it. A v1 mark's slice is the one that
 * encloses it on its thread (an end's may follow it); a bound flow's (v2), its event. */
static int link_flows(loader *L, pending *p, size_t n, bool bound, int64_t *unplaced) {
    if (n < 2) return SQLITE_OK; /* no link (and p may be NULL) */
    qsort(p, n, sizeof *p, by_pair);
    for (size_t k = 0; k + 1 < n; k++) {
        if (p[k].id != p[k + 1].id || p[k].kind == OPPROF_MARK_FLOW_END || p[k + 1].kind == OPPROF_MARK_FLOW_BEGIN)
            continue;
        int64_t out = bound ? (int64_t)p[k].order : enclosing(L, p[k].thread, p[k].ts, true);
        int64_t in = bound ? (int64_t)p[k + 1].order : enclosing(L, p[k + 1].thread, p[k + 1].ts, true);
        if (out < 0 || in < 0) {
            (*unplaced)++;
            continue;
        }
        int rc = sql_row(L->st[ST_FLOW], "iiii", L->ids->flow++, slice_of(L, out), slice_of(L, in), L->trace_id);
        if (rc) return rc;
    }
    return SQLITE_OK;
}

static int load_flows(loader *L, pending *p, size_t n) {
    int64_t unplaced = 0; /* links with an end that no slice holds or follows on its thread */
    int rc = link_flows(L, p, n, false, &unplaced);
    if (rc == SQLITE_OK) rc = link_flows(L, L->bound, L->n_bound, true, &unplaced);
    if (rc == SQLITE_OK && unplaced)
        rc = stat_row(L, "flow_no_enclosing_slice", unplaced,
                      "flow links left out: an end of theirs had no slice on its thread at or after its time");
    return rc;
}

/* Async ranges and instants ("b", "e", "n"), as Perfetto's JSON importer
 * reads them: on a process track of each name and id, an end closing the
 * innermost begin open there, an instant a slice of no duration inside what
 * is open; a begin never ended is left out. p[first, end): one track's. */
enum { ASYNC_DEPTH = 64 };
static int async_track_slices(loader *L, const pending *p, size_t first, size_t end) {
    size_t *ended = malloc((end - first) * sizeof *ended); /* by begin: its end's index, or SIZE_MAX */
    if (!ended) return SQLITE_NOMEM;
    size_t open[ASYNC_DEPTH], depth = 0;
    for (size_t k = first; k < end; k++) {
        ended[k - first] = SIZE_MAX;
        if (p[k].kind == OPPROF_MARK_ASYNC_BEGIN && depth < ASYNC_DEPTH) open[depth++] = k;
        if (p[k].kind == OPPROF_MARK_ASYNC_END && depth) ended[open[--depth] - first] = k;
    }
    const char *name = opprof_capture_name(L->cap, p[first].name);
    int64_t track = -1, slices[ASYNC_DEPTH];
    int rc = SQLITE_OK;
    depth = 0;
    for (size_t k = first; k < end && rc == SQLITE_OK; k++) {
        while (depth && ended[open[depth - 1] - first] < k) depth--; /* what ended before this */
        bool begin = p[k].kind == OPPROF_MARK_ASYNC_BEGIN && ended[k - first] != SIZE_MAX;
        if (!begin && p[k].kind != OPPROF_MARK_ASYNC_INSTANT) continue;
        if (track < 0 && (rc = new_track(L, &track, name, "process_track", "async", -1, L->upid[p[k].thread], 0)))
            break;
        int64_t dur = begin ? p[ended[k - first]].ts - p[k].ts : 0;
        int64_t slice = add_mark_slice(
            L, (mark_slice){p[k].ts, dur, track, (int64_t)depth, depth ? slices[depth - 1] : -1, p[k].name, true});
        if (slice < 0) rc = SQLITE_NOMEM;
        if (begin && depth < ASYNC_DEPTH) {
            open[depth] = k;
            slices[depth++] = slice;
        }
    }
    free(ended);
    return rc;
}

static int plan_async(loader *L, pending *p, size_t n) {
    qsort(p, n, sizeof *p, by_pair);
    int rc = SQLITE_OK;
    for (size_t first = 0, k = 1; k <= n && rc == SQLITE_OK; k++)
        if (k == n || p[k].name != p[first].name || p[k].id != p[first].id) {
            rc = async_track_slices(L, p, first, k);
            first = k;
        }
    return rc;
}

/* A mark between events (not a range's argument) that a table holds. */
static bool between_events(const loader *L, const opprof_mark *m) { return m->event < 0 && m->thread < L->n_th; }

/* The marks between events: counters loaded, instants and async slices
 * planned (their ids come with the events'), flows kept for after the ids
 * (*flow: malloc'd, the caller's). The arrays hold only the marks of their
 * kind: a trace's marks are mostly its ranges' arguments (8 a Kineto event). */
static int plan_marks(loader *L, pending **flow_out, size_t *n_flow_out) {
    size_t n_marks = 0, n_flow = 0, n_async = 0, n_counter = 0;
    const opprof_mark *m = opprof_capture_marks(L->cap, &n_marks);
    for (size_t k = 0; k < n_marks; k++) {
        if (!between_events(L, &m[k])) continue;
        n_counter += m[k].kind == OPPROF_MARK_COUNTER;
        n_flow += m[k].kind == OPPROF_MARK_FLOW_BEGIN || m[k].kind == OPPROF_MARK_FLOW_STEP ||
                  m[k].kind == OPPROF_MARK_FLOW_END;
        n_async += m[k].kind == OPPROF_MARK_ASYNC_BEGIN || m[k].kind == OPPROF_MARK_ASYNC_END ||
                   m[k].kind == OPPROF_MARK_ASYNC_INSTANT;
    }
    pending *flow = malloc((n_flow + 1) * sizeof *flow), *async = malloc((n_async + 1) * sizeof *async);
    keyed *keys = malloc((n_counter + 1) * sizeof *keys);
    int64_t *track_of_counter = malloc((n_counter + 1) * sizeof *track_of_counter);
    size_t *first = NULL;
    int rc = flow && async && keys && track_of_counter ? SQLITE_OK : SQLITE_NOMEM;
    for (size_t k = 0, c = 0; rc == SQLITE_OK && k < n_marks; k++) /* counters by (process, name): sorted once */
        if (between_events(L, &m[k]) && m[k].kind == OPPROF_MARK_COUNTER) {
            keys[c] = (keyed){L->upid[m[k].thread], (int64_t)m[k].name, c};
            track_of_counter[c++] = -1;
        }
    if (rc == SQLITE_OK && !(first = first_of_key(keys, n_counter))) rc = SQLITE_NOMEM;
    n_flow = n_async = 0;
    for (size_t k = 0, c = 0; k < n_marks && rc == SQLITE_OK; k++) {
        if (!between_events(L, &m[k])) continue;
        pending pd = {m[k].value.id, m[k].name, m[k].kind, m[k].ts_ns, m[k].thread, k};
        switch ((opprof_mark_kind)m[k].kind) {
        case OPPROF_MARK_INSTANT: rc = plan_instant(L, &m[k]); break;
        case OPPROF_MARK_COUNTER: rc = load_counter(L, &m[k], c++, first, track_of_counter); break;
        case OPPROF_MARK_FLOW_BEGIN:
        case OPPROF_MARK_FLOW_STEP:
        case OPPROF_MARK_FLOW_END: pd.name = 0, flow[n_flow++] = pd; break;
        case OPPROF_MARK_ASYNC_BEGIN:
        case OPPROF_MARK_ASYNC_END:
        case OPPROF_MARK_ASYNC_INSTANT: async[n_async++] = pd; break;
        case OPPROF_MARK_ARG_INT:
        case OPPROF_MARK_ARG_DOUBLE:
        case OPPROF_MARK_ARG_STR:
        case OPPROF_MARK_FLOPS:
        case OPPROF_MARK_BYTES:
        case OPPROF_MARK_KIND_COUNT: break; /* of a range: its slice's args */
        }
    }
    if (rc == SQLITE_OK) rc = plan_async(L, async, n_async);
    *flow_out = flow;
    *n_flow_out = n_flow;
    free(async);
    free(keys);
    free(track_of_counter);
    free(first);
    return rc;
}

/* ---- the trace ----------------------------------------------------------- */

static int load_trace_row(loader *L, const sql_trace *t) {
    opprof_capture_info info = opprof_capture_get_info(L->cap);
    sqlite3_stmt *st = NULL;
    int rc = sql_prepare(
        L->db,
        "INSERT INTO trace(id, file, producer, rank, world_size, backend, host, pid, first_step,"
        " last_step, start_ts, end_ts, mtime_ns, size_bytes, format) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        &st);
    int64_t first = -1, last = -1;
    for (size_t i = 0; i < L->n_ev; i++) {
        if (L->ev[i].kind != OPPROF_KIND_STEP) continue;
        const char *name = opprof_capture_name(L->cap, L->ev[i].name), *hash = name ? strchr(name, '#') : NULL;
        int64_t n = hash ? strtoll(hash + 1, NULL, 10) : -1;
        if (n >= 0 && (first < 0 || n < first)) first = n;
        if (n > last) last = n;
    }
    bool ranked = info.rank.backend[0] || info.rank.world_size > 1;
    if (rc == SQLITE_OK)
        rc = sql_row(st, "issIIssiIIiiiis", L->trace_id, t->path, opprof_producer_name(info.producer),
                     ranked ? (int64_t)info.rank.rank : -1, ranked ? (int64_t)info.rank.world_size : -1,
                     info.rank.backend, opprof_capture_host_name(L->cap), info.pid, first, last, L->base_ns,
                     L->base_ns + info.duration_ns, t->mtime_ns, t->size_bytes, info.trace_format);
    sql_finalize(st);
    if (rc) return rc;
    rc = sql_prepare(L->db,
                     "INSERT INTO stats(name, idx, severity, source, value, description, trace_id)"
                     " VALUES (?, ?, ?, 'trace', ?, ?, ?)",
                     &st);
    for (size_t k = 0; k < t->n_stats && rc == SQLITE_OK; k++)
        rc = sql_row(st, "sisisi", t->stats[k].name, (int64_t)k, "info", t->stats[k].value, t->stats[k].description,
                     L->trace_id);
    sql_finalize(st);
    return rc;
}

/* The arrays by event that the slices were made from. */
static void free_by_event(loader *L) {
    free(L->arg_set);
    free(L->arg_flags);
    free(L->thread_ts);
    free(L->thread_dur);
    L->arg_set = L->thread_ts = L->thread_dur = NULL;
    L->arg_flags = NULL;
}

static int load_all(loader *L, const sql_trace *t) {
    int rc = load_trace_row(L, t);
    if (rc == SQLITE_OK) rc = load_threads(L);
    L->first_event = calloc(L->n_th + 2, sizeof *L->first_event);
    L->arg_set = malloc((L->n_ev + 1) * sizeof *L->arg_set);
    L->arg_flags = calloc(L->n_ev + 1, 1);
    if (!L->first_event || !L->arg_set || !L->arg_flags) return SQLITE_NOMEM;
    for (size_t i = 0; i < L->n_ev; i++) L->arg_set[i] = -1;
    for (size_t i = 0; i < L->n_ev; i++) L->first_event[L->ev[i].thread + 1]++;
    for (size_t t2 = 0; t2 < L->n_th; t2++) L->first_event[t2 + 1] += L->first_event[t2];
    if (rc == SQLITE_OK) rc = load_args(L);
    if (rc == SQLITE_OK) rc = load_shape_args(L);
    if (rc == SQLITE_OK) rc = sql_args_flush(L->args); /* the next trace's sets are others */
    pending *flow = NULL;
    size_t n_flow = 0;
    if (rc == SQLITE_OK) rc = plan_marks(L, &flow, &n_flow);
    if (rc == SQLITE_OK) rc = order_slices(L);
    if (rc == SQLITE_OK) rc = load_slices(L);
    free_by_event(L); /* what load_own needs is slice_id alone: the peak's share of the loader, less */
    if (rc == SQLITE_OK) rc = load_mark_slices(L);
    if (rc == SQLITE_OK) rc = load_flows(L, flow, n_flow);
    free(flow);
    free(L->order);
    L->order = NULL;
    if (rc == SQLITE_OK) rc = sql_load_own(L->db, L->cap, L->trace_id, L->utid, L->slice_id, L->ids);
    return rc;
}

int sql_load_capture(sqlite3 *db, const opprof_capture *cap, const sql_trace *trace, const sql_read_args *read,
                     sql_args *args, sql_ids *ids) {
    loader L = {.db = db,
                .cap = cap,
                .ids = ids,
                .args = args,
                .read = read,
                .process_track = -1,
                .global_track = -1,
                .process_track_upid = -1};
    L.ev = opprof_capture_events(cap, &L.n_ev);
    L.th = opprof_capture_threads(cap, &L.n_th);
    L.trace_id = ids->trace++;
    opprof_capture_info info = opprof_capture_get_info(cap);
    if (__builtin_sub_overflow(info.base_time_ns, info.rank.clock_offset_ns, &L.base_ns)) L.base_ns = info.base_time_ns;
    L.first_slice = ids->slice;
    L.other_writer = opprof_capture_get_info(cap).producer == OPPROF_PRODUCER_OTHER;
    int rc = SQLITE_OK;
    for (int k = 0; k < ST_COUNT && rc == SQLITE_OK; k++) rc = sql_prepare(db, INSERTS[k], &L.st[k]);
    if (rc == SQLITE_OK) rc = load_all(&L, trace);
    for (int k = 0; k < ST_COUNT; k++) sql_finalize(L.st[k]);
    free(L.utid);
    free(L.upid);
    free(L.track);
    free(L.first_event);
    free(L.bound);
    free_by_event(&L);
    free(L.order);
    free(L.slice_id);
    free(L.marks);
    return rc;
}
