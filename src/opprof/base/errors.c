/* errors.c - error codes to text, generated from the one table in opprof.h;
 * the report of a failed invariant (OPPROF__ASSERT). */
#define _GNU_SOURCE
#include "base/base.h"

#include "../../common/error_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

OPPROF__STDERR_AT_START /* opprof__say's: this library's */

    void
    opprof__assert_failed(const char *cond, const char *file, int line, const char *func) {
    opprof__say("opprof: %s:%d: %s: invariant '%s' does not hold\n", file, line, func, cond);
    abort();
}

const char *opprof_version(void) { return OPPROF_VERSION_STRING; }

COMMON_DEFINE_STRERROR(opprof_strerror, OPPROF_ERRNO_MAP)

const char *opprof_err_name(int code) {
    switch (code) {
#define OPPROF__ERR_NAME(name, value, text) \
    case (value): return "OPPROF_" #name;
        OPPROF_ERRNO_MAP(OPPROF__ERR_NAME)
#undef OPPROF__ERR_NAME
    case 0: return "OPPROF_OK";
    default: break;
    }
    const char *sys = code < 0 && code > -4096 ? strerrorname_np(-code) : NULL;
    return sys ? sys : "OPPROF_UNKNOWN";
}
