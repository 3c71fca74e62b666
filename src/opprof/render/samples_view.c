/* samples_view.c - native functions by their samples, for a program that
 * has no ranges of its own (opprof record --sample of an unchanged binary)
 * as for any sampled capture: each function's self samples (it was the
 * innermost frame) and total samples (it was on the stack, once a sample
 * however often it recurses), and the CPU time they stand for (samples x
 * the sampling period), the most self samples first; and the source line
 * most of its self samples were at, where debug information gave one. */
#include "render/render.h"

#include <stdlib.h>
#include <string.h>

typedef struct function_row {
    uint32_t name;
    int64_t self, total;
    uint32_t line; /* name id of its hottest "file:line", or UINT32_MAX */
} function_row;

typedef struct name_source {
    uint32_t name, source;
} name_source;

static int by_name_source(const void *a, const void *b) {
    const name_source *x = a, *y = b;
    return x->name != y->name ? (x->name > y->name) - (x->name < y->name)
                              : (x->source > y->source) - (x->source < y->source);
}

/* Each function's hottest line: the source most of its self samples had. */
static int hot_lines(const opprof_capture *c, function_row *rows) {
    name_source *v = opprof__alloc((c->n_samples ? c->n_samples : 1) * sizeof *v);
    if (!v) return OPPROF_ENOMEM;
    size_t n = 0;
    for (size_t j = 0; j < c->n_samples; j++) {
        size_t k;
        const uint32_t *frames = opprof_capture_stack(c, c->samples[j].stack, &k);
        const uint32_t *sources = opprof_capture_stack_sources(c, c->samples[j].stack, &k);
        if (k && sources && sources[0] != UINT32_MAX) v[n++] = (name_source){frames[0], sources[0]};
    }
    qsort(v, n, sizeof *v, by_name_source);
    int64_t best = 0;
    for (size_t i = 0, run; i < n; i += run) {
        for (run = 1; i + run < n && !by_name_source(&v[i], &v[i + run]);) run++;
        if (i == 0 || v[i].name != v[i - 1].name) best = 0;
        if ((int64_t)run > best) best = (int64_t)run, rows[v[i].name].line = v[i].source;
    }
    opprof__free(v);
    return 0;
}

static int by_self(const void *a, const void *b) {
    const function_row *x = a, *y = b;
    if (x->self != y->self) return x->self > y->self ? -1 : 1;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    return (x->name > y->name) - (x->name < y->name);
}

/* Per name: its self and total samples (rows indexed by name id). */
static int count(const opprof_capture *c, function_row *rows, uint32_t *seen) {
    for (size_t j = 0; j < c->n_samples; j++) {
        size_t n;
        const uint32_t *frames = opprof_capture_stack(c, c->samples[j].stack, &n);
        if (n) rows[frames[0]].self++;
        for (size_t k = 0; k < n; k++)
            if (seen[frames[k]] != j + 1) { /* once a sample */
                seen[frames[k]] = (uint32_t)(j + 1);
                rows[frames[k]].total++;
            }
    }
    return 0;
}

enum { COLUMNS = 8 };

static void cells_of(const function_row *r, const opprof_capture *c, int64_t period, char buf[COLUMNS][96]) {
    double all = (double)c->n_samples;
    opprof__name_cell(c->names[r->name], buf[0], sizeof buf[0]);
    opprof__unit_text(OPPROF__UNIT_COUNT, (double)r->self, buf[1], sizeof buf[1]);
    opprof__unit_text(OPPROF__UNIT_PERCENT, (double)r->self / all, buf[2], sizeof buf[2]);
    opprof__unit_text(OPPROF__UNIT_TIME, (double)(r->self * period) / 1e3, buf[3], sizeof buf[3]);
    opprof__unit_text(OPPROF__UNIT_COUNT, (double)r->total, buf[4], sizeof buf[4]);
    opprof__unit_text(OPPROF__UNIT_PERCENT, (double)r->total / all, buf[5], sizeof buf[5]);
    opprof__unit_text(OPPROF__UNIT_TIME, (double)(r->total * period) / 1e3, buf[6], sizeof buf[6]);
    opprof__name_cell(r->line != UINT32_MAX ? c->names[r->line] : "", buf[7], sizeof buf[7]);
}

static const char *const TITLES[COLUMNS] = {"Function",      "Self samples", "Self %",       "Self (est.)",
                                            "Total samples", "Total %",      "Total (est.)", "Hottest line"};

const char *const *opprof__functions_titles(size_t *n_columns) {
    *n_columns = COLUMNS;
    return TITLES;
}

void opprof__functions_cells_free(char **cells, size_t n_rows) {
    for (size_t i = 0; cells && i < n_rows * COLUMNS; i++) opprof__free(cells[i]);
    opprof__free(cells);
}

/* The functions' rows, the most self samples first, at most row_limit (<= 0: all). */
static int ranked(const opprof_capture *c, int row_limit, function_row **out, size_t *n_rows) {
    *out = NULL;
    *n_rows = 0;
    if (!c->n_samples) return OPPROF_EINVAL;
    function_row *rows = opprof__calloc(c->n_names + 1, sizeof *rows);
    uint32_t *seen = opprof__calloc(c->n_names + 1, sizeof *seen);
    size_t n = 0;
    for (size_t i = 0; rows && i < c->n_names; i++) rows[i].line = UINT32_MAX;
    int rc = rows && seen ? count(c, rows, seen) : OPPROF_ENOMEM;
    if (!rc) rc = hot_lines(c, rows);
    for (size_t i = 0; !rc && i < c->n_names; i++)
        if (rows[i].total) rows[n++] = (function_row){(uint32_t)i, rows[i].self, rows[i].total, rows[i].line};
    if (!rc) qsort(rows, n, sizeof *rows, by_self);
    if (row_limit > 0 && (size_t)row_limit < n) n = (size_t)row_limit;
    opprof__free(seen);
    if (rc) {
        opprof__free(rows);
        return rc;
    }
    *out = rows;
    *n_rows = n;
    return 0;
}

int opprof__functions_cells(const opprof_capture *c, int row_limit, char ***out, size_t *n_rows) {
    *out = NULL;
    *n_rows = 0;
    function_row *rows = NULL;
    char **cells = NULL;
    size_t n = 0;
    int rc = ranked(c, row_limit, &rows, &n);
    if (!rc && !(cells = opprof__calloc(n * COLUMNS + 1, sizeof *cells))) rc = OPPROF_ENOMEM;
    for (size_t r = 0; !rc && r < n; r++) {
        char buf[COLUMNS][96];
        cells_of(&rows[r], c, c->info.sample_period_ns, buf);
        for (int k = 0; k < COLUMNS && !rc; k++)
            if (!(cells[r * COLUMNS + k] = opprof__strdup(buf[k]))) rc = OPPROF_ENOMEM;
    }
    opprof__free(rows);
    if (rc) {
        opprof__functions_cells_free(cells, n);
        return rc;
    }
    *out = cells;
    *n_rows = n;
    return 0;
}

static int capture_functions_json_to_string_here(const opprof_capture *c, int row_limit, char **out) {
    if (!c || !out) return OPPROF_EINVAL;
    *out = NULL;
    function_row *rows = NULL;
    size_t n = 0;
    int rc = ranked(c, row_limit, &rows, &n);
    if (rc) return rc;
    opprof__strbuf sb = {0};
    double all = (double)c->n_samples;
    int64_t period = c->info.sample_period_ns;
    opprof__sb_puts(&sb, "[");
    for (size_t r = 0; r < n; r++) {
        const function_row *f = &rows[r];
        opprof__sb_puts(&sb, r ? ",\n    {\"name\": " : "\n    {\"name\": ");
        opprof__sb_json_string(&sb, c->names[f->name]);
        opprof__sb_printf(&sb,
                          ", \"self_samples\": %lld, \"self_percent\": %.6g, \"self_est_us\": ", (long long)f->self,
                          100.0 * (double)f->self / all);
        opprof__sb_us(&sb, f->self * period);
        opprof__sb_printf(&sb,
                          ", \"total_samples\": %lld, \"total_percent\": %.6g, \"total_est_us\": ", (long long)f->total,
                          100.0 * (double)f->total / all);
        opprof__sb_us(&sb, f->total * period);
        opprof__sb_puts(&sb, ", \"hottest_line\": ");
        if (f->line != UINT32_MAX)
            opprof__sb_json_string(&sb, c->names[f->line]);
        else
            opprof__sb_puts(&sb, "null");
        opprof__sb_puts(&sb, "}");
    }
    opprof__sb_puts(&sb, n ? "\n  ]" : "]");
    opprof__free(rows);
    return opprof__sb_finish(&sb, 0, out);
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_capture_functions_json_to_string(const opprof_capture *c, int row_limit, char **out) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_functions_json_to_string_here(c, row_limit, out);
    opprof__c_numbers_end(numbers);
    return rc;
}

static int capture_functions_to_string_here(const opprof_capture *c, int row_limit, char **out) {
    if (!c || !out) return OPPROF_EINVAL;
    *out = NULL;
    char **cells;
    size_t n;
    int rc = opprof__functions_cells(c, row_limit, &cells, &n);
    if (rc) return rc;
    opprof__strbuf sb = {0};
    rc = opprof__text_table(&sb, TITLES, COLUMNS, (const char *const *)cells, n);
    if (!rc)
        opprof__sb_printf(&sb, "\nNative functions by their samples: %zu, one per %.3f ms of a thread's CPU time%s\n",
                          c->n_samples, (double)c->info.sample_period_ns / 1e6,
                          c->info.samples_lost ? " (some lost: see the warnings)" : "");
    opprof__functions_cells_free(cells, n);
    return opprof__sb_finish(&sb, rc, out);
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_capture_functions_to_string(const opprof_capture *c, int row_limit, char **out) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_functions_to_string_here(c, row_limit, out);
    opprof__c_numbers_end(numbers);
    return rc;
}
