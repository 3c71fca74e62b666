/* chrome_writer.c - the Chrome trace writer (Kineto's JSON object form),
 * plain or gzip-compressed, every range or the longest ones (max_events).
 *
 * Streams to the file through a fixed buffer: no whole-trace string is ever
 * built. Names are escaped once per distinct name, numbers are formatted by
 * hand (printf would dominate the cost). */
#include "trace/json_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <zlib.h>

/* "Input Dims": [[128, 256], ...], "Input type": ["float", ...] */
static void write_shapes(out *o, const opprof_shapes *sh) {
    OUT_LIT(o, "\"Input Dims\":[");
    for (int k = 0; k < sh->n_inputs; k++) {
        if (k) OUT_LIT(o, ",");
        OUT_LIT(o, "[");
        for (int d = 0; d < sh->ndim[k]; d++) {
            if (d) OUT_LIT(o, ",");
            out_i64(o, sh->dims[k][d]);
        }
        OUT_LIT(o, "]");
    }
    OUT_LIT(o, "],\"Input type\":[");
    for (int k = 0; k < sh->n_inputs; k++) {
        if (k) OUT_LIT(o, ",");
        out_json_string(o, sh->dtype[k]);
    }
    OUT_LIT(o, "]");
}

/* "Call stack": "file(line): function;..." from the event outwards. */
static void write_stack(out *o, const opprof_capture *c, int32_t e) {
    opprof__strbuf sb = {0};
    int frames = 0;
    for (; e >= 0 && frames < 64; e = c->events[e].parent) {
        const opprof_site *s = opprof_capture_site(c, c->events[e].site);
        if (!c->events[e].site || !s->file) continue;
        opprof__sb_printf(&sb, "%s%s(%u): %s", frames ? ";" : "", s->file, s->line, s->function ? s->function : "?");
        frames++;
    }
    OUT_LIT(o, "\"Call stack\":");
    out_json_string(o, sb.data ? sb.data : "");
    if (sb.error) o->error = sb.error;
    opprof__sb_free(&sb);
}

/* A number as JSON: integers exactly, others to 17 digits; never NaN. */
static void out_double(out *o, double v) {
    char buf[40];
    if (v != v || v > 1e308 || v < -1e308) v = 0;
    if (v == (double)(int64_t)v && v > -9e15 && v < 9e15)
        snprintf(buf, sizeof buf, "%lld", (long long)v);
    else
        snprintf(buf, sizeof buf, "%.17g", v);
    out_put(o, buf, strlen(buf));
}

static void write_arg(out *o, const opprof__strbuf *names, const size_t *offset, const opprof_mark *m) {
    out_name(o, names, offset, m->name);
    OUT_LIT(o, ":");
    if (m->kind == OPPROF_MARK_ARG_DOUBLE)
        out_double(o, m->value.d);
    else if (m->kind == OPPROF_MARK_ARG_STR)
        out_name(o, names, offset, m->value.str);
    else
        out_i64(o, m->value.i);
}

static void write_mark(out *o, const opprof_capture *c, const opprof__strbuf *names, const size_t *offset, int64_t pid,
                       const opprof_mark *m) {
    static const char *const scopes[] = {"t", "p", "g"};
    char ph = opprof__mark_phase(m->kind);
    const char *cat = opprof__mark_category(m->kind);
    OUT_LIT(o, "{\"ph\":\"");
    out_put(o, &ph, 1);
    OUT_LIT(o, "\",\"cat\":\"");
    out_put(o, cat, strlen(cat));
    OUT_LIT(o, "\"");
    if (m->kind == OPPROF_MARK_INSTANT) {
        OUT_LIT(o, ",\"s\":\"");
        out_put(o, scopes[m->value.i >= 0 && m->value.i <= 2 ? m->value.i : 0], 1);
        OUT_LIT(o, "\"");
    }
    if (m->kind == OPPROF_MARK_FLOW_END) OUT_LIT(o, ",\"bp\":\"e\"");
    OUT_LIT(o, ",\"name\":");
    out_name(o, names, offset, m->name);
    if (opprof__mark_has_id(m->kind)) {
        OUT_LIT(o, ",\"id\":");
        out_i64(o, (int64_t)m->value.id);
    }
    out_place(o, pid, m->kind != OPPROF_MARK_COUNTER ? &c->threads[m->thread].tid : NULL, m->ts_ns);
    if (m->kind == OPPROF_MARK_COUNTER) {
        OUT_LIT(o, ",\"args\":{");
        out_name(o, names, offset, m->name);
        OUT_LIT(o, ":");
        out_double(o, m->value.d);
        OUT_LIT(o, "}");
    }
    OUT_LIT(o, "}");
}

/* One trace being written: the output, the names escaped once each, the
 * arguments of each event, whether an event was written yet. */
typedef struct writer {
    out *o;
    const opprof_capture *c;
    opprof__strbuf names;
    size_t *offset; /* of each escaped name in names; [n_names] is the end */
    opprof__arg_index args;
    uint32_t *external; /* each event's "External id" (opprof__external_ids), or NULL */
    int64_t pid;
    bool first;
    int64_t min_ns; /* ranges shorter are left out (max_events); 0: none */
    size_t left_out;
} writer;

static void sep(writer *w) {
    if (!w->first) OUT_LIT(w->o, ",\n");
    w->first = false;
}

static void put_name(writer *w, uint32_t name) {
    out_put(w->o, w->names.data + w->offset[name], w->offset[name + 1] - w->offset[name]);
}

/* The capture's facts: its rank, its session's options and costs, where it was read from. */
static void write_facts(out *o, const opprof_capture_info *info) {
    if (info->rank.backend[0]) { /* Kineto's keys, and the clock's alignment to rank 0 */
        char dist[256];
        OUT_LIT(o, "  \"distributedInfo\": {\"backend\": ");
        out_json_string(o, info->rank.backend);
        snprintf(dist, sizeof dist,
                 ", \"rank\": %d, \"world_size\": %d, \"clock_offset_ns\": %lld, \"clock_uncertainty_ns\": %lld},\n",
                 (int)info->rank.rank, (int)info->rank.world_size, (long long)info->rank.clock_offset_ns,
                 (long long)info->rank.clock_uncertainty_ns);
        out_put(o, dist, strlen(dist));
    }
    OUT_LIT(o, "  \"profile_memory\": ");
    out_i64(o, info->profile_memory ? 1 : 0);
    OUT_LIT(o, ",\n  \"opprof_version\": \"" OPPROF_VERSION_STRING "\",\n  \"step_num\": ");
    out_i64(o, info->step_num);
    char cost[128];
    snprintf(cost, sizeof cost, ",\n  \"overhead_range_ns\": %.2f,\n  \"overhead_memory_event_ns\": %.2f",
             info->overhead_range_ns, info->overhead_memory_event_ns);
    out_put(o, cost, strlen(cost));
    snprintf(cost, sizeof cost,
             ",\n  \"record_shapes\": %d,\n  \"with_stack\": %d,\n  \"with_flops\": %d,\n"
             "  \"process_peak_rss_bytes\": %lld",
             info->record_shapes, info->with_stack, info->with_flops, (long long)info->process_peak_rss_bytes);
    out_put(o, cost, strlen(cost));
    OUT_LIT(o, ",\n  \"dropped_events\": ");
    out_i64(o, (int64_t)info->dropped_events);
    if (info->producer != OPPROF_PRODUCER_OPPROF) { /* converted: the writer of the trace it was read from */
        OUT_LIT(o, ",\n  \"opprof_read_from\": ");
        out_json_string(o, opprof_producer_name(info->producer));
    }
    if (info->unended_ns) { /* read from a trace whose begins never ended: report's note says so again */
        OUT_LIT(o, ",\n  \"opprof_unended_ns\": ");
        out_i64(o, info->unended_ns);
    }
    if (info->device_name[0]) { /* "MTIA": its device activities' kind, which their categories do not say */
        OUT_LIT(o, ",\n  \"opprof_device_name\": ");
        out_json_string(o, info->device_name);
    }
    if (info->flight.reason[0]) {
        OUT_LIT(o, ",\n  \"opprof_flight\": {\"reason\": ");
        out_json_string(o, info->flight.reason);
#define FLIGHT_NUMBER(name)          \
    OUT_LIT(o, ", \"" #name "\": "); \
    out_i64(o, (int64_t)info->flight.name);
        OPPROF__FLIGHT_NUMBERS(FLIGHT_NUMBER)
#undef FLIGHT_NUMBER
        OUT_LIT(o, "}");
    }
}

/* Its warnings, and the note of a trace cut to its longest ranges. */
static void write_warnings(out *o, const opprof_capture *c, int64_t min_ns, size_t left_out) {
    OUT_LIT(o, ",\n  \"warnings\": [");
    for (size_t i = 0; i < c->n_warnings; i++) {
        if (i) OUT_LIT(o, ", ");
        out_json_string(o, c->warnings[i]);
    }
    if (left_out) {
        char note[256];
        snprintf(note, sizeof note,
                 "this trace holds the %zu longest of %zu ranges, those of %.3f us and longer (a size limit: "
                 "max_events); the capture's tables were made from all of them",
                 c->n_events - left_out, c->n_events, (double)min_ns / 1e3);
        if (c->n_warnings) OUT_LIT(o, ", ");
        out_json_string(o, note);
    }
    OUT_LIT(o, "]");
}

/* The C++ names demangled with their symbols, and the machine it ran on. */
static void write_names_and_machine(out *o, const opprof_capture *c) {
    bool first = true;
    for (size_t i = 0; i < c->n_mangled; i++) {
        if (!c->mangled[i]) continue;
        if (first)
            OUT_LIT(o, ",\n  \"opprof_mangled_names\": [[");
        else
            OUT_LIT(o, ", [");
        out_json_string(o, c->names[i]);
        OUT_LIT(o, ", ");
        out_json_string(o, c->mangled[i]);
        OUT_LIT(o, "]");
        first = false;
    }
    if (!first) OUT_LIT(o, "]");
    char *machine = NULL; /* the ceilings of the machine it ran on: `report --roofline` of the trace */
    if (c->machine && opprof_machine_json_to_string(c->machine, &machine) == 0) {
        OUT_LIT(o, ",\n  \"opprof_machine\": ");
        size_t len = strlen(machine);
        while (len && machine[len - 1] == '\n') len--;
        out_put(o, machine, len);
    }
    opprof_free(machine);
}

/* The trace's facts, up to the opening of "traceEvents". */
static void write_header(out *o, const opprof_capture *c, int64_t min_ns, size_t left_out) {
    OUT_LIT(o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n");
    write_facts(o, &c->info);
    if (c->host_name[0]) { /* read from a trace that says it (Kineto's key) */
        OUT_LIT(o, ",\n  \"host_name\": ");
        out_json_string(o, c->host_name);
    }
    write_warnings(o, c, min_ns, left_out);
    write_names_and_machine(o, c);
    OUT_LIT(o, ",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
    out_i64(o, c->info.base_time_ns);
    OUT_LIT(o, ",\n  \"traceEvents\": [\n");
}

/* A thread's process: its own pid, or the capture's when it has none. */
static int64_t pid_of(const writer *w, uint32_t thread) { return opprof__thread_pid(w->c, thread); }

/* A metadata record up to its args: {"ph": "M", "name": NAME, "pid": P, "tid": T, "args": { */
static void metadata_head(writer *w, const char *name, int64_t pid, int64_t tid) {
    sep(w);
    OUT_LIT(w->o, "  {\"ph\": \"M\", \"cat\": \"__metadata\", \"name\": \"");
    out_put(w->o, name, strlen(name));
    OUT_LIT(w->o, "\", \"pid\": ");
    out_i64(w->o, pid);
    OUT_LIT(w->o, ", \"tid\": ");
    out_i64(w->o, tid);
    OUT_LIT(w->o, ", \"args\": {");
}

/* A thread's name (when it has one: a name made up here would be read back
 * as its own) and its order. */
static void write_thread_metadata(writer *w, size_t t) {
    out *o = w->o;
    const opprof_thread_info *th = &w->c->threads[t];
    if (th->name[0]) {
        metadata_head(w, "thread_name", pid_of(w, (uint32_t)t), th->tid);
        OUT_LIT(o, "\"name\": ");
        out_json_string(o, th->name);
        OUT_LIT(o, "}}");
    }
    metadata_head(w, "thread_sort_index", pid_of(w, (uint32_t)t), th->tid);
    OUT_LIT(o, "\"sort_index\": ");
    out_i64(o, (int64_t)t);
    OUT_LIT(o, "}}");
}

/* A process's name ("CPU", or its label: "rank 1", "GPU 0"), its label
 * again as process_labels when it has one (opprof merge's form), its order. */
static void write_process_metadata(writer *w, int64_t pid, const char *label, int64_t index) {
    metadata_head(w, "process_name", pid, 0);
    OUT_LIT(w->o, "\"name\": ");
    out_json_string(w->o, label[0] ? label : "CPU");
    OUT_LIT(w->o, "}}");
    if (label[0]) {
        metadata_head(w, "process_labels", pid, 0);
        OUT_LIT(w->o, "\"labels\": ");
        out_json_string(w->o, label);
        OUT_LIT(w->o, "}}");
    }
    metadata_head(w, "process_sort_index", pid, 0);
    OUT_LIT(w->o, "\"sort_index\": ");
    out_i64(w->o, index);
    OUT_LIT(w->o, "}}");
}

/* Each process's names and order, in the order of its first thread (the
 * capture's own when it has no thread), then each thread's. Sorted by pid
 * once: a merged trace has thousands of threads. */
static void write_metadata(writer *w) {
    const opprof_capture *c = w->c;
    int64_t index = 0;
    opprof__keyed *v = opprof__alloc((c->n_threads ? c->n_threads : 1) * sizeof *v); /* by pid, then thread */
    bool *first = opprof__calloc(c->n_threads ? c->n_threads : 1, sizeof *first);
    if (!v || !first) w->o->error = OPPROF_ENOMEM;
    for (size_t t = 0; v && first && t < c->n_threads; t++) v[t] = (opprof__keyed){pid_of(w, (uint32_t)t), t};
    if (v && first) opprof__sort_keyed(v, c->n_threads);
    for (size_t k = 0; v && first && k < c->n_threads; k++) first[v[k].index] = k == 0 || v[k].key != v[k - 1].key;
    if (!c->n_threads) write_process_metadata(w, w->pid, "", index++);
    for (size_t t = 0; first && t < c->n_threads; t++)
        if (first[t]) write_process_metadata(w, pid_of(w, (uint32_t)t), c->threads[t].process, index++);
    for (size_t t = 0; t < c->n_threads; t++) write_thread_metadata(w, t);
    opprof__free(v);
    opprof__free(first);
}

/* Kineto's [memory] instant, then the same total as a counter track:
 * Perfetto draws memory over time from it. */
static void write_memory_event(writer *w, const opprof_memory_event *m) {
    out *o = w->o;
    sep(w);
    OUT_LIT(o, "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\"");
    out_place(o, pid_of(w, m->thread), &w->c->threads[m->thread].tid, m->ts_ns);
    OUT_LIT(o, ",\"args\":{\"Device Type\":");
    out_i64(o, m->device_type);
    OUT_LIT(o, ",\"Device Id\":");
    out_i64(o, m->device_id);
    OUT_LIT(o, ",\"Addr\":");
    out_i64(o, (int64_t)m->addr);
    OUT_LIT(o, ",\"Bytes\":");
    out_i64(o, m->bytes);
    OUT_LIT(o, ",\"Total Allocated\":");
    out_i64(o, m->total_allocated);
    OUT_LIT(o, ",\"Total Reserved\":");
    out_i64(o, m->total_allocated);
    OUT_LIT(o, "}}");
    sep(w);
    OUT_LIT(o, "{\"ph\":\"C\",\"cat\":\"memory\",\"name\":\"Allocated bytes\"");
    out_place(o, pid_of(w, m->thread), NULL, m->ts_ns);
    OUT_LIT(o, ",\"args\":{\"Total Allocated\":");
    out_i64(o, m->total_allocated);
    OUT_LIT(o, "}}");
}

/* An event's args: input shapes, call stack, its own arguments. */
static void write_event_args(writer *w, size_t i) {
    const opprof_capture *c = w->c;
    const opprof_event *e = &c->events[i];
    const opprof_site *site = e->site ? opprof_capture_site(c, e->site) : NULL;
    const opprof_shapes *sh = site ? opprof_capture_shapes(c, site->shapes) : NULL;
    bool stack = site && (site->native_stack || (c->info.with_stack && site->file));
    size_t n_args = w->args.first ? w->args.first[i + 1] - w->args.first[i] : 0;
    uint32_t external = w->external ? w->external[i] : 0;
    if (!sh && !stack && !n_args && !external) return;
    OUT_LIT(w->o, ",\"args\":{");
    if (external) { /* the launch of a device activity: its operator and it share one */
        OUT_LIT(w->o, "\"External id\":");
        out_i64(w->o, external);
        if (sh || stack || n_args) OUT_LIT(w->o, ",");
    }
    if (sh) write_shapes(w->o, sh);
    if (stack) {
        if (sh) OUT_LIT(w->o, ",");
        if (site->native_stack) {
            OUT_LIT(w->o, "\"Call stack\":");
            out_json_string(w->o, site->native_stack);
        } else {
            write_stack(w->o, c, (int32_t)i);
        }
    }
    for (size_t a = 0; a < n_args; a++) {
        if (sh || stack || a) OUT_LIT(w->o, ",");
        write_arg(w->o, &w->names, w->offset, &c->marks[w->args.order[w->args.first[i] + a]]);
    }
    OUT_LIT(w->o, "}");
}

static void write_event(writer *w, size_t i) {
    out *o = w->o;
    const opprof_event *e = &w->c->events[i];
    sep(w);
    OUT_LIT(o, "{\"ph\":\"X\",\"cat\":\"");
    const char *cat = opprof_kind_category((opprof_kind)e->kind);
    out_put(o, cat, strlen(cat));
    const char *own = opprof_capture_category(w->c, e); /* "user_annotation,io" (Chrome's list of categories) */
    if (own) {
        OUT_LIT(o, ",");
        out_json_inner(o, own);
    }
    OUT_LIT(o, "\",\"name\":");
    put_name(w, e->name);
    out_place(o, pid_of(w, e->thread), &w->c->threads[e->thread].tid, e->start_ns);
    OUT_LIT(o, ",\"dur\":");
    out_us(o, e->duration_ns);
    write_event_args(w, i);
    OUT_LIT(o, "}");
}

/* Complete events and memory instants, each thread in time order (memory
 * events of earlier threads or earlier times first); then counters,
 * instants, flows and async edges, events of their own. */
static void write_events(writer *w) {
    const opprof_capture *c = w->c;
    size_t mi = 0;
    for (size_t i = 0; i <= c->n_events; i++) {
        while (mi < c->n_mem &&
               (i == c->n_events || c->mem[mi].thread < c->events[i].thread ||
                (c->mem[mi].thread == c->events[i].thread && c->mem[mi].ts_ns < c->events[i].start_ns)))
            write_memory_event(w, &c->mem[mi++]);
        if (i < c->n_events && c->events[i].duration_ns >= w->min_ns) write_event(w, i);
    }
    for (size_t k = 0; k < c->n_marks; k++) {
        if (c->marks[k].event >= 0) continue;
        sep(w);
        write_mark(w->o, c, &w->names, w->offset, c->n_threads ? pid_of(w, c->marks[k].thread) : w->pid, &c->marks[k]);
    }
}

static void write_off_cpu(writer *w) {
    const opprof_capture *c = w->c;
    out *o = w->o;
    OUT_LIT(o, ",\n  \"opprof_sampling\": {\"period_ns\": ");
    out_i64(o, c->info.sample_period_ns);
    OUT_LIT(o, ", \"off_cpu\": ");
    out_i64(o, c->info.off_cpu);
    OUT_LIT(o, ", \"samples_lost\": ");
    out_i64(o, (int64_t)c->info.samples_lost);
    OUT_LIT(o, "},\n  \"opprof_off_cpu\": [");
    for (size_t j = 0; j < c->n_off_cpu; j++) {
        const opprof_off_cpu *x = &c->off_cpu[j];
        if (j) OUT_LIT(o, ",");
        OUT_LIT(o, "\n    {\"preempted\":");
        out_i64(o, x->preempted);
        out_place(o, pid_of(w, x->thread), &c->threads[x->thread].tid, x->start_ns);
        OUT_LIT(o, ",\"dur\":");
        out_us(o, x->duration_ns);
        OUT_LIT(o, "}");
    }
    OUT_LIT(o, "]");
}

/* Names escaped once each. */
static int escape_names(writer *w) {
    const opprof_capture *c = w->c;
    if (!(w->offset = opprof__alloc((c->n_names + 1) * sizeof *w->offset))) return OPPROF_ENOMEM;
    for (size_t i = 0; i < c->n_names; i++) {
        w->offset[i] = w->names.len;
        opprof__sb_json_string(&w->names, c->names[i]);
    }
    w->offset[c->n_names] = w->names.len;
    return w->names.error;
}

static int write_stream(const opprof_capture *c, FILE *fp, const char *trace_name, size_t max_events) {
    writer w = {.c = c, .pid = c->info.pid, .first = true};
    w.min_ns = max_events ? opprof__capture_longest_bound(c, max_events) : 0;
    for (size_t i = 0; w.min_ns && i < c->n_events; i++) w.left_out += c->events[i].duration_ns < w.min_ns;
    w.o = opprof__alloc(sizeof *w.o);
    if (!w.o) return OPPROF_ENOMEM;
    w.o->fp = fp; /* not a compound literal: it would build the whole buffer on the stack */
    w.o->len = 0;
    w.o->error = 0;
    int rc = escape_names(&w);
    bool args = !rc && !(rc = opprof__arg_index_build(&w.args, c) ? OPPROF_ENOMEM : 0);
    if (!rc) rc = opprof__external_ids(c, &w.external);
    if (!rc) {
        write_header(w.o, c, w.min_ns, w.left_out);
        write_metadata(&w);
        write_events(&w);
        opprof__chrome_write_profiles(w.o, c, &w.names, w.offset, &w.first);
        OUT_LIT(w.o, "\n  ]");
        if (c->n_samples || c->info.sample_period_ns || c->info.off_cpu || c->n_off_cpu) write_off_cpu(&w);
        OUT_LIT(w.o, ",\n  \"traceName\": ");
        out_json_string(w.o, trace_name ? trace_name : "");
        OUT_LIT(w.o, "\n}\n");
        out_flush(w.o);
        rc = w.o->error;
    }
    if (args) opprof__arg_index_free(&w.args);
    opprof__free(w.external);
    opprof__free(w.offset);
    opprof__sb_free(&w.names);
    opprof__free(w.o);
    return rc;
}

static int capture_chrome_write_stream_here(const opprof_capture *c, FILE *fp, const char *trace_name) {
    if (!c || !fp) return OPPROF_EINVAL;
    return write_stream(c, fp, trace_name, 0);
}

int opprof_capture_chrome_write_stream(const opprof_capture *c, FILE *fp, const char *trace_name) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_chrome_write_stream_here(c, fp, trace_name);
    opprof__c_numbers_end(numbers);
    return rc;
}

/* gzip: through a FILE that compresses (trace/gzip_stream.c) */
static int write_gzip(const opprof_capture *c, FILE *file, const char *trace_name, size_t max_events) {
    FILE *fp;
    int rc = opprof__gzip_open(file, &fp);
    if (rc) return rc;
    return opprof__gzip_close(fp, write_stream(c, fp, trace_name, max_events));
}

static int capture_chrome_write_ex_here(const opprof_capture *c, const char *path,
                                        const opprof_chrome_options *options) {
    if (!c || !path) return OPPROF_EINVAL;
    opprof_chrome_options o = options ? *options : (opprof_chrome_options){0};
    opprof__file f;
    int rc = opprof__file_open(&f, path);
    if (rc) return rc;
    rc = o.gzip ? write_gzip(c, f.fp, path, o.max_events) : write_stream(c, f.fp, path, o.max_events);
    if (rc) {
        opprof__file_abort(&f);
        return rc;
    }
    return opprof__file_commit(&f);
}

/* The numbers as C writes them, whatever locale the program set (base/c_numbers.c). */
int opprof_capture_chrome_write_ex(const opprof_capture *c, const char *path, const opprof_chrome_options *options) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_chrome_write_ex_here(c, path, options);
    opprof__c_numbers_end(numbers);
    return rc;
}

int opprof_capture_chrome_write(const opprof_capture *c, const char *path) {
    return opprof_capture_chrome_write_ex(c, path, NULL);
}
