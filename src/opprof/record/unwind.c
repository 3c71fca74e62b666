/* unwind.c - the sampler's DWARF mode: a sample's user stack, copied by the
 * kernel (PERF_SAMPLE_STACK_USER) with its registers (PERF_SAMPLE_REGS_USER),
 * unwound by libunwind's remote interface over this very process: the
 * unwind tables are found as for a local unwind (the code is ours, mapped
 * here), the stack's words are read from the copy, any other word through
 * process_vm_readv (a bad address is an error, never a fault). The drainer
 * thread alone calls it, so that the stack copies are freed as they are read. */
#define _GNU_SOURCE
#include "record/record.h"

#include <asm/perf_regs.h>
#include <libunwind.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* libunwind's x86-64 register -> perf's (the order PERF_SAMPLE_REGS_USER packs them). */
static int perf_reg_of(int reg) {
    switch (reg) {
    case UNW_X86_64_RAX: return PERF_REG_X86_AX;
    case UNW_X86_64_RDX: return PERF_REG_X86_DX;
    case UNW_X86_64_RCX: return PERF_REG_X86_CX;
    case UNW_X86_64_RBX: return PERF_REG_X86_BX;
    case UNW_X86_64_RSI: return PERF_REG_X86_SI;
    case UNW_X86_64_RDI: return PERF_REG_X86_DI;
    case UNW_X86_64_RBP: return PERF_REG_X86_BP;
    case UNW_X86_64_RSP: return PERF_REG_X86_SP;
    case UNW_X86_64_RIP: return PERF_REG_X86_IP;
    default:
        if (reg >= UNW_X86_64_R8 && reg <= UNW_X86_64_R15) return PERF_REG_X86_R8 + (reg - UNW_X86_64_R8);
        return -1;
    }
}

uint64_t opprof__unwind_regs_mask(void) {
    uint64_t mask = 0;
    for (int r = UNW_X86_64_RAX; r <= UNW_X86_64_RIP; r++)
        if (perf_reg_of(r) >= 0) mask |= 1ull << perf_reg_of(r);
    return mask;
}

/* The value of perf register `perf` among the packed ones of `mask`. */
static bool packed_reg(const opprof__stack_copy *sc, int perf, uint64_t *out) {
    if (perf < 0 || !(sc->mask & (1ull << perf))) return false;
    int k = __builtin_popcountll(sc->mask & ((1ull << perf) - 1));
    memcpy(out, sc->regs + 8 * k, 8);
    return true;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg) {
    (void)as;
    uint64_t v;
    if (write || !packed_reg(arg, perf_reg_of(reg), &v)) return -UNW_EBADREG;
    *val = v;
    return 0;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg) {
    (void)as;
    const opprof__stack_copy *sc = arg;
    if (write) return -UNW_EINVAL;
    if (addr >= sc->sp && addr - sc->sp + sizeof *val <= sc->size) {
        memcpy(val, sc->stack + (addr - sc->sp), sizeof *val);
        return 0;
    }
    struct iovec local = {val, sizeof *val}, remote = {(void *)addr, sizeof *val};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof *val ? 0 : -UNW_EINVAL;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg) {
    (void)as;
    (void)arg;
    unw_accessors_t *local = unw_get_accessors(unw_local_addr_space);
    return local->find_proc_info(unw_local_addr_space, ip, pi, need, NULL);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg) {
    (void)as;
    (void)arg;
    unw_accessors_t *local = unw_get_accessors(unw_local_addr_space);
    if (local->put_unwind_info) local->put_unwind_info(unw_local_addr_space, pi, NULL);
}

static int no_dyn_info(unw_addr_space_t as, unw_word_t *addr, void *arg) {
    (void)as, (void)addr, (void)arg;
    return -UNW_ENOINFO;
}

static int no_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg) {
    (void)as, (void)reg, (void)val, (void)write, (void)arg;
    return -UNW_EBADREG;
}

static int no_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg) {
    (void)as, (void)c, (void)arg;
    return -UNW_EINVAL;
}

static int no_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off, void *arg) {
    (void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
    return -UNW_ENOINFO;
}

static unw_addr_space_t g_space;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void space_setup(void) {
    static unw_accessors_t acc = {find_proc_info, put_unwind_info, no_dyn_info, access_mem,
                                  access_reg,     no_fpreg,        no_resume,   no_name};
    g_space = unw_create_addr_space(&acc, 0);
    if (g_space) unw_set_caching_policy(g_space, UNW_CACHE_GLOBAL);
}

size_t opprof__unwind(const opprof__stack_copy *sc, uint64_t *ips, size_t max) {
    pthread_once(&g_once, space_setup);
    unw_cursor_t cursor;
    if (!g_space || unw_init_remote(&cursor, g_space, (void *)sc) < 0) return 0;
    size_t n = 0;
    do {
        unw_word_t ip;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || !ip) break;
        ips[n++] = ip;
    } while (n < max && unw_step(&cursor) > 0);
    return n;
}
