/* budget.c - the budget of `opprof record --functions`: each function's
 * first `cap` calls while recording are ranges, the rest only counted (a
 * template-heavy program's accessors called 10^8 times would fill memory and
 * disk), so that the functions that run long and seldom are all kept.
 *
 * A thread takes a function's calls CALL_BATCH at a time from the function's
 * shared count (one atomic add) and spends them from claims of its own, so
 * that a call costs no atomic: an atomic add at every call waited for the
 * event just stored to drain (x86's locked instructions do), 20 of the 54 ns
 * a call cost in bench_record, on a line every calling thread shared. A
 * claim's calls below the cap are recordable and spent first. What a thread
 * claimed and did not spend goes back when the thread ends, and its recorded
 * calls go to the function's count; at exit, what the threads alive still
 * hold is counted where it belongs (opprof__budget_tally).
 *
 * The recordable calls spent and held never pass the cap: a claim gets the
 * calls below the cap that no thread spent or holds (the shared count is
 * every call spent or held). So no more than `cap` calls of a function are
 * ranges: exactly `cap` on one thread; on several, a claim held by a thread
 * that calls the function no more can leave fewer. */
#define _GNU_SOURCE
#include "preload/functions.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_calloc(size_t, size_t);
extern void __libc_free(void *);

enum { CALL_BATCH = 64 };

__thread int opprof__preload_inside;
__thread claim *opprof__claim_pages[CLAIM_PAGES];

static uint64_t g_cap = 100000;

void opprof__budget_set(uint64_t cap) { g_cap = cap; }
uint64_t opprof__budget_cap(void) { return g_cap; }

/* ---- the threads that hold claims ----
 * Each is on a list (under g_lock) from its first claim to its end, so that
 * the tally at exit sees the claims of the threads still running. */
typedef struct holder {
    claim **pages; /* the thread's opprof__claim_pages */
    struct holder *next, *prev;
    unsigned exit_rounds;
} holder;

static __thread holder t_holder PRELOAD_TLS;
static __thread bool t_listed PRELOAD_TLS, t_ended PRELOAD_TLS;
static holder *g_holders;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t g_end_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static bool g_end_key_ok;

static void give_back(function *f, claim *c) {
    uint32_t left = c->left;
    uint16_t spent_recordable = (uint16_t)(c->granted - c->recordable);
    if (left) __atomic_sub_fetch(&f->calls, left, __ATOMIC_RELAXED);
    if (spent_recordable) __atomic_add_fetch(&f->recorded, spent_recordable, __ATOMIC_RELAXED);
    __atomic_store_n(&c->left, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->recordable, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->granted, 0, __ATOMIC_RELAXED);
}

static void unlist_locked(holder *h) {
    if (h->prev)
        h->prev->next = h->next;
    else
        g_holders = h->next;
    if (h->next) h->next->prev = h->prev;
    h->next = h->prev = NULL;
}

/* A thread's end: run in the destructors' next-to-last round (as the
 * recorder's), so that what other keys' destructors call before still counts;
 * a call after it is counted alone (t_ended). Its claims are given back to
 * their functions, whose ids are the claims' places. */
static void thread_ended(void *arg) {
    holder *h = arg;
    if (++h->exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS - 1 && pthread_setspecific(g_end_key, h) == 0) return;
    opprof__preload_inside = 1;
    t_ended = true;
    pthread_mutex_lock(&g_lock);
    unlist_locked(h);
    pthread_mutex_unlock(&g_lock);
    opprof__preload_inside = 0;
    for (size_t p = 0; p < CLAIM_PAGES; p++) {
        claim *page = opprof__claim_pages[p];
        if (!page) continue;
        function **owners = (function **)(page + CLAIMS_PER_PAGE);
        for (size_t i = 0; i < CLAIMS_PER_PAGE; i++)
            if (owners[i]) give_back(owners[i], &page[i]);
        opprof__claim_pages[p] = NULL;
        __libc_free(page);
    }
}

/* In a forked child, only the thread that forked is: the others' claims are
 * gone with them, and glibc may give their memory to new threads. */
static void forked_child(void) {
    pthread_mutex_init(&g_lock, NULL);
    g_holders = NULL;
    if (t_listed) {
        t_holder.next = t_holder.prev = NULL;
        g_holders = &t_holder;
    }
}

static void once(void) {
    g_end_key_ok = pthread_key_create(&g_end_key, thread_ended) == 0;
    pthread_atfork(NULL, NULL, forked_child);
}

static void list_thread(void) {
    pthread_once(&g_once, once);
    t_holder.pages = opprof__claim_pages;
    pthread_mutex_lock(&g_lock);
    t_holder.next = g_holders;
    t_holder.prev = NULL;
    if (g_holders) g_holders->prev = &t_holder;
    g_holders = &t_holder;
    pthread_mutex_unlock(&g_lock);
    t_listed = true;
    if (g_end_key_ok) pthread_setspecific(g_end_key, &t_holder);
}

/* ---- claims ---- */

/* A page of claims, and after them the function of each (for the give-back
 * at the thread's end). */
static claim *page_of(uint32_t id) {
    claim **slot = &opprof__claim_pages[id / CLAIMS_PER_PAGE];
    if (!*slot) /* read by the tally at exit */
        __atomic_store_n(slot, __libc_calloc(1, CLAIMS_PER_PAGE * (sizeof(claim) + sizeof(function *))),
                         __ATOMIC_RELEASE);
    return *slot;
}

/* One call counted alone: a thread that ended, or whose claims could not be
 * allocated. */
static bool spend_alone(function *f) {
    uint64_t before = __atomic_fetch_add(&f->calls, 1, __ATOMIC_RELAXED);
    if (before >= g_cap) return false;
    __atomic_add_fetch(&f->recorded, 1, __ATOMIC_RELAXED);
    return true;
}

bool opprof__budget_claim(function *f) {
    if (t_ended) return spend_alone(f);
    opprof__preload_inside = 1;
    if (!t_listed) list_thread();
    claim *page = page_of(f->id);
    opprof__preload_inside = 0;
    if (!page) return spend_alone(f);
    claim *c = &page[f->id % CLAIMS_PER_PAGE];
    ((function **)(page + CLAIMS_PER_PAGE))[f->id % CLAIMS_PER_PAGE] = f;
    give_back(f, c); /* the recorded calls of the claim spent */
    uint64_t before = __atomic_fetch_add(&f->calls, CALL_BATCH, __ATOMIC_RELAXED);
    uint16_t granted = before >= g_cap ? 0 : g_cap - before < CALL_BATCH ? (uint16_t)(g_cap - before) : CALL_BATCH;
    __atomic_store_n(&c->granted, granted, __ATOMIC_RELAXED);
    __atomic_store_n(&c->recordable, granted, __ATOMIC_RELAXED);
    __atomic_store_n(&c->left, CALL_BATCH, __ATOMIC_RELAXED);
    return opprof__budget_spend(f);
}

/* ---- the tally at exit ---- */

/* The lock, unless a thread holds it long (a fork that left it held, a thread
 * stopped inside): the tally then counts the threads' claims as spent. */
static bool lock_briefly(void) {
    for (int i = 0; i < 1000; i++) {
        if (pthread_mutex_trylock(&g_lock) == 0) return true;
        sched_yield();
    }
    return false;
}

void opprof__budget_tally(function *const *functions, size_t n, uint64_t *calls, uint64_t *recorded) {
    for (size_t i = 0; i < n; i++) {
        calls[i] = __atomic_load_n(&functions[i]->calls, __ATOMIC_RELAXED);
        recorded[i] = __atomic_load_n(&functions[i]->recorded, __ATOMIC_RELAXED);
    }
    if (!lock_briefly()) return;
    for (const holder *h = g_holders; h; h = h->next)
        for (size_t i = 0; i < n; i++) {
            uint32_t id = functions[i]->id;
            const claim *page = __atomic_load_n(&h->pages[id / CLAIMS_PER_PAGE], __ATOMIC_RELAXED);
            if (!page) continue;
            const claim *c = &page[id % CLAIMS_PER_PAGE];
            uint32_t left = __atomic_load_n(&c->left, __ATOMIC_RELAXED);
            uint16_t granted = __atomic_load_n(&c->granted, __ATOMIC_RELAXED);
            uint16_t recordable = __atomic_load_n(&c->recordable, __ATOMIC_RELAXED);
            calls[i] -= left < calls[i] ? left : calls[i];
            recorded[i] += granted >= recordable ? (uint64_t)(granted - recordable) : 0;
        }
    pthread_mutex_unlock(&g_lock);
}
