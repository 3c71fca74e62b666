/* flight.c - the flight recorder: a ring of the last steps' captures, the
 * rules that decide a step triggers a save, and the saves' queue.
 *
 * The session (record/session.c) closes every step into a capture of its own
 * and hands it here (opprof__flight_step, on the program's thread, under the
 * session lock). The ring keeps those captures, newest last, and drops the
 * oldest whole when it holds more steps, seconds or bytes than it may. A save
 * takes a reference to each step it needs and is queued; the saver thread
 * (record/flight_save.c) joins them into one capture and delivers it, so the
 * program's thread never writes. Steps are shared between the ring and the
 * saves by a count of references under the recorder's lock. */
#include "record/flight.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MIN_HISTORY = 8 }; /* steps seen before the median rule may trigger */

opprof_flight opprof_flight_default(void) { return (opprof_flight){.median_of = 50, .before = 4, .cooldown_ms = 1000}; }

static int why_not(char *why, size_t size, const char *text) {
    if (why && size) snprintf(why, size, "%s", text);
    return OPPROF_EINVAL;
}

int opprof_flight_check(const opprof_flight *f, char *why, size_t size) {
    if (why && size) why[0] = '\0';
    if (!f) return why_not(why, size, "no flight recorder settings (NULL)");
    if (f->keep_steps == 0) return 0;
    if (f->keep_steps < 1 || f->keep_steps > 1000000)
        return why_not(why, size, "keep_steps (the steps the ring keeps) must be 1 to 1000000");
    if (!(f->keep_seconds >= 0) || !(f->keep_mib >= 0) || f->keep_seconds > 1e9 || f->keep_mib > 1e9)
        return why_not(why, size, "keep_seconds and keep_mib must be 0 (no bound) or positive");
    if (f->slower_than_median != 0 && !(f->slower_than_median > 1 && f->slower_than_median <= 1e6))
        return why_not(why, size,
                       "slower_than_median (k) must be 0 (off) or above 1: a step slower than k times "
                       "the rolling median triggers");
    if (f->median_of < 1 || f->median_of > 100000)
        return why_not(why, size, "median_of (the steps of the rolling median) must be 1 to 100000");
    if (f->slower_than_ns < 0 || f->range_bound_ns < 0 || f->cooldown_ms < 0)
        return why_not(why, size, "slower_than_ns, range_bound_ns and cooldown_ms must be 0 or positive");
    if (f->range_name && (!f->range_name[0] || strlen(f->range_name) > 255 || f->range_bound_ns <= 0))
        return why_not(why, size, "range_name needs a name of 1 to 255 bytes and a range_bound_ns above 0");
    if (f->before < 0 || f->after < 0 || (int64_t)f->before + f->after + 1 > f->keep_steps)
        return why_not(why, size,
                       "before and after must be 0 or more, and the ring must hold them with the "
                       "triggering step: before + 1 + after <= keep_steps");
    return 0;
}

static int64_t clock_now(const opprof__flight *f) {
    return f->cfg.clock_ns ? f->cfg.clock_ns() : opprof__monotonic_ns();
}

void opprof__flight_free_dropped_list(opprof__flight_slot *st) {
    while (st) {
        opprof__flight_slot *next = st->next_dropped;
        opprof_capture_free(st->cap);
        opprof__free(st);
        st = next;
    }
}

/* One holder less; the last one's step goes to the saver to be freed (a
 * capture's free is not the program's thread's work), woken once per
 * DROPPED_BATCH steps (a wake-up costs the program more than a free). When
 * DROPPED_MAX wait, the saver is behind: they are freed here. Under f->lock. */
void opprof__flight_slot_release(opprof__flight *f, opprof__flight_slot *st) {
    if (!st || --st->refs != 0) return;
    st->next_dropped = f->dropped;
    f->dropped = st;
    f->n_dropped++;
    if (f->n_dropped == OPPROF__FLIGHT_DROPPED_BATCH) pthread_cond_signal(&f->wake);
    if (f->n_dropped >= OPPROF__FLIGHT_DROPPED_MAX) {
        opprof__flight_slot *list = f->dropped;
        f->dropped = NULL;
        f->n_dropped = 0;
        opprof__flight_free_dropped_list(list);
    }
}

static opprof__flight_slot *ring_at(const opprof__flight *f, int i) { /* 0: oldest */
    return f->ring[(f->ring_first + i) % f->cfg.keep_steps];
}

static void ring_drop_oldest(opprof__flight *f) {
    opprof__flight_slot *st = ring_at(f, 0);
    f->ring_bytes -= st->bytes;
    f->ring_first = (f->ring_first + 1) % f->cfg.keep_steps;
    f->ring_count--;
    f->stats.steps_dropped++;
    opprof__flight_slot_release(f, st);
}

/* The newest step in; the oldest out while the ring holds too much (but
 * never the newest). Under f->lock. */
static void ring_push(opprof__flight *f, opprof__flight_slot *st) {
    if (f->ring_count == f->cfg.keep_steps) ring_drop_oldest(f);
    f->ring[(f->ring_first + f->ring_count) % f->cfg.keep_steps] = st;
    f->ring_count++;
    f->ring_bytes += st->bytes;
    double max_bytes = f->cfg.keep_mib * 1048576.0;
    int64_t max_ns = (int64_t)(f->cfg.keep_seconds * 1e9);
    while (f->ring_count > 1 && ((max_bytes > 0 && (double)f->ring_bytes > max_bytes) ||
                                 (max_ns > 0 && st->end_ns - ring_at(f, 0)->start_ns > max_ns)))
        ring_drop_oldest(f);
}

/* ---- the rules ---- */

/* The median of the durations of the steps before this one (0: too few). */
static int64_t rolling_median(opprof__flight *f, int *of) {
    int n = f->history_count;
    const int64_t *v = f->sorted;
    *of = n;
    if (n < (f->cfg.median_of < MIN_HISTORY ? f->cfg.median_of : MIN_HISTORY)) return 0;
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* The first place in sorted[0..n) whose value is not below x. */
static int lower_bound(const int64_t *sorted, int n, int64_t x) {
    int lo = 0;
    while (n > 0) {
        int half = n / 2;
        if (sorted[lo + half] < x) {
            lo += half + 1;
            n -= half + 1;
        } else {
            n = half;
        }
    }
    return lo;
}

/* The step's duration into the window of the last median_of, kept sorted
 * too: the median costs no sort. */
static void history_push(opprof__flight *f, int64_t ns) {
    int n = f->history_count;
    if (n == f->cfg.median_of) { /* the oldest leaves */
        int at = lower_bound(f->sorted, n, f->history[f->history_next]);
        memmove(f->sorted + at, f->sorted + at + 1, (size_t)(n - at - 1) * sizeof *f->sorted);
        n--;
    }
    int at = lower_bound(f->sorted, n, ns);
    memmove(f->sorted + at + 1, f->sorted + at, (size_t)(n - at) * sizeof *f->sorted);
    f->sorted[at] = ns;
    f->history_count = n + 1;
    f->history[f->history_next] = ns;
    f->history_next = (f->history_next + 1) % f->cfg.median_of;
}

/* The longest range named cfg.range_name in the step, or -1. */
static int64_t longest_named(const opprof__flight *f, const opprof_capture *c) {
    size_t n_names = opprof_capture_name_count(c), n_events;
    uint32_t id = UINT32_MAX;
    for (size_t i = 0; i < n_names && id == UINT32_MAX; i++)
        if (!strcmp(opprof_capture_name(c, (uint32_t)i), f->range_name)) id = (uint32_t)i;
    int64_t longest = -1;
    const opprof_event *ev = opprof_capture_events(c, &n_events);
    for (size_t i = 0; id != UINT32_MAX && i < n_events; i++)
        if (ev[i].name == id && ev[i].duration_ns > longest) longest = ev[i].duration_ns;
    return longest;
}

/* Why the step triggers a save ("" when it does not). */
static void step_reason(opprof__flight *f, const opprof__flight_slot *st, char *why, size_t size,
                        opprof_flight_info *info) {
    int64_t ns = st->end_ns - st->start_ns;
    int of = 0;
    int64_t median = rolling_median(f, &of);
    info->median_step_ns = median;
    info->median_of = of;
    why[0] = '\0';
    if (f->trigger_reason[0]) {
        snprintf(why, size, "%s", f->trigger_reason);
        f->trigger_reason[0] = '\0';
    } else if (f->cfg.slower_than_ns && ns > f->cfg.slower_than_ns) {
        snprintf(why, size, "step %lld took %.3f ms, over the bound of %.3f ms", (long long)st->step_num, ns / 1e6,
                 f->cfg.slower_than_ns / 1e6);
    } else if (f->cfg.slower_than_median > 0 && median > 0 && (double)ns > f->cfg.slower_than_median * (double)median) {
        snprintf(why, size, "step %lld took %.2fx the median of the %d steps before it (%.3f ms against %.3f ms)",
                 (long long)st->step_num, (double)ns / (double)median, of, ns / 1e6, median / 1e6);
    } else if (f->range_name) {
        int64_t longest = longest_named(f, st->cap);
        if (longest > f->cfg.range_bound_ns)
            snprintf(why, size, "range '%s' lasted %.3f ms in step %lld, over its bound of %.3f ms", f->range_name,
                     longest / 1e6, (long long)st->step_num, f->cfg.range_bound_ns / 1e6);
    }
}

/* ---- saves ---- */

/* A save that will not be written: its steps let go, it counted as a
 * suppressed trigger (with those it carried), said in the next save. */
static void drop_save(opprof__flight *f, opprof__flight_save *job) {
    for (int i = 0; i < job->count; i++) opprof__flight_slot_release(f, job->steps[i]);
    f->suppressed_since_save += 1 + job->info.triggers_suppressed;
    f->stats.triggers_suppressed++;
    f->stats.saves--;
    opprof__free(job);
}

/* Room in the queue for a triggered save of a step that lasted step_ns: at
 * most OPPROF__FLIGHT_QUEUED wait for the saver (a trigger storm of a slow
 * saver would hold every step and write for minutes at exit). When it is
 * full, the least slow triggered save waiting goes, or the new one when it
 * is no slower: what is kept is the slowest. Dumps always stay. Under f->lock;
 * false: the new one is not to be queued. */
static bool make_room(opprof__flight *f, int64_t step_ns) {
    if (f->n_queued < OPPROF__FLIGHT_QUEUED) return true;
    opprof__flight_save *least = NULL, *before_least = NULL;
    for (opprof__flight_save *j = f->queue_head, *prev = NULL; j; prev = j, j = j->next)
        if (j->info.trigger_step >= 0 && (!least || j->info.trigger_step_ns < least->info.trigger_step_ns))
            least = j, before_least = prev;
    if (!least || least->info.trigger_step_ns >= step_ns) return false;
    *(before_least ? &before_least->next : &f->queue_head) = least->next;
    if (f->queue_tail == least) f->queue_tail = before_least;
    f->n_queued--;
    drop_save(f, least);
    return true;
}

/* Queue a save of the ring's last `count` steps (the newest last), holding
 * a reference to each. Under f->lock. */
static void queue_save(opprof__flight *f, int count, const opprof_flight_info *info) {
    if (info->trigger_step >= 0 && !make_room(f, info->trigger_step_ns)) { /* no slower than any waiting */
        f->stats.triggers_suppressed++;
        f->suppressed_since_save++;
        f->stats.saves--;
        return;
    }
    if (count > f->ring_count) count = f->ring_count;
    opprof__flight_save *job = opprof__calloc(1, sizeof *job + (size_t)count * sizeof job->steps[0]);
    if (!job) { /* counted as a failed save: said in the next one */
        f->stats.saves_failed++;
        return;
    }
    job->info = *info;
    job->info.steps_dropped = f->stats.steps_dropped;
    job->info.triggers_suppressed = f->suppressed_since_save;
    f->suppressed_since_save = 0;
    job->count = count;
    for (int i = 0; i < count; i++) {
        opprof__flight_slot *st = ring_at(f, f->ring_count - count + i);
        st->refs++;
        job->steps[i] = st;
    }
    if (count) {
        job->info.first_step = job->steps[0]->step_num;
        job->info.last_step = job->steps[count - 1]->step_num;
    }
    *(f->queue_tail ? &f->queue_tail->next : &f->queue_head) = job;
    f->queue_tail = job;
    f->n_queued++;
    pthread_cond_signal(&f->wake);
}

/* Saves that waited for their `after` steps and now have them. Under f->lock. */
static void queue_due(opprof__flight *f, int64_t step_num, bool stopping) {
    int kept = 0;
    for (int i = 0; i < f->n_pending; i++) {
        opprof__flight_pending *p = &f->pending[i];
        if (stopping || step_num >= p->info.trigger_step + f->cfg.after) {
            int count = (int)(step_num - p->info.trigger_step) + 1 + f->cfg.before;
            queue_save(f, count, &p->info);
        } else {
            f->pending[kept++] = *p;
        }
    }
    f->n_pending = kept;
}

static void trigger(opprof__flight *f, const opprof__flight_slot *st, const char *why, opprof_flight_info *info) {
    int64_t now = st->end_ns;
    if (f->triggered && f->cfg.cooldown_ms && now - f->last_trigger_ns < f->cfg.cooldown_ms * 1000000) {
        f->stats.triggers_suppressed++;
        f->suppressed_since_save++;
        return;
    }
    if (f->n_pending == OPPROF__FLIGHT_PENDING) { /* a storm that cooldown 0 lets through */
        f->stats.triggers_suppressed++;
        f->suppressed_since_save++;
        return;
    }
    f->triggered = true;
    f->last_trigger_ns = now;
    snprintf(info->reason, sizeof info->reason, "%s", why);
    info->trigger_step = st->step_num;
    info->trigger_step_ns = st->end_ns - st->start_ns;
    f->pending[f->n_pending++] = (opprof__flight_pending){*info};
    f->stats.saves++;
}

void opprof__flight_step(opprof__flight *f, opprof_capture *cap, int64_t step_num, uint64_t start_ticks) {
    int64_t now = clock_now(f);
    opprof__flight_slot *st = opprof__calloc(1, sizeof *st);
    pthread_mutex_lock(&f->lock);
    if (!st) {
        opprof_capture_free(cap);
        f->stats.steps_dropped++;
    } else {
        *st = (opprof__flight_slot){.cap = cap,
                                    .step_num = step_num,
                                    .start_ticks = start_ticks,
                                    .start_ns = f->step_start_ns,
                                    .end_ns = now,
                                    .bytes = opprof__capture_bytes(cap),
                                    .refs = 1};
        ring_push(f, st);
        char why[sizeof f->pending[0].info.reason];
        opprof_flight_info info = {.trigger_step = -1};
        step_reason(f, st, why, sizeof why, &info);
        history_push(f, st->end_ns - st->start_ns);
        if (why[0]) trigger(f, st, why, &info);
    }
    queue_due(f, step_num, false);
    f->step_start_ns = clock_now(f);
    pthread_mutex_unlock(&f->lock);
}

int opprof__flight_dump(opprof__flight *f, const char *reason) {
    pthread_mutex_lock(&f->lock);
    opprof_flight_info info = {.trigger_step = -1};
    snprintf(info.reason, sizeof info.reason, "%s", reason ? reason : "dump");
    queue_save(f, f->ring_count, &info);
    f->stats.saves++;
    pthread_mutex_unlock(&f->lock);
    return 0;
}

void opprof__flight_trigger(opprof__flight *f, const char *reason) {
    pthread_mutex_lock(&f->lock);
    if (!f->trigger_reason[0])
        snprintf(f->trigger_reason, sizeof f->trigger_reason, "%s", reason ? reason : "opprof_trigger");
    pthread_mutex_unlock(&f->lock);
}

void opprof__flight_stats(opprof__flight *f, opprof_flight_stats *out) {
    pthread_mutex_lock(&f->lock);
    *out = f->stats;
    out->steps_held = f->ring_count;
    pthread_mutex_unlock(&f->lock);
}

/* ---- life ---- */

int opprof__flight_new(opprof__flight **out, const opprof_flight *cfg, const opprof__flight_sink *sink) {
    opprof__flight *f = opprof__calloc(1, sizeof *f);
    if (!f) return OPPROF_ENOMEM;
    f->cfg = *cfg;
    f->sink = *sink;
    f->ring = opprof__calloc((size_t)cfg->keep_steps, sizeof *f->ring);
    f->history = opprof__calloc((size_t)cfg->median_of, sizeof *f->history);
    f->sorted = opprof__calloc((size_t)cfg->median_of, sizeof *f->sorted);
    if (cfg->range_name) {
        f->range_name = opprof__strdup(cfg->range_name);
        f->cfg.range_name = f->range_name;
    }
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->wake, NULL);
    if (!f->ring || !f->history || !f->sorted || (cfg->range_name && !f->range_name) || opprof__flight_saver_start(f)) {
        opprof__flight_free(f);
        return OPPROF_ENOMEM;
    }
    f->step_start_ns = clock_now(f);
    *out = f;
    return 0;
}

void opprof__flight_stop(opprof__flight *f) {
    pthread_mutex_lock(&f->lock);
    queue_due(f, f->ring_count ? ring_at(f, f->ring_count - 1)->step_num : 0, true);
    f->stopping = true;
    pthread_cond_signal(&f->wake);
    pthread_mutex_unlock(&f->lock);
    opprof__flight_saver_join(f);
}

void opprof__flight_free(opprof__flight *f) {
    if (!f) return;
    if (f->saver_started) opprof__flight_stop(f);
    while (f->ring && f->ring_count) {
        f->ring_count--;
        opprof__flight_slot_release(f, f->ring[(f->ring_first + f->ring_count) % f->cfg.keep_steps]);
    }
    opprof__flight_free_dropped_list(f->dropped); /* the saver has ended */
    pthread_mutex_destroy(&f->lock);
    pthread_cond_destroy(&f->wake);
    opprof__free(f->ring);
    opprof__free(f->history);
    opprof__free(f->sorted);
    opprof__free(f->range_name);
    opprof__free(f);
}
