/* trace/protobuf.h - protobuf's wire format, as much as the Perfetto writer
 * needs: varints, tags, length-delimited fields, fixed64 and doubles
 * (developers.google.com/protocol-buffers/docs/encoding), into an
 * opprof__strbuf. A nested message is built in a buffer of its own and put
 * as bytes. */
#ifndef OPPROF_TRACE_PROTOBUF_H
#define OPPROF_TRACE_PROTOBUF_H

#include "capture/capture.h"

#include <string.h>

enum { OPPROF__PB_VARINT = 0, OPPROF__PB_FIXED64 = 1, OPPROF__PB_BYTES = 2 };

/* Bytes appended: in place while there is room (the writer's hot path), else
 * through opprof__sb_put, which grows the buffer. */
static inline void opprof__pb_put(opprof__strbuf *b, const char *s, size_t n) {
    if (b->len + n < b->cap) {
        memcpy(b->data + b->len, s, n);
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

#endif /* OPPROF_TRACE_PROTOBUF_H */
