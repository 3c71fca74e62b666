/* env.c - the OPPROF_* environment variables, all read the same way: an
 * invalid value is said on stderr (the variable, the value, what is accepted,
 * what is used instead) and ignored; nothing fails because of one. */
#define _GNU_SOURCE /* secure_getenv */
#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int opprof__env_choice(const char *name, const char *const *choices, int count, int fallback) {
    const char *text = secure_getenv(name);
    if (!text) return fallback;
    for (int i = 0; i < count; i++)
        if (strcmp(text, choices[i]) == 0) return i;
    char accepted[256] = "";
    for (int i = 0; i < count; i++)
        snprintf(accepted + strlen(accepted), sizeof accepted - strlen(accepted), "%s%s", i ? ", " : "", choices[i]);
    opprof__say("opprof: %s='%s' ignored: not one of %s; using %s\n", name, text, accepted, choices[fallback]);
    return fallback;
}

long long opprof__env_int(const char *name, long long lo, long long hi, long long fallback) {
    const char *text = secure_getenv(name);
    if (!text) return fallback;
    char *end;
    errno = 0;
    long long n = strtoll(text, &end, 10);
    if (!errno && end != text && !*end && n >= lo && n <= hi) return n;
    opprof__say("opprof: %s='%s' ignored: not a whole number from %lld to %lld; using %lld\n", name, text, lo, hi,
                fallback);
    return fallback;
}
