/* ranks_view.c - the ranks compared (analysis/ranks.c) as text tables and
 * as JSON: per operator across the ranks, per rank, the skew. */
#include "render/render.h"

#include <stdlib.h>
#include <string.h>

enum { CELL = 64 };

static void us_cell(char *cell, int64_t ns) { opprof__unit_text(OPPROF__UNIT_TIME, (double)ns / 1e3, cell, CELL); }
static void name_cell(char *cell, const char *name) { opprof__name_cell(name, cell, CELL); }

static int ops_table(const opprof_ranks *r, opprof__strbuf *sb) {
    static const char *const titles[] = {"Name",     "Calls",        "Min self", "Median self",
                                         "Max self", "Slowest rank", "Max / min"};
    enum { COLS = 7 };
    char(*cells)[CELL] = opprof__calloc((r->n_ops ? r->n_ops : 1) * COLS, CELL);
    const char **ptrs = opprof__calloc((r->n_ops ? r->n_ops : 1) * COLS, sizeof *ptrs);
    int rc = cells && ptrs ? 0 : OPPROF_ENOMEM;
    for (size_t j = 0; !rc && j < r->n_ops; j++) {
        const opprof__ranks_op *o = &r->ops[j];
        char(*c)[CELL] = cells + j * COLS;
        name_cell(c[0], o->name);
        snprintf(c[1], CELL, "%lld", (long long)o->calls);
        us_cell(c[2], o->min_ns);
        us_cell(c[3], o->median_ns);
        us_cell(c[4], o->max_ns);
        snprintf(c[5], CELL, "%d", (int)r->ranks[o->slowest].rank);
        if (o->min_ns > 0)
            snprintf(c[6], CELL, "%.2f", (double)o->max_ns / (double)o->min_ns);
        else
            snprintf(c[6], CELL, "--");
        for (int k = 0; k < COLS; k++) ptrs[j * COLS + k] = c[k];
    }
    if (!rc) {
        opprof__sb_printf(sb, "Operators across %zu ranks: self CPU time per rank (all calls)\n", r->n_ranks);
        rc = opprof__text_table(sb, titles, COLS, ptrs, r->n_ops);
    }
    opprof__free(cells);
    opprof__free(ptrs);
    return rc;
}

static int ranks_table(const opprof_ranks *r, opprof__strbuf *sb) {
    static const char *const titles[] = {"Rank",       "Busy",        "Communication",        "Compute",
                                         "Comm share", "Collectives", "Waiting for the last", "Last to arrive"};
    enum { COLS = 8 };
    char(*cells)[CELL] = opprof__calloc(r->n_ranks * COLS, CELL);
    const char **ptrs = opprof__calloc(r->n_ranks * COLS, sizeof *ptrs);
    int rc = cells && ptrs ? 0 : OPPROF_ENOMEM;
    for (size_t k = 0; !rc && k < r->n_ranks; k++) {
        const opprof__ranks_rank *x = &r->ranks[k];
        char(*c)[CELL] = cells + k * COLS;
        snprintf(c[0], CELL, "%d", (int)x->rank);
        us_cell(c[1], x->busy_ns);
        us_cell(c[2], x->comm_ns);
        us_cell(c[3], x->busy_ns - x->comm_ns);
        snprintf(c[4], CELL, "%.2f%%", x->busy_ns ? 100.0 * (double)x->comm_ns / (double)x->busy_ns : 0.0);
        snprintf(c[5], CELL, "%lld", (long long)x->collectives);
        us_cell(c[6], x->wait_ns);
        snprintf(c[7], CELL, "%lld of %lld", (long long)x->last, (long long)r->compared);
        for (int i = 0; i < COLS; i++) ptrs[k * COLS + i] = c[i];
    }
    if (!rc) {
        opprof__sb_puts(sb, "\nRanks: communication against compute; collective starts on rank 0's clock\n");
        rc = opprof__text_table(sb, titles, COLS, ptrs, r->n_ranks);
    }
    opprof__free(cells);
    opprof__free(ptrs);
    return rc;
}

static int64_t worst_uncertainty(const opprof_ranks *r) {
    int64_t u = 0;
    for (size_t k = 0; k < r->n_ranks; k++)
        if (r->ranks[k].uncertainty_ns > u) u = r->ranks[k].uncertainty_ns;
    return u;
}

static int ranks_table_to_string_here(const opprof_ranks *r, char **out) {
    if (!r || !out) return OPPROF_EINVAL;
    *out = NULL;
    opprof__strbuf sb = {0};
    int rc = ops_table(r, &sb);
    if (!rc) rc = ranks_table(r, &sb);
    if (!rc) {
        char med[CELL], max[CELL], unc[CELL];
        us_cell(med, r->skew_median_ns);
        us_cell(max, r->skew_max_ns);
        us_cell(unc, worst_uncertainty(r));
        opprof__sb_printf(&sb,
                          "Collectives compared by position: %lld; skew of their starts: median %s, max %s "
                          "(clock alignment within +-%s)\n",
                          (long long)r->compared, med, max, unc);
        rc = sb.error;
    }
    return opprof__sb_finish(&sb, rc, out);
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_ranks_table_to_string(const opprof_ranks *r, char **out) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = ranks_table_to_string_here(r, out);
    opprof__c_numbers_end(numbers);
    return rc;
}

static int ranks_json_to_string_here(const opprof_ranks *r, char **out) {
    if (!r || !out) return OPPROF_EINVAL;
    *out = NULL;
    opprof__strbuf sb = {0};
    opprof__sb_printf(&sb, "{\n  \"ranks\": %zu,\n  \"operators\": [", r->n_ranks);
    for (size_t j = 0; j < r->n_ops; j++) {
        const opprof__ranks_op *o = &r->ops[j];
        opprof__sb_puts(&sb, j ? ",\n    {\"name\": " : "\n    {\"name\": ");
        opprof__sb_json_string(&sb, o->name);
        opprof__sb_printf(&sb,
                          ", \"calls\": %lld, \"min_self_us\": %.3f, \"median_self_us\": %.3f, \"max_self_us\": %.3f, "
                          "\"slowest_rank\": %d, \"self_us_by_rank\": [",
                          (long long)o->calls, (double)o->min_ns / 1e3, (double)o->median_ns / 1e3,
                          (double)o->max_ns / 1e3, (int)r->ranks[o->slowest].rank);
        for (size_t k = 0; k < r->n_ranks; k++)
            opprof__sb_printf(&sb, "%s%.3f", k ? ", " : "", (double)o->self_ns[k] / 1e3);
        opprof__sb_puts(&sb, "]}");
    }
    opprof__sb_puts(&sb, "\n  ],\n  \"by_rank\": [");
    for (size_t k = 0; k < r->n_ranks; k++) {
        const opprof__ranks_rank *x = &r->ranks[k];
        opprof__sb_printf(&sb,
                          "%s\n    {\"rank\": %d, \"busy_us\": %.3f, \"communication_us\": %.3f, \"compute_us\": %.3f, "
                          "\"communication_share\": %.6f, \"collectives\": %lld, \"waiting_for_last_us\": %.3f, "
                          "\"last_to_arrive\": %lld, \"clock_uncertainty_ns\": %lld}",
                          k ? "," : "", (int)x->rank, (double)x->busy_ns / 1e3, (double)x->comm_ns / 1e3,
                          (double)(x->busy_ns - x->comm_ns) / 1e3,
                          x->busy_ns ? (double)x->comm_ns / (double)x->busy_ns : 0.0, (long long)x->collectives,
                          (double)x->wait_ns / 1e3, (long long)x->last, (long long)x->uncertainty_ns);
    }
    opprof__sb_printf(
        &sb, "\n  ],\n  \"collectives_compared\": %lld,\n  \"skew_median_us\": %.3f,\n  \"skew_max_us\": %.3f\n}\n",
        (long long)r->compared, (double)r->skew_median_ns / 1e3, (double)r->skew_max_ns / 1e3);
    return opprof__sb_finish(&sb, sb.error, out);
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_ranks_json_to_string(const opprof_ranks *r, char **out) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = ranks_json_to_string_here(r, out);
    opprof__c_numbers_end(numbers);
    return rc;
}
