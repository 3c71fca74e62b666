/* reader.c - Chrome trace files to captures, streaming: the meaning of a
 * trace's values (events, phases, categories, args, Kineto's and opprof's
 * metadata) over the JSON lexer of json_lex.c, which reads the text. Each
 * event object is parsed into the few fields a capture keeps; everything
 * else is validated and skipped; checks that need the whole trace (opprof
 * check) run at the end. */
#define _GNU_SOURCE
#include "trace/reader_state.h"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const UNUSED_NAMES[UNUSED_KINDS] = {
#define UNUSED_WORDS(name, words) words,
    UNUSED_EVENT_KINDS(UNUSED_WORDS)
#undef UNUSED_WORDS
};

static int on_warning(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    (void)ctx;
    (void)index;
    if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
    if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
    return opprof_capture_add_warning(p->cap, p->lx.s) ? opprof__reader_no_memory(p, "warnings") : 0;
}

/* "opprof_mangled_names": [[name, mangled], ...], the C++ names opprof demangled. */
static int on_mangled_string(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    (void)ctx;
    if (index > 1 || opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
    if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
    opprof__sb_put(&p->mangled, p->lx.s, p->lx.s_len);
    opprof__sb_put(&p->mangled, "", 1);
    return p->mangled.error ? opprof__reader_no_memory(p, "opprof_mangled_names") : 0;
}

static int on_mangled_pair(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    (void)index;
    if (opprof__json_skip_ws(&p->lx) != '[') return opprof__json_skip(&p->lx);
    size_t before = p->mangled.len;
    if (opprof__json_array(&p->lx, on_mangled_string, ctx)) return OPPROF_EFORMAT;
    /* a pair, or nothing */
    size_t strings = 0;
    for (size_t i = before; i < p->mangled.len; i++) strings += p->mangled.data[i] == '\0';
    if (strings != 2) p->mangled.len = before;
    return 0;
}

/* After the capture is finished: each pair's mangled name to its name. */
static int apply_mangled(parser *p) {
    for (size_t at = 0; at < p->mangled.len;) {
        const char *name = p->mangled.data + at, *mangled = name + strlen(name) + 1;
        at = (size_t)(mangled - p->mangled.data) + strlen(mangled) + 1;
        if (opprof__capture_set_mangled(p->cap, name, mangled)) return OPPROF_ENOMEM;
    }
    return 0;
}

/* "distributedInfo": {"backend", "rank", "world_size"} as Kineto writes it,
 * and opprof's clock alignment; other keys are skipped. */
static int on_distributed_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    opprof_rank *r = ctx;
    int c = opprof__json_skip_ws(&p->lx);
    if (KEY_IS(k, n, "backend") && c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        snprintf(r->backend, sizeof r->backend, "%s", p->lx.s);
        return 0;
    }
    bool num = c == '-' || (c >= '0' && c <= '9');
    if (!num) return opprof__json_skip(&p->lx);
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    double d = opprof__json_number_value(&v);
    /* a number past int64's range (undefined to convert) counts as none */
    int64_t i = v.is_int ? v.as_int : d > -9.2e18 && d < 9.2e18 ? (int64_t)d : 0;
    if (KEY_IS(k, n, "rank")) r->rank = opprof__rank_number(i, -1);
    if (KEY_IS(k, n, "world_size")) r->world_size = opprof__rank_number(i, 0);
    if (KEY_IS(k, n, "clock_offset_ns")) r->clock_offset_ns = i;
    if (KEY_IS(k, n, "clock_uncertainty_ns")) r->clock_uncertainty_ns = i;
    return 0;
}

static int on_flight_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    opprof_flight_info *f = ctx;
    int c = opprof__json_skip_ws(&p->lx);
    if (KEY_IS(k, n, "reason") && c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        snprintf(f->reason, sizeof f->reason, "%s", p->lx.s);
        return 0;
    }
    if (!(c == '-' || (c >= '0' && c <= '9'))) return opprof__json_skip(&p->lx);
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    int64_t i = v.is_int ? v.as_int : 0;
#define FLIGHT_NUMBER(name) \
    if (KEY_IS(k, n, #name)) f->name = (__typeof__(f->name))i;
    OPPROF__FLIGHT_NUMBERS(FLIGHT_NUMBER)
#undef FLIGHT_NUMBER
    return 0;
}

typedef struct top {
    bool saw_events;
} top;

static int on_top_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    top *t = ctx;
    opprof_capture_info *info = &p->cap->info;
    if (KEY_IS(k, n, "traceEvents")) {
        t->saw_events = true;
        return opprof__reader_parse_events(p);
    }
    if (KEY_IS(k, n, "opprof_version")) p->ours = true;
    if (KEY_IS(k, n, "schemaVersion") || KEY_IS(k, n, "deviceProperties") || KEY_IS(k, n, "traceName"))
        p->kineto = true; /* Kineto's top-level keys (opprof writes schemaVersion too: ours decides first) */
    int c = opprof__json_skip_ws(&p->lx);
    if (KEY_IS(k, n, "opprof_machine") && c == '{') { /* the machine it ran on: read whole or refused */
        opprof_machine m;
        if (opprof__machine_parse(&p->lx, &m)) return OPPROF_EFORMAT;
        return opprof_capture_set_machine(p->cap, &m) ? opprof__reader_no_memory(p, "the machine") : 0;
    }
    bool num = c == '-' || (c >= '0' && c <= '9');
    if (num && (KEY_IS(k, n, "baseTimeNanoseconds") || KEY_IS(k, n, "step_num") || KEY_IS(k, n, "dropped_events") ||
                KEY_IS(k, n, "profile_memory") || KEY_IS(k, n, "overhead_range_ns") ||
                KEY_IS(k, n, "overhead_memory_event_ns") || KEY_IS(k, n, "opprof_unended_ns"))) {
        opprof__json_number v;
        if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
        if (KEY_IS(k, n, "baseTimeNanoseconds")) info->base_time_ns = v.is_int ? v.as_int : 0;
        if (KEY_IS(k, n, "step_num")) info->step_num = v.is_int ? v.as_int : -1;
        if (KEY_IS(k, n, "dropped_events")) info->dropped_events = v.is_int && v.as_int > 0 ? (uint64_t)v.as_int : 0;
        if (KEY_IS(k, n, "profile_memory")) info->profile_memory = opprof__json_number_value(&v) != 0;
        if (KEY_IS(k, n, "overhead_range_ns")) info->overhead_range_ns = opprof__json_number_value(&v);
        if (KEY_IS(k, n, "overhead_memory_event_ns")) info->overhead_memory_event_ns = opprof__json_number_value(&v);
        if (KEY_IS(k, n, "opprof_unended_ns") && v.is_int && v.as_int > 0 && v.as_int <= OPPROF_MAX_TIME_NS)
            info->unended_ns = v.as_int; /* the trace it was read from had begins that never ended */
        return 0;
    }
    if (KEY_IS(k, n, "opprof_read_from") && c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        p->read_from = opprof__producer_of_name(p->lx.s) + 1;
        return 0;
    }
    if (KEY_IS(k, n, "host_name") && c == '"') { /* Kineto's: where it ran */
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        opprof__copy_text(p->cap->host_name, sizeof p->cap->host_name, p->lx.s, p->lx.s_len);
        return 0;
    }
    if (KEY_IS(k, n, "opprof_device_name") && c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        snprintf(p->device_said, sizeof p->device_said, "%s", p->lx.s);
        return 0;
    }
    if (KEY_IS(k, n, "warnings") && c == '[') return opprof__json_array(&p->lx, on_warning, NULL);
    if (KEY_IS(k, n, "opprof_mangled_names") && c == '[') return opprof__json_array(&p->lx, on_mangled_pair, NULL);
    int sampled = opprof__reader_sample_key(p, k, n);
    if (sampled != 1) return sampled;
    if (KEY_IS(k, n, "opprof_flight") && c == '{') return opprof__json_object(&p->lx, on_flight_key, &info->flight);
    if (KEY_IS(k, n, "distributedInfo") && c == '{') {
        if (opprof__json_object(&p->lx, on_distributed_key, &info->rank)) return OPPROF_EFORMAT;
        if (!info->rank.backend[0]) snprintf(info->rank.backend, sizeof info->rank.backend, "unknown");
        return 0;
    }
    return opprof__json_skip(&p->lx);
}

/* ---- driver ---- */

static int parse_document(parser *p) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c == -2) return OPPROF_EFORMAT;
    if (c == -1) return FAIL(p, "the file is empty: not JSON");
    if (c == '[') {
        p->array_form = true;
        if (opprof__reader_parse_events(p)) return OPPROF_EFORMAT;
    } else if (c == '{') {
        top t = {0};
        if (opprof__json_object(&p->lx, on_top_key, &t)) return OPPROF_EFORMAT;
        if (!t.saw_events)
            return opprof__json_fail_at(&p->lx, 0, "not a trace: the object has no \"traceEvents\" array");
    } else {
        return FAIL(p, "not a trace: expected '{' or '[' at the start, found %s",
                    opprof__json_byte_text(c, (char[16]){0}));
    }
    c = opprof__json_skip_ws(&p->lx);
    if (c == -2) return OPPROF_EFORMAT;
    if (c != -1) return FAIL(p, "unexpected data after the end of the trace");
    return 0;
}

static void shift_times(opprof_capture *c, int64_t origin) {
    for (size_t i = 0; i < c->n_events; i++) c->events[i].start_ns -= origin;
    for (size_t j = 0; j < c->n_mem; j++) c->mem[j].ts_ns -= origin;
    for (size_t k = 0; k < c->n_marks; k++)
        if (c->marks[k].event < 0) c->marks[k].ts_ns -= origin;
    for (size_t j = 0; j < c->n_samples; j++) c->samples[j].ts_ns -= origin;
    for (size_t j = 0; j < c->n_off_cpu; j++) c->off_cpu[j].start_ns -= origin;
    OPPROF__SAT_ADD(c->info.base_time_ns, origin);
}

void opprof__reader_free_parser(parser *p) {
    opprof__index_free(&p->thread_index);
    opprof__reader_runtime_free(p);
    opprof__sb_free(&p->mangled);
    for (size_t i = 0; i < p->n_string_ids; i++) opprof__free(p->string_ids[i]);
    opprof__free(p->string_ids);
    opprof__index_free(&p->string_index);
    opprof__free(p->labels);
    opprof__index_free(&p->label_index);
    opprof__free(p->xs);
    opprof__free(p->ms);
    opprof__free(p->links);
    opprof__free(p->named);
    opprof__free(p->spilled);
    opprof__reader_free_begins(p);
    opprof__reader_samples_free(p);
    opprof__reader_profiles_free(p);
}

/* An error of no place in the file: code rc, and the message `prefix` then
 * `what` (or rc's text when `what` is empty). Returns rc. */
static int read_error_set(opprof_read_error *error, int rc, const char *prefix, const char *what) {
    if (!error) return rc;
    memset(error, 0, sizeof *error);
    error->code = rc;
    error->offset = -1;
    snprintf(error->message, sizeof error->message, "%s%s", prefix, what[0] ? what : opprof_strerror(rc));
    return rc;
}

/* The trace in the lexer, opened (open_rc: how opening went), to a capture. */
static int read_trace(parser *p, int open_rc, const opprof_read_options *options, opprof_capture **out,
                      opprof_read_error *error) {
    opprof_read_error local;
    p->err = error ? error : &local;
    memset(p->err, 0, sizeof *p->err);
    p->err->offset = -1;
    p->lx.err = p->err; /* the lexer's errors and the reader's are one */
    p->opt = options;
    p->min_ts = INT64_MAX;
    p->max_ts = INT64_MIN;
    p->split_at = INT64_MAX;
    p->rt.by_node = options && options->by_node;
    p->keep_marks = options && options->keep_marks;
    p->keep_event_marks = options && (options->keep_marks || options->keep_event_marks);
    int rc = open_rc ? open_rc : opprof_capture_new(&p->cap);
    if (rc) read_error_set(p->err, rc, "", "");
    if (!rc) {
        p->cap->info.step_num = -1;
        p->cap->info.read_threads = 1;
        snprintf(p->cap->info.trace_format, sizeof p->cap->info.trace_format, "%s", p->translated ? "proto" : "json");
        rc = parse_document(p);
    }
    if (!rc && p->string_times)
        opprof__capture_warnf(p->cap,
                              "%llu time(s) (\"ts\", \"dur\") written as strings were read as numbers "
                              "(first: line %lld)",
                              (unsigned long long)p->string_times, (long long)p->first_string_time);
    if (!rc) rc = opprof__reader_samples_finish(p);
    if (!rc) rc = opprof__reader_profiles_finish(p);
    if (!rc) rc = opprof__reader_runtime_finish(p);
    opprof__reader_samples_free(p);
    opprof__reader_profiles_free(p);
    if (!rc) rc = opprof__reader_unended_begins(p);
    if (!rc) opprof__reader_apply_labels(p);
    if (!rc && p->device_said[0] && p->cap->info.device_name[0])
        snprintf(p->cap->info.device_name, sizeof p->cap->info.device_name, "%s", p->device_said);
    /* times are read within +-OPPROF_MAX_TIME_NS; from the trace's start they
     * must be too, or the capture's own trace would not read back */
    if (!rc && p->min_ts != INT64_MAX && p->max_ts > p->min_ts && p->max_ts - p->min_ts > OPPROF_MAX_TIME_NS)
        rc = FAIL(p, "the trace spans %.0f years, more than the 2^61 ns (73 years) a capture holds",
                  (double)(p->max_ts - p->min_ts) / 3.15576e16);
    if (!rc) {
        if (p->min_ts != INT64_MAX) shift_times(p->cap, p->min_ts);
        opprof__reader_check_whole(p);
        p->cap->info.producer = p->ours && p->read_from ? (opprof_producer)(p->read_from - 1) /* converted by opprof */
                                : p->ours               ? OPPROF_PRODUCER_OPPROF
                                : p->rt.ort         ? OPPROF_PRODUCER_ONNXRUNTIME /* its GPU "Kernel" is Kineto's too */
                                : p->rt.trt         ? OPPROF_PRODUCER_TENSORRT
                                : p->rt.tf          ? OPPROF_PRODUCER_TENSORFLOW
                                : p->kineto         ? OPPROF_PRODUCER_KINETO
                                : p->legacy_pytorch ? OPPROF_PRODUCER_PYTORCH_LEGACY
                                                    : OPPROF_PRODUCER_OTHER;
        /* PyTorch's _remove_dup_nodes (an only child named as its parent is
         * merged into it) is PyTorch's rule, for its traces only: in another
         * writer's trace a call nested in a call of the same name is recursion */
        p->cap->merge_only_children =
            p->cap->info.producer == OPPROF_PRODUCER_KINETO || p->cap->info.producer == OPPROF_PRODUCER_PYTORCH_LEGACY;
        rc = opprof__reader_runtime_links(p);
        if (!rc) rc = opprof__link_devices(p->cap, p->links, p->n_links);
        if (rc) opprof__json_fail_code(&p->lx, rc, "device activities");
        opprof__free(p->links); /* linked: not held through the capture's sort, its peak */
        p->links = NULL;
        p->n_links = p->cap_links = 0;
    }
    if (!rc && options && options->on_unused)
        for (int k = 0; k < UNUSED_KINDS; k++)
            if (p->unused[k]) options->on_unused(options->ctx, UNUSED_NAMES[k], p->unused[k]);
    if (!rc) {
        p->cap->pids_as_read = true;
        p->cap->finish_threads = options && options->threads == 1 ? 1 : 0; /* one thread asked for: one */
        rc = opprof_capture_finish(p->cap);
        if (!rc) rc = apply_mangled(p);
        if (!rc && p->cap->warning_lost) rc = OPPROF_ENOMEM; /* a warning the read could not keep */
        if (rc) opprof__json_fail_code(&p->lx, rc, "building the capture");
    }
    opprof__json_close(&p->lx);
    opprof__reader_free_parser(p);
    if (rc) {
        if (p->err->code == 0) read_error_set(p->err, rc, "", "");
        opprof_capture_free(p->cap);
        return p->err->code;
    }
    *out = p->cap;
    return 0;
}

static void perfetto_error(opprof_read_error *error, int rc, const char *why) {
    read_error_set(error, rc, "Perfetto trace: ", why);
}

/* The JSON reader's error on a .pftrace's translation: its place is one in
 * the translation, no place of the file, so none is said. */
static void events_error(opprof_read_error *error, int rc) {
    if (!error) return;
    char said[sizeof error->message - 32];
    snprintf(said, sizeof said, "%.223s", error->message);
    perfetto_error(error, rc, "");
    snprintf(error->message, sizeof error->message, "Perfetto trace: its events: %s", said);
}

/* A .pftrace's bytes decoded into the JSON of its capture, read as that. */
static int read_perfetto_bytes(const void *data, size_t len, const opprof_read_options *options, opprof_capture **out,
                               opprof_read_error *error) {
    opprof__strbuf json = {0};
    char why[256] = "";
    int rc = opprof__perfetto_to_json(data, len, &json, why, sizeof why);
    if (!rc) {
        parser p;
        memset(&p, 0, sizeof p);
        p.translated = true;
        rc = read_trace(&p, opprof__json_open_buffer(&p.lx, json.data, json.len, options), options, out, error);
        if (rc) events_error(error, rc);
    } else {
        perfetto_error(error, rc, why);
    }
    opprof__sb_free(&json);
    return rc;
}

/* A translation on a thread of its own, from the file (through gzip) into a
 * socket the JSON reader reads: neither the file nor the JSON text is ever
 * whole in memory (a socket, not a pipe: send with MSG_NOSIGNAL, so that a
 * reader that stops early raises no SIGPIPE). */
typedef struct translation {
    gzFile gz; /* the trace's bytes, read by the translation only */
    int fd, rc;
    char why[200];
} translation;

static int send_all(void *ctx, const char *data, size_t len) {
    translation *t = ctx;
    while (len) {
        ssize_t n = send(t->fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? -errno : OPPROF_EIO;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_gz(void *ctx, void *buf, size_t len) {
    int n = gzread(((translation *)ctx)->gz, buf, (unsigned)(len < (1u << 30) ? len : (1u << 30)));
    return n < 0 ? OPPROF_EIO : n;
}

static void *translate(void *arg) {
    translation *t = arg;
    t->rc = opprof__perfetto_translate(read_gz, t, send_all, t, t->why, sizeof t->why);
    close(t->fd);
    return NULL;
}

/* A .pftrace file (plain or gzip): its packets decoded as they are read,
 * its JSON streamed to the JSON reader. A translation's error is the one said. */
static int read_perfetto(gzFile gz, const opprof_read_options *options, opprof_capture **out,
                         opprof_read_error *error) {
    int rc = 0, fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        rc = -errno;
        perfetto_error(error, rc, "");
        return rc;
    }
    translation t = {.gz = gz, .fd = fds[1]};
    pthread_t thread;
    if ((rc = opprof__helper_start(&thread, translate, &t))) {
        close(fds[0]);
        close(fds[1]);
        read_error_set(error, rc, "Perfetto trace: no thread to translate it: ", "");
        return rc;
    }
    parser p;
    memset(&p, 0, sizeof p);
    p.translated = true;
    opprof_capture *cap = NULL;
    rc = read_trace(&p, opprof__json_open_file(&p.lx, fds[0], options), options, &cap, error);
    shutdown(fds[0], SHUT_RDWR); /* a reader that stopped early: the translation ends too */
    pthread_join(thread, NULL);
    if (t.rc && !(rc && (t.rc == -EPIPE || t.rc == -ECONNRESET))) { /* not the reader's stop, seen by the sender */
        opprof_capture_free(rc ? NULL : cap);
        perfetto_error(error, t.rc, t.why);
        return t.rc;
    }
    if (rc) events_error(error, rc);
    if (!rc) *out = cap;
    return rc;
}

/* A file that is no trace of any kind opprof reads: OPPROF_EFORMAT, saying what it is. */
static int foreign_error(opprof_read_error *error, const char *what) {
    return read_error_set(error, OPPROF_EFORMAT, "", what);
}

/* Whether path holds a Perfetto trace, or a file of another kind that opprof
 * names: its first bytes (through gzip). */
static int sniff(const char *path, const opprof_read_options *options, opprof_capture **out, opprof_read_error *error,
                 bool *done) {
    *done = false;
    struct stat st; /* a regular file only: a pipe's first bytes, once read, are gone */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz && errno != ENOMEM) return 0; /* the JSON path says why it cannot be read */
    if (!gz) {
        *done = true;
        return read_error_set(error, OPPROF_ENOMEM, "", "");
    }
    unsigned char first[64];
    int rc = 0, got = gzread(gz, first, sizeof first), zerr = Z_OK;
    if (got < 0) gzerror(gz, &zerr);
    const char *foreign = got > 0 ? opprof__foreign_file(first, (size_t)got) : NULL;
    if (zerr == Z_MEM_ERROR) { /* zlib's buffers: what the file is stays unknown */
        *done = true;
        rc = read_error_set(error, OPPROF_ENOMEM, "", "");
    } else if (foreign) {
        *done = true;
        rc = foreign_error(error, foreign);
    } else if (got >= 3 && opprof__looks_perfetto(first, 3)) {
        gzrewind(gz);
        *done = true;
        rc = read_perfetto(gz, options, out, error);
    }
    gzclose(gz);
    return rc;
}

static int capture_read_here(const char *path, const opprof_read_options *options, opprof_capture **out,
                             opprof_read_error *error) {
    if (!path || !out) return OPPROF_EINVAL;
    bool perfetto;
    int prc = sniff(path, options, out, error, &perfetto);
    if (perfetto) return prc;
    parser p;
    memset(&p, 0, sizeof p);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) { /* a second thread may read its second half */
        p.path = path;
        p.file_dev = (uint64_t)st.st_dev;
        p.file_ino = (uint64_t)st.st_ino;
    }
    int rc = fd < 0 ? -errno : opprof__json_open_file(&p.lx, fd, options);
    return read_trace(&p, rc, options, out, error);
}

/* The numbers as C writes them, whatever locale the program set (base/c_numbers.c). */
int opprof_capture_read(const char *path, const opprof_read_options *options, opprof_capture **out,
                        opprof_read_error *error) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_read_here(path, options, out, error);
    opprof__c_numbers_end(numbers);
    return rc;
}

static int capture_read_buffer_here(const void *data, size_t len, const opprof_read_options *options,
                                    opprof_capture **out, opprof_read_error *error) {
    if ((!data && len) || !out) return OPPROF_EINVAL;
    const char *foreign = opprof__foreign_file(data, len < 64 ? len : 64);
    if (foreign) return foreign_error(error, foreign);
    if (opprof__looks_perfetto(data, len)) return read_perfetto_bytes(data, len, options, out, error);
    parser p;
    memset(&p, 0, sizeof p);
    int rc = opprof__json_open_buffer(&p.lx, data, len, options);
    return read_trace(&p, rc, options, out, error);
}

int opprof_capture_read_buffer(const void *data, size_t len, const opprof_read_options *options, opprof_capture **out,
                               opprof_read_error *error) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_read_buffer_here(data, len, options, out, error);
    opprof__c_numbers_end(numbers);
    return rc;
}
