/* trace/trace.h - the trace layer: traces read (trace/reader.c and its
 * parts over the JSON lexer, trace/json_lex.h, which only this layer sees)
 * and written (Chrome's JSON, Perfetto's protobuf, merged ranks, trace
 * directories). Its public
 * functions are declared in <opprof/capture.h>; this header holds what the
 * layer's files share. Above the capture layer. */
#ifndef OPPROF_TRACE_LAYER_H
#define OPPROF_TRACE_LAYER_H

#include "capture/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- device links (trace/device_links.c) ---- */
/* What links a device activity to the CPU operator that launched it: its
 * ids; its thread and span are its event's (a trace's links are one an
 * operator, runtime call and kernel, held until the whole trace is read:
 * 24 bytes, where with their own copy of thread, start and end they were 48
 * and the largest part of a Kineto trace's peak). */
enum { OPPROF__LINK_OP, OPPROF__LINK_RUNTIME, OPPROF__LINK_DEVICE };
typedef struct opprof__link {
    uint32_t event;    /* index in the capture, before opprof_capture_finish */
    uint8_t role;      /* OPPROF__LINK_* */
    bool ext_lower;    /* the activity's id is "external id" (PyTorch 1.8/1.9) */
    int64_t ext, corr; /* "External id" / "external id", "correlation"; -1: none */
} opprof__link;
/* Set each device activity's `parent` to its launching operator (an index
 * before finish; opprof_capture_finish keeps it through its sort), or -1. */
OPPROF__HIDDEN int opprof__link_devices(opprof_capture *c, const opprof__link *links, size_t n);
/* The same links as a written trace says them (Kineto's form since 2024): an
 * operator that launched device activities and each of them have one
 * "External id" (the operator's index + 1); ids[i] = 0: none. *ids is NULL
 * when no activity has a launcher, else n_events ids to opprof__free. */
OPPROF__HIDDEN int opprof__external_ids(const opprof_capture *c, uint32_t **ids);

/* distributedInfo's "rank" and "world_size" as read: a number in int32's
 * range from 0, else `none` (a hostile number is no rank, not a truncated one). */
static inline int32_t opprof__rank_number(int64_t v, int32_t none) {
    return v >= 0 && v <= INT32_MAX ? (int32_t)v : none;
}

/* ---- gzip (trace/gzip_stream.c): a FILE that compresses into file's descriptor ---- */
OPPROF__HIDDEN int opprof__gzip_open(FILE *file, FILE **out);
/* Close it: rc, or the error of closing when rc is 0. */
OPPROF__HIDDEN int opprof__gzip_close(FILE *fp, int rc);
/* A zlib error as opprof's code: Z_ERRNO -errno, Z_MEM_ERROR OPPROF_ENOMEM (its
 * buffers could not be had), any other OPPROF_EFORMAT (the data is corrupt). */
OPPROF__HIDDEN int opprof__zlib_code(int zlib_error);

/* ---- Perfetto's format read back (trace/perfetto_reader.c) ---- */
/* A .pftrace that opprof wrote, as the Chrome trace the same capture's JSON
 * writer gives (appended to json); OPPROF_EFORMAT with why (the packet, its
 * byte and the reason) when it is no such trace, OPPROF_ENOMEM. */
OPPROF__HIDDEN int opprof__perfetto_to_json(const void *data, size_t len, opprof__strbuf *json, char *why,
                                            size_t why_size);
/* The same, read from `read` (into buf, up to len bytes: how many, 0 at
 * the end, or a negative code) packet by packet and given to emit piece by
 * piece (a pipe to the JSON reader): memory is the largest packet, what was
 * interned and the slices not yet ended, never the file. emit returns 0 or
 * an error that stops it. */
typedef int (*opprof__read_fn)(void *ctx, void *buf, size_t len);
OPPROF__HIDDEN int opprof__perfetto_translate(opprof__read_fn read, void *read_ctx,
                                              int (*emit)(void *ctx, const char *data, size_t len), void *ctx,
                                              char *why, size_t why_size);
/* A protobuf Trace begins with its first packet's key (field 1, bytes: 0x0a,
 * which is also a newline) and that packet's length, then the packet's first
 * key; JSON after a newline goes on with blanks, '{' or '[', then text. So:
 * 0x0a, then a length that is none of those, or one that is (a packet of 9,
 * 10, 13, 32, 91 or 123 bytes) followed by a byte that no JSON text has there
 * (a control byte or one past ASCII: opprof's first packet's first key is
 * 0xda 0x03, its defaults). The first three bytes decide. */
/* trace/foreign_files.c: what a file that opprof does not read is, and what to
 * do instead (a sentence), from its first bytes (64 are enough); NULL when it
 * is none it knows. */
OPPROF__HIDDEN const char *opprof__foreign_file(const void *data, size_t len);

static inline bool opprof__looks_perfetto(const void *data, size_t len) {
    const unsigned char *b = data;
    if (len < 3 || b[0] != 0x0a) return false;
    bool json_like = b[1] == ' ' || b[1] == '\t' || b[1] == '\r' || b[1] == '\n' || b[1] == '{' || b[1] == '[';
    bool text = b[2] >= 0x20 && b[2] < 0x7f;
    return !json_like || (!text && b[2] != '\t' && b[2] != '\r' && b[2] != '\n');
}

/* A frame's source, "file:line" (opprof_capture_stack_sources), in its two
 * parts for the writers: the file into file[size] (cut to fit), and the
 * line, 0 when the text has none. */
static inline long opprof__source_parts(const char *text, char *file, size_t size) {
    const char *colon = strrchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len > size - 1) len = size - 1;
    memcpy(file, text, len);
    file[len] = '\0';
    return colon ? strtol(colon + 1, NULL, 10) : 0;
}

#endif /* OPPROF_TRACE_LAYER_H */
