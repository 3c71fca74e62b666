/* units.c - one formatter per unit: the text that every output (tables,
 * JSON, HTML, diff, ranks, the timer) shows for a time, a size, a count, a
 * share, a rate, a change, a ratio, a name. */
#include "render/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The shortest text that reads back as the same double; "null" for NaN. */
void opprof__number_text(double x, char *buf, size_t size) {
    if (isnan(x) || isinf(x)) {
        snprintf(buf, size, "null");
        return;
    }
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, x);
        if (strtod(buf, NULL) == x) return;
    }
}

/* A double as an int64_t, saturated (NaN: 0): a sum of hostile sizes can
 * pass 2^63, where the conversion itself is undefined. */
static int64_t saturated(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775807.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)x;
}

void opprof__unit_text(opprof__unit unit, double x, char *buf, size_t size) {
    switch (unit) {
    case OPPROF__UNIT_PERCENT:
        if (isnan(x)) snprintf(buf, size, "NaN");
        else snprintf(buf, size, "%.2f%%", 100.0 * x);
        return;
    case OPPROF__UNIT_TIME: opprof_format_time_us(x, buf, size); return;
    case OPPROF__UNIT_BYTES: opprof_format_memory(saturated(x), buf, size); return;
    case OPPROF__UNIT_COUNT:
        if (isnan(x)) snprintf(buf, size, "--"); /* none (a row of no layer) */
        else snprintf(buf, size, "%lld", (long long)saturated(x));
        return;
    case OPPROF__UNIT_FLOPS:
        if (isnan(x)) snprintf(buf, size, "--");
        else snprintf(buf, size, "%8.3f", x);
        return;
    case OPPROF__UNIT_RATE1:
    case OPPROF__UNIT_RATE2:
        if (isnan(x)) snprintf(buf, size, "--");
        else snprintf(buf, size, unit == OPPROF__UNIT_RATE1 ? "%.1f" : "%.2f", x);
        return;
    case OPPROF__UNIT_CHANGE: {
        char t[48];
        opprof_format_time_us(fabs(x), t, sizeof t);
        snprintf(buf, size, "%s%s", x < 0 ? "-" : "+", t);
        return;
    }
    case OPPROF__UNIT_RATIO:
        if (isinf(x)) snprintf(buf, size, "inf");
        else if (isnan(x)) snprintf(buf, size, "--");
        else snprintf(buf, size, "%.2fx", x);
        return;
    case OPPROF__UNIT_RELATIVE:
        if (isnan(x)) snprintf(buf, size, "--");
        else if (isinf(x)) snprintf(buf, size, "%sinf", x < 0 ? "-" : "+");
        else snprintf(buf, size, "%+.2f%%", 100.0 * x);
        return;
    case OPPROF__UNIT_PVALUE:
        if (isnan(x)) snprintf(buf, size, "--");
        else snprintf(buf, size, x >= 0.001 ? "%.3f" : "%.1e", x);
        return;
    case OPPROF__UNIT_NAME:
    case OPPROF__UNIT_TEXT:
    case OPPROF__UNIT_LINES: snprintf(buf, size, "?"); return; /* text units: opprof__cell */
    }
}

void opprof__name_cell(const char *name, char *buf, size_t size) {
    if (strlen(name) >= OPPROF__MAX_NAME_WIDTH - 3)
        snprintf(buf, size, "%.*s...", OPPROF__MAX_NAME_WIDTH - 3, name);
    else
        snprintf(buf, size, "%s", name);
}

