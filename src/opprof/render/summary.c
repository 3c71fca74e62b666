/* summary.c - summary.json: profile_cpu's report of its run, with opprof's additions.
 * Each field and capture is rendered to JSON text when it is added, so the
 * summary keeps no reference to captures (they die with their callback). */
#include "render/render.h"

#include <string.h>

typedef struct field {
    char *key;
    char *json; /* rendered value */
} field;

struct opprof_summary {
    field *fields;
    size_t n_fields, cap_fields;
    char **captures; /* rendered capture objects */
    size_t n_captures, cap_captures;
};

int opprof_summary_new(opprof_summary **out) {
    if (!out) return OPPROF_EINVAL;
    *out = opprof__calloc(1, sizeof **out);
    return *out ? 0 : OPPROF_ENOMEM;
}

void opprof_summary_free(opprof_summary *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n_fields; i++) {
        opprof__free(s->fields[i].key);
        opprof__free(s->fields[i].json);
    }
    for (size_t i = 0; i < s->n_captures; i++) opprof__free(s->captures[i]);
    opprof__free(s->fields);
    opprof__free(s->captures);
    opprof__free(s);
}

/* Take ownership of a rendered value under `key` (replacing an earlier one). */
static int set_field(opprof_summary *s, const char *key, opprof__strbuf *value) {
    if (value->error) {
        int rc = value->error;
        opprof__sb_free(value);
        return rc;
    }
    char *json = opprof__strdup(value->data ? value->data : "null");
    opprof__sb_free(value);
    if (!json) return OPPROF_ENOMEM;
    for (size_t i = 0; i < s->n_fields; i++)
        if (strcmp(s->fields[i].key, key) == 0) {
            opprof__free(s->fields[i].json);
            s->fields[i].json = json;
            return 0;
        }
    char *k = opprof__strdup(key);
    if (!k || opprof__grow((void **)&s->fields, &s->cap_fields, s->n_fields + 1, sizeof *s->fields)) {
        opprof__free(k);
        opprof__free(json);
        return OPPROF_ENOMEM;
    }
    s->fields[s->n_fields++] = (field){k, json};
    return 0;
}

static bool reserved_key(const char *key) { return strcmp(key, "opprof") == 0 || strcmp(key, "captures") == 0; }

int opprof_summary_set_string(opprof_summary *s, const char *key, const char *value) {
    if (!s || !key || !value || reserved_key(key)) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    opprof__sb_json_string(&sb, value);
    return set_field(s, key, &sb);
}

int opprof_summary_set_int(opprof_summary *s, const char *key, int64_t value) {
    if (!s || !key || reserved_key(key)) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    opprof__sb_printf(&sb, "%lld", (long long)value);
    return set_field(s, key, &sb);
}

int opprof_summary_set_int_array(opprof_summary *s, const char *key, const int64_t *values, size_t count) {
    if (!s || !key || (!values && count) || reserved_key(key)) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    opprof__sb_puts(&sb, "[");
    for (size_t i = 0; i < count; i++) opprof__sb_printf(&sb, "%s%lld", i ? ", " : "", (long long)values[i]);
    opprof__sb_puts(&sb, "]");
    return set_field(s, key, &sb);
}

/* The seed's keys of an operator, then opprof's, each written as the view's
 * column of that key writes it in JSON (absent when the column is not shown:
 * bytes without a memory capture, shapes and stacks without their grouping). */
static const char *const OPERATOR_KEYS[] = {"calls",      "self_cpu_us", "total_cpu_us", "self_cpu_bytes", "cpu_bytes",
                                            "peak_bytes", "flops",       "input_shapes", "stack"};

static int operators(opprof__strbuf *sb, const opprof_capture *c, const opprof_averages *avg) {
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    bool flops = c->info.with_flops;
    for (size_t i = 0; i < n; i++) flops |= rows[i].flops > 0;
    opprof_table_options o = {.sort = OPPROF_SORT_NONE, .peak_memory = true, .flops = flops};
    opprof__view v;
    int rc = opprof__view_build(&v, avg, &o);
    if (rc) return rc;
    opprof__sb_printf(sb, "{\n      \"step\": %lld,\n      \"operators\": [", (long long)c->info.step_num);
    for (size_t i = 0; i < v.shown; i++) {
        const opprof_average_row *r = &v.rows[v.order[i]];
        opprof__sb_puts(sb, i ? ",\n        {\n          \"name\": " : "\n        {\n          \"name\": ");
        opprof__sb_json_string(sb, r->key);
        for (size_t k = 0; k < sizeof OPERATOR_KEYS / sizeof *OPERATOR_KEYS; k++) {
            const opprof__column *col = opprof__view_column(&v, OPERATOR_KEYS[k]);
            if (!col) continue;
            opprof__sb_printf(sb, ",\n          \"%s\": ", OPERATOR_KEYS[k]);
            opprof__json_cell(sb, &v, col, r);
        }
        opprof_row_distributions rd; /* averages built with distributions: self time per step */
        if (!opprof_averages_row_distributions(avg, v.order[i], &rd)) {
            opprof__sb_puts(sb, ",\n          ");
            opprof__json_distribution(sb, "self_cpu_per_step", &rd.step_self);
        }
        opprof__sb_puts(sb, "\n        }");
    }
    opprof__sb_puts(sb, v.shown ? "\n      ],\n" : "],\n");
    opprof__view_free(&v);
    return 0;
}

/* The capture's totals, machine, rank and flight save. */
static void capture_facts(opprof__strbuf *sb, const opprof_capture *c, const opprof_averages *avg) {
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    opprof__sb_puts(sb, "      \"self_cpu_us_total\": ");
    opprof__sb_us(sb, opprof_averages_self_total_ns(avg));
    opprof__sb_printf(sb, ",\n      \"events\": %zu,\n      \"memory_events\": %zu,\n", c->n_events, c->n_mem);
    int64_t flops_total = 0;
    for (size_t i = 0; i < n; i++) flops_total += rows[i].flops;
    if (c->info.with_flops || flops_total)
        opprof__sb_printf(sb, "      \"flops_total\": %lld,\n", (long long)flops_total);
    opprof__sb_printf(sb, "      \"process_peak_rss_bytes\": %lld,\n", (long long)c->info.process_peak_rss_bytes);
    char *machine = NULL; /* the machine it ran on (opprof_session_set_machine) */
    if (c->machine && opprof_machine_json_to_string(c->machine, &machine) == 0) {
        size_t len = strlen(machine);
        while (len && machine[len - 1] == '\n') len--;
        opprof__sb_puts(sb, "      \"machine\": ");
        opprof__sb_put(sb, machine, len);
        opprof__sb_puts(sb, ",\n");
    }
    opprof_free(machine);
    const opprof_rank *r = &c->info.rank;
    if (r->backend[0]) {
        opprof__sb_puts(sb, "      \"distributedInfo\": {\"backend\": ");
        opprof__sb_json_string(sb, r->backend);
        opprof__sb_printf(
            sb, ", \"rank\": %d, \"world_size\": %d, \"clock_offset_ns\": %lld, \"clock_uncertainty_ns\": %lld},\n",
            (int)r->rank, (int)r->world_size, (long long)r->clock_offset_ns, (long long)r->clock_uncertainty_ns);
    }
    const opprof_flight_info *f = &c->info.flight;
    if (f->reason[0]) { /* a flight recorder's save: why, and the rolling statistics */
        opprof__sb_puts(sb, "      \"flight\": {\"reason\": ");
        opprof__sb_json_string(sb, f->reason);
#define FLIGHT_NUMBER(name) opprof__sb_printf(sb, ", \"" #name "\": %lld", (long long)f->name);
        OPPROF__FLIGHT_NUMBERS(FLIGHT_NUMBER)
#undef FLIGHT_NUMBER
        opprof__sb_puts(sb, "},\n");
    }
}

int opprof_summary_add_capture(opprof_summary *s, const opprof_capture *c, const opprof_averages *avg) {
    if (!s || !c || !avg) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    int rc = operators(&sb, c, avg);
    if (rc) {
        opprof__sb_free(&sb);
        return rc;
    }
    capture_facts(&sb, c, avg);
    /* each step: its duration and its peak of allocated bytes */
    int64_t *peaks = NULL;
    if (c->n_mem && opprof_capture_peak_memory(c, &peaks)) {
        opprof__sb_free(&sb);
        return OPPROF_ENOMEM;
    }
    opprof__sb_puts(&sb, "      \"steps\": [");
    int steps = 0;
    for (size_t i = 0; i < c->n_events; i++) {
        if (c->events[i].kind != OPPROF_KIND_STEP) continue;
        opprof__sb_puts(&sb, steps++ ? ",\n        {\"name\": " : "\n        {\"name\": ");
        opprof__sb_json_string(&sb, c->names[c->events[i].name]);
        opprof__sb_puts(&sb, ", \"duration_us\": ");
        opprof__sb_us(&sb, c->events[i].duration_ns);
        opprof__sb_printf(&sb, ", \"peak_bytes\": %lld}", (long long)(peaks ? peaks[i] : 0));
    }
    opprof__sb_puts(&sb, steps ? "\n      ],\n" : "],\n");
    opprof_free(peaks);
    opprof__sb_printf(&sb, "      \"overhead_range_ns\": %.2f,\n      \"overhead_memory_event_ns\": %.2f,\n",
                      c->info.overhead_range_ns, c->info.overhead_memory_event_ns);
    opprof__sb_printf(&sb, "      \"dropped_events\": %llu,\n      \"warnings\": [",
                      (unsigned long long)c->info.dropped_events);
    for (size_t i = 0; i < c->n_warnings; i++) {
        if (i) opprof__sb_puts(&sb, ", ");
        opprof__sb_json_string(&sb, c->warnings[i]);
    }
    opprof__sb_puts(&sb, "]\n    }");
    if (sb.error) {
        rc = sb.error;
        opprof__sb_free(&sb);
        return rc;
    }
    char *copy = opprof__strdup(sb.data);
    opprof__sb_free(&sb);
    if (!copy || opprof__grow((void **)&s->captures, &s->cap_captures, s->n_captures + 1, sizeof *s->captures)) {
        opprof__free(copy);
        return OPPROF_ENOMEM;
    }
    s->captures[s->n_captures++] = copy;
    return 0;
}

static int render(const opprof_summary *s, opprof__strbuf *sb) {
    opprof__sb_puts(sb, "{\n  \"opprof\": \"" OPPROF_VERSION_STRING "\"");
    for (size_t i = 0; i < s->n_fields; i++) {
        opprof__sb_puts(sb, ",\n  ");
        opprof__sb_json_string(sb, s->fields[i].key);
        opprof__sb_puts(sb, ": ");
        opprof__sb_puts(sb, s->fields[i].json);
    }
    opprof__sb_puts(sb, ",\n  \"captures\": [");
    for (size_t i = 0; i < s->n_captures; i++) {
        opprof__sb_puts(sb, i ? ",\n    " : "\n    ");
        opprof__sb_puts(sb, s->captures[i]);
    }
    opprof__sb_puts(sb, s->n_captures ? "\n  ]\n}\n" : "]\n}\n");
    return sb->error;
}

static int summary_json_to_string_here(const opprof_summary *s, char **out_text) {
    if (!s || !out_text) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    int rc = render(s, &sb);
    rc = opprof__sb_finish(&sb, rc, out_text);
    return rc;
}

/* The numbers as C writes them, whatever locale the program set (base/c_numbers.c). */
int opprof_summary_json_to_string(const opprof_summary *s, char **out_text) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = summary_json_to_string_here(s, out_text);
    opprof__c_numbers_end(numbers);
    return rc;
}

static int summary_json_write_here(const opprof_summary *s, const char *path) {
    if (!s || !path) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    int rc = render(s, &sb);
    if (!rc) rc = opprof_write_text_file(path, sb.data);
    opprof__sb_free(&sb);
    return rc;
}

/* The numbers as C writes and reads them, whatever locale the program set (base/c_numbers.c). */
int opprof_summary_json_write(const opprof_summary *s, const char *path) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = summary_json_write_here(s, path);
    opprof__c_numbers_end(numbers);
    return rc;
}
