/* test_mpi.c - profile_cpu --parallel under `mpirun -n 2 --oversubscribe`:
 * the tensor-parallel output equals one process's within 1e-5 and the
 * data-parallel one bit for bit; OUTDIR holds rank-0/, rank-1/, the merged
 * trace and ranks.txt; the merged trace nests on every rank and the ranks'
 * allreduce calls overlap once the clocks are aligned (within the stated
 * uncertainty); a rank killed mid-run leaves no directory behind. Also
 * nn_mpi's splits, in this process (no MPI needed). */
#include "check.h"
#include "testutil.h"

#include <math.h>
#include <nn/mpi.h>
#include <opprof/capture.h>
#include <signal.h>
#include <time.h>

static char g_dir[256], g_bin[4096]; /* g_bin: absolute, as the commands run from g_dir */

static int mpirun(const char *args, char **out) {
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cd '%s' && mpirun -n 2 --oversubscribe '%s/profile_cpu' %s", g_dir, g_bin, args);
    return run_command(cmd, out);
}

static nn_tensor *load_output(const char *name) {
    char path[512], message[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    nn_tensor *t = NULL;
    if (nn_tensor_load_safetensors(path, "output", &t, message, sizeof message)) fprintf(stderr, "%s\n", message);
    return t;
}

static double worst_relative(const nn_tensor *a, const nn_tensor *b) {
    double worst = 0, scale = 0;
    int64_t n = nn_tensor_numel(b);
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(b->data[i]));
    for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs(a->data[i] - b->data[i]) / (scale > 0 ? scale : 1));
    return worst;
}

static void check_outputs(void) {
    char *out = NULL, cmd[9000];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/profile_cpu' --quiet --save-output single.st single", g_dir, g_bin);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    int rc = mpirun("--parallel tensor --quiet --save-output tensor.st tensor", &out);
    if (rc) fprintf(stderr, "mpirun (tensor) said:\n%s\n", out ? out : "");
    CHECK_INT(rc, 0);
    free(out);
    rc = mpirun("--parallel data --quiet --save-output data.st data", &out);
    if (rc) fprintf(stderr, "mpirun (data) said:\n%s\n", out ? out : "");
    CHECK_INT(rc, 0);
    free(out);
    nn_tensor *single = load_output("single.st"), *tensor = load_output("tensor.st"), *data = load_output("data.st");
    CHECK(single && tensor && data);
    if (single && tensor && data) {
        CHECK_INT(tensor->shape[0], 128);
        CHECK_INT(tensor->shape[1], 64);
        double err = worst_relative(tensor, single);
        if (err >= 1e-5) fprintf(stderr, "tensor parallel: relative error %g\n", err);
        CHECK(err < 1e-5);
        CHECK(nn_tensor_equal(data, single)); /* rows are independent: the same bits */
    }
    nn_tensor_free(single);
    nn_tensor_free(tensor);
    nn_tensor_free(data);
}

static bool exists(const char *rel) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, rel);
    return access(path, F_OK) == 0;
}

static const opprof_capture *g_cap;

static const char *name_of(const opprof_event *e) { return opprof_capture_name(g_cap, e->name); }

/* The allreduce calls of a capture, in order, with their aligned starts. */
static int allreduces(const opprof_capture *c, int64_t *start, int64_t *end, int max) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    opprof_capture_info info = opprof_capture_get_info(c);
    int k = 0;
    for (size_t i = 0; i < n && k < max; i++)
        if (!strcmp(opprof_capture_name(c, ev[i].name), "mpi::allreduce")) {
            start[k] = info.base_time_ns - info.rank.clock_offset_ns + ev[i].start_ns;
            end[k] = start[k] + ev[i].duration_ns;
            k++;
        }
    return k;
}

/* Every rank's allreduce in the merged trace sits in its forward, and the
 * ranks' addmm in their linear: the trace nests on every rank. */
static void check_merged(void) {
    CHECK(exists("tensor/rank-0/cpu-step-4.json") && exists("tensor/rank-1/cpu-step-4.json"));
    CHECK(exists("tensor/cpu-step-4.json") && exists("tensor/ranks.txt"));
    char path[512];
    snprintf(path, sizeof path, "%s/tensor/cpu-step-4.json", g_dir);
    opprof_capture *m = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &m, &err), 0);
    if (!m) return;
    g_cap = m;
    size_t n, nt;
    const opprof_event *ev = opprof_capture_events(m, &n);
    const opprof_thread_info *th = opprof_capture_threads(m, &nt);
    int allreduce[2] = {0, 0}, addmm[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        int rank = th[ev[i].thread].pid / 100000 - 1;
        if (rank < 0 || rank > 1) continue;
        const opprof_event *parent = ev[i].parent >= 0 ? &ev[ev[i].parent] : NULL;
        if (!strcmp(name_of(&ev[i]), "mpi::allreduce"))
            allreduce[rank] += parent && !strcmp(name_of(parent), "forward");
        if (!strcmp(name_of(&ev[i]), "aten::addmm")) addmm[rank] += parent && !strcmp(name_of(parent), "aten::linear");
    }
    CHECK_INT(allreduce[0], 2); /* 2 active steps, one allreduce each */
    CHECK_INT(allreduce[1], 2);
    CHECK_INT(addmm[0], 4);
    CHECK_INT(addmm[1], 4);
    CHECK_STR(opprof_capture_get_info(m).rank.backend, "mpi");
    opprof_capture_free(m);

    /* Overlap after alignment: rank k's i-th allreduce against the other's. */
    opprof_capture *r[2] = {0};
    int64_t s[2][4], e[2][4], u = 0;
    int count[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/tensor/rank-%d/cpu-step-4.json", g_dir, k);
        CHECK_INT(opprof_capture_read(path, NULL, &r[k], &err), 0);
        if (!r[k]) return;
        opprof_capture_info info = opprof_capture_get_info(r[k]);
        CHECK_INT(info.rank.rank, k);
        CHECK_INT(info.rank.world_size, 2);
        CHECK(info.rank.clock_uncertainty_ns >= 0 && info.rank.clock_uncertainty_ns < 1000000);
        u += info.rank.clock_uncertainty_ns;
        count[k] = allreduces(r[k], s[k], e[k], 4);
    }
    CHECK_INT(count[0], 2);
    CHECK_INT(count[1], 2);
    for (int i = 0; i < count[0] && i < count[1]; i++) {
        int64_t overlap = (e[0][i] < e[1][i] ? e[0][i] : e[1][i]) - (s[0][i] > s[1][i] ? s[0][i] : s[1][i]);
        if (overlap < -u)
            fprintf(stderr, "allreduce %d: overlap %lld ns (alignment +-%lld ns)\n", i, (long long)overlap,
                    (long long)u);
        CHECK(overlap >= -u);
    }
    opprof_capture_free(r[0]);
    opprof_capture_free(r[1]);
}

static void check_reports(void) {
    char cmd[9000], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' report --ranks '%s/tensor'", g_bin, g_dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK(out && strstr(out, "mpi::allreduce") && strstr(out, "Collectives compared by position: 2"));
    free(out);
    snprintf(cmd, sizeof cmd,
             "cd '%s/tensor' && '%s/opprof' merge rank-0/cpu-step-4.json rank-1/cpu-step-4.json -o again.json", g_dir,
             g_bin);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK(out && strstr(out, "2 traces"));
    free(out);
    char *ranks = NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/tensor/ranks.txt", g_dir);
    CHECK((ranks = read_text(path)) != NULL && strstr(ranks, "Slowest rank"));
    free(ranks);
}

/* A pid of a running profile_cpu rank whose command line names OUTDIR. */
static pid_t find_rank(const char *outdir, int rank) {
    DIR *d = opendir("/proc");
    pid_t found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        char path[300], buf[8192];
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0) continue;
        snprintf(path, sizeof path, "/proc/%d/environ", pid);
        FILE *f = fopen(path, "rb");
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        bool is_rank = false;
        char want[64];
        snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", rank);
        for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
            buf[len] = '\0';
            if (!strcmp(buf + i, want)) is_rank = true;
        }
        snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
        f = fopen(path, "rb");
        len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        bool names_it = false;
        for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
            buf[len] = '\0';
            if (strstr(buf + i, outdir)) names_it = true;
        }
        if (is_rank && names_it) found = pid;
    }
    if (d) closedir(d);
    return found;
}

/* Kill rank 1 while the ranks run a long loop: no OUTDIR, no OUTDIR.tmp.*. */
static void check_killed_rank(void) {
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mpirun -n 2 --oversubscribe '%s/profile_cpu' --parallel tensor --quiet --steps 1000000 "
             "killed-run >killed.log 2>&1; echo $? > killed.status",
             g_dir, g_bin);
    pid_t child = fork();
    if (child == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    pid_t victim = 0;
    for (int i = 0; i < 600 && !victim; i++) { /* up to 60 s for the ranks to start */
        victim = find_rank("killed-run", 1);
        if (!victim) nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    CHECK(victim > 0);
    for (int i = 0; i < 300; i++) { /* the ranks are inside the loop once rank-1's directory exists */
        DIR *d = opendir(g_dir);
        bool started = false;
        for (struct dirent *e; d && (e = readdir(d));) started |= !strncmp(e->d_name, "killed-run.tmp.", 15);
        if (d) closedir(d);
        if (started) break;
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    nanosleep(&(struct timespec){0, 300000000}, NULL);
    if (victim > 0) kill(victim, SIGKILL);
    int st;
    waitpid(child, &st, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/killed.status", g_dir);
    char *status = read_text(path);
    CHECK(status && atoi(status) != 0); /* the job failed */
    free(status);
    CHECK(!exists("killed-run"));
    DIR *d = opendir(g_dir);
    int leftovers = 0;
    for (struct dirent *e; d && (e = readdir(d));) leftovers += !strncmp(e->d_name, "killed-run", 10);
    if (d) closedir(d);
    if (leftovers) {
        snprintf(path, sizeof path, "%s/killed.log", g_dir);
        char *log = read_text(path);
        fprintf(stderr, "left behind after a killed rank; the job said:\n%s\n", log ? log : "");
        free(log);
    }
    CHECK_INT(leftovers, 0);
}

static void check_usage_errors(void) {
    char cmd[9000], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --parallel pipeline '%s/x'", g_bin, g_dir);
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK(out && strstr(out, "--parallel takes data or tensor, not 'pipeline'"));
    free(out);
    CHECK_INT(mpirun("--parallel tensor --quiet tensor", &out), 1); /* exists already */
    CHECK(out && strstr(out, "already exists"));
    free(out);
}

/* nn_mpi's split of a Linear, in this process: the parts by outputs are
 * the rows of the whole output; the parts by inputs add up to it. */
static void check_shards(void) {
    nn_manual_seed(3);
    nn_module *whole;
    CHECK_INT(nn_linear_new(&whole, 10, 7), 0);
    nn_tensor *x, *y, *rows;
    CHECK_INT(nn_tensor_randn(&x, 2, (int64_t[]){5, 10}), 0);
    CHECK_INT(nn_module_forward(whole, x, &y), 0);
    float sum[35] = {0};
    for (int part = 0; part < 3; part++) {
        nn_module *by_out, *by_in;
        CHECK_INT(nn_mpi_shard_linear(whole, NN_MPI_SPLIT_OUTPUTS, part, 3, &by_out), 0);
        CHECK_INT(nn_mpi_shard_linear(whole, NN_MPI_SPLIT_INPUTS, part, 3, &by_in), 0);
        nn_tensor *po, *xi, *pi;
        CHECK_INT(nn_module_forward(by_out, x, &po), 0);
        int64_t first = 7 * part / 3, cols = 7 * (part + 1) / 3 - first;
        CHECK_INT(po->shape[1], cols);
        for (int64_t i = 0; i < 5; i++)
            for (int64_t j = 0; j < cols; j++) CHECK(po->data[i * cols + j] == y->data[i * 7 + first + j]);
        int64_t in0 = 10 * part / 3, ins = 10 * (part + 1) / 3 - in0;
        CHECK_INT(nn_as_strided(x, 2, (int64_t[]){5, ins}, x->strides, in0, &xi), 0);
        CHECK_INT(nn_module_forward(by_in, xi, &pi), 0);
        for (int k = 0; k < 35; k++) sum[k] += pi->data[k];
        nn_tensor_free(po);
        nn_tensor_free(xi);
        nn_tensor_free(pi);
        nn_module_free(by_out);
        nn_module_free(by_in);
    }
    for (int k = 0; k < 35; k++) CHECK(fabsf(sum[k] - y->data[k]) <= 1e-5f * (1 + fabsf(y->data[k])));
    nn_module *m;
    CHECK_INT(nn_mpi_shard_linear(whole, NN_MPI_SPLIT_OUTPUTS, 3, 3, &m), NN_EINVAL);
    CHECK_INT(nn_mpi_shard_linear(whole, NN_MPI_SPLIT_OUTPUTS, 0, 8, &m), NN_EINVAL); /* 7 outputs */
    CHECK_INT(nn_mpi_rows(x, 2, 2, &rows), NN_EINVAL);
    CHECK_INT(nn_mpi_rows(x, 1, 2, &rows), 0);
    CHECK_INT(rows->shape[0], 3); /* rows [2, 5) */
    CHECK(rows->data == x->data + 2 * 10);
    nn_tensor_free(rows);
    CHECK_STR(nn_strerror(NN_EMPI), "an MPI call failed");
    nn_tensor_free(x);
    nn_tensor_free(y);
    nn_module_free(whole);
}

/* Each case's directory (g_dir) and the environment Open MPI needs. */
static void setup(void) {
    /* Open MPI refuses root without these; in containers, no cross-memory attach */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
    CHECK(make_temp_dir(g_dir, sizeof g_dir) != NULL);
    CHECK(realpath(bin_dir(), g_bin) != NULL);
}

TEST_CASE(shards_of_a_linear) { check_shards(); }

/* profile_cpu --parallel tensor and data against one process: the same
 * output, the ranks' traces merged, compared, and an existing OUTDIR refused. */
TEST_CASE(tensor_and_data_parallel_runs) {
    setup();
    check_outputs();
    check_merged();
    check_reports();
    check_usage_errors();
    remove_tree(g_dir);
}

TEST_CASE(a_killed_rank) {
    setup();
    check_killed_rank();
    remove_tree(g_dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_mpi"); }
