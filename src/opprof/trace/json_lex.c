/* json_lex.c - the JSON lexer under the trace reader (json_lex.h): the input
 * stream, line numbers, errors, strings, and skipping any value; numbers are
 * json_number.c. */
#define _GNU_SOURCE
#include "json_lex.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

enum { WINDOW = OPPROF__JSON_WINDOW, DEFAULT_DEPTH = 64, PROGRESS_STEP = 64 << 20 };
static const int64_t DEFAULT_MAX_STRING = 1 << 20;

#define HERE(p) OPPROF__JSON_HERE(p)
#define FAIL(p, ...) opprof__json_fail_at((p), HERE(p), __VA_ARGS__)

/* ---- input: a gz stream (plain files pass through) or memory ---- */

/* source_read's answer for a gzip stream that ends before its end (its
 * trailer, the checksum of what came before, missing): what a writer that
 * was killed leaves. */
enum { SOURCE_CUT_SHORT = -1000000 };

static int64_t source_read(opprof__json_source *s, unsigned char *dst, size_t cap) {
    if (s->gz) {
        int n = gzread(s->gz, dst, (unsigned)cap);
        int zerr = Z_OK;
        if (n <= 0) gzerror(s->gz, &zerr);
        if (n == 0 && zerr == Z_BUF_ERROR) return SOURCE_CUT_SHORT;
        if (n < 0) return opprof__zlib_code(zerr);
        return n;
    }
    if (s->z_active) {
        s->z.next_out = dst;
        s->z.avail_out = (uInt)cap;
        while (s->z.avail_out == cap) {
            int rc = inflate(&s->z, Z_NO_FLUSH);
            if (rc == Z_STREAM_END) break;
            if (rc == Z_BUF_ERROR && s->z.avail_in == 0) return SOURCE_CUT_SHORT;
            if (rc != Z_OK) return opprof__zlib_code(rc);
        }
        return (int64_t)(cap - s->z.avail_out);
    }
    size_t n = s->mem_len - s->mem_pos < cap ? s->mem_len - s->mem_pos : cap;
    memcpy(dst, s->mem + s->mem_pos, n);
    s->mem_pos += n;
    return (int64_t)n;
}

static int64_t source_position(opprof__json_source *s) {
    if (s->gz) return (int64_t)gzoffset(s->gz);
    return s->z_active ? (int64_t)s->z.total_in : (int64_t)s->mem_pos;
}

/* Line numbers: a cursor that counts newlines forward through the window,
 * so that asking for the places of successive events costs O(text). 64
 * bytes a step with SSE2 (per-byte counters, summed every 255 steps):
 * the count runs over every byte read, and the byte loop gcc vectorizes was
 * 13 % of reading a PyTorch trace. */
static inline __m128i newline_step(__m128i counters, const unsigned char *at, __m128i newline) {
    return _mm_sub_epi8(counters, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)at), newline));
}

static int64_t lane_sum(__m128i counters) {
    __m128i sums = _mm_sad_epu8(counters, _mm_setzero_si128()); /* two 64-bit lane sums */
    return _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums));
}

static int64_t count_newlines(const unsigned char *b, const unsigned char *e) {
    int64_t count = 0;
    size_t n = (size_t)(e - b), i = 0;
#if defined(__SSE2__)
    /* 64 bytes a step in four counters whose bytes count their lane's
     * newlines (a match is -1), summed every 255 steps, before a byte overflows */
    const __m128i newline = _mm_set1_epi8('\n');
    while (n - i >= 64) {
        size_t steps = (n - i) / 64 < 255 ? (n - i) / 64 : 255;
        __m128i c0 = _mm_setzero_si128(), c1 = c0, c2 = c0, c3 = c0;
        for (size_t k = 0; k < steps; k++, i += 64) {
            c0 = newline_step(c0, b + i, newline);
            c1 = newline_step(c1, b + i + 16, newline);
            c2 = newline_step(c2, b + i + 32, newline);
            c3 = newline_step(c3, b + i + 48, newline);
        }
        count += lane_sum(c0) + lane_sum(c1) + lane_sum(c2) + lane_sum(c3);
    }
#endif
    for (; i < n; i++) count += b[i] == '\n';
    return count;
}

/* The newlines of b[0, n) at offset `at` of the text added to *lines, *last
 * (the offset of the last one) moved. */
static void add_lines(const unsigned char *b, size_t n, int64_t at, int64_t *lines, int64_t *last) {
    int64_t count = count_newlines(b, b + n);
    if (!count) return;
    for (size_t r = n; r-- > 0;)
        if (b[r] == '\n') {
            *last = at + (int64_t)r;
            break;
        }
    *lines += count;
}

static void advance_lines(opprof__json *p, int64_t upto) {
    /* the bytes counted are the window's: from where counting is, up to a place in it */
    OPPROF__ASSERT(p->base <= p->lc_off && p->lc_off <= upto && upto <= p->base + (int64_t)p->len);
    add_lines(p->buf + (p->lc_off - p->base), (size_t)(upto - p->lc_off), p->lc_off, &p->lc_lines, &p->lc_last);
    p->lc_off = upto;
}

int opprof__json_count_lines(int fd, int64_t upto, int64_t *lines, int64_t *last) {
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = opprof__alloc(CHUNK);
    if (!buf) return OPPROF_ENOMEM;
    *lines = 0;
    *last = -1;
    int rc = 0;
    for (int64_t at = 0; at < upto && !rc;) {
        size_t want = upto - at < CHUNK ? (size_t)(upto - at) : CHUNK;
        ssize_t n = pread(fd, buf, want, (off_t)at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) rc = n < 0 ? -errno : OPPROF_EIO;
        if (rc) break;
        add_lines(buf, (size_t)n, at, lines, last);
        at += n;
    }
    opprof__free(buf);
    return rc;
}

/* The newlines before p->uncounted, added to what the cursor counted from there. */
static void count_uncounted(opprof__json *p) {
    int64_t lines, last;
    if (opprof__json_count_lines(p->lines_fd, p->uncounted, &lines, &last)) {
        p->lines_lost = true;
    } else {
        p->lc_lines += lines;
        if (p->lc_last < 0) p->lc_last = last;
    }
    p->uncounted = 0;
}

void opprof__json_lines_before(opprof__json *p, int64_t offset, int64_t *lines, int64_t *last) {
    int64_t end = p->base + (int64_t)p->len;
    if (offset > p->lc_off) advance_lines(p, offset < end ? offset : end);
    *lines = p->lc_lines;
    *last = p->lc_last;
}

/* Line and column of an offset at or after the cursor; 0, 0 for an older one. */
void opprof__json_locate(opprof__json *p, int64_t offset, int64_t *line, int64_t *column) {
    if (offset < p->lc_off) {
        *line = *column = 0;
        return;
    }
    if (p->uncounted > 0) count_uncounted(p);
    int64_t end = p->base + (int64_t)p->len;
    advance_lines(p, offset < end ? offset : end);
    *line = p->lc_lines + 1;
    *column = offset - p->lc_last;
}

int opprof__json_fail_at(opprof__json *p, int64_t offset, const char *fmt, ...) {
    if (p->err && p->err->code == 0) {
        p->err->code = OPPROF_EFORMAT;
        p->err->offset = offset;
        opprof__json_locate(p, offset, &p->err->line, &p->err->column);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err->message, sizeof p->err->message, fmt, ap);
        va_end(ap);
        opprof__show_controls(p->err->message, sizeof p->err->message); /* a name quoted from the trace */
    }
    return OPPROF_EFORMAT;
}

const char *opprof__json_byte_text(int c, char out[16]) {
    if (c >= 0x20 && c < 0x7f)
        snprintf(out, 16, "'%c'", c);
    else
        snprintf(out, 16, "byte 0x%02X", (unsigned)c & 0xffu);
    return out;
}

int opprof__json_fail_code(opprof__json *p, int code, const char *what) {
    if (p->err && p->err->code == 0) {
        p->err->code = code;
        p->err->offset = HERE(p);
        opprof__json_locate(p, HERE(p), &p->err->line, &p->err->column);
        snprintf(p->err->message, sizeof p->err->message, "%s: %s", what, opprof_strerror(code));
    }
    return code;
}

/* Slide the window: keep what is not consumed, read more. */
int opprof__json_refill(opprof__json *p) {
    /* the window's invariant: its bytes are read from the text, the place within them */
    OPPROF__ASSERT(p->pos <= p->len && p->len <= WINDOW);
    if (p->eof) return 0;
    advance_lines(p, p->base + (int64_t)p->pos);
    memmove(p->buf, p->buf + p->pos, p->len - p->pos);
    p->base += (int64_t)p->pos;
    p->len -= p->pos;
    p->pos = 0;
    int64_t n = source_read(&p->src, p->buf + p->len, WINDOW - p->len);
    if (n == SOURCE_CUT_SHORT)
        return FAIL(p,
                    "the gzip stream is cut short (its end and checksum are missing): the file was not written whole");
    if (n < 0)
        return n == OPPROF_EFORMAT ? FAIL(p, "the gzip data is corrupt") : opprof__json_fail_code(p, (int)n, "read");
    if (n == 0) p->eof = true;
    p->len += (size_t)n;
    OPPROF__ASSERT(p->pos == 0 && p->len <= WINDOW);
    if (p->opt && p->opt->on_progress) {
        int64_t at = source_position(&p->src);
        if (at >= p->next_progress || p->eof) {
            p->opt->on_progress(p->opt->ctx, at, p->src.size);
            p->next_progress = at + PROGRESS_STEP;
        }
    }
    return 0;
}

int opprof__json_expect_slow(opprof__json *p, int want, const char *what) {
    int c = opprof__json_skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    if (c != want)
        return c == -1 ? FAIL(p, "unexpected end of the file: expected %s", what)
                       : FAIL(p, "expected %s, found %s", what, opprof__json_byte_text(c, (char[16]){0}));
    p->pos++;
    return 0;
}

static int str_push(opprof__json *p, const void *data, size_t n) {
    if ((int64_t)(p->str_len + n) > p->max_string) /* the n bytes were just consumed: point at the excess */
        return opprof__json_fail_at(p, HERE(p) - (int64_t)n + (p->max_string - (int64_t)p->str_len),
                                    "string longer than %lld bytes", (long long)p->max_string);
    if (p->str_len + n + 1 > p->str_cap) {
        size_t cap = p->str_cap ? p->str_cap : 256;
        while (cap < p->str_len + n + 1) cap *= 2;
        char *s = opprof__realloc(p->str, cap);
        if (!s) return opprof__json_fail_code(p, OPPROF_ENOMEM, "string");
        p->str = s;
        p->str_cap = cap;
    }
    memcpy(p->str + p->str_len, data, n);
    p->str_len += n;
    p->str[p->str_len] = '\0';
    return 0;
}

static int hex4(opprof__json *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int c = opprof__json_peek(p);
        if (c < 0) return c == -2 ? OPPROF_EFORMAT : FAIL(p, "unexpected end of the file in a \\u escape");
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return FAIL(p, "invalid \\u escape");
        v = v * 16 + (unsigned)d;
        p->pos++;
    }
    *out = v;
    return 0;
}

static int put_utf8(opprof__json *p, unsigned cp) {
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
static int utf8_sequence(opprof__json *p) {
    unsigned char b[4];
    int c = opprof__json_peek(p);
    b[0] = (unsigned char)c;
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!n) return FAIL(p, "invalid UTF-8 byte 0x%02X in a string", (unsigned)c);
    p->pos++;
    for (size_t i = 1; i < n; i++) {
        int d = opprof__json_peek(p);
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

/* A string (the opening quote is next, perhaps after white space); decoded
 * into p->s: what the header's inline path leaves. */
int opprof__json_string_slow(opprof__json *p) {
    if (opprof__json_expect(p, '"', "a string")) return OPPROF_EFORMAT;
    /* Fast path: plain bytes up to the closing quote inside the window are
     * used in place, the quote turned into the terminating NUL. */
    size_t i = opprof__json_plain_run_end(p->buf, p->pos, p->len);
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
        p->pos = opprof__json_plain_run_end(p->buf, p->pos, p->len);
        if (p->pos > start && str_push(p, p->buf + start, p->pos - start)) return OPPROF_EFORMAT;
        int c = opprof__json_peek(p);
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
        int e = opprof__json_peek(p);
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
                if (opprof__json_peek(p) != '\\') return FAIL(p, "unpaired surrogate in a \\u escape");
                p->pos++;
                if (opprof__json_peek(p) != 'u') return FAIL(p, "unpaired surrogate in a \\u escape");
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

static int parse_literal(opprof__json *p, const char *word) {
    for (const char *w = word; *w; w++) {
        int c = opprof__json_peek(p);
        if (c == -2) return OPPROF_EFORMAT;
        if (c != *w) return FAIL(p, "invalid literal (expected '%s')", word);
        p->pos++;
    }
    return 0;
}

/* Containers. opprof__json_open: the opening byte, one level deeper; 0 when the
 * container is empty (and closed), 1 when items follow. opprof__json_next, after an
 * item: 1 for another, 0 when the closing byte ends the container. Both
 * return a negative code on an error. */
int opprof__json_open(opprof__json *p, int open, int close, const char *what) {
    if (opprof__json_expect(p, open, what)) return OPPROF_EFORMAT;
    if (++p->depth > p->max_depth) return FAIL(p, "nesting deeper than %d levels", p->max_depth);
    int c = opprof__json_skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    if (c != close) return 1;
    p->pos++;
    p->depth--;
    return 0;
}

/* White space (or a window's end) before the byte: past it, the inline step takes it. */
int opprof__json_next_slow(opprof__json *p, int close, const char *where) {
    int c = opprof__json_skip_ws(p);
    if (c == ',' || c == close) return opprof__json_next(p, close, where);
    if (c == -2) return OPPROF_EFORMAT;
    return c == -1
               ? FAIL(p, "unexpected end of the file: expected ',' or '%c' %s", close, where)
               : FAIL(p, "expected ',' or '%c' %s, found %s", close, where, opprof__json_byte_text(c, (char[16]){0}));
}

/* Validate and skip any value. */
int opprof__json_skip(opprof__json *p) {
    int c = opprof__json_skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    switch (c) {
    case '"': return opprof__json_string(p);
    case 't': return parse_literal(p, "true");
    case 'f': return parse_literal(p, "false");
    case 'n': return parse_literal(p, "null");
    case '{':
    case '[': {
        int close = c == '{' ? '}' : ']';
        int more = opprof__json_open(p, c, close, c == '{' ? "an object" : "an array");
        while (more == 1) {
            if (c == '{' && (opprof__json_string(p) || opprof__json_expect(p, ':', "':'"))) return OPPROF_EFORMAT;
            if (opprof__json_skip(p)) return OPPROF_EFORMAT;
            more = opprof__json_next(p, close, c == '{' ? "in an object" : "in an array");
        }
        return more;
    }
    case -1: return FAIL(p, "unexpected end of the file: expected a value");
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            opprof__json_number n;
            return opprof__json_parse_number(p, &n);
        }
        return FAIL(p, "unexpected %s: expected a value", opprof__json_byte_text(c, (char[16]){0}));
    }
}

/* Iterate an array: `on_item` parses (or skips) each element. */
int opprof__json_array(opprof__json *p, int (*on_item)(opprof__json *p, void *ctx, int index), void *ctx) {
    int more = opprof__json_open(p, '[', ']', "an array");
    for (int index = 0; more == 1; index++) {
        if (on_item(p, ctx, index)) return OPPROF_EFORMAT;
        more = opprof__json_next(p, ']', "in an array");
    }
    return more;
}
/* ---- opening and closing ---- */

static int begin(opprof__json *j, const opprof_read_options *options) {
    j->opt = options;
    j->max_depth = options && options->max_depth > 0 ? options->max_depth : DEFAULT_DEPTH;
    j->max_string = options && options->max_string > 0 ? options->max_string : DEFAULT_MAX_STRING;
    j->lc_last = -1;
    j->buf = opprof__alloc(WINDOW + OPPROF__JSON_PAD);
    return j->buf ? 0 : OPPROF_ENOMEM;
}

int opprof__json_open_file(opprof__json *j, int fd, const opprof_read_options *options) {
    struct stat st;
    int rc = fstat(fd, &st) != 0 ? -errno : S_ISDIR(st.st_mode) ? -EISDIR : 0;
    if (rc) {
        close(fd);
        return rc;
    }
    j->src.size = (int64_t)st.st_size;
    j->src.gz = gzdopen(fd, "rb");
    if (!j->src.gz) {
        close(fd);
        return OPPROF_ENOMEM;
    }
    gzbuffer(j->src.gz, 1 << 18);
    return begin(j, options);
}

int opprof__json_open_file_at(opprof__json *j, int fd, const opprof_read_options *options, int64_t offset) {
    if (lseek(fd, (off_t)offset, SEEK_SET) < 0) {
        close(fd);
        return -errno;
    }
    int rc = opprof__json_open_file(j, fd, options);
    j->base = j->lc_off = j->uncounted = offset; /* the file is there already: no seek */
    j->lines_fd = fd;
    return rc;
}

int opprof__json_plain(opprof__json *j) { return j->src.gz && gzdirect(j->src.gz); }

int opprof__json_jump(opprof__json *j, int64_t offset, int64_t lines, int64_t last_newline) {
    if (j->src.gz && j->base + (int64_t)j->len != offset && gzseek(j->src.gz, (z_off_t)offset, SEEK_SET) < 0)
        return opprof__json_fail_code(j, OPPROF_EIO, "seek");
    j->base = j->lc_off = offset;
    j->len = j->pos = 0;
    j->lc_lines = lines;
    j->lc_last = last_newline;
    j->eof = false;
    return 0;
}

int opprof__json_open_buffer(opprof__json *j, const void *data, size_t len, const opprof_read_options *options) {
    j->src.size = (int64_t)len;
    const unsigned char *bytes = data;
    if (len >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
        if (inflateInit2(&j->src.z, 15 + 16) != Z_OK) return OPPROF_ENOMEM;
        j->src.z.next_in = (Bytef *)(uintptr_t)bytes;
        j->src.z.avail_in = (uInt)len;
        j->src.z_active = true;
    } else {
        j->src.mem = bytes;
        j->src.mem_len = len;
    }
    return begin(j, options);
}

void opprof__json_close(opprof__json *j) {
    if (j->src.gz) gzclose(j->src.gz); /* closes the file */
    if (j->src.z_active) inflateEnd(&j->src.z);
    opprof__free(j->buf);
    opprof__free(j->str);
    memset(j, 0, sizeof *j);
}
