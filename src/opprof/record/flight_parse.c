/* flight_parse.c - the flight recorder's settings as people write them:
 * OPPROF_FLIGHT's "N[,Ts][,MMiB]", OPPROF_FLIGHT_TRIGGER's "3x,50ms,
 * request>20ms", durations ("250ms") and OPPROF_FLIGHT_SIGNAL's names, shared by OPPROF_TRACE programs,
 * profile_cpu and the tools. Each error names the part and what is accepted. */
#include "record/record.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *why, size_t size, const char *what, size_t len, const char *accepted) {
    if (why && size) snprintf(why, size, "'%.*s': %s", (int)len, what, accepted);
    return OPPROF_EINVAL;
}

/* A number and its unit in text[0..len): the number, and where the unit starts. */
static bool number_of(const char *text, size_t len, double *value, size_t *unit) {
    char buf[64];
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    *value = opprof__c_strtod(buf, &end);
    if (end == buf || errno || !isfinite(*value) || *value < 0 || buf[0] == '+' || buf[0] == '-') return false;
    *unit = (size_t)(end - buf);
    return true;
}

static int duration_of(const char *text, size_t len, int64_t *out) {
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    double v;
    size_t u;
    if (!number_of(text, len, &v, &u)) return OPPROF_EINVAL;
    if (u == len) return v == 0 ? (*out = 0, 0) : OPPROF_EINVAL; /* only 0 needs no unit */
    for (size_t k = 0; k < sizeof units / sizeof *units; k++)
        if (len - u == strlen(units[k].unit) && !memcmp(text + u, units[k].unit, len - u)) {
            double ns = v * units[k].ns;
            if (ns > 9.2e18) return OPPROF_EINVAL;
            *out = (int64_t)(ns + 0.5);
            return 0;
        }
    return OPPROF_EINVAL;
}

int opprof_parse_duration_ns(const char *text, int64_t *out) {
    if (!text || !out) return OPPROF_EINVAL;
    return duration_of(text, strlen(text), out);
}

static const char KEEP_FORM[] = "not N[,Ts][,MMiB]: N steps (1 to 1000000), then optionally the seconds "
                                "(\"30s\") and the MiB (\"64MiB\") the ring may hold";

int opprof_flight_parse_keep(opprof_flight *f, const char *text, char *why, size_t size) {
    if (!f || !text) return OPPROF_EINVAL;
    for (const char *p = text, *q;; p = q + 1) {
        q = p + strcspn(p, ",");
        size_t len = (size_t)(q - p), u;
        double v;
        int64_t ns;
        if (p == text) {
            if (!number_of(p, len, &v, &u) || u != len || v != floor(v) || v < 1 || v > 1000000)
                return fail(why, size, text, strlen(text), KEEP_FORM);
            f->keep_steps = (int)v;
        } else if (len > 3 && !memcmp(q - 3, "MiB", 3) && number_of(p, len - 3, &v, &u) && u == len - 3 && v > 0) {
            f->keep_mib = v;
        } else if (duration_of(p, len, &ns) == 0 && ns > 0) {
            f->keep_seconds = (double)ns / 1e9;
        } else {
            return fail(why, size, text, strlen(text), KEEP_FORM);
        }
        if (!*q) return 0;
    }
}

static const char TRIGGER_FORM[] = "not a trigger: Kx (a step slower than K times the rolling median, K > 1), "
                                   "a duration (a step longer than it: \"50ms\"), or NAME>DURATION (a range "
                                   "named NAME longer than it: \"request>20ms\")";

static int one_trigger(opprof_flight *f, const char *p, size_t len, char *why, size_t size) {
    const char *gt = memchr(p, '>', len);
    double v;
    size_t u;
    int64_t ns;
    if (gt) {
        size_t name_len = (size_t)(gt - p);
        if (f->range_name) return fail(why, size, p, len, "a second range bound: one NAME>DURATION at a time");
        if (!name_len || name_len > 255 || duration_of(gt + 1, len - name_len - 1, &ns) || ns <= 0)
            return fail(why, size, p, len, TRIGGER_FORM);
        char *name = opprof__alloc(name_len + 1);
        if (!name) return OPPROF_ENOMEM;
        memcpy(name, p, name_len);
        name[name_len] = '\0';
        f->range_name = name;
        f->range_bound_ns = ns;
        return 0;
    }
    if (len > 1 && p[len - 1] == 'x' && number_of(p, len - 1, &v, &u) && u == len - 1) {
        if (!(v > 1)) return fail(why, size, p, len, "K must be above 1 in Kx (\"1.5x\": 1.5 times the median)");
        f->slower_than_median = v;
        return 0;
    }
    if (duration_of(p, len, &ns) == 0 && ns > 0) {
        f->slower_than_ns = ns;
        return 0;
    }
    return fail(why, size, p, len, TRIGGER_FORM);
}

int opprof_flight_parse_triggers(opprof_flight *f, const char *text, char *why, size_t size) {
    if (!f || !text) return OPPROF_EINVAL;
    if (!*text) return fail(why, size, text, 0, TRIGGER_FORM);
    for (const char *p = text;;) {
        size_t len = strcspn(p, ",");
        int rc = one_trigger(f, p, len, why, size);
        if (rc) return rc;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

int opprof_parse_dump_signal(const char *text, int *out) {
    if (!text || !out) return OPPROF_EINVAL;
    if (!strcmp(text, "none")) return *out = 0, 0;
    if (!strncmp(text, "SIG", 3)) text += 3;
    if (!strcmp(text, "USR1")) return *out = SIGUSR1, 0;
    if (!strcmp(text, "USR2")) return *out = SIGUSR2, 0;
    char *end;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (!*text || *end || errno || n < SIGRTMIN || n > SIGRTMAX) return OPPROF_EINVAL;
    *out = (int)n;
    return 0;
}

int opprof_parse_sample(const char *text, int *hz, bool *dwarf) {
    if (!text || !hz || !dwarf) return OPPROF_EINVAL;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || errno || v < 1 || v > 1000000) return OPPROF_EINVAL;
    if (*end && strcmp(end, ",fp") && strcmp(end, ",dwarf")) return OPPROF_EINVAL;
    *hz = (int)v;
    *dwarf = !strcmp(end, ",dwarf");
    return 0;
}
