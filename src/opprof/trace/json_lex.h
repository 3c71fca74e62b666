/* json_lex.h - the JSON lexer under the trace reader: a strict, streaming
 * JSON reader written for traces (docs/DEPENDENCIES.md has the measurement
 * that ruled out yajl's 283 MB/s). It reads through a 1 MiB window (zlib's
 * gzread, which also passes plain files through, or memory), knows nothing of
 * traces, and turns hostile input into errors with a byte offset, a line and
 * a column (limits on nesting depth and string length), never into a crash, a
 * hang or unbounded memory. reader.c gives the values their meaning.
 *
 * Every function returns 0 or a negative code, and the first error is
 * written to the opprof_read_error the lexer was opened with. The hot steps
 * (a byte, white space, an expected byte, a plain string, the byte after an
 * item, an object's keys) are inline; numbers are read eight digits at a
 * time (json_number.c). */
#ifndef OPPROF_JSON_LEX_H
#define OPPROF_JSON_LEX_H

#include "trace/trace.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The window, and the bytes past its end that may be read (never used):
 * a key is copied out of it in one fixed-size move. */
enum { OPPROF__JSON_WINDOW = 1 << 20, OPPROF__JSON_PAD = 64 };

typedef struct opprof__json_source {
    gzFile gz;
    const unsigned char *mem; /* memory input (plain) */
    size_t mem_len, mem_pos;
    z_stream z; /* memory input (gzip) */
    bool z_active;
    int64_t size; /* bytes of the file or buffer */
} opprof__json_source;

typedef struct opprof__json {
    opprof__json_source src;
    unsigned char *buf; /* the window */
    size_t len, pos;
    int64_t base;      /* offset of buf[0] in the text */
    int64_t lc_off;    /* line counting has reached this offset (>= base) */
    int64_t lc_lines;  /* newlines before lc_off */
    int64_t lc_last;   /* offset of the last newline before lc_off, or -1 */
    int64_t uncounted; /* > 0: the newlines before this offset are not in lc_lines (nor
                          lc_last) yet: counted from the file (lines_fd) when a place is
                          first asked (opprof__json_open_file_at) */
    int lines_fd;
    bool lines_lost; /* that count failed: the places said are from `uncounted` on */
    bool eof;
    int depth, max_depth;
    int64_t max_string;
    const char *s; /* the last string, decoded, NUL-terminated: in the window
                      (valid until the next read) or in str */
    size_t s_len;
    char *str; /* scratch for strings that need decoding or span windows */
    size_t str_len, str_cap;
    opprof_read_error *err;         /* the first error */
    const opprof_read_options *opt; /* progress, limits */
    int64_t next_progress;
} opprof__json;

/* Open on a file (fd: closed by opprof__json_close, also on an error) or on
 * memory (not copied: it must outlive the lexer), with the reader's options;
 * the caller points j->err at where the first error goes. Then
 * opprof__json_close, whatever happened. */
OPPROF__HIDDEN int opprof__json_open_file(opprof__json *j, int fd, const opprof_read_options *options);
OPPROF__HIDDEN int opprof__json_open_buffer(opprof__json *j, const void *data, size_t len,
                                            const opprof_read_options *options);
OPPROF__HIDDEN void opprof__json_close(opprof__json *j);
/* The same on a plain file from `offset` on. The places said are the
 * file's: the newlines before `offset` are counted when a place is first
 * asked (most traces never ask: counting the first half of a file was the
 * second thread's first 30 ms), unless that count fails (j->lines_lost). */
OPPROF__HIDDEN int opprof__json_open_file_at(opprof__json *j, int fd, const opprof_read_options *options,
                                             int64_t offset);
/* The newlines before `offset` (at or after the line cursor) and the last
 * one's offset (-1: none), as far as they are counted: from j->uncounted on
 * when that is > 0 (the lines before it never asked for). */
OPPROF__HIDDEN void opprof__json_lines_before(opprof__json *j, int64_t offset, int64_t *lines, int64_t *last);
/* 1 when the lexer reads a plain file (not gzip, not memory). */
OPPROF__HIDDEN int opprof__json_plain(opprof__json *j);
/* Go on reading a plain file from `offset` (its lines as above), what the
 * window held dropped. */
OPPROF__HIDDEN int opprof__json_jump(opprof__json *j, int64_t offset, int64_t lines, int64_t last_newline);
/* The newlines of a file's first `upto` bytes, and the offset of the last
 * (-1: none). */
OPPROF__HIDDEN int opprof__json_count_lines(int fd, int64_t upto, int64_t *lines, int64_t *last);

/* Errors: the first one is kept; these return OPPROF_EFORMAT, or code. */
OPPROF__HIDDEN int opprof__json_fail_at(opprof__json *j, int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
OPPROF__HIDDEN int opprof__json_fail_code(opprof__json *j, int code, const char *what);
/* A byte that an error says it found: 'x' when it is printable ASCII, else
 * "byte 0xNN" (a NUL cut the message, a lone byte of 0x80 or more is no text). */
OPPROF__HIDDEN const char *opprof__json_byte_text(int c, char out[16]);
/* Where the lexer is: a byte offset; its line and column (0, 0 before the window). */
#define OPPROF__JSON_HERE(j) ((j)->base + (int64_t)(j)->pos)
OPPROF__HIDDEN void opprof__json_locate(opprof__json *j, int64_t offset, int64_t *line, int64_t *column);

/* Slide the window: keep what is not consumed, read more. */
OPPROF__HIDDEN int opprof__json_refill(opprof__json *j);
OPPROF__HIDDEN int opprof__json_expect_slow(opprof__json *j, int want, const char *what);

/* A number. `ns` receives value x 1000 rounded (microseconds to
 * nanoseconds), `as_int` the value when it is an integer in range. */
typedef struct opprof__json_number {
    bool is_int;
    int64_t as_int;
    int64_t ns;
    bool ns_ok;
    /* the value as a double: opprof__json_number_value(); kept as its decimal parts, since
     * times and ids never need it (a division a number was 7 % of reading) */
    bool neg;
    uint64_t mant;
    int exp10;
} opprof__json_number;
OPPROF__HIDDEN int opprof__json_parse_number(opprof__json *j, opprof__json_number *out);
OPPROF__HIDDEN double opprof__json_number_value(const opprof__json_number *n);

/* Containers. open: the opening byte, one level deeper; 0 when the container
 * is empty (and closed), 1 when items follow. next, after an item: 1 for
 * another, 0 when the closing byte ends the container. */
OPPROF__HIDDEN int opprof__json_open(opprof__json *j, int open, int close, const char *what);
OPPROF__HIDDEN int opprof__json_next_slow(opprof__json *j, int close, const char *where);
static inline int opprof__json_next(opprof__json *p, int close, const char *where) {
    if (__builtin_expect(p->pos < p->len, 1)) { /* the byte right after the item: inline */
        int c = p->buf[p->pos];
        if (c == ',') {
            p->pos++;
            return 1;
        }
        if (c == close) {
            p->pos++;
            p->depth--;
            return 0;
        }
    }
    return opprof__json_next_slow(p, close, where);
}
/* Validate and skip any value. */
OPPROF__HIDDEN int opprof__json_skip(opprof__json *j);
/* Iterate an array: `on_item` parses (or skips) each element. */
OPPROF__HIDDEN int opprof__json_array(opprof__json *j, int (*on_item)(opprof__json *j, void *ctx, int index),
                                      void *ctx);

/* Iterate an object: for each key (cut to 63 bytes; a longer key has a
 * length that matches no key of 63), `on_key` parses (or skips) the value. */
typedef int (*opprof__json_key_fn)(opprof__json *j, void *ctx, const char *key, size_t key_len);

/* The next byte (not consumed), or -1 at the end. */
static inline int opprof__json_peek(opprof__json *p) {
    if (__builtin_expect(p->pos < p->len, 1)) return p->buf[p->pos];
    if (opprof__json_refill(p)) return -2;
    return p->pos < p->len ? p->buf[p->pos] : -1;
}

/* Skip white space; the next byte, -1 at the end, -2 on error. */
static inline int opprof__json_skip_ws(opprof__json *p) {
    for (;;) {
        while (p->pos < p->len) {
            unsigned char c = p->buf[p->pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c;
            p->pos++;
        }
        if (p->eof) return -1;
        if (opprof__json_refill(p)) return -2;
    }
}

static inline int opprof__json_expect(opprof__json *p, int want, const char *what) {
    if (__builtin_expect(p->pos < p->len && p->buf[p->pos] == want, 1)) {
        p->pos++;
        return 0;
    }
    return opprof__json_expect_slow(p, want, what);
}

/* Where a run of plain string bytes that starts at `i` ends: the first '"',
 * '\\', control byte or non-ASCII byte, or `len`. Sixteen bytes at a time
 * with SSE2 (every x86-64 has it): PyTorch's traces are mostly long strings
 * ("Call stack", kernel names). */
static inline size_t opprof__json_plain_run_end(const unsigned char *b, size_t i, size_t len) {
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

OPPROF__HIDDEN int opprof__json_string_slow(opprof__json *j);

/* A string: its decoded text in j->s (j->s_len bytes, NUL-terminated), valid
 * until the next call. Inline where the quote is next (after one space at
 * most) and the string is plain bytes inside the window (a trace's keys and
 * most values): used in place, its closing quote turned into the
 * terminating NUL. */
static inline int opprof__json_string(opprof__json *p) {
    if (p->pos < p->len && p->buf[p->pos] == ' ') p->pos++; /* Python's ", " and ": " */
    if (__builtin_expect(p->pos < p->len && p->buf[p->pos] == '"', 1)) {
        size_t i = opprof__json_plain_run_end(p->buf, p->pos + 1, p->len);
        if (__builtin_expect(i < p->len && p->buf[i] == '"' && (int64_t)(i - p->pos - 1) <= p->max_string, 1)) {
            p->buf[i] = '\0';
            p->s = (const char *)p->buf + p->pos + 1;
            p->s_len = i - p->pos - 1;
            p->pos = i + 1;
            return 0;
        }
    }
    return opprof__json_string_slow(p);
}

static inline __attribute__((always_inline)) int opprof__json_object(opprof__json *p, opprof__json_key_fn on_key,
                                                                     void *ctx) {
    char key[64];
    int more = opprof__json_open(p, '{', '}', "an object");
    while (more == 1) {
        if (opprof__json_string(p)) return OPPROF_EFORMAT;
        size_t klen = p->s_len < sizeof key - 1 ? p->s_len : sizeof key - 1;
        if (p->s != p->str) /* in the window, which is padded: one move of a constant size */
            memcpy(key, p->s, sizeof key);
        else
            memcpy(key, p->s, klen);
        key[klen] = '\0';
        if (p->s_len >= sizeof key) klen = sizeof key; /* a long key matches nothing we know */
        if (opprof__json_expect(p, ':', "':' after a key")) return OPPROF_EFORMAT;
        if (on_key(p, ctx, key, klen)) return OPPROF_EFORMAT;
        more = opprof__json_next(p, '}', "in an object");
    }
    return more;
}

/* An object's key (on_key's k, n) is the literal lit. */
#define KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), (lit), sizeof(lit) - 1) == 0)

/* A machine profile's object (opprof_machine_json_to_string's) at the
 * lexer's place, read whole or refused (trace/machine_file.c). */
OPPROF__HIDDEN int opprof__machine_parse(opprof__json *j, opprof_machine *out);

#endif
