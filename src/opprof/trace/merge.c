/* merge.c - per-rank traces into one timeline, streaming.
 *
 * Two passes over each input, neither of which keeps events: the first reads
 * the trace's facts (baseTimeNanoseconds, distributedInfo, opprof_version)
 * and the set of its pids; the second copies its events to the output,
 * rewriting three fields on the way:
 *   "ts"  + (the input's base time - its clock offset to rank 0 - the merged
 *         base time), in exact integer nanoseconds;
 *   "pid" the rank's block of pids: (slot + 1) * PID_BLOCK + the pid's index
 *         in its trace, so that no two ranks share a process;
 *   "id"  of flows and async events: (id << 12) | slot, so that arrows do
 *         not join two ranks.
 * Memory is a read window, a write buffer and the pid sets: bounded whatever
 * the size of the traces (bench_merge measures it). */
#define _GNU_SOURCE /* putc_unlocked */
#include "trace/trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

enum { WINDOW = 1 << 20, TOKEN = 128, MAX_PIDS = 4096, PID_BLOCK = 100000, MAX_INPUTS = 4096, MAX_DEPTH = 512 };

typedef struct in_stream {
    gzFile gz;
    unsigned char *buf;
    size_t len, pos;
    int64_t offset;    /* of buf[0] in the uncompressed text */
    int err;           /* first read error */
    bool bad_utf8;     /* a string held bytes that are not UTF-8: merge writes no such trace */
    bool bad_time;     /* a timestamp moved onto the merged clock left int64's range */
    opprof__utf8 utf8; /* across buffer refills */
} in_stream;

static int fill(in_stream *s) {
    if (s->err) return -1;
    s->offset += (int64_t)s->len;
    int n = gzread(s->gz, s->buf, WINDOW);
    if (n < 0) {
        int zerr;
        gzerror(s->gz, &zerr);
        s->err = opprof__zlib_code(zerr);
        n = 0;
    }
    s->len = (size_t)n;
    s->pos = 0;
    return n > 0 ? 0 : -1;
}

static inline int peek(in_stream *s) { return s->pos < s->len || fill(s) == 0 ? s->buf[s->pos] : -1; }
static inline int next(in_stream *s) {
    int c = peek(s);
    if (c >= 0) s->pos++;
    return c;
}
static inline int skip_ws(in_stream *s) {
    int c;
    while ((c = peek(s)) == ' ' || c == '\n' || c == '\r' || c == '\t') s->pos++;
    return c;
}

/* The output: the caller's atomic file, or nothing (the first pass). */
typedef struct sink {
    FILE *fp;
} sink;
static inline void put(sink *o, int c) {
    if (o && o->fp) putc_unlocked(c, o->fp);
}

static inline void put_bytes(sink *o, const unsigned char *b, size_t n) {
    if (o && o->fp && n) fwrite_unlocked(b, 1, n, o->fp);
}

/* The first '"' or '\\' in [q, end), or end: eight bytes at a time (a
 * byte-wise loop was a quarter of a merge's time). The zero-byte test finds
 * the lowest matching byte exactly; bytes above it may show falsely, so only
 * the lowest is used. */
static OPPROF__HASH inline const unsigned char *quote_or_backslash(const unsigned char *q, const unsigned char *end) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (end - q >= 8) {
        uint64_t w, a, b;
        memcpy(&w, q, 8);
        a = w ^ (ones * '"');
        b = w ^ (ones * '\\');
        uint64_t m = (((a - ones) & ~a) | ((b - ones) & ~b)) & highs;
        if (m) return q + (__builtin_ctzll(m) >> 3);
        q += 8;
    }
    while (q < end && *q != '"' && *q != '\\') q++;
    return q;
}

static int hex4(in_stream *s, sink *o, uint32_t *out) {
    *out = 0;
    for (int i = 0; i < 4; i++) {
        int h = next(s);
        if (h < 0) return OPPROF_EFORMAT;
        put(o, h);
        int v = h >= '0' && h <= '9' ? h - '0' : (h | 32) >= 'a' && (h | 32) <= 'f' ? (h | 32) - 'a' + 10 : -1;
        if (v < 0) return OPPROF_EFORMAT;
        *out = *out << 4 | (uint32_t)v;
    }
    return 0;
}

/* The text of the escape after a backslash (e: its letter; a \u's digits are
 * read here, and a surrogate pair's second half), as UTF-8 into out[*n]: so
 * that a key compares and is written again as what it says ("p\u0069d" is
 * "pid"). An unpaired surrogate is U+FFFD. */
static int unescape(in_stream *s, sink *o, int e, char out[4], size_t *n) {
    static const char plain[] = "\"\\/bfnrt", decoded[] = "\"\\/\b\f\n\r\t";
    const char *at = e ? strchr(plain, e) : NULL;
    *n = 1;
    if (e != 'u') {
        if (!at) return OPPROF_EFORMAT;
        out[0] = decoded[at - plain];
        return 0;
    }
    uint32_t cp, low;
    if (hex4(s, o, &cp)) return OPPROF_EFORMAT;
    if (cp >= 0xD800 && cp <= 0xDBFF && peek(s) == '\\') {
        put(o, next(s));
        if (next(s) != 'u') return OPPROF_EFORMAT;
        put(o, 'u');
        if (hex4(s, o, &low)) return OPPROF_EFORMAT;
        cp = low >= 0xDC00 && low <= 0xDFFF ? 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
        cp = 0xFFFD;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3F)), *n = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12), out[1] = (char)(0x80 | (cp >> 6 & 0x3F)), out[2] = (char)(0x80 | (cp & 0x3F)),
        *n = 3;
    } else {
        out[0] = (char)(0xF0 | cp >> 18), out[1] = (char)(0x80 | (cp >> 12 & 0x3F)),
        out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F)), *n = 4;
    }
    return 0;
}

/* A string (at its opening quote), copied to o; its first TOKEN-1 bytes,
 * unescaped only as far as keys need, into tok. Plain runs are copied a
 * window at a time. */
static int string(in_stream *s, sink *o, char *tok, size_t *tok_len) {
    if (next(s) != '"') return OPPROF_EFORMAT;
    put(o, '"');
    size_t n = 0;
    for (;;) {
        if (peek(s) < 0) return OPPROF_EFORMAT;
        const unsigned char *run = s->buf + s->pos, *end = s->buf + s->len, *q = quote_or_backslash(run, end);
        if (!opprof__utf8_ok(&s->utf8, run, q)) {
            s->bad_utf8 = true;
            return OPPROF_EFORMAT;
        }
        put_bytes(o, run, (size_t)(q - run));
        if (tok && n < TOKEN - 1) {
            size_t k = (size_t)(q - run) < TOKEN - 1 - n ? (size_t)(q - run) : TOKEN - 1 - n;
            memcpy(tok + n, run, k);
            n += k;
        }
        s->pos += (size_t)(q - run);
        if (q == end) continue;
        int c = next(s);
        put(o, c);
        if (s->utf8.need) { /* a sequence cut by the string's end or an escape */
            s->bad_utf8 = true;
            return OPPROF_EFORMAT;
        }
        if (c == '"') break;
        int e = next(s); /* after a backslash */
        if (e < 0) return OPPROF_EFORMAT;
        put(o, e);
        char decoded[4];
        size_t k = 1;
        if (unescape(s, o, e, decoded, &k)) return OPPROF_EFORMAT;
        for (size_t i = 0; tok && i < k && n < TOKEN - 1; i++) tok[n++] = decoded[i];
    }
    if (tok) tok[n] = '\0';
    if (tok_len) *tok_len = n;
    return 0;
}

/* A scalar other than a string (number, true, false, null) into tok. */
static int scalar(in_stream *s, char *tok) {
    size_t n = 0;
    int c;
    while ((c = peek(s)) >= 0 && c != ',' && c != '}' && c != ']' && c != ' ' && c != '\n' && c != '\r' && c != '\t') {
        if (n == TOKEN - 1) return OPPROF_EFORMAT;
        tok[n++] = (char)c;
        s->pos++;
    }
    tok[n] = '\0';
    return n ? 0 : OPPROF_EFORMAT;
}

/* Any value, copied to o without its insignificant whitespace. */
static int value(in_stream *s, sink *o) {
    int depth = 0;
    do {
        int c = skip_ws(s);
        if (c == '"') {
            if (string(s, o, NULL, NULL)) return OPPROF_EFORMAT;
        } else if (c == '{' || c == '[') {
            if (++depth > MAX_DEPTH) return OPPROF_EFORMAT;
            put(o, next(s));
            continue;
        } else if (c == '}' || c == ']') {
            if (depth == 0) return OPPROF_EFORMAT;
            depth--;
            put(o, next(s));
        } else if (c == ',' || c == ':') {
            if (depth == 0) return OPPROF_EFORMAT;
            put(o, next(s));
            continue;
        } else {
            char tok[TOKEN];
            if (scalar(s, tok)) return OPPROF_EFORMAT;
            put_bytes(o, (const unsigned char *)tok, strlen(tok));
        }
    } while (depth > 0);
    return 0;
}

/* Calls on_key(ctx, key, s) for each key of an object, which must consume
 * the value; a nonzero return stops. */
static int object(in_stream *s, int (*on_key)(void *ctx, const char *key, in_stream *s), void *ctx) {
    if (skip_ws(s) != '{') return OPPROF_EFORMAT;
    next(s);
    if (skip_ws(s) == '}') return next(s), 0;
    for (;;) {
        char key[TOKEN];
        if (skip_ws(s) != '"' || string(s, NULL, key, NULL) || skip_ws(s) != ':') return OPPROF_EFORMAT;
        next(s);
        skip_ws(s);
        int rc = on_key(ctx, key, s);
        if (rc) return rc;
        int c = skip_ws(s);
        next(s);
        if (c == '}') return 0;
        if (c != ',') return OPPROF_EFORMAT;
    }
}

/* ---- a number as exact nanoseconds (a "ts" in microseconds): opprof__micros_to_ns ---- */

/* ns as microseconds with three decimals ("12.345", "-0.001"), by hand: printf
 * was a twentieth of a merge. */
static void put_ns_as_micros(sink *o, int64_t ns) {
    char text[2 * OPPROF__NUMBER_TEXT], *end = text + OPPROF__NUMBER_TEXT;
    uint64_t a = ns < 0 ? (uint64_t) - (ns + 1) + 1 : (uint64_t)ns; /* INT64_MIN too */
    char frac[3] = {(char)('0' + a / 100 % 10), (char)('0' + a / 10 % 10), (char)('0' + a % 10)};
    char *p = opprof__int_text((int64_t)(a / 1000), end);
    if (ns < 0) *--p = '-';
    put_bytes(o, (const unsigned char *)p, (size_t)(end - p));
    put(o, '.');
    put_bytes(o, (const unsigned char *)frac, 3);
}

/* ---- one input ---- */

typedef struct input {
    const char *path;
    int64_t base_ns;
    opprof_rank rank;
    bool has_rank, ours;
    bool kineto; /* Kineto's top-level keys: the merged trace keeps its "schemaVersion" */
    int slot;    /* the rank, or the input's index when ranks repeat or are missing */
    int64_t shift_ns;
    char (*pids)[TOKEN]; /* raw tokens, in order of first appearance */
    int n_pids;
    int64_t events;
} input;

static int pid_index(input *in, const char *tok, bool add) {
    for (int i = 0; i < in->n_pids; i++)
        if (!strcmp(in->pids[i], tok)) return i;
    if (!add) return -1;
    if (in->n_pids == MAX_PIDS) return -1;
    if (!in->pids && !(in->pids = opprof__alloc(MAX_PIDS * sizeof *in->pids))) return -2;
    snprintf(in->pids[in->n_pids], TOKEN, "%s", tok);
    return in->n_pids++;
}

/* A pid, number or string, as a token ("123" or "\"Spans\""). */
static int pid_token(in_stream *s, char *tok) {
    if (peek(s) != '"') return scalar(s, tok);
    char inner[TOKEN];
    if (string(s, NULL, inner, NULL)) return OPPROF_EFORMAT;
    snprintf(tok, TOKEN, "\"%.*s\"", TOKEN - 4, inner);
    return 0;
}

/* A key of one of the three fields merge rewrites (the first byte first:
 * every key of every event is asked). */
static inline bool rewritten_n(const unsigned char *k, size_t len) {
    return (len == 3 && k[0] == 'p' && k[1] == 'i' && k[2] == 'd') ||
           (len == 2 && ((k[0] == 't' && k[1] == 's') || (k[0] == 'i' && k[1] == 'd')));
}
static inline bool rewritten(const char *key) { return rewritten_n((const unsigned char *)key, strlen(key)); }

/* The fast path of an event, in both passes: an object whole in the window,
 * its top-level keys plain strings, is scanned once for its end and for
 * the values of its pid, ts and id (the slow path re-read every byte of
 * every event, twice: most of a merge's time). */
enum { MAX_REWRITTEN = 8 };

typedef struct event_span {
    const unsigned char *end; /* past its closing brace */
    int n;                    /* its keys that merge rewrites */
    const unsigned char *key_at[MAX_REWRITTEN], *value_at[MAX_REWRITTEN];
    char keys[MAX_REWRITTEN][4];
} event_span;

static inline const unsigned char *past_blanks(const unsigned char *q, const unsigned char *end) {
    while (q < end && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')) q++;
    return q;
}

/* 1 with the event's span, 0 when the event is for the slow path (it crosses
 * the window's end, or its shape is not that: the slow path then says what
 * is wrong). Its top level is checked as the slow path checks it: keys, a
 * ':' after each, one value after each, ',' between them; what is nested
 * is only counted, as the slow path copies it. */
/* What a byte is to the scanner: 0 any other, BLANK, or the byte that
 * starts or ends a token. */
enum { BLANK = 1, STRUCTURAL = 2 };
static const unsigned char BYTE_KIND[256] = {
    [' '] = BLANK,      ['\n'] = BLANK,     ['\r'] = BLANK,     ['\t'] = BLANK,
    ['"'] = STRUCTURAL, [','] = STRUCTURAL, [':'] = STRUCTURAL, ['{'] = STRUCTURAL,
    ['}'] = STRUCTURAL, ['['] = STRUCTURAL, [']'] = STRUCTURAL,
};

static int span_of_event(const in_stream *s, event_span *sp) {
    const unsigned char *q = s->buf + s->pos, *end = s->buf + s->len;
    int depth = 0;
    bool want_key = false, valued = false, keyed = false; /* at the top: a key is next; a value ended; a key was */
    sp->n = 0;
    while (q < end) {
        unsigned char c = *q;
        if (BYTE_KIND[c] == BLANK) {
            q++;
            continue;
        }
        if (depth == 1 && (valued     ? c != ',' && c != '}'
                           : want_key ? c != '"' && (c != '}' || keyed)
                                      : c == ',' || c == '}'))
            return 0; /* two values, a value or key missing, a stray ',' */
        if (c == '"') {
            const unsigned char *str = q++;
            for (;;) { /* to the closing quote, over escapes */
                q = quote_or_backslash(q, end);
                if (q == end) return 0;
                if (*q == '"') break;
                if (want_key || end - q < 2) return 0; /* an escaped key: the slow path's */
                q += 2;
            }
            q++;
            if (depth != 1) continue;
            if (!want_key) {
                valued = true;
                continue;
            }
            size_t len = (size_t)(q - str) - 2;
            q = past_blanks(q, end);
            if (q == end || *q != ':' || len >= TOKEN - 1) return 0;
            q = past_blanks(q + 1, end);
            want_key = false;
            keyed = true;
            const unsigned char *k = str + 1;
            if (!rewritten_n(k, len)) continue;
            if (sp->n == MAX_REWRITTEN) return 0;
            sp->key_at[sp->n] = str;
            sp->value_at[sp->n] = q;
            memcpy(sp->keys[sp->n], k, len);
            sp->keys[sp->n++][len] = '\0';
            continue;
        }
        if (!BYTE_KIND[c]) { /* a number, true, false or null: its run */
            if (depth == 0) return 0;
            while (q < end && !BYTE_KIND[*q]) q++;
            valued = valued || depth == 1;
            continue;
        }
        if (c == '{' || c == '[') {
            if (++depth > MAX_DEPTH || (depth == 1 && c != '{')) return 0;
            want_key = depth == 1;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) break;
            valued = depth == 1;
        } else if (c == ',' && depth == 1) {
            want_key = true;
            valued = false;
        } else if (depth == 0) {
            return 0;
        }
        q++;
    }
    if (q == end) return 0;
    sp->end = q + 1;
    return 1;
}

typedef struct scan_ctx {
    input *in;
    int rc;
} scan_ctx;

static int scan_event_key(void *ctx, const char *key, in_stream *s) {
    scan_ctx *x = ctx;
    if (key[0] != 'p' || strcmp(key, "pid")) return value(s, NULL);
    char tok[TOKEN];
    if (pid_token(s, tok)) return OPPROF_EFORMAT;
    int i = pid_index(x->in, tok, true);
    if (i == -2) return x->rc = OPPROF_ENOMEM;
    if (i == -1) return x->rc = OPPROF_EFORMAT; /* more than MAX_PIDS processes */
    return 0;
}

static int events(in_stream *s, int (*on_event)(void *ctx, in_stream *s), void *ctx) {
    if (skip_ws(s) != '[') return OPPROF_EFORMAT;
    next(s);
    if (skip_ws(s) == ']') return next(s), 0;
    for (;;) {
        int rc = on_event(ctx, s);
        if (rc) return rc;
        int c = skip_ws(s);
        next(s);
        if (c == ']') return 0;
        if (c != ',') return OPPROF_EFORMAT;
    }
}

static int scan_event(void *ctx, in_stream *s) {
    scan_ctx *x = ctx;
    x->in->events++;
    if (skip_ws(s) != '{') return value(s, NULL); /* not an event: the reader's to report */
    event_span sp;
    if (!span_of_event(s, &sp)) return object(s, scan_event_key, ctx);
    for (int k = 0; k < sp.n; k++) {
        if (sp.keys[k][0] != 'p') continue;
        s->pos = (size_t)(sp.value_at[k] - s->buf);
        int rc = scan_event_key(ctx, "pid", s);
        if (rc) return rc;
    }
    s->pos = (size_t)(sp.end - s->buf); /* its UTF-8 is checked as the second pass copies it */
    return 0;
}

static int number_key(in_stream *s, int64_t *out) {
    char tok[TOKEN];
    if (peek(s) == '"' || peek(s) == '{' || peek(s) == '[') return value(s, NULL);
    if (scalar(s, tok)) return OPPROF_EFORMAT;
    *out = strtoll(tok, NULL, 10);
    return 0;
}

static int scan_distributed_key(void *ctx, const char *key, in_stream *s) {
    opprof_rank *r = ctx;
    if (!strcmp(key, "backend") && peek(s) == '"') {
        char tok[TOKEN];
        if (string(s, NULL, tok, NULL)) return OPPROF_EFORMAT;
        snprintf(r->backend, sizeof r->backend, "%.*s", (int)sizeof r->backend - 1, tok);
        return 0;
    }
    int64_t v = 0;
    int rc = number_key(s, &v);
    if (!strcmp(key, "rank")) r->rank = opprof__rank_number(v, -1);
    if (!strcmp(key, "world_size")) r->world_size = opprof__rank_number(v, 0);
    if (!strcmp(key, "clock_offset_ns")) r->clock_offset_ns = v;
    if (!strcmp(key, "clock_uncertainty_ns")) r->clock_uncertainty_ns = v;
    return rc;
}

static int scan_top_key(void *ctx, const char *key, in_stream *s) {
    scan_ctx *x = ctx;
    input *in = x->in;
    if (!strcmp(key, "traceEvents")) return events(s, scan_event, ctx);
    if (!strcmp(key, "baseTimeNanoseconds")) return number_key(s, &in->base_ns);
    if (!strcmp(key, "opprof_version")) in->ours = true;
    if (!strcmp(key, "schemaVersion") || !strcmp(key, "deviceProperties") || !strcmp(key, "traceName"))
        in->kineto = true;
    if (!strcmp(key, "distributedInfo") && peek(s) == '{') {
        in->has_rank = true;
        return object(s, scan_distributed_key, &in->rank);
    }
    return value(s, NULL);
}

/* ---- the second pass: events rewritten into the output ---- */

typedef struct copy_ctx {
    input *in;
    sink *o;
    bool *first;
} copy_ctx;

static void put_text(sink *o, const char *t) {
    for (; *t; t++) put(o, *t);
}

static int copy_event_key(void *ctx, const char *key, in_stream *s) {
    copy_ctx *x = ctx;
    char tok[TOKEN];
    if (rewritten(key)) {
        bool is_string = peek(s) == '"';
        if (key[0] == 'p' ? pid_token(s, tok) : is_string ? string(s, NULL, tok, NULL) : scalar(s, tok))
            return OPPROF_EFORMAT;
        char text[TOKEN + 48];
        int64_t ns;
        if (key[0] == 'p') {
            int i = pid_index(x->in, tok, false);
            char digits[2 * OPPROF__NUMBER_TEXT], *end = digits + OPPROF__NUMBER_TEXT;
            char *d = opprof__int_text((int64_t)(x->in->slot + 1) * PID_BLOCK + (i < 0 ? 0 : i), end);
            put_text(x->o, "\"pid\":");
            put_bytes(x->o, (const unsigned char *)d, (size_t)(end - d));
            return 0;
        } else if (key[0] == 't') {
            if (is_string || opprof__micros_to_ns(tok, strlen(tok), &ns)) return OPPROF_EFORMAT;
            if (__builtin_add_overflow(ns, x->in->shift_ns, &ns)) {
                s->bad_time = true;
                return OPPROF_EFORMAT;
            }
            put_text(x->o, "\"ts\":");
            put_ns_as_micros(x->o, ns);
            return 0;
        } else if (is_string) {
            snprintf(text, sizeof text, "\"id\":\"%d:%s\"", x->in->slot, tok);
        } else {
            char *end;
            unsigned long long id = strtoull(tok, &end, 10);
            if (*end || id >= (1ULL << 51))
                snprintf(text, sizeof text, "\"id\":%s", tok);
            else
                snprintf(text, sizeof text, "\"id\":%llu", (id << 12) | (unsigned)x->in->slot);
        }
        put_text(x->o, text);
        return 0;
    }
    put(x->o, '"');
    for (const char *k = key; *k; k++) { /* string() unescaped it: escape it again */
        if (*k == '"' || *k == '\\') put(x->o, '\\');
        if ((unsigned char)*k < 0x20) {
            char u[8];
            snprintf(u, sizeof u, "\\u%04x", (unsigned char)*k);
            put_text(x->o, u);
        } else {
            put(x->o, *k);
        }
    }
    put_text(x->o, "\":");
    return value(s, x->o);
}

/* The second pass's fast path: the event copied as it is (its blanks too)
 * but for its pid, ts and id values, which copy_event_key rewrites in place;
 * the copied runs are checked to be UTF-8. 1 when done, 0 for the slow path,
 * or an error. */
static int copy_event_fast(copy_ctx *x, in_stream *s) {
    event_span sp;
    if (!span_of_event(s, &sp)) return 0;
    const unsigned char *b = s->buf, *from = b + s->pos;
    for (int k = 0; k <= sp.n; k++) {
        const unsigned char *to = k < sp.n ? sp.key_at[k] : sp.end;
        if (!opprof__utf8_ok(&s->utf8, from, to) || s->utf8.need) {
            s->bad_utf8 = true;
            return OPPROF_EFORMAT;
        }
        put_bytes(x->o, from, (size_t)(to - from));
        if (k == sp.n) break;
        s->pos = (size_t)(sp.value_at[k] - b);
        int rc = copy_event_key(x, sp.keys[k], s);
        if (rc) return rc;
        from = b + s->pos;
    }
    s->pos = (size_t)(sp.end - b);
    return 1;
}

static int copy_event(void *ctx, in_stream *s) {
    copy_ctx *x = ctx;
    if (!*x->first) put(x->o, ',');
    put(x->o, '\n');
    *x->first = false;
    if (skip_ws(s) != '{') return value(s, x->o);
    int fast = copy_event_fast(x, s);
    if (fast) return fast < 0 ? fast : 0;
    next(s);
    put(x->o, '{');
    if (skip_ws(s) == '}') {
        next(s);
        put(x->o, '}');
        return 0;
    }
    bool first_key = true;
    for (;;) {
        char key[TOKEN];
        size_t key_len;
        if (skip_ws(s) != '"' || string(s, NULL, key, &key_len) || skip_ws(s) != ':') return OPPROF_EFORMAT;
        if (key_len >= TOKEN - 1) return OPPROF_EFORMAT; /* no event field is that long */
        next(s);
        skip_ws(s);
        if (!first_key) put(x->o, ',');
        first_key = false;
        int rc = copy_event_key(ctx, key, s);
        if (rc) return rc;
        int c = skip_ws(s);
        next(s);
        if (c == '}') break;
        if (c != ',') return OPPROF_EFORMAT;
    }
    put(x->o, '}');
    return 0;
}

static int copy_top_key(void *ctx, const char *key, in_stream *s) {
    if (!strcmp(key, "traceEvents")) return events(s, copy_event, ctx);
    return value(s, NULL);
}

/* ---- the driver ---- */

static int open_stream(in_stream *s, const char *path) {
    *s = (in_stream){0};
    s->gz = gzopen(path, "rb");
    if (!s->gz) return errno ? -errno : OPPROF_ENOMEM;
    gzbuffer(s->gz, 1 << 17);
    s->buf = opprof__alloc(WINDOW);
    if (!s->buf) {
        gzclose(s->gz);
        return OPPROF_ENOMEM;
    }
    return 0;
}

static void close_stream(in_stream *s) {
    if (s->gz) gzclose(s->gz);
    opprof__free(s->buf);
    *s = (in_stream){0};
}

static int fail(opprof_read_error *err, int code, const char *path, const in_stream *s, const char *why) {
    if (err) {
        err->code = code;
        err->offset = s ? s->offset + (int64_t)s->pos : -1;
        err->line = err->column = 0;
        if (s)
            snprintf(err->message, sizeof err->message, "%s: byte %lld: %s", path, (long long)err->offset, why);
        else
            snprintf(err->message, sizeof err->message, "%s: %s", path, why);
    }
    return code;
}

/* One pass over an input: its facts (first pass) or its events into o. */
static int pass(input *in, sink *o, bool *first, opprof_read_error *err) {
    in_stream s;
    int rc = open_stream(&s, in->path);
    if (rc) return fail(err, rc, in->path, NULL, opprof_strerror(rc));
    scan_ctx scan = {.in = in};
    copy_ctx copy = {.in = in, .o = o, .first = first};
    if (skip_ws(&s) == '[') /* the array form (PyTorch's legacy exporter, Chrome's JSON Array Format) */
        rc = o ? events(&s, copy_event, &copy) : events(&s, scan_event, &scan);
    else
        rc = o ? object(&s, copy_top_key, &copy) : object(&s, scan_top_key, &scan);
    if (rc == 0 && skip_ws(&s) >= 0) rc = OPPROF_EFORMAT; /* text after the trace */
    if (s.err) rc = s.err;
    if (rc)
        fail(err, rc, in->path, &s,
             rc == OPPROF_ENOMEM      ? "out of memory"
             : s.bad_utf8             ? "a string holds bytes that are not UTF-8 (no reader takes such a trace)"
             : s.bad_time             ? "a timestamp moved to the merged trace's clock (by the inputs' "
                                        "baseTimeNanoseconds and clock offsets) is out of range"
             : in->n_pids == MAX_PIDS ? "more than 4096 processes in one trace"
             : rc == OPPROF_EFORMAT   ? "not a trace that can be merged (a JSON object with \"traceEvents\", or an "
                                        "array of events)"
                                      : opprof_strerror(rc));
    close_stream(&s);
    return rc;
}

/* Slots: ranks when every input has a distinct one, else input indexes.
 * Shifts: to the earliest start on rank 0's clock, in *base. Fails on an
 * input whose base time and clock offset leave int64's range. */
static int place_inputs(input *in, size_t n, int64_t *base_out, opprof_read_error *err) {
    bool distinct = true;
    for (size_t i = 0; i < n; i++) {
        if (!in[i].has_rank || in[i].rank.rank < 0 || in[i].rank.rank >= MAX_INPUTS) distinct = false;
        for (size_t j = 0; j < i && distinct; j++)
            if (in[j].rank.rank == in[i].rank.rank) distinct = false;
    }
    int64_t base = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        in[i].slot = distinct ? in[i].rank.rank : (int)i;
        int64_t start;
        if (__builtin_sub_overflow(in[i].base_ns, in[i].rank.clock_offset_ns, &start))
            return fail(err, OPPROF_EFORMAT, in[i].path, NULL,
                        "baseTimeNanoseconds less distributedInfo.clock_offset_ns is out of range");
        if (start < base) base = start;
    }
    for (size_t i = 0; i < n; i++)
        if (__builtin_sub_overflow(in[i].base_ns - in[i].rank.clock_offset_ns, base, &in[i].shift_ns))
            return fail(err, OPPROF_EFORMAT, in[i].path, NULL,
                        "its baseTimeNanoseconds is too far from the other inputs' (out of range)");
    *base_out = base;
    return 0;
}

/* An input's path as the merged trace records it: relative to the output's
 * directory when it lies under it (the pair can then move together). */
static const char *relative_to(const char *path, const char *out_path) {
    const char *slash = strrchr(out_path, '/');
    size_t dir = slash ? (size_t)(slash - out_path) : 0;
    if (dir && !strncmp(path, out_path, dir) && path[dir] == '/') return path + dir + 1;
    return path;
}

/* The merged trace's facts: its base time, the backend and world size, and
 * where each rank came from. */
static int put_header(sink *o, const input *in, size_t n, int64_t base, const char *out_path) {
    bool ours = true, kineto = false;
    int world = 0;
    const char *backend = "";
    for (size_t i = 0; i < n; i++) {
        ours = ours && in[i].ours;
        kineto = kineto || in[i].kineto;
        if (in[i].has_rank && in[i].rank.world_size > world) world = in[i].rank.world_size;
        if (in[i].has_rank && !backend[0]) backend = in[i].rank.backend;
    }
    opprof__strbuf sb = {0};
    /* the reader tells producers by such keys: Kineto's only when an input had them */
    opprof__sb_printf(&sb, "{\n%s  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": %lld,\n",
                      kineto ? "  \"schemaVersion\": 1,\n" : "", (long long)base);
    if (ours) opprof__sb_puts(&sb, "  \"opprof_version\": \"" OPPROF_VERSION_STRING "\",\n");
    if (backend[0]) {
        opprof__sb_puts(&sb, "  \"distributedInfo\": {\"backend\": ");
        opprof__sb_json_string(&sb, backend);
        opprof__sb_printf(&sb, ", \"rank\": 0, \"world_size\": %d},\n", world > 0 ? world : (int)n);
    }
    opprof__sb_puts(&sb, "  \"opprof_merged\": [");
    for (size_t i = 0; i < n; i++) {
        opprof__sb_printf(&sb,
                          "%s\n    {\"rank\": %d, \"pid_base\": %d, \"clock_offset_ns\": %lld, "
                          "\"clock_uncertainty_ns\": %lld, \"file\": ",
                          i ? "," : "", in[i].has_rank ? (int)in[i].rank.rank : (int)i, (in[i].slot + 1) * PID_BLOCK,
                          (long long)in[i].rank.clock_offset_ns, (long long)in[i].rank.clock_uncertainty_ns);
        opprof__sb_json_string(&sb, relative_to(in[i].path, out_path));
        opprof__sb_puts(&sb, "}");
    }
    opprof__sb_puts(&sb, "\n  ],\n  \"traceEvents\": [");
    int rc = sb.error;
    if (!rc) fwrite(sb.data, 1, sb.len, o->fp);
    opprof__sb_free(&sb);
    return rc;
}

/* Each rank's processes: "rank K" as a label, sorted by rank. */
static void put_rank_metadata(sink *o, const input *in, bool *first) {
    for (int p = 0; p < in->n_pids; p++) {
        int pid = (in->slot + 1) * PID_BLOCK + p;
        fprintf(o->fp,
                "%s\n{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%d,\"tid\":0,\"args\":{\"labels\":\"rank %d\"}}",
                *first ? "" : ",", pid, in->has_rank ? (int)in->rank.rank : in->slot);
        fprintf(o->fp,
                ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,\"args\":{\"sort_index\":%d}}",
                pid, pid);
        *first = false;
    }
}

int opprof_merge_traces(const char *const *paths, size_t n, const char *out_path, opprof_merge_result *result,
                        opprof_read_error *error) {
    if (error) memset(error, 0, sizeof *error);
    if (result) memset(result, 0, sizeof *result);
    if (!paths || !out_path || n == 0) return OPPROF_EINVAL;
    if (n > MAX_INPUTS) return fail(error, OPPROF_EINVAL, out_path, NULL, "more than 4096 traces to merge");
    input *in = opprof__calloc(n, sizeof *in);
    if (!in) return OPPROF_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        in[i].path = paths[i];
        struct stat st; /* each input is read twice: its facts, then its events */
        if (stat(paths[i], &st) == 0 && !S_ISREG(st.st_mode))
            rc = fail(error, OPPROF_EINVAL, paths[i], NULL,
                      "not a file (a pipe or a device): merge reads each trace twice, its facts then its "
                      "events; write it to a file first");
        if (!rc) rc = pass(&in[i], NULL, NULL, error);
    }
    opprof__file f = {0};
    if (!rc && (rc = opprof__file_open(&f, out_path)) != 0) fail(error, rc, out_path, NULL, opprof_strerror(rc));
    if (!rc) {
        static char outbuf[1 << 20];
        setvbuf(f.fp, outbuf, _IOFBF, sizeof outbuf);
        sink o = {f.fp};
        int64_t base = 0;
        rc = place_inputs(in, n, &base, error);
        if (!rc) rc = put_header(&o, in, n, base, out_path);
        bool first = true;
        for (size_t i = 0; i < n && !rc; i++) rc = pass(&in[i], &o, &first, error);
        for (size_t i = 0; i < n && !rc; i++) put_rank_metadata(&o, &in[i], &first);
        if (!rc) fputs("\n  ]\n}\n", f.fp);
        if (!rc && (rc = opprof__file_commit(&f)) != 0) fail(error, rc, out_path, NULL, opprof_strerror(rc));
        if (rc) opprof__file_abort(&f);
        if (!rc && result) {
            result->base_time_ns = base;
            result->inputs = (int)n;
            for (size_t i = 0; i < n; i++) result->events += in[i].events;
        }
    }
    for (size_t i = 0; i < n; i++) opprof__free(in[i].pids);
    opprof__free(in);
    return rc;
}
