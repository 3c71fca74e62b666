/* safetensors.c - reading and writing tensors in the safetensors format:
 * an 8-byte little-endian header length, a JSON header mapping each name to
 * {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
 * data that follows the header), then the raw little-endian data.
 * Every check happens before anything is changed: a module is loaded whole
 * or not at all. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

enum { MAX_HEADER = 100 << 20 }; /* the format's own limit */

typedef struct st_file {
    const char *path;
    FILE *fp;
    uint64_t header_len, data_len;
    char *header;
    yajl_val root;
} st_file;

static int fail(char *msg, size_t size, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *msg, size_t size, int code, const char *fmt, ...) {
    if (msg && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, size, fmt, ap);
        va_end(ap);
    }
    return code;
}

static void st_close(st_file *f) {
    if (f->root) yajl_tree_free(f->root);
    if (f->header) nn__free(f->header);
    if (f->fp) fclose(f->fp);
    memset(f, 0, sizeof *f);
}

static int st_open(st_file *f, const char *path, char *msg, size_t size) {
    memset(f, 0, sizeof *f);
    f->path = path;
    if (!path) return fail(msg, size, NN_EINVAL, "no file name given");
    f->fp = fopen(path, "rb");
    if (!f->fp) return fail(msg, size, -errno, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f->fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        st_close(f);
        return fail(msg, size, NN_EFORMAT, "%s: not a regular file", path);
    }
    unsigned char len[8];
    if (fread(len, 1, 8, f->fp) != 8) {
        st_close(f);
        return fail(msg, size, NN_EFORMAT, "%s: truncated: shorter than the 8-byte header length", path);
    }
    for (int i = 7; i >= 0; i--) f->header_len = f->header_len << 8 | len[i];
    uint64_t file_len = (uint64_t)st.st_size;
    if (f->header_len > MAX_HEADER || f->header_len > file_len - 8) {
        int rc = fail(msg, size, NN_EFORMAT, "%s: header length %llu is larger than the file (%llu bytes)%s", path,
                      (unsigned long long)f->header_len, (unsigned long long)file_len,
                      f->header_len > MAX_HEADER ? " or than 100 MB" : "");
        st_close(f);
        return rc;
    }
    f->data_len = file_len - 8 - f->header_len;
    f->header = nn__alloc(f->header_len + 1);
    if (!f->header) {
        st_close(f);
        return fail(msg, size, NN_ENOMEM, "%s: out of memory for the header", path);
    }
    if (fread(f->header, 1, f->header_len, f->fp) != f->header_len) {
        st_close(f);
        return fail(msg, size, NN_EFORMAT, "%s: truncated inside the header", path);
    }
    f->header[f->header_len] = '\0';
    char err[256];
    f->root = yajl_tree_parse(f->header, err, sizeof err);
    if (!f->root || !YAJL_IS_OBJECT(f->root)) {
        char *nl = strchr(err, '\n');
        if (nl) *nl = '\0';
        int rc = fail(msg, size, NN_EFORMAT, "%s: the header is not a JSON object%s%s", path, f->root ? "" : ": ",
                      f->root ? "" : err);
        st_close(f);
        return rc;
    }
    return 0;
}

/* Find and validate tensor `name`: F32, its shape, offsets inside the data. */
static int st_find(const st_file *f, const char *name, int *ndim, int64_t *shape, uint64_t *offset, char *msg,
                   size_t size) {
    const char *path[] = {name, NULL};
    yajl_val t = yajl_tree_get(f->root, path, yajl_t_object);
    if (!t) return fail(msg, size, NN_EMISSING, "%s: tensor '%s' not found", f->path, name);
    const char *kd[] = {"dtype", NULL}, *ks[] = {"shape", NULL}, *ko[] = {"data_offsets", NULL};
    yajl_val dtype = yajl_tree_get(t, kd, yajl_t_string), sh = yajl_tree_get(t, ks, yajl_t_array),
             off = yajl_tree_get(t, ko, yajl_t_array);
    if (!dtype || !sh || !off)
        return fail(msg, size, NN_EFORMAT, "%s: tensor '%s': entry lacks %s", f->path, name,
                    !dtype ? "a string dtype"
                    : !sh  ? "a shape array"
                           : "a data_offsets array");
    const char *dt = YAJL_GET_STRING(dtype);
    if (!dt || strcmp(dt, "F32") != 0)
        return fail(msg, size, NN_EDTYPE, "%s: tensor '%s': dtype %s is not supported (only F32)", f->path, name,
                    dt ? dt : "?");
    size_t n = YAJL_GET_ARRAY(sh)->len;
    if (n > NN_MAX_DIMS)
        return fail(msg, size, NN_EFORMAT, "%s: tensor '%s': %zu dimensions (at most %d)", f->path, name, n,
                    NN_MAX_DIMS);
    uint64_t numel = 1;
    for (size_t i = 0; i < n; i++) {
        yajl_val d = YAJL_GET_ARRAY(sh)->values[i];
        if (!YAJL_IS_INTEGER(d) || YAJL_GET_INTEGER(d) < 0 || YAJL_GET_INTEGER(d) > (1LL << 40))
            return fail(msg, size, NN_EFORMAT, "%s: tensor '%s': shape[%zu] is not a size", f->path, name, i);
        shape[i] = YAJL_GET_INTEGER(d);
        numel *= (uint64_t)shape[i];
        if (numel > (1ULL << 40)) return fail(msg, size, NN_EFORMAT, "%s: tensor '%s': too large", f->path, name);
    }
    *ndim = (int)n;
    if (YAJL_GET_ARRAY(off)->len != 2 || !YAJL_IS_INTEGER(YAJL_GET_ARRAY(off)->values[0]) ||
        !YAJL_IS_INTEGER(YAJL_GET_ARRAY(off)->values[1]))
        return fail(msg, size, NN_EFORMAT, "%s: tensor '%s': data_offsets is not [begin, end]", f->path, name);
    long long begin = YAJL_GET_INTEGER(YAJL_GET_ARRAY(off)->values[0]);
    long long end = YAJL_GET_INTEGER(YAJL_GET_ARRAY(off)->values[1]);
    if (begin < 0 || end < begin || (uint64_t)end > f->data_len)
        return fail(msg, size, NN_EFORMAT,
                    "%s: tensor '%s': data_offsets [%lld, %lld] lie outside the %llu bytes of data", f->path, name,
                    begin, end, (unsigned long long)f->data_len);
    if ((uint64_t)(end - begin) != numel * 4)
        return fail(msg, size, NN_EFORMAT,
                    "%s: tensor '%s': data_offsets span %lld bytes, but shape and dtype need %llu", f->path, name,
                    end - begin, (unsigned long long)numel * 4);
    *offset = 8 + f->header_len + (uint64_t)begin;
    return 0;
}

static int st_read(const st_file *f, const char *name, uint64_t offset, float *dst, int64_t numel, char *msg,
                   size_t size) {
    if (fseeko(f->fp, (off_t)offset, SEEK_SET) != 0 || fread(dst, sizeof(float), (size_t)numel, f->fp) != (size_t)numel)
        return fail(msg, size, NN_EFORMAT, "%s: tensor '%s': cannot read its data", f->path, name);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (int64_t i = 0; i < numel; i++) {
        uint32_t v;
        memcpy(&v, &dst[i], 4);
        v = __builtin_bswap32(v);
        memcpy(&dst[i], &v, 4);
    }
#endif
    return 0;
}

int nn_tensor_load_safetensors(const char *path, const char *name, nn_tensor **out, char *message, size_t size) {
    if (!out || !name) return fail(message, size, NN_EINVAL, "no tensor name or output given");
    st_file f;
    int rc = st_open(&f, path, message, size);
    if (rc) return rc;
    int ndim;
    int64_t shape[NN_MAX_DIMS];
    uint64_t offset;
    rc = st_find(&f, name, &ndim, shape, &offset, message, size);
    nn_tensor *t = NULL;
    if (!rc) {
        rc = nn__tensor_new(&t, ndim, shape);
        if (rc) fail(message, size, rc, "%s: tensor '%s': %s", path, name, nn_strerror(rc));
    }
    if (!rc) rc = st_read(&f, name, offset, t->data, nn_tensor_numel(t), message, size);
    st_close(&f);
    if (rc) {
        nn_tensor_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* The module's parameter names, in order ("0.weight", "0.bias", ...). */
static int collect_names(nn_module *m, const char *prefix, char names[][64], nn_tensor **params, int *count, int max) {
    static const char *const leaf[] = {"weight", "bias"};
    for (int i = 0; i < 2; i++) {
        nn_tensor *p = nn_module_parameter(m, leaf[i]);
        if (!p) continue;
        if (*count >= max) return NN_ENOMEM;
        snprintf(names[*count], 64, "%s%s", prefix, leaf[i]);
        params[(*count)++] = p;
    }
    for (int i = 0;; i++) {
        nn_module *child = nn_module_child(m, (size_t)i);
        if (!child) break;
        char sub[64];
        snprintf(sub, sizeof sub, "%s%d.", prefix, i);
        int rc = collect_names(child, sub, names, params, count, max);
        if (rc) return rc;
    }
    return 0;
}

int nn_module_load_safetensors(nn_module *m, const char *path, char *message, size_t size) {
    if (!m) return fail(message, size, NN_EINVAL, "no module given");
    enum { MAX_PARAMS = 256 };
    char(*names)[64] = nn__alloc(MAX_PARAMS * sizeof *names);
    nn_tensor **params = nn__alloc(MAX_PARAMS * sizeof *params);
    uint64_t *offsets = nn__alloc(MAX_PARAMS * sizeof *offsets);
    float **staged = nn__calloc(MAX_PARAMS, sizeof *staged);
    int count = 0, rc = 0;
    st_file f = {0};
    if (!names || !params || !offsets || !staged) rc = fail(message, size, NN_ENOMEM, "out of memory");
    if (!rc) rc = collect_names(m, "", names, params, &count, MAX_PARAMS);
    if (!rc) rc = st_open(&f, path, message, size);
    /* Validate every parameter first, then read all into staging buffers. */
    for (int i = 0; !rc && i < count; i++) {
        int ndim;
        int64_t shape[NN_MAX_DIMS];
        rc = st_find(&f, names[i], &ndim, shape, &offsets[i], message, size);
        if (rc) break;
        bool same = ndim == params[i]->ndim;
        for (int d = 0; same && d < ndim; d++) same = shape[d] == params[i]->shape[d];
        if (!same) {
            char want[64] = "", got[64] = "";
            for (int d = 0; d < params[i]->ndim; d++)
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? ", " : "",
                         (long long)params[i]->shape[d]);
            for (int d = 0; d < ndim; d++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? ", " : "", (long long)shape[d]);
            rc = fail(message, size, NN_ESHAPE, "%s: tensor '%s': shape [%s], the model needs [%s]", path, names[i],
                      got, want);
        }
    }
    for (int i = 0; !rc && i < count; i++) {
        int64_t numel = nn_tensor_numel(params[i]);
        staged[i] = nn__alloc((size_t)(numel ? numel : 1) * sizeof(float));
        if (!staged[i]) rc = fail(message, size, NN_ENOMEM, "%s: out of memory", path);
        if (!rc) rc = st_read(&f, names[i], offsets[i], staged[i], numel, message, size);
    }
    if (!rc) {
        for (int i = 0; i < count; i++) {
            nn_tensor *p = params[i];
            int64_t numel = nn_tensor_numel(p), idx[NN_MAX_DIMS] = {0};
            for (int64_t k = 0; k < numel; k++) { /* parameters may be views: honour strides */
                int64_t off = 0;
                for (int d = 0; d < p->ndim; d++) off += idx[d] * p->strides[d];
                p->data[off] = staged[i][k];
                for (int d = p->ndim - 1; d >= 0; d--) {
                    if (++idx[d] < p->shape[d]) break;
                    idx[d] = 0;
                }
            }
        }
        rc = nn_module_parameters_changed(m);
        if (rc) fail(message, size, rc, "%s: %s", path, nn_strerror(rc));
    }
    st_close(&f);
    for (int i = 0; staged && i < count; i++) nn__free(staged[i]);
    nn__free(staged);
    nn__free(offsets);
    nn__free(params);
    nn__free(names);
    return rc;
}

int nn_tensor_save_safetensors(const char *path, const char *name, const nn_tensor *t, char *message, size_t size) {
    if (!path || !name || !t) return fail(message, size, NN_EINVAL, "no file, name or tensor given");
    if (strpbrk(name, "\"\\") || strlen(name) > 200)
        return fail(message, size, NN_EINVAL, "tensor name '%s' cannot be written", name);
    int64_t numel = nn_tensor_numel(t);
    char header[512];
    int n = snprintf(header, sizeof header, "{\"%s\":{\"dtype\":\"F32\",\"shape\":[", name);
    for (int d = 0; d < t->ndim; d++)
        n += snprintf(header + n, sizeof header - (size_t)n, "%s%lld", d ? "," : "", (long long)t->shape[d]);
    n += snprintf(header + n, sizeof header - (size_t)n, "],\"data_offsets\":[0,%lld]}}", (long long)numel * 4);
    while (n % 8) header[n++] = ' '; /* the data starts 8-byte aligned */
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return fail(message, size, -ENAMETOOLONG, "%s: %s", path, strerror(ENAMETOOLONG));
    int fd = mkstemp(tmp);
    if (fd < 0) return fail(message, size, -errno, "%s: %s", path, strerror(errno));
    FILE *fp = fdopen(fd, "wb");
    int rc = 0;
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    if (!fp || fwrite(len, 1, 8, fp) != 8 || fwrite(header, 1, (size_t)n, fp) != (size_t)n) rc = errno ? -errno : -EIO;
    int64_t idx[NN_MAX_DIMS] = {0};
    for (int64_t k = 0; !rc && k < numel; k++) {
        float v = nn_tensor_get(t, idx);
        if (fwrite(&v, 4, 1, fp) != 1) rc = errno ? -errno : -EIO;
        for (int d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->shape[d]) break;
            idx[d] = 0;
        }
    }
    if (fp) {
        if (fflush(fp) != 0 && !rc) rc = -errno;
        if (fclose(fp) != 0 && !rc) rc = -errno;
    } else {
        close(fd);
    }
    if (!rc && rename(tmp, path) != 0) rc = -errno;
    if (rc) {
        unlink(tmp);
        return fail(message, size, rc, "%s: %s", path, strerror(-rc));
    }
    return 0;
}
