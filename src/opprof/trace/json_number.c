/* json_number.c - JSON numbers as the reader takes them: integers exactly,
 * times in nanoseconds from microseconds without a double's rounding where
 * the text allows, any other number as a double; a fast path for the plain
 * forms traces are made of, and a whole-grammar path with its errors. */
#include "trace/json_lex.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HERE(p) OPPROF__JSON_HERE(p)
#define FAIL(p, ...) opprof__json_fail_at((p), HERE(p), __VA_ARGS__)

/* Past the character looked at: the next one. */
static inline int next_char(opprof__json *p) {
    p->pos++;
    return opprof__json_peek(p);
}

static const uint64_t POW10_U64[] = {1u,
                                     10u,
                                     100u,
                                     1000u,
                                     10000u,
                                     100000u,
                                     1000000u,
                                     10000000u,
                                     100000000u,
                                     1000000000u,
                                     10000000000u,
                                     100000000000u,
                                     1000000000000u,
                                     10000000000000u,
                                     100000000000000u,
                                     1000000000000000u,
                                     10000000000000000u,
                                     100000000000000000u,
                                     1000000000000000000u,
                                     10000000000000000000u};

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static void number_finish(opprof__json_number *out, bool neg, uint64_t mant, int digits, int exp10, bool is_int);

/* Up to eight digits at q, eight bytes read at once (q + 8 must be in the
 * window): how many lead the bytes, and their value in *value. A byte is a
 * digit when its high nibble is 3 and its low one is at most 9; the value is
 * the usual three multiply-and-add steps over byte pairs, then pairs of
 * pairs, then halves. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
OPPROF__HASH static inline int eight_digits(const unsigned char *q, uint64_t *value) {
    uint64_t x;
    memcpy(&x, q, 8);
    uint64_t low = x & 0x0F0F0F0F0F0F0F0Fu;
    uint64_t not_digit =
        ((x & 0xF0F0F0F0F0F0F0F0u) ^ 0x3030303030303030u) | ((low + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u);
    int n = not_digit ? __builtin_ctzll(not_digit) >> 3 : 8;
    if (n == 0) return *value = 0, 0;
    uint64_t v = low << (8 * (8 - n)); /* the n digits in the high bytes, zeros before them */
    v = v * 10 + (v >> 8);
    v = (((v & 0x000000FF000000FFu) * (100 + (1000000ull << 32))) +
         (((v >> 16) & 0x000000FF000000FFu) * (1 + (10000ull << 32)))) >>
        32;
    *value = v;
    return n;
}

/* The digits of a run at q, eight at a time, at most 18 in all with
 * `digits` before them: how many (-1: more than 18, or the window's end too
 * near for a whole read: the byte path decides). */
static inline int digit_run(const unsigned char **q, const unsigned char *end, uint64_t *mant, int digits) {
    int taken = 0, n = 8;
    while (n == 8) {
        if (*q + 8 > end) return -1;
        uint64_t v;
        n = eight_digits(*q, &v);
        if (digits + taken + n > 18) return -1;
        *mant = *mant * POW10_U64[n] + v;
        taken += n;
        *q += n;
    }
    return taken;
}

/* Fast path, eight digits at a time: false to take the byte path. */
static inline bool parse_number_words(opprof__json *p, opprof__json_number *out) {
    const unsigned char *b = p->buf + p->pos, *end = p->buf + p->len, *q = b;
    bool neg = q < end && *q == '-';
    q += neg;
    if (q < end && *q == '0' && q + 1 < end && q[1] >= '0' && q[1] <= '9') return false; /* leading zero */
    uint64_t mant = 0;
    int digits = digit_run(&q, end, &mant, 0), exp10 = 0;
    if (digits <= 0) return false;
    bool is_int = true;
    if (q < end && *q == '.') {
        is_int = false;
        q++;
        int fraction = digit_run(&q, end, &mant, digits);
        if (fraction <= 0) return false;
        digits += fraction;
        exp10 = -fraction;
    }
    if (q >= end || *q == 'e' || *q == 'E') return false;
    p->pos += (size_t)(q - b);
    number_finish(out, neg, mant, digits, exp10, is_int);
    return true;
}
#else
static inline bool parse_number_words(opprof__json *p, opprof__json_number *out) {
    (void)p, (void)out;
    return false;
}
#endif

/* Fast path: a plain number (up to 18 digits, an optional fraction, no
 * exponent) that ends inside the window. Returns false to take the slow path. */
static inline bool parse_number_fast(opprof__json *p, opprof__json_number *out) {
    if (parse_number_words(p, out)) return true;
    const unsigned char *b = p->buf + p->pos, *end = p->buf + p->len, *q = b;
    bool neg = false;
    if (q < end && *q == '-') {
        neg = true;
        q++;
    }
    if (q >= end || *q < '0' || *q > '9') return false;
    if (*q == '0' && q + 1 < end && q[1] >= '0' && q[1] <= '9') return false; /* leading zero: slow path says so */
    uint64_t mant = 0;
    int digits = 0, exp10 = 0;
    /* at most 18 digits here (they fit in 64 bits); a 19th takes the slow path */
    const unsigned char *stop = end - q > 18 ? q + 18 : end;
    while (q < stop && *q >= '0' && *q <= '9') mant = mant * 10 + (uint64_t)(*q++ - '0');
    digits = (int)(q - b) - neg;
    bool is_int = true;
    if (q < end && *q == '.') {
        is_int = false;
        q++;
        if (q >= end || *q < '0' || *q > '9') return false;
        const unsigned char *first = q;
        stop = end - q > 18 - digits ? q + (18 - digits) : end;
        while (q < stop && *q >= '0' && *q <= '9') mant = mant * 10 + (uint64_t)(*q++ - '0');
        digits += (int)(q - first);
        exp10 -= (int)(q - first);
    }
    if (q >= end || (*q >= '0' && *q <= '9') || *q == 'e' || *q == 'E') return false; /* more digits: slow path */
    p->pos += (size_t)(q - b);
    number_finish(out, neg, mant, digits, exp10, is_int);
    return true;
}

/* Digits into the mantissa, 19 significant ones kept: integer digits past
 * them raise the exponent, fraction digits kept lower it; only one when
 * `one` (a leading zero). Returns the character after the last taken. */
static int mantissa_digits(opprof__json *p, uint64_t *mant, int *digits, int *exp10, bool fraction, bool one) {
    int c;
    while ((c = opprof__json_peek(p)) >= '0' && c <= '9') {
        if (*digits < 19) {
            *mant = *mant * 10 + (uint64_t)(c - '0');
            if (*mant) (*digits)++;
            if (fraction) (*exp10)--;
        } else if (!fraction) {
            (*exp10)++;
        }
        p->pos++;
        if (one) break;
    }
    return c;
}

int opprof__json_parse_number(opprof__json *p, opprof__json_number *out) {
    if (parse_number_fast(p, out)) return 0;
    int64_t at = HERE(p);
    int c = opprof__json_skip_ws(p);
    if (c == -2) return OPPROF_EFORMAT;
    bool neg = false;
    if (c == '-') neg = true, c = next_char(p);
    if (c < '0' || c > '9') return c == -2 ? OPPROF_EFORMAT : FAIL(p, "invalid number");
    uint64_t mant = 0;
    int digits = 0, exp10 = 0;
    bool lead_zero = c == '0';
    c = mantissa_digits(p, &mant, &digits, &exp10, false, lead_zero);
    if (lead_zero && (c = opprof__json_peek(p)) >= '0' && c <= '9') return FAIL(p, "invalid number: leading zero");
    bool is_int = true;
    if (c == '.') {
        is_int = false;
        c = next_char(p);
        if (c < '0' || c > '9') return c == -2 ? OPPROF_EFORMAT : FAIL(p, "invalid number: no digit after '.'");
        c = mantissa_digits(p, &mant, &digits, &exp10, true, false);
    }
    if (c == 'e' || c == 'E') {
        is_int = false;
        c = next_char(p);
        bool eneg = c == '-';
        if (c == '+' || c == '-') c = next_char(p);
        if (c < '0' || c > '9') return c == -2 ? OPPROF_EFORMAT : FAIL(p, "invalid number: no digit in the exponent");
        int e = 0;
        while ((c = opprof__json_peek(p)) >= '0' && c <= '9') {
            if (e < 100000) e = e * 10 + (c - '0');
            p->pos++;
        }
        exp10 += eneg ? -e : e;
    }
    if (c == -2) return OPPROF_EFORMAT;
    if (mant != 0 && exp10 + digits > 309) return opprof__json_fail_at(p, at, "number out of range");
    number_finish(out, neg, mant, digits, exp10, is_int);
    return 0;
}

/* Correctly rounded: one multiplication or division of exact doubles (a
 * mantissa below 2^53, a power of ten to 10^22) rounds once; any other
 * number goes to strtod, so that 17 digits come back as the double written
 * and subnormals are not taken for 0. */
double opprof__json_number_value(const opprof__json_number *n) {
    double v = (double)n->mant;
    if (n->mant > (1ull << 53) || n->exp10 > 22 || n->exp10 < -22) {
        char text[48];
        snprintf(text, sizeof text, "%llue%d", (unsigned long long)n->mant, n->exp10);
        v = opprof__c_strtod(text, NULL);
    } else if (n->exp10 > 0)
        v *= POW10[n->exp10];
    else if (n->exp10 < 0)
        v /= POW10[-n->exp10];
    return n->neg ? -v : v;
}

/* INT64_MAX / 10^e: the largest mantissa that 10^e scales within int64,
 * looked up rather than divided for each time read. */
static const uint64_t NS_LIMIT[19] = {9223372036854775807u,
                                      922337203685477580u,
                                      92233720368547758u,
                                      9223372036854775u,
                                      922337203685477u,
                                      92233720368547u,
                                      9223372036854u,
                                      922337203685u,
                                      92233720368u,
                                      9223372036u,
                                      922337203u,
                                      92233720u,
                                      9223372u,
                                      922337u,
                                      92233u,
                                      9223u,
                                      922u,
                                      92u,
                                      9u};

static void number_finish(opprof__json_number *out, bool neg, uint64_t mant, int digits, int exp10, bool is_int) {
    (void)digits;
    out->neg = neg;
    out->mant = mant;
    out->exp10 = exp10;
    bool int64_min = neg && mant == (uint64_t)INT64_MAX + 1;
    out->is_int = is_int && exp10 == 0 && (mant <= (uint64_t)INT64_MAX || int64_min);
    out->as_int = !out->is_int ? 0 : int64_min ? INT64_MIN : neg ? -(int64_t)mant : (int64_t)mant;
    /* value x 1000, exact when it can be */
    int e3 = exp10 + 3;
    out->ns_ok = true;
    if (mant == 0) {
        out->ns = 0;
    } else if (e3 >= 0 && e3 <= 18 && mant <= NS_LIMIT[e3]) {
        out->ns = (int64_t)(mant * POW10_U64[e3]);
        if (neg) out->ns = -out->ns;
    } else if (e3 < 0 && e3 >= -19) {
        uint64_t div = POW10_U64[-e3];
        out->ns = (int64_t)(mant / div + (mant % div >= div - div / 2)); /* half up, without overflow */
        if (neg) out->ns = -out->ns;
    } else {
        double v = opprof__json_number_value(out);
        out->ns_ok = fabs(v) * 1000.0 < 9.2e18;
        out->ns = out->ns_ok ? (int64_t)llround(v * 1000.0) : 0;
    }
}
