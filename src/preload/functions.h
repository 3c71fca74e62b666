/* functions.h - `opprof record --functions` inside libopprof_record.so: the
 * functions met (functions.c) and the budget of their calls (budget.c). */
#ifndef OPPROF_PRELOAD_FUNCTIONS_H
#define OPPROF_PRELOAD_FUNCTIONS_H

#include <opprof/opprof.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRELOAD_HIDDEN __attribute__((visibility("hidden")))
#define PRELOAD_TLS __attribute__((tls_model("initial-exec")))

/* Set while this thread names a function or claims calls (a lock is held):
 * its own allocations are not the program's, and a signal handler's
 * instrumented calls meanwhile are not recorded. */
extern PRELOAD_HIDDEN __thread int opprof__preload_inside PRELOAD_TLS;

/* A function met: its call site record and its counts. */
typedef struct function {
    opprof_srcloc loc;
    void *fn;
    uint32_t id;       /* dense, in the order functions are met: its claims' index */
    bool step;         /* the function of --step: each entry begins a step */
    uint64_t calls;    /* atomic: its calls while recording, and the calls claimed and not yet spent */
    uint64_t recorded; /* atomic: of its calls, those recorded, as claims are given back */
    char name[];
} function;

/* The most functions that get an id of their own; past it, one row. */
enum { FUNCTIONS_MAX = (1 << 17) / 4 * 3, FUNCTION_IDS = FUNCTIONS_MAX + 1 };

/* Read OPPROF_RECORD_FUNCTIONS and OPPROF_FUNCTION_CALLS; `step` is
 * OPPROF_STEP_FUNCTION's value. */
PRELOAD_HIDDEN void opprof__functions_setup(const char *step);
/* At exit: the calls past the budget, or that no instrumented function was called. */
PRELOAD_HIDDEN void opprof__functions_said(void);

/* ---- the budget (budget.c) ---- */

enum { CLAIMS_PER_PAGE = 512, CLAIM_PAGES = (FUNCTION_IDS + CLAIMS_PER_PAGE - 1) / CLAIMS_PER_PAGE };

/* A thread's claim on a function's calls. */
typedef struct claim {
    uint32_t left;       /* atomic: claimed and not yet spent */
    uint16_t recordable; /* atomic: of those, below the budget (spent first) */
    uint16_t granted;    /* atomic: the claim's recordable calls */
} claim;

/* This thread's claims, a page of CLAIMS_PER_PAGE functions at a time. */
extern PRELOAD_HIDDEN __thread claim *opprof__claim_pages[CLAIM_PAGES] PRELOAD_TLS;

/* Each function's first `cap` calls while recording are ranges (read once, at start). */
PRELOAD_HIDDEN void opprof__budget_set(uint64_t cap);
PRELOAD_HIDDEN uint64_t opprof__budget_cap(void);
/* A call of f, whose claim is spent: claim more, and spend one. True when it is recordable. */
PRELOAD_HIDDEN bool opprof__budget_claim(function *f);

/* A call of f while recording: true when it is one of the budget's. */
static inline bool opprof__budget_spend(function *f) {
    claim *page = opprof__claim_pages[f->id / CLAIMS_PER_PAGE];
    if (__builtin_expect(page != 0, 1)) {
        claim *c = &page[f->id % CLAIMS_PER_PAGE];
        uint32_t left = c->left;
        if (__builtin_expect(left != 0, 1)) {
            __atomic_store_n(&c->left, left - 1, __ATOMIC_RELAXED);
            uint16_t recordable = c->recordable;
            if (recordable == 0) return false;
            __atomic_store_n(&c->recordable, (uint16_t)(recordable - 1), __ATOMIC_RELAXED);
            return true;
        }
    }
    return opprof__budget_claim(f);
}

/* At exit: each of the n functions' calls (less what the threads' claims
 * hold unspent) and recorded calls (with what they spent of their claims). */
PRELOAD_HIDDEN void opprof__budget_tally(function *const *functions, size_t n, uint64_t *calls, uint64_t *recorded);

#endif
