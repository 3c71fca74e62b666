/* perfetto_writer.c - a capture as Perfetto's native trace: a protobuf
 * `Trace` of `TracePacket`s on one packet sequence (perfetto_trace.proto):
 *
 *   - a TrackDescriptor per process (its pid and label) and per thread (pid,
 *     tid, name), a counter track per allocator ("CPU memory", "CUDA 0
 *     memory"...) and per user counter, a track per async range;
 *   - each range and operator a TrackEvent slice, a begin and an end on its
 *     thread's track, with interned names and categories (InternedData, set
 *     when first used) and its input shapes, call stack and arguments as
 *     debug annotations;
 *   - each memory event a counter sample of its allocator's total, its
 *     address an extra counter value sampled with it (on the track "opprof:
 *     memory event address", which the sequence's defaults name), and its
 *     bytes and thread as annotations where they cannot be told otherwise (so
 *     that nothing of the capture is lost): the bytes when they are not the
 *     total's change since the track's sample before (the first from 0), the
 *     thread when it is not the one of the memory sample before; the first
 *     allocator's track is the sequence's default track (23.5 bytes a memory
 *     event, bench_writer);
 *   - instants, flows (an instant carrying flow_ids or terminating_flow_ids),
 *     async ranges and counters as their own events;
 *   - the capture's facts (step, base time, the profiler's cost, dropped
 *     events, warnings) as the annotations of an instant "opprof capture" at
 *     the capture's start, on the first process's track.
 *
 * Streams packet by packet through a fixed buffer: memory is a packet and
 * the capture's per-name flags. Timestamps are nanoseconds on the capture's
 * clock (its base time plus each event's start, never below 0), written as
 * deltas: the sequence's default clock is an incremental one of its own,
 * tied to BOOTTIME by a clock snapshot at the start and again wherever a
 * time goes back (a thread's events follow the thread before). */
#include "trace/perfetto_proto.h"
#include "trace/protobuf.h"
#include "trace/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Category iids: a capture's own (1..255), then a kind's default. */
#define KIND_CATEGORY_IID(kind) (256u + (kind))
enum { OUT_BUFFER = 1 << 20 };

typedef struct pwriter {
    const opprof_capture *c;
    FILE *fp;
    int error;
    char *buf;
    size_t len;
    opprof__strbuf packet, event, note, interned, scratch, text; /* text: a call stack's */
    uint8_t *name_done;  /* per name: 1 interned as an event name, 2 as an annotation name, 4 its
                            counter's track written, 8 its plain frame, 16 as a source path,
                            32 as a function name */
    uint8_t *stack_done; /* per sample stack: interned as a callstack */
    struct sourced {     /* frames with a source: (name, source) -> frame iid past the names' */
        uint32_t name, source;
    } * sourced;
    size_t n_sourced, cap_sourced;
    opprof__index sourced_index;
    char **files; /* source files, each interned once: its iid is its index + 1 */
    size_t n_files, cap_files;
    opprof__index file_index;
    bool category_done[256 + 16];
    bool own_done[N_OWN_NOTES]; /* opprof's own annotation names interned */
    int64_t origin;             /* the timestamp of the capture's time 0 */
    int64_t last;               /* the capture time the delta clock is at */
    opprof__arg_index args;
    uint32_t *external; /* each event's "External id" (opprof__external_ids), or NULL */
    int64_t *pids;      /* the distinct pids, in first-seen order */
    size_t n_pids;
    opprof__index pid_index; /* pids by value: a linear search took 6.3 s for 200,000 processes */
    uint32_t *process_of;    /* each thread's process: its index in pids */
    uint64_t default_track;  /* the sequence's default track: the first memory event's allocator, or 0 */
    struct allocator {       /* each allocator's counter track, and its total last written */
        uint64_t uuid;
        int64_t total;
    } * allocators;
    size_t n_allocators, cap_allocators;
    opprof__index allocator_index;
    int64_t memory_thread; /* the thread of the memory sample before, or -1 */
} pwriter;

/* ---- output ---- */

static void flush_out(pwriter *w) {
    if (w->len && !w->error && fwrite(w->buf, 1, w->len, w->fp) != w->len) w->error = errno ? -errno : OPPROF_EIO;
    w->len = 0;
}

static void emit(pwriter *w, const char *p, size_t n) {
    if (w->len + n > OUT_BUFFER) flush_out(w);
    if (n > OUT_BUFFER) {
        if (!w->error && fwrite(p, 1, n, w->fp) != n) w->error = errno ? -errno : OPPROF_EIO;
        return;
    }
    if (n) memcpy(w->buf + w->len, p, n); /* p may be NULL when n is 0 (a packet that could not grow) */
    w->len += n;
}

/* The packet built so far, as one `Trace.packet`, with its event and interned data. */
static void end_packet(pwriter *w, uint32_t flags) {
    opprof__strbuf *p = &w->packet;
    if (w->event.len) opprof__pb_message(p, PACKET_TRACK_EVENT, &w->event);
    if (w->interned.len) opprof__pb_message(p, PACKET_INTERNED, &w->interned);
    opprof__pb_uint(p, PACKET_SEQUENCE_ID, SEQUENCE);
    if (flags) opprof__pb_uint(p, PACKET_FLAGS, flags);
    char head[11];
    head[0] = (char)(TRACE_PACKET << 3 | OPPROF__PB_BYTES);
    size_t n = 1 + opprof__pb_varint_bytes(p->len, head + 1);
    /* an event or interned data that could not grow at all is empty, not copied: its error said here */
    if (p->error || w->event.error || w->interned.error) w->error = OPPROF_ENOMEM;
    emit(w, head, n);
    emit(w, p->data, p->len);
    p->len = 0;
}

/* A packet of its own that sets the delta clock to ts (capture time). */
static void clock_at(pwriter *w, int64_t ts) {
    opprof__strbuf packet = {0}, snapshot = {0}, clock = {0};
    for (int k = 0; k < 2; k++) {
        clock.len = 0;
        opprof__pb_uint(&clock, CLOCK_ID, k ? CLOCK_BOOTTIME : CLOCK_DELTAS);
        opprof__pb_uint(&clock, CLOCK_TIMESTAMP, (uint64_t)(w->origin + ts));
        if (!k) opprof__pb_uint(&clock, CLOCK_INCREMENTAL, 1);
        opprof__pb_message(&snapshot, SNAPSHOT_CLOCK, &clock);
    }
    opprof__pb_message(&packet, PACKET_CLOCK_SNAPSHOT, &snapshot);
    opprof__pb_uint(&packet, PACKET_SEQUENCE_ID, SEQUENCE);
    char head[11];
    head[0] = (char)(TRACE_PACKET << 3 | OPPROF__PB_BYTES);
    size_t n = 1 + opprof__pb_varint_bytes(packet.len, head + 1);
    if (packet.error || snapshot.error || clock.error) w->error = OPPROF_ENOMEM;
    emit(w, head, n);
    emit(w, packet.data, packet.len);
    opprof__sb_free(&packet);
    opprof__sb_free(&snapshot);
    opprof__sb_free(&clock);
    w->last = ts;
}

/* A packet's timestamp: the delta from the one before on the sequence's
 * delta clock. A time before it (the next thread's first event, an end
 * out of order on a lane) sets the clock there first. */
static uint64_t stamp(pwriter *w, int64_t ts) {
    if (ts < w->last) clock_at(w, ts);
    uint64_t delta = (uint64_t)(ts - w->last);
    w->last = ts;
    return delta;
}

/* ---- interning ---- */

static void intern(opprof__strbuf *interned, opprof__strbuf *scratch, uint32_t field, uint64_t iid, const char *name) {
    opprof__pb_uint(scratch, IID, iid);
    opprof__pb_string(scratch, IID_NAME, name);
    opprof__pb_message(interned, field, scratch);
}

static uint64_t name_iid(pwriter *w, uint32_t name) {
    if (!(w->name_done[name] & 1)) {
        intern(&w->interned, &w->scratch, INTERNED_NAMES, name + 1u, w->c->names[name]);
        w->name_done[name] |= 1;
    }
    return name + 1u;
}

static uint64_t annotation_iid(pwriter *w, uint32_t name) {
    if (!(w->name_done[name] & 2)) {
        intern(&w->interned, &w->scratch, INTERNED_ANNOTATION_NAMES, name + 1u, w->c->names[name]);
        w->name_done[name] |= 2;
    }
    return name + 1u;
}

/* The event's categories: its kind's, then the capture's own if it has one
 * (as the JSON's "cat": "user_annotation,io"). */
static void categories(pwriter *w, const opprof_event *e) {
    uint64_t kind = KIND_CATEGORY_IID(e->kind);
    if (kind < sizeof w->category_done && !w->category_done[kind]) {
        intern(&w->interned, &w->scratch, INTERNED_CATEGORIES, kind, opprof_kind_category((opprof_kind)e->kind));
        w->category_done[kind] = true;
    }
    opprof__pb_uint(&w->event, EVENT_CATEGORY_IIDS, kind);
    const char *own = e->category ? opprof_capture_category(w->c, e) : NULL;
    if (!own) return;
    if (!w->category_done[e->category]) {
        intern(&w->interned, &w->scratch, INTERNED_CATEGORIES, e->category, own);
        w->category_done[e->category] = true;
    }
    opprof__pb_uint(&w->event, EVENT_CATEGORY_IIDS, e->category);
}

/* ---- debug annotations ---- */

/* The annotation names of opprof's own (OPPROF__PFTRACE_NOTES), interned
 * past the capture's names (iid n_names + 1 + k) when first used; the
 * facts' names are written out. */
static void note_name(pwriter *w, int own) {
    uint64_t iid = w->c->n_names + 1u + (uint64_t)own;
    if (!w->own_done[own]) {
        intern(&w->interned, &w->scratch, INTERNED_ANNOTATION_NAMES, iid, OPPROF__PFTRACE_NOTE_TEXT[own]);
        w->own_done[own] = true;
    }
    opprof__pb_uint(&w->note, NOTE_NAME_IID, iid);
}

static void note_own_string(pwriter *w, int own, const char *value) {
    note_name(w, own);
    opprof__pb_string(&w->note, NOTE_STRING, value);
    opprof__pb_message(&w->event, EVENT_ANNOTATIONS, &w->note);
}

/* w->text as a note of opprof's own: when it could not be made, the
 * writer's error (a note left out would be a fact lost in silence). */
static void note_text(pwriter *w, int own) {
    if (w->text.error) w->error = OPPROF_ENOMEM;
    note_own_string(w, own, w->text.data && !w->text.error ? w->text.data : "");
}

static void note_own_int(pwriter *w, int own, int64_t value) {
    note_name(w, own);
    opprof__pb_int(&w->note, NOTE_INT, value);
    opprof__pb_message(&w->event, EVENT_ANNOTATIONS, &w->note);
}

static void note_string(pwriter *w, const char *name, const char *value) {
    opprof__pb_string(&w->note, NOTE_NAME, name);
    opprof__pb_string(&w->note, NOTE_STRING, value);
    opprof__pb_message(&w->event, EVENT_ANNOTATIONS, &w->note);
}

static void note_int(pwriter *w, const char *name, int64_t value) {
    opprof__pb_string(&w->note, NOTE_NAME, name);
    opprof__pb_int(&w->note, NOTE_INT, value);
    opprof__pb_message(&w->event, EVENT_ANNOTATIONS, &w->note);
}

static void note_double(pwriter *w, const char *name, double value) {
    opprof__pb_string(&w->note, NOTE_NAME, name);
    opprof__pb_double(&w->note, NOTE_DOUBLE, value);
    opprof__pb_message(&w->event, EVENT_ANNOTATIONS, &w->note);
}

/* An argument of an event (opprof_range_arg_*): its key interned. */
static void note_arg(pwriter *w, const opprof_mark *m) {
    opprof__pb_uint(&w->note, NOTE_NAME_IID, annotation_iid(w, m->name));
    if (m->kind == OPPROF_MARK_ARG_DOUBLE)
        opprof__pb_double(&w->note, NOTE_DOUBLE, m->value.d);
    else if (m->kind == OPPROF_MARK_ARG_STR)
        opprof__pb_string(&w->note, NOTE_STRING, w->c->names[m->value.str]);
    else
        opprof__pb_int(&w->note, NOTE_INT, m->value.i);
    opprof__pb_message(&w->event, EVENT_ANNOTATIONS, &w->note);
}

/* An event's input shapes, call stack, arguments, FLOPs and bytes. */
static void event_notes(pwriter *w, size_t i) {
    const opprof_capture *c = w->c;
    const opprof_event *e = &c->events[i];
    const opprof_site *site = e->site ? opprof_capture_site(c, e->site) : NULL;
    const opprof_shapes *sh = site ? opprof_capture_shapes(c, site->shapes) : NULL;
    if (w->external && w->external[i]) note_own_int(w, NOTE_EXTERNAL, w->external[i]);
    if (sh) {
        char dims[1024];
        opprof_shapes_format(sh, dims, sizeof dims);
        note_own_string(w, NOTE_DIMS, dims);
        w->text.len = 0; /* ["float", ...], as the JSON's "Input type" */
        opprof__sb_puts(&w->text, "[");
        for (int k = 0; k < sh->n_inputs; k++) {
            if (k) opprof__sb_puts(&w->text, ", ");
            opprof__sb_json_string(&w->text, sh->dtype[k]);
        }
        opprof__sb_puts(&w->text, "]");
        note_text(w, NOTE_TYPES);
    }
    if (site && site->native_stack) {
        note_own_string(w, NOTE_STACK, site->native_stack);
    } else if (site && c->info.with_stack && site->file) {
        w->text.len = 0;
        int frames = 0;
        for (int32_t k = (int32_t)i; k >= 0 && frames < 64; k = c->events[k].parent) {
            const opprof_site *s = opprof_capture_site(c, c->events[k].site);
            if (!c->events[k].site || !s->file) continue;
            opprof__sb_printf(&w->text, "%s%s(%u): %s", frames++ ? ";" : "", s->file, s->line,
                              s->function ? s->function : "?");
        }
        note_text(w, NOTE_STACK);
    }
    size_t n_args = w->args.first ? w->args.first[i + 1] - w->args.first[i] : 0;
    for (size_t a = 0; a < n_args; a++) {
        note_arg(w, &c->marks[w->args.order[w->args.first[i] + a]]); /* FLOPs, bytes: as the JSON, by their key */
    }
}

/* ---- tracks ---- */

static void track_packet(pwriter *w, opprof__strbuf *track) {
    opprof__pb_message(&w->packet, PACKET_TRACK_DESCRIPTOR, track);
    end_packet(w, 0);
}

static uint64_t pid_hash(int64_t pid) { return opprof__hash_pair((uint64_t)pid, 0x9d); }
static uint64_t pid_hash_of(const void *pids, uint32_t item) { return pid_hash(((const int64_t *)pids)[item]); }
static bool pid_equal(const void *pids, uint32_t item, const void *key) {
    return ((const int64_t *)pids)[item] == *(const int64_t *)key;
}

/* The index of pid in w->pids, added when new (*added); -1: out of memory. */
static int64_t process_index(pwriter *w, int64_t pid, bool *added) {
    size_t slot = 0;
    int64_t found =
        opprof__index_lookup(&w->pid_index, w->n_pids, pid_hash_of, pid_equal, w->pids, pid_hash(pid), &pid, &slot);
    *added = found == 0;
    if (found < 0) return -1;
    if (found > 0) return found - 1;
    w->pids[w->n_pids] = pid;
    w->pid_index.slots[slot] = (uint32_t)++w->n_pids;
    return (int64_t)w->n_pids - 1;
}

/* A track per process (the first thread of each pid names it) and per thread. */
static int thread_tracks(pwriter *w) {
    const opprof_capture *c = w->c;
    w->pids = opprof__alloc((c->n_threads ? c->n_threads : 1) * sizeof *w->pids);
    w->process_of = opprof__alloc((c->n_threads ? c->n_threads : 1) * sizeof *w->process_of);
    if (!w->pids || !w->process_of) return OPPROF_ENOMEM;
    opprof__strbuf track = {0}, inner = {0};
    if (!c->n_threads) { /* the capture's own process: its facts go there */
        opprof__pb_uint(&track, TRACK_UUID, PROCESS_UUID(0));
        opprof__pb_int(&inner, PROCESS_PID, c->info.pid);
        opprof__pb_string(&inner, PROCESS_NAME, "CPU");
        opprof__pb_message(&track, TRACK_PROCESS, &inner);
        track_packet(w, &track);
    }
    bool full = false; /* the pids' index could not grow */
    for (size_t t = 0; t < c->n_threads && !full; t++) {
        const opprof_thread_info *th = &c->threads[t];
        int64_t pid = opprof__thread_pid(c, (uint32_t)t);
        bool added = false;
        int64_t k = process_index(w, pid, &added);
        if ((full = k < 0)) break;
        w->process_of[t] = (uint32_t)k;
        if (added) {
            opprof__pb_uint(&track, TRACK_UUID, PROCESS_UUID(k));
            opprof__pb_int(&inner, PROCESS_PID, pid);
            if (th->process[0]) opprof__pb_string(&inner, PROCESS_NAME, th->process); /* its label, when it has one */
            opprof__pb_message(&track, TRACK_PROCESS, &inner);
            track_packet(w, &track);
        }
        opprof__pb_uint(&track, TRACK_UUID, THREAD_UUID(t));
        opprof__pb_uint(&track, TRACK_PARENT, PROCESS_UUID(k));
        opprof__pb_int(&inner, THREAD_PID, pid);
        opprof__pb_int(&inner, THREAD_TID, th->tid);
        if (th->name[0]) opprof__pb_string(&inner, THREAD_NAME, th->name); /* Perfetto names the others by tid */
        opprof__pb_message(&track, TRACK_THREAD, &inner);
        track_packet(w, &track);
    }
    int rc = track.error || inner.error || full ? OPPROF_ENOMEM : 0;
    opprof__sb_free(&track);
    opprof__sb_free(&inner);
    return rc;
}

/* A counter track under the first process: its uuid, name and unit. */
static void counter_track(pwriter *w, uint64_t uuid, const char *name, bool bytes) {
    opprof__strbuf track = {0}, inner = {0};
    opprof__pb_uint(&track, TRACK_UUID, uuid);
    opprof__pb_uint(&track, TRACK_PARENT, PROCESS_UUID(0));
    opprof__pb_string(&track, TRACK_NAME, name);
    if (bytes) opprof__pb_uint(&inner, COUNTER_UNIT, UNIT_SIZE_BYTES);
    opprof__pb_message(&track, TRACK_COUNTER, &inner);
    if (track.error) w->error = OPPROF_ENOMEM;
    track_packet(w, &track);
    opprof__sb_free(&track);
    opprof__sb_free(&inner);
}

/* The allocators' and the user counters' tracks, each once. */
static uint64_t allocator_hash_of(const void *allocators, uint32_t item) {
    return opprof__hash_pair(((const struct allocator *)allocators)[item].uuid, 0);
}

static bool allocator_equal(const void *allocators, uint32_t item, const void *key) {
    return ((const struct allocator *)allocators)[item].uuid == *(const uint64_t *)key;
}

/* The allocator of a counter track (a capture may name thousands of devices):
 * its index, added when new (*added), or -1 out of memory. */
static int64_t allocator_of(pwriter *w, uint64_t uuid, bool *added) {
    size_t slot;
    *added = false;
    int64_t found = opprof__index_lookup(&w->allocator_index, w->n_allocators, allocator_hash_of, allocator_equal,
                                         w->allocators, opprof__hash_pair(uuid, 0), &uuid, &slot);
    if (found) return found - 1;
    if (opprof__grow((void **)&w->allocators, &w->cap_allocators, w->n_allocators + 1, sizeof *w->allocators))
        return -1;
    w->allocators[w->n_allocators++] = (struct allocator){uuid, 0};
    w->allocator_index.slots[slot] = (uint32_t)w->n_allocators;
    *added = true;
    return (int64_t)w->n_allocators - 1;
}

static int counter_tracks(pwriter *w) {
    const opprof_capture *c = w->c;
    for (size_t j = 0; j < c->n_mem && !w->error; j++) {
        uint64_t uuid = MEMORY_UUID(c->mem[j].device_type, c->mem[j].device_id);
        bool added;
        if (allocator_of(w, uuid, &added) < 0) w->error = OPPROF_ENOMEM;
        if (!added) continue;
        char name[64];
        if (c->mem[j].device_type == 0)
            snprintf(name, sizeof name, "CPU memory");
        else
            snprintf(name, sizeof name, "device %d:%d memory", (int)c->mem[j].device_type, (int)c->mem[j].device_id);
        counter_track(w, uuid, name, true);
    }
    if (c->n_mem) counter_track(w, ADDRESS_UUID, ADDRESS_TRACK, false);
    for (size_t k = 0; k < c->n_marks; k++) {
        const opprof_mark *m = &c->marks[k];
        if (m->kind != OPPROF_MARK_COUNTER || (w->name_done[m->name] & 4)) continue;
        w->name_done[m->name] |= 4; /* its track made */
        counter_track(w, COUNTER_UUID(m->name), c->names[m->name], false);
    }
    return w->error;
}

/* ---- events ---- */

static void slice_edge(pwriter *w, size_t i, int type, uint64_t track) {
    const opprof_event *e = &w->c->events[i];
    opprof__pb_uint(&w->packet, PACKET_TIMESTAMP,
                    stamp(w, type == SLICE_BEGIN ? e->start_ns : e->start_ns + e->duration_ns));
    opprof__pb_uint(&w->event, EVENT_TYPE, (uint64_t)type);
    opprof__pb_uint(&w->event, EVENT_TRACK, track);
    if (type == SLICE_BEGIN) {
        categories(w, e);
        opprof__pb_uint(&w->event, EVENT_NAME_IID, name_iid(w, e->name));
        event_notes(w, i);
    }
    end_packet(w, SEQ_NEEDS_STATE);
}

/* A memory event: its bytes and thread only where the sample before does
 * not tell them (the reader's memory_event undoes it). */
static void memory_sample(pwriter *w, const opprof_memory_event *m) {
    uint64_t uuid = MEMORY_UUID(m->device_type, m->device_id);
    bool added;
    int64_t a = allocator_of(w, uuid, &added), change;
    if (a < 0) {
        w->error = OPPROF_ENOMEM;
        return;
    }
    opprof__pb_uint(&w->packet, PACKET_TIMESTAMP, stamp(w, m->ts_ns));
    opprof__pb_uint(&w->event, EVENT_TYPE, COUNTER);
    if (uuid != w->default_track) opprof__pb_uint(&w->event, EVENT_TRACK, uuid);
    opprof__pb_int(&w->event, EVENT_COUNTER, m->total_allocated);
    if (__builtin_sub_overflow(m->total_allocated, w->allocators[a].total, &change) || change != m->bytes)
        note_own_int(w, NOTE_BYTES, m->bytes);
    w->allocators[a].total = m->total_allocated;
    opprof__pb_int(&w->event, EVENT_EXTRA_COUNTER_VALUES, (int64_t)m->addr);
    if ((int64_t)m->thread != w->memory_thread) note_own_int(w, NOTE_THREAD, (int64_t)m->thread);
    w->memory_thread = (int64_t)m->thread;
    end_packet(w, SEQ_NEEDS_STATE);
}

/* A thread's slices nest on its track; those that overlap without nesting
 * (device activities, events a reader kept as they were) go to the first
 * of its lanes where they nest: tracks of their own under the thread's. */
enum { LANES = 64, DEPTH = 1024 };
typedef struct lane {
    size_t stack[DEPTH], depth;
} lane;

static uint64_t lane_uuid(uint32_t thread, size_t k) { return k ? LANE_UUID(thread, k) : THREAD_UUID(thread); }

static void lane_track(pwriter *w, uint32_t thread, size_t k) {
    opprof__strbuf track = {0};
    char name[128];
    const opprof_thread_info *th = &w->c->threads[thread];
    snprintf(name, sizeof name, "%s (overlapping %zu)", th->name[0] ? th->name : "thread", k);
    opprof__pb_uint(&track, TRACK_UUID, LANE_UUID(thread, k));
    opprof__pb_uint(&track, TRACK_PARENT, THREAD_UUID(thread));
    opprof__pb_string(&track, TRACK_NAME, name);
    if (track.error) w->error = OPPROF_ENOMEM;
    track_packet(w, &track);
    opprof__sb_free(&track);
}

static int64_t end_of(const opprof_event *e) { return e->start_ns + e->duration_ns; }

/* Close what ended by `t` on every lane (all of them at a thread's end: t INT64_MAX). */
static void close_lanes(pwriter *w, lane *lanes, size_t n_lanes, uint32_t thread, int64_t t) {
    for (size_t k = 0; k < n_lanes; k++)
        while (lanes[k].depth && end_of(&w->c->events[lanes[k].stack[lanes[k].depth - 1]]) <= t)
            slice_edge(w, lanes[k].stack[--lanes[k].depth], SLICE_END, lane_uuid(thread, k));
}

/* Each thread's slices in time order, its memory events between them. */
static void slices(pwriter *w, lane *lanes) {
    const opprof_capture *c = w->c;
    size_t n_lanes = 1, mi = 0;
    uint32_t thread = 0;
    lanes[0].depth = 0;
    for (size_t i = 0; i <= c->n_events && !w->error; i++) {
        const opprof_event *e = i < c->n_events ? &c->events[i] : NULL;
        if (!e || e->thread != thread) { /* a thread ends */
            close_lanes(w, lanes, n_lanes, thread, INT64_MAX);
            n_lanes = 1;
        }
        while (mi < c->n_mem && (!e || c->mem[mi].thread < e->thread ||
                                 (c->mem[mi].thread == e->thread && c->mem[mi].ts_ns < e->start_ns)))
            memory_sample(w, &c->mem[mi++]);
        if (!e) break;
        thread = e->thread;
        close_lanes(w, lanes, n_lanes, thread, e->start_ns);
        size_t k = 0;
        while (k < n_lanes && lanes[k].depth &&
               (end_of(&c->events[lanes[k].stack[lanes[k].depth - 1]]) < end_of(e) || lanes[k].depth == DEPTH))
            k++;
        if (k == n_lanes && n_lanes < LANES) {
            lanes[n_lanes].depth = 0;
            lane_track(w, thread, n_lanes++);
        }
        if (k == n_lanes) k = n_lanes - 1; /* past every lane: nests wrongly, but is kept */
        if (lanes[k].depth == DEPTH) slice_edge(w, lanes[k].stack[--lanes[k].depth], SLICE_END, lane_uuid(thread, k));
        slice_edge(w, i, SLICE_BEGIN, lane_uuid(thread, k));
        lanes[k].stack[lanes[k].depth++] = i;
    }
}

/* Counters, instants, flows and async ranges (marks of no range). */
static void mark_event(pwriter *w, const opprof_mark *m) {
    switch ((opprof_mark_kind)m->kind) {
    case OPPROF_MARK_ARG_INT:
    case OPPROF_MARK_ARG_DOUBLE:
    case OPPROF_MARK_ARG_STR:
    case OPPROF_MARK_FLOPS:
    case OPPROF_MARK_BYTES:
    case OPPROF_MARK_KIND_COUNT: return; /* of a range: written with its slice */
    case OPPROF_MARK_COUNTER:
        opprof__pb_uint(&w->packet, PACKET_TIMESTAMP, stamp(w, m->ts_ns));
        opprof__pb_uint(&w->event, EVENT_TYPE, COUNTER);
        opprof__pb_uint(&w->event, EVENT_TRACK, COUNTER_UUID(m->name));
        opprof__pb_double(&w->event, EVENT_DOUBLE_COUNTER, m->value.d);
        break;
    case OPPROF_MARK_ASYNC_BEGIN:
    case OPPROF_MARK_ASYNC_END:
    case OPPROF_MARK_ASYNC_INSTANT: /* an instant on its async ranges' track */
        opprof__pb_uint(&w->packet, PACKET_TIMESTAMP, stamp(w, m->ts_ns));
        opprof__pb_uint(&w->event, EVENT_TYPE,
                        m->kind == OPPROF_MARK_ASYNC_BEGIN ? SLICE_BEGIN
                        : m->kind == OPPROF_MARK_ASYNC_END ? SLICE_END
                                                           : INSTANT);
        opprof__pb_uint(&w->event, EVENT_TRACK, ASYNC_UUID(m->value.id));
        opprof__pb_uint(&w->event, EVENT_NAME_IID, name_iid(w, m->name));
        note_own_int(w, NOTE_THREAD, (int64_t)m->thread);
        break;
    case OPPROF_MARK_INSTANT:
    case OPPROF_MARK_FLOW_BEGIN:
    case OPPROF_MARK_FLOW_STEP: /* Perfetto's flow_ids: from the flow's last slice to this one, going on */
    case OPPROF_MARK_FLOW_END:  /* a flow's end, start or step is an instant that carries it */
        opprof__pb_uint(&w->packet, PACKET_TIMESTAMP, stamp(w, m->ts_ns));
        opprof__pb_uint(&w->event, EVENT_TYPE, INSTANT);
        opprof__pb_uint(&w->event, EVENT_TRACK, THREAD_UUID(m->thread));
        opprof__pb_uint(&w->event, EVENT_NAME_IID, name_iid(w, m->name));
        if (m->kind == OPPROF_MARK_FLOW_BEGIN || m->kind == OPPROF_MARK_FLOW_STEP)
            opprof__pb_fixed64(&w->event, EVENT_FLOW_IDS, m->value.id);
        if (m->kind == OPPROF_MARK_FLOW_STEP) note_own_int(w, NOTE_FLOW_STEP, 1); /* else read back as a start */
        if (m->kind == OPPROF_MARK_FLOW_END) opprof__pb_fixed64(&w->event, EVENT_TERMINATING_FLOWS, m->value.id);
        if (m->kind == OPPROF_MARK_INSTANT) note_own_int(w, NOTE_SCOPE, m->value.i);
        break;
    }
    end_packet(w, SEQ_NEEDS_STATE);
}

/* An async range's track, named after it, under its process. */
static void async_track(pwriter *w, const opprof_mark *m) {
    opprof__strbuf track = {0};
    opprof__pb_uint(&track, TRACK_UUID, ASYNC_UUID(m->value.id));
    opprof__pb_uint(&track, TRACK_PARENT, PROCESS_UUID(w->c->n_threads ? w->process_of[m->thread] : 0));
    opprof__pb_string(&track, TRACK_NAME, w->c->names[m->name]);
    if (track.error) w->error = OPPROF_ENOMEM;
    track_packet(w, &track);
    opprof__sb_free(&track);
}

/* A mark of an async range's track: its begin, end or instant. */
static bool is_async(const opprof_mark *m) {
    return m->kind == OPPROF_MARK_ASYNC_BEGIN || m->kind == OPPROF_MARK_ASYNC_END ||
           m->kind == OPPROF_MARK_ASYNC_INSTANT;
}

/* Every async range's track, once per id (named by its first mark), before
 * any of their events: an end may come first, on another thread. */
static int async_tracks(pwriter *w) {
    const opprof_capture *c = w->c;
    size_t n = 0;
    for (size_t k = 0; k < c->n_marks; k++) n += is_async(&c->marks[k]);
    if (!n) return 0;
    opprof__keyed *ids = opprof__alloc(n * sizeof *ids); /* by id, then mark */
    if (!ids) return OPPROF_ENOMEM;
    size_t m = 0;
    for (size_t k = 0; k < c->n_marks; k++)
        if (is_async(&c->marks[k])) ids[m++] = (opprof__keyed){opprof__unsigned_key(c->marks[k].value.id), k};
    opprof__sort_keyed(ids, n);
    for (size_t k = 0; k < n; k++)
        if (!k || ids[k].key != ids[k - 1].key) async_track(w, &c->marks[ids[k].index]);
    opprof__free(ids);
    return w->error;
}

static void marks(pwriter *w) {
    const opprof_capture *c = w->c;
    for (size_t k = 0; k < c->n_marks && !w->error; k++)
        if (c->marks[k].event < 0) mark_event(w, &c->marks[k]);
}

/* The capture's facts, an instant at its start on the first process. */
static void facts(pwriter *w) {
    const opprof_capture_info *info = &w->c->info;
    opprof__pb_uint(&w->packet, PACKET_TIMESTAMP, stamp(w, 0));
    opprof__pb_uint(&w->event, EVENT_TYPE, INSTANT);
    opprof__pb_uint(&w->event, EVENT_TRACK, PROCESS_UUID(0));
    opprof__pb_string(&w->event, EVENT_NAME, FACTS_EVENT);
    note_string(w, "opprof_version", OPPROF_VERSION_STRING);
    note_int(w, "step_num", info->step_num);
    note_int(w, "base_time_ns", info->base_time_ns);
    note_int(w, "time_origin", w->origin);
    note_int(w, "pid", info->pid);
    note_int(w, "profile_memory", info->profile_memory);
    note_int(w, "record_shapes", info->record_shapes);
    note_int(w, "with_stack", info->with_stack);
    note_int(w, "with_flops", info->with_flops);
    note_int(w, "dropped_events", (int64_t)info->dropped_events);
    note_int(w, "process_peak_rss_bytes", info->process_peak_rss_bytes);
    note_int(w, "opprof_unended_ns", info->unended_ns);
    note_double(w, "overhead_range_ns", info->overhead_range_ns);
    note_double(w, "overhead_memory_event_ns", info->overhead_memory_event_ns);
    if (info->sample_period_ns || w->c->n_samples || info->off_cpu || w->c->n_off_cpu) {
        note_int(w, "sample_period_ns", info->sample_period_ns);
        note_int(w, "samples_lost", (int64_t)info->samples_lost);
        note_int(w, "off_cpu", info->off_cpu || w->c->n_off_cpu);
    }
    if (info->rank.backend[0]) {
        note_string(w, "rank_backend", info->rank.backend);
        note_int(w, "rank", info->rank.rank);
        note_int(w, "world_size", info->rank.world_size);
        note_int(w, "clock_offset_ns", info->rank.clock_offset_ns);
        note_int(w, "clock_uncertainty_ns", info->rank.clock_uncertainty_ns);
    }
    if (info->flight.reason[0]) {
        note_string(w, "flight_reason", info->flight.reason);
#define FLIGHT_NUMBER(name) note_int(w, "flight_" #name, (int64_t)info->flight.name);
        OPPROF__FLIGHT_NUMBERS(FLIGHT_NUMBER)
#undef FLIGHT_NUMBER
    }
    for (size_t i = 0; i < w->c->n_warnings; i++)
        note_string(w, OPPROF__PFTRACE_NOTE_TEXT[NOTE_WARNING], w->c->warnings[i]);
    if (info->device_name[0]) note_string(w, OPPROF__PFTRACE_NOTE_TEXT[NOTE_DEVICE_NAME], info->device_name);
    if (w->c->host_name[0]) note_string(w, OPPROF__PFTRACE_NOTE_TEXT[NOTE_HOST_NAME], w->c->host_name);
    if (info->producer != OPPROF_PRODUCER_OPPROF)
        note_string(w, OPPROF__PFTRACE_NOTE_TEXT[NOTE_READ_FROM], opprof_producer_name(info->producer));
    for (size_t i = 0; i < w->c->n_mangled; i++) /* the C++ names demangled, with their symbols */
        if (w->c->mangled[i]) {
            note_string(w, OPPROF__PFTRACE_NOTE_TEXT[NOTE_DEMANGLED], w->c->names[i]);
            note_string(w, OPPROF__PFTRACE_NOTE_TEXT[NOTE_MANGLED], w->c->mangled[i]);
        }
    char *machine = NULL; /* the ceilings of the machine it ran on, as its profile's JSON */
    if (w->c->machine && opprof_machine_json_to_string(w->c->machine, &machine) == 0)
        note_string(w, OPPROF__PFTRACE_NOTE_TEXT[NOTE_MACHINE], machine);
    opprof_free(machine);
    end_packet(w, SEQ_NEEDS_STATE);
}

/* ---- samples: PerfSample packets, their callstacks interned (a frame per
 * function name, its iid the name's; a frame with a source, "file:line",
 * one per (name, source), its iid past the names', with the file as an
 * interned source path (its iid the source's name id + 1) and the line; a
 * callstack's frames outermost first) ---- */

static void function_name(pwriter *w, uint32_t name) {
    if (w->name_done[name] & 32) return;
    intern(&w->interned, &w->scratch, INTERNED_FUNCTION_NAMES, name + 1u, w->c->names[name]);
    w->name_done[name] |= 32;
}

static void frame_of(pwriter *w, uint32_t name) {
    if (w->name_done[name] & 8) return;
    function_name(w, name);
    opprof__pb_uint(&w->scratch, IID, name + 1u);
    opprof__pb_uint(&w->scratch, FRAME_FUNCTION_NAME, name + 1u);
    opprof__pb_message(&w->interned, INTERNED_FRAMES, &w->scratch);
    w->name_done[name] |= 8;
}

static OPPROF__HASH uint64_t sourced_hash(const struct sourced *k) {
    uint64_t h = ((uint64_t)k->name << 32 | k->source) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}
static uint64_t sourced_hash_of(const void *ctx, uint32_t item) {
    return sourced_hash(&((const struct sourced *)ctx)[item]);
}
static bool sourced_equal(const void *ctx, uint32_t item, const void *key) {
    const struct sourced *a = &((const struct sourced *)ctx)[item], *b = key;
    return a->name == b->name && a->source == b->source;
}

/* The iid of a source file (a frame's "file:line" without its line),
 * interned when new: once per file, not once per line. */
static uint64_t file_iid(pwriter *w, const char *file) {
    opprof__index_text key = {file, strlen(file)};
    size_t slot;
    int64_t found = opprof__index_lookup(&w->file_index, w->n_files, opprof__index_text_hash, opprof__index_text_equal,
                                         w->files, opprof__hash_bytes(key.s, key.len), &key, &slot);
    if (found > 0) return (uint64_t)found;
    char *copy = found < 0 ? NULL : opprof__strdup(file);
    if (!copy || opprof__grow((void **)&w->files, &w->cap_files, w->n_files + 1, sizeof *w->files)) {
        opprof__free(copy);
        w->error = OPPROF_ENOMEM;
        return 0;
    }
    w->files[w->n_files] = copy;
    w->file_index.slots[slot] = (uint32_t)++w->n_files;
    intern(&w->interned, &w->scratch, INTERNED_SOURCE_PATHS, w->n_files, file);
    return w->n_files;
}

/* The iid of the frame (name, source), interned when new. */
static uint64_t sourced_frame(pwriter *w, uint32_t name, uint32_t source) {
    struct sourced key = {name, source};
    size_t slot;
    int64_t found = opprof__index_lookup(&w->sourced_index, w->n_sourced, sourced_hash_of, sourced_equal, w->sourced,
                                         sourced_hash(&key), &key, &slot);
    if (found > 0) return w->c->n_names + (uint64_t)found;
    if (found < 0 || opprof__grow((void **)&w->sourced, &w->cap_sourced, w->n_sourced + 1, sizeof *w->sourced)) {
        w->error = OPPROF_ENOMEM;
        return 0;
    }
    w->sourced[w->n_sourced] = key;
    w->sourced_index.slots[slot] = (uint32_t)++w->n_sourced;
    char file[512];
    long line = opprof__source_parts(w->c->names[source], file, sizeof file);
    function_name(w, name);
    uint64_t path = file_iid(w, file);
    uint64_t iid = w->c->n_names + (uint64_t)w->n_sourced;
    opprof__pb_uint(&w->scratch, IID, iid);
    opprof__pb_uint(&w->scratch, FRAME_FUNCTION_NAME, name + 1u);
    opprof__pb_uint(&w->scratch, FRAME_SOURCE_PATH, path);
    if (line > 0) opprof__pb_uint(&w->scratch, FRAME_LINE, (uint64_t)line);
    opprof__pb_message(&w->interned, INTERNED_FRAMES, &w->scratch);
    return iid;
}

static uint64_t callstack_iid(pwriter *w, uint32_t stack) {
    if (w->stack_done[stack]) return stack + 1u;
    size_t n;
    const uint32_t *frames = opprof_capture_stack(w->c, stack, &n);
    const uint32_t *sources = opprof_capture_stack_sources(w->c, stack, &n);
    opprof__strbuf ids = {0}; /* frame_ids, packed: the varints one after another, outermost first */
    for (size_t k = n; k > 0; k--) {
        uint32_t source = sources ? sources[k - 1] : UINT32_MAX;
        if (source == UINT32_MAX) frame_of(w, frames[k - 1]);
        opprof__pb_varint(&ids, source == UINT32_MAX ? frames[k - 1] + 1u : sourced_frame(w, frames[k - 1], source));
    }
    opprof__pb_uint(&w->note, IID, stack + 1u);
    opprof__pb_bytes(&w->note, CALLSTACK_FRAMES, ids.data ? ids.data : "", ids.len);
    if (ids.error) w->error = OPPROF_ENOMEM;
    opprof__sb_free(&ids);
    opprof__pb_message(&w->interned, INTERNED_CALLSTACKS, &w->note);
    w->stack_done[stack] = 1;
    return stack + 1u;
}

static void samples(pwriter *w) {
    const opprof_capture *c = w->c;
    for (size_t j = 0; j < c->n_samples && !w->error; j++) {
        const opprof_sample *sm = &c->samples[j];
        const opprof_thread_info *t = &c->threads[sm->thread];
        opprof__strbuf *ps = &w->text;
        ps->len = 0;
        opprof__pb_uint(ps, SAMPLE_PID, (uint64_t)opprof__thread_pid(c, sm->thread));
        opprof__pb_uint(ps, SAMPLE_TID, (uint64_t)t->tid);
        opprof__pb_uint(ps, SAMPLE_CALLSTACK, callstack_iid(w, sm->stack));
        opprof__pb_uint(ps, SAMPLE_CPU_MODE, MODE_USER);
        opprof__pb_uint(&w->packet, PACKET_TIMESTAMP, stamp(w, sm->ts_ns));
        opprof__pb_message(&w->packet, PACKET_PERF_SAMPLE, ps);
        end_packet(w, SEQ_NEEDS_STATE);
    }
}

/* Each thread's times off the CPU: a counter track under the thread, its
 * value 1 (blocked) or 2 (preempted) while the thread is off, 0 when back. */
static void off_cpu_value(pwriter *w, uint32_t thread, int64_t ts, int64_t value) {
    opprof__pb_uint(&w->packet, PACKET_TIMESTAMP, stamp(w, ts));
    opprof__pb_uint(&w->event, EVENT_TYPE, COUNTER);
    opprof__pb_uint(&w->event, EVENT_TRACK, OFF_CPU_UUID(thread));
    opprof__pb_int(&w->event, EVENT_COUNTER, value);
    end_packet(w, SEQ_NEEDS_STATE);
}

static void off_cpu(pwriter *w) {
    const opprof_capture *c = w->c;
    for (size_t j = 0; j < c->n_off_cpu && !w->error; j++) {
        const opprof_off_cpu *o = &c->off_cpu[j];
        if (j == 0 || o->thread != c->off_cpu[j - 1].thread) {
            opprof__strbuf track = {0}, inner = {0};
            opprof__pb_uint(&track, TRACK_UUID, OFF_CPU_UUID(o->thread));
            opprof__pb_uint(&track, TRACK_PARENT, THREAD_UUID(o->thread));
            opprof__pb_string(&track, TRACK_NAME, OFF_CPU_TRACK);
            opprof__pb_message(&track, TRACK_COUNTER, &inner);
            if (track.error) w->error = OPPROF_ENOMEM;
            track_packet(w, &track);
            opprof__sb_free(&track);
            opprof__sb_free(&inner);
        }
        off_cpu_value(w, o->thread, o->start_ns, o->preempted ? 2 : 1);
        off_cpu_value(w, o->thread, o->start_ns + o->duration_ns, 0);
    }
}

/* The sequence's start: its interned state cleared; its defaults (the delta
 * clock for timestamps, the first allocator's track for events that name
 * none, the address track for the one extra counter value of a memory
 * sample); the delta clock at the capture's time 0. */
static void first_packet(pwriter *w) {
    opprof__strbuf defaults = {0}, events = {0};
    opprof__pb_uint(&defaults, DEFAULTS_CLOCK, CLOCK_DELTAS);
    if (w->c->n_mem) { /* the first allocator's track: its samples need not name it */
        w->default_track = MEMORY_UUID(w->c->mem[0].device_type, w->c->mem[0].device_id);
        opprof__pb_uint(&events, TRACK_EVENT_DEFAULT_TRACK, w->default_track);
        opprof__pb_uint(&events, TRACK_EVENT_DEFAULT_EXTRA_COUNTERS, ADDRESS_UUID);
        opprof__pb_message(&defaults, DEFAULTS_TRACK_EVENT, &events);
    }
    opprof__pb_message(&w->packet, PACKET_DEFAULTS, &defaults);
    if (defaults.error || events.error) w->error = OPPROF_ENOMEM;
    opprof__sb_free(&defaults);
    opprof__sb_free(&events);
    end_packet(w, SEQ_CLEARED);
    clock_at(w, 0);
}

/* Time 0 at base_time_ns, moved up if an event starts before the clock's 0. */
static int64_t time_origin(const opprof_capture *c) {
    int64_t earliest = 0;
    for (size_t i = 0; i < c->n_events; i++)
        if (c->events[i].start_ns < earliest) earliest = c->events[i].start_ns;
    for (size_t i = 0; i < c->n_mem; i++)
        if (c->mem[i].ts_ns < earliest) earliest = c->mem[i].ts_ns;
    for (size_t i = 0; i < c->n_marks; i++)
        if (c->marks[i].event < 0 && c->marks[i].ts_ns < earliest) earliest = c->marks[i].ts_ns;
    int64_t base = c->info.base_time_ns > 0 && c->info.base_time_ns < OPPROF_MAX_TIME_NS ? c->info.base_time_ns : 0;
    return base + earliest < 0 ? -earliest : base;
}

static int write_stream(const opprof_capture *c, FILE *fp) {
    pwriter w = {.c = c, .fp = fp, .origin = time_origin(c), .memory_thread = -1};
    w.buf = opprof__alloc(OUT_BUFFER);
    w.name_done = opprof__calloc(c->n_names ? c->n_names : 1, 1);
    w.stack_done = opprof__calloc(c->n_stacks ? c->n_stacks : 1, 1);
    int rc = w.buf && w.name_done && w.stack_done ? 0 : OPPROF_ENOMEM;
    bool args = !rc && !(rc = opprof__arg_index_build(&w.args, c) ? OPPROF_ENOMEM : 0);
    if (!rc) rc = opprof__external_ids(c, &w.external);
    if (!rc) {
        first_packet(&w);
        rc = thread_tracks(&w);
    }
    if (!rc && c->n_threads) rc = counter_tracks(&w);
    if (!rc && c->n_threads) rc = async_tracks(&w);
    lane *lanes = rc ? NULL : opprof__alloc(LANES * sizeof *lanes);
    if (!rc && !lanes) rc = OPPROF_ENOMEM;
    if (!rc) facts(&w); /* a capture of no thread too: it reads back, empty */
    if (!rc && c->n_threads) {
        slices(&w, lanes);
        marks(&w);
        samples(&w);
        off_cpu(&w);
    }
    opprof__free(lanes);
    flush_out(&w);
    if (!rc) rc = w.error;
    if (args) opprof__arg_index_free(&w.args);
    opprof__free(w.external);
    opprof__sb_free(&w.packet);
    opprof__sb_free(&w.event);
    opprof__sb_free(&w.note);
    opprof__sb_free(&w.interned);
    opprof__sb_free(&w.scratch);
    opprof__sb_free(&w.text);
    opprof__free(w.name_done);
    opprof__free(w.stack_done);
    opprof__free(w.sourced);
    opprof__index_free(&w.sourced_index);
    for (size_t i = 0; i < w.n_files; i++) opprof__free(w.files[i]);
    opprof__free(w.files);
    opprof__index_free(&w.file_index);
    opprof__free(w.pids);
    opprof__free(w.process_of);
    opprof__index_free(&w.pid_index);
    opprof__free(w.allocators);
    opprof__index_free(&w.allocator_index);
    opprof__free(w.buf);
    return rc;
}

int opprof_capture_perfetto_write_stream(const opprof_capture *c, FILE *fp) {
    if (!c || !fp) return OPPROF_EINVAL;
    return write_stream(c, fp);
}

int opprof_capture_perfetto_write(const opprof_capture *c, const char *path) {
    return opprof_capture_perfetto_write_ex(c, path, NULL);
}

static int write_gzip(const opprof_capture *c, FILE *file) {
    FILE *fp;
    int rc = opprof__gzip_open(file, &fp);
    if (rc) return rc;
    return opprof__gzip_close(fp, write_stream(c, fp));
}

int opprof_capture_perfetto_write_ex(const opprof_capture *c, const char *path,
                                     const opprof_perfetto_options *options) {
    if (!c || !path) return OPPROF_EINVAL;
    opprof__file f;
    int rc = opprof__file_open(&f, path);
    if (rc) return rc;
    rc = options && options->gzip ? write_gzip(c, f.fp) : write_stream(c, f.fp);
    if (rc) {
        opprof__file_abort(&f);
        return rc;
    }
    return opprof__file_commit(&f);
}
