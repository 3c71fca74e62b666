/* machine_file.c - a machine profile as JSON (`opprof machine --json`, the
 * file `--machine` reads; analysis/machine.c measures it). A profile is read
 * whole or refused: a missing key, a wrong type, a count out of range is an
 * error that says which, never a default. */
#define _GNU_SOURCE
#include "trace/trace.h"
#include "trace/json_lex.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- writing ---- */

static void put_levels(opprof__strbuf *sb, const opprof_machine_ceilings *c, const char *indent) {
    opprof__sb_puts(sb, "[");
    for (int l = 0; l < OPPROF_MACHINE_LEVELS; l++) {
        const opprof_machine_level *lv = &c->levels[l];
        opprof__sb_printf(sb, "%s\n%s  {\"name\": ", l ? "," : "", indent);
        opprof__sb_json_string(sb, lv->name);
        opprof__sb_printf(sb, ", \"bytes\": %lld, \"load_gbs\": %.3f, \"copy_gbs\": %.3f}", (long long)lv->bytes,
                          lv->load_gbs, lv->copy_gbs);
    }
    opprof__sb_printf(sb, "\n%s]", indent);
}

static int machine_json_to_string_here(const opprof_machine *m, char **out_text) {
    if (!m || !out_text || m->threads < 1 || m->threads > OPPROF_MACHINE_MAX_THREADS) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    const opprof_machine_ceilings *top = &m->by_threads[m->threads - 1];
    opprof__sb_puts(&sb, "{\n  \"cpu\": ");
    opprof__sb_json_string(&sb, m->cpu);
    opprof__sb_puts(&sb, ",\n  \"isa\": ");
    opprof__sb_json_string(&sb, m->isa);
    opprof__sb_printf(&sb, ",\n  \"threads\": %d,\n  \"fma_peak_gflops\": %.3f,\n  \"levels\": ", m->threads,
                      top->fma_peak_gflops);
    put_levels(&sb, top, "  ");
    opprof__sb_puts(&sb, ",\n  \"by_threads\": [");
    for (int t = 0; t < m->threads; t++) {
        opprof__sb_printf(&sb, "%s\n    {\"threads\": %d, \"fma_peak_gflops\": %.3f, \"levels\": ", t ? "," : "",
                          m->by_threads[t].threads, m->by_threads[t].fma_peak_gflops);
        put_levels(&sb, &m->by_threads[t], "    ");
        opprof__sb_puts(&sb, "}");
    }
    opprof__sb_puts(&sb, "\n  ]\n}\n");
    return opprof__sb_finish(&sb, 0, out_text);
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_machine_json_to_string(const opprof_machine *m, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = machine_json_to_string_here(m, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}

/* ---- reading ---- */

typedef struct reading {
    opprof_machine *m;
    opprof_machine_ceilings *c; /* the by_threads entry being read */
    int level;
    unsigned seen; /* the keys found, a bit each */
} reading;

static int number(opprof__json *j, double *out, const char *what) {
    int c = opprof__json_skip_ws(j);
    opprof__json_number v;
    if (!(c == '-' || (c >= '0' && c <= '9')))
        return opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "%s is not a number", what);
    if (opprof__json_parse_number(j, &v)) return OPPROF_EFORMAT;
    *out = opprof__json_number_value(&v);
    if (!isfinite(*out) || *out < 0) return opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "%s is negative", what);
    return 0;
}

static int text(opprof__json *j, char *out, size_t size, const char *what) {
    if (opprof__json_skip_ws(j) != '"')
        return opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "%s is not a string", what);
    if (opprof__json_string(j)) return OPPROF_EFORMAT;
    snprintf(out, size, "%s", j->s);
    return 0;
}

static int on_level_key(opprof__json *j, void *ctx, const char *k, size_t n) {
    reading *r = ctx;
    opprof_machine_level *lv = &r->c->levels[r->level];
    double v = 0;
    if (KEY_IS(k, n, "name")) return text(j, lv->name, sizeof lv->name, "a level's \"name\"");
    if (KEY_IS(k, n, "bytes"))
        return number(j, &v, "a level's \"bytes\"") ? OPPROF_EFORMAT : (lv->bytes = (int64_t)v, 0);
    if (KEY_IS(k, n, "load_gbs")) return number(j, &lv->load_gbs, "a level's \"load_gbs\"");
    if (KEY_IS(k, n, "copy_gbs")) return number(j, &lv->copy_gbs, "a level's \"copy_gbs\"");
    return opprof__json_skip(j);
}

static int on_level(opprof__json *j, void *ctx, int index) {
    reading *r = ctx;
    if (index >= OPPROF_MACHINE_LEVELS)
        return opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "more than %d levels", OPPROF_MACHINE_LEVELS);
    r->level = index;
    int rc = opprof__json_object(j, on_level_key, r) < 0 ? OPPROF_EFORMAT : 0;
    const opprof_machine_level *lv = &r->c->levels[index];
    if (!rc && (!lv->name[0] || !(lv->load_gbs > 0) || !(lv->copy_gbs > 0)))
        return opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "level %d lacks its name or a bandwidth", index);
    return rc;
}

static int on_ceilings_key(opprof__json *j, void *ctx, const char *k, size_t n) {
    reading *r = ctx;
    double v = 0;
    if (KEY_IS(k, n, "threads")) return number(j, &v, "\"threads\"") ? OPPROF_EFORMAT : (r->c->threads = (int)v, 0);
    if (KEY_IS(k, n, "fma_peak_gflops")) return number(j, &r->c->fma_peak_gflops, "\"fma_peak_gflops\"");
    if (KEY_IS(k, n, "levels")) return opprof__json_array(j, on_level, r) < 0 ? OPPROF_EFORMAT : 0;
    return opprof__json_skip(j);
}

static int on_ceilings(opprof__json *j, void *ctx, int index) {
    reading *r = ctx;
    if (index >= OPPROF_MACHINE_MAX_THREADS)
        return opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "more than %d thread counts", OPPROF_MACHINE_MAX_THREADS);
    r->c = &r->m->by_threads[index];
    if (opprof__json_object(j, on_ceilings_key, r) < 0) return OPPROF_EFORMAT;
    if (r->c->threads != index + 1 || !(r->c->fma_peak_gflops > 0) || !r->c->levels[OPPROF_MACHINE_LEVELS - 1].name[0])
        return opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "by_threads[%d] is not the ceilings of %d thread(s)",
                                    index, index + 1);
    r->m->threads = index + 1;
    return 0;
}

static int on_machine_key(opprof__json *j, void *ctx, const char *k, size_t n) {
    reading *r = ctx;
    if (KEY_IS(k, n, "cpu")) return r->seen |= 1, text(j, r->m->cpu, sizeof r->m->cpu, "\"cpu\"");
    if (KEY_IS(k, n, "isa")) return r->seen |= 2, text(j, r->m->isa, sizeof r->m->isa, "\"isa\"");
    if (KEY_IS(k, n, "by_threads")) return r->seen |= 4, opprof__json_array(j, on_ceilings, r) < 0 ? OPPROF_EFORMAT : 0;
    return opprof__json_skip(j);
}

static int machine_read_here(const char *path, opprof_machine *out, opprof_read_error *err) {
    if (!path || !out) return OPPROF_EINVAL;
    opprof_read_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err->message, sizeof err->message, "%s", strerror(e));
        return -e;
    }
    opprof__json j = {0};
    int rc = opprof__json_open_file(&j, fd, NULL);
    j.err = err;
    if (!rc) rc = opprof__machine_parse(&j, out);
    opprof__json_close(&j);
    return rc;
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_machine_read(const char *path, opprof_machine *out, opprof_read_error *err) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = machine_read_here(path, out, err);
    opprof__c_numbers_end(numbers);
    return rc;
}

int opprof__machine_parse(opprof__json *j, opprof_machine *out) {
    memset(out, 0, sizeof *out);
    reading r = {.m = out};
    int rc = 0;
    if (opprof__json_skip_ws(j) != '{')
        rc = opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "not a machine profile (a JSON object)");
    if (!rc && opprof__json_object(j, on_machine_key, &r) < 0) rc = OPPROF_EFORMAT;
    if (!rc && r.seen != 7)
        rc = opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "not a machine profile: no %s",
                                  !(r.seen & 1)   ? "\"cpu\""
                                  : !(r.seen & 2) ? "\"isa\""
                                                  : "\"by_threads\"");
    if (!rc && out->threads < 1) rc = opprof__json_fail_at(j, OPPROF__JSON_HERE(j), "\"by_threads\" is empty");
    if (rc) memset(out, 0, sizeof *out);
    return rc;
}
