/* perfetto_sql.c - the statements that PerfettoSQL adds to SQLite's, on
 * SQLite, written from its documentation (docs/analysis/perfetto-sql-syntax.md):
 *   INCLUDE PERFETTO MODULE name                  functions.c's modules
 *   CREATE [OR REPLACE] PERFETTO TABLE name [(schema)] AS select
 *   CREATE [OR REPLACE] PERFETTO VIEW name [(schema)] AS select
 *   CREATE [OR REPLACE] PERFETTO INDEX name ON table(columns)
 *   CREATE [OR REPLACE] PERFETTO FUNCTION name(arg TYPE, ...) RETURNS TYPE AS select
 *       a scalar function: the first column of the select's first row (NULL
 *       for none), each argument the select's parameter $arg
 *   CREATE [OR REPLACE] PERFETTO FUNCTION name(arg TYPE, ...)
 *       RETURNS TABLE(column TYPE, ...) AS select
 *       a table-valued function: the select's rows
 *   CREATE [OR REPLACE] PERFETTO MACRO name(arg Type, ...) RETURNS Type AS text
 *       NAME!(a, b) anywhere in a later statement is replaced by its text,
 *       each $arg by that argument's text (again, for the macros it calls)
 * Tables and views are TEMP, and so are macros (temp._perfetto_macros): what
 * a query makes is its session's, and a kept --db stays as it was loaded.
 * Types are read and not checked (SQLite's values keep their own). */
#define _GNU_SOURCE
#include "sql.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The keyword w at p (case-insensitive, not the start of a longer name): p
 * past it and the blanks after, or NULL. */
static const char *keyword(const char *p, const char *w) {
    size_t n = strlen(w);
    if (!p || strncasecmp(p, w, n) || is_name_char(p[n])) return NULL;
    return sql_skip_blank(p + n);
}

/* A name at p into out: p past it and the blanks after, or NULL. */
static const char *name(const char *p, char *out, size_t size) {
    size_t n = 0;
    if (!p || !(isalpha((unsigned char)*p) || *p == '_')) return NULL;
    while (is_name_char(p[n]) && n + 1 < size) out[n] = p[n], n++;
    out[n] = '\0';
    return is_name_char(p[n]) ? NULL : sql_skip_blank(p + n);
}

/* Past a quoted string or identifier, or a comment, that starts at p (p
 * itself when none does). */
static const char *past_quoted(const char *p) {
    char close = *p == '[' ? ']' : *p;
    if (close == '\'' || close == '"' || close == '`' || close == ']') {
        for (p++; *p; p++)
            if (*p == close && *++p != close) return p; /* a doubled quote is one inside */
        return p;
    }
    if (p[0] == '-' && p[1] == '-') return p + strcspn(p, "\n");
    if (p[0] == '/' && p[1] == '*') {
        const char *end = strstr(p + 2, "*/");
        return end ? end + 2 : p + strlen(p);
    }
    return p;
}

/* The ')' that closes the '(' at p, or NULL. */
static const char *closing(const char *p) {
    int depth = 0;
    while (*p) {
        const char *q = past_quoted(p);
        if (q != p) {
            p = q;
            continue;
        }
        depth += *p == '(';
        if (*p == ')' && --depth == 0) return p;
        p++;
    }
    return NULL;
}

/* The ';' that ends the statement whose text goes on from p, or its end. */
static const char *statement_end(const char *p) {
    while (*p && *p != ';') {
        const char *q = past_quoted(p);
        p = q != p ? q : p + 1;
    }
    return p;
}

typedef struct perfetto_statement {
    bool replace;
    char kind[16]; /* TABLE, VIEW, INDEX, FUNCTION, MACRO */
    char name[128];
    const char *params, *params_end;   /* FUNCTION: inside its parentheses */
    const char *columns, *columns_end; /* FUNCTION ... RETURNS TABLE: inside its parentheses */
    bool returns_table;
    const char *body, *end; /* after AS (INDEX: after its name), up to the ';' */
} perfetto_statement;

/* "name TYPE, name TYPE" (types perhaps with parentheses: JOINID(slice.id))
 * as "name, name", sqlite3_malloc'd. */
static char *names_of(const char *p, const char *end) {
    sqlite3_str *out = sqlite3_str_new(NULL);
    bool first = true;
    while (p < end) {
        p = sql_skip_blank(p);
        char n[128];
        const char *after = name(p, n, sizeof n);
        if (!after || after > end) break;
        sqlite3_str_appendf(out, "%s%s", first ? "" : ", ", n);
        first = false;
        int depth = 0; /* past the type, to the next top-level ',' */
        for (p = after; p < end && (depth || *p != ','); p++) depth += (*p == '(') - (*p == ')');
        p++;
    }
    bool ok = sqlite3_str_errcode(out) == SQLITE_OK;
    char *names = sqlite3_str_finish(out); /* NULL when empty, too */
    return names || !ok ? names : sqlite3_mprintf("%s", "");
}

/* The FUNCTION's "(params) RETURNS type|TABLE(columns)" at p: p past it, or NULL. */
static const char *signature(const char *p, perfetto_statement *s) {
    const char *close = *p == '(' ? closing(p) : NULL;
    if (!close) return NULL;
    s->params = p + 1, s->params_end = close;
    p = keyword(sql_skip_blank(close + 1), "returns");
    const char *table = keyword(p, "table");
    if (table && *table == '(') {
        const char *cols_end = closing(table);
        if (!cols_end) return NULL;
        s->returns_table = true;
        s->columns = table + 1, s->columns_end = cols_end;
        return sql_skip_blank(cols_end + 1);
    }
    char type[64];
    p = name(p, type, sizeof type);
    if (p && *p == '(') p = closing(p) ? sql_skip_blank(closing(p) + 1) : NULL; /* JOINID(slice.id) */
    return p;
}

/* "CREATE [OR REPLACE] PERFETTO KIND name ..." at p into s: where it went
 * wrong in why, or true. false with why empty: p is not one. */
static bool parse(const char *p, perfetto_statement *s, char *why, size_t why_size) {
    *s = (perfetto_statement){0};
    why[0] = '\0';
    p = keyword(p, "create");
    const char *replace = keyword(p, "or");
    if (replace) p = keyword(replace, "replace"), s->replace = true;
    if (!(p = keyword(p, "perfetto"))) return false;
    if (!(p = name(p, s->kind, sizeof s->kind)) || !(p = name(p, s->name, sizeof s->name))) {
        snprintf(why, why_size, "CREATE PERFETTO: a kind (TABLE, VIEW, INDEX, FUNCTION, MACRO) and a name expected");
        return false;
    }
    for (char *c = s->kind; *c; c++) *c = (char)toupper((unsigned char)*c);
    if (!strcmp(s->kind, "INDEX")) {
        s->body = p, s->end = statement_end(p);
        return true;
    }
    if (!strcmp(s->kind, "FUNCTION") || !strcmp(s->kind, "MACRO")) {
        p = signature(p, s);
    } else if (!strcmp(s->kind, "TABLE") || !strcmp(s->kind, "VIEW")) {
        if (*p == '(') p = closing(p) ? sql_skip_blank(closing(p) + 1) : NULL; /* the schema: not checked */
    } else {
        snprintf(why, why_size,
                 "CREATE PERFETTO %s %s: opprof makes PerfettoSQL's TABLE, VIEW, INDEX, FUNCTION and MACRO", s->kind,
                 s->name);
        return false;
    }
    if (!(p = keyword(p, "as"))) {
        snprintf(why, why_size, "CREATE PERFETTO %s %s: %s", s->kind, s->name,
                 !strcmp(s->kind, "FUNCTION") || !strcmp(s->kind, "MACRO") ? "(arguments) RETURNS type AS ... expected"
                                                                           : "AS select expected");
        return false;
    }
    s->body = p, s->end = statement_end(p);
    return true;
}

/* ---- a scalar function: its select, run for each call ---- */

typedef struct scalar_function {
    char *name, *query;           /* the function's, and its select */
    char *arguments;              /* "a, b" */
    sqlite3_stmt *st;             /* the select prepared at the first call, kept for the next */
    struct scalar_function *next; /* every one made: sql_release_functions */
} scalar_function;

static scalar_function *g_scalars;

static void free_scalar(void *p) {
    scalar_function *f = p;
    for (scalar_function **at = &g_scalars; *at; at = &(*at)->next)
        if (*at == f) {
            *at = f->next;
            break;
        }
    sqlite3_finalize(f->st);
    sqlite3_free(f->name);
    sqlite3_free(f->query);
    sqlite3_free(f->arguments);
    sqlite3_free(f);
}

void sql_release_functions(void) {
    for (scalar_function *f = g_scalars; f; f = f->next) sqlite3_finalize(f->st), f->st = NULL;
}

/* One call: the kept statement, or one of its own when the function calls
 * itself (the kept one is running). */
static void call_scalar(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    scalar_function *f = sqlite3_user_data(ctx);
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    char *why = NULL;
    if (!sql_call_fits(f->name, &why)) {
        why ? sqlite3_result_error(ctx, why, -1) : sqlite3_result_error_nomem(ctx);
        return sqlite3_free(why);
    }
    bool kept = f->st && !sqlite3_stmt_busy(f->st);
    sqlite3_stmt *st = kept ? f->st : NULL;
    if (!st && sqlite3_prepare_v2(db, f->query, -1, &st, NULL) != SQLITE_OK)
        return sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
    if (!f->st) f->st = st, kept = true;
    sql_bind_arguments(st, f->arguments, argv, argc);
    sql_call_enter();
    int rc = sqlite3_step(st);
    sql_call_leave();
    if (rc == SQLITE_ROW)
        sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
    else if (rc == SQLITE_DONE)
        sqlite3_result_null(ctx);
    else
        sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
    if (kept)
        sqlite3_reset(st), sqlite3_clear_bindings(st);
    else
        sqlite3_finalize(st);
}

static int create_function(sqlite3 *db, const perfetto_statement *s, const char *body) {
    char *arguments = names_of(s->params, s->params_end);
    if (!arguments) return SQLITE_NOMEM;
    int n_args = 0, len;
    for (const char *list = arguments, *at; sql_next_name(&list, &at, &len);) n_args++;
    if (s->returns_table) {
        char *columns = names_of(s->columns, s->columns_end);
        int rc = columns ? sql_create_table_function(db, s->name, arguments, columns, body) : SQLITE_NOMEM;
        sqlite3_free(columns);
        sqlite3_free(arguments);
        return rc;
    }
    scalar_function *f = sqlite3_malloc(sizeof *f);
    char *query = sqlite3_mprintf("%s", body), *called = sqlite3_mprintf("%s", s->name);
    if (!f || !query || !called) {
        sqlite3_free(f), sqlite3_free(query), sqlite3_free(called), sqlite3_free(arguments);
        return SQLITE_NOMEM;
    }
    *f = (scalar_function){called, query, arguments, NULL, g_scalars};
    g_scalars = f;
    return sqlite3_create_function_v2(db, s->name, n_args, SQLITE_UTF8, f, call_scalar, NULL, NULL, free_scalar);
}

/* ---- macros: text put in place of NAME!(args) -------------------------- */

#define MACRO_TABLE "temp._perfetto_macros"
enum {
    MAX_EXPANSIONS = 256,   /* a macro that calls itself forever stops here */
    MAX_EXPANDED = 4 << 20, /* and one that calls itself twice, whose text doubles each round, here */
};

static int define_macro(sqlite3 *db, const perfetto_statement *s, const char *body) {
    char *params = names_of(s->params, s->params_end);
    if (!params) return SQLITE_NOMEM;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_exec(
        db, "CREATE TABLE IF NOT EXISTS " MACRO_TABLE "(name TEXT PRIMARY KEY COLLATE NOCASE, params TEXT, body TEXT)",
        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                s->replace ? "INSERT OR REPLACE INTO " MACRO_TABLE " VALUES (?, ?, ?)"
                                           : "INSERT INTO " MACRO_TABLE " VALUES (?, ?, ?)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, params, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, body, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    }
    sqlite3_finalize(st);
    sqlite3_free(params);
    return rc;
}

/* The next argument of a call from *p (up to its ',' or the call's ')'
 * at close): its text trimmed; *p past it. */
static void next_argument(const char **p, const char *close, const char **arg, int *len) {
    const char *q = *p;
    int depth = 0;
    while (q < close && (depth || *q != ',')) {
        const char *r = past_quoted(q);
        if (r != q) {
            q = r;
            continue;
        }
        depth += (*q == '(') - (*q == ')');
        q++;
    }
    const char *start = sql_skip_blank(*p), *stop = q;
    while (stop > start && isspace((unsigned char)stop[-1])) stop--;
    *arg = start, *len = (int)(stop - start);
    *p = q < close ? q + 1 : close;
}

/* The arguments of a call (inside its parentheses, up to close): none when
 * only blanks are there. */
static int count_arguments(const char *args, const char *close) {
    if (sql_skip_blank(args) >= close) return 0;
    int n = 0;
    const char *arg;
    for (int len; args < close; n++) next_argument(&args, close, &arg, &len);
    return n + (close[-1] == ','); /* "a," : a second, empty */
}

static int count_names(const char *list) {
    int n = 0;
    const char *at;
    for (int len; sql_next_name(&list, &at, &len);) n++;
    return n;
}

/* body with each $param of params ("a, b") as the call's argument of that
 * place (args: inside the call's parentheses, up to close), into out. */
static void substitute(sqlite3_str *out, const char *body, const char *params, const char *args, const char *close) {
    for (const char *p = body; *p;) {
        const char *q = past_quoted(p);
        if (q != p) {
            sqlite3_str_append(out, p, (int)(q - p));
            p = q;
            continue;
        }
        char param[128];
        const char *after = *p == '$' ? name(p + 1, param, sizeof param) : NULL;
        int place = -1, k = 0;
        const char *list = params, *at;
        for (int n; after && place < 0 && sql_next_name(&list, &at, &n); k++)
            if ((size_t)n == strlen(param) && !strncmp(at, param, (size_t)n)) place = k;
        if (place < 0) {
            sqlite3_str_appendchar(out, 1, *p++);
            continue;
        }
        const char *a = args, *arg = "";
        int len = 0;
        for (int i = 0; i <= place; i++) next_argument(&a, close, &arg, &len);
        sqlite3_str_append(out, arg, len);
        p = p + 1 + strlen(param); /* the blanks name() skipped stay */
    }
}

/* The statement s as SQLite's. */
static int create(sqlite3 *db, const perfetto_statement *s) {
    char *body = sqlite3_mprintf("%.*s", (int)(s->end - s->body), s->body);
    if (!body) return SQLITE_NOMEM;
    int rc;
    if (!strcmp(s->kind, "FUNCTION")) {
        rc = create_function(db, s, body);
    } else if (!strcmp(s->kind, "MACRO")) {
        rc = define_macro(db, s, body);
    } else {
        sqlite3_str *q = sqlite3_str_new(db);
        bool index = !strcmp(s->kind, "INDEX");
        if (s->replace) sqlite3_str_appendf(q, "DROP %s IF EXISTS \"%w\"; ", s->kind, s->name);
        if (index)
            sqlite3_str_appendf(q, "CREATE INDEX \"%w\" %s", s->name, body);
        else
            sqlite3_str_appendf(q, "CREATE TEMP %s \"%w\" AS %s", s->kind, s->name, body);
        char *sql = sqlite3_str_finish(q);
        rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
    }
    sqlite3_free(body);
    return rc;
}

/* The macros of Perfetto's prelude, there without an INCLUDE (as their
 * documentation gives them); one of the session's own name goes first. */
static const struct {
    const char *name, *params, *body;
} PRELUDE_MACROS[] = {
    {"cast_int", "value", "CAST($value AS INT)"},
    {"cast_double", "value", "CAST($value AS REAL)"},
    {"cast_string", "value", "CAST($value AS TEXT)"},
};

/* The macro of the name start..start+n: the session's (by *look, prepared
 * at the first call) or the prelude's; its params and body. SQLITE_ROW when
 * found, SQLITE_DONE when not, or SQLite's error (out of memory: the
 * session's macros could not be looked at). */
static int find_macro(sqlite3 *db, sqlite3_stmt **look, const char *start, int n, const char **params,
                      const char **body) {
    int rc = *look ? SQLITE_OK
                   : sqlite3_prepare_v2(db, "SELECT params, body FROM " MACRO_TABLE " WHERE name = ?", -1, look, NULL);
    if (rc == SQLITE_NOMEM) return rc;
    if (rc != SQLITE_OK) *look = NULL; /* no macro made yet: no table of them */
    if (*look) {
        sqlite3_reset(*look);
        sqlite3_bind_text(*look, 1, start, n, SQLITE_STATIC);
        if ((rc = sqlite3_step(*look)) == SQLITE_ROW) {
            *params = (const char *)sqlite3_column_text(*look, 0);
            *body = (const char *)sqlite3_column_text(*look, 1);
            return *params && *body ? SQLITE_ROW : SQLITE_NOMEM;
        }
        if (rc != SQLITE_DONE) return rc;
    }
    for (size_t k = 0; k < sizeof PRELUDE_MACROS / sizeof *PRELUDE_MACROS; k++) {
        if (strlen(PRELUDE_MACROS[k].name) != (size_t)n || strncasecmp(PRELUDE_MACROS[k].name, start, (size_t)n))
            continue;
        *params = PRELUDE_MACROS[k].params;
        *body = PRELUDE_MACROS[k].body;
        return SQLITE_ROW;
    }
    return SQLITE_DONE;
}

/* One round over text..end: each NAME!(args) replaced by its macro, into
 * out; *found: how many. */
static int expand_once(sqlite3 *db, const char *text, const char *end, sqlite3_str *out, int *found, char *why,
                       size_t why_size) {
    sqlite3_stmt *look = NULL;
    int rc = SQLITE_OK;
    const char *copied = text;
    for (const char *p = text; p < end && rc == SQLITE_OK;) {
        const char *q = past_quoted(p);
        if (q != p || p[0] != '!' || p[1] != '(' || p == text || !is_name_char(p[-1])) {
            p = q != p ? q : p + 1;
            continue;
        }
        const char *start = p, *close = closing(p + 1);
        while (start > text && is_name_char(start[-1])) start--;
        int n = (int)(p - start);
        const char *params = NULL, *body = NULL;
        bool closed = close && close < end;
        int found_rc = closed ? find_macro(db, &look, start, n, &params, &body) : SQLITE_DONE;
        if (!closed) {
            snprintf(why, why_size, "%.*s!(: its ')' is missing", n, start);
            rc = SQLITE_ERROR;
        } else if (found_rc == SQLITE_DONE) {
            snprintf(why, why_size, "%.*s!: no such macro (CREATE PERFETTO MACRO makes one)", n, start);
            rc = SQLITE_ERROR;
        } else if (found_rc != SQLITE_ROW) {
            snprintf(why, why_size, "%.*s!: %s", n, start, sqlite3_errstr(found_rc));
            rc = found_rc;
        } else if (count_arguments(p + 2, close) != count_names(params)) {
            snprintf(why, why_size, "%.*s!: takes %d argument(s) (%s), given %d", n, start, count_names(params), params,
                     count_arguments(p + 2, close));
            rc = SQLITE_ERROR;
        } else {
            sqlite3_str_append(out, copied, (int)(start - copied));
            substitute(out, body, params, p + 2, close);
            copied = p = close + 1;
            (*found)++;
        }
    }
    sqlite3_str_append(out, copied, (int)(end - copied));
    sqlite3_finalize(look);
    return rc;
}

static bool has_call(const char *p, const char *end) {
    for (; p < end; p++) {
        const char *q = past_quoted(p);
        if (q != p)
            p = q - 1;
        else if (p[0] == '!' && p[1] == '(')
            return true;
    }
    return false;
}

int sql_expand_macros(sqlite3 *db, const char *p, char **expanded, const char **after, char *why, size_t why_size) {
    *expanded = NULL;
    const char *end = statement_end(p);
    perfetto_statement def;
    char ignored[8];
    if (!has_call(p, end) || (parse(p, &def, ignored, sizeof ignored) && !strcmp(def.kind, "MACRO"))) return SQLITE_OK;
    char *text = sqlite3_mprintf("%.*s", (int)(end - p), p);
    int rc = text ? SQLITE_OK : SQLITE_NOMEM, rounds = 0;
    for (int found = 1; rc == SQLITE_OK && found; rounds++) {
        if (rounds == MAX_EXPANSIONS) {
            snprintf(why, why_size, "macros: %d rounds of expansion and still a call (one that calls itself?)",
                     MAX_EXPANSIONS);
            rc = SQLITE_ERROR;
            break;
        }
        sqlite3_str *out = sqlite3_str_new(db);
        found = 0;
        rc = expand_once(db, text, text + strlen(text), out, &found, why, why_size);
        sqlite3_free(text);
        text = sqlite3_str_finish(out);
        if (!text && rc == SQLITE_OK) rc = SQLITE_NOMEM;
        if (rc == SQLITE_OK && found && strlen(text) > MAX_EXPANDED) {
            snprintf(why, why_size, "macros: the statement grew past %d MiB as they expanded (one that calls itself?)",
                     MAX_EXPANDED >> 20);
            rc = SQLITE_ERROR;
        }
    }
    if (rc) {
        sqlite3_free(text);
        return rc;
    }
    *expanded = text;
    *after = *end ? end + 1 : end;
    return SQLITE_OK;
}

/* "INCLUDE PERFETTO MODULE name" at p: its name into out, p past it. */
static const char *include(const char *p, char *out, size_t size) {
    p = keyword(keyword(keyword(p, "include"), "perfetto"), "module");
    if (!p) return NULL;
    size_t n = 0;
    while (p[n] && p[n] != ';' && !isspace((unsigned char)p[n]) && n + 1 < size) out[n] = p[n], n++;
    out[n] = '\0';
    return p + n;
}

/* "CREATE VIRTUAL TABLE name USING SPAN_JOIN(...)" (or SPAN_LEFT_JOIN,
 * SPAN_OUTER_JOIN) without a schema: where name begins, else NULL. Such a
 * table is the session's, as trace_processor's are: made in temp, it is
 * not written into a kept --db (where the same script run again found it
 * there, and no other SQLite tool knows its module). */
static const char *span_join_name(const char *p) {
    char table[128], module[32];
    const char *at = keyword(keyword(keyword(p, "create"), "virtual"), "table"), *after = name(at, table, sizeof table);
    if (!after || *after == '.' || !(after = keyword(after, "using")) || !name(after, module, sizeof module))
        return NULL;
    return !strcasecmp(module, "span_join") || !strcasecmp(module, "span_left_join") ||
                   !strcasecmp(module, "span_outer_join")
               ? at
               : NULL;
}

static int create_span_join(sqlite3 *db, const char *p, const char *at, const char **next) {
    const char *end = statement_end(p);
    *next = *end ? end + 1 : end;
    char *text = sqlite3_mprintf("%.*stemp.%.*s", (int)(at - p), p, (int)(end - at), at);
    int rc = text ? sqlite3_exec(db, text, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(text);
    return rc;
}

int sql_perfetto_statement(sqlite3 *db, const char *p, const char **next, char *why, size_t why_size) {
    const char *span_join = span_join_name(p);
    if (span_join) {
        int rc = create_span_join(db, p, span_join, next);
        if (rc) snprintf(why, why_size, "%s", rc == SQLITE_NOMEM ? sqlite3_errstr(rc) : sqlite3_errmsg(db));
        return rc;
    }
    char module[128];
    const char *after = include(p, module, sizeof module);
    if (after) {
        const char *end = sql_skip_blank(after);
        *next = *end == ';' ? end + 1 : end;
        return sql_include_module(db, module, why, why_size);
    }
    perfetto_statement s;
    if (!parse(p, &s, why, why_size)) return why[0] ? SQLITE_ERROR : -1;
    *next = *s.end ? s.end + 1 : s.end;
    int rc = create(db, &s);
    if (rc)
        snprintf(why, why_size, "CREATE PERFETTO %s %s: %s", s.kind, s.name,
                 rc == SQLITE_NOMEM ? sqlite3_errstr(rc) : sqlite3_errmsg(db));
    return rc;
}
