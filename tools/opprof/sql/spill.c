/* spill.c - another writer's arguments set aside while its trace is read
 * (opprof_read_options.spill_args), so that `opprof sql --db` never holds a
 * trace's arguments in memory: they are most of what a Kineto trace carries
 * (about 11 an event). Each reader thread appends to a file of its own, an
 * unnamed file beside the database; the loader reads them back once the
 * capture says which event each record is of.
 *
 * A record: its argument count (u32), then each argument: its kind (u8),
 * key length (u32) and key, then an int64 (OPPROF_MARK_ARG_INT), a double
 * (_DOUBLE) or a length (u32) and the string (_STR). Host byte order: the
 * file lives only as long as the load. */
#define _GNU_SOURCE
#include "sql.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SPILL_BUFFER = 1 << 20 };

/* An unnamed file in dir: O_TMPFILE, else a named one unlinked at once;
 * written and read through `buffer` (SPILL_BUFFER bytes: glibc takes
 * setvbuf's size only with a buffer given, and its own of 4 KiB made a
 * 194 MB trace's 149 MB of arguments 36,341 writes, and as many reads). */
static FILE *unnamed_file(const char *dir, char *buffer) {
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        char path[4200];
        snprintf(path, sizeof path, "%s/.opprof-sql-args.tmp.XXXXXX", dir);
        fd = mkstemp(path);
        if (fd >= 0) unlink(path);
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
    if (!f && fd >= 0) close(fd);
    if (f) setvbuf(f, buffer, _IOFBF, SPILL_BUFFER);
    return f;
}

int sql_spill_open(sql_spill *s, const char *dir) {
    *s = (sql_spill){0};
    for (int k = 0; k < 2; k++) {
        s->buffer[k] = malloc(SPILL_BUFFER);
        if (!s->buffer[k] || !(s->part[k] = unnamed_file(dir, s->buffer[k]))) {
            int code = s->buffer[k] ? -errno : -ENOMEM;
            sql_spill_close(s);
            return code;
        }
    }
    return 0;
}

void sql_spill_close(sql_spill *s) {
    for (int k = 0; k < 2; k++) {
        if (s->part[k]) fclose(s->part[k]);
        free(s->buffer[k]); /* after its file's last flush */
    }
    *s = (sql_spill){0};
}

/* Each part's file is one reader thread's, then the loader's: no lock a call. */
static bool put(FILE *f, const void *data, size_t n) { return fwrite_unlocked(data, 1, n, f) == n; }

static bool get(FILE *f, void *data, size_t n) { return fread_unlocked(data, 1, n, f) == n; }

static bool put_text(FILE *f, const char *text) {
    size_t n = text ? strlen(text) : 0;
    uint32_t len = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    return put(f, &len, sizeof len) && put(f, text ? text : "", len);
}

int64_t sql_spill_args(void *spill, int part, const opprof_spilled_arg *args, size_t n) {
    sql_spill *s = spill;
    FILE *f = s->part[part != 0];
    uint32_t count = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    bool ok = put(f, &count, sizeof count);
    for (uint32_t k = 0; ok && k < count; k++) {
        uint8_t kind = (uint8_t)args[k].kind;
        ok = put(f, &kind, 1) && put_text(f, args[k].key);
        if (ok && kind == OPPROF_MARK_ARG_STR) ok = put_text(f, args[k].str);
        if (ok && kind == OPPROF_MARK_ARG_DOUBLE) ok = put(f, &args[k].d, sizeof args[k].d);
        if (ok && kind != OPPROF_MARK_ARG_STR && kind != OPPROF_MARK_ARG_DOUBLE) ok = put(f, &args[k].i, 8);
    }
    if (!ok) return errno ? -errno : OPPROF_ENOSPC;
    return (int64_t)(s->records[part != 0]++ * 2 + (part != 0));
}

/* One record read back: its text in `text`, its arguments in `at`. */
typedef struct record {
    opprof_spilled_arg *at;
    size_t n, cap;
    char *text;
    size_t len, cap_text;
    struct text_at {
        size_t key, str;
    } * offset; /* by argument: its key's and string's offsets into text */
    size_t cap_offset;
} record;

/* A length-prefixed string into r->text; its offset in *at. */
static bool get_text(FILE *f, record *r, size_t *at) {
    uint32_t len;
    if (!get(f, &len, sizeof len) || !sql_grow((void **)&r->text, &r->cap_text, r->len + len + 1, 1)) return false;
    if (len && !get(f, r->text + r->len, len)) return false;
    *at = r->len;
    r->text[r->len + len] = '\0';
    r->len += len + 1;
    return true;
}

static bool get_record(FILE *f, record *r, uint32_t count) {
    if (!sql_grow((void **)&r->at, &r->cap, count, sizeof *r->at) ||
        !sql_grow((void **)&r->offset, &r->cap_offset, count, sizeof *r->offset))
        return false;
    r->len = 0;
    for (uint32_t k = 0; k < count; k++) {
        uint8_t kind;
        opprof_spilled_arg *a = &r->at[k];
        *a = (opprof_spilled_arg){.kind = 0};
        if (!get(f, &kind, 1) || !get_text(f, r, &r->offset[k].key)) return false;
        a->kind = kind;
        if (kind == OPPROF_MARK_ARG_STR && !get_text(f, r, &r->offset[k].str)) return false;
        if (kind == OPPROF_MARK_ARG_DOUBLE && !get(f, &a->d, sizeof a->d)) return false;
        if (kind != OPPROF_MARK_ARG_STR && kind != OPPROF_MARK_ARG_DOUBLE && !get(f, &a->i, 8)) return false;
    }
    for (uint32_t k = 0; k < count; k++) { /* the text no longer moves */
        r->at[k].key = r->text + r->offset[k].key;
        r->at[k].str = r->at[k].kind == OPPROF_MARK_ARG_STR ? r->text + r->offset[k].str : NULL;
    }
    r->n = count;
    return true;
}

int sql_spill_each(sql_spill *s, sql_spill_fn fn, void *ctx) {
    record r = {0};
    int rc = SQLITE_OK;
    for (int part = 0; part < 2 && rc == SQLITE_OK; part++) {
        FILE *f = s->part[part];
        if (!f) continue;
        if (fflush(f) || fseek(f, 0, SEEK_SET)) rc = SQLITE_IOERR;
        for (size_t k = 0; k < s->records[part] && rc == SQLITE_OK; k++) {
            uint32_t count;
            if (!get(f, &count, sizeof count) || !get_record(f, &r, count))
                rc = ferror(f) || feof(f) ? SQLITE_IOERR : SQLITE_NOMEM;
            else
                rc = fn(ctx, (int64_t)(k * 2 + (size_t)part), r.at, r.n);
        }
    }
    free(r.at);
    free(r.text);
    free(r.offset);
    return rc;
}

int sql_spill_reset(sql_spill *s) {
    for (int k = 0; k < 2; k++) {
        s->records[k] = 0;
        if (s->part[k] && (fflush(s->part[k]) || ftruncate(fileno(s->part[k]), 0) || fseek(s->part[k], 0, SEEK_SET)))
            return -errno;
    }
    return 0;
}
