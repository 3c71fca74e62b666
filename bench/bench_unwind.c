/* bench_unwind.c - the two libraries the DWARF mode's unwinder could be
 * built on, on the same copied stack as the kernel hands it over (the
 * registers and 8 KiB from the stack pointer up, taken at the bottom of a
 * chain of DEPTH calls): elfutils' libdw (dwfl_getthread_frames with thread
 * callbacks over the copy, as record/unwind.c does) and libunwind's remote
 * interface (what opprof 0.4 used; its code is kept here as the peer). Both
 * must find the same return addresses; the figure is ns per stack, median
 * of interleaved rounds. The bench uses the libraries only (opprof's
 * internals are not public); built where libunwind-dev is (deps.sh --bench).
 *
 *   build/bin/bench_unwind [--json] [--rounds N] [--stacks N]
 */
#include "bench_util.h"

#include <asm/perf_regs.h>
#include <elfutils/libdwfl.h>
#include <libunwind.h>
#include <pthread.h>
#include <sys/uio.h>

enum { DEPTH = 24, COPY = 8192, MAX_IPS = 128 };

/* A sample's copy as the kernel packs it: the registers of `mask` (perf's
 * numbering) one word each, then the stack. */
typedef struct stack_copy {
    uint64_t mask;
    const unsigned char *regs, *stack;
    uint64_t size, sp;
} stack_copy;

typedef struct copied {
    uint64_t mask, perf_regs[PERF_REG_X86_64_MAX];
    unsigned char regs[8 * PERF_REG_X86_64_MAX], stack[COPY];
    uint64_t size, sp;
} copied;

static copied g_copy;
static uint64_t lu_regs_mask(void);
static uintptr_t g_top; /* the highest stack address the copy may read */

static __attribute__((noinline)) void take_copy(void) {
    uint64_t ip, sp, bp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
    memset(g_copy.perf_regs, 0, sizeof g_copy.perf_regs);
    g_copy.perf_regs[PERF_REG_X86_IP] = ip;
    g_copy.perf_regs[PERF_REG_X86_SP] = sp;
    g_copy.perf_regs[PERF_REG_X86_BP] = bp;
    g_copy.mask = lu_regs_mask();
    int k = 0;
    for (int r = 0; r < PERF_REG_X86_64_MAX; r++)
        if (g_copy.mask & (1ull << r)) memcpy(g_copy.regs + 8 * k++, &g_copy.perf_regs[r], 8);
    g_copy.sp = sp;
    g_copy.size = g_top - sp < COPY ? g_top - sp : COPY;
    memcpy(g_copy.stack, (const void *)sp, g_copy.size);
}

static __attribute__((noinline)) int chain(int n) {
    if (n == 0) {
        take_copy();
        return 0;
    }
    int r = chain(n - 1);
    __asm__ volatile("" ::: "memory"); /* no tail call */
    return r + 1;
}

static void *copier(void *arg) {
    (void)arg;
    g_top = (uintptr_t)__builtin_frame_address(0) + 64;
    chain(DEPTH);
    return NULL;
}

/* ---- the peer: libunwind's remote interface (opprof's unwinder before 0.5) ---- */

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

static uint64_t lu_regs_mask(void) {
    uint64_t mask = 0;
    for (int r = UNW_X86_64_RAX; r <= UNW_X86_64_RIP; r++)
        if (perf_reg_of(r) >= 0) mask |= 1ull << perf_reg_of(r);
    return mask;
}

/* The value of perf register `perf` among the packed ones of `mask`. */
static bool packed_reg(const stack_copy *sc, int perf, uint64_t *out) {
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
    const stack_copy *sc = arg;
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

static size_t lu_unwind_copy(const stack_copy *sc, uint64_t *ips, size_t max) {
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

typedef struct collected {
    uint64_t ips[MAX_IPS];
    size_t n;
} collected;

/* ---- libdw (as record/unwind.c uses it) ---- */

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_arg) {
    (void)dwfl;
    if (*thread_arg) return 0;
    *thread_arg = arg;
    return getpid();
}

static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *out, void *arg) {
    (void)dwfl;
    const copied *c = arg;
    if (addr >= c->sp && addr - c->sp + 8 <= c->size) {
        memcpy(out, c->stack + (addr - c->sp), 8);
        return true;
    }
    struct iovec local = {out, 8}, remote = {(void *)(uintptr_t)addr, 8};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 8;
}

static bool dw_initial_registers(Dwfl_Thread *thread, void *arg) {
    const copied *c = arg;
    static const int perf_of[16] = {PERF_REG_X86_AX,  PERF_REG_X86_DX,  PERF_REG_X86_CX,  PERF_REG_X86_BX,
                                    PERF_REG_X86_SI,  PERF_REG_X86_DI,  PERF_REG_X86_BP,  PERF_REG_X86_SP,
                                    PERF_REG_X86_R8,  PERF_REG_X86_R9,  PERF_REG_X86_R10, PERF_REG_X86_R11,
                                    PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15};
    Dwarf_Word regs[16];
    for (int r = 0; r < 16; r++) regs[r] = c->perf_regs[perf_of[r]];
    dwfl_thread_state_register_pc(thread, c->perf_regs[PERF_REG_X86_IP]);
    return dwfl_thread_state_registers(thread, 0, 16, regs);
}

static int dw_frame(Dwfl_Frame *state, void *arg) {
    collected *c = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(state, &pc, &activation) || !pc || c->n == MAX_IPS) return DWARF_CB_ABORT;
    c->ips[c->n++] = pc;
    return DWARF_CB_OK;
}

static Dwfl *dw_open(void) {
    static char *debuginfo_path;
    static const Dwfl_Callbacks cb = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, NULL, &debuginfo_path};
    static const Dwfl_Thread_Callbacks tcb = {dw_next_thread, NULL, dw_memory_read, dw_initial_registers, NULL, NULL};
    Dwfl *dwfl = dwfl_begin(&cb);
    if (!dwfl || dwfl_linux_proc_report(dwfl, getpid()) || dwfl_report_end(dwfl, NULL, NULL) ||
        !dwfl_attach_state(dwfl, NULL, getpid(), &tcb, &g_copy))
        return NULL;
    return dwfl;
}

static size_t dw_unwind(Dwfl *dwfl, collected *out) {
    out->n = 0;
    dwfl_getthread_frames(dwfl, getpid(), dw_frame, out);
    return out->n;
}

static size_t lu_unwind(collected *out) {
    stack_copy sc = {g_copy.mask, g_copy.regs, g_copy.stack, g_copy.size, g_copy.sp};
    out->n = lu_unwind_copy(&sc, out->ips, MAX_IPS);
    return out->n;
}

/* The frames both found, compared: libdw's pcs after the first are return
 * addresses less one (it reports the call's address), libunwind's are not. */
static size_t common_frames(const collected *a, const collected *b) {
    size_t n = 0;
    while (n < a->n && n < b->n && (a->ips[n] == b->ips[n] || a->ips[n] == b->ips[n] + 1 || a->ips[n] + 1 == b->ips[n]))
        n++;
    return n;
}

int main(int argc, char **argv) {
    bool json = false;
    int rounds = 7, stacks = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stacks") && i + 1 < argc)
            stacks = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_unwind [--json] [--rounds N] [--stacks N]\n");
            return 64;
        }
    }
    if (rounds < 1 || rounds > 1000 || stacks < 1) return 64;
    pthread_t t;
    pthread_create(&t, NULL, copier, NULL);
    pthread_join(t, NULL);
    Dwfl *dwfl = dw_open();
    if (!dwfl) {
        fprintf(stderr, "bench_unwind: libdw could not attach to this process: %s\n", dwfl_errmsg(-1));
        return 1;
    }
    collected lu, dw;
    size_t n_lu = lu_unwind(&lu), n_dw = dw_unwind(dwfl, &dw), same = common_frames(&lu, &dw);
    double *t_lu = calloc((size_t)rounds, sizeof *t_lu), *t_dw = calloc((size_t)rounds, sizeof *t_dw);
    for (int r = 0; r < rounds; r++) { /* interleaved: each round times both */
        int64_t a = bench_now_ns();
        for (int k = 0; k < stacks; k++) lu_unwind(&lu);
        int64_t b = bench_now_ns();
        for (int k = 0; k < stacks; k++) dw_unwind(dwfl, &dw);
        int64_t c = bench_now_ns();
        t_lu[r] = (double)(b - a) / stacks;
        t_dw[r] = (double)(c - b) / stacks;
    }
    bench_stats slu = bench_stats_of(t_lu, rounds), sdw = bench_stats_of(t_dw, rounds);
    char model[128];
    const char *isa;
    bench_host(model, sizeof model, &isa);
    if (json) {
        printf("{\"host\": \"%s\", \"isa\": \"%s\",\n", model, isa);
        bench_json_number(stdout, "rounds", rounds, false);
        bench_json_number(stdout, "stacks_per_round", stacks, false);
        bench_json_number(stdout, "frames_libunwind_peer", (double)n_lu, false);
        bench_json_number(stdout, "frames_libdw", (double)n_dw, false);
        bench_json_number(stdout, "frames_in_common", (double)same, false);
        bench_json_number(stdout, "ns_per_stack_libunwind_peer_median", slu.median, false);
        bench_json_number(stdout, "ns_per_stack_libunwind_peer_iqr", slu.iqr, false);
        bench_json_number(stdout, "ns_per_stack_libdw_median", sdw.median, false);
        bench_json_number(stdout, "ns_per_stack_libdw_iqr", sdw.iqr, false);
        bench_json_number(stdout, "libdw_over_libunwind", sdw.median / slu.median, true);
        printf("}\n");
    } else {
        printf("host: %s (%s)\n", model, isa);
        printf("frames: libunwind (peer) %zu, libdw %zu, the same %zu (a chain of %d calls)\n", n_lu, n_dw, same,
               DEPTH);
        printf("libunwind (peer): %.0f ns a stack (IQR %.0f)\nlibdw:            %.0f ns a stack (IQR %.0f)\n"
               "libdw / libunwind: %.2f\n",
               slu.median, slu.iqr, sdw.median, sdw.iqr, sdw.median / slu.median);
    }
    free(t_lu);
    free(t_dw);
    dwfl_end(dwfl);
    return same >= DEPTH ? 0 : 1;
}
