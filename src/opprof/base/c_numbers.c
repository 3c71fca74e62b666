/* c_numbers.c - numbers written and read as C writes them, whatever locale
 * the program set. A program that calls setlocale(LC_ALL, "") under a user's
 * de_DE or fr_FR locale made printf's decimal point a comma in the whole
 * process: opprof's trace inside it ("ts": 0,5) was no JSON, its tables said
 * "100,00%", and strtod read "1.5" as 1. The library's writers and reader
 * switch the calling thread alone to the C locale while they run
 * (uselocale: the program's other threads, and this one after, keep theirs). */
#define _GNU_SOURCE
#include "base/base.h"

#include <locale.h>
#include <pthread.h>
#include <stdlib.h>

static locale_t g_c_locale;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void) { g_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

opprof__numbers opprof__c_numbers_begin(void) {
    pthread_once(&g_once, make_c_locale);
    opprof__numbers n = {g_c_locale != (locale_t)0, NULL};
    if (n.switched) n.previous = (void *)uselocale(g_c_locale);
    return n;
}

void opprof__c_numbers_end(opprof__numbers n) {
    if (n.switched) uselocale((locale_t)n.previous);
}

double opprof__c_strtod(const char *text, char **end) {
    pthread_once(&g_once, make_c_locale);
    return g_c_locale != (locale_t)0 ? strtod_l(text, end, g_c_locale) : strtod(text, end);
}
