/* reader.c - Chrome trace files to captures, streaming.
 *
 * A strict JSON parser written for this one job (docs/DEPENDENCIES.md has the
 * measurement that ruled out yajl's 283 MB/s): it reads the file through a
 * 1 MiB window (zlib's gzread, which also passes plain files through), parses
 * each event object into the few fields a capture keeps, and validates
 * everything else it skips. Limits (nesting depth, string length, number
 * range) turn hostile input into errors with a byte offset, a line and a
 * column, never into a crash, a hang or unbounded memory. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { WINDOW = 1 << 20, DEFAULT_DEPTH = 64, PROGRESS_STEP = 64 << 20 };
static const int64_t DEFAULT_MAX_STRING = 1 << 20;

/* ---- input: a gz stream (plain files pass through) or memory ---- */

typedef struct source {
    gzFile gz;
    const unsigned char *mem; /* memory input (plain) */
    size_t mem_len, mem_pos;
    z_stream z;               /* memory input (gzip) */
    bool z_active;
    int64_t size;             /* bytes of the file or buffer */
} source;

static int64_t source_read(source *s, unsigned char *dst, size_t cap) {
    if (s->gz) {
        int n = gzread(s->gz, dst, (unsigned)cap);
        if (n < 0) {
            int zerr;
            const char *msg = gzerror(s->gz, &zerr);
            (void)msg;
            return zerr == Z_ERRNO ? -errno : OPPROF_EFORMAT;
        }
        return n;
    }
    if (s->z_active) {
        s->z.next_out = dst;
        s->z.avail_out = (uInt)cap;
        while (s->z.avail_out == cap) {
            int rc = inflate(&s->z, Z_NO_FLUSH);
            if (rc == Z_STREAM_END) break;
            if (rc != Z_OK) return OPPROF_EFORMAT;
        }
        return (int64_t)(cap - s->z.avail_out);
    }
    size_t n = s->mem_len - s->mem_pos < cap ? s->mem_len - s->mem_pos : cap;
    memcpy(dst, s->mem + s->mem_pos, n);
    s->mem_pos += n;
    return (int64_t)n;
}

static int64_t source_position(source *s) {
    if (s->gz) return (int64_t)gzoffset(s->gz);
    return s->z_active ? (int64_t)s->z.total_in : (int64_t)s->mem_pos;
}

/* ---- the parser ---- */

typedef struct xrecord { /* complete event, for the checks */
    uint32_t thread, name;
    int64_t start, end, offset, line, column;
} xrecord;

typedef struct begun { /* a "B" event waiting for its "E" */
    uint32_t thread;
    int32_t outer;         /* the one open before it on its thread, or -1 */
    uint8_t cat;        /* cat_class */
    int64_t ts, offset, line, column;
    char *name;            /* owned */
} begun;

typedef struct mrecord { /* memory event with a total, for the checks */
    int64_t ts, bytes, total, offset, line, column;
    uint32_t thread;
} mrecord;

/* Valid events that become no part of a capture, counted by kind. */
enum { UNUSED_FLOW, UNUSED_ASYNC, UNUSED_COUNTER, UNUSED_INSTANT, UNUSED_OBJECT, UNUSED_OTHER_PHASE, UNUSED_SPAN,
       UNUSED_PYTHON, UNUSED_FILTERED, UNUSED_KINDS };
static const char *const UNUSED_NAMES[UNUSED_KINDS] = {
    "flow events (s/t/f)", "async events (b/n/e, S/T/p/F)", "counter samples (C)", "instant events (i)",
    "object events (N/O/D)", "events of other phases (P/R/V/v/c)", "Kineto spans (cat Trace)",
    "Python function events (left out, as key_averages does)", "events PyTorch's key_averages leaves out by name"};

typedef struct parser {
    source src;
    unsigned char *buf;
    size_t len, pos;
    int64_t base;          /* offset of buf[0] in the text */
    int64_t lc_off;        /* line counting has reached this offset (>= base) */
    int64_t lc_lines;      /* newlines before lc_off */
    int64_t lc_last;       /* offset of the last newline before lc_off, or -1 */
    bool eof;
    int depth, max_depth;
    int64_t max_string;
    const char *s;         /* the last string, decoded, NUL-terminated: in the window
                              (valid until the next read) or in str */
    size_t s_len;
    char *str;             /* scratch for strings that need decoding or span windows */
    size_t str_len, str_cap;
    opprof_read_error *err;
    const opprof_read_options *opt;
    int64_t next_progress;
    opprof_capture *cap;
    opprof__index thread_index; /* (pid, tid) -> the capture's thread */
    uint32_t last_thread;       /* the capture's thread + 1 of the last hit */
    char **string_ids;     /* string pids/tids ("CPU functions") */
    size_t n_string_ids, cap_string_ids;
    xrecord *xs;
    size_t n_xs, cap_xs;
    mrecord *ms;
    size_t n_ms, cap_ms;
    begun *begins;         /* "B" events not yet ended; a stack per thread through `outer` */
    size_t n_begins, cap_begins;
    int32_t *innermost;    /* capture thread -> its innermost open "B", or -1 */
    size_t cap_innermost;
    int64_t min_ts, max_ts; /* the earliest time, the latest end */
    uint64_t problems;
    opprof__link *links;   /* operators, runtime calls and device activities, by their ids */
    size_t n_links, cap_links;
    bool ours;             /* the trace names opprof_version: opprof wrote it */
    uint64_t unused[UNUSED_KINDS]; /* valid events that are no part of the capture, by kind */
} parser;

/* Line numbers: a cursor that counts newlines forward through the window,
 * so that asking for the places of successive events costs O(text). Sixteen
 * bytes at a time with SSE2 (per-byte counters, summed every 255 blocks):
 * the count runs over every byte read, and the byte loop gcc vectorizes was
 * 13 % of reading a PyTorch trace. */
static void advance_lines(parser *p, int64_t upto) {
    const unsigned char *b = p->buf + (p->lc_off - p->base), *e = p->buf + (upto - p->base);
    int64_t count = 0;
    const unsigned char *q = b;
#if defined(__SSE2__)
    const __m128i newline = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (q + 16 <= e) {
        __m128i counters = zero; /* each byte counts its lane's newlines, up to 255 */
        for (int blocks = 0; blocks < 255 && q + 16 <= e; blocks++, q += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
            counters = _mm_sub_epi8(counters, _mm_cmpeq_epi8(v, newline)); /* a match is -1 */
        }
        __m128i sums = _mm_sad_epu8(counters, zero); /* two 64-bit lane sums */
        count += _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums));
    }
#endif
    for (; q < e; q++) count += *q == '\n';
    if (count) {
        for (const unsigned char *r = e; r-- > b;)
            if (*r == '\n') {
                p->lc_last = p->base + (r - p->buf);
                break;
            }
        p->lc_lines += count;
    }
    p->lc_off = upto;
}

/* Line and column of an offset at or after the cursor; 0, 0 for an older one. */
static void locate(parser *p, int64_t offset, int64_t *line, int64_t *column) {
    if (offset < p->lc_off) {
        *line = *column = 0;
        return;
    }
    int64_t end = p->base + (int64_t)p->len;
    advance_lines(p, offset < end ? offset : end);
    *line = p->lc_lines + 1;
    *column = offset - p->lc_last;
}

static int fail_at(parser *p, int64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(parser *p, int64_t offset, const char *fmt, ...) {
    if (p->err && p->err->code == 0) {
        p->err->code = OPPROF_EFORMAT;
        p->err->offset = offset;
        locate(p, offset, &p->err->line, &p->err->column);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err->message, sizeof p->err->message, fmt, ap);
        va_end(ap);
    }
    return OPPROF_EFORMAT;
}

#define HERE(p) ((p)->base + (int64_t)(p)->pos)
#define FAIL(p, ...) fail_at((p), HERE(p), __VA_ARGS__)

static int fail_code(parser *p, int code, const char *what) {
    if (p->err && p->err->code == 0) {
        p->err->code = code;
        p->err->offset = HERE(p);
        locate(p, HERE(p), &p->err->line, &p->err->column);
        snprintf(p->err->message, sizeof p->err->message, "%s: %s", what, opprof_strerror(code));
    }
    return code;
}

/* Slide the window: keep what is not consumed, read more. */
static int refill(parser *p) {
    if (p->eof) return 0;
    advance_lines(p, p->base + (int64_t)p->pos);
    memmove(p->buf, p->buf + p->pos, p->len - p->pos);
    p->base += (int64_t)p->pos;
    p->len -= p->pos;
    p->pos = 0;
    int64_t n = source_read(&p->src, p->buf + p->len, WINDOW - p->len);
    if (n < 0) return n == OPPROF_EFORMAT ? FAIL(p, "the gzip data is corrupt") : fail_code(p, (int)n, "read");
    if (n == 0) p->eof = true;
    p->len += (size_t)n;
    if (p->opt && p->opt->on_progress) {
        int64_t at = source_position(&p->src);
        if (at >= p->next_progress || p->eof) {
            p->opt->on_progress(p->opt->ctx, at, p->src.size);
            p->next_progress = at + PROGRESS_STEP;
        }
    }
    return 0;
}

/* The next byte (not consumed), or -1 at the end. */
static inline int peek_byte(parser *p) {
    if (__builtin_expect(p->pos < p->len, 1)) return p->buf[p->pos];
    if (refill(p)) return -2;
    return p->pos < p->len ? p->buf[p->pos] : -1;
}

/* Skip white space; the next byte, -1 at the end, -2 on error. */
static inline int skip_ws(parser *p) {
    for (;;) {
        while (p->pos < p->len) {
            unsigned char c = p->buf[p->pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c;
            p->pos++;
        }
        if (p->eof) return -1;
        if (refill(p)) return -2;
    }
}

static int expect_byte_slow(parser *p, int want, const char *what);
static inline int expect_byte(parser *p, int want, const char *what) {
    if (__builtin_expect(p->pos < p->len && p->buf[p->pos] == want, 1)) {
        p->pos++;
        return 0;
    }
    return expect_byte_slow(p, want, what);
}

static int expect_byte_slow(parser *p, int want, const char *what) {
    int c = skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    if (c != want) return c == -1 ? FAIL(p, "unexpected end of the file: expected %s", what)
                                  : FAIL(p, "expected %s, found '%c'", what, c);
    p->pos++;
    return 0;
}

static int str_push(parser *p, const void *data, size_t n) {
    if ((int64_t)(p->str_len + n) > p->max_string) /* the n bytes were just consumed: point at the excess */
        return fail_at(p, HERE(p) - (int64_t)n + (p->max_string - (int64_t)p->str_len),
                       "string longer than %lld bytes", (long long)p->max_string);
    if (p->str_len + n + 1 > p->str_cap) {
        size_t cap = p->str_cap ? p->str_cap : 256;
        while (cap < p->str_len + n + 1) cap *= 2;
        char *s = opprof__realloc(p->str, cap);
        if (!s) return fail_code(p, OPPROF_ENOMEM, "string");
        p->str = s;
        p->str_cap = cap;
    }
    memcpy(p->str + p->str_len, data, n);
    p->str_len += n;
    p->str[p->str_len] = '\0';
    return 0;
}

static int hex4(parser *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int c = peek_byte(p);
        if (c < 0) return c == -2 ? OPPROF_EFORMAT : FAIL(p, "unexpected end of the file in a \\u escape");
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return FAIL(p, "invalid \\u escape");
        v = v * 16 + (unsigned)d;
        p->pos++;
    }
    *out = v;
    return 0;
}

static int put_utf8(parser *p, unsigned cp) {
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | cp >> 6);
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | cp >> 12);
        b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | cp >> 18);
        b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return str_push(p, b, n);
}

/* Validate one UTF-8 sequence starting at a byte >= 0x80; copy it. */
static int utf8_sequence(parser *p) {
    unsigned char b[4];
    int c = peek_byte(p);
    b[0] = (unsigned char)c;
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!n) return FAIL(p, "invalid UTF-8 byte 0x%02X in a string", (unsigned)c);
    p->pos++;
    for (size_t i = 1; i < n; i++) {
        int d = peek_byte(p);
        if (d == -2) return OPPROF_EFORMAT;
        if (d < 0 || (d & 0xC0) != 0x80) return FAIL(p, "invalid UTF-8 sequence in a string");
        if (i == 1 && ((b[0] == 0xE0 && d < 0xA0) || (b[0] == 0xED && d >= 0xA0) || (b[0] == 0xF0 && d < 0x90) ||
                       (b[0] == 0xF4 && d >= 0x90)))
            return FAIL(p, "invalid UTF-8 sequence in a string");
        b[i] = (unsigned char)d;
        p->pos++;
    }
    return str_push(p, b, n);
}

/* Where a run of plain string bytes that starts at `i` ends: the first '"',
 * '\\', control byte or non-ASCII byte, or `len`. Sixteen bytes at a time
 * with SSE2 (every x86-64 has it): PyTorch's traces are mostly long strings
 * ("Call stack", kernel names). */
static inline size_t plain_run_end(const unsigned char *b, size_t i, size_t len) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (i + 16 <= len) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        /* signed: bytes >= 0x80 are negative, so "< 0x20" also finds them */
        __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                    _mm_cmplt_epi8(v, space));
        int mask = _mm_movemask_epi8(stop);
        if (mask) return i + (size_t)__builtin_ctz((unsigned)mask);
        i += 16;
    }
#endif
    while (i < len && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 && b[i] < 0x80) i++;
    return i;
}

/* A string (the opening quote is next); decoded into p->s. */
static int parse_string(parser *p) {
    if (expect_byte(p, '"', "a string")) return OPPROF_EFORMAT;
    /* Fast path: plain bytes up to the closing quote inside the window are
     * used in place, the quote turned into the terminating NUL. */
    size_t i = plain_run_end(p->buf, p->pos, p->len);
    unsigned char *b = p->buf;
    if (i < p->len && b[i] == '"' && (int64_t)(i - p->pos) <= p->max_string) {
        b[i] = '\0';
        p->s = (const char *)b + p->pos;
        p->s_len = i - p->pos;
        p->pos = i + 1;
        return 0;
    }
    p->str_len = 0;
    if (p->str) p->str[0] = '\0';
    for (;;) {
        /* Plain bytes in a run: copy at once. */
        size_t start = p->pos;
        p->pos = plain_run_end(p->buf, p->pos, p->len);
        if (p->pos > start && str_push(p, p->buf + start, p->pos - start)) return OPPROF_EFORMAT;
        int c = peek_byte(p);
        if (c == -2) return OPPROF_EFORMAT;
        if (c == -1) return FAIL(p, "unexpected end of the file inside a string");
        if (c == '"') {
            p->pos++;
            if (!p->str && str_push(p, "", 0)) return OPPROF_EFORMAT;
            p->s = p->str;
            p->s_len = p->str_len;
            return 0;
        }
        if (c < 0x20) return FAIL(p, "control character 0x%02X inside a string", (unsigned)c);
        if (c >= 0x80) {
            if (utf8_sequence(p)) return OPPROF_EFORMAT;
            continue;
        }
        if (c != '\\') continue; /* the window ended inside a run of plain bytes */
        /* an escape */
        p->pos++;
        int e = peek_byte(p);
        if (e < 0) return e == -2 ? OPPROF_EFORMAT : FAIL(p, "unexpected end of the file in an escape");
        p->pos++;
        char out;
        switch (e) {
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case '/': out = '/'; break;
        case 'b': out = '\b'; break;
        case 'f': out = '\f'; break;
        case 'n': out = '\n'; break;
        case 'r': out = '\r'; break;
        case 't': out = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(p, &cp)) return OPPROF_EFORMAT;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (peek_byte(p) != '\\') return FAIL(p, "unpaired surrogate in a \\u escape");
                p->pos++;
                if (peek_byte(p) != 'u') return FAIL(p, "unpaired surrogate in a \\u escape");
                p->pos++;
                if (hex4(p, &lo)) return OPPROF_EFORMAT;
                if (lo < 0xDC00 || lo > 0xDFFF) return FAIL(p, "unpaired surrogate in a \\u escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return FAIL(p, "unpaired surrogate in a \\u escape");
            }
            if (put_utf8(p, cp)) return OPPROF_EFORMAT;
            continue;
        }
        default: p->pos--; return FAIL(p, "invalid escape '\\%c' in a string", e);
        }
        if (str_push(p, &out, 1)) return OPPROF_EFORMAT;
    }
}

/* A number. `ns` receives value x 1000 rounded (microseconds to
 * nanoseconds), `as_int` the value when it is an integer in range. */
typedef struct number {
    bool is_int;
    int64_t as_int;
    int64_t ns;
    bool ns_ok;
    /* the value as a double: number_value(); kept as its decimal parts, since
     * times and ids never need it (a division a number was 7 % of reading) */
    bool neg;
    uint64_t mant;
    int exp10;
} number;

static const uint64_t POW10_U64[] = {1u,
                                     10u,
                                     100u,
                                     1000u,
                                     10000u,
                                     100000u,
                                     1000000u,
                                     10000000u,
                                     100000000u,
                                     1000000000u,
                                     10000000000u,
                                     100000000000u,
                                     1000000000000u,
                                     10000000000000u,
                                     100000000000000u,
                                     1000000000000000u,
                                     10000000000000000u,
                                     100000000000000000u,
                                     1000000000000000000u,
                                     10000000000000000000u};

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static void number_finish(number *out, bool neg, uint64_t mant, int digits, int exp10, bool is_int);

/* Fast path: a plain number (up to 18 digits, an optional fraction, no
 * exponent) that ends inside the window. Returns false to take the slow path. */
static inline bool parse_number_fast(parser *p, number *out) {
    const unsigned char *b = p->buf + p->pos, *end = p->buf + p->len, *q = b;
    bool neg = false;
    if (q < end && *q == '-') {
        neg = true;
        q++;
    }
    if (q >= end || *q < '0' || *q > '9') return false;
    if (*q == '0' && q + 1 < end && q[1] >= '0' && q[1] <= '9') return false; /* leading zero: slow path says so */
    uint64_t mant = 0;
    int digits = 0, exp10 = 0;
    while (q < end && *q >= '0' && *q <= '9') {
        mant = mant * 10 + (uint64_t)(*q++ - '0');
        digits++;
    }
    bool is_int = true;
    if (q < end && *q == '.') {
        is_int = false;
        q++;
        if (q >= end || *q < '0' || *q > '9') return false;
        while (q < end && *q >= '0' && *q <= '9') {
            mant = mant * 10 + (uint64_t)(*q++ - '0');
            digits++;
            exp10--;
        }
    }
    if (q >= end || digits > 18 || *q == 'e' || *q == 'E') return false;
    p->pos += (size_t)(q - b);
    number_finish(out, neg, mant, digits, exp10, is_int);
    return true;
}

static int parse_number(parser *p, number *out) {
    if (parse_number_fast(p, out)) return 0;
    int64_t at = HERE(p);
    int c = skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    bool neg = false;
    if (c == '-') {
        neg = true;
        p->pos++;
        c = peek_byte(p);
    }
    if (c < '0' || c > '9') return c == -2 ? OPPROF_EFORMAT : FAIL(p, "invalid number");
    uint64_t mant = 0;
    int digits = 0, exp10 = 0;
    bool lead_zero = c == '0';
    while ((c = peek_byte(p)) >= '0' && c <= '9') {
        if (digits < 19) {
            mant = mant * 10 + (uint64_t)(c - '0');
            if (mant) digits++;
        } else {
            exp10++;
        }
        p->pos++;
        if (lead_zero) break;
    }
    if (lead_zero && (c = peek_byte(p)) >= '0' && c <= '9') return FAIL(p, "invalid number: leading zero");
    bool is_int = true;
    if (c == '.') {
        is_int = false;
        p->pos++;
        c = peek_byte(p);
        if (c < '0' || c > '9') return c == -2 ? OPPROF_EFORMAT : FAIL(p, "invalid number: no digit after '.'");
        while ((c = peek_byte(p)) >= '0' && c <= '9') {
            if (digits < 19) {
                mant = mant * 10 + (uint64_t)(c - '0');
                if (mant) digits++;
                exp10--;
            }
            p->pos++;
        }
    }
    if (c == 'e' || c == 'E') {
        is_int = false;
        p->pos++;
        c = peek_byte(p);
        bool eneg = false;
        if (c == '+' || c == '-') {
            eneg = c == '-';
            p->pos++;
            c = peek_byte(p);
        }
        if (c < '0' || c > '9') return c == -2 ? OPPROF_EFORMAT : FAIL(p, "invalid number: no digit in the exponent");
        int e = 0;
        while ((c = peek_byte(p)) >= '0' && c <= '9') {
            if (e < 100000) e = e * 10 + (c - '0');
            p->pos++;
        }
        exp10 += eneg ? -e : e;
    }
    if (c == -2) return OPPROF_EFORMAT;
    if (mant != 0 && exp10 + digits > 309) return fail_at(p, at, "number out of range");
    number_finish(out, neg, mant, digits, exp10, is_int);
    return 0;
}

static double number_value(const number *n) {
    double v = (double)n->mant;
    if (n->exp10 > 0)
        v *= n->exp10 <= 22 ? POW10[n->exp10] : pow(10.0, n->exp10);
    else if (n->exp10 < 0)
        v /= -n->exp10 <= 22 ? POW10[-n->exp10] : pow(10.0, -n->exp10);
    return n->neg ? -v : v;
}

static void number_finish(number *out, bool neg, uint64_t mant, int digits, int exp10, bool is_int) {
    (void)digits;
    out->neg = neg;
    out->mant = mant;
    out->exp10 = exp10;
    out->is_int = is_int && exp10 == 0 && mant <= (uint64_t)INT64_MAX;
    out->as_int = out->is_int ? (neg ? -(int64_t)mant : (int64_t)mant) : 0;
    /* value x 1000, exact when it can be */
    int e3 = exp10 + 3;
    out->ns_ok = true;
    if (mant == 0) {
        out->ns = 0;
    } else if (e3 >= 0 && e3 <= 18 && mant <= (uint64_t)INT64_MAX / POW10_U64[e3]) {
        out->ns = (int64_t)(mant * POW10_U64[e3]);
        if (neg) out->ns = -out->ns;
    } else if (e3 < 0 && e3 >= -19) {
        uint64_t div = POW10_U64[-e3];
        out->ns = (int64_t)(mant / div + (mant % div >= div - div / 2)); /* half up, without overflow */
        if (neg) out->ns = -out->ns;
    } else {
        double v = number_value(out);
        out->ns_ok = fabs(v) * 1000.0 < 9.2e18;
        out->ns = out->ns_ok ? (int64_t)llround(v * 1000.0) : 0;
    }
}

static int parse_literal(parser *p, const char *word) {
    for (const char *w = word; *w; w++) {
        int c = peek_byte(p);
        if (c == -2) return OPPROF_EFORMAT;
        if (c != *w) return FAIL(p, "invalid literal (expected '%s')", word);
        p->pos++;
    }
    return 0;
}

/* Containers. open_items: the opening byte, one level deeper; 0 when the
 * container is empty (and closed), 1 when items follow. next_item, after an
 * item: 1 for another, 0 when the closing byte ends the container. Both
 * return a negative code on an error. */
static int open_items(parser *p, int open, int close, const char *what) {
    if (expect_byte(p, open, what)) return OPPROF_EFORMAT;
    if (++p->depth > p->max_depth) return FAIL(p, "nesting deeper than %d levels", p->max_depth);
    int c = skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    if (c != close) return 1;
    p->pos++;
    p->depth--;
    return 0;
}

static int next_item(parser *p, int close, const char *where) {
    int c = skip_ws(p);
    if (c == ',') {
        p->pos++;
        return 1;
    }
    if (c == close) {
        p->pos++;
        p->depth--;
        return 0;
    }
    if (c == -2) return OPPROF_EFORMAT;
    return c == -1 ? FAIL(p, "unexpected end of the file: expected ',' or '%c' %s", close, where)
                   : FAIL(p, "expected ',' or '%c' %s, found '%c'", close, where, c);
}

/* Validate and skip any value. */
static int skip_value(parser *p) {
    int c = skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    switch (c) {
    case '"': return parse_string(p);
    case 't': return parse_literal(p, "true");
    case 'f': return parse_literal(p, "false");
    case 'n': return parse_literal(p, "null");
    case '{':
    case '[': {
        int close = c == '{' ? '}' : ']';
        int more = open_items(p, c, close, c == '{' ? "an object" : "an array");
        while (more == 1) {
            if (c == '{' && (parse_string(p) || expect_byte(p, ':', "':'"))) return OPPROF_EFORMAT;
            if (skip_value(p)) return OPPROF_EFORMAT;
            more = next_item(p, close, c == '{' ? "in an object" : "in an array");
        }
        return more;
    }
    case -1: return FAIL(p, "unexpected end of the file: expected a value");
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            number n;
            return parse_number(p, &n);
        }
        return FAIL(p, "unexpected character '%c': expected a value", c);
    }
}

/* Iterate an object: for each key, `on_key` parses (or skips) the value. */
typedef int (*key_fn)(parser *p, void *ctx, const char *key, size_t key_len);

static inline __attribute__((always_inline)) int parse_object(parser *p, key_fn on_key, void *ctx) {
    char key[64];
    int more = open_items(p, '{', '}', "an object");
    while (more == 1) {
        if (parse_string(p)) return OPPROF_EFORMAT;
        size_t klen = p->s_len < sizeof key - 1 ? p->s_len : sizeof key - 1;
        memcpy(key, p->s, klen);
        key[klen] = '\0';
        if (p->s_len >= sizeof key) klen = sizeof key; /* a long key matches nothing we know */
        if (expect_byte(p, ':', "':' after a key")) return OPPROF_EFORMAT;
        if (on_key(p, ctx, key, klen)) return OPPROF_EFORMAT;
        more = next_item(p, '}', "in an object");
    }
    return more;
}

#define KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), (lit), sizeof(lit) - 1) == 0)

/* ---- problems (opprof check) ---- */

static void vproblem(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, va_list ap) {
    p->problems++;
    if (!p->opt || !p->opt->on_problem) return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    opprof_trace_problem pr = {.offset = offset, .line = line, .column = column, .message = msg};
    p->opt->on_problem(p->opt->ctx, &pr);
}

/* The checks that need the whole trace (records kept for each event). */
static bool whole_checks(const parser *p) { return p->opt && p->opt->on_problem && !p->opt->events_only; }

/* A problem at an offset in the current window. */
static void problem_at(parser *p, int64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem_at(parser *p, int64_t offset, const char *fmt, ...) {
    int64_t line = 0, column = 0;
    if (offset >= 0) locate(p, offset, &line, &column);
    va_list ap;
    va_start(ap, fmt);
    vproblem(p, offset, line, column, fmt, ap);
    va_end(ap);
}

/* A problem found after parsing, at a place remembered while parsing. */
static void problem_placed(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void problem_placed(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vproblem(p, offset, line, column, fmt, ap);
    va_end(ap);
}

/* ---- events ---- */

enum { HAS_TS = 1, HAS_DUR = 2, HAS_NAME = 4, HAS_PH = 8, HAS_BYTES = 16, HAS_TOTAL = 32 };

/* What an event's "cat" says it is (Kineto's categories, PyTorch 1.8 to 2.x). */
typedef enum cat_class {
    CAT_OTHER = 0,          /* no category, or one of another tool: a CPU operator */
    CAT_CPU_OP,             /* "cpu_op", "Operator" */
    CAT_USER,               /* "user_annotation" */
    CAT_RUNTIME,            /* "cuda_runtime", "cuda_driver", "Runtime", "mtia_runtime": CPU rows */
    CAT_DEVICE,             /* kernels, copies, sets, syncs on a device */
    CAT_DEVICE_ANNOTATION,  /* "gpu_user_annotation": a device row, never in totals */
    CAT_SPAN,               /* "Trace": Kineto's own span, never a row */
    CAT_PYTHON              /* "python_function": left out, as key_averages does */
} cat_class;

typedef struct event {
    char ph;
    char ph_text[8];
    uint8_t cat;        /* cat_class */
    bool mtia;          /* the category names MTIA */
    bool memory_name;   /* name == "[memory]" */
    int have;
    int64_t pid, tid;
    int64_t ts, dur;
    int64_t bytes, addr, total;
    char *name;         /* copy (owned by parser scratch) */
    size_t name_cap;
    char *arg_name;     /* args.name of "M" events */
    size_t arg_name_cap;
    bool bad_type;
    const char *bad_field;
    bool has_dims, has_types;
    opprof_shapes shapes; /* args "Input Dims" and "Input type" */
    char *frame;          /* the first frame of args "Call stack" */
    size_t frame_cap;
    int64_t ext_id, corr_id; /* args "External id" ("external id": ext_lower), "correlation"; -1 */
    bool ext_lower;
    int64_t device_type;     /* args "Device Type" of memory events (0: CPU) */
    int64_t device_id;       /* args "Device Id" (-1: none) */
    /* opprof's own traces: the arguments, ids and scopes its marks were written as */
    int n_args;
    struct {
        char key[48];
        char str[128];
        uint8_t kind; /* OPPROF_MARK_ARG_INT, _DOUBLE, _STR */
        int64_t i;
        double d;
    } args[8];
    uint64_t id;             /* "id" of flow and async events */
    char category[64];       /* opprof's traces: a range's category ("cat" after its kind) */
    char scope;              /* "s" of instants: 't', 'p', 'g' */
} event;

static int copy_into(char **dst, size_t *cap, const char *src, size_t n) {
    if (n + 1 > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < n + 1) c *= 2;
        char *s = opprof__realloc(*dst, c);
        if (!s) return OPPROF_ENOMEM;
        *dst = s;
        *cap = c;
    }
    memcpy(*dst, src, n);
    (*dst)[n] = '\0';
    return 0;
}

static int number_field(parser *p, event *e, int64_t *out, const char *field, bool as_time);

/* An id (pid/tid): an integer, or a string mapped to a stable negative id. */
static int parse_id(parser *p, event *e, int64_t *out, const char *field) {
    int c = skip_ws(p);
    if (c == '"') {
        if (parse_string(p)) return OPPROF_EFORMAT;
        /* "7" is thread 7 (PyTorch 1.9 writes operators' tids as strings and
         * memory events' as numbers) */
        char *end;
        errno = 0;
        long long v = p->s_len && p->s_len < 19 && p->s[0] >= '0' && p->s[0] <= '9' ? strtoll(p->s, &end, 10) : -1;
        if (v >= 0 && !errno && end == p->s + p->s_len) {
            *out = v;
            return 0;
        }
        for (size_t i = 0; i < p->n_string_ids; i++)
            if (strcmp(p->string_ids[i], p->s) == 0) {
                *out = -(int64_t)i - 1;
                return 0;
            }
        if (opprof__grow((void **)&p->string_ids, &p->cap_string_ids, p->n_string_ids + 1, sizeof(char *)))
            return fail_code(p, OPPROF_ENOMEM, "ids");
        char *copy = opprof__strdup(p->s);
        if (!copy) return fail_code(p, OPPROF_ENOMEM, "ids");
        p->string_ids[p->n_string_ids++] = copy;
        *out = -(int64_t)p->n_string_ids;
        return 0;
    }
    return number_field(p, e, out, field, false);
}

/* A numeric field: an integer (int_field), or microseconds kept as
 * nanoseconds (time_field); another type or an out-of-range value marks the
 * event bad (a problem for `opprof check`), and the value is skipped. */
static int number_field(parser *p, event *e, int64_t *out, const char *field, bool as_time) {
    int c = skip_ws(p);
    if (c != '-' && (c < '0' || c > '9')) {
        e->bad_type = true;
        e->bad_field = field;
        return skip_value(p);
    }
    number n;
    if (parse_number(p, &n)) return OPPROF_EFORMAT;
    /* times within +-2^61 ns (73 years): shifted starts plus durations never overflow */
    bool ok = as_time ? n.ns_ok && n.ns <= (INT64_C(1) << 61) && n.ns >= -(INT64_C(1) << 61) : n.is_int;
    if (!ok) {
        e->bad_type = true;
        e->bad_field = field;
    }
    *out = as_time ? n.ns : n.as_int;
    return 0;
}

static int time_field(parser *p, event *e, int64_t *out, const char *field) {
    return number_field(p, e, out, field, true);
}

static int int_field(parser *p, event *e, int64_t *out, const char *field) {
    return number_field(p, e, out, field, false);
}

/* Iterate an array: `on_item` parses (or skips) each element. */
static int parse_array(parser *p, int (*on_item)(parser *p, void *ctx, int index), void *ctx) {
    int more = open_items(p, '[', ']', "an array");
    for (int index = 0; more == 1; index++) {
        if (on_item(p, ctx, index)) return OPPROF_EFORMAT;
        more = next_item(p, ']', "in an array");
    }
    return more;
}

typedef struct dims_ctx {
    event *e;
    int input;
    bool list; /* the input is a list of tensors: no dims kept */
} dims_ctx;

/* "Input Dims" of PyTorch 1.8 to 2.x: a list per input, of integers for a
 * tensor; an input may also be a list of lists (a tensor list), an empty
 * list or a scalar. What is not a tensor's dims is kept as no dims, never a
 * problem: PyTorch wrote it. */
static int on_dim(parser *p, void *ctx, int index) {
    dims_ctx *d = ctx;
    int c = skip_ws(p);
    if (c != '-' && (c < '0' || c > '9')) {
        if (d->input < OPPROF_MAX_INPUTS) d->e->shapes.ndim[d->input] = 0; /* a list of tensors */
        d->list = true;
        return skip_value(p);
    }
    number v;
    if (parse_number(p, &v)) return OPPROF_EFORMAT;
    if (!v.is_int || d->list) return 0;
    if (d->input < OPPROF_MAX_INPUTS && index < OPPROF_MAX_INPUT_DIMS) {
        d->e->shapes.dims[d->input][index] = v.as_int;
        d->e->shapes.ndim[d->input] = index + 1;
    }
    return 0;
}

static int on_input_dims(parser *p, void *ctx, int index) {
    event *e = ctx;
    if (index < OPPROF_MAX_INPUTS) e->shapes.n_inputs = index + 1;
    if (skip_ws(p) != '[') return skip_value(p); /* a scalar: no dims */
    dims_ctx d = {e, index, false};
    return parse_array(p, on_dim, &d);
}

static int on_input_type(parser *p, void *ctx, int index) {
    event *e = ctx;
    if (skip_ws(p) != '"') return skip_value(p);
    if (parse_string(p)) return OPPROF_EFORMAT;
    if (index < OPPROF_MAX_INPUTS) {
        size_t len = p->s_len < sizeof e->shapes.dtype[0] - 1 ? p->s_len : sizeof e->shapes.dtype[0] - 1;
        memcpy(e->shapes.dtype[index], p->s, len);
        e->shapes.dtype[index][len] = '\0';
    }
    return 0;
}

/* The ids that link a device activity to the operator that launched it, and a
 * memory event's device: integers where given (another type is ignored, as
 * PyTorch ignores what it cannot use). */
static int id_arg(parser *p, event *e, const char *k, size_t n) {
    int c = skip_ws(p);
    if (c != '-' && (c < '0' || c > '9')) return skip_value(p);
    number v;
    if (parse_number(p, &v)) return OPPROF_EFORMAT;
    if (!v.is_int) return 0;
    if (KEY_IS(k, n, "correlation"))
        e->corr_id = v.as_int;
    else if (KEY_IS(k, n, "Device Type"))
        e->device_type = v.as_int;
    else if (KEY_IS(k, n, "Device Id"))
        e->device_id = v.as_int;
    else {
        e->ext_id = v.as_int;
        e->ext_lower = k[0] == 'e';
    }
    return 0;
}

/* An argument that opprof wrote (opprof_range_arg_*, FLOPs, bytes, a
 * counter's value): kept, to become a mark of the capture. */
static int own_arg(parser *p, event *e, const char *k, size_t n) {
    int c = skip_ws(p);
    __typeof__(e->args[0]) *a = &e->args[e->n_args];
    if (c == '"') {
        if (parse_string(p)) return OPPROF_EFORMAT;
        size_t len = p->s_len < sizeof a->str - 1 ? p->s_len : sizeof a->str - 1;
        memcpy(a->str, p->s, len);
        a->str[len] = '\0';
        a->kind = OPPROF_MARK_ARG_STR;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        number v;
        if (parse_number(p, &v)) return OPPROF_EFORMAT;
        a->kind = v.is_int ? OPPROF_MARK_ARG_INT : OPPROF_MARK_ARG_DOUBLE;
        a->i = v.as_int;
        a->d = number_value(&v);
    } else {
        return skip_value(p);
    }
    memcpy(a->key, k, n);
    a->key[n] = '\0';
    e->n_args++;
    return 0;
}

static int on_args_key(parser *p, void *ctx, const char *k, size_t n) {
    event *e = ctx;
    if (KEY_IS(k, n, "Input Dims")) {
        if (skip_ws(p) != '[') return skip_value(p);
        e->has_dims = true;
        return parse_array(p, on_input_dims, e);
    }
    if (KEY_IS(k, n, "Input type")) {
        if (skip_ws(p) != '[') return skip_value(p);
        e->has_types = true;
        return parse_array(p, on_input_type, e);
    }
    if (KEY_IS(k, n, "Call stack")) {
        if (skip_ws(p) != '"') return skip_value(p);
        if (parse_string(p)) return OPPROF_EFORMAT;
        const char *semi = memchr(p->s, ';', p->s_len);
        size_t len = semi ? (size_t)(semi - p->s) : p->s_len;
        return copy_into(&e->frame, &e->frame_cap, p->s, len) ? fail_code(p, OPPROF_ENOMEM, "args") : 0;
    }
    if (KEY_IS(k, n, "Bytes")) {
        e->have |= HAS_BYTES;
        return int_field(p, e, &e->bytes, "args.Bytes");
    }
    if (KEY_IS(k, n, "Addr")) return int_field(p, e, &e->addr, "args.Addr");
    if (KEY_IS(k, n, "External id") || KEY_IS(k, n, "external id") || KEY_IS(k, n, "correlation") ||
        KEY_IS(k, n, "Device Type") || KEY_IS(k, n, "Device Id"))
        return id_arg(p, e, k, n);
    if (KEY_IS(k, n, "Total Allocated")) {
        e->have |= HAS_TOTAL;
        return int_field(p, e, &e->total, "args.Total Allocated");
    }
    if (KEY_IS(k, n, "name") || KEY_IS(k, n, "labels")) { /* of thread_name, process_labels */
        if (skip_ws(p) != '"') return skip_value(p);
        if (parse_string(p)) return OPPROF_EFORMAT;
        return copy_into(&e->arg_name, &e->arg_name_cap, p->s, p->s_len) ? fail_code(p, OPPROF_ENOMEM, "args")
                                                                             : 0;
    }
    if (p->ours && e->n_args < (int)(sizeof e->args / sizeof *e->args) && n < sizeof e->args[0].key)
        return own_arg(p, e, k, n);
    return skip_value(p);
}

/* Kineto's categories: what is a CPU row, a device row, or no row. */
static cat_class classify(const char *c, size_t n, bool *mtia) {
#define CAT(lit, cls) {lit, sizeof lit - 1, cls}
    static const struct { const char *name; size_t len; cat_class cls; } known[] = {
        CAT("cpu_op", CAT_CPU_OP),        CAT("Operator", CAT_CPU_OP),     CAT("user_annotation", CAT_USER),
        CAT("cuda_runtime", CAT_RUNTIME),  CAT("cuda_driver", CAT_RUNTIME), CAT("Runtime", CAT_RUNTIME),
        CAT("mtia_runtime", CAT_RUNTIME),  CAT("kernel", CAT_DEVICE),       CAT("gpu_memcpy", CAT_DEVICE),
        CAT("gpu_memset", CAT_DEVICE),     CAT("cuda_sync", CAT_DEVICE),    CAT("Kernel", CAT_DEVICE),
        CAT("Memcpy", CAT_DEVICE),         CAT("Memset", CAT_DEVICE),       CAT("mtia_ccp_events", CAT_DEVICE),
        CAT("gpu_user_annotation", CAT_DEVICE_ANNOTATION),                  CAT("Trace", CAT_SPAN),
        CAT("python_function", CAT_PYTHON)};
#undef CAT
    *mtia = n >= 4 && memcmp(c, "mtia", 4) == 0;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (known[i].len == n && known[i].name[0] == c[0] && memcmp(known[i].name, c, n) == 0) return known[i].cls;
    return CAT_OTHER;
}

static int on_event_key(parser *p, void *ctx, const char *k, size_t n) {
    event *e = ctx;
    switch (n) {
    case 1:
        if (KEY_IS(k, n, "s") && skip_ws(p) == '"') { /* an instant's scope */
            if (parse_string(p)) return OPPROF_EFORMAT;
            e->scope = p->s_len == 1 ? p->s[0] : 't';
            return 0;
        }
        break;
    case 2:
        if (KEY_IS(k, n, "id")) { /* of a flow or async event: a number (opprof writes those) */
            int64_t id = 0;
            int c = skip_ws(p);
            if (c != '-' && (c < '0' || c > '9')) return skip_value(p);
            number v;
            if (parse_number(p, &v)) return OPPROF_EFORMAT;
            if (v.is_int) id = v.as_int;
            e->id = (uint64_t)id;
            return 0;
        }
        if (KEY_IS(k, n, "ph")) {
            if (skip_ws(p) != '"') {
                e->bad_type = true;
                e->bad_field = "ph";
                return skip_value(p);
            }
            if (parse_string(p)) return OPPROF_EFORMAT;
            e->have |= HAS_PH;
            e->ph = p->s_len == 1 ? p->s[0] : '?';
            size_t n_ph = p->s_len < sizeof e->ph_text - 1 ? p->s_len : sizeof e->ph_text - 1;
            memcpy(e->ph_text, p->s, n_ph);
            e->ph_text[n_ph] = '\0';
            return 0;
        }
        if (KEY_IS(k, n, "ts")) {
            e->have |= HAS_TS;
            return time_field(p, e, &e->ts, "ts");
        }
        break;
    case 3:
        if (KEY_IS(k, n, "dur")) {
            e->have |= HAS_DUR;
            return time_field(p, e, &e->dur, "dur");
        }
        if (KEY_IS(k, n, "pid")) return parse_id(p, e, &e->pid, "pid");
        if (KEY_IS(k, n, "tid")) return parse_id(p, e, &e->tid, "tid");
        if (KEY_IS(k, n, "cat")) {
            if (skip_ws(p) != '"') return skip_value(p);
            if (parse_string(p)) return OPPROF_EFORMAT;
            /* Chrome's list "user_annotation,io": the first names the kind,
             * the rest (opprof's traces) the range's own category */
            const char *comma = memchr(p->s, ',', p->s_len);
            size_t first = comma ? (size_t)(comma - p->s) : p->s_len;
            e->cat = (uint8_t)classify(p->s, first, &e->mtia);
            e->category[0] = '\0';
            if (comma && p->ours) {
                size_t len = p->s_len - first - 1 < sizeof e->category - 1 ? p->s_len - first - 1 : sizeof e->category - 1;
                memcpy(e->category, comma + 1, len);
                e->category[len] = '\0';
            }
            return 0;
        }
        break;
    case 4:
        if (KEY_IS(k, n, "name")) {
            if (skip_ws(p) != '"') {
                e->bad_type = true;
                e->bad_field = "name";
                return skip_value(p);
            }
            if (parse_string(p)) return OPPROF_EFORMAT;
            e->have |= HAS_NAME;
            e->memory_name = p->s_len == 8 && memcmp(p->s, "[memory]", 8) == 0;
            return copy_into(&e->name, &e->name_cap, p->s, p->s_len) ? fail_code(p, OPPROF_ENOMEM, "name") : 0;
        }
        if (KEY_IS(k, n, "args")) {
            if (skip_ws(p) != '{') return skip_value(p);
            return parse_object(p, on_args_key, e);
        }
        break;
    default: break;
    }
    return skip_value(p);
}

static uint64_t thread_hash(int64_t pid, int64_t tid) {
    uint64_t h = ((uint64_t)pid * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)tid * 0xC2B2AE3D27D4EB4Full);
    return h ^ (h >> 29);
}

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
static int thread_of(parser *p, int64_t pid, int64_t tid, uint32_t *index) {
    opprof_capture *c = p->cap;
    if (p->last_thread) {
        const opprof_thread_info *last = &c->threads[p->last_thread - 1];
        if (last->pid == pid && last->tid == tid) {
            *index = p->last_thread - 1;
            return 0;
        }
    }
    if (opprof__index_reserve(&p->thread_index, c->n_threads, thread_hash_of, c))
        return fail_code(p, OPPROF_ENOMEM, "threads");
    int64_t key[2] = {pid, tid};
    size_t k = opprof__index_probe(&p->thread_index, thread_hash(pid, tid), key, thread_equal, c);
    if (!p->thread_index.slots[k]) {
        if (c->n_threads > UINT16_MAX) return FAIL(p, "more than 65536 threads (pid, tid pairs): not supported");
        /* a tid written as a string ("stream 7") names its track until a
         * thread_name says otherwise */
        const char *label = tid < 0 && (size_t)(-tid - 1) < p->n_string_ids ? p->string_ids[-tid - 1] : "";
        int rc = opprof_capture_add_thread(c, tid, label, index);
        if (rc) return fail_code(p, rc, "threads");
        if (pid != 0 && c->info.pid == 0) c->info.pid = pid;
        c->threads[*index].pid = pid;
        p->thread_index.slots[k] = *index + 1;
    }
    *index = p->thread_index.slots[k] - 1;
    p->last_thread = *index + 1;
    return 0;
}

/* Add a complete event (an "X", or a "B" and its "E"); `e`, when given,
 * carries its call site and input shapes. line and column: the event's
 * place when it is before the cursor (-1: at offset). */
static int add_complete(parser *p, uint32_t thread, const char *name, uint8_t cat, int64_t ts, int64_t dur,
                        int64_t offset, int64_t line, int64_t column, event *e) {
    opprof_kind kind = cat == CAT_DEVICE              ? OPPROF_KIND_DEVICE
                       : cat == CAT_DEVICE_ANNOTATION ? OPPROF_KIND_DEVICE_ANNOTATION
                       : strncmp(name, "ProfilerStep#", 13) == 0 ? OPPROF_KIND_STEP
                       : cat == CAT_USER                        ? OPPROF_KIND_USER_ANNOTATION
                                                                : OPPROF_KIND_CPU_OP;
    int rc = opprof_capture_add_event(p->cap, thread, name, kind, ts, dur);
    if (rc) return fail_code(p, rc, "events");
    if (e) {
        if (kind == OPPROF_KIND_DEVICE || kind == OPPROF_KIND_DEVICE_ANNOTATION) {
            snprintf(p->cap->info.device_name, sizeof p->cap->info.device_name, "%s", e->mtia ? "MTIA" : "CUDA");
        }
        int role = kind == OPPROF_KIND_DEVICE ? OPPROF__LINK_DEVICE
                   : cat == CAT_RUNTIME       ? OPPROF__LINK_RUNTIME
                   : cat == CAT_CPU_OP || cat == CAT_OTHER ? OPPROF__LINK_OP
                                                           : -1;
        if (role >= 0 && (e->ext_id >= 0 || e->corr_id >= 0)) {
            if (opprof__grow((void **)&p->links, &p->cap_links, p->n_links + 1, sizeof *p->links))
                return fail_code(p, OPPROF_ENOMEM, "device links");
            p->links[p->n_links++] = (opprof__link){(uint32_t)(p->cap->n_events - 1), (uint8_t)role, e->ext_lower,
                                                    (uint16_t)thread, ts, ts + dur, e->ext_id, e->corr_id};
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
            return fail_code(p, OPPROF_ENOMEM, "sites");
    }
    if (ts < p->min_ts) p->min_ts = ts;
    if (ts + dur > p->max_ts) p->max_ts = ts + dur;
    if (whole_checks(p) && kind != OPPROF_KIND_DEVICE && kind != OPPROF_KIND_DEVICE_ANNOTATION) {
        if (opprof__grow((void **)&p->xs, &p->cap_xs, p->n_xs + 1, sizeof *p->xs))
            return fail_code(p, OPPROF_ENOMEM, "checks");
        xrecord *x = &p->xs[p->n_xs++];
        *x = (xrecord){thread, p->cap->events[p->cap->n_events - 1].name, ts, ts + dur, offset, line, column};
        if (line < 0) locate(p, offset, &x->line, &x->column);
    }
    return 0;
}

/* "B" and "E" events: an "E" ends the innermost "B" still open on its thread
 * (as Chrome's viewer pairs them), making one complete event. Their names
 * and categories come from the "B"; other arguments are not read. */
static int push_begin(parser *p, uint32_t thread, const event *e, int64_t offset) {
    if (opprof__grow((void **)&p->begins, &p->cap_begins, p->n_begins + 1, sizeof *p->begins))
        return fail_code(p, OPPROF_ENOMEM, "begin events");
    size_t old_cap = p->cap_innermost;
    if (opprof__grow((void **)&p->innermost, &p->cap_innermost, (size_t)thread + 1, sizeof *p->innermost))
        return fail_code(p, OPPROF_ENOMEM, "begin events");
    for (size_t i = old_cap; i < p->cap_innermost; i++) p->innermost[i] = -1;
    if (p->n_begins >= INT32_MAX) return FAIL(p, "more than 2^31 begin events open at once: not supported");
    size_t len = strlen(e->name);
    char *name = opprof__alloc(len + 1);
    if (!name) return fail_code(p, OPPROF_ENOMEM, "begin events");
    memcpy(name, e->name, len + 1);
    begun *b = &p->begins[p->n_begins];
    *b = (begun){thread, p->innermost[thread], e->cat, e->ts, offset, 0, 0, name};
    locate(p, offset, &b->line, &b->column);
    p->innermost[thread] = (int32_t)p->n_begins++;
    return 0;
}

static int pop_begin(parser *p, uint32_t thread, int64_t ts, int64_t offset) {
    int32_t i = thread < p->cap_innermost ? p->innermost[thread] : -1;
    if (i < 0) {
        problem_at(p, offset, "end event without a begin event open on its thread");
        return 0;
    }
    begun *b = &p->begins[i];
    p->innermost[thread] = b->outer;
    int rc = 0;
    if (ts < b->ts)
        problem_at(p, offset, "end event of '%s' (line %lld) is earlier than its begin", b->name, (long long)b->line);
    else
        rc = add_complete(p, thread, b->name, b->cat, b->ts, ts - b->ts, b->offset, b->line, b->column, NULL);
    opprof__free(b->name);
    b->name = NULL;
    /* The stack's top is the last slot when threads do not interleave. */
    while (p->n_begins && !p->begins[p->n_begins - 1].name) p->n_begins--;
    return rc;
}

/* "B" events never ended: read as lasting to the trace's end, as Chrome's
 * viewer shows them ("did not finish"), and said in the capture's warnings:
 * a trace cut short by its writer is valid. */
static int unended_begins(parser *p) {
    size_t count = 0;
    const char *first = NULL;
    for (size_t i = 0; i < p->n_begins; i++) {
        begun *b = &p->begins[i];
        if (!b->name) continue;
        int64_t end = p->max_ts > b->ts ? p->max_ts : b->ts;
        int rc = add_complete(p, b->thread, b->name, b->cat, b->ts, end - b->ts, b->offset, b->line, b->column, NULL);
        if (rc) return rc;
        if (!count++) first = opprof_capture_name(p->cap, p->cap->events[p->cap->n_events - 1].name);
    }
    if (count &&
        opprof__capture_warnf(p->cap, "%zu begin event(s) never ended (first: '%s'): read as lasting to the trace's end",
                              count, first))
        return fail_code(p, OPPROF_ENOMEM, "warnings");
    return 0;
}

static void free_begins(parser *p) {
    for (size_t i = 0; i < p->n_begins; i++)
        if (p->begins[i].name) opprof__free(p->begins[i].name);
    opprof__free(p->begins);
    opprof__free(p->innermost);
}

/* Every phase of the Trace Event Format, legacy async (S T p F) and context
 * events included: a phase opprof does not read is not a problem. */
static const char KNOWN_PHASES[] = "BEXiICbnestfPONDMVvRcSTpF()";

/* Names PyTorch's key_averages leaves out (torch/autograd/profiler.py). */
static bool filtered_name(const char *name) {
    if (name[0] != '[' && name[0] != 'p' && name[0] != 'a') return false; /* what the names below start with */
    static const char *const names[] = {"[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
                                        "profiler::_record_function_enter_new", "profiler::_record_function_exit",
                                        "aten::is_leaf", "aten::output_nr", "aten::_version"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0) return true;
    return false;
}

/* What opprof wrote of its capture's marks, read back: an event's
 * arguments (FLOPs and bytes among them) when `event` >= 0, else the event
 * itself (a counter sample, an instant, a flow or async edge). */
static int own_marks(parser *p, event *e, uint32_t thread, int32_t of_event) {
    opprof_mark m = {.ts_ns = e->ts, .thread = thread, .event = of_event};
    const char *name = e->name, *str = NULL;
    if (of_event < 0) {
        if (e->ph == 'C') {
            if (e->args[0].kind == OPPROF_MARK_ARG_STR) return 0;
            m.kind = OPPROF_MARK_COUNTER;
            m.value.d = e->args[0].d;
        } else if (e->ph == 'i' || e->ph == 'I') {
            m.kind = OPPROF_MARK_INSTANT;
            m.value.i = e->scope == 'g' ? OPPROF_INSTANT_GLOBAL : e->scope == 'p' ? OPPROF_INSTANT_PROCESS
                                                                                   : OPPROF_INSTANT_THREAD;
        } else {
            m.kind = e->ph == 's'   ? OPPROF_MARK_FLOW_BEGIN
                     : e->ph == 'f' ? OPPROF_MARK_FLOW_END
                     : e->ph == 'b' ? OPPROF_MARK_ASYNC_BEGIN
                                    : OPPROF_MARK_ASYNC_END;
            m.value.id = e->id;
        }
        if (e->ts < p->min_ts) p->min_ts = e->ts;
        return opprof_capture_add_mark(p->cap, &m, name, NULL) ? fail_code(p, OPPROF_ENOMEM, "marks") : 0;
    }
    m.ts_ns = 0;
    for (int k = 0; k < e->n_args; k++) {
        name = e->args[k].key;
        m.kind = e->args[k].kind;
        m.value.i = e->args[k].i;
        str = e->args[k].str;
        if (m.kind == OPPROF_MARK_ARG_DOUBLE) m.value.d = e->args[k].d;
        if (m.kind == OPPROF_MARK_ARG_INT && (!strcmp(name, "flops") || !strcmp(name, "bytes")))
            m.kind = name[0] == 'f' ? OPPROF_MARK_FLOPS : OPPROF_MARK_BYTES;
        if (opprof_capture_add_mark(p->cap, &m, name, str)) return fail_code(p, OPPROF_ENOMEM, "marks");
    }
    return 0;
}

static int take_complete(parser *p, event *e, int64_t offset) {
    if ((e->have & (HAS_NAME | HAS_TS | HAS_DUR)) != (HAS_NAME | HAS_TS | HAS_DUR)) {
        problem_at(p, offset, "complete event without %s", !(e->have & HAS_NAME) ? "\"name\""
                                                            : !(e->have & HAS_TS) ? "\"ts\""
                                                                                  : "\"dur\"");
        return 0;
    }
    if (e->dur < 0) {
        problem_at(p, offset, "complete event '%s' has a negative duration", e->name);
        return 0;
    }
    /* Kineto's own span and Python functions are no rows (as in PyTorch) */
    if (e->cat == CAT_SPAN || e->cat == CAT_PYTHON || filtered_name(e->name)) {
        p->unused[e->cat == CAT_SPAN ? UNUSED_SPAN : e->cat == CAT_PYTHON ? UNUSED_PYTHON : UNUSED_FILTERED]++;
        return 0;
    }
    uint32_t thread;
    if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
    if (add_complete(p, thread, e->name, e->cat, e->ts, e->dur, offset, -1, -1, e)) return OPPROF_EFORMAT;
    if (e->category[0] && opprof_capture_set_last_category(p->cap, e->category))
        return fail_code(p, OPPROF_ENOMEM, "categories");
    return p->ours && e->n_args ? own_marks(p, e, thread, (int32_t)(p->cap->n_events - 1)) : 0;
}

/* "i"/"I": Kineto's [memory] events; opprof's own instants. */
static int take_instant(parser *p, event *e, int64_t offset) {
    uint32_t thread;
    if (!e->memory_name) {
        if (p->ours && (e->have & (HAS_NAME | HAS_TS)) == (HAS_NAME | HAS_TS)) {
            if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
            return own_marks(p, e, thread, -1);
        }
        p->unused[UNUSED_INSTANT]++;
        return 0;
    }
    if (!(e->have & HAS_TS) || !(e->have & HAS_BYTES)) {
        problem_at(p, offset, "memory event without %s", !(e->have & HAS_TS) ? "\"ts\"" : "args \"Bytes\"");
        return 0;
    }
    if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
    if (opprof_capture_add_memory(p->cap, thread, e->ts, (uint64_t)e->addr, e->bytes,
                                  (e->have & HAS_TOTAL) ? e->total : -1))
        return fail_code(p, OPPROF_ENOMEM, "memory events");
    p->cap->mem[p->cap->n_mem - 1].device_type = (int32_t)e->device_type;
    p->cap->mem[p->cap->n_mem - 1].device_id = (int32_t)e->device_id;
    if (e->ts < p->min_ts) p->min_ts = e->ts;
    if (e->ts > p->max_ts) p->max_ts = e->ts;
    p->cap->info.profile_memory = true;
    if (whole_checks(p) && (e->have & HAS_TOTAL)) {
        if (opprof__grow((void **)&p->ms, &p->cap_ms, p->n_ms + 1, sizeof *p->ms))
            return fail_code(p, OPPROF_ENOMEM, "checks");
        mrecord *m = &p->ms[p->n_ms++];
        *m = (mrecord){e->ts, e->bytes, e->total, offset, 0, 0, thread};
        locate(p, offset, &m->line, &m->column);
    }
    return 0;
}

/* "M": thread names; opprof merge's process labels ("rank K"). */
static int take_metadata(parser *p, event *e) {
    if ((e->have & HAS_NAME) && strcmp(e->name, "thread_name") == 0 && e->arg_name) {
        uint32_t thread;
        if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        snprintf(p->cap->threads[thread].name, sizeof p->cap->threads[thread].name, "%s", e->arg_name);
    }
    if ((e->have & HAS_NAME) && strcmp(e->name, "process_labels") == 0 && e->arg_name)
        for (size_t t = 0; t < p->cap->n_threads; t++)
            if (p->cap->threads[t].pid == e->pid)
                snprintf(p->cap->threads[t].process, sizeof p->cap->threads[t].process, "%s", e->arg_name);
    return 0;
}

/* Counters, flows, async events: opprof's own become marks; others are counted. */
static int take_mark(parser *p, event *e) {
    uint32_t thread = 0;
    if (e->ph == 'C') {
        /* opprof writes its memory events again as a counter track, for Perfetto */
        if (p->ours && (e->have & HAS_NAME) && strcmp(e->name, "Allocated bytes") == 0) return 0;
        if (p->ours && (e->have & (HAS_NAME | HAS_TS)) == (HAS_NAME | HAS_TS) && e->n_args) {
            /* a counter is the process's: its first thread carries it */
            if (!p->cap->n_threads && thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
            return own_marks(p, e, thread, -1);
        }
        p->unused[UNUSED_COUNTER]++;
        return 0;
    }
    if (p->ours && (e->have & (HAS_NAME | HAS_TS)) == (HAS_NAME | HAS_TS)) {
        if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        return own_marks(p, e, thread, -1);
    }
    p->unused[e->ph == 's' || e->ph == 'f' ? UNUSED_FLOW : UNUSED_ASYNC]++;
    return 0;
}

static int take_event(parser *p, event *e, int64_t offset) {
    if (!(e->have & HAS_PH)) {
        problem_at(p, offset, "event without \"ph\"");
        return 0;
    }
    if (e->bad_type) {
        problem_at(p, offset, "event field \"%s\" has the wrong type or is out of range", e->bad_field);
        return 0;
    }
    if ((e->have & HAS_TS) && e->ph != 'M' && e->ts > p->max_ts) p->max_ts = e->ts; /* the trace's end: its latest time */
    uint32_t thread;
    switch (e->ph) {
    case 'X': return take_complete(p, e, offset);
    case 'B':
        if ((e->have & (HAS_NAME | HAS_TS)) != (HAS_NAME | HAS_TS)) {
            problem_at(p, offset, "begin event without %s", !(e->have & HAS_NAME) ? "\"name\"" : "\"ts\"");
            return 0;
        }
        if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        return push_begin(p, thread, e, offset);
    case 'E':
        if (!(e->have & HAS_TS)) {
            problem_at(p, offset, "end event without \"ts\"");
            return 0;
        }
        if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        return pop_begin(p, thread, e->ts, offset);
    case 'i':
    case 'I': return take_instant(p, e, offset);
    case 'M': return take_metadata(p, e);
    case 'C':
    case 's':
    case 'f':
    case 'b':
    case 'e': return take_mark(p, e);
    default:
        if (e->ph == '?' || !strchr(KNOWN_PHASES, e->ph)) {
            problem_at(p, offset, "unknown phase \"%s\"", e->ph_text);
            return 0;
        }
        p->unused[strchr("stf", e->ph)        ? UNUSED_FLOW
                  : strchr("bneSTpF", e->ph)  ? UNUSED_ASYNC
                  : strchr("NOD", e->ph)      ? UNUSED_OBJECT
                                              : UNUSED_OTHER_PHASE]++;
        return 0;
    }
}

static int parse_events(parser *p) {
    event e;
    memset(&e, 0, sizeof e);
    int more = open_items(p, '[', ']', "an array of events");
    while (more == 1) {
        if (skip_ws(p) != '{') {
            more = FAIL(p, "expected an event object");
            break;
        }
        int64_t offset = HERE(p);
        e.have = 0;
        e.bad_type = false;
        e.cat = CAT_OTHER;
        e.mtia = e.memory_name = e.ext_lower = false;
        e.ext_id = e.corr_id = -1;
        e.device_type = 0;
        e.device_id = -1;
        e.n_args = 0;
        e.category[0] = '\0';
        e.id = 0;
        e.scope = 't';
        e.pid = e.tid = 0;
        e.ts = e.dur = e.bytes = e.addr = 0;
        e.total = -1;
        if (e.arg_name) e.arg_name[0] = '\0';
        if (e.frame) e.frame[0] = '\0';
        if (e.has_dims || e.has_types) memset(&e.shapes, 0, sizeof e.shapes);
        e.has_dims = e.has_types = false;
        if ((more = parse_object(p, on_event_key, &e))) break;
        if (e.arg_name && !e.arg_name[0]) {
            opprof__free(e.arg_name);
            e.arg_name = NULL;
            e.arg_name_cap = 0;
        }
        if ((more = take_event(p, &e, offset))) break;
        more = next_item(p, ']', "after an event");
    }
    opprof__free(e.name);
    opprof__free(e.arg_name);
    opprof__free(e.frame);
    return more < 0 ? more : 0;
}

static int on_warning(parser *p, void *ctx, int index) {
    (void)ctx;
    (void)index;
    if (skip_ws(p) != '"') return skip_value(p);
    if (parse_string(p)) return OPPROF_EFORMAT;
    return opprof_capture_add_warning(p->cap, p->s) ? fail_code(p, OPPROF_ENOMEM, "warnings") : 0;
}

/* "distributedInfo": {"backend", "rank", "world_size"} as Kineto writes it,
 * and opprof's clock alignment; other keys are skipped. */
static int on_distributed_key(parser *p, void *ctx, const char *k, size_t n) {
    opprof_rank *r = ctx;
    int c = skip_ws(p);
    if (KEY_IS(k, n, "backend") && c == '"') {
        if (parse_string(p)) return OPPROF_EFORMAT;
        snprintf(r->backend, sizeof r->backend, "%s", p->s);
        return 0;
    }
    bool num = c == '-' || (c >= '0' && c <= '9');
    if (!num) return skip_value(p);
    number v;
    if (parse_number(p, &v)) return OPPROF_EFORMAT;
    int64_t i = v.is_int ? v.as_int : (int64_t)number_value(&v);
    if (KEY_IS(k, n, "rank")) r->rank = (int32_t)i;
    if (KEY_IS(k, n, "world_size")) r->world_size = (int32_t)i;
    if (KEY_IS(k, n, "clock_offset_ns")) r->clock_offset_ns = i;
    if (KEY_IS(k, n, "clock_uncertainty_ns")) r->clock_uncertainty_ns = i;
    return 0;
}

typedef struct top {
    bool saw_events;
} top;

static int on_top_key(parser *p, void *ctx, const char *k, size_t n) {
    top *t = ctx;
    opprof_capture_info *info = &p->cap->info;
    if (KEY_IS(k, n, "traceEvents")) {
        t->saw_events = true;
        return parse_events(p);
    }
    if (KEY_IS(k, n, "opprof_version")) p->ours = true;
    int c = skip_ws(p);
    bool num = c == '-' || (c >= '0' && c <= '9');
    if (num && (KEY_IS(k, n, "baseTimeNanoseconds") || KEY_IS(k, n, "step_num") || KEY_IS(k, n, "dropped_events") ||
                KEY_IS(k, n, "profile_memory") || KEY_IS(k, n, "overhead_range_ns") ||
                KEY_IS(k, n, "overhead_memory_event_ns"))) {
        number v;
        if (parse_number(p, &v)) return OPPROF_EFORMAT;
        if (KEY_IS(k, n, "baseTimeNanoseconds")) info->base_time_ns = v.is_int ? v.as_int : 0;
        if (KEY_IS(k, n, "step_num")) info->step_num = v.is_int ? v.as_int : -1;
        if (KEY_IS(k, n, "dropped_events")) info->dropped_events = v.is_int && v.as_int > 0 ? (uint64_t)v.as_int : 0;
        if (KEY_IS(k, n, "profile_memory")) info->profile_memory = number_value(&v) != 0;
        if (KEY_IS(k, n, "overhead_range_ns")) info->overhead_range_ns = number_value(&v);
        if (KEY_IS(k, n, "overhead_memory_event_ns")) info->overhead_memory_event_ns = number_value(&v);
        return 0;
    }
    if (KEY_IS(k, n, "warnings") && c == '[') return parse_array(p, on_warning, NULL);
    if (KEY_IS(k, n, "distributedInfo") && c == '{') {
        if (parse_object(p, on_distributed_key, &info->rank)) return OPPROF_EFORMAT;
        if (!info->rank.backend[0]) snprintf(info->rank.backend, sizeof info->rank.backend, "unknown");
        return 0;
    }
    return skip_value(p);
}

/* ---- checks that need the whole trace ---- */

static int xrecord_cmp(const void *a, const void *b) {
    const xrecord *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int mrecord_cmp(const void *a, const void *b) {
    const mrecord *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void check_whole(parser *p) {
    if (!whole_checks(p)) return;
    /* Complete events that overlap without nesting, per thread. */
    if (p->n_xs > 1) qsort(p->xs, p->n_xs, sizeof *p->xs, xrecord_cmp);
    size_t *stack = NULL, depth = 0, cap = 0;
    for (size_t i = 0; i < p->n_xs; i++) {
        const xrecord *x = &p->xs[i];
        if (i && x->thread != p->xs[i - 1].thread) depth = 0;
        while (depth && p->xs[stack[depth - 1]].end <= x->start) depth--;
        if (depth && x->end > p->xs[stack[depth - 1]].end) {
            const xrecord *outer = &p->xs[stack[depth - 1]];
            problem_placed(p, x->offset, x->line, x->column,
                           "complete event '%s' overlaps '%s' (line %lld) without nesting on its thread",
                           opprof_capture_name(p->cap, x->name), opprof_capture_name(p->cap, outer->name),
                           (long long)outer->line);
            continue;
        }
        if (opprof__grow((void **)&stack, &cap, depth + 1, sizeof *stack)) break;
        stack[depth++] = i;
    }
    opprof__free(stack);
    /* Memory totals: each total = the previous total + this event's bytes. */
    if (p->n_ms > 1) qsort(p->ms, p->n_ms, sizeof *p->ms, mrecord_cmp);
    for (size_t i = 1; i < p->n_ms; i++) {
        const mrecord *a = &p->ms[i - 1], *b = &p->ms[i];
        int64_t sum;
        if (__builtin_add_overflow(a->total, b->bytes, &sum) || sum != b->total)
            problem_placed(p, b->offset, b->line, b->column,
                           "memory totals do not add up: Total Allocated %lld after %lld, but Bytes is %lld",
                           (long long)b->total, (long long)a->total, (long long)b->bytes);
    }
    if (p->cap->info.dropped_events)
        problem_at(p, -1, "%llu events were dropped when recording (over the capture's event budget)",
                   (unsigned long long)p->cap->info.dropped_events);
}

/* ---- driver ---- */

static int parse_document(parser *p) {
    int c = skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    if (c == -1) return FAIL(p, "the file is empty: not JSON");
    if (c == '[') {
        if (parse_events(p)) return OPPROF_EFORMAT;
    } else if (c == '{') {
        top t = {0};
        if (parse_object(p, on_top_key, &t)) return OPPROF_EFORMAT;
        if (!t.saw_events) return fail_at(p, 0, "not a trace: the object has no \"traceEvents\" array");
    } else {
        return FAIL(p, "not a trace: expected '{' or '[' at the start, found '%c'", c);
    }
    c = skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    if (c != -1) return FAIL(p, "unexpected data after the end of the trace");
    return 0;
}

static void shift_times(opprof_capture *c, int64_t origin) {
    for (size_t i = 0; i < c->n_events; i++) c->events[i].start_ns -= origin;
    for (size_t j = 0; j < c->n_mem; j++) c->mem[j].ts_ns -= origin;
    for (size_t k = 0; k < c->n_marks; k++)
        if (c->marks[k].event < 0) c->marks[k].ts_ns -= origin;
    c->info.base_time_ns += origin;
}

static int read_source(parser *p, const opprof_read_options *options, opprof_capture **out, opprof_read_error *error) {
    opprof_read_error local;
    p->err = error ? error : &local;
    memset(p->err, 0, sizeof *p->err);
    p->err->offset = -1;
    p->opt = options;
    p->max_depth = options && options->max_depth > 0 ? options->max_depth : DEFAULT_DEPTH;
    p->max_string = options && options->max_string > 0 ? options->max_string : DEFAULT_MAX_STRING;
    p->lc_last = -1;
    p->min_ts = INT64_MAX;
    p->max_ts = INT64_MIN;
    p->buf = opprof__alloc(WINDOW);
    int rc = p->buf ? opprof_capture_new(&p->cap) : OPPROF_ENOMEM;
    if (rc) {
        p->err->code = rc;
        snprintf(p->err->message, sizeof p->err->message, "%s", opprof_strerror(rc));
    }
    if (!rc) {
        p->cap->info.step_num = -1;
        rc = parse_document(p);
    }
    if (!rc) rc = unended_begins(p);
    if (!rc) {
        if (p->min_ts != INT64_MAX) shift_times(p->cap, p->min_ts);
        check_whole(p);
        /* traces of other tools: PyTorch's rule merges an only child named as its parent */
        p->cap->merge_only_children = !p->ours;
        rc = opprof__link_devices(p->cap, p->links, p->n_links);
        if (rc) fail_code(p, rc, "device activities");
    }
    if (!rc && options && options->on_unused)
        for (int k = 0; k < UNUSED_KINDS; k++)
            if (p->unused[k]) options->on_unused(options->ctx, UNUSED_NAMES[k], p->unused[k]);
    if (!rc) {
        rc = opprof_capture_finish(p->cap);
        if (rc) fail_code(p, rc, "building the capture");
    }
    opprof__free(p->buf);
    opprof__free(p->str);
    opprof__index_free(&p->thread_index);
    for (size_t i = 0; i < p->n_string_ids; i++) opprof__free(p->string_ids[i]);
    opprof__free(p->string_ids);
    opprof__free(p->xs);
    opprof__free(p->ms);
    opprof__free(p->links);
    free_begins(p);
    if (rc) {
        if (p->err->code == 0) {
            p->err->code = rc;
            snprintf(p->err->message, sizeof p->err->message, "%s", opprof_strerror(rc));
        }
        opprof_capture_free(p->cap);
        return p->err->code;
    }
    *out = p->cap;
    return 0;
}

int opprof_capture_read(const char *path, const opprof_read_options *options, opprof_capture **out,
                        opprof_read_error *error) {
    if (!path || !out) return OPPROF_EINVAL;
    parser p;
    memset(&p, 0, sizeof p);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    int err = fd < 0 ? -errno : fstat(fd, &st) != 0 ? -errno : S_ISDIR(st.st_mode) ? -EISDIR : 0;
    if (!err) {
        p.src.size = (int64_t)st.st_size;
        p.src.gz = gzdopen(fd, "rb");
        if (!p.src.gz) err = OPPROF_ENOMEM;
        else
            gzbuffer(p.src.gz, 1 << 18);
    }
    if (err) {
        if (fd >= 0) close(fd);
        if (error) {
            memset(error, 0, sizeof *error);
            error->code = err;
            error->offset = -1;
            snprintf(error->message, sizeof error->message, "%s", opprof_strerror(err));
        }
        return err;
    }
    int rc = read_source(&p, options, out, error);
    gzclose(p.src.gz); /* closes fd */
    return rc;
}

int opprof_capture_read_buffer(const void *data, size_t len, const opprof_read_options *options,
                               opprof_capture **out, opprof_read_error *error) {
    if ((!data && len) || !out) return OPPROF_EINVAL;
    parser p;
    memset(&p, 0, sizeof p);
    p.src.size = (int64_t)len;
    const unsigned char *bytes = data;
    if (len >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
        if (inflateInit2(&p.src.z, 15 + 16) != Z_OK) return OPPROF_ENOMEM;
        p.src.z.next_in = (Bytef *)(uintptr_t)bytes;
        p.src.z.avail_in = (uInt)len;
        p.src.z_active = true;
    } else {
        p.src.mem = bytes;
        p.src.mem_len = len;
    }
    int rc = read_source(&p, options, out, error);
    if (p.src.z_active) inflateEnd(&p.src.z);
    return rc;
}
