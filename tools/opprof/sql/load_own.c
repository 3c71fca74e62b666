/* load_own.c - what opprof knows of a capture that Perfetto's tables do not
 * hold: key averages (the rows of `opprof report`, by the producer's rules,
 * device time and pools included), each slice's call site, input shapes,
 * FLOPs, bytes, time off the CPU, memory peak, samples and layer (the facts
 * that load.c writes into its row: the opprof_slice view), the steps, the
 * memory events, and the samples in Perfetto's perf_sample / stack_profile_*
 * layout. */
#define _GNU_SOURCE
#include "sql.h"

#include <stdlib.h>
#include <string.h>

typedef struct own {
    sqlite3 *db;
    const opprof_capture *cap;
    int64_t trace_id, base_ns;
    const int64_t *slice_id; /* by event */
    const int64_t *utid;
    sql_ids *ids;
} own;

static int64_t slice_of(const own *o, int32_t event) { return event >= 0 ? o->slice_id[event] : -1; }

static int load_averages(own *o) {
    opprof_averages *av = NULL;
    int rc = opprof_capture_averages(o->cap, &av) ? SQLITE_NOMEM : SQLITE_OK;
    sqlite3_stmt *st = NULL;
    if (rc == SQLITE_OK)
        rc = sql_prepare(o->db,
                         "INSERT INTO key_averages(trace_id, name, device, calls, self_ns, total_ns, self_device_ns,"
                         " total_device_ns, cpu_memory_bytes, self_cpu_memory_bytes, peak_memory_bytes,"
                         " device_memory_bytes, self_device_memory_bytes, flops, bytes, samples, total_samples,"
                         " top_frame, off_cpu_ns, self_off_cpu_ns, wall_ns, wait_ns, threads, imbalance, mangled_name)"
                         " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         &st);
    size_t n = 0;
    const opprof_average_row *r = opprof_averages_rows(av, &n);
    for (size_t k = 0; k < n && rc == SQLITE_OK; k++)
        rc = sql_row(st, "isiiiiiiiiiiiiiiisiiiiids", o->trace_id, r[k].key, (int64_t)r[k].device, r[k].calls,
                     r[k].self_ns, r[k].total_ns, r[k].self_device_ns, r[k].total_device_ns, r[k].cpu_mem,
                     r[k].self_cpu_mem, r[k].peak_mem, r[k].device_mem, r[k].self_device_mem, r[k].flops, r[k].bytes,
                     r[k].samples, r[k].total_samples, r[k].top_frame, r[k].off_cpu_ns, r[k].self_off_cpu_ns,
                     r[k].wall_ns, r[k].wait_ns, (int64_t)r[k].threads, r[k].imbalance, r[k].mangled);
    sql_finalize(st);
    opprof_averages_free(av);
    return rc;
}

/* ---- each slice's facts: opprof's columns of its row ----------------------- */

/* The array of n int64_t that *a is, made (zeroed) at its first use: false when out of memory. */
static bool zeroed(int64_t **a, size_t n) { return *a || (*a = calloc(n + 1, sizeof **a)) != NULL; }

/* The FLOPs and bytes that events' marks give (opprof's own traces); whether
 * any names a tensor (ggml's nodes: their layers). */
static bool work_of_marks(sql_slice_facts *f, size_t n, bool *tensors) {
    size_t n_marks = 0;
    const opprof_mark *m = opprof_capture_marks(f->cap, &n_marks);
    *tensors = false;
    for (size_t k = 0; k < n_marks; k++) {
        if (m[k].event < 0 || (size_t)m[k].event >= n) continue;
        if (m[k].kind == OPPROF_MARK_FLOPS || m[k].kind == OPPROF_MARK_BYTES) {
            int64_t **a = m[k].kind == OPPROF_MARK_FLOPS ? &f->flops : &f->bytes;
            if (!zeroed(a, n)) return false;
            (*a)[m[k].event] += m[k].value.i;
        } else if (m[k].kind == OPPROF_MARK_ARG_STR && !*tensors) {
            const char *key = opprof_capture_name(f->cap, m[k].name);
            *tensors = key && !strcmp(key, "name");
        }
    }
    return true;
}

typedef struct part {
    int64_t run;
    size_t event;
} part;

static int by_run(const void *a, const void *b) {
    const part *x = a, *y = b;
    return x->run != y->run ? (x->run < y->run ? -1 : 1) : (x->event > y->event) - (x->event < y->event);
}

/* Each event's layer: that of the tensor its "name" argument names, as ggml's nodes carry
 * theirs (opprof_tensor_name_layer; -1: none); the parts of a run over a pool (one
 * "part_of" id) all take the layer any of them names, as report --group-by layer does. */
static int32_t *event_layers(const opprof_capture *cap, size_t n) {
    size_t n_marks = 0, n_parts = 0;
    const opprof_mark *m = opprof_capture_marks(cap, &n_marks);
    int32_t *layer = malloc((n + 1) * sizeof *layer);
    part *parts = malloc((n_marks + 1) * sizeof *parts);
    if (!layer || !parts) {
        free(layer);
        free(parts);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) layer[i] = -1;
    for (size_t k = 0; k < n_marks; k++) {
        if (m[k].event < 0 || (size_t)m[k].event >= n) continue;
        const char *key = opprof_capture_name(cap, m[k].name);
        if (m[k].kind == OPPROF_MARK_ARG_STR && key && !strcmp(key, "name"))
            layer[m[k].event] = opprof_tensor_name_layer(opprof_capture_name(cap, m[k].value.str));
        if (m[k].kind == OPPROF_MARK_ARG_INT && key && !strcmp(key, OPPROF_PART_OF_KEY))
            parts[n_parts++] = (part){m[k].value.i, (size_t)m[k].event};
    }
    qsort(parts, n_parts, sizeof *parts, by_run);
    for (size_t a = 0, b; a < n_parts; a = b) {
        int32_t named = -1;
        for (b = a; b < n_parts && parts[b].run == parts[a].run; b++)
            if (layer[parts[b].event] >= 0) named = layer[parts[b].event];
        for (size_t k = a; named >= 0 && k < b; k++) layer[parts[k].event] = named;
    }
    free(parts);
    return layer;
}

int sql_slice_facts_make(const opprof_capture *cap, sql_slice_facts *f) {
    *f = (sql_slice_facts){.cap = cap};
    size_t n = 0, n_samples = 0, n_memory = 0, n_off = 0;
    opprof_capture_events(cap, &n);
    const opprof_sample *s = opprof_capture_samples(cap, &n_samples);
    opprof_capture_memory_events(cap, &n_memory);
    opprof_capture_off_cpu(cap, &n_off);
    bool tensors = false;
    bool ok = work_of_marks(f, n, &tensors) && (!tensors || (f->layer = event_layers(cap, n)) != NULL) &&
              (!n_samples || zeroed(&f->samples, n)) && (!n_off || !opprof_capture_event_off_cpu(cap, &f->off_cpu)) &&
              (!n_memory || !opprof_capture_peak_memory(cap, &f->peak));
    for (size_t k = 0; ok && k < n_samples; k++)
        if (s[k].owner >= 0 && (size_t)s[k].owner < n) f->samples[s[k].owner]++;
    if (!ok) sql_slice_facts_free(f);
    return ok ? SQLITE_OK : SQLITE_NOMEM;
}

static const char *kind_name(unsigned kind) {
    static const char *const NAMES[] = {"user_annotation", "cpu_op", "step", "device", "device_annotation"};
    return kind < sizeof NAMES / sizeof *NAMES ? NAMES[kind] : "unknown";
}

void sql_slice_fact_of(const sql_slice_facts *f, size_t event, sql_slice_fact *out) {
    size_t n = 0;
    const opprof_event *e = &opprof_capture_events(f->cap, &n)[event];
    const opprof_site *site = opprof_capture_site(f->cap, e->site);
    const opprof_shapes *sh = site ? opprof_capture_shapes(f->cap, site->shapes) : NULL;
    out->kind = kind_name(e->kind);
    out->file = site ? site->file : NULL;
    out->function = site ? site->function : NULL;
    out->line = site && site->line ? (int64_t)site->line : -1;
    out->input_dims[0] = '\0';
    if (sh) opprof_shapes_format(sh, out->input_dims, sizeof out->input_dims);
    out->flops = f->flops && f->flops[event] ? f->flops[event] : opprof_flops(opprof_capture_name(f->cap, e->name), sh);
    out->bytes = f->bytes ? f->bytes[event] : 0;
    out->off_cpu_ns = f->off_cpu ? f->off_cpu[event] : 0;
    out->peak_memory_bytes = f->peak ? f->peak[event] : 0;
    out->samples = f->samples ? f->samples[event] : 0;
    out->layer = f->layer ? f->layer[event] : -1;
}

void sql_slice_facts_free(sql_slice_facts *f) {
    free(f->flops);
    free(f->bytes);
    free(f->samples);
    free(f->layer);
    opprof_free(f->off_cpu);
    opprof_free(f->peak);
    *f = (sql_slice_facts){.cap = f->cap};
}

static int load_steps(own *o, const opprof_event *ev, size_t n) {
    sqlite3_stmt *st = NULL;
    int rc = sql_prepare(
        o->db, "INSERT INTO step(trace_id, number, name, ts, dur, slice_id, utid) VALUES (?,?,?,?,?,?,?)", &st);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        if (ev[i].kind != OPPROF_KIND_STEP) continue;
        const char *name = opprof_capture_name(o->cap, ev[i].name), *hash = name ? strchr(name, '#') : NULL;
        rc = sql_row(st, "iIsiiii", o->trace_id, hash ? strtoll(hash + 1, NULL, 10) : -1, name,
                     o->base_ns + ev[i].start_ns, ev[i].duration_ns, o->slice_id[i], o->utid[ev[i].thread]);
    }
    sql_finalize(st);
    return rc;
}

static int load_memory(own *o) {
    size_t n = 0;
    const opprof_memory_event *m = opprof_capture_memory_events(o->cap, &n);
    sqlite3_stmt *st = NULL;
    int rc = sql_prepare(o->db,
                         "INSERT INTO memory(id, trace_id, ts, utid, addr, bytes, total_allocated, slice_id,"
                         " device_type, device_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
                         &st);
    for (size_t k = 0; k < n && rc == SQLITE_OK; k++) {
        sql_bounds_take(o->ids, o->base_ns + m[k].ts_ns, o->base_ns + m[k].ts_ns);
        rc = sql_row(st, "iiiiiiiIii", o->ids->memory++, o->trace_id, o->base_ns + m[k].ts_ns, o->utid[m[k].thread],
                     (int64_t)m[k].addr, m[k].bytes, m[k].total_allocated, slice_of(o, m[k].owner),
                     (int64_t)m[k].device_type, (int64_t)m[k].device_id);
    }
    sql_finalize(st);
    return rc;
}

/* ---- the times threads spent off the CPU: Perfetto's thread_state -------- */

static const opprof_off_cpu *g_offs; /* for by_start: qsort takes no context */

static int by_start(const void *a, const void *b) {
    int64_t x = g_offs[*(const size_t *)a].start_ns, y = g_offs[*(const size_t *)b].start_ns;
    return (x > y) - (x < y);
}

/* Each off-CPU interval a row, in time order, as trace_processor's state
 * names it: "R+" preempted (runnable), "S" blocked (a sleep, I/O, a lock: the
 * switch record does not tell them apart). opprof sees no scheduler, so no
 * "Running" row and no CPU. */
static int load_thread_states(own *o) {
    size_t n = 0;
    const opprof_off_cpu *off = opprof_capture_off_cpu(o->cap, &n);
    if (n == 0) return SQLITE_OK;
    size_t *order = malloc(n * sizeof *order);
    if (!order) return SQLITE_NOMEM;
    for (size_t k = 0; k < n; k++) order[k] = k;
    g_offs = off;
    qsort(order, n, sizeof *order, by_start);
    sqlite3_stmt *st = NULL;
    int rc = sql_prepare(o->db, "INSERT INTO thread_state(id, ts, dur, utid, state) VALUES (?,?,?,?,?)", &st);
    for (size_t k = 0; k < n && rc == SQLITE_OK; k++) {
        const opprof_off_cpu *i = &off[order[k]];
        sql_bounds_take(o->ids, o->base_ns + i->start_ns, o->base_ns + i->start_ns + i->duration_ns);
        rc = sql_row(st, "iiiis", o->ids->thread_state++, o->base_ns + i->start_ns, i->duration_ns, o->utid[i->thread],
                     i->preempted ? "R+" : "S");
    }
    sql_finalize(st);
    free(order);
    return rc;
}

/* ---- samples: Perfetto's callsite tree ------------------------------------ */

typedef struct stacks_st {
    sqlite3_stmt *find_frame, *add_frame, *find_site, *add_site;
} stacks_st;

/* The id of the row that `find` selects, inserted by `add` when missing
 * (both bound by the caller); -1 on an error. */
static int64_t find_or_add(sqlite3 *db, sqlite3_stmt *find, sqlite3_stmt *add) {
    int64_t id = sqlite3_step(find) == SQLITE_ROW ? sqlite3_column_int64(find, 0) : -1;
    sqlite3_reset(find);
    if (id < 0 && sqlite3_step(add) == SQLITE_DONE) id = sqlite3_last_insert_rowid(db);
    sqlite3_reset(add);
    return id;
}

static void bind_text(sqlite3_stmt *st, int col, const char *s) {
    if (s)
        sqlite3_bind_text(st, col, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, col);
}

static void bind_id(sqlite3_stmt *st, int col, int64_t id) {
    if (id < 0)
        sqlite3_bind_null(st, col);
    else
        sqlite3_bind_int64(st, col, id);
}

static int64_t frame_id(own *o, stacks_st *q, const char *name, const char *source) {
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *st = k ? q->add_frame : q->find_frame;
        bind_text(st, 1, name ? name : "");
        bind_text(st, 2, source);
    }
    return find_or_add(o->db, q->find_frame, q->add_frame);
}

static int64_t callsite_id(own *o, stacks_st *q, int64_t parent, int64_t depth, int64_t frame) {
    bind_id(q->find_site, 1, parent);
    sqlite3_bind_int64(q->find_site, 2, frame);
    sqlite3_bind_int64(q->add_site, 1, depth);
    bind_id(q->add_site, 2, parent);
    sqlite3_bind_int64(q->add_site, 3, frame);
    return find_or_add(o->db, q->find_site, q->add_site);
}

/* The callsite of each distinct stack: its frames from the outermost in. */
static int stack_callsites(own *o, stacks_st *q, int64_t *site_of) {
    size_t n_stacks = opprof_capture_stack_count(o->cap);
    for (size_t s = 0; s < n_stacks; s++) {
        size_t depth = 0, n_src = 0;
        const uint32_t *frames = opprof_capture_stack(o->cap, (uint32_t)s, &depth);
        const uint32_t *src = opprof_capture_stack_sources(o->cap, (uint32_t)s, &n_src);
        int64_t parent = -1;
        for (size_t k = depth; k-- > 0;) {
            const char *source = src && k < n_src && src[k] != UINT32_MAX ? opprof_capture_name(o->cap, src[k]) : NULL;
            int64_t frame = frame_id(o, q, opprof_capture_name(o->cap, frames[k]), source);
            parent = frame < 0 ? -1 : callsite_id(o, q, parent, (int64_t)(depth - 1 - k), frame);
            if (parent < 0) return sqlite3_errcode(o->db) ? sqlite3_errcode(o->db) : SQLITE_ERROR;
        }
        site_of[s] = parent;
    }
    return SQLITE_OK;
}

static int load_samples(own *o) {
    size_t n = 0;
    const opprof_sample *s = opprof_capture_samples(o->cap, &n);
    if (n == 0) return SQLITE_OK;
    stacks_st q = {0};
    sqlite3_stmt *add = NULL;
    int64_t *site_of = calloc(opprof_capture_stack_count(o->cap) + 1, sizeof *site_of);
    int rc = site_of ? SQLITE_OK : SQLITE_NOMEM;
    if (rc == SQLITE_OK)
        rc = sql_prepare(o->db, "SELECT id FROM stack_profile_frame WHERE name = ? AND source IS ?", &q.find_frame);
    if (rc == SQLITE_OK)
        rc =
            sql_prepare(o->db, "INSERT INTO stack_profile_frame(name, mapping, source) VALUES (?, 0, ?)", &q.add_frame);
    if (rc == SQLITE_OK)
        rc = sql_prepare(o->db, "SELECT id FROM stack_profile_callsite WHERE parent_id IS ? AND frame_id = ?",
                         &q.find_site);
    if (rc == SQLITE_OK)
        rc = sql_prepare(o->db, "INSERT INTO stack_profile_callsite(depth, parent_id, frame_id) VALUES (?, ?, ?)",
                         &q.add_site);
    if (rc == SQLITE_OK) rc = sql_writer_drain(); /* the callsites are found by queries: the writer's rows in first */
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(o->db, "INSERT OR IGNORE INTO stack_profile_mapping(id, name) VALUES (0, '[unknown]')", 0, 0,
                          0);
    if (rc == SQLITE_OK) rc = stack_callsites(o, &q, site_of);
    if (rc == SQLITE_OK)
        rc = sql_prepare(o->db,
                         "INSERT INTO perf_sample(id, ts, utid, cpu_mode, callsite_id, perf_session_id, slice_id)"
                         " VALUES (?, ?, ?, 'user', ?, ?, ?)",
                         &add);
    for (size_t k = 0; k < n && rc == SQLITE_OK; k++) {
        sql_bounds_take(o->ids, o->base_ns + s[k].ts_ns, o->base_ns + s[k].ts_ns);
        rc = sql_row(add, "iiiIiI", o->ids->sample++, o->base_ns + s[k].ts_ns, o->utid[s[k].thread],
                     s[k].stack < opprof_capture_stack_count(o->cap) ? site_of[s[k].stack] : -1, o->trace_id,
                     slice_of(o, s[k].owner));
    }
    sql_finalize(q.find_frame);
    sql_finalize(q.add_frame);
    sql_finalize(q.find_site);
    sql_finalize(q.add_site);
    sql_finalize(add);
    free(site_of);
    return rc;
}

int sql_load_own(sqlite3 *db, const opprof_capture *cap, int64_t trace_id, const int64_t *utids,
                 const int64_t *slice_ids, sql_ids *ids) {
    opprof_capture_info info = opprof_capture_get_info(cap);
    int64_t base = 0; /* as load.c: on rank 0's clock */
    if (__builtin_sub_overflow(info.base_time_ns, info.rank.clock_offset_ns, &base)) base = info.base_time_ns;
    own o = {db, cap, trace_id, base, slice_ids, utids, ids};
    size_t n = 0;
    const opprof_event *ev = opprof_capture_events(cap, &n);
    int rc = load_averages(&o);
    if (rc == SQLITE_OK) rc = load_steps(&o, ev, n);
    if (rc == SQLITE_OK) rc = load_memory(&o);
    if (rc == SQLITE_OK) rc = load_samples(&o);
    if (rc == SQLITE_OK) rc = load_thread_states(&o);
    return rc;
}
