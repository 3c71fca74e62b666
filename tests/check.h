/* check.h - assertions for opprof's tests: each prints both sides and the
 * place, counts the failure, and lets the test go on; and the cases of a test
 * file, each runnable alone:
 *
 *   TEST_CASE(kineto_merged) { ... CHECK(...); }
 *   int main(int argc, char **argv) { return check_main(argc, argv, "test_merge"); }
 *
 *   test_merge --list           the cases, one a line (CTest makes a test of each:
 *                               test_merge.kineto_merged)
 *   test_merge kineto_merged    that case alone (several names: those)
 *   test_merge                  every case, in the order of the file
 *
 * Every test file is made of cases (tests/CMakeLists.txt: opprof_test_cases). */
#ifndef OPPROF_TESTS_CHECK_H
#define OPPROF_TESTS_CHECK_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        check_count++;                                                               \
        if (!(cond)) {                                                               \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_INT(a, b)                                                                                              \
    do {                                                                                                             \
        long long check_a = (long long)(a), check_b = (long long)(b);                                                \
        check_count++;                                                                                               \
        if (check_a != check_b) {                                                                                    \
            check_failures++;                                                                                        \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, check_a, check_b); \
        }                                                                                                            \
    } while (0)

#define CHECK_STR(a, b)                                                                                              \
    do {                                                                                                             \
        const char *check_a = (a), *check_b = (b);                                                                   \
        check_count++;                                                                                               \
        if (!check_a || !check_b || strcmp(check_a, check_b) != 0) {                                                 \
            check_failures++;                                                                                        \
            fprintf(stderr, "%s:%d: %s == %s failed:\n  got:      \"%s\"\n  expected: \"%s\"\n", __FILE__, __LINE__, \
                    #a, #b, check_a ? check_a : "(null)", check_b ? check_b : "(null)");                             \
        }                                                                                                            \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                           \
    do {                                                                                      \
        const char *check_h = (hay), *check_n = (needle);                                     \
        check_count++;                                                                        \
        if (!check_h || !strstr(check_h, check_n)) {                                          \
            check_failures++;                                                                 \
            fprintf(stderr, "%s:%d: \"%s\" not found in:\n%s\n", __FILE__, __LINE__, check_n, \
                    check_h ? check_h : "(null)");                                            \
        }                                                                                     \
    } while (0)

enum { CHECK_MAX_CASES = 64 };
static struct {
    const char *name;
    void (*run)(void);
} check_cases[CHECK_MAX_CASES];
static int check_n_cases;

static inline void check_register(const char *name, void (*run)(void)) {
    if (check_n_cases == CHECK_MAX_CASES) {
        fprintf(stderr, "check.h: more than %d cases in one file\n", CHECK_MAX_CASES);
        abort();
    }
    check_cases[check_n_cases].name = name;
    check_cases[check_n_cases++].run = run;
}

/* A case: a function, registered before main() in the order of the file. */
#define TEST_CASE(name)                                                                                   \
    static void name(void);                                                                               \
    __attribute__((constructor)) static void check_register_##name(void) { check_register(#name, name); } \
    static void name(void)

static inline int check_report(const char *name);

/* Run the cases named in argv (all without names; --list: print them). An
 * unknown name is an error (exit 2), never a silent pass. */
static inline int check_main(int argc, char **argv, const char *suite) {
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int k = 0; k < check_n_cases; k++) puts(check_cases[k].name);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        int k = 0;
        while (k < check_n_cases && strcmp(check_cases[k].name, argv[i]) != 0) k++;
        if (k == check_n_cases) {
            fprintf(stderr, "%s: no case '%s' (--list names them)\n", suite, argv[i]);
            return 2;
        }
    }
    for (int k = 0; k < check_n_cases; k++) {
        bool wanted = argc == 1;
        for (int i = 1; i < argc; i++) wanted = wanted || strcmp(check_cases[k].name, argv[i]) == 0;
        if (!wanted) continue;
        int before = check_failures;
        check_cases[k].run();
        printf("%s.%s: %s\n", suite, check_cases[k].name, check_failures == before ? "ok" : "FAILED");
    }
    return check_report(suite);
}

static inline int check_report(const char *name) {
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
