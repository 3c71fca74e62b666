/* read_args.c - another writer's arguments into args as its trace is read
 * (opprof_read_options.spill_args). They are most of what a Kineto trace
 * carries (about 11 an event) and never stay in memory: each event's become
 * a set of their own at once, which the writer's thread inserts while the
 * read goes on, and the event keeps the set's id
 * (opprof_capture_spilled_set, which follows it through every reordering
 * the read makes). load.c then gives each set to the event that keeps it. Set
 * aside in a file and read back once the capture was read, they made the
 * read a third longer and their inserts wait for it. */
#include "sql.h"

#include <stdlib.h>

void sql_read_args_begin(sql_read_args *r, sql_args *args, sql_ids *ids) {
    sql_read_args_free(r);
    *r = (sql_read_args){.args = args, .ids = ids, .first_set = ids->arg_set};
}

void sql_read_args_free(sql_read_args *r) {
    free(r->dims);
    r->dims = NULL;
    r->n_sets = r->cap = 0;
}

/* An SQLite error as the reader's error code: the read says "arguments set
 * aside: " and its sentence; the caller says what SQLite said (r->rc). */
static int64_t failed(sql_read_args *r, int rc) {
    r->rc = rc;
    return rc == SQLITE_NOMEM ? OPPROF_ENOMEM : (rc & 0xff) == SQLITE_FULL ? OPPROF_ENOSPC : OPPROF_EIO;
}

int64_t sql_read_args_add(void *ctx, int part, const opprof_spilled_arg *a, size_t n) {
    sql_read_args *r = ctx;
    if (part != 0) return failed(r, SQLITE_MISUSE); /* one reader thread: the set ids are its order */
    if (!sql_grow((void **)&r->dims, &r->cap, r->n_sets + 1, 1)) return failed(r, SQLITE_NOMEM);
    int64_t set = r->ids->arg_set;
    bool dims = false;
    int rc = SQLITE_OK;
    for (size_t k = 0; k < n && rc == SQLITE_OK; k++) {
        dims = dims || sql_args_key_gives_dims(a[k].key);
        if (a[k].kind == OPPROF_MARK_ARG_STR)
            rc = sql_args_add(r->args, set, a[k].key, 's', 0, a[k].str, 0);
        else if (a[k].kind == OPPROF_MARK_ARG_DOUBLE)
            rc = sql_args_add(r->args, set, a[k].key, 'r', 0, NULL, a[k].d);
        else
            rc = sql_args_add(r->args, set, a[k].key, 'i', a[k].i, NULL, 0);
    }
    if (rc != SQLITE_OK) return failed(r, rc);
    r->dims[r->n_sets++] = dims;
    r->ids->arg_set++;
    return set;
}
