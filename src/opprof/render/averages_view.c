/* averages_view.c - the key-averages view: the columns, one descriptor
 * each; one order of rows; the cells through the formatter of each unit
 * (render/units.c). See render/render.h. */
#include "render/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { COLUMN_WIDTH = 12, MAX_SHAPES_WIDTH = 45, MAX_SOURCE_WIDTH = 75 };

/* ---- the columns ---- */

static double share(int64_t part, int64_t whole) { return whole ? (double)part / (double)whole : NAN; }
static double us(int64_t ns) { return (double)ns / 1e3; }
static double per_call(int64_t ns, int64_t calls) { return calls ? (double)ns / 1e3 / (double)calls : 0.0; }
static double rate(int64_t amount, int64_t ns) { return amount > 0 && ns > 0 ? (double)amount / (double)ns : NAN; }

#define NUMBER(fn, expr) \
    static double fn(const opprof_average_row *r, const opprof__view *v) { return (void)v, (void)r, (expr); }
NUMBER(self_share, share(r->self_ns, v->self_total))
NUMBER(self_us, us(r->self_ns))
NUMBER(total_share, share(r->total_ns, v->self_total))
NUMBER(total_us, us(r->total_ns))
NUMBER(avg_us, per_call(r->total_ns, r->calls))
NUMBER(self_device_us, us(r->self_device_ns))
NUMBER(self_device_share, share(r->self_device_ns, v->device_total))
NUMBER(total_device_us, us(r->total_device_ns))
NUMBER(avg_device_us, per_call(r->total_device_ns, r->calls))
NUMBER(cpu_bytes, (double)r->cpu_mem)
NUMBER(self_cpu_bytes, (double)r->self_cpu_mem)
NUMBER(device_bytes, (double)r->device_mem)
NUMBER(self_device_bytes, (double)r->self_device_mem)
NUMBER(peak_bytes, (double)r->peak_mem)
NUMBER(calls, (double)r->calls)
NUMBER(layer, r->layer >= 0 ? (double)r->layer : NAN)
NUMBER(flops, r->flops > 0 ? (double)r->flops : NAN)
NUMBER(gflops, rate(r->flops, r->wall_ns))
NUMBER(gbps, rate(r->bytes, r->wall_ns))
NUMBER(wall_us, us(r->wall_ns))
NUMBER(wall_avg_us, per_call(r->wall_ns, r->calls))
NUMBER(threads, (double)r->threads)
NUMBER(imbalance, r->imbalance > 0 ? r->imbalance : NAN)
NUMBER(wait_us, us(r->wait_ns))
NUMBER(self_samples, (double)r->samples)
NUMBER(samples_share, share(r->samples, opprof_averages_sample_count(v->avg)))
NUMBER(off_cpu_us, us(r->off_cpu_ns))
NUMBER(on_cpu_us, us(r->total_ns - r->off_cpu_ns))
#undef NUMBER

const opprof_distribution *opprof__view_self_distribution(const opprof__view *v, const opprof_average_row *r) {
    const opprof__distributions *d = opprof__averages_distributions(v->avg);
    if (!d->steps) return NULL;
    const opprof_row_distributions *rd = &d->rows[r - v->rows];
    return d->steps >= 2 ? &rd->step_self : &rd->call_self;
}

#define DISTRIBUTION(fn, expr)                                               \
    static double fn(const opprof_average_row *r, const opprof__view *v) {   \
        const opprof_distribution *d = opprof__view_self_distribution(v, r); \
        return d && d->n ? (expr) : NAN;                                     \
    }
DISTRIBUTION(self_min_us, d->min / 1e3)
DISTRIBUTION(self_median_us, d->median / 1e3)
DISTRIBUTION(self_p90_us, d->p90 / 1e3)
DISTRIBUTION(self_p99_us, d->p99 / 1e3)
DISTRIBUTION(self_max_us, d->max / 1e3)
DISTRIBUTION(self_iqr_us, d->iqr / 1e3)
DISTRIBUTION(self_cv, d->cv)
#undef DISTRIBUTION

static double profiler_cost(const opprof_average_row *r, const opprof__view *v) {
    return opprof__averages_profiler_cost_ns(v->avg, r) / 1e3;
}

/* ---- the roofline (opprof_roofline_of) ---- */

static opprof_roofline roof_of(const opprof_average_row *r, const opprof__view *v) {
    return opprof_averages_roofline(v->avg, (size_t)(r - v->rows), v->machine);
}
#define ROOF(fn, expr)                                                     \
    static double fn(const opprof_average_row *r, const opprof__view *v) { \
        opprof_roofline f = roof_of(r, v);                                 \
        return f.modelled ? (expr) : NAN;                                  \
    }
static double bytes_of(const opprof_average_row *r, const opprof__view *v) {
    int64_t b = r->bytes > 0 ? r->bytes : opprof__averages_model_bytes(v->avg, r);
    return b > 0 ? (double)b : NAN;
}
ROOF(roof_bytes, bytes_of(r, v))
ROOF(roof_intensity, f.intensity)
ROOF(roof_percent, f.roof_percent / 100)
ROOF(above_roof_us, f.above_roof_ns / 1e3)
#undef ROOF

static const char *bound_text(const opprof_average_row *r, const opprof__view *v) {
    opprof_roofline f = roof_of(r, v);
    if (!f.modelled) return "no model";
    return f.compute_bound ? "compute" : opprof_machine_for_threads(v->machine, r->threads)->levels[f.level].name;
}

static const char *name_text(const opprof_average_row *r, const opprof__view *v) { return (void)v, r->key; }
static const char *shapes_text(const opprof_average_row *r, const opprof__view *v) {
    return (void)v, r->input_shapes ? r->input_shapes : "[]";
}
static const char *stack_text(const opprof_average_row *r, const opprof__view *v) {
    return (void)v, r->stack ? r->stack : "";
}
static const char *top_frame_text(const opprof_average_row *r, const opprof__view *v) {
    return (void)v, r->top_frame ? r->top_frame : "";
}

/* PyTorch's columns, in its order. */
static const opprof__column COLUMNS[] = {
    {"Name", "name", OPPROF__UNIT_NAME, 0, NULL, name_text},
    {"Layer", "layer", OPPROF__UNIT_COUNT, OPPROF__SHOW_LAYER, layer, NULL},
    {"Self CPU %", "self_cpu_percent", OPPROF__UNIT_PERCENT, 0, self_share, NULL},
    {"Self CPU", "self_cpu_us", OPPROF__UNIT_TIME, 0, self_us, NULL},
    {"CPU total %", "total_cpu_percent", OPPROF__UNIT_PERCENT, 0, total_share, NULL},
    {"CPU total", "total_cpu_us", OPPROF__UNIT_TIME, 0, total_us, NULL},
    {"CPU time avg", "cpu_time_avg_us", OPPROF__UNIT_TIME, 0, avg_us, NULL},
    {"Self %s", "self_device_us", OPPROF__UNIT_TIME, OPPROF__SHOW_DEVICE, self_device_us, NULL},
    {"Self %s %%", "self_device_percent", OPPROF__UNIT_PERCENT, OPPROF__SHOW_DEVICE, self_device_share, NULL},
    {"%s total", "total_device_us", OPPROF__UNIT_TIME, OPPROF__SHOW_DEVICE, total_device_us, NULL},
    {"%s time avg", "device_time_avg_us", OPPROF__UNIT_TIME, OPPROF__SHOW_DEVICE, avg_device_us, NULL},
    {"CPU Mem", "cpu_bytes", OPPROF__UNIT_BYTES, OPPROF__SHOW_MEMORY, cpu_bytes, NULL},
    {"Self CPU Mem", "self_cpu_bytes", OPPROF__UNIT_BYTES, OPPROF__SHOW_MEMORY, self_cpu_bytes, NULL},
    {"%s Mem", "device_bytes", OPPROF__UNIT_BYTES, OPPROF__SHOW_DEVICE_MEM, device_bytes, NULL},
    {"Self %s Mem", "self_device_bytes", OPPROF__UNIT_BYTES, OPPROF__SHOW_DEVICE_MEM, self_device_bytes, NULL},
    {"Peak Mem", "peak_bytes", OPPROF__UNIT_BYTES, OPPROF__SHOW_PEAK, peak_bytes, NULL},
    {"# of Calls", "calls", OPPROF__UNIT_COUNT, 0, calls, NULL},
    {"Wall total", "wall_us", OPPROF__UNIT_TIME, OPPROF__SHOW_PARALLEL, wall_us, NULL},
    {"Wall avg", "wall_avg_us", OPPROF__UNIT_TIME, OPPROF__SHOW_PARALLEL, wall_avg_us, NULL},
    {"Threads", "threads", OPPROF__UNIT_COUNT, OPPROF__SHOW_PARALLEL, threads, NULL},
    {"Imbalance", "imbalance", OPPROF__UNIT_RATIO, OPPROF__SHOW_PARALLEL, imbalance, NULL},
    {"Wait", "wait_us", OPPROF__UNIT_TIME, OPPROF__SHOW_PARALLEL, wait_us, NULL},
    {"Input Shapes", "input_shapes", OPPROF__UNIT_TEXT, OPPROF__SHOW_SHAPES, NULL, shapes_text},
    {"Source Location", "stack", OPPROF__UNIT_LINES, OPPROF__SHOW_STACK, NULL, stack_text},
    {"Total %sFLOPs", "flops", OPPROF__UNIT_FLOPS, OPPROF__SHOW_FLOPS, flops, NULL},
    {"GFLOP/s", "gflops", OPPROF__UNIT_RATE1, OPPROF__SHOW_FLOPS, gflops, NULL},
    {"GB/s", "gbps", OPPROF__UNIT_RATE2, OPPROF__SHOW_BYTES, gbps, NULL},
    {"Bytes", "bytes", OPPROF__UNIT_BYTES, OPPROF__SHOW_ROOFLINE, roof_bytes, NULL},
    {"FLOPs/B", "arithmetic_intensity", OPPROF__UNIT_RATE2, OPPROF__SHOW_ROOFLINE, roof_intensity, NULL},
    {"Bound", "bound", OPPROF__UNIT_TEXT, OPPROF__SHOW_ROOFLINE, NULL, bound_text},
    {"% of roof", "roof_percent", OPPROF__UNIT_PERCENT, OPPROF__SHOW_ROOFLINE, roof_percent, NULL},
    {"Above roof", "time_above_roof_us", OPPROF__UNIT_TIME, OPPROF__SHOW_ROOFLINE, above_roof_us, NULL},
    {"Profiler (est.)", "profiler_cost_us", OPPROF__UNIT_TIME, OPPROF__SHOW_COST, profiler_cost, NULL},
    {"Self min", "self_min_us", OPPROF__UNIT_TIME, OPPROF__SHOW_STATS, self_min_us, NULL},
    {"Self med", "self_median_us", OPPROF__UNIT_TIME, OPPROF__SHOW_STATS, self_median_us, NULL},
    {"Self p90", "self_p90_us", OPPROF__UNIT_TIME, OPPROF__SHOW_STATS, self_p90_us, NULL},
    {"Self p99", "self_p99_us", OPPROF__UNIT_TIME, OPPROF__SHOW_STATS, self_p99_us, NULL},
    {"Self max", "self_max_us", OPPROF__UNIT_TIME, OPPROF__SHOW_STATS, self_max_us, NULL},
    {"Self IQR", "self_iqr_us", OPPROF__UNIT_TIME, OPPROF__SHOW_STATS, self_iqr_us, NULL},
    {"Self CV", "self_cv", OPPROF__UNIT_PERCENT, OPPROF__SHOW_STATS, self_cv, NULL},
    {"On CPU total", "on_cpu_us", OPPROF__UNIT_TIME, OPPROF__SHOW_CPU_TIME, on_cpu_us, NULL},
    {"Off CPU", "off_cpu_us", OPPROF__UNIT_TIME, OPPROF__SHOW_CPU_TIME, off_cpu_us, NULL},
    {"Samples", "samples", OPPROF__UNIT_COUNT, OPPROF__SHOW_SAMPLES, self_samples, NULL},
    {"Samples %", "samples_percent", OPPROF__UNIT_PERCENT, OPPROF__SHOW_SAMPLES, samples_share, NULL},
    {"Top native frame", "top_native_frame", OPPROF__UNIT_TEXT, OPPROF__SHOW_SAMPLES, NULL, top_frame_text},
};

/* ---- one order of rows ---- */

/* The sort metric of a row, as a double (averages divide). */
static double metric(const opprof_average_row *r, opprof_sort_key key) {
    switch (key) {
#define SORT_METRIC(name, pytorch, older, field, per_call) \
    case OPPROF_SORT_##name:                               \
        return per_call ? (r->calls ? (double)r->field / (double)r->calls : 0.0) : (double)r->field;
        OPPROF_SORT_KEYS(SORT_METRIC)
#undef SORT_METRIC
    default: return 0.0;
    }
}

static int order_rows(opprof__view *v, const opprof_table_options *o) {
    size_t n = v->n_rows;
    opprof__keyed *items = opprof__alloc((n ? n : 1) * sizeof *items);
    v->order = opprof__alloc((n ? n : 1) * sizeof *v->order);
    if (!items || !v->order) {
        opprof__free(items);
        opprof__free(v->order);
        v->order = NULL;
        return OPPROF_ENOMEM;
    }
    bool above_roof = o->sort == OPPROF_SORT_TIME_ABOVE_ROOF;
    for (size_t i = 0; i < n; i++) {
        opprof_roofline f = above_roof ? opprof_averages_roofline(v->avg, i, v->machine) : (opprof_roofline){0};
        double x = above_roof ? (f.modelled ? f.above_roof_ns : -INFINITY) : metric(&v->rows[i], o->sort);
        items[i] = (opprof__keyed){~opprof__double_key(x),
                                   i}; /* descending; ties in first-seen order (Python's stable sort) */
    }
    if (o->sort != OPPROF_SORT_NONE && (!above_roof || v->machine)) opprof__sort_keyed(items, n);
    for (size_t i = 0; i < n; i++) v->order[i] = items[i].index;
    opprof__free(items);
    v->shown = o->row_limit > 0 && (size_t)o->row_limit < n ? (size_t)o->row_limit : n;
    return 0;
}

/* ---- the view ---- */

/* PyTorch's auto_scale_flops: the unit from the smallest non-zero count. */
static void flops_unit(opprof__view *v) {
    static const char *const prefixes[] = {"", "K", "M", "G", "T", "P"};
    int64_t smallest = 0;
    for (size_t i = 0; i < v->n_rows; i++)
        if (v->rows[i].flops > 0 && (smallest == 0 || v->rows[i].flops < smallest)) smallest = v->rows[i].flops;
    double lg = smallest > 0 ? log10((double)smallest) / 3.0 : 0.0;
    int k = (int)floor(lg);
    if (k < 0) k = 0;
    if (k > 4) k = 4; /* TFLOPs at most */
    v->flops_scale = pow(10.0, -3.0 * k);
    v->flops_prefix = prefixes[k];
}

static unsigned flags_of(const opprof__view *v, const opprof_table_options *o) {
    unsigned f = 0;
    bool memory = opprof__averages_profile_memory(v->avg);
    if (v->device[0]) f |= OPPROF__SHOW_DEVICE;
    if (memory) f |= OPPROF__SHOW_MEMORY;
    if (v->device[0] && opprof__averages_device_memory(v->avg)) f |= OPPROF__SHOW_DEVICE_MEM;
    if (o->peak_memory && memory) f |= OPPROF__SHOW_PEAK;
    if (opprof__averages_by_shape(v->avg)) f |= OPPROF__SHOW_SHAPES;
    if (opprof__averages_by_layer(v->avg)) f |= OPPROF__SHOW_LAYER;
    if (opprof__averages_stack_n(v->avg)) f |= OPPROF__SHOW_STACK;
    if (o->flops || opprof__averages_flops_recorded(v->avg)) f |= OPPROF__SHOW_FLOPS;
    if (o->profiler_cost && opprof__averages_range_cost_ns(v->avg) > 0) f |= OPPROF__SHOW_COST;
    if (o->stats) f |= OPPROF__SHOW_STATS;
    if (o->samples && opprof_averages_sample_count(v->avg)) f |= OPPROF__SHOW_SAMPLES;
    if (o->cpu_time && opprof_averages_off_cpu(v->avg)) f |= OPPROF__SHOW_CPU_TIME;
    if (opprof__averages_parallel(v->avg)) f |= OPPROF__SHOW_PARALLEL;
    if (v->machine && v->machine->threads > 0) f |= OPPROF__SHOW_ROOFLINE | OPPROF__SHOW_FLOPS;
    for (size_t i = 0; (f & OPPROF__SHOW_FLOPS) && i < v->n_rows; i++)
        if (v->rows[i].bytes > 0) f |= OPPROF__SHOW_BYTES;
    return f;
}

/* Text widths over all rows, as PyTorch computes them; a number wider than
 * PyTorch's 12 characters (FLOPs of a big model in the unit of its smallest
 * count) widens its column rather than push the next ones aside. */
static size_t width_of(const opprof__view *v, const opprof__column *c) {
    if (c->unit != OPPROF__UNIT_NAME && c->unit != OPPROF__UNIT_TEXT && c->unit != OPPROF__UNIT_LINES) {
        size_t w = COLUMN_WIDTH;
        char buf[64];
        for (size_t i = 0; i < v->n_rows; i++) {
            opprof__cell(v, c, &v->rows[i], buf, sizeof buf);
            if (strlen(buf) > w) w = strlen(buf);
        }
        return w;
    }
    size_t longest = 0;
    for (size_t i = 0; i < v->n_rows; i++)
        for (const char *f = c->text(&v->rows[i], v); *f;) { /* LINES: the longest line */
            size_t len = c->unit == OPPROF__UNIT_LINES && strchr(f, '\n') ? (size_t)(strchr(f, '\n') - f) : strlen(f);
            if (len > longest) longest = len;
            f += len + (f[len] == '\n');
        }
    size_t cap = c->unit == OPPROF__UNIT_NAME   ? OPPROF__MAX_NAME_WIDTH
                 : c->unit == OPPROF__UNIT_TEXT ? MAX_SHAPES_WIDTH
                                                : MAX_SOURCE_WIDTH;
    if ((c->needs & OPPROF__SHOW_SAMPLES) &&
        longest < strlen(c->title)) /* ours fits its title; PyTorch's keep its widths */
        longest = strlen(c->title);
    size_t w = longest + 4 < cap ? longest + 4 : cap;
    char buf[4 * OPPROF__MAX_NAME_WIDTH + 64];
    for (size_t i = 0; c->unit == OPPROF__UNIT_NAME && i < v->n_rows; i++) { /* a control shown as an escape widens */
        opprof__cell(v, c, &v->rows[i], buf, sizeof buf);
        if (strlen(buf) > w) w = strlen(buf);
    }
    return w;
}

/* The rows' names that would read the same get a window where they differ. */
static int name_windows(opprof__view *v) {
    const char **names = opprof__alloc((v->n_rows ? v->n_rows : 1) * sizeof *names);
    v->name_at = opprof__alloc((v->n_rows ? v->n_rows : 1) * sizeof *v->name_at);
    int rc = names && v->name_at ? 0 : OPPROF_ENOMEM;
    for (size_t i = 0; !rc && i < v->n_rows; i++) names[i] = v->rows[i].key;
    if (!rc) rc = opprof__name_windows(names, v->n_rows, v->name_at);
    opprof__free(names);
    if (rc) {
        opprof__free(v->name_at);
        v->name_at = NULL;
    }
    return rc;
}

int opprof__view_build(opprof__view *v, const opprof_averages *avg, const opprof_table_options *o) {
    return opprof__view_build_roofline(v, avg, o, NULL);
}

int opprof__view_build_roofline(opprof__view *v, const opprof_averages *avg, const opprof_table_options *o,
                                const opprof_machine *machine) {
    memset(v, 0, sizeof *v);
    if (o->stats && !opprof_averages_steps(avg)) return OPPROF_EINVAL; /* built without distributions */
    v->avg = avg;
    v->rows = opprof_averages_rows(avg, &v->n_rows);
    v->self_total = opprof_averages_self_total_ns(avg);
    v->device_total = opprof_averages_self_device_total_ns(avg);
    v->device = opprof_averages_device_name(avg);
    v->machine = machine;
    v->flags = flags_of(v, o);
    flops_unit(v);
    int rc = name_windows(v);
    if (rc) return rc;
    for (size_t k = 0; k < sizeof COLUMNS / sizeof *COLUMNS; k++) {
        if ((COLUMNS[k].needs & v->flags) != COLUMNS[k].needs) continue;
        OPPROF__ASSERT(v->n_columns < OPPROF__MAX_COLUMNS);
        OPPROF__ASSERT(COLUMNS[k].unit == OPPROF__UNIT_NAME || COLUMNS[k].unit == OPPROF__UNIT_TEXT ||
                               COLUMNS[k].unit == OPPROF__UNIT_LINES
                           ? COLUMNS[k].text != NULL
                           : COLUMNS[k].number != NULL);
        v->width[v->n_columns] = width_of(v, &COLUMNS[k]);
        v->columns[v->n_columns++] = &COLUMNS[k];
    }
    rc = order_rows(v, o);
    if (rc) opprof__view_free(v);
    return rc;
}

void opprof__view_free(opprof__view *v) {
    opprof__free(v->order);
    opprof__free(v->name_at);
    v->order = NULL;
    v->name_at = NULL;
}

void opprof__column_title(const opprof__view *v, const opprof__column *c, char *buf, size_t size) {
    if (strstr(c->title, "%s"))
        snprintf(buf, size, c->title, c->unit == OPPROF__UNIT_FLOPS ? v->flops_prefix : v->device);
    else
        snprintf(buf, size, "%s", c->title);
}

void opprof__cell(const opprof__view *v, const opprof__column *c, const opprof_average_row *r, char *buf, size_t size) {
    size_t w = v->width[0];
    for (size_t k = 0; k < v->n_columns; k++)
        if (v->columns[k] == c) w = v->width[k];
    double x = c->number ? c->number(r, v) : 0.0;
    const char *t = c->text ? c->text(r, v) : "";
    if ((c->needs & OPPROF__SHOW_ROOFLINE) && c->number && isnan(x)) { /* no model: no figure */
        snprintf(buf, size, "--");
        return;
    }
    switch (c->unit) {
    case OPPROF__UNIT_NAME: opprof__name_cell_at(t, v->name_at ? v->name_at[r - v->rows] : 0, buf, size); return;
    case OPPROF__UNIT_TEXT: snprintf(buf, size, "%.*s", (int)w, t); return;
    case OPPROF__UNIT_LINES: {
        const char *nl = strchr(t, '\n');
        size_t len = nl ? (size_t)(nl - t) : strlen(t);
        snprintf(buf, size, "%.*s", (int)(len < w ? len : w), t);
        return;
    }
    case OPPROF__UNIT_FLOPS: opprof__unit_text(c->unit, x * v->flops_scale, buf, size); return;
    default: opprof__unit_text(c->unit, x, buf, size); return;
    }
}

const opprof__column *opprof__view_column(const opprof__view *v, const char *key) {
    for (size_t k = 0; k < v->n_columns; k++)
        if (strcmp(v->columns[k]->key, key) == 0) return v->columns[k];
    return NULL;
}

void opprof__json_cell(opprof__strbuf *sb, const opprof__view *v, const opprof__column *c,
                       const opprof_average_row *r) {
    if (c->text) {
        opprof__sb_json_string(sb, c->text(r, v));
        return;
    }
    char buf[40];
    opprof__number_text(c->number(r, v), buf, sizeof buf);
    opprof__sb_puts(sb, buf);
}
