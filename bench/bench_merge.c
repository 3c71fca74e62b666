/*
 * bench_merge - opprof merge on many rank traces: time, events per second and
 * peak memory, against the machine's limit in the same run (reading the same
 * files once, with nothing done to them).
 *
 *   build/bin/bench_merge [--json] [--ranks N] [--events E] [--dir DIR]
 *
 * N synthetic traces (default 1000) of E complete events each (default
 * 100,000), as opprof writes them (distributedInfo with a clock offset), are
 * written under DIR (default /tmp), merged by a child process (its peak
 * resident memory is the figure), then removed.
 */
#include "bench_util.h"

#include <fcntl.h>
#include <opprof/capture.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const char *NAMES[] = {"aten::linear", "aten::addmm", "aten::relu", "mpi::allreduce", "forward"};

static int write_rank(const char *path, int rank, long events) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(
        f,
        "{\n  \"schemaVersion\": 1,\n  \"opprof_version\": \"bench\",\n  \"distributedInfo\": {\"backend\": \"mpi\", "
        "\"rank\": %d, \"world_size\": 1000, \"clock_offset_ns\": %d, \"clock_uncertainty_ns\": 300},\n"
        "  \"baseTimeNanoseconds\": %lld,\n  \"traceEvents\": [\n",
        rank, (rank * 37) % 5000 - 2500, 1700000000000000000LL + rank * 1000LL);
    for (long i = 0; i < events; i++)
        fprintf(f,
                "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %ld.%03ld, "
                "\"dur\": 1.250, \"args\": {\"External id\": %ld}}%s\n",
                NAMES[i % 5], 4000 + rank, 4000 + rank, i * 2, (i * 7) % 1000, i, i + 1 < events ? "," : "");
    fputs("  ]\n}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

static double read_all(char **paths, int n) {
    static char buf[1 << 20];
    int64_t t0 = bench_now_ns();
    for (int i = 0; i < n; i++) {
        int fd = open(paths[i], O_RDONLY);
        while (fd >= 0 && read(fd, buf, sizeof buf) > 0) {}
        if (fd >= 0) close(fd);
    }
    return (double)(bench_now_ns() - t0) / 1e9;
}

int main(int argc, char **argv) {
    bool json = false;
    int ranks = 1000;
    long events = 100000;
    const char *base = "/tmp";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--events") && i + 1 < argc)
            events = atol(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            base = argv[++i];
        else {
            fprintf(stderr, "usage: bench_merge [--json] [--ranks N] [--events E] [--dir DIR]\n");
            return 64;
        }
    }
    if (ranks < 1 || ranks > 4096 || events < 1) {
        fprintf(stderr, "bench_merge: --ranks takes 1 to 4096, --events at least 1\n");
        return 64;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/opprof-bench-merge-XXXXXX", base);
    if (!mkdtemp(dir)) {
        perror("bench_merge: mkdtemp");
        return 1;
    }
    char **paths = calloc((size_t)ranks, sizeof *paths);
    int64_t bytes = 0;
    for (int r = 0; r < ranks; r++) {
        paths[r] = malloc(4200);
        snprintf(paths[r], 4200, "%s/rank-%d.json", dir, r);
        struct stat st;
        if (write_rank(paths[r], r, events) || stat(paths[r], &st)) {
            fprintf(stderr, "bench_merge: cannot write %s\n", paths[r]);
            return 1;
        }
        bytes += st.st_size;
    }
    double read_s = read_all(paths, ranks);
    char out[4300];
    snprintf(out, sizeof out, "%s/merged.json", dir);
    int64_t t0 = bench_now_ns();
    pid_t child = fork();
    if (child == 0) {
        opprof_read_error err;
        int rc = opprof_merge_traces((const char *const *)paths, (size_t)ranks, out, NULL, &err);
        if (rc) fprintf(stderr, "bench_merge: %s\n", err.message);
        _exit(rc ? 1 : 0);
    }
    int st;
    waitpid(child, &st, 0);
    double merge_s = (double)(bench_now_ns() - t0) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    int64_t peak = (int64_t)ru.ru_maxrss * 1024;
    struct stat ost;
    int64_t out_bytes = stat(out, &ost) == 0 ? ost.st_size : 0;
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_merge: cannot remove %s\n", dir);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    double total = (double)ranks * (double)events;
    if (json) {
        printf("{\n");
        bench_json_number(stdout, "ranks", ranks, false);
        bench_json_number(stdout, "events", total, false);
        bench_json_number(stdout, "input_bytes", (double)bytes, false);
        bench_json_number(stdout, "output_bytes", (double)out_bytes, false);
        bench_json_number(stdout, "merge_s", merge_s, false);
        bench_json_number(stdout, "events_per_s", total / merge_s, false);
        bench_json_number(stdout, "input_mb_per_s", (double)bytes / 1e6 / merge_s, false);
        bench_json_number(stdout, "read_only_mb_per_s", (double)bytes / 1e6 / read_s, false);
        bench_json_number(stdout, "peak_rss_bytes", (double)peak, false);
        bench_json_number(stdout, "peak_bytes_per_event", (double)peak / total, true);
        printf("}\n");
    } else {
        printf("merged %d traces, %.0f events, %.1f GB in, %.1f GB out, in %.1f s: %.2f M events/s, %.0f MB/s\n", ranks,
               total, (double)bytes / 1e9, (double)out_bytes / 1e9, merge_s, total / merge_s / 1e6,
               (double)bytes / 1e6 / merge_s);
        printf("  reading the same files once, nothing else: %.0f MB/s (the limit of a 2-pass merge is half)\n",
               (double)bytes / 1e6 / read_s);
        printf("  peak resident memory %.1f MB = %.3f bytes per event\n", (double)peak / 1e6, (double)peak / total);
    }
    return 0;
}
