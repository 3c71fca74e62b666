/* reader_args.c - an event's arguments kept for its marks: as many as it
 * gives, each key and string whole in one buffer of the event; with
 * keep_marks (`opprof sql`) another writer's arguments flattened as
 * Perfetto's JSON importer flattens them: an object's members under
 * "KEY.MEMBER", an array's items under "KEY[i]", null skipped, true and
 * false as 1 and 0. */
#define _GNU_SOURCE
#include "trace/reader_state.h"

#include <stdio.h>
#include <string.h>

/* `n` bytes and a NUL at the end of the event's text: their offset, or -1. */
static int64_t put_text(event_args *a, const char *s, size_t n) {
    if (a->text_len + n + 1 > UINT32_MAX) return -1; /* offsets are 32 bits: 4 GiB of one event's arguments */
    if (opprof__grow((void **)&a->text, &a->text_cap, a->text_len + n + 1, 1)) return -1;
    size_t at = a->text_len;
    memcpy(a->text + at, s, n);
    a->text[at + n] = '\0';
    a->text_len += n + 1;
    return (int64_t)at;
}

event_arg *opprof__reader_arg_add(event_args *a, const char *key, size_t key_len, uint8_t kind, const char *str,
                                  size_t str_len) {
    if (a->n == a->cap) {
        size_t cap = (size_t)a->cap;
        if (a->n == INT32_MAX || opprof__grow((void **)&a->at, &cap, (size_t)a->n + 1, sizeof *a->at)) return NULL;
        a->cap = cap > INT32_MAX ? INT32_MAX : (int)cap;
    }
    int64_t k = put_text(a, key, key_len), s = kind == OPPROF_MARK_ARG_STR ? put_text(a, str, str_len) : 0;
    if (k < 0 || s < 0) return NULL;
    event_arg *arg = &a->at[a->n++];
    *arg = (event_arg){.key = (uint32_t)k, .str = (uint32_t)s, .kind = kind};
    return arg;
}

int opprof__reader_args_copy(event_args *to, const event_args *from) {
    *to = (event_args){0};
    if (!from->n) return 0;
    size_t arrays = (size_t)from->n * sizeof *from->at;
    if (!(to->at = opprof__alloc(arrays + from->text_len))) return OPPROF_ENOMEM;
    memcpy(to->at, from->at, arrays);
    to->text = (char *)to->at + arrays; /* one block, freed through `at` */
    memcpy(to->text, from->text, from->text_len);
    to->n = to->cap = from->n;
    to->text_len = to->text_cap = from->text_len;
    return 0;
}

/* ---- flattening ---- */

/* The key being built, in the event's scratch: its first `len` bytes are the
 * prefix of what is read now. */
typedef struct flat_frame {
    event *e;
    size_t len;
    int index; /* an array's next index: its items that are not null */
} flat_frame;

static int flat_value(parser *p, event *e, size_t len, bool top);
static int arg_scalar(parser *p, event *e, const char *key, size_t key_len, bool top);

static int key_append(event *e, size_t len, const char *s, size_t n) {
    if (opprof__grow((void **)&e->flat_key, &e->flat_key_cap, len + n + 1, 1)) return OPPROF_ENOMEM;
    memcpy(e->flat_key + len, s, n);
    e->flat_key[len + n] = '\0';
    return 0;
}

size_t opprof__reader_index_key(char *key, const char *prefix, int i, int j) {
    size_t n = strlen(prefix);
    memcpy(key, prefix, n);
    for (int k = 0, v = i; k < 2 && v >= 0; k++, v = j) {
        char text[OPPROF__NUMBER_TEXT], *end = text + sizeof text, *at = opprof__int_text(v, end);
        key[n++] = '[';
        memcpy(key + n, at, (size_t)(end - at));
        n += (size_t)(end - at);
        key[n++] = ']';
    }
    key[n] = '\0';
    return n;
}

static int on_flat_item(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    flat_frame *f = ctx;
    (void)index;
    if (opprof__json_skip_ws(&p->lx) == 'n') return opprof__json_skip(&p->lx); /* null: no item */
    char at[48];
    size_t n = opprof__reader_index_key(at, "", f->index++, -1);
    if (key_append(f->e, f->len, at, n)) return opprof__reader_no_memory(p, "args");
    return flat_value(p, f->e, f->len + n, false);
}

static int on_flat_member(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    flat_frame *f = ctx;
    size_t klen = strnlen(k, n);
    if (key_append(f->e, f->len, ".", 1) || key_append(f->e, f->len + 1, k, klen))
        return opprof__reader_no_memory(p, "args");
    return flat_value(p, f->e, f->len + 1 + klen, false);
}

/* The value at the lexer, under the key e->flat_key[0, len); top: a member of
 * "args" itself. */
static int flat_value(parser *p, event *e, size_t len, bool top) {
    int c = opprof__json_skip_ws(&p->lx);
    flat_frame f = {e, len, 0};
    if (c == '{') return opprof__json_object(&p->lx, on_flat_member, &f);
    if (c == '[') return opprof__json_array(&p->lx, on_flat_item, &f);
    if (c == 'n') return opprof__json_skip(&p->lx);
    return arg_scalar(p, e, e->flat_key, len, top);
}

event_arg *opprof__reader_arg_number(event_args *a, const char *key, size_t key_len, const opprof__json_number *v) {
    event_arg *arg =
        opprof__reader_arg_add(a, key, key_len, v->is_int ? OPPROF_MARK_ARG_INT : OPPROF_MARK_ARG_DOUBLE, NULL, 0);
    if (arg) {
        arg->i = v->as_int;
        arg->d = opprof__json_number_value(v);
    }
    return arg;
}

/* A string, number or true/false at the lexer as an argument KEY (null skipped). */
static int arg_scalar(parser *p, event *e, const char *key, size_t key_len, bool top) {
    int c = opprof__json_skip_ws(&p->lx);
    event_arg *a;
    if (c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        a = opprof__reader_arg_add(&e->args, key, key_len, OPPROF_MARK_ARG_STR, p->lx.s, p->lx.s_len);
    } else if (c == 't' || c == 'f') {
        if (opprof__json_skip(&p->lx)) return OPPROF_EFORMAT;
        if ((a = opprof__reader_arg_add(&e->args, key, key_len, OPPROF_MARK_ARG_INT, NULL, 0))) {
            a->i = c == 't';
            a->flattened = true;
        }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        opprof__json_number v;
        if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
        a = opprof__reader_arg_number(&e->args, key, key_len, &v);
    } else {
        return opprof__json_skip(&p->lx); /* null, or what the lexer refuses */
    }
    if (!a) return opprof__reader_no_memory(p, "args");
    a->flattened |= !top;
    return 0;
}

int opprof__reader_arg_flat(parser *p, event *e, const char *key, size_t key_len) {
    if (key_append(e, 0, key, key_len)) return opprof__reader_no_memory(p, "args");
    return flat_value(p, e, key_len, true);
}
