/* shapes.c - input shapes: dtype names and their spellings, PyTorch's
 * printed form. (FLOPs from shapes: flops.c; peak memory: peak.c.) */
#include "capture/capture.h"

#include <string.h>

/* PyTorch's names, then other runtimes' types under their own names (ggml's
 * block-quantized types, 8-bit floats, unsigned and complex types); "unknown"
 * stays last. A code is one byte in the recorder's shape records. */
static const char *const DTYPES[] = {
    "", "float", "double", "int", "long", "half", "bool", "bfloat16", "int8", "uint8", "int16",
    "uint16", "uint32", "uint64", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "int4", "uint4",
    "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "q8_K",
    "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl", "iq3_s", "iq2_s", "iq4_xs", "iq1_m", "tq1_0", "tq2_0",
    "mxfp4", "unknown"};

/* Other spellings of the same types: short ones, and PyTorch's "Input type". */
static const struct {
    const char *alias;
    unsigned code;
} DTYPE_ALIASES[] = {{"f32", 1},         {"float32", 1},   {"f64", 2},      {"float64", 2},
                     {"int32", 3},       {"i32", 3},       {"int64", 4},    {"i64", 4},
                     {"long int", 4},    {"f16", 5},       {"float16", 5},  {"c10::Half", 5},
                     {"bf16", 7},        {"c10::BFloat16", 7},              {"i8", 8},
                     {"signed char", 8}, {"u8", 9},        {"unsigned char", 9},
                     {"short int", 10},  {"i16", 10},      {"u16", 11},     {"u32", 12},
                     {"u64", 13},        {"c10::complex<float>", 14},       {"c10::complex<double>", 15}};

const char *opprof__dtype_name(unsigned code) { return code < sizeof DTYPES / sizeof *DTYPES ? DTYPES[code] : "unknown"; }

unsigned opprof__dtype_code(const char *name) {
    if (!name) return 0;
    if (name[0] == 'f' && strcmp(name, "float") == 0) return 1; /* the common case first */
    for (unsigned i = 1; i + 1 < sizeof DTYPES / sizeof *DTYPES; i++)
        if (strcmp(name, DTYPES[i]) == 0) return i;
    for (size_t i = 0; i < sizeof DTYPE_ALIASES / sizeof *DTYPE_ALIASES; i++)
        if (strcmp(name, DTYPE_ALIASES[i].alias) == 0) return DTYPE_ALIASES[i].code;
    return (unsigned)(sizeof DTYPES / sizeof *DTYPES) - 1;
}

void opprof_shapes_format(const opprof_shapes *s, char *buf, size_t size) {
    opprof__strbuf sb = {0};
    opprof__sb_puts(&sb, "[");
    for (int i = 0; s && i < s->n_inputs; i++) {
        opprof__sb_puts(&sb, i ? ", [" : "[");
        for (int d = 0; d < s->ndim[i]; d++) opprof__sb_printf(&sb, "%s%lld", d ? ", " : "", (long long)s->dims[i][d]);
        opprof__sb_puts(&sb, "]");
    }
    opprof__sb_puts(&sb, "]");
    snprintf(buf, size, "%s", sb.data && !sb.error ? sb.data : "[]");
    opprof__sb_free(&sb);
}
