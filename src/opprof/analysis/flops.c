/* flops.c - FLOPs of an operator from its input shapes, for the operators
 * whose formula PyTorch's profiler knows (with_flops). */
#include "analysis/analysis.h"

#include <string.h>

static int64_t numel(const opprof_shapes *s, int i) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim[i]; d++) n *= s->dims[i][d];
    return n;
}

static const char *const FLOPS_OPS[] = {"aten::addmm", "aten::mm", "aten::bmm", "aten::add", "aten::add_", "aten::mul",
                                        "aten::mul_"};

bool opprof__counts_flops(const char *name) {
    for (size_t i = 0; i < sizeof FLOPS_OPS / sizeof *FLOPS_OPS; i++)
        if (strcmp(name, FLOPS_OPS[i]) == 0) return true;
    return false;
}

int64_t opprof_flops(const char *name, const opprof_shapes *s) {
    if (!name || !s) return 0;
    /* addmm(bias, a [M, K], b [K, N]); mm(a [M, K], b [K, N]); bmm(a [B, M, K], b [B, K, N]) */
    if (strcmp(name, "aten::addmm") == 0 && s->n_inputs >= 3 && s->ndim[1] == 2 && s->ndim[2] == 2)
        return 2 * s->dims[1][0] * s->dims[1][1] * s->dims[2][1];
    if (strcmp(name, "aten::mm") == 0 && s->n_inputs >= 2 && s->ndim[0] == 2 && s->ndim[1] == 2)
        return 2 * s->dims[0][0] * s->dims[0][1] * s->dims[1][1];
    if (strcmp(name, "aten::bmm") == 0 && s->n_inputs >= 2 && s->ndim[0] == 3 && s->ndim[1] == 3)
        return 2 * s->dims[0][0] * s->dims[0][1] * s->dims[0][2] * s->dims[1][2];
    if ((strcmp(name, "aten::add") == 0 || strcmp(name, "aten::add_") == 0 || strcmp(name, "aten::mul") == 0 ||
         strcmp(name, "aten::mul_") == 0) &&
        s->n_inputs >= 1)
        return numel(s, 0);
    return 0;
}
