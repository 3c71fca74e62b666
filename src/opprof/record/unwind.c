/* unwind.c - the sampler's DWARF mode: a sample's user stack, copied by the
 * kernel (PERF_SAMPLE_STACK_USER) with its registers (PERF_SAMPLE_REGS_USER),
 * unwound by libdw (elfutils) over this very process: the modules and
 * their call frame information are the Dwfl of record/sources.c (the code
 * is ours, mapped here), the stack's words are read from the copy, any
 * other word through process_vm_readv (a bad address is an error, never a
 * fault). libdw was measured against libunwind's remote interface on the
 * same copies (bench/bench_unwind.c): 0.83-1.04 of its time, the same
 * frames; so one library does both this and the sources. The drainer
 * thread alone calls it, so that the copies are freed as they are read. */
#define _GNU_SOURCE
#include "record/elfutils.h"
#include "record/record.h"

#include <asm/perf_regs.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* DWARF's x86-64 registers 0..15 (rax rdx rcx rbx rsi rdi rbp rsp r8..r15), as perf's. */
static const int PERF_OF_DWARF[16] = {PERF_REG_X86_AX,  PERF_REG_X86_DX,  PERF_REG_X86_CX,  PERF_REG_X86_BX,
                                      PERF_REG_X86_SI,  PERF_REG_X86_DI,  PERF_REG_X86_BP,  PERF_REG_X86_SP,
                                      PERF_REG_X86_R8,  PERF_REG_X86_R9,  PERF_REG_X86_R10, PERF_REG_X86_R11,
                                      PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15};

uint64_t opprof__unwind_regs_mask(void) {
    uint64_t mask = 1ull << PERF_REG_X86_IP;
    for (int r = 0; r < 16; r++) mask |= 1ull << PERF_OF_DWARF[r];
    return mask;
}

/* The value of perf register `perf` among the packed ones of `mask` (0 when absent). */
static uint64_t packed_reg(const opprof__stack_copy *sc, int perf) {
    uint64_t v = 0;
    if (!(sc->mask & (1ull << perf))) return 0;
    int k = __builtin_popcountll(sc->mask & ((1ull << perf) - 1));
    memcpy(&v, sc->regs + 8 * k, 8);
    return v;
}

typedef struct unwinding {
    const opprof__stack_copy *sc;
    uint64_t *ips;
    size_t n, max;
} unwinding;

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg) {
    (void)dwfl;
    if (*thread_arg) return 0; /* one thread: the sample's */
    *thread_arg = arg;
    return getpid();
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *out, void *arg) {
    (void)dwfl;
    const opprof__stack_copy *sc = (*(unwinding **)arg)->sc;
    if (addr >= sc->sp && addr - sc->sp + sizeof *out <= sc->size) {
        memcpy(out, sc->stack + (addr - sc->sp), sizeof *out);
        return true;
    }
    struct iovec local = {out, sizeof *out}, remote = {(void *)(uintptr_t)addr, sizeof *out};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof *out;
}

static bool initial_registers(Dwfl_Thread *thread, void *arg) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    const opprof__stack_copy *sc = (*(unwinding **)arg)->sc;
    Dwarf_Word regs[16];
    for (int r = 0; r < 16; r++) regs[r] = packed_reg(sc, PERF_OF_DWARF[r]);
    elfutils->dwfl_thread_state_register_pc(thread, packed_reg(sc, PERF_REG_X86_IP));
    return elfutils->dwfl_thread_state_registers(thread, 0, 16, regs);
}

static int on_frame(Dwfl_Frame *state, void *arg) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    unwinding *u = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!elfutils->dwfl_frame_pc(state, &pc, &activation) || !pc) return DWARF_CB_ABORT;
    u->ips[u->n++] = pc;
    return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* The unwinding under way: the thread callbacks' argument (attached once). */
static unwinding *g_current;

size_t opprof__unwind(const opprof__stack_copy *sc, uint64_t *ips, size_t max) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    static const Dwfl_Thread_Callbacks callbacks = {next_thread, NULL, memory_read, initial_registers, NULL, NULL};
    static bool attached;
    unwinding u = {sc, ips, 0, max};
    if (!max) return 0;
    Dwfl *dwfl = opprof__dwfl_lock(packed_reg(sc, PERF_REG_X86_IP));
    if (dwfl && !attached) attached = elfutils->dwfl_attach_state(dwfl, NULL, getpid(), &callbacks, &g_current);
    if (dwfl && attached) {
        g_current = &u;
        elfutils->dwfl_getthread_frames(dwfl, getpid(), on_frame, &u); /* stops where the unwind information does */
        g_current = NULL;
    }
    opprof__dwfl_unlock();
    return u.n;
}
