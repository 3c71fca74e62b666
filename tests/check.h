/* check.h - assertions for opprof's tests: each prints both sides and the
 * place, counts the failure, and lets the test go on. main() returns
 * check_report(). */
#ifndef OPPROF_TESTS_CHECK_H
#define OPPROF_TESTS_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        check_count++;                                                                       \
        if (!(cond)) {                                                                       \
            check_failures++;                                                                \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);         \
        }                                                                                    \
    } while (0)

#define CHECK_INT(a, b)                                                                      \
    do {                                                                                     \
        long long check_a = (long long)(a), check_b = (long long)(b);                        \
        check_count++;                                                                       \
        if (check_a != check_b) {                                                            \
            check_failures++;                                                                \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, \
                    #b, check_a, check_b);                                                   \
        }                                                                                    \
    } while (0)

#define CHECK_STR(a, b)                                                                      \
    do {                                                                                     \
        const char *check_a = (a), *check_b = (b);                                           \
        check_count++;                                                                       \
        if (!check_a || !check_b || strcmp(check_a, check_b) != 0) {                         \
            check_failures++;                                                                \
            fprintf(stderr, "%s:%d: %s == %s failed:\n  got:      \"%s\"\n  expected: \"%s\"\n", \
                    __FILE__, __LINE__, #a, #b, check_a ? check_a : "(null)",                \
                    check_b ? check_b : "(null)");                                           \
        }                                                                                    \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                          \
    do {                                                                                     \
        const char *check_h = (hay), *check_n = (needle);                                    \
        check_count++;                                                                       \
        if (!check_h || !strstr(check_h, check_n)) {                                         \
            check_failures++;                                                                \
            fprintf(stderr, "%s:%d: \"%s\" not found in:\n%s\n", __FILE__, __LINE__, check_n, \
                    check_h ? check_h : "(null)");                                           \
        }                                                                                    \
    } while (0)

static inline int check_report(const char *name) {
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
