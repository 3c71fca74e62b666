/* trace/protobuf.h - protobuf's wire format, as much as Perfetto's writer
 * and reader need (developers.google.com/protocol-buffers/docs/encoding):
 * writing varints, tags, length-delimited fields, fixed64 and doubles into an
 * opprof__strbuf (a nested message is built in a buffer of its own and put
 * as bytes); reading a message field by field. */
#ifndef OPPROF_TRACE_PROTOBUF_H
#define OPPROF_TRACE_PROTOBUF_H

#include "capture/capture.h"

#include <stdbool.h>
#include <string.h>

enum { OPPROF__PB_VARINT = 0, OPPROF__PB_FIXED64 = 1, OPPROF__PB_BYTES = 2 };

/* Bytes appended: in place while there is room (the writer's hot path), else
 * through opprof__sb_put, which grows the buffer. */
static inline void opprof__pb_put(opprof__strbuf *b, const char *s, size_t n) {
    if (b->len + n < b->cap) {
        if (n) memcpy(b->data + b->len, s, n); /* s may be NULL when n is 0 */
        b->len += n;
        b->data[b->len] = '\0';
        return;
    }
    opprof__sb_put(b, s, n);
}

/* A varint's bytes into out (10 at most); their number. */
static inline size_t opprof__pb_varint_bytes(uint64_t v, char *out) {
    size_t n = 0;
    do {
        out[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

static inline void opprof__pb_varint(opprof__strbuf *b, uint64_t v) {
    char tmp[10];
    opprof__pb_put(b, tmp, opprof__pb_varint_bytes(v, tmp));
}

static inline void opprof__pb_tag(opprof__strbuf *b, uint32_t field, int wire) {
    opprof__pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

/* uint32/64, int32/64 (a negative one as its 10-byte two's complement), bool, enum */
static inline void opprof__pb_uint(opprof__strbuf *b, uint32_t field, uint64_t v) {
    opprof__pb_tag(b, field, OPPROF__PB_VARINT);
    opprof__pb_varint(b, v);
}
static inline void opprof__pb_int(opprof__strbuf *b, uint32_t field, int64_t v) {
    opprof__pb_uint(b, field, (uint64_t)v);
}

static inline void opprof__pb_bytes(opprof__strbuf *b, uint32_t field, const void *data, size_t n) {
    opprof__pb_tag(b, field, OPPROF__PB_BYTES);
    opprof__pb_varint(b, n);
    opprof__pb_put(b, (const char *)data, n);
}
static inline void opprof__pb_string(opprof__strbuf *b, uint32_t field, const char *s) {
    opprof__pb_bytes(b, field, s, strlen(s));
}
/* A nested message built in `inner` (then emptied for the next one). */
static inline void opprof__pb_message(opprof__strbuf *b, uint32_t field, opprof__strbuf *inner) {
    opprof__pb_bytes(b, field, inner->data ? inner->data : "", inner->len);
    if (inner->error) b->error = inner->error;
    inner->len = 0;
}

static inline void opprof__pb_fixed64(opprof__strbuf *b, uint32_t field, uint64_t v) {
    char tmp[8];
    for (int i = 0; i < 8; i++) tmp[i] = (char)(v >> (8 * i)); /* little-endian */
    opprof__pb_tag(b, field, OPPROF__PB_FIXED64);
    opprof__pb_put(b, tmp, 8);
}
static inline void opprof__pb_double(opprof__strbuf *b, uint32_t field, double d) {
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    opprof__pb_fixed64(b, field, v);
}

/* ---- reading: one field at a time from [p, end) ---- */

typedef struct opprof__pb_field {
    uint32_t number;
    int wire;
    uint64_t value;      /* varint, fixed64, fixed32 */
    const uint8_t *data; /* bytes: data[0 .. len) */
    size_t len;
} opprof__pb_field;

/* The next varint; false when the bytes end inside it, it runs past 10 bytes,
 * or its tenth byte holds more than the 64th bit. */
static inline bool opprof__pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        if (shift == 63 && (b & 0x7e)) return false; /* bits past 64 */
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* The next field: 1, 0 at the end, -1 when the bytes are no protobuf
 * (truncated, or a wire type that is not 0, 1, 2 or 5). */
static inline int opprof__pb_next(const uint8_t **p, const uint8_t *end, opprof__pb_field *f) {
    if (*p >= end) return 0;
    uint64_t key;
    if (!opprof__pb_read_varint(p, end, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX) return -1;
    f->number = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    f->data = *p; /* never NULL: a field read as bytes that is not is an empty run there */
    f->len = 0;
    f->value = 0; /* a field of another wire type than its reader expects reads as 0, not as the last one's */
    switch (f->wire) {
    case OPPROF__PB_VARINT: return opprof__pb_read_varint(p, end, &f->value) ? 1 : -1;
    case OPPROF__PB_FIXED64:
    case 5: { /* fixed32 */
        size_t n = f->wire == 5 ? 4 : 8;
        if ((size_t)(end - *p) < n) return -1;
        f->value = 0;
        for (size_t i = 0; i < n; i++) f->value |= (uint64_t)(*p)[i] << (8 * i);
        *p += n;
        return 1;
    }
    case OPPROF__PB_BYTES: {
        uint64_t n;
        if (!opprof__pb_read_varint(p, end, &n) || n > (uint64_t)(end - *p)) return -1;
        f->data = *p;
        f->len = (size_t)n;
        *p += n;
        return 1;
    }
    default: return -1;
    }
}

#endif /* OPPROF_TRACE_PROTOBUF_H */
