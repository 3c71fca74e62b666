/* trace_list.c - the traces of a directory, as `opprof diff --stat`, `opprof
 * sql`, `opprof merge` and every command that reads one trace take a directory: its files
 * that name a trace (opprof_is_trace_file_name), its subdirectories' too, a
 * capture written in both forms once (its JSON), in the order of their paths. */
#define _GNU_SOURCE
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct name_list {
    char **v;
    size_t n, cap;
    bool failed;
} name_list;

static void add_name(name_list *l, char *path) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **grown = realloc(l->v, cap * sizeof *grown);
        if (!grown) {
            free(path);
            l->failed = true;
            return;
        }
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = path;
}

enum { MAX_DEPTH = 4 }; /* dir/run-3/rank-0/trace.json and a level more */

/* The traces under dir, its subdirectories too (profile_cpu's runs side by side). */
static int walk(const char *dir, int depth, name_list *out) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "opprof: cannot read the directory %s: %s\n", dir, strerror(errno));
        return TOOL_EXIT_UNREADABLE;
    }
    int rc = 0;
    for (struct dirent *e; !rc && !out->failed && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char *path;
        if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
            out->failed = true;
            break;
        }
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && depth < MAX_DEPTH) {
            rc = walk(path, depth + 1, out);
            free(path);
        } else if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && opprof_is_trace_file_name(e->d_name)) {
            add_name(out, path);
        } else {
            free(path);
        }
    }
    closedir(d);
    return rc;
}

/* The length of a trace path's directory and stem, and whether it is a .pftrace. */
static size_t stem_of(const char *path, bool *perfetto) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return (size_t)(base - path) + opprof_trace_file_stem(base, perfetto);
}

/* A capture written in both forms counts once: its .pftrace goes when its JSON is there. */
static void drop_twins(name_list *l) {
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++) {
        bool perfetto, other;
        size_t stem = stem_of(l->v[i], &perfetto), twin = 0;
        for (size_t j = 0; perfetto && j < l->n && !twin; j++)
            twin = j != i && stem_of(l->v[j], &other) == stem && !other && !strncmp(l->v[i], l->v[j], stem);
        if (twin)
            free(l->v[i]);
        else
            l->v[kept++] = l->v[i];
    }
    l->n = kept;
}

int tool_list_traces(const char *dir, char ***out, size_t *n) {
    name_list l = {0};
    int rc = walk(dir, 0, &l);
    if (!rc && l.failed) {
        fprintf(stderr, "opprof: out of memory listing %s\n", dir);
        rc = TOOL_EXIT_UNREADABLE;
    }
    if (!rc && !l.n) {
        fprintf(stderr,
                "opprof: %s has no trace (*.json, *.pftrace, either .gz, but summary.json, in it or below it)\n", dir);
        rc = TOOL_EXIT_UNREADABLE;
    }
    if (rc) {
        for (size_t i = 0; i < l.n; i++) free(l.v[i]);
        free(l.v);
        return rc;
    }
    drop_twins(&l);
    qsort(l.v, l.n, sizeof *l.v, by_name);
    *out = l.v;
    *n = l.n;
    return 0;
}

void tool_free_list(char **names, size_t n) {
    for (size_t i = 0; names && i < n; i++) free(names[i]);
    free(names);
}

/* "-", as every command names its standard input, is /dev/stdin: a pipe
 * (`zcat trace.json.gz | opprof report -`), read once. */
static const char *named(const char *path) { return strcmp(path, "-") ? path : "/dev/stdin"; }

int tool_trace_of(const char *path, char **owned, const char **trace) {
    struct stat st;
    *owned = NULL;
    path = named(path);
    *trace = path;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    char **names = NULL;
    size_t n = 0;
    int rc = tool_list_traces(path, &names, &n);
    if (rc == 0 && n > 1) {
        fprintf(stderr,
                "opprof: %s: a directory of %zu traces (%s ... %s): name one; opprof sql, merge and diff --stat "
                "take a directory whole\n",
                path, n, names[0], names[n - 1]);
        rc = TOOL_EXIT_UNREADABLE;
    }
    if (rc == 0) *trace = *owned = names[0], names[0] = NULL;
    tool_free_list(names, n);
    return rc;
}

int tool_expand_traces(const char *const *paths, size_t n, char ***out, size_t *n_out) {
    name_list l = {0};
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        struct stat st;
        char **names = NULL, *one = NULL;
        size_t m = 0;
        const char *path = named(paths[k]);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rc = tool_list_traces(path, &names, &m);
        else if ((one = strdup(path)))
            names = &one, m = 1;
        else
            l.failed = true;
        for (size_t i = 0; !rc && i < m; i++) {
            if (l.failed)
                free(names[i]);
            else
                add_name(&l, names[i]); /* its string is l's now (freed there if not) */
        }
        if (names != &one) free(names);
    }
    if (!rc && l.failed) {
        fprintf(stderr, "opprof: out of memory listing the traces\n");
        rc = TOOL_EXIT_UNREADABLE;
    }
    if (rc) {
        tool_free_list(l.v, l.n);
        l = (name_list){0};
    }
    *out = l.v;
    *n_out = l.n;
    return rc;
}
