/* table.c - key averages as text (key_averages().table() in PyTorch's exact
 * layout) and as JSON rows: two views of one opprof__view (render.h), so
 * they show the same columns and agree cell for cell. */
#include "render/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SPACING = 2 };

/* 0.4 added samples and cpu_time (0.x: a minor version changes the ABI, and
 * the soname with it); the size is checked so that a change is a decision. */
_Static_assert(sizeof(opprof_table_options) == 16, "opprof_table_options keeps its 0.4 size");

static const struct {
    opprof_sort_key key;
    const char *name, *older; /* older: NULL, or PyTorch's former name of the key */
} SORT_NAMES[] = {
#define SORT_NAME(name, pytorch, older, field, per_call) {OPPROF_SORT_##name, pytorch, older},
    OPPROF_SORT_KEYS(SORT_NAME)
#undef SORT_NAME
};

int opprof_sort_key_parse(const char *name, opprof_sort_key *out) {
    if (!name || !out) return OPPROF_EINVAL;
    for (size_t i = 0; i < sizeof SORT_NAMES / sizeof *SORT_NAMES; i++)
        if (strcmp(name, SORT_NAMES[i].name) == 0 || (SORT_NAMES[i].older && strcmp(name, SORT_NAMES[i].older) == 0)) {
            *out = SORT_NAMES[i].key;
            return 0;
        }
    if (strcmp(name, "none") == 0 || !*name) {
        *out = OPPROF_SORT_NONE;
        return 0;
    }
    return OPPROF_EINVAL;
}

const char *opprof_sort_key_name(opprof_sort_key key) {
    for (size_t i = 0; i < sizeof SORT_NAMES / sizeof *SORT_NAMES; i++)
        if (SORT_NAMES[i].key == key) return SORT_NAMES[i].name;
    return "";
}

/* ---- text ---- */

static void text_cell(opprof__strbuf *sb, const char *text, size_t width, bool left) {
    size_t n = strlen(text);
    if (!left && n < width) opprof__sb_repeat(sb, ' ', width - n);
    opprof__sb_puts(sb, text);
    if (left && n < width) opprof__sb_repeat(sb, ' ', width - n);
    opprof__sb_repeat(sb, ' ', SPACING);
}

static void rule(opprof__strbuf *sb, const opprof__view *v) {
    for (size_t k = 0; k < v->n_columns; k++) {
        opprof__sb_repeat(sb, '-', v->width[k]);
        opprof__sb_repeat(sb, ' ', SPACING);
    }
    opprof__sb_puts(sb, "\n");
}

/* A row; the further lines of a LINES cell (call stacks) below it, under
 * their column, then an empty line. */
static void text_row(opprof__strbuf *sb, const opprof__view *v, const opprof_average_row *r) {
    char buf[512];
    const char *more = NULL;
    size_t indent = 0, lines_width = 0;
    for (size_t k = 0; k < v->n_columns; k++) {
        const opprof__column *c = v->columns[k];
        opprof__cell(v, c, r, buf, sizeof buf);
        text_cell(sb, buf, v->width[k], c->unit == OPPROF__UNIT_LINES);
        if (c->unit == OPPROF__UNIT_LINES) {
            const char *nl = strchr(c->text(r, v), '\n');
            more = nl ? nl + 1 : "";
            lines_width = v->width[k];
        } else if (!more) {
            indent += v->width[k] + SPACING;
        }
    }
    opprof__sb_puts(sb, "\n");
    if (!more) return;
    while (*more) {
        const char *nl = strchr(more, '\n');
        size_t len = nl ? (size_t)(nl - more) : strlen(more);
        opprof__sb_repeat(sb, ' ', indent);
        snprintf(buf, sizeof buf, "%.*s", (int)(len < lines_width ? len : lines_width), more);
        text_cell(sb, buf, lines_width, true);
        opprof__sb_puts(sb, "\n");
        more += len + (nl != NULL);
    }
    opprof__sb_puts(sb, "\n");
}

/* The rows shown whose self time is mostly the profiler's own cost (the
 * recording of the events nested in them): named, with that cost. */
static void cost_note(opprof__strbuf *sb, const opprof__view *v) {
    size_t n = 0, first = 0;
    for (size_t i = 0; i < v->shown; i++) {
        const opprof_average_row *r = &v->rows[v->order[i]];
        double cost = opprof__averages_profiler_cost_ns(v->avg, r);
        if (r->self_ns > 0 && cost >= 0.5 * (double)r->self_ns && !n++) first = v->order[i];
    }
    if (!n) return;
    char cost[64], self[64];
    const opprof_average_row *r = &v->rows[first];
    opprof_format_time_us(opprof__averages_profiler_cost_ns(v->avg, r) / 1e3, cost, sizeof cost);
    opprof_format_time_us((double)r->self_ns / 1e3, self, sizeof self);
    opprof__sb_printf(sb,
                      "Note: the profiler's own cost is most of the self time of %zu row(s), such as '%.80s' "
                      "(about %s of its %s: the %.1f ns of recording each of the ranges nested in it)\n",
                      n, r->key, cost, self, opprof__averages_range_cost_ns(v->avg));
}

/* Rows that spent this share of their CPU total off the CPU are named under the table. */
static const double OFF_CPU_NOTE = 0.25;

static void off_cpu_note(opprof__strbuf *sb, const opprof__view *v) {
    size_t n = 0;
    const opprof_average_row *first = NULL;
    for (size_t i = 0; i < v->shown; i++) {
        const opprof_average_row *r = &v->rows[v->order[i]];
        if (r->total_ns > 0 && (double)r->off_cpu_ns >= OFF_CPU_NOTE * (double)r->total_ns && !n++) first = r;
    }
    if (!n) return;
    char off[64], total[64];
    opprof_format_time_us((double)first->off_cpu_ns / 1e3, off, sizeof off);
    opprof_format_time_us((double)first->total_ns / 1e3, total, sizeof total);
    opprof__sb_printf(
        sb,
        "Note: %zu row(s) spent a quarter or more of their time off the CPU (waiting, not computing), "
        "such as '%.80s' (%s of its %s)%s\n",
        n, first->key, off, total,
        v->flags & OPPROF__SHOW_CPU_TIME ? "" : "; the On CPU total and Off CPU columns (--cpu-time) show them");
}

/* Under a roofline: the time above roof of the modelled rows (the most that
 * faster kernels can gain), apart from the self time of the rows without a
 * model (dispatch, framework overhead), per step when the capture has steps. */
static void roofline_note(opprof__strbuf *sb, const opprof__view *v) {
    double above = 0, unmodelled = 0;
    size_t modelled = 0, exceeded = 0;
    int64_t steps = 0;
    for (size_t i = 0; i < v->n_rows; i++) {
        const opprof_average_row *r = &v->rows[i];
        if (!strcmp(r->key, "ProfilerStep*")) steps = r->calls;
        if (r->device || !strcmp(r->key, "ProfilerStep*")) continue;
        opprof_roofline f = opprof_averages_roofline(v->avg, i, v->machine);
        if (f.modelled)
            above += f.above_roof_ns, modelled++, exceeded += f.roof_percent > 105;
        else
            unmodelled += (double)r->self_ns;
    }
    char a[64], u[64];
    double per = steps > 0 ? (double)steps : 1;
    opprof_format_time_us(above / per / 1e3, a, sizeof a);
    opprof_format_time_us(unmodelled / per / 1e3, u, sizeof u);
    const opprof_machine_ceilings *c = opprof_machine_for_threads(v->machine, 1);
    opprof__sb_printf(sb,
                      "Roofline%s: %s above roof in %zu modelled row(s) (the most faster kernels can gain); %s of self "
                      "time in rows without a model. Roofs: %s %s, 1 thread %.1f GFLOP/s, DRAM %.1f GB/s; bytes are "
                      "compulsory traffic from shapes where not stated (a model, not measured)\n",
                      steps > 0 ? " per step" : "", a, modelled, u, v->machine->cpu, v->machine->isa,
                      c ? c->fma_peak_gflops : 0, c ? c->levels[OPPROF_MACHINE_LEVELS - 1].load_gbs : 0);
    if (exceeded)
        opprof__sb_printf(sb,
                          "Note: %zu row(s) ran above 105 %% of their roof: a roof exceeded is a wrong one (measured "
                          "on a busy machine, or another machine's?): measure again on a quiet one\n",
                          exceeded);
}

/* A begin never ended that covers this share of the trace is named under the table. */
static const double UNENDED_NOTE = 0.10;

static void totals(opprof__strbuf *sb, const opprof__view *v) {
    char buf[64];
    opprof_format_time_us((double)v->self_total / 1e3, buf, sizeof buf);
    opprof__sb_printf(sb, "Self CPU time total: %s\n", buf);
    if (v->device[0]) {
        opprof_format_time_us((double)v->device_total / 1e3, buf, sizeof buf);
        opprof__sb_printf(sb, "Self %s time total: %s\n", v->device, buf);
    }
    uint64_t dropped = opprof__averages_dropped(v->avg);
    if (dropped)
        opprof__sb_printf(sb,
                          "Dropped events: %llu (past the event budget, or too deep or from a signal handler when "
                          "the warnings say so)\n",
                          (unsigned long long)dropped);
    size_t warnings = opprof__averages_warnings(v->avg);
    if (warnings)
        opprof__sb_printf(sb, "Warnings: %zu (the first: %s)\n", warnings, opprof__averages_warning(v->avg, 0));
    double unended = opprof__averages_unended_share(v->avg);
    if (unended >= UNENDED_NOTE)
        opprof__sb_printf(sb,
                          "Note: begin events that never ended were read as lasting to the trace's end; the longest "
                          "covers %.1f %% of it, all counted in its row (opprof check lists them)\n",
                          100 * unended);
    cost_note(sb, v);
    if (v->flags & OPPROF__SHOW_ROOFLINE) roofline_note(sb, v);
    if (opprof_averages_off_cpu(v->avg)) off_cpu_note(sb, v);
    if (v->flags & OPPROF__SHOW_SAMPLES)
        opprof__sb_printf(sb, "Samples: %lld, one per %.3f ms of a thread's CPU time\n",
                          (long long)opprof_averages_sample_count(v->avg),
                          (double)opprof_averages_sample_period_ns(v->avg) / 1e6);
    size_t steps = opprof_averages_steps(v->avg);
    if (v->flags & OPPROF__SHOW_STATS)
        opprof__sb_printf(sb,
                          steps >= 2 ? "Self min to Self CV: each row's self time per step, over %zu steps\n"
                                     : "Self min to Self CV: each row's self time per call (%zu step: no "
                                       "ProfilerStep ranges to compare)\n",
                          steps);
}

static void text_view(opprof__strbuf *sb, const opprof__view *v) {
    rule(sb, v);
    for (size_t k = 0; k < v->n_columns; k++) {
        char title[64];
        opprof__column_title(v, v->columns[k], title, sizeof title);
        text_cell(sb, title, v->width[k], v->columns[k]->unit == OPPROF__UNIT_LINES);
    }
    opprof__sb_puts(sb, "\n");
    rule(sb, v);
    for (size_t i = 0; i < v->shown; i++) text_row(sb, v, &v->rows[v->order[i]]);
    rule(sb, v);
    totals(sb, v);
}

/* The text of one view of avg (the table, its JSON), written by `write`. */
static int view_to_string(const opprof_averages *avg, const opprof_table_options *opt, const opprof_machine *machine,
                          char **out_text, void (*write)(opprof__strbuf *sb, const opprof__view *v)) {
    if (!avg || !opt || !out_text) return OPPROF_EINVAL;
    opprof__view v;
    int rc = opprof__view_build_roofline(&v, avg, opt, machine);
    opprof__strbuf sb = {0};
    if (!rc) write(&sb, &v);
    opprof__view_free(&v);
    return opprof__sb_finish(&sb, rc, out_text);
}

static int averages_table_to_string_here(const opprof_averages *avg, const opprof_table_options *opt, char **out_text) {
    return view_to_string(avg, opt, NULL, out_text, text_view);
}

/* The numbers as C writes them, whatever locale the program set (base/c_numbers.c). */
int opprof_averages_table_to_string(const opprof_averages *avg, const opprof_table_options *opt, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = averages_table_to_string_here(avg, opt, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}

/* ---- JSON ---- */

static void json_number(opprof__strbuf *sb, double x) {
    char buf[40];
    opprof__number_text(x, buf, sizeof buf);
    opprof__sb_puts(sb, buf);
}

void opprof__json_distribution(opprof__strbuf *sb, const char *key, const opprof_distribution *d) {
    const struct {
        const char *key;
        double value;
    } fields[] = {{"min_us", d->min / 1e3},       {"q1_us", d->q1 / 1e3},
                  {"median_us", d->median / 1e3}, {"q3_us", d->q3 / 1e3},
                  {"p90_us", d->p90 / 1e3},       {"p99_us", d->p99 / 1e3},
                  {"max_us", d->max / 1e3},       {"iqr_us", d->iqr / 1e3},
                  {"mean_us", d->mean / 1e3},     {"cv", d->cv}};
    opprof__sb_printf(sb, "\"%s\": {\"n\": %zu", key, d->n);
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        opprof__sb_printf(sb, ", \"%s\": ", fields[i].key);
        json_number(sb, d->n ? fields[i].value : NAN);
    }
    opprof__sb_puts(sb, "}");
}

/* Averages built with distributions: each row's, per step and per call. */
static void json_distributions(opprof__strbuf *sb, const opprof__view *v, const opprof_average_row *r) {
    opprof_row_distributions rd;
    if (opprof_averages_row_distributions(v->avg, (size_t)(r - v->rows), &rd)) return;
    opprof__sb_puts(sb, ", \"distributions\": {");
    opprof__json_distribution(sb, "step_self", &rd.step_self);
    opprof__sb_puts(sb, ", ");
    opprof__json_distribution(sb, "step_total", &rd.step_total);
    opprof__sb_puts(sb, ", ");
    opprof__json_distribution(sb, "call_self", &rd.call_self);
    opprof__sb_puts(sb, ", ");
    opprof__json_distribution(sb, "call_total", &rd.call_total);
    opprof__sb_puts(sb, "}");
}

static void json_row(opprof__strbuf *sb, const opprof__view *v, const opprof_average_row *r) {
    for (size_t k = 0; k < v->n_columns; k++) {
        const opprof__column *c = v->columns[k];
        opprof__sb_printf(sb, "%s\"%s\": ", k ? ", " : "{", c->key);
        opprof__json_cell(sb, v, c, r);
    }
    if (v->device[0]) opprof__sb_printf(sb, ", \"device\": %s", r->device ? "true" : "false");
    if (r->mangled) { /* the demangled name's C++ symbol */
        opprof__sb_puts(sb, ", \"mangled\": ");
        opprof__sb_json_string(sb, r->mangled);
    }
    json_distributions(sb, v, r);
    opprof__sb_puts(sb, "}");
}

static void json_view(opprof__strbuf *sb, const opprof__view *v) {
    opprof__sb_puts(sb, "{\n  \"columns\": [");
    for (size_t k = 0; k < v->n_columns; k++) {
        char title[64];
        opprof__column_title(v, v->columns[k], title, sizeof title);
        opprof__sb_printf(sb, "%s{\"key\": \"%s\", \"title\": ", k ? ", " : "", v->columns[k]->key);
        opprof__sb_json_string(sb, title);
        opprof__sb_puts(sb, "}");
    }
    opprof__sb_puts(sb, "],\n  \"rows\": [");
    for (size_t i = 0; i < v->shown; i++) {
        opprof__sb_puts(sb, i ? ",\n    " : "\n    ");
        json_row(sb, v, &v->rows[v->order[i]]);
    }
    opprof__sb_printf(sb, "%s],\n  \"self_cpu_us_total\": ", v->shown ? "\n  " : "");
    json_number(sb, (double)v->self_total / 1e3);
    if (v->device[0]) {
        opprof__sb_puts(sb, ",\n  \"device_name\": ");
        opprof__sb_json_string(sb, v->device);
        opprof__sb_puts(sb, ",\n  \"self_device_us_total\": ");
        json_number(sb, (double)v->device_total / 1e3);
    }
    if (opprof_averages_steps(v->avg)) opprof__sb_printf(sb, ",\n  \"steps\": %zu", opprof_averages_steps(v->avg));
    opprof__sb_printf(
        sb, ",\n  \"dropped_events\": %llu,\n  \"producer\": ", (unsigned long long)opprof__averages_dropped(v->avg));
    opprof__sb_json_string(sb, opprof_producer_name(opprof__averages_producer(v->avg)));
    opprof__sb_puts(sb, ",\n  \"warnings\": [");
    for (size_t i = 0; i < opprof__averages_warnings(v->avg); i++) {
        opprof__sb_puts(sb, i ? ",\n    " : "\n    ");
        opprof__sb_json_string(sb, opprof__averages_warning(v->avg, i));
    }
    opprof__sb_puts(sb, opprof__averages_warnings(v->avg) ? "\n  ]\n}\n" : "]\n}\n");
}

static int averages_json_to_string_here(const opprof_averages *avg, const opprof_table_options *opt, char **out_text) {
    return view_to_string(avg, opt, NULL, out_text, json_view);
}

int opprof_averages_json_to_string(const opprof_averages *avg, const opprof_table_options *opt, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = averages_json_to_string_here(avg, opt, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}

static int averages_roofline_to_string_here(const opprof_averages *avg, const opprof_table_options *opt,
                                            const opprof_machine *machine, bool json, char **out_text) {
    if (!machine || machine->threads < 1) return OPPROF_EINVAL;
    return view_to_string(avg, opt, machine, out_text, json ? json_view : text_view);
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_averages_roofline_to_string(const opprof_averages *avg, const opprof_table_options *opt,
                                       const opprof_machine *machine, bool json, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = averages_roofline_to_string_here(avg, opt, machine, json, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}
