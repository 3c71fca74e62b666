/* error_text.h - the strerror of a library whose codes are one X-macro map
 * X(NAME, VALUE, TEXT) (OPPROF_ERRNO_MAP, NN_ERRNO_MAP): its own texts, "success"
 * for 0, the system's text for a negated errno, "unknown error" otherwise.
 * Compiled into both libraries, as sized_alloc.h. */
#ifndef COMMON_ERROR_TEXT_H
#define COMMON_ERROR_TEXT_H

#include <string.h>

#define COMMON_ERROR_TEXT_CASE(name, value, text) \
    case (value):                                 \
        return text;

#define COMMON_DEFINE_STRERROR(function, map)                                \
    const char *function(int code) {                                         \
        switch (code) {                                                      \
            map(COMMON_ERROR_TEXT_CASE) case 0 : return "success";           \
        default: break;                                                      \
        }                                                                    \
        return code < 0 && code > -4096 ? strerror(-code) : "unknown error"; \
    }

#endif
