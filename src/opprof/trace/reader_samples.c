/* reader_samples.c - samples in a trace, as the trace-event format writes
 * them: "stackFrames" (id -> {"name", "parent"}, and opprof's
 * "opprof_source": "file:line") and "samples" ({"pid",
 * "tid", "ts", "sf"}), in either order; and opprof's own "opprof_off_cpu"
 * ({"pid", "tid", "ts", "dur", "preempted"}) and "opprof_sampling". The
 * samples wait until the document is read, then each one's frames are its
 * "sf" and its parents, innermost first. */
#include "trace/reader_state.h"

#include <stdio.h>
#include <string.h>

enum { MAX_DEPTH = 4096 };

typedef struct frame {
    char *id, *name, *parent; /* parent NULL: a root */
    char *source;             /* opprof's "opprof_source": "file:line", or NULL */
    /* at the end, each interned once (NOT_YET until then): so that a sample costs a
     * lookup, not its depth times its names' lengths */
    uint32_t name_id, source_id, stack;
} frame;

enum { NOT_YET = UINT32_MAX - 1 };

typedef struct pending {
    int64_t pid, tid, ts;
    bool no_pid; /* the trace-event format's samples may give only "tid" (a thread's of any process) */
    char *sf;    /* NULL: no stack */
} pending;

struct sample_reader {
    frame *frames;
    size_t n_frames, cap_frames;
    opprof__index frame_index;
    pending *samples;
    size_t n_samples, cap_samples;
    uint32_t ids[MAX_DEPTH], where[MAX_DEPTH]; /* a stack being interned */
};

static uint64_t frame_hash_of(const void *ctx, uint32_t item) {
    const char *id = ((const frame *)ctx)[item].id;
    return opprof__hash_bytes(id, strlen(id));
}

static bool frame_equal(const void *ctx, uint32_t item, const void *key) {
    return strcmp(((const frame *)ctx)[item].id, key) == 0;
}

static struct sample_reader *state(parser *p) {
    if (!p->samples) p->samples = opprof__calloc(1, sizeof *p->samples);
    return p->samples;
}

/* A string or a number as text (frame ids are either). */
static int id_text(parser *p, char **out) {
    int c = opprof__json_skip_ws(&p->lx);
    char buf[32];
    const char *text = buf;
    size_t len;
    if (c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        text = p->lx.s;
        len = p->lx.s_len;
    } else {
        opprof__json_number v;
        if (opprof__json_parse_number(&p->lx, &v) || !v.is_int)
            return FAIL(p, "a frame id is not a string or a whole number");
        len = (size_t)snprintf(buf, sizeof buf, "%lld", (long long)v.as_int);
    }
    *out = opprof__alloc(len + 1);
    if (!*out) return opprof__reader_no_memory(p, "frames");
    memcpy(*out, text, len);
    (*out)[len] = '\0';
    return 0;
}

/* ---- "stackFrames" ---- */

static int on_frame_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    frame *f = ctx;
    if (KEY_IS(k, n, "parent")) return opprof__free(f->parent), f->parent = NULL, id_text(p, &f->parent);
    bool name = KEY_IS(k, n, "name"), source = KEY_IS(k, n, "opprof_source");
    if ((name || source) && opprof__json_skip_ws(&p->lx) == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        char **to = name ? &f->name : &f->source;
        opprof__free(*to);
        *to = opprof__alloc(p->lx.s_len + 1);
        if (!*to) return opprof__reader_no_memory(p, "frames");
        memcpy(*to, p->lx.s, p->lx.s_len + 1);
        return 0;
    }
    return opprof__json_skip(&p->lx);
}

static int on_frame(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    struct sample_reader *s = ctx;
    if (opprof__json_skip_ws(&p->lx) != '{') return FAIL(p, "stackFrames: frame '%.*s' is not an object", (int)n, k);
    frame f = {0};
    if (!(f.id = opprof__alloc(n + 1))) return opprof__reader_no_memory(p, "frames");
    memcpy(f.id, k, n);
    f.id[n] = '\0';
    size_t slot = 0;
    int64_t found = opprof__index_lookup(&s->frame_index, s->n_frames, frame_hash_of, frame_equal, s->frames,
                                         opprof__hash_bytes(f.id, n), f.id, &slot);
    int rc = found < 0 || opprof__grow((void **)&s->frames, &s->cap_frames, s->n_frames + 1, sizeof *s->frames)
                 ? opprof__reader_no_memory(p, "frames")
                 : opprof__json_object(&p->lx, on_frame_key, &f);
    if (!rc && found) rc = FAIL(p, "stackFrames: frame '%s' is given twice", f.id);
    if (!rc && !f.name) rc = FAIL(p, "stackFrames: frame '%s' has no name", f.id);
    if (rc) {
        opprof__free(f.id);
        opprof__free(f.name);
        opprof__free(f.parent);
        opprof__free(f.source);
        return rc;
    }
    s->frames[s->n_frames] = f;
    s->frame_index.slots[slot] = (uint32_t)++s->n_frames;
    return 0;
}

/* ---- "samples" ---- */

static int number_of(parser *p, int64_t *out, bool micros) {
    opprof__json_number v;
    if (micros) {
        int c = opprof__json_skip_ws(&p->lx);
        if (c == '"') { /* "ts": "1234.5", as the trace-event format's own samples may write it */
            if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
            if (opprof__micros_to_ns(p->lx.s, p->lx.s_len, out) || !opprof__time_in_range(*out))
                return FAIL(p, "a sample's or off-CPU time's \"ts\" or \"dur\" is a string that holds no time");
            return 0;
        }
        if (c != '-' && (c < '0' || c > '9'))
            return FAIL(p, "a sample's or off-CPU time's \"ts\" or \"dur\" is not a number");
        if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
        if (!v.ns_ok || !opprof__time_in_range(v.ns))
            return FAIL(p, "a sample's or off-CPU time's \"ts\" or \"dur\" is not a time in microseconds");
        *out = v.ns;
        return 0;
    }
    if (opprof__json_parse_number(&p->lx, &v) || !v.is_int) return FAIL(p, "\"pid\" or \"tid\" is not a whole number");
    *out = v.as_int;
    return 0;
}

typedef struct timed {
    pending s;
    int64_t dur;
    int preempted;
    int have;
} timed;

static int on_timed_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    timed *t = ctx;
    if (KEY_IS(k, n, "pid")) return t->have |= 1, number_of(p, &t->s.pid, false);
    if (KEY_IS(k, n, "tid")) return t->have |= 2, number_of(p, &t->s.tid, false);
    if (KEY_IS(k, n, "ts")) return t->have |= 4, number_of(p, &t->s.ts, true);
    if (KEY_IS(k, n, "dur")) return t->have |= 8, number_of(p, &t->dur, true);
    if (KEY_IS(k, n, "sf"))
        return opprof__free(t->s.sf), t->s.sf = NULL, id_text(p, &t->s.sf); /* given twice: the last */
    if (KEY_IS(k, n, "preempted")) {
        int64_t v;
        int rc = number_of(p, &v, false);
        t->preempted = v != 0;
        return rc;
    }
    return opprof__json_skip(&p->lx);
}

static int on_sample(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    struct sample_reader *s = ctx;
    timed t = {0};
    (void)index;
    if (opprof__json_skip_ws(&p->lx) != '{') return opprof__json_skip(&p->lx); /* another format's "samples" */
    int rc = opprof__json_object(&p->lx, on_timed_key, &t);
    if (!rc && (t.have & 6) != 6) rc = FAIL(p, "samples: item %d lacks \"tid\" or \"ts\"", index);
    t.s.no_pid = !(t.have & 1);
    if (!rc && opprof__grow((void **)&s->samples, &s->cap_samples, s->n_samples + 1, sizeof *s->samples))
        rc = opprof__reader_no_memory(p, "samples");
    if (rc) {
        opprof__free(t.s.sf);
        return rc;
    }
    s->samples[s->n_samples++] = t.s;
    return 0;
}

/* ---- opprof's off-CPU times and sampling facts ---- */

static int on_off_cpu(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    (void)ctx;
    timed t = {0};
    if (opprof__json_skip_ws(&p->lx) != '{') return FAIL(p, "opprof_off_cpu: item %d is not an object", index);
    int rc = opprof__json_object(&p->lx, on_timed_key, &t);
    opprof__free(t.s.sf);
    if (rc) return rc;
    if (t.have != 15 || t.dur < 0)
        return FAIL(p, "opprof_off_cpu: item %d lacks \"pid\", \"tid\", \"ts\" or \"dur\"", index);
    uint32_t thread;
    if (opprof__reader_thread_of(p, t.s.pid, t.s.tid, &thread)) return OPPROF_EFORMAT;
    rc = opprof_capture_add_off_cpu(p->cap, thread, t.s.ts, t.dur, t.preempted);
    if (rc == OPPROF_ENOMEM) return opprof__reader_no_memory(p, "off-CPU times");
    return rc ? FAIL(p, "opprof_off_cpu: item %d is out of range", index) : 0;
}

static int on_sampling_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    opprof_capture_info *info = ctx;
    if (opprof__json_skip_ws(&p->lx) == '"' ||
        !(KEY_IS(k, n, "period_ns") || KEY_IS(k, n, "off_cpu") || KEY_IS(k, n, "samples_lost")))
        return opprof__json_skip(&p->lx);
    int64_t v;
    if (number_of(p, &v, false)) return OPPROF_EFORMAT;
    if (v < 0) return FAIL(p, "opprof_sampling: \"%.*s\" is negative", (int)n, k);
    if (KEY_IS(k, n, "period_ns")) info->sample_period_ns = v;
    if (KEY_IS(k, n, "off_cpu")) info->off_cpu = v != 0;
    if (KEY_IS(k, n, "samples_lost")) info->samples_lost = (uint64_t)v;
    return 0;
}

int opprof__reader_sample_key(parser *p, const char *k, size_t n) {
    int c = opprof__json_skip_ws(&p->lx);
    bool frames = KEY_IS(k, n, "stackFrames"), samples = KEY_IS(k, n, "samples");
    if ((frames && c == '{') || (samples && c == '[')) {
        struct sample_reader *s = state(p);
        if (!s) return opprof__reader_no_memory(p, "samples");
        return frames ? opprof__json_object(&p->lx, on_frame, s) : opprof__json_array(&p->lx, on_sample, s);
    }
    if (KEY_IS(k, n, "opprof_off_cpu") && c == '[') return opprof__json_array(&p->lx, on_off_cpu, NULL);
    if (KEY_IS(k, n, "opprof_sampling") && c == '{') return opprof__json_object(&p->lx, on_sampling_key, &p->cap->info);
    return 1;
}

/* ---- the end ---- */

/* The frame of an id (1-based), 0 when stackFrames lacks it, -1 out of memory. */
static int64_t frame_of(struct sample_reader *s, const char *id) {
    size_t slot = 0;
    return opprof__index_lookup(&s->frame_index, s->n_frames, frame_hash_of, frame_equal, s->frames,
                                opprof__hash_bytes(id, strlen(id)), id, &slot);
}

/* A leaf frame's stack: its frames and their parents interned once. */
static int stack_of(parser *p, struct sample_reader *s, frame *leaf, uint32_t *stack) {
    if (leaf->stack != NOT_YET) return *stack = leaf->stack, 0;
    uint32_t *ids = s->ids, *where = s->where;
    size_t n = 0;
    for (frame *f = leaf; f; n++) {
        if (n == MAX_DEPTH) return FAIL(p, "samples: a stack deeper than %d frames, or frames that loop", MAX_DEPTH);
        if (f->name_id == NOT_YET) {
            f->source_id = UINT32_MAX;
            if (opprof__capture_intern(p->cap, f->name, strlen(f->name), &f->name_id) ||
                (f->source && opprof__capture_intern(p->cap, f->source, strlen(f->source), &f->source_id)))
                return opprof__reader_no_memory(p, "samples");
        }
        ids[n] = f->name_id;
        where[n] = f->source_id;
        if (!f->parent) break;
        int64_t up = frame_of(s, f->parent);
        if (up < 0) return opprof__reader_no_memory(p, "samples");
        if (!up) return FAIL(p, "samples: frame '%s' is not in stackFrames", f->parent);
        f = &s->frames[up - 1];
    }
    if (opprof__capture_intern_stack(p->cap, ids, where, leaf ? n + 1 : 0, &leaf->stack))
        return opprof__reader_no_memory(p, "samples");
    return *stack = leaf->stack, 0;
}

static int resolve(parser *p, struct sample_reader *s, const pending *sm) {
    uint32_t stack = 0;
    if (sm->sf) {
        int64_t leaf = frame_of(s, sm->sf);
        if (leaf < 0) return opprof__reader_no_memory(p, "samples");
        if (!leaf) return FAIL(p, "samples: frame '%s' is not in stackFrames", sm->sf);
        if (stack_of(p, s, &s->frames[leaf - 1], &stack)) return OPPROF_EFORMAT;
    } else if (opprof__capture_intern_stack(p->cap, NULL, NULL, 0, &stack)) {
        return opprof__reader_no_memory(p, "samples");
    }
    uint32_t thread;
    int64_t pid = sm->pid;
    for (size_t i = 0; sm->no_pid && i < p->cap->n_threads; i++) /* only "tid": that thread's, in any process */
        if (p->cap->threads[i].tid == sm->tid) {
            pid = p->cap->threads[i].pid;
            break;
        }
    if (opprof__reader_thread_of(p, pid, sm->tid, &thread)) return OPPROF_EFORMAT;
    int rc = opprof__capture_add_sample_stack(p->cap, thread, sm->ts, stack);
    return rc == OPPROF_ENOMEM ? opprof__reader_no_memory(p, "samples")
           : rc                ? FAIL(p, "samples: a sample out of range")
                               : 0;
}

int opprof__reader_samples_finish(parser *p) {
    struct sample_reader *s = p->samples;
    int rc = 0;
    for (size_t i = 0; s && i < s->n_frames; i++) s->frames[i].name_id = s->frames[i].stack = NOT_YET;
    for (size_t i = 0; s && !rc && i < s->n_samples; i++) rc = resolve(p, s, &s->samples[i]);
    opprof__reader_samples_free(p);
    return rc;
}

void opprof__reader_samples_free(parser *p) {
    struct sample_reader *s = p->samples;
    if (!s) return;
    for (size_t i = 0; i < s->n_frames; i++) {
        opprof__free(s->frames[i].id);
        opprof__free(s->frames[i].name);
        opprof__free(s->frames[i].parent);
        opprof__free(s->frames[i].source);
    }
    for (size_t i = 0; i < s->n_samples; i++) opprof__free(s->samples[i].sf);
    opprof__free(s->frames);
    opprof__free(s->samples);
    opprof__index_free(&s->frame_index);
    opprof__free(s);
    p->samples = NULL;
}
