/* foreign_files.c - files that are no trace opprof reads, named for what they
 * are from their first bytes, with what to do instead: the error a user
 * meets names the tool that wrote the file, not a parser's complaint. */
#include "trace/trace.h"

#include <string.h>

/* A protobuf varint at b[*at], within len; false past the end. */
static bool varint(const unsigned char *b, size_t len, size_t *at, uint64_t *v) {
    *v = 0;
    for (int shift = 0; *at < len && shift < 64; shift += 7) {
        unsigned char c = b[(*at)++];
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return true;
    }
    return false;
}

/* TensorFlow's and XLA's XSpace (xplane.proto): field 1 a plane, whose id
 * (field 1, a varint) may come first, then its name (field 2), "/host:CPU"
 * or "/device:GPU:0". (A Perfetto packet's field 2 is a process tree, whose
 * own first byte is a key, never '/'.) */
static bool is_xspace(const unsigned char *b, size_t len) {
    size_t at = 0;
    uint64_t v;
    if (len < 4 || b[at++] != 0x0a || !varint(b, len, &at, &v)) return false;
    if (at < len && b[at] == 0x08 && (++at, !varint(b, len, &at, &v))) return false;
    if (at >= len || b[at++] != 0x12 || !varint(b, len, &at, &v)) return false;
    return at < len && b[at] == '/';
}

const char *opprof__foreign_file(const void *data, size_t len) {
    const unsigned char *b = data;
    if (is_xspace(b, len))
        return "an XSpace of TensorFlow's or XLA's profiler (xplane.pb: jax.profiler, tf.profiler), not a trace "
               "opprof reads: export its trace viewer's JSON from TensorBoard's profile plugin (a Chrome trace, "
               "which opprof reads)";
    if (len >= 8 && memcmp(b, "PERFILE2", 8) == 0)
        return "a perf.data file of Linux perf, not a trace: 'perf script' prints its samples; for an operator table "
               "record the program with 'opprof record --sample'";
    if (len >= 16 && memcmp(b, "SQLite format 3", 16) == 0)
        return "an SQLite database (an Nsight Systems export or the like), not a trace: export a Chrome trace "
               "(JSON) from the tool that wrote it";
    return NULL;
}
