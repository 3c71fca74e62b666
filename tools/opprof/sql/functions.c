/* functions.c - the functions of Perfetto's SQL that its users call, on
 * SQLite, written from trace_processor's documentation:
 *   EXTRACT_ARG(arg_set_id, key)       an argument's value
 *   ancestor_slice(id)                 the slices that enclose slice id
 *   descendant_slice(id)               the slices that it encloses
 *   directly_connected_flow(id)        the flows into and out of it
 *   following_flow(id)                 the flows reached from it: out along a
 *                                      flow, or down to a child
 *   preceding_flow(id)                 ... in along a flow, or up to a parent
 *   PERCENTILE(x, p)                   the p-th percentile of x (an aggregate;
 *                                      linear between the closest ranks)
 *   x REGEXP pattern                   POSIX extended regular expressions
 *   TRACE_START(), TRACE_END(),        trace_bounds' start_ts, end_ts, and
 *   TRACE_DUR()                        the one less the other
 *   DEMANGLE(name)                     a C++ name demangled, NULL when it is none
 *   STR_SPLIT(text, delimiter, i)      the i-th field (from 0), NULL past the last
 *   time_to_us(ns) ... time_to_days,   the time.conversion module's: ns in a unit
 *   time_from_us(x) ... _from_days     and back, whole numbers (integer division)
 * (the modules that INCLUDE PERFETTO MODULE names: modules.c).
 *
 * A table-valued function is one eponymous virtual table kind: each runs an
 * SQL query of its own with its arguments bound to the parameters of their
 * names ($start_id), as PerfettoSQL's CREATE PERFETTO FUNCTION ... RETURNS
 * TABLE makes them too (perfetto_sql.c). */
#define _GNU_SOURCE
#include "sql.h"

#include <opprof/opprof.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define SLICE_COLUMNS SQL_SLICE_COLUMNS ", cat, slice_id"
#define FLOW_COLUMNS "id, slice_out, slice_in, trace_id, arg_set_id"

/* Its arguments: names, comma-separated, each a hidden column that a query
 * must give, bound to the query's parameter "$name". */
typedef struct table_function {
    const char *name, *arguments, *columns, *query;
} table_function;

static const table_function TABLE_FUNCTIONS[] = {
    {"ancestor_slice", "start_id", SLICE_COLUMNS,
     "WITH RECURSIVE up(id) AS (SELECT parent_id FROM slice WHERE id = $start_id"
     " UNION ALL SELECT s.parent_id FROM slice s JOIN up ON s.id = up.id WHERE s.parent_id IS NOT NULL)"
     " SELECT " SLICE_COLUMNS " FROM slice WHERE id IN (SELECT id FROM up) ORDER BY depth"},
    {"descendant_slice", "start_id", SLICE_COLUMNS,
     "WITH RECURSIVE down(id) AS (SELECT id FROM slice WHERE parent_id = $start_id"
     " UNION ALL SELECT s.id FROM slice s JOIN down ON s.parent_id = down.id)"
     " SELECT " SLICE_COLUMNS " FROM slice WHERE id IN (SELECT id FROM down) ORDER BY id"},
    {"directly_connected_flow", "start_id", FLOW_COLUMNS,
     "SELECT " FLOW_COLUMNS " FROM flow WHERE slice_out = $start_id OR slice_in = $start_id ORDER BY id"},
    {"following_flow", "start_id", FLOW_COLUMNS,
     "WITH RECURSIVE reached(id) AS (SELECT $start_id"
     " UNION SELECT f.slice_in FROM flow f JOIN reached r ON f.slice_out = r.id"
     " UNION SELECT s.id FROM slice s JOIN reached r ON s.parent_id = r.id)"
     " SELECT " FLOW_COLUMNS " FROM flow WHERE slice_out IN (SELECT id FROM reached) ORDER BY id"},
    {"preceding_flow", "start_id", FLOW_COLUMNS,
     "WITH RECURSIVE reached(id) AS (SELECT $start_id"
     " UNION SELECT f.slice_out FROM flow f JOIN reached r ON f.slice_in = r.id"
     " UNION SELECT s.parent_id FROM slice s JOIN reached r ON s.id = r.id WHERE s.parent_id IS NOT NULL)"
     " SELECT " FLOW_COLUMNS " FROM flow WHERE slice_in IN (SELECT id FROM reached) ORDER BY id"},
};
#define N_TABLE_FUNCTIONS (sizeof TABLE_FUNCTIONS / sizeof *TABLE_FUNCTIONS)

/* ---- the virtual table --------------------------------------------------- */

typedef struct tf_vtab {
    sqlite3_vtab base;
    sqlite3 *db;
    const table_function *fn;
    int n_columns, n_arguments;
} tf_vtab;

typedef struct tf_cursor {
    sqlite3_vtab_cursor base;
    sqlite3_stmt *st;
    int64_t row;
    bool eof;
} tf_cursor;

bool sql_next_name(const char **p, const char **name, int *len) {
    while (**p == ' ') (*p)++;
    if (!**p) return false;
    size_t n = strcspn(*p, ",");
    *name = *p;
    *len = (int)n;
    while (*len > 0 && (*name)[*len - 1] == ' ') (*len)--;
    *p += n + ((*p)[n] == ',');
    return true;
}

static int count_names(const char *list) {
    const char *name;
    int n = 0, len;
    while (sql_next_name(&list, &name, &len)) n++;
    return n;
}

/* list ("a, b, c") has `name`. */
static bool has_name(const char *list, const char *name, int len) {
    const char *at;
    int n;
    while (sql_next_name(&list, &at, &n))
        if (n == len && !strncmp(at, name, (size_t)len)) return true;
    return false;
}

/* "CREATE TABLE x(columns, a HIDDEN, b HIDDEN)", sqlite3_malloc'd; an
 * argument named as a column is the hidden "$a". */
static char *declaration(const table_function *fn) {
    sqlite3_str *d = sqlite3_str_new(NULL);
    sqlite3_str_appendf(d, "CREATE TABLE x(%s", fn->columns);
    const char *list = fn->arguments, *name;
    int len;
    while (sql_next_name(&list, &name, &len))
        sqlite3_str_appendf(d, has_name(fn->columns, name, len) ? ", \"$%.*s\" HIDDEN" : ", %.*s HIDDEN", len, name);
    sqlite3_str_appendchar(d, 1, ')');
    return sqlite3_str_finish(d);
}

static int tf_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
    (void)argc, (void)argv, (void)err;
    const table_function *fn = aux;
    char *decl = declaration(fn);
    int rc = decl ? sqlite3_declare_vtab(db, decl) : SQLITE_NOMEM;
    sqlite3_free(decl);
    if (rc) return rc;
    tf_vtab *t = sqlite3_malloc(sizeof *t);
    if (!t) return SQLITE_NOMEM;
    memset(t, 0, sizeof *t);
    t->db = db;
    t->fn = fn;
    t->n_columns = count_names(fn->columns);
    t->n_arguments = count_names(fn->arguments);
    *out = &t->base;
    return SQLITE_OK;
}

static int tf_disconnect(sqlite3_vtab *v) {
    sqlite3_free(v);
    return SQLITE_OK;
}

/* Every argument is required: an equality on its hidden column, given to
 * xFilter in the arguments' order. */
static int tf_best_index(sqlite3_vtab *v, sqlite3_index_info *info) {
    tf_vtab *t = (tf_vtab *)v;
    int given = 0;
    bool unusable = false;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        int arg = c->iColumn - t->n_columns;
        if (arg < 0 || c->op != SQLITE_INDEX_CONSTRAINT_EQ || (given >> arg & 1)) continue;
        if (!c->usable) {
            unusable = true;
            continue;
        }
        info->aConstraintUsage[i].argvIndex = arg + 1;
        info->aConstraintUsage[i].omit = 1;
        given |= 1 << arg;
    }
    if (given == (1 << t->n_arguments) - 1) {
        info->estimatedCost = 10;
        info->idxNum = given;
        return SQLITE_OK;
    }
    if (unusable) return SQLITE_CONSTRAINT;
    for (int i = 0; i < info->nConstraint; i++)
        info->aConstraintUsage[i].argvIndex = 0, info->aConstraintUsage[i].omit = 0;
    info->estimatedCost = 1e99; /* a plan without them is the last resort: tf_filter refuses it */
    info->idxNum = -1;
    return SQLITE_OK;
}

static int tf_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out) {
    (void)v;
    tf_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    *out = &c->base;
    return SQLITE_OK;
}

static int tf_close(sqlite3_vtab_cursor *cur) {
    tf_cursor *c = (tf_cursor *)cur;
    sqlite3_finalize(c->st);
    sqlite3_free(c);
    return SQLITE_OK;
}

/* ---- calls within calls: a function that calls itself ---------------------- */

/* Left below the deepest call for SQLite's frames: an eighth of the stack,
 * 64 KiB to 512 KiB (a call takes about 600 bytes). */
static size_t stack_kept(size_t size) {
    size_t kept = size / 8;
    return kept < (64 << 10) ? 64 << 10 : kept > (512 << 10) ? 512 << 10 : kept;
}

/* The lowest address of this thread's stack that a call may reach (found at
 * the first call; 1 when it cannot be told: then SQLite's own limit on
 * nested triggers, 1000, limits the calls), and the calls in progress. */
static _Thread_local uintptr_t g_stack_floor;
static _Thread_local int g_depth;

bool sql_call_fits(const char *function, char **why) {
    uintptr_t here = (uintptr_t)__builtin_frame_address(0); /* not a local's: a sanitizer may move those */
    if (!g_stack_floor) {
        pthread_attr_t attr;
        void *low = NULL;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &low, &size) != 0 || size <= 2 * stack_kept(size)) low = NULL;
            pthread_attr_destroy(&attr);
        }
        g_stack_floor = low ? (uintptr_t)low + stack_kept(size) : 1;
    }
    if (g_stack_floor > 1 ? here > g_stack_floor : g_depth < 1000) return true;
    *why = sqlite3_mprintf("%s: calls nested %d deep fill the stack (a function that calls itself without end?)",
                           function, g_depth);
    return false;
}

void sql_call_enter(void) { g_depth++; }
void sql_call_leave(void) { g_depth--; }

static int tf_next(sqlite3_vtab_cursor *cur) {
    tf_cursor *c = (tf_cursor *)cur;
    sql_call_enter();
    int rc = sqlite3_step(c->st);
    sql_call_leave();
    c->eof = rc != SQLITE_ROW;
    c->row++;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) return SQLITE_OK;
    tf_vtab *t = (tf_vtab *)cur->pVtab; /* what went wrong in its query, said by the query that called it */
    sqlite3_free(t->base.zErrMsg);
    t->base.zErrMsg = sqlite3_mprintf("%s", sqlite3_errmsg(t->db));
    return rc;
}

void sql_bind_arguments(sqlite3_stmt *st, const char *arguments, sqlite3_value **argv, int argc) {
    const char *name;
    int len;
    for (int k = 0; k < argc && sql_next_name(&arguments, &name, &len); k++) {
        char param[130];
        snprintf(param, sizeof param, "$%.*s", len, name);
        int at = sqlite3_bind_parameter_index(st, param);
        if (at) sqlite3_bind_value(st, at, argv[k]);
    }
}

static int tf_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv) {
    (void)idx_str;
    tf_cursor *c = (tf_cursor *)cur;
    tf_vtab *t = (tf_vtab *)cur->pVtab;
    if (!c->st) {
        int rc = sqlite3_prepare_v2(t->db, t->fn->query, -1, &c->st, NULL);
        if (rc) {
            sqlite3_free(t->base.zErrMsg);
            t->base.zErrMsg = sqlite3_mprintf("%s: %s", t->fn->name, sqlite3_errmsg(t->db));
            return rc;
        }
    }
    if (idx < 0 || argc < t->n_arguments) {
        sqlite3_free(t->base.zErrMsg);
        t->base.zErrMsg = sqlite3_mprintf("%s needs its argument%s: %s(%s)", t->fn->name, t->n_arguments > 1 ? "s" : "",
                                          t->fn->name, t->fn->arguments);
        return SQLITE_ERROR;
    }
    char *why = NULL;
    if (!sql_call_fits(t->fn->name, &why)) {
        sqlite3_free(t->base.zErrMsg);
        t->base.zErrMsg = why;
        return why ? SQLITE_ERROR : SQLITE_NOMEM;
    }
    sqlite3_reset(c->st);
    sql_bind_arguments(c->st, t->fn->arguments, argv, argc);
    c->row = -1;
    return tf_next(cur);
}

static int tf_eof(sqlite3_vtab_cursor *cur) { return ((tf_cursor *)cur)->eof; }

static int tf_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
    tf_cursor *c = (tf_cursor *)cur;
    if (col < ((tf_vtab *)cur->pVtab)->n_columns) sqlite3_result_value(ctx, sqlite3_column_value(c->st, col));
    return SQLITE_OK;
}

static int tf_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
    *out = ((tf_cursor *)cur)->row;
    return SQLITE_OK;
}

static const sqlite3_module TABLE_FUNCTION_MODULE = {
    .iVersion = 0,
    .xConnect = tf_connect,
    .xBestIndex = tf_best_index,
    .xDisconnect = tf_disconnect,
    .xOpen = tf_open,
    .xClose = tf_close,
    .xFilter = tf_filter,
    .xNext = tf_next,
    .xEof = tf_eof,
    .xColumn = tf_column,
    .xRowid = tf_rowid,
};

/* ---- EXTRACT_ARG ------------------------------------------------------------ */

/* What EXTRACT_ARG keeps while its key is a constant of the query (SQLite's
 * auxdata, freed with the statement): the key's id and the lookup. */
typedef struct arg_lookup {
    sqlite3_stmt *st;
    int64_t key_id; /* arg_key's id, -1 when no argument has the key */
} arg_lookup;

static void free_lookup(void *p) {
    arg_lookup *l = p;
    sqlite3_finalize(l->st);
    sqlite3_free(l);
}

/* A function's result an error: SQLite's out of memory, else db's message. */
static void result_error(sqlite3_context *ctx, sqlite3 *db, int rc) {
    if (rc == SQLITE_NOMEM || rc == SQLITE_OK || !db) /* OK: an allocation of ours */
        sqlite3_result_error_nomem(ctx);
    else
        sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
}

static arg_lookup *new_lookup(sqlite3 *db, sqlite3_value *key) {
    arg_lookup *l = sqlite3_malloc(sizeof *l);
    if (!l) return NULL;
    *l = (arg_lookup){.key_id = -1};
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT id FROM arg_key WHERE key = ?", -1, &st, NULL);
    if (rc == SQLITE_OK) sqlite3_bind_value(st, 1, key);
    int stepped = rc == SQLITE_OK ? sqlite3_step(st) : rc;
    if (stepped == SQLITE_ROW) l->key_id = sqlite3_column_int64(st, 0);
    if (stepped != SQLITE_ROW && stepped != SQLITE_DONE) rc = stepped; /* no key, not "no such key" */
    sqlite3_finalize(st);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "SELECT j.atom FROM arg_chunk c, json_each(c.args) j WHERE c.arg_set_id = ?"
                                " AND j.key / " SQL_ARGS_A_CHUNK_SQL " = ? LIMIT 1",
                                -1, &l->st, NULL);
    if (rc != SQLITE_OK) free_lookup(l), l = NULL;
    return l;
}

/* EXTRACT_ARG(arg_set_id, key): the value of the set's argument under key,
 * or NULL. One lookup a query while the key is constant. */
static void extract_arg(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
    arg_lookup *l = sqlite3_get_auxdata(ctx, 1), *made = NULL;
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    if (!l && !(l = made = new_lookup(db, argv[1]))) return result_error(ctx, db, sqlite3_errcode(db));
    sqlite3_result_null(ctx);
    if (l->key_id >= 0) {
        sqlite3_bind_value(l->st, 1, argv[0]);
        sqlite3_bind_int64(l->st, 2, l->key_id);
        int rc = sqlite3_step(l->st);
        if (rc == SQLITE_ROW) sqlite3_result_value(ctx, sqlite3_column_value(l->st, 0));
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) result_error(ctx, db, rc); /* not "no such argument" */
        sqlite3_reset(l->st);
    }
    if (made) sqlite3_set_auxdata(ctx, 1, made, free_lookup); /* kept while the key is constant, else freed */
}

/* ---- PERCENTILE(x, p): the values kept, sorted at the end ---- */

typedef struct percentile {
    double *v;
    size_t n, cap;
    double p;
    bool bad_p;
} percentile;

static void percentile_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    percentile *a = sqlite3_aggregate_context(ctx, sizeof *a);
    if (!a) return sqlite3_result_error_nomem(ctx);
    int type = sqlite3_value_numeric_type(argv[1]); /* NULL or 'x' is no percentile, not 0 */
    double p = sqlite3_value_double(argv[1]);
    if ((type != SQLITE_INTEGER && type != SQLITE_FLOAT) || !(p >= 0 && p <= 100)) a->bad_p = true;
    a->p = p;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        double *grown = sqlite3_realloc64(a->v, cap * sizeof *grown);
        if (!grown) return sqlite3_result_error_nomem(ctx);
        a->v = grown, a->cap = cap;
    }
    a->v[a->n++] = sqlite3_value_double(argv[0]);
}

static int by_value(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void percentile_final(sqlite3_context *ctx) {
    percentile *a = sqlite3_aggregate_context(ctx, 0);
    if (a && a->bad_p) {
        sqlite3_result_error(ctx, "PERCENTILE: the percentile is a number from 0 to 100", -1);
    } else if (a && a->n) {
        qsort(a->v, a->n, sizeof *a->v, by_value);
        double rank = a->p / 100 * (double)(a->n - 1);
        size_t lo = (size_t)rank, hi = lo + 1 < a->n ? lo + 1 : lo;
        sqlite3_result_double(ctx, a->v[lo] + (rank - (double)lo) * (a->v[hi] - a->v[lo]));
    } else {
        sqlite3_result_null(ctx);
    }
    if (a) sqlite3_free(a->v);
}

/* ---- x REGEXP pattern: regexp(pattern, x), the pattern compiled once a statement ---- */

static void free_regex(void *r) {
    regfree(r);
    sqlite3_free(r);
}

static void regexp_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const char *pattern = (const char *)sqlite3_value_text(argv[0]), *text = (const char *)sqlite3_value_text(argv[1]);
    if (!pattern || !text) return sqlite3_result_null(ctx);
    regex_t *re = sqlite3_get_auxdata(ctx, 0);
    if (!re) {
        re = sqlite3_malloc(sizeof *re);
        if (!re) return sqlite3_result_error_nomem(ctx);
        if (regcomp(re, pattern, REG_EXTENDED | REG_NOSUB)) {
            sqlite3_free(re);
            char why[256];
            snprintf(why, sizeof why, "REGEXP: '%.200s' is not a regular expression", pattern);
            return sqlite3_result_error(ctx, why, -1);
        }
        sqlite3_set_auxdata(ctx, 0, re, free_regex);
        re = sqlite3_get_auxdata(ctx, 0);
        if (!re) return sqlite3_result_error_nomem(ctx);
    }
    sqlite3_result_int(ctx, regexec(re, text, 0, NULL, 0) == 0);
}

/* ---- TRACE_START(), TRACE_END(), TRACE_DUR(): which is the user data ---- */

enum { BOUND_START, BOUND_END, BOUND_DUR };
static const int BOUNDS[] = {BOUND_START, BOUND_END, BOUND_DUR};

static void trace_bound(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc, (void)argv;
    sqlite3_stmt *st = NULL;
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    int rc = sqlite3_prepare_v2(db, "SELECT start_ts, end_ts FROM trace_bounds", -1, &st, NULL);
    if (rc != SQLITE_OK) return result_error(ctx, db, rc);
    int which = *(const int *)sqlite3_user_data(ctx);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
        sqlite3_result_int64(ctx, which == BOUND_START ? start : which == BOUND_END ? end : end - start);
    } else if (rc == SQLITE_DONE) {
        sqlite3_result_null(ctx);
    } else {
        result_error(ctx, db, rc);
    }
    sqlite3_finalize(st);
}

/* ---- STR_SPLIT(text, delimiter, i) ---- */

static void str_split(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const char *text = (const char *)sqlite3_value_text(argv[0]), *delim = (const char *)sqlite3_value_text(argv[1]);
    if (!text) return sqlite3_result_null(ctx);
    if (!delim || !*delim) return sqlite3_result_error(ctx, "STR_SPLIT: the delimiter is empty", -1);
    int64_t i = sqlite3_value_int64(argv[2]);
    if (i < 0) return sqlite3_result_error(ctx, "STR_SPLIT: the field's index is negative", -1);
    size_t d = strlen(delim);
    for (const char *next; i > 0 && text; i--) text = (next = strstr(text, delim)) ? next + d : NULL;
    if (!text) return sqlite3_result_null(ctx);
    const char *end = strstr(text, delim);
    sqlite3_result_text(ctx, text, end ? (int)(end - text) : -1, SQLITE_TRANSIENT);
}

/* ---- time.conversion: time_to_UNIT(ns) and time_from_UNIT(x), by the unit's ns ---- */

static const struct time_unit {
    const char *to, *from;
    int64_t ns;
} TIME_UNITS[] = {
    {"time_to_ns", "time_from_ns", 1},
    {"time_to_us", "time_from_us", 1000},
    {"time_to_ms", "time_from_ms", 1000000},
    {"time_to_s", "time_from_s", 1000000000},
    {"time_to_min", "time_from_min", INT64_C(60000000000)},
    {"time_to_hours", "time_from_hours", INT64_C(3600000000000)},
    {"time_to_days", "time_from_days", INT64_C(86400000000000)},
};

static void time_to(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
    sqlite3_result_int64(ctx, sqlite3_value_int64(argv[0]) / ((const struct time_unit *)sqlite3_user_data(ctx))->ns);
}

static void time_from(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
    int64_t x = sqlite3_value_int64(argv[0]), unit = ((const struct time_unit *)sqlite3_user_data(ctx))->ns, ns;
    if (__builtin_mul_overflow(x, unit, &ns)) return sqlite3_result_error(ctx, "time_from: the time overflows", -1);
    sqlite3_result_int64(ctx, ns);
}

static int register_time_units(sqlite3 *db) {
    int rc = SQLITE_OK, flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
    for (size_t k = 0; k < sizeof TIME_UNITS / sizeof *TIME_UNITS && rc == SQLITE_OK; k++) {
        void *unit = (void *)&TIME_UNITS[k];
        rc = sqlite3_create_function(db, TIME_UNITS[k].to, 1, flags, unit, time_to, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_create_function(db, TIME_UNITS[k].from, 1, flags, unit, time_from, NULL, NULL);
    }
    return rc;
}

/* ---- DEMANGLE(name): opprof_demangle's ---- */

static void demangle_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const char *name = (const char *)sqlite3_value_text(argv[0]);
    char *plain = name ? opprof_demangle(name) : NULL;
    if (!plain) return sqlite3_result_null(ctx);
    sqlite3_result_text(ctx, plain, -1, SQLITE_TRANSIENT);
    opprof_free(plain);
}

int sql_register_functions(sqlite3 *db) {
    int rc = sqlite3_create_function(db, "EXTRACT_ARG", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, extract_arg, NULL,
                                     NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "PERCENTILE", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, NULL,
                                     percentile_step, percentile_final);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "regexp", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, regexp_fn, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "DEMANGLE", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, demangle_fn, NULL,
                                     NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "STR_SPLIT", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, str_split, NULL,
                                     NULL);
    if (rc == SQLITE_OK) rc = register_time_units(db);
    static const char *const bound_names[] = {"TRACE_START", "TRACE_END", "TRACE_DUR"};
    for (size_t k = 0; k < 3 && rc == SQLITE_OK; k++) /* constant in a statement: computed once */
        rc = sqlite3_create_function(db, bound_names[k], 0, SQLITE_UTF8 | SQLITE_DETERMINISTIC, (void *)&BOUNDS[k],
                                     trace_bound, NULL, NULL);
    for (size_t k = 0; k < N_TABLE_FUNCTIONS && rc == SQLITE_OK; k++)
        rc = sqlite3_create_module(db, TABLE_FUNCTIONS[k].name, &TABLE_FUNCTION_MODULE, (void *)&TABLE_FUNCTIONS[k]);
    return rc == SQLITE_OK ? sql_register_span_join(db) : rc;
}

/* A table_function and its strings in one allocation, the module's to free. */
static void free_table_function(void *fn) { sqlite3_free(fn); }

int sql_create_table_function(sqlite3 *db, const char *name, const char *arguments, const char *columns,
                              const char *query) {
    size_t sizes[4] = {strlen(name) + 1, strlen(arguments) + 1, strlen(columns) + 1, strlen(query) + 1};
    table_function *fn = sqlite3_malloc64(sizeof *fn + sizes[0] + sizes[1] + sizes[2] + sizes[3]);
    if (!fn) return SQLITE_NOMEM;
    char *at = (char *)(fn + 1);
    const char *texts[4] = {name, arguments, columns, query};
    const char **fields[4] = {&fn->name, &fn->arguments, &fn->columns, &fn->query};
    for (int k = 0; k < 4; k++) {
        memcpy(at, texts[k], sizes[k]);
        *fields[k] = at;
        at += sizes[k];
    }
    return sqlite3_create_module_v2(db, fn->name, &TABLE_FUNCTION_MODULE, fn, free_table_function);
}
