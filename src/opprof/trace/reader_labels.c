/* reader_labels.c - processes' names and labels ("process_name",
 * "process_labels" metadata): opprof merge's "rank K" on every thread of the
 * process, and the processes that Kineto labels as devices, whose events are
 * device rows. Hashed by pid: a hostile trace names many processes. */
#include "trace/reader_state.h"

#include <stdio.h>
#include <string.h>

static uint64_t label_hash(const void *ctx, uint32_t item) {
    return opprof__hash_pair((uint64_t)((const parser *)ctx)->labels[item].pid, 0);
}

static bool label_equal(const void *ctx, uint32_t item, const void *key) {
    return ((const parser *)ctx)->labels[item].pid == *(const int64_t *)key;
}

/* The label of a process, found by its pid (hashed: a hostile trace names
 * many processes and labels each), the last one said winning. */
static int label_of(parser *p, int64_t pid, bool add, struct process_label **out) {
    size_t slot;
    int64_t found = opprof__index_lookup(&p->label_index, p->n_labels, label_hash, label_equal, p,
                                         opprof__hash_pair((uint64_t)pid, 0), &pid, &slot);
    if (found < 0) return OPPROF_ENOMEM;
    *out = found ? &p->labels[found - 1] : NULL;
    if (found || !add) return 0;
    if (opprof__grow((void **)&p->labels, &p->cap_labels, p->n_labels + 1, sizeof *p->labels)) return OPPROF_ENOMEM;
    *out = &p->labels[p->n_labels];
    **out = (struct process_label){.pid = pid};
    p->label_index.slots[slot] = (uint32_t)++p->n_labels;
    return 0;
}

/* The device that a process's name or label says it is, as Kineto names
 * device processes ("GPU 0", "MTIA 17"; ROCm's traces say "GPU n" too), or "". */
static const char *device_of_label(const char *text) {
    static const char *const devices[] = {"GPU", "MTIA", "HIP", "XPU"};
    for (size_t i = 0; i < sizeof devices / sizeof *devices; i++) {
        size_t n = strlen(devices[i]);
        if (!strncmp(text, devices[i], n) && text[n] == ' ' && text[n + 1] >= '0' && text[n + 1] <= '9' &&
            text[n + 1 + strspn(text + n + 1, "0123456789")] == '\0')
            return devices[i];
    }
    return "";
}

/* TensorFlow's timeline names its processes by device: "/job:localhost/
 * replica:0/task:0/device:GPU:0 Compute" (the host's launches), "/device:
 * GPU:0/stream:7 Compute" and ".../memcpy Compute" (the device's own work),
 * "/device:GPU:0/stream:all Compute" (every stream's work again); TF 1.0-1.3
 * wrote "/gpu:0/...". */
static bool tf_stream(const char *text, bool *aggregate) {
    if (strncmp(text, "/device:GPU:", 12) != 0 && strncmp(text, "/gpu:", 5) != 0) return false;
    const char *slash = strchr(text + 1, '/');
    if (!slash) return false;
    *aggregate = !strncmp(slash, "/stream:all ", 12);
    return !strncmp(slash, "/stream:", 8) || !strncmp(slash, "/memcpy ", 8);
}

/* process_labels names the process's track; either it or process_name may
 * say that the process is a device. */
int opprof__reader_set_label(parser *p, int64_t pid, const char *text, bool is_label) {
    struct process_label *l;
    if (label_of(p, pid, true, &l)) return opprof__reader_no_memory(p, "process labels");
    /* process_labels names it; process_name too for `opprof sql`'s process table (keep_marks),
     * where a label said already stays */
    if (is_label || (p->keep_marks && !l->text[0])) snprintf(l->text, sizeof l->text, "%s", text);
    const char *device = device_of_label(text);
    bool aggregate = false;
    if (!*device && tf_stream(text, &aggregate)) device = "GPU";
    if (*device) snprintf(l->device, sizeof l->device, "%s", device);
    l->aggregate = aggregate;
    return 0;
}

bool opprof__reader_aggregate_pid(parser *p, int64_t pid) {
    struct process_label *l = NULL;
    return !label_of(p, pid, false, &l) && l && l->aggregate;
}

/* Labels onto threads; the events of a device's process are device rows,
 * whatever their category (an MTIA trace writes runtime calls there). */
void opprof__reader_apply_labels(parser *p) {
    opprof_capture *c = p->cap;
    bool devices = false;
    for (size_t t = 0; p->n_labels && t < c->n_threads; t++) {
        struct process_label *l = NULL;
        c->threads[t].device = false;
        if (label_of(p, c->threads[t].pid, false, &l) || !l) continue;
        snprintf(c->threads[t].process, sizeof c->threads[t].process, "%s", l->text);
        if (!l->device[0]) continue;
        c->threads[t].device = devices = true;
        if (!c->info.device_name[0])
            snprintf(c->info.device_name, sizeof c->info.device_name, "%s",
                     strcmp(l->device, "MTIA") ? "CUDA" : "MTIA");
    }
    for (size_t i = 0; devices && i < c->n_events; i++)
        if (c->threads[c->events[i].thread].device && !opprof__is_device(&c->events[i]))
            c->events[i].kind = OPPROF_KIND_DEVICE;
}

int opprof__reader_join_labels(parser *p, const parser *q, const int64_t *ids) {
    for (size_t i = 0; i < q->n_labels; i++) {
        const struct process_label *from = &q->labels[i];
        struct process_label *l;
        int64_t k = opprof__reader_string_index(q, from->pid); /* a string id of q's */
        int64_t pid = k ? ids[k - 1] : from->pid;
        if (label_of(p, pid, true, &l)) return OPPROF_ENOMEM;
        if (from->text[0]) memcpy(l->text, from->text, sizeof l->text);
        if (from->device[0]) memcpy(l->device, from->device, sizeof l->device);
        l->aggregate |= from->aggregate;
    }
    return 0;
}
