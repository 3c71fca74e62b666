/* rows.h - the key-averages row of a name, for tests that check a table's numbers. */
#ifndef OPPROF_TESTS_ROWS_H
#define OPPROF_TESTS_ROWS_H

#include <opprof/capture.h>

#include <stdio.h>
#include <string.h>

/* The row whose key is `key`, or NULL (said on stderr). */
static inline const opprof_average_row *row(const opprof_averages *avg, const char *key) {
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].key, key) == 0) return &rows[i];
    fprintf(stderr, "no row %s\n", key);
    return NULL;
}

#endif
