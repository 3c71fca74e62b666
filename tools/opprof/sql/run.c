/* run.c - statements run one after another and their results printed as
 * trace_processor's shell prints them (src/trace_processor/shell; each
 * result by print.c: an empty line for each statement without result
 * columns that is not the last). Several results print one after another, a
 * blank line apart (trace_processor refuses a second: here it is printed). */
#define _GNU_SOURCE
#include "sql.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

const char *sql_skip_blank(const char *p) {
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (p[0] == '-' && p[1] == '-') {
            while (*p && *p != '\n') p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else {
            return p;
        }
    }
}

static int line_of(const char *text, const char *at) {
    int line = 1;
    for (const char *p = text; p < at; p++) line += *p == '\n';
    return line;
}

/* One of SQLite's statements at stmt run, its result printed (one blank
 * line after the one before); *next past it, *columns whether it had any. */
static int run_sqlite(sqlite3 *db, const char *stmt, const char **next, sql_mode mode, FILE *out, bool *printed,
                      bool *columns) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, stmt, -1, &st, next);
    if (rc == SQLITE_OK) rc = sql_kept_mark(db); /* a kept database that it writes to: marked before it does */
    *columns = rc == SQLITE_OK && st && sqlite3_column_count(st) > 0 && out;
    if (*columns) {
        if (*printed) fputc('\n', out);
        rc = sql_print_result(st, mode, out);
        *printed = true;
    } else if (rc == SQLITE_OK && st) {
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* why: "line N: " and what went wrong (SQLite's message and where, or said
 * already); rc's own words when the connection holds no error (a text of
 * ours that could not grow). */
static void say_where(sqlite3 *db, int rc, const char *text, const char *p, bool said, char *why, size_t why_size) {
    char what[1024];
    snprintf(what, sizeof what, "%s",
             said                               ? why
             : sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errmsg(db)
                                                : sqlite3_errstr(rc));
    const char *eol = strchr(p, '\n');
    int len = eol ? (int)(eol - p) : (int)strlen(p);
    if (said)
        snprintf(why, why_size, "line %d: %s", line_of(text, p), what);
    else
        snprintf(why, why_size, "line %d: %s (in: %.*s)", line_of(text, p), what, len > 120 ? 120 : len, p);
}

int sql_run(sqlite3 *db, const char *text, sql_mode mode, FILE *out, char *why, size_t why_size) {
    const char *p = sql_skip_blank(text);
    why[0] = '\0';
    bool printed = false;
    while (*p) {
        const char *next = NULL, *after = NULL;
        char *expanded = NULL; /* the statement at p with its macro calls in place */
        bool columns = false;
        int rc = sql_expand_macros(db, p, &expanded, &after, why, why_size);
        bool said = rc != SQLITE_OK && why[0]; /* unsaid: its text could not grow */
        if (rc == SQLITE_OK) {                 /* PerfettoSQL's own, else SQLite's */
            rc = sql_perfetto_statement(db, expanded ? expanded : p, &next, why, why_size);
            said = rc > 0 && why[0];
            if (rc < 0) rc = run_sqlite(db, expanded ? expanded : p, &next, mode, out, &printed, &columns);
        }
        if (rc == SQLITE_OK) rc = sql_kept_mark(db); /* PerfettoSQL's own, prepared within */
        bool was_expanded = expanded != NULL;
        sqlite3_free(expanded);
        if (rc) {
            say_where(db, rc, text, p, said, why, why_size);
            return rc;
        }
        p = sql_skip_blank(was_expanded ? after : next);
        if (!columns && *p && out) fputc('\n', out); /* a statement without columns: an empty line, not at the end */
    }
    return SQLITE_OK;
}

int sql_is_complete(const char *text) { return sqlite3_complete(text); }
