/* base/micros.c - a decimal number of microseconds as exact nanoseconds, for
 * timestamps met as text: merge's tokens, and times that a trace writes as
 * strings ("ts": "1234.5", as Hermes does). No double on the way, so a
 * timestamp of 1.6e15 us keeps its nanoseconds. */
#include "base/base.h"

int opprof__micros_to_ns(const char *text, size_t len, int64_t *ns) {
    const char *p = text, *end = text + len;
    bool neg = p < end && *p == '-';
    if (neg) p++;
    if (p >= end || *p < '0' || *p > '9') return OPPROF_EFORMAT;
    int64_t whole = 0, frac = 0;
    int digits = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (whole > (INT64_MAX / 1000 - 9) / 10) return OPPROF_EFORMAT;
        whole = whole * 10 + (*p - '0');
    }
    if (p < end && *p == '.') {
        if (++p >= end || *p < '0' || *p > '9') return OPPROF_EFORMAT;
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            if (digits < 3) frac = frac * 10 + (*p - '0'), digits++; /* below a nanosecond: dropped */
    }
    if (p != end) return OPPROF_EFORMAT; /* an exponent, or anything else */
    while (digits < 3) frac *= 10, digits++;
    *ns = (whole * 1000 + frac) * (neg ? -1 : 1);
    return 0;
}
