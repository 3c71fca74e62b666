/* perfetto_reader.c - the .pftrace files that opprof writes, read back: the
 * packets are decoded (trace/protobuf.h) into the Chrome trace that the same
 * capture's JSON writer gives (Kineto's object form, opprof's keys), which the
 * JSON reader then reads. So every command gives a .pftrace the tables, the
 * stacks and the checks of that JSON, by one set of rules.
 *
 * What comes back is what perfetto_writer.c puts in (docs/TRACE_FORMAT.md):
 * thread tracks, slices paired begin to end on each track, their categories,
 * input shapes, call stacks and arguments; memory samples with their bytes,
 * address (an extra counter value) and thread; counters, instants, flows,
 * async ranges; the facts.
 * A trace of another Perfetto writer is refused as such, with the reason:
 * an event on a track no descriptor named, an end with no begin... */
#include "trace/json_lex.h"
#include "trace/perfetto_proto.h"
#include "trace/protobuf.h"
#include "trace/trace.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum { MAX_OPEN = 4096, MAX_NOTES = 1 << 16, MAX_PACKET = 256 << 20, WINDOW = 1 << 16 };

typedef enum track_kind {
    TRACK_OTHER,
    TRACK_OF_THREAD,
    TRACK_MEMORY,
    TRACK_COUNTER_OF,
    TRACK_ASYNC,
    TRACK_OFF_CPU,
    TRACK_OF_PROCESS
} track_kind;

typedef struct track {
    uint64_t uuid;
    track_kind kind;
    int64_t tid;       /* a thread's, or a lane's thread's */
    int64_t pid;       /* a process's, a thread's (or its lane's), as its descriptor says */
    bool has_pid;      /* its descriptor (or its lane's thread's) says a pid; else the capture's */
    bool thread;       /* a thread's own (not a lane) */
    char name[128];    /* a counter's, or the thread's */
    int64_t off_since; /* TRACK_OFF_CPU: when its thread left the CPU, -1: on it */
    int64_t total;     /* TRACK_MEMORY: the total of its sample before (0 before the first) */
    bool preempted;
    struct begun *open;             /* its slices not out yet, in the order they began: a stack */
    size_t n_open, cap_open, depth; /* depth: those not ended */
    size_t top;                     /* the innermost of them not ended: its index + 1, or 0 */
    opprof__strbuf pending;         /* their JSON */
} track;

/* A slice begun: its JSON's head ({"ph":"X", ... "ts":...) and its args in
 * its track's pending text, its start, its duration once ended. A slice goes
 * out when it ends, unless the slice around it began at the same time: it
 * then waits for that one, and goes out after it (in the order they began,
 * as the JSON writer has them: a child as long as its parent is told apart
 * by that order). So the pending text holds the open slices and those
 * waiting, not the whole of a long range's. */
typedef struct begun {
    size_t json, len; /* the head, in its track's pending text; the args follow it */
    size_t below;     /* the slice open around it when it began (its parent): index + 1, or 0 */
    int64_t ts, dur;
    bool ended;
} begun;

typedef struct annotation {
    const char *name;
    size_t name_len;
    int type; /* NOTE_INT, NOTE_UINT, NOTE_DOUBLE, NOTE_STRING */
    uint64_t value;
    const uint8_t *s;
    size_t s_len;
} annotation;

/* What an iid names: a string (names, categories, annotation names,
 * function names, source paths: `at` and `len` in the reader's copy of
 * them), a frame (a: its function name's iid, b: its source path's or 0,
 * c: its line) or a callstack (a: its first frame in stack_frames, b: how
 * many). Held by iid in a hash table: as many entries as the trace interns,
 * whatever the iids' values. */
typedef struct interned_entry {
    uint64_t iid;
    size_t at, len;
    uint64_t a, b, c;
} interned_entry;
typedef struct iid_table {
    interned_entry *v;
    size_t n, cap;
    opprof__index index;
} iid_table;

typedef struct preader {
    opprof__strbuf events, text;
    int (*emit)(void *ctx, const char *data, size_t len); /* where the JSON goes, in order */
    void *emit_ctx;
    int emit_error;
    size_t open_slices;                                                   /* on every track */
    iid_table names, categories, notes, functions, paths, frames, stacks; /* the interned, by kind */
    opprof__strbuf interned; /* their bytes, copied: a packet's go when the next is read */
    track *tracks;
    size_t n_tracks, cap_tracks;
    opprof__index track_index; /* uuid -> its track: a packet names its track by uuid */
    int64_t origin, pid;
    bool facts, first_event;
    /* samples: frames, callstacks as runs of frame iids (outermost first), the samples' JSON so far */
    uint64_t *stack_frames; /* the callstacks' frame iids, each stack's a run */
    size_t n_stack_frames, cap_stack_frames;
    opprof__strbuf samples, offs; /* JSON of "samples" and "opprof_off_cpu" so far */
    bool off_cpu;
    int64_t sample_period_ns, samples_lost;
    uint32_t default_clock;          /* the sequence's TracePacketDefaults timestamp_clock_id, or 0 */
    uint64_t default_track;          /* ... its track_event_defaults' track_uuid, or 0 */
    uint64_t default_extra;          /* ... their first extra_counter_track_uuids: the memory events' addresses, or 0 */
    int64_t memory_thread;           /* the thread of the memory sample before, or -1 */
    bool delta_known;                /* a clock snapshot set the delta clock */
    int64_t delta_at, delta_to_boot; /* the delta clock's time, and BOOTTIME less it */
    opprof__read_fn read;            /* where the bytes come from, into the window */
    void *read_ctx;
    uint8_t *win;                               /* the bytes read and not yet decoded: the packet being read at least */
    size_t win_len, win_pos, win_cap, win_base; /* win_base: the offset of win[0] in the trace */
    bool eof;
    annotation *note_buf; /* the event being read's debug annotations */
    size_t cap_note_buf;
    size_t packet; /* the packet being read, for the errors */
    size_t offset; /* its byte offset */
    char why[200];
} preader;

static int fail(preader *r, const char *what) {
    snprintf(r->why, sizeof r->why, "packet %zu (byte %zu): %s", r->packet, r->offset, what);
    return OPPROF_EFORMAT;
}

/* ---- interning: iid -> what it names ---- */

static uint64_t iid_hash(uint64_t iid) { return opprof__hash_pair(iid, 0x1d); }
static uint64_t entry_hash_of(const void *ctx, uint32_t item) {
    return iid_hash(((const iid_table *)ctx)->v[item].iid);
}
static bool entry_equal(const void *ctx, uint32_t item, const void *key) {
    return ((const iid_table *)ctx)->v[item].iid == *(const uint64_t *)key;
}

static const interned_entry *iid_find(const iid_table *t, uint64_t iid) {
    if (!t->n) return NULL;
    uint32_t item = t->index.slots[opprof__index_probe(&t->index, iid_hash(iid), &iid, entry_equal, t)];
    return item ? &t->v[item - 1] : NULL;
}

/* The entry of iid, added when it has none (interned again: the new one's). */
static interned_entry *iid_put(iid_table *t, uint64_t iid) {
    size_t slot;
    int64_t have = opprof__index_lookup(&t->index, t->n, entry_hash_of, entry_equal, t, iid_hash(iid), &iid, &slot);
    if (have < 0) return NULL;
    if (have) return &t->v[have - 1];
    if (opprof__grow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v)) return NULL;
    t->v[t->n] = (interned_entry){.iid = iid};
    t->index.slots[slot] = (uint32_t)++t->n;
    return &t->v[t->n - 1];
}

static void iid_free(iid_table *t) {
    opprof__free(t->v);
    opprof__index_free(&t->index);
}

/* The string an iid names, or NULL (*len its length). */
static const char *iid_text(const preader *r, const iid_table *t, uint64_t iid, size_t *len) {
    const interned_entry *e = iid_find(t, iid);
    if (!e) return NULL;
    *len = e->len;
    return r->interned.data ? r->interned.data + e->at : "";
}

static int intern(preader *r, iid_table *t, const uint8_t *p, size_t len) {
    uint64_t iid = 0;
    const uint8_t *name = NULL, *end = p + len;
    size_t name_len = 0;
    opprof__pb_field f;
    int got;
    while ((got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.number == IID && f.wire == OPPROF__PB_VARINT) iid = f.value;
        if (f.number == IID_NAME && f.wire == OPPROF__PB_BYTES) name = f.data, name_len = f.len;
    }
    if (got < 0 || !name) return fail(r, "an interned name that is no {iid, name}");
    if (iid == 0) return fail(r, "an interned name's iid is 0");
    interned_entry *e = iid_put(t, iid);
    if (!e) return OPPROF_ENOMEM;
    e->at = r->interned.len;
    e->len = name_len;
    opprof__sb_put(&r->interned, (const char *)name, name_len);
    return r->interned.error ? OPPROF_ENOMEM : 0;
}

/* ---- samples: interned frames and callstacks, PerfSample packets ---- */

static void json_bytes(opprof__strbuf *sb, const uint8_t *s, size_t n, opprof__strbuf *text);

static int frame_of(preader *r, const uint8_t *p, size_t len) {
    uint64_t iid = 0, function = 0, path = 0, line = 0;
    const uint8_t *end = p + len;
    opprof__pb_field f;
    int got;
    while ((got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.wire != OPPROF__PB_VARINT) continue;
        if (f.number == FRAME_IID) iid = f.value;
        if (f.number == FRAME_FUNCTION_NAME) function = f.value;
        if (f.number == FRAME_SOURCE_PATH) path = f.value;
        if (f.number == FRAME_LINE) line = f.value;
    }
    if (got < 0 || iid == 0 || function == 0) return fail(r, "an interned frame that is no {iid, function_name_id}");
    interned_entry *e = iid_put(&r->frames, iid);
    if (!e) return OPPROF_ENOMEM;
    e->a = function, e->b = path, e->c = line;
    return 0;
}

static int push_stack_frame(preader *r, uint64_t iid) {
    if (opprof__grow((void **)&r->stack_frames, &r->cap_stack_frames, r->n_stack_frames + 1, sizeof *r->stack_frames))
        return OPPROF_ENOMEM;
    r->stack_frames[r->n_stack_frames++] = iid;
    return 0;
}

/* A callstack's frame iids, packed or one by one, outermost first. */
static int callstack_of(preader *r, const uint8_t *p, size_t len) {
    uint64_t iid = 0;
    size_t first = r->n_stack_frames;
    const uint8_t *end = p + len;
    opprof__pb_field f;
    int got;
    while ((got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.number == CALLSTACK_IID && f.wire == OPPROF__PB_VARINT) iid = f.value;
        if (f.number != CALLSTACK_FRAMES) continue;
        for (const uint8_t *q = f.data, *qe = f.data + f.len; f.wire == OPPROF__PB_BYTES && q < qe;) {
            uint64_t v;
            if (!opprof__pb_read_varint(&q, qe, &v)) return fail(r, "a callstack's frame_ids are no varints");
            if (push_stack_frame(r, v)) return OPPROF_ENOMEM;
        }
        if (f.wire == OPPROF__PB_VARINT && push_stack_frame(r, f.value)) return OPPROF_ENOMEM;
    }
    if (got < 0 || iid == 0) return fail(r, "an interned callstack that is no {iid, frame_ids}");
    interned_entry *e = iid_put(&r->stacks, iid);
    if (!e) return OPPROF_ENOMEM;
    e->a = first, e->b = r->n_stack_frames - first;
    return 0;
}

/* A sample, as the JSON writer writes it; its innermost frame is node
 * "S-(n - 1)" of its callstack's frames (samples_out writes them). */
static int perf_sample(preader *r, const uint8_t *p, size_t len, int64_t ts) {
    uint64_t pid = 0, tid = 0, stack = 0;
    const uint8_t *end = p + len;
    opprof__pb_field f;
    int got;
    while ((got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.wire != OPPROF__PB_VARINT) continue;
        if (f.number == SAMPLE_PID) pid = f.value;
        if (f.number == SAMPLE_TID) tid = f.value;
        if (f.number == SAMPLE_CALLSTACK) stack = f.value;
    }
    if (got < 0) return fail(r, "a perf_sample that is no protobuf");
    const interned_entry *st = stack ? iid_find(&r->stacks, stack) : NULL;
    if (stack && !st) return fail(r, "a sample's callstack was never interned");
    opprof__sb_printf(&r->samples, "%s\n    {\"name\":\"cpu-clock\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":",
                      r->samples.len ? "," : "", pid, tid);
    opprof__sb_us(&r->samples, ts - r->origin);
    /* a callstack of no frame (code with no symbols: JIT) is a sample of no stack, as the JSON writes it */
    if (st && st->b) opprof__sb_printf(&r->samples, ",\"sf\":\"%" PRIu64 "-%" PRIu64 "\"", stack, st->b - 1);
    opprof__sb_puts(&r->samples, ",\"weight\":1}");
    return 0;
}

/* After the events: every callstack's frames (node "S-k": frame k from the
 * outermost, its parent "S-(k - 1)") and the samples. */
static int samples_out(preader *r, opprof__strbuf *sb) {
    if (r->samples.error || r->offs.error) return sb->error = OPPROF_ENOMEM; /* a sample not written is lost */
    if (!r->samples.len && !r->sample_period_ns && !r->offs.len && !r->off_cpu) return 0;
    opprof__sb_puts(sb, ",\n  \"stackFrames\": {");
    bool first = true;
    for (size_t s = 0; s < r->stacks.n; s++) {
        const interned_entry *st = &r->stacks.v[s];
        for (uint64_t k = 0; k < st->b; k++) {
            const interned_entry *fr = iid_find(&r->frames, r->stack_frames[st->a + k]);
            size_t name_len = 0, path_len = 0;
            const char *name = fr ? iid_text(r, &r->functions, fr->a, &name_len) : NULL;
            if (!name) return fail(r, "a callstack's frame has no function name");
            opprof__sb_printf(sb, "%s\n    \"%" PRIu64 "-%" PRIu64 "\": {\"name\": ", first ? "" : ",", st->iid, k);
            json_bytes(sb, (const uint8_t *)name, name_len, &r->text);
            const char *path = fr->b ? iid_text(r, &r->paths, fr->b, &path_len) : NULL;
            if (fr->b && !path) return fail(r, "a frame's source path was never interned");
            if (path) { /* "file:line", as opprof's own frames say it */
                opprof__strbuf where = {0};
                opprof__sb_put(&where, path, path_len);
                opprof__sb_printf(&where, ":%" PRIu64, fr->c);
                opprof__sb_puts(sb, ", \"opprof_source\": ");
                json_bytes(sb, (const uint8_t *)where.data, where.len, &r->text);
                if (where.error) sb->error = where.error;
                opprof__sb_free(&where);
            }
            if (k) opprof__sb_printf(sb, ", \"parent\": \"%" PRIu64 "-%" PRIu64 "\"", st->iid, k - 1);
            opprof__sb_puts(sb, "}");
            first = false;
        }
    }
    opprof__sb_puts(sb, "},\n  \"samples\": [");
    opprof__sb_put(sb, r->samples.data ? r->samples.data : "", r->samples.len);
    opprof__sb_printf(sb,
                      "],\n  \"opprof_sampling\": {\"period_ns\": %" PRId64
                      ", \"off_cpu\": %d, \"samples_lost\": %" PRId64 "},\n  \"opprof_off_cpu\": [",
                      r->sample_period_ns, r->off_cpu, r->samples_lost);
    opprof__sb_put(sb, r->offs.data ? r->offs.data : "", r->offs.len);
    opprof__sb_puts(sb, "]");
    return 0;
}

static int interned_data(preader *r, const uint8_t *p, size_t len) {
    const uint8_t *end = p + len;
    opprof__pb_field f;
    int got, rc = 0;
    while (!rc && (got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.wire != OPPROF__PB_BYTES) continue;
        if (f.number == INTERNED_NAMES) rc = intern(r, &r->names, f.data, f.len);
        if (f.number == INTERNED_CATEGORIES) rc = intern(r, &r->categories, f.data, f.len);
        if (f.number == INTERNED_ANNOTATION_NAMES) rc = intern(r, &r->notes, f.data, f.len);
        if (f.number == INTERNED_FUNCTION_NAMES) rc = intern(r, &r->functions, f.data, f.len);
        if (f.number == INTERNED_SOURCE_PATHS) rc = intern(r, &r->paths, f.data, f.len);
        if (f.number == INTERNED_FRAMES) rc = frame_of(r, f.data, f.len);
        if (f.number == INTERNED_CALLSTACKS) rc = callstack_of(r, f.data, f.len);
    }
    return rc ? rc : got < 0 ? fail(r, "interned data that is no protobuf") : 0;
}

/* ---- tracks ---- */

static uint64_t track_hash(uint64_t uuid) { return opprof__hash_pair(uuid, 0); }

static uint64_t track_hash_of(const void *ctx, uint32_t item) {
    return track_hash(((const preader *)ctx)->tracks[item].uuid);
}

static bool track_equal(const void *ctx, uint32_t item, const void *key) {
    return ((const preader *)ctx)->tracks[item].uuid == *(const uint64_t *)key;
}

/* A track by its uuid: hashed, since every event names one and a trace may
 * hold thousands (threads, their lanes, async ranges). */
static track *find_track(preader *r, uint64_t uuid) {
    if (!r->track_index.size) return NULL;
    size_t k = opprof__index_probe(&r->track_index, track_hash(uuid), &uuid, track_equal, r);
    return r->track_index.slots[k] ? &r->tracks[r->track_index.slots[k] - 1] : NULL;
}

/* The track of a thread of the capture (an annotation's "Thread"), or none. */
static const track *thread_track(preader *r, int64_t thread) {
    const track *t = find_track(r, THREAD_UUID(thread));
    return t && t->kind == TRACK_OF_THREAD ? t : NULL;
}

static void json_bytes(opprof__strbuf *sb, const uint8_t *s, size_t n, opprof__strbuf *text) {
    text->len = 0;
    opprof__sb_put(text, (const char *)s, n);
    opprof__sb_json_string(sb, text->data ? text->data : "");
}

/* The JSON so far to its reader (the events' text once the head is out). */
static void flush(preader *r, opprof__strbuf *sb) {
    if (sb->error) r->emit_error = OPPROF_ENOMEM;
    if (!r->emit_error && sb->len) r->emit_error = r->emit(r->emit_ctx, sb->data, sb->len);
    sb->len = 0;
}

/* A process's metadata, as the JSON writer gives it: its name, its label
 * again when it has one ("rank 1"; "CPU" and "device" are none), its order. */
static void process_metadata(preader *r, int64_t pid, const char *name, int64_t index) {
    bool label = name[0] != '\0'; /* a process the writer named: its label */
    opprof__sb_printf(&r->events,
                      "%s  {\"ph\": \"M\", \"cat\": \"__metadata\", \"name\": \"process_name\", \"pid\": %" PRId64
                      ", \"tid\": 0, \"args\": {\"name\": ",
                      r->first_event ? "\n" : ",\n", pid);
    opprof__sb_json_string(&r->events, label ? name : "CPU");
    opprof__sb_puts(&r->events, "}}");
    if (label) {
        opprof__sb_printf(
            &r->events,
            ",\n  {\"ph\": \"M\", \"cat\": \"__metadata\", \"name\": \"process_labels\", \"pid\": %" PRId64
            ", \"tid\": 0, \"args\": {\"labels\": ",
            pid);
        opprof__sb_json_string(&r->events, name);
        opprof__sb_puts(&r->events, "}}");
    }
    opprof__sb_printf(
        &r->events,
        ",\n  {\"ph\": \"M\", \"cat\": \"__metadata\", \"name\": \"process_sort_index\", \"pid\": %" PRId64
        ", \"tid\": 0, \"args\": {\"sort_index\": %" PRId64 "}}",
        pid, index);
    r->first_event = false;
}

static int64_t pid_of(const preader *r, const track *t) { return t && t->has_pid ? t->pid : r->pid; }

/* The processes' and each thread's metadata, as the JSON writer gives them. */
static void metadata(preader *r) {
    int64_t index = 0;
    for (size_t k = 0; k < r->n_tracks; k++)
        if (r->tracks[k].kind == TRACK_OF_PROCESS)
            process_metadata(r, pid_of(r, &r->tracks[k]), r->tracks[k].name, index++);
    if (!index) process_metadata(r, r->pid, "", index++);
    index = 0;
    for (size_t k = 0; k < r->n_tracks; k++) {
        const track *t = &r->tracks[k];
        if (!t->thread) continue;
        if (t->name[0]) { /* a thread with no name has none */
            opprof__sb_printf(
                &r->events,
                ",\n  {\"ph\": \"M\", \"cat\": \"__metadata\", \"name\": \"thread_name\", \"pid\": %" PRId64
                ", \"tid\": %" PRId64 ", \"args\": {\"name\": ",
                pid_of(r, t), t->tid);
            opprof__sb_json_string(&r->events, t->name);
            opprof__sb_puts(&r->events, "}}");
        }
        opprof__sb_printf(
            &r->events,
            ",\n  {\"ph\": \"M\", \"cat\": \"__metadata\", \"name\": \"thread_sort_index\", \"pid\": %" PRId64
            ", \"tid\": %" PRId64 ", \"args\": {\"sort_index\": %" PRId64 "}}",
            pid_of(r, t), t->tid, index++);
    }
}

static int track_descriptor(preader *r, const uint8_t *p, size_t len) {
    const uint8_t *end = p + len;
    opprof__pb_field f;
    int got;
    track t = {.kind = TRACK_OTHER};
    uint64_t parent = 0;
    const uint8_t *thread = NULL, *name = NULL, *process = NULL;
    size_t thread_len = 0, name_len = 0, process_len = 0;
    bool counter = false;
    while ((got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.number == TRACK_UUID && f.wire == OPPROF__PB_VARINT) t.uuid = f.value;
        if (f.number == TRACK_PARENT && f.wire == OPPROF__PB_VARINT) parent = f.value;
        if (f.number == TRACK_THREAD && f.wire == OPPROF__PB_BYTES) thread = f.data, thread_len = f.len;
        if (f.number == TRACK_PROCESS && f.wire == OPPROF__PB_BYTES) process = f.data, process_len = f.len;
        if (f.number == TRACK_NAME && f.wire == OPPROF__PB_BYTES) name = f.data, name_len = f.len;
        if (f.number == TRACK_COUNTER) counter = true;
    }
    if (got < 0) return fail(r, "a track descriptor that is no protobuf");
    if (find_track(r, t.uuid)) return 0; /* the same track again (an async range's id) */
    if (thread) {
        const uint8_t *q = thread, *qe = thread + thread_len, *tname = NULL;
        size_t tname_len = 0;
        while ((got = opprof__pb_next(&q, qe, &f)) > 0) {
            if (f.number == THREAD_TID && f.wire == OPPROF__PB_VARINT) t.tid = (int64_t)f.value;
            if (f.number == THREAD_PID && f.wire == OPPROF__PB_VARINT) t.pid = (int64_t)f.value, t.has_pid = true;
            if (f.number == THREAD_NAME && f.wire == OPPROF__PB_BYTES) tname = f.data, tname_len = f.len;
        }
        if (got < 0) return fail(r, "a thread descriptor that is no protobuf");
        t.kind = TRACK_OF_THREAD;
        t.thread = true;
        snprintf(t.name, sizeof t.name, "%.*s", (int)(tname_len < sizeof t.name ? tname_len : sizeof t.name - 1),
                 tname ? (const char *)tname : "");
    } else if (process) {
        const uint8_t *q = process, *qe = process + process_len, *pname = NULL;
        size_t pname_len = 0;
        while ((got = opprof__pb_next(&q, qe, &f)) > 0) {
            if (f.number == PROCESS_PID && f.wire == OPPROF__PB_VARINT) t.pid = (int64_t)f.value, t.has_pid = true;
            if (f.number == PROCESS_NAME && f.wire == OPPROF__PB_BYTES) pname = f.data, pname_len = f.len;
        }
        if (got < 0) return fail(r, "a process descriptor that is no protobuf");
        t.kind = TRACK_OF_PROCESS;
        snprintf(t.name, sizeof t.name, "%.*s", (int)(pname_len < sizeof t.name ? pname_len : sizeof t.name - 1),
                 pname ? (const char *)pname : "");
    } else if (counter && name && name_len == sizeof OFF_CPU_TRACK - 1 && !memcmp(name, OFF_CPU_TRACK, name_len) &&
               parent && find_track(r, parent) && find_track(r, parent)->kind == TRACK_OF_THREAD) {
        t.kind = TRACK_OFF_CPU;
        t.tid = find_track(r, parent)->tid;
        t.pid = find_track(r, parent)->pid;
        t.has_pid = find_track(r, parent)->has_pid;
        t.off_since = -1;
    } else if (counter) {
        size_t m = sizeof MEMORY_TRACK_SUFFIX - 1;
        t.kind =
            name_len >= m && !memcmp(name + name_len - m, MEMORY_TRACK_SUFFIX, m) ? TRACK_MEMORY : TRACK_COUNTER_OF;
    } else if (parent && find_track(r, parent) && find_track(r, parent)->kind == TRACK_OF_THREAD) {
        t.kind = TRACK_OF_THREAD; /* a lane: its thread's events that overlap */
        t.tid = find_track(r, parent)->tid;
        t.pid = find_track(r, parent)->pid;
        t.has_pid = find_track(r, parent)->has_pid;
    } else if (name) {
        t.kind = TRACK_ASYNC;
    }
    if (name && !t.thread && t.kind != TRACK_OF_PROCESS)
        snprintf(t.name, sizeof t.name, "%.*s", (int)(name_len < sizeof t.name ? name_len : sizeof t.name - 1), name);
    if (opprof__grow((void **)&r->tracks, &r->cap_tracks, r->n_tracks + 1, sizeof *r->tracks) ||
        opprof__index_reserve(&r->track_index, r->n_tracks, track_hash_of, r))
        return OPPROF_ENOMEM;
    size_t slot = opprof__index_probe(&r->track_index, track_hash(t.uuid), &t.uuid, track_equal, r);
    r->tracks[r->n_tracks++] = t;
    r->track_index.slots[slot] = (uint32_t)r->n_tracks;
    return 0;
}

/* ---- events ---- */

typedef struct event {
    int type;
    uint64_t track, name_iid, flow, end_flow;
    const uint8_t *name;
    size_t name_len;
    uint64_t categories[4];
    int n_categories;
    int64_t counter, extra; /* extra: its first extra counter value */
    double dcounter;
    bool has_counter, has_dcounter, has_flow, has_end_flow, has_extra;
    annotation *notes; /* the reader's note_buf: as many as the event has */
    int n_notes;
} event;

static int annotation_of(preader *r, const uint8_t *p, size_t len, annotation *a) {
    const uint8_t *end = p + len;
    opprof__pb_field f;
    int got;
    memset(a, 0, sizeof *a);
    while ((got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.number == NOTE_NAME && f.wire == OPPROF__PB_BYTES) a->name = (const char *)f.data, a->name_len = f.len;
        if (f.number == NOTE_NAME_IID && f.wire == OPPROF__PB_VARINT) {
            if (!(a->name = iid_text(r, &r->notes, f.value, &a->name_len)))
                return fail(r, "an annotation's name iid was never interned");
        }
        if (f.number == NOTE_STRING && f.wire == OPPROF__PB_BYTES)
            a->type = NOTE_STRING, a->s = f.data, a->s_len = f.len;
        if ((f.number == NOTE_INT || f.number == NOTE_UINT) && f.wire == OPPROF__PB_VARINT)
            a->type = (int)f.number, a->value = f.value;
        if (f.number == NOTE_DOUBLE && f.wire == OPPROF__PB_FIXED64) a->type = NOTE_DOUBLE, a->value = f.value;
    }
    if (got < 0 || !a->name) return fail(r, "a debug annotation that is no protobuf or has no name");
    return 0;
}

static int event_of(preader *r, const uint8_t *p, size_t len, event *e) {
    const uint8_t *end = p + len;
    opprof__pb_field f;
    int got, rc = 0;
    memset(e, 0, sizeof *e);
    while (!rc && (got = opprof__pb_next(&p, end, &f)) > 0) {
        if ((f.number == EVENT_NAME || f.number == EVENT_ANNOTATIONS) && f.wire != OPPROF__PB_BYTES)
            return fail(r, "a track event's name or debug annotation that is not a message");
        switch (f.number) {
        case EVENT_TYPE: e->type = (int)f.value; break;
        case EVENT_TRACK: e->track = f.value; break;
        case EVENT_NAME_IID: e->name_iid = f.value; break;
        case EVENT_NAME: e->name = f.data, e->name_len = f.len; break;
        case EVENT_CATEGORY_IIDS:
            if (e->n_categories < 4) e->categories[e->n_categories++] = f.value;
            break;
        case EVENT_COUNTER: e->counter = (int64_t)f.value, e->has_counter = true; break;
        case EVENT_DOUBLE_COUNTER: memcpy(&e->dcounter, &f.value, sizeof e->dcounter), e->has_dcounter = true; break;
        case EVENT_FLOW_IDS: e->flow = f.value, e->has_flow = true; break;
        case EVENT_EXTRA_COUNTER_VALUES:
            if (!e->has_extra && f.wire == OPPROF__PB_VARINT) e->extra = (int64_t)f.value, e->has_extra = true;
            break;
        case EVENT_TERMINATING_FLOWS: e->end_flow = f.value, e->has_end_flow = true; break;
        case EVENT_ANNOTATIONS:
            if (e->n_notes == MAX_NOTES) return fail(r, "an event with more than 65536 debug annotations");
            if (opprof__grow((void **)&r->note_buf, &r->cap_note_buf, (size_t)e->n_notes + 1, sizeof *r->note_buf))
                return OPPROF_ENOMEM;
            e->notes = r->note_buf;
            rc = annotation_of(r, f.data, f.len, &e->notes[e->n_notes++]);
            break;
        default: break;
        }
    }
    if (rc) return rc;
    if (got < 0) return fail(r, "a track event that is no protobuf");
    if (e->name_iid) {
        if (!(e->name = (const uint8_t *)iid_text(r, &r->names, e->name_iid, &e->name_len)))
            return fail(r, "an event's name iid was never interned");
    }
    return 0;
}

/* Whether an annotation is named text. */
static bool named(const annotation *a, const char *text) {
    size_t n = strlen(text);
    return a->name_len == n && !memcmp(a->name, text, n);
}

static const annotation *note(const event *e, const char *name) {
    size_t n = strlen(name);
    for (int k = 0; k < e->n_notes; k++)
        if (e->notes[k].name_len == n && !memcmp(e->notes[k].name, name, n)) return &e->notes[k];
    return NULL;
}

static int64_t note_int(const event *e, const char *name, int64_t otherwise) {
    const annotation *a = note(e, name);
    return a && (a->type == NOTE_INT || a->type == NOTE_UINT) ? (int64_t)a->value : otherwise;
}

/* Whether text is one JSON array as the writer gives Input Dims and Input
 * type ([[2, 3], []], ["float", ""]): brackets that balance, strings that
 * end, printable ASCII, no object, nothing after it. Anything else is no
 * JSON to pass on as it is: a crafted value would add keys or events. */
static bool plain_array(const uint8_t *s, size_t n) {
    int depth = 0;
    bool in_string = false;
    for (size_t k = 0; k < n; k++) {
        uint8_t c = s[k];
        if (c < 0x20 || c >= 0x7f) return false;
        if (in_string) {
            if (c == '\\' && ++k == n) return false;
            if (c == '"') in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '[')
            depth++;
        else if (c == ']' && --depth == 0)
            return k + 1 == n;
        else if (c == '{' || c == '}' || c == ':' || depth <= 0)
            return false;
    }
    return false;
}

/* An annotation's value as JSON: a number, a string, or JSON kept as it is
 * (Input Dims, Input type) when it is a plain array, else as a string. */
static void note_value(preader *r, opprof__strbuf *sb, const annotation *a, bool raw) {
    if (a->type == NOTE_STRING && raw && plain_array(a->s, a->s_len)) {
        opprof__sb_put(sb, (const char *)a->s, a->s_len);
    } else if (a->type == NOTE_STRING) {
        json_bytes(sb, a->s, a->s_len, &r->text);
    } else if (a->type == NOTE_DOUBLE) {
        double d;
        memcpy(&d, &a->value, sizeof d);
        opprof__sb_printf(sb, "%.17g", d == d && d < 1e308 && d > -1e308 ? d : 0);
    } else {
        opprof__sb_int(sb, (int64_t)a->value);
    }
}

/* "ts" in microseconds from the capture's start, as the JSON writer prints it. */
static void place(preader *r, opprof__strbuf *sb, const track *t, int64_t ts) {
    opprof__sb_printf(sb, ",\"pid\":%" PRId64, pid_of(r, t));
    if (t) opprof__sb_printf(sb, ",\"tid\":%" PRId64, t->tid);
    opprof__sb_puts(sb, ",\"ts\":");
    opprof__sb_us(sb, ts - r->origin);
}

static void sep(preader *r) {
    opprof__sb_puts(&r->events, r->first_event ? "\n  " : ",\n  ");
    r->first_event = false;
}

/* A begin: the event's JSON up to its "dur", kept until its end. */
static int slice_begin(preader *r, track *t, const event *e, int64_t ts) {
    if (t->depth == MAX_OPEN) return fail(r, "slices nested deeper than 4096 on one track");
    if (opprof__grow((void **)&t->open, &t->cap_open, t->n_open + 1, sizeof *t->open)) return OPPROF_ENOMEM;
    opprof__strbuf *out = &t->pending;
    size_t at = out->len;
    opprof__sb_puts(out, "{\"ph\":\"X\",\"cat\":\"");
    for (int k = 0; k < e->n_categories; k++) {
        uint64_t c = e->categories[k];
        size_t category_len = 0;
        const char *category = iid_text(r, &r->categories, c, &category_len);
        if (!category) return fail(r, "an event's category iid was never interned");
        if (k) opprof__sb_puts(out, ",");
        r->text.len = 0;
        opprof__sb_put(&r->text, category, category_len);
        size_t q = out->len; /* escaped in place, its quotes taken off: "cat": "a,b" */
        opprof__sb_json_string(out, r->text.data ? r->text.data : "");
        if (!out->error && out->len >= q + 2) {
            memmove(out->data + q, out->data + q + 1, out->len - q - 2);
            out->len -= 2;
            out->data[out->len] = '\0';
        }
    }
    opprof__sb_puts(out, "\",\"name\":");
    json_bytes(out, e->name ? e->name : (const uint8_t *)"", e->name_len, &r->text);
    place(r, out, t, ts);
    begun *b = &t->open[t->n_open++];
    *b = (begun){at, out->len - at, t->top, ts, 0, false};
    t->top = t->n_open;
    t->depth++;
    r->open_slices++;
    /* the args wait for the end, in the pending text after the head: they follow "dur" */
    for (int k = 0; k < e->n_notes; k++) {
        const annotation *a = &e->notes[k];
        opprof__sb_puts(out, k ? "," : "");
        r->text.len = 0;
        opprof__sb_put(&r->text, a->name, a->name_len);
        opprof__sb_json_string(out, r->text.data);
        opprof__sb_puts(out, ":");
        bool raw = named(a, OPPROF__PFTRACE_NOTE_TEXT[NOTE_DIMS]) || named(a, OPPROF__PFTRACE_NOTE_TEXT[NOTE_TYPES]);
        note_value(r, out, a, raw);
    }
    return out->error ? OPPROF_ENOMEM : 0;
}

/* A slice that ended, to the events: head, "dur", args. */
static void slice_out(preader *r, const track *t, size_t k) {
    const begun *b = &t->open[k];
    sep(r);
    opprof__sb_put(&r->events, t->pending.data + b->json, b->len);
    opprof__sb_puts(&r->events, ",\"dur\":");
    opprof__sb_us(&r->events, b->dur);
    size_t from = b->json + b->len, to = k + 1 < t->n_open ? t->open[k + 1].json : t->pending.len;
    if (to > from) {
        opprof__sb_puts(&r->events, ",\"args\":{");
        opprof__sb_put(&r->events, t->pending.data + from, to - from);
        opprof__sb_puts(&r->events, "}");
    }
    opprof__sb_puts(&r->events, "}");
}

/* An end: of the innermost slice open on the track. It goes out, and the
 * ones waiting above it (its children that began with their parent, in the
 * order they began), unless it too began with the slice around it. Each
 * slice knows its parent: an end costs the slices it sends out, not those
 * waiting below it. */
static int slice_end(preader *r, track *t, int64_t ts) {
    if (!t->top) return fail(r, "a slice's end with no begin open on its track");
    size_t k = t->top - 1;
    begun *b = &t->open[k];
    b->dur = ts - b->ts;
    b->ended = true;
    t->top = b->below;
    t->depth--;
    r->open_slices--;
    if (b->below && t->open[b->below - 1].ts == b->ts) return 0; /* it waits for its parent */
    for (size_t j = k; j < t->n_open; j++) slice_out(r, t, j);
    t->pending.len = b->json;
    t->n_open = k;
    if (r->events.len > (1u << 20)) flush(r, &r->events);
    return 0;
}

/* A memory sample: Kineto's [memory] instant, as the JSON writer gives it.
 * Its thread is the sample before's when it names none, its bytes the
 * change of its track's total when it says none, its address the value of
 * the extra counter track that the defaults name (perfetto_writer.c). */
static int memory_event(preader *r, track *t, const event *e, int64_t ts) {
    int64_t thread = note_int(e, OPPROF__PFTRACE_NOTE_TEXT[NOTE_THREAD], r->memory_thread), bytes;
    if (thread < 0) return fail(r, "a memory sample without its thread");
    if (!e->has_extra || !r->default_extra)
        return fail(r,
                    "a memory sample without its address (a value of the extra counter track that the defaults name)");
    r->memory_thread = thread;
    if (note(e, OPPROF__PFTRACE_NOTE_TEXT[NOTE_BYTES]))
        bytes = note_int(e, OPPROF__PFTRACE_NOTE_TEXT[NOTE_BYTES], 0);
    else if (__builtin_sub_overflow(e->counter, t->total, &bytes))
        return fail(r, "a memory sample without its bytes, whose total's change is past 2^63");
    t->total = e->counter;
    const track *th = thread_track(r, thread);
    if (!th) return fail(r, "a memory sample on a thread no descriptor named");
    int device_type = MEMORY_UUID_TYPE(t->uuid), device_id = MEMORY_UUID_ID(t->uuid);
    sep(r);
    opprof__sb_puts(&r->events, "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\"");
    place(r, &r->events, th, ts);
    opprof__sb_printf(&r->events,
                      ",\"args\":{\"Device Type\":%d,\"Device Id\":%d,\"Addr\":%" PRId64 ",\"Bytes\":%" PRId64
                      ",\"Total Allocated\":%" PRId64 ",\"Total Reserved\":%" PRId64 "}}",
                      device_type, device_id, e->extra, bytes, e->counter, e->counter);
    return 0;
}

static void mark_head(preader *r, const char *ph, const char *cat, const event *e) {
    sep(r);
    opprof__sb_printf(&r->events, "{\"ph\":\"%s\",\"cat\":\"%s\"", ph, cat);
    if (!strcmp(ph, "i")) {
        static const char *const scopes[] = {"t", "p", "g"};
        int64_t s = note_int(e, OPPROF__PFTRACE_NOTE_TEXT[NOTE_SCOPE], 0);
        opprof__sb_printf(&r->events, ",\"s\":\"%s\"", scopes[s >= 0 && s <= 2 ? s : 0]);
    }
    if (!strcmp(ph, "f")) opprof__sb_puts(&r->events, ",\"bp\":\"e\"");
    opprof__sb_puts(&r->events, ",\"name\":");
    json_bytes(&r->events, e->name ? e->name : (const uint8_t *)"", e->name_len, &r->text);
}

/* The thread of an async edge (its annotation), else none. */
static const track *async_thread(preader *r, const event *e) {
    return thread_track(r, note_int(e, OPPROF__PFTRACE_NOTE_TEXT[NOTE_THREAD], 0));
}

static int mark(preader *r, const track *t, const event *e, int64_t ts) {
    if (t->kind == TRACK_COUNTER_OF && (e->has_dcounter || e->has_counter)) {
        mark_head(r, "C", "counter",
                  e->name ? e : &(event){.name = (const uint8_t *)t->name, .name_len = strlen(t->name)});
        place(r, &r->events, NULL, ts);
        opprof__sb_puts(&r->events, ",\"args\":{");
        r->text.len = 0;
        opprof__sb_puts(&r->text, t->name);
        opprof__sb_json_string(&r->events, r->text.data);
        opprof__sb_printf(&r->events, ":%.17g}}", e->has_dcounter ? e->dcounter : (double)e->counter);
        return 0;
    }
    if (t->kind == TRACK_ASYNC) {
        mark_head(r, e->type == SLICE_BEGIN ? "b" : "e", "async", e);
        opprof__sb_printf(&r->events, ",\"id\":%" PRId64, (int64_t)(t->uuid & ((UINT64_C(1) << 40) - 1)));
        place(r, &r->events, async_thread(r, e), ts);
        opprof__sb_puts(&r->events, "}");
        return 0;
    }
    if (t->kind == TRACK_OF_THREAD && e->type == INSTANT) {
        bool step = e->has_flow && note_int(e, OPPROF__PFTRACE_NOTE_TEXT[NOTE_FLOW_STEP], 0) == 1;
        const char *ph = step ? "t" : e->has_flow ? "s" : e->has_end_flow ? "f" : "i";
        mark_head(r, ph, e->has_flow || e->has_end_flow ? "flow" : "instant", e);
        if (e->has_flow || e->has_end_flow)
            opprof__sb_printf(&r->events, ",\"id\":%" PRId64, (int64_t)(e->has_flow ? e->flow : e->end_flow));
        place(r, &r->events, t, ts);
        opprof__sb_puts(&r->events, "}");
        return 0;
    }
    return fail(r, "an event of a kind opprof does not write");
}

/* ---- the facts and the document ---- */

/* The C++ names the capture demangled: its "demangled" and "mangled"
 * annotations in pairs, as opprof_mangled_names. */
static int mangled_names(preader *r, opprof__strbuf *head, const event *e) {
    int pairs = 0;
    for (int k = 0; k < e->n_notes; k++) {
        const annotation *a = &e->notes[k], *b = k + 1 < e->n_notes ? &e->notes[k + 1] : NULL;
        if (!named(a, OPPROF__PFTRACE_NOTE_TEXT[NOTE_DEMANGLED])) continue;
        if (!b || !named(b, OPPROF__PFTRACE_NOTE_TEXT[NOTE_MANGLED]) || a->type != NOTE_STRING ||
            b->type != NOTE_STRING)
            return fail(r, "the capture's facts have a demangled name without its mangled one after it");
        opprof__sb_puts(head, pairs++ ? ", [" : ",\n  \"opprof_mangled_names\": [[");
        json_bytes(head, a->s, a->s_len, &r->text);
        opprof__sb_puts(head, ", ");
        json_bytes(head, b->s, b->s_len, &r->text);
        opprof__sb_puts(head, "]");
    }
    if (pairs) opprof__sb_puts(head, "]");
    return 0;
}

/* The machine the capture ran on (its profile's JSON as an annotation):
 * read as a profile and written as one, or refused. */
static int machine_of(preader *r, opprof__strbuf *head, const annotation *a) {
    if (!a) return 0;
    if (a->type != NOTE_STRING) return fail(r, "the capture's opprof_machine is no string");
    opprof__json j = {0};
    opprof_read_error err = {0};
    opprof_machine m;
    j.err = &err;
    int rc = opprof__json_open_buffer(&j, a->s, a->s_len, NULL);
    if (!rc) rc = opprof__machine_parse(&j, &m);
    if (!rc && opprof__json_skip_ws(&j) != -1) rc = opprof__json_fail_at(&j, OPPROF__JSON_HERE(&j), "text after it");
    opprof__json_close(&j);
    if (rc == OPPROF_ENOMEM) return rc;
    if (rc) {
        char what[180];
        snprintf(what, sizeof what, "the capture's machine profile, byte %lld: %.100s", (long long)err.offset,
                 err.message);
        return fail(r, what);
    }
    char *text = NULL;
    if (opprof_machine_json_to_string(&m, &text)) return OPPROF_ENOMEM;
    size_t len = strlen(text);
    while (len && text[len - 1] == '\n') len--;
    opprof__sb_puts(head, ",\n  \"opprof_machine\": ");
    opprof__sb_put(head, text, len);
    opprof_free(text);
    return 0;
}

static int facts(preader *r, const event *e) {
    static const char *const numbers[] = {"step_num", "dropped_events", "profile_memory", "process_peak_rss_bytes",
                                          "opprof_unended_ns"};
    opprof__strbuf head = {0};
    r->facts = true;
    r->origin = note_int(e, "time_origin", 0);
    r->sample_period_ns = note_int(e, "sample_period_ns", 0);
    r->samples_lost = note_int(e, "samples_lost", 0);
    r->off_cpu = note_int(e, "off_cpu", 0) != 0;
    r->pid = note_int(e, "pid", 0);
    opprof__sb_printf(&head, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n  \"opprof_version\": ");
    const annotation *v = note(e, "opprof_version");
    if (v && v->type == NOTE_STRING)
        json_bytes(&head, v->s, v->s_len, &r->text);
    else
        opprof__sb_puts(&head, "\"\"");
    for (size_t k = 0; k < sizeof numbers / sizeof *numbers; k++)
        opprof__sb_printf(&head, ",\n  \"%s\": %" PRId64, numbers[k], note_int(e, numbers[k], k ? 0 : -1));
    for (int k = 0; k < e->n_notes; k++) {
        const annotation *a = &e->notes[k];
        if (a->type == NOTE_DOUBLE) { /* its name escaped: a name of the file's own is no key of the JSON */
            opprof__sb_puts(&head, ",\n  ");
            json_bytes(&head, (const uint8_t *)a->name, a->name_len, &r->text);
            opprof__sb_puts(&head, ": ");
            note_value(r, &head, a, false);
        }
    }
    static const struct {
        int note;
        const char *key;
    } said[] = {
        {NOTE_DEVICE_NAME, "opprof_device_name"}, {NOTE_READ_FROM, "opprof_read_from"}, {NOTE_HOST_NAME, "host_name"}};
    for (size_t k = 0; k < sizeof said / sizeof *said; k++) {
        const annotation *a = note(e, OPPROF__PFTRACE_NOTE_TEXT[said[k].note]);
        if (!a || a->type != NOTE_STRING) continue;
        opprof__sb_printf(&head, ",\n  \"%s\": ", said[k].key);
        json_bytes(&head, a->s, a->s_len, &r->text);
    }
    int rc = mangled_names(r, &head, e);
    if (!rc) rc = machine_of(r, &head, note(e, OPPROF__PFTRACE_NOTE_TEXT[NOTE_MACHINE]));
    const annotation *backend = note(e, "rank_backend");
    if (backend && backend->type == NOTE_STRING) {
        opprof__sb_puts(&head, ",\n  \"distributedInfo\": {\"backend\": ");
        json_bytes(&head, backend->s, backend->s_len, &r->text);
        opprof__sb_printf(&head,
                          ", \"rank\": %" PRId64 ", \"world_size\": %" PRId64 ", \"clock_offset_ns\": %" PRId64
                          ", \"clock_uncertainty_ns\": %" PRId64 "}",
                          note_int(e, "rank", 0), note_int(e, "world_size", 0), note_int(e, "clock_offset_ns", 0),
                          note_int(e, "clock_uncertainty_ns", 0));
    }
    const annotation *flight = note(e, "flight_reason");
    if (flight && flight->type == NOTE_STRING) {
        opprof__sb_puts(&head, ",\n  \"opprof_flight\": {\"reason\": ");
        json_bytes(&head, flight->s, flight->s_len, &r->text);
#define FLIGHT_NUMBER(name) opprof__sb_printf(&head, ", \"" #name "\": %" PRId64, note_int(e, "flight_" #name, 0));
        OPPROF__FLIGHT_NUMBERS(FLIGHT_NUMBER)
#undef FLIGHT_NUMBER
        opprof__sb_puts(&head, "}");
    }
    opprof__sb_puts(&head, ",\n  \"warnings\": [");
    int w = 0;
    for (int k = 0; k < e->n_notes; k++)
        if (named(&e->notes[k], OPPROF__PFTRACE_NOTE_TEXT[NOTE_WARNING]) && e->notes[k].type == NOTE_STRING) {
            opprof__sb_puts(&head, w++ ? ", " : "");
            json_bytes(&head, e->notes[k].s, e->notes[k].s_len, &r->text);
        }
    opprof__sb_printf(&head, "],\n  \"baseTimeNanoseconds\": %" PRId64 ",\n  \"traceEvents\": [",
                      note_int(e, "base_time_ns", 0));
    flush(r, &head);
    opprof__sb_free(&head);
    metadata(r);
    return rc;
}

/* A thread's off-CPU counter: out (1, 2 when preempted), then back (0): an interval. */
static int off_cpu_edge(preader *r, track *t, const event *e, int64_t ts) {
    if (!e->has_counter) return fail(r, "an off-CPU edge without its value");
    if (e->counter) {
        t->off_since = ts;
        t->preempted = e->counter == 2;
        return 0;
    }
    if (t->off_since < 0) return fail(r, "an off-CPU edge back without one out");
    opprof__sb_printf(&r->offs, "%s\n    {\"preempted\":%d", r->offs.len ? "," : "", t->preempted);
    place(r, &r->offs, t, t->off_since);
    opprof__sb_puts(&r->offs, ",\"dur\":");
    opprof__sb_us(&r->offs, ts - t->off_since);
    opprof__sb_puts(&r->offs, "}");
    t->off_since = -1;
    return 0;
}

static int track_event(preader *r, const uint8_t *p, size_t len, int64_t ts) {
    event *e = opprof__alloc(sizeof *e);
    if (!e) return OPPROF_ENOMEM;
    int rc = event_of(r, p, len, e);
    if (!rc && !e->track) e->track = r->default_track; /* none named: the sequence's default */
    track *t = rc ? NULL : find_track(r, e->track);
    if (!rc && !t) rc = fail(r, "an event on a track that no descriptor named before it");
    if (!rc && e->type == INSTANT && e->name_len == sizeof FACTS_EVENT - 1 &&
        !memcmp(e->name, FACTS_EVENT, e->name_len)) {
        rc = facts(r, e);
    } else if (!rc && !r->facts) {
        rc = fail(r, "an event before the capture's facts (no .pftrace of opprof's)");
    } else if (!rc && t->kind == TRACK_OF_THREAD && e->type == SLICE_BEGIN) {
        rc = slice_begin(r, t, e, ts);
    } else if (!rc && t->kind == TRACK_OF_THREAD && e->type == SLICE_END) {
        rc = slice_end(r, t, ts);
    } else if (!rc && t->kind == TRACK_MEMORY && e->type == COUNTER) {
        rc = memory_event(r, t, e, ts);
    } else if (!rc && t->kind == TRACK_OFF_CPU && e->type == COUNTER) {
        rc = off_cpu_edge(r, t, e, ts);
    } else if (!rc) {
        rc = mark(r, t, e, ts);
    }
    opprof__free(e);
    return rc;
}

/* TracePacketDefaults: the sequence's timestamp clock, its default track
 * (track_event_defaults, 11: track_uuid, 11) and its first extra counter
 * track (... extra_counter_track_uuids, 31). */
static int packet_defaults(preader *r, const uint8_t *p, size_t len) {
    const uint8_t *end = p + len;
    opprof__pb_field f;
    int got;
    while ((got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.number == DEFAULTS_CLOCK && f.wire == OPPROF__PB_VARINT) r->default_clock = (uint32_t)f.value;
        if (f.number != DEFAULTS_TRACK_EVENT || f.wire != OPPROF__PB_BYTES) continue;
        const uint8_t *q = f.data, *qe = f.data + f.len;
        opprof__pb_field d;
        int got_d;
        while ((got_d = opprof__pb_next(&q, qe, &d)) > 0)
            if (d.number == TRACK_EVENT_DEFAULT_TRACK && d.wire == OPPROF__PB_VARINT)
                r->default_track = d.value;
            else if (d.number == TRACK_EVENT_DEFAULT_EXTRA_COUNTERS && d.wire == OPPROF__PB_VARINT && !r->default_extra)
                r->default_extra = d.value;
        if (got_d < 0) return fail(r, "track_event_defaults that are no protobuf");
    }
    return got < 0 ? fail(r, "trace_packet_defaults that are no protobuf") : 0;
}

/* A ClockSnapshot: the delta clock (64, incremental) and BOOTTIME (6) at one instant. */
static int clock_snapshot(preader *r, const uint8_t *p, size_t len) {
    const uint8_t *end = p + len;
    opprof__pb_field f;
    int got;
    int64_t delta = 0, boot = 0;
    bool have_delta = false, have_boot = false;
    while ((got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.number != SNAPSHOT_CLOCK || f.wire != OPPROF__PB_BYTES) continue;
        uint64_t id = 0, ts = 0;
        const uint8_t *q = f.data, *qe = f.data + f.len;
        opprof__pb_field c;
        int got_c;
        while ((got_c = opprof__pb_next(&q, qe, &c)) > 0) {
            if (c.number == CLOCK_ID && c.wire == OPPROF__PB_VARINT) id = c.value;
            if (c.number == CLOCK_TIMESTAMP && c.wire == OPPROF__PB_VARINT) ts = c.value;
        }
        if (got_c < 0 || ts > (uint64_t)INT64_MAX)
            return fail(r, "a clock of a clock snapshot that is no {clock_id, timestamp}");
        if (id == CLOCK_DELTAS) delta = (int64_t)ts, have_delta = true;
        if (id == CLOCK_BOOTTIME) boot = (int64_t)ts, have_boot = true;
    }
    if (got < 0) return fail(r, "a clock snapshot that is no protobuf");
    if (have_delta != have_boot)
        return fail(r, "a clock snapshot with the delta clock (64) without BOOTTIME (6), or the other way");
    if (have_delta) {
        r->delta_known = true;
        r->delta_at = delta;
        r->delta_to_boot = boot - delta;
    }
    return 0;
}

/* A packet's time on BOOTTIME: its timestamp on its clock (its own, the
 * sequence's default, else BOOTTIME); on the delta clock, the delta from the
 * packet before. */
static int packet_time(preader *r, uint64_t ts, uint32_t clock, int64_t *out) {
    if (!clock) clock = r->default_clock ? r->default_clock : CLOCK_BOOTTIME;
    if (clock == CLOCK_BOOTTIME) {
        if (ts > (uint64_t)INT64_MAX) return fail(r, "a timestamp past 2^63");
        *out = (int64_t)ts;
        return 0;
    }
    if (clock != CLOCK_DELTAS)
        return fail(r, "a timestamp on a clock other than BOOTTIME (6) and the delta clock (64)");
    if (!r->delta_known) return fail(r, "a timestamp on the delta clock before a clock snapshot set it");
    if (ts > (uint64_t)INT64_MAX || __builtin_add_overflow(r->delta_at, (int64_t)ts, &r->delta_at) ||
        __builtin_add_overflow(r->delta_at, r->delta_to_boot, out))
        return fail(r, "a timestamp delta that takes the clock past 2^63");
    return 0;
}

static int packet(preader *r, const uint8_t *p, size_t len) {
    const uint8_t *end = p + len, *ev = NULL, *sample = NULL;
    size_t ev_len = 0, sample_len = 0;
    uint64_t raw_ts = 0;
    uint32_t clock = 0;
    bool timed = false;
    opprof__pb_field f;
    int got, rc = 0;
    while (!rc && (got = opprof__pb_next(&p, end, &f)) > 0) {
        if (f.number == PACKET_TIMESTAMP && f.wire == OPPROF__PB_VARINT) raw_ts = f.value, timed = true;
        if (f.number == PACKET_TIMESTAMP_CLOCK && f.wire == OPPROF__PB_VARINT) clock = (uint32_t)f.value;
        if (f.number == PACKET_DEFAULTS && f.wire == OPPROF__PB_BYTES) rc = packet_defaults(r, f.data, f.len);
        if (f.number == PACKET_CLOCK_SNAPSHOT && f.wire == OPPROF__PB_BYTES) rc = clock_snapshot(r, f.data, f.len);
        if (f.number == PACKET_INTERNED && f.wire == OPPROF__PB_BYTES) rc = interned_data(r, f.data, f.len);
        if (f.number == PACKET_TRACK_DESCRIPTOR && f.wire == OPPROF__PB_BYTES) rc = track_descriptor(r, f.data, f.len);
        if (f.number == PACKET_TRACK_EVENT && f.wire == OPPROF__PB_BYTES) ev = f.data, ev_len = f.len;
        if (f.number == PACKET_PERF_SAMPLE && f.wire == OPPROF__PB_BYTES) sample = f.data, sample_len = f.len;
    }
    if (!rc && got < 0) rc = fail(r, "a packet that is no protobuf");
    int64_t ts = 0;
    if (!rc && timed) rc = packet_time(r, raw_ts, clock, &ts);
    if (!rc && ev) rc = track_event(r, ev, ev_len, ts);
    if (!rc && sample) rc = perf_sample(r, sample, sample_len, ts);
    return rc;
}

/* At least `need` bytes in the window from win_pos, unless the trace ends first. */
static int fill(preader *r, size_t need) {
    if (r->win_len - r->win_pos >= need || r->eof) return 0;
    if (r->win_pos) { /* what was decoded goes */
        memmove(r->win, r->win + r->win_pos, r->win_len - r->win_pos);
        r->win_base += r->win_pos;
        r->win_len -= r->win_pos;
        r->win_pos = 0;
    }
    if (need > r->win_cap) {
        size_t cap = need < WINDOW ? WINDOW : need;
        uint8_t *grown = opprof__realloc(r->win, cap);
        if (!grown) return OPPROF_ENOMEM;
        r->win = grown, r->win_cap = cap;
    }
    while (r->win_len < need && !r->eof) {
        int got = r->read(r->read_ctx, r->win + r->win_len, r->win_cap - r->win_len);
        if (got < 0) return got;
        r->eof = got == 0;
        r->win_len += (size_t)got;
    }
    return 0;
}

/* The next packet in the window (*data NULL and rc 0 at the trace's end): a
 * packet is read whole, up to MAX_PACKET bytes. */
static int next_packet(preader *r, const uint8_t **data, size_t *len) {
    *data = NULL, *len = 0;
    int rc = fill(r, 20); /* a tag and a length, each a varint of up to 10 bytes */
    if (rc || r->win_pos == r->win_len) return rc;
    r->offset = r->win_base + r->win_pos;
    r->packet++;
    const uint8_t *p = r->win + r->win_pos, *end = r->win + r->win_len;
    uint64_t key, n;
    if (!opprof__pb_read_varint(&p, end, &key) ||
        ((key & 7) == OPPROF__PB_BYTES && !opprof__pb_read_varint(&p, end, &n)))
        return fail(r, "bytes that are no protobuf (a Trace of TracePackets)");
    if (key >> 3 != TRACE_PACKET || (key & 7) != OPPROF__PB_BYTES) return fail(r, "a field of Trace that is no packet");
    if (n > MAX_PACKET) {
        char what[120];
        snprintf(what, sizeof what, "a packet of %" PRIu64 " bytes, more than the %d MiB opprof reads in one", n,
                 MAX_PACKET >> 20);
        return fail(r, what);
    }
    size_t head = (size_t)(p - (r->win + r->win_pos));
    if ((rc = fill(r, head + (size_t)n))) return rc;
    if (r->win_len - r->win_pos < head + n)
        return fail(r, "bytes that are no protobuf (a Trace of TracePackets): it ends inside a packet");
    *data = r->win + r->win_pos + head;
    *len = (size_t)n;
    r->win_pos += head + (size_t)n;
    return 0;
}

/* The trace's JSON, the same capture's as the JSON writer's, given to emit
 * piece by piece in order. */
int opprof__perfetto_translate(opprof__read_fn read, void *read_ctx,
                               int (*emit)(void *ctx, const char *data, size_t len), void *ctx, char *why,
                               size_t why_size) {
    preader r = {
        .first_event = true, .emit = emit, .emit_ctx = ctx, .memory_thread = -1, .read = read, .read_ctx = read_ctx};
    int rc = 0;
    while (!rc && !r.emit_error) {
        const uint8_t *data = NULL;
        size_t len = 0;
        if ((rc = next_packet(&r, &data, &len)) || !data) break; /* an error, or the end */
        rc = packet(&r, data, len);
    }
    if (!rc && r.emit_error) rc = r.emit_error; /* the reader stopped: what is left unsent is no fault of the trace */
    if (!rc && r.open_slices) rc = fail(&r, "a slice never ended");
    if (!rc && !r.facts) rc = fail(&r, "no 'opprof capture' facts: not a trace that opprof wrote");
    if (!rc) {
        opprof__sb_puts(&r.events, "\n  ]");
        rc = samples_out(&r, &r.events);
        opprof__sb_puts(&r.events, "\n}\n");
        flush(&r, &r.events);
        if (r.text.error) rc = OPPROF_ENOMEM;
    }
    if (!rc && r.emit_error) rc = r.emit_error;
    if (rc && why) snprintf(why, why_size, "%s", rc == OPPROF_EFORMAT ? r.why : opprof_strerror(rc));
    opprof__sb_free(&r.events);
    opprof__sb_free(&r.text);
    iid_table *tables[] = {&r.names, &r.categories, &r.notes, &r.functions, &r.paths, &r.frames, &r.stacks};
    for (size_t k = 0; k < sizeof tables / sizeof *tables; k++) iid_free(tables[k]);
    opprof__sb_free(&r.interned);
    for (size_t k = 0; k < r.n_tracks; k++) {
        opprof__free(r.tracks[k].open);
        opprof__sb_free(&r.tracks[k].pending);
    }
    opprof__free(r.tracks);
    opprof__index_free(&r.track_index);
    opprof__free(r.stack_frames);
    opprof__sb_free(&r.samples);
    opprof__sb_free(&r.offs);
    opprof__free(r.note_buf);
    opprof__free(r.win);
    return rc;
}

static int append(void *ctx, const char *data, size_t len) {
    opprof__sb_put(ctx, data, len);
    return ((opprof__strbuf *)ctx)->error;
}

typedef struct memory_source {
    const uint8_t *data;
    size_t len, pos;
} memory_source;

static int read_memory(void *ctx, void *buf, size_t len) {
    memory_source *m = ctx;
    size_t n = m->len - m->pos < len ? m->len - m->pos : len;
    if (n > INT32_MAX) n = INT32_MAX;
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return (int)n;
}

int opprof__perfetto_to_json(const void *data, size_t len, opprof__strbuf *json, char *why, size_t why_size) {
    memory_source m = {data, len, 0};
    return opprof__perfetto_translate(read_memory, &m, append, json, why, why_size);
}
