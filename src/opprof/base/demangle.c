/* demangle.c - C++ names as people read them: "_ZN6engine4stepIfEET_RKSt6vectorIS1_SaIS1_EEm"
 * becomes "float engine::step<float>(std::vector<float, std::allocator<float> > const&, unsigned long)".
 *
 * The demangler is libiberty's (Debian's libiberty-dev, the one c++filt and
 * libstdc++'s __cxa_demangle are built from: the same rules and text), called
 * through its callback form so that a name is demangled within stated bounds.
 * A name comes from untrusted traces; the Itanium grammar's back-references
 * let a few hundred bytes expand exponentially (361 bytes took 1.45 GB and
 * 4.6 s through __cxa_demangle). Parsing is linear in the name and keeps its
 * tables on the stack; only the text it prints grows. So: a name longer than
 * OPPROF__DEMANGLE_IN_MAX is not demangled, and printing stops at
 * OPPROF__DEMANGLE_OUT_MAX bytes (the callback leaves by longjmp, which the
 * printer allows: it holds no heap memory and no lock), the name then kept
 * as it was. Thread-safe: no state outside the call. */
#include "base/base.h"

#include <libiberty/demangle.h>
#include <setjmp.h>
#include <string.h>

typedef struct printed {
    char *text;
    size_t len, cap;
    jmp_buf too_long;
} printed;

static void put(const char *s, size_t n, void *opaque) {
    printed *p = opaque;
    if (n > p->cap - p->len) longjmp(p->too_long, 1);
    memcpy(p->text + p->len, s, n);
    p->len += n;
}

bool opprof__is_mangled(const char *name) { return name && name[0] == '_' && name[1] == 'Z'; }

/* The demangled text of symbol[0..len) into p (NUL-terminated), or false. */
static bool demangle_bounded(const char *symbol, printed *p) {
    if (setjmp(p->too_long)) return false;
    if (!cplus_demangle_v3_callback(symbol, DMGL_PARAMS | DMGL_ANSI, put, p)) return false;
    p->text[p->len] = '\0';
    return true;
}

char *opprof__demangle(const char *name) {
    if (!opprof__is_mangled(name)) return NULL;
    /* what follows the symbol stays: " [inlined]", "+0x1f" */
    size_t len = strcspn(name, " +");
    if (len > OPPROF__DEMANGLE_IN_MAX) return NULL;
    char symbol[OPPROF__DEMANGLE_IN_MAX + 1];
    memcpy(symbol, name, len);
    symbol[len] = '\0';
    size_t rest = strlen(name + len);
    printed *p = opprof__alloc(sizeof *p);
    char *text = opprof__alloc(OPPROF__DEMANGLE_OUT_MAX + 1);
    char *out = NULL;
    if (p && text) {
        *p = (printed){.text = text, .cap = OPPROF__DEMANGLE_OUT_MAX};
        if (demangle_bounded(symbol, p) && (out = opprof__alloc(p->len + rest + 1))) {
            memcpy(out, text, p->len);
            memcpy(out + p->len, name + len, rest + 1);
        }
    }
    opprof__free(text);
    opprof__free(p);
    return out;
}

char *opprof_demangle(const char *name) { return opprof__demangle(name); }
