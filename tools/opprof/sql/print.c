/* print.c - a statement's result printed in one of the modes (sql.h's
 * SQL_MODES): trace_processor's shell's CSV (every column name and string in
 * double quotes, as they are; NULL as "[NULL]"; integers plain; doubles
 * "%f"; a blob "<raw bytes>"; a header even with no rows), and SQLite's
 * shell's list, tabs, column, line and json modes as sqlite3 3.40 prints
 * them (values as SQLite makes them text, NULL empty), but that a result of
 * no rows still prints its header in column mode and [] in json mode. */
#define _GNU_SOURCE
#include "sql.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    sql_mode mode;
} MODES[] = {{"csv", SQL_MODE_CSV},       {"list", SQL_MODE_LIST}, {"tabs", SQL_MODE_TABS},
             {"column", SQL_MODE_COLUMN}, {"line", SQL_MODE_LINE}, {"json", SQL_MODE_JSON}};

const char SQL_MODE_NAMES[] = "csv, list, tabs, column, line or json";

int sql_mode_by_name(const char *name, sql_mode *mode) {
    for (size_t k = 0; name && k < sizeof MODES / sizeof *MODES; k++)
        if (!strcmp(MODES[k].name, name)) {
            *mode = MODES[k].mode;
            return 0;
        }
    return -1;
}

/* A value as SQLite makes it text; NULL as "". */
static const char *text_of(sqlite3_stmt *st, int col) {
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? (const char *)t : "";
}

static void print_csv_value(sqlite3_stmt *st, int col, FILE *out) {
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_NULL: fputs("\"[NULL]\"", out); break;
    case SQLITE_INTEGER: fprintf(out, "%lld", (long long)sqlite3_column_int64(st, col)); break;
    case SQLITE_FLOAT: fprintf(out, "%f", sqlite3_column_double(st, col)); break;
    case SQLITE_BLOB: fputs("\"<raw bytes>\"", out); break;
    default: fprintf(out, "\"%s\"", text_of(st, col)); break;
    }
}

/* csv, list and tabs: a header, then a line a row, the values apart by sep. */
static int print_separated(sqlite3_stmt *st, sql_mode mode, FILE *out) {
    int n = sqlite3_column_count(st), rc = sqlite3_step(st);
    const char *sep = mode == SQL_MODE_CSV ? "," : mode == SQL_MODE_TABS ? "\t" : "|";
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return rc;
    for (int c = 0; c < n; c++)
        fprintf(out, mode == SQL_MODE_CSV ? "%s\"%s\"" : "%s%s", c ? sep : "", sqlite3_column_name(st, c));
    fputc('\n', out);
    for (; rc == SQLITE_ROW; rc = sqlite3_step(st)) {
        for (int c = 0; c < n; c++) {
            if (c) fputs(sep, out);
            if (mode == SQL_MODE_CSV)
                print_csv_value(st, c, out);
            else
                fputs(text_of(st, c), out);
        }
        fputc('\n', out);
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The characters of UTF-8 text (its bytes but continuation bytes). */
static size_t width_of(const char *s) {
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void print_padded(const char *s, size_t width, FILE *out) {
    fputs(s, out);
    for (size_t w = width_of(s); w < width; w++) fputc(' ', out);
}

/* line: each value on a line of its own after its column's name, the names
 * right-aligned, five characters wide at least (as sqlite3's); rows a blank
 * line apart. */
static int print_lines(sqlite3_stmt *st, FILE *out) {
    int n = sqlite3_column_count(st), rc;
    size_t name_width = 5;
    for (int c = 0; c < n; c++) {
        size_t w = width_of(sqlite3_column_name(st, c));
        name_width = w > name_width ? w : name_width;
    }
    for (long row = 0; (rc = sqlite3_step(st)) == SQLITE_ROW; row++) {
        if (row) fputc('\n', out);
        for (int c = 0; c < n; c++) {
            const char *name = sqlite3_column_name(st, c);
            fprintf(out, "%*s%s = %s\n", (int)(name_width - width_of(name)), "", name, text_of(st, c));
        }
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* s (n bytes) as a JSON string. */
static void print_json_string(const unsigned char *s, size_t n, FILE *out) {
    fputc('"', out);
    for (size_t k = 0; k < n; k++) {
        unsigned char ch = s[k];
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", out);
        else if (ch == '\t')
            fputs("\\t", out);
        else if (ch == '\r')
            fputs("\\r", out);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static void print_json_value(sqlite3_stmt *st, int col, FILE *out) {
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_NULL: fputs("null", out); break;
    case SQLITE_INTEGER: fprintf(out, "%lld", (long long)sqlite3_column_int64(st, col)); break;
    case SQLITE_FLOAT: { /* SQLite's text of it, a JSON number; no JSON number is infinite */
        double d = sqlite3_column_double(st, col);
        fputs(isfinite(d) ? text_of(st, col) : "null", out);
        break;
    }
    default: { /* text, and a blob's bytes as a string (as sqlite3 prints them) */
        const unsigned char *v =
            sqlite3_column_type(st, col) == SQLITE_BLOB ? sqlite3_column_blob(st, col) : sqlite3_column_text(st, col);
        print_json_string(v ? v : (const unsigned char *)"", (size_t)sqlite3_column_bytes(st, col), out);
    }
    }
}

/* json: an array of one object a row, its members the columns by name. */
static int print_json(sqlite3_stmt *st, FILE *out) {
    int n = sqlite3_column_count(st), rc;
    long row = 0;
    for (; (rc = sqlite3_step(st)) == SQLITE_ROW; row++) {
        fputs(row ? ",\n{" : "[{", out);
        for (int c = 0; c < n; c++) {
            const char *name = sqlite3_column_name(st, c);
            if (c) fputc(',', out);
            print_json_string((const unsigned char *)name, strlen(name), out);
            fputc(':', out);
            print_json_value(st, c, out);
        }
        fputc('}', out);
    }
    if (rc == SQLITE_DONE || row) fputs(row ? "]\n" : "[]\n", out);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* column: every value, its header's and the dashes under it padded to the
 * column's widest, columns two spaces apart; the rows are kept until the
 * widths are known. */
static int print_columns(sqlite3_stmt *st, FILE *out) {
    int n = sqlite3_column_count(st), rc;
    size_t *width = calloc((size_t)n + 1, sizeof *width), rows = 0, cap = 0;
    char **cells = NULL;
    if (!width) return SQLITE_NOMEM;
    for (int c = 0; c < n; c++) width[c] = width_of(sqlite3_column_name(st, c));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!sql_grow((void **)&cells, &cap, (rows + 1) * (size_t)n, sizeof *cells)) {
            rc = SQLITE_NOMEM;
            break;
        }
        for (int c = 0; c < n; c++) {
            char *cell = strdup(text_of(st, c));
            cells[rows * (size_t)n + (size_t)c] = cell;
            if (!cell) rc = SQLITE_NOMEM;
            size_t w = cell ? width_of(cell) : 0;
            width[c] = w > width[c] ? w : width[c];
        }
        rows++;
        if (rc == SQLITE_NOMEM) break;
    }
    if (rc == SQLITE_DONE) {
        for (int c = 0; c < n; c++) fputs(c ? "  " : "", out), print_padded(sqlite3_column_name(st, c), width[c], out);
        fputc('\n', out);
        for (int c = 0; c < n; c++) {
            fputs(c ? "  " : "", out);
            for (size_t w = 0; w < width[c]; w++) fputc('-', out);
        }
        fputc('\n', out);
        for (size_t r = 0; r < rows; r++) {
            for (int c = 0; c < n; c++)
                fputs(c ? "  " : "", out), print_padded(cells[r * (size_t)n + (size_t)c], width[c], out);
            fputc('\n', out);
        }
    }
    for (size_t k = 0; k < rows * (size_t)n; k++) free(cells[k]);
    free(cells);
    free(width);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int sql_print_result(sqlite3_stmt *st, sql_mode mode, FILE *out) {
    switch (mode) {
    case SQL_MODE_CSV:
    case SQL_MODE_LIST:
    case SQL_MODE_TABS: return print_separated(st, mode, out);
    case SQL_MODE_COLUMN: return print_columns(st, out);
    case SQL_MODE_LINE: return print_lines(st, out);
    case SQL_MODE_JSON: return print_json(st, out);
    }
    return SQLITE_MISUSE;
}
