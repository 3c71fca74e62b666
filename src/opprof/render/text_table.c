/* text_table.c - a fixed-width text table from column titles and cells, in
 * the layout of PyTorch's tables: a dashed rule, the titles, a rule, the
 * rows, a rule; every column as wide as its widest cell, two spaces apart,
 * right-aligned (as PyTorch aligns even its names). */
#include "render/render.h"

#include <string.h>

enum { SPACING = 2 };

static void rule(opprof__strbuf *sb, const size_t *widths, size_t n_cols) {
    for (size_t c = 0; c < n_cols; c++) {
        opprof__sb_repeat(sb, '-', widths[c]);
        opprof__sb_repeat(sb, ' ', SPACING);
    }
    opprof__sb_puts(sb, "\n");
}

static void line(opprof__strbuf *sb, const char *const *cells, const size_t *widths, size_t n_cols) {
    for (size_t c = 0; c < n_cols; c++) {
        size_t n = strlen(cells[c]);
        if (n < widths[c]) opprof__sb_repeat(sb, ' ', widths[c] - n);
        opprof__sb_puts(sb, cells[c]);
        opprof__sb_repeat(sb, ' ', SPACING);
    }
    opprof__sb_puts(sb, "\n");
}

int opprof__text_table(opprof__strbuf *sb, const char *const *titles, size_t n_cols, const char *const *cells,
                       size_t n_rows) {
    size_t *widths = opprof__calloc(n_cols ? n_cols : 1, sizeof *widths);
    if (!widths) return OPPROF_ENOMEM;
    for (size_t c = 0; c < n_cols; c++) widths[c] = strlen(titles[c]);
    for (size_t r = 0; r < n_rows; r++)
        for (size_t c = 0; c < n_cols; c++)
            if (strlen(cells[r * n_cols + c]) > widths[c]) widths[c] = strlen(cells[r * n_cols + c]);
    rule(sb, widths, n_cols);
    line(sb, titles, widths, n_cols);
    rule(sb, widths, n_cols);
    for (size_t r = 0; r < n_rows; r++) line(sb, cells + r * n_cols, widths, n_cols);
    rule(sb, widths, n_cols);
    opprof__free(widths);
    return sb->error;
}
