/* modules.c - Linear, ReLU, Sequential. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { MODULE_LINEAR, MODULE_RELU, MODULE_SEQUENTIAL } module_kind;

struct nn_module {
    module_kind kind;
    bool eval;
    nn_tensor *weight, *bias; /* Linear */
    nn_tensor *weight_panels; /* W^T in the kernels' panels: what the GEMM reads */
    nn_module **children;     /* Sequential */
    size_t n_children;
};

static int threads_setting = 1;

void nn_set_num_threads(int n) {
    threads_setting = n < 1 ? 1 : n;
    nn__gemm_set_threads(threads_setting);
}

int nn_get_num_threads(void) { return threads_setting; }

int nn_linear_new(nn_module **out, int64_t in_features, int64_t out_features) {
    if (!out || in_features <= 0 || out_features <= 0) return NN_EINVAL;
    nn_module *m = nn__calloc(1, sizeof *m);
    if (!m) return NN_ENOMEM;
    m->kind = MODULE_LINEAR;
    /* PyTorch's default: kaiming_uniform(a=sqrt(5)) gives +-1/sqrt(in) for the
     * weight, and the bias uses the same bound. */
    float bound = (float)(1.0 / sqrt((double)in_features));
    int rc = nn_tensor_uniform(&m->weight, 2, (int64_t[]){out_features, in_features}, -bound, bound);
    if (!rc) rc = nn_tensor_uniform(&m->bias, 1, (int64_t[]){out_features}, -bound, bound);
    if (!rc) rc = nn__pack_weight(m->weight, &m->weight_panels);
    if (rc) {
        nn_module_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int nn_relu_new(nn_module **out) {
    if (!out) return NN_EINVAL;
    nn_module *m = nn__calloc(1, sizeof *m);
    if (!m) return NN_ENOMEM;
    m->kind = MODULE_RELU;
    *out = m;
    return 0;
}

int nn_sequential_new(nn_module **out, nn_module **modules, size_t count) {
    nn_module *m = NULL;
    if (!out || (count && !modules)) goto fail;
    for (size_t i = 0; i < count; i++)
        if (!modules[i]) goto fail;
    m = nn__calloc(1, sizeof *m);
    if (!m) goto fail;
    m->kind = MODULE_SEQUENTIAL;
    m->children = nn__alloc((count ? count : 1) * sizeof *m->children);
    if (!m->children) goto fail;
    memcpy(m->children, modules, count * sizeof *modules);
    m->n_children = count;
    *out = m;
    return 0;
fail:
    if (m) nn__free(m);
    for (size_t i = 0; modules && i < count; i++) nn_module_free(modules[i]);
    return !out || (count && !modules) ? NN_EINVAL : NN_ENOMEM;
}

void nn_module_free(nn_module *m) {
    if (!m) return;
    nn_tensor_free(m->weight);
    nn_tensor_free(m->bias);
    nn_tensor_free(m->weight_panels);
    for (size_t i = 0; i < m->n_children; i++) nn_module_free(m->children[i]);
    nn__free(m->children);
    nn__free(m);
}

void nn_module_eval(nn_module *m) {
    if (!m) return;
    m->eval = true;
    for (size_t i = 0; i < m->n_children; i++) nn_module_eval(m->children[i]);
}

int nn_module_forward(nn_module *m, const nn_tensor *x, nn_tensor **out) {
    if (!m || !x || !out) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    switch (m->kind) {
    case MODULE_LINEAR: return nn__linear(x, m->weight, m->weight_panels, m->bias, out);
    case MODULE_RELU: return nn_relu(x, out);
    case MODULE_SEQUENTIAL: {
        if (m->n_children == 0) return nn__tensor_view(x, out);
        const nn_tensor *h = x;
        nn_tensor *owned = NULL;
        for (size_t i = 0; i < m->n_children; i++) {
            nn_tensor *next;
            int rc = nn_module_forward(m->children[i], h, &next);
            nn_tensor_free(owned); /* the intermediate goes as soon as it is used */
            if (rc) return rc;
            h = owned = next;
        }
        *out = owned;
        return 0;
    }
    }
    return NN_EINVAL;
}

int nn_module_parameters_changed(nn_module *m) {
    if (!m) return NN_EINVAL;
    if (m->kind == MODULE_LINEAR) {
        nn_tensor *packed;
        int rc = nn__pack_weight(m->weight, &packed);
        if (rc) return rc;
        nn_tensor_free(m->weight_panels);
        m->weight_panels = packed;
    }
    for (size_t i = 0; i < m->n_children; i++) {
        int rc = nn_module_parameters_changed(m->children[i]);
        if (rc) return rc;
    }
    return 0;
}

nn_tensor *nn_module_parameter(nn_module *m, const char *name) {
    if (!m || !name) return NULL;
    if (m->kind == MODULE_LINEAR) {
        if (strcmp(name, "weight") == 0) return m->weight;
        if (strcmp(name, "bias") == 0) return m->bias;
        return NULL;
    }
    if (m->kind == MODULE_SEQUENTIAL) {
        char *end;
        unsigned long i = strtoul(name, &end, 10);
        if (end == name || *end != '.' || i >= m->n_children) return NULL;
        return nn_module_parameter(m->children[i], end + 1);
    }
    return NULL;
}

nn_module *nn_module_child(nn_module *m, size_t i) {
    return m && m->kind == MODULE_SEQUENTIAL && i < m->n_children ? m->children[i] : NULL;
}
