/* table.c - key_averages().table() in PyTorch's exact layout. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { COLUMN_WIDTH = 12, SPACING = 2, MAX_NAME_WIDTH = 55 };

void opprof_format_time_us(double us, char *buf, size_t size) {
    if (us >= 1e6)
        snprintf(buf, size, "%.3fs", us / 1e6);
    else if (us >= 1e3)
        snprintf(buf, size, "%.3fms", us / 1e3);
    else
        snprintf(buf, size, "%.3fus", us);
}

void opprof_format_memory(int64_t bytes, char *buf, size_t size) {
    const double kb = 1024.0, mb = 1024.0 * kb, gb = 1024.0 * mb;
    double mag = bytes < 0 ? -(double)bytes : (double)bytes;
    if (mag >= gb)
        snprintf(buf, size, "%.2f GB", (double)bytes / gb);
    else if (mag >= mb)
        snprintf(buf, size, "%.2f MB", (double)bytes / mb);
    else if (mag >= kb)
        snprintf(buf, size, "%.2f KB", (double)bytes / kb);
    else
        snprintf(buf, size, "%lld B", (long long)bytes);
}

static void format_share(int64_t part, int64_t total, char *buf, size_t size) {
    if (total == 0)
        snprintf(buf, size, "NaN");
    else
        snprintf(buf, size, "%.2f%%", 100.0 * (double)part / (double)total);
}

static const struct {
    opprof_sort_key key;
    const char *name;
} SORT_NAMES[] = {
    {OPPROF_SORT_SELF_CPU_TIME, "self_cpu_time_total"}, {OPPROF_SORT_CPU_TIME_TOTAL, "cpu_time_total"},
    {OPPROF_SORT_CPU_TIME_AVG, "cpu_time"},            {OPPROF_SORT_SELF_CPU_MEMORY, "self_cpu_memory_usage"},
    {OPPROF_SORT_CPU_MEMORY, "cpu_memory_usage"},      {OPPROF_SORT_COUNT, "count"},
    {OPPROF_SORT_PEAK_MEMORY, "cpu_memory_peak"},      {OPPROF_SORT_FLOPS, "flops"},
    {OPPROF_SORT_SELF_DEVICE_TIME, "self_device_time_total"}, {OPPROF_SORT_DEVICE_TIME_TOTAL, "device_time_total"},
    {OPPROF_SORT_DEVICE_TIME_AVG, "device_time"},      {OPPROF_SORT_SELF_DEVICE_MEMORY, "self_device_memory_usage"},
    {OPPROF_SORT_DEVICE_MEMORY, "device_memory_usage"},
    /* PyTorch's older names of the same keys */
    {OPPROF_SORT_SELF_DEVICE_TIME, "self_cuda_time_total"}, {OPPROF_SORT_DEVICE_TIME_TOTAL, "cuda_time_total"},
    {OPPROF_SORT_DEVICE_TIME_AVG, "cuda_time"},        {OPPROF_SORT_SELF_DEVICE_MEMORY, "self_cuda_memory_usage"},
    {OPPROF_SORT_DEVICE_MEMORY, "cuda_memory_usage"},
};

int opprof_sort_key_parse(const char *name, opprof_sort_key *out) {
    if (!name || !out) return OPPROF_EINVAL;
    for (size_t i = 0; i < sizeof SORT_NAMES / sizeof *SORT_NAMES; i++)
        if (strcmp(name, SORT_NAMES[i].name) == 0) {
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

/* The sort metric of a row, as a double (averages divide). */
static double metric(const opprof_average_row *r, opprof_sort_key key) {
    switch (key) {
    case OPPROF_SORT_SELF_CPU_TIME: return (double)r->self_ns;
    case OPPROF_SORT_CPU_TIME_TOTAL: return (double)r->total_ns;
    case OPPROF_SORT_CPU_TIME_AVG: return r->calls ? (double)r->total_ns / (double)r->calls : 0.0;
    case OPPROF_SORT_SELF_CPU_MEMORY: return (double)r->self_cpu_mem;
    case OPPROF_SORT_CPU_MEMORY: return (double)r->cpu_mem;
    case OPPROF_SORT_COUNT: return (double)r->calls;
    case OPPROF_SORT_PEAK_MEMORY: return (double)r->peak_mem;
    case OPPROF_SORT_FLOPS: return (double)r->flops;
    case OPPROF_SORT_SELF_DEVICE_TIME: return (double)r->self_device_ns;
    case OPPROF_SORT_DEVICE_TIME_TOTAL: return (double)r->total_device_ns;
    case OPPROF_SORT_DEVICE_TIME_AVG: return r->calls ? (double)r->total_device_ns / (double)r->calls : 0.0;
    case OPPROF_SORT_SELF_DEVICE_MEMORY: return (double)r->self_device_mem;
    case OPPROF_SORT_DEVICE_MEMORY: return (double)r->device_mem;
    default: return 0.0;
    }
}

typedef struct sort_item {
    double value;
    size_t index;
} sort_item;

/* Descending by value; ties keep first-seen order (Python's stable sort). */
static int sort_item_compare(const void *pa, const void *pb) {
    const sort_item *a = pa, *b = pb;
    if (a->value != b->value) return a->value > b->value ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static void cell(opprof__strbuf *sb, const char *text, size_t width) {
    size_t n = strlen(text);
    if (n < width) opprof__sb_repeat(sb, ' ', width - n);
    opprof__sb_puts(sb, text);
    opprof__sb_repeat(sb, ' ', SPACING);
}

static void cell_left(opprof__strbuf *sb, const char *text, size_t width) {
    size_t n = strlen(text);
    opprof__sb_puts(sb, text);
    if (n < width) opprof__sb_repeat(sb, ' ', width - n);
    opprof__sb_repeat(sb, ' ', SPACING);
}

/* PyTorch's auto_scale_flops: the unit from the smallest non-zero count. */
static void flops_unit(int64_t smallest, double *scale, const char **unit) {
    static const char *const units[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
    double lg = smallest > 0 ? log10((double)smallest) / 3.0 : 0.0;
    if (lg < 0) lg = 0;
    if (lg > 4) lg = 4;
    int k = (int)lg;
    *scale = pow(10.0, -3.0 * k);
    *unit = units[k];
}

int opprof_averages_table(const opprof_averages *avg, opprof_sort_key sort, int row_limit, char **out_text) {
    opprof_table_options opt = {.sort = sort, .row_limit = row_limit};
    return opprof_averages_table_ex(avg, &opt, out_text);
}

int opprof_averages_table_ex(const opprof_averages *avg, const opprof_table_options *opt, char **out_text) {
    if (!avg || !opt || !out_text) return OPPROF_EINVAL;
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    bool memory = opprof__averages_profile_memory(avg);
    bool peak = opt->peak_memory && memory;
    bool shapes = opprof__averages_by_shape(avg);
    int stack_n = opprof__averages_stack_n(avg);
    bool flops = opt->flops;
    bool bytes_col = false; /* GB/s, when operators stated the bytes they move */
    for (size_t i = 0; flops && i < n && !bytes_col; i++) bytes_col = rows[i].bytes > 0;
    int64_t self_total = opprof_averages_self_total_ns(avg);
    /* traces with device activities: PyTorch's device columns, named after it */
    const char *dev = opprof_averages_device_name(avg);
    bool device = dev[0] != '\0', device_mem = device && opprof__averages_device_memory(avg);
    int64_t device_total = opprof_averages_self_device_total_ns(avg);

    sort_item *order = opprof__alloc((n ? n : 1) * sizeof *order);
    if (!order) return OPPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) order[i] = (sort_item){metric(&rows[i], opt->sort), i};
    if (opt->sort != OPPROF_SORT_NONE) qsort(order, n, sizeof *order, sort_item_compare);
    size_t shown = (opt->row_limit > 0 && (size_t)opt->row_limit < n) ? (size_t)opt->row_limit : n;

    /* Widths over all rows, as PyTorch computes them. */
    size_t longest = 0, longest_shapes = 0, longest_frame = 0;
    int64_t smallest_flops = 0;
    for (size_t i = 0; i < n; i++) {
        if (strlen(rows[i].key) > longest) longest = strlen(rows[i].key);
        if (shapes && rows[i].input_shapes && strlen(rows[i].input_shapes) > longest_shapes)
            longest_shapes = strlen(rows[i].input_shapes);
        for (const char *f = rows[i].stack; stack_n && f && *f;) {
            const char *nl = strchr(f, '\n');
            size_t len = nl ? (size_t)(nl - f) : strlen(f);
            if (len > longest_frame) longest_frame = len;
            f = nl ? nl + 1 : f + len;
        }
        if (rows[i].flops > 0 && (smallest_flops == 0 || rows[i].flops < smallest_flops)) smallest_flops = rows[i].flops;
    }
    size_t name_width = longest + 4 < MAX_NAME_WIDTH ? longest + 4 : MAX_NAME_WIDTH;
    size_t shapes_width = longest_shapes + 4 < 45 ? longest_shapes + 4 : 45;
    size_t src_width = longest_frame + 4 < 75 ? longest_frame + 4 : 75;
    double flops_scale = 1;
    const char *unit = "FLOPs";
    flops_unit(smallest_flops, &flops_scale, &unit);

    static const char *const headers_time[] = {"Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
    opprof__strbuf sb = {0}, dash = {0};
    /* the dash line, column by column */
    opprof__sb_repeat(&dash, '-', name_width);
    opprof__sb_repeat(&dash, ' ', SPACING);
    size_t after_src = (flops ? 2 : 0) + (bytes_col ? 1 : 0);
    size_t plain = 5 + (device ? 4 : 0) + (memory ? 2 : 0) + (device_mem ? 2 : 0) + (peak ? 1 : 0) + 1 + after_src;
    for (size_t c = 0; c < plain; c++) {
        opprof__sb_repeat(&dash, '-', COLUMN_WIDTH);
        opprof__sb_repeat(&dash, ' ', SPACING);
    }
    if (shapes) {
        opprof__sb_repeat(&dash, '-', shapes_width);
        opprof__sb_repeat(&dash, ' ', SPACING);
    }
    if (stack_n) {
        opprof__sb_repeat(&dash, '-', src_width);
        opprof__sb_repeat(&dash, ' ', SPACING);
    }
    opprof__sb_put(&dash, "\n", 1);

    opprof__sb_put(&sb, dash.data ? dash.data : "", dash.len);
    cell(&sb, "Name", name_width);
    for (size_t c = 0; c < 5; c++) cell(&sb, headers_time[c], COLUMN_WIDTH);
    char buf[96], name[MAX_NAME_WIDTH + 1];
    if (device) {
        static const char *const fmt[] = {"Self %s", "Self %s %%", "%s total", "%s time avg"};
        for (size_t c = 0; c < 4; c++) {
            snprintf(buf, sizeof buf, fmt[c], dev);
            cell(&sb, buf, COLUMN_WIDTH);
        }
    }
    if (memory) {
        cell(&sb, "CPU Mem", COLUMN_WIDTH);
        cell(&sb, "Self CPU Mem", COLUMN_WIDTH);
    }
    if (device_mem) {
        snprintf(buf, sizeof buf, "%s Mem", dev);
        cell(&sb, buf, COLUMN_WIDTH);
        snprintf(buf, sizeof buf, "Self %s Mem", dev);
        cell(&sb, buf, COLUMN_WIDTH);
    }
    if (peak) cell(&sb, "Peak Mem", COLUMN_WIDTH);
    cell(&sb, "# of Calls", COLUMN_WIDTH);
    if (shapes) cell(&sb, "Input Shapes", shapes_width);
    if (stack_n) cell_left(&sb, "Source Location", src_width);
    if (flops) {
        snprintf(buf, sizeof buf, "Total %s", unit);
        cell(&sb, buf, COLUMN_WIDTH);
        cell(&sb, "GFLOP/s", COLUMN_WIDTH);
        if (bytes_col) cell(&sb, "GB/s", COLUMN_WIDTH);
    }
    opprof__sb_put(&sb, "\n", 1);
    opprof__sb_put(&sb, dash.data ? dash.data : "", dash.len);

    /* the width of the cells before Source Location, for its extra lines */
    size_t before_src = name_width + SPACING + (plain - after_src) * (COLUMN_WIDTH + SPACING) +
                        (shapes ? shapes_width + SPACING : 0);
    for (size_t k = 0; k < shown; k++) {
        const opprof_average_row *r = &rows[order[k].index];
        size_t len = strlen(r->key);
        if (len >= MAX_NAME_WIDTH - 3) {
            memcpy(name, r->key, MAX_NAME_WIDTH - 3);
            memcpy(name + MAX_NAME_WIDTH - 3, "...", 4);
        } else {
            memcpy(name, r->key, len + 1);
        }
        cell(&sb, name, name_width);
        format_share(r->self_ns, self_total, buf, sizeof buf);
        cell(&sb, buf, COLUMN_WIDTH);
        opprof_format_time_us((double)r->self_ns / 1e3, buf, sizeof buf);
        cell(&sb, buf, COLUMN_WIDTH);
        format_share(r->total_ns, self_total, buf, sizeof buf);
        cell(&sb, buf, COLUMN_WIDTH);
        opprof_format_time_us((double)r->total_ns / 1e3, buf, sizeof buf);
        cell(&sb, buf, COLUMN_WIDTH);
        opprof_format_time_us(r->calls ? (double)r->total_ns / 1e3 / (double)r->calls : 0.0, buf, sizeof buf);
        cell(&sb, buf, COLUMN_WIDTH);
        if (device) {
            opprof_format_time_us((double)r->self_device_ns / 1e3, buf, sizeof buf);
            cell(&sb, buf, COLUMN_WIDTH);
            format_share(r->self_device_ns, device_total, buf, sizeof buf);
            cell(&sb, buf, COLUMN_WIDTH);
            opprof_format_time_us((double)r->total_device_ns / 1e3, buf, sizeof buf);
            cell(&sb, buf, COLUMN_WIDTH);
            opprof_format_time_us(r->calls ? (double)r->total_device_ns / 1e3 / (double)r->calls : 0.0, buf,
                                  sizeof buf);
            cell(&sb, buf, COLUMN_WIDTH);
        }
        if (memory) {
            opprof_format_memory(r->cpu_mem, buf, sizeof buf);
            cell(&sb, buf, COLUMN_WIDTH);
            opprof_format_memory(r->self_cpu_mem, buf, sizeof buf);
            cell(&sb, buf, COLUMN_WIDTH);
        }
        if (device_mem) {
            opprof_format_memory(r->device_mem, buf, sizeof buf);
            cell(&sb, buf, COLUMN_WIDTH);
            opprof_format_memory(r->self_device_mem, buf, sizeof buf);
            cell(&sb, buf, COLUMN_WIDTH);
        }
        if (peak) {
            opprof_format_memory(r->peak_mem, buf, sizeof buf);
            cell(&sb, buf, COLUMN_WIDTH);
        }
        snprintf(buf, sizeof buf, "%lld", (long long)r->calls);
        cell(&sb, buf, COLUMN_WIDTH);
        if (shapes) {
            snprintf(buf, sizeof buf, "%.*s", (int)shapes_width, r->input_shapes ? r->input_shapes : "[]");
            cell(&sb, buf, shapes_width);
        }
        const char *frames = stack_n && r->stack ? r->stack : "";
        if (stack_n) {
            const char *nl = strchr(frames, '\n');
            size_t flen = nl ? (size_t)(nl - frames) : strlen(frames);
            snprintf(buf, sizeof buf, "%.*s", (int)(flen < src_width ? flen : src_width), frames);
            cell_left(&sb, buf, src_width);
            frames = nl ? nl + 1 : frames + flen;
        }
        if (flops) {
            if (r->flops > 0)
                snprintf(buf, sizeof buf, "%8.3f", (double)r->flops * flops_scale);
            else
                snprintf(buf, sizeof buf, "--");
            cell(&sb, buf, COLUMN_WIDTH);
            if (r->flops > 0 && r->total_ns > 0)
                snprintf(buf, sizeof buf, "%.1f", (double)r->flops / (double)r->total_ns);
            else
                snprintf(buf, sizeof buf, "--");
            cell(&sb, buf, COLUMN_WIDTH);
            if (bytes_col) { /* bytes per ns: GB/s */
                if (r->bytes > 0 && r->total_ns > 0)
                    snprintf(buf, sizeof buf, "%.2f", (double)r->bytes / (double)r->total_ns);
                else
                    snprintf(buf, sizeof buf, "--");
                cell(&sb, buf, COLUMN_WIDTH);
            }
        }
        opprof__sb_put(&sb, "\n", 1);
        if (stack_n) { /* the other frames, one per line, then an empty line */
            while (*frames) {
                const char *nl = strchr(frames, '\n');
                size_t flen = nl ? (size_t)(nl - frames) : strlen(frames);
                opprof__sb_repeat(&sb, ' ', before_src);
                snprintf(buf, sizeof buf, "%.*s", (int)(flen < src_width ? flen : src_width), frames);
                cell_left(&sb, buf, src_width);
                opprof__sb_put(&sb, "\n", 1);
                frames = nl ? nl + 1 : frames + flen;
            }
            opprof__sb_put(&sb, "\n", 1);
        }
    }
    opprof__sb_put(&sb, dash.data ? dash.data : "", dash.len);
    opprof_format_time_us((double)self_total / 1e3, buf, sizeof buf);
    opprof__sb_printf(&sb, "Self CPU time total: %s\n", buf);
    if (device) {
        opprof_format_time_us((double)device_total / 1e3, buf, sizeof buf);
        opprof__sb_printf(&sb, "Self %s time total: %s\n", dev, buf);
    }
    uint64_t dropped = opprof__averages_dropped(avg);
    if (dropped)
        opprof__sb_printf(&sb, "Dropped events: %llu (over the capture's event budget)\n", (unsigned long long)dropped);
    size_t warnings = opprof__averages_warnings(avg);
    if (warnings)
        opprof__sb_printf(&sb, "Warnings: %zu (listed in the trace's metadata and summary.json)\n", warnings);

    opprof__dealloc(order, (n ? n : 1) * sizeof *order);
    int rc = sb.error ? sb.error : dash.error;
    if (!rc) {
        *out_text = opprof__public_string(sb.data, sb.len);
        if (!*out_text) rc = OPPROF_ENOMEM;
    }
    opprof__sb_free(&sb);
    opprof__sb_free(&dash);
    return rc;
}

int opprof_averages_json(const opprof_averages *avg, opprof_sort_key sort, int row_limit, char **out_text) {
    if (!avg || !out_text) return OPPROF_EINVAL;
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    sort_item *order = opprof__alloc((n ? n : 1) * sizeof *order);
    if (!order) return OPPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) order[i] = (sort_item){metric(&rows[i], sort), i};
    if (sort != OPPROF_SORT_NONE) qsort(order, n, sizeof *order, sort_item_compare);
    size_t shown = (row_limit > 0 && (size_t)row_limit < n) ? (size_t)row_limit : n;
    opprof__strbuf sb = {0};
    opprof__sb_puts(&sb, "{\n  \"rows\": [");
    for (size_t k = 0; k < shown; k++) {
        const opprof_average_row *r = &rows[order[k].index];
        opprof__sb_puts(&sb, k ? ",\n    {\"name\": " : "\n    {\"name\": ");
        opprof__sb_json_string(&sb, r->key);
        opprof__sb_printf(&sb,
                          ", \"calls\": %lld, \"self_cpu_us\": %.3f, \"total_cpu_us\": %.3f, \"cpu_time_avg_us\": %.3f, "
                          "\"cpu_bytes\": %lld, \"self_cpu_bytes\": %lld}",
                          (long long)r->calls, (double)r->self_ns / 1e3, (double)r->total_ns / 1e3,
                          r->calls ? (double)r->total_ns / 1e3 / (double)r->calls : 0.0, (long long)r->cpu_mem,
                          (long long)r->self_cpu_mem);
        /* every column the text table can show, and the row's own key */
        sb.len--; /* reopen the row's object */
        opprof__sb_printf(&sb, ", \"peak_bytes\": %lld, \"flops\": %lld, \"bytes_moved\": %lld", (long long)r->peak_mem,
                          (long long)r->flops, (long long)r->bytes);
        if (r->input_shapes) {
            opprof__sb_puts(&sb, ", \"input_shapes\": ");
            opprof__sb_json_string(&sb, r->input_shapes);
        }
        if (r->stack) {
            opprof__sb_puts(&sb, ", \"stack\": ");
            opprof__sb_json_string(&sb, r->stack);
        }
        opprof__sb_puts(&sb, "}");
        if (opprof_averages_device_name(avg)[0]) {
            sb.len--; /* reopen the row's object */
            opprof__sb_printf(&sb, ", \"device\": %s, \"self_device_us\": %.3f, \"total_device_us\": %.3f, "
                              "\"device_bytes\": %lld, \"self_device_bytes\": %lld}",
                              r->device ? "true" : "false", (double)r->self_device_ns / 1e3,
                              (double)r->total_device_ns / 1e3, (long long)r->device_mem,
                              (long long)r->self_device_mem);
        }
    }
    opprof__sb_printf(&sb, "%s],\n  \"self_cpu_us_total\": %.3f,\n", shown ? "\n  " : "",
                      (double)opprof_averages_self_total_ns(avg) / 1e3);
    if (opprof_averages_device_name(avg)[0]) {
        opprof__sb_puts(&sb, "  \"device_name\": ");
        opprof__sb_json_string(&sb, opprof_averages_device_name(avg));
        opprof__sb_printf(&sb, ",\n  \"self_device_us_total\": %.3f,\n",
                          (double)opprof_averages_self_device_total_ns(avg) / 1e3);
    }
    opprof__sb_printf(&sb, "  \"dropped_events\": %llu,\n  \"warnings\": %zu\n}\n",
                      (unsigned long long)opprof__averages_dropped(avg), opprof__averages_warnings(avg));
    opprof__dealloc(order, (n ? n : 1) * sizeof *order);
    int rc = sb.error;
    if (!rc) {
        *out_text = opprof__public_string(sb.data, sb.len);
        if (!*out_text) rc = OPPROF_ENOMEM;
    }
    opprof__sb_free(&sb);
    return rc;
}
