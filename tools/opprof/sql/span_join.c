/* span_join.c - Perfetto's SPAN_JOIN, SPAN_LEFT_JOIN and SPAN_OUTER_JOIN
 * operator tables, on SQLite, written from trace_processor's documentation:
 *
 *   CREATE VIRTUAL TABLE sp USING SPAN_JOIN(t1 [PARTITIONED col], t2 [PARTITIONED col]);
 *
 * Each table (or view) has spans: rows with ts and dur. sp's rows are the
 * pieces of time where a span of t1 and one of t2 both run (SPAN_JOIN), where
 * one of t1 runs (SPAN_LEFT_JOIN: t2's columns NULL where none of t2 runs),
 * or where either runs (SPAN_OUTER_JOIN), each piece cut where any span
 * begins or ends. A PARTITIONED table joins partition by partition (the
 * column's equal integer values, say utid); an unpartitioned one's spans
 * are in every partition of the other. Columns: ts, dur, the partition
 * column, then t1's others, then t2's; rows by partition, then ts. Within a
 * table and partition the spans must not overlap (Perfetto's rule: slices of
 * one depth, steps), or the join is an error that says where; spans of zero
 * or negative duration (an unfinished one's -1) are no time, and join
 * nothing. The rows are made at the first xFilter of a cursor and kept for
 * the statement. */
#include "sql.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { JOIN_INNER, JOIN_LEFT, JOIN_OUTER } join_kind;
static const join_kind KINDS[] = {JOIN_INNER, JOIN_LEFT, JOIN_OUTER};

typedef struct side {
    char *table, *partition; /* partition: NULL when unpartitioned */
    int n_columns;           /* the columns besides ts, dur and the partition */
    char **columns;
} side;

typedef struct span {
    int64_t ts, end, part;
    sqlite3_value **values; /* the side's n_columns */
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

typedef struct piece {
    int64_t ts, end, part;
    const span *a, *b; /* NULL: none of that side runs */
} piece;

typedef struct sj_vtab {
    sqlite3_vtab base;
    sqlite3 *db;
    join_kind kind;
    side sides[2];
} sj_vtab;

typedef struct sj_cursor {
    sqlite3_vtab_cursor base;
    spans rows[2];
    piece *pieces;
    size_t n, cap, at;
    bool made;
} sj_cursor;

/* ---- the definition: "t1 PARTITIONED col" ---- */

static char *word(const char **p) {
    while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r') (*p)++;
    const char *start = *p;
    while (**p && **p != ' ' && **p != '\t' && **p != '\n' && **p != '\r') (*p)++;
    return *p > start ? sqlite3_mprintf("%.*s", (int)(*p - start), start) : NULL;
}

static int parse_side(const char *text, side *s, char **err) {
    const char *p = text;
    char *keyword = NULL;
    s->table = word(&p);
    if (s->table && (keyword = word(&p)) && strcasecmp(keyword, "PARTITIONED") == 0) s->partition = word(&p);
    bool ok = s->table && (!keyword || (s->partition && !word(&p)));
    if (keyword && strcasecmp(keyword, "PARTITIONED") != 0) ok = false;
    sqlite3_free(keyword);
    if (!ok) *err = sqlite3_mprintf("SPAN_JOIN: '%s' is not TABLE or TABLE PARTITIONED COLUMN", text);
    return ok ? SQLITE_OK : SQLITE_ERROR;
}

static bool named(const char *column, const char *name) { return name && sqlite3_stricmp(column, name) == 0; }

/* The side's table's columns besides ts, dur and the partition; an error
 * when one of those three is missing. */
static int read_columns(sqlite3 *db, side *s, char **err) {
    sqlite3_stmt *st = NULL;
    char *q = sqlite3_mprintf("SELECT * FROM \"%w\"", s->table);
    int rc = q ? sqlite3_prepare_v2(db, q, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(q);
    if (rc) {
        *err = sqlite3_mprintf("SPAN_JOIN: %s: %s", s->table, sqlite3_errmsg(db));
        return rc;
    }
    int n = sqlite3_column_count(st), found = 0;
    s->columns = sqlite3_malloc64(sizeof *s->columns * (size_t)(n ? n : 1));
    for (int c = 0; s->columns && c < n; c++) {
        const char *name = sqlite3_column_name(st, c);
        if (named(name, "ts") || named(name, "dur") || named(name, s->partition))
            found++;
        else if (!(s->columns[s->n_columns++] = sqlite3_mprintf("%s", name)))
            rc = SQLITE_NOMEM;
    }
    sqlite3_finalize(st);
    if (!s->columns) return SQLITE_NOMEM;
    if (!rc && found < (s->partition ? 3 : 2)) {
        *err = sqlite3_mprintf("SPAN_JOIN: %s needs the columns ts and dur%s%s", s->table, s->partition ? ", and " : "",
                               s->partition ? s->partition : "");
        rc = SQLITE_ERROR;
    }
    return rc;
}

static void free_side(side *s) {
    for (int c = 0; c < s->n_columns; c++) sqlite3_free(s->columns[c]);
    sqlite3_free(s->columns);
    sqlite3_free(s->table);
    sqlite3_free(s->partition);
}

/* A column of t2's that t1 has too (the operator table's columns would clash), or NULL. */
static const char *shared_column(const sj_vtab *t) {
    for (int b = 0; b < t->sides[1].n_columns; b++)
        for (int a = 0; a < t->sides[0].n_columns; a++)
            if (named(t->sides[1].columns[b], t->sides[0].columns[a])) return t->sides[0].columns[a];
    return NULL;
}

/* CREATE TABLE x(ts, dur, [partition,] t1's columns, t2's columns): a name in both is an error. */
static int declare(sj_vtab *t, char **err) {
    const char *shared = shared_column(t);
    if (shared) {
        *err = sqlite3_mprintf("SPAN_JOIN: column %s is in both %s and %s (rename it in a view)", shared,
                               t->sides[0].table, t->sides[1].table);
        return SQLITE_ERROR;
    }
    const char *partition = t->sides[0].partition ? t->sides[0].partition : t->sides[1].partition;
    for (int k = 0; partition && k < 2; k++)
        for (int c = 0; c < t->sides[k].n_columns; c++)
            if (named(t->sides[k].columns[c], partition)) { /* the other side's partition: two columns of one name */
                *err = sqlite3_mprintf("SPAN_JOIN: column %s of %s is %s's partition (partition both by it, or "
                                       "rename it in a view)",
                                       partition, t->sides[k].table, t->sides[1 - k].table);
                return SQLITE_ERROR;
            }
    sqlite3_str *s = sqlite3_str_new(t->db);
    sqlite3_str_appendf(s, "CREATE TABLE x(ts INTEGER, dur INTEGER");
    if (partition) sqlite3_str_appendf(s, ", \"%w\" INTEGER", partition);
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < t->sides[k].n_columns; c++) sqlite3_str_appendf(s, ", \"%w\"", t->sides[k].columns[c]);
    sqlite3_str_appendf(s, ")");
    char *sql = sqlite3_str_finish(s);
    int rc = sql ? sqlite3_declare_vtab(t->db, sql) : SQLITE_NOMEM;
    if (rc && rc != SQLITE_NOMEM) *err = sqlite3_mprintf("SPAN_JOIN: %s", sqlite3_errmsg(t->db));
    sqlite3_free(sql);
    return rc;
}

static int sj_disconnect(sqlite3_vtab *v) {
    sj_vtab *t = (sj_vtab *)v;
    free_side(&t->sides[0]);
    free_side(&t->sides[1]);
    sqlite3_free(t);
    return SQLITE_OK;
}

static int sj_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
    if (argc != 5) {
        *err = sqlite3_mprintf("%s takes two tables: %s(t1 [PARTITIONED col], t2 [PARTITIONED col])", argv[0], argv[0]);
        return SQLITE_ERROR;
    }
    sj_vtab *t = sqlite3_malloc(sizeof *t);
    if (!t) return SQLITE_NOMEM;
    memset(t, 0, sizeof *t);
    t->db = db, t->kind = *(const join_kind *)aux;
    int rc = parse_side(argv[3], &t->sides[0], err);
    if (!rc) rc = parse_side(argv[4], &t->sides[1], err);
    const char *p0 = t->sides[0].partition, *p1 = t->sides[1].partition;
    if (!rc && p0 && p1 && sqlite3_stricmp(p0, p1)) {
        *err =
            sqlite3_mprintf("SPAN_JOIN: the tables are partitioned by %s and by %s: one column, or one side", p0, p1);
        rc = SQLITE_ERROR;
    }
    if (!rc) rc = read_columns(db, &t->sides[0], err);
    if (!rc) rc = read_columns(db, &t->sides[1], err);
    if (!rc) rc = declare(t, err);
    if (rc) {
        sj_disconnect(&t->base);
        return rc;
    }
    *out = &t->base;
    return SQLITE_OK;
}

static int sj_best_index(sqlite3_vtab *v, sqlite3_index_info *info) {
    (void)v;
    info->estimatedCost = 1e6; /* every row is made: no constraint narrows it here */
    return SQLITE_OK;
}

static int sj_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out) {
    (void)v;
    sj_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    *out = &c->base;
    return SQLITE_OK;
}

static void free_spans(spans *s, int n_columns) {
    for (size_t i = 0; i < s->n; i++) {
        for (int c = 0; c < n_columns; c++) sqlite3_value_free(s->v[i].values[c]);
        sqlite3_free(s->v[i].values);
    }
    free(s->v);
    *s = (spans){0};
}

static int sj_close(sqlite3_vtab_cursor *cur) {
    sj_cursor *c = (sj_cursor *)cur;
    sj_vtab *t = (sj_vtab *)cur->pVtab;
    for (int k = 0; k < 2; k++) free_spans(&c->rows[k], t->sides[k].n_columns);
    free(c->pieces);
    sqlite3_free(c);
    return SQLITE_OK;
}

/* ---- the rows ---- */

static int fail(sj_vtab *t, int rc, char *message) {
    sqlite3_free(t->base.zErrMsg);
    t->base.zErrMsg = message;
    return message ? rc : SQLITE_NOMEM;
}

/* A side's spans of positive duration, by partition then ts. */
static int read_spans(sj_vtab *t, const side *s, spans *out) {
    sqlite3_str *q = sqlite3_str_new(t->db);
    sqlite3_str_appendf(q, "SELECT ts, dur, %s", s->partition ? "" : "0");
    if (s->partition) sqlite3_str_appendf(q, "\"%w\"", s->partition);
    for (int c = 0; c < s->n_columns; c++) sqlite3_str_appendf(q, ", \"%w\"", s->columns[c]);
    sqlite3_str_appendf(q, " FROM \"%w\" WHERE dur > 0", s->table);
    if (s->partition) sqlite3_str_appendf(q, " AND \"%w\" IS NOT NULL", s->partition);
    sqlite3_str_appendf(q, " ORDER BY 3, 1");
    char *sql = sqlite3_str_finish(q);
    sqlite3_stmt *st = NULL;
    int rc = sql ? sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        rc = sql_grow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v) ? SQLITE_OK : SQLITE_NOMEM;
        span *sp = rc ? NULL : &out->v[out->n];
        if (sp && !(sp->values = sqlite3_malloc64(sizeof *sp->values * (size_t)(s->n_columns + 1)))) rc = SQLITE_NOMEM;
        if (rc) break;
        out->n++;
        sp->ts = sqlite3_column_int64(st, 0);
        sp->end = sp->ts + sqlite3_column_int64(st, 1);
        sp->part = sqlite3_column_int64(st, 2);
        for (int c = 0; c < s->n_columns; c++)
            if (!(sp->values[c] = sqlite3_value_dup(sqlite3_column_value(st, 3 + c)))) rc = SQLITE_NOMEM;
        span *before = out->n > 1 ? sp - 1 : NULL;
        if (!rc && before && before->part == sp->part && sp->ts < before->end) {
            char where[160] = "";
            if (s->partition) snprintf(where, sizeof where, " in partition %s %lld", s->partition, (long long)sp->part);
            rc = fail(t, SQLITE_ERROR,
                      sqlite3_mprintf("SPAN_JOIN: %s's spans overlap (the one at ts %lld begins before the one at %lld "
                                      "ends%s): each table's spans must be apart (slices of one depth, say)",
                                      s->table, (long long)sp->ts, (long long)before->ts, where));
            break;
        }
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    if (rc && !t->base.zErrMsg) fail(t, rc, sqlite3_mprintf("SPAN_JOIN: %s: %s", s->table, sqlite3_errmsg(t->db)));
    sqlite3_finalize(st);
    return rc;
}

static int by_time(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* The pieces of one partition: a and b its spans of each side, in ts order. */
static int cut(sj_cursor *c, join_kind kind, int64_t part, const span *a, size_t na, const span *b, size_t nb) {
    int64_t *bounds = malloc(sizeof *bounds * 2 * (na + nb) + 1);
    if (!bounds) return SQLITE_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < na; i++) bounds[n++] = a[i].ts, bounds[n++] = a[i].end;
    for (size_t i = 0; i < nb; i++) bounds[n++] = b[i].ts, bounds[n++] = b[i].end;
    qsort(bounds, n, sizeof *bounds, by_time);
    size_t ia = 0, ib = 0;
    int rc = SQLITE_OK;
    for (size_t k = 0; k + 1 < n && rc == SQLITE_OK; k++) {
        int64_t x = bounds[k], y = bounds[k + 1];
        if (x == y) continue;
        while (ia < na && a[ia].end <= x) ia++;
        while (ib < nb && b[ib].end <= x) ib++;
        const span *in_a = ia < na && a[ia].ts <= x ? &a[ia] : NULL, *in_b = ib < nb && b[ib].ts <= x ? &b[ib] : NULL;
        bool kept = kind == JOIN_INNER ? in_a && in_b : kind == JOIN_LEFT ? in_a != NULL : in_a || in_b;
        if (!kept) continue;
        if (!sql_grow((void **)&c->pieces, &c->cap, c->n + 1, sizeof *c->pieces))
            rc = SQLITE_NOMEM;
        else
            c->pieces[c->n++] = (piece){x, y, part, in_a, in_b};
    }
    free(bounds);
    return rc;
}

/* The end of the run of spans from `from` in partition part (all of them
 * when the side is unpartitioned). */
static size_t run_end(const spans *s, size_t from, bool partitioned) {
    if (!partitioned) return s->n;
    size_t to = from;
    while (to < s->n && s->v[to].part == s->v[from].part) to++;
    return to;
}

/* s's span i; NULL for an empty side (no pointer arithmetic on NULL). */
static const span *span_at(const spans *s, size_t i) { return s->n ? s->v + i : NULL; }

/* Partition by partition, in order: those of both sides (SPAN_JOIN), of
 * t1 (LEFT) or of either (OUTER); an unpartitioned side's spans in each. */
static int make_pieces(sj_vtab *t, sj_cursor *c) {
    bool pa = t->sides[0].partition != NULL, pb = t->sides[1].partition != NULL;
    const spans *A = &c->rows[0], *B = &c->rows[1];
    if (!pa && !pb) return cut(c, t->kind, 0, A->v, A->n, B->v, B->n);
    size_t i = 0, j = 0;
    int rc = SQLITE_OK;
    while (rc == SQLITE_OK && (!pa || i < A->n) && (!pb || j < B->n)) {
        /* the lower of the two sides' next partitions; an unpartitioned side's spans are in each */
        bool take_a = pa && (!pb || A->v[i].part <= B->v[j].part), take_b = pb && (!pa || B->v[j].part <= A->v[i].part);
        int64_t part = take_a ? A->v[i].part : B->v[j].part;
        size_t ia = !pa ? A->n : take_a ? run_end(A, i, true) : i, ib = !pb ? B->n : take_b ? run_end(B, j, true) : j;
        size_t from_a = pa ? i : 0, from_b = pb ? j : 0;
        rc = cut(c, t->kind, part, span_at(A, from_a), ia - from_a, span_at(B, from_b), ib - from_b);
        if (pa) i = ia;
        if (pb) j = ib;
    }
    /* a side's partitions past the other's last: its spans alone */
    while (rc == SQLITE_OK && pa && pb && i < A->n && t->kind != JOIN_INNER) {
        size_t ia = run_end(A, i, true);
        rc = cut(c, t->kind, A->v[i].part, A->v + i, ia - i, NULL, 0);
        i = ia;
    }
    while (rc == SQLITE_OK && pa && pb && j < B->n && t->kind == JOIN_OUTER) {
        size_t ib = run_end(B, j, true);
        rc = cut(c, t->kind, B->v[j].part, NULL, 0, B->v + j, ib - j);
        j = ib;
    }
    return rc;
}

/* ---- the cursor ---- */

static int sj_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv) {
    (void)idx, (void)idx_str, (void)argc, (void)argv;
    sj_cursor *c = (sj_cursor *)cur;
    sj_vtab *t = (sj_vtab *)cur->pVtab;
    c->at = 0;
    if (c->made) return SQLITE_OK; /* no constraint is used: the same rows at each filter */
    int rc = read_spans(t, &t->sides[0], &c->rows[0]);
    if (!rc) rc = read_spans(t, &t->sides[1], &c->rows[1]);
    if (!rc) rc = make_pieces(t, c);
    c->made = rc == SQLITE_OK;
    if (rc) c->n = 0;
    return rc;
}

static int sj_next(sqlite3_vtab_cursor *cur) {
    ((sj_cursor *)cur)->at++;
    return SQLITE_OK;
}

static int sj_eof(sqlite3_vtab_cursor *cur) {
    sj_cursor *c = (sj_cursor *)cur;
    return c->at >= c->n;
}

/* ts, dur, [the partition,] t1's columns, t2's: a side that does not run there gives NULLs. */
static int sj_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
    sj_cursor *c = (sj_cursor *)cur;
    sj_vtab *t = (sj_vtab *)cur->pVtab;
    const piece *p = &c->pieces[c->at];
    bool partitioned = t->sides[0].partition || t->sides[1].partition;
    if (col == 0) return sqlite3_result_int64(ctx, p->ts), SQLITE_OK;
    if (col == 1) return sqlite3_result_int64(ctx, p->end - p->ts), SQLITE_OK;
    if (col == 2 && partitioned) return sqlite3_result_int64(ctx, p->part), SQLITE_OK;
    int k = col - (partitioned ? 3 : 2), which = k < t->sides[0].n_columns ? 0 : 1;
    if (which == 1) k -= t->sides[0].n_columns;
    const span *sp = which == 0 ? p->a : p->b;
    if (sp && k < t->sides[which].n_columns) sqlite3_result_value(ctx, sp->values[k]);
    return SQLITE_OK;
}

static int sj_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
    *out = (sqlite3_int64)((sj_cursor *)cur)->at;
    return SQLITE_OK;
}

static const sqlite3_module SPAN_JOIN_MODULE = {
    .iVersion = 0,
    .xCreate = sj_connect,
    .xConnect = sj_connect,
    .xBestIndex = sj_best_index,
    .xDisconnect = sj_disconnect,
    .xDestroy = sj_disconnect,
    .xOpen = sj_open,
    .xClose = sj_close,
    .xFilter = sj_filter,
    .xNext = sj_next,
    .xEof = sj_eof,
    .xColumn = sj_column,
    .xRowid = sj_rowid,
};

int sql_register_span_join(sqlite3 *db) {
    static const char *const names[] = {"span_join", "span_left_join", "span_outer_join"};
    int rc = SQLITE_OK;
    for (int k = 0; k < 3 && rc == SQLITE_OK; k++)
        rc = sqlite3_create_module(db, names[k], &SPAN_JOIN_MODULE, (void *)&KINDS[k]);
    return rc;
}
