/* json_out.h - the JSON writers' output (trace/chrome_writer.c and
 * trace/chrome_profile.c): a fixed buffer flushed with one fwrite each, the
 * first error kept; numbers formatted by hand (printf would dominate the
 * cost), strings escaped. Inside the trace layer only. */
#ifndef OPPROF_TRACE_JSON_OUT_H
#define OPPROF_TRACE_JSON_OUT_H

#include "trace/trace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { OUT_BUFFER = 1 << 20 }; /* written with one fwrite each: larger than stdio's buffer */

typedef struct out {
    FILE *fp;
    size_t len;
    int error;
    char buf[OUT_BUFFER];
} out;

static inline void out_flush(out *o) {
    if (o->len && !o->error && fwrite(o->buf, 1, o->len, o->fp) != o->len) o->error = errno ? -errno : OPPROF_EIO;
    o->len = 0;
}

static inline void out_put(out *o, const char *s, size_t n) {
    if (o->len + n > OUT_BUFFER) {
        out_flush(o);
        if (n > OUT_BUFFER) {
            if (!o->error && fwrite(s, 1, n, o->fp) != n) o->error = errno ? -errno : OPPROF_EIO;
            return;
        }
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

#define OUT_LIT(o, s) out_put((o), (s), sizeof(s) - 1)

/* A number's text, [p, end), copied as one block of OPPROF__NUMBER_TEXT bytes
 * (a fixed-size copy is two vector moves; a copy of the text's own length was
 * a memcpy call, 7 % of a whole `opprof record` run in perf). The bytes past
 * the text land past o->len: the next write covers them, and no flush writes
 * them. tmp holds twice the text's room, so the block is read within it. */
static inline void out_number(out *o, const char *p, const char *end) {
    if (o->len + OPPROF__NUMBER_TEXT > OUT_BUFFER) out_flush(o);
    memcpy(o->buf + o->len, p, OPPROF__NUMBER_TEXT);
    o->len += (size_t)(end - p);
}

static inline void out_i64(out *o, int64_t v) {
    char tmp[2 * OPPROF__NUMBER_TEXT];
    char *end = tmp + OPPROF__NUMBER_TEXT;
    out_number(o, opprof__int_text(v, end), end);
}

static inline void out_us(out *o, int64_t ns) {
    char tmp[2 * OPPROF__NUMBER_TEXT];
    char *end = tmp + OPPROF__NUMBER_TEXT;
    out_number(o, opprof__us_text(ns, end), end);
}

/* Where and when an event is: ,"pid":P,"tid":T,"ts":X (no tid for a process's counter). */
static inline void out_place(out *o, int64_t pid, const int64_t *tid, int64_t ts_ns) {
    OUT_LIT(o, ",\"pid\":");
    out_i64(o, pid);
    if (tid) {
        OUT_LIT(o, ",\"tid\":");
        out_i64(o, *tid);
    }
    OUT_LIT(o, ",\"ts\":");
    out_us(o, ts_ns);
}

/* The inside of a JSON string literal (escaped, without its quotes). */
static inline void out_json_inner(out *o, const char *s) {
    opprof__strbuf sb = {0};
    opprof__sb_json_string(&sb, s);
    if (sb.error)
        o->error = sb.error;
    else if (sb.len >= 2)
        out_put(o, sb.data + 1, sb.len - 2);
    opprof__sb_free(&sb);
}

static inline void out_json_string(out *o, const char *s) {
    opprof__strbuf sb = {0};
    opprof__sb_json_string(&sb, s);
    if (sb.error)
        o->error = sb.error;
    else
        out_put(o, sb.data, sb.len);
    opprof__sb_free(&sb);
}

static inline void out_name(out *o, const opprof__strbuf *names, const size_t *offset, uint32_t name) {
    out_put(o, names->data + offset[name], offset[name + 1] - offset[name]);
}

/* Samples as Chrome's CPU profiles, in "traceEvents" (trace/chrome_profile.c):
 * per thread a "Profile" event and a "ProfileChunk" of its nodes (the
 * owner's ranges, then the native frames), samples and time deltas, as
 * Chrome, speedscope and DevTools read them. *first: no event written yet. */
OPPROF__HIDDEN void opprof__chrome_write_profiles(out *o, const opprof_capture *c, const opprof__strbuf *names,
                                                  const size_t *offset, bool *first);

#endif
