/* shapes.c - input shapes: dtype names and their spellings, PyTorch's
 * printed form. (FLOPs from shapes: flops.c; peak memory: peak.c.) */
#include "capture/capture.h"

#include <string.h>

/* The one list of dtypes: X(CODE, NAME, ALIAS, ALIAS, ALIAS). CODE is one
 * byte in the recorder's shape records (never renumber); NAME is PyTorch's,
 * then other runtimes' types under their own names (ggml's block-quantized
 * types, 8-bit floats, unsigned and complex types), "" for a non-tensor and
 * "unknown" last; the ALIASes are other spellings of it (short ones, and
 * PyTorch's "Input type"), NULL when there are fewer. */
#define DTYPES(X)                                           \
    X(0, "", NULL, NULL, NULL)                              \
    X(1, "float", "f32", "float32", NULL)                   \
    X(2, "double", "f64", "float64", NULL)                  \
    X(3, "int", "int32", "i32", NULL)                       \
    X(4, "long", "int64", "i64", "long int")                \
    X(5, "half", "f16", "float16", "c10::Half")             \
    X(6, "bool", NULL, NULL, NULL)                          \
    X(7, "bfloat16", "bf16", "c10::BFloat16", NULL)         \
    X(8, "int8", "i8", "signed char", NULL)                 \
    X(9, "uint8", "u8", "unsigned char", NULL)              \
    X(10, "int16", "short int", "i16", NULL)                \
    X(11, "uint16", "u16", NULL, NULL)                      \
    X(12, "uint32", "u32", NULL, NULL)                      \
    X(13, "uint64", "u64", NULL, NULL)                      \
    X(14, "complex64", "c10::complex<float>", NULL, NULL)   \
    X(15, "complex128", "c10::complex<double>", NULL, NULL) \
    X(16, "float8_e4m3fn", NULL, NULL, NULL)                \
    X(17, "float8_e5m2", NULL, NULL, NULL)                  \
    X(18, "int4", NULL, NULL, NULL)                         \
    X(19, "uint4", NULL, NULL, NULL)                        \
    X(20, "q4_0", NULL, NULL, NULL)                         \
    X(21, "q4_1", NULL, NULL, NULL)                         \
    X(22, "q5_0", NULL, NULL, NULL)                         \
    X(23, "q5_1", NULL, NULL, NULL)                         \
    X(24, "q8_0", NULL, NULL, NULL)                         \
    X(25, "q8_1", NULL, NULL, NULL)                         \
    X(26, "q2_K", NULL, NULL, NULL)                         \
    X(27, "q3_K", NULL, NULL, NULL)                         \
    X(28, "q4_K", NULL, NULL, NULL)                         \
    X(29, "q5_K", NULL, NULL, NULL)                         \
    X(30, "q6_K", NULL, NULL, NULL)                         \
    X(31, "q8_K", NULL, NULL, NULL)                         \
    X(32, "iq2_xxs", NULL, NULL, NULL)                      \
    X(33, "iq2_xs", NULL, NULL, NULL)                       \
    X(34, "iq3_xxs", NULL, NULL, NULL)                      \
    X(35, "iq1_s", NULL, NULL, NULL)                        \
    X(36, "iq4_nl", NULL, NULL, NULL)                       \
    X(37, "iq3_s", NULL, NULL, NULL)                        \
    X(38, "iq2_s", NULL, NULL, NULL)                        \
    X(39, "iq4_xs", NULL, NULL, NULL)                       \
    X(40, "iq1_m", NULL, NULL, NULL)                        \
    X(41, "tq1_0", NULL, NULL, NULL)                        \
    X(42, "tq2_0", NULL, NULL, NULL)                        \
    X(43, "mxfp4", NULL, NULL, NULL)                        \
    X(44, "unknown", NULL, NULL, NULL)

static const struct {
    const char *name, *aliases[3];
} DTYPE[] = {
#define DTYPE_ENTRY(code, name, a, b, c) [code] = {name, {a, b, c}},
    DTYPES(DTYPE_ENTRY)
#undef DTYPE_ENTRY
};
enum { N_DTYPES = sizeof DTYPE / sizeof *DTYPE, DTYPE_UNKNOWN = N_DTYPES - 1 };

const char *opprof__dtype_name(unsigned code) { return DTYPE[code < N_DTYPES ? code : DTYPE_UNKNOWN].name; }

unsigned opprof__dtype_code(const char *name) {
    if (!name) return 0;
    if (name[0] == 'f' && strcmp(name, "float") == 0) return 1; /* the common case first */
    for (unsigned i = 1; i < DTYPE_UNKNOWN; i++)
        if (strcmp(name, DTYPE[i].name) == 0) return i;
    for (unsigned i = 1; i < DTYPE_UNKNOWN; i++)
        for (unsigned k = 0; k < 3 && DTYPE[i].aliases[k]; k++)
            if (strcmp(name, DTYPE[i].aliases[k]) == 0) return i;
    return DTYPE_UNKNOWN;
}

/* Appended at buf + *at, cut at size (NUL kept); *at past size once cut.
 * Without printf: `opprof sql` formats every operator's shapes, and
 * snprintf was two thirds of this function's time (perf, a Kineto trace). */
static void put(char *buf, size_t size, size_t *at, const char *text, long long number) {
    if (*at >= size) return;
    char digits[OPPROF__NUMBER_TEXT];
    if (!text) text = opprof__int_text(number, digits + sizeof digits - 1), digits[sizeof digits - 1] = '\0';
    size_t n = strlen(text), room = size - *at - 1;
    memcpy(buf + *at, text, n < room ? n : room);
    buf[*at + (n < room ? n : room)] = '\0';
    *at += n;
}

/* Into buf alone: no allocation (so nothing that can fail and leave it "[]"). */
void opprof_shapes_format(const opprof_shapes *s, char *buf, size_t size) {
    if (!buf || !size) return;
    size_t at = 0;
    buf[0] = '\0';
    put(buf, size, &at, "[", 0);
    for (int i = 0; s && i < s->n_inputs; i++) {
        put(buf, size, &at, i ? ", [" : "[", 0);
        for (int d = 0; d < s->ndim[i]; d++) {
            if (d) put(buf, size, &at, ", ", 0);
            put(buf, size, &at, NULL, (long long)s->dims[i][d]);
        }
        put(buf, size, &at, "]", 0);
    }
    put(buf, size, &at, "]", 0);
}
