/* record/flight.h - the flight recorder's state, shared by its ring and
 * rules (record/flight.c) and its saver thread (record/flight_save.c). Seen
 * by the recording layer only; the session uses record/record.h. */
#ifndef OPPROF_FLIGHT_H
#define OPPROF_FLIGHT_H

#include "record/record.h"

#include <pthread.h>

enum {
    OPPROF__FLIGHT_PENDING = 64,       /* saves waiting for their `after` steps */
    OPPROF__FLIGHT_QUEUED = 64,        /* saves waiting for the saver: past it, the least slow goes */
    OPPROF__FLIGHT_DROPPED_BATCH = 32, /* steps dropped before the saver is woken to free them */
    OPPROF__FLIGHT_DROPPED_MAX = 256   /* steps dropped and not yet freed, at most: past it, a
                                        * saver that lags behind (a slow save, a slow free) is
                                        * not waited for, the dropping thread frees them */
};

/* One step's capture, shared by the ring and the saves that hold it. */
typedef struct opprof__flight_slot {
    opprof_capture *cap;
    int64_t step_num;
    uint64_t start_ticks;     /* its window's start: the offset between two steps */
    int64_t start_ns, end_ns; /* by the rules' clock */
    size_t bytes;
    int refs;                                 /* the ring and the saves that hold it; under the recorder's lock */
    struct opprof__flight_slot *next_dropped; /* on the saver's list of steps to free */
} opprof__flight_slot;

/* The rule: a long run's memory is bounded by what the ring and the saves
 * keep, never by how long it runs (issue 50). */

/* Free a list of dropped steps (next_dropped); no lock needed: nobody else has them. */
OPPROF__HIDDEN void opprof__flight_free_dropped_list(struct opprof__flight_slot *first);

/* A save queued for the saver thread. */
typedef struct opprof__flight_save {
    struct opprof__flight_save *next;
    opprof_flight_info info;
    int count;
    opprof__flight_slot *steps[]; /* oldest first */
} opprof__flight_save;

typedef struct opprof__flight_pending {
    opprof_flight_info info; /* a trigger waiting for its `after` steps */
} opprof__flight_pending;

struct opprof__flight {
    opprof_flight cfg;
    opprof__flight_sink sink;
    char *range_name;
    pthread_mutex_t lock;       /* everything below */
    pthread_cond_t wake;        /* the saver: a save is queued, or stop */
    opprof__flight_slot **ring; /* keep_steps slots, a circle from ring_first */
    int ring_first, ring_count;
    size_t ring_bytes;
    int64_t *history, *sorted; /* the last median_of steps' durations: a circle, and sorted */
    int history_next, history_count;
    opprof__flight_slot *dropped; /* steps to free, by the saver */
    int n_dropped;
    int64_t step_start_ns;
    char trigger_reason[128]; /* opprof_trigger's, for the step in progress */
    bool triggered;
    int64_t last_trigger_ns;
    uint64_t suppressed_since_save;
    opprof__flight_pending pending[OPPROF__FLIGHT_PENDING];
    int n_pending;
    opprof__flight_save *queue_head, *queue_tail;
    int n_queued;
    bool stopping, saver_started;
    pthread_t saver;
    int last_failure; /* the code of the last failed delivery */
    opprof_flight_stats stats;
};

OPPROF__HIDDEN void opprof__flight_slot_release(opprof__flight *f, opprof__flight_slot *step);
/* record/flight_save.c */
OPPROF__HIDDEN int opprof__flight_saver_start(opprof__flight *f);
OPPROF__HIDDEN void opprof__flight_saver_join(opprof__flight *f);

#endif /* OPPROF_FLIGHT_H */
