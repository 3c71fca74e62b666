/* flight_save.c - the flight recorder's saver thread: it takes the queued
 * saves in order, joins each one's steps into one capture (their times
 * moved onto the first step's clock) and delivers it, off the program's
 * threads. A failed delivery is counted and said in the next save; it never
 * stops the saves after it. */
#define _GNU_SOURCE /* pthread_sigmask */
#include "record/flight.h"

#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>

/* The steps of a save as one capture; NULL when memory ran out. */
static opprof_capture *join_steps(const opprof__flight_save *job, const opprof__flight *f) {
    opprof_capture *c = NULL;
    if (opprof_capture_new(&c)) return NULL;
    const opprof__flight_slot *first = job->steps[0], *last = job->steps[job->count - 1];
    c->info = last->cap->info;
    c->info.base_time_ns = first->cap->info.base_time_ns;
    c->info.dropped_events = 0;
    c->info.samples_lost = 0;
    c->info.flight = job->info;
    if (first->cap->machine && opprof_capture_set_machine(c, first->cap->machine)) {
        opprof_capture_free(c);
        return NULL;
    }
    c->info.flight.saves_failed = f->stats.saves_failed; /* written by this thread only */
    c->info.step_num = job->info.trigger_step >= 0 ? job->info.trigger_step : last->step_num;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) c->info.process_peak_rss_bytes = (int64_t)ru.ru_maxrss * 1024;
    double npt = opprof__ns_per_tick();
    int64_t offset = 0;
    for (int i = 0; i < job->count; i++) {
        const opprof__flight_slot *st = job->steps[i];
        offset = (int64_t)((double)(st->start_ticks - first->start_ticks) * npt + 0.5);
        if (opprof__capture_append(c, st->cap, offset)) {
            opprof_capture_free(c);
            return NULL;
        }
    }
    if (c->info.flight.saves_failed)
        opprof__capture_warnf(c, "%llu earlier flight recorder save(s) failed (the last: %s)",
                              (unsigned long long)c->info.flight.saves_failed, opprof_strerror(f->last_failure));
    int64_t end = offset + last->cap->info.duration_ns;
    c->info.duration_ns = end;
    if (opprof_capture_finish(c)) {
        opprof_capture_free(c);
        return NULL;
    }
    if (c->info.duration_ns < end) c->info.duration_ns = end;
    return c;
}

static void save_one(opprof__flight *f, opprof__flight_save *job) {
    int rc = OPPROF_ENOMEM;
    if (job->count > 0) {
        opprof_capture *c = join_steps(job, f);
        if (c) rc = f->sink.deliver(c, f->sink.ctx);
    } else {
        rc = 0; /* a dump of an empty ring: nothing to save */
    }
    pthread_mutex_lock(&f->lock);
    if (rc < 0) {
        f->stats.saves_failed++;
        f->last_failure = rc;
    }
    for (int i = 0; i < job->count; i++) opprof__flight_slot_release(f, job->steps[i]);
    pthread_mutex_unlock(&f->lock);
    opprof__free(job);
}

/* The steps the ring dropped, freed here rather than on the program's thread. */
static void free_dropped(opprof__flight *f) {
    opprof__flight_slot *st = f->dropped;
    f->dropped = NULL;
    f->n_dropped = 0;
    pthread_mutex_unlock(&f->lock);
    opprof__flight_free_dropped_list(st);
    pthread_mutex_lock(&f->lock);
}

/* Every wake-up that came while the lock was let go (a free, a save) is seen
 * by looking again before waiting: the list, then the queue. */
static void *saver(void *arg) {
    opprof__flight *f = arg;
    pthread_mutex_lock(&f->lock);
    for (;;) {
        if (f->dropped && (f->n_dropped >= OPPROF__FLIGHT_DROPPED_BATCH || f->queue_head || f->stopping)) {
            free_dropped(f);
            continue;
        }
        opprof__flight_save *job = f->queue_head;
        if (!job) {
            if (f->stopping) break;
            opprof__helper_wait(&f->wake, &f->lock);
            continue;
        }
        f->queue_head = job->next;
        if (!f->queue_head) f->queue_tail = NULL;
        f->n_queued--;
        pthread_mutex_unlock(&f->lock);
        save_one(f, job);
        pthread_mutex_lock(&f->lock);
    }
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

int opprof__flight_saver_start(opprof__flight *f) {
    if (opprof__helper_start(&f->saver, saver, f) != 0) return OPPROF_ENOMEM;
    f->saver_started = true;
    return 0;
}

void opprof__flight_saver_join(opprof__flight *f) {
    if (!f->saver_started) return;
    opprof__helper_join(&f->saver);
    f->saver_started = false;
}
