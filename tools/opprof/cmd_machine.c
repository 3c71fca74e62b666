/* cmd_machine.c - `opprof machine`: this machine's ceilings measured (the
 * float32 FMA peak, each memory level's load and copy bandwidth, for 1..N
 * threads), as text or as the profile that `report --machine` reads. */
#define _GNU_SOURCE
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char HELP[] = "Measure this machine's ceilings, as a roofline needs them: the float32 FMA peak of\n"
                           "the widest ISA the CPU has (AVX-512, AVX2 or scalar), and the bandwidth of a stream\n"
                           "that loads and of one that copies a buffer held in L1, L2, the last-level cache and\n"
                           "DRAM (sizes from sysfs), for 1..N threads, each figure the best of nine runs of\n"
                           "about 15 ms. On a busy machine the figures are low: measure on a quiet one.\n";

#define MACHINE_OPTIONS(X)                                                                                      \
    X(THREADS, "threads", "N", "measure for 1..N threads (default: the CPUs this process may use, at most 16)") \
    X(JSON, "json", NULL,                                                                                       \
      "the profile as JSON: cpu, isa, threads, fma_peak_gflops, levels\n"                                       \
      "[{name, bytes, load_gbs, copy_gbs}], by_threads (what --machine reads)")                                 \
    X(QUICK, "quick", NULL,                                                                                     \
      "each figure the best of three runs of about 3 ms (a fraction of a second),\n"                            \
      "as a capture's start measures it when the user's cache has none")                                        \
    X(O, "-o", "FILE", "write it to FILE (whole or not at all) instead of stdout")
TOOL_OPTIONS(MACHINE_OPTIONS);

static const char EXAMPLES[] =
    "opprof machine --json -o machine.json        # this machine's ceilings, for report --machine\n"
    "opprof report --roofline --machine machine.json run/cpu-step-5.json\n";

static void text_of(const opprof_machine *m, FILE *out) {
    fprintf(out, "%s, %s FMAs (float32); GB/s of a stream that loads / copies a buffer of each level\n", m->cpu,
            m->isa);
    fprintf(out, "%-8s %12s", "threads", "GFLOP/s");
    for (int l = 0; l < OPPROF_MACHINE_LEVELS; l++) {
        const opprof_machine_level *lv = &m->by_threads[0].levels[l];
        char head[48];
        if (lv->bytes)
            snprintf(head, sizeof head, "%s (%lld KiB)", lv->name, (long long)(lv->bytes / 1024));
        else
            snprintf(head, sizeof head, "%s", lv->name);
        fprintf(out, " %22s", head);
    }
    fputc('\n', out);
    for (int t = 0; t < m->threads; t++) {
        const opprof_machine_ceilings *c = &m->by_threads[t];
        fprintf(out, "%-8d %12.1f", c->threads, c->fma_peak_gflops);
        for (int l = 0; l < OPPROF_MACHINE_LEVELS; l++) {
            char cell[48];
            snprintf(cell, sizeof cell, "%.1f / %.1f", c->levels[l].load_gbs, c->levels[l].copy_gbs);
            fprintf(out, " %22s", cell);
        }
        fputc('\n', out);
    }
}

static int run(int argc, char **argv) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cpus < 1 ? 1 : cpus > OPPROF_MACHINE_MAX_THREADS ? OPPROF_MACHINE_MAX_THREADS : (int)cpus;
    bool json = false, quick = false;
    const char *out_path = NULL;
    int c;
    while ((c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END) {
        switch (c) {
        case OPT_THREADS:
            if (tool_parse_count(optarg, "--threads", &threads)) return TOOL_EXIT_USAGE;
            if (threads < 1 || threads > OPPROF_MACHINE_MAX_THREADS)
                return tool_usage_error("machine", "--threads takes 1 to %d, not '%s'", OPPROF_MACHINE_MAX_THREADS,
                                        optarg);
            break;
        case OPT_JSON: json = true; break;
        case OPT_QUICK: quick = true; break;
        case OPT_O: out_path = optarg; break;
        default: return TOOL_EXIT_USAGE;
        }
    }
    if (optind != argc) return tool_usage_error("machine", "machine takes no operand");
    opprof_machine m;
    int rc = quick ? opprof_machine_measure_quick(threads, &m) : opprof_machine_measure(threads, &m);
    char *text = NULL;
    if (!rc && json) rc = opprof_machine_json_to_string(&m, &text);
    if (!rc && !json) { /* text of our own: written as tool_emit writes, freed with free() */
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (f) text_of(&m, f);
        if (!f || tool_memstream_close(f, &text)) {
            fprintf(stderr, "opprof: machine: %s\n", opprof_strerror(OPPROF_ENOMEM));
            return TOOL_EXIT_FAILED;
        }
        rc = out_path ? opprof_write_text_file(out_path, text) : (fputs(text, stdout), 0);
        free(text);
        if (rc) tool_write_error(out_path, rc);
        return rc ? TOOL_EXIT_UNREADABLE : TOOL_EXIT_OK;
    }
    return tool_emit("machine", rc, text, out_path);
}

TOOL_COMMAND(machine, "machine [OPTIONS]", "measure this machine's ceilings: FMA peak, each memory level's bandwidth",
             NULL);
