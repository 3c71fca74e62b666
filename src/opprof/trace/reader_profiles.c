/* reader_profiles.c - samples as Chrome's CPU profiles: "Profile" and
 * "ProfileChunk" events (ph "P"), as Chrome's tracing, V8, React Native and
 * opprof (trace/chrome_profile.c) write them. A profile is named by its
 * process and "id" (else its thread); its "Profile" gives the start (its
 * "ts", else its "startTime"), each
 * chunk adds nodes ({"id", "parent" or "children", "callFrame":
 * {"functionName", "url", "lineNumber"}}), "samples" (node ids) and
 * "timeDeltas" (microseconds, each from the sample before; the first from
 * startTime). At the end each sample's frames are its node's chain to the
 * root, without the root "(root)" and without opprof's range nodes
 * ("opprof_range": the capture's ranges, found again by time).
 *
 * An event's args.data is read before its name and phase may be known (the
 * keys come in any order): it is kept as pending, then taken by the
 * event's phase "P", or dropped. */
#include "trace/reader_state.h"

#include <stdio.h>
#include <string.h>

enum { MAX_DEPTH = 4096 };

typedef struct pnode {
    int64_t id, parent;  /* parent 0: none */
    char *name, *source; /* source: "file:line", or NULL */
    bool range;
} pnode;

typedef struct chunk { /* one event's args.data, or a whole profile */
    pnode *nodes;
    size_t n_nodes, cap_nodes;
    int64_t (*edges)[2]; /* "children": (parent, child) */
    size_t n_edges, cap_edges;
    int64_t *samples, *deltas;
    size_t n_samples, cap_samples, n_deltas, cap_deltas;
    int64_t start_ns;
    bool has_start;
    const char *bad; /* why it cannot be read, said if it is a profile's */
} chunk;

typedef struct profile {
    int64_t pid, key; /* key: the event's id, or its tid */
    int64_t tid;
    chunk all;
    bool declared; /* its "Profile" event was read */
} profile;

struct profile_reader {
    chunk pending;
    bool pending_used;
    profile *profiles;
    size_t n, cap;
    opprof__index index; /* (pid, key) -> profile: a trace may hold thousands */
};

static void chunk_free(chunk *c) {
    for (size_t i = 0; i < c->n_nodes; i++) {
        opprof__free(c->nodes[i].name);
        opprof__free(c->nodes[i].source);
    }
    opprof__free(c->nodes);
    opprof__free(c->edges);
    opprof__free(c->samples);
    opprof__free(c->deltas);
    memset(c, 0, sizeof *c);
}

static char *copy_text(const char *s, size_t n) {
    char *t = opprof__alloc(n + 1);
    if (t) {
        memcpy(t, s, n);
        t[n] = '\0';
    }
    return t;
}

static int nomem(parser *p) { return opprof__reader_no_memory(p, "CPU profiles"); }

/* A whole number, or a time in microseconds (to ns); 1 when it is not one (skipped). */
static int number(parser *p, int64_t *out, bool micros) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c != '-' && (c < '0' || c > '9')) return opprof__json_skip(&p->lx) ? OPPROF_EFORMAT : 1;
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    if (micros ? !v.ns_ok || !opprof__time_in_range(v.ns) : !v.is_int) return 1;
    *out = micros ? v.ns : v.as_int;
    return 0;
}

/* ---- one node ---- */

typedef struct node_ctx {
    chunk *c;
    pnode *n;
    int64_t line;
    char *url;
} node_ctx;

static int on_call_frame_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    node_ctx *x = ctx;
    bool name = KEY_IS(k, n, "functionName"), url = KEY_IS(k, n, "url");
    if (KEY_IS(k, n, "lineNumber")) {
        int rc = number(p, &x->line, false);
        return rc < 0 ? rc : 0;
    }
    if (!name && !url) return opprof__json_skip(&p->lx);
    if (opprof__json_skip_ws(&p->lx) != '"')
        return x->c->bad = "a callFrame's functionName or url is not a string", opprof__json_skip(&p->lx);
    if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
    char **to = name ? &x->n->name : &x->url;
    opprof__free(*to);
    return (*to = copy_text(p->lx.s, p->lx.s_len)) ? 0 : nomem(p);
}

static int on_child(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    node_ctx *x = ctx;
    (void)index;
    int64_t id;
    int rc = number(p, &id, false);
    if (rc) return rc < 0 ? rc : (x->c->bad = "a node's children are not whole numbers", 0);
    if (opprof__grow((void **)&x->c->edges, &x->c->cap_edges, x->c->n_edges + 1, sizeof *x->c->edges)) return nomem(p);
    x->c->edges[x->c->n_edges][0] = x->n->id;
    x->c->edges[x->c->n_edges++][1] = id;
    return 0;
}

static int on_node_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    node_ctx *x = ctx;
    int c = opprof__json_skip_ws(&p->lx);
    if (KEY_IS(k, n, "callFrame") && c == '{') return opprof__json_object(&p->lx, on_call_frame_key, x);
    if (KEY_IS(k, n, "children") && c == '[') return opprof__json_array(&p->lx, on_child, x);
    int64_t v = 0;
    int rc = KEY_IS(k, n, "id") || KEY_IS(k, n, "parent") || KEY_IS(k, n, "opprof_range") ? number(p, &v, false)
                                                                                          : opprof__json_skip(&p->lx);
    if (rc < 0) return rc;
    if (rc || !(KEY_IS(k, n, "id") || KEY_IS(k, n, "parent") || KEY_IS(k, n, "opprof_range"))) return 0;
    if (k[0] == 'i') x->n->id = v;
    if (k[0] == 'p') x->n->parent = v;
    if (k[0] == 'o') x->n->range = v != 0;
    return 0;
}

static int on_node(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    chunk *c = ctx;
    (void)index;
    if (opprof__json_skip_ws(&p->lx) != '{') return c->bad = "a node is not an object", opprof__json_skip(&p->lx);
    if (opprof__grow((void **)&c->nodes, &c->cap_nodes, c->n_nodes + 1, sizeof *c->nodes)) return nomem(p);
    pnode *nd = &c->nodes[c->n_nodes++];
    *nd = (pnode){0};
    node_ctx x = {c, nd, -1, NULL};
    /* children seen before the node's id: their parent is fixed below */
    size_t edges = c->n_edges;
    int rc = opprof__json_object(&p->lx, on_node_key, &x);
    for (size_t i = edges; i < c->n_edges; i++) c->edges[i][0] = nd->id;
    if (!rc && x.url && x.url[0] && x.line >= 0) {
        char line[24];
        int len = snprintf(line, sizeof line, ":%lld", (long long)x.line + 1);
        size_t ulen = strlen(x.url);
        if (!(nd->source = opprof__alloc(ulen + (size_t)len + 1))) rc = nomem(p);
        if (!rc) {
            memcpy(nd->source, x.url, ulen);
            memcpy(nd->source + ulen, line, (size_t)len + 1);
        }
    }
    opprof__free(x.url);
    if (!rc && nd->id <= 0) c->bad = "a node has no positive \"id\"";
    if (!rc && !nd->name) c->bad = "a node's callFrame has no functionName";
    return rc;
}

/* ---- samples, deltas, and the objects that hold them ---- */

static int on_number(parser *p, chunk *c, int64_t **a, size_t *n, size_t *cap, bool micros, const char *what) {
    int64_t v;
    int rc = number(p, &v, micros);
    if (rc) return rc < 0 ? rc : (c->bad = what, 0);
    if (opprof__grow((void **)a, cap, *n + 1, sizeof **a)) return nomem(p);
    (*a)[(*n)++] = v;
    return 0;
}

static int on_sample_id(opprof__json *lx, void *ctx, int index) {
    chunk *c = ctx;
    (void)index;
    return on_number((parser *)lx, c, &c->samples, &c->n_samples, &c->cap_samples, false, "samples are not node ids");
}

static int on_delta(opprof__json *lx, void *ctx, int index) {
    chunk *c = ctx;
    (void)index;
    return on_number((parser *)lx, c, &c->deltas, &c->n_deltas, &c->cap_deltas, true,
                     "timeDeltas are not times in microseconds");
}

/* The keys of args.data, and of its "cpuProfile" (they may be in either). */
static int on_data_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    chunk *c = ctx;
    int ch = opprof__json_skip_ws(&p->lx);
    if (KEY_IS(k, n, "cpuProfile") && ch == '{') return opprof__json_object(&p->lx, on_data_key, c);
    if (KEY_IS(k, n, "nodes") && ch == '[') return opprof__json_array(&p->lx, on_node, c);
    if (KEY_IS(k, n, "samples") && ch == '[') return opprof__json_array(&p->lx, on_sample_id, c);
    if (KEY_IS(k, n, "timeDeltas") && ch == '[') return opprof__json_array(&p->lx, on_delta, c);
    if (KEY_IS(k, n, "startTime")) {
        int rc = number(p, &c->start_ns, true);
        if (!rc) c->has_start = true;
        return rc < 0 ? rc : 0;
    }
    return opprof__json_skip(&p->lx);
}

int opprof__reader_profile_data(parser *p) {
    if (!p->profiles && !(p->profiles = opprof__calloc(1, sizeof *p->profiles))) return nomem(p);
    struct profile_reader *r = p->profiles;
    chunk_free(&r->pending);
    r->pending_used = true;
    return opprof__json_object(&p->lx, on_data_key, &r->pending);
}

bool opprof__reader_profiles_seen(const parser *p) { return p->profiles && p->profiles->n; }

void opprof__reader_profile_drop(parser *p) {
    if (p->profiles && p->profiles->pending_used) {
        chunk_free(&p->profiles->pending);
        p->profiles->pending_used = false;
    }
}

/* ---- the events ---- */

static OPPROF__HASH uint64_t profile_hash(int64_t pid, int64_t key) {
    uint64_t h = ((uint64_t)pid * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)key * 0xC2B2AE3D27D4EB4Full);
    return h ^ (h >> 31);
}

static uint64_t profile_hash_of(const void *ctx, uint32_t item) {
    const profile *pf = &((const profile *)ctx)[item];
    return profile_hash(pf->pid, pf->key);
}

static bool profile_equal(const void *ctx, uint32_t item, const void *key) {
    const profile *pf = &((const profile *)ctx)[item], *k = key;
    return pf->pid == k->pid && pf->key == k->key;
}

static profile *profile_of(parser *p, const event *e) {
    struct profile_reader *r = p->profiles;
    profile want = {.pid = e->pid, .key = e->has_id ? (int64_t)e->id : e->tid, .tid = e->tid};
    size_t slot;
    int64_t found = opprof__index_lookup(&r->index, r->n, profile_hash_of, profile_equal, r->profiles,
                                         profile_hash(want.pid, want.key), &want, &slot);
    if (found) return found < 0 ? NULL : &r->profiles[found - 1];
    if (opprof__grow((void **)&r->profiles, &r->cap, r->n + 1, sizeof *r->profiles)) return NULL;
    r->profiles[r->n] = want;
    r->index.slots[slot] = (uint32_t)++r->n;
    return &r->profiles[r->n - 1];
}

/* Append src's arrays to dst's (src's are moved: src is left empty). */
static int absorb(chunk *dst, chunk *src) {
#define MOVE(arr, n, cap)                                                                                         \
    if (src->n) {                                                                                                 \
        if (opprof__grow((void **)&dst->arr, &dst->cap, dst->n + src->n, sizeof *dst->arr)) return OPPROF_ENOMEM; \
        memcpy(dst->arr + dst->n, src->arr, src->n * sizeof *src->arr);                                           \
        dst->n += src->n;                                                                                         \
        src->n = 0;                                                                                               \
    }
    MOVE(nodes, n_nodes, cap_nodes)
    MOVE(edges, n_edges, cap_edges)
    MOVE(samples, n_samples, cap_samples)
    MOVE(deltas, n_deltas, cap_deltas)
#undef MOVE
    if (src->has_start && !dst->has_start) dst->start_ns = src->start_ns, dst->has_start = true;
    return 0;
}

int opprof__reader_take_profile(parser *p, event *e, int64_t offset) {
    bool head = (e->have & HAS_NAME) && strcmp(e->name, "Profile") == 0;
    bool part = (e->have & HAS_NAME) && strcmp(e->name, "ProfileChunk") == 0;
    struct profile_reader *r = p->profiles;
    if (!head && !part) {
        p->unused[UNUSED_OTHER_PHASE]++;
        return 0;
    }
    if (!r || !r->pending_used) {
        opprof__reader_problem_at(p, offset, "%s event without \"args\": {\"data\": ...}", e->name);
        return 0;
    }
    if (r->pending.bad) return FAIL(p, "%s event: %s", e->name, r->pending.bad);
    profile *pf = profile_of(p, e);
    if (!pf || absorb(&pf->all, &r->pending)) return nomem(p);
    if (head) {
        pf->tid = e->tid; /* a profile is its "Profile" event's thread's (Chrome samples from another) */
        pf->declared = true;
        /* its start: the event's "ts", the same time as its startTime in Chrome's traces and
         * opprof's, and the one that opprof merge moves onto the merged clock */
        if (e->have & HAS_TS) pf->all.start_ns = e->ts, pf->all.has_start = true;
    }
    opprof__reader_profile_drop(p);
    return 0;
}

/* ---- the end ---- */

static OPPROF__HASH uint64_t id_hash(int64_t id) {
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static uint64_t node_hash_of(const void *ctx, uint32_t item) { return id_hash(((const pnode *)ctx)[item].id); }

static bool node_equal(const void *ctx, uint32_t item, const void *key) {
    return ((const pnode *)ctx)[item].id == *(const int64_t *)key;
}

/* The node of id, or NULL (ix: index_nodes'). */
static pnode *find(const opprof__index *ix, chunk *c, int64_t id) {
    if (!ix->size) return NULL;
    size_t slot = opprof__index_probe(ix, id_hash(id), &id, node_equal, c->nodes);
    return ix->slots[slot] ? &c->nodes[ix->slots[slot] - 1] : NULL;
}

static int index_nodes(parser *p, chunk *c, opprof__index *ix) {
    for (size_t i = 0; i < c->n_nodes; i++) {
        size_t slot;
        int64_t found = opprof__index_lookup(ix, i, node_hash_of, node_equal, c->nodes, id_hash(c->nodes[i].id),
                                             &c->nodes[i].id, &slot);
        if (found < 0) return nomem(p);
        if (found) return FAIL(p, "a CPU profile gives node %lld twice", (long long)c->nodes[i].id);
        ix->slots[slot] = (uint32_t)i + 1;
    }
    for (size_t i = 0; i < c->n_edges; i++) {
        pnode *child = find(ix, c, c->edges[i][1]);
        if (child) child->parent = c->edges[i][0];
    }
    return 0;
}

/* A node's stack, interned once (a profile samples the same nodes many
 * times): each node's name and source interned once, each sampled node's
 * stack once, so that a sample costs a lookup, not its depth times its
 * names' lengths. UINT32_MAX in *stack: no frame (the root, ranges only). */
typedef struct node_memo {
    uint32_t *name, *source, *stack;           /* per node; UINT32_MAX - 1: not yet */
    uint32_t ids[MAX_DEPTH], where[MAX_DEPTH]; /* a stack being interned */
} node_memo;

enum { NOT_YET = UINT32_MAX - 1 };

static int node_names(parser *p, chunk *c, node_memo *m, size_t k) {
    if (m->name[k] != NOT_YET) return 0;
    const pnode *nd = &c->nodes[k];
    if (opprof__capture_intern(p->cap, nd->name, strlen(nd->name), &m->name[k])) return nomem(p);
    m->source[k] = UINT32_MAX;
    if (nd->source && opprof__capture_intern(p->cap, nd->source, strlen(nd->source), &m->source[k])) return nomem(p);
    return 0;
}

static int stack_of(parser *p, chunk *c, opprof__index *ix, node_memo *m, pnode *leaf, uint32_t *stack) {
    size_t k = (size_t)(leaf - c->nodes);
    if (m->stack[k] != NOT_YET) return *stack = m->stack[k], 0;
    uint32_t *ids = m->ids, *where = m->where;
    size_t n = 0, walked = 0;
    for (pnode *nd = leaf; nd; nd = nd->parent ? find(ix, c, nd->parent) : NULL) {
        if (walked++ == MAX_DEPTH) /* ranges count too: a loop of them would never end */
            return FAIL(p, "a CPU profile's stack is deeper than %d nodes, or its nodes loop", MAX_DEPTH);
        if (nd->range || (!nd->parent && strcmp(nd->name, "(root)") == 0)) continue;
        size_t j = (size_t)(nd - c->nodes);
        if (node_names(p, c, m, j)) return OPPROF_EFORMAT;
        ids[n] = m->name[j];
        where[n++] = m->source[j];
    }
    if (opprof__capture_intern_stack(p->cap, ids, where, n, &m->stack[k])) return nomem(p);
    return *stack = m->stack[k], 0;
}

static int add_samples(parser *p, profile *pf, opprof__index *ix) {
    chunk *c = &pf->all;
    uint32_t thread;
    if (opprof__reader_thread_of(p, pf->pid, pf->tid, &thread)) return OPPROF_EFORMAT;
    node_memo *m = opprof__alloc(sizeof *m);
    if (!m) return nomem(p);
    m->name = opprof__alloc((c->n_nodes + 1) * sizeof *m->name);
    m->source = opprof__alloc((c->n_nodes + 1) * sizeof *m->source);
    m->stack = opprof__alloc((c->n_nodes + 1) * sizeof *m->stack);
    int rc = m->name && m->source && m->stack ? 0 : nomem(p);
    for (size_t k = 0; !rc && k < c->n_nodes; k++) m->name[k] = m->stack[k] = NOT_YET;
    int64_t t = c->start_ns;
    size_t unknown = 0; /* samples whose node the profile does not give: a truncated profile */
    for (size_t j = 0; !rc && j < c->n_samples; j++) {
        if (j < c->n_deltas) t += c->deltas[j];
        if (!opprof__time_in_range(t)) {
            rc = FAIL(p, "a CPU profile's sample %zu is at a time out of range", j);
            break;
        }
        pnode *leaf = find(ix, c, c->samples[j]);
        uint32_t stack = 0;
        if (!leaf) {
            unknown++;
            continue;
        }
        if ((rc = stack_of(p, c, ix, m, leaf, &stack))) break;
        if (t < p->min_ts) p->min_ts = t;
        if (t > p->max_ts) p->max_ts = t;
        if (opprof__capture_add_sample_stack(p->cap, thread, t, stack)) rc = nomem(p);
    }
    opprof__free(m->name);
    opprof__free(m->source);
    opprof__free(m->stack);
    opprof__free(m);
    if (!rc && unknown &&
        opprof__capture_warnf(p->cap,
                              "a CPU profile (pid %lld, id %lld): %zu of its %zu samples name a "
                              "node that it does not give (a profile cut short): left out",
                              (long long)pf->pid, (long long)pf->key, unknown, c->n_samples))
        return nomem(p);
    return rc;
}

int opprof__reader_profiles_finish(parser *p) {
    struct profile_reader *r = p->profiles;
    int rc = 0;
    for (size_t i = 0; r && !rc && i < r->n; i++) {
        profile *pf = &r->profiles[i];
        if (!pf->declared || !pf->all.has_start) {
            opprof__capture_warnf(p->cap,
                                  "a CPU profile (pid %lld, id %lld) has chunks but no \"Profile\" event with "
                                  "its startTime: its %zu samples are left out",
                                  (long long)pf->pid, (long long)pf->key, pf->all.n_samples);
            continue;
        }
        opprof__index ix = {0};
        rc = index_nodes(p, &pf->all, &ix);
        if (!rc) rc = add_samples(p, pf, &ix);
        opprof__index_free(&ix);
    }
    return rc;
}

void opprof__reader_profiles_free(parser *p) {
    struct profile_reader *r = p->profiles;
    if (!r) return;
    chunk_free(&r->pending);
    for (size_t i = 0; i < r->n; i++) chunk_free(&r->profiles[i].all);
    opprof__free(r->profiles);
    opprof__index_free(&r->index);
    opprof__free(r);
    p->profiles = NULL;
}
