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
        if (opprof__c_strtod(buf, NULL) == x) return;
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
        if (isnan(x))
            snprintf(buf, size, "NaN");
        else
            snprintf(buf, size, "%.2f%%", 100.0 * x);
        return;
    case OPPROF__UNIT_TIME: opprof_format_time_us(x, buf, size); return;
    case OPPROF__UNIT_BYTES: opprof_format_memory(saturated(x), buf, size); return;
    case OPPROF__UNIT_COUNT:
        if (isnan(x))
            snprintf(buf, size, "--"); /* none (a row of no layer) */
        else
            snprintf(buf, size, "%lld", (long long)saturated(x));
        return;
    case OPPROF__UNIT_FLOPS:
        if (isnan(x))
            snprintf(buf, size, "--");
        else
            snprintf(buf, size, "%8.3f", x);
        return;
    case OPPROF__UNIT_RATE1:
    case OPPROF__UNIT_RATE2:
        if (isnan(x))
            snprintf(buf, size, "--");
        else
            snprintf(buf, size, unit == OPPROF__UNIT_RATE1 ? "%.1f" : "%.2f", x);
        return;
    case OPPROF__UNIT_CHANGE: {
        char t[48];
        opprof_format_time_us(fabs(x), t, sizeof t);
        snprintf(buf, size, "%s%s", x < 0 ? "-" : "+", t);
        return;
    }
    case OPPROF__UNIT_RATIO:
        if (isinf(x))
            snprintf(buf, size, "inf");
        else if (isnan(x))
            snprintf(buf, size, "--");
        else
            snprintf(buf, size, "%.2fx", x);
        return;
    case OPPROF__UNIT_RELATIVE:
        if (isnan(x))
            snprintf(buf, size, "--");
        else if (isinf(x))
            snprintf(buf, size, "%sinf", x < 0 ? "-" : "+");
        else
            snprintf(buf, size, "%+.2f%%", 100.0 * x);
        return;
    case OPPROF__UNIT_PVALUE:
        if (isnan(x))
            snprintf(buf, size, "--");
        else
            snprintf(buf, size, x >= 0.001 ? "%.3f" : "%.1e", x);
        return;
    case OPPROF__UNIT_NAME:
    case OPPROF__UNIT_TEXT:
    case OPPROF__UNIT_LINES: snprintf(buf, size, "?"); return; /* text units: opprof__cell */
    }
}

/* Where PyTorch cuts a long name (its first 52 bytes and "..."), the same
 * width keeps its head and its tail: two instantiations of one template
 * kernel differ in their arguments, which a cut at the end dropped. Where
 * even those read the same (opprof__name_windows), a window at the place
 * the name differs from the most alike of the others replaces the tail.
 * No part splits a UTF-8 character. */
enum { NAME_HEAD = 20, NAME_TAIL = OPPROF__MAX_NAME_WIDTH - 3 - NAME_HEAD, WINDOW_HEAD = 16, WINDOW = 33 };

static size_t char_start_back(const char *s, size_t i) {
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    return i;
}

static size_t char_start_on(const char *s, size_t i, size_t len) {
    while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
    return i;
}

static void cut_name(const char *name, size_t at, char *buf, size_t size) {
    size_t len = strlen(name);
    if (len < OPPROF__MAX_NAME_WIDTH - 3) {
        snprintf(buf, size, "%s", name);
    } else if (!at) {
        size_t head = char_start_back(name, NAME_HEAD), tail = char_start_on(name, len - NAME_TAIL, len);
        snprintf(buf, size, "%.*s...%s", (int)head, name, name + tail);
    } else {
        size_t head = char_start_back(name, WINDOW_HEAD);
        if (at < WINDOW_HEAD) at = WINDOW_HEAD;
        if (at + WINDOW + 3 >= len) { /* the window reaches the end: the end */
            size_t from = char_start_on(name, len - WINDOW - 3, len);
            snprintf(buf, size, "%.*s...%s", (int)head, name, name + from);
        } else {
            size_t from = char_start_on(name, at, len), to = char_start_back(name, at + WINDOW);
            snprintf(buf, size, "%.*s...%.*s...", (int)head, name, (int)(to > from ? to - from : 0), name + from);
        }
    }
}

void opprof__name_cell_at(const char *name, size_t at, char *buf, size_t size) {
    cut_name(name, at, buf, size);
    opprof__show_controls(buf, size);
}

void opprof__name_cell(const char *name, char *buf, size_t size) { opprof__name_cell_at(name, 0, buf, size); }

/* ---- names that would read the same ---- */

typedef struct name_key {
    char cell[OPPROF__MAX_NAME_WIDTH + 8];
    const char *name;
    size_t index;
} name_key;

static int by_cell_then_name(const void *a, const void *b) {
    const name_key *x = a, *y = b;
    int c = strcmp(x->cell, y->cell);
    return c ? c : strcmp(x->name, y->name);
}

static size_t first_difference(const char *a, const char *b) {
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    return i;
}

int opprof__name_windows(const char *const *names, size_t n, size_t *at) {
    for (size_t i = 0; i < n; i++) at[i] = 0;
    name_key *k = opprof__alloc((n ? n : 1) * sizeof *k);
    if (!k) return OPPROF_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (strlen(names[i]) < OPPROF__MAX_NAME_WIDTH - 3) continue;
        opprof__name_cell_at(names[i], 0, k[m].cell, sizeof k[m].cell);
        k[m].name = names[i];
        k[m++].index = i;
    }
    qsort(k, m, sizeof *k, by_cell_then_name);
    /* in a run of one cell, sorted by name, a name is most alike its neighbours: its window
     * opens a little before where it parts from the nearer of them */
    for (size_t i = 0; i < m; i++) {
        bool prev = i > 0 && !strcmp(k[i - 1].cell, k[i].cell), next = i + 1 < m && !strcmp(k[i + 1].cell, k[i].cell);
        if (!prev && !next) continue;
        size_t d = 0, e;
        if (prev && (e = first_difference(k[i - 1].name, k[i].name)) > d) d = e;
        if (next && (e = first_difference(k[i + 1].name, k[i].name)) > d) d = e;
        at[k[i].index] = d > 8 ? d - 8 : 1;
    }
    opprof__free(k);
    return 0;
}
