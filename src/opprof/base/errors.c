/* errors.c - error codes to text, generated from the one table in opprof.h;
 * the report of a failed invariant (OPPROF__ASSERT). */
#define _GNU_SOURCE
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void opprof__assert_failed(const char *cond, const char *file, int line, const char *func) {
    fprintf(stderr, "opprof: %s:%d: %s: invariant '%s' does not hold\n", file, line, func, cond);
    abort();
}

const char *opprof_version(void) { return OPPROF_VERSION_STRING; }

const char *opprof_strerror(int code) {
    switch (code) {
#define OPPROF__ERR_TEXT(name, value, text) \
    case (value):                            \
        return text;
        OPPROF_ERRNO_MAP(OPPROF__ERR_TEXT)
#undef OPPROF__ERR_TEXT
    case 0:
        return "success";
    default:
        break;
    }
    if (code < 0 && code > -4096) return strerror(-code);
    return "unknown error";
}

const char *opprof_err_name(int code) {
    switch (code) {
#define OPPROF__ERR_NAME(name, value, text) \
    case (value):                            \
        return "OPPROF_" #name;
        OPPROF_ERRNO_MAP(OPPROF__ERR_NAME)
#undef OPPROF__ERR_NAME
    case 0:
        return "OPPROF_OK";
    default:
        break;
    }
    const char *sys = code < 0 && code > -4096 ? strerrorname_np(-code) : NULL;
    return sys ? sys : "OPPROF_UNKNOWN";
}
