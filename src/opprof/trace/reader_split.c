/* reader_split.c - a large plain trace read on two threads. While this
 * thread reads the event array's first half, a second one reads the rest
 * into a capture of its own, which joins this one where the first half ends.
 *
 * The second thread guesses where an event starts past the middle (a '{'
 * after "}," and white space). The places it reports are the file's: it
 * counts the lines before its start when it first has one to say (a problem,
 * a "B"), and this thread counts them for the jump past the half otherwise.
 * The guess holds only if this thread, in
 * its own reading, starts an event at that very byte: a string that looks
 * like a boundary costs time, never a wrong result.
 *
 * The half's pids and tids written as strings are numbered apart (below
 * INT64_MIN / 2) and numbered again at the join, in the half's order.
 *
 * An "E" of the half with no "B" open on its thread in the half holds a
 * placeholder event; at the join it ends the "B" still open on that thread
 * here (B/E traces, uftrace's: their calls straddle the split), and the event
 * it makes takes the placeholder's place, as one thread would have added it.
 *
 * The second half is dropped, and this thread reads on past the split as it
 * would alone, when the half cannot stand on its own: an "E" that no "B" open
 * here ends (or that ends before it, or on a thread named by strings), a "B"
 * left open in the half, a CPU profile (its chunks pair across events), ONNX
 * Runtime's or TensorRT's rows (their runs count across the file), a
 * pid or tid written as a number below INT64_MIN / 4 (where its string ids
 * are), or an error of its own (this thread then finds it and says where).
 * So the capture, its warnings, the problems reported and their order, and
 * the errors are those that one thread gives: names, sites and threads even
 * get the same ids (capture/append.c interns the half's in its order). */
#define _GNU_SOURCE
#include "trace/reader_state.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

/* A trace smaller than this is read on one thread: starting the second and
 * counting lines would cost more than it saves. */
static const int64_t SPLIT_MIN_BYTES = 32 << 20;
/* How far past the middle an event's start is looked for. */
enum { SEARCH_BYTES = 1 << 20 };
/* Problems of the half held for this thread to report, at most this many
 * bytes of text: past it, the half is dropped (a hostile trace). */
enum { HELD_MAX_BYTES = 16 << 20 };

typedef struct held_problem {
    int64_t offset, line, column;
    bool assumed;
    char *message;
} held_problem;

struct split {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool known, done;            /* under lock: the start is known (or that there is none); the half is read */
    int64_t start;               /* where the half starts; -1: no event start was found */
    atomic_bool stop;            /* this thread no longer wants the half */
    int fd;                      /* the file, opened again (the half's lexer owns it once opened) */
    int64_t from, size;          /* where the search starts (the middle); the file's size */
    int depth;                   /* the lexer's depth at the array's events */
    parser half;                 /* the second thread's reader */
    opprof_read_options options; /* the reader's, its problems held */
    opprof_read_error error;
    held_problem *held;
    size_t n_held, cap_held, held_bytes;
    bool held_full;
    bool ok;                          /* the half was read to the array's end and can join */
    int64_t end, end_lines, end_last; /* the byte after the array, the newlines before it, the last one */
    const char **held_names;          /* by the half's name id: the "B" name a held end's placeholder stands for */
    bool end_counted;                 /* ... all of them; else those from the half's start on */
};

/* ---- the second thread ---- */

static void hold_problem(void *ctx, const opprof_trace_problem *pr) {
    split *s = ctx;
    size_t n = strlen(pr->message);
    if (s->held_full || s->held_bytes + n > HELD_MAX_BYTES ||
        opprof__grow((void **)&s->held, &s->cap_held, s->n_held + 1, sizeof *s->held)) {
        s->held_full = true;
        atomic_store(&s->stop, true);
        return;
    }
    char *copy = opprof__strdup(pr->message);
    if (!copy) {
        s->held_full = true;
        atomic_store(&s->stop, true);
        return;
    }
    s->held[s->n_held++] = (held_problem){pr->offset, pr->line, pr->column, pr->assumed, copy};
    s->held_bytes += n;
}

static bool is_space(unsigned char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* The first '{' after "}," (white space between) in the SEARCH_BYTES from
 * `from`: where an event may start. -1 when there is none. */
static int64_t find_start(int fd, int64_t from, int64_t size) {
    if (from >= size) return -1; /* the file is not the size it was */
    size_t want = size - from < SEARCH_BYTES ? (size_t)(size - from) : SEARCH_BYTES;
    unsigned char *b = opprof__alloc(want + 1);
    if (!b) return -1;
    ssize_t n;
    do n = pread(fd, b, want, (off_t)from);
    while (n < 0 && errno == EINTR);
    int64_t found = -1;
    for (ssize_t i = 0; i < n && found < 0; i++) {
        if (b[i] != '}') continue;
        ssize_t k = i + 1;
        while (k < n && is_space(b[k])) k++;
        if (k >= n || b[k] != ',') continue;
        for (k++; k < n && is_space(b[k]); k++) {}
        if (k < n && b[k] == '{') found = from + k;
    }
    opprof__free(b);
    return found;
}

/* Whether what the half read can join the first half's capture as it is. A
 * runtime whose rules count across the whole file cannot: ONNX Runtime's
 * runs are steps numbered in order, TensorRT's first element gives every
 * layer's run count (TensorFlow's runs are made at the end, from every op). */
static bool stands_alone(const parser *q) {
    for (size_t i = 0; i < q->n_begins; i++)
        if (q->begins[i].name) return false; /* a "B" left open: its "E" or the trace's end decides */
    if (q->rt.ort || q->rt.trt) return false;
    return !q->odd_ids && !q->unmatched_ends && !opprof__reader_profiles_seen(q);
}

static void read_half(split *s, int64_t start) {
    parser *q = &s->half;
    if (opprof_capture_new(&q->cap)) return;
    q->cap->info.step_num = -1;
    int fd = s->fd;
    s->fd = -1; /* the lexer's now, closed with it */
    if (opprof__json_open_file_at(&q->lx, fd, &s->options, start)) return;
    q->lx.err = q->err;
    q->lx.depth = s->depth;
    int rc = opprof__reader_parse_items(q, 1);
    if (rc || s->error.code || s->held_full || q->lx.lines_lost || q->lx.depth != s->depth - 1 || !stands_alone(q))
        return;
    s->end = HERE(q);
    opprof__json_lines_before(&q->lx, s->end, &s->end_lines, &s->end_last);
    s->end_counted = q->lx.uncounted == 0;
    s->ok = true;
    opprof__json_close(&q->lx); /* its window and the file, given back before the join */
}

static void *half_main(void *arg) {
    split *s = arg;
    int64_t start = find_start(s->fd, s->from, s->size);
    pthread_mutex_lock(&s->lock);
    s->start = start;
    s->known = true;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    if (start >= 0 && !atomic_load(&s->stop)) read_half(s, start);
    pthread_mutex_lock(&s->lock);
    s->done = true;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- this thread ---- */

static bool worth_splitting(parser *p) {
    int threads = p->opt ? p->opt->threads : 0;
    if (!p->path || threads == 1 || opprof__reader_whole_checks(p) || !opprof__json_plain(&p->lx)) return false;
    if (threads >= 2) return true; /* asked for */
    return p->lx.src.size - HERE(p) >= SPLIT_MIN_BYTES && opprof__usable_cpus() >= 2;
}

/* The same file as the one being read, opened again; -1 if it is not. */
static int reopen(const parser *p) {
    int fd = open(p->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != p->file_dev || (uint64_t)st.st_ino != p->file_ino)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void free_half(split *s) {
    parser *q = &s->half;
    opprof__json_close(&q->lx);
    opprof__reader_free_parser(q);
    opprof_capture_free(q->cap);
    for (size_t i = 0; i < s->n_held; i++) opprof__free(s->held[i].message);
    opprof__free(s->held_names);
    opprof__free(s->held);
    if (s->fd >= 0) close(s->fd);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->changed);
    opprof__free(s);
}

void opprof__reader_split_start(parser *p) {
    p->split_at = INT64_MAX;
    if (p->split || !worth_splitting(p)) return;
    split *s = opprof__calloc(1, sizeof *s);
    if (!s) return; /* one thread reads it all */
    s->fd = reopen(p);
    s->size = p->lx.src.size;
    /* the middle: each thread reads as much (the second thread counts the lines before its
     * start only when it has a place to say) */
    s->from = HERE(p) + (s->size - HERE(p)) / 2;
    s->depth = p->lx.depth;
    s->options = p->opt ? *p->opt : (opprof_read_options){0};
    s->options.on_progress = NULL;
    if (s->options.on_problem) {
        s->options.on_problem = hold_problem;
        s->options.ctx = s;
    }
    parser *q = &s->half;
    q->err = &s->error;
    q->opt = &s->options;
    q->min_ts = INT64_MAX;
    q->max_ts = INT64_MIN;
    q->ours = p->ours;
    q->kineto = p->kineto;
    q->rt.by_node = p->rt.by_node;
    q->keep_marks = p->keep_marks;
    q->keep_event_marks = p->keep_event_marks;
    q->array_form = p->array_form;
    q->split = s;
    q->is_half = true;
    q->string_base = INT64_MIN / 2; /* its string ids apart from numbers: numbered again at the join */
    q->split_at = 0;                /* each event asks whether to stop */
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
    if (s->fd < 0 || opprof__helper_start(&s->thread, half_main, s)) {
        free_half(s);
        return;
    }
    p->split = s;
    p->split_at = s->from;
}

/* The second thread told to stop, joined, and its half dropped. */
void opprof__reader_split_end(parser *p) {
    split *s = p->split;
    if (!s || p->is_half) return;
    atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    free_half(s);
    p->split = NULL;
    p->split_at = INT64_MAX;
}

static int64_t wait_for(split *s, bool *flag) {
    pthread_mutex_lock(&s->lock);
    while (!*flag) pthread_cond_wait(&s->changed, &s->lock);
    int64_t start = s->start;
    pthread_mutex_unlock(&s->lock);
    return start;
}

/* Whether each "E" the half holds ends a "B" open here, in their order, no
 * earlier than it, as this thread would pair them reading on; and, when they
 * do, the name each placeholder stands for (s->held_names). Nothing here
 * changes. */
static bool held_ends_pair(parser *p, split *s) {
    const parser *q = &s->half;
    if (!q->n_held_ends) return true;
    int32_t *top = opprof__alloc((q->cap->n_threads + 1) * sizeof *top); /* by the half's thread; INT32_MIN: not yet */
    const char **names = opprof__calloc(q->cap->n_names + 1, sizeof *names);
    bool pair = top && names;
    for (size_t t = 0; pair && t < q->cap->n_threads; t++) top[t] = INT32_MIN;
    for (size_t k = 0; pair && k < q->n_held_ends; k++) {
        const struct held_end *h = &q->held_ends[k];
        if (top[h->thread] == INT32_MIN) {
            const opprof_thread_info *t = &q->cap->threads[h->thread];
            int64_t found = opprof__reader_find_thread(p, t->pid, t->tid);
            top[h->thread] = found < 0 ? -1 : opprof__reader_open_begin(p, (uint32_t)found);
        }
        pair = top[h->thread] >= 0 && p->begins[top[h->thread]].ts <= h->ts;
        if (!pair) break;
        names[q->cap->events[h->event].name] = p->begins[top[h->thread]].name;
        top[h->thread] = p->begins[top[h->thread]].outer;
    }
    opprof__free(top);
    if (pair)
        s->held_names = names;
    else
        opprof__free(names);
    return pair;
}

/* The held ends' events completed from their "B" (appended at first_event),
 * and the "B" closed here. */
static void complete_held(parser *p, const parser *q, const uint32_t *thread, size_t first_event) {
    for (size_t k = 0; k < q->n_held_ends; k++) {
        const struct held_end *h = &q->held_ends[k];
        const begun *b = &p->begins[opprof__reader_open_begin(p, thread[h->thread])];
        opprof_event *e = &p->cap->events[first_event + h->event];
        e->kind = opprof__reader_complete_kind(b->cat, b->name);
        e->start_ns = b->ts;
        e->duration_ns = h->ts - b->ts;
        if (b->ts < p->min_ts) p->min_ts = b->ts;
        opprof__reader_close_begin(p, thread[h->thread]);
    }
}

/* The half's capture and what its reader found, into this one's. */
static int join_half(parser *p, split *s) {
    parser *q = &s->half;
    opprof_capture *a = p->cap, *b = q->cap;
    size_t first_event = a->n_events;
    uint32_t *thread = opprof__calloc(b->n_threads + 1, sizeof *thread);
    int64_t *ids = opprof__calloc(q->n_string_ids + 1, sizeof *ids); /* the half's string ids: this one's */
    int rc = thread && ids ? 0 : OPPROF_ENOMEM;
    for (size_t k = 0; k < q->n_string_ids && !rc; k++) /* new ones numbered in the half's order */
        rc = opprof__reader_string_id(p, q->string_ids[k], strlen(q->string_ids[k]), &ids[k]);
    for (size_t i = 0; i < b->n_threads && !rc; i++) { /* in the half's order: the ids one thread gives */
        int64_t pid = b->threads[i].pid, tid = b->threads[i].tid;
        int64_t kp = opprof__reader_string_index(q, pid), kt = opprof__reader_string_index(q, tid);
        rc = opprof__reader_thread_of(p, kp ? ids[kp - 1] : pid, kt ? ids[kt - 1] : tid, &thread[i]);
    }
    for (size_t i = 0; i < q->n_named && !rc; i++) /* a thread_name in the half: the last one said wins */
        memcpy(a->threads[thread[q->named[i]]].name, b->threads[q->named[i]].name, sizeof a->threads->name);
    /* the half's links first, freed once copied: held twice, with its events too, they were
     * a third of the read's peak */
    if (!rc) rc = opprof__grow((void **)&p->links, &p->cap_links, p->n_links + q->n_links, sizeof *p->links);
    for (size_t i = 0; i < q->n_links && !rc; i++) {
        opprof__link l = q->links[i];
        l.event += (uint32_t)first_event;
        p->links[p->n_links++] = l;
    }
    if (!rc) {
        opprof__free(q->links);
        q->links = NULL;
        q->n_links = q->cap_links = 0;
    }
    if (!rc) rc = opprof__capture_append_mapped(a, b, 0, thread, s->held_names);
    if (!rc) complete_held(p, q, thread, first_event);
    for (size_t i = 0; i < b->n_warnings && !rc; i++) rc = opprof_capture_add_warning(a, b->warnings[i]);
    if (!rc && b->warning_lost) rc = OPPROF_ENOMEM; /* the second half's: not dropped */
    if (!rc) rc = opprof__reader_join_labels(p, q, ids);
    opprof__free(thread);
    opprof__free(ids);
    if (rc) return rc;
    a->info.record_shapes |= b->info.record_shapes;
    a->info.with_stack |= b->info.with_stack;
    a->info.profile_memory |= b->info.profile_memory;
    if (b->info.device_name[0]) memcpy(a->info.device_name, b->info.device_name, sizeof a->info.device_name);
    if (q->min_ts < p->min_ts) p->min_ts = q->min_ts;
    if (q->max_ts > p->max_ts) p->max_ts = q->max_ts;
    if (!p->string_times) p->first_string_time = q->first_string_time;
    p->string_times += q->string_times;
    p->kineto |= q->kineto;
    p->legacy_pytorch |= q->legacy_pytorch;
    if (opprof__reader_runtime_join(p, q, first_event)) return OPPROF_ENOMEM;
    for (int k = 0; k < UNUSED_KINDS; k++) p->unused[k] += q->unused[k];
    p->problems += q->problems;
    for (size_t i = 0; i < s->n_held; i++) { /* after this half's, as one thread says them */
        const held_problem *h = &s->held[i];
        opprof_trace_problem pr = {h->offset, h->line, h->column, h->message, h->assumed};
        p->opt->on_problem(p->opt->ctx, &pr);
    }
    return 0;
}

/* This thread's lexer past the array that the half read, its lines
 * counted: those before the half's start are this thread's own. */
static int jump_past_half(parser *p, const split *s, int64_t start) {
    int64_t lines = s->end_lines, last = s->end_last;
    if (!s->end_counted) {
        int64_t before, last_before;
        opprof__json_lines_before(&p->lx, start, &before, &last_before);
        lines += before;
        if (last < 0) last = last_before;
    }
    return opprof__json_jump(&p->lx, s->end, lines, last);
}

int opprof__reader_split_reached(parser *p, int64_t offset) {
    split *s = p->split;
    if (!s) {
        p->split_at = INT64_MAX;
        return 0;
    }
    if (p->is_half) return atomic_load_explicit(&s->stop, memory_order_relaxed) ? -ECANCELED : 0;
    int64_t start = wait_for(s, &s->known);
    if (start > offset) { /* not there yet */
        p->split_at = start;
        return 0;
    }
    if (start == offset) {
        wait_for(s, &s->done);
        bool fits = s->ok && p->cap->n_threads + s->half.cap->n_threads <= OPPROF_MAX_THREADS &&
                    p->cap->n_events + s->half.cap->n_events <= INT32_MAX && held_ends_pair(p, s);
        if (fits) {
            int rc = join_half(p, s);
            if (!rc) rc = jump_past_half(p, s, start);
            if (rc) return opprof__json_fail_code(&p->lx, rc, "joining the trace's second half");
            p->lx.depth = s->depth - 1;
            p->cap->info.read_threads = 2;
            opprof__reader_split_end(p);
            return 1;
        }
    }
    opprof__reader_split_end(p); /* no event starts there, or the half cannot join: read on alone */
    return 0;
}
